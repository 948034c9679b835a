/* test_simulate.c - the point-target simulator against independent formulas. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define assert_near(a, b, tol)                                                     \
    do {                                                                         \
        double an_a_ = (a), an_b_ = (b);                                         \
        if (!(fabs(an_a_ - an_b_) <= (tol)))                                     \
            fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, an_a_, an_b_, \
                     (double)(tol));                                             \
    } while (0)

static const long double C_LD = 299792458.0L;

static sarbp_phd *sim(const sarbp_sim_params *p)
{
    sarbp_phd *phd = NULL;
    tu_ok(sarbp_simulate(p, &phd));
    assert_non_null(phd);
    assert_non_null(phd->data);
    tu_ok(sarbp_phd_validate(phd));
    return phd;
}

static double cabs32(sarbp_c32 z) { return hypot(z.re, z.im); }

/* ---- defaults and geometry ------------------------------------------------ */

static void test_defaults(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    assert_int_equal(p.geometry, SARBP_GEOM_CIRCULAR);
    assert_int_equal(p.domain, SARBP_DOMAIN_FREQ);
    assert_int_equal(p.npulses, 512);
    assert_int_equal(p.nsamples, 512);
    assert_true(p.fc == 9.6e9);
    assert_true(p.bandwidth == 640e6);
    assert_true(p.range == 10e3);
    assert_true(p.elevation_deg == 45);
    assert_true(p.aperture_deg == 4);
    assert_true(p.noise_db <= -300);
    assert_int_equal(p.ntargets, 0);
    assert_null(p.targets);

    sarbp_sim_defaults(&p, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    assert_int_equal(p.npulses, 1024);
    assert_int_equal(p.nsamples, 3072);
    assert_near(SARBP_C / p.fc, 0.03125, 1e-15);
    assert_true(p.prf == 533.33);
    assert_true(p.velocity == 154.2);
    assert_true(p.bandwidth == 480e6);
    assert_true(p.pulse_len == 2.4e-6);
    assert_true(p.fs == 548.57e6);
    assert_true(p.near_range == 23305);
    assert_true(p.range == 23500);
    assert_true(p.elevation_deg == 0);
}

static void test_circular_geometry(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p.npulses = 33;
    p.nsamples = 16;
    sarbp_phd *phd = sim(&p);
    assert_int_equal(phd->domain, SARBP_DOMAIN_FREQ);
    assert_non_null(phd->th);
    assert_non_null(phd->phi);
    double el = M_PI / 4, rg = 10e3 * cos(el), h = 10e3 * sin(el);
    for (size_t i = 0; i < 33; i++) {
        double th = -2.0 + 4.0 * (double)i / 32.0;
        double t = th * M_PI / 180;
        assert_near(phd->pos[3 * i], rg * cos(t), 1e-9);
        assert_near(phd->pos[3 * i + 1], rg * sin(t), 1e-9);
        assert_near(phd->pos[3 * i + 2], h, 1e-9);
        assert_near(phd->r0[i], 10e3, 1e-9);
        assert_near(phd->th[i], th, 1e-12);
        assert_near(phd->phi[i], 45, 1e-12);
        assert_true(phd->f0[i] == 9.6e9 - 320e6);
        assert_true(phd->df[i] == 640e6 / 16);
    }
    sarbp_phd_summary s;
    tu_ok(sarbp_phd_summarize(phd, &s));
    assert_near(s.aperture_deg, 4, 1e-9);
    assert_near(s.bandwidth, 640e6, 1e-3);
    assert_near(s.elevation_deg, 45, 1e-9);
    sarbp_phd_free(phd);
}

static void test_linear_geometry(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_LINEAR, SARBP_DOMAIN_FREQ);
    p.npulses = 20;
    p.nsamples = 8;
    p.elevation_deg = 30;
    sarbp_phd *phd = sim(&p);
    double dy = 154.2 / 533.33;
    double rg = 23500 * cos(M_PI / 6), h = 23500 * sin(M_PI / 6);
    for (size_t i = 0; i < 20; i++) {
        assert_near(phd->pos[3 * i], rg, 1e-9);
        assert_near(phd->pos[3 * i + 1], ((double)i - 9.5) * dy, 1e-9);
        assert_near(phd->pos[3 * i + 2], h, 1e-9);
        const double *a = phd->pos + 3 * i;
        assert_near(phd->r0[i], sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), 1e-9);
        assert_near(phd->th[i], atan2(a[1], a[0]) * 180 / M_PI, 1e-12);
        if (i) assert_true(phd->th[i] > phd->th[i - 1]); /* azimuth grows with the index */
    }
    sarbp_phd_free(phd);
}

