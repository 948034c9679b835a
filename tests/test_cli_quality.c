/* test_cli_quality.c - 'sarbp compare' and 'sarbp metrics': exit codes,
 * messages, thresholds, JSON and the plot. */
#include "test_util.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static char out[65536], err[8192];

static double sinc(double x) { return fabs(x) < 1e-12 ? 1.0 : sin(M_PI * x) / (M_PI * x); }

static uint64_t rng_state = 88172645463325252ull;
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* 128 x 96 image, 0.5 m pixels: a sinc point target (1 m resolution) at
 * (0.3, -0.2) m plus weak clutter so that every pixel is nonzero. */
static sarbp_image *scene(size_t nx, size_t ny)
{
    sarbp_grid g = {.nx = nx, .ny = ny, .dx = 0.5, .dy = 0.5, .xc = 0, .yc = 0, .zc = 0};
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_alloc(&g, &img));
    rng_state = 88172645463325252ull;
    for (size_t iy = 0; iy < ny; iy++)
        for (size_t ix = 0; ix < nx; ix++) {
            double x = sarbp_grid_x(&g, ix) - 0.3, y = sarbp_grid_y(&g, iy) + 0.2;
            double a = 100 * sinc(x) * sinc(y);
            img->data[iy * nx + ix] =
                (sarbp_c32){(float)(a + 0.01 * (urand() - 0.5)), (float)(0.01 * (urand() - 0.5))};
        }
    return img;
}

static const char *write_scene(const char *name, const sarbp_image *img)
{
    const char *p = tu_tmp(name);
    tu_ok(sarbp_image_write(p, img, 60));
    return p;
}

#define run tu_run /* printf-style, fails on a crash */

/* Value of "key": in a JSON text (number or "inf" string). */
static double json_get(const char *json, const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(json, k);
    if (!p) fail_msg("no %s in %s", key, json);
    p += strlen(k);
    if (!strncmp(p, "\"inf\"", 5)) return INFINITY;
    if (!strncmp(p, "\"-inf\"", 6)) return -INFINITY;
    if (!strncmp(p, "null", 4)) return NAN;
    return strtod(p, NULL);
}

static void test_compare_identical(void **state)
{
    (void)state;
    sarbp_image *img = scene(128, 96);
    const char *a = write_scene("cq_a.h5", img);
    const char *b = write_scene("cq_b.h5", img);
    assert_int_equal(run("compare '%s' '%s' --min-ser 200 --min-window-ser 200", a, b), 0);
    assert_non_null(strstr(out, "SER"));
    assert_non_null(strstr(out, "inf dB"));
    assert_int_equal(err[0], '\0');

    assert_int_equal(run("compare --json '%s' '%s'", a, b), 0);
    assert_int_equal(out[0], '{');
    assert_true(isinf(json_get(out, "ser_db")));
    assert_true(isinf(json_get(out, "window_ser_db")));
    assert_true(fabs(json_get(out, "ssim") - 1) < 1e-9);
    assert_non_null(strstr(out, "\"pass\": true"));

    /* .npy (no grid coordinates) against .h5: sizes only */
    const char *n = write_scene("cq_a.npy", img);
    assert_int_equal(run("compare '%s' '%s'", n, a), 0);
    sarbp_image_free(img);
}

