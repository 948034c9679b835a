/* test_gpu_backproject.c - the CUDA back end against the CPU FP64 reference
 * (label gpu): every kernel variant at awkward sizes and pulse counts (1 x 1
 * to 4096 x 4096, 1 to 2048 pulses), a unit target's peak, streaming and
 * banding (an image formed in bands of rows) against one piece, and the
 * real Gotcha files. The program reports 'skipped' to CTest only where no
 * GPU is visible (or CUDA was switched off); a visible GPU that CUDA cannot
 * use fails it (tu_gpu_precondition).
 *
 * Bars: each is the figure measured on an NVIDIA H200 with the final code
 * of issues 4/5 (docs/benchmarks/2026-11-journal.md, "GPU tests and checks") minus a
 * stated headroom; every check prints a 'BAR' line with the value, the bar
 * and the share of the headroom used. The floors (70 dB, Gotcha
 * 60 dB, 100 dB streamed/banded) lie below every bar here.
 *
 * Form's default kernel, the quadratic at 8x (value FP32, slope and
 * curvature FP16), is checked at 4096 x 4096 for every variant and with
 * samples scaled by 1e6 and 1e-6; the other checks read the cubic at 4x.
 *
 * Precision mixed (cubic bins' C, D in FP16; bars from its H200 figures) is
 * checked against FP32 with the same variant: every variant that reads it
 * at awkward sizes, streamed, banded (kept profiles), scaled by 1e6 and
 * 1e-6, and on CHIRP data; the variants that do not read it refuse it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* FP32 image SER against CPU FP64, dB. The H200 results are deterministic
 * for a given build (one thread owns a pixel and sums the pulses in order),
 * so an H100 (also sm_90) gives the same figures; the headroom covers
 * compiler and host differences, not noise. */
#define FP32_HEADROOM_DB 5.0
/* Awkward sizes, every variant and ppt: 82.6-142.1 dB over all cases; the
 * per-case figures were not recorded, so the sweep's bar is its worst. */
#define SIZES_WORST_DB 82.6
/* 4096 x 4096, 257 pulses, default tile and ppt: v3 107.3, v3a 113.0, v4
 * 106.9 dB. v1 and v2 were not recorded separately: the sweep's worst. */
static const double SIZE4096_DB[SARBP_CUDA_VARIANT_LIMIT] = {
    [SARBP_CUDA_V1] = SIZES_WORST_DB, [SARBP_CUDA_V2] = SIZES_WORST_DB, [SARBP_CUDA_V3] = 107.3,
    [SARBP_CUDA_V3A] = 113.0, [SARBP_CUDA_V4] = 106.9};
/* The same with form's default kernel, the quadratic at 8x, whose bins keep
 * the slope and curvature in FP16: their rounding, not the kernels'
 * arithmetic, sets these figures (v1, FP64 arithmetic on the same bins,
 * 96.7 dB; the FP32 variants 93.6-93.7 dB; H200, 2026-11-26). */
static const double SIZE4096_QUAD_DB[SARBP_CUDA_VARIANT_LIMIT] = {
    [SARBP_CUDA_V1] = 96.7, [SARBP_CUDA_V2] = 93.6, [SARBP_CUDA_V3] = 93.6,
    [SARBP_CUDA_V3A] = 93.7, [SARBP_CUDA_V4] = 93.6};
/* v3a exists to be more accurate than v3: 113.0 - 107.3 = 5.7 dB there. */
#define V3A_OVER_V3_DB 5.7
#define V3A_OVER_V3_HEADROOM_DB 2.0
/* Real Gotcha, 512 x 512 at 0.2 m: v3 90.9, v3a 94.9, v4 90.9 dB; v1 and v2
 * not recorded separately: v3's figure (v1 is FP64, v2 exact arithmetic). */
static const double GOTCHA_DB[SARBP_CUDA_VARIANT_LIMIT] = {
    [SARBP_CUDA_V1] = 90.9, [SARBP_CUDA_V2] = 90.9, [SARBP_CUDA_V3] = 90.9, [SARBP_CUDA_V3A] = 94.9,
    [SARBP_CUDA_V4] = 90.9};
/* Streamed and banded against one piece: 124.5 dB (banded against streamed
 * with the same blocks: identical). */
#define STREAM_DB 124.5
/* Unit target against the FP64 peak of the same processing: cubic 4x in
 * FP32, up to 1.7e-6 measured on an H200 (v2; 1.2e-7 for v1). */
