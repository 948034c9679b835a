/* cuda/copy.c - the bounce copy from a device into pageable host memory
 * (cuda/copy.h); a copier given back is kept in its device's context for
 * the next plan, its threads running, until the session closes it. */
#include "copy.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "core/parallel.h"
#include "core/sample_check.h"
#include "device.h"
#include "sarbp/backproject.h" /* sarbp_cpu_count */

/* ---- the bounce copy ------------------------------------------------------ */

/* Lanes: every thread of the team (the caller is lane 0) copies its own
 * pieces of a job, every nlanes-th piece of PIECE bytes, through its own
 * stream and two pinned bounce buffers, the device filling one while the
 * thread empties the other. The lanes never wait for each other inside a
 * job, and a job of row chunks (the final rows of a band as the device
 * finishes them) is one job: a piece's copy waits, on the device, for its
 * chunk's event. The first design, one pair of 4 MiB buffers emptied by the
 * whole team piece after piece, woke every thread for every piece: 24 GB/s
 * for a 128 MiB image on an H100 host, against 55 GB/s for a pinned copy;
 * a job a chunk, with a lane a piece, left each lane one piece and no
 * overlap of its own (2026-11-26, docs/benchmarks/2026-11-journal.md). */
#define PIECE ((size_t)1 << 20)
/* A host copy (a block of samples into pinned memory) takes a lane per 2
 * MiB: the bench problem's 1 MiB blocks are the caller's alone. Waking
 * lanes for them cost the first block 1.8-2.4 ms on lent H200 hosts while
 * the (since removed) prefault threads touched a fresh image (the woken threads waited for
 * cores), against 0.14 ms copied by the caller, and about 0.07 ms either
 * way once the touching was done (docs/benchmarks/2026-11-journal.md). */
#define HOST_PIECE ((size_t)2 << 20)
#define SLICE_ALIGN ((size_t)64 << 10) /* slices start on 64 KiB: no shared cache lines or pages */
#define MAX_THREADS 16

struct sarbp_d2h;
struct lane {
    struct sarbp_d2h *c;
    int w;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    int nev;
    int chunk[2];                /* the chunk whose event the piece in each buffer waits for (-1: none) */
    unsigned char *bounce;       /* [2][PIECE], inside the copier's pinned block */
    cudaError_t err;             /* of its last job */
    size_t bad;                  /* a host job: the first NaN or Inf float of its slice, else SIZE_MAX */
};

struct sarbp_d2h {
    sarbp_cuda_device *ctx;      /* the context its bounce buffers come from */
    int device;                  /* its streams' */
    int nth, started;            /* lanes; worker threads running (lanes 1..started) */
    pthread_t th[MAX_THREADS];
    struct lane lane[MAX_THREADS];
    unsigned char *pinned;       /* [nth][2][PIECE] */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen;                /* job number */
    int busy, quit;
    /* the job: dst[0, n) <- src[0, n) on the device, chunk k (bytes
     * [ends[k - 1], ends[k])) once evs[k] has passed (NULL: no wait) */
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
    int nchunks;
    const size_t *ends;
    const cudaEvent_t *evs;
    int nlanes;                  /* lanes taking part: the job's size decides */
    int host;                    /* 1: src is host memory, samples copied and checked (no device) */
};

/* Piece j of the job into lane l's bounce buffer `buf`, its event after
 * it, once the chunk that ends the piece is final (*waited: the chunks
 * this lane's stream waits for already; pieces come in order). */
static cudaError_t lane_fetch(struct sarbp_d2h *c, struct lane *l, size_t j, int buf, int *waited)
{
    const size_t off = j * PIECE, len = c->n - off < PIECE ? c->n - off : PIECE;
    int k = *waited < 0 ? 0 : *waited;
    while (k < c->nchunks - 1 && c->ends[k] < off + len) k++;
    cudaError_t e = cudaSuccess;
    if (k > *waited) {
        for (int q = *waited + 1; q <= k && e == cudaSuccess; q++)
            if (c->evs[q]) e = cudaStreamWaitEvent(l->stream, c->evs[q], 0);
        *waited = k;
    }
    l->chunk[buf] = c->evs && c->evs[k] ? k : -1;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(l->bounce + (size_t)buf * PIECE, c->src + off, len, cudaMemcpyDeviceToHost,
                            l->stream);
    if (e == cudaSuccess) e = cudaEventRecord(l->ev[buf], l->stream);
    return e;
}

