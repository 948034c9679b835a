/* backproject.cu - backprojection kernels, one computation in numbered variants.
 *
 * The variants' names, ids, summaries and preconditions are one table,
 * kernels/backproject_variants.c (sarbp/cuda_variants.h); the template
 * parameter V below is a variant's id, written by its name (SARBP_CUDA_V3A).
 *
 *   v1   one thread per pixel, FP64 arithmetic, plain global loads. Slow and
 *        obviously right: the baseline to beat and the GPU-side reference.
 *   v2   tiled and tile-relative in FP32 (primer, section 4): a block owns a
 *        tile; per chunk of pulses, the per-(tile, pulse) terms are computed
 *        in FP64 and staged in shared memory; per pixel the differential
 *        range relative to the tile centre uses the exact cancellation-free
 *        formula ddR = 2x / (sqrt(1 + 4qx) + 1) (IEEE sqrt and divide).
 *   v3   v2 with the instruction count cut for issue-bound Hopper SMs:
 *        ddR from its series x (1 - e + 2e^2), e = x q (no sqrt or divide,
 *        truncation below 1e-10 m for tiles of a few metres at 10 km), the
 *        bin floor by one add rounding down onto a 1.5*2^23 pedestal (no
 *        conversion instructions), the integer part of the bin kept apart
 *        from its fraction, one load of an interpolation-ready bin (linear
 *        and quadratic rows indexed by the rounding's bits alone, the row
 *        folded back by the tile centre's bin: fold_bins), and the
 *        tile-centre phase folded into the sincos argument. The default.
 *   v3a  v3 with a float-float phase argument: the product ddR * (2 f / c)
 *        carried as two floats and reduced to cycles before sincos. The
 *        accurate variant.
 *   v4   v3 with the bins a tile needs staged in shared memory (seed 000):
 *        per chunk of V4_CHUNK pulses the block copies each pulse's window
 *        of 2S + 2 bins around the tile centre's bin (S from the tile's
 *        half diagonal and the launch's largest 1/dr, so every pixel's bin
 *        falls inside), bins off the profile staged as zeros, so the inner
 *        loop has no bounds check and reads shared instead of L1.
 *
 * Interpolation: every variant reads a pixel's bin as one polynomial in the
 * bin fraction (bp_kernels.h): linear (value, difference) or the cubic
 * B-spline's A + t (B + t (C + t D)), selected per launch (template C).
 *
 * Precision of the profiles: FP32 (float4 per linear bin, two per cubic
 * bin), FP16 (half2 coefficients: 8 bytes linear, 16 cubic) or mixed (cubic:
 * A, B a float4, C, D a half4 in a second array of the row; 24 bytes, one
 * 16-byte and one 8-byte gather; quadratic, M without C: A float2, B, C
 * half2, one 16-byte gather, read at the nearest bin), per launch
 * (templates H, M). FP16 and
 * mixed profiles carry a power-of-two scale per pulse block (bp_kernels.h);
 * FP16 interpolation runs in packed half2 arithmetic, mixed in FP32 (C, D
 * widened); the range, bin and phase stay FP32 (tile-relative), the sums
 * stay FP32, and the scale is divided out once when the sums are added to
 * the image. v4 does not stage mixed cubic bins (the table's MIXED flag);
 * it stages the quadratic's like FP32 linear ones (16 bytes).
 *
 * Work split of the tiled variants: a thread block of tile_x x (tile_y /
 * ppt) threads owns a tile of tile_x x tile_y pixels; thread (tx, ty) owns
 * the ppt pixels (tx, ty + k * blockDim.y), which share their x offset. The
 * block walks the pulses in chunks of CHUNK: threads 0..CHUNK-1 compute the
 * chunk's tile terms in FP64 into shared memory, then every thread runs the
 * chunk over its pixels from registers. Range bins are read through the
 * read-only/L1 path (__ldg). Each pixel is owned by one thread: no atomics;
 * the block adds its sums into the image once per launch. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bp_kernels.h"

#define CHUNK 64
#define V4_CHUNK 16
#define MAGIC 12582912.0f /* 1.5 * 2^23: adding it leaves floor(x) in the mantissa */
#define MAGIC_I 0x4B400000
#define C_LIGHT 299792458.0

/* ---- v1 ------------------------------------------------------------------ */

/* bin n of an interpolation-ready profile row of nbins bins: its
 * polynomial's complex coefficients c[0..1] (linear) or c[0..3] (cubic) as
 * float2 */
template <bool H, bool C, bool M>
__device__ __forceinline__ void bin_coeffs(const void *prof, int n, int nbins, float2 c[4])
{
    if (M && !C) { /* quadratic: A, then B, C as half2 */
        const float4 r = ((const float4 *)prof)[n];
        c[0] = make_float2(r.x, r.y);
        c[1] = __half22float2(*(const __half2 *)&r.z);
        c[2] = __half22float2(*(const __half2 *)&r.w);
    } else if (M) {
        const float4 r = ((const float4 *)prof)[n];
        const uint2 q = ((const uint2 *)((const float4 *)prof + nbins))[n];
        c[0] = make_float2(r.x, r.y);
        c[1] = make_float2(r.z, r.w);
        c[2] = __half22float2(*(const __half2 *)&q.x);
        c[3] = __half22float2(*(const __half2 *)&q.y);
    } else if (H && C) {
        const uint4 r = ((const uint4 *)prof)[n];
        c[0] = __half22float2(*(const __half2 *)&r.x);
        c[1] = __half22float2(*(const __half2 *)&r.y);
        c[2] = __half22float2(*(const __half2 *)&r.z);
        c[3] = __half22float2(*(const __half2 *)&r.w);
    } else if (H) {
        const uint2 r = ((const uint2 *)prof)[n];
        c[0] = __half22float2(*(const __half2 *)&r.x);
        c[1] = __half22float2(*(const __half2 *)&r.y);
    } else {
        const float4 r = ((const float4 *)prof)[C ? 2 * n : n];
        c[0] = make_float2(r.x, r.y);
        c[1] = make_float2(r.z, r.w);
        if (C) {
            const float4 q = ((const float4 *)prof)[2 * n + 1];
            c[2] = make_float2(q.x, q.y);
            c[3] = make_float2(q.z, q.w);
        }
    }
}

