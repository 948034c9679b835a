/* test_output_commit.c - no wrong image and no lost file: outputs that
 * cannot be put in place never cost the user's earlier files.
 *
 * The library part is a table: each row makes one output impossible to put
 * in place (a directory of its name, a read-only folder, another user's file
 * in a sticky folder) and commits it last of four outputs, so the commit has
 * put the others in place before it fails. Every row runs with each way the
 * commit can keep the earlier files (O_TMPFILE or named temporaries,
 * RENAME_EXCHANGE, a hard link aside, a rename aside: the fallbacks forced
 * by tempfile.h's test flags) in a forked child, as root or as the user
 * nobody where the row needs a user without privileges; afterwards the
 * folder holds the user's earlier files byte for byte and nothing else.
 * Then the commit is failed, signalled (SIGTERM) and killed (SIGKILL) at
 * each of its steps by tempfile.h's test hook: a failure or SIGTERM leaves
 * all earlier files or all new ones, never a mix and no temporary; SIGKILL
 * may leave a mix but never loses an earlier file. A full file system is a
 * small tmpfs where mount works. Rows that cannot run here (not root, no
 * mount) are skipped, saying why.
 *
 * The CLI part runs the 2026-11-27 reproducers (a directory or another
 * user's file at a later -o, a file-size limit, a PNG or KMZ side over
 * libpng's limit, a geolocated output without a scene reference): exit 1
 * with one message naming the output, before any pulse is read, no output
 * and no temporary, the user's files intact. */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/io/tempfile.h"
#include "sarbp/image.h"
#include "sarbp/output.h"
#include "scratch.h"

#define NOBODY 65534

static char out[1 << 14], err[1 << 14];

/* ---- folders and files ------------------------------------------------------- */

/* An empty folder SARBP_TEST_TMP/<name>, mode 0777 (a child running as
 * nobody writes there). Returns a static buffer (4 rotate). */
static const char *fresh_dir(const char *name)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "umount '%s/%s' 2>/dev/null; chmod -R u+rwx '%s/%s' 2>/dev/null",
             SARBP_TEST_TMP, name, SARBP_TEST_TMP, name);
    (void)system(cmd); /* a tmpfs or a read-only folder of an earlier row */
    const char *d = tu_fresh_dir(name);
    assert_int_equal(chmod(d, 0777), 0);
    return d;
}

/* ---- the outputs ------------------------------------------------------------- */

/* Four outputs, the last of which a row makes impossible: two replace the
 * user's earlier files, one is new. */
struct output {
    const char *name; /* in the row's folder */
    const char *earlier, *fresh;
};

static const struct output outputs[] = {
    {"a.png", "the user's a.png, made last week\n", "new a\n"},
    {"b.h5", "the user's b.h5\n", "new b\n"},
    {"c.npy", NULL, "new c\n"},
    {"x.tif", "the blocked output's earlier file\n", "new x\n"},
};
#define NOUT 4
#define NSIMPLE 3 /* the outputs without the blocked one */

/* The ways a commit keeps the earlier files: tempfile.h's test flags. */
static const struct mode {
    const char *what;
    unsigned flags;
} modes[] = {
    {"O_TMPFILE, RENAME_EXCHANGE", 0},
    {"named, RENAME_EXCHANGE", SARBP_TEMPFILE_TEST_NAMED},
    {"named, linked aside", SARBP_TEMPFILE_TEST_NAMED | SARBP_TEMPFILE_TEST_NO_EXCHANGE},
    {"O_TMPFILE, linked aside", SARBP_TEMPFILE_TEST_NO_EXCHANGE},
    {"named, renamed aside",
     SARBP_TEMPFILE_TEST_NAMED | SARBP_TEMPFILE_TEST_NO_EXCHANGE | SARBP_TEMPFILE_TEST_NO_LINK},
};
#define NMODES (sizeof modes / sizeof modes[0])

static void put_earlier(const char *dir, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (outputs[i].earlier) tu_write_text(tu_in_dir(dir, outputs[i].name), outputs[i].earlier);
}