static void test_compare_thresholds(void **state)
{
    (void)state;
    sarbp_image *ref = scene(128, 96);
    sarbp_image *t = scene(128, 96);
    /* complex noise 40 dB below the reference energy per pixel on average */
    double s = 0;
    for (size_t i = 0; i < 128 * 96; i++)
        s += (double)ref->data[i].re * ref->data[i].re + (double)ref->data[i].im * ref->data[i].im;
    const double sigma = sqrt(s / (128 * 96) * 1e-4 / 2) * sqrt(3.0) * 2; /* uniform: var = a^2/3 */
    for (size_t i = 0; i < 128 * 96; i++) {
        t->data[i].re += (float)(sigma * (urand() - 0.5));
        t->data[i].im += (float)(sigma * (urand() - 0.5));
    }
    const char *a = write_scene("cq_noisy.h5", t), *b = write_scene("cq_ref.h5", ref);
    assert_int_equal(run("compare '%s' '%s' --json", a, b), 0);
    const double ser = json_get(out, "ser_db");
    printf("noisy copy: SER %.2f dB\n", ser);
    assert_true(ser > 38 && ser < 42);

    assert_int_equal(run("compare '%s' '%s' --min-ser 30", a, b), 0);
    assert_int_equal(run("compare '%s' '%s' --min-ser 70", a, b), 1);
    char want[128];
    snprintf(want, sizeof want, "sarbp: compare: SER %.1f dB is below --min-ser 70 dB", ser);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(out, "SER")); /* the figures are still printed */

    assert_int_equal(run("compare '%s' '%s' --min-window-ser 60 --window 16", a, b), 1);
    assert_non_null(strstr(err, "is below --min-window-ser 60 dB"));
    assert_int_equal(run("compare '%s' '%s' --json --min-ser 70", a, b), 1);
    assert_non_null(strstr(out, "\"pass\": false"));
    sarbp_image_free(ref);
    sarbp_image_free(t);
}

static void test_compare_phase_error(void **state)
{
    (void)state;
    /* A phase error of up to 0.01 rad leaves magnitudes untouched (quasi-SNR
     * stays high) but costs SER: about -10 log10(0.01^2 / 3) = 44.8 dB. */
    sarbp_image *ref = scene(128, 96);
    sarbp_image *t = scene(128, 96);
    rng_state = 4242;
    for (size_t i = 0; i < 128 * 96; i++) {
        const double ph = 0.01 * urand(), c = cos(ph), s = sin(ph);
        const double re = t->data[i].re, im = t->data[i].im;
        t->data[i].re = (float)(re * c - im * s);
        t->data[i].im = (float)(re * s + im * c);
    }
    const char *a = write_scene("cq_phase.h5", t), *b = write_scene("cq_phase_ref.h5", ref);
    assert_int_equal(run("compare '%s' '%s' --min-ser 70", a, b), 1);
    assert_non_null(strstr(err, "is below --min-ser 70 dB"));
    assert_int_equal(run("compare '%s' '%s' --json", a, b), 0);
    const double ser = json_get(out, "ser_db"), q = json_get(out, "quasi_snr_db");
    printf("phase error: SER %.2f dB, quasi-SNR %.2f dB\n", ser, q);
    assert_true(ser > 40 && ser < 50);
    assert_true(q > 100);
    sarbp_image_free(ref);
    sarbp_image_free(t);
}

static void test_compare_failures(void **state)
{
    (void)state;
    sarbp_image *img = scene(128, 96), *other = scene(96, 128);
    const char *a = write_scene("cq_f_a.h5", img), *b = write_scene("cq_f_other.h5", other);

    assert_int_equal(run("compare '%s' '%s'", a, b), 1);
    assert_non_null(strstr(err, "not on the same grid"));
    assert_non_null(strstr(err, "128 x 96"));

    img->grid.dx = 0.25; /* same size, different spacing */
    const char *c = write_scene("cq_f_spacing.h5", img);
    assert_int_equal(run("compare '%s' '%s'", a, c), 1);
    assert_non_null(strstr(err, "spacing"));

    const char *missing = tu_tmp("cq_f_missing.h5");
    assert_int_equal(run("compare '%s' '%s'", missing, a), 1);
    assert_non_null(strstr(err, "cq_f_missing.h5"));
    assert_non_null(strstr(err, "No such file"));
    assert_int_equal(run("compare '%s' '%s'", a, missing), 1);
    assert_non_null(strstr(err, "cq_f_missing.h5"));

    const char *junk = tu_tmp("cq_f_corrupt.h5");
    FILE *f = fopen(junk, "wb");
    fputs("\x89HDF\r\n\x1a\n but then garbage", f);
    fclose(f);
    assert_int_equal(run("compare '%s' '%s'", junk, a), 1);
    assert_non_null(strstr(err, "cq_f_corrupt.h5"));

    /* usage errors: exit 2 with a hint */
    assert_int_equal(run("compare '%s' '%s' --bogus", a, a), 2);
    assert_non_null(strstr(err, "--bogus"));
    assert_non_null(strstr(err, "Try 'sarbp compare --help'"));
    assert_int_equal(run("compare '%s'", a), 2);
    assert_int_equal(run("compare '%s' '%s' --window 0", a, a), 2);
    assert_int_equal(run("compare '%s' '%s' --min-ser abc", a, a), 2);
    assert_int_equal(run("compare '%s' '%s' --min-ser", a, a), 2);
    assert_int_equal(run("compare --help"), 0);
    assert_non_null(strstr(out, "usage: sarbp compare"));
    sarbp_image_free(img);
    sarbp_image_free(other);
}

