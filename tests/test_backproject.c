/* test_backproject.c - the CPU backprojectors against theory and each other:
 * a unit target at the origin peaks at P times the kernel's on-bin gain
 * (within 0.1% of P on the default path); targets off the origin peak at
 * their true position; FP32 against FP64 on a Gotcha-like scene at awkward
 * sizes; linearity; bit-identical FP32 images for any thread count.
 *
 * Bars: the figures measured on the CI machine class (2-core AMD EPYC,
 * AVX-512; Release build with GCC, and the clang ASan/UBSan build) minus or
 * plus a stated headroom, each checked and printed by tu_bar_* ('BAR'
 * lines). The issue's floor for FP32 against FP64 (70 dB) lies below every
 * SER bar here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* FP32 against FP64, dB: the FP32 path's rounding depends on the compiler
 * and the vector width (-march=native, FMA contraction), by about a dB
 * between the builds measured; 6 dB of headroom. */
#define FP32_HEADROOM_DB 6.0
/* Off-origin targets: worst sub-pixel position error 0.01 px (a
 * parabola through three samples of a sinc is biased by about that). */
#define OFF_ORIGIN_PX 0.01
#define OFF_ORIGIN_HEADROOM_PX 0.05
/* Linearity: relative error 2.6e-16 (FP64 rounding). */
#define LINEARITY_REL 2.6e-16
#define LINEARITY_HEADROOM 5e-15

static sarbp_image *form(const sarbp_phd *p, const sarbp_grid *g, sarbp_precision prec,
                         int threads)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = prec;
    o.threads = threads;
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, p, g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL));
    return img;
}

static size_t argmax(const sarbp_image *img)
{
    size_t best = 0, n = img->grid.nx * img->grid.ny;
    double bv = -1;
    for (size_t i = 0; i < n; i++) {
        double m = hypot(img->data[i].re, img->data[i].im);
        if (m > bv) { bv = m; best = i; }
    }
    return best;
}

static double mag(const sarbp_image *img, size_t ix, size_t iy)
{
    const sarbp_c32 v = img->data[iy * img->grid.nx + ix];
    return hypot(v.re, v.im);
}

/* What a unit target exactly on a bin reads, relative to P: the pixel takes
 * sum_n profile[n] beta(n0 - n) with the bin n0 on the target, and each
 * sample k (at nu_k = (k - K/2) / nbins cycles per bin, weight wr_k / K,
 * divided by the kernel's response by the prefilter) contributes its weight
 * times the sampled kernel's response at w_k = 2 pi nu_k: B(w) = (2 + cos w) / 3
 * for the cubic B-spline (weights 1/6, 4/6, 1/6 on a bin), (3 + cos w) / 4 for
 * the quadratic (1/8, 6/8, 1/8), 1 for linear. So
 *     peak / P = mean_az(waz) * sum_k wr_k B(w_k) / response(nu_k) / K,
 * a few 1e-6 above 1 for cubic at 8x, about 4e-3 for linear. wr NULL: no
 * range window. */
static double on_bin_gain(const sarbp_phd *p, int upsample, sarbp_interp interp, const double *wr)
{
    const size_t K = p->nsamples, nb = sarbp_rc_nbins(p, upsample);
    double s = 0;
    for (size_t k = 0; k < K; k++) {
        const double nu = ((double)k - (double)(K / 2)) / (double)nb;
        const double c = cos(2 * M_PI * nu);
        const double B = interp == SARBP_INTERP_CUBIC       ? (2.0 + c) / 3.0
                         : interp == SARBP_INTERP_QUADRATIC ? (3.0 + c) / 4.0
                                                            : 1.0;
        s += (wr ? wr[k] : 1.0) * B / sarbp_interp_response(interp, nu);
    }
    return s / (double)K;
}

static sarbp_image *form_interp(const sarbp_phd *p, const sarbp_grid *g, sarbp_precision prec,
                                sarbp_interp interp)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    rc.interp = interp;
    rc.upsample = sarbp_interp_default_upsample(interp);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = prec;
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, p, g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL));
    return img;
}

