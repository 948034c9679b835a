/* test_quality.c - image comparison and point-target metrics (quality.h). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sarbp/quality.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers --------------------------------------------------------------- */

static sarbp_image *new_image(size_t nx, size_t ny, double d)
{
    sarbp_grid g = {.nx = nx, .ny = ny, .dx = d, .dy = d, .xc = 0, .yc = 0, .zc = 0};
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_alloc(&g, &img));
    return img;
}

static sarbp_image *clone(const sarbp_image *a)
{
    sarbp_image *b = new_image(a->grid.nx, a->grid.ny, a->grid.dx);
    b->grid = a->grid;
    b->has_grid_coords = a->has_grid_coords;
    memcpy(b->data, a->data, a->grid.nx * a->grid.ny * sizeof *a->data);
    return b;
}

/* Deterministic generator (xorshift64*) and Gaussian deviates. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double grand(void)
{
    double u = urand(), v = urand();
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double sinc(double x) { return fabs(x) < 1e-12 ? 1.0 : sin(M_PI * x) / (M_PI * x); }

/* Adds amp * sinc(u / res) * sinc(v / res) * exp(j phase), (u, v) the pixel
 * position relative to (x0, y0) rotated by rot_deg. */
static void add_sinc(sarbp_image *img, double res, double x0, double y0, double rot_deg, double amp)
{
    const double c = cos(rot_deg * M_PI / 180), s = sin(rot_deg * M_PI / 180);
    for (size_t iy = 0; iy < img->grid.ny; iy++)
        for (size_t ix = 0; ix < img->grid.nx; ix++) {
            double x = sarbp_grid_x(&img->grid, ix) - x0, y = sarbp_grid_y(&img->grid, iy) - y0;
            double u = c * x + s * y, v = -s * x + c * y;
            double a = amp * sinc(u / res) * sinc(v / res);
            sarbp_c32 *p = &img->data[iy * img->grid.nx + ix];
            p->re += (float)(a * cos(0.7));
            p->im += (float)(a * sin(0.7));
        }
}

/* Exact ISLR (dB) of sinc(s / res) over [s0, s1], mainlobe [-res, res]. */
static double exact_islr(double res, double s0, double s1)
{
    const int N = 200000;
    double main_e = 0, side_e = 0;
    const double h = (s1 - s0) / N;
    for (int i = 0; i <= N; i++) { /* trapezoid; fine enough at this N */
        double s = s0 + i * h, w = (i == 0 || i == N) ? 0.5 : 1.0, e = sinc(s / res);
        e *= e * w;
        if (fabs(s) <= res) main_e += e;
        else side_e += e;
    }
    return 10 * log10(side_e / main_e);
}

/* ---- compare ------------------------------------------------------------------ */

static void test_identical(void **state)
{
    (void)state;
    sarbp_image *a = new_image(100, 70, 0.5);
    rng_state = 1;
    for (size_t i = 0; i < 100 * 70; i++) a->data[i] = (sarbp_c32){(float)grand(), (float)grand()};
    sarbp_image *b = clone(a);
    sarbp_compare_result r;
    tu_ok(sarbp_quality_compare(b, a, 32, &r));
    assert_true(isinf(r.ser_db) && r.ser_db > 0);
    assert_true(isinf(r.window_ser_db) && r.window_ser_db > 0);
    assert_int_equal(r.nwindows, 4 * 3); /* 100 / 32 -> 4 tiles (last 4 wide), 70 / 32 -> 3 */
    assert_true(fabs(r.quasi_snr_db - SARBP_QSNR_CAP_DB) < 1e-9);
    assert_int_equal(r.quasi_snr_pixels, 100 * 70);
    assert_true(isinf(r.psnr_db) && r.psnr_db > 0);
    assert_true(fabs(r.ssim - 1.0) < 1e-9);
    assert_true(r.max_err == 0);
    assert_true(isinf(r.max_err_db) && r.max_err_db < 0);
    assert_true(r.rel_l2 == 0);
    assert_true(fabs(r.entropy_test - r.entropy_ref) < 1e-12);
    sarbp_image_free(a);
    sarbp_image_free(b);
}

