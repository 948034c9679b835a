/* pointtarget.c - impulse-response metrics of one point target.
 *
 * Finds the peak pixel, brings a patch around it to baseband (its spectral
 * centre estimated from the data), interpolates it by FFT zero padding
 * (FFTW, double) with each spectral bin placed where the band lies,
 * refines the peak to a fraction of an upsampled sample,
 * samples two perpendicular cuts through it and measures IRW, PSLR and ISLR
 * on each (definitions in sarbp/quality.h). Whole-image figures come from
 * quality.c. This file does not plot: see plot.c. */
#include "sarbp/quality.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double mag2(sarbp_c32 v) { return (double)v.re * v.re + (double)v.im * v.im; }

/* Peak pixel: the brightest, or the local maximum nearest the target. */
static sarbp_status find_peak(const sarbp_image *img, const sarbp_pt_options *o, size_t *pix,
                              size_t *piy)
{
    const sarbp_grid *g = &img->grid;
    const size_t nx = g->nx, ny = g->ny;
    if (!o->have_target) {
        double best = -1;
        for (size_t i = 0; i < nx * ny; i++) {
            double p = mag2(img->data[i]);
            if (p > best) {
                best = p;
                *pix = i % nx;
                *piy = i / nx;
            }
        }
        return SARBP_OK;
    }
    const double R = SARBP_PT_SEARCH;
    const double fx = (o->target_x - g->xc) / g->dx + 0.5 * (double)(nx - 1);
    const double fy = (o->target_y - g->yc) / g->dy + 0.5 * (double)(ny - 1);
    if (!isfinite(fx) || !isfinite(fy) || fx < -R || fy < -R || fx > (double)(nx - 1) + R ||
        fy > (double)(ny - 1) + R)
        return sarbp_error(SARBP_ERR_INVALID, "target (%g, %g) m is outside the image", o->target_x,
                           o->target_y);
    const long cx = lround(fx), cy = lround(fy), r = (long)R;
    double best_d = INFINITY, best_p = -1;
    int found = 0;
    for (long iy = cy - r; iy <= cy + r; iy++) {
        if (iy < 0 || iy >= (long)ny) continue;
        for (long ix = cx - r; ix <= cx + r; ix++) {
            if (ix < 0 || ix >= (long)nx) continue;
            const double p = mag2(img->data[(size_t)iy * nx + (size_t)ix]);
            if (!(p > 0)) continue;
            int is_max = 1;
            for (long jy = iy - 1; jy <= iy + 1 && is_max; jy++)
                for (long jx = ix - 1; jx <= ix + 1; jx++) {
                    if (jy < 0 || jx < 0 || jy >= (long)ny || jx >= (long)nx) continue;
                    if (mag2(img->data[(size_t)jy * nx + (size_t)jx]) > p) {
                        is_max = 0;
                        break;
                    }
                }
            if (!is_max) continue;
            const double d = hypot((double)ix - fx, (double)iy - fy);
            if (d < best_d - 1e-12 || (fabs(d - best_d) <= 1e-12 && p > best_p)) {
                best_d = d;
                best_p = p;
                *pix = (size_t)ix;
                *piy = (size_t)iy;
                found = 1;
            }
        }
    }
    if (!found)
        return sarbp_error(SARBP_ERR_INVALID, "no local maximum within %d pixels of the target (%g, %g) m",
                           SARBP_PT_SEARCH, o->target_x, o->target_y);
    return SARBP_OK;
}

/* The patch's trigonometric interpolant: a sum of terms c exp(j 2 pi
 * (fx px / mx + fy py / my)) over the patch's spectrum, one term per bin at
 * the integer frequency (fx, fy) chosen for it (two for a Nyquist bin of an
 * even size, split evenly). What the zero-padded FFT computes on its grid,
 * evaluated anywhere (positions in patch pixels), so cuts carry no
 * interpolation error of their own. */
typedef struct {
    double re, im; /* coefficient, 1 / (mx my) included */
    int fx, fy;    /* frequency, cycles per patch */
} term;

