/* prefault.h - touching fresh image memory on background threads (private
 * to the library).
 *
 * A fresh image is lazily mapped memory: its first touch costs a page fault
 * per page (tens of ms for a 4096^2 image, single-threaded), which would
 * land after the compute when the image is written. Threads touch its
 * pages while the devices compute instead, with transparent huge pages
 * asked for where the system offers them. */
#ifndef SARBP_PREFAULT_H
#define SARBP_PREFAULT_H

#include <pthread.h>
#include <stddef.h>

#define SARBP_PREFAULT_THREADS 24

struct sarbp_prefault_part {
    unsigned char *p;
    size_t n;
};

struct sarbp_prefault {
    pthread_t th[SARBP_PREFAULT_THREADS];
    struct sarbp_prefault_part part[SARBP_PREFAULT_THREADS];
    int nth;
};

/* Starts touching the pages of mem[0, n), which must be zero already (fresh
 * calloc memory), on up to all the cores but four / nparts threads (nparts:
 * how many such regions are touched at once; at least one, at most
 * SARBP_PREFAULT_THREADS); nothing below 16 MiB. The memory must not be
 * used until sarbp_prefault_join returns. */
void sarbp_prefault_start(struct sarbp_prefault *pf, void *mem, size_t n, int nparts);
/* Waits for the threads of pf (none started is fine). */
void sarbp_prefault_join(struct sarbp_prefault *pf);

#endif
