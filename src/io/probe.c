/* probe.c - a reader's metadata walk in a forked child, so that a crash or
 * hang inside HDF5 or matio costs an error message, not the process.
 *
 * fork only (no exec: the child runs the very code the parent will), the
 * child limited in address space, core dumps off, default signal handlers,
 * and ended with _exit so that nothing of the parent's (atexit handlers,
 * stdio buffers, temporary files) runs twice. The parent reads the child's
 * status and message from a pipe, waits at most the time limit, then kills
 * it with SIGKILL and reaps it. */
#define _GNU_SOURCE
#include "io/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROBE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(PROBE_ASAN)
#define PROBE_ASAN 1
#endif

static int probe_on = 1;

void sarbp_probe_enable(int on)
{
    probe_on = on != 0;
}

int sarbp_probe_enabled(void)
{
    const char *e = getenv("SARBP_NO_PROBE");
    return probe_on && !(e && *e && strcmp(e, "0"));
}

static double timeout_s(void)
{
    const char *e = getenv("SARBP_PROBE_TIMEOUT");
    if (e && *e) {
        char *end;
        double v = strtod(e, &end);
        if (!*end && v > 0 && v <= 3600) return v;
    }
    return SARBP_PROBE_TIMEOUT_S;
}

struct report {
    int32_t status;
    char detail[1024];
    uint64_t reply_len; /* bytes of reply that follow the report */
};

/* In the child only: the reply its walk handed over (probe_reply). */
static const void *child_reply;
static size_t child_reply_len;

void probe_reply(const void *data, size_t len)
{
    child_reply = data;
    child_reply_len = len;
}

#ifndef PROBE_ASAN /* ASan reserves terabytes of shadow: an address-space limit breaks it */
/* Address space the child already has (bytes), from /proc/self/statm. */
static unsigned long long vm_size(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}
#endif

/* fsize: the input's length; the child may add SARBP_PROBE_MEMORY plus
 * eight times that (metadata held as doubles, with copies), so that a
 * legitimately huge file is not refused for want of memory. */
static void limit_child(unsigned long long fsize)
{
    struct rlimit rl = {0, 0};
    setrlimit(RLIMIT_CORE, &rl);
#ifdef PROBE_ASAN
    (void)fsize;
#else
    unsigned long long vm = vm_size();
    if (vm > 0 && getrlimit(RLIMIT_AS, &rl) == 0) {
        unsigned long long add = SARBP_PROBE_MEMORY, extra;
        if (__builtin_mul_overflow(fsize, 8ULL, &extra) || __builtin_add_overflow(add, extra, &add))
            add = RLIM_INFINITY;
        rlim_t want = add == RLIM_INFINITY || vm + add < vm ? RLIM_INFINITY : (rlim_t)(vm + add);
        if (rl.rlim_cur == RLIM_INFINITY || want < rl.rlim_cur) {
            rl.rlim_cur = want;
            setrlimit(RLIMIT_AS, &rl);
        }
    }
#endif
    /* default dispositions: the parent's cleanup handlers must not run here,
     * and a crash must end the child by its signal even where a sanitizer
     * installed handlers for SIGSEGV and friends */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGSEGV, SIGBUS,
                               SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
    /* nothing the libraries might print reaches the user's terminal */
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
        close(devnull);
    }
}

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Reads n bytes into buf (NULL: reads and drops them) until EOF or the
 * deadline; the bytes read. */
static size_t read_exact(int fd, void *buf, size_t n, double deadline, int *timed_out)
{
    size_t got = 0;
    *timed_out = 0;
    while (got < n) {
        double left = deadline - now_s();
        if (left <= 0) {
            *timed_out = 1;
            return got;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int k = poll(&p, 1, (int)(left * 1000) + 1);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return got;
        if (k == 0) continue; /* the deadline check above ends it */
        char sink[4096];
        size_t want = n - got;
        if (!buf && want > sizeof sink) want = sizeof sink;
        ssize_t m = read(fd, buf ? (char *)buf + got : sink, want);
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) return got; /* EOF: the child exited or died */
        got += (size_t)m;
    }
    return got;
}

