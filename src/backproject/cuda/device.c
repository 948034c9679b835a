/* device.c - one CUDA device's context in a session (device.h): the
 * budget's account of device memory, the kept sets, the pinned buffers and
 * the cuFFT work-area memo. It replaces what were process-global caches
 * (two kit tables, a pinned cache, idle copiers, a work memo): everything
 * here is freed, and every copier thread joined, when the session closes
 * the context. */
#include "device.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "backproject/session_internal.h"

#define WORK_MEMO 8
#define PINNED_MAX 32
#define KEPT_MAX 4 /* sets kept per kind: one for each of up to four forms sharing the session */

struct allocation {
    void *ptr;
    size_t n;
};

struct kept {
    void *set;
    size_t bytes;
    sarbp_cuda_free_set free_set;
};

struct sarbp_cuda_device {
    int device, threads;
    size_t budget;                 /* bytes its plans may hold */
    pthread_mutex_t mu;
    size_t used, peak, kept_bytes; /* held (kept sets included), the most held, of used: kept */
    struct allocation *alloc;      /* [nalloc]: live allocations of dmalloc */
    size_t nalloc, calloc_n;
    struct kept kept[SARBP_KEEP_KINDS][KEPT_MAX]; /* [kind][0..nkept-1], the newest last */
    int nkept[SARBP_KEEP_KINDS];
    struct {
        void *ptr;
        size_t n;
        int used;
    } pinned[PINNED_MAX];
    struct {
        int n, batch;
        size_t bytes;
    } work[WORK_MEMO];
    int nwork, next_work;
    int copies;                    /* copier jobs running (sarbp_cuda_device_copies) */
};

sarbp_status sarbp_cuda_device_open(int device, size_t budget, int threads, sarbp_cuda_device **out)
{
    *out = NULL;
    SARBP_TRY(sarbp_cuda_check_device(device));
    CUDA_TRY(cudaSetDevice(device));
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b)); /* starts the device's context */
    sarbp_cuda_device *d = calloc(1, sizeof *d);
    if (!d) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    d->device = device;
    d->threads = threads;
    d->budget = budget ? budget : (size_t)(0.85 * (double)free_b);
    pthread_mutex_init(&d->mu, NULL);
    *out = d;
    return SARBP_OK;
}

