/* sarbp/backproject.h - backprojection back ends behind one interface.
 *
 * A back end turns blocks of raw pulses into an image: create a plan for a
 * phase history's metadata and a grid (all allocation happens there: FFT
 * plans, buffers, device memory), execute on consecutive blocks of pulses
 * (range compression + backprojection, accumulating), finish into an image,
 * destroy. Back ends: "cpu" (FFTW + pthreads; FP64 reference, FP32 tiled, or
 * the exact image by direct summation) and "cuda" (cuFFT + CUDA kernels;
 * FP32, FP16). */
#ifndef SARBP_BACKPROJECT_H
#define SARBP_BACKPROJECT_H

#include <stddef.h>
#include "sarbp/grid.h"
#include "sarbp/rangecomp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    sarbp_precision precision; /* default FP32 */
    int threads;               /* CPU: 0 = all cores */
    int device;                /* CUDA device ordinal, default 0 */
    const char *variant;       /* CUDA kernel variant name, NULL = dispatcher default */
    int tile_x, tile_y;        /* CUDA/CPU tile shape, 0 = default */
    int ppt;                   /* CUDA pixels per thread (1, 2, 4, 8), 0 = default */
    size_t pulse_block;        /* pulses per block, 0 = default */
    size_t gpu_mem;            /* device memory budget in bytes, 0 = most of the free memory */
    int raw_fp16;              /* CUDA fp16, frequency-domain data: raw samples travel to the
                                  device as FP16 (1: half the upload, but FP16 quantisation
                                  spurs of a dominant target cap the dynamic range near
                                  70 dB) or FP32 (0, default) */
    int verbose;
} sarbp_bp_options;

/* Where a plan's time and memory went, for benchmarks and --verbose. Times
 * are seconds summed over all blocks and passes; on the GPU they are device
 * times from CUDA events (stages on different streams overlap, so the sum
 * of the stages may exceed the wall-clock time). Fields a back end cannot
 * measure are 0. */
typedef struct {
    double setup_s;        /* create(): allocations, FFT plans, tables (wall) */
    double transfer_s;     /* host <-> device copies (device time) */
    double rc_s;           /* range compression */
    double bp_s;           /* backprojection */
    double finish_s;       /* finish(): waiting for the last work, image copy back (wall) */
    size_t pulse_bytes;    /* memory holding pulse data: raw blocks, FFT buffers, profiles */
    size_t image_bytes;    /* memory holding the image: the device band, or the CPU accumulation buffer */
} sarbp_stage_times;

void sarbp_bp_options_default(sarbp_bp_options *o);

typedef struct sarbp_backend_s {
    const char *name;
    /* Nonzero when the back end can run here (a device exists, ...). */
    int (*available)(const sarbp_bp_options *o);
    sarbp_status (*create)(const sarbp_phd *meta, const sarbp_grid *grid,
                           const sarbp_rc_params *rc, const sarbp_bp_options *o,
                           void **plan);
    /* Preferred pulses per execute() call. */
    size_t (*block_pulses)(const void *plan);
    /* Number of passes over all pulses: an image too large for the device is
     * formed in bands of rows, each pass streaming every pulse again. */
    size_t (*passes)(const void *plan);
    /* Starts pass k (0-based) before its execute() calls. */
    sarbp_status (*begin_pass)(void *plan, size_t k);
    /* Range-compresses and backprojects pulses [p0, p0 + np) of meta whose
     * samples are samples[np][nsamples]. May run asynchronously: samples may
     * be reused by the caller as soon as it returns. */
    sarbp_status (*execute)(void *plan, size_t p0, size_t np, const sarbp_c32 *samples);
    /* Waits for all work and writes the image [ny][nx]. */
    sarbp_status (*finish)(void *plan, sarbp_c32 *image);
    void (*destroy)(void *plan); /* NULL is a no-op */
    /* Times and memory so far (after finish(): of the whole run). */
    void (*stage_times)(const void *plan, sarbp_stage_times *t);
} sarbp_backend;

extern const sarbp_backend sarbp_backend_cpu;
extern const sarbp_backend sarbp_backend_cuda;

/* "cpu", "cuda"; NULL when unknown. */
const sarbp_backend *sarbp_backend_find(const char *name);

/* ---- CPU backprojectors, exposed for tests and benchmarks ----
 * Accumulate pulses of pr onto img[ny][nx] (+=), reading the profiles with
 * their interpolation kernel (pr->interp). The FP64 reference is the
 * plain loop; the FP32 path is cache-tiled and
 * multi-threaded (threads <= 0: all cores) with tile-relative, cancellation-
 * free ranges; its result does not depend on the thread count. */
sarbp_status sarbp_bp_cpu_fp64(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_c64 *img);
sarbp_status sarbp_bp_cpu_fp32(const sarbp_profiles *pr, const sarbp_grid *g, int threads,
                               sarbp_c32 *img);

/* The exact image (precision "exact"): accumulates onto img[ny][nx] (+=)
 *     sum_{j < np} sum_{k < nk} Y[j][k] exp(+j 4 pi (fa[j] + k fd[j]) dR_j(p) / c),
 * dR_j(p) = |pos_j - p| - r0_j, in FP64 by direct summation (Y from
 * sarbp_rc_exact_spectrum; pos [np][3], r0 [np]). K times the cost of
 * backprojection: for references on small images. threads <= 0: all cores;
 * the result does not depend on the thread count. */
sarbp_status sarbp_bp_exact(size_t np, size_t nk, const sarbp_c64 *Y, const double *fa,
                            const double *fd, const double *pos, const double *r0,
                            const sarbp_grid *g, int threads, sarbp_c64 *img);

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
} sarbp_cuda_kernel_cfg;
sarbp_status sarbp_cuda_bench_kernel(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_cuda_kernel_cfg *cfg, int reps,
                                     double *median_ms, sarbp_c32 *img);
/* Name and clocks of a device, for benchmark tables. */
sarbp_status sarbp_cuda_device_info(int device, char *name, size_t n, int *sm_count,
                                    int *clock_mhz, int *mem_clock_mhz);

/* Number of online CPUs. */
int sarbp_cpu_count(void);

#ifdef __cplusplus
}
#endif
#endif
