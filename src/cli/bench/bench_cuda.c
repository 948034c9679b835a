/* bench_cuda.c - sarbp bench --backend cuda, direct backprojection: the
 * kernel-only table (per interpolation, variant and precision: time, Gbp/s,
 * SER), form end to end with pulses streamed, and the multi-device scaling
 * table. FFBP on CUDA is in bench_ffbp.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

/* The median wall time of reps forms of p into one reused image (touched
 * by a first, untimed form): the steady state of a caller that forms image
 * after image into the same memory (sarbp_form_phd_into), where a fresh
 * image pays its page faults. */
sarbp_status bench_reused_median(const sarbp_phd *p, const sarbp_grid *g,
                                 const sarbp_rc_params *rc, const sarbp_bp_options *o, int reps,
                                 double *median_s)
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
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    *median_s = t[n / 2];
    return SARBP_OK;
}

/* The exact image's central window, to measure a scaling row's image
 * against. */
struct exact_ref {
    const sarbp_grid *w;
    size_t wx0, wy0;
    const sarbp_c32 *exact;
};

/* One fp32 form end to end with the devices of o; its stats in fs and,
 * ser not NULL, its SER against x's exact window. */
static sarbp_status form_once(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *o,
                              sarbp_form_stats *fs, const struct exact_ref *x, double *ser)
{
    sarbp_rc_params rcp;
    sarbp_rc_params_default(&rcp);
    sarbp_rc_params_default_for(&rcp, o->precision, o->algorithm == SARBP_ALGO_FFBP);
    sarbp_image *im = NULL;
    SARBP_TRY(sarbp_form_phd(bench_session, p, g, &sarbp_backend_cuda, &rcp, o, NULL, &im, fs));
    if (ser) *ser = bench_window_ser_db(im->data, g, x->w, x->wx0, x->wy0, x->exact);
    sarbp_image_free(im);
    return SARBP_OK;
}


/* The scaling table: fp32 end to end on the first 1, 2, 4, ... devices of
 * devs and on all of them (bands of rows, one thread each), each row with
 * its image's SER against the exact window (the first, untimed run's: the
 * one-time costs, contexts and cuFFT's kernels, are paid there). Then reps
 * runs of every row, the rows alternating so that drift hits them all;
 * medians, and the per-device split of the median run of all. */
static int bench_scaling(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *devs,
                         size_t pulse_block, int reps, int json, const struct exact_ref *x)
{
    const double pairs = (double)g->nx * g->ny * p->npulses;
    enum { MAX_ROWS = 8 };
    int ndev[MAX_ROWS], nrows = 0;
    for (int n = 1; n < devs->ndevices && nrows < MAX_ROWS - 1; n *= 2) ndev[nrows++] = n;
    ndev[nrows++] = devs->ndevices;
    sarbp_bp_options o[MAX_ROWS];
    for (int r = 0; r < nrows; r++) {
        sarbp_bp_options_default(&o[r]);
        o[r].device = devs->devices[0];
        o[r].pulse_block = pulse_block;
        if (ndev[r] > 1) {
            o[r].ndevices = ndev[r];
            memcpy(o[r].devices, devs->devices, (size_t)ndev[r] * sizeof o[r].devices[0]);
        }
    }
    if (reps > SCALING_REPS_MAX) reps = SCALING_REPS_MAX;
    sarbp_form_stats fs, last = {0}, runs[SCALING_REPS_MAX];
    double t[MAX_ROWS][SCALING_REPS_MAX], ser[MAX_ROWS], med[MAX_ROWS];
    sarbp_status st = SARBP_OK;
    for (int r = 0; !st && r < nrows; r++) st = form_once(p, g, &o[r], &fs, x, &ser[r]);
    for (int k = 0; !st && k < reps; k++)
        for (int r = 0; !st && r < nrows; r++) {
            st = form_once(p, g, &o[r], r == nrows - 1 ? &runs[k] : &fs, NULL, NULL);
            t[r][k] = r == nrows - 1 ? runs[k].total_s : fs.total_s;
        }
    if (st) {
        fprintf(stderr, "sarbp: bench: scaling: %s\n", sarbp_error_detail());
        return 1;
    }
    for (int r = 0; r < nrows; r++) {
        double sorted[SCALING_REPS_MAX];
        memcpy(sorted, t[r], sizeof(double) * (size_t)reps);
        qsort(sorted, (size_t)reps, sizeof *sorted, bench_cmp_double);
        med[r] = sorted[reps / 2];
    }
    for (int k = 0; k < reps; k++) /* the run of all at the median */
        if (t[nrows - 1][k] == med[nrows - 1]) last = runs[k];
    const double r1 = pairs / med[0] / 1e9;
    if (!json)
        printf("\nscaling, fp32 end to end (image rows shared, one thread each; median of %d; SER "
               "against the exact image on the central %zu x %zu window):\n", reps, x->w->nx, x->w->ny);
    for (int r = 0; r < nrows; r++) {
        const double rn = pairs / med[r] / 1e9;
        if (json) {
            printf("{\"scaling_devices\":%d", ndev[r]);
            bench_jnum("total_s", med[r]);
            bench_jnum("gbps", rn);
            bench_jnum("scaling", rn / r1);
            bench_jnum("exact_ser_db", ser[r]);
            printf("}\n");
        } else {
            printf("  %d device%s (from %d): %.4f s, %.1f Gbp/s, %.2f x one device (ideal %d), "
                   "%.1f dB against exact\n", ndev[r], ndev[r] == 1 ? "" : "s", devs->devices[0], med[r],
                   rn, rn / r1, ndev[r], ser[r]);
        }
    }
    for (int k = 0; k < last.layout.nparts; k++) {
        const sarbp_form_part *pt = &last.layout.part[k];
        const sarbp_form_dev_stats *d = &last.dev[k];
        const double r = d->pairs / (d->total_s > 0 ? d->total_s : 1) / 1e9;
        if (json) {
            printf("{\"scaling_device\":%d,\"rows\":%zu,\"bands\":%zu", pt->device, pt->nrows, pt->bands);
            bench_jnum("total_s", d->total_s);
            bench_jnum("gbps", r);
            printf("}\n");
        } else {
            printf("    all %d, device %d: rows %zu to %zu (%zu band%s), %.4f s, %.1f Gbp/s (setup %.4f, "
                   "backprojection %.4f, finish %.4f s)\n", last.layout.nparts, pt->device, pt->row0,
                   pt->row0 + pt->nrows, pt->bands, pt->bands == 1 ? "" : "s", d->total_s, r,
                   d->stages.setup_s, d->stages.bp_s, d->stages.finish_s);
        }
    }
    if (!json) printf("    all %d: starting and layout %.4f s\n", last.layout.nparts, last.init_s);
    cli_flush_stdout();
    return 0;
}