/* ---- FREQ domain ------------------------------------------------------------ */

static void test_origin_all_ones(void **state)
{
    (void)state;
    sarbp_target origin = {0, 0, 0, 1};
    for (int g = 0; g < 2; g++) {
        sarbp_sim_params p;
        sarbp_sim_defaults(&p, g ? SARBP_GEOM_LINEAR : SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
        if (g) {
            p.npulses = 128;
            p.ntargets = 1;
            p.targets = &origin; /* the linear default target is (0, 4, 0) */
        }
        sarbp_phd *phd = sim(&p);
        double worst = 0;
        for (size_t j = 0; j < phd->npulses * phd->nsamples; j++) {
            double e = hypot(phd->data[j].re - 1.0, phd->data[j].im);
            if (e > worst) worst = e;
        }
        printf("  %s: worst |s - 1| %.2e (tolerance 1e-6)\n", g ? "linear" : "circular", worst);
        assert_true(worst <= 1e-6);
        sarbp_phd_free(phd);
    }
}

/* expected FREQ sample from the definitions, in long double */
static void expect_freq(const sarbp_phd *phd, size_t i, size_t k, const sarbp_target *q,
                        double *re, double *im)
{
    const double *a = phd->pos + 3 * i;
    long double dx = (long double)a[0] - q->x, dy = (long double)a[1] - q->y,
                dz = (long double)a[2] - q->z;
    long double r = sqrtl(dx * dx + dy * dy + dz * dz);
    long double r0 = sqrtl((long double)a[0] * a[0] + (long double)a[1] * a[1] +
                           (long double)a[2] * a[2]);
    long double f = (long double)phd->f0[i] + (long double)k * phd->df[i];
    long double ph = -4 * 3.141592653589793238462643383279503L * f * (r - r0) / C_LD;
    *re = (double)(q->amp * cosl(ph));
    *im = (double)(q->amp * sinl(ph));
}

static void test_freq_exact_phase(void **state)
{
    (void)state;
    const sarbp_target tgs[] = {{12.5, -7.25, 0, 1}, {-40, 33, 2.5, 0.75}, {49.9, 49.9, 0, -2}};
    for (int g = 0; g < 2; g++) {
        for (size_t t = 0; t < 3; t++) {
            sarbp_sim_params p;
            sarbp_sim_defaults(&p, g ? SARBP_GEOM_LINEAR : SARBP_GEOM_CIRCULAR,
                               SARBP_DOMAIN_FREQ);
            p.npulses = 64;
            p.ntargets = 1;
            p.targets = (sarbp_target *)&tgs[t];
            sarbp_phd *phd = sim(&p);
            double worst = 0;
            const size_t pulses[] = {0, 1, 31, 63}, samples[] = {0, 1, 63, 64, 65, 300, 511};
            for (size_t a = 0; a < 4; a++) {
                for (size_t b = 0; b < 7; b++) {
                    double re, im;
                    expect_freq(phd, pulses[a], samples[b], &tgs[t], &re, &im);
                    sarbp_c32 s = phd->data[pulses[a] * phd->nsamples + samples[b]];
                    double e = hypot(s.re - re, s.im - im) / fabs(tgs[t].amp);
                    if (e > worst) worst = e;
                }
            }
            /* FP32 storage: relative rounding ~6e-8 */
            assert_true(worst <= 3e-7);
            sarbp_phd_free(phd);
        }
    }
}

static void test_linearity(void **state)
{
    (void)state;
    sarbp_target *cl = NULL;
    tu_ok(sarbp_targets_clutter(7, 40, -10, 0, 99, &cl));
    for (int d = 0; d < 2; d++) {
        sarbp_sim_params p;
        sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, d ? SARBP_DOMAIN_CHIRP : SARBP_DOMAIN_FREQ);
        p.npulses = 32;
        p.ntargets = 7;
        p.targets = cl;
        sarbp_phd *all = sim(&p);
        p.ntargets = 3;
        sarbp_phd *a = sim(&p);
        p.ntargets = 4;
        p.targets = cl + 3;
        sarbp_phd *b = sim(&p);
        size_t n = all->npulses * all->nsamples;
        sarbp_c32 *sum = malloc(n * sizeof *sum);
        assert_non_null(sum);
        for (size_t j = 0; j < n; j++) {
            sum[j].re = a->data[j].re + b->data[j].re;
            sum[j].im = a->data[j].im + b->data[j].im;
        }
        /* measured 147.2 (freq) and 147.3 dB (chirp): FP32 rounding of the
         * samples; the floor was 120 dB */
        double ser = tu_ser_c32(sum, all->data, n);
        tu_bar_min(ser, d ? 147.3 : 147.2, 6.0, "dB", "simulate %s: sim(A) + sim(B) vs sim(A+B) SER",
                   d ? "chirp" : "freq");
        free(sum);
        sarbp_phd_free(all);
        sarbp_phd_free(a);
        sarbp_phd_free(b);
    }
    free(cl);
}

