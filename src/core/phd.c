/* phd.c - the phase-history model: allocation, validation, slicing, summary. */
#include "sarbp/phd.h"
#include "sarbp/phd_io.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/sample_check.h"

static double *alloc_doubles(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

sarbp_status sarbp_phd_alloc(sarbp_domain domain, size_t npulses, size_t nsamples,
                             int with_data, sarbp_phd **out)
{
    *out = NULL;
    if (npulses == 0 || nsamples == 0)
        return sarbp_error(SARBP_ERR_INVALID, "phase history with %zu pulses of %zu samples",
                           npulses, nsamples);
    if (nsamples > ((size_t)1 << 40) / npulses)
        return sarbp_error(SARBP_ERR_INVALID, "phase history too large: %zu x %zu", npulses,
                           nsamples);
    sarbp_phd *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a phase history");
    p->domain = domain;
    p->npulses = npulses;
    p->nsamples = nsamples;
    p->pos = alloc_doubles(3 * npulses);
    p->r0 = alloc_doubles(npulses);
    int ok = p->pos && p->r0;
    if (domain == SARBP_DOMAIN_FREQ) {
        p->f0 = alloc_doubles(npulses);
        p->df = alloc_doubles(npulses);
        ok = ok && p->f0 && p->df;
    }
    if (ok && with_data) {
        p->data = calloc(npulses * nsamples, sizeof(sarbp_c32));
        ok = p->data != NULL;
    }
    if (!ok) {
        sarbp_phd_free(p);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu pulses of %zu samples",
                           npulses, nsamples);
    }
    *out = p;
    return SARBP_OK;
}

sarbp_status sarbp_phd_alloc_optional(sarbp_phd *phd, double **field)
{
    if (*field) return SARBP_OK;
    *field = alloc_doubles(phd->npulses);
    if (!*field) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    return SARBP_OK;
}

void sarbp_phd_free(sarbp_phd *p)
{
    if (!p) return;
    free(p->pos);
    free(p->r0);
    free(p->f0);
    free(p->df);
    free(p->th);
    free(p->phi);
    free(p->r_correct);
    free(p->ph_correct);
    free(p->data);
    free(p);
}

static int all_finite(const double *v, size_t n)
{
    if (!v) return 1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* 1 when every v[i] (when v is set) lies in [-lim, lim]: finite and sane. */
static int all_within(const double *v, size_t n, double lim)
{
    if (!v) return 1;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(v[i]) <= lim)) return 0;
    return 1;
}

