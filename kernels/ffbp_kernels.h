/* ffbp_kernels.h - fast factorized backprojection on the GPU in FP32: the
 * device data, the per-thread arithmetic, and the C interface of the
 * launchers in ffbp.cu.
 *
 * The per-thread bodies below are plain inline functions compiled both by
 * nvcc (into the kernels of ffbp.cu) and by the C compiler (into the CPU
 * emulation in src/backproject/ffbp_gpu_plan.c, sarbp_ffbp_emulate_fp32),
 * so the arithmetic the GPU runs is the arithmetic a CPU test checks. Only
 * the launch geometry, shared memory and the copies are GPU-only.
 *
 * Precision (primer, section 4): every geometric quantity that is large
 * (ranges of 10 km, absolute angles, phases of 1e5 rad) is computed in FP64
 * once per thread block and source, at the block's reference point; per
 * sample the FP32 arithmetic handles only small offsets from it:
 *   - a block owns a run of consecutive rho samples of one theta row of a
 *     parent polar grid (or a tile of pixels); its reference x_m is the
 *     point of the run's middle sample;
 *   - the sample x = x_m + s d (d the row's horizontal direction, s the
 *     horizontal offset) has parent range rho = rho_m + delta, delta an
 *     exact multiple of the grid spacing;
 *   - a source (child sub-image or pulse, centre c, e = c - c_parent) sees
 *     x at rho_c = rho + drho; with drho_m its value at x_m and
 *     ddr = drho - drho_m, expanding |x - c|^2 gives without cancellation
 *         ddr (2 (rho_c(x_m) + delta) + ddr) = -2 (delta drho_m + s (d.e)),
 *     solved as ddr = Q / (B + sqrt(B^2 + Q)): a metre-sized quantity
 *     carried to FP32's relative precision;
 *   - the source's theta moves from its value at x_m by
 *     atan2(s (w x d), |w|^2 + s (w.d)), w = x_m - c horizontal;
 *   - the phase exp(+j kc (rho_c - rho)) is the reference's phase (FP64,
 *     reduced to cycles) plus kc ddr (stage 0: plus (k_i - kc) delta, the
 *     pulse's own wavenumber k_i);
 *   - grid indices keep their integer part (of the reference) apart from
 *     the fraction; what rounding remains grows with the run's length:
 *     runs of SARBP_FFBP_RUN samples measured 99-105 dB against FP64.
 * Pixels (the final sum) have no parent demodulation: with s the pixel's
 * 2-D offset from the tile's reference pixel and u the unit vector from c
 * to it, rho_c - rho_c(x_m) = s.u + |s x u|^2 / (2 rho_c + 2 s.u + ...);
 * the phase of s.u is exact per whole pixel (kc u_x dx / 2 pi reduced to
 * cycles in FP64), the small remainder carries no cancellation.
 *
 * Measured with the emulation (x86, 2026-11-26), sarbp bench's geometry
 * (2048 pulses, 10 km, 45 degrees, 102.4 m grid): FP32 against FP64 FFBP
 * 97 dB; FP64 FFBP against direct FP64 BP 72.4 dB. Not yet on a device.
 *
 * Host pointers are prefixed h_, device pointers d_ where it matters; the
 * run structures hold device pointers on the GPU and host pointers in the
 * emulation. */
#ifndef SARBP_FFBP_KERNELS_H
#define SARBP_FFBP_KERNELS_H

#include <stddef.h>

#include "bp_kernels.h"
#include "sarbp/phd.h"

#ifdef __CUDACC__
#define FFBP_HD static __host__ __device__ __forceinline__
#else
#include <math.h>
#define FFBP_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_FFBP_MAX_STAGES 48
#define SARBP_FFBP_SEG 256     /* threads per block of the row kernels (one theta row) */
#define SARBP_FFBP_SPT 4       /* stage 0 and merge: rho samples per thread, SEG apart */
#define SARBP_FFBP_RUN (SARBP_FFBP_SEG * SARBP_FFBP_SPT) /* their samples per block */
#define SARBP_FFBP_TILE_X 32   /* final sum: pixels per block in x (a warp's threads) */
#define SARBP_FFBP_TILE_Y 32   /* final sum: pixels per block in y */
#define SARBP_FFBP_PPT 4       /* final sum: pixels per thread, TILE_Y / PPT rows apart */
#define SARBP_FFBP_CHUNK 32    /* sources (pulses, children) referenced at a time */
#define SARBP_FFBP_PF_K 10     /* prefilter half-length: the taps sqrt(3) z^|m|, |m| <= K */
#define SARBP_FFBP_PF_R 8      /* prefilter along theta: outputs per thread (a sliding window) */

