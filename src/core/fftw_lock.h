/* core/fftw_lock.h - one lock around FFTW's planner for the whole library.
 *
 * FFTW's planner (plan creation and destruction) is not thread-safe; every
 * module that plans (rangecomp.c, the CPHD reader's TOA conversion) takes
 * this lock around it. Executing a plan needs no lock. Not installed. */
#ifndef SARBP_FFTW_LOCK_H
#define SARBP_FFTW_LOCK_H

void sarbp_fftw_planner_lock(void);
void sarbp_fftw_planner_unlock(void);

#endif
