/* sarbp/host.h - the host the library runs on: its wall clock and cores. */
#ifndef SARBP_HOST_H
#define SARBP_HOST_H

#ifdef __cplusplus
extern "C" {
#endif

/* Monotonic wall-clock seconds (arbitrary origin), for timing runs and rates. */
double sarbp_now_s(void);

/* Number of online CPUs. */
int sarbp_cpu_count(void);

#ifdef __cplusplus
}
#endif
#endif
