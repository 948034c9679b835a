/* quality.c - comparing a test image with a reference, and whole-image figures.
 *
 * Definitions are in sarbp/quality.h. Everything is accumulated in double.
 * Point-target (impulse-response) metrics are in pointtarget.c. */
#include "sarbp/quality.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static double mag2(sarbp_c32 v) { return (double)v.re * v.re + (double)v.im * v.im; }

static sarbp_status check_finite(const sarbp_image *img, const char *which)
{
    const size_t nx = img->grid.nx, n = nx * img->grid.ny;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(img->data[i].re) || !isfinite(img->data[i].im))
            return sarbp_error(SARBP_ERR_INVALID, "%s image has a non-finite pixel at ix %zu, iy %zu",
                               which, i % nx, i / nx);
    return SARBP_OK;
}

double sarbp_quality_entropy(const sarbp_c32 *data, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += mag2(data[i]);
    if (!(s > 0)) return NAN;
    double h = 0;
    for (size_t i = 0; i < n; i++) {
        double rho = mag2(data[i]) / s;
        if (rho > 0) h -= rho * log(rho);
    }
    return h;
}

/* k-th smallest of v[n] (v is reordered): Wirth's selection. */
static float select_kth(float *v, size_t n, size_t kk)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, k = (ptrdiff_t)kk;
    while (lo < hi) {
        const float x = v[k];
        ptrdiff_t i = lo, j = hi;
        do {
            while (v[i] < x) i++;
            while (x < v[j]) j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k) lo = i;
        if (k < i) hi = j;
    }
    return v[k];
}

sarbp_status sarbp_quality_image_stats(const sarbp_image *img, sarbp_image_stats *out)
{
    if (!img || !img->data || !out)
        return sarbp_error(SARBP_ERR_INVALID, "sarbp_quality_image_stats: missing image or result");
    SARBP_TRY(check_finite(img, "the"));
    const size_t nx = img->grid.nx, n = nx * img->grid.ny;
    memset(out, 0, sizeof *out);
    float *m = malloc((n ? n : 1) * sizeof *m);
    if (!m) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for image statistics (%zu pixels)", n);
    double sum = 0, max2 = 0;
    size_t imax = 0, nnz = 0;
    for (size_t i = 0; i < n; i++) {
        double p = mag2(img->data[i]);
        double a = sqrt(p);
        sum += a;
        if (p > max2) {
            max2 = p;
            imax = i;
        }
        if (p > 0) m[nnz++] = (float)a;
    }
    out->entropy = sarbp_quality_entropy(img->data, n);
    out->mean_mag = n ? sum / (double)n : 0;
    out->max_mag = sqrt(max2);
    out->max_ix = imax % nx;
    out->max_iy = imax / nx;
    out->median_mag = nnz ? select_kth(m, nnz, (nnz - 1) / 2) : 0;
    out->dynamic_range_db = out->median_mag > 0 ? 20 * log10(out->max_mag / out->median_mag) : NAN;
    free(m);
    return SARBP_OK;
}

/* |a - b| <= tol * scale, with tol = 1e-9 */
static int close_enough(double a, double b, double scale) { return fabs(a - b) <= 1e-9 * scale; }

static sarbp_status check_grids(const sarbp_image *t, const sarbp_image *r)
{
    const sarbp_grid *a = &t->grid, *b = &r->grid;
    if (a->nx != b->nx || a->ny != b->ny)
        return sarbp_error(SARBP_ERR_MISMATCH,
                           "image sizes differ: test is %zu x %zu pixels, reference %zu x %zu",
                           a->nx, a->ny, b->nx, b->ny);
    if (!t->has_grid_coords || !r->has_grid_coords) return SARBP_OK;
    if (!close_enough(a->dx, b->dx, fmax(fabs(a->dx), fabs(b->dx))) ||
        !close_enough(a->dy, b->dy, fmax(fabs(a->dy), fabs(b->dy))))
        return sarbp_error(SARBP_ERR_MISMATCH,
                           "grid spacings differ: test %.10g x %.10g m, reference %.10g x %.10g m",
                           a->dx, a->dy, b->dx, b->dy);
    const double ext = fmax(fmax((double)a->nx * fabs(a->dx), (double)a->ny * fabs(a->dy)), 1e-300);
    const double ca[3] = {a->xc, a->yc, a->zc}, cb[3] = {b->xc, b->yc, b->zc};
    for (int k = 0; k < 3; k++)
        if (!close_enough(ca[k], cb[k], fmax(ext, fmax(fabs(ca[k]), fabs(cb[k])))))
            return sarbp_error(SARBP_ERR_MISMATCH,
                               "grid centres differ: test (%.10g, %.10g, %.10g) m, reference "
                               "(%.10g, %.10g, %.10g) m",
                               a->xc, a->yc, a->zc, b->xc, b->yc, b->zc);
    return SARBP_OK;
}

