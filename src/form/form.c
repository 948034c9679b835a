/* form.c - the pipeline and its partition layer: pulses in blocks from a
 * reader (or memory) through a back end's typed plans into one image,
 * written in place; the image's rows shared among devices (one host thread
 * each, the reader behind a lock), each share formed in bands that fit its
 * device's budget, over resident range profiles when they fit (form.h).
 * The FFBP factorization is chosen here, once per form, and handed to the
 * layout's memory queries and to every plan. The plans take their
 * resources from the caller's session, or from one made for the form and
 * freed at its end. Records attributes saying how the image was made. It
 * never prints. */
#include "sarbp/form.h"

#include <pthread.h>

#include "backproject/plan.h"           /* sarbp_bp_memory_need */
#include "backproject/session_internal.h"  /* sarbp_session_device */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pulses [p0, p0 + np) of the input, checked: read into buf, or (an
 * in-memory phase history) where they lie; *data says which. */
typedef sarbp_status (*read_fn)(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data);

/* What a form decides once: the session its plans use, the windows'
 * coherent gain (for the image's attributes) and, for FFBP, the
 * factorization and its prediction. */
struct form_choice {
    sarbp_session *s;
    int have_gain;             /* gain is set (windows the plans would refuse: not) */
    double gain;
    int ffbp;                  /* the two below are set */
    sarbp_ffbp_params prm;
    sarbp_ffbp_prediction pred;
};

static void record_attrs(sarbp_image *img, const sarbp_backend *be, const sarbp_rc_params *rc,
                         const sarbp_bp_options *o, const sarbp_phd *meta, const struct form_choice *c)
{
    char buf[64];
    sarbp_image_set_attr(img, "sarbp_version", SARBP_VERSION_STRING);
    sarbp_image_set_attr(img, "backend", be->name);
    sarbp_image_set_attr(img, "precision", sarbp_precision_name(o->precision));
    if (o->variant) sarbp_image_set_attr(img, "variant", o->variant);
    sarbp_window_format(&rc->range_window, buf, sizeof buf);
    sarbp_image_set_attr(img, "range_window", buf);
    sarbp_window_format(&rc->az_window, buf, sizeof buf);
    sarbp_image_set_attr(img, "azimuth_window", buf);
    snprintf(buf, sizeof buf, "%d", rc->upsample);
    sarbp_image_set_attr(img, "upsample", buf);
    if (o->precision != SARBP_EXACT) sarbp_image_set_attr(img, "interp", sarbp_interp_name(rc->interp));
    snprintf(buf, sizeof buf, "%zu", meta->npulses);
    sarbp_image_set_attr(img, "npulses", buf);
    snprintf(buf, sizeof buf, "%zu", meta->nsamples);
    sarbp_image_set_attr(img, "nsamples", buf);
    sarbp_image_set_attr(img, "domain", meta->domain == SARBP_DOMAIN_FREQ ? "freq" : "chirp");
    /* the windows' coherent gain: a unit target at the origin peaks at
     * npulses * coherent_gain */
    if (c->have_gain) {
        snprintf(buf, sizeof buf, "%.10g", c->gain);
        sarbp_image_set_attr(img, "coherent_gain", buf);
    }
}

/* ---- the partition layer ---- */

static size_t align_down(size_t n, size_t a)
{
    return a > 1 && n >= a ? n - n % a : n;
}

static sarbp_status form_choose(sarbp_session *s, const sarbp_phd *meta, const sarbp_grid *g,
                                const sarbp_rc_params *rc, const sarbp_bp_options *o,
                                struct form_choice *c)
{
    *c = (struct form_choice){.s = s};
    c->have_gain = sarbp_rc_coherent_gain(meta, rc, &c->gain) == SARBP_OK;
    if (o->algorithm != SARBP_ALGO_FFBP) return SARBP_OK;
    SARBP_TRY(sarbp_session_ffbp_choose(s, meta, rc, g, o->max_error_db, &c->prm, &c->pred));
    c->ffbp = 1;
    return SARBP_OK;
}

/* A plan's description for rows r of g under the form's choices. */
static sarbp_bp_desc form_desc(const struct form_choice *c, const sarbp_phd *meta, const sarbp_grid *g,
                               const sarbp_rc_params *rc, sarbp_region r, size_t keep, sarbp_c32 *image)
{
    return (sarbp_bp_desc){meta, g, rc, r, keep, image, c->s, c->ffbp ? &c->prm : NULL,
                           c->ffbp ? &c->pred : NULL};
}

/* The bands of one device's share: rows per band within its budget (and
 * o->band_rows), with the profiles kept when they leave room for bands of a
 * fair size. */
