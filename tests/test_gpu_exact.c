/* test_gpu_exact.c - the CUDA back end against the exact image (FP64 direct
 * summation over every frequency sample on the CPU: no FFT, no
 * interpolation), label gpu. This measures everything the GPU path does to
 * the image (upsampling, interpolation kernel, FP32/FP16 arithmetic), where
 * test_gpu_backproject.c and test_gpu_fp16.c measure the arithmetic alone
 * against the CPU FP64 path with the same profiles.
 *
 * The default path is the quadratic B-spline at 8x in FP32 (its bins keep
 * the value in FP32, slope and curvature in FP16) and the cubic at 4x in
 * FP16 (the quadratic has no FP16 form); the FP32 cubic at 4x, the default
 * before, is kept beside it. The quadratic's FP16 terms are measured alone
 * against the CPU's FP64 image with the same kernel (QUAD_VS_FP64_DB).
 *
 * Bars: the figure measured on an H200 less 3 dB, never below the issue's
 * floors (default path >= 70 dB in FP32 and >= 65 dB in FP16; linear
 * interpolation, --fast, >= 43 dB at 8x); a unit target's peak within 0.1%
 * of P; unwindowed PSLR within 0.15 dB of -13.26 dB. Precision mixed (cubic
 * bins' C, D in FP16), measured on an H200 (2026-11-26): against the exact
 * image as FP32 to 0.1 dB (76.6-77.0 dB; bars at the same figures less 3 dB,
 * never below the 70), against the FP32 image of the same path
 * 96.7-102.2 dB (its error is FP16 rounding of the higher-order terms
 * alone; bar: the worst, 96.7, less 3 dB). Every figure is
 * printed on a BAR line. Skipped (77) without a usable device, failed when
 * one is listed that CUDA cannot use (tu_gpu_precondition). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* Forms p on g with interpolation k and upsampling up. */
static sarbp_image *form_with(const sarbp_phd *p, const sarbp_grid *g, const sarbp_backend *be,
                              sarbp_precision prec, sarbp_interp k, int up)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    rc.interp = k;
    rc.upsample = up;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = prec;
    sarbp_image *img = NULL;
    tu_ok(sarbp_form_phd(NULL, p, g, be, &rc, &o, NULL, &img, NULL));
    return img;
}

static sarbp_image *exact_of(const sarbp_phd *p, const sarbp_grid *g)
{
    return form_with(p, g, &sarbp_backend_cpu, SARBP_EXACT, SARBP_INTERP_CUBIC, 8);
}

/* SER against the exact image at least the H200-measured figure less
 * HEADROOM_DB, and never below the floor. */
#define HEADROOM_DB 3.0
static void at_least(const char *what, double ser, double measured, double floor_)
{
    const double headroom = measured - HEADROOM_DB >= floor_ ? HEADROOM_DB : measured - floor_;
    tu_bar_min(ser, measured, headroom, "dB", "%s (issue floor %.0f dB)", what, floor_);
}

/* Precision mixed against the exact image (measured: the case's figure)
 * and against FP32 cubic (measured 96.7-102.2 dB on an H200; the worst is
 * the bar's measure). */
#define MIXED_VS_FP32_DB 96.7
static void mixed_bars(const char *what, const sarbp_image *mixed, const sarbp_image *f32,
                       const sarbp_image *ex, size_t n, double measured_exact)
{
    char w[160];
    snprintf(w, sizeof w, "%s: cuda mixed cubic against exact", what);
    at_least(w, tu_ser_c32(mixed->data, ex->data, n), measured_exact, 70);
    tu_bar_min(tu_ser_c32(mixed->data, f32->data, n), MIXED_VS_FP32_DB, HEADROOM_DB, "dB",
               "%s: cuda mixed cubic against fp32 cubic", what);
}

/* The GPU's quadratic (FP16 slope and curvature, FP32 arithmetic) against
 * the CPU's FP64 image of the same kernel and upsampling: measured on an
 * H200 2026-11-26, 87.5 (scene 0.2 m), 89.6 (Gotcha), 94.0 dB (scene 0.1
 * m); the bar's measure is the worst. It lies 11 dB or more above the
 * interpolation error (75.5-76.2 dB against the exact image), which it
 * moves by at most 0.3 dB. */
#define QUAD_VS_FP64_DB 87.5

