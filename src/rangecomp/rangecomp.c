/* rangecomp.c - range compression on the CPU with FFTW.
 *
 * One FFTW plan per shape and precision, made at plan time and executed per
 * pulse with the new-array interface on aligned buffers. FREQ data: window,
 * zero-pad, inverse FFT, fftshift, 1/K. CHIRP data: matched filter by FFT,
 * range window across the chirp band, zero-padded spectrum for upsampling,
 * motion compensation to the scene origin. See include/sarbp/rangecomp.h. */
#include "sarbp/rangecomp.h"
#include "core/fftw_lock.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *sarbp_precision_name(sarbp_precision p)
{
    switch (p) {
    case SARBP_FP64: return "fp64";
    case SARBP_FP32: return "fp32";
    case SARBP_FP16: return "fp16";
    case SARBP_EXACT: return "exact";
    case SARBP_MIXED: return "mixed";
    }
    return "?";
}

sarbp_status sarbp_precision_parse(const char *t, sarbp_precision *p)
{
    if (!strcmp(t, "fp64")) *p = SARBP_FP64;
    else if (!strcmp(t, "fp32")) *p = SARBP_FP32;
    else if (!strcmp(t, "fp16")) *p = SARBP_FP16;
    else if (!strcmp(t, "exact")) *p = SARBP_EXACT;
    else if (!strcmp(t, "mixed")) *p = SARBP_MIXED;
    else return sarbp_error(SARBP_ERR_INVALID, "unknown precision '%s' (fp64, fp32, fp16, mixed, exact)", t);
    return SARBP_OK;
}

const char *sarbp_interp_name(sarbp_interp k)
{
    switch (k) {
    case SARBP_INTERP_LINEAR: return "linear";
    case SARBP_INTERP_QUADRATIC: return "quadratic";
    case SARBP_INTERP_CUBIC: return "cubic";
    }
    return "?";
}

sarbp_status sarbp_interp_parse(const char *t, sarbp_interp *k)
{
    if (!strcmp(t, "linear")) *k = SARBP_INTERP_LINEAR;
    else if (!strcmp(t, "quadratic")) *k = SARBP_INTERP_QUADRATIC;
    else if (!strcmp(t, "cubic")) *k = SARBP_INTERP_CUBIC;
    else
        return sarbp_error(SARBP_ERR_INVALID, "unknown interpolation '%s' (linear, quadratic, cubic)", t);
    return SARBP_OK;
}

double sarbp_interp_response(sarbp_interp k, double nu)
{
    const double x = M_PI * nu;
    const double sinc = fabs(x) < 1e-8 ? 1.0 - x * x / 6.0 : sin(x) / x;
    double r = sinc * sinc; /* sinc^(degree + 1) */
    for (int d = 1; d < (int)k; d++) r *= sinc;
    return r;
}

int sarbp_interp_default_upsample(sarbp_interp k)
{
    return k == SARBP_INTERP_CUBIC ? 4 : 8;
}

void sarbp_rc_params_default(sarbp_rc_params *p)
{
    memset(p, 0, sizeof *p);
    p->range_window.kind = SARBP_WIN_NONE;
    p->az_window.kind = SARBP_WIN_NONE;
    p->interp = SARBP_INTERP_QUADRATIC;
    p->upsample = sarbp_interp_default_upsample(p->interp);
}

sarbp_interp sarbp_interp_default(sarbp_precision prec, int ffbp)
{
    return prec == SARBP_FP16 || prec == SARBP_MIXED || ffbp ? SARBP_INTERP_CUBIC
                                                             : SARBP_INTERP_QUADRATIC;
}

void sarbp_rc_params_default_for(sarbp_rc_params *p, sarbp_precision prec, int ffbp)
{
    p->interp = sarbp_interp_default(prec, ffbp);
    p->upsample = sarbp_interp_default_upsample(p->interp);
}