/* 2^-e for the launch's FP16 or mixed scale (S); 1 for FP32 profiles */
template <bool S>
__device__ __forceinline__ float inv_scale(const sarbp_bp_launch &a)
{
    return S && a.d_bound ? ldexpf(1.0f, -sarbp_half_exp(*a.d_bound)) : 1.0f;
}

template <bool H, bool C, bool M, bool T>
__global__ void bp_v1_kernel(sarbp_bp_launch a)
{
    const size_t row_bytes = SARBP_ROW_BYTES(H, M, C, a.nbins);
    const int ix = blockIdx.x * blockDim.x + threadIdx.x;
    const int iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= a.nx || iy >= a.ny) return;
    const double x = a.x0 + ix * a.dx, y = a.y0 + iy * a.dy;
    const double z = T ? a.d_height[(size_t)iy * a.nx + ix] : a.z;
    double re = 0, im = 0;
    for (int i = 0; i < a.np; i++) {
        const sarbp_dpulse p = a.d_pulses[i];
        const double dx = x - p.ax, dy = y - p.ay, dz = z - p.az;
        const double dR = sqrt(dx * dx + dy * dy + dz * dz) - p.r0;
        const double b = (dR - p.rstart) * p.inv_dr;
        const double fb = M && !C ? floor(b + 0.5) : floor(b); /* quadratic: the nearest bin */
        if (!(fb >= 0) || fb + 1 >= a.nbins) continue;
        const int n = (int)fb;
        const double t = b - fb;
        float2 q[4];
        bin_coeffs<H, C, M>((const char *)a.d_prof + (size_t)i * row_bytes, n, a.nbins, q);
        double vr, vi;
        if (M && !C) {
            vr = q[0].x + t * (q[1].x + t * (double)q[2].x);
            vi = q[0].y + t * (q[1].y + t * (double)q[2].y);
        } else if (C) {
            vr = q[0].x + t * (q[1].x + t * (q[2].x + t * (double)q[3].x));
            vi = q[0].y + t * (q[1].y + t * (q[2].y + t * (double)q[3].y));
        } else {
            vr = q[0].x + t * q[1].x;
            vi = q[0].y + t * q[1].y;
        }
        double s, c;
        sincospi(4.0 * p.fref * dR / C_LIGHT, &s, &c);
        re += vr * c - vi * s;
        im += vr * s + vi * c;
    }
    const double inv = inv_scale<H || M>(a);
    float2 *img = (float2 *)a.d_img + (size_t)iy * a.nx + ix;
    float2 o = *img;
    o.x += (float)(re * inv);
    o.y += (float)(im * inv);
    *img = o;
}

/* ---- tiled variants ------------------------------------------------------ */

struct tile_terms {
    float4 a[CHUNK]; /* Ux, Uy (unit vector a->tile centre, x and y), q = 1/(2 Rc), bin fraction */
    float uz[CHUNK]; /* terrain: the height's coefficient in the range term (tiled_body) */
    double vz[CHUNK]; /* terrain: z - az of the tile centre, and Rc (FP64) */
    double rc[CHUNK];
    float4 b[CHUNK]; /* 1/dr, tile phase (rad, [0, 2pi)), 2 pi * 2 f / c, tile phase (cycles) */
    float2 k[CHUNK]; /* 2 f / c as a float-float (hi, lo) */
    int2 i[CHUNK];   /* integer bin of the tile centre - MAGIC_I; 1 when the whole tile's bins
                        are inside, 0 when some may not be, 2 when the tile is far outside */
};

/* FP64 terms of pulse i for the tile centred at (xc, yc, z). Returns
 * whether the first-order range series holds for this pulse over the tile
 * (the launcher's series1_ok, with this pulse's own range and frequency):
 * terrain tiles decide it per chunk of pulses. */
__device__ static int compute_terms(tile_terms &s, int slot, const sarbp_dpulse &p, double xc,
                                    double yc, double z, double half_diag, int nbins)
{
    const double ux = xc - p.ax, uy = yc - p.ay, uz = z - p.az;
    const double Rc = sqrt(ux * ux + uy * uy + uz * uz);
    const double dRc = Rc - p.r0;
    const double bc = (dRc - p.rstart) * p.inv_dr;
    const double bcf = floor(bc);
    const double span = half_diag * p.inv_dr + 2.0;
    int inside = bc - span >= 0.0 && bc + span <= (double)(nbins - 2);
    int ic = 0;
    if (fabs(bcf) < 1.0e9) ic = (int)bcf;
    else inside = 2; /* far outside: the checked path clamps and weights 0 */
    const double kc = 2.0 * p.fref / C_LIGHT;
    const double cyc = kc * dRc;
    const double phc = cyc - floor(cyc);
    const float khi = (float)kc;
    s.a[slot] = make_float4((float)(ux / Rc), (float)(uy / Rc), (float)(0.5 / Rc), (float)(bc - bcf));
    s.b[slot] = make_float4((float)p.inv_dr, (float)(2.0 * M_PI * phc), (float)(2.0 * M_PI * kc),
                            (float)phc);
    s.k[slot] = make_float2(khi, (float)(kc - (double)khi));
    s.i[slot] = make_int2(ic - MAGIC_I, inside);
    s.vz[slot] = uz;
    s.rc[slot] = Rc;
    const double x = 1.01 * half_diag, r = Rc - x;
    const double err = r > 0 ? 2.0 * x * x * x * (0.25 / (r * r)) : INFINITY;
    return err * kc < 1e-6 && err * p.inv_dr < 1e-5;
}

/* One pixel, one pulse. V selects the variant; CHECK the bounds-checked path
 * for pulses whose bins the tile may leave. */
/* Interpolated sample at bin n + t of an interpolation-ready row: FP32
 * FMAs (Horner for cubic), or packed half2 FMAs for FP16 rows, one load of
 * the bin (two 16-byte loads for FP32 cubic; mixed: a 16-byte load from the
 * row's AB array and an 8-byte one from its CD array cd, C and D widened to
 * FP32). SHARED: the row is in shared memory (plain loads) rather than
 * global (read-only path); not for mixed rows. */
