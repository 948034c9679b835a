/* bp_exact.c - the exact image: FP64 direct summation over every frequency
 * sample (primer, section 6), no FFT, no upsampling, no interpolation.
 *
 * Each pulse arrives as uniformly spaced spectral samples Y[k] at
 * fa + k fd (sarbp_rc_exact_spectrum); a pixel at differential range dR
 * gets sum_k Y[k] exp(+j 4 pi (fa + k fd) dR / c), evaluated by Horner's
 * rule in z = exp(+j 4 pi fd dR / c) (one complex multiply-add per sample,
 * rounding growing like K eps, far below any error it is used to measure)
 * times exp(+j 4 pi fa dR / c) with its argument reduced in cycles in FP64.
 * Cost: K times a direct backprojection; it is a reference for small
 * images, not a production path. Rows are split over threads and each pixel
 * sums its pulses in order, so the result does not depend on the thread
 * count. On a grid with heights each pixel sits at its own z
 * (sarbp_grid_z). */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "sarbp/backproject.h"

struct exact_ctx {
    size_t np, nk;
    const sarbp_c64 *Y;
    const double *fa, *fd, *pos, *r0;
    const sarbp_grid *g;
    size_t row0;      /* grid row of img's row 0 */
    sarbp_c64 *img;
    double *scratch; /* per worker: 6 nx doubles */
};

static void exact_row(void *vctx, size_t r, int worker)
{
    const struct exact_ctx *c = vctx;
    const size_t iy = c->row0 + r;
    const sarbp_grid *g = c->g;
    const size_t nx = g->nx;
    double *zr = c->scratch + (size_t)worker * 6 * nx, *zi = zr + nx; /* step z per pixel */
    double *ar = zi + nx, *ai = ar + nx;                             /* Horner's sums */
    double *cr = ai + nx, *ci = cr + nx;                             /* carrier */
    const double y = sarbp_grid_y(g, iy);
    sarbp_c64 *row = c->img + r * nx;
    for (size_t i = 0; i < c->np; i++) {
        const double *a = c->pos + 3 * i;
        const sarbp_c64 *Y = c->Y + i * c->nk;
        const double kd = 2.0 * c->fd[i] / SARBP_C, ka = 2.0 * c->fa[i] / SARBP_C;
        for (size_t ix = 0; ix < nx; ix++) {
            const double dx = sarbp_grid_x(g, ix) - a[0], dy = y - a[1];
            const double dz = sarbp_grid_z(g, ix, iy) - a[2];
            const double dR = sqrt(dx * dx + dy * dy + dz * dz) - c->r0[i];
            double cz = kd * dR, cc = ka * dR; /* cycles, reduced before sin/cos */
            cz -= floor(cz);
            cc -= floor(cc);
            zr[ix] = cos(2.0 * M_PI * cz);
            zi[ix] = sin(2.0 * M_PI * cz);
            cr[ix] = cos(2.0 * M_PI * cc);
            ci[ix] = sin(2.0 * M_PI * cc);
            ar[ix] = Y[c->nk - 1].re;
            ai[ix] = Y[c->nk - 1].im;
        }
        for (size_t k = c->nk - 1; k-- > 0;) {
            const double yr = Y[k].re, yi = Y[k].im;
            for (size_t ix = 0; ix < nx; ix++) {
                const double tr = ar[ix] * zr[ix] - ai[ix] * zi[ix] + yr;
                const double ti = ar[ix] * zi[ix] + ai[ix] * zr[ix] + yi;
                ar[ix] = tr;
                ai[ix] = ti;
            }
        }
        for (size_t ix = 0; ix < nx; ix++) {
            row[ix].re += ar[ix] * cr[ix] - ai[ix] * ci[ix];
            row[ix].im += ar[ix] * ci[ix] + ai[ix] * cr[ix];
        }
    }
}

sarbp_status sarbp_bp_exact_rows(size_t np, size_t nk, const sarbp_c64 *Y, const double *fa,
                                 const double *fd, const double *pos, const double *r0,
                                 const sarbp_grid *g, sarbp_region r, int threads, sarbp_c64 *img)
{
    SARBP_TRY(sarbp_grid_validate(g));
    if (r.row0 > g->ny || r.nrows > g->ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID, "rows %zu to %zu are outside the grid's %zu", r.row0,
                           r.row0 + r.nrows, g->ny);
    if (np == 0 || nk == 0) return SARBP_OK;
    if (threads <= 0) threads = sarbp_cpu_count();
    struct exact_ctx c = {np, nk, Y, fa, fd, pos, r0, g, r.row0, img, NULL};
    c.scratch = malloc((size_t)threads * 6 * g->nx * sizeof(double));
    if (!c.scratch) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the exact image's rows");
    sarbp_status st = sarbp_parallel_for(threads, r.nrows, exact_row, &c);
    free(c.scratch);
    return st;
}

sarbp_status sarbp_bp_exact(size_t np, size_t nk, const sarbp_c64 *Y, const double *fa,
                            const double *fd, const double *pos, const double *r0,
                            const sarbp_grid *g, int threads, sarbp_c64 *img)
{
    return sarbp_bp_exact_rows(np, nk, Y, fa, fd, pos, r0, g, (sarbp_region){0, g->ny}, threads, img);
}