static sarbp_status plan_part(const struct form_choice *c, const sarbp_phd *meta, const sarbp_grid *g,
                              const sarbp_backend *be, const sarbp_rc_params *rc,
                              const sarbp_bp_options *o, sarbp_form_part *pt, int have_m,
                              sarbp_bp_memory *m)
{
    const sarbp_bp_desc d = form_desc(c, meta, g, rc, (sarbp_region){pt->row0, pt->nrows}, 0, NULL);
    if (!have_m) SARBP_TRY(be->memory(&d, o, pt->device, m));
    const size_t P = meta->npulses, per_row = m->per_row ? m->per_row : 1;
    pt->budget = m->budget;
    if (m->budget <= m->fixed || (m->budget - m->fixed) / per_row < 1)
        return sarbp_error(SARBP_ERR_NOMEM,
                           "memory budget of %.0f MiB is too small: %s need %.0f MiB "
                           "plus one image row (%.2f MiB)%s",
                           m->budget / 1048576.0,
                           m->max_band_rows ? "the profiles, blocks of pulses and a one-row band's "
                                              "polar grids"
                                            : "blocks of pulses",
                           m->fixed / 1048576.0, per_row / 1048576.0,
                           be->multi_device ? " on the device" : "");
    const size_t avail = m->budget - m->fixed;
    size_t rows_all = avail / per_row;
    if (o->band_rows && o->band_rows < rows_all) rows_all = o->band_rows;
    /* a need not linear in the rows: the largest band measured to fit */
    if (m->max_band_rows && m->max_band_rows < rows_all) rows_all = m->max_band_rows;
    pt->kept = 0;
    pt->band_rows = rows_all;
    if (rows_all < pt->nrows) {
        /* more than one band: keep the profiles when the bands beside them
         * keep at least an eighth of the rows (and a tile row): a band more
         * costs a few launches and a copy back; streaming costs reading and
         * compressing every pulse again for every band */
        const int can_keep = !o->stream && m->per_kept_pulse != SIZE_MAX &&
                             m->per_kept_pulse <= (avail - 1) / (P ? P : 1);
        if (can_keep) {
            size_t rows_keep = (avail - P * m->per_kept_pulse) / per_row;
            if (rows_keep > rows_all) rows_keep = rows_all;
            const size_t floor_rows = rows_all / 8 > m->row_align ? rows_all / 8 : m->row_align;
            if (rows_keep >= (floor_rows ? floor_rows : 1)) {
                pt->kept = 1;
                pt->band_rows = rows_keep;
            }
        }
        pt->band_rows = align_down(pt->band_rows, m->row_align);
    }
    if (pt->band_rows > pt->nrows) pt->band_rows = pt->nrows;
    pt->bands = (pt->nrows + pt->band_rows - 1) / pt->band_rows;
    pt->need = sarbp_bp_memory_need(m, pt->band_rows, pt->kept ? P : 0);
    return SARBP_OK;
}

static sarbp_status form_layout(const struct form_choice *c, const sarbp_phd *meta, const sarbp_grid *g,
                                const sarbp_backend *be, const sarbp_rc_params *rc,
                                const sarbp_bp_options *o, sarbp_form_layout *out)
{
    memset(out, 0, sizeof *out);
    SARBP_TRY(sarbp_grid_validate(g));
    const int multi = be->multi_device && o->ndevices > 0;
    int n = multi ? o->ndevices : 1;
    if (n > SARBP_MAX_DEVICES)
        return sarbp_error(SARBP_ERR_INVALID, "%d devices: at most %d", n, SARBP_MAX_DEVICES);
    /* equal shares of rows on the back end's row alignment; no empty share */
    sarbp_bp_memory m;
    const sarbp_bp_desc d = form_desc(c, meta, g, rc, (sarbp_region){0, g->ny}, 0, NULL);
    const int d_query = multi ? o->devices[0] : o->device;
    SARBP_TRY(be->memory(&d, o, d_query, &m));
    const sarbp_bp_memory m0 = m;
    const size_t align = m.row_align ? m.row_align : 1, units = (g->ny + align - 1) / align;
    if ((size_t)n > units) n = (int)units;
    out->nparts = n;
    out->in_place = m.in_place;
    out->checks = m.checks;
    for (int k = 0; k < n; k++) {
        sarbp_form_part *pt = &out->part[k];
        pt->device = multi ? o->devices[k] : o->device;
        const size_t u0 = units * (size_t)k / (size_t)n, u1 = units * (size_t)(k + 1) / (size_t)n;
        pt->row0 = u0 * align;
        pt->nrows = (u1 * align < g->ny ? u1 * align : g->ny) - pt->row0;
        /* a part on the device asked above: its memory is known (a linear
         * model does not depend on the rows; each query costs the CUDA
         * back end about 0.7 ms), or the measured one's of the whole grid */
        sarbp_bp_memory mp = m0;
        const int known = pt->device == d_query && (!m0.max_band_rows || pt->nrows == g->ny);
        SARBP_TRY(plan_part(c, meta, g, be, rc, o, pt, known, &mp));
    }
    return SARBP_OK;
}