template <bool H, bool C, bool M, bool SHARED, typename I = int>
__device__ __forceinline__ void interp(const void *row, const void *cd, I n, float t, float &vr,
                                       float &vi)
{
    static_assert(!M || (!H && (!SHARED || !C)), "mixed bins have FP32 A; cubic ones are read "
                                                 "from global");
    if (M && !C) { /* quadratic, t in [-1/2, 1/2]: B + t C in half2 (one packed FMA, one
                      widening), A + t (B + t C) in FP32; the half2 step errs below
                      2^-12 |t (B + t C)| <= 2^-13 |B| + 2^-14 |C| */
        const float4 r = SHARED ? ((const float4 *)row)[n] : __ldg((const float4 *)row + n);
        const __half2 bc = __hfma2(__float2half2_rn(t), *(const __half2 *)&r.w,
                                   *(const __half2 *)&r.z);
        const float2 f = __half22float2(bc);
        vr = fmaf(t, f.x, r.x);
        vi = fmaf(t, f.y, r.y);
    } else if (M) {
        const float4 ab = __ldg((const float4 *)row + n);
        const uint2 r = __ldg((const uint2 *)cd + n);
        const float2 c = __half22float2(*(const __half2 *)&r.x);
        const float2 d = __half22float2(*(const __half2 *)&r.y);
        vr = fmaf(t, fmaf(t, fmaf(t, d.x, c.x), ab.z), ab.x);
        vi = fmaf(t, fmaf(t, fmaf(t, d.y, c.y), ab.w), ab.y);
    } else if (H && C) {
        const uint4 r = SHARED ? ((const uint4 *)row)[n] : __ldg((const uint4 *)row + n);
        const __half2 th = __float2half2_rn(t);
        __half2 v = __hfma2(th, *(const __half2 *)&r.w, *(const __half2 *)&r.z);
        v = __hfma2(th, v, *(const __half2 *)&r.y);
        v = __hfma2(th, v, *(const __half2 *)&r.x);
        const float2 f = __half22float2(v);
        vr = f.x;
        vi = f.y;
    } else if (C) {
        const float4 *q = (const float4 *)row + 2 * n;
        const float4 ab = SHARED ? q[0] : __ldg(q), cd = SHARED ? q[1] : __ldg(q + 1);
        vr = fmaf(t, fmaf(t, fmaf(t, cd.z, cd.x), ab.z), ab.x);
        vi = fmaf(t, fmaf(t, fmaf(t, cd.w, cd.y), ab.w), ab.y);
    } else if (H) {
        const uint2 r = SHARED ? ((const uint2 *)row)[n] : __ldg((const uint2 *)row + n);
        const __half2 v = __hfma2(__float2half2_rn(t), *(const __half2 *)&r.y, *(const __half2 *)&r.x);
        const float2 f = __half22float2(v);
        vr = f.x;
        vi = f.y;
    } else {
        const float4 v = SHARED ? ((const float4 *)row)[n] : __ldg((const float4 *)row + n);
        vr = fmaf(t, v.z, v.x);
        vi = fmaf(t, v.w, v.y);
    }
}

/* The bytes of one linear or quadratic bin (fold_bins' step): FP16
 * linear 8 (half2 value, difference), FP32 linear and the quadratic 16. */
template <bool H, bool M>
__host__ __device__ constexpr int line_bin_bytes()
{
    return H && !M ? 8 : 16;
}

/* row moved back by MAGIC_I - ic bins (icm = ic - MAGIC_I), so that the
 * bits of a pixel's rounded bin (MAGIC_I + its bin, relative to the tile
 * centre's ic) index it directly: one address instruction a pair fewer
 * than adding icm to each. Unsigned arithmetic: the moved pointer lies far
 * outside the row (about 10 GB before it) and is only ever indexed back. */
__device__ __forceinline__ const void *fold_bins(const void *row, int icm, int bytes)
{
    return (const void *)((uintptr_t)row + (uintptr_t)((long long)icm * bytes));
}

/* FOLD: prof is fold_bins'd by icm (the unchecked path of v3 and v3a in
 * global memory, linear and quadratic rows: tiled_chunk), a pixel's bin is
 * the rounding's bits alone. */
template <int V, int ORD, bool CHECK, bool H, bool C, bool M, bool SHARED, bool FOLD = false>
__device__ __forceinline__ void pixel_pulse(float Uxdx, float Uy, float q, float fcb, float inv_dr,
                                            float phrad, float krad, float phcyc, float2 kc,
                                            int icm, const void *__restrict__ prof,
                                            const void *__restrict__ cd, int nbins, float dy,
                                            float dd, float &are, float &aim)
{
    const float x = fmaf(Uy, dy, fmaf(q, dd, Uxdx)); /* (2 d.u + |d|^2) / (2 Rc) */
    float ddR;
    if (V == SARBP_CUDA_V2) {
        ddR = 2.0f * x / (sqrtf(fmaf(4.0f * q, x, 1.0f)) + 1.0f);
    } else if (ORD == 1) { /* x (1 - e): the launcher checked 2 x^3 q^2 is negligible */
        ddR = fmaf(-x * q, x, x);
    } else {
        const float e = x * q;
        ddR = x * fmaf(e, fmaf(2.0f, e, -1.0f), 1.0f);
    }
    const float fb = fmaf(ddR, inv_dr, fcb);
    int n;
    unsigned bits = 0; /* MAGIC_I + the bin relative to the tile centre's ic */
    float t;
    if (V == SARBP_CUDA_V2) {
        const float fl = M && !C ? floorf(fb + 0.5f) : floorf(fb);
        n = (int)fl + icm + MAGIC_I;
        t = fb - fl;
    } else { /* quadratic (M, not C): the nearest bin, t in [-1/2, 1/2] */
        const float y = M && !C ? __fadd_rn(fb, MAGIC) : __fadd_rd(fb, MAGIC);
        bits = __float_as_uint(y);
        n = (int)bits + icm;
        t = fb - (y - MAGIC);
    }
    float w = 1.0f;
    if (CHECK) {
        const int nc = min(max(n, 0), nbins - 2);
        w = nc == n ? 1.0f : 0.0f;
        n = nc;
    }
    float vr, vi;
    static_assert(!FOLD || (!CHECK && !SHARED && !C && V != SARBP_CUDA_V2),
                  "folded rows: linear and quadratic, v3 and v3a, unchecked, in global memory");
    if (FOLD) /* the bits index the folded row */
        interp<H, C, M, SHARED, unsigned>(prof, cd, bits, t, vr, vi);
    else
        interp<H, C, M, SHARED>(prof, cd, n, t, vr, vi);
    if (CHECK) {
        vr *= w;
        vi *= w;
    }
    float s, c;
    if (V == SARBP_CUDA_V3A) { /* float-float phase, reduced to cycles */
        const float chi = ddR * kc.x;
        const float cerr = fmaf(ddR, kc.x, -chi);
        const float clo = fmaf(ddR, kc.y, cerr);
        const float r = chi - ((chi + MAGIC) - MAGIC);
        const float cyc = (r + clo) + phcyc;
        __sincosf(6.283185307179586f * cyc, &s, &c);
    } else if (V == SARBP_CUDA_V2) {
        sincosf(fmaf(ddR, krad, phrad), &s, &c);
    } else {
        __sincosf(fmaf(ddR, krad, phrad), &s, &c);
    }
    are = fmaf(vr, c, are);
    are = fmaf(-vi, s, are);
    aim = fmaf(vr, s, aim);
    aim = fmaf(vi, c, aim);
}