/* ---- CHIRP domain ------------------------------------------------------------ */

static void test_chirp_echo(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    p.npulses = 16; /* every 64th pulse of the full track is enough */
    p.velocity = 154.2 * 64;
    sarbp_target q = {0, 4, 0, 2.5}; /* seed 004: 23500 m range, 4 m azimuth */
    p.ntargets = 1;
    p.targets = &q;
    sarbp_phd *phd = sim(&p);
    assert_int_equal(phd->domain, SARBP_DOMAIN_CHIRP);
    assert_near(phd->t0, 2 * 23305 / SARBP_C, 1e-18);
    assert_near(phd->chirp_rate, 480e6 / 2.4e-6, 1e-3);
    assert_true(phd->fs == 548.57e6);
    assert_true(phd->pulse_len == 2.4e-6);
    assert_near(phd->fc, SARBP_C / 0.03125, 1e-3);
    const double fs = phd->fs, tr = phd->pulse_len;
    for (size_t i = 0; i < phd->npulses; i++) {
        const double *a = phd->pos + 3 * i;
        long double dx = a[0] - q.x, dy = a[1] - q.y, dz = a[2] - q.z;
        long double tq = 2 * sqrtl(dx * dx + dy * dy + dz * dz) / C_LD;
        const sarbp_c32 *s = phd->data + i * phd->nsamples;
        long first = -1, last = -1;
        for (size_t n = 0; n < phd->nsamples; n++) {
            long double d = (long double)phd->t0 + (long double)n / fs - tq;
            double m = cabs32(s[n]);
            /* inside the rect |s| = amp, outside 0 (a sample within 1e-15 s of
             * the edge may fall either way) */
            if (fabsl(d) < tr / 2 - 1e-15) {
                assert_near(m, 2.5, 2e-6);
                long double ph = 3.141592653589793238462643383279503L *
                                 (phd->chirp_rate * d * d - 2 * (long double)phd->fc * tq);
                assert_near(s[n].re, (double)(2.5L * cosl(ph)), 1e-5);
                assert_near(s[n].im, (double)(2.5L * sinl(ph)), 1e-5);
            } else if (fabsl(d) > tr / 2 + 1e-15) {
                assert_true(m == 0);
            }
            if (m > 0) {
                if (first < 0) first = (long)n;
                last = (long)n;
            }
        }
        assert_true(first > 0 && last < (long)phd->nsamples - 1);
        /* the rect is centred on tau_q: the mid-point of the first and last
         * lit samples is within one sample of it */
        double mid = phd->t0 + 0.5 * (double)(first + last) / fs;
        assert_near(mid, (double)tq, 1.0 / fs);
        assert_near((double)(last - first + 1), tr * fs, 1.5);
    }
    sarbp_phd_free(phd);
}