sarbp_status sarbp_form_plan_layout(sarbp_session *s, const sarbp_phd *meta, const sarbp_grid *g,
                                    const sarbp_backend *be, const sarbp_rc_params *rc,
                                    const sarbp_bp_options *o, sarbp_form_layout *out)
{
    memset(out, 0, sizeof *out);
    SARBP_TRY(sarbp_grid_validate(g));
    sarbp_session *own = NULL;
    if (!s) SARBP_TRY(sarbp_session_create(NULL, &own));
    struct form_choice c;
    sarbp_status st = form_choose(s ? s : own, meta, g, rc, o, &c);
    if (!st) st = form_layout(&c, meta, g, be, rc, o, out);
    sarbp_session_free(own);
    return st;
}

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
    const sarbp_phd *meta;
    read_fn rd;
    void *src;
    const sarbp_grid *g;
    const sarbp_backend *be;
    const sarbp_rc_params *rc;
    const sarbp_bp_options *o;
    const struct form_choice *choice;
    sarbp_image *img;
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

/* Forms one device's share of the image, band by band. */
static sarbp_status form_part(struct form_part_job *job)
{
    struct form_shared *sh = job->sh;
    const sarbp_form_part *pt = job->pt;
    const sarbp_phd *meta = sh->meta;
    const size_t nx = sh->g->nx, P = meta->npulses;
    const double t0 = sarbp_now_s();
    sarbp_stage_times *stages = &job->st.stages;
    sarbp_bp_plan *plan = NULL;
    const sarbp_bp_desc d = form_desc(sh->choice, meta, sh->g, sh->rc, (sarbp_region){pt->row0, pt->band_rows},
                                      pt->kept ? P : 0, sh->img->data);
    const sarbp_status sc = sh->be->create(&d, sh->o, pt->device, &plan, stages);
    share_arrive(&sh->share, sh->nparts, sc ? 0 : sarbp_bp_plan_block(plan), meta->nsamples);
    SARBP_TRY(sc);
    const size_t block = sarbp_bp_plan_block(plan);
    sarbp_c32 *buf = block ? malloc(block * meta->nsamples * sizeof(sarbp_c32)) : NULL;
    sarbp_status st = buf ? SARBP_OK
                          : sarbp_error(SARBP_ERR_NOMEM, "out of memory for a block of %zu pulses", block);
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
                if (sh->share.enabled) {
                    st = share_take(sh, p0, np, &job->stopped, &slot);
                    if (slot) samples = slot->data;
                } else {
                    pthread_mutex_lock(&sh->lock);
                    st = sh->rd(sh->src, p0, np, buf, &samples);
                    pthread_mutex_unlock(&sh->lock);
                }
                job->st.read_s += sarbp_now_s() - tr;
            }
            if (!st) st = sarbp_bp_plan_execute(plan, p0, np, samples, stages);
            if (slot) share_give(&sh->share, slot); /* execute is done with the samples */
            part_progress(sh, np);
        }
        if (!st) st = sarbp_bp_plan_finish(plan, sh->img->data + row0 * nx, stages);
    }
    if (st && sh->share.enabled) share_fail(&sh->share);
    const double td = sarbp_now_s();
    sarbp_bp_plan_destroy(plan);
    job->st.teardown_s = sarbp_now_s() - td;
    free(buf);
    job->st.pairs = sarbp_grid_pairs(sh->g, P) * (double)pt->nrows / (double)sh->g->ny;
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

/* Starting a CUDA device (its context) takes a quarter of a second or more,
 * and the layout's memory queries would start the devices one after the
 * other: with several devices their contexts in the session are opened side
 * by side first, one thread each. Errors are left for the layout and the
 * plans to report. */
struct open_job {
    sarbp_session *s;
    int device;
};

static void *open_main(void *arg)
{
    const struct open_job *w = arg;
    struct sarbp_cuda_device *ctx;
    (void)sarbp_session_device(w->s, w->device, &ctx);
    return NULL;
}

