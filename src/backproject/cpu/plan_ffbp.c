/* cpu/plan_ffbp.c - the cpu back end's FFBP plan (sarbp_cpu_options
 * algorithm SARBP_ALGO_FFBP): FFTW range compression block by block, as the
 * direct plan does (cpu/plan_bp.c), each block streamed into the FP32 FFBP
 * engine (ffbp/engine.h), which backprojects runs of `base` pulses as they
 * complete and merges sub-images like a binary counter; finish merges what
 * is left. Pulses must arrive in order (the partition layer sends them so).
 * Range compression runs on every thread too (one FFTW plan each, a share
 * of the block's pulses each; per pulse the same transform whatever the
 * share), so that it is not a serial part beside the parallel FFBP.
 * The factorization arrives decided in the description. A new region (band) starts the engine again:
 * its pulses come again from the kept profiles or the input. It
 * accumulates in the caller's image when the description gives one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/plan.h"
#include "backproject/ffbp/engine.h"
#include "core/parallel.h"
#include "sarbp/host.h"
#include "sarbp/progress.h"

/* the most range-compression plans (threads) a plan makes */
#define FFBP_RC_PLANS 64

struct ffbp_plan {
    sarbp_bp_plan base;    /* first: the plan's ops and common state */
    sarbp_cpu_options o;
    sarbp_ffbp_params prm;
    sarbp_rc_plan *rc[FFBP_RC_PLANS]; /* [nrc]: one per thread */
    int nrc;
    sarbp_profiles *pr;    /* one block, when nothing is kept */
    sarbp_profiles *keep;  /* [keep_pulses] kept profiles */
    size_t K;
    double *geo;           /* [P][5]: pos, fref, dr of every pulse (the layout's) */
    ffbp_engine *eng;
    sarbp_c32 *acc32;      /* without the caller's image: [max_rows][nx] */
};

static void ffbp_destroy(sarbp_bp_plan *bp)
{
    struct ffbp_plan *p = (struct ffbp_plan *)bp;
    ffbp_engine_free(p->eng);
    for (int t = 0; t < p->nrc; t++) sarbp_rc_plan_free(p->rc[t]);
    sarbp_profiles_free(p->pr);
    sarbp_profiles_free(p->keep);
    free(p->geo);
    free(p->acc32);
    sarbp_bp_plan_release(&p->base);
    free(p);
}

static sarbp_c32 *rows_of(struct ffbp_plan *p)
{
    return p->acc32 ? p->acc32 : p->base.image + p->base.region.row0 * p->base.grid.nx;
}

/* range compression of n pulses from q (samples[n][K]) into out, the
 * pulses shared in contiguous runs among the plans */
struct rc_job {
    struct ffbp_plan *p;
    size_t q, n, share;
    const sarbp_c32 *samples;
    sarbp_profiles *out;
    sarbp_status st[FFBP_RC_PLANS];
};

static void rc_task(void *vj, size_t t, int worker)
{
    (void)worker;
    struct rc_job *j = vj;
    const size_t a = t * j->share, n = a + j->share < j->n ? j->share : j->n - a;
    sarbp_profiles v = sarbp_profiles_slice(j->out, a, n);
    j->st[t] = sarbp_rc_execute(j->p->rc[t], j->q + a, n, j->samples + a * j->p->K, &v);
}

static sarbp_status rc_block(struct ffbp_plan *p, size_t q, size_t n, const sarbp_c32 *samples,
                             sarbp_profiles *out)
{
    if (p->nrc == 1 || n < 2) return sarbp_rc_execute(p->rc[0], q, n, samples, out);
    struct rc_job j = {p, q, n, 0, samples, out, {SARBP_OK}};
    j.share = (n + (size_t)p->nrc - 1) / (size_t)p->nrc;
    const size_t tasks = (n + j.share - 1) / j.share;
    SARBP_TRY(sarbp_parallel_for(p->nrc, tasks, rc_task, &j));
    for (size_t t = 0; t < tasks; t++) SARBP_TRY(j.st[t]);
    /* what sarbp_rc_execute sets on the profiles it fills, on the whole */
    out->npulses = n;
    out->interp = sarbp_rc_plan_interp(p->rc[0]);
    return SARBP_OK;
}

static sarbp_status ffbp_execute(sarbp_bp_plan *bp, size_t p0, size_t np, const sarbp_c32 *samples,
                                 sarbp_stage_times *stats)
{
    struct ffbp_plan *p = (struct ffbp_plan *)bp;
    if (p0 != ffbp_engine_next(p->eng))
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "ffbp takes pulses in order: pulse %zu came, %zu was next", p0,
                           ffbp_engine_next(p->eng));
    double rc_s = 0, bp_s = 0;
    sarbp_status st = SARBP_OK;
    for (size_t q = p0; !st && q < p0 + np; q += p->base.block) {
        const size_t n = p0 + np - q < p->base.block ? p0 + np - q : p->base.block;
        const double t0 = sarbp_now_s();
        sarbp_profiles view;
        const sarbp_profiles *pr = p->pr;
        const int keep = p->keep && q + n <= p->base.keep_pulses;
        if (keep) {
            view = sarbp_profiles_slice(p->keep, q, n);
            pr = &view;
        }
        if (samples) {
            st = rc_block(p, q, n, samples + (q - p0) * p->K, keep ? &view : p->pr);
            if (!st && keep) memset(p->base.kept + q, 1, n);
        }
        const double t1 = sarbp_now_s();
        rc_s += t1 - t0;
        if (!st) st = ffbp_engine_push(p->eng, pr, q);
        bp_s += sarbp_now_s() - t1;
    }
    if (stats) {
        stats->rc_s += rc_s;
        stats->bp_s += bp_s;
    }
    return st;
}

