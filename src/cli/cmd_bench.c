/* cmd_bench.c - sarbp bench: throughput (pixel-pulse pairs per second) and
 * accuracy (SER against FP64; on the CPU also against the exact image on a
 * window) of the backprojectors on a Gotcha-like simulated scene.
 * Benchmarks are measurements, not tests. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sarbp/ffbp.h"

/* The variants in the table marked for bench's default list: "v3,v3a,v4". */
/* The command's one session (made by cmd_bench, freed before it returns):
 * every form of the bench takes its plans' resources from it, so that the
 * repetitions reuse what the first one made, as a caller forming image
 * after image does. */
static sarbp_session *bench_session;

static void bench_default_variants(char *buf, size_t n)
{
    size_t nv, k = 0;
    const sarbp_cuda_variant *vt = sarbp_cuda_variants(&nv);
    buf[0] = '\0';
    for (size_t i = 0; i < nv && k < n; i++)
        if (vt[i].flags & SARBP_CUDA_VARIANT_BENCH) {
            const int w = snprintf(buf + k, n - k, "%s%s", k ? "," : "", vt[i].name);
            if (w < 0) break;
            k += (size_t)w;
        }
}

static void help(void)
{
    char default_list[256];
    bench_default_variants(default_list, sizeof default_list);
    printf(
"usage: sarbp bench [--backend cpu|cuda] [options]\n"
"\n"
"Measures backprojection throughput on a Gotcha-like simulated scene (10 km,\n"
"45 degrees, X band 9.6 GHz, 640 MHz, point targets plus clutter) and the\n"
"accuracy of each path as SER against the exact image (FP64 direct summation\n"
"over every sample: no FFT, no interpolation) and against an FP64 image made\n"
"from the same range profiles (arithmetic only).\n"
"\n"
"  --backend B      cpu (default) or cuda\n"
"  --algorithm A    bp (default: direct backprojection, the tables below), ffbp\n"
"                   or bp,ffbp; ffbp is fast factorized backprojection, FP32.\n"
"                   cpu: against direct FP32 backprojection (below). cuda: at its\n"
"                   default parameters, cubic 4x: device time, equivalent Gbp/s,\n"
"                   SER against exact; then end to end through form, range\n"
"                   compression on the device and the image copied back: median\n"
"                   total of --reps runs after a cold one, equivalent Tbp/s, stage\n"
"                   split, SER against exact\n"
"  --problem P      narrow (default: 512 samples, the grid covers ~102 m, so pixels\n"
"                   are far finer than the resolution) or wide (2048 samples, a\n"
"                   480 m swath at 0.117 m, about half the resolution: 4x the bins)\n"
"  --grid NXxNY     image size (default 1024x1024 cpu, 4096x4096 cuda)\n"
"  --spacing D      pixel spacing in metres (default: from the problem)\n"
"  --pulses N       pulses (default 512 cpu, 2048 cuda)\n"
"  --samples K      samples per pulse (default from the problem)\n"
"  --threads LIST   cpu: thread counts to run, e.g. 1,2 (default 1..all cores)\n"
"  --interp LIST    cuda: interpolation configurations KERNEL[:UPSAMPLE], e.g.\n"
"                   quadratic:8,cubic:4 (default quadratic:8,linear:8,cubic:4,cubic:8;\n"
"                   form's default is quadratic:8, cubic:4 with fp16 or mixed, --fast\n"
"                   linear:8); quadratic bins have one form (value FP32, slope and\n"
"                   curvature FP16, 16 bytes): its fp16 and mixed columns are n/a\n"
"  --variant LIST   cuda: comma-separated NAME[:TXxTY[:PPT[:MINB]]] (default %s);\n"
"                   MINB 12 or 16 compiles a 64-thread, 8-pixel kernel for that many\n"
"                   resident blocks per SM (-1: none), where the variant takes it;\n"
"                   the variants, what each changes and needs (* form's default):\n",
           default_list);
    cli_flush_stdout(); /* keeps errno if that overflowed the buffer and failed */
    size_t nv;
    const sarbp_cuda_variant *vt = sarbp_cuda_variants(&nv);
    for (size_t i = 0; i < nv; i++)
        printf("                   %-4s%s %s\n                         %s\n", vt[i].name,
               vt[i].flags & SARBP_CUDA_VARIANT_DEFAULT ? "*" : " ", vt[i].summary,
               vt[i].requires);
    printf(
"  --precision LIST cuda: any of fp32, fp16, mixed (default all three): profiles in\n"
"                   FP32, FP16, or mixed (cubic bins' A, B FP32 and C, D FP16: 24\n"
"                   bytes instead of 32; linear bins are FP32: no mixed row), side by\n"
"                   side (range and phase FP32 in all); the end-to-end lines run\n"
"                   form's default kernel of each precision\n"
"  --exact-window N cuda, ffbp: the exact image covers the central N x N pixels (default 64)\n"
"  --pulse-block N  cuda: pulses per streamed block in the end-to-end runs (default:\n"
"                   the back end's)\n"
"  --max-error-db E ffbp: the accuracy asked of the factorization, dB (default -60:\n"
"                   SER >= 60 dB against direct backprojection)\n"
"  --bp-rows N      ffbp: direct backprojection, the reference, forms only N rows at the\n"
"                   centre (default 256) and its time is scaled to the whole image\n"
"  --reps N         timed repetitions per configuration, median reported (default 5)\n"
"  --device D       cuda device N (default 0); a list such as 0,1 or 'all' adds a\n"
"                   scaling table: fp32 end to end on the first device alone, then\n"
"                   on all of them (bands of rows, one thread each), per device and\n"
"                   total throughput\n"
"  --json           one JSON object per line instead of the table (undefined\n"
"                   figures are null, infinite ones the strings \"inf\", \"-inf\")\n"
"  -q, --quiet      no notes on stderr (errors still)\n"
"  -v, --verbose    also say how the scene was made and how long it took\n"
"\n"
"cpu: per interpolation kernel (quadratic 8x, the default; cubic 4x; linear 8x) and thread\n"
"count, the FP32 tiled path's Mbp/s (wall clock, median), per core, and per\n"
"core-second of process CPU time (steadier on a shared machine); its SER against\n"
"the FP64 image with the same kernel over the full image and against the exact\n"
"image (direct summation, precision exact) on the 64x64 window at the centre;\n"
"then the FP64 reference's Mbp/s (all cores, one run) and its own SER against\n"
"the exact image.\n"
"cuda: per interpolation configuration, kernel-only time (CUDA events, median),\n"
"Gbp/s (GFLOP/s = 43 flops per pair, seed 003's count, in --json), SER against\n"
"the exact image on the central window and against the FP64 GPU kernel v1 over\n"
"the full image, per precision with the fp16/fp32 and mixed/fp32 speed ratios;\n"
"then 'form' end to end with pulses streamed (default interpolation; median of --reps\n"
"after a cold run): total time split into layout, setup, read, transfer, range\n"
"compression, backprojection (device times), the wait for the fresh image's memory\n"
"and finish, its ratio to the kernel-only time, the device memory of pulse data and\n"
"image, and the total when forming into a reused image (sarbp_form_phd_into: no page\n"
"faults), for fp32, for fp16 with raw samples uploaded as FP16 and as FP32, and for\n"
"mixed.\n"
"ffbp (cpu): the factorization sarbp_ffbp_choose picks for --max-error-db (printed\n"
"with the predicted error), then per thread count: direct backprojection's time (from\n"
"--bp-rows rows, scaled), FFBP's time, its equivalent rate (pixels x pulses / time:\n"
"what direct backprojection would need to match it; labelled equivalent because FFBP\n"
"does far fewer operations), per core, the speed-up, SER against direct\n"
"backprojection (those rows) and against the exact image (--exact-window, default\n"
"64), and the predicted SER.\n");
}

static double ser_db(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = (double)r[i].re - t[i].re, di = (double)r[i].im - t[i].im;
        s += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    return e == 0 ? INFINITY : 10 * log10(s / e);
}

/* JSON members: ,"key":value with NaN as null (cli_json_num); the first
 * member of an object passes first = 1. */
static void jnum(const char *key, double v)
{
    printf(",\"%s\":", key);
    cli_json_num(v);
}

static void jstr(const char *key, const char *v, int first)
{
    printf("%s\"%s\":", first ? "{" : ",", key);
    cli_json_str(v);
}