sarbp_status sarbp_phd_validate(const sarbp_phd *p)
{
    if (!p) return sarbp_error(SARBP_ERR_INVALID, "no phase history");
    if (p->npulses == 0) return sarbp_error(SARBP_ERR_INVALID, "phase history has no pulses");
    if (p->nsamples == 0) return sarbp_error(SARBP_ERR_INVALID, "phase history has no samples");
    size_t n = p->npulses;
    const double dmax = SARBP_PHD_MAX_DISTANCE, fmax = SARBP_PHD_MAX_FREQ;
    if (!all_finite(p->pos, 3 * n))
        return sarbp_error(SARBP_ERR_INVALID, "antenna positions contain NaN or Inf");
    if (!all_within(p->pos, 3 * n, dmax))
        return sarbp_error(SARBP_ERR_INVALID, "an antenna position lies beyond %g m", dmax);
    if (!all_finite(p->r0, n)) return sarbp_error(SARBP_ERR_INVALID, "r0 contains NaN or Inf");
    for (size_t i = 0; i < n; i++)
        if (!(p->r0[i] > 0 && p->r0[i] <= dmax))
            return sarbp_error(SARBP_ERR_INVALID, "r0 of pulse %zu (%g m) is not in (0, %g] m", i,
                               p->r0[i], dmax);
    if (!all_finite(p->th, n) || !all_finite(p->phi, n) || !all_finite(p->r_correct, n) ||
        !all_finite(p->ph_correct, n))
        return sarbp_error(SARBP_ERR_INVALID, "angles or autofocus fields contain NaN or Inf");
    if (!all_within(p->th, n, dmax) || !all_within(p->phi, n, dmax) ||
        !all_within(p->r_correct, n, dmax) || !all_within(p->ph_correct, n, dmax))
        return sarbp_error(SARBP_ERR_INVALID, "angles or autofocus fields exceed %g", dmax);
    if (p->domain == SARBP_DOMAIN_FREQ) {
        if (!p->f0 || !p->df) return sarbp_error(SARBP_ERR_INVALID, "frequencies missing");
        for (size_t i = 0; i < n; i++) {
            if (!(p->f0[i] > 0 && p->f0[i] <= fmax))
                return sarbp_error(SARBP_ERR_INVALID, "start frequency of pulse %zu (%g Hz) is "
                                   "not in (0, %g] Hz", i, p->f0[i], fmax);
            if (!(p->df[i] >= SARBP_PHD_MIN_STEP && p->df[i] <= fmax))
                return sarbp_error(SARBP_ERR_INVALID, "frequency step of pulse %zu (%g Hz) is "
                                   "not in [%g, %g] Hz", i, p->df[i], SARBP_PHD_MIN_STEP, fmax);
            if (!(p->f0[i] + (double)(p->nsamples - 1) * p->df[i] <= fmax))
                return sarbp_error(SARBP_ERR_INVALID, "pulse %zu reaches %g Hz, beyond %g Hz", i,
                                   p->f0[i] + (double)(p->nsamples - 1) * p->df[i], fmax);
        }
    } else if (p->domain == SARBP_DOMAIN_CHIRP) {
        if (!(p->fs >= SARBP_PHD_MIN_STEP && p->fs <= fmax) || !(fabs(p->chirp_rate) <= 1e6 * fmax) ||
            p->chirp_rate == 0 || !(p->pulse_len > 0 && p->pulse_len <= 1) ||
            !(p->fc > 0 && p->fc <= fmax) || !(p->t0 >= 0 && p->t0 <= 1))
            return sarbp_error(SARBP_ERR_INVALID, "chirp parameters (fs, chirp rate, pulse "
                               "length, fc, t0) are not valid");
        /* the band and the replica derived from them (rangecomp.c) */
        double band = fabs(p->chirp_rate) * p->pulse_len, replica = p->pulse_len * p->fs;
        if (!(band >= SARBP_PHD_MIN_STEP && band <= fmax))
            return sarbp_error(SARBP_ERR_INVALID, "chirp bandwidth (chirp rate x pulse length) "
                               "%g Hz is not in [%g, %g] Hz", band, SARBP_PHD_MIN_STEP, fmax);
        if (!(replica <= (double)SARBP_PHD_MAX_SAMPLES))
            return sarbp_error(SARBP_ERR_INVALID, "the chirp lasts %g samples (pulse length x "
                               "fs); sarbp takes at most %zu", replica, SARBP_PHD_MAX_SAMPLES);
    } else {
        return sarbp_error(SARBP_ERR_INVALID, "unknown phase-history domain %d", (int)p->domain);
    }
    if (p->data) SARBP_TRY(sarbp_phd_check_samples(p, 0, n, p->data));
    return SARBP_OK;
}

/* The first NaN or Inf among the floats f[0, n) (n even: whole samples):
 * its index, or n. A float is NaN or Inf when its exponent bits are all
 * ones: OR-ed over a chunk without a branch per value (the compiler
 * vectorises it), the exact float looked for only in a chunk that has one. */
static size_t first_bad(const float *f, size_t n)
{
    const size_t chunk = 4096;
    for (size_t c = 0; c < n; c += chunk) {
        const size_t e = c + chunk < n ? c + chunk : n;
        uint32_t bad = 0;
        for (size_t i = c; i < e; i++) {
            uint32_t u;
            memcpy(&u, f + i, sizeof u);
            bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
        }
        if (!bad) continue;
        for (size_t i = c; i < e; i++)
            if (!isfinite(f[i])) return i;
    }
    return n;
}

size_t sarbp_samples_copy_checked(float *dst, const float *src, size_t n)
{
    const size_t chunk = 4096; /* 16 KiB: checked while it is in L1 */
    for (size_t c = 0; c < n; c += chunk) {
        const size_t e = c + chunk < n ? c + chunk : n;
        memcpy(dst + c, src + c, (e - c) * sizeof *dst);
        const size_t i = first_bad(dst + c, e - c);
        if (i < e - c) return c + i;
    }
    return n;
}

sarbp_status sarbp_phd_bad_sample(const sarbp_phd *p, size_t p0, size_t bad)
{
    const size_t i = bad / 2;
    return sarbp_error(SARBP_ERR_INVALID, "sample %zu of pulse %zu is NaN or Inf", i % p->nsamples,
                       p0 + i / p->nsamples);
}

