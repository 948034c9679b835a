/* test_bad_inputs.c - every reproducer in ../shared/data/bad-inputs, and a
 * truncated real Gotcha file, must end the way bad input should: exit 1 (not
 * a signal), exactly one stderr line "sarbp: CMD: ..." naming the file, no
 * output and no temporary left in the output directory, in under 5 s and
 * 500 MB.
 *
 * The directory is enumerated at test time, so a new reproducer is covered
 * the day it is added. Each file is run through `form` and `info`, and
 * through `convert` too (the 1e12-sample file once made it write 11 GB).
 * Each run is a child of this program with RLIMIT_AS of 1 GiB (not under
 * AddressSanitizer, whose shadow memory needs terabytes of address space),
 * measured by wait4 (peak RSS of sarbp and its probe child). The log shows,
 * per file and command, the exit code, seconds and peak MB: the margin used.
 * Exit 77 (skipped) when the directory is absent. */
#include "test_util.h"
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SARBP_BAD_INPUTS_DIR
#define SARBP_BAD_INPUTS_DIR "../shared/data/bad-inputs"
#endif


enum { MAX_FILES = 256 };
static const double max_seconds = 5.0;
static const double max_mb = 500.0;
static const unsigned long long as_limit = 1ULL << 30; /* not under ASan */

/* The names left in dir, space-separated, into buf ("" when empty). */
static void leftovers(const char *dir, char *buf, size_t n)
{
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    size_t used = 0;
    while ((e = readdir(d)) != NULL && used < n) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " " : "", e->d_name);
    }
    closedir(d);
}

/* Runs one command on path and checks everything the issue asks of it.
 * bounded: the file may also be read (exit 0, see test_image_file). */
static void expect_outcome(const char *cmd, const char *path, int bounded)
{
    const char *dir = tu_fresh_dir("bad_inputs_out");
    char out[1024];
    const char *args[12] = {0};
    size_t n = 0;
    args[n++] = cmd;
    if (!strcmp(cmd, "form")) {
        snprintf(out, sizeof out, "%s/img.npy", dir);
        const char *a[] = {"--backend", "cpu", "--grid", "64x64", "-i", path, "-o", out};
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) args[n++] = a[i];
    } else if (!strcmp(cmd, "convert")) {
        snprintf(out, sizeof out, "%s/out.h5", dir);
        const char *a[] = {path, "-o", out};
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) args[n++] = a[i];
    } else {
        args[n++] = path;
    }
    args[n] = NULL;
    tu_limited_run r;
    tu_run_limited(args, as_limit, 60, &r); /* killed after 60 s (the bar is 5) */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    printf("  %-8s %-48s exit %-3d %6.2f s %7.1f MB%s\n", cmd, base, r.code, r.seconds,
           r.peak_mb, r.signal ? "  (signal)" : "");
    fflush(stdout);

    if (!r.exited) fail_msg("%s '%s' died on signal %d: %s", cmd, base, r.signal, r.err);
    if (bounded && r.code == 0) goto limits;
    if (r.code != 1) fail_msg("%s '%s' exited %d, not 1: %s", cmd, base, r.code, r.err);
    size_t len = strlen(r.err);
    const char *nl = strchr(r.err, '\n');
    if (len == 0 || !nl || nl != r.err + len - 1)
        fail_msg("%s '%s': stderr is not exactly one line: \"%s\"", cmd, base, r.err);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "sarbp: %s: ", cmd);
    if (strncmp(r.err, prefix, strlen(prefix)))
        fail_msg("%s '%s': stderr does not start with \"%s\": %s", cmd, base, prefix, r.err);
    char quoted[1100];
    snprintf(quoted, sizeof quoted, "'%s'", path);
    if (!strstr(r.err, quoted)) fail_msg("%s: the message does not name %s: %s", cmd, quoted, r.err);
    char left[1024];
    leftovers(dir, left, sizeof left);
    if (left[0]) fail_msg("%s '%s' left files behind: %s", cmd, base, left);
limits:
    if (r.seconds >= max_seconds)
        fail_msg("%s '%s' took %.2f s (bar %.0f s)", cmd, base, r.seconds, max_seconds);
    if (!tu_under_asan() && r.peak_mb >= max_mb)
        fail_msg("%s '%s' peaked at %.0f MB (bar %.0f MB)", cmd, base, r.peak_mb, max_mb);
}