/* adds a thread's sums (scale divided out once: S, FP16 or mixed) into the image */
template <bool S, int PPT>
__device__ __forceinline__ void add_sums(const sarbp_bp_launch &a, int ix, int iy0, int by,
                                         const float *are, const float *aim)
{
    if (ix >= a.nx) return;
    const float inv = inv_scale<S>(a);
    float2 *img = (float2 *)a.d_img;
#pragma unroll
    for (int k = 0; k < PPT; k++) {
        const int iy = iy0 + k * by;
        if (iy < a.ny) {
            float2 o = img[(size_t)iy * a.nx + ix];
            o.x = fmaf(are[k], inv, o.x);
            o.y = fmaf(aim[k], inv, o.y);
            img[(size_t)iy * a.nx + ix] = o;
        }
    }
}

/* The pulses of one chunk over a thread's PPT pixels. */
/* T (terrain): each pixel's height offset dz from the tile's reference
 * height adds Uz dz to the range term (one FMA a pair). */
template <int V, int ORD, int PPT, bool H, bool C, bool M, bool T>
__device__ __forceinline__ void tiled_chunk(const tile_terms &s, int cnt, const char *prof0,
                                            size_t row_bytes, int nbins, float dx, const float *dy,
                                            const float *dz, const float *dd, float *are, float *aim)
{
    for (int j = 0; j < cnt; j++) {
        const float4 ta = s.a[j], tb = s.b[j];
        const int2 ti = s.i[j];
        const float2 kc = V == SARBP_CUDA_V3A ? s.k[j] : make_float2(0.f, 0.f);
        const float uz = T ? s.uz[j] : 0.0f;
        const void *prof = prof0 + (size_t)j * row_bytes;
        const void *cd = M ? (const void *)((const float4 *)prof + nbins) : nullptr;
        const float Uxdx = ta.x * dx;
        if (ti.y == 1) {
            /* every bin inside: v3 and v3a read linear and quadratic rows
             * folded by icm (one instruction a pair fewer: FP16 linear 32x
             * 1000-1004 against 979-983 Gbp/s, the default quadratic 922-924
             * against 909-910, 2026-11-29, H200); not cubic rows (1% slower
             * folded: FP32 754 against 762, FP16 901 against 910) nor the
             * quadratic on terrain (770 against 817: its dz already presses
             * the registers, launch_tiled) */
            constexpr bool F = V != SARBP_CUDA_V2 && !C && !(T && M);
            const void *pf = F ? fold_bins(prof, ti.x, line_bin_bytes<H, M>()) : prof;
#pragma unroll
            for (int k = 0; k < PPT; k++)
                pixel_pulse<V, ORD, false, H, C, M, false, F>(T ? fmaf(uz, dz[k], Uxdx) : Uxdx, ta.y, ta.z, ta.w,
                                                              tb.x, tb.y, tb.z, tb.w, kc, ti.x, pf, cd, nbins,
                                                              dy[k], dd[k], are[k], aim[k]);
        } else {
#pragma unroll
            for (int k = 0; k < PPT; k++)
                pixel_pulse<V, ORD, true, H, C, M, false>(T ? fmaf(uz, dz[k], Uxdx) : Uxdx, ta.y, ta.z, ta.w,
                                                          tb.x, tb.y, tb.z, tb.w, kc, ti.x, prof, cd, nbins,
                                                          dy[k], dd[k], are[k], aim[k]);
        }
    }
}

/* A thread's place in its block's tile: the tile centre (FP64), its pixels'
 * offsets from it (FP32, small), and zeroed sums. Thread (tx, ty) owns the
 * PPT pixels (tx, ty + k * blockDim.y). */
template <int PPT, bool T = false>
struct tile_thread {
    int tid, ix, iy0, by;
    double xc, yc, zc, half_diag;
    double vz_ref;   /* terrain: the vertical offset folded into dd (tiled_body) */
    float dzmax;     /* terrain: the tile's largest |dz| */
    float dx, dy[PPT], dz[T ? PPT : 1], dd[PPT], are[PPT], aim[PPT];