static sarbp_status make_scene(size_t npulses, size_t nsamples, sarbp_phd **out)
{
    sarbp_target *cl = NULL;
    size_t nc = 200;
    SARBP_TRY(sarbp_targets_clutter(nc, 45, -30, 0, 11, &cl));
    sarbp_target *all = malloc((nc + 4) * sizeof *all);
    if (!all) {
        free(cl);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    memcpy(all, cl, nc * sizeof *all);
    const sarbp_target bright[] = {{0, 0, 0, 10}, {20, 10, 0, 5}, {-33.3, 21.7, 0, 8}, {40.1, -44.4, 0, 3}};
    memcpy(all + nc, bright, sizeof bright);
    free(cl);
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.nsamples = nsamples;
    sp.targets = all;
    sp.ntargets = nc + 4;
    sarbp_status st = sarbp_simulate(&sp, out);
    free(all);
    return st;
}

static sarbp_status compress_with(const sarbp_phd *p, const sarbp_rc_params *rc,
                                  sarbp_precision prec, sarbp_profiles **out)
{
    sarbp_rc_plan *plan;
    SARBP_TRY(sarbp_rc_plan_create(p, rc, prec, p->npulses, &plan));
    sarbp_status st = sarbp_profiles_alloc(p->npulses, sarbp_rc_plan_nbins(plan), prec, out);
    if (!st) st = sarbp_rc_execute(plan, 0, p->npulses, p->data, *out);
    sarbp_rc_plan_free(plan);
    return st;
}

#define SCALING_REPS_MAX 16

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* CPU time of the whole process (every thread), for rates per core-second
 * that a busy shared machine disturbs less than wall-clock rates. */
static double process_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) ? NAN : (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* SER of the window (x0, y0, w) of a full image t[g->ny][g->nx] against r[w.ny][w.nx]. */
static double window_ser_db(const sarbp_c32 *t, const sarbp_grid *g, const sarbp_grid *w, size_t x0,
                            size_t y0, const sarbp_c32 *r)
{
    double s = 0, e = 0;
    for (size_t iy = 0; iy < w->ny; iy++)
        for (size_t ix = 0; ix < w->nx; ix++) {
            const sarbp_c32 a = t[(y0 + iy) * g->nx + x0 + ix], b = r[iy * w->nx + ix];
            const double dr = (double)b.re - a.re, di = (double)b.im - a.im;
            s += (double)b.re * b.re + (double)b.im * b.im;
            e += dr * dr + di * di;
        }
    return e == 0 ? INFINITY : 10 * log10(s / e);
}

/* The exact image (FP64 direct summation, cpu back end, all cores) of window w */
static sarbp_status exact_window(const sarbp_phd *p, const sarbp_grid *w, sarbp_c32 **out)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = SARBP_EXACT;
    sarbp_image *im = NULL;
    SARBP_TRY(sarbp_form_phd(bench_session, p, w, &sarbp_backend_cpu, &rc, &o, NULL, &im, NULL));
    *out = im->data;
    im->data = NULL;
    sarbp_image_free(im);
    return SARBP_OK;
}

#define EXACT_WINDOW 64

/* Per interpolation kernel (cubic, the default, then linear): the FP32
 * tiled path's rate per thread count (median of reps runs, wall clock, and
 * per core-second of process CPU time), its SER against the FP64 image with
 * the same kernel (full image) and against the exact image (direct
 * summation, through the cpu back end at precision "exact") on the
 * EXACT_WINDOW^2 window at the centre; the FP64 reference's rate (all cores,
 * one run) and its own SER against the exact image. */
static int bench_cpu(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
                     int reps, int json)
{
    const char *cmd = "bench";
    static const sarbp_interp kernels[] = {SARBP_INTERP_QUADRATIC, SARBP_INTERP_CUBIC,
                                           SARBP_INTERP_LINEAR};
    const size_t npix = g->nx * g->ny;
    const double pairs = (double)npix * (double)p->npulses;
    size_t x0, y0;
    const sarbp_grid w = sarbp_grid_centre_window(g, EXACT_WINDOW, &x0, &y0);
    sarbp_c32 *img32 = calloc(npix, sizeof *img32), *ref32 = calloc(npix, sizeof *ref32);
    sarbp_c64 *img64 = calloc(npix, sizeof *img64);
    sarbp_status st = (!img32 || !ref32 || !img64) ? sarbp_error(SARBP_ERR_NOMEM, "out of memory") : SARBP_OK;

    /* the exact image on the window: all pulses, the same windows as compress() */
    sarbp_c32 *exact = NULL;
    double t_exact = sarbp_now_s();
    if (!st) st = exact_window(p, &w, &exact);
    t_exact = sarbp_now_s() - t_exact;
    if (!st && !json) {
        printf("cpu back end: %zu x %zu pixels (%.4f m), %zu pulses, %zu samples (%d cores), "
               "median of %d runs; quadratic at %dx, cubic at %dx, linear at %dx upsampling\n",
               g->nx, g->ny, g->dx, p->npulses, p->nsamples, sarbp_cpu_count(), reps,
               sarbp_interp_default_upsample(SARBP_INTERP_QUADRATIC),
               sarbp_interp_default_upsample(SARBP_INTERP_CUBIC),
               sarbp_interp_default_upsample(SARBP_INTERP_LINEAR));
        printf("SER against FP64 (same kernel, full image) and against the exact image (direct "
               "summation, %zu x %zu window at the centre, %.1f s)\n", w.nx, w.ny, t_exact);
        printf("%-7s %8s %12s %12s %15s %10s %10s\n", "interp", "threads", "fp32 Mbp/s",
               "fp32 /core", "/core-second", "SER fp64", "SER exact");
    }
    for (size_t kk = 0; !st && kk < sizeof kernels / sizeof *kernels; kk++) {
        const char *kname = sarbp_interp_name(kernels[kk]);
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        rcp.interp = kernels[kk];
        rcp.upsample = sarbp_interp_default_upsample(kernels[kk]);
        sarbp_profiles *p32 = NULL, *p64 = NULL;
        st = compress_with(p, &rcp, SARBP_FP32, &p32);
        if (!st) st = compress_with(p, &rcp, SARBP_FP64, &p64);
        /* the FP64 reference, once per kernel, on all cores */
        double t64 = 0;
        if (!st) {
            memset(img64, 0, npix * sizeof *img64);
            const double t0 = sarbp_now_s();
            st = sarbp_bp_cpu_fp64(p64, g, img64);
            t64 = sarbp_now_s() - t0;
            for (size_t i = 0; i < npix; i++)
                ref32[i] = (sarbp_c32){(float)img64[i].re, (float)img64[i].im};
        }
        const double ser64_exact = st ? NAN : window_ser_db(ref32, g, &w, x0, y0, exact);
        for (int k = 0; !st && k < nthreads; k++) {
            double tw[1000], tc[1000];
            for (int r = 0; !st && r < reps; r++) {
                memset(img32, 0, npix * sizeof *img32);
                const double w0 = sarbp_now_s(), c0 = process_cpu_s();
                st = sarbp_bp_cpu_fp32(p32, g, threads[k], img32);
                tc[r] = process_cpu_s() - c0;
                tw[r] = sarbp_now_s() - w0;
            }
            if (st) break;
            qsort(tw, (size_t)reps, sizeof *tw, cmp_double);
            qsort(tc, (size_t)reps, sizeof *tc, cmp_double);
            const double r32 = pairs / tw[reps / 2] / 1e6, rcpu = pairs / tc[reps / 2] / 1e6;
            const double ser = ser_db(img32, ref32, npix);
            const double serx = window_ser_db(img32, g, &w, x0, y0, exact);
            if (json) {
                jstr("backend", "cpu", 1);
                jstr("interp", kname, 0);
                printf(",\"upsample\":%d,\"threads\":%d,\"exact_window\":%zu", rcp.upsample,
                       threads[k], w.nx);
                jnum("fp32_mbps", r32);
                jnum("fp32_mbps_per_core", r32 / threads[k]);
                jnum("fp32_mbps_per_cpu_second", rcpu);
                jnum("ser_db", ser);
                jnum("ser_exact_db", serx);
                printf("}\n");
            } else
                printf("%-7s %8d %12.1f %12.1f %15.1f %10.1f %10.1f\n", kname, threads[k], r32,
                       r32 / threads[k], rcpu, ser, serx);
            cli_flush_stdout();
        }
        if (!st) {
            if (json) {
                jstr("backend", "cpu", 1);
                jstr("interp", kname, 0);
                printf(",\"upsample\":%d,\"fp64_threads\":%d", rcp.upsample, sarbp_cpu_count());
                jnum("fp64_mbps", pairs / t64 / 1e6);
                jnum("fp64_ser_exact_db", ser64_exact);
                printf("}\n");
            } else
                printf("%-7s %8s %12.1f %12s %15s %10s %10.1f   (fp64 reference, all cores)\n", kname,
                       "fp64", pairs / t64 / 1e6, "", "", "", ser64_exact);
            cli_flush_stdout();
        }
        sarbp_profiles_free(p32);
        sarbp_profiles_free(p64);
    }
    free(exact);
    free(img32);
    free(img64);
    free(ref32);
    return st ? cli_fail_status(cmd, st) : CLI_OK;
}

