/* ffbp/gpu_plan.c - the host side of the FP32 FFBP: planning every stage's
 * polar grids in FP64 (the same grids as the prototype, ffbp/proto_fp64.c, whose
 * plan_grid this follows step for step; keep them in step), and
 * sarbp_ffbp_emulate_fp32, the GPU's computation run on the CPU: the
 * kernels of kernels/ffbp.cu with their thread blocks as loops, calling the
 * same per-thread arithmetic (kernels/ffbp_kernels.h). It exists so that a
 * machine without a GPU can test that arithmetic; it is slow. */
#include "backproject/ffbp/gpu_plan.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/ffbp/layout.h"
#include "core/parallel.h"

/* ---- planning (FP64; ffbp/proto_fp64.c's plan_grid) ---------------------------------- */

typedef struct {
    const sarbp_profiles *pr;
    const sarbp_ffbp_params *prm;
    ffbp_footprint fp;
    double kc, kmax, band, drho;
} plan_ctx;

/* the grid of the sub-aperture of pulses [p0, p1): ffbp/layout.h's, the
 * same as the prototype's and the cpu engine's */
static sarbp_status plan_grid(const plan_ctx *x, size_t p0, size_t p1, sarbp_ffbp_dsub *s)
{
    ffbp_polar g;
    SARBP_TRY(ffbp_polar_plan(x->pr->pos, p0, p1, &x->fp, x->kmax + x->band, x->prm->os_theta,
                              x->drho / x->prm->os_rho, &g));
    memcpy(s->c, g.c, sizeof g.c);
    s->dt = g.dt;
    s->dr = g.dr;
    s->t0 = g.t0;
    s->r0 = g.r0;
    s->nt = (int)g.nt;
    s->nr = (int)g.nr;
    s->tmid = s->t0 + 0.5 * (double)s->nt * s->dt;
    return SARBP_OK;
}

void sarbp_ffbp_gpu_plan_release(sarbp_ffbp_gpu_plan *p)
{
    if (!p) return;
    free(p->h_subs);
    free(p->h_rows);
    free(p->h_pulses);
    memset(p, 0, sizeof *p);
}

void sarbp_ffbp_gpu_plan_info(const sarbp_ffbp_gpu_plan *p, sarbp_ffbp_info *info)
{
    if (!info) return;
    const int s = p->run.nstages - 1;
    info->stages = p->run.nstages;
    info->final_subs = s >= 0 ? (size_t)(p->run.sub0[s + 1] - p->run.sub0[s]) : 0;
    info->polar_samples = p->polar_samples;
}

/* a + b into *out unless it passes lim */
static int add_ok(size_t a, size_t b, size_t lim, size_t *out)
{
    if (a > lim || b > lim - a) return 0;
    *out = a + b;
    return 1;
}

