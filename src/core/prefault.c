/* prefault.c - touching fresh image memory on the process's background
 * threads (prefault.h). */
#define _GNU_SOURCE
#include "core/prefault.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "sarbp/backproject.h"

#define PREFAULT_MIN_BYTES ((size_t)16 << 20)
#define SLICE ((uintptr_t)2 << 20) /* a huge page */

enum { SLICE_FREE, SLICE_BUSY, SLICE_DONE };

/* the pool: threads started so far, and the registered regions */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER, pool_fin = PTHREAD_COND_INITIALIZER;
static int pool_threads;
static struct sarbp_prefault *pool_list;
static int pool_registered; /* regions in pool_list; read without the lock by claim */

/* Slice s of pf's region: from one huge-page boundary to the next. */
static void slice_range(const struct sarbp_prefault *pf, size_t s, unsigned char **a, unsigned char **b)
{
    const uintptr_t base = (uintptr_t)pf->p & ~(SLICE - 1), end = (uintptr_t)pf->p + pf->n;
    uintptr_t lo = base + (uintptr_t)s * SLICE, hi = lo + SLICE;
    if (lo < (uintptr_t)pf->p) lo = (uintptr_t)pf->p;
    if (hi > end) hi = end;
    *a = (unsigned char *)lo;
    *b = (unsigned char *)hi;
}

/* One zero written into every page: the kernel maps each a zeroed page
 * (a huge page where it gives one), and the memory, zero already, reads the
 * same. memset wrote every byte a second time, and with 8 threads took 5
 * ms for a 128 MiB image on a 32-core H100 host, longer than the whole FFBP
 * it should hide behind. */
static void touch(unsigned char *a, unsigned char *b)
{
    volatile unsigned char *m = a;
    const size_t page = 4096, n = (size_t)(b - a); /* the smallest page on the systems sarbp runs on */
    for (size_t i = 0; i < n; i += page) m[i] = 0;
    if (n) m[n - 1] = 0;
}

/* Under pool_mu: pf's first free slice, marked busy, or SIZE_MAX. */
static size_t take_free(struct sarbp_prefault *pf)
{
    if (pf->nfree == 0) return SIZE_MAX;
    while (pf->state[pf->hint] != SLICE_FREE) pf->hint++; /* a free one exists */
    pf->state[pf->hint] = SLICE_BUSY;
    pf->nfree--;
    pf->nbusy++;
    return pf->hint++;
}

/* Under pool_mu (released while touching): busy slice s of pf touched. */
static void run_slice(struct sarbp_prefault *pf, size_t s)
{
    unsigned char *a, *b;
    slice_range(pf, s, &a, &b);
    pthread_mutex_unlock(&pool_mu);
    touch(a, b);
    pthread_mutex_lock(&pool_mu);
    pf->state[s] = SLICE_DONE;
    pf->nbusy--;
    pthread_cond_broadcast(&pool_fin);
}

static void *worker(void *arg)
{
    (void)arg;
#ifdef __linux__
    /* the lowest priority: the form's own threads (the copier's, the
     * devices' hosts) take a core first */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
    pthread_mutex_lock(&pool_mu);
    for (;;) {
        struct sarbp_prefault *pf = pool_list;
        size_t s = SIZE_MAX;
        for (; pf && (s = take_free(pf)) == SIZE_MAX; pf = pf->link) {}
        if (pf) run_slice(pf, s);
        else pthread_cond_wait(&pool_work, &pool_mu);
    }
    return NULL; /* not reached: the threads live as long as the process */
}

/* Under pool_mu: the pool's threads, up to all the cores but four. */
static void pool_grow(void)
{
    int want = sarbp_cpu_count() - 4;
    if (want < 1) want = 1;
    if (want > SARBP_PREFAULT_THREADS) want = SARBP_PREFAULT_THREADS;
    pthread_attr_t at;
    if (pool_threads >= want || pthread_attr_init(&at)) return;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, (size_t)64 << 10);
    for (; pool_threads < want; pool_threads++) {
        pthread_t th;
        if (pthread_create(&th, &at, worker, NULL)) break; /* fewer threads; join touches the rest */
    }
    pthread_attr_destroy(&at);
}

void sarbp_prefault_start(struct sarbp_prefault *pf, void *mem, size_t n)
{
    memset(pf, 0, sizeof *pf);
    if (n < PREFAULT_MIN_BYTES) return;
    const uintptr_t base = (uintptr_t)mem & ~(SLICE - 1);
    const size_t nslices = (size_t)(((uintptr_t)mem + n - base + SLICE - 1) / SLICE);
    pf->state = calloc(nslices, 1); /* all free */
    if (!pf->state) return; /* no prefault: the writes fault the pages */
    pf->p = mem;
    pf->n = n;
    pf->nslices = pf->nfree = nslices;
#ifdef MADV_HUGEPAGE
    {
        uintptr_t a = ((uintptr_t)mem + SLICE - 1) & ~(SLICE - 1), e = ((uintptr_t)mem + n) & ~(SLICE - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#endif
    pthread_mutex_lock(&pool_mu);
    pool_grow();
    pf->link = pool_list;
    pool_list = pf;
    __atomic_store_n(&pool_registered, pool_registered + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool_work);
    pthread_mutex_unlock(&pool_mu);
}

void sarbp_prefault_claim(void *p, size_t n)
{
    if (n == 0 || __atomic_load_n(&pool_registered, __ATOMIC_ACQUIRE) == 0) return;
    const uintptr_t a = (uintptr_t)p, b = a + n;
    pthread_mutex_lock(&pool_mu);
    for (struct sarbp_prefault *pf = pool_list; pf; pf = pf->link) {
        const uintptr_t lo = (uintptr_t)pf->p, hi = lo + pf->n;
        if (b <= lo || a >= hi) continue;
        const uintptr_t base = lo & ~(SLICE - 1);
        const size_t s0 = (size_t)(((a > lo ? a : lo) - base) / SLICE);
        const size_t s1 = (size_t)(((b < hi ? b : hi) - 1 - base) / SLICE);
        for (size_t s = s0; s <= s1; s++) {
            if (pf->state[s] == SLICE_FREE) { /* the caller's writes fault it */
                pf->state[s] = SLICE_DONE;
                pf->nfree--;
            }
            while (pf->state[s] == SLICE_BUSY) pthread_cond_wait(&pool_fin, &pool_mu);
        }
    }
    pthread_mutex_unlock(&pool_mu);
}

void sarbp_prefault_join(struct sarbp_prefault *pf)
{
    if (pf->nslices == 0) return;
    pthread_mutex_lock(&pool_mu);
    size_t s;
    while ((s = take_free(pf)) != SIZE_MAX) run_slice(pf, s); /* the caller waits anyway: it touches too */
    while (pf->nbusy) pthread_cond_wait(&pool_fin, &pool_mu);
    for (struct sarbp_prefault **q = &pool_list; *q; q = &(*q)->link)
        if (*q == pf) {
            *q = pf->link;
            break;
        }
    __atomic_store_n(&pool_registered, pool_registered - 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pool_mu);
    free(pf->state);
    pf->state = NULL;
    pf->nslices = 0;
}
