/* pointtarget.c - impulse-response metrics of one point target.
 *
 * Finds the peak pixel, interpolates a patch around it by FFT zero padding
 * (FFTW, double), refines the peak to a fraction of an upsampled sample,
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

/* Where spectrum bin k of an m-point FFT goes in the um-point padded one:
 * one or two destinations (the Nyquist bin of an even m is split evenly). */
static int spread(size_t k, size_t m, size_t um, size_t dst[2], double w[2])
{
    if (m % 2 == 0 && m >= 2 && k == m / 2) {
        dst[0] = m / 2;
        dst[1] = um - m / 2;
        w[0] = w[1] = 0.5;
        return 2;
    }
    dst[0] = k <= (m - 1) / 2 ? k : um - (m - k);
    w[0] = 1;
    return 1;
}

/* The patch's trigonometric interpolant, from its spectrum X[my][mx]: what
 * the zero-padded FFT computes on its grid, evaluated anywhere (positions in
 * patch pixels), so cuts carry no interpolation error of their own. */
typedef struct {
    const fftw_complex *X;
    size_t mx, my;
    double *ex, *ey; /* [2 m] workspace: basis values (re, im) */
} interp;

static void basis(size_t m, double p, double *e)
{
    for (size_t k = 0; k < m; k++) {
        if (m % 2 == 0 && k == m / 2) { /* Nyquist split evenly: cos */
            e[2 * k] = cos(M_PI * p);
            e[2 * k + 1] = 0;
            continue;
        }
        const double f = k <= (m - 1) / 2 ? (double)k : (double)k - (double)m;
        const double a = 2 * M_PI * f * p / (double)m;
        e[2 * k] = cos(a);
        e[2 * k + 1] = sin(a);
    }
}

static double interp_mag(const interp *t, double px, double py)
{
    basis(t->mx, px, t->ex);
    basis(t->my, py, t->ey);
    double re = 0, im = 0;
    for (size_t ky = 0; ky < t->my; ky++) {
        const fftw_complex *row = t->X + ky * t->mx;
        double rr = 0, ri = 0;
        for (size_t kx = 0; kx < t->mx; kx++) {
            rr += row[kx][0] * t->ex[2 * kx] - row[kx][1] * t->ex[2 * kx + 1];
            ri += row[kx][0] * t->ex[2 * kx + 1] + row[kx][1] * t->ex[2 * kx];
        }
        re += rr * t->ey[2 * ky] - ri * t->ey[2 * ky + 1];
        im += rr * t->ey[2 * ky + 1] + ri * t->ey[2 * ky];
    }
    return hypot(re, im) / ((double)t->mx * (double)t->my);
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
    memset(big, 0, ux * uy * sizeof *big);
    const double scale = 1.0 / ((double)mx * (double)my);
    for (size_t ky = 0; ky < my; ky++) {
        size_t dy[2], dxs[2];
        double wy[2], wx[2];
        const int ny_ = spread(ky, my, uy, dy, wy);
        for (size_t kx = 0; kx < mx; kx++) {
            const int nx_ = spread(kx, mx, ux, dxs, wx);
            for (int a = 0; a < ny_; a++)
                for (int b = 0; b < nx_; b++) {
                    const double w = wy[a] * wx[b] * scale;
                    big[dy[a] * ux + dxs[b]][0] += w * pin[ky * mx + kx][0];
                    big[dy[a] * ux + dxs[b]][1] += w * pin[ky * mx + kx][1];
                }
        }
    }
    fftw_execute(bwd);
    ex = malloc(2 * mx * sizeof *ex);
    ey = malloc(2 * my * sizeof *ey);
    if (!ex || !ey) {
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for the patch interpolant");
        goto fail;
    }
    const interp t = {(const fftw_complex *)pin, mx, my, ex, ey};

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
    free(ex);
    free(ey);
    fftw_destroy_plan(fwd);
    fftw_destroy_plan(bwd);
    fftw_free(pin);
    fftw_free(big);
    *out = res;
    return SARBP_OK;

fail:
    free(ex);
    free(ey);
    if (fwd) fftw_destroy_plan(fwd);
    if (bwd) fftw_destroy_plan(bwd);
    fftw_free(pin);
    fftw_free(big);
    sarbp_pointtarget_free(res);
    return st;
}
