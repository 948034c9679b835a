/* test_gpu_fp16.c - the CUDA back end's FP16 path (profiles stored in FP16
 * with a power-of-two scale per pulse block, FP32 range and phase, FP32
 * accumulation) against the CPU FP64 reference (label gpu; 'skipped' only
 * where no GPU is visible, see tu_gpu_precondition). It checks:
 *  - SER on the Gotcha-like simulated scene, every variant, raw samples
 *    uploaded in FP16 and in FP32, at awkward sizes and pulse counts, and
 *    on the real Gotcha files;
 *  - a unit target at the origin peaks at P;
 *  - a point target's PSLR and ISLR equal FP64's in both cuts;
 *  - targets 80 dB below the brightest keep their peak and their
 *    neighbourhood (local SER), i.e. nothing flushes to zero;
 *  - amplitudes scaled by 1e6 and 1e-6 neither overflow nor lose SER;
 *  - streamed and banded images equal the one-piece image.
 *
 * Bars: each is the figure measured on an NVIDIA H200 with the final code
 * of issue 5 (docs/benchmarks/2026-11-journal.md, "GPU tests and checks"; session note
 * of stop 7) minus a stated headroom; every check prints a 'BAR' line with
 * the value, the bar and the share of the headroom used. The issue's
 * floors (SER 50 dB, PSLR 0.5 dB, ISLR 1 dB, 100 dB streamed) lie below
 * every bar here. */
#include <math.h>
#include <stdio.h>

#include "test_util.h"

/* SER against FP64 with the same processing (cubic 4x), dB: over the
 * awkward sizes, variants, ppt and both raw formats the minimum measured on
 * an H200 is 59.9 dB, the 1 x 1 pixel, 1 pulse case (one FP16 rounding of
 * the cubic coefficients, nothing to average it); the sweep's bar is that
 * minimum. The default path on the benchmark scene reads 78.0 dB. */
#define FP16_WORST_DB 59.9
#define FP16_HEADROOM_DB 3.0
/* Real Gotcha, 512 x 512 at 0.2 m: 70.7 dB raw FP32, 68.3 dB raw FP16. */
#define GOTCHA_RAW32_DB 70.7
#define GOTCHA_RAW16_DB 68.3
/* Unit target against the FP64 peak of the same processing: the cubic
 * B-spline's A coefficient at the peak bin rounds to FP16 (half an ulp is
 * 2.4e-4 relative); measured 1.3e-4 on an H200. */
#define UNIT_REL_ERR 1.3e-4
#define UNIT_REL_HEADROOM 1.2e-4
/* |PSLR, ISLR (FP16) - (FP64)| in both cuts: within 0.0013 dB. */
#define IMPULSE_DIFF_DB 0.0013
#define IMPULSE_HEADROOM_DB 0.05
/* Weak targets 80 dB down, raw FP32: peak within 0.002 dB of FP64, local
 * SER 55.6-62.4 dB (cubic 4x; 60-65 with the old linear profiles); raw FP16 (strong target off the origin): peak within 0.05
 * dB, local SER about 40 dB (39.4-40.7 in the CPU emulation). */
#define DR_PEAK_RAW32_DB 0.002
#define DR_PEAK_RAW16_DB 0.05
#define DR_PEAK_HEADROOM_DB 0.1
#define DR_LOCAL_RAW32_DB 55.6 /* cubic 4x: 55.6-62.4 dB on an H200 */
#define DR_LOCAL_RAW16_DB 39.4
#define DR_LOCAL_HEADROOM_DB 4.0
/* Amplitudes x 1e6 and x 1e-6: SER within 0.2 dB of x 1. */
#define SCALE_DIFF_DB 0.2
#define SCALE_DIFF_HEADROOM_DB 0.3
/* Streamed against one block: 123-143 dB; banded against streamed: identical. */
#define STREAM_DB 123.0
#define STREAM_HEADROOM_DB 5.0

static sarbp_image *ref64(const sarbp_phd *p, const sarbp_grid *g)
{
    return tu_form(p, g, &sarbp_backend_cpu, SARBP_FP64, NULL);
}

