/* test_slow_batch.c - scripts/batch-form.sh over the four Gotcha files with
 * 1-degree windows: four PNG and four .h5 images and a four-row summary; and
 * a window that fails (an injected failure) is reported without stopping
 * the others, and makes the exit status 1. With --outputs, every window
 * writes each format asked (SICD and KMZ with the scene reference and pulse
 * times given in --form-args, each SICD starting at its own first pulse); -o
 * in --form-args is refused before anything is made; an input that cannot
 * be read beside the Gotcha folder is a row of the summary and makes the
 * exit status 1. Skipped without the Gotcha data. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORM_ARGS "--grid 512x512 --spacing 0.2"

static char log_text[65536];

/* Runs the batch script; returns its exit status (-1 on a signal). Its
 * stdout and stderr go to OUTDIR.log, read back into log_text. */
static int run_batch(const char *outdir, const char *sarbp)
{
    char cmd[4096], logp[1024];
    snprintf(logp, sizeof logp, "%s.log", outdir);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && bash '%s/batch-form.sh' -j 2 --window-deg 1 --sarbp '%s' "
             "--form-args '" FORM_ARGS "' -o '%s' '%s' >'%s' 2>&1",
             outdir, SARBP_SCRIPTS_DIR, sarbp, outdir, tu_gotcha_dir(), logp);
    int rc = system(cmd);
    log_text[0] = '\0';
    FILE *f = fopen(logp, "r");
    if (f) {
        size_t n = fread(log_text, 1, sizeof log_text - 1, f);
        log_text[n] = '\0';
        fclose(f);
    }
    print_message("%s", log_text);
    if (rc == -1 || !WIFEXITED(rc)) return -1;
    return WEXITSTATUS(rc);
}

static int count_lines(const char *path, const char *containing)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (!containing || strstr(line, containing)) n++;
    fclose(f);
    return n;
}

static void check_window_files(const char *outdir, int win, int expect)
{
    static const char *const exts[] = {"png", "h5"};
    for (int e = 0; e < 2; e++) {
        char p[1200];
        snprintf(p, sizeof p, "%.1024s/win_%03d.%s", outdir, win, exts[e]);
        struct stat st;
        int there = stat(p, &st) == 0 && st.st_size > 0;
        if (there != expect) fail_msg("'%s' %s", p, expect ? "is missing or empty" : "should not exist");
    }
}

static void test_four_windows(void **state)
{
    (void)state;
    char outdir[1024], p[1100];
    snprintf(outdir, sizeof outdir, "%s/batch_gotcha", SARBP_TEST_TMP);
    int rc = run_batch(outdir, SARBP_EXE);
    assert_int_equal(rc, 0);
    for (int w = 0; w < 4; w++) check_window_files(outdir, w, 1);
    check_window_files(outdir, 4, 0);

    snprintf(p, sizeof p, "%s/summary.csv", outdir);
    assert_int_equal(count_lines(p, NULL), 5); /* header + 4 windows */
    assert_int_equal(count_lines(p, ",ok"), 4);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char header[1024];
    assert_non_null(fgets(header, sizeof header, f));
    fclose(f);
    static const char *const cols[] = {"input", "az_start_deg", "az_end_deg", "pulses", "nx", "ny",
                                       "backend", "seconds", "mbps", "entropy", "peak", "status"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (!strstr(header, cols[i])) fail_msg("summary.csv has no column '%s': %s", cols[i], header);

    snprintf(p, sizeof p, "%s/summary.json", outdir);
    assert_int_equal(count_lines(p, "\"status\": \"ok\""), 4);
    assert_int_equal(count_lines(p, "\"pulses\": 11"), 4); /* 117 or 118 pulses per degree */
    assert_int_equal(count_lines(p, "\"nx\": 512, \"ny\": 512"), 4);
}

/* A wrapper sarbp that fails for the second window only. */
static void test_failed_window_does_not_stop_others(void **state)
{
    (void)state;
    char outdir[1024], wrapper[1024], p[1100];
    snprintf(outdir, sizeof outdir, "%s/batch_gotcha_fail", SARBP_TEST_TMP);
    snprintf(wrapper, sizeof wrapper, "%s/sarbp_fail_win_001.sh", SARBP_TEST_TMP);
    FILE *f = fopen(wrapper, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "case \"$*\" in *win_001.h5*) echo 'sarbp: form: injected failure' >&2; exit 1 ;; esac\n"
            "exec '%s' \"$@\"\n",
            SARBP_EXE);
    fclose(f);
    assert_int_equal(chmod(wrapper, 0755), 0);

    int rc = run_batch(outdir, wrapper);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(log_text, "win_001"));
    assert_non_null(strstr(log_text, "injected failure"));
    check_window_files(outdir, 0, 1);
    check_window_files(outdir, 1, 0);
    check_window_files(outdir, 2, 1);
    check_window_files(outdir, 3, 1);
    snprintf(p, sizeof p, "%s/summary.csv", outdir);
    assert_int_equal(count_lines(p, NULL), 5);
    assert_int_equal(count_lines(p, ",ok"), 3);
    assert_int_equal(count_lines(p, ",failed"), 1);
    remove(wrapper);
}