static void test_chirp_circular_swath(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_CHIRP);
    p.npulses = 4;
    sarbp_phd *phd = sim(&p);
    double swath = 3072 / 548.57e6 * SARBP_C / 2;
    assert_near(phd->t0, 2 * (10e3 - swath / 2) / SARBP_C, 1e-18);
    /* the origin's echo is centred in the swath */
    const sarbp_c32 *s = phd->data;
    assert_true(cabs32(s[1536]) > 0.999);
    assert_true(cabs32(s[0]) == 0 && cabs32(s[3071]) == 0);
    sarbp_phd_free(phd);
    p.near_range = 9000; /* explicit near range */
    phd = sim(&p);
    assert_near(phd->t0, 2 * 9000 / SARBP_C, 1e-18);
    sarbp_phd_free(phd);
}

/* ---- noise ------------------------------------------------------------------- */

static void test_noise_power(void **state)
{
    (void)state;
    const double levels[] = {0, -10, 6};
    sarbp_target zero = {0, 0, 0, 0};
    for (size_t l = 0; l < 3; l++) {
        sarbp_sim_params p;
        sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
        p.ntargets = 1;
        p.targets = &zero;
        p.noise_db = levels[l];
        p.seed = 12345 + l;
        sarbp_phd *phd = sim(&p);
        size_t n = phd->npulses * phd->nsamples;
        double pr = 0, pi = 0, mr = 0, mi = 0;
        for (size_t j = 0; j < n; j++) {
            pr += (double)phd->data[j].re * phd->data[j].re;
            pi += (double)phd->data[j].im * phd->data[j].im;
            mr += phd->data[j].re;
            mi += phd->data[j].im;
        }
        double want = pow(10, levels[l] / 10), got = (pr + pi) / n;
        printf("  noise %g dB: power %.4f, asked %.4f (%.2f%% off, tolerance 5%%)\n", levels[l],
               got, want, 100 * fabs(got / want - 1));
        assert_true(fabs(got / want - 1) <= 0.05);
        assert_true(fabs(pr / (pr + pi) - 0.5) <= 0.02); /* circular: half in each part */
        assert_true(fabs(mr / n) <= 0.01 * sqrt(want) && fabs(mi / n) <= 0.01 * sqrt(want));
        sarbp_phd_free(phd);
    }
    /* a unit target plus noise: the noise adds on top of the signal */
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p.noise_db = -20;
    sarbp_phd *phd = sim(&p);
    double e = 0;
    size_t n = phd->npulses * phd->nsamples;
    for (size_t j = 0; j < n; j++)
        e += pow(phd->data[j].re - 1.0, 2) + pow(phd->data[j].im, 2);
    assert_true(fabs(e / n / 0.01 - 1) <= 0.05);
    sarbp_phd_free(phd);
}

static void test_seed_determinism(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p.npulses = 64;
    p.noise_db = -3;
    p.seed = 7;
    sarbp_phd *a = sim(&p), *b = sim(&p);
    p.seed = 8;
    sarbp_phd *c = sim(&p);
    size_t bytes = 64 * 512 * sizeof(sarbp_c32);
    assert_memory_equal(a->data, b->data, bytes);
    assert_memory_not_equal(a->data, c->data, bytes);
    sarbp_phd_free(a);
    sarbp_phd_free(b);
    sarbp_phd_free(c);

    sarbp_target *t1, *t2, *t3;
    tu_ok(sarbp_targets_clutter(50, 30, -20, 0, 5, &t1));
    tu_ok(sarbp_targets_clutter(50, 30, -20, 0, 5, &t2));
    tu_ok(sarbp_targets_clutter(50, 30, -20, 0, 6, &t3));
    assert_memory_equal(t1, t2, 50 * sizeof *t1);
    assert_memory_not_equal(t1, t3, 50 * sizeof *t1);
    free(t1);
    free(t2);
    free(t3);
}

