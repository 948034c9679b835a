/* test_progress.c - progress of `sarbp form` when stderr is not a terminal
 * (issue 25, item 4).
 *
 * With stderr to a file, sarbp prints a plain line "sarbp: form: 45% (212
 * of 469 pulses), 1.20 Gbp/s, about 40 s left" every 20 s, the first one
 * 20 s after the start; SARBP_PROGRESS_INTERVAL sets the interval, which
 * these tests shorten so that a run of a few seconds shows lines:
 *  - lines appear in the file while the run is still going (not at exit),
 *    with increasing percentages below 100, the pulse counts, a rate and
 *    the time left, and nothing of a terminal's carriage returns;
 *  - -q silences them; the default interval prints none on a short run;
 *    a bad SARBP_PROGRESS_INTERVAL is ignored (the default);
 *  - Gotcha (skipped when the data are missing): the pass, 469 pulses, in
 *    lines of 469 pulses.
 * The run is sized from a measured one so that it lasts a few seconds on
 * this machine, whatever its speed. */
#include "test_util.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"

static char sim[512];

static int make_sim(void **state)
{
    (void)state;
    return tu_make_sim(sim, sizeof sim, "progress_sim.h5",
                       "--pulses 1024 --samples 128 --targets 5,20");
}

static int remove_sim(void **state)
{
    (void)state;
    remove(sim);
    return 0;
}

/* Runs sarbp with argv (NULL-terminated) and the given SARBP_PROGRESS_INTERVAL
 * (NULL: unset), stderr to errpath. Returns when it ends, its exit code;
 * *during: how many bytes errpath held at the last look before the child
 * ended (looking every 20 ms), i.e. what it printed while still running;
 * *secs: the wall time of the run. */
static int run_logged(const char *const *argv, const char *interval, const char *errpath,
                      long *during, double *secs)
{
    const double t0 = sarbp_now_s();
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int nul = open("/dev/null", O_RDWR);
        if (fd < 0 || nul < 0) _exit(126);
        dup2(nul, STDIN_FILENO);
        dup2(nul, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (interval) setenv("SARBP_PROGRESS_INTERVAL", interval, 1);
        else unsetenv("SARBP_PROGRESS_INTERVAL");
        execv(SARBP_EXE, (char *const *)argv);
        _exit(127);
    }
    *during = 0;
    int status = 0;
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        assert_true(r == 0);
        FILE *f = fopen(errpath, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            *during = ftell(f);
            fclose(f);
        }
        usleep(20000);
    }
    *secs = sarbp_now_s() - t0;
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Checks every progress line of text and returns how many there are. */
static int check_lines(const char *text, size_t total_pulses)
{
    int n = 0, last_pct = -1;
    assert_null(strchr(text, '\r')); /* no terminal line in a log */
    for (const char *p = text; (p = strstr(p, "sarbp: form: ")) != NULL; p++) {
        int pct;
        size_t done, total;
        double rate;
        char unit[8], tail[64];
        if (sscanf(p, "sarbp: form: %d%% (%zu of %zu pulses), %lf %7s %63[^\n]", &pct, &done,
                   &total, &rate, unit, tail) != 6)
            continue; /* another message */
        n++;
        assert_true(pct >= 0 && pct < 100);
        assert_true(pct >= last_pct);
        last_pct = pct;
        assert_true(done <= total);
        assert_int_equal(pct, (int)(100.0 * (double)done / (double)total));
        if (total_pulses) assert_int_equal(total, total_pulses);
        assert_true(rate >= 0);
        assert_true(!strcmp(unit, "Mbp/s,") || !strcmp(unit, "Gbp/s,"));
        assert_true((!strncmp(tail, "about ", 6) && strstr(tail, " left")) ||
                    !strcmp(tail, "under 1 s left") || !strcmp(tail, "time left unknown"));
    }
    return n;
}

