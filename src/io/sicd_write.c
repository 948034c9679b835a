/* sicd_write.c - SICD 1.3.0 complex images in NITF 2.1.
 *
 * The NITF container is written here by hand (fixed-width ASCII fields,
 * MIL-STD-2500C): a file header, the image segments of RE32F_IM32F pixels,
 * band-interleaved by pixel (IMODE P, big-endian I then Q), and one
 * XML_DATA_CONTENT data extension holding the SICD XML.
 *
 * Segments follow SICD volume 2's image sizing (section 3.2): an image of
 * at most 9,999,999,998 bytes is one segment (IID1 SICD000); a larger one
 * is cut into NumIS segments of whole rows, each min(99,999, floor(limit /
 * bytes a row)) rows but the last, IID1 SICD001, SICD002, ..., IDLVL n,
 * IALVL n - 1 (attached to the one before), ILOC the previous segment's
 * row count and column 0 (the first 0, 0), IGEOLO the corners of its first
 * row and of the next segment's first row (the image's last row for the
 * last). More than 999 segments or 99,999,999 columns are refused. The
 * environment variable SARBP_TEST_SICD_SEGMENT_BYTES, for tests only,
 * lowers the byte limit so that small images are segmented.
 *
 * What each SICD field is filled from (README.md has the table):
 *  - orientation: the SICD row direction is whichever of the scene grid's
 *    axes (+-x, +-y) is closest to the ground-projected look direction at the
 *    centre of the aperture, the column direction the other one, signed so
 *    that row x column points up (image-plane normal up); the array is then
 *    a flipped or transposed view of the .h5 image - same pixels, same
 *    ground positions. ImagePlane GROUND, Type PLANE, spacings the grid's;
 *  - spatial-frequency support: every pulse's lowest and highest frequency
 *    projected on the row and column directions, k = 2 f / c (u . w), w the
 *    unit vector from the antenna phase centre to the SCP; KCtr the middle,
 *    ImpRespBW the span, DeltaK1/2 the half spans, Sgn -1 (the image of a
 *    sarbp backprojection carries exp(+j 2 pi k . r)); ImpRespWid the
 *    window's 3 dB width (computed from sarbp's window) over ImpRespBW; a
 *    grid whose spacing cannot hold that band (ImpRespBW x SS > 1) is
 *    refused: it would not be a valid SICD;
 *  - SCP: the grid pixel nearest the centre (an integer SCPPixel);
 *  - Timeline, ARPPoly: the pulse times (s after the collection start) and
 *    antenna positions, a least-squares polynomial (order up to 5) in time;
 *    SCPTime (and the constant TimeCOAPoly) the middle of the processed
 *    pulses' times; SCPCOA derived from ARPPoly at SCPTime with the SICD
 *    volume 1 formulas;
 *  - RadarCollection and ImageFormation: the band of the processed pulses,
 *    the polarisation attribute (UNKNOWN without one), Area/Corner the
 *    image corners, ImageFormAlgo OTHER, no beam compensation, autofocus
 *    GLOBAL when the autofocus attribute says applied (NO otherwise); the
 *    Processing block's Parameters the image's provenance attributes
 *    (sarbp/image.h) and sarbp_grid ("nx ny dx dy xc yc zc") and
 *    sarbp_layout ("ix0 ixr ixc iy0 iyr iyc", the orientation above), from
 *    which image_read.c restores the .h5 image;
 *  - CollectionInfo: collector and core name attributes (UNKNOWN and
 *    "sarbp" without them), MONOSTATIC, SPOTLIGHT, UNCLASSIFIED.
 * Reading SICD is image_read.c's. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

#include "io/geo_write.h"
#include "sarbp/date.h"
#include "sarbp/geo.h"
#include "sarbp/phd.h"
#include "sarbp/window.h"

#define SICD_NS "urn:SICD:1.3.0"
#define NITF_MAX_SEG_BYTES 9999999998ULL /* IS_SIZE_MAX */
#define NITF_MAX_SEG_ROWS 99999ULL        /* ILOC_MAX: rows a segment of several */
#define NITF_MAX_SIDE 99999999
#define NITF_MAX_SEGMENTS 999

/* ---- a growing string ------------------------------------------------------ */

struct sb {
    char *p;
    size_t n, cap;
    int oom;
};

static void sb_printf(struct sb *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(struct sb *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 16384;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* XML text of s: & < > " ' escaped, control characters dropped. */
static void sb_text(struct sb *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': sb_printf(b, "&amp;"); break;
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        case '\'': sb_printf(b, "&apos;"); break;
        default:
            if ((unsigned char)*s >= 0x20) sb_printf(b, "%c", *s);
        }
    }
}

/* ---- small vector algebra --------------------------------------------------- */

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double norm3(const double *a)
{
    return sqrt(dot3(a, a));
}

static void cross3(const double *a, const double *b, double *c)
{
    const double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
                 z = a[0] * b[1] - a[1] * b[0];
    c[0] = x;
    c[1] = y;
    c[2] = z;
}

/* ---- the geometry of the SICD ------------------------------------------------ */

#define MAX_ORDER 5

struct sicd_geom {
    sarbp_scene_ref ref;
    size_t nrows, ncols;
    /* sarbp pixel of SICD (r, c): ix = ix0 + ixr r + ixc c, iy likewise */
    long ix0, ixr, ixc, iy0, iyr, iyc;
    double row_ss, col_ss;
    double urow[3], ucol[3];           /* scene frame */
    size_t scp_row, scp_col;
    double scp_xyz[3], scp_ecef[3], scp_lat, scp_lon, scp_h;
    double corner_lat[4], corner_lon[4], corner_h[4]; /* FRFC, FRLC, LRLC, LRFC */
    struct { double kctr, dk1, dk2, bw, irw; char win[64]; sarbp_window w; } k[2]; /* row, col */
    double t_start, t_end, t_coa, fmin, fmax;
    int order;
    double arp[3][MAX_ORDER + 1];      /* ARPPoly, ECEF, in t */
    char collect_start[40], idatim[15];
    size_t nseg, seg_rows;             /* image segments; rows each but the last */
};