/* Every one of the first n outputs as the user left it, and nothing else
 * in the folder but the names in extra (and with allow_tmp, temporaries:
 * their number in *ntmp). */
static void assert_earlier_tmp(const char *dir, size_t n, const char *const *extra, int allow_tmp,
                               int *ntmp)
{
    const char *names[NOUT + 8];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = tu_in_dir(dir, outputs[i].name);
        if (outputs[i].earlier) {
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) tu_assert_text(p, outputs[i].earlier);
            names[k++] = outputs[i].name;
        } else if (tu_exists(p)) {
            fail_msg("'%s' exists: the failed run left a new output", p);
        }
    }
    for (size_t i = 0; extra && extra[i]; i++) {
        int dup = 0;
        for (size_t j = 0; j < k; j++) dup |= !strcmp(names[j], extra[i]);
        if (!dup) names[k++] = extra[i];
    }
    names[k] = NULL;
    tu_assert_dir_holds_tmp(dir, names, allow_tmp, ntmp);
}

static void assert_earlier(const char *dir, size_t n, const char *const *extra)
{
    assert_earlier_tmp(dir, n, extra, 0, NULL);
}

static void assert_all_new(const char *dir, size_t n)
{
    const char *names[NOUT + 1];
    for (size_t i = 0; i < n; i++) {
        tu_assert_text(tu_in_dir(dir, outputs[i].name), outputs[i].fresh);
        names[i] = outputs[i].name;
    }
    names[n] = NULL;
    tu_assert_dir_holds(dir, names);
}

/* ---- a commit in a child ----------------------------------------------------- */

struct child_report {
    int status;           /* of sarbp_tempfile_commit_all */
    int check_status;     /* of the first sarbp_output_check_path that failed, or 0 */
    int reached;          /* the hook reached its step */
    int blocked;          /* SIGTERM was blocked there (the commit's renames had begun) */
    char detail[700];     /* the commit's message */
    char check_detail[700];
};

struct hook_arg {
    int step;   /* the step to act at */
    int action; /* 0 fail with EIO, else the signal to raise */
    int fd;     /* the report pipe */
    struct child_report *rep;
};

static int hook(int step, void *p)
{
    struct hook_arg *h = p;
    if (step != h->step) return 0;
    h->rep->reached = 1;
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    h->rep->blocked = sigismember(&now, SIGTERM);
    if (!h->action) return EIO;
    /* the report first: the signal may end the process now */
    if (write(h->fd, h->rep, sizeof *h->rep) != (ssize_t)sizeof *h->rep) _exit(9);
    raise(h->action);
    return 0;
}

typedef void (*prepare_fn)(const char *dir);

/* Forks a child that (as uid, when not 0) commits the first n outputs in
 * dir with mode's flags, hook at step (step < 0: none) doing action, after
 * calling before(dir) once the temporaries exist. The child's report in
 * *rep; returns the child's wait status. */
