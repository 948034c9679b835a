/* bp_kernels.h - the C interface of the CUDA kernels in kernels/.
 *
 * Host pointers are prefixed h_, device pointers d_. Launchers are
 * asynchronous on the given stream and return the launch's cudaError_t
 * (as int, so C code need not include CUDA headers here). */
#ifndef SARBP_BP_KERNELS_H
#define SARBP_BP_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Per-pulse geometry on the device (64 bytes). */
typedef struct {
    double ax, ay, az; /* antenna phase centre, m */
    double r0;         /* range to the scene origin, m */
    double rstart;     /* differential range of bin 0, m */
    double inv_dr;     /* 1 / bin spacing, 1/m */
    double fref;       /* phase reference frequency, Hz */
    double pad;
} sarbp_dpulse;

/* One backprojection launch: pulses [0, np) of a block onto an image band.
 * Profiles are lerp-ready: d_prof[i * nbins + b] = (re_b, im_b, re_{b+1} -
 * re_b, im_{b+1} - im_b), the last bin's differences 0. The band holds rows
 * [0, ny) with pixel (ix, iy) at (x0 + ix dx, y0 + iy dy, z); d_img is
 * [ny][nx] float2 and is accumulated into (+=). */
typedef struct {
    const void *d_prof;           /* float4 [np][nbins] */
    const sarbp_dpulse *d_pulses; /* [np] */
    int np, nbins;
    void *d_img;                  /* float2 [ny][nx] */
    int nx, ny;
    double x0, y0, dx, dy, z;
} sarbp_bp_launch;

/* Variants (see backproject.cu):
 *   "v1"  one thread per pixel, FP64 arithmetic, plain global loads: the GPU
 *         baseline and the full-image reference for benchmarks;
 *   "v2"  tiled, tile-relative FP32: exact sqrt/divide formula of primer s.4;
 *   "v3"  tiled, tile-relative FP32 with a series for the range (no sqrt or
 *         divide), floor by rounding mode, phase folded into sincos (default);
 *   "v3a" v3 with a float-float phase argument (the accurate variant). */
typedef struct {
    const char *variant; /* NULL or "" = default */
    int tile_x, tile_y;  /* pixels; 0 = default. tile_x = threads in x */
    int ppt;             /* pixels per thread: 1, 2, 4, 8; 0 = default */
} sarbp_bp_config;

/* Resolves defaults and checks the configuration (variant known, ppt in
 * {1,2,4,8}, tile_y a multiple of ppt, threads per block <= 1024).
 * Returns 0 when valid, else -1 and a reason in why. */
int sarbp_bp_config_resolve(sarbp_bp_config *cfg, char *why, size_t nwhy);

/* The dispatcher: launches the configured variant. */
int sarbp_bp_launch_kernel(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, void *stream);

/* Range compression helpers (rangecomp.cu). */
/* d_out[j][k] = d_in[j][k] * d_w[k] * h_waz (K samples, then zeros to nfft),
 * for np pulses; d_w complex (window / K with the fftshift phase folded in). */
int sarbp_rc_pack(const void *d_in, void *d_out, const void *d_w, const float *d_waz,
                  int np, int K, int nfft, void *stream);
/* d_prof[j][b] = lerp-ready float4 from d_y[j][b] (float2), np pulses. */
int sarbp_rc_lerp_ready(const void *d_y, void *d_prof, int np, int nbins, void *stream);

#ifdef __cplusplus
}
#endif
#endif