/* One polar sub-image (host plan, FP64). */
typedef struct {
    double c[3];       /* phase centre, m */
    double r0, dr;     /* rho = r0 + i dr, i < nr */
    double t0, dt;     /* theta = t0 + j dt, j < nt */
    double tmid;       /* t0 + nt dt / 2: where thetas are unwrapped to */
    long long off;     /* its first sample in its stage's buffer; [nt][nr] */
    int nr, nt;
    int s0, s1;        /* stage 0: pulses [s0, s1); later: children [s0, s1), indices into
                          the previous stage's sub-images */
} sarbp_ffbp_dsub;

/* One theta row of one sub-image of a stage. */
typedef struct {
    int sub, j;
} sarbp_ffbp_drow;

/* A source as seen from a block's reference point (see above). */
typedef struct {
    float rho_c;       /* the source's range of x_m, m */
    float drho;        /* rho_c - rho_m */
    float g;           /* d . (c - c_parent) */
    float cr, q0, dw;  /* theta: w x d, |w|^2, w . d */
    float ux, uy, uz;  /* pixels: the unit vector from c to x_m */
    float qn;          /* pixels: |w|^2 / rho_c */
    float cx, cy;      /* pixels: kc / 2 pi (ux dx, uy dy), cycles per pixel, reduced */
    float fb, inv_dr;  /* rho index of x_m: ib + fb; 1 / the source's rho (bin) spacing */
    float fj, inv_dt;  /* theta index of x_m: jb + fj; 1 / theta spacing */
    float ph;          /* phase at x_m, cycles in [-1/2, 1/2] */
    float kd, ki;      /* cycles per metre of delta and of ddr */
    int ib, jb;
    int nr, nt;        /* the source grid (pulses: nbins, 1) */
    long long off;     /* its first sample */
} sarbp_ffbp_ref;

/* A block's reference point on a parent row. */
typedef struct {
    double x[3];       /* x_m */
    double d[2];       /* the row's direction (cos theta, sin theta) */
    double rho;        /* |x_m - c_parent| */
    float rho_f, h_f;  /* rho, and its horizontal part */
    float dlt0;        /* rho of sample i_m less rho: 0 unless i_m lies below the antenna */
    float dr;          /* parent spacing */
    int i_m;
} sarbp_ffbp_rowref;

/* ---- arithmetic shared by the GPU and its CPU emulation ------------------ */

#ifdef __CUDACC__
#define FFBP_LDG(p) ffbp_ldg(p)
static __host__ __device__ __forceinline__ sarbp_c32 ffbp_ldg(const sarbp_c32 *p)
{
#ifdef __CUDA_ARCH__
    const float2 v = __ldg((const float2 *)p);
    sarbp_c32 r = {v.x, v.y};
    return r;
#else
    return *p;
#endif
}
#else
#define FFBP_LDG(p) (*(p))
#endif

/* sin and cos of pi x */
FFBP_HD void ffbp_sincospi(float x, float *s, float *c)
{
#ifdef __CUDA_ARCH__
    sincospif(x, s, c);
#else
    const double a = 3.14159265358979323846 * (double)x;
    *s = (float)sin(a);
    *c = (float)cos(a);
#endif
}

#define FFBP_PI 3.14159265358979323846

FFBP_HD double ffbp_unwrap(double th, double ref)
{
    while (th - ref > FFBP_PI) th -= 2 * FFBP_PI;
    while (th - ref < -FFBP_PI) th += 2 * FFBP_PI;
    return th;
}

/* x reduced to [-1/2, 1/2] */
FFBP_HD double ffbp_frac(double x) { return x - floor(x + 0.5); }

/* idx split into an integer part (clamped far outside any grid) and the
 * fraction */
FFBP_HD void ffbp_split(double idx, int *ib, float *fb)
{
    if (!(idx > -1e9)) idx = -1e9;
    if (idx > 1e9) idx = 1e9;
    const double f = floor(idx);
    *ib = (int)f;
    *fb = (float)(idx - f);
}

