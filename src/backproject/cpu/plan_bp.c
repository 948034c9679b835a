/* cpu/plan_bp.c - the CPU back end's typed plan: FFTW range compression,
 * then the FP64 reference or the tiled FP32 backprojector over the plan's
 * region of rows, accumulating block by block; or, for precision "exact",
 * each pulse's spectrum summed directly onto the pixels (bp_exact.c). The
 * FP32 path accumulates in the caller's image when the description gives
 * one (no image of its own); FP64 and exact keep an FP64 band. Kept range
 * profiles (keep_pulses) are stored as compressed, so a later band reads
 * them instead of samples. It times its own stages (wall clock). The
 * registry (methods.c) maps the generic options to these. For
 * algorithm ffbp, create hands over to cpu/plan_ffbp.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/plan.h"
#include "backproject/ffbp/engine.h"
#include "backproject/session_internal.h"
#include "sarbp/progress.h"

#define CPU_DEFAULT_BLOCK 128
#define CPU_ROW_ALIGN 16 /* bp_cpu.c's largest tile height: bands on multiples of it */

struct cpu_plan {
    sarbp_bp_plan base;    /* first: the plan's ops and common state */
    sarbp_cpu_options o;
    sarbp_rc_plan *rc;
    sarbp_profiles *pr;    /* one block, when nothing is kept */
    sarbp_profiles *keep;  /* [keep_pulses] kept profiles */
    size_t K;
    sarbp_c64 *acc64;      /* FP64, exact: [max_rows][nx] */
    sarbp_c32 *acc32;      /* FP32 without the caller's image: [max_rows][nx] */
    sarbp_c64 *spec;       /* exact: the block's spectra [block][nk] */
    double *fa, *fd;       /* exact: [block] */
    size_t nk;
};

void sarbp_cpu_options_default(sarbp_cpu_options *o)
{
    memset(o, 0, sizeof *o);
    o->precision = SARBP_FP32;
}

static size_t cpu_block(const sarbp_phd *meta, const sarbp_cpu_options *o)
{
    size_t b = o->pulse_block ? o->pulse_block : CPU_DEFAULT_BLOCK;
    return b > meta->npulses ? meta->npulses : b;
}

sarbp_status sarbp_cpu_plan_shape(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                   size_t budget, sarbp_plan_shape *m)
{
    const int exact = o->precision == SARBP_EXACT, fp64 = o->precision == SARBP_FP64;
    const size_t nbins = sarbp_rc_nbins(d->meta, d->rc->upsample), block = cpu_block(d->meta, o);
    const size_t elem = fp64 ? sizeof(sarbp_c64) : sizeof(sarbp_c32);
    const size_t per_pulse = nbins * elem + 7 * sizeof(double);
    *m = (sarbp_plan_shape){0};
    m->fixed = block * per_pulse;
    m->per_row = d->grid->nx * (fp64 || exact ? sizeof(sarbp_c64) : sizeof(sarbp_c32));
    /* the exact path keeps its spectra, at most nbins at upsample 1 each */
    m->per_kept_pulse = exact ? sarbp_rc_nbins(d->meta, 1) * sizeof(sarbp_c64) + 2 * sizeof(double)
                              : per_pulse;
    m->block = block;
    const size_t room = sarbp_session_host_room(d->session); /* SIZE_MAX: no limit */
    m->budget = budget && budget < room ? budget : room;
    m->row_align = CPU_ROW_ALIGN;
    m->in_place = !fp64 && !exact;
    if (o->algorithm == SARBP_ALGO_FFBP) {
        /* the geometry of every pulse, and the polar grids held at once: a
         * few per level, together about the size of the image band's own
         * samples (an estimate: their sizes depend on the factorization) */
        m->fixed += d->meta->npulses * 7 * sizeof(double);
        m->per_row += d->grid->nx * 4 * sizeof(sarbp_c32);
    }
    return SARBP_OK;
}

static void cpu_destroy(sarbp_bp_plan *bp)
{
    struct cpu_plan *p = (struct cpu_plan *)bp;
    sarbp_rc_plan_free(p->rc);
    sarbp_profiles_free(p->pr);
    sarbp_profiles_free(p->keep);
    free(p->acc64);
    free(p->acc32);
    free(p->spec);
    free(p->fa);
    free(p->fd);
    sarbp_bp_plan_release(&p->base);
    free(p);
}

/* The accumulator of the current region's row 0. */
static sarbp_c32 *acc32_rows(struct cpu_plan *p)
{
    return p->acc32 ? p->acc32 : p->base.image + p->base.region.row0 * p->base.grid.nx;
}