static void open_devices(sarbp_session *s, const sarbp_backend *be, const sarbp_bp_options *o)
{
    if (!be->multi_device || o->ndevices < 2 || o->ndevices > SARBP_MAX_DEVICES) return;
    struct open_job jobs[SARBP_MAX_DEVICES];
    pthread_t th[SARBP_MAX_DEVICES];
    int started[SARBP_MAX_DEVICES] = {0};
    for (int k = 0; k < o->ndevices; k++) {
        jobs[k] = (struct open_job){s, o->devices[k]};
        started[k] = !pthread_create(&th[k], NULL, open_main, &jobs[k]);
    }
    for (int k = 0; k < o->ndevices; k++)
        if (started[k]) pthread_join(th[k], NULL);
}

/* no copy: the plans read the caller's samples (execute does not keep them) */
static sarbp_status read_memory_unchecked(void *src, size_t p0, size_t np, sarbp_c32 *buf,
                                          const sarbp_c32 **data)
{
    (void)np;
    (void)buf;
    const sarbp_phd *phd = src;
    *data = phd->data + p0 * phd->nsamples;
    return SARBP_OK;
}

static sarbp_status read_memory(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data)
{
    SARBP_TRY(read_memory_unchecked(src, p0, np, buf, data));
    return sarbp_phd_check_samples(src, p0, np, *data);
}

/* Forms into *out: a new image, or (given) the caller's image of g's size,
 * every pixel of which is written; in session s. */
