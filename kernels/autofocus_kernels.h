/* autofocus_kernels.h - the C interface of kernels/autofocus.cu, the
 * autofocus engine on a GPU (src/autofocus/engine.h says what it computes).
 *
 * B is [P][M] float2: pulse j's contribution to pixel m, row-major by
 * pulse. Device pointers are prefixed d_. Launchers are asynchronous on
 * the given stream (a cudaStream_t as void *) and return the launch's
 * cudaError_t as int. */
#ifndef SARBP_AUTOFOCUS_KERNELS_H
#define SARBP_AUTOFOCUS_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A pulse as the contributions read it (the FP64 reference's arithmetic). */
typedef struct {
    double ax, ay, az;  /* antenna phase centre, m */
    double r0;          /* m */
    double rstart;      /* differential range of bin 0, m */
    double inv_dr;      /* 1/m */
    double kph;         /* 4 pi fref / c, rad/m */
} sarbp_af_pulse;

enum { SARBP_AF_LINEAR = 0, SARBP_AF_QUADRATIC = 1, SARBP_AF_CUBIC = 2 };

/* B[j][m] = pulse j's FP32 profile (d_prof [P][nbins] float2) read with the
 * interpolation at pixel m (d_xyz [M][3] doubles), times exp(+j kph dR),
 * dR = |a_j - x_m| - r0_j, in FP64: the FP64 reference backprojector's
 * arithmetic over one pulse. */
int sarbp_af_contrib(const void *d_prof, const sarbp_af_pulse *d_pulses, int P, int nbins, int interp,
                     const double *d_xyz, size_t M, void *d_B, void *stream);

/* d_B times s (n float2). */
int sarbp_af_scale(void *d_B, size_t n, float s, void *stream);

/* The image I[m] = sum_j phasor[j] B[j][m] into d_img [M] float2, and per
 * block of SARBP_AF_THREADS pixels the sum of |I|^4 into d_part[block] (FP64;
 * nblocks = ceil(M / SARBP_AF_THREADS)). */
#define SARBP_AF_THREADS 256
int sarbp_af_image(const void *d_B, const void *d_phasor, size_t P, size_t M, void *d_img, double *d_part,
                   void *stream);

/* The weight from the image: d_mask NULL: |I|^2 conj(I); else conj(I) where
 * mask[m], 0 elsewhere. d_w [M] float2. */
int sarbp_af_weight(const void *d_img, const unsigned char *d_mask, size_t M, void *d_w, void *stream);

/* acc over chunks of SARBP_AF_CHUNK pixels: d_part[c][j] (two doubles) =
 * sum over chunk c of w[m] B[j][m]; nchunk = ceil(M / SARBP_AF_CHUNK). */
#define SARBP_AF_CHUNK 8192
int sarbp_af_reproject(const void *d_B, const void *d_w, size_t P, size_t M, double *d_part, void *stream);

/* One coordinate-ascent sweep over the pulses (engine.h), in one
 * cooperative launch of nblocks blocks of SARBP_AF_THREADS threads (all
 * resident: sarbp_af_sweep_blocks): d_phi [P] in and out (each within half a
 * turn of d_ref [P]), d_img [M] updated; d_part: 2 * nblocks * 4 doubles of
 * scratch; d_bar: two zeroed unsigned ints (the grid barrier); d_out
 * [nblocks + 1]: per block the sum of |I|^4 of the new image, then the
 * largest phase change. */
int sarbp_af_sweep(const void *d_B, void *d_img, size_t P, size_t M, double *d_phi, const double *d_ref,
                   double *d_part, unsigned *d_bar, double *d_out, int nblocks, void *stream);
/* The most blocks of sarbp_af_sweep that fit the device at once (0 on error). */
int sarbp_af_sweep_blocks(int device);

#ifdef __cplusplus
}
#endif
#endif
