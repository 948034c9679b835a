/* prefault.c - zeroing fresh image memory on background threads
 * (prefault.h). */
#include "core/prefault.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "sarbp/backproject.h"

#define PREFAULT_MIN_BYTES ((size_t)16 << 20)

/* One zero written into every page: the kernel maps each a zeroed page
 * (a huge page where it gives one), and the memory, zero already, reads the
 * same. memset wrote every byte a second time, and with 8 threads took 5
 * ms for a 128 MiB image on a 32-core H100 host, longer than the whole FFBP
 * it should hide behind. */
static void *prefault_main(void *arg)
{
    const struct sarbp_prefault_part *part = arg;
    volatile unsigned char *m = part->p;
    const size_t page = 4096; /* the smallest page on the systems sarbp runs on */
    for (size_t i = 0; i < part->n; i += page) m[i] = 0;
    if (part->n) m[part->n - 1] = 0;
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
    /* page faults are the cost: the cores the form does not use (all but
     * four), shared among the regions touched at once */
    int nth = (sarbp_cpu_count() - 4) / (nparts > 0 ? nparts : 1);
    if (nth < 1) nth = 1;
    if (nth > SARBP_PREFAULT_THREADS) nth = SARBP_PREFAULT_THREADS;
    unsigned char *m = mem;
    for (int k = 0; k < nth; k++) {
        size_t a = n * (size_t)k / (size_t)nth, b = n * (size_t)(k + 1) / (size_t)nth;
        pf->part[k] = (struct sarbp_prefault_part){m + a, b - a};
        if (pthread_create(&pf->th[k], NULL, prefault_main, &pf->part[k])) {
            struct sarbp_prefault_part rest = {m + a, n - a}; /* no thread: the rest here */
            prefault_main(&rest);
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