/* Pixel (r, c) of the SICD array in scene coordinates. */
static void sicd_pixel_xyz(const sarbp_image *img, const struct sicd_geom *s, double r, double c,
                           double xyz[3])
{
    const sarbp_grid *g = &img->grid;
    const double ix = (double)s->ix0 + (double)s->ixr * r + (double)s->ixc * c;
    const double iy = (double)s->iy0 + (double)s->iyr * r + (double)s->iyc * c;
    xyz[0] = g->xc + (ix - 0.5 * (double)(g->nx - 1)) * g->dx;
    xyz[1] = g->yc + (iy - 0.5 * (double)(g->ny - 1)) * g->dy;
    xyz[2] = g->zc;
}

/* 3 dB width of the window's impulse response in units of 1 / bandwidth
 * (0.886 for none): the half-power point of |sum w_n exp(-j 2 pi u n / N)|^2,
 * by bisection on u. */
static double irw_factor(const sarbp_window *w)
{
    enum { N = 256 };
    double v[N];
    if (sarbp_window_fill(w, N, v) != SARBP_OK) return 0.886;
    double s0 = 0;
    for (int n = 0; n < N; n++) s0 += v[n];
    double lo = 0, hi = 1.5;
    for (int it = 0; it < 50; it++) {
        const double u = 0.5 * (lo + hi);
        double re = 0, im = 0;
        for (int n = 0; n < N; n++) {
            const double a = 2 * M_PI * u * (n - 0.5 * (N - 1)) / N;
            re += v[n] * cos(a);
            im -= v[n] * sin(a);
        }
        if ((re * re + im * im) / (s0 * s0) > 0.5) lo = u;
        else hi = u;
    }
    return lo + hi; /* full width: twice the half-power abscissa */
}

/* Solves a[n][n] x = b by Gaussian elimination with partial pivoting. */
static int solve(int n, double a[MAX_ORDER + 1][MAX_ORDER + 1], double *b)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
        if (!(fabs(a[p][c]) > 1e-300)) return 0;
        for (int k = 0; k < n; k++) {
            double t = a[c][k];
            a[c][k] = a[p][k];
            a[p][k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int r = c + 1; r < n; r++) {
            const double f = a[r][c] / a[c][c];
            for (int k = c; k < n; k++) a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        for (int k = c + 1; k < n; k++) b[c] -= a[c][k] * b[k];
        b[c] /= a[c][c];
    }
    return 1;
}

/* ARPPoly: least squares in u = (t - tc) / ts, then expanded in t. */
static int fit_arp(const sarbp_phd *m, const double *t, const sarbp_scene_ref *ref,
                   struct sicd_geom *s)
{
    const size_t np = m->npulses;
    const double tc = 0.5 * (s->t_start + s->t_end), ts = 0.5 * (s->t_end - s->t_start);
    s->order = np - 1 < MAX_ORDER ? (int)np - 1 : MAX_ORDER;
    if (s->order > 3 && np < 20) s->order = 3;
    const int n = s->order + 1;
    for (int d = 0; d < 3; d++) {
        double a[MAX_ORDER + 1][MAX_ORDER + 1] = {{0}}, b[MAX_ORDER + 1] = {0};
        for (size_t i = 0; i < np; i++) {
            double e[3];
            sarbp_scene_to_ecef(ref, m->pos + 3 * i, e);
            const double u = (t[i] - tc) / ts;
            double pw[2 * MAX_ORDER + 1];
            pw[0] = 1;
            for (int k = 1; k <= 2 * s->order; k++) pw[k] = pw[k - 1] * u;
            for (int r = 0; r < n; r++) {
                for (int c = 0; c < n; c++) a[r][c] += pw[r + c];
                b[r] += pw[r] * (e[d] - ref->ecef[d]);
            }
        }
        if (!solve(n, a, b)) return 0;
        /* sum_k b_k ((t - tc) / ts)^k = sum_j t^j sum_k b_k ts^-k C(k, j) (-tc)^(k-j) */
        for (int j = 0; j < n; j++) {
            double cj = 0;
            for (int k = j; k < n; k++) {
                double binom = 1;
                for (int q = 0; q < j; q++) binom = binom * (k - q) / (q + 1);
                cj += b[k] * pow(ts, -k) * binom * pow(-tc, k - j);
            }
            s->arp[d][j] = cj;
        }
        s->arp[d][0] += ref->ecef[d];
    }
    return 1;
}

static void arp_eval(const struct sicd_geom *s, double t, int deriv, double out[3])
{
    for (int d = 0; d < 3; d++) {
        double v = 0;
        for (int k = s->order; k >= deriv; k--) {
            double c = s->arp[d][k];
            for (int q = 0; q < deriv; q++) c *= k - q;
            v = v * t + c;
        }
        out[d] = v;
    }
}

/* A real UTC date and time YYYY-MM-DDThh:mm:ss[.f...][Z] (sarbp/date.h)
 * and its NITF FDT/IDATIM form CCYYMMDDhhmmss; 0 with *why when s is not
 * one. */
static int parse_iso(const char *s, char idatim[15], const char **why)
{
    if (!sarbp_date_check(s, why)) return 0;
    snprintf(idatim, 15, "%.4s%.2s%.2s%.2s%.2s%.2s", s, s + 5, s + 8, s + 11, s + 14, s + 17);
    return 1;
}

/* The byte limit of an image segment: IS_SIZE_MAX, or a smaller one from
 * SARBP_TEST_SICD_SEGMENT_BYTES (tests only; ignored unless a whole number
 * from 1 to IS_SIZE_MAX). */
static unsigned long long segment_limit(void)
{
    const char *e = getenv("SARBP_TEST_SICD_SEGMENT_BYTES");
    if (!e || !*e) return NITF_MAX_SEG_BYTES;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(e, &end, 10);
    if (errno || *end || *e == '-' || v < 1 || v > NITF_MAX_SEG_BYTES) return NITF_MAX_SEG_BYTES;
    return v;
}