    __device__ __forceinline__ explicit tile_thread(const sarbp_bp_launch &a)
    {
        const int bx = blockDim.x;
        by = blockDim.y;
        const int tile_h = by * PPT;
        tid = threadIdx.y * bx + threadIdx.x;
        ix = blockIdx.x * bx + threadIdx.x;
        iy0 = blockIdx.y * tile_h + threadIdx.y;
        const double cx = 0.5 * (bx - 1), cy = 0.5 * (tile_h - 1);
        xc = a.x0 + (blockIdx.x * bx + cx) * a.dx;
        yc = a.y0 + (blockIdx.y * tile_h + cy) * a.dy;
        half_diag = 0.5 * sqrt((bx * a.dx) * (bx * a.dx) + (tile_h * a.dy) * (tile_h * a.dy));
        dx = (float)((threadIdx.x - cx) * a.dx);
        zc = a.z;
        if (T) {
            /* the tile's reference height: the mean of the (up to) four
             * pixels about its centre, clamped into the image; each pixel's
             * offset from it in FP32 (small: the slope across a tile) */
            const int x0 = blockIdx.x * bx, y0 = blockIdx.y * tile_h;
            const int xa = min(x0 + (bx - 1) / 2, a.nx - 1), xb = min(x0 + bx / 2, a.nx - 1);
            const int ya = min(y0 + (tile_h - 1) / 2, a.ny - 1), yb = min(y0 + tile_h / 2, a.ny - 1);
            const double *h = a.d_height;
            zc = 0.25 * (h[(size_t)ya * a.nx + xa] + h[(size_t)ya * a.nx + xb] + h[(size_t)yb * a.nx + xa] +
                         h[(size_t)yb * a.nx + xb]);
        }
        dzmax = 0.0f;
        vz_ref = 0.0;
#pragma unroll
        for (int k = 0; k < PPT; k++) {
            dy[k] = (float)((threadIdx.y + k * by - cy) * a.dy);
            dd[k] = dx * dx + dy[k] * dy[k];
            if (T) { /* pixels past the image's edge take its nearest pixel's height */
                const int px = min(ix, a.nx - 1), py = min(iy0 + k * by, a.ny - 1);
                dz[k] = (float)(a.d_height[(size_t)py * a.nx + px] - zc);
                dd[k] = fmaf(dz[k], dz[k], dd[k]);
                dzmax = fmaxf(dzmax, fabsf(dz[k]));
            }
            are[k] = 0.0f;
            aim[k] = 0.0f;
        }
        if (T) { /* the tile's pixels reach further: its largest height offset */
            __shared__ int dzmax_bits;
            if (tid == 0) dzmax_bits = 0;
            __syncthreads();
            atomicMax(&dzmax_bits, __float_as_int(dzmax)); /* non-negative floats order as ints */
            __syncthreads();
            dzmax = __int_as_float(dzmax_bits);
            half_diag = sqrt(half_diag * half_diag + (double)dzmax * dzmax);
        }
    }
};

template <int V, int PPT, bool H, bool C, bool M, bool T>
__device__ __forceinline__ void tiled_body(const sarbp_bp_launch &a)
{
    __shared__ tile_terms s;
    tile_thread<PPT, T> t(a);

    const size_t row_bytes = SARBP_ROW_BYTES(H, M, C, a.nbins);
    for (int base = 0; base < a.np; base += CHUNK) {
        const int cnt = min(CHUNK, a.np - base);
        __syncthreads();
        int s1 = 1;
        if (t.tid < cnt)
            s1 = compute_terms(s, t.tid, a.d_pulses[base + t.tid], t.xc, t.yc, t.zc, t.half_diag, a.nbins);
        if (!T) { /* flat: the launcher's series for every tile */
            __syncthreads();
            s1 = a.series1;
        } else {
            /* Terrain. With U_z = vz / Rc and q = 1 / (2 Rc), the height's term
             * is U_z dz = q (2 vz dz): folded into a pixel's |d|^2 as
             * dd + 2 vz_ref dz, it leaves q (2 (vz - vz_ref) dz) = c dz,
             * c = (vz - vz_ref) / Rc, for each pulse. vz_ref is the chunk's first
             * pulse's; where every |c| dzmax is negligible (pulses at one
             * height: circular and straight flights) the chunk runs the flat
             * loop, else the loop that adds c dz. The series is this tile's own
             * (its half diagonal holds its height offsets). */
            __syncthreads();
            const double vz0 = s.vz[0];
            int fold = 1;
            if (t.tid < cnt) {
                const double c = (s.vz[t.tid] - vz0) / s.rc[t.tid], err = fabs(c) * t.dzmax;
                s.uz[t.tid] = (float)c;
                fold = err * s.b[t.tid].z < 1e-5 && err * s.b[t.tid].x < 1e-5; /* rad, bins */
            }
            s1 = __syncthreads_and(s1);
            fold = __syncthreads_and(fold);
            const float shift = (float)(2.0 * (vz0 - t.vz_ref));
#pragma unroll
            for (int k = 0; k < PPT; k++) t.dd[k] = fmaf(shift, t.dz[k], t.dd[k]);
            t.vz_ref = vz0;
            if (fold) {
                const char *prof0 = (const char *)a.d_prof + (size_t)base * row_bytes;
                if (s1)
                    tiled_chunk<V, 1, PPT, H, C, M, false>(s, cnt, prof0, row_bytes, a.nbins, t.dx, t.dy, t.dz,
                                                           t.dd, t.are, t.aim);
                else
                    tiled_chunk<V, 2, PPT, H, C, M, false>(s, cnt, prof0, row_bytes, a.nbins, t.dx, t.dy, t.dz,
                                                           t.dd, t.are, t.aim);
                continue;
            }
        }
        const char *prof0 = (const char *)a.d_prof + (size_t)base * row_bytes;
        if (V != SARBP_CUDA_V2 && s1)
            tiled_chunk<V, 1, PPT, H, C, M, T>(s, cnt, prof0, row_bytes, a.nbins, t.dx, t.dy, t.dz, t.dd,
                                               t.are, t.aim);
        else
            tiled_chunk<V, 2, PPT, H, C, M, T>(s, cnt, prof0, row_bytes, a.nbins, t.dx, t.dy, t.dz, t.dd,
                                               t.are, t.aim);
    }
    add_sums<H || M, PPT>(a, t.ix, t.iy0, t.by, t.are, t.aim);
}

template <int V, int PPT, bool H, bool C, bool M, bool T>
__global__ void bp_tiled_kernel(sarbp_bp_launch a)
{
    tiled_body<V, PPT, H, C, M, T>(a);
}

/* The same compiled for blocks of 64 threads with at least MINB of them
 * resident per SM: a register cap that trades registers for warps. */
template <int V, int PPT, bool H, bool C, bool M, bool T, int MINB>
__global__ void __launch_bounds__(64, MINB) bp_tiled_kernel_b(sarbp_bp_launch a)
{
    tiled_body<V, PPT, H, C, M, T>(a);
}