static void expect_refused(const char *cmd, const char *path)
{
    expect_outcome(cmd, path, 0);
}

static void test_file(void **state)
{
    const char *path = *state;
    expect_refused("form", path);
    expect_refused("info", path);
    if (strstr(path, "1e12") || strstr(path, "convert")) expect_refused("convert", path);
}

/* Image files the fuzzer found (tests/fuzz/regressions/image_h5): read by
 * metrics and compare, whose HDF5 opens the probe guards. Files named
 * bounded_*: HDF5 reads uninitialised memory in their attribute tables
 * (valgrind: H5A__attr_release_table under H5Aiterate2), and then either
 * reads them or allocates gigabytes, differently from run to run; sarbp
 * reads such an image in the probe child, so the bars are exit 0 or 1 and
 * the time and memory limits (once: 0-4 GB and a 10 s hang in the parent). */
static void test_image_file(void **state)
{
    const char *path = *state;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    expect_outcome("metrics", path, !strncmp(base, "bounded_", 8));
}

/* The first 402232 bytes of a real Gotcha file (bad-inputs/README.md): once
 * formed with exit 0, af.r_correct holding phi's values. */
static int make_truncated_gotcha(char *path, size_t n)
{
    char src[1024];
    snprintf(src, sizeof src, "%s/data_3dsar_pass1_az001_HH.mat", tu_gotcha_dir());
    FILE *in = fopen(src, "rb");
    if (!in) return 0;
    snprintf(path, n, "%s", tu_tmp("truncated_gotcha_az001.mat"));
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    static char buf[402232];
    size_t got = fread(buf, 1, sizeof buf, in);
    fclose(in);
    assert_int_equal(got, sizeof buf);
    assert_int_equal(fwrite(buf, 1, got, out), got);
    assert_int_equal(fclose(out), 0);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the regular files of dir (but README.md and dot files) to
 * paths[n..max); returns the new count. */
static size_t add_files(const char *dir, char **paths, size_t n, size_t max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < max) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
        char p[1024];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        paths[n++] = strdup(p);
    }
    if (d) closedir(d);
    return n;
}

int main(void)
{
    DIR *d = opendir(SARBP_BAD_INPUTS_DIR);
    if (!d) {
        printf("skipped: no bad-inputs directory at %s\n", SARBP_BAD_INPUTS_DIR);
        return 77;
    }
    closedir(d);
    static char *paths[MAX_FILES + 1];
    size_t n = add_files(SARBP_BAD_INPUTS_DIR, paths, 0, MAX_FILES);
    /* phase-history files the fuzzer found: the same bars */
    n = add_files(SARBP_PHD_REGRESSIONS_DIR, paths, n, MAX_FILES);
    qsort(paths, n, sizeof paths[0], cmp_str);
    const size_t nphd = n;
    n = add_files(SARBP_IMAGE_REGRESSIONS_DIR, paths, n, MAX_FILES - 1);
    const size_t nimg = n - nphd;
    static char truncated[1024];
    if (make_truncated_gotcha(truncated, sizeof truncated)) paths[n++] = truncated;
    else printf("note: no Gotcha data at %s: the truncated real file is not tried\n",
                tu_gotcha_dir());
    if (n == 0) {
        printf("skipped: %s holds no files\n", SARBP_BAD_INPUTS_DIR);
        return 77;
    }
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    assert_non_null(tests);
    for (size_t i = 0; i < n; i++) {
        const char *slash = strrchr(paths[i], '/');
        tests[i].name = slash ? slash + 1 : paths[i];
        tests[i].test_func = i >= nphd && i < nphd + nimg ? test_image_file : test_file;
        tests[i].initial_state = paths[i];
    }
    printf("bars: exit 1, one message, nothing left, < %.0f s, < %.0f MB%s\n", max_seconds,
           max_mb,
           tu_under_asan() ? " (memory not limited or checked: AddressSanitizer)" : "");
    return _cmocka_run_group_tests("bad_inputs", tests, n, NULL, NULL);
}