/* SICD volume 2's image sizing (the header comment): s->nseg, s->seg_rows. */
static sarbp_status segments(const char *path, struct sicd_geom *s)
{
    const unsigned long long limit = segment_limit(), row = 8ULL * s->ncols;
    if (s->ncols > NITF_MAX_SIDE || row > limit)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': rows of %zu pixels do not "
                           "fit a NITF image segment", path, s->ncols);
    if ((unsigned long long)s->nrows <= limit / row) {
        s->nseg = 1;
        s->seg_rows = s->nrows;
    } else {
        const unsigned long long per = limit / row < NITF_MAX_SEG_ROWS ? limit / row
                                                                       : NITF_MAX_SEG_ROWS;
        s->seg_rows = (size_t)per;
        s->nseg = (s->nrows + s->seg_rows - 1) / s->seg_rows;
    }
    if (s->nseg > NITF_MAX_SEGMENTS || s->seg_rows > NITF_MAX_SIDE)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': %zu x %zu pixels need more "
                           "than the %d image segments a NITF file holds", path, s->nrows,
                           s->ncols, NITF_MAX_SEGMENTS);
    return SARBP_OK;
}

static sarbp_status plan(const char *path, const sarbp_image *img, const sarbp_image_context *ctx,
                         struct sicd_geom *s)
{
    memset(s, 0, sizeof *s);
    /* SICD's image grid is a plane (Grid/Type PLANE, SCP, row and column
     * unit vectors); a terrain-formed image is not on one */
    if (img->grid.height || sarbp_image_get_attr(img, "heights_source"))
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': SICD describes an image on a "
                           "plane, and this one is formed on terrain heights (write .h5, .tif or "
                           ".kmz, or form without --heights/--dem)", path);
    SARBP_TRY(sarbp_image_scene_ref(img, path, &s->ref));
    const sarbp_phd *m = ctx ? ctx->meta : NULL;
    const char *start = sarbp_image_get_attr(img, "collect_start");
    if (!m || !ctx->times || !start)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': a SICD needs the pulse times "
                           "and the collection start, and the input has none (CPHD inputs give "
                           "them; for others give --prf HZ and --collect-start TIME)", path);
    const char *why;
    if (!parse_iso(start, s->idatim, &why))
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': collection start '%s' is not "
                           "an ISO 8601 UTC date and time: %s", path, start, why);
    snprintf(s->collect_start, sizeof s->collect_start, "%s", start);
    if (m->domain != SARBP_DOMAIN_FREQ || !m->f0 || !m->df)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': SICD output is written for "
                           "frequency-domain phase histories only", path);
    const sarbp_grid *g = &img->grid;
    const size_t np = m->npulses;
    const double *t = ctx->times;
    s->t_start = s->t_end = t[0];
    s->fmin = INFINITY;
    s->fmax = -INFINITY;
    for (size_t i = 0; i < np; i++) {
        if (!isfinite(t[i]))
            return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': pulse %zu's time is not "
                               "finite", path, i);
        s->t_start = fmin(s->t_start, t[i]);
        s->t_end = fmax(s->t_end, t[i]);
        s->fmin = fmin(s->fmin, m->f0[i]);
        s->fmax = fmax(s->fmax, m->f0[i] + (double)(m->nsamples - 1) * m->df[i]);
    }
    if (s->t_start < 0 || !(s->t_end > s->t_start))
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': a SICD needs at least two "
                           "pulses at different times after the collection start (pulse times "
                           "%g to %g s)", path, s->t_start, s->t_end);
    s->t_coa = 0.5 * (s->t_start + s->t_end);

    /* orientation: the row direction nearest the look (antenna to grid centre)
     * at the aperture's centre */
    const size_t mid = np / 2;
    const double look[2] = {g->xc - m->pos[3 * mid], g->yc - m->pos[3 * mid + 1]};
    if (fabs(look[0]) >= fabs(look[1])) {
        const long sg = look[0] >= 0 ? 1 : -1; /* row +-x, column +-y */
        s->urow[0] = (double)sg;
        s->ucol[1] = (double)sg;
        s->nrows = g->nx;
        s->ncols = g->ny;
        s->row_ss = g->dx;
        s->col_ss = g->dy;
        s->ixr = sg;
        s->ix0 = sg > 0 ? 0 : (long)g->nx - 1;
        s->iyc = sg;
        s->iy0 = sg > 0 ? 0 : (long)g->ny - 1;
    } else {
        const long sg = look[1] >= 0 ? 1 : -1; /* row +-y, column -+x */
        s->urow[1] = (double)sg;
        s->ucol[0] = (double)-sg;
        s->nrows = g->ny;
        s->ncols = g->nx;
        s->row_ss = g->dy;
        s->col_ss = g->dx;
        s->iyr = sg;
        s->iy0 = sg > 0 ? 0 : (long)g->ny - 1;
        s->ixc = -sg;
        s->ix0 = sg > 0 ? (long)g->nx - 1 : 0;
    }
    SARBP_TRY(segments(path, s));
    s->scp_row = s->nrows / 2;
    s->scp_col = s->ncols / 2;
    sicd_pixel_xyz(img, s, (double)s->scp_row, (double)s->scp_col, s->scp_xyz);
    sarbp_scene_to_ecef(&s->ref, s->scp_xyz, s->scp_ecef);
    sarbp_ecef_to_geodetic(s->scp_ecef, &s->scp_lat, &s->scp_lon, &s->scp_h);
    const double rc[4][2] = {{0, 0}, {0, (double)s->ncols - 1}, {(double)s->nrows - 1,
                             (double)s->ncols - 1}, {(double)s->nrows - 1, 0}};
    for (int i = 0; i < 4; i++) {
        double xyz[3];
        sicd_pixel_xyz(img, s, rc[i][0], rc[i][1], xyz);
        sarbp_scene_to_geodetic(&s->ref, xyz, &s->corner_lat[i], &s->corner_lon[i],
                                &s->corner_h[i]);
    }

    /* spatial-frequency support */
    const double *u[2] = {s->urow, s->ucol};
    const double ss[2] = {s->row_ss, s->col_ss};
    const char *wattr[2] = {"range_window", "azimuth_window"};
    for (int a = 0; a < 2; a++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < np; i++) {
            double w[3] = {s->scp_xyz[0] - m->pos[3 * i], s->scp_xyz[1] - m->pos[3 * i + 1],
                           s->scp_xyz[2] - m->pos[3 * i + 2]};
            const double wn = norm3(w), proj = dot3(w, u[a]) / wn;
            const double f[2] = {m->f0[i], m->f0[i] + (double)(m->nsamples - 1) * m->df[i]};
            for (int j = 0; j < 2; j++) {
                const double k = 2 * f[j] / SARBP_C * proj;
                lo = fmin(lo, k);
                hi = fmax(hi, k);
            }
        }
        s->k[a].kctr = 0.5 * (lo + hi);
        s->k[a].bw = hi - lo;
        s->k[a].dk1 = lo - s->k[a].kctr;
        s->k[a].dk2 = hi - s->k[a].kctr;
        if (!(s->k[a].bw > 0))
            return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': the pulses span no band "
                               "along the image %s direction", path, a ? "column" : "row");
        if (s->k[a].bw * ss[a] > 1)
            return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': the %s spacing %g m is "
                               "coarser than the image's band needs (impulse-response "
                               "bandwidth %.4g cycles/m: spacing at most %.4g m); a SICD cannot "
                               "describe it: give a finer --spacing", path,
                               a ? "column" : "row", ss[a], s->k[a].bw, 1 / s->k[a].bw);
        const char *wname = sarbp_image_get_attr(img, wattr[a]);
        if (!wname || sarbp_window_parse(wname, &s->k[a].w) != SARBP_OK)
            s->k[a].w.kind = SARBP_WIN_NONE;
        s->k[a].irw = irw_factor(&s->k[a].w) / s->k[a].bw;
    }
    if (!fit_arp(m, t, &s->ref, s))
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': the antenna positions cannot "
                           "be fitted by a polynomial in time", path);
    return SARBP_OK;
}