static sarbp_bp_options fp16_opts(const char *variant, int raw_fp16)
{
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = SARBP_FP16;
    o.variant = variant;
    o.raw_fp16 = raw_fp16;
    return o;
}

static sarbp_image *form16(const sarbp_phd *p, const sarbp_grid *g, const char *variant, int raw_fp16)
{
    sarbp_bp_options o = fp16_opts(variant, raw_fp16);
    return tu_form(p, g, &sarbp_backend_cuda, SARBP_FP16, &o);
}

/* Number of pixels that are not finite (inf or NaN). */
static size_t nonfinite(const sarbp_image *img)
{
    size_t bad = 0, n = img->grid.nx * img->grid.ny;
    for (size_t i = 0; i < n; i++)
        bad += !isfinite(img->data[i].re) || !isfinite(img->data[i].im);
    return bad;
}

static double ser(const sarbp_image *t, const sarbp_image *r)
{
    return tu_ser_c32(t->data, r->data, r->grid.nx * r->grid.ny);
}

/* SER over the w x w window centred on pixel (cx, cy) (clipped to the image). */
static double local_ser(const sarbp_image *t, const sarbp_image *r, size_t cx, size_t cy, size_t w)
{
    const size_t nx = r->grid.nx, ny = r->grid.ny, h = w / 2;
    size_t x0 = cx > h ? cx - h : 0, y0 = cy > h ? cy - h : 0;
    size_t x1 = cx + h + 1 < nx ? cx + h + 1 : nx, y1 = cy + h + 1 < ny ? cy + h + 1 : ny;
    double s = 0, e = 0;
    for (size_t y = y0; y < y1; y++)
        for (size_t x = x0; x < x1; x++) {
            const sarbp_c32 a = r->data[y * nx + x], b = t->data[y * nx + x];
            double dr = (double)a.re - b.re, di = (double)a.im - b.im;
            s += (double)a.re * a.re + (double)a.im * a.im;
            e += dr * dr + di * di;
        }
    return e == 0 ? INFINITY : 10 * log10(s / e);
}

static double mag(const sarbp_image *img, size_t ix, size_t iy)
{
    const sarbp_c32 v = img->data[iy * img->grid.nx + ix];
    return hypot(v.re, v.im);
}

/* ---- awkward sizes --------------------------------------------------------- */

static void check_sizes(size_t nx, size_t ny, size_t npulses)
{
    sarbp_phd *p = tu_clutter_scene(npulses);
    sarbp_grid g = {nx, ny, 0.2, 0.2, 0.7, -1.1, 0, 0, 0, NULL, 0};
    sarbp_image *ref = ref64(p, &g);
    /* ppt matters at sizes that leave partial tiles: sweep it there */
    const int sweep_ppt = nx * ny < 4096;
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            static const int ppts[] = {0, 1, 2, 4, 8};
            const int tiled = (tu_variant(v)->flags & SARBP_CUDA_VARIANT_TILED) != 0;
            const size_t nppt = (!tiled || !sweep_ppt || !raw) ? 1 : 5;
            for (size_t k = 0; k < nppt; k++) {
                sarbp_bp_options o = fp16_opts(tu_variant(v)->name, raw);
                o.ppt = ppts[k];
                sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP16, &o);
                double s = ser(img, ref);
                assert_int_equal(nonfinite(img), 0);
                tu_bar_min(s, FP16_WORST_DB, FP16_HEADROOM_DB, "dB",
                           "gpu fp16 %s raw %s ppt %d %zux%zux%zu SER", tu_variant(v)->name,
                           raw ? "fp16" : "fp32", ppts[k], nx, ny, npulses);
                sarbp_image_free(img);
            }
        }
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

static void test_fp16_sizes(void **state)
{
    (void)state;
    check_sizes(1, 1, 1);
    check_sizes(17, 33, 255);
    check_sizes(17, 33, 257);
    check_sizes(512, 512, 2048);
}

/* ---- absolute level -------------------------------------------------------- */