static void test_noise_ser(void **state)
{
    (void)state;
    const size_t n = 512;
    sarbp_image *ref = new_image(n, n, 1.0);
    rng_state = 12345;
    for (size_t i = 0; i < n * n; i++) ref->data[i] = (sarbp_c32){(float)grand(), (float)grand()};
    sarbp_image *t = clone(ref);
    const double sigma = 0.01; /* per component: noise power 2e-4 vs signal power 2: 40 dB */
    for (size_t i = 0; i < n * n; i++) {
        t->data[i].re += (float)(sigma * grand());
        t->data[i].im += (float)(sigma * grand());
    }
    /* Expected from the exact noise added (after float rounding), in double. */
    double s = 0, e = 0;
    for (size_t i = 0; i < n * n; i++) {
        double dr = (double)t->data[i].re - ref->data[i].re, di = (double)t->data[i].im - ref->data[i].im;
        s += (double)ref->data[i].re * ref->data[i].re + (double)ref->data[i].im * ref->data[i].im;
        e += dr * dr + di * di;
    }
    const double expected = 10 * log10(s / e);
    sarbp_compare_result r;
    tu_ok(sarbp_quality_compare(t, ref, 32, &r));
    printf("noise: SER %.4f dB, expected %.4f dB (nominal 40), |diff| %.2e of 0.1 dB tolerance; "
           "window %.2f dB at (%zu, %zu); quasi-SNR %.2f dB; PSNR %.2f dB; SSIM %.6f\n",
           r.ser_db, expected, fabs(r.ser_db - expected), r.window_ser_db, r.window_ix,
           r.window_iy, r.quasi_snr_db, r.psnr_db, r.ssim);
    assert_true(fabs(r.ser_db - expected) < 0.1);
    assert_true(fabs(r.ser_db - 40.0) < 0.1); /* the nominal noise power too */
    assert_true(r.window_ser_db <= r.ser_db + 1e-9);
    assert_true(r.window_ser_db > r.ser_db - 3.0);
    assert_int_equal(r.nwindows, 256);
    assert_true(r.quasi_snr_db > 30 && r.quasi_snr_db < 60);
    assert_true(r.ssim > 0.9 && r.ssim < 1.0);
    assert_true(isfinite(r.psnr_db));

    /* A local error moves the worst window onto it. */
    for (size_t iy = 130; iy < 140; iy++)
        for (size_t ix = 70; ix < 80; ix++) t->data[iy * n + ix].re += 0.5f;
    tu_ok(sarbp_quality_compare(t, ref, 32, &r));
    assert_int_equal(r.window_ix, 64);
    assert_int_equal(r.window_iy, 128);
    assert_true(r.window_ser_db < r.ser_db - 10);
    assert_true(r.max_err_ix >= 70 && r.max_err_ix < 80 && r.max_err_iy >= 130 && r.max_err_iy < 140);
    sarbp_image_free(ref);
    sarbp_image_free(t);
}

static void test_gain_quasi_snr(void **state)
{
    (void)state;
    sarbp_image *ref = new_image(64, 48, 1.0);
    rng_state = 7;
    for (size_t i = 0; i < 64 * 48; i++) ref->data[i] = (sarbp_c32){(float)grand(), (float)grand()};
    ref->data[5] = (sarbp_c32){0, 0}; /* |r| = 0: skipped by quasi-SNR */
    sarbp_image *t = clone(ref);
    for (size_t i = 0; i < 64 * 48; i++) {
        t->data[i].re *= 0.5f;
        t->data[i].im *= 0.5f;
    }
    sarbp_compare_result r;
    tu_ok(sarbp_quality_compare(t, ref, 16, &r));
    /* |r| / ||r| - |t|| = 2 at every pixel: 6.02 dB; SER likewise. */
    assert_true(fabs(r.quasi_snr_db - 20 * log10(2.0)) < 1e-4);
    assert_int_equal(r.quasi_snr_pixels, 64 * 48 - 1);
    assert_true(fabs(r.ser_db - 20 * log10(2.0)) < 1e-4);
    assert_true(r.ssim < 1.0);
    /* every dB pixel is 6.02 / 80 lower unless clipped: PSNR about 22.5 dB */
    assert_true(r.psnr_db > 20 && r.psnr_db < 25);
    sarbp_image_free(ref);
    sarbp_image_free(t);
}

static void test_mismatch(void **state)
{
    (void)state;
    sarbp_image *a = new_image(32, 16, 0.5), *b = new_image(16, 32, 0.5);
    a->data[3].re = b->data[3].re = 1;
    sarbp_compare_result r;
    assert_int_equal(sarbp_quality_compare(a, b, 8, &r), SARBP_ERR_MISMATCH);
    assert_non_null(strstr(sarbp_error_detail(), "32 x 16"));
    sarbp_image_free(b);

    b = clone(a);
    b->grid.dx *= 1 + 1e-6;
    assert_int_equal(sarbp_quality_compare(a, b, 8, &r), SARBP_ERR_MISMATCH);
    assert_non_null(strstr(sarbp_error_detail(), "spacing"));
    b->grid.dx = a->grid.dx * (1 + 1e-12); /* within 1e-9 */
    tu_ok(sarbp_quality_compare(a, b, 8, &r));
    b->grid.dx = a->grid.dx;
    b->grid.yc = 0.25;
    assert_int_equal(sarbp_quality_compare(a, b, 8, &r), SARBP_ERR_MISMATCH);
    assert_non_null(strstr(sarbp_error_detail(), "centre"));
    b->has_grid_coords = 0; /* .npy: sizes only */
    tu_ok(sarbp_quality_compare(a, b, 8, &r));
    assert_int_equal(sarbp_quality_compare(a, b, 0, &r), SARBP_ERR_INVALID);
    b->data[7].im = NAN;
    assert_int_equal(sarbp_quality_compare(a, b, 8, &r), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "non-finite"));
    sarbp_image_free(a);
    sarbp_image_free(b);
}