typedef struct {
    const term *t;
    size_t n;
    size_t mx, my;
    int fx0, fy0;    /* lowest frequency along x, y */
    size_t nfx, nfy; /* frequencies from fx0, fy0 */
    double *ex, *ey; /* [2 nfx], [2 nfy] workspace: basis values (re, im) */
} interp;

static void basis(size_t m, int f0, size_t nf, double p, double *e)
{
    for (size_t k = 0; k < nf; k++) {
        const double a = 2 * M_PI * (double)(f0 + (int)k) * p / (double)m;
        e[2 * k] = cos(a);
        e[2 * k + 1] = sin(a);
    }
}

static double interp_mag(const interp *t, double px, double py)
{
    basis(t->mx, t->fx0, t->nfx, px, t->ex);
    basis(t->my, t->fy0, t->nfy, py, t->ey);
    double re = 0, im = 0;
    for (size_t i = 0; i < t->n; i++) {
        const term *c = &t->t[i];
        const double *ex = t->ex + 2 * (size_t)(c->fx - t->fx0);
        const double *ey = t->ey + 2 * (size_t)(c->fy - t->fy0);
        const double br = ex[0] * ey[0] - ex[1] * ey[1], bi = ex[0] * ey[1] + ex[1] * ey[0];
        re += c->re * br - c->im * bi;
        im += c->re * bi + c->im * br;
    }
    return hypot(re, im);
}

/* Where the band lies, for choosing each bin's frequency: the centroid,
 * principal axes (angle phi) and standard deviations (s1, s2, cycles/m) of
 * the patch's power spectrum, taken over the square band centred on zero
 * (Nyquist bins left out). */
typedef struct {
    int use;       /* 0: the square band, every bin at its own frequency */
    double c, s;   /* cos phi, sin phi */
    double s1, s2; /* cycles/m */
    double cu, cv; /* power centroid (cycles/m), near zero after demodulation */
    double gx, gy; /* cycles/m per frequency step: 1 / (mx dx), 1 / (my dy) */
} band;

/* Frequency of bin k of an m-point FFT in the square band: k or k - m; the
 * Nyquist bin of an even m gives +m/2 (its other half is -m/2). */
static int freq(size_t k, size_t m) { return k <= m / 2 ? (int)k : (int)k - (int)m; }

static double band_norm(const band *b, int fx, int fy)
{
    const double u = fx * b->gx - b->cu, v = fy * b->gy - b->cv;
    return fmax(fabs(b->c * u + b->s * v) / b->s1, fabs(-b->s * u + b->c * v) / b->s2);
}

static void band_estimate(const fftw_complex *X, size_t mx, size_t my, const sarbp_grid *g,
                          band *b)
{
    memset(b, 0, sizeof *b);
    if (mx < 8 || my < 8) return;
    b->gx = 1.0 / ((double)mx * g->dx);
    b->gy = 1.0 / ((double)my * g->dy);
    double sw = 0, su = 0, sv = 0, suu = 0, svv = 0, suv = 0;
    for (size_t ky = 0; ky < my; ky++) {
        if (my % 2 == 0 && ky == my / 2) continue;
        for (size_t kx = 0; kx < mx; kx++) {
            if (mx % 2 == 0 && kx == mx / 2) continue;
            const double w = X[ky * mx + kx][0] * X[ky * mx + kx][0] +
                             X[ky * mx + kx][1] * X[ky * mx + kx][1];
            const double u = freq(kx, mx) * b->gx, v = freq(ky, my) * b->gy;
            sw += w;
            su += w * u;
            sv += w * v;
            suu += w * u * u;
            svv += w * v * v;
            suv += w * u * v;
        }
    }
    if (!(sw > 0)) return;
    su /= sw;
    sv /= sw;
    const double cuu = suu / sw - su * su, cvv = svv / sw - sv * sv, cuv = suv / sw - su * sv;
    const double phi = 0.5 * atan2(2 * cuv, cuu - cvv);
    b->c = cos(phi);
    b->s = sin(phi);
    const double l1 = b->c * b->c * cuu + 2 * b->s * b->c * cuv + b->s * b->s * cvv;
    const double l2 = b->s * b->s * cuu - 2 * b->s * b->c * cuv + b->c * b->c * cvv;
    b->cu = su;
    b->cv = sv;
    if (!(l1 > 0) || !(l2 > 0) || !isfinite(l1) || !isfinite(l2)) return;
    b->s1 = sqrt(l1);
    b->s2 = sqrt(l2);
    b->use = 1;
}

