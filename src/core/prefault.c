/* prefault.c - touching fresh image memory on the process's background
 * threads (prefault.h). */
#define _GNU_SOURCE
#include "core/prefault.h"

#include <pthread.h>
#include <stdint.h>
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

/* the pool: threads started so far, and the regions with slices left */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER, pool_fin = PTHREAD_COND_INITIALIZER;
static int pool_threads;
static struct sarbp_prefault *pool_list;

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

/* Under pool_mu: a slice of the first region with slices left, or NULL. */
static struct sarbp_prefault *take_slice(size_t *s)
{
    for (struct sarbp_prefault **q = &pool_list; *q; q = &(*q)->link) {
        struct sarbp_prefault *pf = *q;
        if (pf->next < pf->nslices) {
            *s = pf->next++;
            if (pf->next == pf->nslices) *q = pf->link; /* every slice handed out */
            return pf;
        }
    }
    return NULL;
}

/* Under pool_mu (released while touching): slice s of pf touched. */
static void run_slice(struct sarbp_prefault *pf, size_t s)
{
    unsigned char *a, *b;
    slice_range(pf, s, &a, &b);
    pthread_mutex_unlock(&pool_mu);
    touch(a, b);
    pthread_mutex_lock(&pool_mu);
    if (++pf->done == pf->nslices) pthread_cond_broadcast(&pool_fin);
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
        size_t s = 0;
        struct sarbp_prefault *pf = take_slice(&s);
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
    pf->p = mem;
    pf->n = n;
#ifdef MADV_HUGEPAGE
    {
        uintptr_t a = ((uintptr_t)mem + SLICE - 1) & ~(SLICE - 1), e = ((uintptr_t)mem + n) & ~(SLICE - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#endif
    const uintptr_t base = (uintptr_t)mem & ~(SLICE - 1);
    pf->nslices = (size_t)(((uintptr_t)mem + n - base + SLICE - 1) / SLICE);
    pthread_mutex_lock(&pool_mu);
    pool_grow();
    pf->link = pool_list;
    pool_list = pf;
    pthread_cond_broadcast(&pool_work);
    pthread_mutex_unlock(&pool_mu);
}

void sarbp_prefault_join(struct sarbp_prefault *pf)
{
    if (pf->nslices == 0) return;
    pthread_mutex_lock(&pool_mu);
    while (pf->next < pf->nslices) { /* the caller waits anyway: it touches too */
        size_t s = pf->next++;
        if (pf->next == pf->nslices)
            for (struct sarbp_prefault **q = &pool_list; *q; q = &(*q)->link)
                if (*q == pf) {
                    *q = pf->link;
                    break;
                }
        run_slice(pf, s);
    }
    while (pf->done < pf->nslices) pthread_cond_wait(&pool_fin, &pool_mu);
    pthread_mutex_unlock(&pool_mu);
    pf->nslices = 0;
}