sarbp_status sarbp_ffbp_gpu_plan_make(const sarbp_profiles *pr, const sarbp_grid *g,
                                      const sarbp_ffbp_params *prm, sarbp_ffbp_gpu_plan *p)
{
    memset(p, 0, sizeof *p);
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->height) /* terrain (sarbp/terrain.h): the polar images lie on a plane */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "FFBP forms on a plane; use --algorithm bp");
    if (prm->base < 1 || prm->merge < 2 || prm->final_subs < 1 || !(prm->os_theta >= 1.0) ||
        !(prm->os_rho >= 1.0))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: invalid factorization parameters");
    const size_t np = pr->npulses;
    if (np == 0 || np > INT_MAX / 2 || pr->nbins < 2 || pr->nbins > INT_MAX ||
        np > (size_t)LLONG_MAX / pr->nbins)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: %zu pulses of %zu bins are out of range",
                           np, pr->nbins);
    if (g->nx > INT_MAX || g->ny > INT_MAX)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: a %zu x %zu image is too large",
                           g->nx, g->ny);
    plan_ctx x = {pr, prm, {0, 0, 0, 0, 0}, 0, 0, 0, INFINITY};
    ffbp_footprint_of(g, (sarbp_region){0, g->ny}, &x.fp);
    p->h_pulses = malloc(np * sizeof *p->h_pulses);
    if (!p->h_pulses) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < np; i++) {
        const double k = 4.0 * M_PI * pr->fref[i] / SARBP_C;
        x.kc += k / (double)np;
        if (k > x.kmax) x.kmax = k;
        const double half = M_PI / pr->dr[i];
        if (half > x.band) x.band = half;
        if (pr->dr[i] < x.drho) x.drho = pr->dr[i];
        const double *a = pr->pos + 3 * i;
        p->h_pulses[i] = (sarbp_dpulse){a[0], a[1], a[2], pr->r0[i], pr->rstart[i], 1.0 / pr->dr[i],
                                        pr->fref[i], 0};
    }
    if (!(x.drho > 0) || !isfinite(x.kc))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: invalid profile geometry");

    /* the stages' sub-apertures: counts first (nsubs halves, or better,
     * every stage) */
    size_t counts[SARBP_FFBP_MAX_STAGES], total = 0;
    int nst = 0;
    size_t n = (np + prm->base - 1) / prm->base;
    for (;;) {
        if (nst == SARBP_FFBP_MAX_STAGES)
            return sarbp_error(SARBP_ERR_INVALID, "ffbp: more than %d stages", SARBP_FFBP_MAX_STAGES);
        counts[nst++] = n;
        total += n;
        if (n <= prm->final_subs) break;
        n = (n + prm->merge - 1) / prm->merge;
    }
    p->h_subs = calloc(total, sizeof *p->h_subs);
    if (!p->h_subs) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    p->nsubs = total;
    sarbp_ffbp_run *r = &p->run;
    r->nstages = nst;
    size_t span = prm->base, k0 = 0, nrows = 0;
    for (int s = 0; s < nst; s++) {
        r->sub0[s] = (long long)k0;
        size_t off = 0;
        int max_nr = 0;
        for (size_t k = 0; k < counts[s]; k++) {
            sarbp_ffbp_dsub *d = &p->h_subs[k0 + k];
            const size_t p0 = k * span, p1 = p0 + span < np ? p0 + span : np;
            SARBP_TRY(plan_grid(&x, p0, p1, d));
            if (s == 0) {
                d->s0 = (int)p0;
                d->s1 = (int)p1;
            } else {
                const size_t c0 = k * prm->merge, c1 = c0 + prm->merge < counts[s - 1] ? c0 + prm->merge
                                                                                      : counts[s - 1];
                d->s0 = (int)c0;
                d->s1 = (int)c1;
            }
            d->off = (long long)off;
            if (!add_ok(off, (size_t)d->nr * (size_t)d->nt, (size_t)1 << 40, &off) ||
                !add_ok(nrows, (size_t)d->nt, INT_MAX, &nrows) ||
                !add_ok(p->polar_samples, (size_t)d->nr * (size_t)d->nt, (size_t)1 << 40,
                        &p->polar_samples))
                return sarbp_error(SARBP_ERR_INVALID, "ffbp: the polar grids are too large");
            if (d->nr > max_nr) max_nr = d->nr;
        }
        if (off > p->buf_samples) p->buf_samples = off;
        r->max_nr[s] = max_nr;
        k0 += counts[s];
        /* the pulses a sub-aperture of the next stage spans */
        if (s + 1 < nst) {
            if (span > SIZE_MAX / prm->merge) span = SIZE_MAX;
            else span *= prm->merge;
        }
    }
    r->sub0[nst] = (long long)k0;
    if (p->buf_samples > SIZE_MAX / 2 / sizeof(sarbp_c32))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: the polar grids are too large");
    p->h_rows = malloc((nrows ? nrows : 1) * sizeof *p->h_rows);
    if (!p->h_rows) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    p->nrows = nrows;
    size_t q = 0;
    for (int s = 0; s < nst; s++) {
        r->row0[s] = (long long)q;
        for (long long k = r->sub0[s]; k < r->sub0[s + 1]; k++)
            for (int j = 0; j < p->h_subs[k].nt; j++)
                p->h_rows[q++] = (sarbp_ffbp_drow){(int)(k - r->sub0[s]), j};
    }
    r->row0[nst] = (long long)q;
    r->np = (int)np;
    r->nbins = (int)pr->nbins;
    r->cubic = pr->interp == SARBP_INTERP_CUBIC;
    r->nx = (int)g->nx;
    r->ny = (int)g->ny;
    r->x0 = sarbp_grid_x(g, 0);
    r->y0 = sarbp_grid_y(g, 0);
    r->dx = g->dx;
    r->dy = g->dy;
    r->z = g->zc;
    r->kc = x.kc;
    return SARBP_OK;
}