size_t sarbp_fft_size(size_t x)
{
    if (x <= 1) return 1;
    for (size_t n = x;; n++) {
        size_t m = n;
        while (m % 2 == 0) m /= 2;
        while (m % 3 == 0) m /= 3;
        while (m % 5 == 0) m /= 5;
        while (m % 7 == 0) m /= 7;
        if (m == 1) return n;
    }
}

static size_t chirp_len(const sarbp_phd *m)
{
    size_t l = (size_t)ceil(m->pulse_len * m->fs);
    return l ? l : 1;
}

/* FFT length of the matched filter (linear correlation of K samples against
 * a chirp of L samples without wrap into the first K lags). */
static size_t chirp_nfft(const sarbp_phd *m)
{
    return sarbp_fft_size(m->nsamples + chirp_len(m));
}

size_t sarbp_rc_nbins(const sarbp_phd *m, int upsample)
{
    if (upsample < 1) upsample = 1;
    if (m->domain == SARBP_DOMAIN_FREQ) return sarbp_fft_size((size_t)upsample * m->nsamples);
    return sarbp_fft_size((size_t)upsample * chirp_nfft(m));
}

/* ---- profiles ---------------------------------------------------------- */

sarbp_status sarbp_profiles_alloc(size_t capacity, size_t nbins, sarbp_precision prec,
                                  sarbp_profiles **out)
{
    *out = NULL;
    sarbp_profiles *pr = calloc(1, sizeof *pr);
    if (!pr) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    pr->capacity = capacity;
    pr->nbins = nbins;
    pr->precision = prec;
    pr->interp = SARBP_INTERP_LINEAR;
    size_t n = capacity * nbins;
    if (prec == SARBP_FP64) pr->data64 = fftw_malloc(n * sizeof(sarbp_c64));
    else pr->data32 = fftw_malloc(n * sizeof(sarbp_c32));
    pr->pos = malloc(3 * capacity * sizeof(double));
    pr->r0 = malloc(capacity * sizeof(double));
    pr->rstart = malloc(capacity * sizeof(double));
    pr->dr = malloc(capacity * sizeof(double));
    pr->fref = malloc(capacity * sizeof(double));
    if (!(pr->data64 || pr->data32) || !pr->pos || !pr->r0 || !pr->rstart || !pr->dr ||
        !pr->fref) {
        sarbp_profiles_free(pr);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu range profiles of %zu bins",
                           capacity, nbins);
    }
    *out = pr;
    return SARBP_OK;
}

void sarbp_profiles_free(sarbp_profiles *pr)
{
    if (!pr) return;
    fftw_free(pr->data64);
    fftw_free(pr->data32);
    free(pr->pos);
    free(pr->r0);
    free(pr->rstart);
    free(pr->dr);
    free(pr->fref);
    free(pr);
}

sarbp_profiles sarbp_profiles_slice(const sarbp_profiles *pr, size_t p0, size_t n)
{
    sarbp_profiles v = *pr;
    v.npulses = n;
    v.capacity = pr->capacity - p0;
    v.data32 = pr->data32 ? pr->data32 + p0 * pr->nbins : NULL;
    v.data64 = pr->data64 ? pr->data64 + p0 * pr->nbins : NULL;
    v.pos += 3 * p0;
    v.r0 += p0;
    v.rstart += p0;
    v.dr += p0;
    v.fref += p0;
    return v;
}

void sarbp_rc_pulse_geometry(const sarbp_phd *m, size_t nbins, int upsample, size_t i,
                             sarbp_profiles *pr, size_t j)
{
    (void)upsample;
    memcpy(pr->pos + 3 * j, m->pos + 3 * i, 3 * sizeof(double));
    pr->r0[j] = m->r0[i];
    if (m->domain == SARBP_DOMAIN_FREQ) {
        double dr = SARBP_C / (2.0 * m->df[i] * (double)nbins);
        pr->dr[j] = dr;
        pr->rstart[j] = -(double)(nbins / 2) * dr;
        pr->fref[j] = m->f0[i] + (double)(m->nsamples / 2) * m->df[i]; /* the band centre */
    } else {
        double nmf = (double)chirp_nfft(m);
        pr->dr[j] = SARBP_C / (2.0 * m->fs) * nmf / (double)nbins;
        pr->rstart[j] = 0.5 * SARBP_C * m->t0 - m->r0[i];
        pr->fref[j] = m->fc;
    }
}

