/* rangecomp.cu - the element-wise passes around cuFFT in range compression.
 *
 *   pack:        raw samples (FP32, or FP16 scaled by a power of two) x
 *                (window / K and prefilter, with the fftshift folded in as a
 *                phase ramp) x azimuth weight, placed centred on frequency
 *                index 0 and zero-padded to nfft, in one pass from the raw
 *                block to the FFT buffer;
 *   bound:       per block, max over pulses of the L1 norm of the packed row:
 *                no bin of the inverse FFT can exceed it, so it fixes an FP16
 *                scale before the FFT has run (one pass over the small raw
 *                block instead of a reduction over the upsampled profiles);
 *   maxabs:      the same bound for profiles already compressed (benchmarks);
 *   chirp_filter: CHIRP data after the forward FFT: times the matched
 *                filter and the motion-compensation phasor, placed into the
 *                upsampled spectrum, with the FP16 bound (row sums);
 *   interp_ready: complex profile -> one polynomial per bin segment: linear
 *                (value, difference to the next bin) or cubic B-spline
 *                (A, B, C, D from four bins), in FP32 or, scaled by
 *                2^sarbp_half_exp(bound), in FP16 or mixed (A, B FP32 and
 *                C, D FP16, in two arrays per row); or the quadratic
 *                B-spline's piece about each bin (A FP32, B, C FP16, scaled
 *                alike, 16 bytes), for the backprojection
 *                kernels' single 8-, 16- or 32-byte reads of a bin (mixed:
 *                one 16- and one 8-byte read).
 * One thread per element; 2-D grids (samples or bins, pulses). */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "bp_kernels.h"

__device__ __forceinline__ float2 raw_sample(const void *in, int in_half, size_t i, float inv)
{
    if (in_half) {
        const float2 v = __half22float2(((const __half2 *)in)[i]);
        return make_float2(v.x * inv, v.y * inv);
    }
    return ((const float2 *)in)[i];
}

/* thread d writes FFT index d, which holds sample (d + kc) mod nfft */
__global__ void rc_pack_kernel(const void *__restrict__ in, int in_half, float2 *__restrict__ out,
                               const float2 *__restrict__ w, const float *__restrict__ waz,
                               float inv, int nvalid, int K, int kc, int nfft)
{
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (d >= nfft) return;
    int k = d + kc;
    if (k >= nfft) k -= nfft;
    float2 o = make_float2(0.f, 0.f);
    if (k < K && j < nvalid) {
        const float2 s = raw_sample(in, in_half, (size_t)j * K + k, inv), c = w[k];
        const float a = waz[j];
        o.x = (s.x * c.x - s.y * c.y) * a;
        o.y = (s.x * c.y + s.y * c.x) * a;
    }
    out[(size_t)j * nfft + d] = o;
}

/* non-negative floats order as their bit patterns */
__device__ __forceinline__ void atomic_max_pos(float *addr, float v)
{
    atomicMax((int *)addr, __float_as_int(v));
}

__device__ __forceinline__ float block_sum(float v)
{
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0.0f;
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x + 31) / 32 ? part[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;
}

/* one block per pulse */
__global__ void rc_bound_kernel(const void *__restrict__ in, int in_half, const float2 *__restrict__ w,
                                const float *__restrict__ waz, float inv, int K, float *bound)
{
    const int j = blockIdx.x;
    float acc = 0.0f;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        const float2 s = raw_sample(in, in_half, (size_t)j * K + k, inv);
        acc += sqrtf(s.x * s.x + s.y * s.y) * sqrtf(w[k].x * w[k].x + w[k].y * w[k].y);
    }
    acc = block_sum(acc) * fabsf(waz[j]);
    /* rounding of the sum: raise by a few ulps so it stays a bound */
    if (threadIdx.x == 0) atomic_max_pos(bound, acc * (1.0f + 1.0e-5f * (float)K));
}

__global__ void rc_maxabs_kernel(const float2 *__restrict__ y, size_t n, float *bound)
{
    float m = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        m = fmaxf(m, sqrtf(y[i].x * y[i].x + y[i].y * y[i].y));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) atomic_max_pos(bound, m * (1.0f + 1.0e-6f));
}

/* bin b of profile row y, 0 outside [0, nbins) */
__device__ __forceinline__ float2 bin_or_zero(const float2 *__restrict__ y, int b, int nbins)
{
    return b >= 0 && b < nbins ? y[b] : make_float2(0.f, 0.f);
}

