/* autofocus.cu - the autofocus engine's computations on a GPU
 * (autofocus_kernels.h; src/autofocus/engine.h says what each is for).
 *
 *   contrib:   B[j][m], one thread per (pixel, pulse), FP64 arithmetic as
 *              the FP64 reference backprojector over one pulse;
 *   image:     one thread per pixel summing its column of B over the
 *              pulses (reads coalesced along m), |I|^4 reduced per block;
 *   weight:    one thread per pixel;
 *   reproject: one block per (chunk of pixels, pulse), the chunk's sum of
 *              w B[j] reduced in FP64;
 *   sweep:     one cooperative launch; every thread owns the pixels
 *              m = t, t + T, ... (T all threads). For each pulse j it adds
 *              pulse j-1's change to its pixels and in the same pass sums
 *              pulse j's coefficients (C1, C2) there; the blocks' sums meet
 *              at a grid barrier (double-buffered by the pulse's parity, one
 *              barrier a pulse), and every block solves for pulse j's
 *              phase alike (the first warp: 64 angles, then Newton), so no
 *              block waits for another's answer.
 * Sums over pixels are made per block and added in block order: results do
 * not depend on timing. */
#include <cuda_runtime.h>
#include <math.h>

#include "autofocus_kernels.h"

#define WARPS (SARBP_AF_THREADS / 32)

/* ---- helpers ---- */

__device__ __forceinline__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* The block's sum of n values per thread into out[0..n) (thread 0 only). */
template <int N>
__device__ __forceinline__ void block_sum(double (&v)[N], double *out)
{
    __shared__ double s[N][WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int k = 0; k < N; k++) {
        const double w = warp_sum(v[k]);
        if (lane == 0) s[k][warp] = w;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < N; k++) {
            double t = 0;
            for (int w = 0; w < WARPS; w++) t += s[k][w];
            out[k] = t;
        }
    __syncthreads();
}

/* ---- contributions ---- */