static sarbp_status form_in(sarbp_session *s, const sarbp_phd *meta, read_fn rd, void *src,
                            const sarbp_grid *g, const sarbp_backend *be, const sarbp_rc_params *rc,
                            const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image *given,
                            sarbp_image **out, sarbp_form_stats *stats)
{
    *out = NULL;
    double t_start = sarbp_now_s();
    if (given && (!given->data || given->grid.nx != g->nx || given->grid.ny != g->ny))
        return sarbp_error(SARBP_ERR_INVALID, "the image to form into is not %zu x %zu", g->nx, g->ny);
    SARBP_TRY(sarbp_grid_validate(g));
    /* the metadata here; samples block by block as they are read (a
     * reader checks its own; read_memory checks the phase history's, or
     * the plans do as they stage them), so that the scan runs while the
     * devices work */
    sarbp_phd meta_only = *meta;
    meta_only.data = NULL;
    SARBP_TRY(sarbp_phd_validate(&meta_only));
    open_devices(s, be, o);
    struct form_choice choice;
    SARBP_TRY(form_choose(s, meta, g, rc, o, &choice));
    sarbp_form_layout lay;
    SARBP_TRY(form_layout(&choice, meta, g, be, rc, o, &lay));
    if (rd == read_memory && lay.checks) rd = read_memory_unchecked;
    sarbp_image *img = given;
    if (!img) SARBP_TRY(sarbp_image_alloc(g, &img));
    else if (lay.in_place) /* it accumulates onto zero */
        memset(img->data, 0, g->nx * g->ny * sizeof(sarbp_c32));
    struct form_shared sh = {.meta = meta, .rd = rd, .src = src, .g = g, .be = be, .rc = rc,
                             .o = o, .choice = &choice, .img = img,
                             .lock = PTHREAD_MUTEX_INITIALIZER, .progress = progress};
    for (int k = 0; k < lay.nparts; k++) sh.total += lay.part[k].bands * meta->npulses;
    sh.nparts = lay.nparts;
    pthread_mutex_init(&sh.share.mu, NULL);
    pthread_cond_init(&sh.share.cv, NULL);
    sh.share.possible = 1;
    for (int k = 0; k < lay.nparts; k++) sh.share.possible &= lay.part[k].bands == 1 || lay.part[k].kept;
    struct form_part_job jobs[SARBP_MAX_DEVICES];
    pthread_t th[SARBP_MAX_DEVICES];
    int started[SARBP_MAX_DEVICES] = {0};
    sarbp_status st = SARBP_OK;
    for (int k = 0; k < lay.nparts; k++) jobs[k] = (struct form_part_job){.sh = &sh, .pt = &lay.part[k]};
    const double t_init = sarbp_now_s() - t_start;
    if (lay.nparts == 1) {
        st = form_part(&jobs[0]);
    } else {
        for (int k = 0; k < lay.nparts; k++) {
            if (pthread_create(&th[k], NULL, form_part_main, &jobs[k])) {
                jobs[k].status = sarbp_error(SARBP_ERR_NOMEM, "cannot start a thread for device %d",
                                             lay.part[k].device);
                snprintf(jobs[k].why, sizeof jobs[k].why, "%s", sarbp_error_detail());
                share_absent(&sh.share, lay.nparts - k); /* the started parts stop waiting */
                break;
            }
            started[k] = 1;
        }
        for (int k = 0; k < lay.nparts; k++)
            if (started[k]) pthread_join(th[k], NULL);
        /* the first failure that is not a part stopping for another's */
        for (int pass = 0; pass < 2 && !st; pass++)
            for (int k = 0; k < lay.nparts && !st; k++)
                if (jobs[k].status && (pass || !jobs[k].stopped))
                    st = sarbp_error(jobs[k].status, "device %d: %s", lay.part[k].device, jobs[k].why);
    }
    for (int k = 0; k < SHARE_SLOTS; k++) free(sh.share.slot[k].buf);
    pthread_cond_destroy(&sh.share.cv);
    pthread_mutex_destroy(&sh.share.mu);
    pthread_mutex_destroy(&sh.lock);
    if (st) {
        if (!given) sarbp_image_free(img);
        return st;
    }
    if (given) img->grid = *g;
    record_attrs(img, be, rc, o, meta, &choice);
    double t_end = sarbp_now_s();
    if (stats) {
        memset(stats, 0, sizeof *stats);
        for (int k = 0; k < lay.nparts; k++) {
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
        stats->total_s = t_end - t_start;
        stats->init_s = t_init;
        stats->compute_s = stats->total_s - stats->read_s;
        stats->npulses = meta->npulses;
        /* each device took every block it read; shared blocks were read once */
        for (int k = 0; k < lay.nparts; k++)
            if (!sh.share.enabled || k == 0) stats->pulses_read += jobs[k].st.pulses_read;
        stats->pairs = sarbp_grid_pairs(g, meta->npulses);
        stats->layout = lay;
    }
    *out = img;
    return SARBP_OK;
}

/* form_in in s, or in a session made for this form (s NULL): a caller
 * forming one image keeps nothing once it returns. */
static sarbp_status form_core(sarbp_session *s, const sarbp_phd *meta, read_fn rd, void *src,
                              const sarbp_grid *g, const sarbp_backend *be, const sarbp_rc_params *rc,
                              const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image *given,
                              sarbp_image **out, sarbp_form_stats *stats)
{
    *out = NULL;
    if (s) return form_in(s, meta, rd, src, g, be, rc, o, progress, given, out, stats);
    sarbp_session *own = NULL;
    SARBP_TRY(sarbp_session_create(NULL, &own));
    const sarbp_status st = form_in(own, meta, rd, src, g, be, rc, o, progress, given, out, stats);
    sarbp_session_free(own);
    return st;
}

static sarbp_status read_reader(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data)
{
    *data = buf;
    return sarbp_reader_read(src, p0, np, buf);
}

sarbp_status sarbp_form(sarbp_session *s, sarbp_reader *rd, const sarbp_grid *g,
                        const sarbp_backend *be, const sarbp_rc_params *rc, const sarbp_bp_options *o,
                        sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats)
{
    sarbp_status st = form_core(s, sarbp_reader_meta(rd), read_reader, rd, g, be, rc, o, progress,
                                NULL, out, stats);
    if (st) return st;
    /* inputs, joined */
    char files[sizeof((*out)->attrs[0].value)] = "";
    for (size_t i = 0; i < sarbp_reader_nfiles(rd); i++) {
        size_t len = strlen(files);
        snprintf(files + len, sizeof files - len, "%s%s", i ? ";" : "", sarbp_reader_file(rd, i));
    }
    sarbp_image_set_attr(*out, "inputs", files);
    return SARBP_OK;
}

sarbp_status sarbp_form_phd(sarbp_session *s, const sarbp_phd *phd, const sarbp_grid *g,
                            const sarbp_backend *be, const sarbp_rc_params *rc,
                            const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image **out,
                            sarbp_form_stats *stats)
{
    *out = NULL;
    if (!phd->data) return sarbp_error(SARBP_ERR_INVALID, "phase history holds no samples");
    return form_core(s, phd, read_memory, (void *)phd, g, be, rc, o, progress, NULL, out, stats);
}

sarbp_status sarbp_form_phd_into(sarbp_session *s, const sarbp_phd *phd, const sarbp_grid *g,
                                 const sarbp_backend *be, const sarbp_rc_params *rc,
                                 const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image *img,
                                 sarbp_form_stats *stats)
{
    if (!phd->data) return sarbp_error(SARBP_ERR_INVALID, "phase history holds no samples");
    if (!img) return sarbp_error(SARBP_ERR_INVALID, "no image to form into");
    sarbp_image *out;
    return form_core(s, phd, read_memory, (void *)phd, g, be, rc, o, progress, img, &out, stats);
}