#define UNIT_REL_ERR 1.7e-6
#define UNIT_REL_HEADROOM 1e-5

static void check_sizes(size_t nx, size_t ny, size_t npulses)
{
    sarbp_phd *p = tu_clutter_scene(npulses);
    sarbp_grid g = {nx, ny, 0.2, 0.2, 0.7, -1.1, 0, 0, 0, NULL, 0};
    sarbp_image *ref = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        static const int ppts[] = {1, 2, 4, 8};
        const int tiled = (tu_variant(v)->flags & SARBP_CUDA_VARIANT_TILED) != 0;
        for (size_t k = 0; k < (tiled ? 4u : 1u); k++) {
            sarbp_bp_options o;
            sarbp_bp_options_default(&o);
            o.variant = tu_variant(v)->name;
            if (tiled) o.ppt = ppts[k];
            sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
            double ser = tu_ser_c32(img->data, ref->data, nx * ny);
            tu_bar_min(ser, SIZES_WORST_DB, FP32_HEADROOM_DB, "dB",
                       "gpu fp32 %s ppt %d %zux%zux%zu SER", tu_variant(v)->name, tiled ? ppts[k] : 1, nx, ny,
                       npulses);
            sarbp_image_free(img);
        }
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

static void test_sizes(void **state)
{
    (void)state;
    check_sizes(1, 1, 1);
    check_sizes(17, 33, 255);
    check_sizes(17, 33, 257);
    check_sizes(1000, 999, 257);
    check_sizes(512, 512, 2048);
}

/* 4096 x 4096 pixels of 257 pulses: each variant once (its default tile and
 * ppt) against one FP64 reference. The spacing, 0.025 m, is the benchmark's:
 * the grid (102 m) covers the clutter instead of mostly empty, aliased
 * ground. The CPU FP64 reference is 4.3e9 pixel-pulse pairs, about 7 s on
 * 16 cores (~40 Mbp/s a core). */
/* Every variant at 4096 x 4096 against the CPU's FP64 image with the same
 * kernel k at upsampling up; returns v3a's margin over v3. */
static double size_4096_with(sarbp_interp k, int up, const double *bars)
{
    const size_t n = 4096, npulses = 257;
    sarbp_phd *p = tu_clutter_scene(npulses);
    sarbp_grid g = {n, n, 0.025, 0.025, 0.7, -1.1, 0, 0, 0, NULL, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    rc.interp = k;
    rc.upsample = up;
    sarbp_bp_options o64;
    sarbp_bp_options_default(&o64);
    o64.precision = SARBP_FP64;
    sarbp_image *ref;
    sarbp_form_stats st;
    tu_ok(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o64, NULL, &ref, &st));
    print_message("%zu x %zu, %zu pulses, %s %dx: CPU FP64 reference in %.2f s (%d cores)\n", n, n,
                  npulses, sarbp_interp_name(k), up, st.total_s, sarbp_cpu_count());
    double ser[SARBP_CUDA_VARIANT_LIMIT] = {0};
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = tu_variant(v)->name;
        sarbp_image *img;
        tu_ok(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL));
        const int id = tu_variant(v)->id;
        ser[id] = tu_ser_c32(img->data, ref->data, n * n);
        tu_bar_min(ser[id], bars[id], FP32_HEADROOM_DB, "dB", "gpu fp32 %s %s %dx default tile %zux%zux%zu SER",
                   tu_variant(v)->name, sarbp_interp_name(k), up, n, n, npulses);
        sarbp_image_free(img);
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
    return ser[SARBP_CUDA_V3A] - ser[SARBP_CUDA_V3];
}

static void test_size_4096(void **state)
{
    (void)state;
    const double margin = size_4096_with(SARBP_INTERP_CUBIC, 4, SIZE4096_DB);
    tu_bar_min(margin, V3A_OVER_V3_DB, V3A_OVER_V3_HEADROOM_DB, "dB",
               "gpu fp32 v3a over v3 4096x4096x257 cubic 4x SER margin");
    size_4096_with(SARBP_INTERP_QUADRATIC, 8, SIZE4096_QUAD_DB); /* form's default kernel */
}