__global__ void contrib_kernel(const float2 *__restrict__ prof, const sarbp_af_pulse *__restrict__ pulses,
                               int nbins, int interp, const double *__restrict__ xyz, size_t M,
                               float2 *__restrict__ B, int j0)
{
    const size_t m = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int j = j0 + (int)blockIdx.y;
    if (m >= M) return;
    const sarbp_af_pulse p = pulses[j];
    const double dx = xyz[3 * m] - p.ax, dy = xyz[3 * m + 1] - p.ay, dz = xyz[3 * m + 2] - p.az;
    const double dR = sqrt(dx * dx + dy * dy + dz * dz) - p.r0;
    const double b = (dR - p.rstart) * p.inv_dr;
    const int quad = interp == SARBP_AF_QUADRATIC, cubic = interp == SARBP_AF_CUBIC;
    const double fb = quad ? floor(b + 0.5) : floor(b);
    float2 out = make_float2(0.f, 0.f);
    if (fb >= 0.0 && fb < (double)nbins - 1.0) {
        const int n = (int)fb;
        const double t = b - fb;
        const float2 *row = prof + (size_t)j * nbins;
        double vr = 0, vi = 0;
        if (quad || cubic) {
            double w[4];
            if (quad) {
                const double a = 0.5 - t, c = 0.5 + t;
                w[0] = 0.5 * a * a;
                w[1] = 0.75 - t * t;
                w[2] = 0.5 * c * c;
                w[3] = 0;
            } else {
                const double u = 1.0 - t, t2 = t * t, t3 = t2 * t;
                w[0] = u * u * u / 6.0;
                w[1] = (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0;
                w[2] = (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0;
                w[3] = t3 / 6.0;
            }
            for (int k = 0; k < (quad ? 3 : 4); k++) {
                const int q = n + k - 1;
                if (q < 0 || q >= nbins) continue;
                vr += w[k] * row[q].x;
                vi += w[k] * row[q].y;
            }
        } else {
            vr = row[n].x + t * (row[n + 1].x - row[n].x);
            vi = row[n].y + t * (row[n + 1].y - row[n].y);
        }
        double s, c;
        sincos(p.kph * dR, &s, &c);
        out = make_float2((float)(vr * c - vi * s), (float)(vr * s + vi * c));
    }
    B[(size_t)j * M + m] = out;
}

extern "C" int sarbp_af_contrib(const void *d_prof, const sarbp_af_pulse *d_pulses, int P, int nbins, int interp,
                                const double *d_xyz, size_t M, void *d_B, void *stream)
{
    if (P <= 0 || M == 0) return (int)cudaErrorInvalidValue;
    for (int j0 = 0; j0 < P; j0 += 65535) { /* the grid's y extent */
        const int n = P - j0 < 65535 ? P - j0 : 65535;
        const dim3 grid((unsigned)((M + SARBP_AF_THREADS - 1) / SARBP_AF_THREADS), (unsigned)n);
        contrib_kernel<<<grid, SARBP_AF_THREADS, 0, (cudaStream_t)stream>>>(
            (const float2 *)d_prof, d_pulses, nbins, interp, d_xyz, M, (float2 *)d_B, j0);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return (int)e;
    }
    return (int)cudaSuccess;
}

__global__ void scale_kernel(float2 *B, size_t n, float s)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        B[i] = make_float2(B[i].x * s, B[i].y * s);
}

extern "C" int sarbp_af_scale(void *d_B, size_t n, float s, void *stream)
{
    scale_kernel<<<4096, SARBP_AF_THREADS, 0, (cudaStream_t)stream>>>((float2 *)d_B, n, s);
    return (int)cudaGetLastError();
}

/* ---- image, weight, reprojection ---- */

__global__ void image_kernel(const float2 *__restrict__ B, const float2 *__restrict__ phasor, size_t P, size_t M,
                             float2 *__restrict__ img, double *__restrict__ part)
{
    const size_t m = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    double v[1] = {0};
    if (m < M) {
        float re = 0, im = 0;
        for (size_t j = 0; j < P; j++) {
            const float2 b = B[j * M + m], z = phasor[j];
            re += z.x * b.x - z.y * b.y;
            im += z.x * b.y + z.y * b.x;
        }
        img[m] = make_float2(re, im);
        const double p = (double)re * re + (double)im * im;
        v[0] = p * p;
    }
    block_sum<1>(v, part + blockIdx.x);
}

extern "C" int sarbp_af_image(const void *d_B, const void *d_phasor, size_t P, size_t M, void *d_img,
                              double *d_part, void *stream)
{
    const unsigned nb = (unsigned)((M + SARBP_AF_THREADS - 1) / SARBP_AF_THREADS);
    image_kernel<<<nb, SARBP_AF_THREADS, 0, (cudaStream_t)stream>>>(
        (const float2 *)d_B, (const float2 *)d_phasor, P, M, (float2 *)d_img, d_part);
    return (int)cudaGetLastError();
}

__global__ void weight_kernel(const float2 *__restrict__ img, const unsigned char *__restrict__ mask, size_t M,
                              float2 *__restrict__ w)
{
    const size_t m = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M) return;
    const float2 I = img[m];
    if (mask) {
        w[m] = mask[m] ? make_float2(I.x, -I.y) : make_float2(0.f, 0.f);
    } else {
        const float p = I.x * I.x + I.y * I.y;
        w[m] = make_float2(p * I.x, -p * I.y);
    }
}

extern "C" int sarbp_af_weight(const void *d_img, const unsigned char *d_mask, size_t M, void *d_w, void *stream)
{
    const unsigned nb = (unsigned)((M + SARBP_AF_THREADS - 1) / SARBP_AF_THREADS);
    weight_kernel<<<nb, SARBP_AF_THREADS, 0, (cudaStream_t)stream>>>((const float2 *)d_img, d_mask, M,
                                                                     (float2 *)d_w);
    return (int)cudaGetLastError();
}

