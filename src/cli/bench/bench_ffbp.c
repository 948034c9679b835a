/* bench_ffbp.c - sarbp bench --algorithm ffbp: fast factorized backprojection
 * on the CPU against direct FP32 backprojection, and on CUDA (sarbp_ffbp_cuda's
 * device and call time, then end to end through form with the ffbp plan), each
 * with its SER against direct backprojection and the exact image. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "sarbp/ffbp.h"

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
int bench_ffbp(const sarbp_phd *p, const sarbp_grid *g, const int *threads, int nthreads,
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
    if (!st) st = bench_compress_with(p, &rcp, SARBP_FP32, &p32);
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
    if (!st) st = bench_exact_window(p, &w, &exact);
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
        qsort(tw, (size_t)reps, sizeof *tw, bench_cmp_double);
        const double t = tw[reps / 2], eq = pairs / t / 1e6;
        const double ser = bench_ser_db(img + band.row0 * g->nx, ref, ref_rows * g->nx);
        const double serx = bench_window_ser_db(img, g, &w, x0, y0, exact);
        if (json) {
            bench_jstr("backend", "cpu", 1);
            bench_jstr("algorithm", "ffbp", 0);
            printf(",\"threads\":%d,\"base\":%zu,\"merge\":%zu,\"final_subs\":%zu", threads[k],
                   prm.base, prm.merge, prm.final_subs);
            bench_jnum("os_theta", prm.os_theta);
            bench_jnum("os_rho", prm.os_rho);
            bench_jnum("max_error_db", max_error_db);
            bench_jnum("predicted_error_db", pd.error_db);
            bench_jnum("ffbp_s", t);
            bench_jnum("bp_s_scaled", t_bp);
            printf(",\"bp_rows\":%zu", ref_rows);
            bench_jnum("equivalent_mbps", eq);
            bench_jnum("equivalent_mbps_per_core", eq / threads[k]);
            bench_jnum("speedup", t_bp / t);
            bench_jnum("ser_bp_db", ser);
            bench_jnum("ser_exact_db", serx);
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

/* One end-to-end run's figures, ordered by total_s. */
struct e2e_run {
    double total_s, read_s, init_s;
    sarbp_stage_times stages;
};

static int cmp_e2e(const void *a, const void *b)
{
    return bench_cmp_double(&((const struct e2e_run *)a)->total_s,
                            &((const struct e2e_run *)b)->total_s);
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
    st = bench_reused_median(p, g, &rcp, &o, reps, &reused);
    if (st) {
        sarbp_image_free(im);
        free(runs);
        return st;
    }
    qsort(runs, (size_t)reps, sizeof *runs, cmp_e2e);
    const struct e2e_run *m = &runs[reps / 2];
    const sarbp_stage_times *t = &m->stages;
    const double pairs = (double)g->nx * (double)g->ny * (double)p->npulses;
    const double tbps = pairs / m->total_s / 1e12, ser_x = bench_window_ser_db(im->data, g, w, x0, y0, exact);
    sarbp_image_free(im);
    if (json) {
        bench_jstr("end_to_end", "ffbp", 1);
        bench_jstr("interp", sarbp_interp_name(rcp.interp), 0);
        printf(",\"upsample\":%d,\"reps\":%d", rcp.upsample, reps);
        bench_jnum("total_s", m->total_s);
        bench_jnum("first_run_s", cold);
        bench_jnum("tbps_equivalent", tbps);
        bench_jnum("reused_total_s", reused);
        bench_jnum("reused_tbps_equivalent", pairs / reused / 1e12);
        bench_jnum("init_s", m->init_s);
        bench_jnum("setup_s", t->setup_s);
        bench_jnum("read_s", m->read_s);
        bench_jnum("transfer_s", t->transfer_s);
        bench_jnum("rc_s", t->rc_s);
        bench_jnum("bp_s", t->bp_s);
        bench_jnum("finish_s", t->finish_s);
        bench_jnum("pulse_mib", t->pulse_bytes / 1048576.0);
        bench_jnum("image_mib", t->image_bytes / 1048576.0);
        bench_jnum("exact_ser_db", ser_x);
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
int bench_cuda_ffbp(const sarbp_phd *p, const sarbp_grid *g, size_t exact_n, int reps,
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
    if (!st) st = bench_exact_window(p, &w, &exact);
    if (!st) st = bench_exact_window(p, &wc, &exact_c);
    if (!st) st = bench_compress_with(p, &rcp, SARBP_FP32, &p32);
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
        qsort(ms, (size_t)reps, sizeof *ms, bench_cmp_double);
        qsort(wall, (size_t)reps, sizeof *wall, bench_cmp_double);
        const double med = ms[reps / 2], med_wall = wall[reps / 2];
        const double pairs = (double)npix * (double)p->npulses;
        const double gbps = pairs / (med * 1e-3) / 1e9, gbps_wall = pairs / (med_wall * 1e-3) / 1e9;
        const double ser_x = bench_window_ser_db(img, g, &w, wx0, wy0, exact);
        const double ser_c = bench_window_ser_db(img, g, &wc, cx0, cy0, exact_c);
        const double ser_bp = bench_ser_db(img, bp, npix);
        const double ser_bc = bench_window_ser_db(bp, g, &wc, cx0, cy0, exact_c); /* direct bp there */
        if (json) {
            bench_jstr("algorithm", "ffbp", 1);
            bench_jstr("device", name, 0);
            printf(",\"nx\":%zu,\"ny\":%zu,\"pulses\":%zu,\"bins\":%zu,\"stages\":%d,"
                   "\"final_subs\":%zu,\"polar_samples\":%zu,\"exact_window\":%zu",
                   g->nx, g->ny, p->npulses, p32->nbins, info.stages, info.final_subs,
                   info.polar_samples, w.nx);
            bench_jnum("max_error_db", max_error_db);
            bench_jnum("predicted_ser_db", -pred_db);
            bench_jnum("ms", med);
            bench_jnum("call_ms", med_wall);
            bench_jnum("stage0_ms", last.stage0_ms);
            bench_jnum("merge_ms", last.merge_ms);
            bench_jnum("prefilter_ms", last.prefilter_ms);
            bench_jnum("final_ms", last.final_ms);
            bench_jnum("gbps_equivalent", gbps);
            bench_jnum("bp_kernel_ms", bp_ms);
            bench_jnum("bp_ser_db", ser_bp);
            bench_jnum("exact_ser_db", ser_x);
            bench_jnum("exact_corner_ser_db", ser_c);
            bench_jnum("bp_exact_corner_ser_db", ser_bc);
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
