/* backproject.cu - backprojection kernels, one computation in numbered variants.
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
 *        from its fraction, one 16-byte load of a lerp-ready bin, and the
 *        tile-centre phase folded into the sincos argument. The default.
 *   v3a  v3 with a float-float phase argument: the product ddR * (2 f / c)
 *        carried as two floats and reduced to cycles before sincos. The
 *        accurate variant.
 *
 * Work split of the tiled variants: a thread block of tile_x x (tile_y /
 * ppt) threads owns a tile of tile_x x tile_y pixels; thread (tx, ty) owns
 * the ppt pixels (tx, ty + k * blockDim.y), which share their x offset. The
 * block walks the pulses in chunks of CHUNK: threads 0..CHUNK-1 compute the
 * chunk's tile terms in FP64 into shared memory, then every thread runs the
 * chunk over its pixels from registers. Range bins are read through the
 * read-only/L1 path (__ldg). Each pixel is owned by one thread: no atomics;
 * the block adds its sums into the image once per launch. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "bp_kernels.h"

#define CHUNK 64
#define MAGIC 12582912.0f /* 1.5 * 2^23: adding it leaves floor(x) in the mantissa */
#define MAGIC_I 0x4B400000
#define C_LIGHT 299792458.0

/* ---- v1 ------------------------------------------------------------------ */

__global__ void bp_v1_kernel(sarbp_bp_launch a)
{
    const int ix = blockIdx.x * blockDim.x + threadIdx.x;
    const int iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= a.nx || iy >= a.ny) return;
    const double x = a.x0 + ix * a.dx, y = a.y0 + iy * a.dy, z = a.z;
    const float4 *prof = (const float4 *)a.d_prof;
    double re = 0, im = 0;
    for (int i = 0; i < a.np; i++) {
        const sarbp_dpulse p = a.d_pulses[i];
        const double dx = x - p.ax, dy = y - p.ay, dz = z - p.az;
        const double dR = sqrt(dx * dx + dy * dy + dz * dz) - p.r0;
        const double b = (dR - p.rstart) * p.inv_dr;
        const double fb = floor(b);
        if (!(fb >= 0) || fb + 1 >= a.nbins) continue;
        const int n = (int)fb;
        const double t = b - fb;
        const float4 v = prof[(size_t)i * a.nbins + n];
        const double vr = v.x + t * v.z, vi = v.y + t * v.w;
        double s, c;
        sincospi(4.0 * p.fref * dR / C_LIGHT, &s, &c);
        re += vr * c - vi * s;
        im += vr * s + vi * c;
    }
    float2 *img = (float2 *)a.d_img + (size_t)iy * a.nx + ix;
    float2 o = *img;
    o.x += (float)re;
    o.y += (float)im;
    *img = o;
}

/* ---- tiled variants ------------------------------------------------------ */

struct tile_terms {
    float4 a[CHUNK]; /* Ux, Uy (unit vector a->tile centre, x and y), q = 1/(2 Rc), bin fraction */
    float4 b[CHUNK]; /* 1/dr, tile phase (rad, [0, 2pi)), 2 pi * 2 f / c, tile phase (cycles) */
    float2 k[CHUNK]; /* 2 f / c as a float-float (hi, lo) */
    int2 i[CHUNK];   /* integer bin of the tile centre - MAGIC_I, 1 when the whole tile's bins are inside */
};

/* FP64 terms of pulse i for the tile centred at (xc, yc, z). */
__device__ static void compute_terms(tile_terms &s, int slot, const sarbp_dpulse &p, double xc,
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
    else inside = 0; /* far outside: the checked path clamps and weights 0 */
    const double kc = 2.0 * p.fref / C_LIGHT;
    const double cyc = kc * dRc;
    const double phc = cyc - floor(cyc);
    const float khi = (float)kc;
    s.a[slot] = make_float4((float)(ux / Rc), (float)(uy / Rc), (float)(0.5 / Rc), (float)(bc - bcf));
    s.b[slot] = make_float4((float)p.inv_dr, (float)(2.0 * M_PI * phc), (float)(2.0 * M_PI * kc),
                            (float)phc);
    s.k[slot] = make_float2(khi, (float)(kc - (double)khi));
    s.i[slot] = make_int2(ic - MAGIC_I, inside);
}

/* One pixel, one pulse. V selects the variant; CHECK the bounds-checked path
 * for pulses whose bins the tile may leave. */
