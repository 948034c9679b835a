/* window.c - tapering windows (none, Hamming, Hann, Taylor): parse, format, fill.
 *
 * All windows are symmetric over n samples, w[i] == w[n-1-i], with their
 * continuous peak (the centre, x = (n-1)/2) equal to 1; for odd n that is a
 * sample, for even n the two middle samples are slightly below 1. n == 1
 * gives 1 for every kind. This file does not apply windows to data. */
#include "sarbp/window.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TAYLOR_NBAR_DEFAULT 4
#define TAYLOR_SLL_DEFAULT (-35.0)
#define TAYLOR_NBAR_MAX 1000
#define TAYLOR_SLL_MIN (-300.0)

/* A zeroed TAYLOR window ({SARBP_WIN_TAYLOR}) means the defaults. */
static int taylor_nbar(const sarbp_window *w)
{
    return w->nbar == 0 ? TAYLOR_NBAR_DEFAULT : w->nbar;
}

static double taylor_sll(const sarbp_window *w)
{
    return w->sll_db == 0 ? TAYLOR_SLL_DEFAULT : w->sll_db;
}

static sarbp_status check_window(const sarbp_window *w)
{
    if (!w) return sarbp_error(SARBP_ERR_INVALID, "no window");
    switch (w->kind) {
    case SARBP_WIN_NONE:
    case SARBP_WIN_HAMMING:
    case SARBP_WIN_HANN:
        return SARBP_OK;
    case SARBP_WIN_TAYLOR: {
        int nbar = taylor_nbar(w);
        double sll = taylor_sll(w);
        if (nbar < 1 || nbar > TAYLOR_NBAR_MAX)
            return sarbp_error(SARBP_ERR_INVALID, "taylor window: nbar %d outside 1..%d", nbar,
                               TAYLOR_NBAR_MAX);
        if (!isfinite(sll) || sll >= 0 || sll < TAYLOR_SLL_MIN)
            return sarbp_error(SARBP_ERR_INVALID,
                               "taylor window: sidelobe level %g dB outside [%g, 0)", sll,
                               TAYLOR_SLL_MIN);
        return SARBP_OK;
    }
    }
    return sarbp_error(SARBP_ERR_INVALID, "unknown window kind %d", (int)w->kind);
}

/* Strict integer: the whole string. */
static int parse_int(const char *s, int *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < -1000000 || v > 1000000) return -1;
    *out = (int)v;
    return 0;
}