static void test_fp16_unit_target(void **state)
{
    (void)state;
    const size_t P = 257;
    sarbp_phd *p = tu_targets(NULL, 0, P);
    sarbp_grid g = {65, 65, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    /* the same processing in FP64: a target on a bin reads P times the
     * interpolation kernel's on-bin gain, not P */
    sarbp_image *r = ref64(p, &g);
    const double want = hypot(r->data[32 * 65 + 32].re, r->data[32 * 65 + 32].im);
    sarbp_image_free(r);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            sarbp_image *img = form16(p, &g, tu_variant(v)->name, raw);
            size_t c = 32 * 65 + 32;
            double bv;
            size_t best = tu_peak_index(img, &bv);
            double rel = bv / want - 1;
            print_message("fp16 %-4s raw %s: peak %.6f at %zu (FP64 %.6f, P = %zu)\n",
                          tu_variant(v)->name, raw ? "fp16" : "fp32", bv, best, want, P);
            assert_int_equal(best, c);
            tu_bar_max(fabs(rel), UNIT_REL_ERR, UNIT_REL_HEADROOM, "",
                       "gpu fp16 %s raw %s unit target |peak/peak64 - 1|", tu_variant(v)->name,
                       raw ? "fp16" : "fp32");
            sarbp_image_free(img);
        }
    }
    sarbp_phd_free(p);
}

/* ---- impulse response ------------------------------------------------------ */

static sarbp_pt_result *measure(const sarbp_image *img, const char *what)
{
    sarbp_pt_options opt = {1, 0, 0, 0.0};
    sarbp_pt_result *r;
    tu_ok(sarbp_pointtarget_measure(img, &opt, &r));
    print_message("%-24s peak %.4f at (%.4f, %.4f) m\n", what, r->peak, r->x, r->y);
    for (int c = 0; c < 2; c++)
        print_message("  cut %d (%s): IRW %.4f m  PSLR %7.3f dB  ISLR %7.3f dB\n", c,
                      c == 0 ? "x, range  " : "y, azimuth", r->cut[c].irw_m, r->cut[c].pslr_db,
                      r->cut[c].islr_db);
    return r;
}

/* test_impulse.c's geometry: a unit target at the origin, 512 pulses over 4
 * degrees, no window, 129 x 129 pixels at 0.15 m - the spacing at which the
 * range carrier does not straddle the patch's Nyquist frequency and 14
 * sidelobes a side fit in the measured patch (see test_impulse.c and
 * quality.h). x is the range cut, y the azimuth cut. */
static void test_fp16_impulse(void **state)
{
    (void)state;
    sarbp_phd *p = tu_targets(NULL, 0, 512);
    const sarbp_grid g = {129, 129, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *i64 = ref64(p, &g);
    sarbp_pt_result *r64 = measure(i64, "FP64 (CPU)");
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            sarbp_image *img = form16(p, &g, tu_variant(v)->name, raw);
            char what[64];
            snprintf(what, sizeof what, "FP16 %s raw %s", tu_variant(v)->name, raw ? "fp16" : "fp32");
            sarbp_pt_result *r = measure(img, what);
            for (int c = 0; c < 2; c++) {
                double dp = r->cut[c].pslr_db - r64->cut[c].pslr_db;
                double di = r->cut[c].islr_db - r64->cut[c].islr_db;
                tu_bar_max(fabs(dp), IMPULSE_DIFF_DB, IMPULSE_HEADROOM_DB, "dB",
                           "gpu fp16 %s cut %d |PSLR - FP64's|", what, c);
                tu_bar_max(fabs(di), IMPULSE_DIFF_DB, IMPULSE_HEADROOM_DB, "dB",
                           "gpu fp16 %s cut %d |ISLR - FP64's|", what, c);
            }
            sarbp_pointtarget_free(r);
            sarbp_image_free(img);
        }
    }
    sarbp_pointtarget_free(r64);
    sarbp_image_free(i64);
    sarbp_phd_free(p);
}

/* ---- dynamic range: targets 80 dB apart ------------------------------------ */

