/* form.c - the runner of a form plan (form.h; the plan: partition.c).
 *
 * It forms the plan's rows in place: one host thread per device, the
 * reader behind a lock reading each block straight into the device plan's
 * staging (sarbp_bp_plan_stage), or once for all devices into shared
 * slots; band after band over the kept profiles. The plans take their
 * resources from the caller's session, or from one made for the plan and
 * freed with it. Records attributes saying how the image was made. It
 * never prints. */
#include "form/plan_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pulses [p0, p0 + np) of the input: read into buf, checked (a reader),
 * or (*data set instead: an in-memory phase history) where they lie, for
 * the plan to check as it copies them. */
typedef sarbp_status (*read_fn)(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data);

/* Blocks of samples read once for all parts. With several devices that
 * each read the input once, in order (one band, or bands over kept
 * profiles), the first part to ask for a block reads it into one of
 * SHARE_SLOTS buffers and the others take it from there; before, every
 * device read (and the reader's lock serialised) every block. Used only
 * when every part's plan takes blocks of the same size. */
#define SHARE_SLOTS 4

struct share_slot {
    size_t p0;                 /* the block it holds (first pulse) */
    int loading;               /* being read */
    int refs;                  /* parts yet to take it; 0: free */
    sarbp_status st;           /* the read's */
    char why[256];             /* its message */
    sarbp_c32 *buf;            /* [block][nsamples] */
    const sarbp_c32 *data;     /* the block: buf, or where it lies in memory */
};

struct block_share {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int possible;              /* every part reads the input once */
    int arrived, enabled, failed;
    size_t block, next;        /* the parts' block size; the next block to read */
    struct share_slot slot[SHARE_SLOTS];
};

/* What the device threads share. */
struct form_shared {
    const sarbp_form_plan *fp;
    const sarbp_phd *meta;
    read_fn rd;
    void *src;
    int copies;                /* rd copies into the buffer it is given (a reader): it is given
                                  the plan's staging */
    sarbp_c32 *rows;           /* the plan's rows of the image [rows][nx] */
    pthread_mutex_t lock;      /* the reader, progress */
    sarbp_progress *progress;
    size_t done, total;        /* pulses x bands, for progress */
    int nparts;
    struct block_share share;
};

struct form_part_job {
    struct form_shared *sh;
    const sarbp_form_part *pt;
    sarbp_form_dev_stats st;
    sarbp_status status;
    int stopped;               /* it stopped because another part failed */
    char why[512];             /* the worker thread's error message */
};

/* Part arrival at the share once its plan exists (block 0: it has none,
 * it failed): the last to arrive decides whether the parts share reads. */
