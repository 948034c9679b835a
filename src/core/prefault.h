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
 * 2.2 ms for its copy into pinned memory (kernels/BENCHMARKS.md). */
#ifndef SARBP_PREFAULT_H
#define SARBP_PREFAULT_H

#include <stddef.h>

#define SARBP_PREFAULT_THREADS 24

/* One region being touched: its slices (huge-page sized) are handed out to
 * the process's prefault threads, and to the caller of join. */
struct sarbp_prefault {
    unsigned char *p;
    size_t n;
    size_t nslices, next, done; /* slices: all, handed out, touched */
    struct sarbp_prefault *link; /* the pool's list of regions with slices left */
};

/* Starts touching the pages of mem[0, n), which must be zero already (fresh
 * calloc memory), on the process's prefault threads (all the cores but
 * four, at most SARBP_PREFAULT_THREADS, started at the first call);
 * nothing below 16 MiB. The memory must not be used until
 * sarbp_prefault_join returns. pf must stay where it is until then. */
void sarbp_prefault_start(struct sarbp_prefault *pf, void *mem, size_t n);
/* Touches what the threads have not taken yet of pf's region, then waits
 * for the slices they hold (a pf never started, all zero, is fine). */
void sarbp_prefault_join(struct sarbp_prefault *pf);

#endif
