/* ffbp/layout.c - the polar grids of fast factorized backprojection, the
 * one planning step the FP64 prototype, the FP32 engine and the cost and
 * error model share (ffbp/layout.h): the footprint of a region, the grid of
 * a sub-aperture, the levels of a factorization and their measure. */
#include "backproject/ffbp/layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef ffbp_footprint footprint;

#define unwrap ffbp_unwrap

/* The rho and theta ranges of the footprint seen from c, each widened by
 * margin samples of dr and dt (dt from the aperture, below). */
static sarbp_status polar_extent(const double *c, const footprint *fp, double *rmin, double *rmax,
                                 double *tmin, double *tmax)
{
    if (c[0] >= fp->x0 && c[0] <= fp->x1 && c[1] >= fp->y0 && c[1] <= fp->y1)
        return sarbp_error(SARBP_ERR_INVALID,
                           "ffbp: an antenna phase centre lies over the image; use --algorithm bp");
    const double xs[4] = {fp->x0, fp->x1, fp->x1, fp->x0}, ys[4] = {fp->y0, fp->y0, fp->y1, fp->y1};
    const double ref = atan2(0.5 * (fp->y0 + fp->y1) - c[1], 0.5 * (fp->x0 + fp->x1) - c[0]);
    *rmax = 0;
    *tmin = INFINITY;
    *tmax = -INFINITY;
    for (int k = 0; k < 4; k++) {
        double r, t;
        ffbp_to_polar(c, xs[k], ys[k], fp->z, &r, &t);
        t = unwrap(t, ref);
        if (r > *rmax) *rmax = r;
        if (t < *tmin) *tmin = t;
        if (t > *tmax) *tmax = t;
    }
    /* nearest point of the rectangle */
    const double nx = c[0] < fp->x0 ? fp->x0 : c[0] > fp->x1 ? fp->x1 : c[0];
    const double ny = c[1] < fp->y0 ? fp->y0 : c[1] > fp->y1 ? fp->y1 : c[1];
    double t;
    ffbp_to_polar(c, nx, ny, fp->z, rmin, &t);
    return SARBP_OK;
}

void ffbp_footprint_of(const sarbp_grid *g, sarbp_region r, ffbp_footprint *fp)
{
    const double x0 = sarbp_grid_x(g, 0), x1 = sarbp_grid_x(g, g->nx - 1);
    const double y0 = sarbp_grid_y(g, r.row0), y1 = sarbp_grid_y(g, r.row0 + r.nrows - 1);
    fp->x0 = x0 < x1 ? x0 : x1;
    fp->x1 = x0 < x1 ? x1 : x0;
    fp->y0 = y0 < y1 ? y0 : y1;
    fp->y1 = y0 < y1 ? y1 : y0;
    fp->z = g->zc;
}

sarbp_status ffbp_polar_geom_of(const double *pos, size_t p0, size_t p1, const ffbp_footprint *fp,
                               ffbp_polar_geom *s)
{
    double c[3] = {0, 0, 0};
    for (size_t i = p0; i < p1; i++)
        for (int d = 0; d < 3; d++) c[d] += pos[3 * i + d];
    for (int d = 0; d < 3; d++) c[d] /= (double)(p1 - p0);
    memcpy(s->c, c, sizeof c);
    SARBP_TRY(polar_extent(c, fp, &s->rmin, &s->rmax, &s->tmin, &s->tmax));
    /* the aperture's horizontal half-extent across the line of sight to the
     * image centre: how fast the phase turns with theta */
    const double tc = 0.5 * (s->tmin + s->tmax), ux = -sin(tc), uy = cos(tc);
    double L = 0;
    for (size_t i = p0; i < p1; i++) {
        const double d = fabs((pos[3 * i] - c[0]) * ux + (pos[3 * i + 1] - c[1]) * uy);
        if (d > L) L = d;
    }
    s->L = L;
    const double hx = 0.5 * (fp->x0 + fp->x1) - c[0], hy = 0.5 * (fp->y0 + fp->y1) - c[1], hz = fp->z - c[2];
    const double hh = hypot(hx, hy);
    s->cosd = hh / sqrt(hh * hh + hz * hz);
    return SARBP_OK;
}