/* 'sarbp batch' itself, its stderr into err[] */
static char out[8192], err[8192];

static int count_text(const char *path, const char *needle)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "grep -ao '%s' '%s' | wc -l", needle, path);
    if (tu_sh(out, sizeof out, "%s", cmd) != 0) return -1;
    return atoi(out);
}

static void test_outputs_and_refusals(void **state)
{
    (void)state;
    char outdir[1024], p[1200];
    snprintf(outdir, sizeof outdir, "%s/batch_gotcha_outputs", SARBP_TEST_TMP);
    snprintf(p, sizeof p, "rm -rf '%s'", outdir);
    assert_int_equal(system(p), 0);
    /* -o inside --form-args: refused before anything, one line */
    int rc = tu_run("batch -j 2 --form-args '" FORM_ARGS " -o x.npy' -o '%s' '%s'", outdir,
                    tu_gotcha_dir());
    print_message("exit %d: %s", rc, err);
    assert_int_equal(rc, 2);
    assert_int_equal(tu_count_prefix_lines(err, "sarbp:"), 1);
    assert_non_null(strstr(err, "same file"));
    assert_int_equal(access(outdir, F_OK), -1);
    /* a geolocated format without a scene reference (Gotcha has none) */
    rc = tu_run("batch -j 2 --outputs kmz --form-args '" FORM_ARGS "' -o '%s' '%s'", outdir,
                tu_gotcha_dir());
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err, "--scene-ref"));
    assert_int_equal(access(outdir, F_OK), -1);

    /* every format, and an input that cannot be read beside the folder */
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/batch_gotcha_missing.mat", SARBP_TEST_TMP);
    remove(missing);
    rc = tu_run("batch -j 2 --window-deg 1 --outputs png,h5,npy,nitf,kmz --form-args '--grid "
                "128x128 --spacing 0.1 --scene-ref 39.78,-84.08,240 --prf 2000 --collect-start "
                "2008-06-01T12:00:00Z' -o '%s' '%s' '%s'", outdir, tu_gotcha_dir(), missing);
    print_message("exit %d: %s", rc, err);
    assert_int_equal(rc, 1);
    static const char *const exts[] = {"png", "h5", "npy", "nitf", "kmz"};
    for (int w = 0; w < 4; w++)
        for (int e = 0; e < 5; e++) {
            snprintf(p, sizeof p, "%s/win_%03d.%s", outdir, w, exts[e]);
            struct stat st;
            if (stat(p, &st) || st.st_size == 0) fail_msg("'%s' is missing or empty", p);
        }
    snprintf(p, sizeof p, "%s/summary.csv", outdir);
    assert_int_equal(count_lines(p, NULL), 6); /* header, 4 windows, the missing input */
    assert_int_equal(count_lines(p, ",ok,"), 4);
    assert_int_equal(count_lines(p, "batch_gotcha_missing.mat"), 1);
    assert_int_equal(count_lines(p, "No such file or directory"), 1);
    snprintf(p, sizeof p, "%s/summary.json", outdir);
    assert_int_equal(count_lines(p, "\"status\": \"failed\""), 1);
    assert_int_equal(count_lines(p, "\"nitf\": \""), 4);
    /* four SICDs, four collection starts: the first at the given time */
    char starts[4][64];
    for (int w = 0; w < 4; w++) {
        snprintf(p, sizeof p, "%s/win_%03d.nitf", outdir, w);
        assert_int_equal(count_text(p, "<CollectStart>"), 1);
        assert_int_equal(tu_sh(out, sizeof out, "grep -ao '<CollectStart>[^<]*' '%s'", p), 0);
        snprintf(starts[w], sizeof starts[w], "%.63s", out);
        print_message("win_%03d: %s", w, starts[w]);
        for (int v = 0; v < w; v++) assert_string_not_equal(starts[v], starts[w]);
    }
    assert_non_null(strstr(starts[0], "2008-06-01T12:00:00Z"));
}

int main(void)
{
    if (!tu_have_gotcha()) {
        printf("skipped: no Gotcha data in '%s'\n", tu_gotcha_dir());
        return 77; /* CTest's SKIP_RETURN_CODE */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_windows),
        cmocka_unit_test(test_failed_window_does_not_stop_others),
        cmocka_unit_test(test_outputs_and_refusals),
    };
    return tu_run_tests(tests);
}