sarbp_status sarbp_image_sicd_spacing(const sarbp_phd *m, double xc, double yc, double zc,
                                      double osr, double spacing[2])
{
    if (!m || !spacing || !m->pos || !m->f0 || !m->df || !m->npulses || !(osr > 0))
        return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_sicd_spacing: no pulses or no ratio");
    const double c[3] = {xc, yc, zc};
    for (int a = 0; a < 2; a++) { /* as plan's support, along x then y */
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < m->npulses; i++) {
            const double w[3] = {c[0] - m->pos[3 * i], c[1] - m->pos[3 * i + 1],
                                 c[2] - m->pos[3 * i + 2]};
            const double proj = w[a] / norm3(w);
            const double f[2] = {m->f0[i], m->f0[i] + (double)(m->nsamples - 1) * m->df[i]};
            for (int j = 0; j < 2; j++) {
                lo = fmin(lo, 2 * f[j] / SARBP_C * proj);
                hi = fmax(hi, 2 * f[j] / SARBP_C * proj);
            }
        }
        if (!(hi > lo))
            return sarbp_error(SARBP_ERR_INVALID, "the pulses span no band along %c", "xy"[a]);
        spacing[a] = 1 / (osr * (hi - lo));
    }
    return SARBP_OK;
}

sarbp_status sicd_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx)
{
    struct sicd_geom s;
    return plan(path, img, ctx, &s);
}

/* ---- the XML ------------------------------------------------------------------ */

static void xyz(struct sb *b, const char *tag, const double v[3])
{
    sb_printf(b, "<%s><X>%.17g</X><Y>%.17g</Y><Z>%.17g</Z></%s>", tag, v[0], v[1], v[2], tag);
}

static void win_xml(struct sb *b, const sarbp_window *w)
{
    static const char *const name[] = {"UNIFORM", "HAMMING", "HANNING", "TAYLOR"};
    sb_printf(b, "<WgtType><WindowName>%s</WindowName>", name[w->kind]);
    if (w->kind == SARBP_WIN_TAYLOR)
        sb_printf(b, "<Parameter name=\"NBAR\">%d</Parameter><Parameter name=\"SLL\">%g"
                  "</Parameter>", w->nbar, w->sll_db);
    sb_printf(b, "</WgtType>");
}

