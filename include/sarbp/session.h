/* sarbp/session.h - what a caller reuses across forms, and frees.
 *
 * A session owns every resource the library keeps between calls (zstd's
 * reusable context, FFTW's plan ownership): per CUDA device one context
 * (streams, events and cuFFT plans a plan gives back for the next plan of
 * the same shapes, device buffers, pinned staging, the copier's host
 * threads), and the accounting of host and device memory against the
 * session's budgets. Nothing is process-global: two sessions share
 * nothing, and sarbp_session_free frees it all and joins every thread the
 * library started for it. A CUDA device's context is made the first time a
 * plan of the session uses that device.
 *
 * The budgets are bounds, enforced where memory is allocated: a plan whose
 * memory would take a device past device_budget (or the host past
 * host_budget) fails at create with SARBP_ERR_NOMEM, saying so; memory kept
 * for a next plan is freed first when a plan needs the room. The partition
 * layer (form.h) cuts an image into bands that fit them.
 *
 * Forms in several threads may share a session at once: every call on it
 * takes its locks, and each plan takes its own kept set (a device keeps four
 * of each kind, so up to four forms side by side on one device find theirs;
 * on one GPU, one form's pulses go up and image comes back while the
 * other's kernels run). sarbp_session_free must wait for them all. */
#ifndef SARBP_SESSION_H
#define SARBP_SESSION_H

#include <stddef.h>

#include "sarbp/ffbp.h"
#include "sarbp/phd.h"
#include "sarbp/rangecomp.h"
#include "sarbp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sarbp_session_s sarbp_session;

typedef struct {
    int threads;          /* host threads of the copier's lanes (CUDA): 0 = three quarters of
                             the cores, at most 16 */
    size_t device_budget; /* bytes per CUDA device its plans may hold; 0 = 85% of the
                             device's free memory when the session first uses it */
    size_t host_budget;   /* bytes of host memory its CPU plans may hold (image band,
                             kept range profiles, blocks); 0 = no limit */
} sarbp_session_options;

void sarbp_session_options_default(sarbp_session_options *o);
/* o NULL: the defaults. *out freed with sarbp_session_free. */
sarbp_status sarbp_session_create(const sarbp_session_options *o, sarbp_session **out);
/* Frees everything s holds and joins its threads; no plan of s may be
 * alive. NULL is a no-op. */
void sarbp_session_free(sarbp_session *s);

/* Starts the CUDA contexts of devices[0..n-1] in s now, side by side (a
 * thread each), instead of at each one's first plan: a caller forming
 * image after image pays the start (a quarter of a second or more a
 * device) before its first form, and several devices start in the time of
 * one. Starting one already started costs nothing. The first failure, in
 * the order given (SARBP_ERR_NODEVICE: no such device, or no CUDA in this
 * build). */
sarbp_status sarbp_session_start(sarbp_session *s, const int *devices, int n);

/* What a session's plans hold of its budget (bytes), now and at most since
 * the session was made; device: a CUDA ordinal, or -1 for the host. All 0
 * for a device the session never used. */
typedef struct {
    size_t budget;        /* SIZE_MAX: no limit */
    size_t used, peak;    /* plans' and kept memory */
    size_t kept;          /* of used: kept for a next plan, freed when a plan needs room */
} sarbp_session_memory;
void sarbp_session_memory_of(sarbp_session *s, int device, sarbp_session_memory *m);

/* sarbp_ffbp_choose_phd, remembered by s: the session keeps its last
 * decision and gives it again while the inputs are equal in value (the
 * pulses' geometry, the grid, the interpolation, the error target; never
 * keyed on an address, so a phase history refilled in place with other
 * positions is chosen for again). The search costs about 40 ms for 2048
 * pulses and a 4096^2 grid: a caller forming image after image of one
 * geometry pays it once, and a form that chose for its command line does
 * not choose again for its plans. Thread safe. s NULL: nothing kept. */
sarbp_status sarbp_session_ffbp_choose(sarbp_session *s, const sarbp_phd *meta,
                                       const sarbp_rc_params *rc, const sarbp_grid *g,
                                       double max_error_db, sarbp_ffbp_params *out,
                                       sarbp_ffbp_prediction *pred);

#ifdef __cplusplus
}
#endif
#endif
