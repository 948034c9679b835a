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

static void help(void)
{
    printf(
"usage: sarbp bench [--backend cpu|cuda] [options]\n"
"\n"
"Measures backprojection throughput on a Gotcha-like simulated scene (10 km,\n"
"45 degrees, X band 9.6 GHz, 640 MHz, point targets plus clutter) and the\n"
"accuracy of each fast path as SER against an FP64 image.\n"
"\n"
"  --backend B      cpu (default) or cuda\n"
"  --grid NXxNY     image size (default 1024x1024 cpu, 4096x4096 cuda)\n"
"  --spacing D      pixel spacing in metres (default: the grid covers ~102 m)\n"
"  --pulses N       pulses (default 512 cpu, 2048 cuda)\n"
"  --samples K      samples per pulse (default 512; 8x upsampling gives 4096 bins)\n"
"  --threads LIST   cpu: thread counts to run, e.g. 1,2 (default 1..all cores)\n"
"  --variant LIST   cuda: comma-separated NAME[:TXxTY[:PPT[:MINB]]] (default: a sweep of\n"
"                   v2, v3, v3a and v4 configurations); names: v1 (FP64, one pixel\n"
"                   per thread), v2 (tiled, exact formula), v3 (tiled, series; the\n"
"                   default), v3a (v3 with a float-float phase), v4 (v3 with range\n"
"                   bins staged in shared memory); MINB 12 or 16 compiles a 64-thread,\n"
"                   8-pixel kernel for that many resident blocks per SM (-1: none)\n"
"  --precision LIST cuda: fp32, fp16 or fp32,fp16 (default): profiles in FP32 or\n"
"                   FP16 (range and phase FP32 in both), side by side\n"
"  --reps N         timed repetitions per configuration, median reported (default 5)\n"
"  --device N       cuda device (default 0)\n"
"  --json           one JSON object per line instead of the table\n"
"\n"
"cpu: per interpolation kernel (cubic, the default, then linear) and thread count,\n"
"the FP32 tiled path's Mbp/s (wall clock, median), per core, and per core-second\n"
"of process CPU time (steadier on a shared machine); its SER against the FP64\n"
"image with the same kernel over the full image and against the exact image\n"
"(direct summation, precision exact) on the 64x64 window at the centre; then the\n"
"FP64 reference's Mbp/s (all cores, one run) and its own SER against the exact image.\n"
"cuda: kernel-only time (CUDA events, median), Gbp/s (GFLOP/s = 43 flops per pair,\n"
"seed 003's count, in --json), SER against the FP64 GPU kernel v1 over the full\n"
"image (v1 is itself checked against the CPU FP64 reference on a 64x64 window),\n"
"per precision with the fp16/fp32 speed ratio; then 'form' end to end with pulses\n"
"streamed: total time split into setup, read, transfer, range compression,\n"
"backprojection (device times) and finish, and the device memory of pulse data\n"
"and image, for fp32 and for fp16 with raw samples uploaded as FP16 and as FP32.\n");
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

static sarbp_status compress(const sarbp_phd *p, sarbp_precision prec, sarbp_profiles **out)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    return compress_with(p, &rc, prec, out);
}

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

/* The side x side window at the centre of g, on g's own pixels: its grid
 * and its first pixel (x0, y0) in g. */