static void build_xml(struct sb *b, const sarbp_image *img, const struct sicd_geom *s)
{
    const char *collector = sarbp_image_get_attr(img, "collector");
    const char *core = sarbp_image_get_attr(img, "core_name");
    const char *pol = sarbp_image_get_attr(img, "polarisation");
    char txpol[16] = "UNKNOWN", txrcv[32] = "UNKNOWN";
    if (pol && strchr(pol, ':') && strlen(pol) < sizeof txrcv) {
        /* SICD's polarisations; anything else is written as UNKNOWN */
        static const char *const known[] = {"V", "H", "X", "Y", "S", "E", "RHC", "LHC"};
        const char *colon = strchr(pol, ':');
        int ok_tx = 0, ok_rx = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
            const size_t n = strlen(known[i]);
            ok_tx |= (size_t)(colon - pol) == n && !strncmp(pol, known[i], n);
            ok_rx |= !strcmp(colon + 1, known[i]);
        }
        if (ok_tx && ok_rx) {
            snprintf(txrcv, sizeof txrcv, "%s", pol);
            snprintf(txpol, sizeof txpol, "%.*s", (int)(colon - pol), pol);
        }
    }
    double urow[3], ucol[3];
    sarbp_scene_dir_to_ecef(&s->ref, s->urow, urow);
    sarbp_scene_dir_to_ecef(&s->ref, s->ucol, ucol);
    char now[32];
    time_t tt = time(NULL);
    struct tm tmv;
    gmtime_r(&tt, &tmv);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tmv);

    sb_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<SICD xmlns=\"" SICD_NS "\">\n");
    sb_printf(b, "<CollectionInfo><CollectorName>");
    sb_text(b, collector && *collector ? collector : "UNKNOWN");
    sb_printf(b, "</CollectorName><CoreName>");
    sb_text(b, core && *core ? core : "sarbp");
    sb_printf(b, "</CoreName><CollectType>MONOSTATIC</CollectType><RadarMode><ModeType>SPOTLIGHT"
              "</ModeType></RadarMode><Classification>UNCLASSIFIED</Classification>"
              "</CollectionInfo>\n");
    sb_printf(b, "<ImageCreation><Application>sarbp %s</Application><DateTime>%s</DateTime>"
              "<Profile>sarbp backprojection</Profile></ImageCreation>\n", SARBP_VERSION_STRING, now);
    sb_printf(b, "<ImageData><PixelType>RE32F_IM32F</PixelType><NumRows>%zu</NumRows>"
              "<NumCols>%zu</NumCols><FirstRow>0</FirstRow><FirstCol>0</FirstCol><FullImage>"
              "<NumRows>%zu</NumRows><NumCols>%zu</NumCols></FullImage><SCPPixel><Row>%zu</Row>"
              "<Col>%zu</Col></SCPPixel></ImageData>\n", s->nrows, s->ncols, s->nrows, s->ncols,
              s->scp_row, s->scp_col);
    sb_printf(b, "<GeoData><EarthModel>WGS_84</EarthModel><SCP>");
    xyz(b, "ECF", s->scp_ecef);
    sb_printf(b, "<LLH><Lat>%.15g</Lat><Lon>%.15g</Lon><HAE>%.6f</HAE></LLH></SCP><ImageCorners>",
              s->scp_lat, s->scp_lon, s->scp_h);
    static const char *const icp[] = {"1:FRFC", "2:FRLC", "3:LRLC", "4:LRFC"};
    for (int i = 0; i < 4; i++)
        sb_printf(b, "<ICP index=\"%s\"><Lat>%.15g</Lat><Lon>%.15g</Lon></ICP>", icp[i],
                  s->corner_lat[i], s->corner_lon[i]);
    sb_printf(b, "</ImageCorners></GeoData>\n");
    sb_printf(b, "<Grid><ImagePlane>GROUND</ImagePlane><Type>PLANE</Type>"
              "<TimeCOAPoly order1=\"0\" order2=\"0\"><Coef exponent1=\"0\" exponent2=\"0\">%.17g"
              "</Coef></TimeCOAPoly>", s->t_coa);
    const double ssv[2] = {s->row_ss, s->col_ss};
    const double *uv[2] = {urow, ucol};
    for (int a = 0; a < 2; a++) {
        sb_printf(b, "<%s>", a ? "Col" : "Row");
        xyz(b, "UVectECF", uv[a]);
        sb_printf(b, "<SS>%.17g</SS><ImpRespWid>%.17g</ImpRespWid><Sgn>-1</Sgn>"
                  "<ImpRespBW>%.17g</ImpRespBW><KCtr>%.17g</KCtr><DeltaK1>%.17g</DeltaK1>"
                  "<DeltaK2>%.17g</DeltaK2>", ssv[a], s->k[a].irw, s->k[a].bw, s->k[a].kctr,
                  s->k[a].dk1, s->k[a].dk2);
        win_xml(b, &s->k[a].w);
        sb_printf(b, "</%s>", a ? "Col" : "Row");
    }
    sb_printf(b, "</Grid>\n<Timeline><CollectStart>%s</CollectStart><CollectDuration>%.17g"
              "</CollectDuration></Timeline>\n", s->collect_start, s->t_end);
    sb_printf(b, "<Position><ARPPoly>");
    static const char *const ax[] = {"X", "Y", "Z"};
    for (int d = 0; d < 3; d++) {
        sb_printf(b, "<%s order1=\"%d\">", ax[d], s->order);
        for (int k = 0; k <= s->order; k++)
            sb_printf(b, "<Coef exponent1=\"%d\">%.17g</Coef>", k, s->arp[d][k]);
        sb_printf(b, "</%s>", ax[d]);
    }
    sb_printf(b, "</ARPPoly></Position>\n");
    sb_printf(b, "<RadarCollection><TxFrequency><Min>%.17g</Min><Max>%.17g</Max></TxFrequency>"
              "<TxPolarization>%s</TxPolarization><RcvChannels size=\"1\"><ChanParameters "
              "index=\"1\"><TxRcvPolarization>%s</TxRcvPolarization></ChanParameters>"
              "</RcvChannels>", s->fmin, s->fmax, txpol, txrcv);
    /* the imaged area: the image's corners on the ground (what sarpy's
     * validity check wants; clockwise as the image corners) */
    sb_printf(b, "<Area><Corner>");
    for (int i = 0; i < 4; i++)
        sb_printf(b, "<ACP index=\"%d\"><Lat>%.15g</Lat><Lon>%.15g</Lon><HAE>%.6f</HAE></ACP>",
                  i + 1, s->corner_lat[i], s->corner_lon[i], s->corner_h[i]);
    sb_printf(b, "</Corner></Area></RadarCollection>\n");
    const char *af = sarbp_image_get_attr(img, "autofocus");
    const int af_on = af && !strncmp(af, "applied", 7);
    sb_printf(b, "<ImageFormation><RcvChanProc><NumChanProc>1</NumChanProc><ChanIndex>1"
              "</ChanIndex></RcvChanProc><TxRcvPolarizationProc>%s</TxRcvPolarizationProc>"
              "<TStartProc>%.17g</TStartProc><TEndProc>%.17g</TEndProc><TxFrequencyProc>"
              "<MinProc>%.17g</MinProc><MaxProc>%.17g</MaxProc></TxFrequencyProc>"
              "<ImageFormAlgo>OTHER</ImageFormAlgo><STBeamComp>NO</STBeamComp>"
              "<ImageBeamComp>NO</ImageBeamComp><AzAutofocus>%s</AzAutofocus>"
              "<RgAutofocus>%s</RgAutofocus><Processing><Type>sarbp backprojection</Type>"
              "<Applied>true</Applied>", txrcv, s->t_start, s->t_end, s->fmin, s->fmax,
              af_on ? "GLOBAL" : "NO", af_on ? "GLOBAL" : "NO");
    /* the provenance (sarbp/image.h), then what turns the SICD back into
     * sarbp's image exactly (image_read.c): the grid and the orientation */
    static const char *const params[] = {
        "algorithm", "ffbp_base", "ffbp_merge", "ffbp_os_theta", "ffbp_os_rho", "ffbp_stages",
        "ffbp_predicted_error_db", "max_error_db", "selection", "autofocus", "range_window",
        "azimuth_window", "coherent_gain", "interp", "upsample", "precision", "backend",
        "device", "variant", "npulses", "nsamples", "domain", "polarisation", "sarbp_version",
        "command_line", "inputs"};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        const char *v = sarbp_image_get_attr(img, params[i]);
        if (!v) continue;
        sb_printf(b, "<Parameter name=\"%s\">", params[i]);
        sb_text(b, v);
        sb_printf(b, "</Parameter>");
    }
    const sarbp_grid *g = &img->grid;
    sb_printf(b, "<Parameter name=\"sarbp_grid\">%zu %zu %.17g %.17g %.17g %.17g %.17g</Parameter>"
              "<Parameter name=\"sarbp_layout\">%ld %ld %ld %ld %ld %ld</Parameter>",
              g->nx, g->ny, g->dx, g->dy, g->xc, g->yc, g->zc, s->ix0, s->ixr, s->ixc, s->iy0,
              s->iyr, s->iyc);
    const char *ref = sarbp_image_get_attr(img, "scene_ref");
    if (ref) {
        sb_printf(b, "<Parameter name=\"scene_ref\">");
        sb_text(b, ref);
        sb_printf(b, "</Parameter>");
    }
    sb_printf(b, "</Processing></ImageFormation>\n");

    /* SCPCOA (SICD volume 1 section 4) */
    double arp[3], varp[3], aarp[3];
    arp_eval(s, s->t_coa, 0, arp);
    arp_eval(s, s->t_coa, 1, varp);
    arp_eval(s, s->t_coa, 2, aarp);
    const double *scp = s->scp_ecef;
    const double los[3] = {scp[0] - arp[0], scp[1] - arp[1], scp[2] - arp[2]};
    const double r = norm3(los);
    const double ulos[3] = {los[0] / r, los[1] / r, los[2] / r};
    const double uarp[3] = {arp[0] / norm3(arp), arp[1] / norm3(arp), arp[2] / norm3(arp)};
    const double uscp[3] = {scp[0] / norm3(scp), scp[1] / norm3(scp), scp[2] / norm3(scp)};
    const double ground = norm3(scp) * acos(fmin(1, dot3(uarp, uscp)));
    const double vm = norm3(varp);
    const double uvel[3] = {varp[0] / vm, varp[1] / vm, varp[2] / vm};
    double left[3];
    cross3(uarp, uvel, left);
    const double dca = acos(fmax(-1, fmin(1, dot3(uvel, ulos)))) * 180 / M_PI;
    const int lk = dot3(left, ulos) > 0 ? 1 : -1;
    const double la = s->scp_lat * M_PI / 180, lo = s->scp_lon * M_PI / 180;
    const double gpz[3] = {cos(lo) * cos(la), sin(lo) * cos(la), sin(la)};
    const double d[3] = {arp[0] - scp[0], arp[1] - scp[1], arp[2] - scp[2]};
    const double arp_z = dot3(d, gpz);
    const double gpx0[3] = {d[0] - arp_z * gpz[0], d[1] - arp_z * gpz[1], d[2] - arp_z * gpz[2]};
    const double arp_x = norm3(gpx0);
    const double gpx[3] = {gpx0[0] / arp_x, gpx0[1] / arp_x, gpx0[2] / arp_x};
    double gpy[3], spz[3];
    cross3(gpz, gpx, gpy);
    const double graze = asin(fmax(-1, fmin(1, arp_z / r))) * 180 / M_PI;
    cross3(uvel, ulos, spz);
    const double sn = norm3(spz);
    for (int k = 0; k < 3; k++) spz[k] = lk * spz[k] / sn;
    const double slope = acos(fmax(-1, fmin(1, dot3(gpz, spz))));
    const double east[3] = {-sin(lo), cos(lo), 0};
    double north[3];
    cross3(gpz, east, north);
    const double azim = fmod(atan2(dot3(east, gpx), dot3(north, gpx)) * 180 / M_PI + 360, 360);
    const double lod[3] = {gpz[0] - spz[0] / cos(slope), gpz[1] - spz[1] / cos(slope),
                           gpz[2] - spz[2] / cos(slope)};
    const double layover = fmod(atan2(dot3(east, lod), dot3(north, lod)) * 180 / M_PI + 360, 360);
    const double twist = -asin(fmax(-1, fmin(1, dot3(gpy, spz)))) * 180 / M_PI;
    sb_printf(b, "<SCPCOA><SCPTime>%.17g</SCPTime>", s->t_coa);
    xyz(b, "ARPPos", arp);
    xyz(b, "ARPVel", varp);
    xyz(b, "ARPAcc", aarp);
    sb_printf(b, "<SideOfTrack>%s</SideOfTrack><SlantRange>%.17g</SlantRange><GroundRange>%.17g"
              "</GroundRange><DopplerConeAng>%.17g</DopplerConeAng><GrazeAng>%.17g</GrazeAng>"
              "<IncidenceAng>%.17g</IncidenceAng><TwistAng>%.17g</TwistAng><SlopeAng>%.17g"
              "</SlopeAng><AzimAng>%.17g</AzimAng><LayoverAng>%.17g</LayoverAng></SCPCOA>\n",
              lk > 0 ? "L" : "R", r, ground, dca, graze, 90 - graze, twist,
              slope * 180 / M_PI, azim, layover);
    sb_printf(b, "</SICD>\n");
}