/* The largest of each of a run's device allocations (run_open in
 * cuda/plan_ffbp.c: bytes of one polar buffer, the image, the tables) over the
 * runs planned so far. */
struct run_max {
    size_t buf, img, tables;
};

/* Plans the run on rows [row0, row0 + nrows) of g into m. */
static sarbp_status run_measure(const sarbp_profiles *pr, const sarbp_grid *g, const sarbp_ffbp_params *prm,
                                size_t row0, size_t nrows, struct run_max *m)
{
    sarbp_grid bg = *g;
    if (row0 != 0 || nrows != g->ny) SARBP_TRY(sarbp_grid_band(g, row0, nrows, &bg));
    sarbp_ffbp_gpu_plan p;
    SARBP_TRY(sarbp_ffbp_gpu_plan_make(pr, &bg, prm, &p));
    const size_t buf = (p.buf_samples ? p.buf_samples : 1) * sizeof(sarbp_c32),
                 img = bg.nx * bg.ny * sizeof(sarbp_c32),
                 tables = pr->npulses * sizeof(sarbp_dpulse) + (p.nsubs ? p.nsubs : 1) * sizeof(sarbp_ffbp_dsub) +
                          (p.nrows ? p.nrows : 1) * sizeof(sarbp_ffbp_drow);
    sarbp_ffbp_gpu_plan_release(&p);
    if (buf > m->buf) m->buf = buf;
    if (img > m->img) m->img = img;
    if (tables > m->tables) m->tables = tables;
    return SARBP_OK;
}

#define RUN_BYTES_PLANS 64

sarbp_status sarbp_ffbp_cuda_run_bytes(const sarbp_profiles *pr, const sarbp_grid *g,
                                       const sarbp_ffbp_params *prm, size_t row0, size_t nrows,
                                       size_t band_rows, size_t *bytes)
{
    *bytes = 0;
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->height) /* terrain (sarbp/terrain.h): the polar images lie on a plane */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "FFBP forms on a plane; use --algorithm bp");
    if (nrows == 0 || row0 > g->ny || nrows > g->ny - row0 || band_rows == 0)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: rows %zu + %zu in bands of %zu of a grid of %zu rows",
                           row0, nrows, band_rows, g->ny);
    if (band_rows > nrows) band_rows = nrows;
    struct run_max m = {0, 0, 0};
    const size_t nb = (nrows + band_rows - 1) / band_rows;
    if (nb <= RUN_BYTES_PLANS) {
        for (size_t b = 0; b < nb; b++) {
            const size_t r0 = b * band_rows, n = nrows - r0 < band_rows ? nrows - r0 : band_rows;
            SARBP_TRY(run_measure(pr, g, prm, row0 + r0, n, &m));
        }
    } else {
        /* every band (of at most w rows) lies in one window [k w, k w + 2 w) */
        const size_t w = (nrows + RUN_BYTES_PLANS - 1) / RUN_BYTES_PLANS;
        for (size_t r0 = 0; r0 < nrows; r0 += w) {
            const size_t n = nrows - r0 < 2 * w ? nrows - r0 : 2 * w;
            SARBP_TRY(run_measure(pr, g, prm, row0 + r0, n, &m));
        }
        m.buf += m.buf / 16;
        m.tables += m.tables / 16;
        m.img = band_rows * g->nx * sizeof(sarbp_c32);
    }
    *bytes = 2 * m.buf + m.img + m.tables;
    return SARBP_OK;
}

const sarbp_c32 *sarbp_ffbp_profiles32(const sarbp_profiles *pr, sarbp_c32 **tmp)
{
    *tmp = NULL;
    if (pr->precision != SARBP_FP64) return pr->data32;
    const size_t n = pr->npulses * pr->nbins;
    *tmp = malloc((n ? n : 1) * sizeof **tmp);
    if (!*tmp) return NULL;
    for (size_t i = 0; i < n; i++) (*tmp)[i] = (sarbp_c32){(float)pr->data64[i].re, (float)pr->data64[i].im};
    return *tmp;
}

/* ---- the emulation: ffbp.cu's kernels with their blocks as loops ---------- */

