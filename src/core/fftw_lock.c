/* fftw_lock.c - the one lock around FFTW's planner (core/fftw_lock.h). */
#include "core/fftw_lock.h"

#include <pthread.h>

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

void sarbp_fftw_planner_lock(void)
{
    pthread_mutex_lock(&planner_lock);
}

void sarbp_fftw_planner_unlock(void)
{
    pthread_mutex_unlock(&planner_lock);
}