__global__ void reproject_kernel(const float2 *__restrict__ B, const float2 *__restrict__ w, size_t P, size_t M,
                                 double *__restrict__ part, size_t j0)
{
    const size_t c = blockIdx.x, j = j0 + blockIdx.y;
    const size_t m0 = c * SARBP_AF_CHUNK, m1 = m0 + SARBP_AF_CHUNK < M ? m0 + SARBP_AF_CHUNK : M;
    double v[2] = {0, 0};
    const float2 *b = B + j * M;
    for (size_t m = m0 + threadIdx.x; m < m1; m += blockDim.x) {
        const float2 x = w[m], y = b[m];
        v[0] += (double)x.x * y.x - (double)x.y * y.y;
        v[1] += (double)x.x * y.y + (double)x.y * y.x;
    }
    block_sum<2>(v, part + 2 * (c * P + j));
}

extern "C" int sarbp_af_reproject(const void *d_B, const void *d_w, size_t P, size_t M, double *d_part,
                                  void *stream)
{
    for (size_t j0 = 0; j0 < P; j0 += 65535) {
        const size_t n = P - j0 < 65535 ? P - j0 : 65535;
        const dim3 grid((unsigned)((M + SARBP_AF_CHUNK - 1) / SARBP_AF_CHUNK), (unsigned)n);
        reproject_kernel<<<grid, SARBP_AF_THREADS, 0, (cudaStream_t)stream>>>(
            (const float2 *)d_B, (const float2 *)d_w, P, M, d_part, j0);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return (int)e;
    }
    return (int)cudaSuccess;
}

/* ---- the sweep ---- */

/* Every block of a cooperative launch waits here for all the others
 * (co-residency guaranteed by the launch): a counter and a generation. */