void sarbp_cuda_device_close(sarbp_cuda_device *d)
{
    if (!d) return;
    int prev = -1;
    cudaGetDevice(&prev);
    cudaSetDevice(d->device);
    cudaDeviceSynchronize();
    /* the copier first: its bounce buffers go back to the pinned list */
    for (int k = SARBP_KEEP_KINDS - 1; k >= 0; k--) sarbp_cuda_device_drop(d, k);
    for (int k = 0; k < PINNED_MAX; k++)
        if (d->pinned[k].ptr) cudaFreeHost(d->pinned[k].ptr);
    for (size_t k = 0; k < d->nalloc; k++) cudaFree(d->alloc[k].ptr); /* a plan never destroyed */
    free(d->alloc);
    if (prev >= 0) cudaSetDevice(prev);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void sarbp_cuda_device_memory(sarbp_cuda_device *d, sarbp_session_memory *m)
{
    pthread_mutex_lock(&d->mu);
    *m = (sarbp_session_memory){d->budget, d->used, d->peak, d->kept_bytes};
    pthread_mutex_unlock(&d->mu);
}

int sarbp_cuda_device_copies(sarbp_cuda_device *d, int delta)
{
    if (!d) return 1;
    pthread_mutex_lock(&d->mu);
    d->copies += delta;
    const int n = d->copies;
    pthread_mutex_unlock(&d->mu);
    return n;
}

int sarbp_cuda_device_threads(const sarbp_cuda_device *d)
{
    return d ? d->threads : 0;
}

sarbp_status sarbp_cuda_device_room(sarbp_cuda_device *d, size_t *room)
{
    *room = SIZE_MAX;
    if (!d) return SARBP_OK;
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    pthread_mutex_lock(&d->mu);
    const size_t held = d->used > d->kept_bytes ? d->used - d->kept_bytes : 0;
    size_t r = d->budget > held ? d->budget - held : 0;
    if (r > free_b + d->kept_bytes) r = free_b + d->kept_bytes;
    pthread_mutex_unlock(&d->mu);
    *room = r;
    return SARBP_OK;
}

/* Lists allocation *ptr of n bytes, held for it in d->used already, when
 * cudaMalloc gave it (e), or gives the bytes back; the status of it all. */
static sarbp_status dmalloc_record(sarbp_cuda_device *d, void **ptr, size_t n, cudaError_t e)
{
    pthread_mutex_lock(&d->mu);
    if (e == cudaSuccess && d->nalloc == d->calloc_n) {
        const size_t cap = d->calloc_n ? 2 * d->calloc_n : 64;
        struct allocation *a = realloc(d->alloc, cap * sizeof *a);
        if (a) {
            d->alloc = a;
            d->calloc_n = cap;
        } else {
            cudaFree(*ptr);
            e = cudaErrorMemoryAllocation;
        }
    }
    if (e == cudaSuccess) {
        d->alloc[d->nalloc++] = (struct allocation){*ptr, n};
        if (d->used > d->peak) d->peak = d->used;
    } else {
        d->used -= n;
    }
    pthread_mutex_unlock(&d->mu);
    if (e == cudaSuccess) return SARBP_OK;
    *ptr = NULL;
    cudaGetLastError();
    return sarbp_error(e == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA,
                       "device %d: allocating %.2f MiB: %s", d->device, n / 1048576.0, cudaGetErrorString(e));
}

sarbp_status sarbp_cuda_dmalloc(sarbp_cuda_device *d, void **ptr, size_t n, size_t *count)
{
    *ptr = NULL;
    if (!d) {
        CUDA_TRY(cudaMalloc(ptr, n));
        if (count) *count += n;
        return SARBP_OK;
    }
    /* what is kept for a next plan is freed first when the budget, or the
     * device itself (a budget above its memory), has no room */
    for (int pass = 0;; pass++) {
        pthread_mutex_lock(&d->mu);
        const int fits = n <= d->budget && d->used <= d->budget - n;
        const int can_free = pass == 0 && d->kept_bytes > 0;
        if (fits) d->used += n; /* held for it while cudaMalloc runs */
        const size_t used = d->used;
        pthread_mutex_unlock(&d->mu);
        if (!fits && can_free) {
            sarbp_cuda_device_drop(d, -1);
            continue;
        }
        if (!fits)
            return sarbp_error(SARBP_ERR_NOMEM,
                               "device %d: %.2f MiB more would take the plans past the session's "
                               "budget of %.2f MiB (%.2f MiB held)",
                               d->device, n / 1048576.0, d->budget / 1048576.0, used / 1048576.0);
        const cudaError_t e = cudaMalloc(ptr, n);
        if (e == cudaErrorMemoryAllocation && can_free) {
            (void)dmalloc_record(d, ptr, n, e); /* gives the bytes back */
            sarbp_cuda_device_drop(d, -1);
            continue;
        }
        SARBP_TRY(dmalloc_record(d, ptr, n, e));
        if (count) *count += n;
        return SARBP_OK;
    }
}

void sarbp_cuda_dfree(sarbp_cuda_device *d, void *ptr)
{
    if (!ptr) return;
    if (d) {
        pthread_mutex_lock(&d->mu);
        for (size_t k = 0; k < d->nalloc; k++)
            if (d->alloc[k].ptr == ptr) {
                d->used -= d->alloc[k].n;
                d->alloc[k] = d->alloc[--d->nalloc];
                break;
            }
        pthread_mutex_unlock(&d->mu);
    }
    cudaFree(ptr);
}

sarbp_status sarbp_cuda_dmalloc_reuse(sarbp_cuda_device *d, void **ptr, size_t *have, size_t need)
{
    if (*ptr && (*have < need || *have / 2 > need)) {
        sarbp_cuda_dfree(d, *ptr);
        *ptr = NULL;
    }
    if (*ptr) return SARBP_OK;
    *have = 0;
    return sarbp_cuda_dmalloc(d, ptr, need, have);
}

void *sarbp_cuda_device_take(sarbp_cuda_device *d, int kind, int (*fits)(const void *set, const void *arg),
                             const void *arg)
{
    if (!d) return NULL;
    pthread_mutex_lock(&d->mu);
    void *set = NULL;
    struct kept *list = d->kept[kind];
    for (int j = d->nkept[kind] - 1; j >= 0 && !set; j--) {
        if (fits && !fits(list[j].set, arg)) continue;
        set = list[j].set;
        d->kept_bytes -= list[j].bytes;
        memmove(list + j, list + j + 1, (size_t)(d->nkept[kind] - 1 - j) * sizeof *list);
        d->nkept[kind]--;
    }
    pthread_mutex_unlock(&d->mu);
    return set;
}

void sarbp_cuda_device_keep(sarbp_cuda_device *d, int kind, void *set, size_t bytes,
                            sarbp_cuda_free_set free_set)
{
    if (!set) return;
    if (!d) {
        free_set(NULL, set);
        return;
    }
    pthread_mutex_lock(&d->mu);
    struct kept old = {0};
    struct kept *list = d->kept[kind];
    if (d->nkept[kind] == KEPT_MAX) { /* the oldest goes */
        old = list[0];
        memmove(list, list + 1, (KEPT_MAX - 1) * sizeof *list);
        d->nkept[kind]--;
        d->kept_bytes -= old.bytes;
    }
    list[d->nkept[kind]++] = (struct kept){set, bytes, free_set};
    d->kept_bytes += bytes;
    pthread_mutex_unlock(&d->mu);
    if (old.set) old.free_set(d, old.set);
}

void sarbp_cuda_device_drop(sarbp_cuda_device *d, int kind)
{
    if (!d) return;
    for (int k = 0; k < SARBP_KEEP_KINDS; k++) {
        if (kind >= 0 ? k != kind : k == SARBP_KEEP_COPIER) continue;
        for (;;) {
            pthread_mutex_lock(&d->mu);
            struct kept old = {0};
            if (d->nkept[k] > 0) {
                old = d->kept[k][--d->nkept[k]];
                d->kept_bytes -= old.bytes;
            }
            pthread_mutex_unlock(&d->mu);
            if (!old.set) break;
            old.free_set(d, old.set);
        }
    }
}

sarbp_status sarbp_cuda_pinned_get(sarbp_cuda_device *d, size_t n, void **ptr)
{
    *ptr = NULL;
    if (n == 0) n = 1;
    if (d) {
        pthread_mutex_lock(&d->mu);
        int best = -1; /* the smallest free buffer that fits, if not twice too large */
        for (int k = 0; k < PINNED_MAX; k++)
            if (d->pinned[k].ptr && !d->pinned[k].used && d->pinned[k].n >= n && d->pinned[k].n / 2 <= n &&
                (best < 0 || d->pinned[k].n < d->pinned[best].n))
                best = k;
        if (best >= 0) {
            d->pinned[best].used = 1;
            *ptr = d->pinned[best].ptr;
        }
        pthread_mutex_unlock(&d->mu);
        if (*ptr) return SARBP_OK;
    }
    CUDA_TRY(cudaHostAlloc(ptr, n, cudaHostAllocPortable));
    if (!d) return SARBP_OK;
    pthread_mutex_lock(&d->mu);
    int slot = -1;
    for (int k = 0; k < PINNED_MAX && slot < 0; k++)
        if (!d->pinned[k].ptr) slot = k;
    if (slot >= 0) {
        d->pinned[slot].ptr = *ptr;
        d->pinned[slot].n = n;
        d->pinned[slot].used = 1;
    }
    pthread_mutex_unlock(&d->mu);
    return SARBP_OK;
}

void sarbp_cuda_pinned_put(sarbp_cuda_device *d, void *ptr)
{
    if (!ptr) return;
    if (d) {
        pthread_mutex_lock(&d->mu);
        for (int k = 0; k < PINNED_MAX; k++)
            if (d->pinned[k].ptr == ptr) {
                d->pinned[k].used = 0;
                pthread_mutex_unlock(&d->mu);
                return;
            }
        pthread_mutex_unlock(&d->mu);
    }
    cudaFreeHost(ptr); /* not listed */
}

cufftResult sarbp_cuda_fft_work(sarbp_cuda_device *d, int n, int batch, size_t *bytes)
{
    if (d) {
        pthread_mutex_lock(&d->mu);
        for (int k = 0; k < d->nwork; k++)
            if (d->work[k].n == n && d->work[k].batch == batch) {
                *bytes = d->work[k].bytes;
                pthread_mutex_unlock(&d->mu);
                return CUFFT_SUCCESS;
            }
        pthread_mutex_unlock(&d->mu);
    }
    int dims[1] = {n};
    const cufftResult r = cufftEstimateMany(1, dims, NULL, 1, n, NULL, 1, n, CUFFT_C2C, batch, bytes);
    if (r != CUFFT_SUCCESS || !d) return r;
    pthread_mutex_lock(&d->mu);
    d->work[d->next_work].n = n;
    d->work[d->next_work].batch = batch;
    d->work[d->next_work].bytes = *bytes;
    d->next_work = (d->next_work + 1) % WORK_MEMO;
    if (d->nwork < WORK_MEMO) d->nwork++;
    pthread_mutex_unlock(&d->mu);
    return CUFFT_SUCCESS;
}

sarbp_status sarbp_cuda_plan_device(sarbp_session *s, int device, sarbp_session **own,
                                    sarbp_cuda_device **out)
{
    *out = NULL;
    if (!s) {
        SARBP_TRY(sarbp_session_create(NULL, own));
        s = *own;
    }
    return sarbp_session_device(s, device, out);
}
