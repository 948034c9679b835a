/* test_rangecomp.c - range compression: tones land in the predicted bin with
 * the predicted value (the prefilter's gain, the band centre's phase); a
 * simulated chirp echo compresses to a peak at the right range with a 3 dB
 * width of 0.886 c / (2 B); the windows' coherent gain without a plan is
 * the plan's, bit for bit (FREQ and CHIRP, with and without windows). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* Compressed chirp: 3 dB width against 0.886 c / 2B, measured 0.028 %
 * at most off (linear interpolation of the crossings); the old bar was 5 %. */
#define CHIRP_WIDTH_PCT 0.028
#define CHIRP_WIDTH_HEADROOM_PCT 0.5

/* One FREQ pulse whose samples are a target at differential range dR. */
static sarbp_phd *tone_phd(size_t K, double f0, double df, double dR)
{
    sarbp_phd *p;
    tu_ok(sarbp_phd_alloc(SARBP_DOMAIN_FREQ, 1, K, 1, &p));
    p->pos[0] = 7000;
    p->pos[2] = 7000;
    p->r0[0] = hypot(7000, 7000);
    p->f0[0] = f0;
    p->df[0] = df;
    for (size_t k = 0; k < K; k++) {
        double ph = -4 * M_PI * (f0 + k * df) * dR / SARBP_C;
        p->data[k].re = (float)cos(ph);
        p->data[k].im = (float)sin(ph);
    }
    return p;
}

/* A tone on a bin reads the sum of its samples' weights at that bin: with the
 * spectral prefilter each weight is 1 / (K response(nu_k)), sample k sitting
 * at nu_k = (k - K/2) / nbins cycles per bin. So the peak is about the mean
 * over the samples of 1 / response(nu_k) (1.0086 for cubic at 424 samples,
 * 8x; 1.035 at 4x), not 1. Evaluated here as that weighted DFT of the
 * samples themselves (FP32, as stored) at the tone's bin m from the centre,
 * so their rounding is in the expectation, not in the error. */
static double tone_peak_expected(sarbp_interp interp, const sarbp_c32 *s, size_t K, size_t nb,
                                 long m)
{
    double re = 0, im = 0;
    for (size_t k = 0; k < K; k++) {
        const double kk = (double)k - (double)(K / 2);
        const double w = 1.0 / (sarbp_interp_response(interp, kk / (double)nb) * (double)K);
        const double ph = 2 * M_PI * fmod(kk * (double)m, (double)nb) / (double)nb;
        re += w * (s[k].re * cos(ph) - s[k].im * sin(ph));
        im += w * (s[k].re * sin(ph) + s[k].im * cos(ph));
    }
    return hypot(re, im);
}