sarbp_status ffbp_polar_size(const ffbp_polar_geom *gm, double kband, double os_theta, double drho,
                             ffbp_polar *s)
{
    memcpy(s->c, gm->c, sizeof s->c);
    s->L = gm->L;
    s->cosd = gm->cosd;
    /* theta bandwidth (rad^-1): the carrier's and the envelope's turn over
     * the aperture, and the footprint's own width seen at its range */
    const double w = kband * gm->L + 1.0;
    s->dt = M_PI / (os_theta * w);
    s->dr = drho;
    /* margins in samples: the 4 x 4 taps, and the prefilter's mirrored ends,
     * whose error decays as (2 - sqrt 3)^k: 8 samples in, below -90 dB */
    const double mt = 8.0, mr = 8.0;
    s->t0 = gm->tmin - mt * s->dt;
    s->r0 = gm->rmin - mr * s->dr;
    const double nt = ceil((gm->tmax - gm->tmin) / s->dt) + 2 * mt + 1,
                 nr = ceil((gm->rmax - gm->rmin) / s->dr) + 2 * mr + 1;
    if (!(nt < 1e7) || !(nr < 1e7) || nt * nr > 4e8)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: a polar grid of %.0f x %.0f samples is too large",
                           nr, nt);
    s->nt = (size_t)nt;
    s->nr = (size_t)nr;
    return SARBP_OK;
}

sarbp_status ffbp_polar_plan(const double *pos, size_t p0, size_t p1, const ffbp_footprint *fp,
                             double kband, double os_theta, double drho, ffbp_polar *s)
{
    ffbp_polar_geom gm;
    SARBP_TRY(ffbp_polar_geom_of(pos, p0, p1, fp, &gm));
    return ffbp_polar_size(&gm, kband, os_theta, drho, s);
}

static size_t ceil_div(size_t a, size_t b)
{
    return a / b + (a % b != 0);
}

/* wavenumbers and spacing from the pulses */
void ffbp_pulse_bands(const ffbp_pulses *pu, double *kc, double *kband, double *drho, double *kmax_out)
{
    double kmax = 0, band = 0, d = INFINITY, sum = 0;
    for (size_t i = 0; i < pu->npulses; i++) {
        const double k = 4.0 * M_PI * pu->fref[i] / SARBP_C;
        sum += k;
        if (k > kmax) kmax = k;
        if (M_PI / pu->dr[i] > band) band = M_PI / pu->dr[i];
        if (pu->dr[i] < d) d = pu->dr[i];
    }
    *kc = sum / (double)pu->npulses;
    *kband = kmax + band;
    *drho = d;
    if (kmax_out) *kmax_out = kmax;
}

sarbp_status  ffbp_check_params(const sarbp_ffbp_params *prm)
{
    if (!prm || prm->base < 1 || prm->base > 65536 || prm->merge < 2 || prm->merge > 64 ||
        prm->final_subs < 1 || !(prm->os_theta >= 1.0 && prm->os_theta <= 64) ||
        !(prm->os_rho >= 1.0 && prm->os_rho <= 64))
        return sarbp_error(SARBP_ERR_INVALID,
                           "ffbp: invalid factorization (base 1..65536, merge 2..64, final_subs >= 1, "
                           "os_theta and os_rho 1..64)");
    return SARBP_OK;
}

sarbp_status  ffbp_check_pulses(const ffbp_pulses *pu)
{
    for (size_t i = 0; i < pu->npulses; i++) {
        const double *a = pu->pos + 3 * i;
        if (!isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2]) || !(pu->fref[i] > 0) ||
            !isfinite(pu->fref[i]) || !(pu->dr[i] > 0) || !isfinite(pu->dr[i]))
            return sarbp_error(SARBP_ERR_INVALID, "ffbp: pulse %zu has no usable geometry", i);
    }
    return SARBP_OK;
}

/* sub-image counts per level: level 0 the runs of base pulses, each next
 * level merge of the last, until at most final_subs remain */
int  ffbp_level_counts(size_t P, const sarbp_ffbp_params *prm, size_t *n)
{
    int L = 0;
    n[0] = ceil_div(P, prm->base);
    while (n[L] > prm->final_subs && L < FFBP_MAX_LEVELS) {
        n[L + 1] = ceil_div(n[L], prm->merge);
        L++;
    }
    return L;
}

/* pulses of sub-image m of level k */
void  ffbp_sub_pulses(const sarbp_ffbp_params *prm, size_t P, int k, size_t m, size_t *p0, size_t *p1)
{
    size_t span = prm->base;
    for (int i = 0; i < k; i++) span *= prm->merge;
    *p0 = m * span;
    *p1 = *p0 + span < P ? *p0 + span : P;
}