__device__ __forceinline__ void grid_barrier(unsigned *bar, unsigned nblocks)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned *gen = bar + 1;
        const unsigned g = *gen;
        __threadfence();
        if (atomicAdd(bar, 1u) == nblocks - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            while (*gen == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

__device__ __forceinline__ double fval(double p, double c1r, double c1i, double c2r, double c2i)
{
    double s1, k1, s2, k2;
    sincos(p, &s1, &k1);
    sincos(2.0 * p, &s2, &k2);
    return c1r * k1 - c1i * s1 + c2r * k2 - c2i * s2;
}

/* The best phase of Re(e^{ip} C1) + Re(e^{2ip} C2), by the first warp: the
 * best of 64 angles, then Newton on the derivative (kept within the grid
 * step). Every block computes the same from the same sums. */
__device__ double best_phase_warp(double c1r, double c1i, double c2r, double c2i)
{
    const int lane = threadIdx.x & 31;
    double bp = 0, bf = -INFINITY;
    for (int k = lane; k < 64; k += 32) {
        const double p = 2.0 * M_PI * k / 64.0, f = fval(p, c1r, c1i, c2r, c2i);
        if (f > bf) bf = f, bp = p;
    }
    for (int o = 16; o > 0; o >>= 1) { /* argmax, the smaller angle on a tie */
        const double of = __shfl_down_sync(0xffffffffu, bf, o), op = __shfl_down_sync(0xffffffffu, bp, o);
        if (of > bf || (of == bf && op < bp)) bf = of, bp = op;
    }
    bp = __shfl_sync(0xffffffffu, bp, 0);
    const double lo = bp - 2.0 * M_PI / 64.0, hi = bp + 2.0 * M_PI / 64.0;
    double p = bp;
    for (int it = 0; it < 8; it++) {
        double s1, k1, s2, k2;
        sincos(p, &s1, &k1);
        sincos(2.0 * p, &s2, &k2);
        const double d1 = -c1r * s1 - c1i * k1 - 2.0 * (c2r * s2 + c2i * k2);
        const double d2 = -c1r * k1 + c1i * s1 - 4.0 * (c2r * k2 - c2i * s2);
        if (!(d2 < 0)) break; /* not a maximum's neighbourhood */
        double q = p - d1 / d2;
        if (q < lo) q = lo;
        if (q > hi) q = hi;
        if (fabs(q - p) < 1e-13) {
            p = q;
            break;
        }
        p = q;
    }
    return fval(p, c1r, c1i, c2r, c2i) >= bf ? p : bp;
}

__global__ void __launch_bounds__(SARBP_AF_THREADS) sweep_kernel(const float2 *__restrict__ B, float2 *img,
                                                                 size_t P, size_t M, double *phi,
                                                                 const double *__restrict__ ref, double *part,
                                                                 unsigned *bar, double *out)
{
    const unsigned nb = gridDim.x;
    const size_t T = (size_t)nb * blockDim.x, t0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ double sh_np;
    double dre = 0, dim = 0, moved = 0, zr = 0, zi = 0;
    for (size_t j = 0; j <= P; j++) {
        double *pj = part + (j & 1) * (size_t)nb * 4;
        double pphi = 0;
        if (j < P) {
            pphi = phi[j];
            sincos(pphi, &zi, &zr);
        }
        double v[4] = {0, 0, 0, 0};
        const float2 *bv = j < P ? B + j * M : nullptr, *bp = j > 0 ? B + (j - 1) * M : nullptr;
        for (size_t m = t0; m < M; m += T) {
            float2 I = img[m];
            if (bp) {
                const float2 q = bp[m];
                I.x += (float)(dre * q.x - dim * q.y);
                I.y += (float)(dre * q.y + dim * q.x);
                img[m] = I;
            }
            if (!bv) {
                const double p = (double)I.x * I.x + (double)I.y * I.y;
                v[0] += p * p;
                continue;
            }
            const float2 q = bv[m];
            const double vr = zr * q.x - zi * q.y, vi = zr * q.y + zi * q.x;
            const double ur = I.x - vr, ui = I.y - vi;
            const double aa = ur * ur + ui * ui + (double)q.x * q.x + (double)q.y * q.y;
            const double cr = ur * q.x + ui * q.y, ci = ur * q.y - ui * q.x;
            v[0] += 4 * aa * cr;
            v[1] += 4 * aa * ci;
            v[2] += 2 * (cr * cr - ci * ci);
            v[3] += 4 * cr * ci;
        }
        block_sum<4>(v, pj + 4 * blockIdx.x);
        if (j == P) {
            if (threadIdx.x == 0) out[blockIdx.x] = pj[4 * blockIdx.x];
            break;
        }
        grid_barrier(bar, nb);
        if (threadIdx.x < 32) {
            double c[4] = {0, 0, 0, 0};
            for (unsigned b = 0; b < nb; b++) /* block order: every block adds alike */
                for (int k = 0; k < 4; k++) c[k] += ((volatile double *)pj)[4 * b + k];
            const double np = best_phase_warp(c[0], c[1], c[2], c[3]);
            if (threadIdx.x == 0) sh_np = np;
        }
        __syncthreads();
        const double np = sh_np;
        double s, k;
        sincos(np, &s, &k);
        dre = k - zr;
        dim = s - zi;
        const double d = fabs(remainder(np - pphi, 2.0 * M_PI));
        if (d > moved) moved = d;
        /* every block read phi[j] before the barrier */
        if (blockIdx.x == 0 && threadIdx.x == 0) phi[j] = ref[j] + remainder(np - ref[j], 2.0 * M_PI);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) out[nb] = moved;
}

extern "C" int sarbp_af_sweep(const void *d_B, void *d_img, size_t P, size_t M, double *d_phi,
                              const double *d_ref, double *d_part, unsigned *d_bar, double *d_out, int nblocks,
                              void *stream)
{
    void *args[] = {(void *)&d_B, &d_img, &P, &M, &d_phi, (void *)&d_ref, &d_part, &d_bar, &d_out};
    return (int)cudaLaunchCooperativeKernel((const void *)sweep_kernel, dim3((unsigned)nblocks),
                                            dim3(SARBP_AF_THREADS), args, 0, (cudaStream_t)stream);
}

extern "C" int sarbp_af_sweep_blocks(int device)
{
    int per_sm = 0, sms = 0, coop = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sweep_kernel, SARBP_AF_THREADS, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device) != cudaSuccess || !coop)
        return 0;
    return per_sm * sms;
}
