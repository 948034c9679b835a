/* parallel.c - a minimal pthreads parallel-for, the core count and the clock. */
#include "core/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sarbp/host.h"

double sarbp_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sarbp_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

struct job {
    void (*fn)(void *, size_t, int);
    void *ctx;
    size_t ntasks;
    atomic_size_t next;
};

struct worker {
    struct job *job;
    int id;
};

static void *run(void *arg)
{
    struct worker *w = arg;
    struct job *j = w->job;
    for (;;) {
        size_t t = atomic_fetch_add(&j->next, 1);
        if (t >= j->ntasks) break;
        j->fn(j->ctx, t, w->id);
    }
    return NULL;
}

sarbp_status sarbp_parallel_for(int nthreads, size_t ntasks, void (*fn)(void *, size_t, int),
                                void *ctx)
{
    if (nthreads <= 0) nthreads = sarbp_cpu_count();
    if ((size_t)nthreads > ntasks) nthreads = ntasks ? (int)ntasks : 1;
    struct job job = {fn, ctx, ntasks, 0};
    if (nthreads == 1) {
        struct worker w = {&job, 0};
        run(&w);
        return SARBP_OK;
    }
    pthread_t *th = malloc((size_t)nthreads * sizeof *th);
    struct worker *ws = malloc((size_t)nthreads * sizeof *ws);
    if (!th || !ws) {
        free(th);
        free(ws);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for threads");
    }
    int started = 0;
    for (int i = 1; i < nthreads; i++) {
        ws[i].job = &job;
        ws[i].id = i;
        if (pthread_create(&th[i], NULL, run, &ws[i]) != 0) break;
        started = i;
    }
    ws[0].job = &job;
    ws[0].id = 0;
    run(&ws[0]); /* the caller works too; if thread creation failed, it does the rest */
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
    free(th);
    free(ws);
    return SARBP_OK;
}
