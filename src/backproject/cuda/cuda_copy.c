/* cuda_copy.c - pinned buffers kept per process, and the bounce copy from
 * a device into pageable host memory (cuda_copy.h). */
#include "cuda_copy.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "core/parallel.h"
#include "sarbp/backproject.h" /* sarbp_cpu_count */

/* ---- the pinned cache ---------------------------------------------------- */

/* Pinned buffers given back stay pinned for the next plan (a bench's
 * repetitions, a batch's images, the bands of a large image), up to
 * CACHE_MAX bytes; beyond that, and for buffers too large to keep, they are
 * freed. */
#define CACHE_SLOTS 32
#define CACHE_MAX ((size_t)256 << 20)

struct pinned {
    void *ptr;
    size_t n;
    int used;
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pinned cache[CACHE_SLOTS];

sarbp_status sarbp_pinned_get(size_t n, void **ptr)
{
    *ptr = NULL;
    if (n == 0) n = 1;
    pthread_mutex_lock(&cache_mu);
    int best = -1;
    for (int k = 0; k < CACHE_SLOTS; k++) /* the smallest free buffer that fits, if not twice too large */
        if (cache[k].ptr && !cache[k].used && cache[k].n >= n && cache[k].n / 2 <= n &&
            (best < 0 || cache[k].n < cache[best].n))
            best = k;
    if (best >= 0) {
        cache[best].used = 1;
        *ptr = cache[best].ptr;
        pthread_mutex_unlock(&cache_mu);
        return SARBP_OK;
    }
    pthread_mutex_unlock(&cache_mu);
    CUDA_TRY(cudaHostAlloc(ptr, n, cudaHostAllocPortable));
    pthread_mutex_lock(&cache_mu);
    size_t kept = 0;
    for (int k = 0; k < CACHE_SLOTS; k++) kept += cache[k].ptr ? cache[k].n : 0;
    for (int k = 0; k < CACHE_SLOTS && kept + n <= CACHE_MAX; k++)
        if (!cache[k].ptr) {
            cache[k] = (struct pinned){*ptr, n, 1};
            break;
        }
    pthread_mutex_unlock(&cache_mu);
    return SARBP_OK;
}

void sarbp_pinned_put(void *ptr)
{
    if (!ptr) return;
    pthread_mutex_lock(&cache_mu);
    for (int k = 0; k < CACHE_SLOTS; k++)
        if (cache[k].ptr == ptr) {
            cache[k].used = 0;
            pthread_mutex_unlock(&cache_mu);
            return;
        }
    pthread_mutex_unlock(&cache_mu);
    cudaFreeHost(ptr); /* not kept */
}

/* ---- the bounce copy ------------------------------------------------------ */

/* Two bounce buffers of PIECE bytes: the device fills one while the
 * threads empty the other. 4 MiB pieces keep the per-piece overheads (an
 * event, a wake-up of the threads) small beside the copy. */
#define PIECE ((size_t)4 << 20)
#define MAX_THREADS 16

struct sarbp_d2h;
struct worker_arg {
    struct sarbp_d2h *c;
    int w;
};

struct sarbp_d2h {
    int device;                  /* its stream's */
    cudaStream_t stream;
    cudaEvent_t ev[2];
    int nev;
    unsigned char *bounce;       /* [2][PIECE], pinned */
    /* the team: threads - 1 workers and the caller each copy a share of
     * the job dst[0, n) <- src[0, n) */
    int nth, started;
    pthread_t th[MAX_THREADS];
    struct worker_arg arg[MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen;                /* job number */
    int busy, quit;
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
};

/* Worker w's share of the current job, or the caller's (w = 0). */
static void share(struct sarbp_d2h *c, int w)
{
    const size_t q = (c->n / (size_t)c->nth + 63) & ~(size_t)63; /* cache-line aligned shares */
    const size_t a = q * (size_t)w, b = a + q < c->n ? a + q : c->n;
    if (a < b) memcpy(c->dst + a, c->src + a, b - a);
}

static void *worker(void *arg)
{
    struct sarbp_d2h *c = ((struct worker_arg *)arg)->c;
    const int w = ((struct worker_arg *)arg)->w;
    unsigned seen = 0;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (c->gen == seen && !c->quit) pthread_cond_wait(&c->go, &c->mu);
        if (c->quit) break;
        seen = c->gen;
        pthread_mutex_unlock(&c->mu);
        share(c, w);
        pthread_mutex_lock(&c->mu);
        if (--c->busy == 0) pthread_cond_signal(&c->done);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* dst[0, n) <- src[0, n) on the team */
static void team_copy(struct sarbp_d2h *c, void *dst, const void *src, size_t n)
{
    if (c->started == 0 || n < ((size_t)256 << 10)) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&c->mu);
    c->dst = dst;
    c->src = src;
    c->n = n;
    c->busy = c->started;
    c->gen++;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->mu);
    share(c, 0);
    pthread_mutex_lock(&c->mu);
    while (c->busy) pthread_cond_wait(&c->done, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

static sarbp_status d2h_start(struct sarbp_d2h *c, int threads)
{
    CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    for (; c->nev < 2; c->nev++) CUDA_TRY(cudaEventCreateWithFlags(&c->ev[c->nev], cudaEventDisableTiming));
    SARBP_TRY(sarbp_pinned_get(2 * PIECE, (void **)&c->bounce));
    for (int w = 1; w < threads; w++) {
        c->arg[w] = (struct worker_arg){c, w};
        if (pthread_create(&c->th[w], NULL, worker, &c->arg[w]) != 0) break;
        c->started = w; /* workers 1..w run */
    }
    /* fewer threads than asked copy the same bytes, more slowly: the
     * shares are cut for the threads that run */
    c->nth = c->started + 1;
    return SARBP_OK;
}

/* Copiers given back, threads running, for the next plan on their device
 * (starting 15 threads costs a plan about a millisecond). */
#define IDLE_MAX 8
static pthread_mutex_t idle_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sarbp_d2h *idle[IDLE_MAX];
static int nidle;

static void d2h_free(struct sarbp_d2h *c);

sarbp_status sarbp_d2h_create(int threads, sarbp_d2h **out)
{
    *out = NULL;
    int device = 0;
    CUDA_TRY(cudaGetDevice(&device));
    if (threads <= 0) threads = sarbp_cpu_count() / 2; /* 16 threads: 58 GB/s on the H200 host */
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    pthread_mutex_lock(&idle_mu);
    for (int k = 0; k < nidle; k++)
        if (idle[k]->device == device && idle[k]->nth == threads) {
            *out = idle[k];
            idle[k] = idle[--nidle];
            break;
        }
    pthread_mutex_unlock(&idle_mu);
    if (*out) return SARBP_OK;
    struct sarbp_d2h *c = calloc(1, sizeof *c);
    if (!c) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->go, NULL);
    pthread_cond_init(&c->done, NULL);
    c->device = device;
    const sarbp_status st = d2h_start(c, threads);
    if (st) {
        d2h_free(c);
        return st;
    }
    *out = c;
    return SARBP_OK;
}

sarbp_status sarbp_d2h_copy(sarbp_d2h *c, void *dst, const void *src, size_t n, cudaEvent_t after)
{
    if (n == 0) return SARBP_OK;
    if (after) CUDA_TRY(cudaStreamWaitEvent(c->stream, after, 0));
    unsigned char *d = dst;
    const unsigned char *s = src;
    const size_t npieces = (n + PIECE - 1) / PIECE;
    for (size_t i = 0; i <= npieces; i++) {
        if (i < npieces) { /* piece i into bounce buffer i % 2, emptied at step i - 1 */
            const size_t len = i + 1 < npieces ? PIECE : n - i * PIECE;
            CUDA_TRY(cudaMemcpyAsync(c->bounce + (i % 2) * PIECE, s + i * PIECE, len,
                                     cudaMemcpyDeviceToHost, c->stream));
            CUDA_TRY(cudaEventRecord(c->ev[i % 2], c->stream));
        }
        if (i > 0) { /* piece i - 1 out, while piece i travels */
            const size_t j = i - 1, len = j + 1 < npieces ? PIECE : n - j * PIECE;
            CUDA_TRY(cudaEventSynchronize(c->ev[j % 2]));
            team_copy(c, d + j * PIECE, c->bounce + (j % 2) * PIECE, len);
        }
    }
    return SARBP_OK;
}

void sarbp_d2h_destroy(sarbp_d2h *c)
{
    if (!c) return;
    cudaStreamSynchronize(c->stream);
    pthread_mutex_lock(&idle_mu);
    const int kept = nidle < IDLE_MAX;
    if (kept) idle[nidle++] = c;
    pthread_mutex_unlock(&idle_mu);
    if (!kept) d2h_free(c);
}

static void d2h_free(struct sarbp_d2h *c)
{
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->mu);
    for (int w = 1; w <= c->started; w++) pthread_join(c->th[w], NULL);
    if (c->stream) {
        cudaStreamSynchronize(c->stream);
        cudaStreamDestroy(c->stream);
    }
    for (int k = 0; k < c->nev; k++) cudaEventDestroy(c->ev[k]);
    sarbp_pinned_put(c->bounce);
    pthread_cond_destroy(&c->go);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void sarbp_cuda_release_cached(void)
{
    sarbp_cuda_release_kits();
    pthread_mutex_lock(&idle_mu);
    const int n = nidle;
    struct sarbp_d2h *drop[IDLE_MAX];
    for (int k = 0; k < n; k++) drop[k] = idle[k];
    nidle = 0;
    pthread_mutex_unlock(&idle_mu);
    for (int k = 0; k < n; k++) d2h_free(drop[k]); /* their bounce buffers back to the cache */
    pthread_mutex_lock(&cache_mu);
    for (int k = 0; k < CACHE_SLOTS; k++)
        if (cache[k].ptr && !cache[k].used) {
            cudaFreeHost(cache[k].ptr);
            cache[k] = (struct pinned){NULL, 0, 0};
        }
    pthread_mutex_unlock(&cache_mu);
}