/* The terms of the interpolant, from the patch's spectrum X[my][mx]. Each bin
 * is one sample of the band at frequency f + (a mx, b my) for some integers
 * a, b: the square band takes a = b = 0 (frequencies in [-m/2, m/2]). A band
 * whose principal axes are oblique to the grid can overhang that square
 * while still fitting between its own replicas; then a bin goes to the alias
 * (a, b in -1..1) nearest the band's centre in the band's own shape
 * (max(|u|/s1, |v|/s2) in its principal axes), when that is strictly nearer
 * than its square-band frequency. For a band along the axes the choice is
 * the square band. *n terms, at most mx my + mx + my + 1. */
static size_t make_terms(const fftw_complex *X, size_t mx, size_t my, const band *b, term *t)
{
    const double scale = 1.0 / ((double)mx * (double)my);
    size_t n = 0;
    for (size_t ky = 0; ky < my; ky++) {
        const int nyq_y = my % 2 == 0 && my >= 2 && ky == my / 2;
        const int fy = freq(ky, my);
        for (size_t kx = 0; kx < mx; kx++) {
            const int nyq_x = mx % 2 == 0 && mx >= 2 && kx == mx / 2;
            const int fx = freq(kx, mx);
            const double re = X[ky * mx + kx][0] * scale, im = X[ky * mx + kx][1] * scale;
            int ax = 0, ay = 0;
            if (b->use) {
                /* the square band's own representatives: (fx, fy), and for a
                 * Nyquist bin its other half at -m/2 */
                double base = band_norm(b, fx, fy);
                if (nyq_x) base = fmin(base, band_norm(b, fx - (int)mx, fy));
                if (nyq_y) base = fmin(base, band_norm(b, fx, fy - (int)my));
                if (nyq_x && nyq_y) base = fmin(base, band_norm(b, fx - (int)mx, fy - (int)my));
                double best = base * (1 - 1e-9);
                for (int j = -1; j <= 1; j++)
                    for (int i = -1; i <= 1; i++) {
                        if ((i == 0 || (nyq_x && i == -1)) && (j == 0 || (nyq_y && j == -1)))
                            continue;
                        const double d = band_norm(b, fx + i * (int)mx, fy + j * (int)my);
                        if (d < best) {
                            best = d;
                            ax = i;
                            ay = j;
                        }
                    }
            }
            if (ax || ay) {
                t[n++] = (term){re, im, fx + ax * (int)mx, fy + ay * (int)my};
                continue;
            }
            const double w = (nyq_x ? 0.5 : 1.0) * (nyq_y ? 0.5 : 1.0);
            for (int j = 0; j <= nyq_y; j++)
                for (int i = 0; i <= nyq_x; i++)
                    t[n++] = (term){w * re, w * im, fx - i * (int)mx, fy - j * (int)my};
        }
    }
    return n;
}

/* Vertex offset of a parabola through (-1, a), (0, b), (1, c), in [-0.5, 0.5]. */
static double parabola(double a, double b, double c)
{
    const double den = a - 2 * b + c;
    if (!(den < 0)) return 0;
    double d = 0.5 * (a - c) / den;
    return d < -0.5 ? -0.5 : d > 0.5 ? 0.5 : d;
}

