/* rangecomp.cu - the element-wise passes around cuFFT in range compression.
 *
 *   pack:        samples x (window / K, with the fftshift folded in as a
 *                phase ramp) x azimuth weight, zero-padded to nfft, in one
 *                pass from the raw block to the FFT buffer;
 *   lerp_ready:  complex profile -> float4 (value, difference to next bin)
 *                for the backprojection kernels' single 16-byte loads.
 * One thread per output element; a 2-D grid (bins, pulses). */
#include <cuda_runtime.h>

#include "bp_kernels.h"

__global__ void rc_pack_kernel(const float2 *__restrict__ in, float2 *__restrict__ out,
                               const float2 *__restrict__ w, const float *__restrict__ waz, int K,
                               int nfft)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y;
    if (k >= nfft) return;
    float2 o = make_float2(0.f, 0.f);
    if (k < K) {
        const float2 s = in[(size_t)j * K + k], c = w[k];
        const float a = waz[j];
        o.x = (s.x * c.x - s.y * c.y) * a;
        o.y = (s.x * c.y + s.y * c.x) * a;
    }
    out[(size_t)j * nfft + k] = o;
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

extern "C" int sarbp_rc_pack(const void *d_in, void *d_out, const void *d_w, const float *d_waz,
                             int np, int K, int nfft, void *stream)
{
    if (np <= 0) return cudaSuccess;
    const dim3 grid((nfft + 255) / 256, np);
    rc_pack_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>((const float2 *)d_in, (float2 *)d_out,
                                                           (const float2 *)d_w, d_waz, K, nfft);
    return cudaGetLastError();
}

extern "C" int sarbp_rc_lerp_ready(const void *d_y, void *d_prof, int np, int nbins, void *stream)
{
    if (np <= 0) return cudaSuccess;
    const dim3 grid((nbins + 255) / 256, np);
    rc_lerp_ready_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>((const float2 *)d_y,
                                                                 (float4 *)d_prof, nbins);
    return cudaGetLastError();
}