#define FFBP_REF_ROWS 256

/* Fast factorized backprojection (FP32, the factorization sarbp_ffbp_choose
 * picks for max_error_db) against direct FP32 backprojection of the same
 * profiles (cubic, the default range compression): per thread count, the
 * FFBP time (median of reps), its "equivalent" rate (pixels x pulses over
 * its time: the rate direct backprojection would need to match it), per
 * core, and the speed-up over direct backprojection timed on the same
 * threads; SER against direct backprojection and against the exact image on
 * the central window. Direct backprojection runs on ref_rows rows at the
 * centre (all of them when ref_rows >= ny) and its time is scaled to the
 * whole image; the SER against it is over those rows. */
static int bench_ffbp(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
                      int reps, double max_error_db, size_t ref_rows, size_t exact_n, int json)
{
    const char *cmd = "bench";
    const size_t npix = g->nx * g->ny;
    const double pairs = (double)npix * (double)p->npulses;
    size_t x0, y0;
    const sarbp_grid w = sarbp_grid_centre_window(g, exact_n, &x0, &y0);
    sarbp_rc_params rcp;
    sarbp_rc_params_default(&rcp);
    sarbp_rc_params_default_for(&rcp, SARBP_FP32, 1);
    sarbp_profiles *p32 = NULL;
    sarbp_c32 *img = calloc(npix, sizeof *img), *exact = NULL, *ref = NULL;
    sarbp_status st = img ? SARBP_OK : sarbp_error(SARBP_ERR_NOMEM, "out of memory for the image");
    if (!st) st = compress_with(p, &rcp, SARBP_FP32, &p32);
    if (!st) p32->interp = rcp.interp;
    /* the band of rows direct backprojection forms: the centre, on its tiles */
    if (ref_rows > g->ny) ref_rows = g->ny;
    size_t r0 = (g->ny - ref_rows) / 2 / 16 * 16;
    if (r0 + ref_rows > g->ny) r0 = g->ny - ref_rows;
    const sarbp_region band = {r0, ref_rows};
    if (!st) {
        ref = calloc(ref_rows * g->nx, sizeof *ref);
        if (!ref) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for the reference rows");
    }
    double t_exact = sarbp_now_s();
    if (!st) st = exact_window(p, &w, &exact);
    t_exact = sarbp_now_s() - t_exact;
    sarbp_ffbp_params prm;
    double pred = 0, t_choose = sarbp_now_s();
    if (!st) st = sarbp_ffbp_choose(p32, g, max_error_db, &prm, &pred);
    t_choose = sarbp_now_s() - t_choose;
    sarbp_ffbp_prediction pd = {0};
    if (!st) st = sarbp_ffbp_predict(p32, g, &prm, &pd);
    if (!st && !json) {
        printf("ffbp, cpu: %zu x %zu pixels (%.4f m), %zu pulses, %zu samples (%d cores), median of "
               "%d runs, cubic at %dx\n", g->nx, g->ny, g->dx, p->npulses, p->nsamples,
               sarbp_cpu_count(), reps, rcp.upsample);
        printf("factorization for %.0f dB (chosen in %.2f s): base %zu, merge %zu, final %zu, "
               "os_theta %.2f, os_rho %.2f; %d stages, %.1f Msamples polar; predicted %.1f dB, "
               "%.3f of direct BP's time\n", max_error_db, t_choose, prm.base, prm.merge,
               prm.final_subs, prm.os_theta, prm.os_rho, pd.stages, pd.polar_samples / 1e6,
               pd.error_db, pd.cost_ratio);
        printf("direct BP (fp32 tiled) on %zu of %zu rows%s; the exact image on the central "
               "%zu x %zu window (%.1f s)\n", ref_rows, g->ny,
               ref_rows < g->ny ? ", its time scaled to the whole image" : "", w.nx, w.ny, t_exact);
        printf("%8s %10s %10s %16s %14s %9s %10s %10s %10s\n", "threads", "bp s", "ffbp s",
               "equiv Mbp/s", "equiv /core", "speed-up", "SER bp", "SER exact", "predicted");
    }
    for (int k = 0; !st && k < nthreads; k++) {
        memset(ref, 0, ref_rows * g->nx * sizeof *ref);
        const double tb0 = sarbp_now_s();
        st = sarbp_bp_cpu_fp32_rows(p32, g, band, threads[k], ref);
        const double t_bp = (sarbp_now_s() - tb0) * (double)g->ny / (double)ref_rows;
        double tw[1000];
        sarbp_ffbp_info fi = {0};
        for (int r = 0; !st && r < reps; r++) {
            memset(img, 0, npix * sizeof *img);
            const double t0 = sarbp_now_s();
            st = sarbp_ffbp_cpu_fp32(p32, g, &prm, threads[k], img, &fi);
            tw[r] = sarbp_now_s() - t0;
        }
        cli_info(2, "sarbp: bench: ffbp, %d threads, last run: stage 0 %.3f s, merges %.3f s, "
                 "last step %.3f s", threads[k], fi.stage0_s, fi.merge_s, fi.final_s);
        if (st) break;
        qsort(tw, (size_t)reps, sizeof *tw, cmp_double);
        const double t = tw[reps / 2], eq = pairs / t / 1e6;
        const double ser = ser_db(img + band.row0 * g->nx, ref, ref_rows * g->nx);
        const double serx = window_ser_db(img, g, &w, x0, y0, exact);
        if (json) {
            jstr("backend", "cpu", 1);
            jstr("algorithm", "ffbp", 0);
            printf(",\"threads\":%d,\"base\":%zu,\"merge\":%zu,\"final_subs\":%zu", threads[k],
                   prm.base, prm.merge, prm.final_subs);
            jnum("os_theta", prm.os_theta);
            jnum("os_rho", prm.os_rho);
            jnum("max_error_db", max_error_db);
            jnum("predicted_error_db", pd.error_db);
            jnum("ffbp_s", t);
            jnum("bp_s_scaled", t_bp);
            printf(",\"bp_rows\":%zu", ref_rows);
            jnum("equivalent_mbps", eq);
            jnum("equivalent_mbps_per_core", eq / threads[k]);
            jnum("speedup", t_bp / t);
            jnum("ser_bp_db", ser);
            jnum("ser_exact_db", serx);
            printf("}\n");
        } else
            printf("%8d %10.2f %10.2f %16.1f %14.1f %9.1f %10.1f %10.1f %10.1f\n", threads[k], t_bp,
                   t, eq, eq / threads[k], t_bp / t, ser, serx, -pd.error_db);
        cli_flush_stdout();
    }
    sarbp_profiles_free(p32);
    free(img);
    free(ref);
    free(exact);
    return st ? cli_fail_status(cmd, st) : CLI_OK;
}

/* NAME[:TXxTY[:PPT[:MINB]]]; the name is copied to name[16], which kc points to */
static int parse_variant(char *tok, char name[16], sarbp_cuda_kernel_cfg *kc)
{
    char *c1 = strchr(tok, ':');
    size_t len = c1 ? (size_t)(c1 - tok) : strlen(tok);
    if (len == 0 || len >= 16) return -1;
    memcpy(name, tok, len);
    name[len] = '\0';
    kc->variant = name;
    if (!c1) return 0;
    char *c2 = strchr(c1 + 1, ':');
    char tile[32] = "";
    size_t tl = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
    if (tl >= sizeof tile) return -1;
    memcpy(tile, c1 + 1, tl);
    size_t tx, ty;
    if (cli_parse_grid(tile, 1024, &tx, &ty)) return -1;
    kc->tile_x = (int)tx;
    kc->tile_y = (int)ty;
    if (!c2) return 0;
    char *c3 = strchr(c2 + 1, ':');
    if (c3) *c3 = '\0';
    int ppt, minb;
    int bad = cli_parse_int(c2 + 1, 1, 8, &ppt);
    if (c3) {
        *c3 = ':';
        bad = bad || cli_parse_int(c3 + 1, -1, 64, &minb);
        if (!bad) kc->minb = minb;
    }
    if (bad) return -1;
    kc->ppt = ppt;
    return 0;
}