/* The reference of the block whose middle sample is i_m on row j of P. */
FFBP_HD void ffbp_rowref(const sarbp_ffbp_dsub *P, int j, int i_m, double z, sarbp_ffbp_rowref *r)
{
    const double th = P->t0 + (double)j * P->dt;
    r->d[0] = cos(th);
    r->d[1] = sin(th);
    const double rho = P->r0 + (double)i_m * P->dr, dz = z - P->c[2];
    const double h2 = rho * rho - dz * dz, h = h2 > 0 ? sqrt(h2) : 0.0;
    r->x[0] = P->c[0] + h * r->d[0];
    r->x[1] = P->c[1] + h * r->d[1];
    r->x[2] = z;
    r->rho = sqrt(h * h + dz * dz);
    r->rho_f = (float)r->rho;
    r->h_f = (float)h;
    r->dlt0 = (float)(rho - r->rho);
    r->dr = (float)P->dr;
    r->i_m = i_m;
}

/* Child sub-image C of parent P seen from the row reference rr. */
FFBP_HD void ffbp_ref_sub(const sarbp_ffbp_dsub *C, const sarbp_ffbp_dsub *P,
                          const sarbp_ffbp_rowref *rr, double kc, sarbp_ffbp_ref *r)
{
    const double vx = rr->x[0] - C->c[0], vy = rr->x[1] - C->c[1], vz = rr->x[2] - C->c[2];
    const double rc = sqrt(vx * vx + vy * vy + vz * vz);
    r->rho_c = (float)rc;
    r->drho = (float)(rc - rr->rho);
    r->g = (float)(rr->d[0] * (C->c[0] - P->c[0]) + rr->d[1] * (C->c[1] - P->c[1]));
    r->cr = (float)(vx * rr->d[1] - vy * rr->d[0]);
    r->q0 = (float)(vx * vx + vy * vy);
    r->dw = (float)(vx * rr->d[0] + vy * rr->d[1]);
    r->ux = r->uy = r->uz = r->qn = r->cx = r->cy = 0.0f;
    const double th = ffbp_unwrap(atan2(vy, vx), C->tmid);
    ffbp_split((rc - C->r0) / C->dr, &r->ib, &r->fb);
    ffbp_split((th - C->t0) / C->dt, &r->jb, &r->fj);
    r->inv_dr = (float)(1.0 / C->dr);
    r->inv_dt = (float)(1.0 / C->dt);
    r->ph = (float)ffbp_frac(kc / (2 * FFBP_PI) * (rc - rr->rho));
    r->kd = 0.0f;
    r->ki = (float)(kc / (2 * FFBP_PI));
    r->nr = C->nr;
    r->nt = C->nt;
    r->off = C->off;
}

/* Pulse i (profile row i of nbins) for parent P seen from rr: its value at
 * x is interp(bin) exp(+j 2 pi (2 fref / c) dR), dR = |x - a| - r0, and
 * the parent stores it times exp(-j kc rho). */
FFBP_HD void ffbp_ref_pulse(const sarbp_dpulse *p, int i, int nbins, const sarbp_ffbp_dsub *P,
                            const sarbp_ffbp_rowref *rr, double kc, sarbp_ffbp_ref *r)
{
    const double vx = rr->x[0] - p->ax, vy = rr->x[1] - p->ay, vz = rr->x[2] - p->az;
    const double ra = sqrt(vx * vx + vy * vy + vz * vz);
    r->rho_c = (float)ra;
    r->drho = (float)(ra - rr->rho);
    r->g = (float)(rr->d[0] * (p->ax - P->c[0]) + rr->d[1] * (p->ay - P->c[1]));
    r->cr = r->q0 = r->dw = r->ux = r->uy = r->uz = r->qn = r->cx = r->cy = 0.0f;
    ffbp_split((ra - p->r0 - p->rstart) * p->inv_dr, &r->ib, &r->fb);
    r->inv_dr = (float)p->inv_dr;
    r->jb = 0;
    r->fj = 0.0f;
    r->inv_dt = 0.0f;
    const double ki = 2.0 * p->fref / 299792458.0, kc2 = kc / (2 * FFBP_PI);
    r->ph = (float)ffbp_frac(ki * (ra - p->r0) - kc2 * rr->rho);
    r->kd = (float)(ki - kc2);
    r->ki = (float)ki;
    r->nr = nbins;
    r->nt = 1;
    r->off = (long long)i * nbins;
}

