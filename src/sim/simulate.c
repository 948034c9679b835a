/* simulate.c - exact point-target phase histories in FP64 (see simulate.h).
 *
 * Each pulse is accumulated in FP64 over all targets and rounded to FP32
 * once. FREQ samples use a phase recurrence along the K frequencies (one
 * complex multiply a sample) restarted from an exact sin/cos every
 * RESTART samples, which keeps them within ~1e-14 of the direct formula.
 * CHIRP echoes evaluate sin/cos directly, only inside each echo's rect.
 * Noise comes from this file's own xoshiro256** generator, so the data are
 * the same bits on every platform for a given seed. This file does not
 * write files (phd_io.h) and knows nothing about image formation. */
#include "sarbp/simulate.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESTART 64                     /* exact phasor every RESTART samples */
#define MAX_SAMPLES ((size_t)1 << 31)  /* P * K limit */
#define NOISE_OFF_DB (-300.0)

/* ---- random numbers -------------------------------------------------------- */

typedef struct {
    uint64_t s[4];
} rng_state;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* stream distinguishes the users of one seed (noise, clutter) */
static void rng_init(rng_state *r, unsigned long long seed, uint64_t stream)
{
    uint64_t x = (uint64_t)seed ^ stream;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng_state *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* uniform in [0, 1) */
static double rng_uniform(rng_state *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* two independent standard normals (Box-Muller) */
static void rng_normal2(rng_state *r, double *a, double *b)
{
    double u1 = ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
    double u2 = rng_uniform(r);
    double m = sqrt(-2.0 * log(u1));
    *a = m * cos(2 * M_PI * u2);
    *b = m * sin(2 * M_PI * u2);
}

#define STREAM_NOISE 0x6e6f697365000000ULL   /* "noise" */
#define STREAM_CLUTTER 0x636c757474657200ULL /* "clutter" */

/* ---- parameters -------------------------------------------------------------- */

void sarbp_sim_defaults(sarbp_sim_params *p, sarbp_geometry geom, sarbp_domain dom)
{
    memset(p, 0, sizeof *p);
    p->geometry = geom;
    p->domain = dom;
    if (geom == SARBP_GEOM_LINEAR) {
        p->npulses = 1024;
        p->fc = SARBP_C / 0.03125;
        p->range = 23500;
        p->elevation_deg = 0;
        p->near_range = 23305;
    } else {
        p->npulses = 512;
        p->fc = 9.6e9;
        p->range = 10e3;
        p->elevation_deg = 45;
        p->near_range = 0; /* swath centred on range */
    }
    p->aperture_deg = 4;
    p->prf = 533.33;
    p->velocity = 154.2;
    p->pulse_len = 2.4e-6;
    p->fs = 548.57e6;
    if (dom == SARBP_DOMAIN_CHIRP) {
        p->nsamples = 3072;
        p->bandwidth = 480e6;
    } else {
        p->nsamples = 512;
        p->bandwidth = 640e6;
    }
    p->noise_db = NOISE_OFF_DB;
    p->seed = 1;
    p->ntargets = 0;
    p->targets = NULL;
}

static int pos_finite(double v) { return isfinite(v) && v > 0; }

static sarbp_status check_params(const sarbp_sim_params *p)
{
    if (!p) return sarbp_error(SARBP_ERR_INVALID, "no simulation parameters");
    if (p->geometry != SARBP_GEOM_CIRCULAR && p->geometry != SARBP_GEOM_LINEAR)
        return sarbp_error(SARBP_ERR_INVALID, "unknown geometry %d", (int)p->geometry);
    if (p->domain != SARBP_DOMAIN_FREQ && p->domain != SARBP_DOMAIN_CHIRP)
        return sarbp_error(SARBP_ERR_INVALID, "unknown domain %d", (int)p->domain);
    if (p->npulses == 0 || p->nsamples == 0)
        return sarbp_error(SARBP_ERR_INVALID, "cannot simulate %zu pulses of %zu samples", p->npulses,
                           p->nsamples);
    if (p->nsamples > MAX_SAMPLES / p->npulses)
        return sarbp_error(SARBP_ERR_INVALID,
                           "%zu pulses x %zu samples is more than 2^31 samples",
                           p->npulses, p->nsamples);
    if (!pos_finite(p->fc)) return sarbp_error(SARBP_ERR_INVALID, "carrier frequency %g Hz is not a positive number", p->fc);
    if (!pos_finite(p->bandwidth))
        return sarbp_error(SARBP_ERR_INVALID, "bandwidth %g Hz is not a positive number", p->bandwidth);
    if (p->domain == SARBP_DOMAIN_FREQ && !(p->fc - p->bandwidth / 2 > 0))
        return sarbp_error(SARBP_ERR_INVALID,
                           "a band of %g Hz around %g Hz reaches below 0 Hz",
                           p->bandwidth, p->fc);
    if (!pos_finite(p->range)) return sarbp_error(SARBP_ERR_INVALID, "range %g m is not a positive number", p->range);
    if (!isfinite(p->elevation_deg) || p->elevation_deg <= -90 || p->elevation_deg >= 90)
        return sarbp_error(SARBP_ERR_INVALID, "elevation %g degrees is outside (-90, 90)",
                           p->elevation_deg);
    if (p->geometry == SARBP_GEOM_CIRCULAR) {
        if (!isfinite(p->aperture_deg) || p->aperture_deg < 0 || p->aperture_deg > 360)
            return sarbp_error(SARBP_ERR_INVALID, "aperture %g degrees is outside [0, 360]",
                               p->aperture_deg);
    } else {
        if (!pos_finite(p->prf)) return sarbp_error(SARBP_ERR_INVALID, "PRF %g Hz is not a positive number", p->prf);
        if (!pos_finite(p->velocity))
            return sarbp_error(SARBP_ERR_INVALID, "velocity %g m/s is not a positive number", p->velocity);
    }
    if (p->domain == SARBP_DOMAIN_CHIRP) {
        if (!pos_finite(p->pulse_len))
            return sarbp_error(SARBP_ERR_INVALID, "pulse length %g s is not a positive number", p->pulse_len);
        if (!pos_finite(p->fs))
            return sarbp_error(SARBP_ERR_INVALID, "sample rate %g Hz is not a positive number", p->fs);
        if (!isfinite(p->near_range) || p->near_range < 0)
            return sarbp_error(SARBP_ERR_INVALID, "near range %g m is negative or not a number", p->near_range);
    }
    if (isnan(p->noise_db) || p->noise_db > 200)
        return sarbp_error(SARBP_ERR_INVALID, "noise level %g dB is not a number or above 200 dB", p->noise_db);
    if (p->ntargets > 0 && !p->targets)
        return sarbp_error(SARBP_ERR_INVALID, "%zu targets but no target array", p->ntargets);
    for (size_t t = 0; t < p->ntargets; t++) {
        const sarbp_target *q = &p->targets[t];
        if (!isfinite(q->x) || !isfinite(q->y) || !isfinite(q->z) || !isfinite(q->amp))
            return sarbp_error(SARBP_ERR_INVALID, "target %zu (%g, %g, %g, amplitude %g) is not finite", t + 1,
                               q->x, q->y, q->z, q->amp);
    }
    return SARBP_OK;
}

/* ---- geometry ---------------------------------------------------------------- */

static void fill_geometry(const sarbp_sim_params *p, sarbp_phd *phd)
{
    const double el = p->elevation_deg * (M_PI / 180.0);
    const double rg = p->range * cos(el), h = p->range * sin(el);
    const size_t np = p->npulses;
    for (size_t i = 0; i < np; i++) {
        double *a = phd->pos + 3 * i;
        if (p->geometry == SARBP_GEOM_CIRCULAR) {
            double th = 0;
            if (np > 1) th = -p->aperture_deg / 2 + (double)i * p->aperture_deg / (double)(np - 1);
            double t = th * (M_PI / 180.0);
            a[0] = rg * cos(t);
            a[1] = rg * sin(t);
        } else {
            a[0] = rg;
            a[1] = ((double)i - 0.5 * (double)(np - 1)) * (p->velocity / p->prf);
        }
        a[2] = h;
        phd->r0[i] = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        phd->th[i] = atan2(a[1], a[0]) * (180.0 / M_PI);
        phd->phi[i] = atan2(a[2], hypot(a[0], a[1])) * (180.0 / M_PI);
    }
}

/* dR = |a - q| - |a| without cancellation: (|q|^2 - 2 q.a) / (|a - q| + |a|) */
static double diff_range(const double *a, double r0, const sarbp_target *q)
{
    double dx = a[0] - q->x, dy = a[1] - q->y, dz = a[2] - q->z;
    double r = sqrt(dx * dx + dy * dy + dz * dz);
    double qq = q->x * q->x + q->y * q->y + q->z * q->z;
    double qa = q->x * a[0] + q->y * a[1] + q->z * a[2];
    return (qq - 2 * qa) / (r + r0);
}

/* exp(-j 2 pi cycles), reducing cycles to [-1/2, 1/2] first */
static sarbp_c64 phasor_cycles(double cycles)
{
    double f = cycles - rint(cycles);
    sarbp_c64 z = {cos(2 * M_PI * f), -sin(2 * M_PI * f)};
    return z;
}

/* ---- FREQ -------------------------------------------------------------------- */

static void pulse_freq(const double *a, double r0, double f0, double df, size_t k,
                       const sarbp_target *tg, size_t nt, sarbp_c64 *acc)
{
    for (size_t t = 0; t < nt; t++) {
        const double amp = tg[t].amp;
        const double dr = diff_range(a, r0, &tg[t]);
        const double g = 2 * dr / SARBP_C; /* cycles per Hz */
        const sarbp_c64 w = phasor_cycles(df * g);
        for (size_t k0 = 0; k0 < k; k0 += RESTART) {
            sarbp_c64 z = phasor_cycles((f0 + (double)k0 * df) * g);
            size_t k1 = k0 + RESTART < k ? k0 + RESTART : k;
            for (size_t j = k0; j < k1; j++) {
                acc[j].re += amp * z.re;
                acc[j].im += amp * z.im;
                double re = z.re * w.re - z.im * w.im;
                z.im = z.re * w.im + z.im * w.re;
                z.re = re;
            }
        }
    }
}

/* ---- CHIRP ------------------------------------------------------------------- */

static void pulse_chirp(const double *a, const sarbp_phd *phd, const sarbp_target *tg, size_t nt,
                        sarbp_c64 *acc)
{
    const double fs = phd->fs, tr = phd->pulse_len, kr = phd->chirp_rate, t0 = phd->t0;
    const double half = tr / 2;
    const size_t k = phd->nsamples;
    for (size_t t = 0; t < nt; t++) {
        const sarbp_target *q = &tg[t];
        double dx = a[0] - q->x, dy = a[1] - q->y, dz = a[2] - q->z;
        double r = sqrt(dx * dx + dy * dy + dz * dz);
        double tq = 2 * r / SARBP_C;
        double rel = t0 - tq; /* tau - tau_q = rel + n / fs */
        /* candidate samples, one wider on each side; the exact test decides */
        double lo = floor((-half - rel) * fs) - 1, hi = ceil((half - rel) * fs) + 1;
        if (hi < 0 || lo > (double)(k - 1)) continue;
        size_t n0 = lo < 0 ? 0 : (size_t)lo;
        size_t n1 = hi > (double)(k - 1) ? k - 1 : (size_t)hi;
        sarbp_c64 carrier = phasor_cycles(phd->fc * tq);
        double cr = q->amp * carrier.re, ci = q->amp * carrier.im;
        for (size_t n = n0; n <= n1; n++) {
            double d = rel + (double)n / fs;
            if (!(fabs(d) <= half)) continue;
            double ph = M_PI * kr * d * d;
            double c = cos(ph), s = sin(ph);
            acc[n].re += cr * c - ci * s;
            acc[n].im += cr * s + ci * c;
        }
    }
}

/* ---- the simulation ---------------------------------------------------------- */

sarbp_status sarbp_simulate(const sarbp_sim_params *p, sarbp_phd **out)
{
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "no output for the simulation");
    *out = NULL;
    SARBP_TRY(check_params(p));

    sarbp_target deflt = {0, 0, 0, 1};
    if (p->geometry == SARBP_GEOM_LINEAR) deflt.y = 4;
    const sarbp_target *tg = p->ntargets ? p->targets : &deflt;
    const size_t nt = p->ntargets ? p->ntargets : 1;
    const size_t np = p->npulses, k = p->nsamples;

    double near = 0;
    if (p->domain == SARBP_DOMAIN_CHIRP) {
        near = p->near_range;
        if (near == 0) {
            double swath = (double)k / p->fs * SARBP_C / 2;
            near = p->range - swath / 2;
            if (!(near >= 0))
                return sarbp_error(SARBP_ERR_INVALID,
                                   "a swath of %g m centred on range %g m starts before "
                                   "0 m",
                                   swath, p->range);
        }
    }

    sarbp_phd *phd;
    SARBP_TRY(sarbp_phd_alloc(p->domain, np, k, 1, &phd));
    sarbp_c64 *acc = malloc(k * sizeof *acc);
    sarbp_status st = SARBP_OK;
    if (!acc) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for a simulated pulse");
    if (st == SARBP_OK) st = sarbp_phd_alloc_optional(phd, &phd->th);
    if (st == SARBP_OK) st = sarbp_phd_alloc_optional(phd, &phd->phi);
    if (st != SARBP_OK) {
        free(acc);
        sarbp_phd_free(phd);
        return st;
    }

    fill_geometry(p, phd);
    const double f0 = p->fc - p->bandwidth / 2, df = p->bandwidth / (double)k;
    if (p->domain == SARBP_DOMAIN_FREQ) {
        for (size_t i = 0; i < np; i++) {
            phd->f0[i] = f0;
            phd->df[i] = df;
        }
    } else {
        phd->fs = p->fs;
        phd->pulse_len = p->pulse_len;
        phd->chirp_rate = p->bandwidth / p->pulse_len;
        phd->fc = p->fc;
        phd->t0 = 2 * near / SARBP_C;
    }

    const int noisy = p->noise_db > NOISE_OFF_DB;
    const double nsd = noisy ? sqrt(pow(10.0, p->noise_db / 10) / 2) : 0; /* per component */
    rng_state rng;
    rng_init(&rng, p->seed, STREAM_NOISE);

    for (size_t i = 0; i < np; i++) {
        const double *a = phd->pos + 3 * i;
        memset(acc, 0, k * sizeof *acc);
        if (p->domain == SARBP_DOMAIN_FREQ)
            pulse_freq(a, phd->r0[i], f0, df, k, tg, nt, acc);
        else
            pulse_chirp(a, phd, tg, nt, acc);
        if (noisy) {
            for (size_t j = 0; j < k; j++) {
                double nr, ni;
                rng_normal2(&rng, &nr, &ni);
                acc[j].re += nsd * nr;
                acc[j].im += nsd * ni;
            }
        }
        sarbp_c32 *dst = phd->data + i * k;
        for (size_t j = 0; j < k; j++) {
            dst[j].re = (float)acc[j].re;
            dst[j].im = (float)acc[j].im;
        }
    }
    free(acc);

    /* very large amplitudes can overflow FP32 */
    for (size_t j = 0; j < np * k; j++) {
        if (!isfinite(phd->data[j].re) || !isfinite(phd->data[j].im)) {
            sarbp_phd_free(phd);
            return sarbp_error(SARBP_ERR_INVALID,
                               "simulated samples overflow single precision (target "
                               "amplitudes too large)");
        }
    }
    *out = phd;
    return SARBP_OK;
}

/* ---- targets ----------------------------------------------------------------- */

/* Parses one "x,y[,z[,amp]]" item of len bytes into *t; 0 on success. */
static int parse_item(const char *s, size_t len, sarbp_target *t)
{
    char buf[256];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    double v[4] = {0, 0, 0, 1};
    int n = 0;
    char *p = buf;
    for (;;) {
        if (n == 4) return -1;
        char *end;
        errno = 0;
        v[n] = strtod(p, &end);
        if (end == p || errno || !isfinite(v[n])) return -1;
        while (*end == ' ' || *end == '\t') end++;
        n++;
        if (*end == '\0') break;
        if (*end != ',') return -1;
        p = end + 1;
    }
    if (n < 2) return -1;
    t->x = v[0];
    t->y = v[1];
    t->z = v[2];
    t->amp = v[3];
    return 0;
}

sarbp_status sarbp_targets_parse(const char *text, sarbp_target **out, size_t *n)
{
    if (!out || !n) return sarbp_error(SARBP_ERR_INVALID, "targets: no output");
    *out = NULL;
    *n = 0;
    if (!text || !*text) return sarbp_error(SARBP_ERR_INVALID, "no targets given");
    size_t count = 1;
    for (const char *c = text; *c; c++)
        if (*c == ';') count++;
    sarbp_target *t = malloc(count * sizeof *t);
    if (!t) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu targets", count);
    const char *p = text;
    for (size_t i = 0; i < count; i++) {
        const char *q = strchr(p, ';');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (parse_item(p, len, &t[i])) {
            free(t);
            if (len == 0)
                return sarbp_error(SARBP_ERR_INVALID, "bad target list '%s': item %zu is empty",
                                   text, i + 1);
            return sarbp_error(SARBP_ERR_INVALID,
                               "bad target '%.*s' (item %zu): expected x,y[,z[,amp]] with "
                               "finite numbers",
                               (int)(len > 200 ? 200 : len), p, i + 1);
        }
        p = q ? q + 1 : p + len;
    }
    *out = t;
    *n = count;
    return SARBP_OK;
}

sarbp_status sarbp_targets_clutter(size_t n, double half_extent, double amp_db_min,
                                   double amp_db_max, unsigned long long seed,
                                   sarbp_target **out)
{
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "clutter: no output");
    *out = NULL;
    if (n == 0 || n > ((size_t)1 << 32))
        return sarbp_error(SARBP_ERR_INVALID, "clutter: %zu scatterers", n);
    if (!isfinite(half_extent) || half_extent < 0)
        return sarbp_error(SARBP_ERR_INVALID, "clutter: half extent %g m", half_extent);
    if (!isfinite(amp_db_min) || !isfinite(amp_db_max) || amp_db_min > amp_db_max ||
        amp_db_max > 300 || amp_db_min < -300)
        return sarbp_error(SARBP_ERR_INVALID, "clutter: amplitude range %g..%g dB", amp_db_min,
                           amp_db_max);
    sarbp_target *t = malloc(n * sizeof *t);
    if (!t) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu scatterers", n);
    rng_state rng;
    rng_init(&rng, seed, STREAM_CLUTTER);
    for (size_t i = 0; i < n; i++) {
        t[i].x = (2 * rng_uniform(&rng) - 1) * half_extent;
        t[i].y = (2 * rng_uniform(&rng) - 1) * half_extent;
        t[i].z = 0;
        double db = amp_db_min + rng_uniform(&rng) * (amp_db_max - amp_db_min);
        double mag = pow(10.0, db / 20);
        t[i].amp = (rng_next(&rng) >> 63) ? -mag : mag;
    }
    *out = t;
    return SARBP_OK;
}
