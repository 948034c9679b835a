/* sarbp/bench.h - for tests and benchmarks: knobs and entry points a
 * program forming images does not need, kept out of sarbp.h (zstd's
 * ZSTD_STATIC_LINKING_ONLY section is the model). Include it explicitly;
 * what it declares may change between versions.
 *
 *  - sarbp_form_limits: smaller bands and streamed profiles than the
 *    partition layer would choose, to test that banding changes nothing;
 *  - the CUDA kernels run alone over uploaded profiles (sarbp bench);
 *  - the GPU FFBP timed by step, and emulated on the CPU. */
#ifndef SARBP_BENCH_H
#define SARBP_BENCH_H

#include <stddef.h>

#include "sarbp/backproject.h"
#include "sarbp/ffbp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on how a form is cut up (sarbp_bp_options.limits). */
typedef struct sarbp_form_limits_s {
    size_t host_mem;   /* CPU: bytes for the image band being formed plus kept range
                          profiles, at most what the session's host budget leaves,
                          0 = that (bands on the CPU only when set) */
    size_t band_rows;  /* at most this many image rows per band (rounded down to the
                          back end's row alignment), 0 = as many as the budget allows */
    int stream;        /* 1: never keep range profiles (read and compress the input
                          again for every band) */
} sarbp_form_limits;

/* ---- CUDA kernel benchmarking (back end "cuda"; SARBP_ERR_UNSUPPORTED
 * without CUDA) ----
 * Uploads FP32 profiles pr once, then runs the chosen kernel variant reps
 * times over grid g (image zeroed before each run, outside the timing) and
 * reports the median kernel time in milliseconds (CUDA events) and the image
 * of the last run (img, [ny][nx], may be NULL). */
typedef struct {
    const char *variant; /* NULL: dispatcher default */
    int tile_x, tile_y, ppt, device;
    int half;            /* FP16 profiles (scaled by their maximum) instead of FP32 */
    int minb;            /* resident blocks per SM the kernel is compiled for (12, 16;
                            -1 = none; 0 = the dispatcher's choice by profile format;
                            see kernels/bp_kernels.h) */
    int mixed;           /* cubic profiles with A, B FP32 and C, D FP16 (scaled by their
                            maximum); half must be 0 */
} sarbp_cuda_kernel_cfg;
sarbp_status sarbp_cuda_bench_kernel(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_cuda_kernel_cfg *cfg, int reps,
                                     double *median_ms, sarbp_c32 *img);
/* Name and clocks of a device, for benchmark tables. */
sarbp_status sarbp_cuda_device_info(int device, char *name, size_t n, int *sm_count,
                                    int *clock_mhz, int *mem_clock_mhz);

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