static int commit_in_child(const char *dir, size_t n, unsigned flags, int step, int action,
                           uid_t uid, prepare_fn before, struct child_report *rep)
{
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        prctl(PR_SET_DUMPABLE, 0);
        if (uid && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(8);
        struct child_report r;
        memset(&r, 0, sizeof r);
        struct hook_arg h = {step, action, pfd[1], &r};
        sarbp_tempfile_test_set(flags, step >= 0 ? hook : NULL, &h);
        sarbp_tempfile *t[NOUT] = {NULL};
        for (size_t i = 0; i < n; i++) {
            r.status = sarbp_tempfile_create(tu_in_dir(dir, outputs[i].name), &t[i]);
            if (r.status) { /* reported like a failed commit */
                snprintf(r.detail, sizeof r.detail, "%s", sarbp_error_detail());
                r.check_status = sarbp_output_check_path(tu_in_dir(dir, outputs[i].name));
                snprintf(r.check_detail, sizeof r.check_detail, "%s", sarbp_error_detail());
                for (size_t j = 0; j < i; j++) sarbp_tempfile_delete(t[j]);
                if (write(pfd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(5);
                _exit(0);
            }
            const size_t len = strlen(outputs[i].fresh);
            if (write(sarbp_tempfile_fd(t[i]), outputs[i].fresh, len) != (ssize_t)len) _exit(4);
        }
        if (before) before(dir);
        for (size_t i = 0; i < n && !r.check_status; i++) {
            r.check_status = sarbp_output_check_path(tu_in_dir(dir, outputs[i].name));
            if (r.check_status)
                snprintf(r.check_detail, sizeof r.check_detail, "%s", sarbp_error_detail());
        }
        r.status = sarbp_tempfile_commit_all(t, n);
        snprintf(r.detail, sizeof r.detail, "%s", r.status ? sarbp_error_detail() : "");
        if (write(pfd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(5);
        _exit(0);
    }
    close(pfd[1]);
    memset(rep, 0, sizeof *rep);
    struct child_report r;
    ssize_t got;
    /* the last report wins: the hook's (before a signal), then the end's */
    while ((got = read(pfd[0], &r, sizeof r)) == (ssize_t)sizeof r) *rep = r;
    close(pfd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* ---- the table ------------------------------------------------------------------ */

static void dir_in_the_way(const char *dir)
{
    char x[1024], keep[1100];
    snprintf(x, sizeof x, "%s/x.tif", dir);
    snprintf(keep, sizeof keep, "%s/keep", x);
    assert_int_equal(unlink(x), 0);
    assert_int_equal(mkdir(x, 0755), 0);
    tu_write_text(keep, "kept\n");
}

/* nobody's folder, read-only from the start or made so after the
 * temporaries exist */
static void chown_all(const char *dir, uid_t uid)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "chown -R %u:%u '%s'", (unsigned)uid, (unsigned)uid, dir);
    assert_int_equal(system(cmd), 0);
}

static void readonly_prepare(const char *dir)
{
    chown_all(dir, NOBODY);
}

static void make_readonly(const char *dir)
{
    if (chmod(dir, 0555) != 0) _exit(6);
}

static void readonly_from_start(const char *dir)
{
    chown_all(dir, NOBODY);
    assert_int_equal(chmod(dir, 0555), 0);
}

/* a sticky folder of root's: nobody's earlier files, and root's x.tif */
static void sticky_prepare(const char *dir)
{
    chown_all(dir, NOBODY);
    const char *x = tu_in_dir(dir, "x.tif");
    assert_int_equal(chown(x, 0, 0), 0);
    assert_int_equal(chmod(x, 0644), 0);
    assert_int_equal(chown(dir, 0, 0), 0);
    assert_int_equal(chmod(dir, 01777), 0);
}

struct row {
    const char *what;
    prepare_fn prepare;       /* after the earlier files are written, as root */
    prepare_fn before_commit; /* in the child, once the temporaries exist */
    uid_t uid;                /* the child's user (0: this process's) */
    const char *failing;      /* the output the messages name */
    const char *reason;       /* in the commit's message and the check's */
    const char *const *extra; /* what stays beside the earlier outputs */
};

static const struct row rows[] = {
    {"a directory of the last output's name", dir_in_the_way, NULL, 0, "x.tif", "Is a directory",
     TU_NAMES("x.tif")},
    /* refused at the check and when the first temporary is created */
    {"a read-only folder", readonly_from_start, NULL, NOBODY, "a.png", "Permission denied", NULL},
    /* the first rename (or naming) fails: nothing was placed yet. Named
     * temporaries cannot be removed from a folder that became read-only:
     * they stay (the unnamed ones go with the process) */
    {"a folder made read-only after writing", readonly_prepare, make_readonly, NOBODY, "a.png",
     "Permission denied", NULL},
    {"another user's file in a sticky folder", sticky_prepare, NULL, NOBODY, "x.tif",
     "Operation not permitted", NULL},
};

static void test_rows(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const struct row *row = &rows[r];
        if (row->uid && geteuid() != 0) {
            print_message("skipped row '%s': needs root to run a child as another user\n",
                          row->what);
            continue;
        }
        for (size_t m = 0; m < NMODES; m++) {
            const char *dir = fresh_dir("oc_row");
            put_earlier(dir, NOUT);
            if (row->prepare) row->prepare(dir);
            struct child_report rep;
            int status = commit_in_child(dir, NOUT, modes[m].flags, -1, 0, row->uid,
                                         row->before_commit, &rep);
            chmod(dir, 0777); /* for the checks and the next round */
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("%s, %s: the child failed (status 0x%x)", row->what, modes[m].what,
                         status);
            if (rep.status != SARBP_ERR_IO || !strstr(rep.detail, row->failing) ||
                !strstr(rep.detail, row->reason))
                fail_msg("%s, %s: commit returned %d '%s', want an error naming %s: %s",
                         row->what, modes[m].what, rep.status, rep.detail, row->failing,
                         row->reason);
            /* the check before any work would have said so */
            if (!rep.check_status || !strstr(rep.check_detail, row->failing) ||
                !strstr(rep.check_detail, row->reason))
                fail_msg("%s: the output check said %d '%s'", row->what, rep.check_status,
                         rep.check_detail);
            int ntmp = 0;
            const int allow_tmp = row->before_commit == make_readonly &&
                                  (modes[m].flags & SARBP_TEMPFILE_TEST_NAMED);
            assert_earlier_tmp(dir, NOUT, row->extra, allow_tmp, &ntmp);
            if (ntmp)
                print_message("note: %s, %s: %d named temporaries could not be removed\n",
                              row->what, modes[m].what, ntmp);
            if (row->prepare == dir_in_the_way) tu_assert_text(tu_in_dir(dir, "x.tif/keep"), "kept\n");
            ran++;
        }
    }
    if (!ran) tu_skip("every row needs root here");
}

/* ---- every step of the commit ------------------------------------------------------- */

/* A failure at step k (the hook returns EIO): the commit fails and every
 * output is as it was, or (k past the renames) succeeds whole. */
static void test_fail_each_step(void **state)
{
    (void)state;
    for (size_t m = 0; m < NMODES; m++) {
        int failed = 0;
        for (int k = 0;; k++) {
            const char *dir = fresh_dir("oc_fail");
            put_earlier(dir, NSIMPLE);
            struct child_report rep;
            int status = commit_in_child(dir, NSIMPLE, modes[m].flags, k, 0, 0, NULL, &rep);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("%s, step %d: the child failed (status 0x%x)", modes[m].what, k, status);
            if (rep.status) {
                assert_earlier(dir, NSIMPLE, NULL);
                failed++;
            } else {
                assert_all_new(dir, NSIMPLE);
            }
            if (!rep.reached) break;
        }
        /* every mode has steps that can fail: at least one per output */
        if (failed < (int)NSIMPLE)
            fail_msg("%s: only %d steps could be failed", modes[m].what, failed);
    }
}

/* SIGTERM at step k: before the renames it ends the process at once (every
 * output as it was); from the first rename it waits for the commit's end
 * (every output new). Never some of each; never a temporary left. */
static void test_sigterm_each_step(void **state)
{
    (void)state;
    for (size_t m = 0; m < NMODES; m++) {
        int held = 0;
        for (int k = 0;; k++) {
            const char *dir = fresh_dir("oc_term");
            put_earlier(dir, NSIMPLE);
            struct child_report rep;
            int status = commit_in_child(dir, NSIMPLE, modes[m].flags, k, SIGTERM, 0, NULL, &rep);
            if (!rep.reached) {
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || rep.status)
                    fail_msg("%s: the commit without a signal failed (status 0x%x, %s)",
                             modes[m].what, status, rep.detail);
                assert_all_new(dir, NSIMPLE);
                break;
            }
            if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
                fail_msg("%s, step %d: not ended by SIGTERM (status 0x%x)", modes[m].what, k,
                         status);
            if (rep.blocked) {
                assert_all_new(dir, NSIMPLE);
                held++;
            } else {
                assert_earlier(dir, NSIMPLE, NULL);
            }
        }
        if (held < (int)NSIMPLE)
            fail_msg("%s: SIGTERM was held back at only %d steps", modes[m].what, held);
    }
}

/* SIGKILL at step k, which nothing can hold back: the outputs may be a mix,
 * but until every output is new every earlier file is still in the folder,
 * at its name or at a .tmp-/.old- name, byte for byte (once all are new the
 * commit removes them), and nothing else is there. */
static void test_sigkill_each_step(void **state)
{
    (void)state;
    for (size_t m = 0; m < NMODES; m++) {
        for (int k = 0;; k++) {
            const char *dir = fresh_dir("oc_kill");
            put_earlier(dir, NSIMPLE);
            struct child_report rep;
            int status = commit_in_child(dir, NSIMPLE, modes[m].flags, k, SIGKILL, 0, NULL, &rep);
            if (!rep.reached) {
                assert_all_new(dir, NSIMPLE);
                break;
            }
            if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
                fail_msg("%s, step %d: not killed (status 0x%x)", modes[m].what, k, status);
            int found[NSIMPLE] = {0}, all_new = 1;
            for (size_t i = 0; i < NSIMPLE; i++) {
                char buf[512];
                all_new &= tu_read_text(tu_in_dir(dir, outputs[i].name), buf, sizeof buf) == 0 &&
                           !strcmp(buf, outputs[i].fresh);
            }
            DIR *d = opendir(dir);
            assert_non_null(d);
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                int known = 0;
                for (size_t i = 0; i < NSIMPLE; i++)
                    known |= !strcmp(e->d_name, outputs[i].name) ||
                             (!strncmp(e->d_name, outputs[i].name, strlen(outputs[i].name)) &&
                              (strstr(e->d_name, ".tmp-") || strstr(e->d_name, ".old-")));
                if (!known) fail_msg("%s, step %d: '%s' left", modes[m].what, k, e->d_name);
                char buf[512];
                if (tu_read_text(tu_in_dir(dir, e->d_name), buf, sizeof buf) == 0)
                    for (size_t i = 0; i < NSIMPLE; i++)
                        found[i] |= outputs[i].earlier && !strcmp(buf, outputs[i].earlier);
            }
            closedir(d);
            for (size_t i = 0; i < NSIMPLE; i++)
                if (outputs[i].earlier && !found[i] && !all_new)
                    fail_msg("%s, SIGKILL at step %d: the earlier '%s' is lost", modes[m].what, k,
                             outputs[i].name);
        }
    }
}

/* ---- a full file system ------------------------------------------------------------- */

/* The image writers on a 512 KiB tmpfs: the .h5 of a 256 x 256 image does
 * not fit; every temporary goes and the earlier files stay. */
static void test_full_file_system(void **state)
{
    (void)state;
    const char *dir = fresh_dir("oc_full");
    if (mount("tmpfs", dir, "tmpfs", 0, "size=512k,mode=0777") != 0)
        tu_skip("cannot mount a small tmpfs at '%s' (%s): no full file system to write to", dir,
                strerror(errno));
    sarbp_grid g = {.nx = 256, .ny = 256, .dx = 0.1, .dy = 0.1};
    sarbp_image *img = NULL;
    sarbp_status st = sarbp_image_alloc(&g, &img);
    if (st == SARBP_OK)
        for (size_t i = 0; i < g.nx * g.ny; i++) img->data[i] = (sarbp_c32){(float)(i % 7), 1};
    for (size_t m = 0; m < 2 && st == SARBP_OK; m++) {
        tu_write_text(tu_in_dir(dir, "a.png"), outputs[0].earlier);
        tu_write_text(tu_in_dir(dir, "b.h5"), outputs[1].earlier);
        sarbp_tempfile_test_set(modes[m].flags, NULL, NULL);
        const char *paths[] = {tu_in_dir(dir, "a.png"), tu_in_dir(dir, "b.h5"), tu_in_dir(dir, "c.npy")};
        tu_ok(sarbp_output_check_path(paths[1])); /* the check cannot know the room */
        st = sarbp_image_write_all(paths, 3, img, 50);
        sarbp_tempfile_test_set(0, NULL, NULL);
        if (st != SARBP_ERR_IO && st != SARBP_ERR_HDF5) {
            umount(dir);
            fail_msg("%s: writing 1 MiB to 512 KiB returned %d (%s)", modes[m].what, st,
                     sarbp_error_detail());
        }
        assert_earlier(dir, NSIMPLE, NULL);
        st = SARBP_OK;
    }
    sarbp_image_free(img);
    assert_int_equal(umount(dir), 0);
    tu_ok(st);
}

/* ---- the command line ---------------------------------------------------------------- */

/* Runs "sarbp ARGS" (sh -c, exec'd so a signal shows in the status) as uid
 * (0: this process's user) with a file-size limit (0: none); stderr into
 * err. Returns the wait status. */
static int run_raw(uid_t uid, long fsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int run_raw(uid_t uid, long fsize, const char *fmt, ...)
{
    char args[4096], cmd[5000], errp[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(errp, sizeof errp, "%s/oc_%d.err", SARBP_TEST_TMP, (int)getpid());
    unlink(errp);
    snprintf(cmd, sizeof cmd, "exec '%s' %s </dev/null >/dev/null 2>'%s'", SARBP_EXE, args, errp);
    const int efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    assert_true(efd >= 0);
    if (uid) assert_int_equal(fchown(efd, uid, uid), 0);
    close(efd);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        if (uid && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(126);
        if (fsize) {
            struct rlimit fs = {(rlim_t)fsize, (rlim_t)fsize};
            setrlimit(RLIMIT_FSIZE, &fs);
        }
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    err[0] = '\0';
    tu_read_text(errp, err, sizeof err);
    unlink(errp);
    return status;
}

/* Exit 1 and one line on stderr that holds each of the texts. */
static void assert_one_message(int status, const char *a, const char *b)
{
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail_msg("status 0x%x, want exit 1; stderr: %s", status, err);
    const char *nl = strchr(err, '\n');
    if (!nl || nl[1]) fail_msg("want one line on stderr, got: %s", err);
    if (strncmp(err, "sarbp: ", 7) || (a && !strstr(err, a)) || (b && !strstr(err, b)))
        fail_msg("stderr lacks '%s' or '%s': %s", a ? a : "", b ? b : "", err);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *sim_input(void)
{
    static char in[600];
    if (!in[0]) {
        snprintf(in, sizeof in, "%s/oc_in.h5", SARBP_TEST_TMP);
        int rc = tu_run("simulate -q -o '%s' --pulses 32 --samples 64 --targets 0,0", in);
        if (rc != 0) fail_msg("simulate: exit %d: %s", rc, err);
        chmod(in, 0644);
    }
    return in;
}

/* rename_failure_deletes_output.sh (1): a directory named like the second
 * output. Refused before forming; the first output's earlier file stays. */
static void test_cli_directory_in_the_way(void **state)
{
    (void)state;
    const char *in = sim_input(), *dir = fresh_dir("oc_cli_dir");
    tu_write_text(tu_in_dir(dir, "a.png"), "my earlier image\n");
    assert_int_equal(mkdir(tu_in_dir(dir, "b.h5"), 0755), 0);
    int status = run_raw(0, 0, "form -q -i '%s' --backend cpu --grid 32x32 --spacing 0.25 "
                         "-o '%s' -o '%s'", in, tu_in_dir(dir, "a.png"), tu_in_dir(dir, "b.h5"));
    assert_one_message(status, "b.h5': Is a directory", "sarbp: form: cannot create '");
    tu_assert_text(tu_in_dir(dir, "a.png"), "my earlier image\n");
    tu_assert_dir_holds(dir, TU_NAMES("a.png", "b.h5"));

    /* simulate and convert check their output before the work too */
    status = run_raw(0, 0, "simulate -o '%s' --pulses 8 --samples 8", tu_in_dir(dir, "b.h5"));
    assert_one_message(status, "sarbp: simulate: cannot create '", "b.h5': Is a directory");
    status = run_raw(0, 0, "convert '%s' -o '%s'", in, tu_in_dir(dir, "b.h5"));
    assert_one_message(status, "sarbp: convert: cannot create '", "b.h5': Is a directory");
    tu_assert_dir_holds(dir, TU_NAMES("a.png", "b.h5"));
}

/* rename_failure_deletes_output.sh (2): as a user without privileges, in a
 * sticky folder where the second output's name is root's file. */
static void test_cli_sticky_foreign(void **state)
{
    (void)state;
    if (geteuid() != 0) tu_skip("needs root to run sarbp as another user in a sticky folder");
    const char *in = sim_input(), *dir = fresh_dir("oc_cli_sticky");
    tu_write_text(tu_in_dir(dir, "a.png"), "nobody's earlier image\n");
    tu_write_text(tu_in_dir(dir, "b.h5"), "root's file\n");
    assert_int_equal(chown(tu_in_dir(dir, "a.png"), NOBODY, NOBODY), 0);
    assert_int_equal(chmod(tu_in_dir(dir, "b.h5"), 0644), 0);
    assert_int_equal(chmod(dir, 01777), 0);
    int status = run_raw(NOBODY, 0, "form -q -i '%s' --backend cpu --grid 32x32 --spacing 0.25 "
                         "-o '%s' -o '%s'", in, tu_in_dir(dir, "a.png"), tu_in_dir(dir, "b.h5"));
    assert_one_message(status, "b.h5': Operation not permitted", "sticky");
    tu_assert_text(tu_in_dir(dir, "a.png"), "nobody's earlier image\n");
    tu_assert_text(tu_in_dir(dir, "b.h5"), "root's file\n");
    tu_assert_dir_holds(dir, TU_NAMES("a.png", "b.h5"));
    chmod(dir, 0777);
}

/* xfsz_leaves_temporary.sh: under a file-size limit the write that
 * crosses it fails (the CLI ignores SIGXFSZ): exit 1, one message naming
 * the output, no temporary, and the earlier file whole. */
static void test_cli_file_size_limit(void **state)
{
    (void)state;
    const char *in = sim_input(), *dir = fresh_dir("oc_cli_xfsz");
    tu_write_text(tu_in_dir(dir, "img.npy"), "earlier\n");
    int status = run_raw(0, 100 * 1024, "form -q -i '%s' --backend cpu --grid 512x512 "
                         "--spacing 0.05 -o '%s'", in, tu_in_dir(dir, "img.npy"));
    assert_one_message(status, "img.npy", "File too large");
    tu_assert_text(tu_in_dir(dir, "img.npy"), "earlier\n");
    tu_assert_dir_holds(dir, TU_NAMES("img.npy"));
}

/* A large .npy is written band by band as the image forms (at least 64
 * MiB: here 128 MiB in two bands): it is the same image as the .h5 the
 * same run writes from memory; under a file-size limit that the second
 * band's rows cross, exit 1 with one message naming the output, the
 * earlier file whole and no temporary. */
static void test_cli_streamed_npy(void **state)
{
    (void)state;
    const char *in = sim_input(), *dir = fresh_dir("oc_cli_stream");
    const char *npy = tu_in_dir(dir, "big.npy"), *h5 = tu_in_dir(dir, "big.h5");
    tu_write_text(npy, "earlier\n");
    const char *form = "form %s -i '%s' --backend cpu --pulses 0:2 --grid 4096x4096 --spacing 0.01 "
                       "-o '%s' -o '%s'";
    int status = run_raw(0, 100L << 20, form, "-q", in, npy, h5);
    assert_one_message(status, "big.npy", "File too large");
    tu_assert_text(npy, "earlier\n");
    tu_assert_dir_holds(dir, TU_NAMES("big.npy"));
    status = run_raw(0, 0, form, "-v", in, npy, h5);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("status 0x%x: %s", status, err);
    if (!strstr(err, "in 2 bands")) fail_msg("not formed in two bands: %s", err);
    sarbp_image *a, *b;
    tu_ok(sarbp_image_read(npy, &a));
    tu_ok(sarbp_image_read(h5, &b));
    assert_int_equal(a->grid.nx * a->grid.ny, (size_t)4096 * 4096);
    assert_memory_equal(a->data, b->data, (size_t)4096 * 4096 * sizeof(sarbp_c32));
    sarbp_image_free(a);
    sarbp_image_free(b);
    tu_assert_dir_holds(dir, TU_NAMES("big.npy", "big.h5"));
    unlink(npy);
    unlink(h5);
}

/* wide_png_kmz.sh: a side over libpng's 1,000,000 pixels is refused before
 * forming, with one message naming the output. */
static void test_cli_wide_png_kmz(void **state)
{
    (void)state;
    const char *in = sim_input(), *dir = fresh_dir("oc_cli_wide");
    static const char *const names[] = {"w.png", "w.kmz"};
    for (size_t i = 0; i < 2; i++) {
        const double t0 = now_s();
        int status = run_raw(0, 0, "form -q -i '%s' --backend cpu --pulses 0:2 --grid 1000001x1 "
                             "--spacing 0.01 --scene-ref 10,20,0 -o '%s'", in,
                             tu_in_dir(dir, names[i]));
        const double dt = now_s() - t0;
        assert_one_message(status, names[i], "libpng's limit");
        if (!strstr(err, "1000001 x 1")) fail_msg("stderr lacks the grid: %s", err);
        print_message("%s refused in %.3f s\n", names[i], dt);
        tu_assert_dir_holds(dir, TU_NAMES(NULL));
    }
}

/* Geolocated outputs without a scene reference, and a PNG over the limit,
 * on a 3000 x 3000 grid of the Gotcha data: refused in under a second, as
 * no pulse is read (forming it takes minutes). */
static void test_cli_gotcha_refused_fast(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *dir = fresh_dir("oc_cli_gotcha");
    static const char *const names[] = {"g.nitf", "g.ntf", "g.tif", "g.kmz"};
    for (size_t i = 0; i < 4; i++) {
        const double t0 = now_s();
        int status = run_raw(0, 0, "form -q -i '%s' --backend cpu --grid 3000x3000 -o '%s' -o '%s'",
                             tu_gotcha_dir(), tu_in_dir(dir, "g.png"), tu_in_dir(dir, names[i]));
        const double dt = now_s() - t0;
        assert_one_message(status, names[i], "--scene-ref");
        print_message("%s refused in %.3f s\n", names[i], dt);
        if (dt >= 1.0) fail_msg("'%s' took %.3f s to refuse, want under 1 s", names[i], dt);
        tu_assert_dir_holds(dir, TU_NAMES(NULL));
    }
    const double t0 = now_s();
    int status = run_raw(0, 0, "form -q -i '%s' --backend cpu --grid 1000001x3000 --spacing 0.01 "
                         "-o '%s'", tu_gotcha_dir(), tu_in_dir(dir, "g.png"));
    const double dt = now_s() - t0;
    assert_one_message(status, "g.png", "libpng's limit");
    if (dt >= 1.0) fail_msg("the wide PNG took %.3f s to refuse, want under 1 s", dt);
    tu_assert_dir_holds(dir, TU_NAMES(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_fail_each_step),
        cmocka_unit_test(test_sigterm_each_step),
        cmocka_unit_test(test_sigkill_each_step),
        cmocka_unit_test(test_full_file_system),
        cmocka_unit_test(test_cli_directory_in_the_way),
        cmocka_unit_test(test_cli_sticky_foreign),
        cmocka_unit_test(test_cli_file_size_limit),
        cmocka_unit_test(test_cli_streamed_npy),
        cmocka_unit_test(test_cli_wide_png_kmz),
        cmocka_unit_test(test_cli_gotcha_refused_fast),
    };
    return tu_run_tests(tests);
}