static sarbp_status ffbp_region(sarbp_bp_plan *bp, sarbp_region r)
{
    struct ffbp_plan *p = (struct ffbp_plan *)bp;
    if (p->acc32) memset(p->acc32, 0, r.nrows * p->base.grid.nx * sizeof *p->acc32);
    sarbp_c32 *rows = p->acc32 ? p->acc32 : p->base.image + r.row0 * p->base.grid.nx;
    return ffbp_engine_restart(p->eng, r, rows);
}

static sarbp_status ffbp_finish(sarbp_bp_plan *bp, sarbp_c32 *out, sarbp_stage_times *stats)
{
    struct ffbp_plan *p = (struct ffbp_plan *)bp;
    const double t0 = sarbp_now_s();
    SARBP_TRY(ffbp_engine_finish(p->eng));
    const sarbp_c32 *acc = rows_of(p);
    if (out != acc) memcpy(out, acc, p->base.region.nrows * p->base.grid.nx * sizeof *out);
    if (stats) stats->finish_s += sarbp_now_s() - t0;
    return SARBP_OK;
}

static const sarbp_bp_plan_ops ffbp_ops = {NULL, ffbp_execute, ffbp_region, ffbp_finish, ffbp_destroy};

sarbp_status ffbp_cpu_plan_create(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                  sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    *out = NULL;
    const double t0 = sarbp_now_s();
    if (o->precision != SARBP_FP32)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "ffbp runs in fp32 only (precision %s asked)",
                           sarbp_precision_name(o->precision));
    struct ffbp_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = sarbp_bp_plan_init(&p->base, &ffbp_ops, d);
    if (st) {
        ffbp_destroy(&p->base);
        return st;
    }
    const sarbp_phd *meta = d->meta;
    const size_t P = meta->npulses;
    p->o = *o;
    p->K = meta->nsamples;
    p->base.block = o->pulse_block ? o->pulse_block : 128;
    if (p->base.block > P) p->base.block = P ? P : 1;
    if (P == 0) st = sarbp_error(SARBP_ERR_INVALID, "ffbp: no pulses");
    if (!st && P > SIZE_MAX / (7 * sizeof(double)))
        st = sarbp_error(SARBP_ERR_INVALID, "ffbp: %zu pulses", P);
    if (!st) st = sarbp_bp_desc_ffbp(d, &p->prm);
    if (!st) {
        /* a plan per thread, each for its share of a block */
        const int threads = o->threads > 0 ? o->threads : sarbp_cpu_count();
        p->nrc = threads < FFBP_RC_PLANS ? threads : FFBP_RC_PLANS;
        if ((size_t)p->nrc > p->base.block) p->nrc = (int)p->base.block;
        const size_t share = (p->base.block + (size_t)p->nrc - 1) / (size_t)p->nrc;
        for (int t = 0; !st && t < p->nrc; t++)
            st = sarbp_rc_plan_create(meta, d->rc, SARBP_FP32, share, &p->rc[t]);
    }
    const size_t nbins = st ? 0 : sarbp_rc_plan_nbins(p->rc[0]);
    if (!st && p->base.keep_pulses) {
        st = sarbp_profiles_alloc(p->base.keep_pulses, nbins, SARBP_FP32, &p->keep);
        if (!st) p->keep->interp = sarbp_rc_plan_interp(p->rc[0]);
    }
    if (!st && p->base.keep_pulses < P) st = sarbp_profiles_alloc(p->base.block, nbins, SARBP_FP32, &p->pr);
    if (!st) {
        p->geo = malloc(P * 7 * sizeof(double));
        if (!p->geo) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for the geometry of %zu pulses", P);
    }
    if (!st) {
        /* the layout needs every pulse's position, wavenumber and bin
         * spacing before any sample arrives: from the metadata */
        sarbp_profiles g = {0};
        g.npulses = g.capacity = P;
        g.pos = p->geo;
        g.r0 = p->geo + 3 * P;
        g.rstart = p->geo + 4 * P;
        g.dr = p->geo + 5 * P;
        g.fref = p->geo + 6 * P;
        for (size_t i = 0; i < P; i++) sarbp_rc_pulse_geometry(meta, nbins, d->rc->upsample, i, &g, i);
        const size_t nrow = p->base.max_rows * p->base.grid.nx;
        if (!p->base.image) {
            p->acc32 = calloc(nrow, sizeof *p->acc32);
            if (!p->acc32) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu pixels",
                                            p->base.grid.nx, p->base.max_rows);
        }
        const ffbp_pulses pu = {P, g.pos, g.fref, g.dr};
        if (!st)
            st = ffbp_engine_create(&pu, &p->base.grid, p->base.region, &p->prm, o->threads, rows_of(p),
                                    &p->eng);
        if (!st && stats) {
            const size_t per = nbins * sizeof(sarbp_c32) + 7 * sizeof(double);
            stats->pulse_bytes = (p->pr ? p->pr->capacity * per : 0) + p->base.keep_pulses * per +
                                 P * 7 * sizeof(double);
            /* the band summed into: its own or, in place, the caller's rows */
            stats->image_bytes = nrow * sizeof(sarbp_c32);
        }
    }
    if (st) {
        ffbp_destroy(&p->base);
        return st;
    }
    if (stats) stats->setup_s += sarbp_now_s() - t0;
    *out = &p->base;
    return SARBP_OK;
}