static void test_clutter(void **state)
{
    (void)state;
    sarbp_target *t;
    tu_ok(sarbp_targets_clutter(1000, 25, -30, -10, 42, &t));
    int neg = 0, pos = 0;
    double xmin = 1e9, xmax = -1e9;
    for (size_t i = 0; i < 1000; i++) {
        assert_true(fabs(t[i].x) <= 25 && fabs(t[i].y) <= 25 && t[i].z == 0);
        double db = 20 * log10(fabs(t[i].amp));
        assert_true(db >= -30 - 1e-9 && db <= -10 + 1e-9);
        if (t[i].amp < 0) neg++; else pos++;
        if (t[i].x < xmin) xmin = t[i].x;
        if (t[i].x > xmax) xmax = t[i].x;
    }
    assert_true(neg > 400 && pos > 400);
    assert_true(xmin < -24 && xmax > 24);
    free(t);
    assert_int_equal(sarbp_targets_clutter(0, 25, -30, -10, 1, &t), SARBP_ERR_INVALID);
    assert_null(t);
    assert_int_equal(sarbp_targets_clutter(5, -1, -30, -10, 1, &t), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_targets_clutter(5, 1, 0, -10, 1, &t), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_targets_clutter(5, NAN, 0, 10, 1, &t), SARBP_ERR_INVALID);
}

/* ---- targets text ------------------------------------------------------------ */