/* Measures one sampled cut (mag[n], peak sample near ipeak). */
static void analyse_cut(sarbp_pt_cut *c, size_t up)
{
    const size_t n = c->n;
    const double *a = c->mag;
    size_t lo = c->ipeak > up ? c->ipeak - up : 0, hi = c->ipeak + up < n ? c->ipeak + up : n - 1;
    size_t kp = c->ipeak;
    for (size_t k = lo; k <= hi; k++)
        if (a[k] > a[kp]) kp = k;
    const double pk = a[kp];
    c->peak = pk;
    c->irw_m = c->pslr_db = c->islr_db = c->null_lo_m = c->null_hi_m = c->sidelobe_m = NAN;
    if (!(pk > 0)) return;

    /* -3 dB crossings, linear in magnitude between samples */
    const double h3 = pk / sqrt(2.0);
    double xl = NAN, xr = NAN;
    for (size_t k = kp; k > 0; k--)
        if (a[k - 1] < h3) {
            xl = c->s_m[k - 1] + (h3 - a[k - 1]) / (a[k] - a[k - 1]) * c->step_m;
            break;
        }
    for (size_t k = kp; k + 1 < n; k++)
        if (a[k + 1] < h3) {
            xr = c->s_m[k] + (a[k] - h3) / (a[k] - a[k + 1]) * c->step_m;
            break;
        }
    c->irw_m = xr - xl;

    /* first nulls: walk down from the peak while |I| decreases */
    size_t nl = kp, nr = kp;
    while (nl > 0 && a[nl - 1] < a[nl]) nl--;
    while (nr + 1 < n && a[nr + 1] < a[nr]) nr++;
    const int have_l = nl > 0, have_r = nr + 1 < n;
    if (have_l) c->null_lo_m = c->s_m[nl];
    if (have_r) c->null_hi_m = c->s_m[nr];
    if (!have_l || !have_r) return;

    double main_e = 0, side_e = 0, side_max = -1;
    size_t side_k = 0;
    for (size_t k = 0; k < n; k++) {
        const double e = a[k] * a[k];
        if (k >= nl && k <= nr) {
            main_e += e;
        } else {
            side_e += e;
            if (a[k] > side_max) {
                side_max = a[k];
                side_k = k;
            }
        }
    }
    c->pslr_db = 20 * log10(side_max / pk);
    c->islr_db = 10 * log10(side_e / main_e);
    c->sidelobe_m = c->s_m[side_k];
}

/* Samples the cut at angle_deg through (fx, fy) (patch pixels) every
 * min(dx, dy) / up metres, staying within [lo, hi] on each axis. */
static sarbp_status sample_cut(const interp *t, const sarbp_grid *g, size_t up, double fx,
                               double fy, const double lo[2], const double hi[2], double angle_deg,
                               sarbp_pt_cut *c)
{
    const double th = angle_deg * M_PI / 180.0;
    const double h = fmin(g->dx, g->dy) / (double)up;
    const double sx = cos(th) / g->dx * h, sy = sin(th) / g->dy * h;
    const double eps = 1e-9;
#define INSIDE(k)                                                                                  \
    (fx + (k)*sx >= lo[0] - eps && fx + (k)*sx <= hi[0] + eps && fy + (k)*sy >= lo[1] - eps &&     \
     fy + (k)*sy <= hi[1] + eps)
    size_t kneg = 0, kpos = 0;
    const size_t kmax = 4 * up * (t->mx + t->my);
    while (kpos < kmax && INSIDE((double)(kpos + 1))) kpos++;
    while (kneg < kmax && INSIDE(-(double)(kneg + 1))) kneg++;
#undef INSIDE
    c->angle_deg = angle_deg;
    c->n = kneg + kpos + 1;
    c->ipeak = kneg;
    c->step_m = h;
    c->s_m = malloc(c->n * sizeof *c->s_m);
    c->mag = malloc(c->n * sizeof *c->mag);
    if (!c->s_m || !c->mag) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a cut");
    for (size_t i = 0; i < c->n; i++) {
        const double k = (double)i - (double)kneg;
        c->s_m[i] = k * h;
        c->mag[i] = interp_mag(t, fx + k * sx, fy + k * sy);
    }
    analyse_cut(c, up);
    return SARBP_OK;
}