static void test_log_lines(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("progress");
    char errpath[512], img[512];
    snprintf(errpath, sizeof errpath, "%s", tu_in_dir(dir, "form.err"));
    snprintf(img, sizeof img, "%s", tu_in_dir(dir, "img.npy"));
    /* one thread on the cpu, sized from a measured run to last ~4 s (the
     * measured one includes the start: the sized one lasts less) */
    long during;
    double secs;
    /* the grid within the simulation's alias-free scene (+-15 m): no warning */
    const char *probe[] = {SARBP_EXE, "form", "--backend", "cpu", "--threads", "1", "-i", sim,
                           "-o", img, "--grid", "128x128", "--spacing", "0.2", NULL};
    assert_int_equal(run_logged(probe, NULL, errpath, &during, &secs), 0);
    double side = 128 * sqrt(6.0 / (secs > 0.01 ? secs : 0.01));
    char grid[32], spacing[32];
    const char *argv[] = {SARBP_EXE, "form", "--backend", "cpu", "--threads", "1", "-i", sim,
                          "-o", img, "--grid", grid, "--spacing", spacing, NULL};
    /* a larger grid until the run lasts 1.5 s or more */
    for (int attempt = 0; attempt < 4; attempt++, side *= 1.6) {
        if (side > 4096) side = 4096;
        if (side < 128) side = 128;
        snprintf(grid, sizeof grid, "%dx%d", (int)side, (int)side);
        snprintf(spacing, sizeof spacing, "%.6f", 25.6 / (int)side);
        assert_int_equal(run_logged(argv, "0.25", errpath, &during, &secs), 0);
        if (secs >= 1.5) break;
    }
    size_t len;
    char *text = tu_slurp(errpath, &len);
    const int n = check_lines(text, 0);
    print_message("grid %s on one thread: %.2f s, %d progress lines (interval 0.25 s), %ld bytes "
                  "printed while running\n%s", grid, secs, n, during, text);
    assert_true(secs >= 1.5);
    assert_true(n >= 2);
    assert_true(during > 0); /* written while the run was going, not at its end */
    /* at most one line an interval (plus one for scheduling slack) */
    assert_true(n <= (int)(secs / 0.25) + 1);
    free(text);

    /* -q: none */
    const char *quiet[] = {SARBP_EXE, "form", "-q", "--backend", "cpu", "--threads", "1", "-i",
                           sim, "-o", img, "--grid", grid, "--spacing", spacing, NULL};
    assert_int_equal(run_logged(quiet, "0.25", errpath, &during, &secs), 0);
    text = tu_slurp(errpath, &len);
    assert_int_equal(check_lines(text, 0), 0);
    assert_null(strstr(text, "% ("));
    free(text);

    /* the default interval (20 s) and a bad value (the default): a run of a
     * few seconds prints no progress */
    const char *intervals[] = {NULL, "abc", "0", "-1", "1e9"};
    for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        assert_int_equal(run_logged(probe, intervals[i], errpath, &during, &secs), 0);
        text = tu_slurp(errpath, &len);
        if (secs < 19) assert_int_equal(check_lines(text, 0), 0);
        free(text);
    }
}

static void test_gotcha_lines(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data at %s", tu_gotcha_dir());
    const char *dir = tu_fresh_dir("progress_gotcha");
    char errpath[512], img[512];
    snprintf(errpath, sizeof errpath, "%s", tu_in_dir(dir, "form.err"));
    snprintf(img, sizeof img, "%s", tu_in_dir(dir, "g.npy"));
    const char *argv[] = {SARBP_EXE, "form", "--backend", "cpu", "--threads", "1", "-i",
                          tu_gotcha_dir(), "-o", img, "--grid", "600x600", NULL};
    long during;
    double secs;
    assert_int_equal(run_logged(argv, "0.2", errpath, &during, &secs), 0);
    size_t len;
    char *text = tu_slurp(errpath, &len);
    const int n = check_lines(text, 469);
    print_message("Gotcha 600x600 on one thread: %.2f s, %d progress lines\n%s", secs, n, text);
    if (secs >= 1) assert_true(n >= 1);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_gotcha_lines),
    };
    return tu_run_group("progress", tests, sizeof tests / sizeof tests[0], make_sim, remove_sim);
}