static void test_metrics(void **state)
{
    (void)state;
    sarbp_image *img = scene(128, 96);
    const char *a = write_scene("cq_m.h5", img);
    assert_int_equal(run("metrics '%s' --json", a), 0);
    assert_int_equal(out[0], '{');
    const char *c1 = strstr(out, "\"cuts\": [");
    assert_non_null(c1);
    double pslr = json_get(c1, "pslr_db"), irw = json_get(c1, "irw_m"), x = json_get(out, "x");
    printf("metrics: PSLR %.3f dB, IRW %.4f m, x %.4f m\n", pslr, irw, x);
    assert_true(fabs(pslr + 13.26) < 0.1);
    assert_true(fabs(irw / 0.8859 - 1) < 0.02);
    assert_true(fabs(x - 0.3) < 0.01);
    assert_true(isfinite(json_get(out, "entropy")));

    assert_int_equal(run("metrics '%s'", a), 0);
    assert_non_null(strstr(out, "PSLR (dB)"));
    assert_non_null(strstr(out, "dynamic range"));

    assert_int_equal(run("metrics '%s' --target 0.5,-0.5 --cut-angle 30", a), 0);
    assert_non_null(strstr(out, "30.0"));

    /* --plot writes an 800 x 500 PNG */
    const char *png = tu_tmp("cq_cuts.png");
    assert_int_equal(run("metrics '%s' --plot '%s'", a, png), 0);
    FILE *f = fopen(png, "rb");
    assert_non_null(f);
    png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(p);
    assert_int_equal(setjmp(png_jmpbuf(p)), 0);
    png_init_io(p, f);
    png_read_info(p, info);
    assert_int_equal(png_get_image_width(p, info), 800);
    assert_int_equal(png_get_image_height(p, info), 500);
    png_destroy_read_struct(&p, &info, NULL);
    fclose(f);

    /* failures */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no_such_dir/cuts.png", SARBP_TEST_TMP);
    assert_int_equal(run("metrics '%s' --plot '%s'", a, bad), 1);
    assert_non_null(strstr(err, "no_such_dir"));
    assert_int_equal(run("metrics '%s' --target 1000,1000", a), 1);
    assert_non_null(strstr(err, "outside"));
    const char *missing = tu_tmp("cq_m_missing.npy");
    assert_int_equal(run("metrics '%s'", missing), 1);
    assert_non_null(strstr(err, "cq_m_missing.npy"));
    assert_int_equal(run("metrics '%s' --target 1", a), 2);
    assert_int_equal(run("metrics '%s' --cut-angle x", a), 2);
    assert_int_equal(run("metrics"), 2);
    assert_int_equal(run("metrics '%s' --nope", a), 2);
    assert_int_equal(run("metrics --help"), 0);
    assert_non_null(strstr(out, "usage: sarbp metrics"));
    sarbp_image_free(img);
}