/* SER of energies (signal, error) in dB with the conventions of the header. */
static double ser_of(double s, double e)
{
    if (e == 0) return INFINITY;
    if (s == 0) return -INFINITY;
    return 10 * log10(s / e);
}

/* Worst SER over tiles; fills the window fields of res. */
static sarbp_status window_ser(const sarbp_image *t, const sarbp_image *r, size_t w,
                               sarbp_compare_result *res)
{
    const size_t nx = r->grid.nx, ny = r->grid.ny;
    const size_t ntx = (nx + w - 1) / w;
    double *s = calloc(ntx, sizeof *s), *e = calloc(ntx, sizeof *e);
    if (!s || !e) {
        free(s);
        free(e);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for window SER");
    }
    double worst = NAN;
    size_t count = 0;
    for (size_t iy = 0; iy < ny; iy++) {
        const sarbp_c32 *tr = t->data + iy * nx, *rr = r->data + iy * nx;
        for (size_t ix = 0; ix < nx; ix++) {
            double dr = (double)rr[ix].re - tr[ix].re, di = (double)rr[ix].im - tr[ix].im;
            s[ix / w] += mag2(rr[ix]);
            e[ix / w] += dr * dr + di * di;
        }
        if ((iy + 1) % w == 0 || iy + 1 == ny) {
            for (size_t k = 0; k < ntx; k++) {
                if (s[k] > 0) {
                    double v = ser_of(s[k], e[k]);
                    if (count == 0 || v < worst) {
                        worst = v;
                        res->window_ix = k * w;
                        res->window_iy = iy / w * w;
                    }
                    count++;
                }
                s[k] = e[k] = 0;
            }
        }
    }
    free(s);
    free(e);
    res->window_ser_db = worst;
    res->nwindows = count;
    return SARBP_OK;
}

/* dB image normalised to [0, 1] against the reference peak. */
static void db_image(const sarbp_c32 *x, size_t n, double peak2, float *u)
{
    const double F = SARBP_QUALITY_DB_FLOOR;
    for (size_t i = 0; i < n; i++) {
        double p = mag2(x[i]);
        double d = (p > 0 && peak2 > 0) ? 10 * log10(p / peak2) : -F;
        d = d < -F ? -F : d > 0 ? 0 : d;
        u[i] = (float)((d + F) / F);
    }
}

/* Mean SSIM of a against b ([ny][nx]), uniform window, sliding sums. */
static sarbp_status mean_ssim(const float *a, const float *b, size_t nx, size_t ny, double *out)
{
    const size_t wx = nx < SARBP_SSIM_WINDOW ? nx : SARBP_SSIM_WINDOW;
    const size_t wy = ny < SARBP_SSIM_WINDOW ? ny : SARBP_SSIM_WINDOW;
    const double C1 = 0.01 * 0.01, C2 = 0.03 * 0.03, inv = 1.0 / (double)(wx * wy);
    /* column sums over the current band of wy rows: a, b, a^2, b^2, ab */
    double *cs = calloc(5 * nx, sizeof *cs);
    if (!cs) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for SSIM");
    double *ca = cs, *cb = cs + nx, *caa = cs + 2 * nx, *cbb = cs + 3 * nx, *cab = cs + 4 * nx;
    for (size_t iy = 0; iy < wy; iy++)
        for (size_t ix = 0; ix < nx; ix++) {
            double x = a[iy * nx + ix], y = b[iy * nx + ix];
            ca[ix] += x;
            cb[ix] += y;
            caa[ix] += x * x;
            cbb[ix] += y * y;
            cab[ix] += x * y;
        }
    double total = 0;
    size_t count = 0;
    for (size_t y0 = 0; y0 + wy <= ny; y0++) {
        double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
        for (size_t ix = 0; ix < wx; ix++) {
            sa += ca[ix];
            sb += cb[ix];
            saa += caa[ix];
            sbb += cbb[ix];
            sab += cab[ix];
        }
        for (size_t x0 = 0;; x0++) {
            double ma = sa * inv, mb = sb * inv;
            double va = saa * inv - ma * ma, vb = sbb * inv - mb * mb, cov = sab * inv - ma * mb;
            total += ((2 * ma * mb + C1) * (2 * cov + C2)) /
                     ((ma * ma + mb * mb + C1) * (va + vb + C2));
            count++;
            if (x0 + wx >= nx) break;
            sa += ca[x0 + wx] - ca[x0];
            sb += cb[x0 + wx] - cb[x0];
            saa += caa[x0 + wx] - caa[x0];
            sbb += cbb[x0 + wx] - cbb[x0];
            sab += cab[x0 + wx] - cab[x0];
        }
        if (y0 + wy < ny) {
            const float *ra = a + y0 * nx, *rb = b + y0 * nx;
            const float *na = a + (y0 + wy) * nx, *nb = b + (y0 + wy) * nx;
            for (size_t ix = 0; ix < nx; ix++) {
                double xo = ra[ix], yo = rb[ix], xn = na[ix], yn = nb[ix];
                ca[ix] += xn - xo;
                cb[ix] += yn - yo;
                caa[ix] += xn * xn - xo * xo;
                cbb[ix] += yn * yn - yo * yo;
                cab[ix] += xn * yn - xo * yo;
            }
        }
    }
    free(cs);
    *out = total / (double)count;
    return SARBP_OK;
}

