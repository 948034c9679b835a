/* tempfile.c - temporary files that become outputs: an unnamed file in the
 * output's folder (O_TMPFILE) or an exclusive name beside the output, fsync,
 * and a commit that keeps every replaced file until all renames succeeded;
 * removal on error and on the usual terminating signals (see tempfile.h).
 *
 * The signal handler walks a list that other code changes, so the list is
 * built to be read at any moment: nodes are pushed at the head and never
 * freed (a finished node is reused by a later create), a node's name is a
 * fixed buffer written only while the node is not live, and "live" is an
 * atomic flag set after the name holds our file and cleared before the name
 * may change. The handler calls only getpid, unlink, sigaction and raise
 * (and the program's hook, async-signal-safe by contract).
 * While a commit runs, the cleanup signals are blocked in its thread and
 * deferred by the handler in every other thread, so a signal never splits a
 * set of outputs. This module does not write file contents: the writers do.
 * Its public face, sarbp/output.h's sarbp_output_file, is at the end. */
#define _GNU_SOURCE /* O_TMPFILE, AT_SYMLINK_FOLLOW */
#include "io/tempfile.h"
#include "sarbp/output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TEMP_SUFFIX ".tmp-" /* a new file on its way to its output */
#define OLD_SUFFIX ".old-"  /* the file an output replaces, until the commit is whole */
#define TEMP_RANDOM 6
#define TEMP_TRIES 100
#define TEMP_NAME_MAX 4096 /* PATH_MAX on Linux */
#define FILE_NAME_MAX 255  /* NAME_MAX on Linux */

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

struct sarbp_output_file_s {
    atomic_int live;                /* the file at name is ours: remove it on a signal */
    pid_t owner;                    /* the process that created it */
    int in_use;                     /* taken by a caller (under list_lock) */
    int fd;
    int anon;                       /* O_TMPFILE: no name until the commit links one */
    char *target;                   /* the output path, malloc'd */
    struct sarbp_output_file_s *next; /* set once, before the node is published */
    char name[TEMP_NAME_MAX];       /* "" while an anonymous file has none */
    char open_name[40];
};

static _Atomic(sarbp_tempfile *) list_head;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* the signals whose default action ends the process and that a batch system
 * or a user sends to stop a run (SIGXFSZ, SIGXCPU: ulimit -f, -t; SIGALRM,
 * SIGUSR1/2: schedulers' warnings and timeouts) */
static const int cleanup_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,
                                      SIGXFSZ, SIGXCPU, SIGALRM, SIGUSR1, SIGUSR2};
#define NSIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])

static atomic_int committing;   /* commits in progress in this process */
static atomic_int deferred_sig; /* a cleanup signal that came meanwhile, or 0 */
static _Atomic(sarbp_output_signal_fn) signal_hook; /* the program's, or NULL */
static pid_t signal_hook_pid;                       /* the process that set it */

static atomic_uint test_flags;                 /* SARBP_TEMPFILE_TEST_* */
static sarbp_tempfile_test_fn test_hook;       /* set by tests before any commit */
static void *test_hook_arg;
static int commit_step;                        /* steps of the commit running now */

/* ---- removal on signals and at exit --------------------------------------- */

static void remove_live(void)
{
    pid_t me = getpid();
    for (sarbp_tempfile *t = atomic_load(&list_head); t; t = t->next)
        if (atomic_load(&t->live) && t->owner == me) {
            unlink(t->name);
            atomic_store(&t->live, 0);
        }
}

static void on_signal(int sig)
{
    int saved = errno;
    /* a commit in another thread (its own has these signals blocked): it
     * raises the signal again when the outputs are whole. Checked again
     * after the store: a commit that ended in between may not have seen it,
     * and then the signal acts now. */
    if (atomic_load(&committing) > 0) {
        atomic_store(&deferred_sig, sig);
        if (atomic_load(&committing) > 0) {
            errno = saved;
            return;
        }
    }
    const sarbp_output_signal_fn hook = atomic_load(&signal_hook);
    if (hook && getpid() == signal_hook_pid) hook(sig); /* never in a forked child */
    remove_live();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked while we run: delivered, fatal, when we return */
    errno = saved;
}

