/* bp_cpu.c - the production CPU backprojector: FP32, cache-tiled, pthreads.
 *
 * Work split (seed 003, sections 1.3.1-1.3.2): the image is cut into tiles of
 * TILE_X x TILE_Y pixels; a thread owns whole tiles and runs every pulse of
 * the block over its tile, so a tile's accumulators stay in L1 and the range
 * bins a tile needs from one pulse are a short window. Each pixel sums the
 * pulses in order whatever the thread count: results are bit-identical for
 * any number of threads.
 *
 * Precision (primer, section 4): per (tile, pulse) the range R_c to the tile
 * centre, its range bin (integer part kept apart from the fraction) and the
 * phasor exp(j 4 pi f dR_c / c) are computed in FP64; per pixel only the
 * small tile-relative quantities run in FP32:
 *     dR - dR_c = (2 d.(p_c - a) + |d|^2) / (|p - a| + R_c),  d = p - p_c,
 * which has no cancellation, and the phase of that small range is reduced
 * to cycles in [-1/2, 1/2] before a polynomial sin/cos, so the compiler can
 * vectorise the pixel loop. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "sarbp/backproject.h"

#define TILE_X 32
#define TILE_Y 8
#define TILE_N (TILE_X * TILE_Y)

/* sin and cos of 2 pi t for t in [-1/2, 1/2]: Taylor polynomials of sin and
 * cos of x = pi t on [-pi/2, pi/2] (truncation below 6e-8), then the double
 * angle. Branch-free so the caller's loop vectorises. */
static inline void sincos_2pi(float t, float *s_out, float *c_out)
{
    const float x = 3.14159265358979f * t;
    const float x2 = x * x;
    float s = -2.5052108e-08f;
    s = s * x2 + 2.7557319e-06f;
    s = s * x2 - 1.9841270e-04f;
    s = s * x2 + 8.3333333e-03f;
    s = s * x2 - 1.6666667e-01f;
    s = (s * x2) * x + x;
    float c = 2.0876757e-09f;
    c = c * x2 - 2.7557319e-07f;
    c = c * x2 + 2.4801587e-05f;
    c = c * x2 - 1.3888889e-03f;
    c = c * x2 + 4.1666667e-02f;
    c = c * x2 - 0.5f;
    c = c * x2 + 1.0f;
    *s_out = 2.0f * s * c;
    *c_out = (c - s) * (c + s);
}

/* One pulse over one tile: the vectorised pixel loop. */
static void pulse_over_tile(int n, const float *restrict dxs, const float *restrict dys,
                            const float *restrict dds, float *restrict are, float *restrict aim,
                            const float *restrict prof, int nbins, int ic, float fcb, float cr,
                            float ci, float fux, float fuy, float fuz2, float u2x, float u2y,
                            float fRc, float inv_dr, float kcyc)
{
    for (int j = 0; j < n; j++) {
        const float wx = fux + dxs[j], wy = fuy + dys[j];
        const float Rp = sqrtf(wx * wx + wy * wy + fuz2);
        const float ddR = (u2x * dxs[j] + u2y * dys[j] + dds[j]) / (Rp + fRc);
        const float fb = fcb + ddR * inv_dr;
        const float fl = floorf(fb);
        const float t = fb - fl;
        int idx = ic + (int)fl;
        const int ok = idx >= 0 && idx < nbins - 1;
        idx = ok ? idx : 0;
        const float w = ok ? 1.0f : 0.0f;
        const float r0v = prof[2 * idx], i0v = prof[2 * idx + 1];
        const float r1v = prof[2 * idx + 2], i1v = prof[2 * idx + 3];
        const float vr = w * (r0v + t * (r1v - r0v));
        const float vi = w * (i0v + t * (i1v - i0v));
        float cyc = ddR * kcyc;
        cyc -= floorf(cyc + 0.5f);
        float sn, cs;
        sincos_2pi(cyc, &sn, &cs);
        const float pr_ = cs * cr - sn * ci, pi_ = sn * cr + cs * ci;
        are[j] += vr * pr_ - vi * pi_;
        aim[j] += vr * pi_ + vi * pr_;
    }
}

struct tile_scratch {
    float dx[TILE_N], dy[TILE_N], dd[TILE_N];
    float are[TILE_N], aim[TILE_N];
};

struct fp32_ctx {
    const sarbp_profiles *pr;
    const sarbp_grid *g;
    sarbp_c32 *img;
    size_t ntx, nty;
    struct tile_scratch *scratch; /* one per worker */
};