static void share_arrive(struct block_share *s, int nparts, size_t block, size_t nsamples)
{
    pthread_mutex_lock(&s->mu);
    if (block == 0) s->failed = 1;
    else if (s->arrived > 0 && s->block != block) s->possible = 0;
    if (block) s->block = block;
    if (++s->arrived == nparts) {
        int ok = s->possible && !s->failed && nparts > 1;
        for (int k = 0; ok && k < SHARE_SLOTS; k++) {
            s->slot[k].buf = malloc(s->block * nsamples * sizeof(sarbp_c32));
            ok = s->slot[k].buf != NULL; /* without them every part reads on its own */
        }
        s->enabled = ok;
        pthread_cond_broadcast(&s->cv);
    }
    while (s->arrived < nparts) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* n parts that never start: counted as arrived and failed, without waiting. */
static void share_absent(struct block_share *s, int n)
{
    pthread_mutex_lock(&s->mu);
    s->failed = 1;
    s->arrived += n;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* A part that stops early: the others stop waiting for it. */
static void share_fail(struct block_share *s)
{
    pthread_mutex_lock(&s->mu);
    s->failed = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The slot holding pulses [p0, p0 + np), read by this part if it is the
 * first to ask (the reader under sh->lock); *stopped when another part
 * failed meanwhile. */
static sarbp_status share_take(struct form_shared *sh, size_t p0, size_t np, int *stopped,
                               struct share_slot **out)
{
    struct block_share *s = &sh->share;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->failed) {
            pthread_mutex_unlock(&s->mu);
            *stopped = 1;
            return sarbp_error(SARBP_ERR_INTERNAL, "stopped: another device failed");
        }
        struct share_slot *have = NULL, *free_slot = NULL;
        for (int k = 0; k < SHARE_SLOTS; k++) {
            struct share_slot *t = &s->slot[k];
            if (t->refs > 0 && t->p0 == p0) have = t;
            else if (t->refs == 0 && !free_slot) free_slot = t;
        }
        if (have && !have->loading) {
            *out = have;
            pthread_mutex_unlock(&s->mu);
            if (have->st) return sarbp_error(have->st, "%s", have->why);
            return SARBP_OK;
        }
        if (!have && p0 == s->next && free_slot) { /* this part reads it */
            struct share_slot *t = free_slot;
            *t = (struct share_slot){p0, 1, sh->nparts, SARBP_OK, "", t->buf, NULL};
            s->next += s->block;
            pthread_mutex_unlock(&s->mu);
            pthread_mutex_lock(&sh->lock);
            const sarbp_status st = sh->rd(sh->src, p0, np, t->buf, &t->data);
            pthread_mutex_unlock(&sh->lock);
            pthread_mutex_lock(&s->mu);
            t->loading = 0;
            t->st = st;
            if (st) snprintf(t->why, sizeof t->why, "%s", sarbp_error_detail());
            pthread_cond_broadcast(&s->cv);
            continue; /* taken like any other */
        }
        pthread_cond_wait(&s->cv, &s->mu);
    }
}

/* This part is done with slot t. */
static void share_give(struct block_share *s, struct share_slot *t)
{
    pthread_mutex_lock(&s->mu);
    if (--t->refs == 0) pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void part_progress(struct form_shared *sh, size_t np)
{
    pthread_mutex_lock(&sh->lock);
    sh->done += np;
    sarbp_progress_update(sh->progress, sh->done, sh->total);
    pthread_mutex_unlock(&sh->lock);
}

/* Pulses [p0, p0 + np) for plan: from the share (several devices), or
 * read straight into the plan's staging (a reader), or where they lie. */
static sarbp_status part_read(struct form_part_job *job, sarbp_bp_plan *plan, size_t p0, size_t np,
                              const sarbp_c32 **samples, struct share_slot **slot)
{
    struct form_shared *sh = job->sh;
    if (sh->share.enabled) {
        SARBP_TRY(share_take(sh, p0, np, &job->stopped, slot));
        *samples = (*slot)->data;
        return SARBP_OK;
    }
    sarbp_c32 *buf = NULL;
    if (sh->copies) SARBP_TRY(sarbp_bp_plan_stage(plan, p0, np, &buf));
    pthread_mutex_lock(&sh->lock);
    const sarbp_status st = sh->rd(sh->src, p0, np, buf, samples);
    pthread_mutex_unlock(&sh->lock);
    return st;
}

/* Forms one device's share of the image, band by band. */
static sarbp_status form_part(struct form_part_job *job)
{
    struct form_shared *sh = job->sh;
    const sarbp_form_part *pt = job->pt;
    const sarbp_form_plan *fp = sh->fp;
    const sarbp_phd *meta = sh->meta;
    const size_t nx = fp->band.nx, P = meta->npulses;
    const double t0 = sarbp_now_s();
    sarbp_stage_times *stages = &job->st.stages;
    sarbp_bp_plan *plan = NULL;
    const sarbp_bp_desc d = form_plan_desc(fp, (sarbp_region){pt->row0, pt->band_rows}, pt->kept ? P : 0,
                                      sh->rows);
    const sarbp_status sc = fp->d.backend->create(&d, &fp->d.bp, pt->device, &plan, stages);
    share_arrive(&sh->share, sh->nparts, sc ? 0 : sarbp_bp_plan_block(plan), meta->nsamples);
    SARBP_TRY(sc);
    const size_t block = sarbp_bp_plan_block(plan);
    sarbp_status st = SARBP_OK;
    for (size_t b = 0; !st && b < pt->bands; b++) {
        const size_t row0 = pt->row0 + b * pt->band_rows;
        const size_t nrows = pt->row0 + pt->nrows - row0 < pt->band_rows ? pt->row0 + pt->nrows - row0
                                                                          : pt->band_rows;
        if (b > 0) st = sarbp_bp_plan_region(plan, (sarbp_region){row0, nrows});
        const int reuse = pt->kept && b > 0; /* the profiles are resident */
        for (size_t p0 = 0; !st && p0 < P; p0 += block) {
            const size_t np = P - p0 < block ? P - p0 : block;
            const sarbp_c32 *samples = NULL;
            struct share_slot *slot = NULL;
            if (!reuse) {
                job->st.pulses_read += np;
                const double tr = sarbp_now_s();
                st = part_read(job, plan, p0, np, &samples, &slot);
                job->st.read_s += sarbp_now_s() - tr;
            }
            if (!st) st = sarbp_bp_plan_execute(plan, p0, np, samples, stages);
            if (slot) share_give(&sh->share, slot); /* execute is done with the samples */
            part_progress(sh, np);
        }
        if (!st) st = sarbp_bp_plan_finish(plan, sh->rows + row0 * nx, stages);
        if (!st && fp->on_rows) st = fp->on_rows(fp->on_rows_user, row0, nrows, sh->rows + row0 * nx);
    }
    if (st && sh->share.enabled) share_fail(&sh->share);
    const double td = sarbp_now_s();
    sarbp_bp_plan_destroy(plan);
    job->st.teardown_s = sarbp_now_s() - td;
    job->st.pairs = sarbp_grid_pairs(&fp->band, P) * (double)pt->nrows / (double)fp->band.ny;
    job->st.total_s = sarbp_now_s() - t0;
    return st;
}

static void *form_part_main(void *arg)
{
    struct form_part_job *job = arg;
    job->status = form_part(job);
    if (job->status) snprintf(job->why, sizeof job->why, "%s", sarbp_error_detail());
    return NULL;
}

/* where they lie: the plans check them as they copy them (sarbp_bp_plan_execute) */
static sarbp_status read_memory(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data)
{
    (void)np;
    (void)buf;
    const sarbp_phd *phd = src;
    *data = phd->data + p0 * phd->nsamples;
    return SARBP_OK;
}

/* read into buf (the plan's staging, or a share slot), checked by the reader */
static sarbp_status read_reader(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data)
{
    *data = buf;
    return sarbp_reader_read(src, p0, np, buf);
}

sarbp_status sarbp_form_plan_execute(sarbp_form_plan *fp, sarbp_reader *rdr, const sarbp_phd *phd,
                                     sarbp_progress *progress, sarbp_c32 *rows, int zeroed,
                                     sarbp_form_stats *stats)
{
    const double t_start = sarbp_now_s();
    if (stats) memset(stats, 0, sizeof *stats);
    if (!rdr == !phd) return sarbp_error(SARBP_ERR_INVALID, "a form reads a reader or a phase history");
    if (phd && !phd->data) return sarbp_error(SARBP_ERR_INVALID, "phase history holds no samples");
    const sarbp_phd *meta = phd ? phd : sarbp_reader_meta(rdr);
    if (meta->npulses != fp->meta->npulses || meta->nsamples != fp->meta->nsamples)
        return sarbp_error(SARBP_ERR_INVALID, "the form was planned for %zu pulses of %zu samples, "
                           "not %zu of %zu", fp->meta->npulses, fp->meta->nsamples, meta->npulses,
                           meta->nsamples);
    const sarbp_form_layout *lay = &fp->d.layout;
    if (fp->d.rows.nrows == 0) return SARBP_OK; /* a share past the rows */
    if (lay->in_place && !zeroed) /* it accumulates onto zero */
        memset(rows, 0, fp->band.nx * fp->band.ny * sizeof(sarbp_c32));
    struct form_shared sh = {.fp = fp, .meta = meta, .rd = phd ? read_memory : read_reader,
                             .src = phd ? (void *)phd : (void *)rdr, .copies = !phd, .rows = rows,
                             .lock = PTHREAD_MUTEX_INITIALIZER, .progress = progress};
    for (int k = 0; k < lay->nparts; k++) sh.total += lay->part[k].bands * meta->npulses;
    sh.nparts = lay->nparts;
    pthread_mutex_init(&sh.share.mu, NULL);
    pthread_cond_init(&sh.share.cv, NULL);
    sh.share.possible = 1;
    for (int k = 0; k < lay->nparts; k++) sh.share.possible &= lay->part[k].bands == 1 || lay->part[k].kept;
    struct form_part_job jobs[SARBP_MAX_DEVICES];
    pthread_t th[SARBP_MAX_DEVICES];
    int started[SARBP_MAX_DEVICES] = {0};
    sarbp_status st = SARBP_OK;
    for (int k = 0; k < lay->nparts; k++) jobs[k] = (struct form_part_job){.sh = &sh, .pt = &lay->part[k]};
    const double t_init = sarbp_now_s() - t_start;
    if (lay->nparts == 1) {
        st = form_part(&jobs[0]);
    } else {
        for (int k = 0; k < lay->nparts; k++) {
            if (pthread_create(&th[k], NULL, form_part_main, &jobs[k])) {
                jobs[k].status = sarbp_error(SARBP_ERR_NOMEM, "cannot start a thread for device %d",
                                             lay->part[k].device);
                snprintf(jobs[k].why, sizeof jobs[k].why, "%s", sarbp_error_detail());
                share_absent(&sh.share, lay->nparts - k); /* the started parts stop waiting */
                break;
            }
            started[k] = 1;
        }
        for (int k = 0; k < lay->nparts; k++)
            if (started[k]) pthread_join(th[k], NULL);
        /* the first failure that is not a part stopping for another's */
        for (int pass = 0; pass < 2 && !st; pass++)
            for (int k = 0; k < lay->nparts && !st; k++)
                if (jobs[k].status && (pass || !jobs[k].stopped))
                    st = sarbp_error(jobs[k].status, "device %d: %s", lay->part[k].device, jobs[k].why);
    }
    for (int k = 0; k < SHARE_SLOTS; k++) free(sh.share.slot[k].buf);
    pthread_cond_destroy(&sh.share.cv);
    pthread_mutex_destroy(&sh.share.mu);
    pthread_mutex_destroy(&sh.lock);
    if (st || !stats) return st;
    for (int k = 0; k < lay->nparts; k++) {
        const sarbp_form_dev_stats *ds = &jobs[k].st;
        stats->dev[k] = *ds;
        stats->read_s += ds->read_s;
        sarbp_stage_times *t = &stats->stages;
        t->setup_s += ds->stages.setup_s;
        t->transfer_s += ds->stages.transfer_s;
        t->rc_s += ds->stages.rc_s;
        t->bp_s += ds->stages.bp_s;
        t->finish_s += ds->stages.finish_s;
        t->pulse_bytes += ds->stages.pulse_bytes;
        t->image_bytes += ds->stages.image_bytes;
    }
    stats->total_s = sarbp_now_s() - t_start;
    stats->init_s = t_init;
    stats->compute_s = stats->total_s - stats->read_s;
    stats->npulses = meta->npulses;
    /* each device took every block it read; shared blocks were read once */
    for (int k = 0; k < lay->nparts; k++)
        if (!sh.share.enabled || k == 0) stats->pulses_read += jobs[k].st.pulses_read;
    stats->pairs = sarbp_grid_pairs(&fp->band, meta->npulses);
    stats->layout = *lay;
    return SARBP_OK;
}

void sarbp_form_decision_device(const sarbp_form_decision *d, char *buf, size_t n)
{
    const sarbp_bp_options *bo = &d->bp;
    if (d->backend == &sarbp_backend_cuda && bo->ndevices > 0) {
        size_t k = (size_t)snprintf(buf, n, "cuda devices");
        for (int i = 0; i < bo->ndevices && k < n; i++)
            k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : " ", bo->devices[i]);
    } else if (d->backend == &sarbp_backend_cuda) {
        snprintf(buf, n, "cuda device %d", bo->device);
    } else {
        snprintf(buf, n, "cpu, %d threads", bo->threads ? bo->threads : sarbp_cpu_count());
    }
}

sarbp_status sarbp_form_plan_attrs(const sarbp_form_plan *fp, sarbp_image *img)
{
    const sarbp_form_decision *d = &fp->d;
    const sarbp_rc_params *rc = &d->rc;
    const sarbp_phd *meta = fp->meta;
    char buf[96];
    SARBP_TRY(sarbp_image_set_attr(img, "sarbp_version", SARBP_VERSION_STRING));
    /* the algorithm, and FFBP's factorization and its prediction */
    SARBP_TRY(sarbp_image_set_attr(img, "algorithm", d->ffbp ? "ffbp" : "bp"));
    if (d->ffbp) {
        const struct {
            const char *key, *fmt;
            double v;
        } f[] = {{"max_error_db", "%.17g", d->bp.max_error_db}, {"ffbp_base", "%.0f", (double)d->prm.base},
                 {"ffbp_merge", "%.0f", (double)d->prm.merge}, {"ffbp_os_theta", "%.17g", d->prm.os_theta},
                 {"ffbp_os_rho", "%.17g", d->prm.os_rho}, {"ffbp_stages", "%.0f", (double)d->pred.stages},
                 {"ffbp_predicted_error_db", "%.17g", d->pred.error_db}};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            snprintf(buf, sizeof buf, f[i].fmt, f[i].v);
            SARBP_TRY(sarbp_image_set_attr(img, f[i].key, buf));
        }
    }
    sarbp_form_decision_device(d, buf, sizeof buf);
    SARBP_TRY(sarbp_image_set_attr(img, "device", buf));
    SARBP_TRY(sarbp_image_set_attr(img, "backend", d->backend->name));
    SARBP_TRY(sarbp_image_set_attr(img, "precision", sarbp_precision_name(d->bp.precision)));
    if (d->bp.variant) SARBP_TRY(sarbp_image_set_attr(img, "variant", d->bp.variant));
    sarbp_window_format(&rc->range_window, buf, sizeof buf);
    SARBP_TRY(sarbp_image_set_attr(img, "range_window", buf));
    sarbp_window_format(&rc->az_window, buf, sizeof buf);
    SARBP_TRY(sarbp_image_set_attr(img, "azimuth_window", buf));
    snprintf(buf, sizeof buf, "%d", rc->upsample);
    SARBP_TRY(sarbp_image_set_attr(img, "upsample", buf));
    if (d->bp.precision != SARBP_EXACT)
        SARBP_TRY(sarbp_image_set_attr(img, "interp", sarbp_interp_name(rc->interp)));
    snprintf(buf, sizeof buf, "%zu", meta->npulses);
    SARBP_TRY(sarbp_image_set_attr(img, "npulses", buf));
    snprintf(buf, sizeof buf, "%zu", meta->nsamples);
    SARBP_TRY(sarbp_image_set_attr(img, "nsamples", buf));
    SARBP_TRY(sarbp_image_set_attr(img, "domain", meta->domain == SARBP_DOMAIN_FREQ ? "freq" : "chirp"));
    /* the windows' coherent gain: a unit target at the origin peaks at
     * npulses * coherent_gain */
    if (d->have_gain) {
        snprintf(buf, sizeof buf, "%.10g", d->gain);
        SARBP_TRY(sarbp_image_set_attr(img, "coherent_gain", buf));
    }
    return SARBP_OK;
}

