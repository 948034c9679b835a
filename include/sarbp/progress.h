/* sarbp/progress.h - progress reporting for long runs.
 *
 * The library reports through a callback; the CLI turns it into a throttled
 * line on stderr. A NULL progress makes every call a no-op. */
#ifndef SARBP_PROGRESS_H
#define SARBP_PROGRESS_H

#include <stddef.h>
#include "sarbp/host.h" /* sarbp_now_s */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sarbp_progress_s {
    /* Called with units done of total; pairs_per_unit lets the CLI print a rate. */
    void (*update)(struct sarbp_progress_s *p, size_t done, size_t total);
    void *user;
} sarbp_progress;

static inline void sarbp_progress_update(sarbp_progress *p, size_t done, size_t total)
{
    if (p && p->update) p->update(p, done, total);
}

#ifdef __cplusplus
}
#endif
#endif
