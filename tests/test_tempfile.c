/* test_tempfile.c - the temporary files every writer goes through
 * (src/io/tempfile.h): exclusive, unpredictable names beside the output that
 * never follow a planted link, fsync-and-rename commits, all-or-nothing
 * commits of several files, and removal on error, on SIGINT/SIGTERM/SIGHUP
 * (and SIGQUIT, SIGXFSZ, SIGXCPU, SIGALRM, SIGUSR1/2) and at exit (but never
 * by a forked child). The tests of names run with named temporaries (what a
 * file system without O_TMPFILE gets: the test flag); the unnamed O_TMPFILE
 * temporaries have tests of their own, SIGKILL included. Each test works in
 * its own fresh directory and checks the directory's exact contents
 * afterwards. The commit's failures and signals at each of its steps are
 * test_output_commit.c's. */
#include "test_util.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/io/tempfile.h"
#include "scratch.h"

/* ---- helpers --------------------------------------------------------------- */

#define NO_NAMES ((const char *const[]){NULL})

static void put(sarbp_tempfile *t, const char *text)
{
    size_t n = strlen(text);
    assert_int_equal(write(sarbp_tempfile_fd(t), text, n), (ssize_t)n);
}

/* Named temporaries, as on a file system without O_TMPFILE (setup), and
 * back to the default (teardown). */
static int named_temporaries(void **state)
{
    (void)state;
    sarbp_tempfile_test_set(SARBP_TEMPFILE_TEST_NAMED, NULL, NULL);
    return 0;
}

static int default_temporaries(void **state)
{
    (void)state;
    sarbp_tempfile_test_set(0, NULL, NULL);
    return 0;
}

/* ---- names, modes, links --------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_names");
    const char *out = tu_in_dir(dir, "img.png");
    enum { N = 64 };
    sarbp_tempfile *t[N];
    for (int i = 0; i < N; i++) {
        tu_ok(sarbp_tempfile_create(out, &t[i]));
        const char *name = sarbp_tempfile_name(t[i]);
        /* beside the output: "<dir>/img.png.tmp-" and six characters */
        char prefix[1100];
        snprintf(prefix, sizeof prefix, "%s.tmp-", out);
        assert_int_equal(strncmp(name, prefix, strlen(prefix)), 0);
        assert_int_equal(strlen(name), strlen(prefix) + 6);
        assert_string_equal(sarbp_tempfile_target(t[i]), out);
        for (int j = 0; j < i; j++) assert_string_not_equal(name, sarbp_tempfile_name(t[j]));
        struct stat st;
        assert_int_equal(lstat(name, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        mode_t mask = umask(0);
        umask(mask);
        assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    }
    for (int i = 0; i < N; i++) sarbp_tempfile_delete(t[i]);
    sarbp_tempfile_delete(NULL);
    tu_assert_dir_holds(dir, NO_NAMES);

    /* a name of a file's length limit still gets a temporary (base shortened) */
    char longname[256];
    memset(longname, 'a', 250);
    memcpy(longname + 250, ".png", 5);
    sarbp_tempfile *lt;
    tu_ok(sarbp_tempfile_create(tu_in_dir(dir, longname), &lt));
    put(lt, "long");
    tu_ok(sarbp_tempfile_commit(lt));
    tu_assert_text(tu_in_dir(dir, longname), "long");

    /* not a file name, a missing directory: errors naming the path */
    assert_int_equal(sarbp_tempfile_create("", &lt), SARBP_ERR_INVALID);
    assert_null(lt);
    assert_int_equal(sarbp_tempfile_create(tu_in_dir(dir, ""), &lt), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_tempfile_create(tu_in_dir(dir, "no-such-dir/x.h5"), &lt), SARBP_ERR_IO);
    assert_non_null(strstr(sarbp_error_detail(), "cannot create '"));
    assert_non_null(strstr(sarbp_error_detail(), "no-such-dir/x.h5': No such file or directory"));
    tu_assert_dir_holds(dir, TU_NAMES(longname));
}