static sarbp_grid centre_window(const sarbp_grid *g, size_t side, size_t *x0, size_t *y0)
{
    sarbp_grid w = *g;
    w.nx = g->nx < side ? g->nx : side;
    w.ny = g->ny < side ? g->ny : side;
    *x0 = (g->nx - w.nx) / 2;
    *y0 = (g->ny - w.ny) / 2;
    w.xc = sarbp_grid_x(g, *x0) + 0.5 * (double)(w.nx - 1) * g->dx;
    w.yc = sarbp_grid_y(g, *y0) + 0.5 * (double)(w.ny - 1) * g->dy;
    return w;
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
    static const sarbp_interp kernels[] = {SARBP_INTERP_CUBIC, SARBP_INTERP_LINEAR};
    const size_t npix = g->nx * g->ny;
    const double pairs = (double)npix * (double)p->npulses;
    size_t x0, y0;
    const sarbp_grid w = centre_window(g, EXACT_WINDOW, &x0, &y0);
    sarbp_c32 *img32 = calloc(npix, sizeof *img32), *ref32 = calloc(npix, sizeof *ref32);
    sarbp_c64 *img64 = calloc(npix, sizeof *img64);
    sarbp_status st = (!img32 || !ref32 || !img64) ? sarbp_error(SARBP_ERR_NOMEM, "out of memory") : SARBP_OK;

    /* the exact image on the window: all pulses, the same windows as compress() */
    sarbp_image *exact = NULL;
    double t_exact = 0;
    if (!st) {
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.precision = SARBP_EXACT;
        const double t0 = sarbp_now_s();
        st = sarbp_form_phd(p, &w, &sarbp_backend_cpu, &rcp, &o, NULL, &exact, NULL);
        t_exact = sarbp_now_s() - t0;
    }
    if (!st && !json) {
        printf("cpu back end: %zu x %zu pixels (%.4f m), %zu pulses, %zu bins at %dx (%d cores), "
               "median of %d runs\n", g->nx, g->ny, g->dx, p->npulses,
               sarbp_rc_nbins(p, SARBP_DEFAULT_UPSAMPLE), SARBP_DEFAULT_UPSAMPLE, sarbp_cpu_count(), reps);
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
        const double ser64_exact = st ? NAN : window_ser_db(ref32, g, &w, x0, y0, exact->data);
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
            const double serx = window_ser_db(img32, g, &w, x0, y0, exact->data);
            if (json)
                printf("{\"backend\":\"cpu\",\"interp\":\"%s\",\"threads\":%d,\"fp32_mbps\":%.1f,"
                       "\"fp32_mbps_per_core\":%.1f,\"fp32_mbps_per_cpu_second\":%.1f,"
                       "\"ser_db\":%.2f,\"ser_exact_db\":%.2f,\"exact_window\":%zu}\n",
                       kname, threads[k], r32, r32 / threads[k], rcpu, ser, serx, w.nx);
            else
                printf("%-7s %8d %12.1f %12.1f %15.1f %10.1f %10.1f\n", kname, threads[k], r32,
                       r32 / threads[k], rcpu, ser, serx);
            fflush(stdout);
        }
        if (!st) {
            if (json)
                printf("{\"backend\":\"cpu\",\"interp\":\"%s\",\"fp64_mbps\":%.1f,\"fp64_threads\":%d,"
                       "\"fp64_ser_exact_db\":%.2f}\n", kname, pairs / t64 / 1e6, sarbp_cpu_count(),
                       ser64_exact);
            else
                printf("%-7s %8s %12.1f %12s %15s %10s %10.1f   (fp64 reference, all cores)\n", kname,
                       "fp64", pairs / t64 / 1e6, "", "", "", ser64_exact);
            fflush(stdout);
        }
        sarbp_profiles_free(p32);
        sarbp_profiles_free(p64);
    }
    sarbp_image_free(exact);
    free(img32);
    free(img64);
    free(ref32);
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
    if (cli_parse_grid(tile, &tx, &ty) || tx > 1024 || ty > 1024) return -1;
    kc->tile_x = (int)tx;
    kc->tile_y = (int)ty;
    if (!c2) return 0;
    char *c3 = strchr(c2 + 1, ':');
    if (c3) *c3 = '\0';
    long ppt, minb;
    int bad = cli_parse_long(c2 + 1, 1, 8, &ppt);
    if (c3) {
        *c3 = ':';
        bad = bad || cli_parse_long(c3 + 1, -1, 64, &minb);
        if (!bad) kc->minb = (int)minb;
    }
    if (bad) return -1;
    kc->ppt = (int)ppt;
    return 0;
}