typedef struct {
    const sarbp_ffbp_run *r;
    int s;         /* stage */
    int kind;      /* 0 stage 0, 1 merge, 2 prefilter along rho, 3 along theta */
    const sarbp_c32 *src;
    sarbp_c32 *dst;
} emu_stage;

/* one row of the stage's row table: its blocks in turn */
static void emu_row(void *vj, size_t q, int worker)
{
    (void)worker;
    const emu_stage *e = vj;
    const sarbp_ffbp_run *r = e->r;
    const sarbp_ffbp_drow row = r->rows[r->row0[e->s] + (long long)q];
    const sarbp_ffbp_dsub *P = &r->subs[r->sub0[e->s] + row.sub];
    const sarbp_ffbp_dsub *kids = e->s > 0 ? r->subs + r->sub0[e->s - 1] : NULL;
    sarbp_ffbp_ref ref[SARBP_FFBP_CHUNK];
    if (e->kind == 2) {
        for (int i = 0; i < P->nr; i++)
            e->dst[P->off + (long long)row.j * P->nr + i] =
                ffbp_prefilter_at(e->src + P->off + (long long)row.j * P->nr, P->nr, 1, i);
        return;
    }
    if (e->kind == 3) {
        if (row.j % SARBP_FFBP_PF_R == 0)
            for (int i = 0; i < P->nr; i++)
                ffbp_prefilter_run(e->src + P->off + i, P->nt, P->nr, row.j, e->dst + P->off + i,
                                   P->nr);
        return;
    }
    for (int i0 = 0; i0 < P->nr; i0 += SARBP_FFBP_RUN) {
        sarbp_ffbp_rowref rr;
        ffbp_rowref(P, row.j, i0 + SARBP_FFBP_RUN / 2, r->z, &rr);
        float ar[SARBP_FFBP_RUN], ai[SARBP_FFBP_RUN], dl[SARBP_FFBP_RUN], sh[SARBP_FFBP_RUN];
        for (int t = 0; t < SARBP_FFBP_RUN; t++) {
            ar[t] = ai[t] = 0.0f;
            ffbp_offsets(&rr, i0 + t, &dl[t], &sh[t]);
        }
        for (int c0 = P->s0; c0 < P->s1; c0 += SARBP_FFBP_CHUNK) {
            const int n = P->s1 - c0 < SARBP_FFBP_CHUNK ? P->s1 - c0 : SARBP_FFBP_CHUNK;
            for (int t = 0; t < n; t++) {
                if (e->kind == 0)
                    ffbp_ref_pulse(&r->pulses[c0 + t], c0 + t, r->nbins, P, &rr, r->kc, &ref[t]);
                else
                    ffbp_ref_sub(&kids[c0 + t], P, &rr, r->kc, &ref[t]);
            }
            for (int t = 0; t < SARBP_FFBP_RUN; t++)
                for (int k = 0; k < n; k++) {
                    if (e->kind == 0) ffbp_pulse_add(e->src, r->cubic, &ref[k], dl[t], sh[t], &ar[t], &ai[t]);
                    else ffbp_child_add(e->src, &ref[k], dl[t], sh[t], &ar[t], &ai[t]);
                }
        }
        for (int t = 0; t < SARBP_FFBP_RUN && i0 + t < P->nr; t++)
            e->dst[P->off + (long long)row.j * P->nr + i0 + t] = (sarbp_c32){ar[t], ai[t]};
    }
}

static sarbp_status emu_pass(const sarbp_ffbp_run *r, int s, int kind, const sarbp_c32 *src,
                             sarbp_c32 *dst)
{
    emu_stage e = {r, s, kind, src, dst};
    return sarbp_parallel_for(0, (size_t)(r->row0[s + 1] - r->row0[s]), emu_row, &e);
}