/* ---- the NITF container --------------------------------------------------------- */

/* A fixed-width field: s left-justified and space-padded (truncated) to w. */
static void fld(struct sb *b, size_t w, const char *s)
{
    const size_t at = b->n;
    sb_printf(b, "%-*.*s", (int)w, (int)w, s);
    for (size_t i = at; !b->oom && i < b->n; i++) /* NITF text is printable ASCII */
        if ((unsigned char)b->p[i] < 0x20 || (unsigned char)b->p[i] > 0x7e) b->p[i] = '?';
}

static void num(struct sb *b, size_t w, unsigned long long v)
{
    sb_printf(b, "%0*llu", (int)w, v);
}

/* The 167 bytes of security fields after the classification letter's
 * position: classification U, everything else blank. */
static void security(struct sb *b)
{
    fld(b, 1, "U");
    fld(b, 166, "");
}

static void dms(char *out, double v, int lat)
{
    const char dir = lat ? (v < 0 ? 'S' : 'N') : (v < 0 ? 'W' : 'E');
    long secs = lround(fabs(v) * 3600);
    snprintf(out, 24, "%0*ld%02ld%02ld%c", lat ? 2 : 3, secs / 3600, (secs / 60) % 60, secs % 60,
             dir);
}

static int clevel(double bytes, size_t side)
{
    if (bytes < 50e6 && side <= 2048) return 3;
    if (bytes < 1e9 && side <= 8192) return 5;
    if (bytes < 2e9 && side <= 65536) return 6;
    if (bytes < 10e9 && side <= 99999999) return 7;
    return 9;
}

