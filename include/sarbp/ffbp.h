/* sarbp/ffbp.h - fast factorized backprojection (Ulander, Hellsten and
 * Stenstrom 2003): the FP64 prototype (src/backproject/ffbp.c, the
 * reference), the FP32 multi-threaded engine (ffbp/engine_fp32.c; behind 'sarbp
 * form --algorithm ffbp' as the cpu back end's streaming plan,
 * cpu/plan_ffbp.c), and the error and cost model that chooses a
 * factorization for a requested accuracy (ffbp/model.c).
 *
 * Frames and units as sarbp/backproject.h: profiles [pulse][bin], images
 * [ny][nx] row-major, host memory; metres, Hz. The functions are
 * reentrant: calls on different images may run at once. */
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
    double stage0_s, merge_s, final_s; /* FP32: wall-clock seconds of stage 0, the merges
                                          and the last step (0 from the FP64 prototype) */
} sarbp_ffbp_info;

/* Adds the FFBP image of FP64 profiles pr on grid g to img[ny][nx] (as
 * sarbp_bp_cpu_fp64 does for direct backprojection). The antenna must be
 * outside the image footprint (SARBP_ERR_INVALID otherwise). info may be
 * NULL. */
sarbp_status sarbp_ffbp_cpu_fp64(const sarbp_profiles *pr, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, sarbp_c64 *img,
                                 sarbp_ffbp_info *info);

/* What the model (src/backproject/ffbp_model.c) predicts for a
 * factorization of these pulses onto this grid. error_db: the error power
 * over the image's, in dB (the SER against direct backprojection of the
 * same profiles is -error_db): each 2-D interpolation (every merge and the
 * last step) adds the aliasing of a cubic B-spline at the grid's effective
 * angular oversampling (os_theta times the grid's sampling over the
 * carrier's turn k L cos(depression) across its sub-aperture) plus a
 * measured floor. cost_ratio: predicted time over sarbp_bp_cpu_fp32's for
 * the same job (both at the same thread count), from work counts weighted
 * by per-operation costs measured on the CPU. */
typedef struct {
    double error_db;
    double cost_ratio;
    int stages;
    size_t final_subs;
    size_t polar_samples;
} sarbp_ffbp_prediction;

/* Only the geometry of pr is read (npulses, pos, dr, fref; data may be
 * NULL). SARBP_ERR_INVALID for bad parameters or an antenna over the
 * image. */
sarbp_status sarbp_ffbp_predict(const sarbp_profiles *pr, const sarbp_grid *g,
                                const sarbp_ffbp_params *prm, sarbp_ffbp_prediction *out);

/* The cheapest factorization (by cost_ratio) whose predicted error is at
 * most max_error_db (e.g. -60: SER >= 60 dB against direct backprojection)
 * less a margin of 5 dB (the model's spread against measurement), so that
 * the measured error meets the request
 * among base 4..64, merge 2..4, final_subs 1..16, os_rho 1.5..3 and
 * os_theta in steps of 0.25 from 1.5 to 12. When none meets the request,
 * the most accurate one searched, and *predicted_db says how far it falls
 * short. predicted_db (the prediction's error_db) may be NULL.
 * max_error_db from -150 to -10. */
sarbp_status sarbp_ffbp_choose(const sarbp_profiles *pr, const sarbp_grid *g, double max_error_db,
                               sarbp_ffbp_params *out, double *predicted_db);

#define SARBP_FFBP_DEFAULT_ERROR_DB (-60.0)

/* sarbp_ffbp_choose for the pulses of meta as range compression rc would
 * give them (their geometry only: no samples are read), and the
 * prediction for the choice (pred may be NULL). What the cpu back end's
 * FFBP plan and 'sarbp form --algorithm ffbp|auto' use. max_error_db 0 means
 * SARBP_FFBP_DEFAULT_ERROR_DB. rc's kernel is linear or cubic (ffbp does not
 * read the quadratic, the library's default: SARBP_ERR_UNSUPPORTED;
 * sarbp_rc_params_default_for(rc, SARBP_FP32, 1) gives ffbp's default). */
sarbp_status sarbp_ffbp_choose_phd(const sarbp_phd *meta, const sarbp_rc_params *rc,
                                   const sarbp_grid *g, double max_error_db,
                                   sarbp_ffbp_params *out, sarbp_ffbp_prediction *pred);

/* The same in FP32, multi-threaded (threads <= 0: all cores; the result
 * does not depend on it), adding (+=) to img[ny][nx] as sarbp_bp_cpu_fp32
 * does: FP32 profiles pr (data32), polar grids in FP32, geometry and phase
 * in FP64 until reduced to small quantities (ffbp/engine_fp32.c). Pulses are
 * consumed in order, runs of base pulses at a time, as the cpu back end's
 * streaming FFBP plan does. SARBP_ERR_INVALID for FP64 profiles, bad
 * parameters or an antenna over the image. info may be NULL. */
sarbp_status sarbp_ffbp_cpu_fp32(const sarbp_profiles *pr, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, int threads, sarbp_c32 *img,
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

/* The device bytes of a GPU FFBP run besides the profiles: two buffers of
 * the largest stage's polar samples, the image and the tables (pulses,
 * sub-images, rows), as sarbp_ffbp_cuda and the cuda back end's FFBP plan
 * allocate them. For rows [row0, row0 + nrows) of g cut into bands of
 * band_rows rows (the last may have fewer; band_rows >= nrows: one
 * piece), each a run of its own whose buffers grow to the largest band:
 * each of those the largest over the bands, summed. A band's polar grids cover its footprint: their
 * range extent stays that of the image's width, so they shrink far less
 * than its rows. Over 64 bands, each band is bounded by the window of
 * 2 ceil(nrows / 64) rows on a multiple of ceil(nrows / 64) that holds
 * it, with 1/16 more (a smaller footprint may turn its sub-apertures
 * slightly), so that at most 64 factorizations are planned (each some
 * 0.1 ms at 2048 pulses). Reads pr's geometry only (as sarbp_ffbp_predict;
 * pr->nbins too); needs no device. SARBP_ERR_INVALID as sarbp_ffbp_cuda. */
sarbp_status sarbp_ffbp_cuda_run_bytes(const sarbp_profiles *pr, const sarbp_grid *g,
                                       const sarbp_ffbp_params *prm, size_t row0, size_t nrows,
                                       size_t band_rows, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