static void test_unit_target_peak(void **state)
{
    (void)state;
    const size_t P = 128;
    sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *p = tu_targets(&t, 1, P);
    sarbp_grid g = {65, 65, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    const sarbp_interp kinds[] = {SARBP_INTERP_QUADRATIC, SARBP_INTERP_CUBIC, SARBP_INTERP_LINEAR};
    for (size_t j = 0; j < 3; j++) {
        const double expect =
            P * on_bin_gain(p, sarbp_interp_default_upsample(kinds[j]), kinds[j], NULL);
        sarbp_image *img = form_interp(p, &g, SARBP_FP64, kinds[j]);
        size_t best = argmax(img);
        assert_int_equal(best % 65, 32);
        assert_int_equal(best / 65, 32);
        double peak = hypot(img->data[best].re, img->data[best].im);
        print_message("%s FP64 peak %.9f, expected %.9f (P = %zu), rel err %.2e (tol 1e-6)\n",
                      sarbp_interp_name(kinds[j]), peak, expect, P, fabs(peak / expect - 1));
        assert_true(fabs(peak / expect - 1) < 1e-6);
        sarbp_image_free(img);
        /* FP32 gives the same to 1e-4 */
        img = form_interp(p, &g, SARBP_FP32, kinds[j]);
        best = argmax(img);
        peak = hypot(img->data[best].re, img->data[best].im);
        print_message("%s FP32 peak %.9f, rel err %.2e (tol 1e-4)\n", sarbp_interp_name(kinds[j]),
                      peak, fabs(peak / expect - 1));
        assert_int_equal(best, 32 * 65 + 32);
        assert_true(fabs(peak / expect - 1) < 1e-4);
        sarbp_image_free(img);
    }
    sarbp_phd_free(p);
}

/* Issue 11's bar: with the default path (CPU FP32, cubic, 4x), a unit target
 * at a pixel peaks within 0.1% of P. */
static void test_unit_target_peak_issue_bar(void **state)
{
    (void)state;
    const size_t P = 128;
    const double bar = 1e-3;
    sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *p = tu_targets(&t, 1, P);
    sarbp_grid g = {65, 65, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *img = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP32, NULL);
    size_t best = argmax(img);
    assert_int_equal(best, 32 * 65 + 32);
    const double peak = hypot(img->data[best].re, img->data[best].im);
    const double err = fabs(peak / P - 1);
    print_message("default path: peak %.6f, P = %zu, |peak / P - 1| = %.2e, bar %.0e (%.1f%% of "
                  "the bar used)\n", peak, P, err, bar, 100 * err / bar);
    assert_true(err < bar);
    sarbp_image_free(img);
    sarbp_phd_free(p);
}

/* The recorded coherent gain is what the windows do to a unit target's peak
 * (times the on-bin gain of the kernel and prefilter, above). */
static void test_coherent_gain(void **state)
{
    (void)state;
    const size_t P = 96;
    sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *p = tu_targets(&t, 1, P);
    sarbp_grid g = {33, 33, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    double *wr = malloc(p->nsamples * sizeof *wr);
    assert_non_null(wr);
    for (int windowed = 0; windowed < 2; windowed++) {
        sarbp_rc_params rc;
        sarbp_rc_params_default(&rc);
        if (windowed) {
            rc.range_window.kind = SARBP_WIN_HAMMING;
            rc.az_window.kind = SARBP_WIN_HAMMING;
        }
        tu_ok(sarbp_window_fill(&rc.range_window, p->nsamples, wr));
        double wmean = 0;
        for (size_t k = 0; k < p->nsamples; k++) wmean += wr[k] / (double)p->nsamples;
        /* the kernel's on-bin gain relative to the range window's mean */
        const double onbin = on_bin_gain(p, rc.upsample, rc.interp, wr) / wmean;
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.precision = SARBP_FP64;
        sarbp_image *img;
        tu_ok(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL));
        const char *a = sarbp_image_get_attr(img, "coherent_gain");
        assert_non_null(a);
        double gain = strtod(a, NULL);
        const sarbp_c32 v = img->data[16 * 33 + 16];
        double peak = hypot(v.re, v.im);
        print_message("windowed %d: coherent gain %s, on-bin gain %.9f, peak / (P gain) = %.9f, "
                      "rel err %.2e (tol 1e-6)\n", windowed, a, onbin, peak / (P * gain),
                      fabs(peak / (P * gain * onbin) - 1));
        assert_true(fabs(peak / (P * gain * onbin) - 1) < 1e-6);
        /* and the kernel's part stays within the issue's 0.1% */
        assert_true(fabs(onbin - 1) < 1e-3);
        if (!windowed) assert_true(fabs(gain - 1) < 1e-12);
        else assert_true(gain < 0.35 && gain > 0.25); /* Hamming mean 0.54, squared */
        sarbp_image_free(img);
    }
    free(wr);
    sarbp_phd_free(p);
}

/* Sub-pixel peak by a parabola through the three samples in each axis. */
static double parabola(double l, double c, double r)
{
    double den = l - 2 * c + r;
    return den == 0 ? 0 : 0.5 * (l - r) / den;
}

static void test_targets_off_origin(void **state)
{
    (void)state;
    const sarbp_target ts[] = {{3.13, -2.71, 0, 1}, {-7.4, 5.05, 0, 1}, {11.02, 9.9, 0, 1}};
    sarbp_grid g = {301, 301, 0.1, 0.1, 0, 0, 0, 0, 0, NULL, 0};
    for (size_t k = 0; k < 3; k++) {
        sarbp_phd *p = tu_targets(&ts[k], 1, 256);
        sarbp_image *img = form(p, &g, SARBP_FP64, 0);
        size_t best = argmax(img), ix = best % g.nx, iy = best / g.nx;
        assert_true(ix > 0 && iy > 0 && ix + 1 < g.nx && iy + 1 < g.ny);
        double fx = parabola(mag(img, ix - 1, iy), mag(img, ix, iy), mag(img, ix + 1, iy));
        double fy = parabola(mag(img, ix, iy - 1), mag(img, ix, iy), mag(img, ix, iy + 1));
        double x = sarbp_grid_x(&g, ix) + fx * g.dx, y = sarbp_grid_y(&g, iy) + fy * g.dy;
        double ex = (x - ts[k].x) / g.dx, ey = (y - ts[k].y) / g.dy;
        print_message("target (%.2f, %.2f): peak (%.4f, %.4f), error (%.4f, %.4f) px\n", ts[k].x,
                      ts[k].y, x, y, ex, ey);
        tu_bar_max(fmax(fabs(ex), fabs(ey)), OFF_ORIGIN_PX, OFF_ORIGIN_HEADROOM_PX, "px",
                   "cpu fp64 target (%.2f, %.2f) position error", ts[k].x, ts[k].y);
        sarbp_image_free(img);
        sarbp_phd_free(p);
    }
}

/* Gotcha-like scene: bright targets plus random clutter. */
static sarbp_phd *scene(size_t npulses)
{
    sarbp_target *clutter;
    size_t nc = 300;
    tu_ok(sarbp_targets_clutter(nc, 50, -30, 0, 7, &clutter));
    sarbp_target *all = malloc((nc + 5) * sizeof *all);
    memcpy(all, clutter, nc * sizeof *all);
    const sarbp_target bright[] = {{0, 0, 0, 10}, {20, 10, 0, 5}, {-33.3, 21.7, 0, 8},
                                   {40.1, -44.4, 0, 3}, {-12, -30, 1.5, 6}};
    memcpy(all + nc, bright, sizeof bright);
    sarbp_phd *p = tu_targets(all, nc + 5, npulses);
    free(all);
    free(clutter);
    return p;
}

/* measured_db: this case's FP32-vs-FP64 SER on the CI machine class, with the
 * default cubic 4x and the staged AVX-512 FP32 path of issue 11. */
static void check_fp32_vs_fp64(size_t nx, size_t ny, size_t npulses, double spacing,
                               double measured_db)
{
    sarbp_phd *p = scene(npulses);
    sarbp_grid g = {nx, ny, spacing, spacing, 1.3, -0.7, 0, 0, 0, NULL, 0};
    sarbp_image *ref = form(p, &g, SARBP_FP64, 0);
    sarbp_image *img = form(p, &g, SARBP_FP32, 0);
    double ser = tu_ser_c32(img->data, ref->data, nx * ny);
    tu_bar_min(ser, measured_db, FP32_HEADROOM_DB, "dB", "cpu fp32 vs fp64 %zux%zux%zu SER", nx, ny,
               npulses);
    sarbp_image_free(ref);
    sarbp_image_free(img);
    sarbp_phd_free(p);
}

static void test_fp32_scene_512(void **state) { (void)state; check_fp32_vs_fp64(512, 512, 512, 0.2, 102.5); }
static void test_fp32_awkward(void **state)
{
    (void)state;
    check_fp32_vs_fp64(17, 33, 257, 0.2, 107.4);
    check_fp32_vs_fp64(1, 1, 1, 0.2, 126.5);
    check_fp32_vs_fp64(1, 1, 257, 0.2, 114.5);
    check_fp32_vs_fp64(100, 1, 255, 0.15, 103.4);
    check_fp32_vs_fp64(33, 17, 1, 0.3, 102.2);
}

static void test_threads_bit_identical(void **state)
{
    (void)state;
    sarbp_phd *p = scene(96);
    sarbp_grid g = {131, 77, 0.25, 0.25, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *a = form(p, &g, SARBP_FP32, 1);
    sarbp_image *b = form(p, &g, SARBP_FP32, 2);
    sarbp_image *c = form(p, &g, SARBP_FP32, 7);
    size_t bytes = g.nx * g.ny * sizeof(sarbp_c32);
    assert_memory_equal(a->data, b->data, bytes);
    assert_memory_equal(a->data, c->data, bytes);
    sarbp_image_free(a);
    sarbp_image_free(b);
    sarbp_image_free(c);
    sarbp_phd_free(p);
}

/* Linearity of the backprojector in its profiles, to FP64 rounding. */
static void test_linearity(void **state)
{
    (void)state;
    const size_t P = 16, nb = 2048;
    sarbp_profiles *A, *B, *C;
    tu_ok(sarbp_profiles_alloc(P, nb, SARBP_FP64, &A));
    tu_ok(sarbp_profiles_alloc(P, nb, SARBP_FP64, &B));
    tu_ok(sarbp_profiles_alloc(P, nb, SARBP_FP64, &C));
    const double a = 1.7, b = -0.3;
    srand(3);
    for (size_t i = 0; i < P; i++) {
        double th = (i * 0.01);
        double pos[3] = {7000 * cos(th), 7000 * sin(th), 7000};
        sarbp_profiles *all[3] = {A, B, C};
        for (int k = 0; k < 3; k++) {
            memcpy(all[k]->pos + 3 * i, pos, sizeof pos);
            all[k]->r0[i] = sqrt(pos[0] * pos[0] + pos[1] * pos[1] + pos[2] * pos[2]);
            all[k]->dr[i] = 0.03;
            all[k]->rstart[i] = -0.03 * nb / 2;
            all[k]->fref[i] = 9.6e9;
            all[k]->npulses = P;
        }
        for (size_t n = 0; n < nb; n++) {
            sarbp_c64 x = {rand() / (double)RAND_MAX - 0.5, rand() / (double)RAND_MAX - 0.5};
            sarbp_c64 y = {rand() / (double)RAND_MAX - 0.5, rand() / (double)RAND_MAX - 0.5};
            A->data64[i * nb + n] = x;
            B->data64[i * nb + n] = y;
            C->data64[i * nb + n] = (sarbp_c64){a * x.re + b * y.re, a * x.im + b * y.im};
        }
    }
    sarbp_grid g = {40, 30, 0.3, 0.3, 0, 0, 0, 0, 0, NULL, 0};
    size_t n = g.nx * g.ny;
    sarbp_c64 *ia = calloc(n, sizeof *ia), *ib = calloc(n, sizeof *ib), *ic = calloc(n, sizeof *ic);
    tu_ok(sarbp_bp_cpu_fp64(A, &g, ia));
    tu_ok(sarbp_bp_cpu_fp64(B, &g, ib));
    tu_ok(sarbp_bp_cpu_fp64(C, &g, ic));
    double err = 0, sig = 0;
    for (size_t i = 0; i < n; i++) {
        double re = a * ia[i].re + b * ib[i].re - ic[i].re;
        double im = a * ia[i].im + b * ib[i].im - ic[i].im;
        err += re * re + im * im;
        sig += ic[i].re * ic[i].re + ic[i].im * ic[i].im;
    }
    tu_bar_max(sqrt(err / sig), LINEARITY_REL, LINEARITY_HEADROOM, "",
               "cpu fp64 linearity relative error");
    free(ia);
    free(ib);
    free(ic);
    sarbp_profiles_free(A);
    sarbp_profiles_free(B);
    sarbp_profiles_free(C);
}

static void test_bad_grid(void **state)
{
    (void)state;
    sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *p = tu_targets(&t, 1, 4);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    sarbp_image *img = NULL;
    sarbp_grid g = {0, 10, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                     SARBP_ERR_INVALID);
    g = (sarbp_grid){10, 10, -1, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                     SARBP_ERR_INVALID);
    g = (sarbp_grid){10, 10, 0.2, 0.2, NAN, 0, 0, 0, 0, NULL, 0};
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                     SARBP_ERR_INVALID);
    o.precision = SARBP_FP16;
    g = (sarbp_grid){10, 10, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                     SARBP_ERR_UNSUPPORTED);
    assert_null(img);
    sarbp_phd_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_target_peak),
        cmocka_unit_test(test_unit_target_peak_issue_bar),
        cmocka_unit_test(test_targets_off_origin),
        cmocka_unit_test(test_coherent_gain),
        cmocka_unit_test(test_linearity),
        cmocka_unit_test(test_threads_bit_identical),
        cmocka_unit_test(test_fp32_awkward),
        cmocka_unit_test(test_fp32_scene_512),
        cmocka_unit_test(test_bad_grid),
    };
    return tu_run_tests(tests);
}
