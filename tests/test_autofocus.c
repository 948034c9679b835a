/* test_autofocus.c - the backprojection autofocus (sarbp/autofocus.h) on a
 * simulated scene (150 clutter scatterers and three bright targets,
 * circular, 256 pulses) with phase errors injected into its samples: a
 * smooth error of several radians (quadratic and cubic), white noise of 1
 * rad rms per pulse, and none (do no harm). Each estimate is checked
 * against the injected error (constant and linear terms removed from both)
 * and its image against the image of the uncorrupted samples (SER with the
 * best complex gain: the estimate's constant phase is free). */
#include "scratch.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NP 256

/* measured here (the bars below are the issue's: 25 dB, 0.1 rad; 30 dB for
 * do no harm) */
#define PGA_SER 29.2
#define PGA_RMS 0.037
#define PGA_CLEAN_SER 100.0 /* inf: no correction is kept */
#define PGA_CLEAN_RMS 0.001
#define RANGE_SER 41.8
#define RANGE_RMS 0.0123
#define RANGE_MM 0.031
#define WIN_SER 41.8
#define WIN_RMS 0.0123

static sarbp_phd *scene;
static sarbp_grid grid;
static sarbp_image *clean; /* the image of the uncorrupted samples */

static int setup(void **state)
{
    (void)state;
    scene = tu_ffbp_scene(SARBP_GEOM_CIRCULAR, NP);
    grid = (sarbp_grid){128, 128, 0.25, 0.25, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    tu_ok(sarbp_form_phd(NULL, scene, &grid, &sarbp_backend_cpu, &rc, &o, NULL, &clean, NULL));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sarbp_image_free(clean);
    sarbp_phd_free(scene);
    return 0;
}


static double sharp(const sarbp_c32 *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        const double p = (double)x[i].re * x[i].re + (double)x[i].im * x[i].im;
        s += p * p;
    }
    return s;
}

static sarbp_image *form(const sarbp_phd *p)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, p, &grid, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL));
    return img;
}

static void on_iteration(void *user, int half, int stage, int it, double sharpness, double step)
{
    (void)user;
    if (it % 5 == 0 || it == 1)
        printf("    half %d stage %d iteration %d: sharpness %.4f, step %.3f rad\n", half, stage, it,
               sharpness, step);
}

/* Injects err (the samples times exp(-j err)), estimates, and checks. The
 * constant and linear terms of err are removed first: they only move the
 * image, which no autofocus can see, so the image of a perfect estimate
 * would not be the uncorrupted one. */
/* o (NULL: the defaults) estimates; range_err (m, may be NULL) is injected
 * too, and with o->range the range estimate is checked against it (its
 * rms difference, constant and linear terms removed, below max_range_mm). */
static void one_case_with(const char *name, const sarbp_autofocus_options *oin, const double *err_in,
                          const double *range_err, double min_img_db, double img_measured, double max_rms,
                          double rms_measured, double max_range_mm, double range_measured_mm)
{
    double err[NP], rerr[NP] = {0};
    memcpy(err, err_in, sizeof err);
    sarbp_phase_detrend(err, NP);
    if (range_err) {
        memcpy(rerr, range_err, sizeof rerr);
        sarbp_phase_detrend(rerr, NP);
    }
    sarbp_phd *p;
    tu_ok(sarbp_phd_slice(scene, 0, NP, &p));
    double neg[NP], rneg[NP];
    for (size_t j = 0; j < NP; j++) neg[j] = -err[j], rneg[j] = -rerr[j];
    tu_ok(sarbp_autofocus_apply(p, neg, range_err ? rneg : NULL));
    sarbp_image *bad = form(p);
    const size_t n = grid.nx * grid.ny;
    const double ser_bad = tu_ser_gain_c32(bad->data, clean->data, n);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    if (oin) o = *oin;
    o.on_iteration = on_iteration;
    double est[NP], rest[NP] = {0};
    sarbp_autofocus_info info;
    tu_ok(sarbp_autofocus_estimate(p, &grid, &rc, &o, est, o.range ? rest : NULL, &info));
    tu_ok(sarbp_autofocus_apply(p, est, o.range ? rest : NULL));
    sarbp_image *fixed = form(p);
    const double ser_fixed = tu_ser_gain_c32(fixed->data, clean->data, n);
    /* the difference wrapped (phases are equal modulo 2 pi), its constant
     * and linear terms removed; with a range, the phase of both at each
     * pulse's reference frequency */
    double d[NP], rms = 0, dr[NP], rrms = 0;
    const double k = 4.0 * M_PI * (scene->f0[0] + 0.5 * (double)(scene->nsamples - 1) * scene->df[0]) / SARBP_C;
    for (size_t j = 0; j < NP; j++) {
        d[j] = remainder(est[j] + k * rest[j] - err[j] - k * rerr[j], 2.0 * M_PI);
        dr[j] = rest[j] - rerr[j];
    }
    sarbp_phase_detrend(d, NP);
    sarbp_phase_detrend(dr, NP);
    for (size_t j = 0; j < NP; j++) rms += d[j] * d[j], rrms += dr[j] * dr[j];
    rms = sqrt(rms / NP);
    rrms = 1e3 * sqrt(rrms / NP);
    if (o.range)
        printf("%s: range estimate vs injected %.4f mm rms\n", name, rrms);
    printf("%s: sum |I|^4 relative to the corrupted image's: uncorrupted %.3f, autofocused %.3f\n",
           name, sharp(clean->data, n) / sharp(bad->data, n), sharp(fixed->data, n) / sharp(bad->data, n));
    printf("%s: %d iterations, %d images, sharpness x%.3f; image vs the uncorrupted one %.1f dB "
           "(uncorrected %.1f dB); estimate vs injected %.3f rad rms\n",
           name, info.iterations, info.evaluations, info.sharpness, ser_fixed, ser_bad, rms);
    /* the bars, as the measured figures less their headroom */
    tu_bar_min(ser_fixed, img_measured, img_measured - min_img_db, "dB",
               "%s: autofocused image vs the uncorrupted", name);
    tu_bar_max(rms, rms_measured, max_rms - rms_measured, "rad", "%s: estimate vs injected, rms", name);
    if (o.range)
        tu_bar_max(rrms, range_measured_mm, max_range_mm - range_measured_mm, "mm",
                   "%s: range estimate vs injected, rms", name);
    sarbp_image_free(bad);
    sarbp_image_free(fixed);
    sarbp_phd_free(p);
}