/* The polynomial of segment [b, b + 1), scaled by s (sarbp_segment_coeffs,
 * bp_kernels.h, per component): linear (A, B) or cubic (A, B, C, D). */
__device__ __forceinline__ void segment(const float2 *__restrict__ y, int b, int nbins, int cubic,
                                        float s, float2 c[4])
{
    const float2 y0 = bin_or_zero(y, b, nbins), y1 = bin_or_zero(y, b + 1, nbins);
    float2 ym = make_float2(0.f, 0.f), y2 = ym;
    if (cubic) {
        ym = bin_or_zero(y, b - 1, nbins);
        y2 = bin_or_zero(y, b + 2, nbins);
    }
    float re[4], im[4];
    sarbp_segment_coeffs(ym.x, y0.x, y1.x, y2.x, cubic, s, re);
    sarbp_segment_coeffs(ym.y, y0.y, y1.y, y2.y, cubic, s, im);
    for (int k = 0; k < (cubic ? 4 : 2); k++) c[k] = make_float2(re[k], im[k]);
}

__device__ __forceinline__ unsigned int half2_bits(float2 v)
{
    const __half2 h = __floats2half2_rn(v.x, v.y);
    return *(const unsigned int *)&h;
}

__global__ void rc_interp_ready_kernel(const float2 *__restrict__ y, void *__restrict__ prof,
                                       int nbins, int cubic, int mixed,
                                       const float *__restrict__ bound)
{
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (b >= nbins) return;
    const float2 *row = y + (size_t)j * nbins;
    const size_t o = (size_t)j * nbins + b;
    float2 c[4];
    if (mixed && !cubic) { /* quadratic: A float2, B and C half2, 16 bytes a bin */
        const float s = ldexpf(1.0f, sarbp_half_exp(*bound));
        const float2 ym = bin_or_zero(row, b - 1, nbins), y0 = row[b], y1 = bin_or_zero(row, b + 1, nbins);
        float re[3], im[3];
        sarbp_segment_coeffs_quadratic(ym.x, y0.x, y1.x, s, re);
        sarbp_segment_coeffs_quadratic(ym.y, y0.y, y1.y, s, im);
        ((uint4 *)prof)[o] = make_uint4(__float_as_uint(re[0]), __float_as_uint(im[0]),
                                        half2_bits(make_float2(re[1], im[1])),
                                        half2_bits(make_float2(re[2], im[2])));
        return;
    }
    if (mixed) { /* row j: AB [nbins] float4, CD [nbins] half4 (padded; SARBP_ROW_BYTES) */
        const float s = ldexpf(1.0f, sarbp_half_exp(*bound));
        segment(row, b, nbins, 1, s, c);
        char *r = (char *)prof + (size_t)j * SARBP_ROW_BYTES(0, 1, 1, nbins);
        ((float4 *)r)[b] = make_float4(c[0].x, c[0].y, c[1].x, c[1].y);
        ((uint2 *)((float4 *)r + nbins))[b] = make_uint2(half2_bits(c[2]), half2_bits(c[3]));
        return;
    }
    if (!bound) {
        segment(row, b, nbins, cubic, 1.0f, c);
        float4 *p = (float4 *)prof;
        if (cubic) {
            p[2 * o] = make_float4(c[0].x, c[0].y, c[1].x, c[1].y);
            p[2 * o + 1] = make_float4(c[2].x, c[2].y, c[3].x, c[3].y);
        } else {
            p[o] = make_float4(c[0].x, c[0].y, c[1].x, c[1].y);
        }
        return;
    }
    const float s = ldexpf(1.0f, sarbp_half_exp(*bound));
    segment(row, b, nbins, cubic, s, c);
    if (cubic) {
        ((uint4 *)prof)[o] = make_uint4(half2_bits(c[0]), half2_bits(c[1]), half2_bits(c[2]),
                                        half2_bits(c[3]));
        return;
    }
    /* linear: the difference of the rounded values, so value + 1 * difference
     * lands on the next bin's stored value (continuity across bins) */
    const __half2 hv = __floats2half2_rn(c[0].x, c[0].y);
    const float2 rv = __half22float2(hv);
    const float2 n = make_float2(c[0].x + c[1].x, c[0].y + c[1].y);
    const __half2 hn = __floats2half2_rn(n.x, n.y);
    const float2 rn = __half22float2(hn);
    ((uint2 *)prof)[o] = make_uint2(*(const unsigned int *)&hv,
                                    half2_bits(make_float2(rn.x - rv.x, rn.y - rv.y)));
}

