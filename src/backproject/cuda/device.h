/* device.h - one CUDA device's context in a session (private to the
 * library): the one place the CUDA plans get device memory, pinned host
 * memory, cuFFT work-area sizes and what an earlier plan left for them.
 *
 * Device memory comes from sarbp_cuda_dmalloc, which counts it against the
 * session's budget for the device and fails, saying so, past it (after
 * freeing what is kept for a next plan). A plan gives its streams, events,
 * cuFFT plans and buffers back as a kept set of its kind when it is
 * destroyed, and the next plan of the kind takes it when the shapes match;
 * the context keeps up to four sets of a kind (forms sharing the session
 * run side by side, each on its own set) and frees a set (through the
 * function given with it) when room is needed, when a fifth of its kind is
 * kept (the oldest goes), or when it is closed. It knows nothing of what a set holds: the plans above it (bp,
 * ffbp) and the copier (cuda/copy.c) each keep their own kind.
 *
 * Every call takes the context's lock; none waits for the device. The
 * caller has made the context's device current (cudaSetDevice). d NULL
 * (a run without a session, e.g. sarbp_ffbp_cuda): plain CUDA calls,
 * nothing counted or kept. */
#ifndef SARBP_CUDA_DEVICE_H
#define SARBP_CUDA_DEVICE_H

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <stddef.h>

#include "sarbp/status.h"

typedef struct sarbp_cuda_device sarbp_cuda_device;

/* The context of device in s for a plan; s NULL: a session of the plan's
 * own is made into *own (the plan frees it last, so that nothing it keeps
 * outlives it). */
struct sarbp_session_s;
sarbp_status sarbp_cuda_plan_device(struct sarbp_session_s *s, int device, struct sarbp_session_s **own,
                                    sarbp_cuda_device **out);
/* Bytes of the budget a new plan may take: the budget less what is held
 * and not kept (kept sets are freed for it); never more than the device's
 * free memory plus the kept sets'. SIZE_MAX for d NULL. */
sarbp_status sarbp_cuda_device_room(sarbp_cuda_device *d, size_t *room);

/* n bytes of device memory counted against the budget (SARBP_ERR_NOMEM
 * past it, naming it), n added to *count when count is not NULL; freed
 * with sarbp_cuda_dfree (NULL is fine). */
sarbp_status sarbp_cuda_dmalloc(sarbp_cuda_device *d, void **ptr, size_t n, size_t *count);
void sarbp_cuda_dfree(sarbp_cuda_device *d, void *ptr);
/* *ptr (holding *have bytes, or NULL) kept when it holds need bytes and
 * not twice as many, else freed and need bytes allocated in its place
 * (*have set to them). */
sarbp_status sarbp_cuda_dmalloc_reuse(sarbp_cuda_device *d, void **ptr, size_t *have, size_t need);

/* Kept sets, one per kind. */
enum { SARBP_KEEP_BP, SARBP_KEEP_FFBP, SARBP_KEEP_COPIER, SARBP_KEEP_KINDS };
typedef void (*sarbp_cuda_free_set)(sarbp_cuda_device *d, void *set);
/* The newest kept set of the kind that fits(set, arg) accepts (fits NULL:
 * the newest), now the caller's; NULL when none does. Sets that do not fit
 * stay kept: forms of other shapes sharing the session take them. */
void *sarbp_cuda_device_take(sarbp_cuda_device *d, int kind, int (*fits)(const void *set, const void *arg),
                             const void *arg);
/* Keeps set (holding `bytes` of the device memory of d already counted)
 * for the next taker, freeing the oldest set of the kind when four are
 * kept; d NULL: freed now. */
void sarbp_cuda_device_keep(sarbp_cuda_device *d, int kind, void *set, size_t bytes,
                            sarbp_cuda_free_set free_set);
/* Frees the kept sets of the kind (-1: every kind's device memory
 * holders, the bp and ffbp sets). */
void sarbp_cuda_device_drop(sarbp_cuda_device *d, int kind);

/* A pinned host buffer of at least n bytes (given back with put: kept for
 * the next get while the context lives). */
sarbp_status sarbp_cuda_pinned_get(sarbp_cuda_device *d, size_t n, void **ptr);
void sarbp_cuda_pinned_put(sarbp_cuda_device *d, void *ptr);

/* cuFFT's estimate of the work area of a batch of 1-D C2C transforms of
 * length n (cufftEstimateMany), remembered per (n, batch) in d: it costs
 * 0.25-0.5 ms, and the memory model asks on every form. */
cufftResult sarbp_cuda_fft_work(sarbp_cuda_device *d, int n, int batch, size_t *bytes);

/* Adds delta (1 as a copier's job starts, -1 as it ends) to the jobs
 * running on d's copiers, and gives the count after (d NULL: 1): forms
 * sharing the device split the copier's cores among their jobs. */
int sarbp_cuda_device_copies(sarbp_cuda_device *d, int delta);

/* The copier's lanes asked of the session (0: the copier's default). */
int sarbp_cuda_device_threads(const sarbp_cuda_device *d);

#endif
