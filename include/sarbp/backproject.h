/* sarbp/backproject.h - backprojection back ends behind one typed plan.
 *
 * A back end turns blocks of raw pulses into an image: create a plan for a
 * phase history's metadata and a region of a grid (all allocation happens
 * there: FFT plans, buffers, device memory), execute on blocks of pulses
 * (range compression + backprojection, accumulating), finish into the
 * caller's memory, destroy. Which region, which device and in which order
 * is the partition layer's business (form.h). Back ends: "cpu" (FFTW + pthreads; FP64 reference, FP32 tiled, or
 * the exact image by direct summation) and "cuda" (cuFFT + CUDA kernels;
 * FP32, FP16, mixed). */
#ifndef SARBP_BACKPROJECT_H
#define SARBP_BACKPROJECT_H

#include <stddef.h>
#include "sarbp/ffbp.h"
#include "sarbp/grid.h"
#include "sarbp/host.h"
#include "sarbp/rangecomp.h"
#include "sarbp/session.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_MAX_DEVICES 16

/* Direct backprojection, every pixel from every pulse; or fast factorized
 * backprojection (sarbp/ffbp.h: polar sub-images merged in a tree, about
 * N^2 log P work instead of N^2 P, to a requested accuracy); or, asked of
 * a form plan only (sarbp/form.h), whichever its model predicts faster at
 * the accuracy asked (plans never see it). */
typedef enum { SARBP_ALGO_BP = 0, SARBP_ALGO_FFBP = 1, SARBP_ALGO_AUTO = 2 } sarbp_algorithm;
const char *sarbp_algorithm_name(sarbp_algorithm a);

/* What a whole form asks for: the CLI's knobs, for every back end at once.
 * The registry (methods.c) turns it into the chosen back end's own
 * options below. */
typedef struct {
    sarbp_precision precision; /* default FP32 */
    int threads;               /* CPU: 0 = all cores */
    int device;                /* CUDA device ordinal, default 0 (used when ndevices is 0) */
    int devices[SARBP_MAX_DEVICES]; /* several CUDA devices: the image's bands spread over */
    int ndevices;              /* them, one host thread each; 0 = the one device above */
    const char *variant;       /* CUDA kernel variant name, NULL = dispatcher default */
    int tile_x, tile_y;        /* CUDA tile shape, 0 = default */
    int ppt;                   /* CUDA pixels per thread (1, 2, 4, 8), 0 = default */
    size_t pulse_block;        /* pulses per block, 0 = default */
    size_t gpu_mem;            /* this form's per-device memory budget in bytes, at most what
                                  the session's budget leaves (sarbp/session.h), 0 = that */
    int raw_fp16;              /* CUDA fp16, frequency-domain data: raw samples travel to the
                                  device as FP16 (1: half the upload, but FP16 quantisation
                                  spurs of a dominant target cap the dynamic range near
                                  70 dB) or FP32 (0, default) */
    int verbose;
    sarbp_algorithm algorithm; /* direct backprojection (default) or fast factorized
                                  backprojection (sarbp/ffbp.h; FP32, cpu and cuda) */
    double max_error_db;       /* ffbp: the accuracy asked, dB against direct backprojection
                                  (0 = SARBP_FFBP_DEFAULT_ERROR_DB, -60) */
    const struct sarbp_form_limits_s *limits; /* tests and benchmarks only (sarbp/bench.h:
                                  smaller bands, streamed profiles); NULL: none */
} sarbp_bp_options;

/* Where a plan's time and memory went, for benchmarks and --verbose. Times
 * are seconds; calls that take a sarbp_stage_times * add to it (+=) what
 * they know by the time they return (on the GPU, device times from CUDA
 * events arrive late: everything is in after finish). Stages on different
 * streams overlap, so their sum may exceed the wall-clock time. Fields a
 * back end cannot measure stay 0. Memory fields are set (not added) by
 * create. */
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

