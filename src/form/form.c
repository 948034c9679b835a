/* form.c - the form plan and its runner (form.h).
 *
 * The plan decides once: the algorithm (AUTO by the FFBP model), the
 * factorization, the interpolation, the windows' coherent gain, the rows of
 * this process's share (MPI ranks, the outermost cut, on the back end's row
 * alignment), and the devices x bands of those rows within each device's
 * budget, over resident range profiles when they fit. The back ends' plans
 * receive the decisions in their descriptions and choose nothing.
 *
 * The runner forms the rows in place: one host thread per device, the
 * reader behind a lock reading each block straight into the device plan's
 * staging (sarbp_bp_plan_stage), or once for all devices into shared
 * slots. The plans take their resources from the caller's session, or from
 * one made for the plan and freed with it. It never prints. */
#include "sarbp/form.h"
#include "sarbp/bench.h" /* sarbp_form_limits */
#include "sarbp/mpi.h"   /* sarbp_mpi_band_rows */

#include <pthread.h>

#include "backproject/plan.h"           /* sarbp_plan_shape_need */
#include "backproject/session_internal.h"  /* sarbp_session_device */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pulses [p0, p0 + np) of the input: read into buf, checked (a reader),
 * or (*data set instead: an in-memory phase history) where they lie, for
 * the plan to check as it copies them. */
typedef sarbp_status (*read_fn)(void *src, size_t p0, size_t np, sarbp_c32 *buf, const sarbp_c32 **data);

struct sarbp_form_plan_s {
    sarbp_session *s, *own;    /* the session its plans use; own: made for it */
    const sarbp_phd *meta;
    sarbp_form_decision d;
    sarbp_grid band;           /* the grid of d.rows (the whole grid when every row) */
};

/* ---- the partition layer ---- */

static size_t align_down(size_t n, size_t a)
{
    return a > 1 && n >= a ? n - n % a : n;
}

static const sarbp_form_limits no_limits;

static const sarbp_form_limits *limits_of(const sarbp_bp_options *o)
{
    return o->limits ? o->limits : &no_limits;
}

/* A plan's description for rows r of the plan's band grid. */
static sarbp_bp_desc form_desc(const sarbp_form_plan *fp, sarbp_region r, size_t keep, sarbp_c32 *image)
{
    const sarbp_form_decision *d = &fp->d;
    return (sarbp_bp_desc){fp->meta, &fp->band, &d->rc, r, keep, image, fp->s,
                           d->ffbp ? &d->prm : NULL, d->ffbp ? &d->pred : NULL};
}

/* The bands of one device's share: rows per band within its budget (and
 * the limits' band_rows), with the profiles kept when they leave room for
 * bands of a fair size. */
static sarbp_status plan_part(const sarbp_form_plan *fp, sarbp_form_part *pt, int have_m,
                              sarbp_plan_shape *m)
{
    const sarbp_form_decision *dc = &fp->d;
    const sarbp_bp_desc d = form_desc(fp, (sarbp_region){pt->row0, pt->nrows}, 0, NULL);
    if (!have_m) SARBP_TRY(dc->backend->shape(&d, &dc->bp, pt->device, m));
    const size_t P = fp->meta->npulses, per_row = m->per_row ? m->per_row : 1;
    const sarbp_form_limits *lim = limits_of(&dc->bp);
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
                           dc->backend->multi_device ? " on the device" : "");
    const size_t avail = m->budget - m->fixed;
    size_t rows_all = avail / per_row;
    if (lim->band_rows && lim->band_rows < rows_all) rows_all = lim->band_rows;
    /* a need not linear in the rows: the largest band measured to fit */
    if (m->max_band_rows && m->max_band_rows < rows_all) rows_all = m->max_band_rows;
    pt->kept = 0;
    pt->band_rows = rows_all;
    if (rows_all < pt->nrows) {
        /* more than one band: keep the profiles when the bands beside them
         * keep at least an eighth of the rows (and a tile row): a band more
         * costs a few launches and a copy back; streaming costs reading and
         * compressing every pulse again for every band */
        const int can_keep = !lim->stream && m->per_kept_pulse <= (avail - 1) / (P ? P : 1);
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
    pt->need = sarbp_plan_shape_need(m, pt->band_rows, pt->kept ? P : 0);
    return SARBP_OK;
}

/* The devices' shares of the band grid's rows, each in bands; m0: the
 * shape of a plan for the whole band grid on the first device. */