static int parse_num(const char *s, double *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

sarbp_status sarbp_window_parse(const char *text, sarbp_window *w)
{
    if (!text || !w) return sarbp_error(SARBP_ERR_INVALID, "no window given");
    sarbp_window r = {SARBP_WIN_NONE, TAYLOR_NBAR_DEFAULT, TAYLOR_SLL_DEFAULT};
    if (!strcasecmp(text, "none") || !strcasecmp(text, "rect")) {
        r.kind = SARBP_WIN_NONE;
    } else if (!strcasecmp(text, "hamming")) {
        r.kind = SARBP_WIN_HAMMING;
    } else if (!strcasecmp(text, "hann") || !strcasecmp(text, "hanning")) {
        r.kind = SARBP_WIN_HANN;
    } else if (!strcasecmp(text, "taylor")) {
        r.kind = SARBP_WIN_TAYLOR;
    } else if (!strncasecmp(text, "taylor:", 7)) {
        /* taylor:NBAR:SLL */
        char buf[64];
        size_t len = strlen(text + 7);
        if (len >= sizeof buf) goto bad;
        memcpy(buf, text + 7, len + 1);
        char *colon = strchr(buf, ':');
        if (!colon) goto bad;
        *colon = '\0';
        r.kind = SARBP_WIN_TAYLOR;
        if (parse_int(buf, &r.nbar) || parse_num(colon + 1, &r.sll_db)) goto bad;
        if (r.sll_db > 0) r.sll_db = -r.sll_db;
        if (r.nbar < 1 || r.nbar > TAYLOR_NBAR_MAX || r.sll_db == 0 ||
            r.sll_db < TAYLOR_SLL_MIN)
            return sarbp_error(SARBP_ERR_INVALID,
                               "bad window '%s': taylor needs nbar in 1..%d and a sidelobe "
                               "level in dB, nonzero, at most %g in magnitude",
                               text, TAYLOR_NBAR_MAX, -TAYLOR_SLL_MIN);
    } else {
        goto bad;
    }
    *w = r;
    return SARBP_OK;
bad:
    return sarbp_error(SARBP_ERR_INVALID,
                       "bad window '%s' (expected none, hamming, hann, taylor or "
                       "taylor:NBAR:SLL)",
                       text);
}

void sarbp_window_format(const sarbp_window *w, char *buf, size_t n)
{
    if (!buf || n == 0) return;
    if (!w) {
        snprintf(buf, n, "none");
        return;
    }
    switch (w->kind) {
    case SARBP_WIN_NONE: snprintf(buf, n, "none"); return;
    case SARBP_WIN_HAMMING: snprintf(buf, n, "hamming"); return;
    case SARBP_WIN_HANN: snprintf(buf, n, "hann"); return;
    case SARBP_WIN_TAYLOR:
        /* %.17g would round-trip exactly but reads badly; %.10g keeps typical
         * levels ("-35", "-42.5") exact. */
        snprintf(buf, n, "taylor:%d:%.10g", taylor_nbar(w), taylor_sll(w));
        return;
    }
    snprintf(buf, n, "unknown");
}

/* Taylor weighting (Carrara, Goodman & Majewski, "Spotlight SAR", app. D;
 * the same formula as scipy.signal.windows.taylor):
 *   w(x) = 1 + 2 sum_{m=1}^{nbar-1} F_m cos(2 pi m (x - (n-1)/2) / n),
 *   F_m = (-1)^(m+1) prod_{i=1}^{nbar-1} (1 - m^2 / (s2 (A^2 + (i - 1/2)^2)))
 *         / (2 prod_{i != m} (1 - m^2 / i^2)),
 *   A = acosh(10^(-SLL/20)) / pi, s2 = nbar^2 / (A^2 + (nbar - 1/2)^2).
 * Normalised by w at the centre. */
static sarbp_status fill_taylor(int nbar, double sll_db, size_t n, double *out)
{
    double eta = pow(10.0, -sll_db / 20.0);
    double a = acosh(eta) / M_PI;
    double a2 = a * a;
    double s2 = (double)nbar * nbar / (a2 + (nbar - 0.5) * (nbar - 0.5));
    int nf = nbar - 1;
    double *f = NULL;
    if (nf > 0) {
        f = malloc((size_t)nf * sizeof *f);
        if (!f) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a taylor window");
    }
    for (int m = 1; m <= nf; m++) {
        double m2 = (double)m * m;
        double num = 1, den = 1;
        for (int i = 1; i <= nf; i++) {
            num *= 1 - m2 / (s2 * (a2 + (i - 0.5) * (i - 0.5)));
            if (i != m) den *= 1 - m2 / ((double)i * i);
        }
        f[m - 1] = ((m % 2) ? num : -num) / (2 * den);
    }
    double centre = 1; /* w at x = (n-1)/2: every cosine is 1 */
    for (int m = 0; m < nf; m++) centre += 2 * f[m];
    double half = 0.5 * (double)(n - 1);
    for (size_t k = 0; k < n; k++) {
        double x = (double)k - half;
        double v = 1;
        for (int m = 1; m <= nf; m++) v += 2 * f[m - 1] * cos(2 * M_PI * m * x / (double)n);
        out[k] = v / centre;
    }
    free(f);
    return SARBP_OK;
}

sarbp_status sarbp_window_fill(const sarbp_window *w, size_t n, double *out)
{
    SARBP_TRY(check_window(w));
    if (n == 0) return SARBP_OK;
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "no output for a window of %zu", n);
    if (n == 1 || w->kind == SARBP_WIN_NONE) {
        for (size_t k = 0; k < n; k++) out[k] = 1;
        return SARBP_OK;
    }
    double nm1 = (double)(n - 1);
    switch (w->kind) {
    case SARBP_WIN_HAMMING:
        for (size_t k = 0; k < n; k++) out[k] = 0.54 - 0.46 * cos(2 * M_PI * (double)k / nm1);
        break;
    case SARBP_WIN_HANN:
        for (size_t k = 0; k < n; k++) out[k] = 0.5 - 0.5 * cos(2 * M_PI * (double)k / nm1);
        break;
    case SARBP_WIN_TAYLOR:
        SARBP_TRY(fill_taylor(taylor_nbar(w), taylor_sll(w), n, out));
        break;
    default:
        break;
    }
    /* exact symmetry: the cosines of k and n-1-k differ in the last bit */
    for (size_t k = 0; k < n / 2; k++) out[n - 1 - k] = out[k];
    return SARBP_OK;
}