/* Final sub-image C seen from the reference pixel (x, y, z) of a tile of
 * pixel spacing (dx, dy) (no parent: the phase is kc rho_c). */
FFBP_HD void ffbp_ref_pixel(const sarbp_ffbp_dsub *C, double x, double y, double z, double dx,
                            double dy, double kc, sarbp_ffbp_ref *r)
{
    const double vx = x - C->c[0], vy = y - C->c[1], vz = z - C->c[2];
    const double rc = sqrt(vx * vx + vy * vy + vz * vz);
    r->rho_c = (float)rc;
    r->drho = r->g = r->cr = r->q0 = r->dw = r->kd = 0.0f;
    r->ux = (float)(vx / rc);
    r->uy = (float)(vy / rc);
    r->uz = (float)(vz / rc);
    r->qn = (float)((vx * vx + vy * vy) / rc);
    const double kc2 = kc / (2 * FFBP_PI);
    r->cx = (float)ffbp_frac(kc2 * vx / rc * dx);
    r->cy = (float)ffbp_frac(kc2 * vy / rc * dy);
    const double th = ffbp_unwrap(atan2(vy, vx), C->tmid);
    ffbp_split((rc - C->r0) / C->dr, &r->ib, &r->fb);
    ffbp_split((th - C->t0) / C->dt, &r->jb, &r->fj);
    r->inv_dr = (float)(1.0 / C->dr);
    r->inv_dt = (float)(1.0 / C->dt);
    r->ph = (float)ffbp_frac(kc2 * rc);
    r->ki = (float)kc2;
    r->nr = C->nr;
    r->nt = C->nt;
    r->off = C->off;
}

/* Sample i of a block with reference rr: delta (parent range offset) and
 * s (horizontal offset along the row). */
FFBP_HD void ffbp_offsets(const sarbp_ffbp_rowref *rr, int i, float *delta, float *s)
{
    const float dl = (float)(i - rr->i_m) * rr->dr + rr->dlt0;
    const float A = dl * (2.0f * rr->rho_f + dl); /* rho^2 - rho_m^2 */
    const float h2 = rr->h_f * rr->h_f + A;
    const float den = (h2 > 0.0f ? sqrtf(h2) : 0.0f) + rr->h_f;
    *delta = dl;
    *s = den > 0.0f ? A / den : 0.0f;
}

/* ddr of a source at the sample (delta, s): see the file header. */
FFBP_HD float ffbp_ddr(const sarbp_ffbp_ref *r, float delta, float s)
{
    const float Q = -2.0f * (delta * r->drho + s * r->g);
    const float B = r->rho_c + delta;
    return Q / (B + sqrtf(B * B + Q));
}

/* Cubic B-spline weights at fraction t (sarbp_interp_weights_cubic in FP32). */
FFBP_HD void ffbp_wcubic(float t, float w[4])
{
    const float u = 1.0f - t, t2 = t * t, t3 = t2 * t;
    w[0] = u * u * u * (1.0f / 6.0f);
    w[1] = (3.0f * t3 - 6.0f * t2 + 4.0f) * (1.0f / 6.0f);
    w[2] = (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f) * (1.0f / 6.0f);
    w[3] = t3 * (1.0f / 6.0f);
}

/* v times exp(+j 2 pi cyc) added to acc */
FFBP_HD void ffbp_rot_add(float vr, float vi, float cyc, float *ar, float *ai)
{
    cyc -= rintf(cyc);
    float sn, cs;
    ffbp_sincospi(2.0f * cyc, &sn, &cs);
    *ar += vr * cs - vi * sn;
    *ai += vr * sn + vi * cs;
}

/* B-spline coefficients f ([nt][nr], from the source's off) read at rho
 * index ib + tr and theta index jb + tt: zero within a sample of the edge
 * (as the CPU prototype). */