template <int V, bool CHECK>
__device__ __forceinline__ void pixel_pulse(float Uxdx, float Uy, float q, float fcb, float inv_dr,
                                            float phrad, float krad, float phcyc, float2 kc,
                                            int icm, const float4 *__restrict__ prof, int nbins,
                                            float dy, float dd, float &are, float &aim)
{
    const float x = fmaf(Uy, dy, fmaf(q, dd, Uxdx)); /* (2 d.u + |d|^2) / (2 Rc) */
    float ddR;
    if (V == 2) {
        ddR = 2.0f * x / (sqrtf(fmaf(4.0f * q, x, 1.0f)) + 1.0f);
    } else {
        const float e = x * q;
        ddR = x * fmaf(e, fmaf(2.0f, e, -1.0f), 1.0f);
    }
    const float fb = fmaf(ddR, inv_dr, fcb);
    int n;
    float t;
    if (V == 2) {
        const float fl = floorf(fb);
        n = (int)fl + icm + MAGIC_I;
        t = fb - fl;
    } else {
        const float y = __fadd_rd(fb, MAGIC);
        n = __float_as_int(y) + icm;
        t = fb - (y - MAGIC);
    }
    float w = 1.0f;
    if (CHECK) {
        const int nc = min(max(n, 0), nbins - 2);
        w = nc == n ? 1.0f : 0.0f;
        n = nc;
    }
    const float4 v = __ldg(prof + n);
    float vr = fmaf(t, v.z, v.x), vi = fmaf(t, v.w, v.y);
    if (CHECK) {
        vr *= w;
        vi *= w;
    }
    float s, c;
    if (V == 4) { /* v3a: float-float phase, reduced to cycles */
        const float chi = ddR * kc.x;
        const float cerr = fmaf(ddR, kc.x, -chi);
        const float clo = fmaf(ddR, kc.y, cerr);
        const float r = chi - ((chi + MAGIC) - MAGIC);
        const float cyc = (r + clo) + phcyc;
        __sincosf(6.283185307179586f * cyc, &s, &c);
    } else if (V == 2) {
        sincosf(fmaf(ddR, krad, phrad), &s, &c);
    } else {
        __sincosf(fmaf(ddR, krad, phrad), &s, &c);
    }
    are = fmaf(vr, c, are);
    are = fmaf(-vi, s, are);
    aim = fmaf(vr, s, aim);
    aim = fmaf(vi, c, aim);
}

template <int V, int PPT>
__global__ void bp_tiled_kernel(sarbp_bp_launch a)
{
    __shared__ tile_terms s;
    const int bx = blockDim.x, by = blockDim.y;
    const int tile_h = by * PPT;
    const int tid = threadIdx.y * bx + threadIdx.x;
    const int ix = blockIdx.x * bx + threadIdx.x;
    const int iy0 = blockIdx.y * tile_h + threadIdx.y;

    /* tile centre (FP64) and this thread's offsets from it (FP32, small) */
    const double cx = 0.5 * (bx - 1), cy = 0.5 * (tile_h - 1);
    const double xc = a.x0 + (blockIdx.x * bx + cx) * a.dx;
    const double yc = a.y0 + (blockIdx.y * tile_h + cy) * a.dy;
    const double half_diag = 0.5 * sqrt((bx * a.dx) * (bx * a.dx) + (tile_h * a.dy) * (tile_h * a.dy));
    const float dx = (float)((threadIdx.x - cx) * a.dx);
    float dy[PPT], dd[PPT], are[PPT], aim[PPT];
#pragma unroll
    for (int k = 0; k < PPT; k++) {
        dy[k] = (float)((threadIdx.y + k * by - cy) * a.dy);
        dd[k] = dx * dx + dy[k] * dy[k];
        are[k] = 0.0f;
        aim[k] = 0.0f;
    }

    const float4 *prof0 = (const float4 *)a.d_prof;
    for (int base = 0; base < a.np; base += CHUNK) {
        const int cnt = min(CHUNK, a.np - base);
        __syncthreads();
        if (tid < cnt) compute_terms(s, tid, a.d_pulses[base + tid], xc, yc, a.z, half_diag, a.nbins);
        __syncthreads();
        for (int j = 0; j < cnt; j++) {
            const float4 ta = s.a[j], tb = s.b[j];
            const int2 ti = s.i[j];
            const float2 kc = V == 4 ? s.k[j] : make_float2(0.f, 0.f);
            const float4 *prof = prof0 + (size_t)(base + j) * a.nbins;
            const float Uxdx = ta.x * dx;
            if (ti.y) {
#pragma unroll
                for (int k = 0; k < PPT; k++)
                    pixel_pulse<V, false>(Uxdx, ta.y, ta.z, ta.w, tb.x, tb.y, tb.z, tb.w, kc, ti.x,
                                          prof, a.nbins, dy[k], dd[k], are[k], aim[k]);
            } else {
#pragma unroll
                for (int k = 0; k < PPT; k++)
                    pixel_pulse<V, true>(Uxdx, ta.y, ta.z, ta.w, tb.x, tb.y, tb.z, tb.w, kc, ti.x,
                                         prof, a.nbins, dy[k], dd[k], are[k], aim[k]);
            }
        }
    }
    if (ix >= a.nx) return;
    float2 *img = (float2 *)a.d_img;
#pragma unroll
    for (int k = 0; k < PPT; k++) {
        const int iy = iy0 + k * by;
        if (iy < a.ny) {
            float2 o = img[(size_t)iy * a.nx + ix];
            o.x += are[k];
            o.y += aim[k];
            img[(size_t)iy * a.nx + ix] = o;
        }
    }
}