/* Large blocks are scanned in parts of CHECK_PART floats on a few threads
 * (an in-memory phase history is checked as form reads it, on the way to
 * the devices); the first bad float of the block is still the one named. */
#define CHECK_PART ((size_t)1 << 18)
#define CHECK_THREADS 4

struct check_job {
    const float *f;
    size_t n;
    size_t first[CHECK_THREADS * 64]; /* per part: its first bad float, or n */
};

static void check_part(void *ctx, size_t part, int worker)
{
    (void)worker;
    struct check_job *j = ctx;
    const size_t a = part * CHECK_PART, b = a + CHECK_PART < j->n ? a + CHECK_PART : j->n;
    const size_t i = first_bad(j->f + a, b - a);
    j->first[part] = i < b - a ? a + i : j->n;
}

sarbp_status sarbp_phd_check_samples(const sarbp_phd *p, size_t p0, size_t np, const sarbp_c32 *x)
{
    const size_t n = np * p->nsamples * 2;
    const float *f = (const float *)x;
    size_t bad = n;
    const size_t parts = (n + CHECK_PART - 1) / CHECK_PART;
    struct check_job *j = parts >= 4 && parts <= CHECK_THREADS * 64 ? malloc(sizeof *j) : NULL;
    if (j) {
        j->f = f;
        j->n = n;
        if (sarbp_parallel_for(CHECK_THREADS, parts, check_part, j) == SARBP_OK)
            for (size_t k = 0; k < parts && bad == n; k++) bad = j->first[k];
        else
            bad = first_bad(f, n);
        free(j);
    } else {
        bad = first_bad(f, n);
    }
    return bad < n ? sarbp_phd_bad_sample(p, p0, bad) : SARBP_OK;
}

static void copy_opt(double **dst, const double *src, size_t i0, size_t n, int *ok)
{
    if (!src) return;
    *dst = malloc(n * sizeof(double));
    if (!*dst) { *ok = 0; return; }
    memcpy(*dst, src + i0, n * sizeof(double));
}