static void test_targets_parse(void **state)
{
    (void)state;
    sarbp_target *t;
    size_t n;
    tu_ok(sarbp_targets_parse("1,2", &t, &n));
    assert_int_equal(n, 1);
    assert_true(t[0].x == 1 && t[0].y == 2 && t[0].z == 0 && t[0].amp == 1);
    free(t);
    tu_ok(sarbp_targets_parse("1,2,3;-4.5,5e1,0,0.25; 7 , 8 , 9 , -2 ", &t, &n));
    assert_int_equal(n, 3);
    assert_true(t[0].x == 1 && t[0].y == 2 && t[0].z == 3 && t[0].amp == 1);
    assert_true(t[1].x == -4.5 && t[1].y == 50 && t[1].z == 0 && t[1].amp == 0.25);
    assert_true(t[2].x == 7 && t[2].y == 8 && t[2].z == 9 && t[2].amp == -2);
    free(t);

    struct {
        const char *text, *item;
    } bad[] = {{"", NULL},          {"1", "1"},           {"1,2;x", "x"},
               {"1,2;", "empty"},   {";1,2", "empty"},    {"1,,2", "1,,2"},
               {"1,2,3,4,5", "1,2,3,4,5"}, {"1,2,nan", "1,2,nan"}, {"1,inf", "1,inf"},
               {"1,2x", "1,2x"},    {"1,2;3;4,5", "3"},   {"1e999,2", "1e999,2"},
               {"1,2,", "1,2,"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = (sarbp_target *)&n; /* poison: must come back NULL */
        n = 99;
        sarbp_status s = sarbp_targets_parse(bad[i].text, &t, &n);
        if (s != SARBP_ERR_INVALID) fail_msg("'%s' was accepted", bad[i].text);
        assert_null(t);
        assert_int_equal(n, 0);
        if (bad[i].item && !strstr(sarbp_error_detail(), bad[i].item))
            fail_msg("detail '%s' does not name '%s'", sarbp_error_detail(), bad[i].item);
    }
    assert_int_equal(sarbp_targets_parse(NULL, &t, &n), SARBP_ERR_INVALID);
}

/* ---- parameter checks -------------------------------------------------------- */

static void expect_invalid(const sarbp_sim_params *p, const char *what)
{
    sarbp_phd *phd = (sarbp_phd *)p; /* poison */
    sarbp_status s = sarbp_simulate(p, &phd);
    if (s != SARBP_ERR_INVALID) fail_msg("%s: status %d", what, (int)s);
    assert_null(phd);
}

static void test_invalid_params(void **state)
{
    (void)state;
    sarbp_sim_params p, d;
    sarbp_sim_defaults(&d, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p = d; p.npulses = 0; expect_invalid(&p, "0 pulses");
    p = d; p.nsamples = 0; expect_invalid(&p, "0 samples");
    p = d; p.npulses = (size_t)1 << 20; p.nsamples = (size_t)1 << 12; expect_invalid(&p, "2^32 samples");
    p = d; p.npulses = SIZE_MAX; p.nsamples = 3; expect_invalid(&p, "overflowing count");
    p = d; p.fc = NAN; expect_invalid(&p, "NaN fc");
    p = d; p.fc = 100e6; expect_invalid(&p, "band below 0 Hz");
    p = d; p.bandwidth = -1; expect_invalid(&p, "negative bandwidth");
    p = d; p.range = INFINITY; expect_invalid(&p, "infinite range");
    p = d; p.elevation_deg = 90; expect_invalid(&p, "elevation 90");
    p = d; p.aperture_deg = -1; expect_invalid(&p, "negative aperture");
    p = d; p.noise_db = NAN; expect_invalid(&p, "NaN noise");
    p = d; p.ntargets = 2; p.targets = NULL; expect_invalid(&p, "targets without array");
    sarbp_target bad = {0, NAN, 0, 1};
    p = d; p.ntargets = 1; p.targets = &bad; expect_invalid(&p, "NaN target");
    p = d; p.geometry = (sarbp_geometry)7; expect_invalid(&p, "bad geometry");
    sarbp_sim_defaults(&d, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    p = d; p.prf = 0; expect_invalid(&p, "PRF 0");
    p = d; p.velocity = NAN; expect_invalid(&p, "NaN velocity");
    p = d; p.fs = 0; expect_invalid(&p, "fs 0");
    p = d; p.pulse_len = -1; expect_invalid(&p, "negative pulse");
    p = d; p.near_range = -5; expect_invalid(&p, "negative near range");
    p = d; p.near_range = 0; p.range = 100; expect_invalid(&p, "swath before 0 m");
    sarbp_target huge = {0, 4, 0, 1e300};
    p = d; p.npulses = 2; p.ntargets = 1; p.targets = &huge; expect_invalid(&p, "FP32 overflow");
    assert_int_equal(sarbp_simulate(NULL, &(sarbp_phd *){NULL}), SARBP_ERR_INVALID);
}

static void test_one_pulse_one_sample(void **state)
{
    (void)state;
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p.npulses = 1;
    p.nsamples = 1;
    sarbp_target q = {3, 4, 0, 1};
    p.ntargets = 1;
    p.targets = &q;
    sarbp_phd *phd = sim(&p);
    assert_true(phd->th[0] == 0);
    double re, im;
    expect_freq(phd, 0, 0, &q, &re, &im);
    assert_near(phd->data[0].re, re, 3e-7);
    assert_near(phd->data[0].im, im, 3e-7);
    sarbp_phd_free(phd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_circular_geometry),
        cmocka_unit_test(test_linear_geometry),
        cmocka_unit_test(test_origin_all_ones),
        cmocka_unit_test(test_freq_exact_phase),
        cmocka_unit_test(test_linearity),
        cmocka_unit_test(test_chirp_echo),
        cmocka_unit_test(test_chirp_circular_swath),
        cmocka_unit_test(test_noise_power),
        cmocka_unit_test(test_seed_determinism),
        cmocka_unit_test(test_clutter),
        cmocka_unit_test(test_targets_parse),
        cmocka_unit_test(test_invalid_params),
        cmocka_unit_test(test_one_pulse_one_sample),
    };
    return tu_run_tests(tests);
}