static void run_tile(void *vctx, size_t task, int worker)
{
    const struct fp32_ctx *c = vctx;
    const sarbp_profiles *pr = c->pr;
    const sarbp_grid *g = c->g;
    struct tile_scratch *s = &c->scratch[worker];
    const size_t tx = task % c->ntx, ty = task / c->ntx;
    const size_t x0 = tx * TILE_X, y0 = ty * TILE_Y;
    const size_t nx = (x0 + TILE_X <= g->nx) ? TILE_X : g->nx - x0;
    const size_t ny = (y0 + TILE_Y <= g->ny) ? TILE_Y : g->ny - y0;
    const size_t n = nx * ny;

    /* tile centre (FP64) and pixel offsets from it (FP32, small) */
    const double pcx = 0.5 * (sarbp_grid_x(g, x0) + sarbp_grid_x(g, x0 + nx - 1));
    const double pcy = 0.5 * (sarbp_grid_y(g, y0) + sarbp_grid_y(g, y0 + ny - 1));
    const double pcz = g->zc;
    for (size_t j = 0; j < n; j++) {
        const size_t ix = x0 + j % nx, iy = y0 + j / nx;
        const double dx = sarbp_grid_x(g, ix) - pcx, dy = sarbp_grid_y(g, iy) - pcy;
        s->dx[j] = (float)dx;
        s->dy[j] = (float)dy;
        s->dd[j] = (float)(dx * dx + dy * dy);
        const sarbp_c32 v = c->img[iy * g->nx + ix];
        s->are[j] = v.re;
        s->aim[j] = v.im;
    }

    const int nbins = (int)pr->nbins;
    for (size_t i = 0; i < pr->npulses; i++) {
        const double *a = pr->pos + 3 * i;
        const double ux = pcx - a[0], uy = pcy - a[1], uz = pcz - a[2];
        const double Rc = sqrt(ux * ux + uy * uy + uz * uz);
        const double dRc = Rc - pr->r0[i];
        const double bc = (dRc - pr->rstart[i]) / pr->dr[i];
        const double bcf = floor(bc);
        if (fabs(bcf) > 1e9) continue; /* tile hopelessly outside the profile */
        const int ic = (int)bcf;
        const float fcb = (float)(bc - bcf);
        const double cyc_c = 2.0 * pr->fref[i] * dRc / SARBP_C;
        const double phc = 2.0 * M_PI * (cyc_c - floor(cyc_c));
        const float cr = (float)cos(phc), ci = (float)sin(phc);
        const float fux = (float)ux, fuy = (float)uy, fuz2 = (float)(uz * uz);
        const float u2x = (float)(2 * ux), u2y = (float)(2 * uy);
        const float fRc = (float)Rc;
        const float inv_dr = (float)(1.0 / pr->dr[i]);
        const float kcyc = (float)(2.0 * pr->fref[i] / SARBP_C);
        pulse_over_tile((int)n, s->dx, s->dy, s->dd, s->are, s->aim,
                        (const float *)(pr->data32 + i * pr->nbins), nbins, ic, fcb, cr, ci,
                        fux, fuy, fuz2, u2x, u2y, fRc, inv_dr, kcyc);
    }

    for (size_t j = 0; j < n; j++) {
        const size_t ix = x0 + j % nx, iy = y0 + j / nx;
        c->img[iy * g->nx + ix].re = s->are[j];
        c->img[iy * g->nx + ix].im = s->aim[j];
    }
}

sarbp_status sarbp_bp_cpu_fp32(const sarbp_profiles *pr, const sarbp_grid *g, int threads,
                               sarbp_c32 *img)
{
    if (pr->precision == SARBP_FP64 || !pr->data32)
        return sarbp_error(SARBP_ERR_INTERNAL, "FP32 backprojection needs FP32 profiles");
    if (pr->nbins > INT32_MAX / 4)
        return sarbp_error(SARBP_ERR_INVALID, "too many range bins for the CPU path");
    SARBP_TRY(sarbp_grid_validate(g));
    if (threads <= 0) threads = sarbp_cpu_count();
    struct fp32_ctx c;
    c.pr = pr;
    c.g = g;
    c.img = img;
    c.ntx = (g->nx + TILE_X - 1) / TILE_X;
    c.nty = (g->ny + TILE_Y - 1) / TILE_Y;
    c.scratch = aligned_alloc(64, (size_t)threads * sizeof(struct tile_scratch));
    if (!c.scratch) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for tile buffers");
    sarbp_status st = sarbp_parallel_for(threads, c.ntx * c.nty, run_tile, &c);
    free(c.scratch);
    return st;
}