static void one_case(const char *name, const double *err_in, double min_img_db, double img_measured,
                     double max_rms, double rms_measured)
{
    one_case_with(name, NULL, err_in, NULL, min_img_db, img_measured, max_rms, rms_measured, 0, 0);
}

static void smooth_error(double *err)
{
    for (size_t j = 0; j < NP; j++) {
        const double t = 2.0 * (double)j / (NP - 1) - 1.0;
        err[j] = 6.0 * t * t + 2.5 * t * t * t; /* radians */
    }
}

static void test_smooth(void **state)
{
    (void)state;
    double err[NP];
    smooth_error(err);
    one_case("quadratic 6 rad + cubic 2.5 rad", err, 25.0, 41.8, 0.1, 0.0123);
}

static void test_white(void **state)
{
    (void)state;
    double err[NP];
    unsigned s = 12345;
    for (size_t j = 0; j < NP; j++) { /* 1 rad rms, Box-Muller */
        s = s * 1103515245u + 12345u;
        const double u1 = ((s >> 8) + 1.0) / 16777218.0;
        s = s * 1103515245u + 12345u;
        const double u2 = (s >> 8) / 16777216.0;
        err[j] = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
    }
    one_case("white noise 1 rad rms", err, 25.0, 36.1, 0.1, 0.0126);
}

static void test_clean(void **state)
{
    (void)state;
    double err[NP] = {0};
    /* do no harm: the image changes by less than -30 dB */
    one_case("clean (do no harm)", err, 30.0, 100.0, 0.1, 0.001); /* inf: nothing applied */
}

static char out[8192], err[65536]; /* -v prints every iteration of both halves */

/* sarbp form --autofocus estimate: the image carries the estimate
 * (autofocus/phase, read back), the CSV and the plot are written; the
 * options refuse what does not go together, leaving nothing behind. */