/* Runs sarbp with stdout on /dev/full (always full); stderr into err.
 * Returns the exit code; a crash fails the test. */
static int run_full(const char *fmt, ...)
{
    char args[2048], errp[600], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(errp, sizeof errp, "%s/cq_full_%d.err", SARBP_TEST_TMP, (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' %s </dev/null >/dev/full 2>'%s'", SARBP_EXE, args, errp);
    int rc = system(cmd);
    err[0] = '\0';
    FILE *f = fopen(errp, "r");
    if (f) {
        size_t n = fread(err, 1, sizeof err - 1, f);
        err[n] = '\0';
        fclose(f);
    }
    remove(errp);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) > 128)
        fail_msg("'sarbp %s' crashed: %s", args, err);
    return WEXITSTATUS(rc);
}

/* Figures that cannot reach stdout are a failure, exit 1 with one message
 * (the case: compare --json >/dev/full); a failed threshold keeps
 * its own message too. */
static void test_stdout_full(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0) tu_skip("no writable /dev/full");
    sarbp_image *img = scene(64, 48);
    const char *a = write_scene("cq_full.h5", img);
    const char *want = "sarbp: compare: cannot write to standard output: No space left on device\n";
    assert_int_equal(run_full("compare '%s' '%s' --json", a, a), 1);
    assert_string_equal(err, want);
    assert_int_equal(run_full("compare '%s' '%s'", a, a), 1);
    assert_string_equal(err, want);
    assert_int_equal(run_full("metrics '%s' --json", a), 1);
    assert_string_equal(err, "sarbp: metrics: cannot write to standard output: No space left on "
                             "device\n");
    assert_int_equal(run_full("metrics '%s'", a), 1);
    assert_non_null(strstr(err, "sarbp: metrics: cannot write to standard output"));
    img->data[7].re += 1; /* SER finite, far below 200 dB */
    const char *b = write_scene("cq_full_b.h5", img);
    assert_int_equal(run_full("compare '%s' '%s' --min-ser 200", b, a), 1);
    assert_non_null(strstr(err, "is below --min-ser 200 dB"));
    assert_non_null(strstr(err, "cannot write to standard output"));
    sarbp_image_free(img);
}

/* -v says what was read and how long it took; -q and the default print
 * nothing on stderr but errors, which -q never silences. */
static void test_quiet_verbose(void **state)
{
    (void)state;
    sarbp_image *img = scene(64, 48);
    const char *a = write_scene("cq_qv.h5", img);
    assert_int_equal(run("compare -v '%s' '%s'", a, a), 0);
    assert_non_null(strstr(err, "sarbp: compare: read '"));
    assert_non_null(strstr(err, "(64 x 48)"));
    assert_int_equal(run("compare -q '%s' '%s'", a, a), 0);
    assert_int_equal(err[0], '\0');
    assert_int_equal(run("metrics -v '%s'", a), 0);
    assert_non_null(strstr(err, "sarbp: metrics: read '"));
    assert_non_null(strstr(err, "sarbp: metrics: measured in "));
    assert_int_equal(run("metrics --quiet '%s'", a), 0);
    assert_int_equal(err[0], '\0');
    const char *missing = tu_tmp("cq_qv_missing.h5");
    assert_int_equal(run("compare -q '%s' '%s'", missing, a), 1);
    assert_non_null(strstr(err, "cq_qv_missing.h5"));
    assert_int_equal(run("metrics -q '%s'", missing), 1);
    assert_non_null(strstr(err, "sarbp: metrics: "));
    sarbp_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_identical), cmocka_unit_test(test_compare_thresholds),
        cmocka_unit_test(test_compare_phase_error), cmocka_unit_test(test_compare_failures),
        cmocka_unit_test(test_metrics),           cmocka_unit_test(test_stdout_full),
        cmocka_unit_test(test_quiet_verbose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
