/* bench_autofocus.c - sarbp bench --algorithm autofocus: what autofocus
 * costs against a direct formation of the same image, and how well it
 * focuses, on the bench scene with a smooth phase error injected (6 rad
 * quadratic + 2.5 rad cubic over the aperture, the constant and linear
 * terms removed).
 *
 * In one process, warm (one cold run of each first): the median of --reps
 * direct formations of the corrupted pulses, and the median of --reps
 * autofocused ones (the estimate, its correction applied to a copy of the
 * pulses, and the formation). Accuracy: each autofocused image against the
 * image of the uncorrupted pulses (SER with the best complex gain: the
 * estimate's constant phase is free) and the estimate against the
 * injected error (rms, constant and linear terms removed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "sarbp/autofocus.h"
#include "sarbp/host.h"

/* SER (dB) of t against r with t's best complex gain. */
static double ser_gain(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double nr = 0, ni = 0, tt = 0, rr = 0;
    for (size_t i = 0; i < n; i++) {
        nr += (double)t[i].re * r[i].re + (double)t[i].im * r[i].im;
        ni += (double)t[i].re * r[i].im - (double)t[i].im * r[i].re;
        tt += (double)t[i].re * t[i].re + (double)t[i].im * t[i].im;
        rr += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
    }
    if (!(tt > 0) || !(rr > 0)) return NAN;
    const double e = rr - (nr * nr + ni * ni) / tt; /* |r - g t|^2 at the best g */
    return e <= 0 ? INFINITY : 10 * log10(rr / e);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_autofocus(const sarbp_phd *p, const sarbp_grid *g, int cuda, int device, int reps, int json)
{
    const char *cmd = "bench";
    const size_t P = p->npulses, N = g->nx * g->ny;
    if (reps > 64) reps = 64;
    double *err = malloc(P * sizeof *err), *neg = malloc(P * sizeof *neg), *est = malloc(P * sizeof *est);
    sarbp_phd *bad = NULL, *fixed = NULL;
    sarbp_image *ref = NULL, *img = NULL;
    sarbp_status st = (!err || !neg || !est) ? sarbp_error(SARBP_ERR_NOMEM, "out of memory") : SARBP_OK;
    for (size_t j = 0; !st && j < P; j++) {
        const double t = P > 1 ? 2.0 * (double)j / (double)(P - 1) - 1.0 : 0.0;
        err[j] = 6.0 * t * t + 2.5 * t * t * t;
    }
    if (!st) {
        sarbp_phase_detrend(err, P);
        for (size_t j = 0; j < P; j++) neg[j] = -err[j];
        st = sarbp_phd_slice(p, 0, P, &bad);
    }
    if (!st) st = sarbp_autofocus_apply(bad, neg, NULL);
    if (!st) st = sarbp_phd_slice(p, 0, P, &fixed);
    const sarbp_backend *be = cuda ? &sarbp_backend_cuda : &sarbp_backend_cpu;
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options bo;
    sarbp_bp_options_default(&bo);
    bo.device = device;
    if (!st) st = sarbp_form_phd(bench_session, p, g, be, &rc, &bo, NULL, &ref, NULL);
    if (!st) st = sarbp_image_alloc(g, &img);
    double t_form[64], t_est[64], t_all[64], ser = NAN, ser_bad = NAN, rms = NAN;
    sarbp_autofocus_info info = {0};
    /* the direct formations of the corrupted pulses, one cold first */
    for (int r = -1; !st && r < reps; r++) {
        const double t0 = sarbp_now_s();
        st = sarbp_form_phd_into(bench_session, bad, g, be, &rc, &bo, NULL, img, NULL);
        if (r >= 0) t_form[r] = sarbp_now_s() - t0;
    }
    if (!st) ser_bad = ser_gain(img->data, ref->data, N);
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    o.device = cuda ? device : -1;
    o.session = bench_session;
    for (int r = -1; !st && r < reps; r++) {
        memcpy(fixed->data, bad->data, P * p->nsamples * sizeof *fixed->data);
        const double t0 = sarbp_now_s();
        st = sarbp_autofocus_estimate(bad, g, &rc, &o, est, NULL, &info);
        const double t1 = sarbp_now_s();
        if (!st) st = sarbp_autofocus_apply(fixed, est, NULL);
        if (!st) st = sarbp_form_phd_into(bench_session, fixed, g, be, &rc, &bo, NULL, img, NULL);
        if (r >= 0) {
            t_est[r] = t1 - t0;
            t_all[r] = sarbp_now_s() - t0;
        }
    }
    if (!st) {
        ser = ser_gain(img->data, ref->data, N);
        double ss = 0;
        for (size_t j = 0; j < P; j++) neg[j] = remainder(est[j] - err[j], 2.0 * M_PI);
        sarbp_phase_detrend(neg, P);
        for (size_t j = 0; j < P; j++) ss += neg[j] * neg[j];
        rms = sqrt(ss / (double)P);
    }
    int rc_out = CLI_OK;
    if (st) rc_out = cli_fail_status(cmd, st);
    else {
        const double tf = median(t_form, reps), te = median(t_est, reps), ta = median(t_all, reps);
        if (json) {
            printf("{\"autofocus\":{");
            bench_jstr("backend", cuda ? "cuda" : "cpu", 1);
            bench_jnum("form_ms", 1e3 * tf);
            bench_jnum("estimate_ms", 1e3 * te);
            bench_jnum("autofocused_form_ms", 1e3 * ta);
            bench_jnum("formations", ta / tf);
            bench_jnum("ser_db", ser);
            bench_jnum("uncorrected_ser_db", ser_bad);
            bench_jnum("estimate_rms_rad", rms);
            bench_jnum("pixels", (double)info.pixels);
            bench_jnum("windows", (double)info.nwindows);
            bench_jnum("iterations", info.iterations);
            bench_jnum("images", info.evaluations);
            printf("}}\n");
        } else {
            printf("autofocus on the %s, %zu pulses onto %zu x %zu at %g m, error 6 rad quadratic + 2.5 rad "
                   "cubic injected (medians of %d after a cold run):\n",
                   cuda ? "GPU" : "CPU", P, g->nx, g->ny, g->dx, reps);
            printf("  direct formation            %9.1f ms\n", 1e3 * tf);
            printf("  estimate                    %9.1f ms (%zu pixels in %zu windows, %d iterations, %d "
                   "images)\n", 1e3 * te, info.pixels, info.nwindows, info.iterations, info.evaluations);
            printf("    of it: range compression %.1f ms, windows %.1f ms, contributions %.1f ms, search %.1f ms "
                   "(the last run)\n", 1e3 * info.profiles_s, 1e3 * info.windows_s, 1e3 * info.contributions_s,
                   1e3 * (info.seconds - info.profiles_s - info.windows_s - info.contributions_s));
            printf("  estimate + correct + form   %9.1f ms = %.2f direct formations\n", 1e3 * ta, ta / tf);
            printf("  image vs the uncorrupted pulses' image: %.1f dB (uncorrected %.1f dB); estimate vs "
                   "injected %.4f rad rms\n", ser, ser_bad, rms);
        }
        cli_flush_stdout();
    }
    free(err);
    free(neg);
    free(est);
    sarbp_phd_free(bad);
    sarbp_phd_free(fixed);
    sarbp_image_free(ref);
    sarbp_image_free(img);
    return rc_out;
}
