/* prefault.c - zeroing fresh image memory on background threads
 * (prefault.h). */
#include "core/prefault.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "sarbp/backproject.h"

#define PREFAULT_MIN_BYTES ((size_t)16 << 20)

static void *prefault_main(void *arg)
{
    const struct sarbp_prefault_part *part = arg;
    memset(part->p, 0, part->n);
    return NULL;
}

void sarbp_prefault_start(struct sarbp_prefault *pf, void *mem, size_t n, int nparts)
{
    pf->nth = 0;
    if (n < PREFAULT_MIN_BYTES) return;
#ifdef MADV_HUGEPAGE
    {
        const uintptr_t huge = (uintptr_t)2 << 20;
        uintptr_t a = ((uintptr_t)mem + huge - 1) & ~(huge - 1), e = ((uintptr_t)mem + n) & ~(huge - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#endif
    int nth = sarbp_cpu_count() / 2 / (nparts > 0 ? nparts : 1); /* the cores' half, shared */
    if (nth < 1) nth = 1;
    if (nth > SARBP_PREFAULT_THREADS) nth = SARBP_PREFAULT_THREADS;
    unsigned char *m = mem;
    for (int k = 0; k < nth; k++) {
        size_t a = n * (size_t)k / (size_t)nth, b = n * (size_t)(k + 1) / (size_t)nth;
        pf->part[k] = (struct sarbp_prefault_part){m + a, b - a};
        if (pthread_create(&pf->th[k], NULL, prefault_main, &pf->part[k])) {
            memset(m + a, 0, n - a); /* no thread: do the rest here */
            break;
        }
        pf->nth++;
    }
}

void sarbp_prefault_join(struct sarbp_prefault *pf)
{
    for (int k = 0; k < pf->nth; k++) pthread_join(pf->th[k], NULL);
    pf->nth = 0;
}