static sarbp_status form_layout(const sarbp_form_plan *fp, const sarbp_plan_shape *m0,
                                sarbp_form_layout *out)
{
    memset(out, 0, sizeof *out);
    const sarbp_form_decision *dc = &fp->d;
    const sarbp_bp_options *o = &dc->bp;
    const sarbp_grid *g = &fp->band;
    const int multi = dc->backend->multi_device && o->ndevices > 0;
    int n = multi ? o->ndevices : 1;
    if (n > SARBP_MAX_DEVICES)
        return sarbp_error(SARBP_ERR_INVALID, "%d devices: at most %d", n, SARBP_MAX_DEVICES);
    /* equal shares of rows on the back end's row alignment; no empty share */
    const int d_query = multi ? o->devices[0] : o->device;
    const size_t align = m0->row_align ? m0->row_align : 1, units = (g->ny + align - 1) / align;
    if ((size_t)n > units) n = (int)units;
    out->nparts = n;
    out->in_place = m0->in_place;
    for (int k = 0; k < n; k++) {
        sarbp_form_part *pt = &out->part[k];
        pt->device = multi ? o->devices[k] : o->device;
        const size_t u0 = units * (size_t)k / (size_t)n, u1 = units * (size_t)(k + 1) / (size_t)n;
        pt->row0 = u0 * align;
        pt->nrows = (u1 * align < g->ny ? u1 * align : g->ny) - pt->row0;
        /* a part on the device asked above: its shape is known (a linear
         * model does not depend on the rows; each query costs the CUDA
         * back end about 0.7 ms), or the measured one's of the whole grid */
        sarbp_plan_shape mp = *m0;
        const int known = pt->device == d_query && (!m0->max_band_rows || pt->nrows == g->ny);
        SARBP_TRY(plan_part(fp, pt, known, &mp));
    }
    return SARBP_OK;
}

/* Starting a CUDA device (its context) takes a quarter of a second or more,
 * and the layout's shape queries would start the devices one after the
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

/* The algorithm and, for FFBP, the factorization: FFBP when asked, or
 * under AUTO on the cpu in FP32 where the model predicts it faster at the
 * accuracy asked (on cuda AUTO stays with bp: the model's cost is the
 * cpu's); the interpolation each reads by default. */
static sarbp_status decide_algorithm(sarbp_form_plan *fp, const sarbp_form_request *req)
{
    sarbp_form_decision *d = &fp->d;
    const sarbp_algorithm asked = req->bp.algorithm;
    d->bp.algorithm = SARBP_ALGO_BP;
    d->rc = req->rc;
    if (!req->interp_given) d->rc.interp = sarbp_interp_default(d->bp.precision, asked == SARBP_ALGO_FFBP);
    if (!req->upsample_given) d->rc.upsample = sarbp_interp_default_upsample(d->rc.interp);
    const int consider = asked == SARBP_ALGO_FFBP ||
                         (asked == SARBP_ALGO_AUTO && d->backend == &sarbp_backend_cpu);
    if (d->bp.precision != SARBP_FP32 || !consider) {
        if (asked == SARBP_ALGO_AUTO)
            snprintf(d->why, sizeof d->why, "direct backprojection (%s)",
                     d->bp.precision != SARBP_FP32 ? "ffbp is fp32 only"
                                                   : "on cuda, ffbp only when asked: --algorithm ffbp");
        return asked == SARBP_ALGO_FFBP
                   ? sarbp_error(SARBP_ERR_INVALID, "ffbp runs in fp32 only (not %s)",
                                 sarbp_precision_name(d->bp.precision))
                   : SARBP_OK;
    }
    /* ffbp reads the cubic (or linear) profiles: the default kernel for it */
    sarbp_rc_params rc_ffbp = d->rc;
    if (!req->interp_given) {
        rc_ffbp.interp = sarbp_interp_default(d->bp.precision, 1);
        if (!req->upsample_given) rc_ffbp.upsample = sarbp_interp_default_upsample(rc_ffbp.interp);
    }
    sarbp_ffbp_params prm;
    sarbp_ffbp_prediction pred;
    const sarbp_status st = sarbp_session_ffbp_choose(fp->s, fp->meta, &rc_ffbp, &d->grid,
                                                      d->bp.max_error_db, &prm, &pred);
    if (st && asked == SARBP_ALGO_FFBP) return st;
    const double target = d->bp.max_error_db != 0 ? d->bp.max_error_db : SARBP_FFBP_DEFAULT_ERROR_DB;
    const int reached = !st && pred.error_db <= target;
    if (asked == SARBP_ALGO_FFBP || (reached && pred.cost_ratio < 1.0)) {
        d->bp.algorithm = SARBP_ALGO_FFBP;
        d->rc = rc_ffbp;
        d->ffbp = 1;
        d->prm = prm;
        d->pred = pred;
        d->target_met = reached;
    } else {
        snprintf(d->why, sizeof d->why, "direct backprojection (ffbp %s)",
                 st ? sarbp_error_detail()
                    : !reached ? "cannot reach --max-error-db" : "is not predicted faster here");
    }
    return SARBP_OK;
}