/* Rows of image segment seg (it starts at row seg x s->seg_rows). */
static size_t segment_nrows(const struct sicd_geom *s, size_t seg)
{
    return seg + 1 < s->nseg ? s->seg_rows : s->nrows - seg * s->seg_rows;
}

/* Corners of image segment seg (FRFC, FRLC, LRLC, LRFC): its first row
 * and the next segment's first row (the image's last row for the last
 * segment), as SICD volume 2's sizing places them. */
static void segment_corners(const sarbp_image *img, const struct sicd_geom *s, size_t seg,
                            double lat[4], double lon[4])
{
    if (s->nseg == 1) {
        memcpy(lat, s->corner_lat, 4 * sizeof *lat);
        memcpy(lon, s->corner_lon, 4 * sizeof *lon);
        return;
    }
    const double rf = (double)(seg * s->seg_rows);
    const double rl = seg + 1 < s->nseg ? rf + (double)s->seg_rows : (double)s->nrows - 1;
    const double cl = (double)s->ncols - 1;
    const double rc[4][2] = {{rf, 0}, {rf, cl}, {rl, cl}, {rl, 0}};
    for (int i = 0; i < 4; i++) {
        double xyz[3], h;
        sicd_pixel_xyz(img, s, rc[i][0], rc[i][1], xyz);
        sarbp_scene_to_geodetic(&s->ref, xyz, &lat[i], &lon[i], &h);
    }
}

/* The 512-byte subheader of image segment seg. */
static void image_subheader(struct sb *ish, const sarbp_image *img, const struct sicd_geom *s,
                            size_t seg)
{
    const size_t nr = segment_nrows(s, seg);
    double lat[4], lon[4];
    segment_corners(img, s, seg, lat, lon);
    char iid1[32], igeolo[64] = "";
    snprintf(iid1, sizeof iid1, "SICD%03zu", s->nseg == 1 ? 0 : seg + 1);
    for (int i = 0; i < 4; i++) {
        char a[24], o[24];
        dms(a, lat[i], 1);
        dms(o, lon[i], 0);
        strcat(igeolo, a);
        strcat(igeolo, o);
    }
    const char *core = sarbp_image_get_attr(img, "core_name");
    const char *collector = sarbp_image_get_attr(img, "collector");
    fld(ish, 2, "IM");
    fld(ish, 10, iid1);
    fld(ish, 14, s->idatim);
    fld(ish, 17, "");
    fld(ish, 80, core && *core ? core : "sarbp");
    security(ish);
    fld(ish, 1, "0");                     /* ENCRYP */
    fld(ish, 42, collector ? collector : "");
    num(ish, 8, nr);
    num(ish, 8, s->ncols);
    fld(ish, 3, "R");
    fld(ish, 8, "NODISPLY");
    fld(ish, 8, "SAR");
    num(ish, 2, 32);
    fld(ish, 1, "R");
    fld(ish, 1, "G");
    fld(ish, 60, igeolo);
    num(ish, 1, 0);                       /* NICOM */
    fld(ish, 2, "NC");
    num(ish, 1, 2);                       /* NBANDS */
    for (int band = 0; band < 2; band++) {
        fld(ish, 2, "");
        fld(ish, 6, band ? "Q" : "I");
        fld(ish, 1, "N");
        fld(ish, 3, "");
        num(ish, 1, 0);
    }
    num(ish, 1, 0);                       /* ISYNC */
    fld(ish, 1, "P");
    num(ish, 4, 1);
    num(ish, 4, 1);
    num(ish, 4, s->ncols > 8192 ? 0 : s->ncols);
    num(ish, 4, nr > 8192 ? 0 : nr);
    num(ish, 2, 32);
    num(ish, 3, seg + 1);                 /* IDLVL */
    num(ish, 3, seg);                     /* IALVL: attached to the segment before */
    num(ish, 5, seg ? s->seg_rows : 0);   /* ILOC: rows below the segment before, */
    num(ish, 5, 0);                       /* column 0 */
    fld(ish, 4, "1.0");
    num(ish, 5, 0);
    num(ish, 5, 0);
}