static void test_entropy_stats(void **state)
{
    (void)state;
    sarbp_image *a = new_image(10, 10, 1.0);
    assert_true(isnan(sarbp_quality_entropy(a->data, 100)));
    a->data[42].re = 3;
    assert_true(fabs(sarbp_quality_entropy(a->data, 100)) < 1e-12);
    for (size_t i = 0; i < 100; i++) a->data[i] = (sarbp_c32){0.6f, 0.8f};
    assert_true(fabs(sarbp_quality_entropy(a->data, 100) - log(100.0)) < 1e-9);

    /* magnitudes 1..50 in the first half, zero elsewhere, 1000 at one pixel */
    for (size_t i = 0; i < 100; i++) a->data[i] = (sarbp_c32){i < 50 ? (float)(i + 1) : 0.f, 0};
    a->data[77].re = 1000;
    sarbp_image_stats st;
    tu_ok(sarbp_quality_image_stats(a, &st));
    assert_true(st.max_mag == 1000);
    assert_int_equal(st.max_ix, 7);
    assert_int_equal(st.max_iy, 7);
    /* 51 nonzero values: 1..50 and 1000; lower median = rank 25 = 26 */
    assert_true(st.median_mag == 26);
    assert_true(fabs(st.dynamic_range_db - 20 * log10(1000.0 / 26)) < 1e-9);
    assert_true(fabs(st.mean_mag - (1275.0 + 1000) / 100) < 1e-9);
    sarbp_image_free(a);
}

/* ---- point target ------------------------------------------------------------- */

static void check_sinc_cut(const sarbp_pt_cut *c, double res, const char *what)
{
    const double islr_exact = exact_islr(res, c->s_m[0], c->s_m[c->n - 1]);
    const double irw_exact = 0.88589 * res;
    printf("%s: angle %.1f, peak %.5f, IRW %.4f m (exact %.4f, %.2f%% of 2%%), PSLR %.3f dB "
           "(|err| %.3f of 0.1), ISLR %.3f dB (exact %.3f over [%.2f, %.2f] m, |err| %.3f of 0.2), "
           "nulls %.4f / %.4f\n",
           what, c->angle_deg, c->peak, c->irw_m, irw_exact, 100 * fabs(c->irw_m / irw_exact - 1),
           c->pslr_db, fabs(c->pslr_db + 13.26), c->islr_db, islr_exact, c->s_m[0],
           c->s_m[c->n - 1], fabs(c->islr_db - islr_exact), c->null_lo_m, c->null_hi_m);
    assert_true(fabs(c->pslr_db - (-13.26)) < 0.1);
    assert_true(fabs(c->islr_db - islr_exact) < 0.2);
    assert_true(fabs(c->irw_m / irw_exact - 1) < 0.02);
    assert_true(fabs(c->null_lo_m + res) < 0.02 * res);
    assert_true(fabs(c->null_hi_m - res) < 0.02 * res);
    assert_true(fabs(fabs(c->sidelobe_m) - 1.4303 * res) < 0.05 * res);
}

