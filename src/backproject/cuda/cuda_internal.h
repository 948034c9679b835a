/* cuda_internal.h - what the CUDA back end's files share (private to the
 * library): the error idioms that turn a CUDA, cuFFT or launcher result
 * into a sarbp_status and return it. */
#ifndef SARBP_CUDA_INTERNAL_H
#define SARBP_CUDA_INTERNAL_H

#include <cuda_runtime_api.h>
#include <cufft.h>

#include "sarbp/status.h"

/* cuFFT has no error-string function: the result's name. */
const char *sarbp_cufft_name(cufftResult r);

/* cuFFT's estimate of the work area of a batch of 1-D C2C transforms of
 * length n (cufftEstimateMany), remembered per (n, batch): the estimate
 * costs 0.25-0.5 ms and memory layouts ask for it on every form. */
cufftResult sarbp_cufft_work(int n, int batch, size_t *bytes);

/* Frees the streams, events and cuFFT plans the bp plans keep for the next
 * plan (backend_cuda.c; sarbp_cuda_release_cached calls it). */
void sarbp_cuda_release_kits(void);
/* The device memory (image band, slot buffers) device's kept set holds
 * (reclaimable, like the FFBP plans' below), and freeing it (a plan that is
 * not a bp plan needs it). */
size_t sarbp_cuda_kit_memory_bytes(int device);
void sarbp_cuda_drop_kit_memory(int device);

/* The FFBP plans' kept sets (ffbp_cuda.c): the device memory device's set
 * holds (reclaimable: the memory model counts it free), freeing it, and
 * freeing every device's (sarbp_cuda_release_cached). */
size_t sarbp_cuda_ffbp_kit_bytes(int device);
void sarbp_cuda_ffbp_drop_kit(int device);
void sarbp_cuda_ffbp_release_kits(void);

#define CUDA_TRY(call)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return sarbp_error(e_ == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA, \
                               "%s failed at %s:%d: %s", #call, __FILE__, __LINE__,      \
                               cudaGetErrorString(e_));                                  \
    } while (0)

#define CUFFT_TRY(call)                                                                  \
    do {                                                                                 \
        cufftResult r_ = (call);                                                         \
        if (r_ != CUFFT_SUCCESS)                                                         \
            return sarbp_error(SARBP_ERR_CUFFT, "%s failed at %s:%d: %s", #call, __FILE__, \
                               __LINE__, sarbp_cufft_name(r_));                          \
    } while (0)

/* launchers return cudaError_t as int */
#define LAUNCH_TRY(call) CUDA_TRY((cudaError_t)(call))

#endif
