/* bench_cpu.c - sarbp bench --backend cpu, direct backprojection: the FP32
 * tiled path's throughput per interpolation kernel and thread count, and its
 * SER against the FP64 path and the exact image; the FP64 path's own rate.
 * FFBP on the CPU is in bench_ffbp.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"

/* CPU time of the whole process (every thread), for rates per core-second
 * that a busy shared machine disturbs less than wall-clock rates. */
static double process_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) ? NAN : (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Per interpolation kernel (cubic, the default, then linear): the FP32
 * tiled path's rate per thread count (median of reps runs, wall clock, and
 * per core-second of process CPU time), its SER against the FP64 image with
 * the same kernel (full image) and against the exact image (direct
 * summation, through the cpu back end at precision "exact") on the
 * EXACT_WINDOW^2 window at the centre; the FP64 reference's rate (all cores,
 * one run) and its own SER against the exact image. */
int bench_cpu(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
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
    if (!st) st = bench_exact_window(p, &w, &exact);
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
        st = bench_compress_with(p, &rcp, SARBP_FP32, &p32);
        if (!st) st = bench_compress_with(p, &rcp, SARBP_FP64, &p64);
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
        const double ser64_exact = st ? NAN : bench_window_ser_db(ref32, g, &w, x0, y0, exact);
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
            qsort(tw, (size_t)reps, sizeof *tw, bench_cmp_double);
            qsort(tc, (size_t)reps, sizeof *tc, bench_cmp_double);
            const double r32 = pairs / tw[reps / 2] / 1e6, rcpu = pairs / tc[reps / 2] / 1e6;
            const double ser = bench_ser_db(img32, ref32, npix);
            const double serx = bench_window_ser_db(img32, g, &w, x0, y0, exact);
            if (json) {
                bench_jstr("backend", "cpu", 1);
                bench_jstr("interp", kname, 0);
                printf(",\"upsample\":%d,\"threads\":%d,\"exact_window\":%zu", rcp.upsample,
                       threads[k], w.nx);
                bench_jnum("fp32_mbps", r32);
                bench_jnum("fp32_mbps_per_core", r32 / threads[k]);
                bench_jnum("fp32_mbps_per_cpu_second", rcpu);
                bench_jnum("ser_db", ser);
                bench_jnum("ser_exact_db", serx);
                printf("}\n");
            } else
                printf("%-7s %8d %12.1f %12.1f %15.1f %10.1f %10.1f\n", kname, threads[k], r32,
                       r32 / threads[k], rcpu, ser, serx);
            cli_flush_stdout();
        }
        if (!st) {
            if (json) {
                bench_jstr("backend", "cpu", 1);
                bench_jstr("interp", kname, 0);
                printf(",\"upsample\":%d,\"fp64_threads\":%d", rcp.upsample, sarbp_cpu_count());
                bench_jnum("fp64_mbps", pairs / t64 / 1e6);
                bench_jnum("fp64_ser_exact_db", ser64_exact);
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