/* Lane l's pieces of the current job: l->w, l->w + nlanes, ... */
static void lane_run(struct sarbp_d2h *c, struct lane *l)
{
    l->err = cudaSuccess;
    l->bad = SIZE_MAX;
    if (l->w >= c->nlanes) return;
    if (c->host) { /* one slice a lane; slices start on whole floats */
        const size_t q = (c->n / (size_t)c->nlanes + SLICE_ALIGN - 1) & ~(SLICE_ALIGN - 1);
        const size_t a = q * (size_t)l->w, b = a + q < c->n ? a + q : c->n;
        if (a < b) {
            const size_t nf = (b - a) / sizeof(float);
            const size_t i = sarbp_samples_copy_checked((float *)(c->dst + a), (const float *)(c->src + a), nf);
            if (i < nf) l->bad = a / sizeof(float) + i;
        }
        return;
    }
    const size_t total = (c->n + PIECE - 1) / PIECE, L = (size_t)c->nlanes;
    const size_t mine = (total - (size_t)l->w + L - 1) / L; /* pieces w, w + L, ... below total */
    int waited = -1;
    cudaError_t e = cudaSetDevice(c->device);
    for (size_t i = 0; i < 2 && i < mine && e == cudaSuccess; i++)
        e = lane_fetch(c, l, (size_t)l->w + i * L, (int)i, &waited);
    for (size_t i = 0; i < mine && e == cudaSuccess; i++) {
        /* the chunk first: a caller's event made with cudaEventBlockingSync
         * (the plans' chunk events) lets the lane sleep while the kernels
         * run, where waiting on the copy's own event spins (0.1-1 ms of a
         * core per lane and form; forms sharing the device want the cores) */
        const int k = l->chunk[i % 2];
        if (k >= 0) e = cudaEventSynchronize(c->evs[k]);
        if (e == cudaSuccess) e = cudaEventSynchronize(l->ev[i % 2]);
        if (e != cudaSuccess) break;
        const size_t off = ((size_t)l->w + i * L) * PIECE, len = c->n - off < PIECE ? c->n - off : PIECE;
        memcpy(c->dst + off, l->bounce + (i % 2) * PIECE, len);
        if (i + 2 < mine) e = lane_fetch(c, l, (size_t)l->w + (i + 2) * L, (int)(i % 2), &waited);
    }
    l->err = e;
}