struct interp_cfg {
    sarbp_interp interp;
    int upsample;
};

/* "linear:8,cubic:4,..." (KERNEL[:UPSAMPLE]) */
static int parse_interps(const char *text, struct interp_cfg *c, int max)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) return -1;
    strcpy(buf, text);
    int n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (n == max) return -1;
        char *colon = strchr(t, ':');
        int up = 0;
        if (colon) {
            *colon = '\0';
            if (cli_parse_int(colon + 1, 1, 64, &up)) return -1;
        }
        if (sarbp_interp_parse(t, &c[n].interp)) return -1;
        c[n].upsample = up ? up : sarbp_interp_default_upsample(c[n].interp);
        n++;
    }
    return n;
}

/* The median wall time of reps forms of p into one reused image (touched
 * by a first, untimed form): the steady state of a caller that forms image
 * after image into the same memory (sarbp_form_phd_into), where a fresh
 * image pays its page faults. */
static sarbp_status reused_median(const sarbp_phd *p, const sarbp_grid *g, const sarbp_rc_params *rc,
                                  const sarbp_bp_options *o, int reps, double *median_s)
{
    double t[SCALING_REPS_MAX];
    const int n = reps < 1 ? 1 : reps > SCALING_REPS_MAX ? SCALING_REPS_MAX : reps;
    sarbp_image *im = NULL;
    SARBP_TRY(sarbp_image_alloc(g, &im));
    sarbp_form_stats fs;
    sarbp_status st = sarbp_form_phd_into(bench_session, p, g, &sarbp_backend_cuda, rc, o, NULL, im, &fs);
    for (int r = 0; r < n && !st; r++) {
        st = sarbp_form_phd_into(bench_session, p, g, &sarbp_backend_cuda, rc, o, NULL, im, &fs);
        t[r] = fs.total_s;
    }
    sarbp_image_free(im);
    SARBP_TRY(st);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *median_s = t[n / 2];
    return SARBP_OK;
}

/* One fp32 form end to end with the devices of o; its stats in fs. */
static sarbp_status form_once(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *o,
                              sarbp_form_stats *fs)
{
    sarbp_rc_params rcp;
    sarbp_rc_params_default(&rcp);
    sarbp_rc_params_default_for(&rcp, o->precision, o->algorithm == SARBP_ALGO_FFBP);
    sarbp_image *im = NULL;
    SARBP_TRY(sarbp_form_phd(bench_session, p, g, &sarbp_backend_cuda, &rcp, o, NULL, &im, fs));
    sarbp_image_free(im);
    return SARBP_OK;
}


/* The scaling table: fp32 end to end on the first device alone, then on all
 * of devs; per device and total throughput. After one untimed run of each
 * (the one-time costs: contexts, cuFFT's kernels), reps runs of one and of
 * all, alternating so that drift hits both; medians, and the per-device
 * split of the median run of all. */
static int bench_scaling(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *devs,
                         size_t pulse_block, int reps, int json)
{
    const double pairs = (double)g->nx * g->ny * p->npulses;
    sarbp_bp_options one;
    sarbp_bp_options_default(&one);
    one.device = devs->devices[0];
    one.pulse_block = pulse_block;
    sarbp_bp_options all = one;
    all.ndevices = devs->ndevices;
    memcpy(all.devices, devs->devices, sizeof all.devices);
    if (reps > SCALING_REPS_MAX) reps = SCALING_REPS_MAX;
    sarbp_form_stats f1, fn, runs[SCALING_REPS_MAX];
    double t1[SCALING_REPS_MAX], tn[SCALING_REPS_MAX];
    sarbp_status st = form_once(p, g, &one, &f1);
    if (!st) st = form_once(p, g, &all, &fn);
    for (int r = 0; !st && r < reps; r++) {
        st = form_once(p, g, &one, &f1);
        if (!st) st = form_once(p, g, &all, &runs[r]);
        t1[r] = f1.total_s;
        tn[r] = runs[r].total_s;
    }
    if (st) {
        fprintf(stderr, "sarbp: bench: scaling: %s\n", sarbp_error_detail());
        return 1;
    }
    qsort(t1, (size_t)reps, sizeof *t1, cmp_double);
    double sorted[SCALING_REPS_MAX];
    memcpy(sorted, tn, sizeof(double) * (size_t)reps);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    for (int r = 0; r < reps; r++) /* the run of all at the median */
        if (tn[r] == sorted[reps / 2]) fn = runs[r];
    f1.total_s = t1[reps / 2];
    const double r1 = pairs / f1.total_s / 1e9, rn = pairs / fn.total_s / 1e9;
    if (!json)
        printf("\nscaling, fp32 end to end over %d devices (image rows shared, one thread each; "
               "median of %d):\n"
               "  one device (%d): %.4f s, %.1f Gbp/s\n", devs->ndevices, reps, one.device,
               f1.total_s, r1);
    for (int k = 0; k < fn.layout.nparts; k++) {
        const sarbp_form_part *pt = &fn.layout.part[k];
        const sarbp_form_dev_stats *d = &fn.dev[k];
        const double r = d->pairs / (d->total_s > 0 ? d->total_s : 1) / 1e9;
        if (json) {
            printf("{\"scaling_device\":%d,\"rows\":%zu,\"bands\":%zu", pt->device, pt->nrows, pt->bands);
            jnum("total_s", d->total_s);
            jnum("gbps", r);
            printf("}\n");
        } else {
            printf("  device %d: rows %zu to %zu (%zu band%s), %.4f s, %.1f Gbp/s (setup %.4f, "
                   "backprojection %.4f, finish %.4f s)\n", pt->device, pt->row0,
                   pt->row0 + pt->nrows, pt->bands, pt->bands == 1 ? "" : "s", d->total_s, r,
                   d->stages.setup_s, d->stages.bp_s, d->stages.finish_s);
        }
    }
    if (json) {
        printf("{\"scaling_devices\":%d", fn.layout.nparts);
        jnum("one_device_s", f1.total_s);
        jnum("one_device_gbps", r1);
        jnum("total_s", fn.total_s);
        jnum("gbps", rn);
        jnum("scaling", rn / r1);
        printf("}\n");
    } else {
        printf("  all %d: %.4f s (starting and layout %.4f s), %.1f Gbp/s: %.2f x one device "
               "(ideal %d)\n", fn.layout.nparts, fn.total_s, fn.init_s, rn, rn / r1,
               fn.layout.nparts);
    }
    cli_flush_stdout();
    return 0;
}

/* The precisions of the kernel table, in column order: prec[] indexes these. */
enum { PREC_FP32, PREC_FP16, PREC_MIXED, NPREC };
static const char *const prec_names[NPREC] = {"fp32", "fp16", "mixed"};