FFBP_HD int ffbp_read2(const sarbp_c32 *f, const sarbp_ffbp_ref *r, float tr, float tt, float *vr,
                       float *vi)
{
    if (!(fabsf(tr) < 1e8f) || !(fabsf(tt) < 1e8f)) return 0;
    const float fi = floorf(tr), fj = floorf(tt);
    const int i = r->ib + (int)fi, j = r->jb + (int)fj;
    if (i < 1 || i + 2 >= r->nr || j < 1 || j + 2 >= r->nt) return 0;
    float wi[4], wj[4];
    ffbp_wcubic(tr - fi, wi);
    ffbp_wcubic(tt - fj, wj);
    const sarbp_c32 *p = f + r->off + (long long)(j - 1) * r->nr + (i - 1);
    float sr = 0.0f, si = 0.0f;
    for (int b = 0; b < 4; b++, p += r->nr) {
        const sarbp_c32 a0 = FFBP_LDG(p), a1 = FFBP_LDG(p + 1), a2 = FFBP_LDG(p + 2),
                        a3 = FFBP_LDG(p + 3);
        const float rr = wi[0] * a0.re + wi[1] * a1.re + wi[2] * a2.re + wi[3] * a3.re;
        const float ri = wi[0] * a0.im + wi[1] * a1.im + wi[2] * a2.im + wi[3] * a3.im;
        sr += wj[b] * rr;
        si += wj[b] * ri;
    }
    *vr = sr;
    *vi = si;
    return 1;
}

/* Stage 0: pulse r's contribution to the parent sample (delta, s), added
 * to (ar, ai). prof: the profiles [np][nbins] (B-spline coefficients when
 * cubic, samples when linear). */
FFBP_HD void ffbp_pulse_add(const sarbp_c32 *prof, int cubic, const sarbp_ffbp_ref *r, float delta,
                            float s, float *ar, float *ai)
{
    const float ddr = ffbp_ddr(r, delta, s);
    const float t = r->fb + (delta + ddr) * r->inv_dr;
    if (!(fabsf(t) < 1e8f)) return;
    const float ft = floorf(t);
    const int n = r->ib + (int)ft;
    if (n < 0 || n >= r->nr - 1) return;
    const float u = t - ft;
    const sarbp_c32 *p = prof + r->off;
    float vr, vi;
    if (cubic) {
        float w[4];
        ffbp_wcubic(u, w);
        vr = vi = 0.0f;
        for (int k = 0; k < 4; k++) {
            const int b = n + k - 1;
            if (b < 0 || b >= r->nr) continue;
            const sarbp_c32 a = FFBP_LDG(p + b);
            vr += w[k] * a.re;
            vi += w[k] * a.im;
        }
    } else {
        const sarbp_c32 a = FFBP_LDG(p + n), b = FFBP_LDG(p + n + 1);
        vr = a.re + u * (b.re - a.re);
        vi = a.im + u * (b.im - a.im);
    }
    ffbp_rot_add(vr, vi, r->ph + r->kd * delta + r->ki * ddr, ar, ai);
}

/* Merge: child r's value at the parent sample (delta, s), remodulated to
 * the parent's demodulation, added to (ar, ai). kids: the previous stage's
 * buffer. */
FFBP_HD void ffbp_child_add(const sarbp_c32 *kids, const sarbp_ffbp_ref *r, float delta, float s,
                            float *ar, float *ai)
{
    const float ddr = ffbp_ddr(r, delta, s);
    const float tr = r->fb + (delta + ddr) * r->inv_dr;
    const float tt = r->fj + atan2f(s * r->cr, r->q0 + s * r->dw) * r->inv_dt;
    float vr, vi;
    if (!ffbp_read2(kids, r, tr, tt, &vr, &vi)) return;
    ffbp_rot_add(vr, vi, r->ph + r->ki * ddr, ar, ai);
}

/* Final sum: sub-image r's value at the pixel (dix, diy) pixels from the
 * reference pixel, (sx, sy) = (dix dx, diy dy) metres, added to (ar, ai).
 * The range offset splits into its linear part L = s.u, whose phase is
 * exact in whole pixels (cx, cy reduced in FP64), and the small remainder
 * |s x u|^2 / (2 rho_c + 2 L + ...), which has no cancellation. */