static void test_cli(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("autofocus_cli");
    char in[600], img[600], csv[600], png[600];
    snprintf(in, sizeof in, "%s/in.h5", dir);
    snprintf(img, sizeof img, "%s/img.h5", dir);
    snprintf(csv, sizeof csv, "%s/af.csv", dir);
    snprintf(png, sizeof png, "%s/af.png", dir);
    sarbp_phd *p;
    tu_ok(sarbp_phd_slice(scene, 0, 64, &p)); /* 64 pulses: quick */
    tu_ok(sarbp_phd_write_h5(in, p));
    sarbp_phd_free(p);
    const char *g = "--grid 64x64 --spacing 0.5 --backend cpu";
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus-csv '%s'", in, img, g, csv), 2);
    assert_non_null(strstr(err, "go with --autofocus estimate"));
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus estimate --autofocus-plot '%s'",
                            in, img, g, csv), 2);
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus=sharpen", in, img, g), 2);
    assert_non_null(strstr(err, "unknown --autofocus mode"));
    assert_int_equal(tu_count_entries(dir), 1); /* in.h5 alone */
    assert_int_equal(tu_run("form -v -i '%s' -o '%s' %s --autofocus estimate --autofocus-csv '%s' "
                            "--autofocus-plot '%s'", in, img, g, csv, png), 0);
    assert_non_null(strstr(err, "autofocus: estimated a phase per pulse"));
    /* the pulses are clean: the check applies nothing, and says so */
    assert_non_null(strstr(err, "no correction applied"));
    sarbp_image *im;
    tu_ok(sarbp_image_read(img, &im));
    assert_int_equal(im->af_npulses, 64);
    assert_non_null(strstr(sarbp_image_get_attr(im, "autofocus"), "estimated by sharpness, none applied"));
    sarbp_image_free(im);
    char text[8192];
    assert_int_equal(tu_sh(text, sizeof text, "cat '%s'", csv), 0);
    assert_int_equal(tu_count_lines(text), 65);
    assert_true(tu_exists(png));
    /* the saved estimate applied with --phase-csv forms the same image, bit
     * for bit */
    char img2[600], bad[600];
    snprintf(img2, sizeof img2, "%s/img2.h5", dir);
    snprintf(bad, sizeof bad, "%s/bad.csv", dir);
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --phase-csv '%s'", in, img2, g, csv), 0);
    sarbp_image *a, *b;
    tu_ok(sarbp_image_read(img, &a));
    tu_ok(sarbp_image_read(img2, &b));
    assert_memory_equal(a->data, b->data, 64 * 64 * sizeof(sarbp_c32));
    assert_non_null(sarbp_image_get_attr(b, "phase_applied"));
    sarbp_image_free(a);
    sarbp_image_free(b);
    /* a CSV of the wrong count or form: refused, naming the file and line */
    assert_int_equal(tu_sh(text, sizeof text, "head -n 10 '%s' > '%s'", csv, bad), 0);
    remove(img2);
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --phase-csv '%s'", in, img2, g, bad), 1);
    assert_non_null(strstr(err, "has 9 phases; the selection has 64 pulses"));
    assert_int_equal(tu_sh(text, sizeof text, "printf 'pulse,phase_rad\\n0,nan\\n' > '%s'", bad), 0);
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --phase-csv '%s'", in, img2, g, bad), 1);
    assert_non_null(strstr(err, "line 2 is not 'pulse,phase_rad'"));
    assert_false(tu_exists(img2));
    /* with a range: the image carries autofocus/range, the CSV a range_m
     * column, and --phase-csv of that CSV (range applied by the reader)
     * forms the same image, bit for bit; pga forms too */
    remove(img2);
    /* (the pulses are clean: the check, which applies nothing to them, is
     * off so that there is an estimate to carry) */
    assert_int_equal(tu_run("form -v -i '%s' -o '%s' %s --autofocus estimate --autofocus-range --autofocus-csv "
                            "'%s' --autofocus-min-gain -1", in, img, g, csv), 0);
    assert_non_null(strstr(err, "autofocus: estimated a range per pulse"));
    tu_ok(sarbp_image_read(img, &a));
    assert_int_equal(a->af_npulses, 64);
    assert_non_null(a->af_range);
    assert_non_null(strstr(sarbp_image_get_attr(a, "autofocus"), "and range"));
    assert_int_equal(tu_sh(text, sizeof text, "head -n 1 '%s'", csv), 0);
    assert_non_null(strstr(text, "pulse,phase_rad,range_m"));
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --phase-csv '%s'", in, img2, g, csv), 0);
    tu_ok(sarbp_image_read(img2, &b));
    assert_memory_equal(a->data, b->data, 64 * 64 * sizeof(sarbp_c32));
    sarbp_image_free(a);
    sarbp_image_free(b);
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus pga --autofocus-range", in, img2, g), 2);
    assert_non_null(strstr(err, "--autofocus-range goes with --autofocus estimate"));
    assert_int_equal(tu_run("form -v -i '%s' -o '%s' %s --autofocus pga --autofocus-iterations 5", in, img2, g), 0);
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus estimate --autofocus-window 60,0,10,10", in, img2,
                            g), 1);
    assert_non_null(strstr(err, "autofocus window 1"));
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus estimate --autofocus-window 1,2,3", in, img2, g),
                     2);
    /* sarbp batch passes it through --form-args: every window's image carries its estimate */
    char bdir[600], bimg[640];
    snprintf(bdir, sizeof bdir, "%s/batch", dir);
    snprintf(bimg, sizeof bimg, "%s/win_000.h5", bdir);
    assert_int_equal(tu_run("batch -o '%s' --outputs h5 --form-args '%s --autofocus estimate --autofocus-range' "
                            "'%s'", bdir, g, in), 0);
    tu_ok(sarbp_image_read(bimg, &a));
    assert_true(a->af_npulses > 0);
    assert_non_null(a->af_range);
    assert_non_null(strstr(sarbp_image_get_attr(a, "autofocus"), "estimated"));
    sarbp_image_free(a);
    /* the bare --autofocus is the file's corrections: none here, so a warning */
    assert_int_equal(tu_run("form -i '%s' -o '%s' %s --autofocus", in, img, g), 0);
    assert_non_null(strstr(err, "carry no autofocus"));
    tu_remove_dir(dir);
}