static int bench_cuda(const sarbp_phd *p, const sarbp_grid *g, char *variants, const int *prec,
                      const struct interp_cfg *ics, int nic, size_t exact_n, size_t pulse_block,
                      int reps, const sarbp_bp_options *devs, int json)
{
    const int device = devs->device;
    const char *cmd = "bench";
    char name[128];
    int sms, clk, mclk;
    sarbp_status st = sarbp_cuda_device_info(device, name, sizeof name, &sms, &clk, &mclk);
    if (st) return cli_fail_status(cmd, st);
    size_t npix = g->nx * g->ny;
    double pairs = (double)npix * p->npulses;
    size_t wx0, wy0;
    const sarbp_grid w = sarbp_grid_centre_window(g, exact_n, &wx0, &wy0);
    sarbp_c32 *ref = malloc(npix * sizeof *ref), *img = malloc(npix * sizeof *img);
    sarbp_c32 *exact = NULL;
    if (!ref || !img) {
        free(ref);
        free(img);
        return cli_fail(cmd, "out of memory for %zu x %zu images", g->nx, g->ny);
    }
    double t0 = sarbp_now_s();
    st = exact_window(p, &w, &exact);
    const double t_exact = sarbp_now_s() - t0;
    if (st) {
        free(ref);
        free(img);
        return cli_fail_status(cmd, st);
    }
    if (!json) {
        printf("device: %s, %d SMs, %d MHz SM clock, %d MHz memory clock\n", name, sms, clk, mclk);
        printf("problem: %zu x %zu pixels (%.4f m), %zu pulses, %zu samples, 10 km, 45 deg, X band\n",
               g->nx, g->ny, g->dx, p->npulses, p->nsamples);
        printf("references: the exact image (FP64 direct summation over the samples, cpu, %.1f s) "
               "on the central %zu x %zu window: 'exact dB'; the FP64 kernel v1 with the same "
               "profiles over the full image: 'fp64 dB'\n", t_exact, w.nx, w.ny);
    } else {
        jstr("device", name, 1);
        printf(",\"sms\":%d,\"clock_mhz\":%d,\"nx\":%zu,\"ny\":%zu,\"pulses\":%zu,\"samples\":%zu,"
               "\"exact_window\":%zu", sms, clk, g->nx, g->ny, p->npulses, p->nsamples, w.nx);
        jnum("spacing", g->dx);
        printf("}\n");
    }
    cli_flush_stdout();
    int rc_out = CLI_OK;
    /* the kernel-only time of form's default kernel (default interpolation
     * and variant), per precision, when the table measures it: the end-to-end
     * runs are set against it */
    double kern_ms[NPREC] = {NAN, NAN, NAN};
    sarbp_rc_params rc_default[NPREC]; /* form's default kernel per precision */
    static const sarbp_precision prec_of[NPREC] = {SARBP_FP32, SARBP_FP16, SARBP_MIXED};
    for (int h = 0; h < NPREC; h++) {
        sarbp_rc_params_default(&rc_default[h]);
        sarbp_rc_params_default_for(&rc_default[h], prec_of[h], 0);
    }
    for (int c = 0; c < nic && !st; c++) {
        sarbp_profiles *p32 = NULL;
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        rcp.interp = ics[c].interp;
        rcp.upsample = ics[c].upsample;
        st = compress_with(p, &rcp, SARBP_FP32, &p32);
        if (st) break;
        const char *iname = sarbp_interp_name(ics[c].interp);
        const int cubic = ics[c].interp == SARBP_INTERP_CUBIC;
        const int quad = ics[c].interp == SARBP_INTERP_QUADRATIC; /* one form: A FP32, B, C FP16 */
        const double prof_mib = (double)p32->npulses * p32->nbins * 16 * (cubic ? 2 : 1) / 1048576.0;
        sarbp_cuda_kernel_cfg rk = {sarbp_cuda_variant_by_id(SARBP_CUDA_V1)->name, 0, 0, 0, device, 0, 0, 0};
        double ms_ref;
        st = sarbp_cuda_bench_kernel(p32, g, &rk, 1, &ms_ref, ref);
        if (st) {
            sarbp_profiles_free(p32);
            break;
        }
        const double v1_exact = window_ser_db(ref, g, &w, wx0, wy0, exact);
        /* mixed bins: A, B FP32 (16 bytes) and C, D FP16 (8); linear ones are FP32 */
        const double mib[NPREC] = {prof_mib, 0.5 * prof_mib, 0.75 * prof_mib};
        if (!json) {
            printf("\n%s interpolation, %dx upsampling: %zu bins; profiles fp32 %.1f MiB",
                   iname, ics[c].upsample, p32->nbins, prof_mib);
            if (quad) printf(" (value FP32, slope and curvature FP16: its one form)");
            else printf(", fp16 %.1f MiB", mib[PREC_FP16]);
            if (cubic) printf(", mixed %.1f MiB", mib[PREC_MIXED]);
            printf("; FP64 kernel v1 %.1f Gbp/s, %.1f dB against exact\n", pairs / ms_ref / 1e6,
                   v1_exact);
            printf("%-16s %8s %8s %7s %7s   %8s %8s %7s %7s   %8s %8s %7s %7s   %6s %6s\n",
                   "variant", "fp32 ms", "Gbp/s", "exactdB", "fp64 dB", "fp16 ms", "Gbp/s",
                   "exactdB", "fp64 dB", "mixed ms", "Gbp/s", "exactdB", "fp64 dB", "16/32", "mx/32");
        } else {
            printf("{\"interp\":\"%s\",\"upsample\":%d,\"bins\":%zu,\"v1_gbps\":%.2f,"
                   "\"v1_exact_ser_db\":%.2f}\n", iname, ics[c].upsample, p32->nbins,
                   pairs / ms_ref / 1e6, v1_exact);
        }
        char vlist[1024];
        snprintf(vlist, sizeof vlist, "%s", variants);
        for (char *tok = strtok(vlist, ","); tok; tok = strtok(NULL, ",")) {
            sarbp_cuda_kernel_cfg kc = {NULL, 0, 0, 0, device, 0, 0, 0};
            char vname[16];
            if (parse_variant(tok, vname, &kc)) {
                fprintf(stderr, "sarbp: bench: bad variant '%s' (NAME[:TXxTY[:PPT[:MINB]]])\n", tok);
                rc_out = CLI_FAIL;
                continue;
            }
            double gbps[NPREC] = {NAN, NAN, NAN};
            const sarbp_cuda_variant *vt = sarbp_cuda_variant_find(vname);
            if (!json) printf("%-16s", tok);
            for (int h = 0; h < NPREC; h++) {
                /* no mixed row for linear bins (they are FP32) nor for a
                 * variant that does not read mixed bins */
                const int na = (quad && h != PREC_FP32) ||
                               (h == PREC_MIXED &&
                                (!cubic || (vt && !(vt->flags & SARBP_CUDA_VARIANT_MIXED))));
                if (!prec[h] || na) {
                    if (!json) printf(" %8s %8s %7s %7s  ", na && prec[h] ? "n/a" : "-", "-", "-", "-");
                    continue;
                }
                kc.half = h == PREC_FP16;
                kc.mixed = h == PREC_MIXED;
                double ms;
                sarbp_status sk = sarbp_cuda_bench_kernel(p32, g, &kc, reps, &ms, img);
                if (sk) {
                    fprintf(stderr, "sarbp: bench: %s %s: %s\n", tok, prec_names[h],
                            sarbp_error_detail());
                    rc_out = CLI_FAIL;
                    if (!json) printf(" %8s %8s %7s %7s  ", "fail", "-", "-", "-");
                    continue;
                }
                gbps[h] = pairs / ms / 1e6;
                if (ics[c].interp == rc_default[h].interp &&
                    ics[c].upsample == rc_default[h].upsample &&
                    vt && (vt->flags & SARBP_CUDA_VARIANT_DEFAULT) && !strcmp(tok, vt->name))
                    kern_ms[h] = ms;
                const double ser = ser_db(img, ref, npix);
                const double ser_x = window_ser_db(img, g, &w, wx0, wy0, exact);
                if (json) {
                    jstr("interp", iname, 1);
                    printf(",\"upsample\":%d", ics[c].upsample);
                    jstr("variant", tok, 0);
                    jstr("precision", prec_names[h], 0);
                    jnum("ms", ms);
                    jnum("gbps", gbps[h]);
                    jnum("gflops", 43 * gbps[h]);
                    jnum("exact_ser_db", ser_x);
                    jnum("fp64_ser_db", ser);
                    jnum("profile_mib", mib[h]);
                    printf("}\n");
                } else
                    printf(" %8.3f %8.1f %7.1f %7.1f  ", ms, gbps[h], ser_x, ser);
                cli_flush_stdout();
            }
            if (!json) {
                for (int h = PREC_FP16; h < NPREC; h++) {
                    if (gbps[PREC_FP32] > 0 && gbps[h] > 0) printf(" %6.2f", gbps[h] / gbps[PREC_FP32]);
                    else printf(" %6s", "-");
                }
                printf("\n");
            }
            cli_flush_stdout();
        }
        sarbp_profiles_free(p32);
    }
    if (st) {
        free(ref);
        free(img);
        free(exact);
        return cli_fail_status(cmd, st);
    }
    /* end to end: the streamed pipeline with the default kernel and the
     * default interpolation, per precision (fp16 twice: raw samples uploaded
     * as FP16, then as FP32) */
    if (!json) printf("\n");
    for (int run = 0; run < 4; run++) {
        static const int run_prec[4] = {PREC_FP32, PREC_FP16, PREC_FP16, PREC_MIXED};
        static const char *const labels[4] = {"fp32", "fp16, raw fp16", "fp16, raw fp32", "mixed"};
        static const sarbp_precision run_p[NPREC] = {SARBP_FP32, SARBP_FP16, SARBP_MIXED};
        const int h = run_prec[run], raw16 = run == 1;
        if (!prec[h]) continue;
        const char *label = labels[run];
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        sarbp_rc_params_default_for(&rcp, run_p[h], 0);
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.device = device;
        o.precision = run_p[h];
        o.raw_fp16 = raw16;
        o.pulse_block = pulse_block;
        sarbp_image *im = NULL;
        sarbp_form_stats fs;
        /* the first run pays one-time costs (cuFFT's kernels loaded, buffers
         * pinned); the median of reps more is the steady state reported, with
         * the stage split of that run */
        st = sarbp_form_phd(bench_session, p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
        const double cold = fs.total_s;
        double runs[SCALING_REPS_MAX];
        sarbp_form_stats all[SCALING_REPS_MAX];
        const int nrun = reps < 1 ? 1 : reps > SCALING_REPS_MAX ? SCALING_REPS_MAX : reps;
        for (int r = 0; r < nrun && !st; r++) {
            sarbp_image_free(im);
            im = NULL;
            st = sarbp_form_phd(bench_session, p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &all[r]);
            runs[r] = all[r].total_s;
        }
        double reused = NAN;
        if (!st) st = reused_median(p, g, &rcp, &o, nrun, &reused);
        if (!st) {
            double sorted[SCALING_REPS_MAX];
            memcpy(sorted, runs, (size_t)nrun * sizeof *runs);
            qsort(sorted, (size_t)nrun, sizeof *sorted, cmp_double);
            for (int r = 0; r < nrun; r++)
                if (runs[r] == sorted[nrun / 2]) fs = all[r];
        }
        if (st) {
            fprintf(stderr, "sarbp: bench: end to end %s: %s\n", label, sarbp_error_detail());
            rc_out = CLI_FAIL;
            continue;
        }
        const sarbp_stage_times *t = &fs.stages;
        double big = fs.read_s;
        const char *bigname = "read";
        /* range compression runs on its own stream under the previous block's
         * backprojection: its event interval is stretched by sharing the SMs
         * and is not a stage the total could be bounded by */
        if (t->transfer_s > big) big = t->transfer_s, bigname = "transfer";
        if (t->bp_s > big) big = t->bp_s, bigname = "backprojection";
        const double ser_x = window_ser_db(im->data, g, &w, wx0, wy0, exact);
        if (json) {
            jstr("end_to_end", label, 1);
            jstr("interp", sarbp_interp_name(rcp.interp), 0);
            printf(",\"upsample\":%d", rcp.upsample);
            jnum("total_s", fs.total_s);
            jnum("first_run_s", cold);
            jnum("init_s", fs.init_s);
            jnum("setup_s", t->setup_s);
            jnum("read_s", fs.read_s);
            jnum("transfer_s", t->transfer_s);
            jnum("rc_s", t->rc_s);
            jnum("bp_s", t->bp_s);
            jnum("finish_s", t->finish_s);
            jnum("total_over_largest", fs.total_s / big);
            jnum("total_over_kernel", fs.total_s / (1e-3 * kern_ms[h]));
            jnum("reused_total_s", reused);
            jnum("reused_over_kernel", reused / (1e-3 * kern_ms[h]));
            jnum("gbps", pairs / fs.total_s / 1e9);
            jnum("pulse_mib", t->pulse_bytes / 1048576.0);
            jnum("image_mib", t->image_bytes / 1048576.0);
            jnum("exact_ser_db", ser_x);
            printf("}\n");
        } else
        {
            printf("end to end, %s (form, default kernel, %s %dx, pulse blocks streamed): %.4f s "
                   "(median of %d; first run %.3f s), %.1f Gbp/s, %.1f dB against exact\n"
                   "  layout %.4f, setup %.4f, read %.4f, transfer %.4f, range compression %.4f "
                   "(under the backprojection), backprojection %.4f, "
                   "finish %.4f s;\n"
                   "  total = %.2f x the largest of read, transfer and backprojection (%s)",
                   label, sarbp_interp_name(rcp.interp), rcp.upsample, fs.total_s, nrun, cold,
                   pairs / fs.total_s / 1e9, ser_x, fs.init_s, t->setup_s, fs.read_s,
                   t->transfer_s, t->rc_s, t->bp_s, t->finish_s, fs.total_s / big,
                   bigname);
            if (kern_ms[h] > 0)
                printf(", %.2f x the kernel-only time above (%.3f ms)", fs.total_s / (1e-3 * kern_ms[h]),
                       kern_ms[h]);
            printf("\n  into a reused image (sarbp_form_phd_into, no page faults): %.4f s (median of "
                   "%d), %.1f Gbp/s", reused, nrun, pairs / reused / 1e9);
            if (kern_ms[h] > 0) printf(", %.2f x the kernel-only time", reused / (1e-3 * kern_ms[h]));
            printf("\n  device memory: pulse data %.2f MiB, image %.1f MiB\n",
                   t->pulse_bytes / 1048576.0, t->image_bytes / 1048576.0);
        }
        cli_flush_stdout();
        sarbp_image_free(im);
    }
    if (devs->ndevices > 1 && rc_out == CLI_OK && bench_scaling(p, g, devs, pulse_block, reps, json))
        rc_out = CLI_FAIL;
    free(ref);
    free(img);
    free(exact);
    return rc_out;
}

/* One end-to-end run's figures, ordered by total_s. */
struct e2e_run {
    double total_s, read_s, init_s;
    sarbp_stage_times stages;
};

static int cmp_e2e(const void *a, const void *b)
{
    return cmp_double(&((const struct e2e_run *)a)->total_s, &((const struct e2e_run *)b)->total_s);
}

/* --algorithm ffbp on cuda, end to end: sarbp_form_phd with the cuda back
 * end's FFBP plan (range compression on the device into resident profiles,
 * the FFBP at finish, the image copied back), once cold (contexts, cuFFT's
 * kernels, first touch of the image), then reps runs: the median run's
 * total, its equivalent rate (pixels x pulses / total) and stage split, and
 * the last image's SER against the exact image on window w at (x0, y0). */
static sarbp_status ffbp_end_to_end(const sarbp_phd *p, const sarbp_grid *g, int reps,
                                    double max_error_db, int device, size_t pulse_block,
                                    const sarbp_grid *w, size_t x0, size_t y0,
                                    const sarbp_c32 *exact, int json)
{
    sarbp_rc_params rcp;
    sarbp_rc_params_default(&rcp);
    sarbp_rc_params_default_for(&rcp, SARBP_FP32, 1);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.device = device;
    o.algorithm = SARBP_ALGO_FFBP;
    o.max_error_db = max_error_db;
    o.pulse_block = pulse_block;
    struct e2e_run *runs = malloc((size_t)reps * sizeof *runs);
    if (!runs) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_form_stats fs;
    sarbp_image *im = NULL;
    sarbp_status st = sarbp_form_phd(bench_session, p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
    const double cold = fs.total_s;
    for (int r = 0; r < reps && !st; r++) {
        sarbp_image_free(im);
        im = NULL;
        st = sarbp_form_phd(bench_session, p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
        runs[r] = (struct e2e_run){fs.total_s, fs.read_s, fs.init_s, fs.stages};
    }
    if (st) {
        sarbp_image_free(im);
        free(runs);
        return st;
    }
    double reused = NAN;
    st = reused_median(p, g, &rcp, &o, reps, &reused);
    if (st) {
        sarbp_image_free(im);
        free(runs);
        return st;
    }
    qsort(runs, (size_t)reps, sizeof *runs, cmp_e2e);
    const struct e2e_run *m = &runs[reps / 2];
    const sarbp_stage_times *t = &m->stages;
    const double pairs = (double)g->nx * (double)g->ny * (double)p->npulses;
    const double tbps = pairs / m->total_s / 1e12, ser_x = window_ser_db(im->data, g, w, x0, y0, exact);
    sarbp_image_free(im);
    if (json) {
        jstr("end_to_end", "ffbp", 1);
        jstr("interp", sarbp_interp_name(rcp.interp), 0);
        printf(",\"upsample\":%d,\"reps\":%d", rcp.upsample, reps);
        jnum("total_s", m->total_s);
        jnum("first_run_s", cold);
        jnum("tbps_equivalent", tbps);
        jnum("reused_total_s", reused);
        jnum("reused_tbps_equivalent", pairs / reused / 1e12);
        jnum("init_s", m->init_s);
        jnum("setup_s", t->setup_s);
        jnum("read_s", m->read_s);
        jnum("transfer_s", t->transfer_s);
        jnum("rc_s", t->rc_s);
        jnum("bp_s", t->bp_s);
        jnum("finish_s", t->finish_s);
        jnum("pulse_mib", t->pulse_bytes / 1048576.0);
        jnum("image_mib", t->image_bytes / 1048576.0);
        jnum("exact_ser_db", ser_x);
        printf("}\n");
    } else {
        printf("  end to end (form, cuda ffbp plan: range compression on the device, image copied "
               "back): %.2f ms (median of %d; first run %.1f ms), %.3f Tbp/s equivalent, %.1f dB "
               "against exact (central %zu x %zu)\n"
               "    layout %.2f, setup %.2f, read %.2f, transfer %.2f, range compression %.2f, ffbp "
               "%.2f, finish %.2f ms (transfer, range compression and ffbp "
               "are device times); device memory: pulse data %.1f MiB, image %.1f MiB\n",
               m->total_s * 1e3, reps, cold * 1e3, tbps, ser_x, w->nx, w->ny, m->init_s * 1e3,
               t->setup_s * 1e3, m->read_s * 1e3, t->transfer_s * 1e3, t->rc_s * 1e3,
               t->bp_s * 1e3, t->finish_s * 1e3,
               t->pulse_bytes / 1048576.0, t->image_bytes / 1048576.0);
        printf("    into a reused image (sarbp_form_phd_into, no page faults): %.2f ms (median "
               "of %d), %.3f Tbp/s equivalent\n", reused * 1e3,
               reps > SCALING_REPS_MAX ? SCALING_REPS_MAX : reps, pairs / reused / 1e12);
    }
    cli_flush_stdout();
    free(runs);
    return SARBP_OK;
}

/* --algorithm ffbp on cuda: sarbp_ffbp_cuda with the factorization
 * sarbp_ffbp_choose picks for max_error_db, on the FP32 cubic 4x profiles:
 * device time of the computation and wall time of the whole call (plan,
 * allocation, profile upload, image copy back), medians of reps after a
 * warm-up; Gbp/s equivalent (the direct method's pairs over that time); SER
 * against direct backprojection (the default CUDA kernel over the whole
 * image, timed in the same run) and against the exact image on the central
 * window and on the corner window farthest from the centre (FFBP's error
 * grows away from the sub-apertures' centres). */
static int bench_cuda_ffbp(const sarbp_phd *p, const sarbp_grid *g, size_t exact_n, int reps,
                           double max_error_db, int device, size_t pulse_block, int json)
{
    const char *cmd = "bench";
    char name[128];
    int sms, clk, mclk;
    sarbp_status st = sarbp_cuda_device_info(device, name, sizeof name, &sms, &clk, &mclk);
    if (st) return cli_fail_status(cmd, st);
    const size_t npix = g->nx * g->ny;
    size_t wx0, wy0;
    const sarbp_grid w = sarbp_grid_centre_window(g, exact_n, &wx0, &wy0);
    const size_t cx0 = 0, cy0 = g->ny > w.ny ? g->ny - w.ny : 0; /* the north-west corner */
    const sarbp_grid wc = sarbp_grid_window(g, exact_n, cx0, cy0);
    sarbp_c32 *exact = NULL, *exact_c = NULL, *img = malloc(npix * sizeof *img);
    sarbp_c32 *bp = malloc(npix * sizeof *bp);
    double *ms = malloc((size_t)reps * sizeof *ms), *wall = malloc((size_t)reps * sizeof *wall);
    sarbp_profiles *p32 = NULL;
    sarbp_rc_params rcp;
    sarbp_rc_params_default(&rcp);
    sarbp_rc_params_default_for(&rcp, SARBP_FP32, 1);
    sarbp_ffbp_params fp;
    double pred_db = 0, bp_ms = 0;
    sarbp_ffbp_info info = {0};
    if (!img || !bp || !ms || !wall)
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for a %zu x %zu image", g->nx, g->ny);
    if (!st) st = exact_window(p, &w, &exact);
    if (!st) st = exact_window(p, &wc, &exact_c);
    if (!st) st = compress_with(p, &rcp, SARBP_FP32, &p32);
    if (!st) st = sarbp_ffbp_choose(p32, g, max_error_db, &fp, &pred_db);
    if (!st) {
        const sarbp_cuda_kernel_cfg kc = {.device = device};
        st = sarbp_cuda_bench_kernel(p32, g, &kc, reps < 3 ? reps : 3, &bp_ms, bp);
    }
    sarbp_ffbp_cuda_times tt = {0}, last = {0};
    for (int r = -1; r < reps && !st; r++) { /* r = -1: warm-up */
        memset(img, 0, npix * sizeof *img);
        const double t0 = sarbp_now_s();
        st = sarbp_ffbp_cuda_timed(p32, g, &fp, device, img, &info, &tt);
        if (r >= 0) {
            ms[r] = tt.total_ms;
            wall[r] = (sarbp_now_s() - t0) * 1e3;
        }
        last = tt;
    }
    if (!st) {
        qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
        qsort(wall, (size_t)reps, sizeof *wall, cmp_double);
        const double med = ms[reps / 2], med_wall = wall[reps / 2];
        const double pairs = (double)npix * (double)p->npulses;
        const double gbps = pairs / (med * 1e-3) / 1e9, gbps_wall = pairs / (med_wall * 1e-3) / 1e9;
        const double ser_x = window_ser_db(img, g, &w, wx0, wy0, exact);
        const double ser_c = window_ser_db(img, g, &wc, cx0, cy0, exact_c);
        const double ser_bp = ser_db(img, bp, npix);
        const double ser_bc = window_ser_db(bp, g, &wc, cx0, cy0, exact_c); /* direct bp there */
        if (json) {
            jstr("algorithm", "ffbp", 1);
            jstr("device", name, 0);
            printf(",\"nx\":%zu,\"ny\":%zu,\"pulses\":%zu,\"bins\":%zu,\"stages\":%d,"
                   "\"final_subs\":%zu,\"polar_samples\":%zu,\"exact_window\":%zu",
                   g->nx, g->ny, p->npulses, p32->nbins, info.stages, info.final_subs,
                   info.polar_samples, w.nx);
            jnum("max_error_db", max_error_db);
            jnum("predicted_ser_db", -pred_db);
            jnum("ms", med);
            jnum("call_ms", med_wall);
            jnum("stage0_ms", last.stage0_ms);
            jnum("merge_ms", last.merge_ms);
            jnum("prefilter_ms", last.prefilter_ms);
            jnum("final_ms", last.final_ms);
            jnum("gbps_equivalent", gbps);
            jnum("bp_kernel_ms", bp_ms);
            jnum("bp_ser_db", ser_bp);
            jnum("exact_ser_db", ser_x);
            jnum("exact_corner_ser_db", ser_c);
            jnum("bp_exact_corner_ser_db", ser_bc);
            printf("}\n");
        } else {
            printf("device: %s, %d SMs, %d MHz SM clock\n", name, sms, clk);
            printf("ffbp, cuda fp32, cubic %dx (%zu bins): %zu x %zu pixels (%.4f m), %zu pulses; "
                   "--max-error-db %g: base %zu, merge %zu, final %zu, os_theta %g, os_rho %g "
                   "(predicted %.1f dB against bp): %d stages, %.1f Msamples polar\n",
                   rcp.upsample, p32->nbins, g->nx, g->ny, g->dx, p->npulses, max_error_db,
                   fp.base, fp.merge, fp.final_subs, fp.os_theta, fp.os_rho, -pred_db,
                   info.stages, info.polar_samples / 1e6);
            printf("  device time %.3f ms (median of %d), %.1f Gbp/s equivalent; the whole call "
                   "%.1f ms (plan, allocation, profile upload, image copy back), %.1f Gbp/s "
                   "equivalent\n", med, reps, gbps, med_wall, gbps_wall);
            printf("  direct bp (default kernel) %.3f ms: ffbp's device time is %.1fx faster; SER "
                   "against direct bp %.1f dB, against exact %.1f dB (central %zu x %zu), %.1f dB "
                   "(corner at ix %zu, iy %zu; direct bp there %.1f dB)\n", bp_ms, bp_ms / med,
                   ser_bp, ser_x, w.nx, w.ny, ser_c, cx0, cy0, ser_bc);
            printf("  last run: tables %.3f, stage 0 %.3f, merges %.3f, prefilters %.3f, final sum "
                   "%.3f ms\n", last.tables_ms, last.stage0_ms, last.merge_ms, last.prefilter_ms,
                   last.final_ms);
        }
        cli_flush_stdout();
    }
    if (!st) st = ffbp_end_to_end(p, g, reps, max_error_db, device, pulse_block, &w, wx0, wy0, exact, json);
    sarbp_profiles_free(p32);
    free(exact);
    free(exact_c);
    free(img);
    free(bp);
    free(ms);
    free(wall);
    return st ? cli_fail_status(cmd, st) : CLI_OK;
}

int cmd_bench(int argc, char **argv)
{
    const char *cmd = "bench";
    static const struct option lo[] = {
        {"backend", required_argument, NULL, 'b'}, {"grid", required_argument, NULL, 'g'},
        {"spacing", required_argument, NULL, 's'}, {"pulses", required_argument, NULL, 'p'},
        {"samples", required_argument, NULL, 'k'}, {"threads", required_argument, NULL, 't'},
        {"variant", required_argument, NULL, 'V'}, {"reps", required_argument, NULL, 'r'},
        {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
        {"precision", required_argument, NULL, 'P'}, {"interp", required_argument, NULL, 'I'},
        {"problem", required_argument, NULL, 'Q'}, {"exact-window", required_argument, NULL, 'X'},
        {"pulse-block", required_argument, NULL, 'B'},
        {"algorithm", required_argument, NULL, 'A'}, {"max-error-db", required_argument, NULL, 'E'},
        {"bp-rows", required_argument, NULL, 'R'},
        CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0},
    };
    const char *backend = "cpu";
    size_t nx = 0, ny = 0, npulses = 0, nsamples = 512;
    double spacing = 0;
    int threads[64], nthreads = 0, reps = 5, json = 0;
    sarbp_bp_options devs;
    sarbp_bp_options_default(&devs);
    char variants[1024];
    bench_default_variants(variants, sizeof variants);
    struct interp_cfg ics[16] = {{SARBP_INTERP_QUADRATIC, 8}, {SARBP_INTERP_LINEAR, 8},
                                 {SARBP_INTERP_CUBIC, 4}, {SARBP_INTERP_CUBIC, 8}};
    int nic = 4, wide = 0;
    size_t exact_n = 64, pulse_block = 0;
    int prec[NPREC] = {1, 1, 1}; /* fp32, fp16, mixed */
    int algo_bp = 1, algo_ffbp = 0;
    double max_error_db = SARBP_FFBP_DEFAULT_ERROR_DB;
    size_t bp_rows = FFBP_REF_ROWS;
    int have_exact_n = 0;
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "qvh", lo)) != -1) {
        switch (c) {
        case 'b':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                return cli_usage(cmd, "unknown back end '%s' (cpu or cuda)", optarg);
            backend = optarg;
            break;
        case 'g':
            if (cli_parse_grid(optarg, (size_t)1 << 31, &nx, &ny))
                return cli_usage(cmd, "--grid wants NXxNY with positive sizes, not '%s'", optarg);
            break;
        case 's':
            if (cli_parse_double(optarg, 1e-6, 1e4, &spacing))
                return cli_usage(cmd, "--spacing wants metres from 1e-6 to 1e4, not '%s'", optarg);
            break;
        case 'p':
            if (cli_parse_size(optarg, 1, 1 << 24, &npulses))
                return cli_usage(cmd, "--pulses wants a whole number from 1 to %d, not '%s'", 1 << 24,
                                 optarg);
            break;
        case 'k':
            if (cli_parse_size(optarg, 2, 1 << 20, &nsamples))
                return cli_usage(cmd, "--samples wants a whole number from 2 to %d, not '%s'", 1 << 20,
                                 optarg);
            break;
        case 't':
            nthreads = cli_parse_int_list(optarg, ',', 1, 4096, threads, 1, 64);
            if (nthreads < 0)
                return cli_usage(cmd, "--threads wants up to 64 thread counts from 1 to 4096 "
                                 "like 1,2, not '%s'", optarg);
            break;
        case 'V': {
            if (strlen(optarg) >= sizeof variants) return cli_usage(cmd, "--variant list too long");
            strcpy(variants, optarg);
            char check[sizeof variants], name[16];
            strcpy(check, optarg);
            for (char *tok = strtok(check, ","); tok; tok = strtok(NULL, ",")) {
                sarbp_cuda_kernel_cfg kc = {0};
                if (parse_variant(tok, name, &kc))
                    return cli_usage(cmd, "--variant wants NAME[:TXxTY[:PPT[:MINB]]] with tiles up "
                                     "to 1024, PPT 1 to 8, MINB -1 to 64, not '%s'", tok);
            }
            break;
        }
        case 'r':
            if (cli_parse_int(optarg, 1, 1000, &reps))
                return cli_usage(cmd, "--reps wants a whole number from 1 to 1000, not '%s'", optarg);
            break;
        case 'd': {
            char why[160];
            if (cli_parse_devices(optarg, &devs, why, sizeof why)) return cli_usage(cmd, "%s", why);
            break;
        }
        case 'j': json = 1; break;
        case 'P': {
            memset(prec, 0, sizeof prec);
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < NPREC && strcmp(t, prec_names[k])) k++;
                if (k == NPREC)
                    return cli_usage(cmd, "--precision wants a list of fp32, fp16 and mixed, e.g. "
                                     "fp32,mixed, not '%s'", optarg);
                prec[k] = 1;
            }
            break;
        }
        case 'I':
            nic = parse_interps(optarg, ics, 16);
            if (nic < 1) return cli_usage(cmd, "--interp wants KERNEL[:UPSAMPLE],..., e.g. linear:8,cubic:4, not '%s'", optarg);
            break;
        case 'Q':
            if (!strcmp(optarg, "wide")) wide = 1;
            else if (strcmp(optarg, "narrow")) return cli_usage(cmd, "--problem wants narrow or wide, not '%s'", optarg);
            break;
        case 'B':
            if (cli_parse_size(optarg, 1, 1 << 20, &pulse_block)) return cli_usage(cmd, "bad --pulse-block '%s'", optarg);
            break;
        case 'X':
            if (cli_parse_size(optarg, 1, 1024, &exact_n)) return cli_usage(cmd, "bad --exact-window '%s'", optarg);
            have_exact_n = 1;
            break;
        case 'A': {
            algo_bp = algo_ffbp = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (!strcmp(t, "bp")) algo_bp = 1;
                else if (!strcmp(t, "ffbp")) algo_ffbp = 1;
                else return cli_usage(cmd, "--algorithm wants bp, ffbp or bp,ffbp, not '%s'", optarg);
            }
            break;
        }
        case 'E':
            if (cli_parse_double(optarg, -150, -10, &max_error_db))
                return cli_usage(cmd, "--max-error-db wants a number of dB from -150 to -10, not '%s'",
                                 optarg);
            break;
        case 'R':
            if (cli_parse_size(optarg, 1, (size_t)1 << 31, &bp_rows))
                return cli_usage(cmd, "--bp-rows wants a positive number of rows, not '%s'", optarg);
            break;
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE; /* cli_getopt said why */
        }
    }
    if (optind < argc) return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    int cuda = !strcmp(backend, "cuda");
    if (!nx) nx = ny = cuda ? 4096 : 1024;
    if (!npulses) npulses = cuda ? 2048 : 512;
    /* wide: a swath of ~480 m (2048 samples: c / (2 df) = 480 m at 640 MHz)
     * at about half the range resolution, 0.117 m, so many more bins */
    if (wide && nsamples == 512) nsamples = 2048;
    if (spacing == 0) spacing = (wide ? 480.0 : 102.4) / (double)(nx > ny ? nx : ny);
    if (!nthreads)
        for (int t = 1; t <= sarbp_cpu_count() && nthreads < 64; t++) threads[nthreads++] = t;
    sarbp_grid g = {nx, ny, spacing, spacing, 0, 0, 0, 0, 0};
    sarbp_status st = sarbp_grid_validate(&g);
    if (st) return cli_usage(cmd, "%s", sarbp_error_detail());
    sarbp_phd *p = NULL;
    double t0 = sarbp_now_s();
    st = make_scene(npulses, nsamples, &p);
    if (!st) st = sarbp_session_create(NULL, &bench_session);
    if (st) {
        sarbp_phd_free(p);
        return cli_fail_status(cmd, st);
    }
    cli_info(2, "sarbp: bench: simulated %zu pulses x %zu samples (204 targets) in %.2f s; "
             "grid %zu x %zu at %g m", npulses, nsamples, sarbp_now_s() - t0, g.nx, g.ny, g.dx);
    int rc = CLI_OK;
    if (cuda && algo_bp)
        rc = bench_cuda(p, &g, variants, prec, ics, nic, exact_n, pulse_block, reps, &devs, json);
    if (cuda && algo_ffbp && rc == CLI_OK)
        rc = bench_cuda_ffbp(p, &g, exact_n, reps, max_error_db, devs.device, pulse_block, json);
    if (!cuda && algo_bp) rc = bench_cpu(p, &g, threads, nthreads, reps, json);
    if (!cuda && algo_ffbp && rc == CLI_OK)
        rc = bench_ffbp(p, &g, threads, nthreads, reps, max_error_db, bp_rows,
                        have_exact_n ? exact_n : EXACT_WINDOW, json);
    sarbp_session_free(bench_session);
    bench_session = NULL;
    sarbp_phd_free(p);
    return rc;
}