/* v4: v3 with each chunk's bin windows staged in shared memory. S is the
 * half width of a window (launch-wide, from v4_half_window); window j holds
 * bins ic_j - S .. ic_j + S + 1 of pulse j, zeros where the profile has no
 * bin (0 <= n <= nbins - 2 as in the checked path). */
template <int PPT, bool H, bool C, bool M>
__global__ void bp_v4_kernel(sarbp_bp_launch a, int S)
{
    __shared__ tile_terms s;
    extern __shared__ __align__(16) unsigned char v4_bins[];
    const int W = 2 * S + 2;
    const int esz = SARBP_BIN_BYTES(H, C);
    const int nthreads = blockDim.x * blockDim.y;
    tile_thread<PPT> t(a);
    const int tid = t.tid;

    const size_t row_bytes = (size_t)a.nbins * esz;
    for (int base = 0; base < a.np; base += V4_CHUNK) {
        const int cnt = min(V4_CHUNK, a.np - base);
        __syncthreads();
        if (tid < cnt) compute_terms(s, tid, a.d_pulses[base + tid], t.xc, t.yc, a.z, t.half_diag, a.nbins);
        __syncthreads();
        for (int j = 0; j < cnt; j++) {
            const int2 ti = s.i[j];
            const int n0 = ti.x + MAGIC_I - S;
            const unsigned char *src = (const unsigned char *)a.d_prof + (size_t)(base + j) * row_bytes;
            for (int w = tid; w < W; w += nthreads) {
                const int n = n0 + w;
                const bool ok = ti.y != 2 && n >= 0 && n <= a.nbins - 2;
                if (H && !C) {
                    const uint2 v = ok ? __ldg((const uint2 *)src + n) : make_uint2(0u, 0u);
                    ((uint2 *)v4_bins)[j * W + w] = v;
                } else { /* one (FP32 linear, FP16 cubic, quadratic) or two (FP32 cubic) float4 */
                    const int nq = esz / 16;
                    for (int q = 0; q < nq; q++) {
                        const float4 v = ok ? __ldg((const float4 *)src + nq * n + q)
                                            : make_float4(0.f, 0.f, 0.f, 0.f);
                        ((float4 *)v4_bins)[(j * W + w) * nq + q] = v;
                    }
                }
            }
        }
        __syncthreads();
        for (int j = 0; j < cnt; j++) {
            const float4 ta = s.a[j], tb = s.b[j];
            const void *row = v4_bins + (size_t)j * W * esz;
            const float Uxdx = ta.x * t.dx;
#pragma unroll
            for (int k = 0; k < PPT; k++)
                pixel_pulse<SARBP_CUDA_V3, 2, false, H, C, M, true>(
                    Uxdx, ta.y, ta.z, ta.w, tb.x, tb.y, tb.z, tb.w, make_float2(0.f, 0.f),
                    S - MAGIC_I, row, nullptr, a.nbins, t.dy[k], t.dd[k], t.are[k], t.aim[k]);
        }
    }
    add_sums<H || M, PPT>(a, t.ix, t.iy0, t.by, t.are, t.aim);
}

/* ---- launchers and dispatcher ---------------------------------------------- */

/* The names of the variants with all of the given flags, "v1, v2, ...". */
static void variant_names(unsigned flags, char *buf, size_t n)
{
    size_t nv, k = 0;
    const sarbp_cuda_variant *t = sarbp_cuda_variants(&nv);
    buf[0] = '\0';
    for (size_t i = 0; i < nv && k < n; i++)
        if ((t[i].flags & flags) == flags) {
            const int w = snprintf(buf + k, n - k, "%s%s", k ? ", " : "", t[i].name);
            if (w < 0) break;
            k += (size_t)w;
        }
}

extern "C" int sarbp_bp_config_resolve(sarbp_bp_config *cfg, char *why, size_t nwhy)
{
    const sarbp_cuda_variant *vt = sarbp_cuda_variant_find(cfg->variant);
    char names[128];
    if (!vt) {
        variant_names(0, names, sizeof names);
        snprintf(why, nwhy, "unknown kernel variant '%s' (%s)", cfg->variant, names);
        return -1;
    }
    cfg->variant = vt->name;
    const int tiled = (vt->flags & SARBP_CUDA_VARIANT_TILED) != 0;
    if (!tiled) { /* one pixel per thread; blocks of 16 x 16 */
        if (!cfg->tile_x) cfg->tile_x = 16;
        if (!cfg->tile_y) cfg->tile_y = 16;
        cfg->ppt = 1;
    } else {
        /* defaults from sarbp bench on an H200 (docs/benchmarks/2026-11-journal.md):
         * 16 x 32 pixels, 8 per thread, 64 threads a block: within 1% of
         * 32 x 32 (969 vs 979 Gbp/s) and 6 dB more accurate (smaller tiles);
         * the register bound by profile format (launch_tiled) */
        if (!cfg->ppt) cfg->ppt = 8;
        if (!cfg->tile_x) cfg->tile_x = 16;
        if (!cfg->tile_y) cfg->tile_y = 4 * cfg->ppt;
    }
    if (cfg->ppt != 1 && cfg->ppt != 2 && cfg->ppt != 4 && cfg->ppt != 8) {
        snprintf(why, nwhy, "pixels per thread must be 1, 2, 4 or 8, not %d", cfg->ppt);
        return -1;
    }
    if (cfg->tile_x < 1 || cfg->tile_y < cfg->ppt || cfg->tile_y % cfg->ppt) {
        snprintf(why, nwhy, "tile %dx%d: the height must be a multiple of the %d pixels per thread",
                 cfg->tile_x, cfg->tile_y, cfg->ppt);
        return -1;
    }
    const int threads = cfg->tile_x * (cfg->tile_y / cfg->ppt);
    if (threads > 1024 || (tiled && threads < CHUNK)) {
        snprintf(why, nwhy, "tile %dx%d with %d pixels per thread needs %d threads (%d..1024)",
                 cfg->tile_x, cfg->tile_y, cfg->ppt, threads, tiled ? CHUNK : 1);
        return -1;
    }
    /* minb 0: chosen per launch from the profile format (launch_tiled) */
    if (cfg->minb != 0 && cfg->minb != -1) {
        if (cfg->minb != 12 && cfg->minb != 16) {
            snprintf(why, nwhy, "resident blocks per SM must be 12 or 16, not %d", cfg->minb);
            return -1;
        }
        if (!(vt->flags & SARBP_CUDA_VARIANT_MINB) || cfg->ppt != 8 || threads != 64) {
            variant_names(SARBP_CUDA_VARIANT_MINB, names, sizeof names);
            snprintf(why, nwhy, "a resident-block bound needs one of %s with 8 pixels per "
                     "thread in blocks of 64 threads", names);
            return -1;
        }
    }
    return 0;
}