/* A unit target and three of amplitude 1e-4 (-80 dB), 1024 pulses. All sit
 * on pixel centres (no straddle loss); the weak ones lie off both axes
 * through the strong one and 30-40 m from it, where its sidelobes are about
 * -100 dB: the FP64 image shows each weak peak 80 dB below the strong one.
 * Expected error with raw samples in FP16: rounding the unit target's
 * samples leaves about 1.5e-4 rms each; range compression spreads that over
 * the bins (/sqrt(K)), backprojection sums it incoherently (sqrt(P)) and a
 * weak target coherently (P): SER about 54 dB at a weak peak, about 40 dB
 * over a 7 x 7 window (the mainlobe covers ~2 pixels). A CPU emulation of
 * the FP16 storage (power-of-two block scales, FP64 backprojection)
 * measured 39.4-40.7 dB there and peaks within 0.05 dB; with raw samples in
 * FP32, 63.7-65.3 dB. A weak target flushed to zero would read about 0 dB.
 *
 * The strong target is deliberately NOT at the scene origin: there every
 * raw sample is exactly 1 + (the weak targets' 1e-4), so the real parts
 * round to 1 with no dither and FP16 raw samples cannot carry a sub-LSB
 * (-80 dB) signal - the emulation lost 4-4.7 dB of each weak peak and read
 * 8 dB local SER. That case is formed too: asserted with raw samples in
 * FP32 (profiles only in FP16: the emulation read 63-65 dB); with raw
 * samples in FP16 only the global SER is asserted and the weak targets'
 * figures are printed, as a known limit of raw_fp16 = 1. */
#define DR_WIN 7

static void check_dynamic_range(double sx, double sy, int assert_raw16)
{
    const sarbp_target t[] = {
        {sx, sy, 0, 1}, {30.0, 24.6, 0, 1e-4}, {-27.2, 31.0, 0, 1e-4}, {25.6, -29.4, 0, 1e-4},
    };
    const size_t nt = sizeof t / sizeof *t;
    sarbp_phd *p = tu_targets(t, nt, 1024);
    const sarbp_grid g = {401, 401, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *i64 = ref64(p, &g);
    size_t px[4], py[4];
    double m64[4];
    for (size_t k = 0; k < nt; k++) {
        px[k] = (size_t)lround(t[k].x / g.dx + (g.nx - 1) / 2.0);
        py[k] = (size_t)lround(t[k].y / g.dy + (g.ny - 1) / 2.0);
        m64[k] = mag(i64, px[k], py[k]);
        /* the target's own pixel is its peak in the reference */
        for (size_t y = py[k] - 1; y <= py[k] + 1; y++)
            for (size_t x = px[k] - 1; x <= px[k] + 1; x++)
                assert_true(mag(i64, x, y) <= m64[k]);
    }
    print_message("strong target at (%.1f, %.1f) m\n", sx, sy);
    for (size_t k = 1; k < nt; k++) {
        double rel = 20 * log10(m64[k] / m64[0]);
        print_message("FP64: weak target %zu at (%.1f, %.1f) m: %.2f dB below the strong one\n", k,
                      t[k].x, t[k].y, -rel);
        assert_true(fabs(rel + 80) <= 2); /* the scene is what it claims */
    }
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            const int check = !raw || assert_raw16;
            sarbp_image *img = form16(p, &g, tu_variant(v)->name, raw);
            assert_int_equal(nonfinite(img), 0);
            double s = ser(img, i64);
            tu_bar_min(s, FP16_WORST_DB, FP16_HEADROOM_DB, "dB",
                       "gpu fp16 %s raw %s 80 dB scene (strong at %.1f,%.1f) global SER",
                       tu_variant(v)->name, raw ? "fp16" : "fp32", sx, sy);
            for (size_t k = 1; k < nt; k++) {
                double d = 20 * log10(mag(img, px[k], py[k]) / m64[k]);
                double ls = local_ser(img, i64, px[k], py[k], DR_WIN);
                if (!check) {
                    print_message("  weak target %zu: peak FP16 - FP64 %+.4f dB, local SER (%d x %d) "
                                  "%.1f dB: not asserted (raw FP16, strong target at the origin)\n",
                                  k, d, DR_WIN, DR_WIN, ls);
                    continue;
                }
                tu_bar_max(fabs(d), raw ? DR_PEAK_RAW16_DB : DR_PEAK_RAW32_DB, DR_PEAK_HEADROOM_DB,
                           "dB", "gpu fp16 %s raw %s weak target %zu |peak - FP64's|", tu_variant(v)->name,
                           raw ? "fp16" : "fp32", k);
                tu_bar_min(ls, raw ? DR_LOCAL_RAW16_DB : DR_LOCAL_RAW32_DB, DR_LOCAL_HEADROOM_DB, "dB",
                           "gpu fp16 %s raw %s weak target %zu local SER (%dx%d)", tu_variant(v)->name,
                           raw ? "fp16" : "fp32", k, DR_WIN, DR_WIN);
            }
            sarbp_image_free(img);
        }
    }
    sarbp_image_free(i64);
    sarbp_phd_free(p);
}

