/* rangecomp.cu - the element-wise passes around cuFFT in range compression.
 *
 *   pack:        raw samples (FP32, or FP16 scaled by a power of two) x
 *                (window / K, with the fftshift folded in as a phase ramp) x
 *                azimuth weight, zero-padded to nfft, in one pass from the
 *                raw block to the FFT buffer;
 *   bound:       per block, max over pulses of the L1 norm of the packed row:
 *                no bin of the inverse FFT can exceed it, so it fixes an FP16
 *                scale before the FFT has run (one pass over the small raw
 *                block instead of a reduction over the upsampled profiles);
 *   maxabs:      the same bound for profiles already compressed (CPU chirp
 *                data, benchmarks);
 *   lerp_ready:  complex profile -> (value, difference to the next bin), as a
 *                float4 or, scaled by 2^sarbp_half_exp(bound), as half4, for
 *                the backprojection kernels' single 16- or 8-byte loads.
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

__global__ void rc_pack_kernel(const void *__restrict__ in, int in_half, float2 *__restrict__ out,
                               const float2 *__restrict__ w, const float *__restrict__ waz,
                               float inv, int nvalid, int K, int nfft)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (k >= nfft) return;
    float2 o = make_float2(0.f, 0.f);
    if (k < K && j < nvalid) {
        const float2 s = raw_sample(in, in_half, (size_t)j * K + k, inv), c = w[k];
        const float a = waz[j];
        o.x = (s.x * c.x - s.y * c.y) * a;
        o.y = (s.x * c.y + s.y * c.x) * a;
    }
    out[(size_t)j * nfft + k] = o;
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

__global__ void rc_lerp_ready_kernel(const float2 *__restrict__ y, float4 *__restrict__ prof, int nbins)
{
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (b >= nbins) return;
    const float2 v = y[(size_t)j * nbins + b];
    float2 n = v;
    if (b + 1 < nbins) n = y[(size_t)j * nbins + b + 1];
    prof[(size_t)j * nbins + b] = make_float4(v.x, v.y, n.x - v.x, n.y - v.y);
}

__global__ void rc_lerp_ready_half_kernel(const float2 *__restrict__ y, uint2 *__restrict__ prof,
                                          int nbins, const float *__restrict__ bound)
{
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (b >= nbins) return;
    const float s = ldexpf(1.0f, sarbp_half_exp(*bound));
    float2 v = y[(size_t)j * nbins + b];
    float2 n = v;
    if (b + 1 < nbins) n = y[(size_t)j * nbins + b + 1];
    v.x *= s;
    v.y *= s;
    n.x *= s;
    n.y *= s;
    /* the difference of the rounded values, so value + 1 * difference lands
     * on the next bin's stored value (continuity across bins) */
    const __half2 hv = __floats2half2_rn(v.x, v.y);
    const __half2 hn = __floats2half2_rn(n.x, n.y);
    const float2 rv = __half22float2(hv), rn = __half22float2(hn);
    const __half2 hd = __floats2half2_rn(rn.x - rv.x, rn.y - rv.y);
    uint2 o;
    o.x = *(const unsigned int *)&hv;
    o.y = *(const unsigned int *)&hd;
    prof[(size_t)j * nbins + b] = o;
}

extern "C" int sarbp_rc_pack(const void *d_in, int in_half, void *d_out, const void *d_w,
                             const float *d_waz, float raw_inv_scale, int nrows, int nvalid, int K,
                             int nfft, void *stream)
{
    if (nrows <= 0) return cudaSuccess;
    const dim3 grid((nfft + 255) / 256, nrows);
    rc_pack_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(d_in, in_half, (float2 *)d_out,
                                                           (const float2 *)d_w, d_waz,
                                                           raw_inv_scale, nvalid, K, nfft);
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

extern "C" int sarbp_rc_lerp_ready(const void *d_y, void *d_prof, int np, int nbins,
                                   const float *d_bound, void *stream)
{
    if (np <= 0) return cudaSuccess;
    const dim3 grid((nbins + 255) / 256, np);
    if (d_bound)
        rc_lerp_ready_half_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(
            (const float2 *)d_y, (uint2 *)d_prof, nbins, d_bound);
    else
        rc_lerp_ready_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>((const float2 *)d_y,
                                                                     (float4 *)d_prof, nbins);
    return cudaGetLastError();
}
