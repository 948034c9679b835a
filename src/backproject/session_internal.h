/* session_internal.h - what the plans and the partition layer take from a
 * session (private to the library; sarbp/session.h is the public face).
 *
 * The session is the one owner of what outlives a plan: the host memory
 * account and, per CUDA device, a context (cuda/device.h) made at its first
 * use. session.c knows no CUDA type: a context is opened, closed and asked
 * its memory through the three calls below (cuda/device.c, or stubs in a
 * build without CUDA). */
#ifndef SARBP_SESSION_INTERNAL_H
#define SARBP_SESSION_INTERNAL_H

#include "sarbp/session.h"

struct sarbp_cuda_device;

/* Takes n bytes of s's host budget for a plan (what: the plan, for the
 * message); SARBP_ERR_NOMEM, saying so, when they are not left. s NULL:
 * nothing is counted. */
sarbp_status sarbp_session_host_take(sarbp_session *s, size_t n, const char *what);
/* Gives back n bytes taken with sarbp_session_host_take (s NULL: nothing). */
void sarbp_session_host_give(sarbp_session *s, size_t n);
/* Bytes of s's host budget not held (SIZE_MAX: no limit, or s NULL). */
size_t sarbp_session_host_room(sarbp_session *s);

/* The context of CUDA device `device` in s, opened at the first call
 * (several devices may be opened side by side, one thread each). */
sarbp_status sarbp_session_device(sarbp_session *s, int device, struct sarbp_cuda_device **out);
/* The copier's lanes asked for (0: its default). */
int sarbp_session_threads(const sarbp_session *s);

/* cuda/device.c (cuda/none.c without CUDA): a device's context for
 * a budget (0: 85% of the free memory now) and threads copier lanes;
 * closing it frees what it keeps and joins its threads (its plans are
 * gone); its memory account. */
sarbp_status sarbp_cuda_device_open(int device, size_t budget, int threads,
                                    struct sarbp_cuda_device **out);
void sarbp_cuda_device_close(struct sarbp_cuda_device *d);
void sarbp_cuda_device_memory(struct sarbp_cuda_device *d, sarbp_session_memory *m);

#endif