static void test_fp16_dynamic_range(void **state)
{
    (void)state;
    check_dynamic_range(2.2, -1.4, 1);
    check_dynamic_range(0, 0, 0);
}

/* ---- amplitude scale ------------------------------------------------------- */

/* The scene with every sample multiplied by s. Its samples are 15 rms (36
 * at most); at 1e6 they are ~1e7, far beyond FP16's 65504, and at 1e-6 ~1e-5,
 * below FP16's smallest normal number (6.1e-5), where only a few bits are
 * left: only a working per-block scale keeps them. Each scaled image is
 * compared with its own FP64 reference; its SER must stay within
 * SCALE_DIFF_DB (plus headroom) of the unscaled scene's (same variant and
 * raw format). */

static void test_fp16_amplitude_scale(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(512);
    const sarbp_grid g = {512, 512, 0.2, 0.2, 0.7, -1.1, 0, 0, 0, NULL, 0};
    static const double scales[] = {1e6, 1e-6};
    sarbp_phd *ps[2];
    sarbp_image *refs[2];
    for (size_t k = 0; k < 2; k++) {
        tu_ok(sarbp_phd_slice(p, 0, p->npulses, &ps[k]));
        const size_t n = p->npulses * p->nsamples;
        for (size_t i = 0; i < n; i++) {
            ps[k]->data[i].re = (float)(ps[k]->data[i].re * scales[k]);
            ps[k]->data[i].im = (float)(ps[k]->data[i].im * scales[k]);
        }
        refs[k] = ref64(ps[k], &g);
        assert_int_equal(nonfinite(refs[k]), 0);
    }
    sarbp_image *ref = ref64(p, &g);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            sarbp_image *img = form16(p, &g, tu_variant(v)->name, raw);
            double s1 = ser(img, ref);
            tu_bar_min(s1, FP16_WORST_DB, FP16_HEADROOM_DB, "dB", "gpu fp16 %s raw %s scale 1 SER",
                       tu_variant(v)->name, raw ? "fp16" : "fp32");
            sarbp_image_free(img);
            for (size_t k = 0; k < 2; k++) {
                img = form16(ps[k], &g, tu_variant(v)->name, raw);
                size_t bad = nonfinite(img);
                print_message("fp16 %-4s raw %s: scale %g: %zu non-finite pixels\n", tu_variant(v)->name,
                              raw ? "fp16" : "fp32", scales[k], bad);
                assert_int_equal(bad, 0);
                double s = ser(img, refs[k]);
                tu_bar_max(fabs(s - s1), SCALE_DIFF_DB, SCALE_DIFF_HEADROOM_DB, "dB",
                           "gpu fp16 %s raw %s scale %g |SER - scale 1's|", tu_variant(v)->name,
                           raw ? "fp16" : "fp32", scales[k]);
                sarbp_image_free(img);
            }
        }
    }
    sarbp_image_free(ref);
    for (size_t k = 0; k < 2; k++) {
        sarbp_image_free(refs[k]);
        sarbp_phd_free(ps[k]);
    }
    sarbp_phd_free(p);
}

/* ---- streaming and banding ------------------------------------------------- */

/* One block of 600 pulses, ten blocks of 64 (the last partial), and ten
 * blocks of 64 over several bands of rows. Blocks of different pulses get
 * different scales, but a power of two only shifts the FP16 exponent: the
 * stored significands are the same (short of subnormals, far below the
 * error that matters), so streaming changes only the FP32 accumulation
 * order, as in FP32 (124 dB there). Banding with the same blocks changes
 * nothing but the band origin of the tiles. Hence FP32's bar, 100 dB, for
 * both. */