/* Backprojects the block pr onto the current region. */
static sarbp_status cpu_bp(struct cpu_plan *p, const sarbp_profiles *pr)
{
    if (p->o.precision == SARBP_FP64)
        return sarbp_bp_cpu_fp64_rows(pr, &p->base.grid, p->base.region, p->acc64);
    return sarbp_bp_cpu_fp32_rows(pr, &p->base.grid, p->base.region, p->o.threads, acc32_rows(p));
}

/* One block of at most p->base.block pulses. */
static sarbp_status cpu_block_execute(struct cpu_plan *p, size_t p0, size_t np,
                                      const sarbp_c32 *samples, sarbp_stage_times *t)
{
    const double t0 = sarbp_now_s();
    if (p->spec) { /* the exact image: spectra (kept: pulse p0's row), then direct summation */
        const int keep = p0 + np <= p->base.keep_pulses;
        const size_t k0 = keep ? p0 : 0;
        sarbp_c64 *spec = p->spec + k0 * p->nk;
        double *fa = p->fa + k0, *fd = p->fd + k0;
        for (size_t j = 0; samples && j < np; j++)
            SARBP_TRY(sarbp_rc_exact_spectrum(p->rc, p0 + j, samples + j * p->K, spec + j * p->nk,
                                              fa + j, fd + j));
        if (samples && keep) memset(p->base.kept + p0, 1, np);
        const double t1 = sarbp_now_s();
        t->rc_s += t1 - t0;
        sarbp_status st = sarbp_bp_exact_rows(np, p->nk, spec, fa, fd,
                                              p->base.meta->pos + 3 * p0, p->base.meta->r0 + p0,
                                              &p->base.grid, p->base.region, p->o.threads, p->acc64);
        t->bp_s += sarbp_now_s() - t1;
        return st;
    }
    sarbp_profiles view;
    const sarbp_profiles *pr = p->pr;
    const int keep = p->keep && p0 + np <= p->base.keep_pulses;
    if (keep) {
        view = sarbp_profiles_slice(p->keep, p0, np);
        pr = &view;
    }
    if (samples) {
        SARBP_TRY(sarbp_rc_execute(p->rc, p0, np, samples, keep ? &view : p->pr));
        if (keep) memset(p->base.kept + p0, 1, np);
    }
    const double t1 = sarbp_now_s();
    t->rc_s += t1 - t0;
    sarbp_status st = cpu_bp(p, pr);
    t->bp_s += sarbp_now_s() - t1;
    return st;
}

static sarbp_status cpu_execute(sarbp_bp_plan *bp, size_t p0, size_t np, const sarbp_c32 *samples,
                                sarbp_stage_times *stats)
{
    struct cpu_plan *p = (struct cpu_plan *)bp;
    sarbp_stage_times t = {0};
    sarbp_status st = SARBP_OK;
    for (size_t q = p0; !st && q < p0 + np; q += p->base.block) {
        const size_t n = p0 + np - q < p->base.block ? p0 + np - q : p->base.block;
        st = cpu_block_execute(p, q, n, samples ? samples + (q - p0) * p->K : NULL, &t);
    }
    if (stats) {
        stats->rc_s += t.rc_s;
        stats->bp_s += t.bp_s;
    }
    return st;
}

static sarbp_status cpu_region(sarbp_bp_plan *bp, sarbp_region r)
{
    struct cpu_plan *p = (struct cpu_plan *)bp;
    const size_t n = r.nrows * p->base.grid.nx;
    if (p->acc64) memset(p->acc64, 0, n * sizeof *p->acc64);
    else if (p->acc32) memset(p->acc32, 0, n * sizeof *p->acc32);
    /* in place: the caller's rows as they are (sarbp_bp_desc) */
    return SARBP_OK;
}

static sarbp_status cpu_finish(sarbp_bp_plan *bp, sarbp_c32 *out, sarbp_stage_times *stats)
{
    struct cpu_plan *p = (struct cpu_plan *)bp;
    const double t0 = sarbp_now_s();
    const size_t npix = p->base.region.nrows * p->base.grid.nx;
    if (p->acc64) {
        for (size_t i = 0; i < npix; i++) {
            out[i].re = (float)p->acc64[i].re;
            out[i].im = (float)p->acc64[i].im;
        }
    } else {
        const sarbp_c32 *acc = acc32_rows(p);
        if (out != acc) memcpy(out, acc, npix * sizeof *out);
    }
    if (stats) stats->finish_s += sarbp_now_s() - t0;
    return SARBP_OK;
}

static const sarbp_bp_plan_ops cpu_ops = {NULL, cpu_execute, cpu_region, cpu_finish, cpu_destroy};

static sarbp_status cpu_plan_create(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                    sarbp_bp_plan **out, sarbp_stage_times *stats);