/* one row of tiles of the final sum */
static void emu_tiles(void *vj, size_t by, int worker)
{
    (void)worker;
    const sarbp_ffbp_run *r = vj;
    const int s = r->nstages - 1, ns = (int)(r->sub0[s + 1] - r->sub0[s]);
    const sarbp_ffbp_dsub *subs = r->subs + r->sub0[s];
    const sarbp_c32 *src = r->buf[sarbp_ffbp_last_buf(r->nstages)];
    sarbp_ffbp_ref ref[SARBP_FFBP_CHUNK];
    const int TX = SARBP_FFBP_TILE_X, TY = SARBP_FFBP_TILE_Y;
    const int iym = (int)by * TY + TY / 2;
    for (int bx = 0; bx * TX < r->nx; bx++) {
        const int ixm = bx * TX + TX / 2;
        float ar[SARBP_FFBP_TILE_Y][SARBP_FFBP_TILE_X] = {{0}}, ai[SARBP_FFBP_TILE_Y][SARBP_FFBP_TILE_X] = {{0}};
        for (int c0 = 0; c0 < ns; c0 += SARBP_FFBP_CHUNK) {
            const int n = ns - c0 < SARBP_FFBP_CHUNK ? ns - c0 : SARBP_FFBP_CHUNK;
            for (int t = 0; t < n; t++)
                ffbp_ref_pixel(&subs[c0 + t], r->x0 + ixm * r->dx, r->y0 + iym * r->dy, r->z, r->dx,
                               r->dy, r->kc, &ref[t]);
            for (int ty = 0; ty < TY; ty++)
                for (int tx = 0; tx < TX; tx++) {
                    const int dix = tx - TX / 2, diy = ty - TY / 2;
                    const float sx = (float)dix * (float)r->dx, sy = (float)diy * (float)r->dy;
                    for (int k = 0; k < n; k++)
                        ffbp_pixel_add(src, &ref[k], dix, diy, sx, sy, &ar[ty][tx], &ai[ty][tx]);
                }
        }
        for (int ty = 0; ty < TY; ty++)
            for (int tx = 0; tx < TX; tx++) {
                const int ix = bx * TX + tx, iy = (int)by * TY + ty;
                if (ix < r->nx && iy < r->ny)
                    r->img[(long long)iy * r->nx + ix] = (sarbp_c32){ar[ty][tx], ai[ty][tx]};
            }
    }
}

static sarbp_status emulate(sarbp_ffbp_run *r)
{
    SARBP_TRY(emu_pass(r, 0, 0, r->prof, r->buf[0]));
    for (int s = 0; s < r->nstages; s++) {
        if (s > 0) SARBP_TRY(emu_pass(r, s, 1, r->buf[(s - 1) & 1], r->buf[s & 1]));
        const int out = s & 1;
        SARBP_TRY(emu_pass(r, s, 2, r->buf[out], r->buf[1 - out]));
        SARBP_TRY(emu_pass(r, s, 3, r->buf[1 - out], r->buf[out]));
    }
    return sarbp_parallel_for(0, ((size_t)r->ny + SARBP_FFBP_TILE_Y - 1) / SARBP_FFBP_TILE_Y,
                              emu_tiles, r);
}

sarbp_status sarbp_ffbp_emulate_fp32(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_ffbp_params *prm, sarbp_c32 *img,
                                     sarbp_ffbp_info *info)
{
    if (!(pr->precision == SARBP_FP64 ? pr->data64 != NULL : pr->data32 != NULL))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: no profile data");
    if (pr->npulses == 0) return SARBP_OK;
    sarbp_ffbp_gpu_plan p;
    sarbp_status st = sarbp_ffbp_gpu_plan_make(pr, g, prm, &p);
    sarbp_c32 *tmp = NULL, *b0 = NULL, *b1 = NULL, *im = NULL;
    if (!st) {
        sarbp_ffbp_run *r = &p.run;
        r->subs = p.h_subs;
        r->rows = p.h_rows;
        r->pulses = p.h_pulses;
        r->prof = sarbp_ffbp_profiles32(pr, &tmp);
        b0 = calloc(p.buf_samples ? p.buf_samples : 1, sizeof *b0);
        b1 = calloc(p.buf_samples ? p.buf_samples : 1, sizeof *b1);
        im = calloc(g->nx * g->ny, sizeof *im);
        r->buf[0] = b0;
        r->buf[1] = b1;
        r->img = im;
        if (!r->prof || !b0 || !b1 || !im) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        if (!st) st = emulate(r);
        if (!st) {
            for (size_t i = 0; i < g->nx * g->ny; i++) {
                img[i].re += im[i].re;
                img[i].im += im[i].im;
            }
            sarbp_ffbp_gpu_plan_info(&p, info);
        }
    }
    free(tmp);
    free(b0);
    free(b1);
    free(im);
    sarbp_ffbp_gpu_plan_release(&p);
    return st;
}
