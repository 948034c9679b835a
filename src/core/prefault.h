/* prefault.h - touching fresh image memory on background threads (private
 * to the library).
 *
 * A fresh image is lazily mapped memory: its first touch costs a page fault
 * per page (tens of ms for a 4096^2 image, single-threaded), which would
 * land after the compute when the image is written. Threads touch its
 * pages while the devices compute instead, with transparent huge pages
 * asked for where the system offers them.
 *
 * The threads are the process's, started once and kept, and run at the
 * lowest priority (nice 19): on a lent 16-core H100 host, 12 threads
 * started for each image and running at the form's own priority took the
 * cores from the copier's threads, and the first block of samples waited
 * 2.2 ms for its copy into pinned memory (docs/benchmarks/2026-11-journal.md).
 *
 * A region is touched in huge-page slices, in address order. A writer that
 * claims a range (sarbp_prefault_claim) may write it while the threads are
 * still touching the rest: no thread touches a claimed slice afterwards
 * (the touch writes a zero, which would overwrite the writer's data). */
#ifndef SARBP_PREFAULT_H
#define SARBP_PREFAULT_H

#include <stddef.h>

#define SARBP_PREFAULT_THREADS 24

/* One region being touched, registered from start to join. */
struct sarbp_prefault {
    unsigned char *p;
    size_t n;
    size_t nslices;              /* 0: nothing to do */
    size_t hint;                 /* slices below it are not free */
    size_t nfree, nbusy;         /* slices no one has taken; being touched by a thread */
    unsigned char *state;        /* [nslices]: free, busy, done */
    struct sarbp_prefault *link; /* the pool's list of registered regions */
};

/* Starts touching the pages of mem[0, n), which must be zero already (fresh
 * calloc memory), on the process's prefault threads (all the cores but
 * four, at most SARBP_PREFAULT_THREADS, started at the first call);
 * nothing below 16 MiB. Until sarbp_prefault_join returns, the memory may
 * be written only where claimed, and pf must stay where it is. */
void sarbp_prefault_start(struct sarbp_prefault *pf, void *mem, size_t n);
/* Makes [p, p + n) the caller's to write: slices of a registered region
 * that overlap it and that no thread has taken are taken by the caller (its
 * writes fault them), slices being touched are waited for. Any range may be
 * claimed (memory of no region: nothing to do); cheap when no region is
 * registered. */
void sarbp_prefault_claim(void *p, size_t n);
/* Touches what no one has taken of pf's region, waits for the slices the
 * threads hold, and unregisters it (a pf never started, all zero, is
 * fine; so is a second join). */
void sarbp_prefault_join(struct sarbp_prefault *pf);

#endif