/* v4's window half width: the bins of a tile's pixels lie within
 * half_diag / dr (+ 1 for the floor, + 1 margin) of the centre's bin */
static int v4_half_window(const sarbp_bp_config *cfg, const sarbp_bp_launch *a)
{
    const double w = cfg->tile_x * a->dx, h = cfg->tile_y * a->dy;
    const double span = 0.5 * sqrt(w * w + h * h) * a->max_inv_dr;
    if (!(span >= 0) || span > 1.0e6) return -1;
    return (int)ceil(span) + 2;
}

/* First-order series allowed: its truncation 2 x^3 q^2 (x up to the tile's
 * half diagonal, q = 1 / (2 R), R the launch's smallest range less that
 * half diagonal) stays below 1e-6 cycles of phase at the highest frequency
 * (an error floor near 120 dB), and below 1e-5 of a bin. */
static int series1_ok(const sarbp_bp_config *cfg, const sarbp_bp_launch *a)
{
    const double w = cfg->tile_x * a->dx, h = cfg->tile_y * a->dy;
    const double x = 0.5 * sqrt(w * w + h * h) * 1.01;
    const double r = a->min_range - x;
    if (!(r > 0) || !(a->max_k > 0)) return 0;
    const double q = 0.5 / r, err = 2.0 * x * x * x * q * q;
    return err * a->max_k < 1e-6 && err * a->max_inv_dr < 1e-5;
}

/* Launches kernel k, or with load set only loads it: under CUDA's lazy
 * module loading (the default since CUDA 12.2) the first launch of a
 * kernel in a process loads it, which blocked the host 20-27 ms at a plan's
 * first unit on an H100 (2026-11-26, docs/benchmarks/2026-11-journal.md); asking for its
 * attributes loads it without running it. */
template <typename... P, typename... A>
static cudaError_t go(bool load, void (*k)(P...), dim3 grid, dim3 block, size_t shm, cudaStream_t st,
                      A... args)
{
    if (load) {
        cudaFuncAttributes fa;
        return cudaFuncGetAttributes(&fa, (const void *)k);
    }
    k<<<grid, block, shm, st>>>(args...);
    return cudaGetLastError();
}

template <int V, bool H, bool C, bool M, bool T>
static cudaError_t launch_tiled(const sarbp_bp_config *cfg, const sarbp_bp_launch *a0, cudaStream_t st,
                                bool load)
{
    sarbp_bp_launch a = *a0;
    /* terrain: a tile's pixels reach past its half diagonal by their height
     * offsets, which this check does not know: the tiles decide (tiled_body) */
    a.series1 = !T && series1_ok(cfg, &a);
    const dim3 block(cfg->tile_x, cfg->tile_y / cfg->ppt);
    const dim3 grid((a.nx + cfg->tile_x - 1) / cfg->tile_x, (a.ny + cfg->tile_y - 1) / cfg->tile_y);
    const int b64 = block.x * block.y == 64;
    /* the default register bound, from sarbp bench on an H200
     * (docs/benchmarks/2026-11-journal.md): 16 resident 64-thread blocks pays for FP16
     * linear (+4%), FP32 cubic (+6%), the quadratic (M without C: +1%
     * narrow, +9% on the wide problem) and FP32 linear (+6%: 1027 against
     * 969 Gbp/s, 2026-11-26); it costs FP16 cubic 4% (872 against 910).
     * Mixed cubic (H false, C true) takes FP32 cubic's (683 against 659) */
    int minb = cfg->minb;
    const int takes_minb = (sarbp_cuda_variant_by_id(V)->flags & SARBP_CUDA_VARIANT_MINB) != 0;
    if (minb == 0) minb = (takes_minb && cfg->ppt == 8 && b64 && !(H && C)) ? 16 : -1;
    /* terrain, the quadratic: its dz keeps eight more registers live, and the
     * 64-register build spills in the loop (783 Gbp/s on the bench problem
     * on a hill against 822 unbounded, the flat kernel 909; 2026-11-28) */
    if (T && M && !C && cfg->minb == 0) minb = -1;
    switch (cfg->ppt) {
    case 1: return go(load, bp_tiled_kernel<V, 1, H, C, M, T>, grid, block, 0, st, a);
    case 2: return go(load, bp_tiled_kernel<V, 2, H, C, M, T>, grid, block, 0, st, a);
    case 4: return go(load, bp_tiled_kernel<V, 4, H, C, M, T>, grid, block, 0, st, a);
    case 8:
        if (b64 && minb == 12)
            return go(load, bp_tiled_kernel_b<V, 8, H, C, M, T, 12>, grid, block, 0, st, a);
        if (b64 && minb == 16)
            return go(load, bp_tiled_kernel_b<V, 8, H, C, M, T, 16>, grid, block, 0, st, a);
        return go(load, bp_tiled_kernel<V, 8, H, C, M, T>, grid, block, 0, st, a);
    }
    return cudaErrorInvalidValue;
}

template <int PPT, bool H, bool C, bool M>
static cudaError_t launch_v4_ppt(dim3 grid, dim3 block, int S, size_t shm, const sarbp_bp_launch *a,
                                 cudaStream_t st, bool load)
{
    if (shm + sizeof(tile_terms) > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(bp_v4_kernel<PPT, H, C, M>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm);
        if (e != cudaSuccess) return e;
    }
    return go(load, bp_v4_kernel<PPT, H, C, M>, grid, block, shm, st, *a, S);
}

/* v4's staging window: the bins per pulse (2S + 2) a tile needs, in the
 * shared memory of V4_CHUNK pulses (shm); S < 0 when the span is absurd. */