static void *worker(void *arg)
{
    struct lane *l = arg;
    struct sarbp_d2h *c = l->c;
    unsigned seen = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (c->gen == seen && !c->quit) pthread_cond_wait(&c->go, &c->mu);
        if (c->quit) break;
        seen = c->gen;
        pthread_mutex_unlock(&c->mu);
        lane_run(c, l);
        pthread_mutex_lock(&c->mu);
        if (--c->busy == 0) pthread_cond_signal(&c->done);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static sarbp_status d2h_start(struct sarbp_d2h *c, int threads)
{
    SARBP_TRY(sarbp_cuda_pinned_get(c->ctx, (size_t)threads * 2 * PIECE, (void **)&c->pinned));
    c->nth = threads;
    for (int w = 0; w < threads; w++) {
        struct lane *l = &c->lane[w];
        *l = (struct lane){.c = c, .w = w, .bounce = c->pinned + (size_t)w * 2 * PIECE};
        CUDA_TRY(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
        for (; l->nev < 2; l->nev++) CUDA_TRY(cudaEventCreateWithFlags(&l->ev[l->nev], cudaEventDisableTiming));
    }
    for (int w = 1; w < threads; w++) {
        if (pthread_create(&c->th[w], NULL, worker, &c->lane[w]) != 0) break;
        c->started = w; /* workers 1..w run */
    }
    /* fewer threads than asked copy the same bytes, more slowly: the
     * slices are cut for the lanes that run */
    c->nth = c->started + 1;
    return SARBP_OK;
}

static void d2h_free(sarbp_cuda_device *ctx, void *set);

/* Whether kept copier c runs on device want[0] with want[1] lanes. */
static int d2h_fits(const void *set, const void *want)
{
    const struct sarbp_d2h *c = set;
    const int *w = want;
    return c->device == w[0] && c->nth == w[1];
}

sarbp_status sarbp_d2h_create(sarbp_cuda_device *ctx, sarbp_d2h **out)
{
    *out = NULL;
    int device = 0;
    CUDA_TRY(cudaGetDevice(&device));
    /* three quarters of the cores: 16 threads copied 58 GB/s on a 32-core
     * H200 host; on lent 16-core H200 hosts 12 lanes brought the bench
     * problem's 128 MiB back 0.3-0.5 ms sooner than 8, and 16 no sooner
     * (docs/benchmarks/2026-11-journal.md) */
    int threads = sarbp_cuda_device_threads(ctx);
    if (threads <= 0) threads = sarbp_cpu_count() * 3 / 4;
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    const int want[2] = {device, threads}; /* starting 15 threads costs a millisecond */
    struct sarbp_d2h *c = sarbp_cuda_device_take(ctx, SARBP_KEEP_COPIER, d2h_fits, want);
    if (c) {
        *out = c;
        return SARBP_OK;
    }
    c = calloc(1, sizeof *c);
    if (!c) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->go, NULL);
    pthread_cond_init(&c->done, NULL);
    c->ctx = ctx;
    c->device = device;
    const sarbp_status st = d2h_start(c, threads);
    if (st) {
        d2h_free(ctx, c);
        return st;
    }
    *out = c;
    return SARBP_OK;
}

/* Runs the job dst[0, n) <- src[0, n) (host: both in host memory; else
 * in nchunks chunks ending at ends[], each after evs[]) on the lanes. */
static sarbp_status run_job(sarbp_d2h *c, void *dst, const void *src, size_t n, int nchunks,
                            const size_t *ends, const cudaEvent_t *evs, int host)
{
    if (n == 0) return SARBP_OK;
    /* a lane a piece at least (small copies are one lane's), all of them
     * from nth pieces up */
    const size_t unit = host ? HOST_PIECE : PIECE;
    size_t lanes = (n + unit - 1) / unit;
    /* forms sharing the device share the cores: each job running on it
     * takes its part of the lanes (two forms of 1024^2 side by side on a
     * 16-core H200 host: 2.20-2.25 ms a form with 4 or 8 lanes each,
     * 2.35-2.45 with 12 each, docs/benchmarks/2026-11-28-python-overlap.md) */
    const int jobs = sarbp_cuda_device_copies(c->ctx, 1);
    const size_t share = jobs > 1 ? (size_t)(c->nth / jobs) : (size_t)c->nth;
    if (lanes > share) lanes = share ? share : 1;
    pthread_mutex_lock(&c->mu);
    c->dst = dst;
    c->src = src;
    c->n = n;
    c->nchunks = nchunks;
    c->ends = ends;
    c->evs = evs;
    c->host = host;
    c->nlanes = (int)lanes;
    c->busy = lanes > 1 ? c->started : 0;
    if (c->busy) {
        c->gen++;
        pthread_cond_broadcast(&c->go);
    }
    pthread_mutex_unlock(&c->mu);
    lane_run(c, &c->lane[0]);
    pthread_mutex_lock(&c->mu);
    while (c->busy) pthread_cond_wait(&c->done, &c->mu);
    pthread_mutex_unlock(&c->mu);
    (void)sarbp_cuda_device_copies(c->ctx, -1);
    for (int w = 0; w < c->nlanes; w++)
        if (c->lane[w].err != cudaSuccess)
            return sarbp_error(SARBP_ERR_CUDA, "copying the image back from device %d: %s", c->device,
                               cudaGetErrorString(c->lane[w].err));
    return SARBP_OK;
}

sarbp_status sarbp_d2h_copy(sarbp_d2h *c, void *dst, const void *src, size_t n, cudaEvent_t after)
{
    const size_t end = n;
    return run_job(c, dst, src, n, 1, &end, &after, 0);
}

sarbp_status sarbp_d2h_copy_chunks(sarbp_d2h *c, void *dst, const void *src, int nchunks,
                                   const size_t *ends, const cudaEvent_t *after)
{
    if (nchunks < 1) return SARBP_OK;
    return run_job(c, dst, src, ends[nchunks - 1], nchunks, ends, after, 0);
}

size_t sarbp_d2h_host_copy(sarbp_d2h *c, float *dst, const float *src, size_t n)
{
    if (n == 0) return 0;
    (void)run_job(c, dst, src, n * sizeof(float), 0, NULL, NULL, 1); /* a host copy does not fail */
    size_t bad = n;
    for (int w = 0; w < c->nlanes; w++)
        if (c->lane[w].bad < bad) bad = c->lane[w].bad;
    return bad;
}

void sarbp_d2h_destroy(sarbp_d2h *c)
{
    if (!c) return; /* idle: every lane waited for its last piece */
    sarbp_cuda_device_keep(c->ctx, SARBP_KEEP_COPIER, c, 0, d2h_free); /* no context: freed */
}

/* Stops c's threads and frees it (a kept set's free function). */
static void d2h_free(sarbp_cuda_device *ctx, void *set)
{
    struct sarbp_d2h *c = set;
    (void)ctx;
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->mu);
    for (int w = 1; w <= c->started; w++) pthread_join(c->th[w], NULL);
    int prev = -1;
    cudaGetDevice(&prev);
    cudaSetDevice(c->device);
    for (int w = 0; w < MAX_THREADS; w++) {
        struct lane *l = &c->lane[w];
        if (l->stream) {
            cudaStreamSynchronize(l->stream);
            cudaStreamDestroy(l->stream);
        }
        for (int k = 0; k < l->nev; k++) cudaEventDestroy(l->ev[k]);
    }
    if (prev >= 0) cudaSetDevice(prev);
    sarbp_cuda_pinned_put(c->ctx, c->pinned);
    pthread_cond_destroy(&c->go);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