static void on_exit_remove(void)
{
    remove_live();
}

/* A library should not take signals from its program: only those still at
 * the default action get the handler (the CLI sets none of its own). */
static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIGNALS; i++) sigaddset(&sa.sa_mask, cleanup_signals[i]);
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction old;
        if (sigaction(cleanup_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            sigaction(cleanup_signals[i], &sa, NULL);
    }
    atexit(on_exit_remove);
}

static void block_cleanup_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < NSIGNALS; i++) sigaddset(&block, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &block, old);
}

/* ---- names ----------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n unpredictable bytes: getrandom, else /dev/urandom, else (neither
 * available: a broken system) a mix of clock, pid and a counter, which is
 * still unique enough for O_EXCL retries to converge. */
static void random_bytes(unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r > 0) got += (size_t)r;
        else if (r < 0 && errno == EINTR) continue;
        else break;
    }
    if (got == n) return;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        while (got < n) {
            ssize_t r = read(fd, buf + got, n - got);
            if (r > 0) got += (size_t)r;
            else if (r < 0 && errno == EINTR) continue;
            else break;
        }
        close(fd);
    }
    if (got == n) return;
    static atomic_uint counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^
                 atomic_fetch_add(&counter, 1);
    for (; got < n; got++) buf[got] = (unsigned char)splitmix64(&s);
}

/* name = "<dir>/<base>" + suffix + TEMP_RANDOM random characters; the base
 * is shortened when the whole would exceed a file name's limit. */
static int make_name(char *name, size_t n, const char *path, const char *suffix)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = (size_t)(base - path), baselen = strlen(base);
    const size_t room = FILE_NAME_MAX - strlen(suffix) - TEMP_RANDOM;
    if (baselen > room) baselen = room;
    unsigned char r[TEMP_RANDOM];
    random_bytes(r, sizeof r);
    char rnd[TEMP_RANDOM + 1];
    for (int i = 0; i < TEMP_RANDOM; i++) rnd[i] = chars[r[i] % (sizeof chars - 1)];
    rnd[TEMP_RANDOM] = '\0';
    int len = snprintf(name, n, "%.*s%.*s%s%s", (int)dirlen, path, (int)baselen, base, suffix,
                       rnd);
    return len > 0 && (size_t)len < n ? 0 : -1;
}

/* The folder of path: "." for a bare name, "/" for "/x". */
static void dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == path) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* ---- the list -------------------------------------------------------------- */

static sarbp_tempfile *node_take(void)
{
    pthread_mutex_lock(&list_lock);
    sarbp_tempfile *t = atomic_load(&list_head);
    while (t && t->in_use) t = t->next;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (t) {
            atomic_init(&t->live, 0);
            t->next = atomic_load(&list_head);
            atomic_store(&list_head, t);
        }
    }
    if (t) {
        t->in_use = 1;
        t->fd = -1;
        t->anon = 0;
        t->target = NULL;
        t->name[0] = t->open_name[0] = '\0';
    }
    pthread_mutex_unlock(&list_lock);
    return t;
}

/* Closes the descriptor and gives the node back; the file must no longer be
 * live (renamed or removed). */
static void node_release(sarbp_tempfile *t)
{
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    free(t->target);
    t->target = NULL;
    pthread_mutex_lock(&list_lock);
    t->in_use = 0;
    pthread_mutex_unlock(&list_lock);
}

/* ---- creation -------------------------------------------------------------- */