static sarbp_status plan_decide(sarbp_form_plan *fp, const sarbp_form_request *req)
{
    sarbp_form_decision *d = &fp->d;
    if (!req->backend) return sarbp_error(SARBP_ERR_INVALID, "a form needs a back end");
    d->backend = req->backend;
    d->grid = req->grid;
    d->bp = req->bp;
    SARBP_TRY(sarbp_grid_validate(&d->grid));
    sarbp_phd meta_only = *fp->meta; /* samples are checked as they are read */
    meta_only.data = NULL;
    SARBP_TRY(sarbp_phd_validate(&meta_only));
    open_devices(fp->s, d->backend, &d->bp);
    SARBP_TRY(decide_algorithm(fp, req));
    d->have_gain = sarbp_rc_coherent_gain(fp->meta, &d->rc, &d->gain) == SARBP_OK;
    /* the whole grid's shape: the row alignment of the shares and bands */
    fp->band = d->grid;
    d->rows = (sarbp_region){0, d->grid.ny};
    const int dev0 = d->backend->multi_device && d->bp.ndevices > 0 ? d->bp.devices[0] : d->bp.device;
    sarbp_plan_shape m0;
    sarbp_bp_desc desc = form_desc(fp, d->rows, 0, NULL);
    SARBP_TRY(d->backend->shape(&desc, &d->bp, dev0, &m0));
    if (req->nranks > 1) { /* MPI: this rank's share of the rows, the outermost cut */
        if (req->rank < 0 || req->rank >= req->nranks)
            return sarbp_error(SARBP_ERR_INVALID, "share %d of %d", req->rank, req->nranks);
        sarbp_mpi_band_rows(d->grid.ny, m0.row_align, req->nranks, req->rank, &d->rows.row0,
                            &d->rows.nrows);
        if (d->rows.nrows == 0) return SARBP_OK;
        if (d->rows.nrows != d->grid.ny) {
            SARBP_TRY(sarbp_grid_band(&d->grid, d->rows.row0, d->rows.nrows, &fp->band));
            desc = form_desc(fp, (sarbp_region){0, fp->band.ny}, 0, NULL);
            SARBP_TRY(d->backend->shape(&desc, &d->bp, dev0, &m0));
        }
    }
    return form_layout(fp, &m0, &d->layout);
}

sarbp_status sarbp_form_plan_create(sarbp_session *s, const sarbp_phd *meta,
                                    const sarbp_form_request *req, sarbp_form_plan **out)
{
    *out = NULL;
    sarbp_form_plan *fp = calloc(1, sizeof *fp);
    if (!fp) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    fp->meta = meta;
    sarbp_status st = SARBP_OK;
    if (!s) st = sarbp_session_create(NULL, &fp->own);
    fp->s = s ? s : fp->own;
    if (!st) st = plan_decide(fp, req);
    if (st) {
        sarbp_form_plan_free(fp);
        return st;
    }
    *out = fp;
    return SARBP_OK;
}

const sarbp_form_decision *sarbp_form_plan_decision(const sarbp_form_plan *fp)
{
    return &fp->d;
}

void sarbp_form_plan_free(sarbp_form_plan *fp)
{
    if (!fp) return;
    sarbp_session_free(fp->own);
    free(fp);
}

/* The request of the convenience calls: everything given, one share. */
static sarbp_form_request given_request(const sarbp_grid *g, const sarbp_backend *be,
                                        const sarbp_rc_params *rc, const sarbp_bp_options *o)
{
    return (sarbp_form_request){.backend = be, .grid = *g, .rc = *rc, .interp_given = 1,
                                .upsample_given = 1, .bp = *o};
}

sarbp_status sarbp_form_plan_layout(sarbp_session *s, const sarbp_phd *meta, const sarbp_grid *g,
                                    const sarbp_backend *be, const sarbp_rc_params *rc,
                                    const sarbp_bp_options *o, sarbp_form_layout *out)
{
    memset(out, 0, sizeof *out);
    const sarbp_form_request req = given_request(g, be, rc, o);
    sarbp_form_plan *fp;
    SARBP_TRY(sarbp_form_plan_create(s, meta, &req, &fp));
    *out = fp->d.layout;
    sarbp_form_plan_free(fp);
    return SARBP_OK;
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
    const sarbp_bp_desc d = form_desc(fp, (sarbp_region){pt->row0, pt->band_rows}, pt->kept ? P : 0,
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

sarbp_status sarbp_form_plan_attrs(const sarbp_form_plan *fp, sarbp_image *img)
{
    const sarbp_form_decision *d = &fp->d;
    const sarbp_rc_params *rc = &d->rc;
    const sarbp_phd *meta = fp->meta;
    char buf[64];
    SARBP_TRY(sarbp_image_set_attr(img, "sarbp_version", SARBP_VERSION_STRING));
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
    const sarbp_form_request req = given_request(g, be, rc, o);
    sarbp_form_plan *fp;
    SARBP_TRY(sarbp_form_plan_create(s, phd ? phd : sarbp_reader_meta(rd), &req, &fp));
    sarbp_image *img = given;
    sarbp_status st = given ? SARBP_OK : sarbp_image_alloc(g, &img);
    const double t_plan = sarbp_now_s() - t0;
    if (!st) st = sarbp_form_plan_execute(fp, rd, phd, progress, img->data, !given, stats);
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