/* one block per pulse: grid-stride over the output bins, then the row sum
 * of |out| for the FP16 bound */
__global__ void rc_chirp_filter_kernel(const float2 *__restrict__ spec, float2 *__restrict__ out,
                                       const float2 *__restrict__ filt,
                                       const sarbp_dpulse *__restrict__ pulses, int nmf, int nbins,
                                       float *bound)
{
    const int j = blockIdx.x;
    double sn, cs;
    sincospi(2.0 * pulses[j].mocomp, &sn, &cs);
    const float c = (float)cs, s = (float)sn;
    const int npos = (nmf + 1) / 2, gap = nbins - nmf;
    const float2 *row = spec + (size_t)j * nmf;
    float2 *o = out + (size_t)j * nbins;
    float acc = 0.0f;
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        const int k = b < npos ? b : b - gap;
        float2 v = make_float2(0.f, 0.f);
        if (b < npos || b >= npos + gap) {
            const float2 x = row[k], h = filt[k];
            const float re = x.x * h.x - x.y * h.y, im = x.x * h.y + x.y * h.x;
            v = make_float2(re * c - im * s, re * s + im * c);
        }
        o[b] = v;
        acc += sqrtf(v.x * v.x + v.y * v.y);
    }
    if (bound) {
        acc = block_sum(acc);
        if (threadIdx.x == 0) atomic_max_pos(bound, acc * (1.0f + 1.0e-5f * (float)nmf));
    }
}

extern "C" int sarbp_rc_chirp_filter(const void *d_spec, void *d_out, const void *d_filt,
                                     const sarbp_dpulse *d_pulses, int np, int nmf, int nbins,
                                     float *d_bound, void *stream)
{
    if (np <= 0) return cudaSuccess;
    if (nbins < nmf) return cudaErrorInvalidValue;
    rc_chirp_filter_kernel<<<np, 256, 0, (cudaStream_t)stream>>>(
        (const float2 *)d_spec, (float2 *)d_out, (const float2 *)d_filt, d_pulses, nmf, nbins, d_bound);
    return cudaGetLastError();
}

extern "C" int sarbp_rc_pack(const void *d_in, int in_half, void *d_out, const void *d_w,
                             const float *d_waz, float raw_inv_scale, int nrows, int nvalid, int K,
                             int kc, int nfft, void *stream)
{
    if (nrows <= 0) return cudaSuccess;
    if (kc < 0 || kc >= nfft || K > nfft) return cudaErrorInvalidValue;
    const dim3 grid((nfft + 255) / 256, nrows);
    rc_pack_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(d_in, in_half, (float2 *)d_out,
                                                           (const float2 *)d_w, d_waz,
                                                           raw_inv_scale, nvalid, K, kc, nfft);
    return cudaGetLastError();
}

extern "C" int sarbp_rc_bound(const void *d_in, int in_half, const void *d_w, const float *d_waz,
                              float raw_inv_scale, int np, int K, float *d_bound, void *stream)
{
    if (np <= 0) return cudaSuccess;
    rc_bound_kernel<<<np, 256, 0, (cudaStream_t)stream>>>(d_in, in_half, (const float2 *)d_w, d_waz,
                                                          raw_inv_scale, K, d_bound);
    return cudaGetLastError();
}

extern "C" int sarbp_rc_maxabs(const void *d_y, size_t n, float *d_bound, void *stream)
{
    if (n == 0) return cudaSuccess;
    size_t blocks = (n + 255) / 256;
    if (blocks > 1024) blocks = 1024;
    rc_maxabs_kernel<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>((const float2 *)d_y, n, d_bound);
    return cudaGetLastError();
}

extern "C" int sarbp_rc_interp_ready(const void *d_y, void *d_prof, int np, int nbins, int cubic,
                                     int mixed, const float *d_bound, void *stream)
{
    if (np <= 0) return cudaSuccess;
    if (mixed && !d_bound) return cudaErrorInvalidValue;
    const dim3 grid((nbins + 255) / 256, np);
    rc_interp_ready_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>((const float2 *)d_y, d_prof, nbins,
                                                                  cubic, mixed, d_bound);
    return cudaGetLastError();
}