FFBP_HD void ffbp_pixel_add(const sarbp_c32 *subs, const sarbp_ffbp_ref *r, int dix, int diy,
                            float sx, float sy, float *ar, float *ai)
{
    const float L = sx * r->ux + sy * r->uy;
    const float px = sx * r->uy - sy * r->ux;
    const float d2 = ((sx * sx + sy * sy) * (r->uz * r->uz) + px * px) / (2.0f * (r->rho_c + L));
    const float tr = r->fb + (L + d2) * r->inv_dr;
    const float tt = r->fj + atan2f(-px, r->qn + L) * r->inv_dt;
    float vr, vi;
    if (!ffbp_read2(subs, r, tr, tt, &vr, &vi)) return;
    ffbp_rot_add(vr, vi, r->ph + r->cx * (float)dix + r->cy * (float)diy + r->ki * d2, ar, ai);
}

/* k reflected into [0, n) (whole-sample mirror, the prototype's ends) */
FFBP_HD int ffbp_mirror(int k, int n)
{
    if (n < 2) return 0;
    while (k < 0 || k >= n) k = k < 0 ? -k : 2 * (n - 1) - k;
    return k;
}

/* The cubic B-spline prefilter as its symmetric FIR form: the inverse of
 * (1, 4, 1) / 6 has the impulse response sqrt(3) z^|m|, z = sqrt(3) - 2;
 * truncated at |m| <= SARBP_FFBP_PF_K (the tail is below 3e-6 of the
 * signal, -110 dB), applied with mirrored ends. Output sample k of a line
 * of n samples at stride st. */
FFBP_HD sarbp_c32 ffbp_prefilter_at(const sarbp_c32 *line, int n, long long st, int k)
{
    const float z = -0.26794919243112270f;
    float h = 1.7320508075688772f, sr = 0.0f, si = 0.0f;
    {
        const sarbp_c32 a = FFBP_LDG(line + (long long)k * st);
        sr = h * a.re;
        si = h * a.im;
    }
    if (k >= SARBP_FFBP_PF_K && k + SARBP_FFBP_PF_K < n) { /* interior: no reflection */
        const sarbp_c32 *c = line + (long long)k * st;
        for (int m = 1; m <= SARBP_FFBP_PF_K; m++) {
            h *= z;
            const sarbp_c32 a = FFBP_LDG(c - m * st), b = FFBP_LDG(c + m * st);
            sr += h * (a.re + b.re);
            si += h * (a.im + b.im);
        }
    } else {
        for (int m = 1; m <= SARBP_FFBP_PF_K; m++) {
            h *= z;
            const sarbp_c32 a = FFBP_LDG(line + (long long)ffbp_mirror(k - m, n) * st);
            const sarbp_c32 b = FFBP_LDG(line + (long long)ffbp_mirror(k + m, n) * st);
            sr += h * (a.re + b.re);
            si += h * (a.im + b.im);
        }
    }
    sarbp_c32 o = {sr, si};
    return o;
}

/* The same filter down a column, SARBP_FFBP_PF_R outputs j0 .. j0 + R - 1
 * (those < n) from one pass over the R + 2K samples they need (R + 2K
 * loads instead of R (2K + 1)), written to out at stride ost. */
FFBP_HD void ffbp_prefilter_run(const sarbp_c32 *line, int n, long long st, int j0, sarbp_c32 *out,
                                long long ost)
{
    /* sqrt(3) z^m, z = sqrt(3) - 2 */
    const float h[SARBP_FFBP_PF_K + 1] = {
        1.732050808e+00f, -4.641016151e-01f, 1.243556530e-01f,
        -3.332099679e-02f, 8.928334181e-03f, -2.392339934e-03f,
        6.410255532e-04f, -1.717622793e-04f, 4.602356403e-05f,
        -1.233197682e-05f, 3.304343229e-06f};
    float ar[SARBP_FFBP_PF_R], ai[SARBP_FFBP_PF_R];
    for (int q = 0; q < SARBP_FFBP_PF_R; q++) ar[q] = ai[q] = 0.0f;
    const int inner = j0 >= SARBP_FFBP_PF_K && j0 + SARBP_FFBP_PF_R + SARBP_FFBP_PF_K <= n;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int kk = 0; kk < SARBP_FFBP_PF_R + 2 * SARBP_FFBP_PF_K; kk++) {
        const int k = j0 - SARBP_FFBP_PF_K + kk;
        const sarbp_c32 x = FFBP_LDG(line + (long long)(inner ? k : ffbp_mirror(k, n)) * st);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int q = 0; q < SARBP_FFBP_PF_R; q++) {
            const int m = kk - SARBP_FFBP_PF_K - q, am = m < 0 ? -m : m;
            if (am <= SARBP_FFBP_PF_K) {
                ar[q] += h[am] * x.re;
                ai[q] += h[am] * x.im;
            }
        }
    }
    for (int q = 0; q < SARBP_FFBP_PF_R && j0 + q < n; q++) {
        sarbp_c32 o = {ar[q], ai[q]};
        out[(long long)(j0 + q) * ost] = o;
    }
}

