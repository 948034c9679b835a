/* partition.c - the form plan (form.h): everything a form decides, once.
 *
 * From a request it decides the algorithm (AUTO by the FFBP model), the
 * factorization, the interpolation, the windows' coherent gain, the rows of
 * this process's share (MPI ranks, the outermost cut, on the back end's row
 * alignment) and the devices x bands of those rows within each device's
 * budget, over resident range profiles when they fit. The back ends'
 * plans receive the decisions in their descriptions and choose nothing;
 * the runner (form.c) only executes. It never prints. */
#include "form/plan_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/plan.h"             /* sarbp_plan_shape_need */
#include "sarbp/bench.h"                  /* sarbp_form_limits */
#include "sarbp/mpi.h"                    /* sarbp_mpi_band_rows */
#include "sarbp/session.h"                /* sarbp_session_start */

static size_t align_down(size_t n, size_t a)
{
    return a > 1 && n >= a ? n - n % a : n;
}

static const sarbp_form_limits no_limits;

static const sarbp_form_limits *limits_of(const sarbp_bp_options *o)
{
    return o->limits ? o->limits : &no_limits;
}

/* (plan_internal.h) */
sarbp_bp_desc form_plan_desc(const sarbp_form_plan *fp, sarbp_region r, size_t keep, sarbp_c32 *image)
{
    const sarbp_form_decision *d = &fp->d;
    return (sarbp_bp_desc){fp->meta, &fp->band, &d->rc, r, keep, image, fp->s,
                           d->ffbp ? &d->prm : NULL, d->ffbp ? &d->pred : NULL};
}

/* Rows per band for at least n bands of nrows rows: a multiple of align
 * (the last band may be shorter), at least align. */
static size_t wanted_band_rows(size_t nrows, size_t n, size_t align)
{
    if (align < 1) align = 1;
    const size_t units = (nrows + align - 1) / align, per = units / n;
    return (per ? per : 1) * align;
}

/* The bands of one device's share: rows per band within its budget (and
 * the limits' band_rows), with the profiles kept when they leave room for
 * bands of a fair size. */
static sarbp_status plan_part(const sarbp_form_plan *fp, sarbp_form_part *pt, int have_m,
                              sarbp_plan_shape *m)
{
    const sarbp_form_decision *dc = &fp->d;
    const sarbp_bp_desc d = form_plan_desc(fp, (sarbp_region){pt->row0, pt->nrows}, 0, NULL);
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
    /* the bands the request asks for (so that its on_rows takes a band's
     * rows while the next forms): over kept profiles only, where they fit
     * beside a band of that size; more bands over kept profiles cost a few
     * launches each */
    const size_t want = fp->bands_min > 1 && !dc->ffbp ? wanted_band_rows(pt->nrows, fp->bands_min, m->row_align)
                                                        : 0;
    if (want && want < pt->band_rows && want < pt->nrows) {
        const int can_keep = pt->kept || (!lim->stream && m->per_kept_pulse <= (avail - 1) / (P ? P : 1) &&
                                          (avail - P * m->per_kept_pulse) / per_row >= want);
        if (can_keep) {
            pt->kept = 1;
            pt->band_rows = want;
        }
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

/* The algorithm and, for FFBP, the factorization: FFBP when asked, or
 * under AUTO on the cpu in FP32 where the model predicts it faster at the
 * accuracy asked (on cuda AUTO stays with bp: the model's cost is the
 * cpu's); the interpolation each reads by default. */
static sarbp_status decide_algorithm(sarbp_form_plan *fp, const sarbp_form_request *req)
{
    sarbp_form_decision *d = &fp->d;
    const sarbp_algorithm asked = req->bp.algorithm;
    d->bp.algorithm = SARBP_ALGO_BP;
    /* the default kernel of each: ffbp reads the cubic (or linear) profiles */
    sarbp_rc_params rc_bp = req->rc, rc_ffbp = req->rc;
    if (!req->interp_given) {
        rc_bp.interp = sarbp_interp_default(d->bp.precision, 0);
        rc_ffbp.interp = sarbp_interp_default(d->bp.precision, 1);
    }
    if (!req->upsample_given) {
        rc_bp.upsample = sarbp_interp_default_upsample(rc_bp.interp);
        rc_ffbp.upsample = sarbp_interp_default_upsample(rc_ffbp.interp);
    }
    d->rc = asked == SARBP_ALGO_FFBP ? rc_ffbp : rc_bp;
    if (req->grid.height) { /* terrain: direct backprojection only (methods.c) */
        if (asked == SARBP_ALGO_FFBP)
            return sarbp_error(SARBP_ERR_UNSUPPORTED, "--heights: FFBP forms on a plane; use "
                               "--algorithm bp");
        if (asked == SARBP_ALGO_AUTO)
            snprintf(d->why, sizeof d->why, "direct backprojection (ffbp forms on a plane, not "
                     "on terrain heights)");
        return SARBP_OK;
    }
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
    /* several devices' contexts side by side first: the layout's shape
     * queries would start them one after the other; errors are left for
     * the layout and the plans to report */
    if (d->backend->multi_device && d->bp.ndevices > 1 && d->bp.ndevices <= SARBP_MAX_DEVICES)
        (void)sarbp_session_start(fp->s, d->bp.devices, d->bp.ndevices);
    SARBP_TRY(decide_algorithm(fp, req));
    d->have_gain = sarbp_rc_coherent_gain(fp->meta, &d->rc, &d->gain) == SARBP_OK;
    /* the whole grid's shape: the row alignment of the shares and bands */
    fp->band = d->grid;
    d->rows = (sarbp_region){0, d->grid.ny};
    const int dev0 = d->backend->multi_device && d->bp.ndevices > 0 ? d->bp.devices[0] : d->bp.device;
    sarbp_plan_shape m0;
    sarbp_bp_desc desc = form_plan_desc(fp, d->rows, 0, NULL);
    SARBP_TRY(d->backend->shape(&desc, &d->bp, dev0, &m0));
    if (req->nranks > 1) { /* MPI: this rank's share of the rows, the outermost cut */
        if (req->rank < 0 || req->rank >= req->nranks)
            return sarbp_error(SARBP_ERR_INVALID, "share %d of %d", req->rank, req->nranks);
        sarbp_mpi_band_rows(d->grid.ny, m0.row_align, req->nranks, req->rank, &d->rows.row0,
                            &d->rows.nrows);
        if (d->rows.nrows == 0) return SARBP_OK;
        if (d->rows.nrows != d->grid.ny) {
            SARBP_TRY(sarbp_grid_band(&d->grid, d->rows.row0, d->rows.nrows, &fp->band));
            desc = form_plan_desc(fp, (sarbp_region){0, fp->band.ny}, 0, NULL);
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
    fp->bands_min = req->bands_min;
    fp->on_rows = req->on_rows;
    fp->on_rows_user = req->on_rows_user;
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

/* (plan_internal.h) */
sarbp_form_request form_request_given(const sarbp_grid *g, const sarbp_backend *be,
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
    const sarbp_form_request req = form_request_given(g, be, rc, o);
    sarbp_form_plan *fp;
    SARBP_TRY(sarbp_form_plan_create(s, meta, &req, &fp));
    *out = fp->d.layout;
    sarbp_form_plan_free(fp);
    return SARBP_OK;
}