static void test_unit_target(void **state)
{
    (void)state;
    const sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *p = tu_targets(&t, 1, 257);
    sarbp_grid g = {65, 65, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    /* the same processing in FP64: a target on a bin reads P times the
     * interpolation kernel's on-bin gain (1.2e-4 above P for cubic 4x) */
    sarbp_image *r = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    const double want = hypot(r->data[32 * 65 + 32].re, r->data[32 * 65 + 32].im);
    sarbp_image_free(r);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = tu_variant(v)->name;
        sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        size_t c = 32 * 65 + 32;
        double bv;
        size_t best = tu_peak_index(img, &bv);
        print_message("%s: peak %.6f at %zu (FP64 %.6f, P = 257)\n", tu_variant(v)->name, bv, best, want);
        assert_int_equal(best, c);
        tu_bar_max(fabs(bv / want - 1), UNIT_REL_ERR, UNIT_REL_HEADROOM, "",
                   "gpu fp32 %s unit target |peak/peak64 - 1|", tu_variant(v)->name);
        sarbp_image_free(img);
    }
    sarbp_phd_free(p);
}

static void test_streaming_and_tiling(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(600);
    sarbp_grid g = {700, 650, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_bp_options one;
    sarbp_bp_options_default(&one);
    one.pulse_block = 600;
    sarbp_image *a = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &one);
    sarbp_bp_options streamed = one;
    streamed.pulse_block = 64; /* 10 blocks, the last partial */
    sarbp_image *b = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &streamed);
    sarbp_bp_options tiled = streamed;
    size_t passes = 0;
    tiled.gpu_mem = tu_banding_budget(p, &g, &tiled, &passes);
    print_message("banding: gpu_mem %.2f MiB gives %zu bands of rows\n", tiled.gpu_mem / 1048576.0, passes);
    assert_true(passes >= 2);
    sarbp_image *c = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &tiled);
    double s_ab = tu_ser_c32(b->data, a->data, g.nx * g.ny);
    double s_ac = tu_ser_c32(c->data, a->data, g.nx * g.ny);
    double s_bc = tu_ser_c32(c->data, b->data, g.nx * g.ny);
    tu_bar_min(s_ab, STREAM_DB, FP32_HEADROOM_DB, "dB", "gpu fp32 streamed vs one block SER");
    tu_bar_min(s_ac, STREAM_DB, FP32_HEADROOM_DB, "dB", "gpu fp32 banded vs one piece SER");
    tu_bar_min(s_bc, STREAM_DB, FP32_HEADROOM_DB, "dB", "gpu fp32 banded vs streamed SER");
    sarbp_image_free(a);
    sarbp_image_free(b);
    sarbp_image_free(c);
    sarbp_phd_free(p);
}