/* The patch's spectral centre in cycles a pixel along x and y, in
 * (-0.5, 0.5]: the argument of the lag-1 autocorrelation along each axis,
 * sum I(i + 1) conj(I(i)) over the patch (not wrapping round its edges).
 * That is the power-weighted circular mean of the spectrum, so it is exact
 * for a band symmetric about its centre wherever the sampling has folded the
 * band, and it assumes no carrier: the data say where the band is. */
static void spectral_centre(const fftw_complex *p, size_t mx, size_t my, double cyc[2])
{
    double xr = 0, xi = 0, yr = 0, yi = 0;
    for (size_t j = 0; j < my; j++)
        for (size_t i = 0; i < mx; i++) {
            const double *a = p[j * mx + i];
            if (i + 1 < mx) {
                const double *b = p[j * mx + i + 1];
                xr += b[0] * a[0] + b[1] * a[1];
                xi += b[1] * a[0] - b[0] * a[1];
            }
            if (j + 1 < my) {
                const double *b = p[(j + 1) * mx + i];
                yr += b[0] * a[0] + b[1] * a[1];
                yi += b[1] * a[0] - b[0] * a[1];
            }
        }
    cyc[0] = atan2(xi, xr) / (2 * M_PI);
    cyc[1] = atan2(yi, yr) / (2 * M_PI);
}

/* Brings the patch to baseband: multiplies it by the conjugate of the ramp
 * at its spectral centre (cyc, cycles a pixel), phase zero at the peak pixel
 * (ci, cj). The magnitudes on the pixels do not change; the band no longer
 * straddles the Nyquist frequency, so the FFT interpolation between pixels
 * is that of a baseband, band-limited signal. */
static void demodulate(fftw_complex *p, size_t mx, size_t my, size_t ci, size_t cj,
                       double cyc[2])
{
    spectral_centre(p, mx, my, cyc);
    for (size_t j = 0; j < my; j++)
        for (size_t i = 0; i < mx; i++) {
            const double a = -2 * M_PI *
                             (cyc[0] * ((double)i - (double)ci) + cyc[1] * ((double)j - (double)cj));
            const double c = cos(a), s = sin(a);
            double *v = p[j * mx + i];
            const double re = v[0] * c - v[1] * s, im = v[0] * s + v[1] * c;
            v[0] = re;
            v[1] = im;
        }
}