/* ---- the plan ---------------------------------------------------------- */

struct sarbp_rc_plan_s {
    const sarbp_phd *meta;
    sarbp_precision prec;
    sarbp_interp interp;
    int upsample;
    size_t K, nbins;
    size_t kc;           /* FREQ: sample kc sits at frequency index 0 (K / 2) */
    size_t nmf;          /* CHIRP: matched-filter FFT length */
    double *wr;          /* FREQ: range window / K, [K]; CHIRP: spectral weights [nmf] */
    double *wpre;        /* FREQ: wr divided by the kernel's response (the prefilter), [K] */
    double *waz;         /* [meta->npulses] */
    double gain;         /* coherent gain of the range and azimuth windows */
    /* FREQ: one inverse plan of nbins. CHIRP: forward nmf, inverse nbins
     * (double plans for FP64 and the exact spectrum). */
    fftw_plan d_fwd, d_inv;
    fftwf_plan f_fwd, f_inv;
    void *buf_a, *buf_b; /* aligned work buffers of max(nbins, nmf) complex */
    sarbp_c64 *href;     /* CHIRP: conj spectrum of the reference chirp * weights / norm [nmf],
                            prefilter folded in */
    sarbp_c64 *href0;    /* CHIRP: the same without the prefilter (the exact spectrum) */
};

/* Signed frequency index of FFT index k of n (k < (n + 1) / 2: k, else k - n). */
static long signed_index(size_t k, size_t n)
{
    return k < (n + 1) / 2 ? (long)k : (long)k - (long)n;
}

static double mean_of(const double *w, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += w[i];
    return s / (double)n;
}

static sarbp_status make_plans(sarbp_rc_plan *p)
{
    size_t nmax = p->nbins > p->nmf ? p->nbins : p->nmf;
    int ok;
    sarbp_fftw_planner_lock();
    if (p->prec == SARBP_FP64 || p->prec == SARBP_EXACT) {
        p->buf_a = fftw_malloc(nmax * sizeof(fftw_complex));
        p->buf_b = fftw_malloc(nmax * sizeof(fftw_complex));
        ok = p->buf_a && p->buf_b;
        if (ok) {
            p->d_inv = fftw_plan_dft_1d((int)p->nbins, p->buf_a, p->buf_b, FFTW_BACKWARD,
                                        FFTW_ESTIMATE);
            if (p->nmf)
                p->d_fwd = fftw_plan_dft_1d((int)p->nmf, p->buf_a, p->buf_b, FFTW_FORWARD,
                                            FFTW_ESTIMATE);
            ok = p->d_inv && (!p->nmf || p->d_fwd);
        }
    } else {
        p->buf_a = fftwf_malloc(nmax * sizeof(fftwf_complex));
        p->buf_b = fftwf_malloc(nmax * sizeof(fftwf_complex));
        ok = p->buf_a && p->buf_b;
        if (ok) {
            p->f_inv = fftwf_plan_dft_1d((int)p->nbins, p->buf_a, p->buf_b, FFTW_BACKWARD,
                                         FFTW_ESTIMATE);
            if (p->nmf)
                p->f_fwd = fftwf_plan_dft_1d((int)p->nmf, p->buf_a, p->buf_b, FFTW_FORWARD,
                                             FFTW_ESTIMATE);
            ok = p->f_inv && (!p->nmf || p->f_fwd);
        }
    }
    sarbp_fftw_planner_unlock();
    if (!p->buf_a || !p->buf_b) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for FFT buffers");
    if (!ok) return sarbp_error(SARBP_ERR_FFTW, "FFTW could not plan a transform of %zu points", p->nbins);
    return SARBP_OK;
}