/* open_name = "/proc/self/fd/N" when it resolves to t's file */
static int proc_name(sarbp_tempfile *t)
{
    struct stat a, b;
    snprintf(t->open_name, sizeof t->open_name, "/proc/self/fd/%d", t->fd);
    if (stat(t->open_name, &a) != 0 || fstat(t->fd, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {
        t->open_name[0] = '\0';
        return -1;
    }
    return 0;
}

/* An unnamed file in path's folder: it vanishes with the process, whatever
 * ends it. Needs O_TMPFILE from the file system and /proc (the commit links
 * the file through /proc/self/fd/N); -1 where either is missing. */
static int open_anonymous(sarbp_tempfile *t, const char *path)
{
#ifdef O_TMPFILE
    if (atomic_load(&test_flags) & SARBP_TEMPFILE_TEST_NAMED) return -1;
    char dir[TEMP_NAME_MAX];
    dir_of(path, dir, sizeof dir);
    t->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (t->fd < 0) return -1;
    if (proc_name(t) != 0) {
        close(t->fd);
        t->fd = -1;
        return -1;
    }
    t->anon = 1;
    t->owner = getpid();
    return 0;
#else
    (void)t;
    (void)path;
    return -1;
#endif
}

sarbp_status sarbp_tempfile_create(const char *path, sarbp_tempfile **out)
{
    *out = NULL;
    if (!path || !*path) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    const char *slash = strrchr(path, '/');
    if (!(slash ? slash[1] : path[0]) || !strcmp(slash ? slash + 1 : path, ".") ||
        !strcmp(slash ? slash + 1 : path, ".."))
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': not a file name", path);
    if (strlen(path) >= TEMP_NAME_MAX - 16)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
    pthread_once(&handlers_once, install_handlers);

    sarbp_tempfile *t = node_take();
    if (!t || !(t->target = strdup(path))) {
        if (t) node_release(t);
        return sarbp_error(SARBP_ERR_NOMEM, "cannot write '%s': out of memory", path);
    }
    if (open_anonymous(t, path) == 0) {
        *out = t;
        return SARBP_OK;
    }
    /* Between a successful open and "live", a signal would leave the file:
     * the cleanup signals wait until the list knows it. */
    sigset_t old;
    int err = EEXIST;
    for (int i = 0; i < TEMP_TRIES && err == EEXIST; i++) {
        if (make_name(t->name, sizeof t->name, path, TEMP_SUFFIX)) {
            err = ENAMETOOLONG;
            break;
        }
        block_cleanup_signals(&old);
        t->fd = open(t->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = t->fd < 0 ? errno : 0;
        if (t->fd >= 0) {
            t->owner = getpid();
            atomic_store(&t->live, 1);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (err) {
        t->name[0] = '\0';
        node_release(t);
        return sarbp_error(SARBP_ERR_IO, "cannot create '%s': %s", path, strerror(err));
    }
    proc_name(t); /* the descriptor's own name, when /proc is there and resolves to it */
    *out = t;
    return SARBP_OK;
}

int sarbp_tempfile_fd(const sarbp_tempfile *t)
{
    return t->fd;
}

const char *sarbp_tempfile_name(const sarbp_tempfile *t)
{
    return t->name;
}

const char *sarbp_tempfile_target(const sarbp_tempfile *t)
{
    return t->target;
}

static int name_anonymous(sarbp_tempfile *t, int in_commit);

/* HDF5 resolves the name it is given (realpath): "/proc/self/fd/N" of an
 * unnamed file resolves to "/dir/#N (deleted)" and fails. So an unnamed
 * temporary gets its name now, and the descriptor is reopened through that
 * name (O_NOFOLLOW, the same file checked) so that /proc/self/fd/N shows it;
 * the offset carries over. Where that fails the unnamed name is returned
 * and the library that opens it reports the failure. */
const char *sarbp_tempfile_open_name(sarbp_tempfile *t)
{
    if (t->anon && !t->name[0] && name_anonymous(t, 0) == 0) {
        struct stat a, b;
        const int fd = open(t->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        const off_t at = lseek(t->fd, 0, SEEK_CUR);
        if (fd >= 0 && fstat(fd, &a) == 0 && fstat(t->fd, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino && at >= 0 && lseek(fd, at, SEEK_SET) == at)
            dup3(fd, t->fd, O_CLOEXEC);
        if (fd >= 0) close(fd);
    }
    return t->open_name[0] ? t->open_name : t->name;
}

FILE *sarbp_tempfile_fdopen(sarbp_tempfile *t)
{
    int fd = dup(t->fd);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

void sarbp_tempfile_delete(sarbp_tempfile *t)
{
    if (!t) return;
    if (atomic_load(&t->live)) unlink(t->name);
    atomic_store(&t->live, 0);
    node_release(t);
}

/* ---- the commit ------------------------------------------------------------ */

void sarbp_tempfile_test_set(unsigned flags, sarbp_tempfile_test_fn hook, void *arg)
{
    atomic_store(&test_flags, flags);
    test_hook = hook;
    test_hook_arg = arg;
}

/* Before each step of a commit that changes a directory: the tests' hook
 * may raise a signal there, or make the step fail (its errno returned). */
static int step(void)
{
    return test_hook ? test_hook(commit_step++, test_hook_arg) : 0;
}

static int rename2(const char *from, const char *to, unsigned flags)
{
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
#else
    (void)from;
    (void)to;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

/* renameat2 flags the kernel or the file system does not know */
static int unsupported(int e)
{
    return e == EINVAL || e == ENOSYS || e == EOPNOTSUPP || e == ENOTSUP;
}

/* An unnamed temporary gets a random name beside its output: linkat
 * through /proc/self/fd/N (which needs no privilege, unlike AT_EMPTY_PATH),
 * exclusive like every name here. Live from then on. 0 or an errno. */
static int name_anonymous(sarbp_tempfile *t, int in_commit)
{
    int err = EEXIST;
    sigset_t old;
    for (int i = 0; i < TEMP_TRIES && err == EEXIST; i++) {
        if (make_name(t->name, sizeof t->name, t->target, TEMP_SUFFIX)) {
            err = ENAMETOOLONG;
            break;
        }
        if (in_commit && (err = step())) break;
        block_cleanup_signals(&old);
        err = linkat(AT_FDCWD, t->open_name, AT_FDCWD, t->name, AT_SYMLINK_FOLLOW) ? errno : 0;
        if (!err) {
            t->owner = getpid();
            atomic_store(&t->live, 1);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (err) t->name[0] = '\0';
    return err;
}

/* The data on disk, a name for an anonymous file, and the name still ours
 * (not removed or swapped for another file since: the rename must move our
 * file only). */
static sarbp_status sync_one(sarbp_tempfile *t)
{
    if (fsync(t->fd) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", t->target, strerror(errno));
    int err;
    if (t->anon && !t->name[0] && (err = name_anonymous(t, 1)) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s (naming its temporary)",
                           t->target, strerror(err));
    struct stat a, b;
    if (fstat(t->fd, &a) != 0 || lstat(t->name, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {
        atomic_store(&t->live, 0); /* whatever is at the name now is not ours to remove */
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': its temporary '%s' was removed or "
                           "replaced by another process", t->target, t->name);
    }
    return SARBP_OK;
}

/* The directory entry of a rename is durable only once the directory is
 * synced. Best effort: some file systems refuse fsync on a directory, and
 * the output is in place by now either way. */
static void sync_dir(const char *path)
{
    char dir[TEMP_NAME_MAX];
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

static int same_dir(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;
    return la == lb && !strncmp(a, b, la);
}

/* How an output was put in place, so that it can be undone until every
 * output is. */
enum placed_how {
    NOT_PLACED,
    CREATED,   /* no earlier file: the temporary renamed to the target */
    EXCHANGED, /* renameat2 RENAME_EXCHANGE: the earlier file is at t->name */
    ASIDE,     /* the earlier file linked or renamed to old, then the rename */
};

struct placed {
    enum placed_how how;
    const char *kept;        /* an undo failed: the earlier file is at this name */
    char old[TEMP_NAME_MAX]; /* ASIDE: the earlier file's second name */
};

/* The earlier file at target gets a second name p->old, by a hard link
 * (the target keeps it meanwhile) or, where the file system has none or
 * refuses (fs.protected_hardlinks for another user's file), by a rename
 * without replacing anything. 0 or an errno. */
static int set_aside(const char *target, struct placed *p, int *renamed)
{
    const unsigned flags = atomic_load(&test_flags);
    int err = EEXIST;
    for (int i = 0; i < TEMP_TRIES && err == EEXIST && !(flags & SARBP_TEMPFILE_TEST_NO_LINK); i++) {
        if (make_name(p->old, sizeof p->old, target, OLD_SUFFIX)) return ENAMETOOLONG;
        if ((err = step())) return err;
        err = link(target, p->old) ? errno : 0;
    }
    if (!err) {
        *renamed = 0;
        return 0;
    }
    err = EEXIST;
    for (int i = 0; i < TEMP_TRIES && err == EEXIST; i++) {
        if (make_name(p->old, sizeof p->old, target, OLD_SUFFIX)) return ENAMETOOLONG;
        if ((err = step())) return err;
        if (rename2(target, p->old, RENAME_NOREPLACE) == 0) {
            err = 0;
        } else if (!unsupported(errno)) {
            err = errno;
        } else {
            struct stat s; /* no renameat2: the name looked free a moment ago */
            err = lstat(p->old, &s) == 0 ? EEXIST : rename(target, p->old) ? errno : 0;
        }
    }
    *renamed = 1;
    return err;
}

/* Puts t's file at its target, keeping the earlier file there (if any)
 * under another name until the commit ends. 0 or an errno; on failure
 * nothing of this output changed, unless p->kept says where the earlier
 * file went. */
static int place(sarbp_tempfile *t, struct placed *p)
{
    const unsigned flags = atomic_load(&test_flags);
    struct stat s;
    int err;
    if (lstat(t->target, &s) != 0) {
        if (errno != ENOENT) return errno;
        if ((err = step())) return err;
        if (rename2(t->name, t->target, RENAME_NOREPLACE) == 0) {
            p->how = CREATED;
            return 0;
        }
        if (errno != EEXIST && !unsupported(errno)) return errno;
        if (errno != EEXIST) {
            /* link() does not replace either; then the name goes */
            if (link(t->name, t->target) == 0) {
                unlink(t->name);
                p->how = CREATED;
                return 0;
            }
            if (errno != EEXIST && rename(t->name, t->target) == 0) {
                p->how = CREATED;
                return 0;
            }
            if (errno != EEXIST) return errno;
        }
        if (lstat(t->target, &s) != 0) return errno; /* it came meanwhile: keep it as below */
    }
    if (S_ISDIR(s.st_mode)) return EISDIR;

    if (!(flags & SARBP_TEMPFILE_TEST_NO_EXCHANGE)) {
        if ((err = step())) return err;
        if (rename2(t->name, t->target, RENAME_EXCHANGE) == 0) {
            struct stat now;
            if (lstat(t->name, &now) == 0 && S_ISDIR(now.st_mode)) {
                /* a directory came to the target meanwhile: swap back */
                if (rename2(t->name, t->target, RENAME_EXCHANGE) != 0) {
                    atomic_store(&t->live, 0); /* the name holds the directory */
                    p->how = EXCHANGED;
                    p->kept = t->name;
                }
                return EISDIR;
            }
            p->how = EXCHANGED;
            return 0;
        }
        if (!unsupported(errno)) return errno;
    }
    int renamed;
    if ((err = set_aside(t->target, p, &renamed))) return err;
    if ((err = step()) == 0 && rename(t->name, t->target) == 0) {
        p->how = ASIDE;
        return 0;
    }
    if (!err) err = errno;
    if (!renamed) unlink(p->old); /* the target still holds the earlier file */
    else if (rename(p->old, t->target) != 0) p->kept = p->old;
    return err;
}

/* Takes a placed output back out: the earlier file (or none) at the target
 * again, t's file at no name. Where that fails, p->kept says where the
 * earlier file is. */
static void undo(sarbp_tempfile *t, struct placed *p)
{
    struct stat a, b;
    step();
    switch (p->how) {
    case CREATED:
        if (lstat(t->target, &a) == 0 && fstat(t->fd, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            unlink(t->target);
        break;
    case EXCHANGED:
        if (rename2(t->name, t->target, RENAME_EXCHANGE) == 0) {
            unlink(t->name);
            p->kept = NULL;
        } else {
            p->kept = t->name;
        }
        break;
    case ASIDE:
        p->kept = rename(p->old, t->target) == 0 ? NULL : p->old;
        break;
    case NOT_PLACED: break;
    }
    p->how = NOT_PLACED;
}

/* Every output in place: the earlier files' second names go. */
static void drop_earlier(sarbp_tempfile *t, const struct placed *p)
{
    if (p->how == EXCHANGED) {
        step();
        unlink(t->name);
    } else if (p->how == ASIDE) {
        step();
        unlink(p->old);
    }
}

sarbp_status sarbp_tempfile_commit_all(sarbp_tempfile *const *t, size_t n)
{
    if (test_hook) commit_step = 0;
    sarbp_status st = SARBP_OK;
    struct placed *p = calloc(n ? n : 1, sizeof *p);
    if (!p) st = sarbp_error(SARBP_ERR_NOMEM, "cannot write '%s': out of memory",
                             n && t[0] ? t[0]->target : "(output)");
    for (size_t i = 0; i < n && st == SARBP_OK; i++)
        if (t[i]) st = sync_one(t[i]);
    if (st != SARBP_OK) {
        for (size_t i = 0; i < n; i++) sarbp_tempfile_delete(t[i]);
        free(p);
        return st;
    }

    /* from the first rename to the end, no cleanup signal acts: it would
     * leave some outputs new and some old */
    sigset_t old;
    block_cleanup_signals(&old);
    atomic_fetch_add(&committing, 1);
    size_t k = 0;
    int err = 0;
    for (; k < n && !err; k++) {
        if (!t[k]) continue;
        err = place(t[k], &p[k]);
        if (!err) atomic_store(&t[k]->live, 0); /* its name is gone or holds the earlier file */
    }
    if (err) {
        const size_t failed = k - 1;
        char what[2 * TEMP_NAME_MAX + 80];
        snprintf(what, sizeof what, "%s (renaming '%s' over it)", strerror(err), t[failed]->name);
        for (size_t j = failed + 1; j-- > 0;)
            if (t[j]) undo(t[j], &p[j]);
        char kept[2 * TEMP_NAME_MAX + 80] = "";
        for (size_t j = 0; j < n && !kept[0]; j++)
            if (t[j] && p[j].kept)
                snprintf(kept, sizeof kept, "; the earlier '%s' is kept as '%s'", t[j]->target,
                         p[j].kept);
        st = sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s%s", t[failed]->target, what, kept);
        for (size_t j = 0; j < n; j++) sarbp_tempfile_delete(t[j]);
    } else {
        /* the new names on disk before the earlier files go: a crash in
         * between leaves an earlier file too many, never one too few */
        for (size_t i = 0; i < n; i++) {
            if (!t[i]) continue;
            int seen = 0;
            for (size_t j = 0; j < i && !seen; j++) seen = t[j] && same_dir(t[j]->target, t[i]->target);
            if (!seen) sync_dir(t[i]->target);
        }
        for (size_t i = 0; i < n; i++)
            if (t[i]) drop_earlier(t[i], &p[i]);
        for (size_t i = 0; i < n; i++)
            if (t[i]) node_release(t[i]);
    }
    step(); /* the end: a signal raised here acts once the mask is restored */
    int sig = 0;
    if (atomic_fetch_sub(&committing, 1) == 1) sig = atomic_exchange(&deferred_sig, 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (sig) raise(sig);
    free(p);
    return st;
}

sarbp_status sarbp_tempfile_commit(sarbp_tempfile *t)
{
    return sarbp_tempfile_commit_all(&t, 1);
}

/* ---- the public face (sarbp/output.h) ---------------------------------------- */

sarbp_status sarbp_output_file_open(const char *path, sarbp_output_file **out)
{
    return sarbp_tempfile_create(path, out);
}

int sarbp_output_file_fd(const sarbp_output_file *f)
{
    return sarbp_tempfile_fd(f);
}

sarbp_status sarbp_output_file_commit(sarbp_output_file *f)
{
    return sarbp_tempfile_commit(f);
}

void sarbp_output_file_discard(sarbp_output_file *f)
{
    sarbp_tempfile_delete(f);
}

void sarbp_output_on_signal(sarbp_output_signal_fn fn)
{
    pthread_once(&handlers_once, install_handlers);
    signal_hook_pid = getpid();
    atomic_store(&signal_hook, fn);
}
