/* bp_cpu_ref.c - the FP64 reference backprojector: the plain loop of the
 * primer, section 1, with linear, quadratic or cubic B-spline interpolation (the taps
 * written out). Simple and obviously right;
 * every fast path is measured against it. On a grid with heights each
 * pixel sits at its own z (sarbp_grid_z), in range and phase alike. Rows
 * are split over threads; each pixel sums its pulses in order, so the result does not depend on threads. */
#include <math.h>

#include "core/parallel.h"
#include "sarbp/backproject.h"

struct ref_ctx {
    const sarbp_profiles *pr;
    const sarbp_grid *g;
    size_t row0;      /* grid row of img's row 0 */
    sarbp_c64 *img;
};

static void ref_row(void *vctx, size_t r, int worker)
{
    (void)worker;
    const struct ref_ctx *c = vctx;
    const size_t iy = c->row0 + r;
    const sarbp_profiles *pr = c->pr;
    const sarbp_grid *g = c->g;
    const double y = sarbp_grid_y(g, iy);
    const double k4pi_c = 4.0 * M_PI / SARBP_C;
    /* segments n = 0 .. nbins - 2, as on the GPU (bp_kernels.h) */
    const int cubic = pr->interp == SARBP_INTERP_CUBIC;
    const int quad = pr->interp == SARBP_INTERP_QUADRATIC; /* nearest bin, t in [-1/2, 1/2] */
    const double lo = 0.0, hi = (double)pr->nbins - 1.0;
    sarbp_c64 *row = c->img + r * g->nx;
    for (size_t i = 0; i < pr->npulses; i++) {
        const double *a = pr->pos + 3 * i;
        const sarbp_c64 *prof = pr->data64 + i * pr->nbins;
        const double r0 = pr->r0[i], rs = pr->rstart[i], dr = pr->dr[i];
        const double kph = k4pi_c * pr->fref[i];
        for (size_t ix = 0; ix < g->nx; ix++) {
            const double x = sarbp_grid_x(g, ix);
            const double dx = x - a[0], dy = y - a[1], dz = sarbp_grid_z(g, ix, iy) - a[2];
            const double dR = sqrt(dx * dx + dy * dy + dz * dz) - r0;
            const double b = (dR - rs) / dr;
            const double fb = quad ? floor(b + 0.5) : floor(b);
            if (!(fb >= lo) || fb >= hi) continue;
            const size_t n = (size_t)fb;
            const double t = b - fb;
            double vr, vi;
            if (quad || cubic) { /* taps n-1 .. n+1 (n+2), those off the profile read as 0 */
                double w[4];
                if (quad) sarbp_interp_weights_quadratic(t, w);
                else sarbp_interp_weights_cubic(t, w);
                vr = vi = 0;
                for (int k = 0; k < (quad ? 3 : 4); k++) {
                    const size_t m = n + (size_t)k - 1;
                    if (n + (size_t)k < 1 || m >= pr->nbins) continue;
                    vr += w[k] * prof[m].re;
                    vi += w[k] * prof[m].im;
                }
            } else {
                vr = prof[n].re + t * (prof[n + 1].re - prof[n].re);
                vi = prof[n].im + t * (prof[n + 1].im - prof[n].im);
            }
            const double ph = kph * dR;
            const double cs = cos(ph), sn = sin(ph);
            row[ix].re += vr * cs - vi * sn;
            row[ix].im += vr * sn + vi * cs;
        }
    }
}

sarbp_status sarbp_bp_cpu_fp64_rows(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_region r,
                                    sarbp_c64 *img)
{
    if (pr->precision != SARBP_FP64 || !pr->data64)
        return sarbp_error(SARBP_ERR_INTERNAL, "FP64 backprojection needs FP64 profiles");
    SARBP_TRY(sarbp_grid_validate(g));
    if (r.row0 > g->ny || r.nrows > g->ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID, "rows %zu to %zu are outside the grid's %zu", r.row0,
                           r.row0 + r.nrows, g->ny);
    struct ref_ctx c = {pr, g, r.row0, img};
    return sarbp_parallel_for(0, r.nrows, ref_row, &c);
}

sarbp_status sarbp_bp_cpu_fp64(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_c64 *img)
{
    return sarbp_bp_cpu_fp64_rows(pr, g, (sarbp_region){0, g->ny}, img);
}