/* PGA on the smooth error: the bright targets dominate the clutter. */
static void test_pga(void **state)
{
    (void)state;
    double e[NP];
    smooth_error(e);
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    o.method = SARBP_AF_PGA;
    one_case_with("pga, quadratic 6 rad + cubic 2.5 rad", &o, e, NULL, 25.0, PGA_SER, 0.1, PGA_RMS, 0, 0);
    double zero[NP] = {0};
    one_case_with("pga, clean (do no harm)", &o, zero, NULL, 30.0, PGA_CLEAN_SER, 0.1, PGA_CLEAN_RMS, 0, 0);
}

/* A smooth range error of centimetres (a navigation error): its phase at
 * the band's centre is tens of radians and it differs across the band, so
 * a phase alone leaves the band's edges defocused; the range estimate
 * corrects the whole band. */
static void test_range(void **state)
{
    (void)state;
    double zero[NP] = {0}, rerr[NP];
    for (size_t j = 0; j < NP; j++) {
        const double t = 2.0 * (double)j / (NP - 1) - 1.0;
        rerr[j] = 0.03 * t * t - 0.012 * t * t * t; /* m */
    }
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    o.range = 1;
    one_case_with("range 3 cm quadratic + 1.2 cm cubic", &o, zero, rerr, 25.0, RANGE_SER, 0.1, RANGE_RMS, 1.0,
                  RANGE_MM);
}

/* The estimator over two windows of the grid gives the whole grid's quality. */
static void test_windows(void **state)
{
    (void)state;
    double e[NP];
    smooth_error(e);
    const sarbp_autofocus_window w[2] = {{0, 0, 64, 128}, {64, 32, 64, 64}};
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    o.windows = w;
    o.nwindows = 2;
    one_case_with("two windows, quadratic 6 rad + cubic 2.5 rad", &o, e, NULL, 25.0, WIN_SER, 0.1, WIN_RMS,
                  0, 0);
    /* a window outside the grid is refused, naming it */
    const sarbp_autofocus_window out_of[1] = {{100, 0, 64, 64}};
    o.windows = out_of;
    o.nwindows = 1;
    double est[NP];
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    assert_int_equal(sarbp_autofocus_estimate(scene, &grid, &rc, &o, est, NULL, NULL), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "autofocus window 1"));
}

/* The same estimators on the GPU (skipped without one): the bars are the
 * issue's, the figures measured on an H100 are in the benchmark notes. */
static void test_gpu(void **state)
{
    (void)state;
    if (sarbp_cuda_device_count() < 1) tu_skip("no CUDA device");
    double e[NP], zero[NP] = {0}, rerr[NP];
    smooth_error(e);
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    o.device = 0;
    one_case_with("gpu, quadratic 6 rad + cubic 2.5 rad", &o, e, NULL, 25.0, 41.8, 0.1, 0.0123, 0, 0);
    one_case_with("gpu, clean (do no harm)", &o, zero, NULL, 30.0, 100.0, 0.1, 0.001, 0, 0);
    for (size_t j = 0; j < NP; j++) {
        const double t = 2.0 * (double)j / (NP - 1) - 1.0;
        rerr[j] = 0.03 * t * t - 0.012 * t * t * t;
    }
    o.range = 1;
    one_case_with("gpu, range 3 cm quadratic + 1.2 cm cubic", &o, zero, rerr, 25.0, RANGE_SER, 0.1, RANGE_RMS, 1.0,
                  RANGE_MM);
    o.range = 0;
    o.method = SARBP_AF_PGA;
    one_case_with("gpu, pga, quadratic 6 rad + cubic 2.5 rad", &o, e, NULL, 25.0, PGA_SER, 0.1, PGA_RMS, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pga),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_gpu),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_smooth),
        cmocka_unit_test(test_white),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