static int bench_cuda(const sarbp_phd *p, const sarbp_grid *g, char *variants, const int *prec,
                      int reps, int device, int json)
{
    const char *cmd = "bench";
    char name[128];
    int sms, clk, mclk;
    sarbp_status st = sarbp_cuda_device_info(device, name, sizeof name, &sms, &clk, &mclk);
    if (st) return cli_fail_status(cmd, st);
    sarbp_profiles *p32 = NULL;
    st = compress(p, SARBP_FP32, &p32);
    if (st) return cli_fail_status(cmd, st);
    size_t npix = g->nx * g->ny;
    double pairs = (double)npix * p->npulses;
    const double prof_mib = (double)p32->npulses * p32->nbins * 16 / 1048576.0;
    sarbp_c32 *ref = malloc(npix * sizeof *ref), *img = malloc(npix * sizeof *img);
    if (!ref || !img) {
        sarbp_profiles_free(p32);
        free(ref);
        free(img);
        return cli_fail(cmd, "out of memory for %zu x %zu images", g->nx, g->ny);
    }
    /* reference: the FP64 kernel over the full image, checked on a window
     * against the CPU FP64 reference */
    sarbp_cuda_kernel_cfg rc = {"v1", 0, 0, 0, device, 0, 0};
    double ms_ref;
    st = sarbp_cuda_bench_kernel(p32, g, &rc, 1, &ms_ref, ref);
    double ser_v1_cpu = NAN;
    if (!st) {
        sarbp_profiles *p64 = NULL;
        st = compress(p, SARBP_FP64, &p64);
        sarbp_grid w = *g;
        w.nx = w.ny = 64;
        size_t x0 = g->nx / 2 - (g->nx >= 64 ? 32 : g->nx / 2), y0 = g->ny / 2 - (g->ny >= 64 ? 32 : g->ny / 2);
        if (g->nx < 64) w.nx = g->nx;
        if (g->ny < 64) w.ny = g->ny;
        w.xc = sarbp_grid_x(g, x0) + 0.5 * (double)(w.nx - 1) * g->dx;
        w.yc = sarbp_grid_y(g, y0) + 0.5 * (double)(w.ny - 1) * g->dy;
        sarbp_c64 *c64 = calloc(w.nx * w.ny, sizeof *c64);
        sarbp_c32 *c32 = malloc(w.nx * w.ny * sizeof *c32), *g32 = malloc(w.nx * w.ny * sizeof *g32);
        if (!st && c64 && c32 && g32) {
            st = sarbp_bp_cpu_fp64(p64, &w, c64);
            for (size_t iy = 0; iy < w.ny; iy++)
                for (size_t ix = 0; ix < w.nx; ix++) {
                    c32[iy * w.nx + ix] = (sarbp_c32){(float)c64[iy * w.nx + ix].re, (float)c64[iy * w.nx + ix].im};
                    g32[iy * w.nx + ix] = ref[(y0 + iy) * g->nx + x0 + ix];
                }
            ser_v1_cpu = ser_db(g32, c32, w.nx * w.ny);
        }
        free(c64);
        free(c32);
        free(g32);
        sarbp_profiles_free(p64);
    }
    if (st) {
        free(ref);
        free(img);
        sarbp_profiles_free(p32);
        return cli_fail_status(cmd, st);
    }
    if (!json) {
        printf("device: %s, %d SMs, %d MHz SM clock, %d MHz memory clock\n", name, sms, clk, mclk);
        printf("problem: %zu x %zu pixels (%.4f m), %zu pulses, %zu bins, 10 km, 45 deg, X band\n",
               g->nx, g->ny, g->dx, p->npulses, p32->nbins);
        printf("reference: FP64 kernel v1 (%.1f Gbp/s), SER against CPU FP64 on a 64x64 window %.1f dB\n",
               pairs / ms_ref / 1e6, ser_v1_cpu);
        printf("profiles on the device: fp32 %.1f MiB (float4 per bin), fp16 %.1f MiB (half4 per bin)\n",
               prof_mib, 0.5 * prof_mib);
        printf("%-18s %9s %9s %7s   %9s %9s %7s   %7s\n", "variant", "fp32 ms", "Gbp/s", "SER dB",
               "fp16 ms", "Gbp/s", "SER dB", "16/32");
    } else {
        printf("{\"device\":\"%s\",\"sms\":%d,\"clock_mhz\":%d,\"nx\":%zu,\"ny\":%zu,\"pulses\":%zu,"
               "\"bins\":%zu,\"v1_gbps\":%.2f,\"v1_vs_cpu_fp64_ser_db\":%.2f}\n",
               name, sms, clk, g->nx, g->ny, p->npulses, p32->nbins, pairs / ms_ref / 1e6, ser_v1_cpu);
    }
    fflush(stdout);
    int rc_out = CLI_OK;
    for (char *tok = strtok(variants, ","); tok; tok = strtok(NULL, ",")) {
        sarbp_cuda_kernel_cfg kc = {NULL, 0, 0, 0, device, 0, 0};
        char vname[16];
        if (parse_variant(tok, vname, &kc)) {
            fprintf(stderr, "sarbp: bench: bad variant '%s' (NAME[:TXxTY[:PPT[:MINB]]])\n", tok);
            rc_out = CLI_FAIL;
            continue;
        }
        double gbps[2] = {NAN, NAN};
        if (!json) printf("%-18s", tok);
        for (int h = 0; h < 2; h++) {
            if (!prec[h]) {
                if (!json) printf(" %9s %9s %7s  ", "-", "-", "-");
                continue;
            }
            kc.half = h;
            double ms;
            st = sarbp_cuda_bench_kernel(p32, g, &kc, reps, &ms, img);
            if (st) {
                fprintf(stderr, "sarbp: bench: %s %s: %s\n", tok, h ? "fp16" : "fp32", sarbp_error_detail());
                rc_out = CLI_FAIL;
                if (!json) printf(" %9s %9s %7s  ", "fail", "-", "-");
                continue;
            }
            gbps[h] = pairs / ms / 1e6;
            double ser = ser_db(img, ref, npix);
            if (json)
                printf("{\"variant\":\"%s\",\"precision\":\"%s\",\"ms\":%.3f,\"gbps\":%.1f,\"gflops\":%.0f,"
                       "\"ser_db\":%.2f,\"profile_mib\":%.1f}\n",
                       tok, h ? "fp16" : "fp32", ms, gbps[h], 43 * gbps[h], ser,
                       prof_mib * (h ? 0.5 : 1.0));
            else
                printf(" %9.3f %9.1f %7.1f  ", ms, gbps[h], ser);
            fflush(stdout);
        }
        if (!json) {
            if (prec[0] && prec[1] && gbps[0] > 0) printf(" %7.2f\n", gbps[1] / gbps[0]);
            else printf(" %7s\n", "-");
        }
        fflush(stdout);
    }
    /* end to end: the streamed pipeline with the default kernel, per precision
     * (fp16 twice: raw samples uploaded as FP16, then as FP32) */
    for (int run = 0; run < 3; run++) {
        const int h = run > 0, raw16 = run == 1;
        if (!prec[h]) continue;
        const char *label = !h ? "fp32" : raw16 ? "fp16, raw fp16" : "fp16, raw fp32";
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.device = device;
        o.precision = h ? SARBP_FP16 : SARBP_FP32;
        o.raw_fp16 = raw16;
        sarbp_image *im = NULL;
        sarbp_form_stats fs;
        /* twice: the first run pays one-time costs (cuFFT kernels loaded, pinned
         * and device allocations); the second is the steady state reported */
        st = sarbp_form_phd(p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
        double cold = fs.total_s;
        if (!st) {
            sarbp_image_free(im);
            im = NULL;
            st = sarbp_form_phd(p, g, &sarbp_backend_cuda, &rcp, &o, NULL, &im, &fs);
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
        double ser = ser_db(im->data, ref, npix);
        if (json)
            printf("{\"end_to_end\":\"%s\",\"total_s\":%.4f,\"first_run_s\":%.4f,\"setup_s\":%.4f,"
                   "\"read_s\":%.4f,\"transfer_s\":%.4f,\"rc_s\":%.4f,\"bp_s\":%.4f,\"finish_s\":%.4f,"
                   "\"total_over_largest\":%.3f,\"gbps\":%.1f,\"pulse_mib\":%.2f,\"image_mib\":%.1f,"
                   "\"ser_db\":%.2f}\n",
                   label, fs.total_s, cold, t->setup_s, fs.read_s, t->transfer_s, t->rc_s, t->bp_s,
                   t->finish_s, fs.total_s / big, pairs / fs.total_s / 1e9,
                   t->pulse_bytes / 1048576.0, t->image_bytes / 1048576.0, ser);
        else
            printf("end to end, %s (form, default kernel, pulse blocks streamed): %.4f s "
                   "(first run %.3f s), %.1f Gbp/s, SER %.1f dB\n"
                   "  setup %.4f, read %.4f, transfer %.4f, range compression %.4f (under the "
                   "backprojection), backprojection %.4f, finish %.4f s;\n"
                   "  total = %.2f x the largest of read, transfer and backprojection (%s)\n"
                   "  device memory: pulse data %.2f MiB, image %.1f MiB\n",
                   label, fs.total_s, cold, pairs / fs.total_s / 1e9, ser,
                   t->setup_s, fs.read_s, t->transfer_s, t->rc_s, t->bp_s, t->finish_s,
                   fs.total_s / big, bigname, t->pulse_bytes / 1048576.0, t->image_bytes / 1048576.0);
        fflush(stdout);
        sarbp_image_free(im);
    }
    free(ref);
    free(img);
    sarbp_profiles_free(p32);
    return rc_out;
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
        {"precision", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    const char *backend = "cpu";
    size_t nx = 0, ny = 0, npulses = 0, nsamples = 512;
    double spacing = 0;
    int threads[64], nthreads = 0, reps = 5, json = 0;
    long device = 0;
    char variants[1024] = "v2:32x16:4,v3:32x8:2,v3:32x16:4,v3:32x32:8,v3,v3a,v4,v4:32x16:4";
    int prec[2] = {1, 1}; /* fp32, fp16 */
    int c;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        long l;
        switch (c) {
        case 'b':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                return cli_usage(cmd, "unknown back end '%s' (cpu or cuda)", optarg);
            backend = optarg;
            break;
        case 'g':
            if (cli_parse_grid(optarg, &nx, &ny)) return cli_usage(cmd, "--grid wants NXxNY, not '%s'", optarg);
            break;
        case 's':
            if (cli_parse_double(optarg, 1e-6, 1e4, &spacing)) return cli_usage(cmd, "bad --spacing '%s'", optarg);
            break;
        case 'p':
            if (cli_parse_size(optarg, 1, 1 << 24, &npulses)) return cli_usage(cmd, "bad --pulses '%s'", optarg);
            break;
        case 'k':
            if (cli_parse_size(optarg, 2, 1 << 20, &nsamples)) return cli_usage(cmd, "bad --samples '%s'", optarg);
            break;
        case 't': {
            double v[64];
            int n = cli_parse_list(optarg, ',', v, 1, 64);
            if (n < 0) return cli_usage(cmd, "--threads wants a list like 1,2, not '%s'", optarg);
            for (int i = 0; i < n; i++) {
                if (v[i] < 1 || v[i] > 4096 || v[i] != floor(v[i]))
                    return cli_usage(cmd, "--threads: '%g' is not a thread count", v[i]);
                threads[i] = (int)v[i];
            }
            nthreads = n;
            break;
        }
        case 'V':
            if (strlen(optarg) >= sizeof variants) return cli_usage(cmd, "--variant list too long");
            strcpy(variants, optarg);
            break;
        case 'r':
            if (cli_parse_long(optarg, 1, 1000, &l)) return cli_usage(cmd, "bad --reps '%s'", optarg);
            reps = (int)l;
            break;
        case 'd':
            if (cli_parse_long(optarg, 0, 1024, &device)) return cli_usage(cmd, "bad --device '%s'", optarg);
            break;
        case 'j': json = 1; break;
        case 'P': {
            prec[0] = prec[1] = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (!strcmp(t, "fp32")) prec[0] = 1;
                else if (!strcmp(t, "fp16")) prec[1] = 1;
                else return cli_usage(cmd, "--precision wants fp32, fp16 or fp32,fp16, not '%s'", optarg);
            }
            break;
        }
        case 'h': help(); return CLI_OK;
        default: return cli_usage(cmd, "unknown or incomplete option");
        }
    }
    int cuda = !strcmp(backend, "cuda");
    if (!nx) nx = ny = cuda ? 4096 : 1024;
    if (!npulses) npulses = cuda ? 2048 : 512;
    if (spacing == 0) spacing = 102.4 / (double)(nx > ny ? nx : ny);
    if (!nthreads)
        for (int t = 1; t <= sarbp_cpu_count() && nthreads < 64; t++) threads[nthreads++] = t;
    sarbp_grid g = {nx, ny, spacing, spacing, 0, 0, 0};
    sarbp_status st = sarbp_grid_validate(&g);
    if (st) return cli_usage(cmd, "%s", sarbp_error_detail());
    sarbp_phd *p = NULL;
    st = make_scene(npulses, nsamples, &p);
    if (st) return cli_fail_status(cmd, st);
    int rc = cuda ? bench_cuda(p, &g, variants, prec, reps, (int)device, json)
                  : bench_cpu(p, &g, threads, nthreads, reps, json);
    sarbp_phd_free(p);
    return rc;
}
