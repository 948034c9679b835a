/* test_input_refusals.c - inputs that are not regular files, and requests
 * that cannot be met, end the way bad input should: exit 1, one stderr
 * line naming the file or the option, nothing on stdout, no output and no
 * temporary left, in under 2 s and 500 MB.
 *
 *  - a named pipe with no writer as the input of info, form, convert,
 *    compare and metrics (it once blocked for ever in open()), whatever its
 *    name says (.cphd, .h5, .mat, .npy); a character device; a directory
 *    where an image is wanted; a named pipe inside an input directory is
 *    skipped like any non-regular file;
 *  - 'sarbp form --algorithm ffbp --max-error-db -150', a target no
 *    factorization reaches: an error naming the option and the best figure
 *    (it was a note, and the image was formed anyway); under
 *    '--algorithm auto' the same target forms by direct backprojection. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cphd_gen.h"
#include "scratch.h"
#include "sarbp/geo.h"

static char out[8192], err[8192];

static const double max_seconds = 2.0;
static const double max_mb = 500.0;
static const unsigned long long as_limit = 1ULL << 30; /* not under ASan */

/* Runs sarbp args (at most 12) under the limits; checks the refusal: exit
 * 1, one line "sarbp: CMD: ..." holding each of the want strings, in time
 * and memory; then, known not to hang, once more for its stdout. */
static void refused(const char *const *args, const char *want1, const char *want2)
{
    char line[2048] = "";
    for (size_t i = 0; args[i]; i++) {
        strcat(line, " '");
        strcat(line, args[i]);
        strcat(line, "'");
    }
    tu_limited_run r;
    tu_run_limited(args, as_limit, 20, &r);
    printf("sarbp%s: exit %d%s, %.3f s, %.1f MB: %s", line, r.exited ? r.code : -1,
           r.exited ? "" : " (signal)", r.seconds, r.peak_mb, r.err);
    assert_true(r.exited);
    assert_int_equal(r.code, 1);
    assert_true(r.seconds < max_seconds);
    if (!tu_under_asan()) assert_true(r.peak_mb < max_mb);
    assert_int_equal(tu_count_lines(r.err), 1);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "sarbp: %s: ", args[0]);
    assert_int_equal(strncmp(r.err, prefix, strlen(prefix)), 0);
    if (want1) assert_non_null(strstr(r.err, want1));
    if (want2) assert_non_null(strstr(r.err, want2));
    assert_int_equal(tu_run("%s", line), 1);
    assert_string_equal(out, "");
}

static void test_named_pipe(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("fifo");
    const char *names[] = {"x.cphd", "x.h5", "x.mat", "x.npy"};
    char fifo[4][600], o[600], o2[600];
    for (int i = 0; i < 4; i++) {
        snprintf(fifo[i], sizeof fifo[i], "%s/%s", dir, names[i]);
        assert_int_equal(mkfifo(fifo[i], 0644), 0);
    }
    snprintf(o, sizeof o, "%s/out.npy", dir);
    snprintf(o2, sizeof o2, "%s/out.h5", dir);
    for (int i = 0; i < 3; i++) {
        const char *info[] = {"info", fifo[i], NULL};
        refused(info, fifo[i], "named pipe");
        const char *form[] = {"form", "-i", fifo[i], "-o", o, NULL};
        refused(form, fifo[i], "named pipe");
        const char *conv[] = {"convert", "-o", o2, fifo[i], NULL};
        refused(conv, fifo[i], "named pipe");
    }
    const char *cmp[] = {"compare", fifo[3], fifo[3], NULL};
    refused(cmp, fifo[3], "named pipe");
    const char *met[] = {"metrics", fifo[3], NULL};
    refused(met, fifo[3], "named pipe");
    const char *img_h5[] = {"metrics", fifo[1], NULL};
    refused(img_h5, fifo[1], "named pipe");
    /* the pipes only: nothing written, no temporary */
    assert_int_equal(tu_count_entries(dir), 4);
    for (int i = 0; i < 4; i++) unlink(fifo[i]);
}

/* A directory of inputs skips a named pipe among them (only regular files
 * are inputs): with nothing else there, it holds no input. */
static void test_pipe_in_directory(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("fifo_dir");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/a.cphd", dir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *info[] = {"info", dir, NULL};
    refused(info, dir, "holds no");
    unlink(fifo);
}

static void test_device_and_directory(void **state)
{
    (void)state;
    if (access("/dev/zero", R_OK) == 0) {
        const char *info[] = {"info", "/dev/zero", NULL};
        refused(info, "'/dev/zero'", "character device");
        const char *cmp[] = {"compare", "/dev/zero", "/dev/zero", NULL};
        refused(cmp, "'/dev/zero'", "character device");
    }
    const char *dir = tu_fresh_dir("img_dir");
    const char *met[] = {"metrics", dir, NULL};
    refused(met, dir, "directory");
}

static void test_ffbp_target_unreachable(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("ffbp_target");
    char sim[600], img[600];
    snprintf(sim, sizeof sim, "%s/sim.cphd", dir);
    snprintf(img, sizeof img, "%s/img.npy", dir);
    /* the input by the tests' own CPHD writer: no sarbp writer involved */
    const sarbp_target t[] = {{3, 4, 0, 1}};
    sarbp_phd *p = tu_targets(t, 1, 128);
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, 34.043085, -118.267202, 35.0, 0));
    struct cphd_gen g = {.fmt = "CF8"};
    tu_write_cphd(sim, p, &r, &g);
    sarbp_phd_free(p);
    const char *form[] = {"form", "-i", sim, "-o", img, "--backend", "cpu", "--algorithm", "ffbp",
                          "--grid", "64x48", "--max-error-db", "-150", NULL};
    refused(form, "--max-error-db -150", "predicts");
    assert_int_equal(tu_count_entries(dir), 1); /* sim.cphd alone */
    /* auto: direct backprojection, which has no such error */
    assert_int_equal(tu_run("form -v -i '%s' -o '%s' --backend cpu --algorithm auto --grid 64x48 "
                            "--max-error-db -150", sim, img), 0);
    printf("%s", err);
    assert_non_null(strstr(err, "direct backprojection"));
    assert_true(tu_exists(img));
    /* a target it reaches is still formed by ffbp */
    assert_int_equal(tu_run("form -v -i '%s' -o '%s' --backend cpu --algorithm ffbp --grid 64x48 "
                            "--max-error-db -50", sim, img), 0);
    assert_non_null(strstr(err, "predicted error"));
    remove(img);
    remove(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_pipe),
        cmocka_unit_test(test_pipe_in_directory),
        cmocka_unit_test(test_device_and_directory),
        cmocka_unit_test(test_ffbp_target_unreachable),
    };
    return tu_run_tests(tests);
}
