/* sarbp/ffbp.h - fast factorized backprojection (src/backproject/ffbp.c). */
#ifndef SARBP_FFBP_H
#define SARBP_FFBP_H

#include "sarbp/grid.h"
#include "sarbp/rangecomp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The factorization: stage 0 backprojects runs of `base` pulses onto
 * coarse polar grids; each later stage merges `merge` neighbouring
 * sub-apertures; merging stops once at most `final_subs` remain, which are
 * summed at the pixels. os_theta: angular oversampling of every polar grid
 * over its Nyquist rate (>= 1). */
typedef struct {
    size_t base, merge, final_subs;
    double os_theta;
    double os_rho; /* range sampling: the profiles' bin spacing / os_rho (>= 1) */
} sarbp_ffbp_params;

/* base 8, merge 2, final_subs 8, os_theta 4, os_rho 2. */
void sarbp_ffbp_params_default(sarbp_ffbp_params *p);

typedef struct {
    int stages;            /* polar stages, stage 0 included */
    size_t final_subs;     /* sub-apertures summed at the pixels */
    size_t polar_samples;  /* samples of every polar grid, all stages */
} sarbp_ffbp_info;

/* Adds the FFBP image of FP64 profiles pr on grid g to img[ny][nx] (as
 * sarbp_bp_cpu_fp64 does for direct backprojection). The antenna must be
 * outside the image footprint (SARBP_ERR_INVALID otherwise). info may be
 * NULL. */
sarbp_status sarbp_ffbp_cpu_fp64(const sarbp_profiles *pr, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, sarbp_c64 *img,
                                 sarbp_ffbp_info *info);

/* ---- CUDA ---- */

/* Adds the FFBP image of profiles pr (FP32 data32, or FP64 data64 rounded
 * to FP32 on upload; linear or cubic, as pr->interp says) on grid g to
 * img[ny][nx], computed in FP32 on CUDA device `device`: the prototype's
 * factorization, grids and interpolation (see sarbp_ffbp_cpu_fp64), with
 * the geometry referenced per thread block in FP64 so that FP32 keeps the
 * phase (kernels/ffbp_kernels.h). All device memory is allocated up front
 * (profiles, two buffers of the largest stage's polar samples, the image)
 * and freed before return. device_ms (may be NULL): the device time of the
 * computation (CUDA events), from after the profiles are on the device to
 * the image being complete there: geometry tables' upload, every stage and
 * the final sum, not the image's copy back. info may be NULL. Not
 * thread-safe for the same device (sets the calling thread's current
 * device). SARBP_ERR_NODEVICE without a usable device;
 * SARBP_ERR_UNSUPPORTED in a build without CUDA; SARBP_ERR_INVALID as the
 * prototype, or when a size exceeds what the kernels index. */
sarbp_status sarbp_ffbp_cuda(const sarbp_profiles *pr, const sarbp_grid *g,
                             const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
                             sarbp_ffbp_info *info, double *device_ms);

/* Where sarbp_ffbp_cuda's device time went (CUDA events between the
 * launches), milliseconds. */
typedef struct {
    double total_ms;     /* device_ms of sarbp_ffbp_cuda */
    double tables_ms;    /* the geometry tables' upload */
    double stage0_ms;    /* backprojection of the pulses onto the stage-0 grids */
    double merge_ms;     /* every merge stage */
    double prefilter_ms; /* every stage's B-spline prefilter */
    double final_ms;     /* the sum at the pixels */
} sarbp_ffbp_cuda_times;

/* sarbp_ffbp_cuda, with the device time split by step into t (not NULL). */
sarbp_status sarbp_ffbp_cuda_timed(const sarbp_profiles *pr, const sarbp_grid *g,
                                   const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
                                   sarbp_ffbp_info *info, sarbp_ffbp_cuda_times *t);

/* The same computation as sarbp_ffbp_cuda, on the CPU: the GPU kernels'
 * per-thread FP32 arithmetic (shared source) with their thread blocks run
 * as loops. For testing that arithmetic where there is no GPU; slow
 * (single precision, all cores, no vectorisation). Built with or without
 * CUDA. */
sarbp_status sarbp_ffbp_emulate_fp32(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_ffbp_params *prm, sarbp_c32 *img,
                                     sarbp_ffbp_info *info);

#ifdef __cplusplus
}
#endif
#endif