/* ---- launchers and dispatcher ---------------------------------------------- */

static int variant_id(const char *v)
{
    if (!v || !*v || !strcmp(v, "v3")) return 3;
    if (!strcmp(v, "v1")) return 1;
    if (!strcmp(v, "v2")) return 2;
    if (!strcmp(v, "v3a")) return 4;
    return -1;
}

extern "C" int sarbp_bp_config_resolve(sarbp_bp_config *cfg, char *why, size_t nwhy)
{
    const int v = variant_id(cfg->variant);
    if (v < 0) {
        snprintf(why, nwhy, "unknown kernel variant '%s' (v1, v2, v3, v3a)", cfg->variant);
        return -1;
    }
    if (!cfg->variant || !*cfg->variant) cfg->variant = "v3";
    if (v == 1) { /* one pixel per thread; blocks of 16 x 16 */
        if (!cfg->tile_x) cfg->tile_x = 16;
        if (!cfg->tile_y) cfg->tile_y = 16;
        cfg->ppt = 1;
    } else {
        /* defaults from sarbp bench on an H200 (kernels/BENCHMARKS.md):
         * 16 x 32 pixels, 8 per thread, 64 threads a block: as fast as
         * 32 x 32 (908 vs 912 Gbp/s) and 6 dB more accurate (smaller tiles) */
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
    if (threads > 1024 || (v != 1 && threads < CHUNK)) {
        snprintf(why, nwhy, "tile %dx%d with %d pixels per thread needs %d threads (%d..1024)",
                 cfg->tile_x, cfg->tile_y, cfg->ppt, threads, v == 1 ? 1 : CHUNK);
        return -1;
    }
    return 0;
}

template <int V>
static cudaError_t launch_tiled(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, cudaStream_t st)
{
    const dim3 block(cfg->tile_x, cfg->tile_y / cfg->ppt);
    const dim3 grid((a->nx + cfg->tile_x - 1) / cfg->tile_x, (a->ny + cfg->tile_y - 1) / cfg->tile_y);
    switch (cfg->ppt) {
    case 1: bp_tiled_kernel<V, 1><<<grid, block, 0, st>>>(*a); break;
    case 2: bp_tiled_kernel<V, 2><<<grid, block, 0, st>>>(*a); break;
    case 4: bp_tiled_kernel<V, 4><<<grid, block, 0, st>>>(*a); break;
    case 8: bp_tiled_kernel<V, 8><<<grid, block, 0, st>>>(*a); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" int sarbp_bp_launch_kernel(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (a->np <= 0 || a->nx <= 0 || a->ny <= 0) return cudaSuccess;
    if (a->nbins < 2) return cudaErrorInvalidValue;
    switch (variant_id(cfg->variant)) {
    case 1: {
        const dim3 block(cfg->tile_x, cfg->tile_y);
        const dim3 grid((a->nx + block.x - 1) / block.x, (a->ny + block.y - 1) / block.y);
        bp_v1_kernel<<<grid, block, 0, st>>>(*a);
        return cudaGetLastError();
    }
    case 2: return launch_tiled<2>(cfg, a, st);
    case 3: return launch_tiled<3>(cfg, a, st);
    case 4: return launch_tiled<4>(cfg, a, st);
    }
    return cudaErrorInvalidValue;
}