/* The old scheme "<out>.tmp.<pid>" opened without O_EXCL followed a link
 * planted there and overwrote its target. Links at that name and at other
 * plausible names stay links, their targets stay as they were, and the
 * output is a regular file of ours. */
static void test_planted_links(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_links");
    const char *victim = tu_in_dir(dir, "victim.txt");
    tu_write_text(victim, "precious");
    const char *out = tu_in_dir(dir, "out.h5");
    char old[1100], plausible[1100], dangling[1100];
    snprintf(old, sizeof old, "%s.tmp.%ld", out, (long)getpid());
    snprintf(plausible, sizeof plausible, "%s.tmp-AAAAAA", out);
    snprintf(dangling, sizeof dangling, "%s.tmp.%ld.0", out, (long)getpid());
    assert_int_equal(symlink(victim, old), 0);
    assert_int_equal(symlink(victim, plausible), 0);
    assert_int_equal(symlink(tu_in_dir(dir, "created-through-link"), dangling), 0);

    sarbp_tempfile *t;
    tu_ok(sarbp_tempfile_create(out, &t));
    put(t, "new");
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(out, "new");
    tu_assert_text(victim, "precious");
    struct stat st;
    assert_int_equal(lstat(out, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(lstat(old, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    tu_assert_dir_holds(dir, TU_NAMES("victim.txt", "out.h5", "out.h5.tmp-AAAAAA",
                                strrchr(old, '/') + 1, strrchr(dangling, '/') + 1));

    /* an output that is itself a link is replaced by the new file: the
     * link's target is not written through */
    const char *linked = tu_in_dir(dir, "linked.png");
    assert_int_equal(symlink(victim, linked), 0);
    tu_ok(sarbp_tempfile_create(linked, &t));
    put(t, "replaced");
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(victim, "precious");
    assert_int_equal(lstat(linked, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    tu_assert_text(linked, "replaced");
}

/* HDF5 and friends reopen the temporary by name: the name opens our file
 * even after the directory entry was swapped. */
static void test_open_name(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_open_name");
    sarbp_tempfile *t;
    tu_ok(sarbp_tempfile_create(tu_in_dir(dir, "x.h5"), &t));
    int fd = open(sarbp_tempfile_open_name(t), O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "via name", 8), 8);
    close(fd);
    FILE *f = sarbp_tempfile_fdopen(t);
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    fputs(" and stream", f);
    assert_int_equal(fclose(f), 0);
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(tu_in_dir(dir, "x.h5"), "via name and stream");
    tu_assert_dir_holds(dir, TU_NAMES("x.h5"));
}

/* ---- commits --------------------------------------------------------------- */

static void test_commit_and_delete(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_commit");
    const char *out = tu_in_dir(dir, "a.npy");
    tu_write_text(out, "old");
    sarbp_tempfile *t;
    tu_ok(sarbp_tempfile_create(out, &t));
    put(t, "abandoned");
    tu_assert_text(out, "old"); /* the output is untouched while writing */
    sarbp_tempfile_delete(t);
    tu_assert_text(out, "old");
    tu_assert_dir_holds(dir, TU_NAMES("a.npy"));

    tu_ok(sarbp_tempfile_create(out, &t));
    put(t, "new");
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(out, "new");
    tu_assert_dir_holds(dir, TU_NAMES("a.npy"));

    /* a temporary removed behind our back: the commit fails, names the
     * output, and does not move anything into place */
    tu_ok(sarbp_tempfile_create(out, &t));
    put(t, "lost");
    assert_int_equal(unlink(sarbp_tempfile_name(t)), 0);
    assert_int_equal(sarbp_tempfile_commit(t), SARBP_ERR_IO);
    assert_non_null(strstr(sarbp_error_detail(), "a.npy"));
    tu_assert_text(out, "new");

    /* ... or swapped for another file: that file is not renamed over ours */
    tu_ok(sarbp_tempfile_create(out, &t));
    char name[1100];
    snprintf(name, sizeof name, "%s", sarbp_tempfile_name(t));
    assert_int_equal(unlink(name), 0);
    tu_write_text(name, "planted");
    assert_int_equal(sarbp_tempfile_commit(t), SARBP_ERR_IO);
    tu_assert_text(out, "new");
    assert_int_equal(unlink(name), 0);
    tu_assert_dir_holds(dir, TU_NAMES("a.npy"));
}

static void test_commit_all(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_commit_all");
    const char *a = tu_in_dir(dir, "a.png"), *b = tu_in_dir(dir, "b.h5");
    tu_write_text(b, "old b");
    sarbp_tempfile *t[3] = {NULL, NULL, NULL};
    tu_ok(sarbp_tempfile_create(a, &t[0]));
    tu_ok(sarbp_tempfile_create(b, &t[2])); /* t[1] NULL: skipped */
    put(t[0], "new a");
    put(t[2], "new b");
    tu_ok(sarbp_tempfile_commit_all(t, 3));
    tu_assert_text(a, "new a");
    tu_assert_text(b, "new b");
    tu_assert_dir_holds(dir, TU_NAMES("a.png", "b.h5"));

    /* one fails to sync (its temporary vanished): nothing changes */
    tu_ok(sarbp_tempfile_create(a, &t[0]));
    tu_ok(sarbp_tempfile_create(b, &t[1]));
    t[2] = NULL;
    put(t[0], "newer a");
    assert_int_equal(unlink(sarbp_tempfile_name(t[1])), 0);
    assert_int_equal(sarbp_tempfile_commit_all(t, 2), SARBP_ERR_IO);
    tu_assert_text(a, "new a");
    tu_assert_text(b, "new b");
    tu_assert_dir_holds(dir, TU_NAMES("a.png", "b.h5"));

    /* a rename that fails after an earlier one succeeded (the second
     * output is a non-empty directory): no new output is left */
    const char *c = tu_in_dir(dir, "c.npy"), *d = tu_in_dir(dir, "d.h5");
    assert_int_equal(mkdir(d, 0777), 0);
    char keep[1100];
    snprintf(keep, sizeof keep, "%s/keep", d);
    tu_write_text(keep, "k");
    tu_ok(sarbp_tempfile_create(c, &t[0]));
    tu_ok(sarbp_tempfile_create(d, &t[1]));
    assert_int_equal(sarbp_tempfile_commit_all(t, 2), SARBP_ERR_IO);
    assert_non_null(strstr(sarbp_error_detail(), "d.h5"));
    assert_false(tu_exists(c));
    tu_assert_dir_holds(dir, TU_NAMES("a.png", "b.h5", "d.h5"));
}

/* ---- signals and exit ------------------------------------------------------ */

/* A child creates a temporary (and writes to it), then is killed by sig:
 * it dies of that signal and the temporary is gone. */
static void killed_child_cleans_up(int sig)
{
    const char *dir = tu_fresh_dir("tf_signal");
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* SIGQUIT, SIGXFSZ and SIGXCPU dump core by default: not here */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        prctl(PR_SET_DUMPABLE, 0);
        sarbp_tempfile *t;
        if (sarbp_tempfile_create(tu_in_dir(dir, "img.h5"), &t) != SARBP_OK) _exit(3);
        if (write(sarbp_tempfile_fd(t), "partial", 7) != 7) _exit(4);
        if (write(ready[1], "r", 1) != 1) _exit(5);
        for (;;) pause();
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    /* the temporary exists now */
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += !strncmp(e->d_name, "img.h5.tmp-", 11);
    closedir(d);
    assert_int_equal(kill(pid, sig), 0); /* before any assertion: never leave it paused */
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(n, 1);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
        fail_msg("child was not killed by signal %d (status 0x%x)", sig, status);
    tu_assert_dir_holds(dir, NO_NAMES);
}

static void test_signals(void **state)
{
    (void)state;
    killed_child_cleans_up(SIGINT);
    killed_child_cleans_up(SIGTERM);
    killed_child_cleans_up(SIGHUP);
    /* file-size and CPU limits (ulimit -f, -t), schedulers' alarms and
     * warnings end the process too */
    killed_child_cleans_up(SIGQUIT);
    killed_child_cleans_up(SIGPIPE);
    killed_child_cleans_up(SIGXFSZ);
    killed_child_cleans_up(SIGXCPU);
    killed_child_cleans_up(SIGALRM);
    killed_child_cleans_up(SIGUSR1);
    killed_child_cleans_up(SIGUSR2);
}

/* The one temporary a file-size limit leaves is its own partial file: a
 * write past ulimit -f raises SIGXFSZ, which removes it. */
static void test_file_size_limit(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_xfsz");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0}, fsize = {4096, 4096};
        setrlimit(RLIMIT_CORE, &no_core);
        prctl(PR_SET_DUMPABLE, 0);
        sarbp_tempfile *t;
        if (sarbp_tempfile_create(tu_in_dir(dir, "big.nitf"), &t) != SARBP_OK) _exit(3);
        if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) _exit(4);
        static char block[1024];
        for (int i = 0; i < 8; i++)
            if (write(sarbp_tempfile_fd(t), block, sizeof block) < 0) _exit(5);
        _exit(6); /* the limit did not stop the writes */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGXFSZ)
        fail_msg("child was not ended by SIGXFSZ (status 0x%x)", status);
    tu_assert_dir_holds(dir, NO_NAMES);
}

/* ---- unnamed temporaries (O_TMPFILE) ----------------------------------------- */

/* Where the file system has O_TMPFILE the temporary has no name until its
 * commit: the folder shows nothing while it is written, and the commit gives
 * the output the usual mode. A writer that wants a name (HDF5) gets the
 * named temporary's, through /proc, with what was written kept. */
static void test_unnamed(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_unnamed");
    const char *out = tu_in_dir(dir, "img.h5");
    tu_write_text(out, "old");
    sarbp_tempfile *t;
    tu_ok(sarbp_tempfile_create(out, &t));
    if (sarbp_tempfile_name(t)[0]) {
        sarbp_tempfile_delete(t);
        tu_skip("this file system has no O_TMPFILE: the named tests cover it");
    }
    assert_string_equal(sarbp_tempfile_target(t), out);
    put(t, "via fd");
    tu_assert_dir_holds(dir, TU_NAMES("img.h5"));
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(out, "via fd");
    struct stat st;
    assert_int_equal(lstat(out, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    tu_assert_dir_holds(dir, TU_NAMES("img.h5"));

    /* deleted: nothing was ever there */
    tu_ok(sarbp_tempfile_create(out, &t));
    put(t, "abandoned");
    sarbp_tempfile_delete(t);
    tu_assert_text(out, "via fd");
    tu_assert_dir_holds(dir, TU_NAMES("img.h5"));

    /* asked for a name: "<out>.tmp-XXXXXX", the same descriptor at the same
     * offset, and /proc's name resolves to it (HDF5 calls realpath) */
    tu_ok(sarbp_tempfile_create(out, &t));
    const int fd = sarbp_tempfile_fd(t);
    put(t, "first ");
    const char *open_name = sarbp_tempfile_open_name(t);
    assert_int_equal(strncmp(open_name, "/proc/self/fd/", 14), 0);
    assert_int_equal(sarbp_tempfile_fd(t), fd);
    char prefix[1100], real[4096];
    snprintf(prefix, sizeof prefix, "%s.tmp-", out);
    assert_int_equal(strncmp(sarbp_tempfile_name(t), prefix, strlen(prefix)), 0);
    assert_non_null(realpath(open_name, real));
    char want[4096];
    assert_non_null(realpath(sarbp_tempfile_name(t), want));
    assert_string_equal(real, want);
    put(t, "second");
    const char *base = strrchr(sarbp_tempfile_name(t), '/') + 1;
    tu_assert_dir_holds(dir, TU_NAMES("img.h5", base));
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(out, "first second");
    tu_assert_dir_holds(dir, TU_NAMES("img.h5"));
}

/* SIGKILL, which no handler sees, and an exit without commit leave nothing:
 * the file goes with the process. */
static void test_unnamed_killed(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_unnamed_kill");
    for (int round = 0; round < 2; round++) {
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            sarbp_tempfile *t;
            if (sarbp_tempfile_create(tu_in_dir(dir, "img.h5"), &t) != SARBP_OK) _exit(3);
            if (sarbp_tempfile_name(t)[0]) _exit(7); /* no O_TMPFILE here */
            if (write(sarbp_tempfile_fd(t), "partial", 7) != 7) _exit(4);
            if (round == 1) exit(0);
            if (write(ready[1], "r", 1) != 1) _exit(5);
            for (;;) pause();
        }
        close(ready[1]);
        char c;
        const ssize_t got = read(ready[0], &c, 1);
        close(ready[0]);
        if (got == 1) assert_int_equal(kill(pid, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 7) tu_skip("no O_TMPFILE here");
        if (round == 0 && (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL))
            fail_msg("child was not killed by SIGKILL (status 0x%x)", status);
        if (round == 1 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
            fail_msg("child did not exit 0 (status 0x%x)", status);
        tu_assert_dir_holds(dir, NO_NAMES);
    }
}

/* exit() with a temporary still open removes it; a forked child that exits
 * leaves its parent's temporary alone. */
static void test_exit_and_fork(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("tf_exit");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sarbp_tempfile *t;
        if (sarbp_tempfile_create(tu_in_dir(dir, "left.npy"), &t) != SARBP_OK) _exit(3);
        exit(0); /* no delete, no commit */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    tu_assert_dir_holds(dir, NO_NAMES);

    sarbp_tempfile *t;
    tu_ok(sarbp_tempfile_create(tu_in_dir(dir, "mine.npy"), &t));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        raise(SIGTERM); /* the handler runs in the child: not its file */
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) exit(0); /* atexit runs in the child: not its file either */
    assert_int_equal(waitpid(pid, &status, 0), pid);
    struct stat st;
    assert_int_equal(lstat(sarbp_tempfile_name(t), &st), 0);
    put(t, "still mine");
    tu_ok(sarbp_tempfile_commit(t));
    tu_assert_text(tu_in_dir(dir, "mine.npy"), "still mine");
    tu_assert_dir_holds(dir, TU_NAMES("mine.npy"));
}

/* A program's own disposition is left in place: the library installs its
 * handler only where the disposition is still the default. Runs first (see
 * main), so the child's create is the process's first. */
static void test_foreign_handler_kept(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN); /* this program ignores hangups */
        sarbp_tempfile *t;
        const char *dir = tu_fresh_dir("tf_foreign");
        if (sarbp_tempfile_create(tu_in_dir(dir, "x.png"), &t) != SARBP_OK) _exit(3);
        struct sigaction sa;
        sigaction(SIGHUP, NULL, &sa);
        _exit(sa.sa_handler == SIG_IGN ? 0 : 4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    /* test_foreign_handler_kept first: its child must be the first in this
     * process to create a temporary (handlers are installed once) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_handler_kept),
        cmocka_unit_test_setup_teardown(test_names, named_temporaries, default_temporaries),
        cmocka_unit_test_setup_teardown(test_planted_links, named_temporaries, default_temporaries),
        cmocka_unit_test(test_planted_links),
        cmocka_unit_test_setup_teardown(test_open_name, named_temporaries, default_temporaries),
        cmocka_unit_test(test_open_name),
        cmocka_unit_test_setup_teardown(test_commit_and_delete, named_temporaries,
                                        default_temporaries),
        cmocka_unit_test_setup_teardown(test_commit_all, named_temporaries, default_temporaries),
        cmocka_unit_test_setup_teardown(test_signals, named_temporaries, default_temporaries),
        cmocka_unit_test_setup_teardown(test_file_size_limit, named_temporaries,
                                        default_temporaries),
        cmocka_unit_test_setup_teardown(test_exit_and_fork, named_temporaries, default_temporaries),
        cmocka_unit_test(test_unnamed),
        cmocka_unit_test(test_unnamed_killed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