/* ---- the typed plan ----
 * A plan backprojects pulses of one phase history onto a region of one
 * grid: rows [row0, row0 + nrows) of g, all nx columns (a band). FFTW's
 * model: everything is allocated at create; execute only computes; a plan
 * chooses nothing (the factorization, interpolation and coherent gain
 * arrive decided in the description). One contract for every method row
 * (cpu bp, cpu ffbp, cpu exact, cuda bp, cuda ffbp):
 *
 *   shape    (sarbp_plan_shape, before create; allocates nothing) the
 *            block it prefers, the row alignment of its regions, its memory
 *            per region row and per kept pulse, whether it works in place.
 *   create   for meta (metadata; samples not needed), g, the range
 *            compression rc and the first region (its rows are the most any
 *            later region may have), in session (its memory counted against
 *            the session's budget, failing past it; what it keeps for a next
 *            plan given back to the session at destroy; NULL: a session of
 *            the plan's own, freed with it); keep_pulses = npulses keeps the
 *            range profiles of every pulse that execute computes, so that
 *            later regions read nothing from the input (0: none kept).
 *   stage    where the caller writes the samples of the next block
 *            (pulses [p0, p0 + np), np <= the block): the plan's own
 *            staging memory (a CUDA plan's pinned buffer), so that a reader
 *            reads straight into it. Whoever writes there checks the
 *            samples (NaN, Inf) as it writes; execute does not look again.
 *   execute  range-compresses pulses [p0, p0 + np) of meta and accumulates
 *            them onto the region. Each region receives every pulse once,
 *            in increasing order, in blocks of any size. samples: the block
 *            written where stage said, or the caller's memory
 *            ([np][nsamples], reusable once it returns), which the plan
 *            checks for NaN and Inf as it copies it (SARBP_ERR_INVALID
 *            naming the pulse, as sarbp_phd_check_samples); NULL: the kept
 *            profiles of those pulses (every region after the first).
 *   region   starts a new region (image zero; in place: the caller's rows
 *            as they are), e.g. the next band; kept profiles stay.
 *   finish   queues whatever execute held back (a device back end's last
 *            blocks, FFBP's stages), waits for the work and writes the region's image into out
 *            ([nrows][nx], host memory, row 0 = grid row row0).
 *   destroy  frees everything; NULL is a no-op.
 *
 * With image set in the description (the whole [ny][nx] output, zero where
 * the plan will work) a plan that works in place (the FP32 CPU path)
 * accumulates in the region's rows of it; finish then copies nothing when
 * out is those rows. One plan is used by one thread at a time; plans on
 * different devices run in parallel. */
typedef struct {
    size_t row0, nrows;
} sarbp_region;

typedef struct {
    const sarbp_phd *meta;     /* must outlive the plan */
    const sarbp_grid *grid;    /* copied */
    const sarbp_rc_params *rc; /* copied */
    sarbp_region region;
    size_t keep_pulses;        /* 0: no profiles kept */
    sarbp_c32 *image;          /* optional: the output image [ny][nx], see above */
    sarbp_session *session;    /* whose resources and budget (NULL: the plan's own) */
    const sarbp_ffbp_params *ffbp;          /* FFBP plans: the factorization, decided by the
                                               caller (the form plan, or sarbp_ffbp_choose_phd);
                                               an FFBP plan without it is refused */
    const sarbp_ffbp_prediction *ffbp_pred; /* with ffbp: the model's prediction for it, for
                                               reports (the memory model plans the bands'
                                               polar grids itself) */
} sarbp_bp_desc;

typedef struct sarbp_bp_plan_s sarbp_bp_plan;

sarbp_status sarbp_bp_plan_stage(sarbp_bp_plan *plan, size_t p0, size_t np, sarbp_c32 **buf);
sarbp_status sarbp_bp_plan_execute(sarbp_bp_plan *plan, size_t p0, size_t np,
                                   const sarbp_c32 *samples, sarbp_stage_times *stats);
sarbp_status sarbp_bp_plan_region(sarbp_bp_plan *plan, sarbp_region r);
sarbp_status sarbp_bp_plan_finish(sarbp_bp_plan *plan, sarbp_c32 *out, sarbp_stage_times *stats);
void sarbp_bp_plan_destroy(sarbp_bp_plan *plan);
/* Pulses per internal block (execute splits larger calls into these). */
size_t sarbp_bp_plan_block(const sarbp_bp_plan *plan);

/* The CPU back end's own options. */
typedef struct {
    sarbp_precision precision; /* FP64 (reference), FP32 (tiled), EXACT; default FP32 */
    int threads;               /* 0 = all cores */
    size_t pulse_block;        /* pulses per internal block, 0 = 128 */
    sarbp_algorithm algorithm; /* SARBP_ALGO_FFBP: an FFBP plan (FP32 only) of the
                                  factorization in sarbp_bp_desc.ffbp */
} sarbp_cpu_options;
void sarbp_cpu_options_default(sarbp_cpu_options *o);
sarbp_status sarbp_cpu_plan_create(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                   sarbp_bp_plan **out, sarbp_stage_times *stats);

/* The CUDA back end's own options. */
typedef struct {
    sarbp_precision precision; /* FP32 (default), FP16 or MIXED (cubic bins' C, D in FP16;
                                  variants flagged SARBP_CUDA_VARIANT_MIXED) */
    int device;                /* ordinal; the plan calls cudaSetDevice itself */
    const char *variant;       /* kernel variant (sarbp/cuda_variants.h), NULL = the default */
    int tile_x, tile_y, ppt;   /* 0 = the variant's default */
    size_t pulse_block;        /* pulses per internal block, 0 = 256 */
    int raw_fp16;              /* see sarbp_bp_options */
    sarbp_algorithm algorithm; /* SARBP_ALGO_FFBP: an FFBP plan (FP32): pulses are range-
                                  compressed on the device (cuFFT) as they come, into
                                  resident profiles, and finish runs the GPU FFBP of
                                  sarbp_ffbp_cuda on the region (the factorization
                                  in sarbp_bp_desc.ffbp) */
    size_t band_rows;          /* the memory model's bands have at most this many rows
                                  (sarbp_form_limits.band_rows), 0 = any */
} sarbp_cuda_options;
void sarbp_cuda_options_default(sarbp_cuda_options *o);
sarbp_status sarbp_cuda_plan_create(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                    sarbp_bp_plan **out, sarbp_stage_times *stats);
/* Number of usable CUDA devices (0 without CUDA or without a device). */
int sarbp_cuda_device_count(void);