static void test_gotcha(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *in[] = {tu_gotcha_dir()};
    sarbp_phd *p;
    tu_ok(sarbp_phd_load(in, 1, &p));
    sarbp_grid g = {512, 512, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *ref = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = tu_variant(v)->name;
        sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        double ser = tu_ser_c32(img->data, ref->data, g.nx * g.ny);
        tu_bar_min(ser, GOTCHA_DB[tu_variant(v)->id], FP32_HEADROOM_DB, "dB", "gpu fp32 %s Gotcha SER", tu_variant(v)->name);
        sarbp_image_free(img);
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

/* ---- precision mixed -------------------------------------------------------- */

/* Mixed against FP32 (same variant, same options): measured on an H200
 * (2026-11-26) 89.0 dB at the 1 x 1 x 1 case, 97.6-109.3 dB elsewhere, 99.2-
 * 99.5 dB at x1e6 / x1e-6 and 118.9 dB on chirp data; the bar is the worst,
 * 89.0, less 3 dB. Streamed and banded against one block: 123.5 dB measured
 * (a block's power-of-two scale shifts the FP16 exponents only, so blocks
 * change the FP32 summation order alone, as in FP32, 124.5 dB), bar 123.4
 * less 3 dB (the floor is 100). */
#define MIXED_VS_FP32_DB 89.0
#define MIXED_STREAM_DB 123.4
#define MIXED_HEADROOM_DB 3.0

static size_t nonfinite(const sarbp_image *img)
{
    size_t bad = 0, n = img->grid.nx * img->grid.ny;
    for (size_t i = 0; i < n; i++) bad += !isfinite(img->data[i].re) || !isfinite(img->data[i].im);
    return bad;
}

static void mixed_vs_fp32(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *o,
                          const char *what)
{
    sarbp_image *a = tu_form(p, g, &sarbp_backend_cuda, SARBP_FP32, o);
    sarbp_image *m = tu_form(p, g, &sarbp_backend_cuda, SARBP_MIXED, o);
    assert_int_equal(nonfinite(m), 0);
    tu_bar_min(tu_ser_c32(m->data, a->data, g->nx * g->ny), MIXED_VS_FP32_DB, MIXED_HEADROOM_DB,
               "dB", "gpu mixed vs fp32 %s SER", what);
    sarbp_image_free(a);
    sarbp_image_free(m);
}

static void test_mixed_variants(void **state)
{
    (void)state;
    static const size_t sizes[][3] = {{1, 1, 1}, {17, 33, 257}, {1000, 999, 257}};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        sarbp_phd *p = tu_clutter_scene(sizes[k][2]);
        sarbp_grid g = {sizes[k][0], sizes[k][1], 0.2, 0.2, 0.7, -1.1, 0, 0, 0, NULL, 0};
        for (size_t v = 0; v < TU_NVARIANTS; v++) {
            const sarbp_cuda_variant *vt = tu_variant(v);
            sarbp_bp_options o;
            sarbp_bp_options_default(&o);
            o.variant = vt->name;
            if (!(vt->flags & SARBP_CUDA_VARIANT_MIXED)) { /* refused, with a reason */
                sarbp_rc_params rc;
                sarbp_rc_params_default(&rc);
                sarbp_rc_params_default_for(&rc, SARBP_MIXED, 0); /* mixed cubic bins */
                o.precision = SARBP_MIXED;
                sarbp_image *img = NULL;
                assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL),
                                 SARBP_ERR_UNSUPPORTED);
                assert_null(img);
                print_message("%s refuses mixed: %s\n", vt->name, sarbp_error_detail());
                assert_non_null(strstr(sarbp_error_detail(), "mixed"));
                continue;
            }
            static const int ppts[] = {1, 8};
            const int tiled = (vt->flags & SARBP_CUDA_VARIANT_TILED) != 0;
            for (size_t q = 0; q < (tiled ? 2u : 1u); q++) {
                if (tiled) o.ppt = ppts[q];
                char what[96];
                snprintf(what, sizeof what, "%s ppt %d %zux%zux%zu", vt->name, tiled ? ppts[q] : 1,
                         g.nx, g.ny, sizes[k][2]);
                mixed_vs_fp32(p, &g, &o, what);
            }
        }
        sarbp_phd_free(p);
    }
}

/* One block of 600 pulses, ten of 64 (the last partial), and ten of 64 over
 * several bands of rows (profiles kept on the device between bands). */
