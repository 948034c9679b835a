/* test_batch_hostile.c - 'sarbp batch' against a hostile output folder, a
 * slip of the finger and a signal:
 *  - symbolic links planted at the names batch writes (the logs, the
 *    summaries, their old fixed temporary names) are never followed: their
 *    targets keep their bytes, and each output is a file of its own;
 *  - --step-deg / --window-deg too fine, or windows past the stated cap, are
 *    usage errors (exit 2, one line naming the option) before anything is
 *    allocated or created, within 2 s and 500 MB;
 *  - a terminating signal to the batch process alone ends its 'sarbp form'
 *    children and leaves no temporary; SIGKILL to it still ends them
 *    (PR_SET_PDEATHSIG).
 * The children here are a wrapper that records its pid and sleeps, so the
 * test needs no long form. */
#include "test_util.h"
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INPUT SARBP_DATA_DIR "/point_targets.h5" /* 256 pulses over 4 degrees */

static char out[4096], err[8192];

static void test_planted_symlinks(void **state)
{
    (void)state;
    char dir[1024], o[1100], p[2400], v[4][1300];
    snprintf(dir, sizeof dir, "%s/batch_planted", SARBP_TEST_TMP);
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(p, sizeof p, "rm -rf '%s' && mkdir -p '%s'", dir, o);
    assert_int_equal(system(p), 0);
    /* the old fixed temporaries, the log and both summaries, each a link to
     * a victim */
    static const char *const names[] = {"summary.csv.tmp", "win_000.log", "summary.csv", "summary.json"};
    for (int i = 0; i < 4; i++) {
        snprintf(v[i], sizeof v[i], "%s/victim%d", dir, i);
        tu_write_text(v[i], "victim\n");
        snprintf(p, sizeof p, "%s/%s", o, names[i]);
        assert_int_equal(symlink(v[i], p), 0);
    }
    int rc = tu_run("batch -q -j 1 --window-deg 360 --form-args '--backend cpu --grid 32x32 "
                    "--spacing 0.25' -o '%s' '%s'", o, INPUT);
    print_message("exit %d\n%s", rc, err);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 4; i++) tu_assert_text(v[i], "victim\n");
    /* the outputs are files of their own; the planted temporary is not ours
     * and stays as it was */
    static const char *const outputs[] = {"win_000.log", "summary.csv", "summary.json", "win_000.h5",
                                          "win_000.png"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", o, outputs[i]);
        tu_assert_regular(p);
    }
    char target[1300];
    snprintf(p, sizeof p, "%s/summary.csv.tmp", o);
    ssize_t n = readlink(p, target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = 0;
    assert_string_equal(target, v[0]);
    tu_no_temporaries(o);
    /* the log is the form's */
    snprintf(p, sizeof p, "%s/win_000.log", o);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[4096];
    int sizes = 0;
    while (fgets(line, sizeof line, f)) sizes += strstr(line, " pulses x ") != NULL;
    fclose(f);
    assert_int_equal(sizes, 1);
}

/* A usage error: exit 2, one sarbp line naming opt, no folder, fast and small. */
static void refused(const char *outdir, const char *opt, const char *also, const char *const *args)
{
    tu_limited_run r;
    tu_run_limited(args, 500ull << 20, 10, &r);
    print_message("exit %d, %.2f s, %.0f MB: %s", r.code, r.seconds, r.peak_mb, r.err);
    assert_true(r.exited);
    assert_int_equal(r.code, 2);
    assert_int_equal(tu_count_prefix_lines(r.err, "sarbp:"), 1);
    if (!strstr(r.err, opt)) fail_msg("the message does not name %s: %s", opt, r.err);
    if (also && !strstr(r.err, also)) fail_msg("no '%s' in: %s", also, r.err);
    assert_true(r.seconds < 2);
    if (!tu_under_asan()) assert_true(r.peak_mb < 500);
    assert_int_equal(access(outdir, F_OK), -1);
}

