/* session.c - the session (sarbp/session.h): the host memory account and
 * one context per CUDA device, opened at its first use and closed with the
 * session. It starts no thread itself; a device's context starts the
 * copier's (cuda/device.c) and joins them when closed. */
#include "backproject/session_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backproject/ffbp/memo.h"
#include "sarbp/backproject.h" /* SARBP_MAX_DEVICES */

struct sarbp_session_s {
    sarbp_session_options o;
    pthread_mutex_t mu;           /* the host account and the table of contexts */
    size_t host_used, host_peak;
    struct sarbp_cuda_device *dev[SARBP_MAX_DEVICES];
    pthread_mutex_t open_mu[SARBP_MAX_DEVICES]; /* one device opened once, others side by side */
    pthread_mutex_t ffbp_mu;      /* the last FFBP decision: a form's threads may ask at once */
    sarbp_ffbp_memo ffbp;
};

void sarbp_session_options_default(sarbp_session_options *o)
{
    *o = (sarbp_session_options){0};
}

sarbp_status sarbp_session_create(const sarbp_session_options *o, sarbp_session **out)
{
    *out = NULL;
    sarbp_session *s = calloc(1, sizeof *s);
    if (!s) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a session");
    if (o) s->o = *o;
    else sarbp_session_options_default(&s->o);
    if (s->o.threads < 0) s->o.threads = 0;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->ffbp_mu, NULL);
    for (int k = 0; k < SARBP_MAX_DEVICES; k++) pthread_mutex_init(&s->open_mu[k], NULL);
    *out = s;
    return SARBP_OK;
}

void sarbp_session_free(sarbp_session *s)
{
    if (!s) return;
    for (int k = 0; k < SARBP_MAX_DEVICES; k++) {
        sarbp_cuda_device_close(s->dev[k]);
        pthread_mutex_destroy(&s->open_mu[k]);
    }
    pthread_mutex_destroy(&s->mu);
    sarbp_ffbp_memo_release(&s->ffbp);
    pthread_mutex_destroy(&s->ffbp_mu);
    free(s);
}

sarbp_status sarbp_session_host_take(sarbp_session *s, size_t n, const char *what)
{
    if (!s) return SARBP_OK;
    pthread_mutex_lock(&s->mu);
    const size_t budget = s->o.host_budget, used = s->host_used;
    const int over = budget && (n > budget || used > budget - n);
    if (!over) {
        s->host_used += n;
        if (s->host_used > s->host_peak) s->host_peak = s->host_used;
    }
    pthread_mutex_unlock(&s->mu);
    if (over)
        return sarbp_error(SARBP_ERR_NOMEM,
                           "%s needs %.2f MiB of host memory: the session's budget of %.2f MiB has "
                           "%.2f MiB left",
                           what, n / 1048576.0, budget / 1048576.0,
                           (used < budget ? budget - used : 0) / 1048576.0);
    return SARBP_OK;
}

void sarbp_session_host_give(sarbp_session *s, size_t n)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->host_used -= n <= s->host_used ? n : s->host_used;
    pthread_mutex_unlock(&s->mu);
}

size_t sarbp_session_host_room(sarbp_session *s)
{
    if (!s || !s->o.host_budget) return SIZE_MAX;
    pthread_mutex_lock(&s->mu);
    const size_t room = s->host_used < s->o.host_budget ? s->o.host_budget - s->host_used : 0;
    pthread_mutex_unlock(&s->mu);
    return room;
}

sarbp_status sarbp_session_device(sarbp_session *s, int device, struct sarbp_cuda_device **out)
{
    *out = NULL;
    if (!s) return sarbp_error(SARBP_ERR_INTERNAL, "no session");
    if (device < 0 || device >= SARBP_MAX_DEVICES)
        return sarbp_error(SARBP_ERR_NODEVICE, "there is no CUDA device %d", device);
    pthread_mutex_lock(&s->open_mu[device]);
    sarbp_status st = SARBP_OK;
    if (!s->dev[device])
        st = sarbp_cuda_device_open(device, s->o.device_budget, s->o.threads, &s->dev[device]);
    *out = s->dev[device];
    pthread_mutex_unlock(&s->open_mu[device]);
    return st;
}

/* sarbp_session_start: one thread per device, each opening its context. */
struct start_job {
    sarbp_session *s;
    int device;
    sarbp_status st;
    char why[256];
};

static void *start_main(void *arg)
{
    struct start_job *w = arg;
    struct sarbp_cuda_device *ctx;
    w->st = sarbp_session_device(w->s, w->device, &ctx);
    if (w->st) snprintf(w->why, sizeof w->why, "%s", sarbp_error_detail());
    return NULL;
}

sarbp_status sarbp_session_start(sarbp_session *s, const int *devices, int n)
{
    if (!s || n < 1) return SARBP_OK;
    if (n > SARBP_MAX_DEVICES)
        return sarbp_error(SARBP_ERR_INVALID, "%d devices: at most %d", n, SARBP_MAX_DEVICES);
    struct start_job jobs[SARBP_MAX_DEVICES];
    pthread_t th[SARBP_MAX_DEVICES];
    int started[SARBP_MAX_DEVICES] = {0};
    for (int k = 0; k < n; k++) {
        jobs[k] = (struct start_job){s, devices[k], SARBP_OK, ""};
        if (n > 1) started[k] = !pthread_create(&th[k], NULL, start_main, &jobs[k]);
        if (!started[k]) start_main(&jobs[k]); /* one device, or no thread to spare */
    }
    for (int k = 0; k < n; k++)
        if (started[k]) pthread_join(th[k], NULL);
    for (int k = 0; k < n; k++)
        if (jobs[k].st) return sarbp_error(jobs[k].st, "%s", jobs[k].why);
    return SARBP_OK;
}

int sarbp_session_threads(const sarbp_session *s)
{
    return s ? s->o.threads : 0;
}

void sarbp_session_memory_of(sarbp_session *s, int device, sarbp_session_memory *m)
{
    *m = (sarbp_session_memory){0};
    if (!s) return;
    if (device < 0) {
        pthread_mutex_lock(&s->mu);
        *m = (sarbp_session_memory){s->o.host_budget ? s->o.host_budget : SIZE_MAX, s->host_used,
                                    s->host_peak, 0};
        pthread_mutex_unlock(&s->mu);
        return;
    }
    if (device >= SARBP_MAX_DEVICES) return;
    pthread_mutex_lock(&s->open_mu[device]);
    if (s->dev[device]) sarbp_cuda_device_memory(s->dev[device], m);
    pthread_mutex_unlock(&s->open_mu[device]);
}

sarbp_status sarbp_session_ffbp_choose(sarbp_session *s, const sarbp_phd *meta,
                                       const sarbp_rc_params *rc, const sarbp_grid *g,
                                       double max_error_db, sarbp_ffbp_params *out,
                                       sarbp_ffbp_prediction *pred)
{
    if (!s) return sarbp_ffbp_choose_phd(meta, rc, g, max_error_db, out, pred);
    pthread_mutex_lock(&s->ffbp_mu);
    const sarbp_status st = sarbp_ffbp_memo_choose(&s->ffbp, meta, rc, g, max_error_db, out, pred);
    pthread_mutex_unlock(&s->ffbp_mu);
    return st;
}
