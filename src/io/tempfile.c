/* tempfile.c - temporary files that become outputs: exclusive creation
 * beside the output, fsync and rename, and removal on error and on the
 * usual terminating signals (see tempfile.h).
 *
 * The signal handler walks a list that other code changes, so the list is
 * built to be read at any moment: nodes are pushed at the head and never
 * freed (a finished node is reused by a later create), a node's name is a
 * fixed buffer written only while the node is not live, and "live" is an
 * atomic flag set after the exclusive open succeeded and cleared before the
 * name may change. The handler calls only getpid, unlink, sigaction and
 * raise. This module does not write file contents: the writers do. */
#include "io/tempfile.h"

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
#include <time.h>
#include <unistd.h>

#define TEMP_SUFFIX ".tmp-"
#define TEMP_RANDOM 6
#define TEMP_TRIES 100
#define TEMP_NAME_MAX 4096 /* PATH_MAX on Linux */
#define FILE_NAME_MAX 255  /* NAME_MAX on Linux */

struct sarbp_tempfile_s {
    atomic_int live;                /* the file at name is ours: remove it on a signal */
    pid_t owner;                    /* the process that created it */
    int in_use;                     /* taken by a caller (under list_lock) */
    int fd;
    char *target;                   /* the output path, malloc'd */
    struct sarbp_tempfile_s *next;  /* set once, before the node is published */
    char name[TEMP_NAME_MAX];
    char open_name[40];
};

static _Atomic(sarbp_tempfile *) list_head;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
#define NSIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])

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

/* name = "<dir>/<base>.tmp-" + TEMP_RANDOM random characters; the base is
 * shortened when the whole would exceed a file name's limit. */
static int make_name(char *name, size_t n, const char *path)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = (size_t)(base - path), baselen = strlen(base);
    const size_t room = FILE_NAME_MAX - (sizeof TEMP_SUFFIX - 1) - TEMP_RANDOM;
    if (baselen > room) baselen = room;
    unsigned char r[TEMP_RANDOM];
    random_bytes(r, sizeof r);
    char rnd[TEMP_RANDOM + 1];
    for (int i = 0; i < TEMP_RANDOM; i++) rnd[i] = chars[r[i] % (sizeof chars - 1)];
    rnd[TEMP_RANDOM] = '\0';
    int len = snprintf(name, n, "%.*s%.*s%s%s", (int)dirlen, path, (int)baselen, base,
                       TEMP_SUFFIX, rnd);
    return len > 0 && (size_t)len < n ? 0 : -1;
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

/* ---- the interface --------------------------------------------------------- */

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
    /* Between a successful open and "live", a signal would leave the file:
     * the cleanup signals wait until the list knows it. */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < NSIGNALS; i++) sigaddset(&block, cleanup_signals[i]);
    int err = EEXIST;
    for (int i = 0; i < TEMP_TRIES && err == EEXIST; i++) {
        if (make_name(t->name, sizeof t->name, path)) {
            err = ENAMETOOLONG;
            break;
        }
        pthread_sigmask(SIG_BLOCK, &block, &old);
        t->fd = open(t->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = t->fd < 0 ? errno : 0;
        if (t->fd >= 0) {
            t->owner = getpid();
            atomic_store(&t->live, 1);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (err) {
        node_release(t);
        return sarbp_error(SARBP_ERR_IO, "cannot create '%s': %s", path, strerror(err));
    }
    /* the descriptor's own name, when /proc is there and resolves to it */
    struct stat a, b;
    snprintf(t->open_name, sizeof t->open_name, "/proc/self/fd/%d", t->fd);
    if (stat(t->open_name, &a) != 0 || fstat(t->fd, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino)
        t->open_name[0] = '\0';
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

const char *sarbp_tempfile_open_name(const sarbp_tempfile *t)
{
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

/* The data on disk, and the name still ours (not removed or swapped for
 * another file since creation: the rename must move our file only). */
static sarbp_status sync_one(sarbp_tempfile *t)
{
    if (fsync(t->fd) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", t->target, strerror(errno));
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
    const char *slash = strrchr(path, '/');
    char dir[TEMP_NAME_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
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

sarbp_status sarbp_tempfile_commit_all(sarbp_tempfile *const *t, size_t n)
{
    sarbp_status st = SARBP_OK;
    for (size_t i = 0; i < n && st == SARBP_OK; i++)
        if (t[i]) st = sync_one(t[i]);
    size_t k = 0;
    for (; st == SARBP_OK && k < n; k++) {
        if (!t[k]) continue;
        if (rename(t[k]->name, t[k]->target) != 0) {
            st = sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s (renaming '%s' over it)",
                             t[k]->target, strerror(errno), t[k]->name);
            break;
        }
        atomic_store(&t[k]->live, 0);
    }
    if (st != SARBP_OK) {
        for (size_t j = 0; j < n; j++) {
            if (!t[j]) continue;
            if (j < k && !atomic_load(&t[j]->live)) unlink(t[j]->target); /* renamed already */
            sarbp_tempfile_delete(t[j]);
        }
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        if (!t[i]) continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = t[j] && same_dir(t[j]->target, t[i]->target);
        if (!seen) sync_dir(t[i]->target);
    }
    for (size_t i = 0; i < n; i++)
        if (t[i]) node_release(t[i]);
    return SARBP_OK;
}

sarbp_status sarbp_tempfile_commit(sarbp_tempfile *t)
{
    return sarbp_tempfile_commit_all(&t, 1);
}