static void test_step_limits(void **state)
{
    (void)state;
    char o[1024];
    snprintf(o, sizeof o, "%s/batch_tiny_step", SARBP_TEST_TMP);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", o);
    assert_int_equal(system(cmd), 0);
    /* the reproducer: a step that never moves the window */
    const char *a1[] = {"batch", "-j", "1", "--window-deg", "0.05", "--step-deg", "1e-300", "-o", o,
                        INPUT, NULL};
    refused(o, "--step-deg", NULL, a1);
    const char *a2[] = {"batch", "--window-deg", "1e-300", "-o", o, INPUT, NULL};
    refused(o, "--window-deg", NULL, a2);
    /* finer than the pulses (4 degrees / 255): windows would repeat them */
    const char *a3[] = {"batch", "--window-deg", "0.05", "--step-deg", "1e-5", "-o", o, INPUT, NULL};
    refused(o, "--step-deg", "between the pulses", a3);
    /* the default step is the window */
    const char *a4[] = {"batch", "--window-deg", "0.001", "-o", o, INPUT, NULL};
    refused(o, "--step-deg", "--window-deg", a4);
    /* not finer than the pulses but past the cap: 4 degrees of 20,000 pulses
     * in steps of 0.0003 degree are 13,334 windows */
    char many[1024];
    snprintf(many, sizeof many, "%s/batch_many_pulses.h5", SARBP_TEST_TMP);
    int rc = tu_run("simulate -o '%s' --pulses 20000 --samples 8", many);
    if (rc) fail_msg("simulate: exit %d: %s", rc, err);
    const char *a5[] = {"batch", "--window-deg", "0.001", "--step-deg", "0.0003", "-o", o, many, NULL};
    refused(o, "--step-deg", "more than 10000", a5);
    /* the cap counts over all inputs */
    const char *a6[] = {"batch", "--window-deg", "0.001", "--step-deg", "0.0006", "-o", o, many, many,
                        NULL};
    refused(o, "--step-deg", "in all", a6);
    remove(many);
}

/* The wrapper batch runs as 'sarbp': records its pid, then sleeps in its
 * place (exec keeps the pid and the parent-death signal). */
static void write_wrapper(const char *path, const char *piddir)
{
    char text[2048];
    snprintf(text, sizeof text, "#!/bin/sh\necho $$ > '%s/'$$\nexec sleep 60\n", piddir);
    tu_write_text(path, text);
    assert_int_equal(chmod(path, 0755), 0);
}

/* The children's pids, once n have written them (10 s at most). */
static int child_pids(const char *piddir, int n, pid_t *pids)
{
    for (int t = 0; t < 1000; t++) {
        int k = 0;
        DIR *d = opendir(piddir);
        struct dirent *e;
        while (d && (e = readdir(d)) && k < n)
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') pids[k++] = (pid_t)atol(e->d_name);
        if (d) closedir(d);
        if (k == n) return k;
        const struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Gone: no such process, or a zombie nobody has reaped yet. */
static int gone(pid_t pid)
{
    if (kill(pid, 0) && errno == ESRCH) return 1;
    char p[64], buf[512] = "";
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f) return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    const char *s = strrchr(buf, ')');
    return s && s[1] == ' ' && (s[2] == 'Z' || s[2] == 'X');
}

static void signal_batch(int sig)
{
    char dir[1024], o[1100], piddir[1100], wrapper[1100], cmd[2400];
    snprintf(dir, sizeof dir, "%s/batch_signal_%d", SARBP_TEST_TMP, sig);
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(piddir, sizeof piddir, "%s/pids", dir);
    snprintf(wrapper, sizeof wrapper, "%s/sleeper.sh", dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, piddir);
    assert_int_equal(system(cmd), 0);
    write_wrapper(wrapper, piddir);
    pid_t batch = fork();
    assert_true(batch >= 0);
    if (batch == 0) {
        /* as from a shell in the foreground: every signal at its default */
        for (int s = 1; s < 32; s++)
            if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, STDOUT_FILENO);
            dup2(nul, STDERR_FILENO);
        }
        execl(SARBP_EXE, SARBP_EXE, "batch", "-j", "2", "--window-deg", "1", "--sarbp", wrapper,
              "-o", o, INPUT, (char *)NULL);
        _exit(127);
    }
    pid_t kids[2];
    assert_int_equal(child_pids(piddir, 2, kids), 2);
    assert_int_equal(kill(batch, sig), 0);
    int st = 0;
    assert_int_equal(waitpid(batch, &st, 0), batch);
    print_message("signal %d: batch %s %d\n", sig, WIFSIGNALED(st) ? "killed by signal" : "exited",
                  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == sig);
    for (int k = 0; k < 2; k++) {
        int t = 0;
        while (!gone(kids[k]) && t++ < 200) {
            const struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!gone(kids[k])) {
            kill(kids[k], SIGKILL);
            fail_msg("signal %d: child %d still runs", sig, (int)kids[k]);
        }
    }
    if (sig != SIGKILL) tu_no_temporaries(o); /* SIGKILL leaves ours: nothing can catch it */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_signal_ends_children(void **state)
{
    (void)state;
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXFSZ, SIGXCPU,
                               SIGALRM, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal_batch(sigs[i]);
}

static void test_sigkill_ends_children(void **state)
{
    (void)state;
#ifndef __linux__
    tu_skip("PR_SET_PDEATHSIG is Linux's");
#else
    signal_batch(SIGKILL);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_symlinks),
        cmocka_unit_test(test_step_limits),
        cmocka_unit_test(test_signal_ends_children),
        cmocka_unit_test(test_sigkill_ends_children),
    };
    return tu_run_tests(tests);
}
