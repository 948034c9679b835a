/* cuda/copy.h - the CUDA plans' device-to-host copy into ordinary
 * (pageable) memory at the speed of a pinned one (private to the library).
 *
 * Measured on the H200 host (docs/benchmarks/2026-11-journal.md): a copy from the
 * device into pageable memory runs at 9.3 GB/s, into pinned memory at 55
 * GB/s; pinning costs 0.3-0.4 ms a MiB with cudaMallocHost. So the image
 * comes back through small pinned bounce buffers: each host thread copies
 * its own slice of the image through two of its own, the device filling one
 * while the thread empties the other into the image (cuda/copy.c),
 * and pinned buffers are pinned once per session (device.h), not once
 * per plan. */
#ifndef SARBP_CUDA_COPY_H
#define SARBP_CUDA_COPY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "device.h"
#include "sarbp/status.h"

typedef struct sarbp_d2h sarbp_d2h;

/* A copier for the current device, whose context is ctx (NULL: none, the
 * copier is freed when destroyed): the session's threads less one host
 * threads besides the caller's (0: three quarters of the cores), each with
 * its own stream and bounce buffers; the one ctx keeps, when it fits. */
sarbp_status sarbp_d2h_create(sarbp_cuda_device *ctx, sarbp_d2h **out);
/* Copies n bytes from device memory src to host memory dst once event
 * after (NULL: none) has passed; returns when dst holds them. */
sarbp_status sarbp_d2h_copy(sarbp_d2h *c, void *dst, const void *src, size_t n, cudaEvent_t after);
/* Copies the nchunks chunks of device memory src to dst: chunk k is bytes
 * [ends[k - 1], ends[k]) (from 0; ends ascending), copied once event
 * after[k] (NULL: none) has passed, while later chunks are still being
 * made; returns when dst holds them all. */
sarbp_status sarbp_d2h_copy_chunks(sarbp_d2h *c, void *dst, const void *src, int nchunks,
                                   const size_t *ends, const cudaEvent_t *after);
/* Copies the n floats (n even) of samples src to dst, both host memory,
 * on c's threads (staging a block of samples into pinned memory), checking
 * them as it goes; returns when done, with the index of the first NaN or
 * Inf float of src, or n (then dst holds src; else only part of it). */
size_t sarbp_d2h_host_copy(sarbp_d2h *c, float *dst, const float *src, size_t n);
/* Gives c back (NULL is fine): kept in its context, threads and bounce
 * buffers, for the next copier on its device, or freed. */
void sarbp_d2h_destroy(sarbp_d2h *c);

#endif