/* CHIRP: spectrum of the reference chirp h(tau) = rect(tau/Tr) exp(j pi Kr tau^2),
 * centred on lag 0 (wrapped), conjugated, weighted across the band and
 * normalised so a unit echo compresses to 1. */
static sarbp_status make_chirp_reference(sarbp_rc_plan *p)
{
    const sarbp_phd *m = p->meta;
    size_t n = p->nmf;
    fftw_complex *h = fftw_malloc(n * sizeof(fftw_complex));
    fftw_complex *H = fftw_malloc(n * sizeof(fftw_complex));
    if (!h || !H) {
        fftw_free(h);
        fftw_free(H);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    memset(h, 0, n * sizeof(fftw_complex));
    double energy = 0;
    long half = (long)(n / 2);
    for (long k = -half; k < (long)n - half; k++) {
        double tau = (double)k / m->fs;
        if (fabs(tau) > 0.5 * m->pulse_len) continue;
        double ph = M_PI * m->chirp_rate * tau * tau;
        size_t idx = (size_t)((k + (long)n) % (long)n);
        h[idx][0] = cos(ph);
        h[idx][1] = sin(ph);
        energy += 1.0;
    }
    sarbp_fftw_planner_lock();
    fftw_plan pl = fftw_plan_dft_1d((int)n, h, H, FFTW_FORWARD, FFTW_ESTIMATE);
    sarbp_fftw_planner_unlock();
    if (!pl) {
        fftw_free(h);
        fftw_free(H);
        return sarbp_error(SARBP_ERR_FFTW, "FFTW could not plan the matched filter");
    }
    fftw_execute(pl);
    sarbp_fftw_planner_lock();
    fftw_destroy_plan(pl);
    sarbp_fftw_planner_unlock();
    /* peak of the inverse transform (unnormalised, nmf points) of |H|^2 is nmf * energy */
    double norm = 1.0 / ((double)n * energy);
    sarbp_c64 *ref = (sarbp_c64 *)h, *ref0 = (sarbp_c64 *)H; /* reuse */
    for (size_t k = 0; k < n; k++) {
        const double pre = 1.0 / sarbp_interp_response(
                                     p->interp, (double)signed_index(k, n) / (double)p->nbins);
        ref0[k].re = H[k][0] * p->wr[k] * norm;
        ref0[k].im = -H[k][1] * p->wr[k] * norm;
        ref[k].re = ref0[k].re * pre;
        ref[k].im = ref0[k].im * pre;
    }
    p->href = ref;
    p->href0 = ref0;
    return SARBP_OK;
}

/* The frequency of bin k of an FFT of n over sampling rate fs (negative
 * above the middle). */
static double fft_freq(size_t k, size_t n, double fs)
{
    return (k < (n + 1) / 2 ? (double)k : (double)k - (double)n) * fs / (double)n;
}

/* CHIRP: the range window over the chirp's band [-B/2, B/2] of an FFT of
 * nmf bins, its *nw samples in *w (at least one; the caller frees it). */
static sarbp_status chirp_band_window(const sarbp_phd *meta, const sarbp_window *win, size_t nmf,
                                      double **w, size_t *nw)
{
    const double B = fabs(meta->chirp_rate) * meta->pulse_len;
    size_t n = 0;
    for (size_t k = 0; k < nmf; k++) n += fabs(fft_freq(k, nmf, meta->fs)) <= B / 2;
    *nw = n;
    *w = malloc((n ? n : 1) * sizeof(double));
    if (!*w) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    return sarbp_window_fill(win, n ? n : 1, *w);
}

/* The coherent gain of prm's windows over meta's pulses and samples, from
 * the azimuth weights waz (their mean) and the range window: over the
 * samples (FREQ), or over the chirp's band (CHIRP; 1 without a window). */
static sarbp_status windows_gain(const sarbp_phd *meta, const sarbp_rc_params *prm, const double *waz,
                                 double *gain)
{
    const double gain_az = mean_of(waz, meta->npulses);
    double *w = NULL;
    size_t n = meta->nsamples;
    sarbp_status st = SARBP_OK;
    if (meta->domain == SARBP_DOMAIN_FREQ) {
        w = malloc((n ? n : 1) * sizeof(double));
        st = w ? sarbp_window_fill(&prm->range_window, n, w) : sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    } else if (prm->range_window.kind != SARBP_WIN_NONE) {
        st = chirp_band_window(meta, &prm->range_window, chirp_nfft(meta), &w, &n);
    }
    if (!st) *gain = (w ? mean_of(w, n) : 1.0) * gain_az;
    free(w);
    return st;
}

sarbp_status sarbp_rc_coherent_gain(const sarbp_phd *meta, const sarbp_rc_params *prm, double *gain)
{
    *gain = 0;
    double *waz = malloc((meta->npulses ? meta->npulses : 1) * sizeof(double));
    if (!waz) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = sarbp_window_fill(&prm->az_window, meta->npulses, waz);
    if (!st) st = windows_gain(meta, prm, waz, gain);
    free(waz);
    return st;
}

sarbp_status sarbp_rc_plan_create(const sarbp_phd *meta, const sarbp_rc_params *prm,
                                  sarbp_precision prec, size_t max_block, sarbp_rc_plan **out)
{
    (void)max_block;
    *out = NULL;
    if (prm->upsample < 1 || prm->upsample > 64)
        return sarbp_error(SARBP_ERR_INVALID, "upsampling factor %d is outside 1..64", prm->upsample);
    if (prm->interp != SARBP_INTERP_LINEAR && prm->interp != SARBP_INTERP_QUADRATIC &&
        prm->interp != SARBP_INTERP_CUBIC)
        return sarbp_error(SARBP_ERR_INVALID, "unknown interpolation kernel %d", (int)prm->interp);
    sarbp_rc_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    p->meta = meta;
    p->prec = prec;
    p->interp = prm->interp;
    p->upsample = prm->upsample;
    p->K = meta->nsamples;
    p->kc = meta->domain == SARBP_DOMAIN_FREQ ? p->K / 2 : 0;
    p->nbins = sarbp_rc_nbins(meta, prm->upsample);
    if (p->nbins > ((size_t)1 << 26)) {
        size_t nb = p->nbins;
        free(p);
        return sarbp_error(SARBP_ERR_INVALID, "%zu range bins per pulse is too many", nb);
    }
    sarbp_status st = SARBP_OK;
    p->waz = malloc(meta->npulses * sizeof(double));
    if (!p->waz) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    if (!st) st = sarbp_window_fill(&prm->az_window, meta->npulses, p->waz);
    if (!st) st = windows_gain(meta, prm, p->waz, &p->gain);
    if (!st && meta->domain == SARBP_DOMAIN_FREQ) {
        p->wr = malloc(p->K * sizeof(double));
        p->wpre = malloc(p->K * sizeof(double));
        if (!p->wr || !p->wpre) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        if (!st) st = sarbp_window_fill(&prm->range_window, p->K, p->wr);
        if (!st) {
            for (size_t k = 0; k < p->K; k++) {
                p->wr[k] /= (double)p->K;
                const double nu = ((double)k - (double)p->kc) / (double)p->nbins;
                p->wpre[k] = p->wr[k] / sarbp_interp_response(p->interp, nu);
            }
        }
    } else if (!st) {
        p->nmf = chirp_nfft(meta);
        p->wr = malloc(p->nmf * sizeof(double));
        if (!p->wr) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        /* spectral weights across the chirp band [-B/2, B/2] */
        const double B = fabs(meta->chirp_rate) * meta->pulse_len;
        size_t nw = 0;
        double *w = NULL;
        if (!st) st = chirp_band_window(meta, &prm->range_window, p->nmf, &w, &nw);
        if (!st) {
            int none = prm->range_window.kind == SARBP_WIN_NONE;
            for (size_t k = 0; k < p->nmf; k++) {
                const double f = fft_freq(k, p->nmf, meta->fs);
                if (none) p->wr[k] = 1;
                else if (fabs(f) > B / 2) p->wr[k] = 0;
                else {
                    size_t idx = (size_t)floor((f + B / 2) / B * (double)(nw - 1) + 0.5);
                    p->wr[k] = w[idx < nw ? idx : nw - 1];
                }
            }
        }
        free(w);
        if (!st) st = make_chirp_reference(p);
    }
    if (!st) st = make_plans(p);
    if (st) {
        sarbp_rc_plan_free(p);
        return st;
    }
    *out = p;
    return SARBP_OK;
}

size_t sarbp_rc_plan_nbins(const sarbp_rc_plan *p) { return p->nbins; }
double sarbp_rc_plan_coherent_gain(const sarbp_rc_plan *p) { return p->gain; }
const double *sarbp_rc_plan_range_weights(const sarbp_rc_plan *p) { return p->wpre; }
sarbp_interp sarbp_rc_plan_interp(const sarbp_rc_plan *p) { return p->interp; }
long sarbp_rc_plan_first_freq_index(const sarbp_rc_plan *p) { return -(long)p->kc; }
size_t sarbp_rc_plan_chirp_nfft(const sarbp_rc_plan *p) { return p->nmf; }
const sarbp_c64 *sarbp_rc_plan_chirp_filter(const sarbp_rc_plan *p) { return p->href; }
const double *sarbp_rc_plan_az_weights(const sarbp_rc_plan *p) { return p->waz; }

void sarbp_rc_plan_free(sarbp_rc_plan *p)
{
    if (!p) return;
    sarbp_fftw_planner_lock();
    if (p->d_fwd) fftw_destroy_plan(p->d_fwd);
    if (p->d_inv) fftw_destroy_plan(p->d_inv);
    if (p->f_fwd) fftwf_destroy_plan(p->f_fwd);
    if (p->f_inv) fftwf_destroy_plan(p->f_inv);
    sarbp_fftw_planner_unlock();
    fftw_free(p->buf_a);
    fftw_free(p->buf_b);
    fftw_free(p->href);
    fftw_free(p->href0);
    free(p->wr);
    free(p->wpre);
    free(p->waz);
    free(p);
}

/* fftshift: bin b of the output holds lag b - nbins/2 of y. */
static size_t shift_src(size_t b, size_t n) { return (b + n - n / 2) % n; }

static void freq_pulse_d(sarbp_rc_plan *p, const sarbp_c32 *s, double waz, sarbp_c64 *out)
{
    fftw_complex *a = p->buf_a, *y = p->buf_b;
    size_t n = p->nbins;
    memset(a, 0, n * sizeof(fftw_complex));
    for (size_t k = 0; k < p->K; k++) {
        const double w = p->wpre[k] * waz;
        const size_t d = k >= p->kc ? k - p->kc : k + n - p->kc;
        a[d][0] = s[k].re * w;
        a[d][1] = s[k].im * w;
    }
    fftw_execute_dft(p->d_inv, a, y);
    for (size_t b = 0; b < n; b++) {
        size_t src = shift_src(b, n);
        out[b].re = y[src][0];
        out[b].im = y[src][1];
    }
}

static void freq_pulse_f(sarbp_rc_plan *p, const sarbp_c32 *s, double waz, sarbp_c32 *out)
{
    fftwf_complex *a = p->buf_a, *y = p->buf_b;
    size_t n = p->nbins;
    memset(a, 0, n * sizeof(fftwf_complex));
    for (size_t k = 0; k < p->K; k++) {
        const float w = (float)(p->wpre[k] * waz);
        const size_t d = k >= p->kc ? k - p->kc : k + n - p->kc;
        a[d][0] = s[k].re * w;
        a[d][1] = s[k].im * w;
    }
    fftwf_execute_dft(p->f_inv, a, y);
    for (size_t b = 0; b < n; b++) {
        size_t src = shift_src(b, n);
        out[b].re = y[src][0];
        out[b].im = y[src][1];
    }
}

/* CHIRP, double: forward FFT of the echo, times the reference spectrum,
 * spectrum zero-padded to nbins (positive half first, negative half last),
 * inverse FFT, motion compensation. Output bin b is lag b (no shift). */
static void chirp_pulse_d(sarbp_rc_plan *p, const sarbp_c32 *s, double waz, double r0,
                          sarbp_c64 *out)
{
    fftw_complex *a = p->buf_a, *S = p->buf_b;
    size_t nmf = p->nmf, n = p->nbins;
    memset(a, 0, nmf * sizeof(fftw_complex));
    for (size_t k = 0; k < p->K; k++) {
        a[k][0] = s[k].re;
        a[k][1] = s[k].im;
    }
    fftw_execute_dft(p->d_fwd, a, S);
    const sarbp_c64 *h = p->href;
    memset(a, 0, n * sizeof(fftw_complex));
    size_t npos = (nmf + 1) / 2;
    for (size_t k = 0; k < nmf; k++) {
        double re = S[k][0] * h[k].re - S[k][1] * h[k].im;
        double im = S[k][0] * h[k].im + S[k][1] * h[k].re;
        size_t dst = k < npos ? k : k + (n - nmf);
        a[dst][0] = re * waz;
        a[dst][1] = im * waz;
    }
    fftw_execute_dft(p->d_inv, a, S);
    double ph = 4 * M_PI * p->meta->fc * r0 / SARBP_C;
    ph = fmod(ph, 2 * M_PI);
    double c = cos(ph), sn = sin(ph);
    for (size_t b = 0; b < n; b++) {
        out[b].re = S[b][0] * c - S[b][1] * sn;
        out[b].im = S[b][0] * sn + S[b][1] * c;
    }
}

static void chirp_pulse_f(sarbp_rc_plan *p, const sarbp_c32 *s, double waz, double r0,
                          sarbp_c32 *out)
{
    fftwf_complex *a = p->buf_a, *S = p->buf_b;
    size_t nmf = p->nmf, n = p->nbins;
    memset(a, 0, nmf * sizeof(fftwf_complex));
    for (size_t k = 0; k < p->K; k++) {
        a[k][0] = s[k].re;
        a[k][1] = s[k].im;
    }
    fftwf_execute_dft(p->f_fwd, a, S);
    const sarbp_c64 *h = p->href;
    memset(a, 0, n * sizeof(fftwf_complex));
    size_t npos = (nmf + 1) / 2;
    for (size_t k = 0; k < nmf; k++) {
        double re = S[k][0] * h[k].re - S[k][1] * h[k].im;
        double im = S[k][0] * h[k].im + S[k][1] * h[k].re;
        size_t dst = k < npos ? k : k + (n - nmf);
        a[dst][0] = (float)(re * waz);
        a[dst][1] = (float)(im * waz);
    }
    fftwf_execute_dft(p->f_inv, a, S);
    double ph = fmod(4 * M_PI * p->meta->fc * r0 / SARBP_C, 2 * M_PI);
    float c = (float)cos(ph), sn = (float)sin(ph);
    for (size_t b = 0; b < n; b++) {
        out[b].re = S[b][0] * c - S[b][1] * sn;
        out[b].im = S[b][0] * sn + S[b][1] * c;
    }
}

sarbp_status sarbp_rc_execute(sarbp_rc_plan *p, size_t p0, size_t np, const sarbp_c32 *samples,
                              sarbp_profiles *out)
{
    const sarbp_phd *m = p->meta;
    if (p0 + np > m->npulses || np > out->capacity || out->nbins != p->nbins ||
        p->prec == SARBP_EXACT || (out->precision == SARBP_FP64) != (p->prec == SARBP_FP64))
        return sarbp_error(SARBP_ERR_INTERNAL, "range compression block does not fit its buffer");
    size_t n = p->nbins;
    for (size_t j = 0; j < np; j++) {
        size_t i = p0 + j;
        const sarbp_c32 *s = samples + j * m->nsamples;
        double waz = p->waz[i];
        if (m->domain == SARBP_DOMAIN_FREQ) {
            if (p->prec == SARBP_FP64) freq_pulse_d(p, s, waz, out->data64 + j * n);
            else freq_pulse_f(p, s, waz, out->data32 + j * n);
        } else {
            if (p->prec == SARBP_FP64) chirp_pulse_d(p, s, waz, m->r0[i], out->data64 + j * n);
            else chirp_pulse_f(p, s, waz, m->r0[i], out->data32 + j * n);
        }
        sarbp_rc_pulse_geometry(m, n, p->upsample, i, out, j);
    }
    out->npulses = np;
    out->interp = p->interp;
    return SARBP_OK;
}

/* ---- the exact image's spectrum ------------------------------------------ */

size_t sarbp_rc_exact_size(const sarbp_rc_plan *p)
{
    return p->meta->domain == SARBP_DOMAIN_FREQ ? p->K : p->nmf;
}

sarbp_status sarbp_rc_exact_spectrum(sarbp_rc_plan *p, size_t i, const sarbp_c32 *s,
                                     sarbp_c64 *Y, double *fa, double *fd)
{
    const sarbp_phd *m = p->meta;
    if (i >= m->npulses) return sarbp_error(SARBP_ERR_INTERNAL, "pulse %zu of %zu", i, m->npulses);
    const double waz = p->waz[i];
    if (m->domain == SARBP_DOMAIN_FREQ) {
        for (size_t k = 0; k < p->K; k++) {
            Y[k].re = s[k].re * p->wr[k] * waz;
            Y[k].im = s[k].im * p->wr[k] * waz;
        }
        *fa = m->f0[i];
        *fd = m->df[i];
        return SARBP_OK;
    }
    if (!p->d_fwd)
        return sarbp_error(SARBP_ERR_INTERNAL, "the exact spectrum needs an FP64 plan");
    /* the compressed profile at native lag l (continuous) is
     * sum_k S[k] href0[k] exp(+j 2 pi k' l / nmf), k' the signed index, and
     * l = (dR - rstart) 2 fs / c; the motion compensation multiplies by
     * exp(+j 4 pi fc r0 / c) and backprojection by exp(+j 4 pi fc dR / c):
     * frequencies fc + k' fs / nmf, the rstart and r0 terms folded into Y */
    const size_t nmf = p->nmf;
    fftw_complex *a = p->buf_a, *S = p->buf_b;
    memset(a, 0, nmf * sizeof(fftw_complex));
    for (size_t k = 0; k < p->K; k++) {
        a[k][0] = s[k].re;
        a[k][1] = s[k].im;
    }
    fftw_execute_dft(p->d_fwd, a, S);
    const double fstep = m->fs / (double)nmf;
    const double rstart = 0.5 * SARBP_C * m->t0 - m->r0[i];
    const long kmin = signed_index(nmf / 2 + (nmf % 2), nmf); /* the most negative index */
    for (size_t j = 0; j < nmf; j++) {
        const long ks = kmin + (long)j;
        const size_t k = ks < 0 ? (size_t)(ks + (long)nmf) : (size_t)ks;
        const double re = S[k][0] * p->href0[k].re - S[k][1] * p->href0[k].im;
        const double im = S[k][0] * p->href0[k].im + S[k][1] * p->href0[k].re;
        /* exp(j 2 pi (2 (fc r0 - ks fstep rstart) / c)), reduced in cycles */
        double cyc = 2.0 * (m->fc * m->r0[i]) / SARBP_C;
        cyc -= floor(cyc);
        double cyc2 = -2.0 * (double)ks * fstep * rstart / SARBP_C;
        cyc2 -= floor(cyc2);
        const double ph = 2.0 * M_PI * (cyc + cyc2);
        const double c = cos(ph), sn = sin(ph);
        Y[j].re = (re * c - im * sn) * waz;
        Y[j].im = (re * sn + im * c) * waz;
    }
    *fa = m->fc + (double)kmin * fstep;
    *fd = fstep;
    return SARBP_OK;
}