static void check_tone(sarbp_precision prec, int bins_off)
{
    const size_t K = 424;
    const double f0 = 9.28808e9, df = 1471488;
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    prm.upsample = 8; /* 3402 bins: room for the tones at +-1200 bins */
    size_t nb = sarbp_rc_nbins(&(sarbp_phd){.domain = SARBP_DOMAIN_FREQ, .nsamples = K}, prm.upsample);
    double dr = SARBP_C / (2 * df * nb);
    sarbp_phd *p = tone_phd(K, f0, df, bins_off * dr);
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, prec, 1, &plan));
    assert_int_equal(sarbp_rc_plan_nbins(plan), nb);
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(1, nb, prec, &pr));
    tu_ok(sarbp_rc_execute(plan, 0, 1, p->data, pr));
    size_t best = 0;
    double bestv = -1;
    for (size_t b = 0; b < nb; b++) {
        double re = prec == SARBP_FP64 ? pr->data64[b].re : pr->data32[b].re;
        double im = prec == SARBP_FP64 ? pr->data64[b].im : pr->data32[b].im;
        double m = hypot(re, im);
        if (m > bestv) { bestv = m; best = b; }
    }
    assert_int_equal(best, nb / 2 + bins_off);
    /* bin position agrees with the geometry */
    assert_true(fabs(pr->rstart[0] + best * pr->dr[0] - bins_off * dr) < 1e-9);
    const double expect = tone_peak_expected(prm.interp, p->data, K, nb, bins_off);
    print_message("%s tone at bin %+d: peak %.12f, expected %.12f (prefilter gain), "
                  "error %.1e\n", sarbp_precision_name(prec), bins_off, bestv, expect,
                  fabs(bestv - expect));
    assert_true(fabs(bestv - expect) < (prec == SARBP_FP64 ? 1e-9 : 1e-5));
    /* value at the peak has the band centre's phase exp(-j 4 pi fref dR / c),
     * fref = f0 + (K/2) df: the profile is at baseband */
    double re = prec == SARBP_FP64 ? pr->data64[best].re : pr->data32[best].re;
    double im = prec == SARBP_FP64 ? pr->data64[best].im : pr->data32[best].im;
    const double fref = f0 + (double)(K / 2) * df;
    assert_true(fabs(pr->fref[0] - fref) < 1e-6);
    double ph = -4 * M_PI * fref * bins_off * dr / SARBP_C;
    assert_true(hypot(re - expect * cos(ph), im - expect * sin(ph)) <
                (prec == SARBP_FP64 ? 1e-6 : 1e-4));
    sarbp_profiles_free(pr);
    sarbp_rc_plan_free(plan);
    sarbp_phd_free(p);
}

static void test_tone_fp64(void **state) { (void)state; check_tone(SARBP_FP64, 0); check_tone(SARBP_FP64, 37); check_tone(SARBP_FP64, -1200); }
static void test_tone_fp32(void **state) { (void)state; check_tone(SARBP_FP32, 0); check_tone(SARBP_FP32, 513); }

static void test_fft_size(void **state)
{
    (void)state;
    assert_int_equal(sarbp_fft_size(1), 1);
    assert_int_equal(sarbp_fft_size(3392), 3402); /* 2 * 3^5 * 7 */
    assert_int_equal(sarbp_fft_size(4096), 4096);
    assert_int_equal(sarbp_fft_size(4097), 4116);
    assert_int_equal(sarbp_fft_size(11), 12);
}