struct case_ {
    double spacing;
    double fp32, fp16, linear, mixed; /* measured on an H200, dB; fp32, mixed: cubic 4x */
    double quad;                      /* the default, quadratic 8x FP32: measured on an H200 */
};

/* The default FP32 path, quadratic at 8x, against the exact image and
 * against the CPU's FP64 image with the same kernel; returns the image. */
static sarbp_image *quad_bars(const char *what, const sarbp_phd *p, const sarbp_grid *g,
                              const sarbp_image *ex, double measured)
{
    const size_t n = g->nx * g->ny;
    char w[160];
    sarbp_image *q = form_with(p, g, &sarbp_backend_cuda, SARBP_FP32, SARBP_INTERP_QUADRATIC, 8);
    snprintf(w, sizeof w, "%s: cuda fp32 quadratic 8x (default)", what);
    at_least(w, tu_ser_c32(q->data, ex->data, n), measured, 70);
    sarbp_image *q64 = form_with(p, g, &sarbp_backend_cpu, SARBP_FP64, SARBP_INTERP_QUADRATIC, 8);
    tu_bar_min(tu_ser_c32(q->data, q64->data, n), QUAD_VS_FP64_DB, HEADROOM_DB, "dB",
               "%s: cuda fp32 quadratic against cpu fp64 quadratic", what);
    sarbp_image_free(q64);
    return q;
}

static void scene_case(const struct case_ *c)
{
    sarbp_phd *p = tu_clutter_scene(256);
    sarbp_grid g = {256, 256, c->spacing, c->spacing, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *ex = exact_of(p, &g);
    const size_t n = g.nx * g.ny;
    char what[96];
    const int up = sarbp_interp_default_upsample(SARBP_INTERP_CUBIC);
    snprintf(what, sizeof what, "scene %.1f m", c->spacing);
    sarbp_image_free(quad_bars(what, p, &g, ex, c->quad));
    sarbp_image *f32 = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP32, SARBP_INTERP_CUBIC, up);
    snprintf(what, sizeof what, "scene %.1f m: cuda fp32 cubic %dx", c->spacing, up);
    at_least(what, tu_ser_c32(f32->data, ex->data, n), c->fp32, 70);
    sarbp_image *f16 = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP16, SARBP_INTERP_CUBIC, up);
    snprintf(what, sizeof what, "scene %.1f m: cuda fp16 cubic %dx (default)", c->spacing, up);
    at_least(what, tu_ser_c32(f16->data, ex->data, n), c->fp16, 65);
    sarbp_image *lin = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP32, SARBP_INTERP_LINEAR, 8);
    snprintf(what, sizeof what, "scene %.1f m: cuda fp32 linear 8x (--fast)", c->spacing);
    at_least(what, tu_ser_c32(lin->data, ex->data, n), c->linear, 43);
    sarbp_image *mx = form_with(p, &g, &sarbp_backend_cuda, SARBP_MIXED, SARBP_INTERP_CUBIC, up);
    snprintf(what, sizeof what, "scene %.1f m, cubic %dx", c->spacing, up);
    mixed_bars(what, mx, f32, ex, n, c->mixed);
    sarbp_image_free(mx);
    sarbp_image_free(f32);
    sarbp_image_free(f16);
    sarbp_image_free(lin);
    sarbp_image_free(ex);
    sarbp_phd_free(p);
}

static void test_scene_01(void **state)
{
    (void)state;
    const struct case_ c = {0.1, 76.70, 72.24, 49.76, 76.69, 75.53};
    scene_case(&c);
}

static void test_scene_02(void **state)
{
    (void)state;
    const struct case_ c = {0.2, 76.61, 70.26, 49.29, 76.58, 75.53};
    scene_case(&c);
}