static void test_fp16_streaming_and_banding(void **state)
{
    (void)state;
    sarbp_phd *p = tu_clutter_scene(600);
    const sarbp_grid g = {700, 650, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *ref = ref64(p, &g);
    /* the budget depends on the block and the raw format, not the variant */
    size_t budget[2], passes[2];
    for (int raw = 0; raw < 2; raw++) {
        sarbp_bp_options o = fp16_opts(NULL, raw);
        o.pulse_block = 64;
        budget[raw] = tu_banding_budget(p, &g, &o, &passes[raw]);
    }
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            sarbp_bp_options one = fp16_opts(tu_variant(v)->name, raw);
            one.pulse_block = 600;
            sarbp_image *a = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP16, &one);
            sarbp_bp_options streamed = one;
            streamed.pulse_block = 64;
            sarbp_image *b = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP16, &streamed);
            sarbp_bp_options banded = streamed;
            banded.gpu_mem = budget[raw];
            sarbp_image *c = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP16, &banded);
            assert_int_equal(nonfinite(a) + nonfinite(b) + nonfinite(c), 0);
            double s_a = ser(a, ref), s_ab = ser(b, a), s_bc = ser(c, b), s_ac = ser(c, a);
            const char *rf = raw ? "fp16" : "fp32";
            print_message("fp16 %-4s raw %s: banded in %zu bands, gpu_mem %.2f MiB\n", tu_variant(v)->name,
                          rf, passes[raw], banded.gpu_mem / 1048576.0);
            assert_true(passes[raw] >= 2);
            tu_bar_min(s_a, FP16_WORST_DB, FP16_HEADROOM_DB, "dB",
                       "gpu fp16 %s raw %s one block vs FP64 SER", tu_variant(v)->name, rf);
            tu_bar_min(s_ab, STREAM_DB, STREAM_HEADROOM_DB, "dB",
                       "gpu fp16 %s raw %s streamed vs one block SER", tu_variant(v)->name, rf);
            tu_bar_min(s_bc, STREAM_DB, STREAM_HEADROOM_DB, "dB",
                       "gpu fp16 %s raw %s banded vs streamed SER", tu_variant(v)->name, rf);
            tu_bar_min(s_ac, STREAM_DB, STREAM_HEADROOM_DB, "dB",
                       "gpu fp16 %s raw %s banded vs one block SER", tu_variant(v)->name, rf);
            sarbp_image_free(a);
            sarbp_image_free(b);
            sarbp_image_free(c);
        }
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

/* ---- real data ------------------------------------------------------------- */

static void test_fp16_gotcha(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *in[] = {tu_gotcha_dir()};
    sarbp_phd *p;
    tu_ok(sarbp_phd_load(in, 1, &p));
    const sarbp_grid g = {512, 512, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *ref = ref64(p, &g);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        for (int raw = 1; raw >= 0; raw--) {
            sarbp_image *img = form16(p, &g, tu_variant(v)->name, raw);
            assert_int_equal(nonfinite(img), 0);
            double s = ser(img, ref);
            tu_bar_min(s, raw ? GOTCHA_RAW16_DB : GOTCHA_RAW32_DB, FP16_HEADROOM_DB, "dB",
                       "gpu fp16 %s raw %s Gotcha (%zu pulses) SER", tu_variant(v)->name,
                       raw ? "fp16" : "fp32", p->npulses);
            sarbp_image_free(img);
        }
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

int main(void)
{
    const int pre = tu_gpu_precondition("test_gpu_fp16");
    if (pre) return pre;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_unit_target),
        cmocka_unit_test(test_fp16_sizes),
        cmocka_unit_test(test_fp16_impulse),
        cmocka_unit_test(test_fp16_dynamic_range),
        cmocka_unit_test(test_fp16_amplitude_scale),
        cmocka_unit_test(test_fp16_streaming_and_banding),
        cmocka_unit_test(test_fp16_gotcha),
    };
    return tu_run_tests(tests);
}
