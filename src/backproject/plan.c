/* plan.c - the public face of the typed plans: argument checks shared by
 * every back end (the contract: every pulse once per region, in order),
 * then a call through the plan's ops (plan.h). */
#include "backproject/plan.h"

#include <stdint.h>
#include <stdlib.h>

#include "backproject/session_internal.h"

sarbp_status sarbp_bp_plan_init(sarbp_bp_plan *p, const sarbp_bp_plan_ops *ops,
                                const sarbp_bp_desc *d)
{
    p->ops = ops;
    if (!d || !d->meta || !d->grid || !d->rc)
        return sarbp_error(SARBP_ERR_INVALID, "a plan needs a phase history, a grid and range compression");
    SARBP_TRY(sarbp_grid_validate(d->grid));
    p->meta = d->meta;
    p->grid = *d->grid;
    const sarbp_region r = d->region;
    if (r.nrows == 0 || r.row0 >= p->grid.ny || r.nrows > p->grid.ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID, "region of rows %zu to %zu is not inside the grid's %zu rows",
                           r.row0, r.row0 + r.nrows, p->grid.ny);
    p->region = r;
    p->max_rows = r.nrows;
    if (d->keep_pulses > d->meta->npulses)
        return sarbp_error(SARBP_ERR_INVALID, "cannot keep %zu pulses of %zu", d->keep_pulses,
                           d->meta->npulses);
    p->keep_pulses = d->keep_pulses;
    if (p->keep_pulses) {
        p->kept = calloc(p->keep_pulses, 1);
        if (!p->kept) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    p->image = d->image;
    return SARBP_OK;
}

void sarbp_bp_plan_release(sarbp_bp_plan *p)
{
    free(p->kept);
    p->kept = NULL;
    free(p->stage_buf);
    p->stage_buf = NULL;
    sarbp_session_host_give(p->session, p->host_taken);
    p->host_taken = 0;
}

sarbp_status sarbp_bp_desc_ffbp(const sarbp_bp_desc *d, sarbp_ffbp_params *out)
{
    if (!d->ffbp)
        return sarbp_error(SARBP_ERR_INVALID, "an ffbp plan needs its factorization decided "
                           "(sarbp_bp_desc.ffbp: the form plan, or sarbp_ffbp_choose_phd)");
    *out = *d->ffbp;
    return SARBP_OK;
}

size_t sarbp_plan_shape_need(const sarbp_plan_shape *m, size_t rows, size_t keep)
{
    const size_t rowb = rows && m->per_row > SIZE_MAX / rows ? SIZE_MAX : rows * m->per_row;
    const size_t keepb = keep && m->per_kept_pulse > SIZE_MAX / keep ? SIZE_MAX : keep * m->per_kept_pulse;
    if (rowb > SIZE_MAX - m->fixed || keepb > SIZE_MAX - m->fixed - rowb) return SIZE_MAX;
    return m->fixed + rowb + keepb;
}

sarbp_status sarbp_bp_plan_stage(sarbp_bp_plan *p, size_t p0, size_t np, sarbp_c32 **buf)
{
    *buf = NULL;
    p->staged = NULL;
    if (np == 0 || np > p->block || p0 != p->next || np > p->meta->npulses - p0)
        return sarbp_error(SARBP_ERR_INVALID,
                           "staging pulses %zu to %zu: the plan takes blocks of at most %zu, "
                           "from pulse %zu", p0, p0 + np, p->block, p->next);
    if (p->ops->stage) SARBP_TRY(p->ops->stage(p, p0, np, buf));
    if (!*buf) { /* no staging of the plan's own (or not for this block): a host block */
        if (!p->stage_buf) {
            p->stage_buf = malloc(p->block * p->meta->nsamples * sizeof(sarbp_c32));
            if (!p->stage_buf)
                return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a block of %zu pulses", p->block);
        }
        *buf = p->stage_buf;
    }
    p->staged = *buf;
    return SARBP_OK;
}

sarbp_status sarbp_bp_plan_execute(sarbp_bp_plan *p, size_t p0, size_t np,
                                   const sarbp_c32 *samples, sarbp_stage_times *stats)
{
    if (p0 > p->meta->npulses || np > p->meta->npulses - p0)
        return sarbp_error(SARBP_ERR_INVALID, "pulses %zu to %zu are not in the phase history's %zu",
                           p0, p0 + np, p->meta->npulses);
    if (np == 0) return SARBP_OK;
    if (p0 != p->next)
        return sarbp_error(SARBP_ERR_INVALID,
                           "pulses %zu to %zu out of order: a region takes every pulse once, in "
                           "order, and pulse %zu is next", p0, p0 + np, p->next);
    const int staged = samples && samples == p->staged;
    p->staged = NULL;
    if (staged && np > p->block)
        return sarbp_error(SARBP_ERR_INVALID, "%zu pulses staged: at most a block of %zu", np, p->block);
    if (samples && !staged && !p->ops->stage) /* the caller's memory: checked here */
        SARBP_TRY(sarbp_phd_check_samples(p->meta, p0, np, samples));
    if (!samples) {
        if (p0 + np > p->keep_pulses)
            return sarbp_error(SARBP_ERR_INVALID, "pulses %zu to %zu are not kept (the plan keeps %zu)",
                               p0, p0 + np, p->keep_pulses);
        for (size_t i = p0; i < p0 + np; i++)
            if (!p->kept[i])
                return sarbp_error(SARBP_ERR_INVALID, "pulse %zu has no kept profile yet", i);
    }
    SARBP_TRY(p->ops->execute(p, p0, np, samples, stats));
    p->next = p0 + np;
    return SARBP_OK;
}

sarbp_status sarbp_bp_plan_region(sarbp_bp_plan *p, sarbp_region r)
{
    if (r.nrows == 0 || r.nrows > p->max_rows || r.row0 >= p->grid.ny || r.nrows > p->grid.ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID,
                           "region of rows %zu to %zu: the plan takes at most %zu rows inside %zu",
                           r.row0, r.row0 + r.nrows, p->max_rows, p->grid.ny);
    SARBP_TRY(p->ops->region(p, r));
    p->region = r;
    p->next = 0;
    p->staged = NULL;
    return SARBP_OK;
}

sarbp_status sarbp_bp_plan_finish(sarbp_bp_plan *p, sarbp_c32 *out, sarbp_stage_times *stats)
{
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "finish needs somewhere to write the image");
    return p->ops->finish(p, out, stats);
}

void sarbp_bp_plan_destroy(sarbp_bp_plan *p)
{
    if (p) p->ops->destroy(p);
}

size_t sarbp_bp_plan_block(const sarbp_bp_plan *p)
{
    return p->block;
}
