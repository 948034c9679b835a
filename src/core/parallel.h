/* parallel.h - a minimal pthreads parallel-for (private to the library). */
#ifndef SARBP_PARALLEL_H
#define SARBP_PARALLEL_H

#include <stddef.h>
#include "sarbp/status.h"

/* Runs fn(ctx, task, worker) for task = 0..ntasks-1 on nthreads threads
 * (<= 0: all cores); tasks are handed out in order from a shared counter, so
 * which thread runs a task varies, but each task runs exactly once. */
sarbp_status sarbp_parallel_for(int nthreads, size_t ntasks,
                                void (*fn)(void *ctx, size_t task, int worker), void *ctx);

#endif