#define V4_SHM_MAX (200 * 1024)
static size_t v4_shm(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, int *S)
{
    *S = v4_half_window(cfg, a);
    return *S < 0 ? 0 : (size_t)V4_CHUNK * (2 * *S + 2) * SARBP_BIN_BYTES(a->half, a->cubic);
}

extern "C" int sarbp_bp_launch_check(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, char *why,
                                     size_t nwhy)
{
    const sarbp_cuda_variant *vt = sarbp_cuda_variant_find(cfg->variant);
    if (vt && a->mixed && a->cubic && !(vt->flags & SARBP_CUDA_VARIANT_MIXED)) {
        char names[128];
        variant_names(SARBP_CUDA_VARIANT_MIXED, names, sizeof names);
        snprintf(why, nwhy, "%s does not read mixed profiles (precision mixed): use one of %s",
                 vt->name, names);
        return -1;
    }
    if (vt && a->d_height && vt->id != SARBP_CUDA_V1 && vt->id != SARBP_CUDA_V3 && vt->id != SARBP_CUDA_V3A) {
        snprintf(why, nwhy, "%s does not form on terrain (heights): use v3 (the default), v3a or v1",
                 vt->name);
        return -1;
    }
    if (vt && vt->id == SARBP_CUDA_V4) {
        int S;
        const size_t shm = v4_shm(cfg, a, &S);
        if (S < 0 || shm > V4_SHM_MAX) {
            snprintf(why, nwhy, "v4: a %dx%d tile spans %d bins per pulse: too many to stage; "
                     "use v3 or a smaller tile", cfg->tile_x, cfg->tile_y, 2 * S + 2);
            return -1;
        }
    }
    return 0;
}

template <bool H, bool C, bool M>
static int launch_v4(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, cudaStream_t st, bool load)
{
    int S;
    const size_t shm = v4_shm(cfg, a, &S);
    if (S < 0 || shm > V4_SHM_MAX) return SARBP_BP_EPRECOND;
    const dim3 block(cfg->tile_x, cfg->tile_y / cfg->ppt);
    const dim3 grid((a->nx + cfg->tile_x - 1) / cfg->tile_x, (a->ny + cfg->tile_y - 1) / cfg->tile_y);
    switch (cfg->ppt) {
    case 1: return launch_v4_ppt<1, H, C, M>(grid, block, S, shm, a, st, load);
    case 2: return launch_v4_ppt<2, H, C, M>(grid, block, S, shm, a, st, load);
    case 4: return launch_v4_ppt<4, H, C, M>(grid, block, S, shm, a, st, load);
    case 8: return launch_v4_ppt<8, H, C, M>(grid, block, S, shm, a, st, load);
    }
    return cudaErrorInvalidValue;
}

/* A cudaError_t, or SARBP_BP_EPRECOND. M: mixed profiles; v4 reads the
 * quadratic's (M without C), not mixed cubic ones (the table's MIXED flag;
 * sarbp_bp_launch_check says so). */
/* Terrain (a->d_height) is read by v1, v3 and v3a: the others answer
 * SARBP_BP_EPRECOND (sarbp_bp_launch_check says why). */
template <bool H, bool C, bool M>
static int dispatch(int v, const sarbp_bp_config *cfg, const sarbp_bp_launch *a, cudaStream_t st, bool load)
{
    const bool terrain = a->d_height != nullptr;
    switch (v) {
    case SARBP_CUDA_V1: {
        const dim3 block(cfg->tile_x, cfg->tile_y);
        const dim3 grid((a->nx + block.x - 1) / block.x, (a->ny + block.y - 1) / block.y);
        return terrain ? go(load, bp_v1_kernel<H, C, M, true>, grid, block, 0, st, *a)
                       : go(load, bp_v1_kernel<H, C, M, false>, grid, block, 0, st, *a);
    }
    case SARBP_CUDA_V2:
        return terrain ? SARBP_BP_EPRECOND : launch_tiled<SARBP_CUDA_V2, H, C, M, false>(cfg, a, st, load);
    case SARBP_CUDA_V3:
        return terrain ? launch_tiled<SARBP_CUDA_V3, H, C, M, true>(cfg, a, st, load)
                       : launch_tiled<SARBP_CUDA_V3, H, C, M, false>(cfg, a, st, load);
    case SARBP_CUDA_V3A:
        return terrain ? launch_tiled<SARBP_CUDA_V3A, H, C, M, true>(cfg, a, st, load)
                       : launch_tiled<SARBP_CUDA_V3A, H, C, M, false>(cfg, a, st, load);
    case SARBP_CUDA_V4:
        return M && C || terrain ? SARBP_BP_EPRECOND : launch_v4<H, C, !C && M>(cfg, a, st, load);
    }
    return cudaErrorInvalidValue;
}

/* The launch or (load) the load of a's kernel. */
static int launch_or_load(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, cudaStream_t st, bool load)
{
    if (a->np <= 0 || a->nx <= 0 || a->ny <= 0) return cudaSuccess;
    if (a->nbins < 2) return cudaErrorInvalidValue;
    const sarbp_cuda_variant *vt = sarbp_cuda_variant_find(cfg->variant);
    const int v = vt ? vt->id : -1;
    if (a->mixed && a->half) return cudaErrorInvalidValue; /* mixed: FP32 A */
    if (a->mixed)
        return a->cubic ? dispatch<false, true, true>(v, cfg, a, st, load)
                        : dispatch<false, false, true>(v, cfg, a, st, load);
    if (a->cubic)
        return a->half ? dispatch<true, true, false>(v, cfg, a, st, load)
                       : dispatch<false, true, false>(v, cfg, a, st, load);
    return a->half ? dispatch<true, false, false>(v, cfg, a, st, load)
                   : dispatch<false, false, false>(v, cfg, a, st, load);
}

extern "C" int sarbp_bp_launch_kernel(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, void *stream)
{
    return launch_or_load(cfg, a, (cudaStream_t)stream, false);
}

extern "C" int sarbp_bp_load_kernel(const sarbp_bp_config *cfg, const sarbp_bp_launch *a)
{
    return launch_or_load(cfg, a, 0, true);
}