void sarbp_pointtarget_free(sarbp_pt_result *r)
{
    if (!r) return;
    for (int i = 0; i < 2; i++) {
        free(r->cut[i].s_m);
        free(r->cut[i].mag);
    }
    free(r);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* contrast_db and isolated (quality.h): is this a point target at all? */
static sarbp_status isolation(const sarbp_image *img, size_t x0, size_t y0, size_t mx, size_t my,
                              sarbp_pt_result *res)
{
    double *m = malloc(mx * my * sizeof *m);
    if (!m) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the patch magnitudes");
    for (size_t j = 0; j < my; j++)
        for (size_t i = 0; i < mx; i++) {
            const sarbp_c32 v = img->data[(y0 + j) * img->grid.nx + x0 + i];
            m[j * mx + i] = hypot(v.re, v.im);
        }
    qsort(m, mx * my, sizeof *m, cmp_double);
    const double med = m[(mx * my - 1) / 2];
    free(m);
    const sarbp_c32 pk = img->data[res->iy * img->grid.nx + res->ix];
    const double peak = hypot(pk.re, pk.im);
    res->contrast_db = med > 0 ? 20 * log10(peak / med) : INFINITY;
    res->isolated = res->contrast_db >= SARBP_PT_MIN_CONTRAST_DB;
    for (int k = 0; k < 2; k++)
        if (!(res->cut[k].pslr_db <= SARBP_PT_MAX_PSLR_DB)) res->isolated = 0;
    return SARBP_OK;
}

sarbp_status sarbp_pointtarget_measure(const sarbp_image *img, const sarbp_pt_options *opt,
                                       sarbp_pt_result **out)
{
    if (!img || !img->data || !out)
        return sarbp_error(SARBP_ERR_INVALID, "sarbp_pointtarget_measure: missing image or result");
    *out = NULL;
    SARBP_TRY(sarbp_grid_validate(&img->grid));
    sarbp_pt_options o = {0};
    if (opt) o = *opt;
    if (!isfinite(o.cut_angle_deg))
        return sarbp_error(SARBP_ERR_INVALID, "cut angle is not finite");

    sarbp_pt_result *res = calloc(1, sizeof *res);
    if (!res) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for point-target results");
    fftw_complex *pin = NULL, *big = NULL;
    fftw_plan fwd = NULL, bwd = NULL;
    double *ex = NULL, *ey = NULL;
    term *terms = NULL;
    sarbp_status st = sarbp_quality_image_stats(img, &res->stats);
    if (st != SARBP_OK) goto fail;
    if (!(res->stats.max_mag > 0)) {
        st = sarbp_error(SARBP_ERR_INVALID, "the image is zero everywhere: no point target to measure");
        goto fail;
    }
    const sarbp_grid *g = &img->grid;
    const size_t nx = g->nx, ny = g->ny, U = SARBP_PT_UPSAMPLE;
    size_t ix = 0, iy = 0;
    st = find_peak(img, &o, &ix, &iy);
    if (st != SARBP_OK) goto fail;
    res->ix = ix;
    res->iy = iy;

    const size_t mx = nx < SARBP_PT_PATCH ? nx : SARBP_PT_PATCH;
    const size_t my = ny < SARBP_PT_PATCH ? ny : SARBP_PT_PATCH;
    const size_t x0 = ix < mx / 2 ? 0 : (ix - mx / 2 + mx > nx ? nx - mx : ix - mx / 2);
    const size_t y0 = iy < my / 2 ? 0 : (iy - my / 2 + my > ny ? ny - my : iy - my / 2);
    const size_t ux = U * mx, uy = U * my;
    res->patch_nx = mx;
    res->patch_ny = my;
    res->upsample = U;

    pin = fftw_malloc(mx * my * sizeof *pin);
    big = fftw_malloc(ux * uy * sizeof *big);
    if (!pin || !big) {
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for the upsampled patch");
        goto fail;
    }
    fwd = fftw_plan_dft_2d((int)my, (int)mx, pin, pin, FFTW_FORWARD, FFTW_ESTIMATE);
    bwd = fftw_plan_dft_2d((int)uy, (int)ux, big, big, FFTW_BACKWARD, FFTW_ESTIMATE);
    if (!fwd || !bwd) {
        st = sarbp_error(SARBP_ERR_FFTW, "cannot plan the %zu x %zu patch FFTs", mx, my);
        goto fail;
    }
    for (size_t j = 0; j < my; j++)
        for (size_t i = 0; i < mx; i++) {
            const sarbp_c32 v = img->data[(y0 + j) * nx + x0 + i];
            pin[j * mx + i][0] = v.re;
            pin[j * mx + i][1] = v.im;
        }
    double cyc[2];
    demodulate(pin, mx, my, ix - x0, iy - y0, cyc);
    res->carrier_x = cyc[0] / g->dx;
    res->carrier_y = cyc[1] / g->dy;
    fftw_execute(fwd);
    band bd;
    band_estimate((const fftw_complex *)pin, mx, my, g, &bd);
    terms = malloc((mx * my + mx + my + 1) * sizeof *terms);
    if (!terms) {
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for the patch interpolant");
        goto fail;
    }
    const size_t nterms = make_terms((const fftw_complex *)pin, mx, my, &bd, terms);
    int fx0 = 0, fx1 = 0, fy0 = 0, fy1 = 0;
    memset(big, 0, ux * uy * sizeof *big);
    for (size_t k = 0; k < nterms; k++) {
        const term *c = &terms[k];
        fx0 = c->fx < fx0 ? c->fx : fx0;
        fx1 = c->fx > fx1 ? c->fx : fx1;
        fy0 = c->fy < fy0 ? c->fy : fy0;
        fy1 = c->fy > fy1 ? c->fy : fy1;
        /* |f| <= 1.5 m + 1 < U m / 2: every frequency has its own padded bin */
        const size_t dx = c->fx >= 0 ? (size_t)c->fx : ux - (size_t)(-c->fx);
        const size_t dy = c->fy >= 0 ? (size_t)c->fy : uy - (size_t)(-c->fy);
        big[dy * ux + dx][0] += c->re;
        big[dy * ux + dx][1] += c->im;
    }
    fftw_execute(bwd);
    const size_t nfx = (size_t)(fx1 - fx0 + 1), nfy = (size_t)(fy1 - fy0 + 1);
    ex = malloc(2 * nfx * sizeof *ex);
    ey = malloc(2 * nfy * sizeof *ey);
    if (!ex || !ey) {
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for the patch interpolant");
        goto fail;
    }
    const interp t = {terms, nterms, mx, my, fx0, fy0, nfx, nfy, ex, ey};

    /* Upsampled maximum within one pixel of the peak pixel, outside the
     * wrap-around region, then a parabola along each axis through the
     * neighbouring upsampled samples. */
    const size_t cxu = (ix - x0) * U, cyu = (iy - y0) * U;
    const size_t maxx = (mx - 1) * U, maxy = (my - 1) * U;
    size_t bx = cxu, by = cyu;
    double bm = -1;
#define UPMAG(i, j) hypot(big[(j)*ux + (i)][0], big[(j)*ux + (i)][1])
    for (size_t j = cyu > U ? cyu - U : 0; j <= cyu + U && j <= maxy; j++)
        for (size_t i = cxu > U ? cxu - U : 0; i <= cxu + U && i <= maxx; i++) {
            const double m = UPMAG(i, j);
            if (m > bm) {
                bm = m;
                bx = i;
                by = j;
            }
        }
    double fx = (double)bx, fy = (double)by; /* upsampled units */
    if (bx > 0 && bx < maxx) fx += parabola(UPMAG(bx - 1, by), UPMAG(bx, by), UPMAG(bx + 1, by));
    if (by > 0 && by < maxy) fy += parabola(UPMAG(bx, by - 1), UPMAG(bx, by), UPMAG(bx, by + 1));
#undef UPMAG
    fx /= (double)U; /* patch pixels from here on */
    fy /= (double)U;
    res->px = (double)x0 + fx;
    res->py = (double)y0 + fy;
    res->x = g->xc + (res->px - 0.5 * (double)(nx - 1)) * g->dx;
    res->y = g->yc + (res->py - 0.5 * (double)(ny - 1)) * g->dy;

    /* Cuts stay one original pixel inside the patch edges (small patches: none). */
    const double mgx = mx >= 8 ? 1.0 : 0.0, mgy = my >= 8 ? 1.0 : 0.0;
    const double lo[2] = {mgx, mgy};
    const double hi[2] = {(double)mx - 1 - mgx, (double)my - 1 - mgy};
    for (int k = 0; k < 2; k++) {
        double ang = fmod(o.cut_angle_deg + 90.0 * k, 360.0);
        st = sample_cut(&t, g, U, fx, fy, lo, hi, ang, &res->cut[k]);
        if (st != SARBP_OK) goto fail;
    }
    res->peak = interp_mag(&t, fx, fy);
    if ((st = isolation(img, x0, y0, mx, my, res)) != SARBP_OK) goto fail;
    free(terms);
    free(ex);
    free(ey);
    fftw_destroy_plan(fwd);
    fftw_destroy_plan(bwd);
    fftw_free(pin);
    fftw_free(big);
    *out = res;
    return SARBP_OK;

fail:
    free(terms);
    free(ex);
    free(ey);
    if (fwd) fftw_destroy_plan(fwd);
    if (bwd) fftw_destroy_plan(bwd);
    fftw_free(pin);
    fftw_free(big);
    sarbp_pointtarget_free(res);
    return st;
}