sarbp_status sarbp_quality_compare(const sarbp_image *test, const sarbp_image *ref, size_t window,
                                   sarbp_compare_result *out)
{
    if (!test || !ref || !test->data || !ref->data || !out)
        return sarbp_error(SARBP_ERR_INVALID, "sarbp_quality_compare: missing image or result");
    if (window < 1) return sarbp_error(SARBP_ERR_INVALID, "SER window must be at least 1 pixel");
    SARBP_TRY(check_grids(test, ref));
    SARBP_TRY(check_finite(test, "test"));
    SARBP_TRY(check_finite(ref, "reference"));

    const size_t nx = ref->grid.nx, ny = ref->grid.ny, n = nx * ny;
    sarbp_compare_result res;
    memset(&res, 0, sizeof res);
    res.nx = nx;
    res.ny = ny;
    res.window = window;

    double s = 0, e = 0, qsum = 0, tmax2 = 0, rmax2 = 0, emax2 = 0;
    size_t qn = 0, emax_i = 0;
    for (size_t i = 0; i < n; i++) {
        const sarbp_c32 t = test->data[i], r = ref->data[i];
        const double r2 = mag2(r), t2 = mag2(t);
        const double dr = (double)r.re - t.re, di = (double)r.im - t.im, e2 = dr * dr + di * di;
        s += r2;
        e += e2;
        if (e2 > emax2) {
            emax2 = e2;
            emax_i = i;
        }
        if (r2 > rmax2) rmax2 = r2;
        if (t2 > tmax2) tmax2 = t2;
        if (r2 > 0) {
            const double mr = sqrt(r2), d = fabs(mr - sqrt(t2));
            double q = d > 0 ? 20 * log10(mr / d) : SARBP_QSNR_CAP_DB;
            qsum += q < SARBP_QSNR_CAP_DB ? q : SARBP_QSNR_CAP_DB;
            qn++;
        }
    }
    res.ser_db = ser_of(s, e);
    res.rel_l2 = s > 0 ? sqrt(e / s) : (e > 0 ? INFINITY : 0);
    res.quasi_snr_db = qn ? qsum / (double)qn : NAN;
    res.quasi_snr_pixels = qn;
    res.peak_ref = sqrt(rmax2);
    res.peak_test = sqrt(tmax2);
    res.max_err = sqrt(emax2);
    res.max_err_ix = emax_i % nx;
    res.max_err_iy = emax_i / nx;
    res.max_err_db = emax2 == 0 ? -INFINITY : rmax2 > 0 ? 10 * log10(emax2 / rmax2) : INFINITY;
    res.entropy_test = sarbp_quality_entropy(test->data, n);
    res.entropy_ref = sarbp_quality_entropy(ref->data, n);
    SARBP_TRY(window_ser(test, ref, window, &res));

    float *ut = malloc(n * sizeof *ut), *ur = malloc(n * sizeof *ur);
    if (!ut || !ur) {
        free(ut);
        free(ur);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the dB images (%zu x %zu)", nx, ny);
    }
    db_image(test->data, n, rmax2, ut);
    db_image(ref->data, n, rmax2, ur);
    double mse = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)ut[i] - ur[i];
        mse += d * d;
    }
    mse /= (double)n;
    res.psnr_db = mse > 0 ? 10 * log10(1.0 / mse) : INFINITY;
    sarbp_status st = mean_ssim(ut, ur, nx, ny, &res.ssim);
    free(ut);
    free(ur);
    if (st != SARBP_OK) return st;
    *out = res;
    return SARBP_OK;
}