/* The names of the kernel table's precisions, in column order (--precision). */
const char *const bench_prec_names[NPREC] = {"fp32", "fp16", "mixed"};

int bench_cuda(const sarbp_phd *p, const sarbp_grid *g, char *variants, const int *prec,
               const struct interp_cfg *ics, int nic, int ics_given, size_t exact_n,
               size_t pulse_block, int reps, const sarbp_bp_options *devs, int json)
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
    st = bench_exact_window(p, &w, &exact);
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
        bench_jstr("device", name, 1);
        printf(",\"sms\":%d,\"clock_mhz\":%d,\"nx\":%zu,\"ny\":%zu,\"pulses\":%zu,\"samples\":%zu,"
               "\"exact_window\":%zu", sms, clk, g->nx, g->ny, p->npulses, p->nsamples, w.nx);
        bench_jnum("spacing", g->dx);
        printf("}\n");
    }
    cli_flush_stdout();
    int rc_out = CLI_OK;
    /* the kernel-only time of form's default kernel (default interpolation
     * and variant), per precision, when the table measures it: the end-to-end
     * runs are set against it */
    double kern_ms[NPREC] = {NAN, NAN, NAN};
    sarbp_rc_params rc_default[NPREC]; /* the end to end's kernel per precision: form's default,
                                          or --interp's first */
    static const sarbp_precision prec_of[NPREC] = {SARBP_FP32, SARBP_FP16, SARBP_MIXED};
    for (int h = 0; h < NPREC; h++) {
        sarbp_rc_params_default(&rc_default[h]);
        sarbp_rc_params_default_for(&rc_default[h], prec_of[h], 0);
        if (ics_given) {
            rc_default[h].interp = ics[0].interp;
            rc_default[h].upsample = ics[0].upsample;
        }
    }
    for (int c = 0; c < nic && !st; c++) {
        sarbp_profiles *p32 = NULL;
        sarbp_rc_params rcp;
        sarbp_rc_params_default(&rcp);
        rcp.interp = ics[c].interp;
        rcp.upsample = ics[c].upsample;
        st = bench_compress_with(p, &rcp, SARBP_FP32, &p32);
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
        const double v1_exact = bench_window_ser_db(ref, g, &w, wx0, wy0, exact);
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
            if (bench_parse_variant(tok, vname, &kc)) {
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
                    fprintf(stderr, "sarbp: bench: %s %s: %s\n", tok, bench_prec_names[h],
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
                const double ser = bench_ser_db(img, ref, npix);
                const double ser_x = bench_window_ser_db(img, g, &w, wx0, wy0, exact);
                if (json) {
                    bench_jstr("interp", iname, 1);
                    printf(",\"upsample\":%d", ics[c].upsample);
                    bench_jstr("variant", tok, 0);
                    bench_jstr("precision", bench_prec_names[h], 0);
                    bench_jnum("ms", ms);
                    bench_jnum("gbps", gbps[h]);
                    bench_jnum("gflops", 43 * gbps[h]);
                    bench_jnum("exact_ser_db", ser_x);
                    bench_jnum("fp64_ser_db", ser);
                    bench_jnum("profile_mib", mib[h]);
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
    /* end to end: the streamed pipeline with the default variant and the
     * default interpolation (or --interp's first), per precision (fp16
     * twice: raw samples uploaded as FP16, then as FP32); none where the
     * kernel table has none (the quadratic's fp16 and mixed, mixed linear) */
    if (!json) printf("\n");
    for (int run = 0; run < 4; run++) {
        static const int run_prec[4] = {PREC_FP32, PREC_FP16, PREC_FP16, PREC_MIXED};
        static const char *const labels[4] = {"fp32", "fp16, raw fp16", "fp16, raw fp32", "mixed"};
        static const sarbp_precision run_p[NPREC] = {SARBP_FP32, SARBP_FP16, SARBP_MIXED};
        const int h = run_prec[run], raw16 = run == 1;
        if (!prec[h]) continue;
        const char *label = labels[run];
        const sarbp_rc_params rcp = rc_default[h];
        if ((rcp.interp == SARBP_INTERP_QUADRATIC && h != PREC_FP32) ||
            (h == PREC_MIXED && rcp.interp != SARBP_INTERP_CUBIC))
            continue;
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
        if (!st) st = bench_reused_median(p, g, &rcp, &o, nrun, &reused);
        if (!st) {
            double sorted[SCALING_REPS_MAX];
            memcpy(sorted, runs, (size_t)nrun * sizeof *runs);
            qsort(sorted, (size_t)nrun, sizeof *sorted, bench_cmp_double);
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
        const double ser_x = bench_window_ser_db(im->data, g, &w, wx0, wy0, exact);
        if (json) {
            bench_jstr("end_to_end", label, 1);
            bench_jstr("interp", sarbp_interp_name(rcp.interp), 0);
            printf(",\"upsample\":%d", rcp.upsample);
            bench_jnum("total_s", fs.total_s);
            bench_jnum("first_run_s", cold);
            bench_jnum("init_s", fs.init_s);
            bench_jnum("setup_s", t->setup_s);
            bench_jnum("read_s", fs.read_s);
            bench_jnum("transfer_s", t->transfer_s);
            bench_jnum("rc_s", t->rc_s);
            bench_jnum("bp_s", t->bp_s);
            bench_jnum("finish_s", t->finish_s);
            bench_jnum("total_over_largest", fs.total_s / big);
            bench_jnum("total_over_kernel", fs.total_s / (1e-3 * kern_ms[h]));
            bench_jnum("reused_total_s", reused);
            bench_jnum("reused_over_kernel", reused / (1e-3 * kern_ms[h]));
            bench_jnum("gbps", pairs / fs.total_s / 1e9);
            bench_jnum("pulse_mib", t->pulse_bytes / 1048576.0);
            bench_jnum("image_mib", t->image_bytes / 1048576.0);
            bench_jnum("exact_ser_db", ser_x);
            printf("}\n");
        } else
        {
            printf("end to end, %s (form, %s kernel, %s %dx, pulse blocks streamed): %.4f s "
                   "(median of %d; first run %.3f s), %.1f Gbp/s, %.1f dB against exact\n"
                   "  layout %.4f, setup %.4f, read %.4f, transfer %.4f, range compression %.4f "
                   "(under the backprojection), backprojection %.4f, "
                   "finish %.4f s;\n"
                   "  total = %.2f x the largest of read, transfer and backprojection (%s)",
                   label, ics_given ? "--interp's first" : "default", sarbp_interp_name(rcp.interp),
                   rcp.upsample, fs.total_s, nrun, cold,
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
    const struct exact_ref xr = {&w, wx0, wy0, exact};
    if (devs->ndevices > 1 && rc_out == CLI_OK && bench_scaling(p, g, devs, pulse_block, reps, json, &xr))
        rc_out = CLI_FAIL;
    free(ref);
    free(img);
    free(exact);
    return rc_out;
}