/* The convenience calls: a plan for what is given, formed into a new image
 * or the caller's, every pixel written. */
static sarbp_status form_given(sarbp_session *s, sarbp_reader *rd, const sarbp_phd *phd,
                               const sarbp_grid *g, const sarbp_backend *be, const sarbp_rc_params *rc,
                               const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image *given,
                               sarbp_image **out, sarbp_form_stats *stats)
{
    *out = NULL;
    const double t0 = sarbp_now_s();
    if (given && (!given->data || given->grid.nx != g->nx || given->grid.ny != g->ny))
        return sarbp_error(SARBP_ERR_INVALID, "the image to form into is not %zu x %zu", g->nx, g->ny);
    const sarbp_form_request req = form_request_given(g, be, rc, o);
    sarbp_form_plan *fp;
    SARBP_TRY(sarbp_form_plan_create(s, phd ? phd : sarbp_reader_meta(rd), &req, &fp));
    /* a layout in place accumulates onto zeros; otherwise every pixel is
     * written and a fresh image needs none */
    const int zero = fp->d.layout.in_place;
    sarbp_image *img = given;
    sarbp_status st = given ? SARBP_OK : zero ? sarbp_image_alloc(g, &img) : sarbp_image_alloc_unset(g, &img);
    const double t_plan = sarbp_now_s() - t0;
    if (!st) st = sarbp_form_plan_execute(fp, rd, phd, progress, img->data, !given && zero, stats);
    if (!st) {
        if (given) img->grid = *g;
        st = sarbp_form_plan_attrs(fp, img);
    }
    sarbp_form_plan_free(fp);
    if (st) {
        if (!given) sarbp_image_free(img);
        return st;
    }
    if (stats) { /* the decisions and the image are part of the form's time */
        stats->init_s += t_plan;
        stats->total_s = sarbp_now_s() - t0;
        stats->compute_s = stats->total_s - stats->read_s;
    }
    *out = img;
    return SARBP_OK;
}