static void test_sinc_axes(void **state)
{
    (void)state;
    /* 0.5 m pixels, 1 m resolution (first nulls at +-1 m): half-resolution spacing */
    sarbp_image *img = new_image(256, 200, 0.5);
    const double res = 1.0, x0 = 0.3, y0 = -0.17;
    add_sinc(img, res, x0, y0, 0, 2.5);
    sarbp_pt_result *r = NULL;
    tu_ok(sarbp_pointtarget_measure(img, NULL, &r));
    printf("peak at (%.4f, %.4f) m, true (%.4f, %.4f); |I| %.5f (true 2.5)\n", r->x, r->y, x0, y0,
           r->peak);
    assert_true(fabs(r->x - x0) < 0.01 && fabs(r->y - y0) < 0.01);
    assert_true(fabs(r->peak / 2.5 - 1) < 0.002);
    assert_int_equal(r->patch_nx, SARBP_PT_PATCH);
    assert_int_equal(r->upsample, SARBP_PT_UPSAMPLE);
    check_sinc_cut(&r->cut[0], res, "sinc x cut");
    check_sinc_cut(&r->cut[1], res, "sinc y cut");
    assert_true(fabs(r->cut[0].angle_deg - 0) < 1e-12 && fabs(r->cut[1].angle_deg - 90) < 1e-12);
    assert_true(isfinite(r->stats.entropy) && r->stats.dynamic_range_db > 20);

    /* The plot is written and is a PNG. */
    const char *png = tu_tmp("quality_cuts.png");
    tu_ok(sarbp_pointtarget_plot(png, r, 800, 500));
    FILE *f = fopen(png, "rb");
    assert_non_null(f);
    unsigned char sig[8];
    assert_int_equal(fread(sig, 1, 8, f), 8);
    fclose(f);
    assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
    assert_int_equal(sarbp_pointtarget_plot(png, r, 10, 10), SARBP_ERR_INVALID);
    sarbp_pointtarget_free(r);
    sarbp_image_free(img);
}

static void test_sinc_rotated(void **state)
{
    (void)state;
    /* A sinc rotated by 30 deg is still band-limited at this spacing: cuts
     * at 30 and 120 deg are exact 1-D sincs. */
    sarbp_image *img = new_image(200, 200, 0.5);
    const double res = 1.2;
    add_sinc(img, res, -0.41, 0.23, 30, 1.0);
    sarbp_pt_options o = {.cut_angle_deg = 30};
    sarbp_pt_result *r = NULL;
    tu_ok(sarbp_pointtarget_measure(img, &o, &r));
    check_sinc_cut(&r->cut[0], res, "rotated sinc, 30 deg cut");
    check_sinc_cut(&r->cut[1], res, "rotated sinc, 120 deg cut");
    assert_true(fabs(r->cut[1].angle_deg - 120) < 1e-9);
    sarbp_pointtarget_free(r);
    sarbp_image_free(img);
}

static void test_target_option(void **state)
{
    (void)state;
    sarbp_image *img = new_image(160, 160, 0.5);
    add_sinc(img, 1.0, -15.0, 10.0, 0, 4.0); /* brightest */
    add_sinc(img, 1.0, 12.3, -8.1, 0, 1.0);
    sarbp_pt_result *r = NULL;
    tu_ok(sarbp_pointtarget_measure(img, NULL, &r));
    assert_true(fabs(r->x + 15.0) < 0.02 && fabs(r->y - 10.0) < 0.02);
    sarbp_pointtarget_free(r);

    sarbp_pt_options o = {.have_target = 1, .target_x = 12.0, .target_y = -8.5};
    tu_ok(sarbp_pointtarget_measure(img, &o, &r));
    assert_true(fabs(r->x - 12.3) < 0.02 && fabs(r->y + 8.1) < 0.02);
    assert_true(fabs(r->peak - 1.0) < 0.01);
    sarbp_pointtarget_free(r);

    o.target_x = 500; /* outside */
    assert_int_equal(sarbp_pointtarget_measure(img, &o, &r), SARBP_ERR_INVALID);
    assert_null(r);
    sarbp_image_free(img);

    img = new_image(40, 40, 1.0); /* all zero */
    assert_int_equal(sarbp_pointtarget_measure(img, NULL, &r), SARBP_ERR_INVALID);
    sarbp_image_free(img);
}

static void test_small_images(void **state)
{
    (void)state;
    /* Awkward sizes must not crash: one row, one pixel, odd sizes below the patch. */
    const size_t sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {3, 3}, {17, 31}, {65, 63}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sarbp_image *img = new_image(sizes[k][0], sizes[k][1], 0.5);
        add_sinc(img, 1.0, 0.1, -0.2, 0, 1.0);
        sarbp_pt_result *r = NULL;
        tu_ok(sarbp_pointtarget_measure(img, NULL, &r));
        assert_true(r->peak > 0);
        assert_true(r->cut[0].n >= 1 && r->cut[1].n >= 1);
        tu_ok(sarbp_pointtarget_plot(tu_tmp("quality_small.png"), r, 320, 200));
        sarbp_pointtarget_free(r);
        sarbp_compare_result c;
        tu_ok(sarbp_quality_compare(img, img, 4, &c));
        assert_true(isinf(c.ser_db));
        sarbp_image_free(img);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical),      cmocka_unit_test(test_noise_ser),
        cmocka_unit_test(test_gain_quasi_snr), cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_entropy_stats),  cmocka_unit_test(test_sinc_axes),
        cmocka_unit_test(test_sinc_rotated),   cmocka_unit_test(test_target_option),
        cmocka_unit_test(test_small_images),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