static void test_chirp_compression(void **state)
{
    (void)state;
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    sp.npulses = 3;
    sarbp_target t = {0, 4, 0, 1};
    sp.targets = &t;
    sp.ntargets = 1;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    assert_int_equal(prm.interp, SARBP_INTERP_QUADRATIC); /* the default: quadratic at 8x */
    assert_int_equal(prm.upsample, 8);
    prm.interp = SARBP_INTERP_CUBIC; /* the figures below are the cubic's */
    prm.upsample = 8; /* the crossings are found by linear interpolation: 8x as measured */
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, SARBP_FP64, 3, &plan));
    size_t nb = sarbp_rc_plan_nbins(plan);
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(3, nb, SARBP_FP64, &pr));
    tu_ok(sarbp_rc_execute(plan, 0, 3, p->data, pr));
    double B = fabs(p->chirp_rate) * p->pulse_len;
    /* the profile is read through the cubic B-spline: the function it
     * represents takes at bin b the value (c[b-1] + 4 c[b] + c[b+1]) / 6 of
     * the stored (prefiltered) coefficients, which is what is measured */
    sarbp_c64 *sm = malloc(nb * sizeof *sm);
    assert_non_null(sm);
    for (size_t i = 0; i < 3; i++) {
        const sarbp_c64 *c = pr->data64 + i * nb;
        for (size_t b = 0; b < nb; b++) {
            const sarbp_c64 lo = b > 0 ? c[b - 1] : (sarbp_c64){0, 0};
            const sarbp_c64 hi = b + 1 < nb ? c[b + 1] : (sarbp_c64){0, 0};
            sm[b].re = (lo.re + 4 * c[b].re + hi.re) / 6;
            sm[b].im = (lo.im + 4 * c[b].im + hi.im) / 6;
        }
        const sarbp_c64 *prof = sm;
        size_t best = 0;
        double bestv = -1;
        for (size_t b = 0; b < nb; b++) {
            double m = hypot(prof[b].re, prof[b].im);
            if (m > bestv) { bestv = m; best = b; }
        }
        const double *a = p->pos + 3 * i;
        double dR = sqrt((a[0] - t.x) * (a[0] - t.x) + (a[1] - t.y) * (a[1] - t.y) + a[2] * a[2]) -
                    p->r0[i];
        double expect = (dR - pr->rstart[i]) / pr->dr[i];
        assert_true(fabs((double)best - expect) <= 1.0);
        assert_true(fabs(bestv - 1.0) < 0.02);
        /* 3 dB width by linear interpolation of the crossings */
        double half = bestv / sqrt(2.0);
        size_t l = best, r = best;
        while (l > 0 && hypot(prof[l].re, prof[l].im) > half) l--;
        while (r + 1 < nb && hypot(prof[r].re, prof[r].im) > half) r++;
        double ml = hypot(prof[l].re, prof[l].im), ml1 = hypot(prof[l + 1].re, prof[l + 1].im);
        double mr = hypot(prof[r].re, prof[r].im), mr1 = hypot(prof[r - 1].re, prof[r - 1].im);
        double xl = l + (half - ml) / (ml1 - ml);
        double xr = r - (half - mr) / (mr1 - mr);
        double width = (xr - xl) * pr->dr[i];
        double theory = 0.886 * SARBP_C / (2 * B);
        print_message("chirp 3 dB width %.5f m, theory %.5f m\n", width, theory);
        tu_bar_max(100 * fabs(width / theory - 1), CHIRP_WIDTH_PCT, CHIRP_WIDTH_HEADROOM_PCT, "%",
                   "chirp pulse %zu 3 dB width |width / theory - 1|", i);
    }
    free(sm);
    sarbp_profiles_free(pr);
    sarbp_rc_plan_free(plan);
    sarbp_phd_free(p);
}

static void test_bad_upsample(void **state)
{
    (void)state;
    sarbp_phd *p = tone_phd(16, 1e9, 1e6, 0);
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    prm.upsample = 0;
    sarbp_rc_plan *plan = NULL;
    assert_int_equal(sarbp_rc_plan_create(p, &prm, SARBP_FP32, 1, &plan), SARBP_ERR_INVALID);
    assert_null(plan);
    sarbp_phd_free(p);
}

static void test_coherent_gain_without_plan(void **state)
{
    (void)state;
    sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *ph[2] = {tu_targets(&t, 1, 40), tu_chirp_stripmap(40)};
    const sarbp_window_kind kinds[3] = {SARBP_WIN_NONE, SARBP_WIN_HAMMING, SARBP_WIN_TAYLOR};
    for (int d = 0; d < 2; d++)
        for (int r = 0; r < 3; r++)
            for (int a = 0; a < 3; a++) {
                sarbp_rc_params rc;
                sarbp_rc_params_default(&rc);
                rc.range_window.kind = kinds[r];
                rc.az_window.kind = kinds[a];
                sarbp_rc_plan *plan = NULL;
                tu_ok(sarbp_rc_plan_create(ph[d], &rc, SARBP_FP32, 1, &plan));
                double gain = -1;
                tu_ok(sarbp_rc_coherent_gain(ph[d], &rc, &gain));
                assert_memory_equal(&gain, &(double){sarbp_rc_plan_coherent_gain(plan)}, sizeof gain);
                sarbp_rc_plan_free(plan);
            }
    sarbp_phd_free(ph[0]);
    sarbp_phd_free(ph[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fft_size),
        cmocka_unit_test(test_tone_fp64),
        cmocka_unit_test(test_tone_fp32),
        cmocka_unit_test(test_chirp_compression),
        cmocka_unit_test(test_bad_upsample),
        cmocka_unit_test(test_coherent_gain_without_plan),
    };
    return tu_run_tests(tests);
}