sarbp_status sarbp_form(sarbp_session *s, sarbp_reader *rd, const sarbp_grid *g,
                        const sarbp_backend *be, const sarbp_rc_params *rc, const sarbp_bp_options *o,
                        sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats)
{
    SARBP_TRY(form_given(s, rd, NULL, g, be, rc, o, progress, NULL, out, stats));
    return sarbp_form_inputs_attr(rd, *out);
}

sarbp_status sarbp_form_phd(sarbp_session *s, const sarbp_phd *phd, const sarbp_grid *g,
                            const sarbp_backend *be, const sarbp_rc_params *rc,
                            const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image **out,
                            sarbp_form_stats *stats)
{
    *out = NULL;
    if (!phd->data) return sarbp_error(SARBP_ERR_INVALID, "phase history holds no samples");
    return form_given(s, NULL, phd, g, be, rc, o, progress, NULL, out, stats);
}

sarbp_status sarbp_form_phd_into(sarbp_session *s, const sarbp_phd *phd, const sarbp_grid *g,
                                 const sarbp_backend *be, const sarbp_rc_params *rc,
                                 const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image *img,
                                 sarbp_form_stats *stats)
{
    if (!phd->data) return sarbp_error(SARBP_ERR_INVALID, "phase history holds no samples");
    if (!img) return sarbp_error(SARBP_ERR_INVALID, "no image to form into");
    sarbp_image *out;
    return form_given(s, NULL, phd, g, be, rc, o, progress, img, &out, stats);
}

sarbp_status sarbp_form_inputs_attr(sarbp_reader *rd, sarbp_image *img)
{
    char files[sizeof(img->attrs[0].value)] = "";
    for (size_t i = 0; i < sarbp_reader_nfiles(rd); i++) {
        size_t len = strlen(files);
        snprintf(files + len, sizeof files - len, "%s%s", i ? ";" : "", sarbp_reader_file(rd, i));
    }
    return sarbp_image_set_attr(img, "inputs", files);
}
