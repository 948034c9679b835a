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
 * small tile-relative quantities run in FP32: the cancellation-free
 *     dR - dR_c = (2 d.(p_c - a) + |d|^2) / (|p - a| + R_c),  d = p - p_c,
 * as a short series (no square root or divide: the GPU's v3 does the same)
 * wherever the tile is small against the range, and the phase of that small
 * range is reduced to cycles in [-1/2, 1/2] before a polynomial sin/cos, so
 * the compiler can vectorise the pixel loop. Profiles are read with their
 * interpolation kernel: linear, or the cubic B-spline's four taps. */
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

/* Per (tile, pulse) terms, FP32 except where noted. The pixel's range
 * relative to the tile centre: x = U.d + |d|^2 / (2 Rc) (U the unit vector
 * from the antenna to the centre), and ddR = 2x / (1 + sqrt(1 + 4 q x)),
 * q = 1 / (2 Rc), evaluated as the series x (1 - e + 2 e^2 - 5 e^3),
 * e = q x, when its truncation (14 e^4 x) is negligible (the caller checks
 * it per tile and pulse), else with the square root and divide. */
struct tile_pulse {
    const float *prof;
    int nbins, ic;     /* profile bins; the tile centre's integer bin */
    float fcb;         /* the centre's bin fraction */
    float cr, ci;      /* the centre's phasor */
    float ux, uy, q;   /* U (x, y), 1 / (2 Rc) */
    float inv_dr, kcyc;
};

static inline float tile_ddr(const struct tile_pulse *tp, int series, float dx, float dy, float dd)
{
    const float x = tp->ux * dx + tp->uy * dy + tp->q * dd;
    const float e = tp->q * x;
    if (series) return x * (1.0f - e * (1.0f - e * (2.0f - 5.0f * e)));
    return 2.0f * x / (1.0f + sqrtf(1.0f + 4.0f * e));
}

/* The tile-centre phasor turned by ddR's phase, applied to v and summed. */
static inline void tile_accumulate(const struct tile_pulse *tp, float ddR, float vr, float vi,
                                   float *are, float *aim)
{
    float cyc = ddR * tp->kcyc;
    cyc -= floorf(cyc + 0.5f);
    float sn, cs;
    sincos_2pi(cyc, &sn, &cs);
    const float pr_ = cs * tp->cr - sn * tp->ci, pi_ = sn * tp->cr + cs * tp->ci;
    *are += vr * pr_ - vi * pi_;
    *aim += vr * pi_ + vi * pr_;
}

/* One pulse over one tile, linear interpolation: the vectorised pixel loop. */
static void tile_linear(const struct tile_pulse *tp, int series, int n, const float *restrict dxs,
                        const float *restrict dys, const float *restrict dds, float *restrict are,
                        float *restrict aim)
{
    const float *restrict prof = tp->prof;
    for (int j = 0; j < n; j++) {
        const float ddR = tile_ddr(tp, series, dxs[j], dys[j], dds[j]);
        const float fb = tp->fcb + ddR * tp->inv_dr;
        const float fl = floorf(fb);
        const float t = fb - fl;
        int idx = tp->ic + (int)fl;
        const int ok = idx >= 0 && idx < tp->nbins - 1;
        idx = ok ? idx : 0;
        const float w = ok ? 1.0f : 0.0f;
        const float r0v = prof[2 * idx], i0v = prof[2 * idx + 1];
        const float r1v = prof[2 * idx + 2], i1v = prof[2 * idx + 3];
        const float vr = w * (r0v + t * (r1v - r0v));
        const float vi = w * (i0v + t * (i1v - i0v));
        tile_accumulate(tp, ddR, vr, vi, &are[j], &aim[j]);
    }
}

/* The same with the cubic B-spline's four taps, bins idx - 1 .. idx + 2. */
static void tile_cubic(const struct tile_pulse *tp, int series, int n, const float *restrict dxs,
                       const float *restrict dys, const float *restrict dds, float *restrict are,
                       float *restrict aim)
{
    const float *restrict prof = tp->prof;
    for (int j = 0; j < n; j++) {
        const float ddR = tile_ddr(tp, series, dxs[j], dys[j], dds[j]);
        const float fb = tp->fcb + ddR * tp->inv_dr;
        const float fl = floorf(fb);
        const float t = fb - fl;
        int idx = tp->ic + (int)fl;
        const int ok = idx >= 1 && idx < tp->nbins - 2;
        idx = ok ? idx - 1 : 0;
        const float u = 1.0f - t, t2 = t * t, t3 = t2 * t;
        const float s6 = ok ? (1.0f / 6.0f) : 0.0f;
        const float w0 = s6 * u * u * u;
        const float w1 = s6 * (3.0f * t3 - 6.0f * t2 + 4.0f);
        const float w2 = s6 * (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f);
        const float w3 = s6 * t3;
        const float *q = prof + 2 * idx;
        const float vr = w0 * q[0] + w1 * q[2] + w2 * q[4] + w3 * q[6];
        const float vi = w0 * q[1] + w1 * q[3] + w2 * q[5] + w3 * q[7];
        tile_accumulate(tp, ddR, vr, vi, &are[j], &aim[j]);
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

    /* the series' truncation bound needs the largest |x| of the tile: its half diagonal */
    const double hd = 0.5 * hypot((double)nx * g->dx, (double)ny * g->dy);
    const int cubic = pr->interp == SARBP_INTERP_CUBIC;
    for (size_t i = 0; i < pr->npulses; i++) {
        const double *a = pr->pos + 3 * i;
        const double ux = pcx - a[0], uy = pcy - a[1], uz = pcz - a[2];
        const double Rc = sqrt(ux * ux + uy * uy + uz * uz);
        const double dRc = Rc - pr->r0[i];
        const double bc = (dRc - pr->rstart[i]) / pr->dr[i];
        const double bcf = floor(bc);
        if (fabs(bcf) > 1e9) continue; /* tile hopelessly outside the profile */
        const double cyc_c = 2.0 * pr->fref[i] * dRc / SARBP_C;
        const double phc = 2.0 * M_PI * (cyc_c - floor(cyc_c));
        struct tile_pulse tp = {
            (const float *)(pr->data32 + i * pr->nbins), (int)pr->nbins, (int)bcf,
            (float)(bc - bcf), (float)cos(phc), (float)sin(phc), (float)(ux / Rc),
            (float)(uy / Rc), (float)(0.5 / Rc), (float)(1.0 / pr->dr[i]),
            (float)(2.0 * pr->fref[i] / SARBP_C),
        };
        /* series truncation 14 e^4 x (e = x / (2 Rc), x <= hd (1 + e)) below
         * 1e-7 cycles at the reference frequency */
        const double e = hd / (2.0 * Rc) * 1.01, trunc = 14.0 * e * e * e * e * hd * 1.01;
        const int series = trunc * 2.0 * pr->fref[i] / SARBP_C < 1e-7 && e < 0.05;
        if (cubic) tile_cubic(&tp, series, (int)n, s->dx, s->dy, s->dd, s->are, s->aim);
        else tile_linear(&tp, series, (int)n, s->dx, s->dy, s->dd, s->are, s->aim);
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