sarbp_status probe_run(const char *path, const char *lib,
                       sarbp_status (*walk)(const char *path, void *arg), void *arg)
{
    return probe_run_reply(path, lib, walk, arg, 0, NULL, NULL);
}

sarbp_status probe_run_reply(const char *path, const char *lib,
                             sarbp_status (*walk)(const char *path, void *arg), void *arg,
                             size_t max_reply, void **reply, size_t *reply_len)
{
    if (reply) *reply = NULL;
    if (reply_len) *reply_len = 0;
    if (!sarbp_probe_enabled()) return SARBP_OK;
    const double limit = timeout_s();
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0)
        return sarbp_error(SARBP_ERR_INTERNAL, "cannot probe '%s': pipe: %s", path,
                           strerror(errno));
    fflush(NULL); /* nothing buffered may be written twice (the child does not flush anyway) */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        return sarbp_error(SARBP_ERR_INTERNAL, "cannot probe '%s': fork: %s", path, strerror(e));
    }
    if (pid == 0) {
        close(fd[0]);
        struct stat sb;
        limit_child(stat(path, &sb) == 0 ? (unsigned long long)sb.st_size : 0);
        sarbp_error_clear();
        child_reply = NULL;
        child_reply_len = 0;
        struct report r = {0};
        r.status = (int32_t)walk(path, arg);
        if (r.status != SARBP_OK) snprintf(r.detail, sizeof r.detail, "%s", sarbp_error_detail());
        if (r.status == SARBP_OK && reply && child_reply) r.reply_len = child_reply_len;
        write_all(fd[1], &r, sizeof r);
        if (r.reply_len) write_all(fd[1], child_reply, child_reply_len);
        _exit(0);
    }
    close(fd[1]);
    struct report r;
    memset(&r, 0, sizeof r);
    const double deadline = now_s() + limit;
    int timed_out;
    size_t got = read_exact(fd[0], &r, sizeof r, deadline, &timed_out);
    void *buf = NULL;
    int reply_ok = 1;
    if (got == sizeof r && !timed_out && r.status == SARBP_OK && r.reply_len) {
        /* the child is sarbp's own code, but it ran on a hostile file:
         * its length is checked like any declared size */
        if (!reply || r.reply_len > max_reply || !(buf = malloc((size_t)r.reply_len)) ||
            read_exact(fd[0], buf, (size_t)r.reply_len, deadline, &timed_out) != r.reply_len)
            reply_ok = 0;
    }
    close(fd[0]);
    int ws = 0;
    if (timed_out) kill(pid, SIGKILL);
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (got == sizeof r && !timed_out && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        if (r.status == SARBP_OK && reply_ok) {
            if (reply) *reply = buf;
            if (reply_len) *reply_len = buf ? (size_t)r.reply_len : 0;
            return SARBP_OK;
        }
        free(buf);
        if (r.status == SARBP_OK)
            return sarbp_error(buf || r.reply_len > max_reply ? SARBP_ERR_FORMAT : SARBP_ERR_NOMEM,
                               "'%s': %s read it, but its %llu bytes did not come back", path,
                               lib, (unsigned long long)r.reply_len);
        r.detail[sizeof r.detail - 1] = '\0';
        return sarbp_error((sarbp_status)r.status, "%s", r.detail);
    }
    free(buf);
    if (timed_out)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': malformed file: %s did not finish reading "
                           "its metadata in %g s", path, lib, limit);
    if (WIFSIGNALED(ws))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': malformed file: %s crashed reading it "
                           "(signal %d, %s)", path, lib, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    return sarbp_error(SARBP_ERR_FORMAT, "'%s': malformed file: %s ended the reading process "
                       "(exit status %d)", path, lib, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}