/* The plan's memory, as its model counts it, is taken from the session's
 * host budget first: a plan past it fails here, before it allocates. */
sarbp_status sarbp_cpu_plan_create(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                   sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    *out = NULL;
    if (!d || !d->meta || !d->grid || !d->rc)
        return sarbp_error(SARBP_ERR_INVALID, "a plan needs a phase history, a grid and range compression");
    if (o->algorithm == SARBP_ALGO_FFBP && d->grid->height) /* terrain: direct bp only */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "--heights: FFBP forms on a plane; use "
                           "--algorithm bp");
    sarbp_plan_shape m;
    SARBP_TRY(sarbp_cpu_plan_shape(d, o, 0, &m));
    const size_t need = sarbp_plan_shape_need(&m, d->region.nrows, d->keep_pulses);
    SARBP_TRY(sarbp_session_host_take(d->session, need, "the cpu plan"));
    const sarbp_status st = o->algorithm == SARBP_ALGO_FFBP ? ffbp_cpu_plan_create(d, o, out, stats)
                                                          : cpu_plan_create(d, o, out, stats);
    if (st) {
        sarbp_session_host_give(d->session, need);
        return st;
    }
    (*out)->session = d->session;
    (*out)->host_taken = need;
    return SARBP_OK;
}

static sarbp_status cpu_plan_create(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                    sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    *out = NULL;
    const double t0 = sarbp_now_s();
    if (o->precision == SARBP_FP16 || o->precision == SARBP_MIXED)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "precision %s needs the cuda back end (the cpu back end does fp64 and fp32)",
                           sarbp_precision_name(o->precision));
    const int exact = o->precision == SARBP_EXACT, fp64 = o->precision == SARBP_FP64;
    struct cpu_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = sarbp_bp_plan_init(&p->base, &cpu_ops, d);
    if (st) {
        cpu_destroy(&p->base);
        return st;
    }
    const sarbp_phd *meta = d->meta;
    p->o = *o;
    p->K = meta->nsamples;
    p->base.block = cpu_block(meta, o);
    st = sarbp_rc_plan_create(meta, d->rc, o->precision, p->base.block, &p->rc);
    const size_t nbins = st ? 0 : sarbp_rc_plan_nbins(p->rc);
    if (!st && !exact && p->base.keep_pulses) {
        st = sarbp_profiles_alloc(p->base.keep_pulses, nbins, o->precision, &p->keep);
        if (!st) p->keep->interp = sarbp_rc_plan_interp(p->rc); /* views of it inherit it */
    }
    if (!st && !exact && p->base.keep_pulses < meta->npulses)
        st = sarbp_profiles_alloc(p->base.block, nbins, o->precision, &p->pr);
    if (!st && exact) {
        /* spectra of one block, or of every kept pulse */
        const size_t rows = p->base.keep_pulses > p->base.block ? p->base.keep_pulses : p->base.block;
        p->nk = sarbp_rc_exact_size(p->rc);
        p->spec = malloc(rows * p->nk * sizeof(sarbp_c64));
        p->fa = malloc(rows * sizeof(double));
        p->fd = malloc(rows * sizeof(double));
        if (!p->spec || !p->fa || !p->fd) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    const size_t nrow = p->base.max_rows * p->base.grid.nx;
    if (!st) {
        if (fp64 || exact) p->acc64 = calloc(nrow, sizeof(sarbp_c64));
        else if (!p->base.image) p->acc32 = calloc(nrow, sizeof(sarbp_c32));
        if ((fp64 || exact) ? !p->acc64 : !p->base.image && !p->acc32)
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu pixels", p->base.grid.nx,
                             p->base.max_rows);
    }
    if (st) {
        cpu_destroy(&p->base);
        return st;
    }
    if (stats) {
        /* pulse data: the block of profiles (or the kept ones) and their
         * geometry (the range compressor's FFT work buffers are its own and
         * not counted); the image: the FP64 band or the FP32 one formed */
        const size_t elem = fp64 ? sizeof(sarbp_c64) : sizeof(sarbp_c32);
        const size_t per = nbins * elem + 7 * sizeof(double);
        const size_t srows = p->base.keep_pulses > p->base.block ? p->base.keep_pulses : p->base.block;
        stats->pulse_bytes = exact ? srows * (p->nk * sizeof(sarbp_c64) + 2 * sizeof(double))
                                   : (p->pr ? p->pr->capacity * per : 0) +
                                         p->base.keep_pulses * per;
        stats->image_bytes = nrow * (p->acc64 ? sizeof(sarbp_c64) : sizeof(sarbp_c32));
        stats->setup_s += sarbp_now_s() - t0;
    }
    *out = &p->base;
    return SARBP_OK;
}