static void test_mixed_streaming_and_banding(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(600);
    sarbp_grid g = {700, 650, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_bp_options one;
    sarbp_bp_options_default(&one);
    one.pulse_block = 600;
    mixed_vs_fp32(p, &g, &one, "one block 700x650x600");
    sarbp_image *a = tu_form(p, &g, &sarbp_backend_cuda, SARBP_MIXED, &one);
    sarbp_bp_options streamed = one;
    streamed.pulse_block = 64;
    sarbp_image *b = tu_form(p, &g, &sarbp_backend_cuda, SARBP_MIXED, &streamed);
    sarbp_bp_options banded = streamed;
    banded.precision = SARBP_MIXED;
    size_t passes = 0;
    banded.gpu_mem = tu_banding_budget(p, &g, &banded, &passes);
    print_message("mixed banding: gpu_mem %.2f MiB gives %zu bands of rows\n",
                  banded.gpu_mem / 1048576.0, passes);
    assert_true(passes >= 2);
    sarbp_image *c = tu_form(p, &g, &sarbp_backend_cuda, SARBP_MIXED, &banded);
    const size_t n = g.nx * g.ny;
    tu_bar_min(tu_ser_c32(b->data, a->data, n), MIXED_STREAM_DB, MIXED_HEADROOM_DB, "dB",
               "gpu mixed streamed vs one block SER");
    tu_bar_min(tu_ser_c32(c->data, a->data, n), MIXED_STREAM_DB, MIXED_HEADROOM_DB, "dB",
               "gpu mixed banded vs one block SER");
    tu_bar_min(tu_ser_c32(c->data, b->data, n), MIXED_STREAM_DB, MIXED_HEADROOM_DB, "dB",
               "gpu mixed banded vs streamed SER");
    sarbp_image_free(a);
    sarbp_image_free(b);
    sarbp_image_free(c);
    sarbp_phd_free(p);
}

/* Samples scaled by 1e6 (profiles far beyond FP16's 65504) and 1e-6 (below
 * its smallest normal): the per-block scale keeps C, D in range; mixed
 * stays as close to FP32 as unscaled. */
/* A copy of p with every sample times scale. */
static sarbp_phd *scaled_copy(const sarbp_phd *p, double scale)
{
    sarbp_phd *q;
    tu_ok(sarbp_phd_slice(p, 0, p->npulses, &q));
    const size_t n = q->npulses * q->nsamples;
    for (size_t i = 0; i < n; i++) {
        q->data[i].re = (float)(q->data[i].re * scale);
        q->data[i].im = (float)(q->data[i].im * scale);
    }
    return q;
}

static void test_mixed_amplitude_scale(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(257);
    const sarbp_grid g = {256, 256, 0.2, 0.2, 0.7, -1.1, 0, 0, 0, NULL, 0};
    static const double scales[] = {1e6, 1e-6};
    for (size_t k = 0; k < 2; k++) {
        sarbp_phd *q = scaled_copy(p, scales[k]);
        char what[64];
        snprintf(what, sizeof what, "samples x %g", scales[k]);
        mixed_vs_fp32(q, &g, NULL, what);
        sarbp_phd_free(q);
    }
    sarbp_phd_free(p);
}

/* The quadratic's FP16 slope and curvature carry the block's power-of-two
 * scale: samples scaled by 1e6 and 1e-6 keep the SER against the CPU's FP64
 * image of the same data and kernel within 3 dB of the unscaled one's. */
#define QUAD_SCALE_HEADROOM_DB 3.0
static void test_quadratic_amplitude_scale(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(257);
    const sarbp_grid g = {256, 256, 0.2, 0.2, 0.7, -1.1, 0, 0, 0, NULL, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc); /* the quadratic at 8x */
    assert_int_equal(rc.interp, SARBP_INTERP_QUADRATIC);
    static const double scales[] = {1, 1e6, 1e-6};
    double base = 0;
    for (size_t k = 0; k < 3; k++) {
        sarbp_phd *q = scaled_copy(p, scales[k]);
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        sarbp_image *gpu, *ref;
        tu_ok(sarbp_form_phd(NULL, q, &g, &sarbp_backend_cuda, &rc, &o, NULL, &gpu, NULL));
        o.precision = SARBP_FP64;
        tu_ok(sarbp_form_phd(NULL, q, &g, &sarbp_backend_cpu, &rc, &o, NULL, &ref, NULL));
        const double ser = tu_ser_c32(gpu->data, ref->data, g.nx * g.ny);
        if (k == 0) {
            base = ser;
            print_message("gpu fp32 quadratic 8x against cpu fp64 quadratic, samples x 1: %.1f dB\n", ser);
        } else {
            tu_bar_min(ser, base, QUAD_SCALE_HEADROOM_DB, "dB",
                       "gpu fp32 quadratic samples x %g against cpu fp64 (the unscaled figure less %.0f dB)",
                       scales[k], QUAD_SCALE_HEADROOM_DB);
        }
        sarbp_image_free(gpu);
        sarbp_image_free(ref);
        sarbp_phd_free(q);
    }
    sarbp_phd_free(p);
}

/* CHIRP data (the bound comes from the matched filter's row sums). */
static void test_mixed_chirp(void **state)
{
    (void)state;
    sarbp_phd *p = tu_chirp_stripmap(128);
    const sarbp_grid g = {96, 64, 0.3, 0.3, 0, 0, 0, 0, 0, NULL, 0};
    mixed_vs_fp32(p, &g, NULL, "chirp stripmap 96x64x128");
    sarbp_phd_free(p);
}

static void test_bad_config(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(8);
    sarbp_grid g = {16, 16, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.variant = "v9";
    sarbp_image *img = NULL;
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL), SARBP_ERR_INVALID);
    o.variant = NULL;
    o.device = 999;
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL), SARBP_ERR_NODEVICE);
    o.device = 0;
    o.gpu_mem = 1024; /* absurdly small budget: a clear error, not a crash */
    assert_int_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL), SARBP_ERR_NOMEM);
    assert_null(img);
    sarbp_phd_free(p);
}

int main(void)
{
    const int pre = tu_gpu_precondition("test_gpu_backproject");
    if (pre) return pre;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_target),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_streaming_and_tiling),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_size_4096),
        cmocka_unit_test(test_gotcha),
        cmocka_unit_test(test_mixed_variants),
        cmocka_unit_test(test_mixed_streaming_and_banding),
        cmocka_unit_test(test_mixed_amplitude_scale),
        cmocka_unit_test(test_quadratic_amplitude_scale),
        cmocka_unit_test(test_mixed_chirp),
    };
    return tu_run_tests(tests);
}