/* A plan's shape, for the partition layer, before any plan exists (no
 * allocation; a CUDA query opens the device's context in the session):
 * its memory is fixed + rows x per_row + kept pulses x per_kept_pulse
 * bytes, against budget (what the session's budget leaves, or the option
 * when it is less; SIZE_MAX = no limit). Rows of a region should start at
 * multiples of row_align (the back end's tile height) so that a band forms
 * exactly what one piece forms there. */
typedef struct {
    size_t block;              /* pulses per execute it prefers (and the most stage takes) */
    size_t row_align;
    size_t fixed, per_row, per_kept_pulse, budget;
    size_t max_band_rows;      /* nonzero: no band of d's region may have more rows (a plan
                                  whose need is not linear in its rows, the cuda FFBP's polar
                                  grids: the largest band that fits budget, measured, and its
                                  need in fixed + max_band_rows x per_row; 1 when none fits,
                                  with one row's need); 0: fixed + rows x per_row holds */
    int in_place;              /* accumulates in the output image itself */
} sarbp_plan_shape;

sarbp_status sarbp_cpu_plan_shape(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                  size_t budget, sarbp_plan_shape *m);
/* budget 0: what the session's device budget leaves (without a session:
 * 85% of the device's free memory); never more than is free. */
sarbp_status sarbp_cuda_plan_shape(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                   size_t budget, sarbp_plan_shape *m);

/* ---- the registry (methods.c) ---- */
typedef struct sarbp_backend_s {
    const char *name;
    int multi_device;          /* 1: o->devices lists devices of this back end, one thread each */
    /* Nonzero when the back end can run here (o->device exists, ...); o may be NULL. */
    int (*available)(const sarbp_bp_options *o);
    /* The shape of a plan for d on device `device` (CUDA). */
    sarbp_status (*shape)(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                          sarbp_plan_shape *m);
    /* The back end's own options from o (device: which one), then its create. */
    sarbp_status (*create)(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                           sarbp_bp_plan **out, sarbp_stage_times *stats);
} sarbp_backend;

extern const sarbp_backend sarbp_backend_cpu;
extern const sarbp_backend sarbp_backend_cuda;

/* "cpu", "cuda"; NULL when unknown. */
const sarbp_backend *sarbp_backend_find(const char *name);
/* The back end "auto" means for o: cuda when a usable device is there (o's
 * devices), else the cpu (*fell_back = 1, may be NULL); fp64 and exact are
 * the cpu's. */
const sarbp_backend *sarbp_backend_auto(const sarbp_bp_options *o, int *fell_back);

/* ---- CPU backprojectors, exposed for tests and benchmarks ----
 * Accumulate pulses of pr onto img[ny][nx] (+=), reading the profiles with
 * their interpolation kernel (pr->interp). The FP64 reference is the
 * plain loop; the FP32 path is cache-tiled and
 * multi-threaded (threads <= 0: all cores) with tile-relative, cancellation-
 * free ranges; its result does not depend on the thread count. */
sarbp_status sarbp_bp_cpu_fp64(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_c64 *img);
sarbp_status sarbp_bp_cpu_fp32(const sarbp_profiles *pr, const sarbp_grid *g, int threads,
                               sarbp_c32 *img);
/* The same over rows [r.row0, r.row0 + r.nrows) of g only, onto img[nrows][nx]
 * (img row 0 = grid row r.row0). With r.row0 a multiple of 16 the FP32
 * path's tiles are those of the whole grid: each pixel gets bit for bit
 * what the whole-grid call gives it. */
sarbp_status sarbp_bp_cpu_fp64_rows(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_region r,
                                    sarbp_c64 *img);
sarbp_status sarbp_bp_cpu_fp32_rows(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_region r,
                                    int threads, sarbp_c32 *img);

/* The exact image (precision "exact"): accumulates onto img[ny][nx] (+=)
 *     sum_{j < np} sum_{k < nk} Y[j][k] exp(+j 4 pi (fa[j] + k fd[j]) dR_j(p) / c),
 * dR_j(p) = |pos_j - p| - r0_j, in FP64 by direct summation (Y from
 * sarbp_rc_exact_spectrum; pos [np][3], r0 [np]). K times the cost of
 * backprojection: for references on small images. threads <= 0: all cores;
 * the result does not depend on the thread count. */
sarbp_status sarbp_bp_exact(size_t np, size_t nk, const sarbp_c64 *Y, const double *fa,
                            const double *fd, const double *pos, const double *r0,
                            const sarbp_grid *g, int threads, sarbp_c64 *img);
/* The same over rows r of g onto img[r.nrows][nx]. */
sarbp_status sarbp_bp_exact_rows(size_t np, size_t nk, const sarbp_c64 *Y, const double *fa,
                                 const double *fd, const double *pos, const double *r0,
                                 const sarbp_grid *g, sarbp_region r, int threads, sarbp_c64 *img);

#ifdef __cplusplus
}
#endif
#endif