sarbp_status sicd_to(sarbp_tempfile *t, const char *path, const sarbp_image *img, double db_range,
                     const sarbp_image_context *ctx)
{
    (void)db_range;
    struct sicd_geom s;
    SARBP_TRY(plan(path, img, ctx, &s));
    struct sb xml = {0}, hdr = {0}, ish = {0}, dsh = {0};
    const size_t ish_len = 512;
    build_xml(&xml, img, &s);

    char fdt[16];
    time_t tt = time(NULL);
    struct tm tmv;
    gmtime_r(&tt, &tmv);
    strftime(fdt, sizeof fdt, "%Y%m%d%H%M%S", &tmv);
    const char *core = sarbp_image_get_attr(img, "core_name");
    char title[96];
    snprintf(title, sizeof title, "SICD: %s", core && *core ? core : "sarbp");

    /* DES subheader: XML_DATA_CONTENT with its 773-byte user-defined part */
    char shdt[24], lpg[160] = "";
    strftime(shdt, sizeof shdt, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    for (int i = 0; i < 5; i++) {
        char p[32];
        snprintf(p, sizeof p, "%+012.8f%+013.8f", s.corner_lat[i % 4], s.corner_lon[i % 4]);
        strcat(lpg, p);
    }
    fld(&dsh, 2, "DE");
    fld(&dsh, 25, "XML_DATA_CONTENT");
    num(&dsh, 2, 1);
    security(&dsh);
    num(&dsh, 4, 773);
    num(&dsh, 5, 99999);
    fld(&dsh, 8, "XML");
    fld(&dsh, 20, shdt);
    fld(&dsh, 40, "");
    fld(&dsh, 60, "SICD Volume 1 Design & Implementation Description Document");
    fld(&dsh, 10, "1.3.0");
    fld(&dsh, 20, "2021-11-30T00:00:00Z");
    fld(&dsh, 120, SICD_NS);
    fld(&dsh, 125, lpg);
    fld(&dsh, 25, "");
    fld(&dsh, 20, "");
    fld(&dsh, 120, "");
    fld(&dsh, 200, "");

    /* file header (401 bytes and 16 an image segment, with one DES) */
    const size_t hl = 401 + 16 * s.nseg;
    const unsigned long long li = (unsigned long long)s.nrows * s.ncols * 8;
    const unsigned long long fl = hl + ish_len * s.nseg + li + dsh.n + xml.n;
    fld(&hdr, 4, "NITF");
    fld(&hdr, 5, "02.10");
    num(&hdr, 2, (unsigned long long)clevel((double)fl, s.nrows > s.ncols ? s.nrows : s.ncols));
    fld(&hdr, 4, "BF01");
    fld(&hdr, 10, "sarbp");
    fld(&hdr, 14, fdt);
    fld(&hdr, 80, title);
    security(&hdr);
    num(&hdr, 5, 0);                       /* FSCOP */
    num(&hdr, 5, 0);                       /* FSCPYS */
    fld(&hdr, 1, "0");                     /* ENCRYP */
    const size_t fbkgc_at = hdr.n;
    fld(&hdr, 3, "");                      /* FBKGC: three binary zeros, set below */
    fld(&hdr, 24, "");
    fld(&hdr, 18, "");
    num(&hdr, 12, fl);
    num(&hdr, 6, hl);
    num(&hdr, 3, s.nseg);                 /* NUMI */
    for (size_t seg = 0; seg < s.nseg; seg++) {
        num(&hdr, 6, ish_len);
        num(&hdr, 10, (unsigned long long)segment_nrows(&s, seg) * s.ncols * 8);
    }
    num(&hdr, 3, 0);
    num(&hdr, 3, 0);
    num(&hdr, 3, 0);
    num(&hdr, 3, 1);
    num(&hdr, 4, dsh.n);
    num(&hdr, 9, xml.n);
    num(&hdr, 3, 0);
    num(&hdr, 5, 0);
    num(&hdr, 5, 0);
    sarbp_status st = SARBP_OK;
    if (xml.oom || hdr.oom || ish.oom || dsh.oom) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    else if (hdr.n != hl || dsh.n != 973 || xml.n > 999999999)
        st = sarbp_error(SARBP_ERR_INTERNAL, "NITF header sizes %zu, %zu", hdr.n, dsh.n);
    if (!st) {
        memset(hdr.p + fbkgc_at, 0, 3);
        FILE *f = sarbp_tempfile_fdopen(t);
        if (!f) st = sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        int ok = f != NULL;
        if (ok) ok = fwrite(hdr.p, 1, hdr.n, f) == hdr.n;
        unsigned char *row = ok ? malloc(s.ncols * 8) : NULL;
        if (ok && !row) {
            ok = 0;
            errno = ENOMEM;
        }
        for (size_t r = 0; ok && r < s.nrows; r++) {
            if (r % s.seg_rows == 0) { /* a segment starts: its subheader */
                ish.n = 0;
                image_subheader(&ish, img, &s, r / s.seg_rows);
                if (ish.oom || ish.n != ish_len) {
                    ok = 0;
                    errno = ENOMEM;
                    break;
                }
                ok = fwrite(ish.p, 1, ish.n, f) == ish.n;
                if (!ok) break;
            }
            for (size_t c = 0; c < s.ncols; c++) {
                const long ix = s.ix0 + s.ixr * (long)r + s.ixc * (long)c;
                const long iy = s.iy0 + s.iyr * (long)r + s.iyc * (long)c;
                const sarbp_c32 v = img->data[(size_t)iy * img->grid.nx + (size_t)ix];
                uint32_t a, q;
                memcpy(&a, &v.re, 4);
                memcpy(&q, &v.im, 4);
                unsigned char *o = row + 8 * c;
                for (int k = 0; k < 4; k++) {
                    o[k] = (unsigned char)(a >> (24 - 8 * k));
                    o[4 + k] = (unsigned char)(q >> (24 - 8 * k));
                }
            }
            ok = fwrite(row, 1, s.ncols * 8, f) == s.ncols * 8;
        }
        free(row);
        if (ok) ok = fwrite(dsh.p, 1, dsh.n, f) == dsh.n && fwrite(xml.p, 1, xml.n, f) == xml.n;
        if (f) {
            int e = errno;
            if (fclose(f) != 0 && ok) {
                ok = 0;
                e = errno;
            }
            if (!ok) st = sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(e));
        }
    }
    free(xml.p);
    free(hdr.p);
    free(ish.p);
    free(dsh.p);
    return st;
}