/* ---- the launchers (ffbp.cu) ------------------------------------------- */

/* Everything one FFBP run needs on the device, built by the host plan. */
typedef struct {
    int nstages;                       /* stage 0 and the merges */
    const sarbp_ffbp_dsub *subs;       /* every stage's sub-images, stage s at sub0[s].. */
    const sarbp_ffbp_drow *rows;       /* every stage's rows, stage s at row0[s].. */
    long long sub0[SARBP_FFBP_MAX_STAGES + 1], row0[SARBP_FFBP_MAX_STAGES + 1];
    int max_nr[SARBP_FFBP_MAX_STAGES];
    const sarbp_dpulse *pulses;        /* [np] */
    const sarbp_c32 *prof;             /* [np][nbins] */
    int np, nbins, cubic;
    sarbp_c32 *buf[2];                 /* ping-pong, each holding the largest stage */
    sarbp_c32 *img;                    /* [ny][nx], written (not accumulated) */
    int nx, ny;
    double x0, y0, dx, dy, z;          /* pixel (ix, iy) at (x0 + ix dx, y0 + iy dy, z) */
    double kc;                         /* demodulation wavenumber, rad/m */
    int final_chunks;                  /* the final sum in this many row chunks (0: one) */
    int stage0_done;                   /* stage 0 and its prefilter ran already (streamed by
                                          sarbp_ffbp_launch_stage0 as the pulses came) */
} sarbp_ffbp_run;

/* The buffer (0 or 1) that holds the last stage's coefficients after a run. */
static inline int sarbp_ffbp_last_buf(int nstages) { return (nstages - 1) & 1; }

/* At most this many row chunks of the final sum, each marked when done, so
 * that its rows can go back to the host while the next ones are summed. */
#define SARBP_FFBP_MAX_CHUNKS 8

/* The first image row of final-sum chunk c of nchunks (c = nchunks: ny):
 * chunks are whole rows of tiles, so each pixel is summed exactly as in one
 * launch. */
static inline int sarbp_ffbp_chunk_row(int ny, int nchunks, int c)
{
    const long long tiles = ((long long)ny + SARBP_FFBP_TILE_Y - 1) / SARBP_FFBP_TILE_Y;
    const long long row = tiles * c / (nchunks > 0 ? nchunks : 1) * SARBP_FFBP_TILE_Y;
    return row < ny ? (int)row : ny;
}

/* Launches the whole computation on stream: stage 0 into buf[0], each
 * merge into the other buffer (the prefilter uses the dead one as scratch),
 * then the final sum into img, in max(final_chunks, 1) row chunks
 * (sarbp_ffbp_chunk_row; at most SARBP_FFBP_MAX_CHUNKS). marks: NULL, or
 * 2 nstages + chunks events (cudaEvent_t) recorded after stage 0 (mark 0),
 * after stage s's merge (2 s, s >= 1), after stage s's prefilter (2 s + 1)
 * and after each chunk c of the final sum (2 nstages + c; the last one
 * after the whole run). Returns a cudaError_t as int (the first failing launch);
 * cudaErrorInvalidValue when a precondition does not hold (sizes within
 * int, nstages within range). Never prints. */
int sarbp_ffbp_launch(const sarbp_ffbp_run *run, void *stream, void *const *marks);

/* Stage 0 and its prefilter over stage 0's rows [row_a, row_b) (counted
 * from its first row; whole sub-images, which own consecutive rows), into
 * buf[0] with buf[1] as scratch: the sub-apertures whose pulses are on the
 * device already, while the rest are still being compressed. Each row is
 * computed exactly as in sarbp_ffbp_launch; a run whose every stage-0 row
 * went this way sets stage0_done before launching the rest. Returns a
 * cudaError_t as int, as sarbp_ffbp_launch. */
int sarbp_ffbp_launch_stage0(const sarbp_ffbp_run *run, long long row_a, long long row_b, void *stream);

#ifdef __cplusplus
}
#endif
#endif