sarbp_status sarbp_phd_slice(const sarbp_phd *s, size_t i0, size_t i1, sarbp_phd **out)
{
    *out = NULL;
    if (i1 <= i0 || i1 > s->npulses)
        return sarbp_error(SARBP_ERR_INVALID, "pulse range %zu:%zu outside 0:%zu", i0, i1, s->npulses);
    size_t n = i1 - i0;
    sarbp_phd *p;
    SARBP_TRY(sarbp_phd_alloc(s->domain, n, s->nsamples, s->data != NULL, &p));
    memcpy(p->pos, s->pos + 3 * i0, 3 * n * sizeof(double));
    memcpy(p->r0, s->r0 + i0, n * sizeof(double));
    if (s->f0) memcpy(p->f0, s->f0 + i0, n * sizeof(double));
    if (s->df) memcpy(p->df, s->df + i0, n * sizeof(double));
    int ok = 1;
    copy_opt(&p->th, s->th, i0, n, &ok);
    copy_opt(&p->phi, s->phi, i0, n, &ok);
    copy_opt(&p->r_correct, s->r_correct, i0, n, &ok);
    copy_opt(&p->ph_correct, s->ph_correct, i0, n, &ok);
    if (!ok) {
        sarbp_phd_free(p);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    if (s->data) memcpy(p->data, s->data + i0 * s->nsamples, n * s->nsamples * sizeof(sarbp_c32));
    p->fs = s->fs;
    p->chirp_rate = s->chirp_rate;
    p->pulse_len = s->pulse_len;
    p->fc = s->fc;
    p->t0 = s->t0;
    *out = p;
    return SARBP_OK;
}

double sarbp_phd_azimuth_deg(const sarbp_phd *p, size_t i)
{
    if (p->th) return p->th[i];
    return atan2(p->pos[3 * i + 1], p->pos[3 * i]) * (180.0 / M_PI);
}

sarbp_status sarbp_phd_azimuth_range(const sarbp_phd *p, double a0, double a1, size_t *i0,
                                     size_t *i1)
{
    if (!(a1 >= a0)) return sarbp_error(SARBP_ERR_INVALID, "azimuth range %g:%g is empty", a0, a1);
    size_t first = p->npulses, last = 0;
    for (size_t i = 0; i < p->npulses; i++) {
        double a = sarbp_phd_azimuth_deg(p, i);
        if (a >= a0 && a <= a1) {
            if (first == p->npulses) first = i;
            last = i;
        }
    }
    if (first == p->npulses)
        return sarbp_error(SARBP_ERR_INVALID, "no pulse has azimuth in %g:%g degrees", a0, a1);
    *i0 = first;
    *i1 = last + 1;
    return SARBP_OK;
}

sarbp_status sarbp_phd_summarize(const sarbp_phd *p, sarbp_phd_summary *s)
{
    memset(s, 0, sizeof *s);
    size_t n = p->npulses;
    if (n == 0) return sarbp_error(SARBP_ERR_INVALID, "phase history has no pulses");
    double fmin = INFINITY, fmax = -INFINITY, dfmin = INFINITY;
    if (p->domain == SARBP_DOMAIN_FREQ) {
        for (size_t i = 0; i < n; i++) {
            double lo = p->f0[i], hi = p->f0[i] + (double)(p->nsamples - 1) * p->df[i];
            if (lo < fmin) fmin = lo;
            if (hi > fmax) fmax = hi;
            if (p->df[i] < dfmin) dfmin = p->df[i];
        }
        /* bandwidth of K samples spaced df: K df (each sample stands for one step) */
        s->bandwidth = (double)p->nsamples * dfmin;
        s->extent_range = SARBP_C / (2 * dfmin);
    } else {
        double b = fabs(p->chirp_rate) * p->pulse_len;
        fmin = p->fc - b / 2;
        fmax = p->fc + b / 2;
        s->bandwidth = b;
        s->extent_range = SARBP_C * (double)p->nsamples / (2 * p->fs);
    }
    s->fmin = fmin;
    s->fmax = fmax;
    s->fcenter = 0.5 * (fmin + fmax);
    s->range_res = SARBP_C / (2 * s->bandwidth);
    /* aperture: angle swept by the line of sight, from the APC positions */
    double amin = INFINITY, amax = -INFINITY, r0sum = 0, elsum = 0;
    double a_ref = atan2(p->pos[1], p->pos[0]);
    for (size_t i = 0; i < n; i++) {
        const double *a = p->pos + 3 * i;
        double az = atan2(a[1], a[0]) - a_ref;
        while (az > M_PI) az -= 2 * M_PI;
        while (az < -M_PI) az += 2 * M_PI;
        if (az < amin) amin = az;
        if (az > amax) amax = az;
        r0sum += p->r0[i];
        double rg = hypot(a[0], a[1]);
        elsum += atan2(a[2], rg);
    }
    double dth = amax - amin;
    s->aperture_deg = dth * 180.0 / M_PI;
    s->r0_mean = r0sum / n;
    s->elevation_deg = elsum / n * 180.0 / M_PI;
    double lambda = SARBP_C / s->fcenter;
    /* the ground-plane aperture angle: for a straight track the azimuth
     * angle above still measures the change of look direction */
    s->az_res = dth > 0 ? lambda / (2 * dth) : INFINITY;
    return SARBP_OK;
}

void sarbp_samples_rotate(sarbp_c32 *v, size_t np, size_t K, const double *f0, const double *df,
                          const double *phase, const double *range)
{
    const double k4 = 4.0 * M_PI / SARBP_C;
    for (size_t j = 0; j < np; j++, v += K) {
        /* the phase at sample k, a + k b: rotated sample to sample, set
         * exactly every 64 samples (no drift); b = 0 keeps (c, s) exact */
        const double a = (phase ? phase[j] : 0) + (range ? k4 * f0[j] * range[j] : 0);
        const double b = range ? k4 * df[j] * range[j] : 0, cb = cos(b), sb = sin(b);
        double c = cos(a), s = sin(a);
        for (size_t k = 0; k < K; k++) {
            if (b != 0 && k % 64 == 0) {
                c = cos(a + (double)k * b);
                s = sin(a + (double)k * b);
            }
            const double re = v[k].re * c - v[k].im * s, im = v[k].re * s + v[k].im * c;
            v[k].re = (float)re;
            v[k].im = (float)im;
            const double c2 = c * cb - s * sb;
            s = s * cb + c * sb;
            c = c2;
        }
    }
}