sarbp_status ffbp_level_geoms_make(const ffbp_pulses *pu, const sarbp_grid *g, size_t base, size_t merge,
                                   ffbp_level_geoms *out)
{
    memset(out, 0, sizeof *out);
    const sarbp_ffbp_params prm = {base, merge, 1, 1.0, 1.0};
    SARBP_TRY(ffbp_check_params(&prm));
    SARBP_TRY(sarbp_grid_validate(g));
    SARBP_TRY(ffbp_check_pulses(pu));
    out->base = base;
    out->merge = merge;
    out->npulses = pu->npulses;
    if (pu->npulses == 0) return SARBP_OK;
    const int L = ffbp_level_counts(pu->npulses, &prm, out->n);
    size_t total = 0;
    for (int k = 0; k <= L; k++) {
        out->off[k] = total;
        total += out->n[k];
    }
    out->levels = L + 1;
    out->geo = malloc(total * sizeof *out->geo);
    if (!out->geo) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    ffbp_footprint fp;
    ffbp_footprint_of(g, (sarbp_region){0, g->ny}, &fp);
    for (int k = 0; k <= L; k++)
        for (size_t m = 0; m < out->n[k]; m++) {
            size_t p0, p1;
            ffbp_sub_pulses(&prm, pu->npulses, k, m, &p0, &p1);
            const sarbp_status st = ffbp_polar_geom_of(pu->pos, p0, p1, &fp, &out->geo[out->off[k] + m]);
            if (st) {
                ffbp_level_geoms_release(out);
                return st;
            }
        }
    return SARBP_OK;
}

void ffbp_level_geoms_release(ffbp_level_geoms *lg)
{
    if (!lg) return;
    free(lg->geo);
    memset(lg, 0, sizeof *lg);
}

sarbp_status ffbp_layout_measure(const ffbp_pulses *pu, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, const ffbp_level_geoms *lg,
                                 ffbp_layout_stats *out)
{
    memset(out, 0, sizeof *out);
    SARBP_TRY(ffbp_check_params(prm));
    SARBP_TRY(sarbp_grid_validate(g));
    if (pu->npulses == 0) return SARBP_OK;
    if (lg && (lg->base != prm->base || lg->merge != prm->merge || lg->npulses != pu->npulses))
        return sarbp_error(SARBP_ERR_INTERNAL, "ffbp: sub-aperture geometry of another factorization");
    if (!lg) SARBP_TRY(ffbp_check_pulses(pu));
    double kc, kband, drho, kmax;
    ffbp_pulse_bands(pu, &kc, &kband, &drho, &kmax);
    ffbp_footprint fp;
    ffbp_footprint_of(g, (sarbp_region){0, g->ny}, &fp);
    size_t n[FFBP_MAX_LEVELS + 1];
    const int L = ffbp_level_counts(pu->npulses, prm, n);
    out->stages = L + 1;
    out->final_subs = n[L];
    out->interp_stages = L + 1;
    out->os_eff_min = INFINITY;
    for (int k = 0; k <= L; k++) {
        out->os_ratio[k] = INFINITY;
        for (size_t m = 0; m < n[k]; m++) {
            size_t p0, p1;
            ffbp_sub_pulses(prm, pu->npulses, k, m, &p0, &p1);
            ffbp_polar_geom gm;
            if (lg) gm = lg->geo[lg->off[k] + m]; /* the same levels: they stop at one sub-image */
            else SARBP_TRY(ffbp_polar_geom_of(pu->pos, p0, p1, &fp, &gm));
            ffbp_polar pg;
            SARBP_TRY(ffbp_polar_size(&gm, kband, prm->os_theta, drho / prm->os_rho, &pg));
            const double s = (double)pg.nr * (double)pg.nt;
            if (k == 0) {
                out->samples0 += s;
                out->pulse_reads += s * (double)(p1 - p0);
            } else {
                out->samples_merge += s;
                /* children of this sub-image */
                size_t c = prm->merge;
                const size_t first = m * prm->merge;
                if (first + c > n[k - 1]) c = n[k - 1] - first;
                out->reads_merge += s * (double)c;
            }
            /* the effective angular oversampling: the grid's over the
             * carrier's turn seen at the depression angle */
            const double ratio = (kband * pg.L + 1.0) / (kmax * pg.L * pg.cosd + 1.0);
            if (ratio < out->os_ratio[k]) out->os_ratio[k] = ratio;
            if (prm->os_theta * ratio < out->os_eff_min) out->os_eff_min = prm->os_theta * ratio;
        }
    }
    out->reads_final = (double)g->nx * (double)g->ny * (double)n[L];
    return SARBP_OK;
}