static void test_gotcha(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *in[] = {tu_gotcha_dir()};
    sarbp_phd *p;
    tu_ok(sarbp_phd_load(in, 1, &p));
    assert_int_equal(p->npulses, 469);
    sarbp_grid g = {128, 128, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *ex = exact_of(p, &g);
    const size_t n = g.nx * g.ny;
    const int up = sarbp_interp_default_upsample(SARBP_INTERP_CUBIC);
    sarbp_image_free(quad_bars("Gotcha 128^2 0.2 m", p, &g, ex, 76.21));
    sarbp_image *f32 = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP32, SARBP_INTERP_CUBIC, up);
    at_least("Gotcha 128^2 0.2 m: cuda fp32 cubic 4x", tu_ser_c32(f32->data, ex->data, n), 77.06, 70);
    sarbp_image *f16 = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP16, SARBP_INTERP_CUBIC, up);
    at_least("Gotcha 128^2 0.2 m: cuda fp16 cubic (default)", tu_ser_c32(f16->data, ex->data, n), 68.60, 65);
    sarbp_image *c8 = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP32, SARBP_INTERP_CUBIC, 8);
    at_least("Gotcha 128^2 0.2 m: cuda fp32 cubic 8x", tu_ser_c32(c8->data, ex->data, n), 91.37, 70);
    sarbp_image_free(c8);
    sarbp_image *lin = form_with(p, &g, &sarbp_backend_cuda, SARBP_FP32, SARBP_INTERP_LINEAR, 8);
    at_least("Gotcha 128^2 0.2 m: cuda fp32 linear 8x", tu_ser_c32(lin->data, ex->data, n), 50.72, 43);
    sarbp_image *mx = form_with(p, &g, &sarbp_backend_cuda, SARBP_MIXED, SARBP_INTERP_CUBIC, up);
    mixed_bars("Gotcha 128^2 0.2 m, cubic 4x", mx, f32, ex, n, 77.01);
    sarbp_image_free(mx);
    sarbp_image_free(f32);
    sarbp_image_free(f16);
    sarbp_image_free(lin);
    sarbp_image_free(ex);
    sarbp_phd_free(p);
}

/* A unit target at the origin: peak within 0.1% of P; unwindowed PSLR and
 * IRW of both cuts against theory (range resolution c / (2B); cross-range
 * lambda / (2 dtheta) from the simulated aperture). */
static void test_point_target(void **state)
{
    (void)state;
    const size_t P = 512;
    sarbp_phd *p = tu_targets(NULL, 0, P);
    sarbp_phd_summary sum;
    tu_ok(sarbp_phd_summarize(p, &sum));
    sarbp_grid g = {129, 129, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0}; /* odd: a pixel on the origin */
    static const struct {
        sarbp_precision prec;
        sarbp_interp k;
        int up;
        const char *name;
    } cfgs[] = {{SARBP_FP32, SARBP_INTERP_QUADRATIC, 8, "fp32 quadratic 8x (default)"},
                {SARBP_FP32, SARBP_INTERP_CUBIC, 4, "fp32 cubic 4x"},
                {SARBP_FP16, SARBP_INTERP_CUBIC, 4, "fp16 cubic 4x (default)"},
                {SARBP_MIXED, SARBP_INTERP_CUBIC, 4, "mixed cubic 4x"}};
    for (size_t h = 0; h < sizeof cfgs / sizeof *cfgs; h++) {
        const char *pname = cfgs[h].name;
        sarbp_image *img = form_with(p, &g, &sarbp_backend_cuda, cfgs[h].prec, cfgs[h].k, cfgs[h].up);
        double peak;
        size_t ip = tu_peak_index(img, &peak);
        const double rel = fabs(peak / (double)P - 1);
        print_message("%s unit target: peak %.6f at pixel %zu, P = %zu, |peak/P - 1| = %.2e "
                      "(bar 1e-3: %.0f%% used)\n", pname, peak, ip, P, rel, 100 * rel / 1e-3);
        assert_true(rel < 1e-3);
        sarbp_pt_result *r = NULL;
        tu_ok(sarbp_pointtarget_measure(img, NULL, &r));
        for (int c = 0; c < 2; c++) {
            const sarbp_pt_cut *cut = &r->cut[c];
            print_message("%s cut %.0f deg: PSLR %.3f dB (theory -13.26, bar +-0.15), "
                          "IRW %.4f m\n", pname, cut->angle_deg, cut->pslr_db, cut->irw_m);
            assert_true(fabs(cut->pslr_db + 13.26) <= 0.15);
        }
        sarbp_pointtarget_free(r);
        sarbp_image_free(img);
    }
    sarbp_phd_free(p);
}

int main(void)
{
    const int pre = tu_gpu_precondition("test_gpu_exact");
    if (pre) return pre;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scene_01),
        cmocka_unit_test(test_scene_02),
        cmocka_unit_test(test_gotcha),
        cmocka_unit_test(test_point_target),
    };
    return tu_run_tests(tests);
}
