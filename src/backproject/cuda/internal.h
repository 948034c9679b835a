/* cuda/internal.h - what the CUDA back end's files share (private to the
 * library): the error idioms that turn a CUDA, cuFFT or launcher result
 * into a sarbp_status and return it. */
#ifndef SARBP_CUDA_INTERNAL_H
#define SARBP_CUDA_INTERNAL_H

#include <cuda_runtime_api.h>
#include <cufft.h>

#include "sarbp/status.h"

/* cuFFT has no error-string function: the result's name. */
const char *sarbp_cufft_name(cufftResult r);

/* SARBP_ERR_NODEVICE unless device is a usable CUDA ordinal (cuda/plan_bp.c;
 * shared by the session's device contexts, the plans and sarbp_ffbp_cuda). */
sarbp_status sarbp_cuda_check_device(int device);

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
