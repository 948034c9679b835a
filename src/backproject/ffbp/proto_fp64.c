/* ffbp/proto_fp64.c - fast factorized backprojection (Ulander, Hellsten and Stenstrom
 * 2003), FP64 on the CPU: the prototype the fast paths are to be measured
 * against.
 *
 * A sub-aperture A (consecutive pulses, phase centre c_A, the mean of their
 * antenna positions) keeps its partial image on a polar grid about c_A:
 * rho, the 3-D distance from c_A to a point of the image plane z = zc, and
 * theta, the azimuth of that point seen from c_A. Stored demodulated,
 *     G_A(rho, theta) = sum over i in A of v_i(x) exp(-j kc rho),
 * where v_i(x) is pulse i's backprojected value at the point x(rho, theta)
 * and kc the mean 4 pi fref / c: what is left varies slowly in rho (the
 * profiles' band, sampled as finely as the profiles) and in theta (a phase
 * that turns k L_A times a radian, L_A the aperture's extent across the
 * line of sight, sampled at os_theta times Nyquist). Each grid is turned
 * into cubic B-spline coefficients (the recursive prefilter, mirror ends),
 * so a child is read anywhere with 4 x 4 taps.
 *
 * Stage 0 backprojects runs of `base` pulses onto their own coarse polar
 * grids; each later stage merges `merge` neighbouring sub-apertures onto
 * the finer grid of their union; the last stage sums the remaining
 * sub-apertures at the Cartesian pixels. The radar must be outside the
 * image footprint (every airborne geometry: the theta range of a grid is
 * then less than pi). */
#include "sarbp/ffbp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/ffbp/layout.h"
#include "core/parallel.h"

typedef struct {
    double c[3];      /* phase centre */
    double r0, dr;    /* rho = r0 + i dr, i < nr */
    double t0, dt;    /* theta = t0 + j dt, j < nt */
    size_t nr, nt;
    sarbp_c64 *f;     /* [nt][nr]: B-spline coefficients of G */
} sub_image;

typedef ffbp_footprint footprint;
#define to_polar ffbp_to_polar
#define unwrap ffbp_unwrap

static void sub_free(sub_image *s, size_t n)
{
    if (!s) return;
    for (size_t i = 0; i < n; i++) free(s[i].f);
    free(s);
}

/* ---- polar geometry -------------------------------------------------------- */

/* the point of the plane z at rho from c, in the direction (cos theta,
 * sin theta) = (ct, st) */
static inline void from_polar(const double *c, double z, double rho, double ct, double st,
                              double *x, double *y)
{
    const double dz = z - c[2];
    double h2 = rho * rho - dz * dz;
    const double h = h2 > 0 ? sqrt(h2) : 0.0;
    *x = c[0] + h * ct;
    *y = c[1] + h * st;
}

/* ---- cubic B-spline coefficients ------------------------------------------ */

/* In place: samples s[0..n) (stride) -> cubic B-spline coefficients, mirror
 * boundaries (Unser 1991). */
static void bspline_prefilter(sarbp_c64 *s, size_t n, size_t stride)
{
    if (n < 2) return;
    const double z = sqrt(3.0) - 2.0;
    /* causal initialisation: the mirrored sum, truncated where z^k < 1e-17 */
    size_t horizon = (size_t)ceil(log(1e-17) / log(fabs(z)));
    if (horizon > n) horizon = n;
    double zk = 1.0, re = 0, im = 0;
    for (size_t k = 0; k < horizon; k++) {
        re += zk * s[k * stride].re;
        im += zk * s[k * stride].im;
        zk *= z;
    }
    s[0].re = re;
    s[0].im = im;
    for (size_t k = 1; k < n; k++) {
        s[k * stride].re += z * s[(k - 1) * stride].re;
        s[k * stride].im += z * s[(k - 1) * stride].im;
    }
    /* anticausal */
    const size_t l = (n - 1) * stride, m = (n - 2) * stride;
    const double q = z / (z * z - 1.0);
    s[l].re = q * (s[l].re + z * s[m].re);
    s[l].im = q * (s[l].im + z * s[m].im);
    for (size_t k = n - 1; k-- > 0;) {
        s[k * stride].re = z * (s[(k + 1) * stride].re - s[k * stride].re);
        s[k * stride].im = z * (s[(k + 1) * stride].im - s[k * stride].im);
    }
    for (size_t k = 0; k < n; k++) {
        s[k * stride].re *= 6.0;
        s[k * stride].im *= 6.0;
    }
}

static void grid_prefilter(sub_image *s)
{
    for (size_t j = 0; j < s->nt; j++) bspline_prefilter(s->f + j * s->nr, s->nr, 1);
    for (size_t i = 0; i < s->nr; i++) bspline_prefilter(s->f + i, s->nt, s->nr);
}

/* G of sub-image s at (rho, th), remodulated and, for a parent grid point at
 * rho_ref, demodulated again: G exp(+j kc (rho - rho_ref)), one phase
 * instead of two (rho_ref 0 at the pixels). Zero off the grid (it covers the
 * image with a margin, so only rounding reaches there). */
static inline sarbp_c64 read_sub(const sub_image *s, double rho, double th, double kc,
                                 double rho_ref)
{
    const double bi = (rho - s->r0) / s->dr, bj = (th - s->t0) / s->dt;
    const double fi = floor(bi), fj = floor(bj);
    sarbp_c64 v = {0, 0};
    if (!(fi >= 1) || fi + 2 >= (double)s->nr || !(fj >= 1) || fj + 2 >= (double)s->nt) return v;
    const size_t i = (size_t)fi, j = (size_t)fj;
    double wi[4], wj[4];
    sarbp_interp_weights_cubic(bi - fi, wi);
    sarbp_interp_weights_cubic(bj - fj, wj);
    for (int b = 0; b < 4; b++) {
        const sarbp_c64 *row = s->f + (j + (size_t)b - 1) * s->nr + i - 1;
        double re = 0, im = 0;
        for (int a = 0; a < 4; a++) {
            re += wi[a] * row[a].re;
            im += wi[a] * row[a].im;
        }
        v.re += wj[b] * re;
        v.im += wj[b] * im;
    }
    const double ph = kc * (rho - rho_ref), cs = cos(ph), sn = sin(ph);
    return (sarbp_c64){v.re * cs - v.im * sn, v.re * sn + v.im * cs};
}

/* ---- the stages ------------------------------------------------------------ */

typedef struct {
    const sarbp_profiles *pr;
    const footprint *fp;
    const sarbp_ffbp_params *prm;
    double kc, kmax, band; /* kc, the largest 4 pi f / c, half the band in rad/m */
    double drho;           /* rho spacing: the finest profile bin spacing */
} ffbp_ctx;

/* Grid of a sub-aperture whose pulses [p0, p1) or children span those
 * antenna positions: centre, extent across the line of sight, sizes. */
static sarbp_status plan_grid(const ffbp_ctx *x, size_t p0, size_t p1, sub_image *s)
{
    ffbp_polar g;
    SARBP_TRY(ffbp_polar_plan(x->pr->pos, p0, p1, x->fp, x->kmax + x->band, x->prm->os_theta,
                              x->drho / x->prm->os_rho, &g));
    memcpy(s->c, g.c, sizeof g.c);
    s->r0 = g.r0;
    s->dr = g.dr;
    s->t0 = g.t0;
    s->dt = g.dt;
    s->nr = g.nr;
    s->nt = g.nt;
    s->f = calloc(s->nt * s->nr, sizeof(sarbp_c64));
    if (!s->f) return sarbp_error(SARBP_ERR_NOMEM, "ffbp: out of memory for a %zu x %zu polar grid",
                                  s->nr, s->nt);
    return SARBP_OK;
}

/* pulse i's backprojected value at (x, y, z) (the primer's sum term; as
 * bp_cpu_ref.c) */
static inline sarbp_c64 pulse_value(const sarbp_profiles *pr, size_t i, double x, double y,
                                    double z)
{
    const double *a = pr->pos + 3 * i;
    const double dx = x - a[0], dy = y - a[1], dz = z - a[2];
    const double dR = sqrt(dx * dx + dy * dy + dz * dz) - pr->r0[i];
    const double b = (dR - pr->rstart[i]) / pr->dr[i];
    const double fb = floor(b);
    sarbp_c64 v = {0, 0};
    if (!(fb >= 0) || fb >= (double)pr->nbins - 1.0) return v;
    const size_t n = (size_t)fb;
    const sarbp_c64 *prof = pr->data64 + i * pr->nbins;
    double w[4], vr = 0, vi = 0;
    if (pr->interp == SARBP_INTERP_CUBIC) {
        sarbp_interp_weights_cubic(b - fb, w);
        for (int k = 0; k < 4; k++) {
            if (n + (size_t)k < 1 || n + (size_t)k - 1 >= pr->nbins) continue;
            vr += w[k] * prof[n + (size_t)k - 1].re;
            vi += w[k] * prof[n + (size_t)k - 1].im;
        }
    } else {
        const double t = b - fb;
        vr = prof[n].re + t * (prof[n + 1].re - prof[n].re);
        vi = prof[n].im + t * (prof[n + 1].im - prof[n].im);
    }
    const double ph = 4.0 * M_PI / SARBP_C * pr->fref[i] * dR, cs = cos(ph), sn = sin(ph);
    return (sarbp_c64){vr * cs - vi * sn, vr * sn + vi * cs};
}

struct stage0_job {
    const ffbp_ctx *x;
    sub_image *subs;
    size_t base;
};

static void stage0_one(void *vj, size_t k, int worker)
{
    (void)worker;
    const struct stage0_job *j = vj;
    const ffbp_ctx *x = j->x;
    sub_image *s = &j->subs[k];
    const size_t p0 = k * j->base, p1 = p0 + j->base < x->pr->npulses ? p0 + j->base : x->pr->npulses;
    for (size_t jt = 0; jt < s->nt; jt++) {
        const double th = s->t0 + (double)jt * s->dt, ct = cos(th), st = sin(th);
        for (size_t ir = 0; ir < s->nr; ir++) {
            const double rho = s->r0 + (double)ir * s->dr;
            double px, py;
            from_polar(s->c, x->fp->z, rho, ct, st, &px, &py);
            double re = 0, im = 0;
            for (size_t i = p0; i < p1; i++) {
                const sarbp_c64 v = pulse_value(x->pr, i, px, py, x->fp->z);
                re += v.re;
                im += v.im;
            }
            const double ph = -x->kc * rho, cs = cos(ph), sn = sin(ph);
            s->f[jt * s->nr + ir] = (sarbp_c64){re * cs - im * sn, re * sn + im * cs};
        }
    }
    grid_prefilter(s);
}

struct merge_job {
    const ffbp_ctx *x;
    const sub_image *kids;
    size_t nkids;
    sub_image *parents;
    size_t merge;
};

static void merge_one(void *vj, size_t k, int worker)
{
    (void)worker;
    const struct merge_job *j = vj;
    const ffbp_ctx *x = j->x;
    sub_image *s = &j->parents[k];
    const size_t c0 = k * j->merge, c1 = c0 + j->merge < j->nkids ? c0 + j->merge : j->nkids;
    for (size_t jt = 0; jt < s->nt; jt++) {
        const double th = s->t0 + (double)jt * s->dt, ct = cos(th), st = sin(th);
        for (size_t ir = 0; ir < s->nr; ir++) {
            const double rho = s->r0 + (double)ir * s->dr;
            double px, py;
            from_polar(s->c, x->fp->z, rho, ct, st, &px, &py);
            double re = 0, im = 0;
            for (size_t c = c0; c < c1; c++) {
                double rc, tc;
                to_polar(j->kids[c].c, px, py, x->fp->z, &rc, &tc);
                tc = unwrap(tc, j->kids[c].t0 + 0.5 * (double)j->kids[c].nt * j->kids[c].dt);
                const sarbp_c64 v = read_sub(&j->kids[c], rc, tc, x->kc, rho);
                re += v.re;
                im += v.im;
            }
            s->f[jt * s->nr + ir] = (sarbp_c64){re, im};
        }
    }
    grid_prefilter(s);
}

struct final_job {
    const ffbp_ctx *x;
    const sub_image *subs;
    size_t nsubs;
    const sarbp_grid *g;
    sarbp_c64 *img;
};

static void final_row(void *vj, size_t iy, int worker)
{
    (void)worker;
    const struct final_job *j = vj;
    const double y = sarbp_grid_y(j->g, iy), z = j->g->zc;
    for (size_t ix = 0; ix < j->g->nx; ix++) {
        const double xx = sarbp_grid_x(j->g, ix);
        double re = 0, im = 0;
        for (size_t c = 0; c < j->nsubs; c++) {
            const sub_image *s = &j->subs[c];
            double rc, tc;
            to_polar(s->c, xx, y, z, &rc, &tc);
            tc = unwrap(tc, s->t0 + 0.5 * (double)s->nt * s->dt);
            const sarbp_c64 v = read_sub(s, rc, tc, j->x->kc, 0);
            re += v.re;
            im += v.im;
        }
        j->img[iy * j->g->nx + ix].re += re;
        j->img[iy * j->g->nx + ix].im += im;
    }
}

void sarbp_ffbp_params_default(sarbp_ffbp_params *p)
{
    p->base = 8;
    p->merge = 2;
    p->final_subs = 8;
    p->os_theta = 4.0;
    p->os_rho = 2.0;
}

sarbp_status sarbp_ffbp_cpu_fp64(const sarbp_profiles *pr, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, sarbp_c64 *img,
                                 sarbp_ffbp_info *info)
{
    if (pr->precision != SARBP_FP64 || !pr->data64)
        return sarbp_error(SARBP_ERR_INTERNAL, "ffbp needs FP64 profiles");
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->height) /* terrain (sarbp/terrain.h): the polar images lie on a plane */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "FFBP forms on a plane; use --algorithm bp");
    if (prm->base < 1 || prm->merge < 2 || prm->final_subs < 1 || !(prm->os_theta >= 1.0) ||
        !(prm->os_rho >= 1.0))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: invalid factorization parameters");
    if (pr->npulses == 0) return SARBP_OK;
    footprint fp;
    ffbp_footprint_of(g, (sarbp_region){0, g->ny}, &fp);
    ffbp_ctx x = {pr, &fp, prm, 0, 0, 0, INFINITY};
    for (size_t i = 0; i < pr->npulses; i++) {
        const double k = 4.0 * M_PI * pr->fref[i] / SARBP_C;
        x.kc += k / (double)pr->npulses;
        if (k > x.kmax) x.kmax = k;
        /* the profiles' band: half of it in rad/m is at most pi / dr (the
         * bin Nyquist; the bins are upsampled, so this is generous) */
        const double half = M_PI / pr->dr[i];
        if (half > x.band) x.band = half;
        if (pr->dr[i] < x.drho) x.drho = pr->dr[i];
    }

    /* stage 0 */
    size_t nsubs = (pr->npulses + prm->base - 1) / prm->base;
    sub_image *subs = calloc(nsubs, sizeof *subs);
    if (!subs) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = SARBP_OK;
    size_t samples = 0;
    for (size_t k = 0; k < nsubs && !st; k++) {
        const size_t p0 = k * prm->base, p1 = p0 + prm->base < pr->npulses ? p0 + prm->base : pr->npulses;
        st = plan_grid(&x, p0, p1, &subs[k]);
        if (!st) samples += subs[k].nr * subs[k].nt;
    }
    if (!st) {
        struct stage0_job j = {&x, subs, prm->base};
        st = sarbp_parallel_for(0, nsubs, stage0_one, &j);
    }
    int stages = 1;
    size_t span = prm->base; /* pulses per sub-aperture */
    while (!st && nsubs > prm->final_subs) {
        const size_t np = (nsubs + prm->merge - 1) / prm->merge;
        sub_image *par = calloc(np, sizeof *par);
        if (!par) {
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
            break;
        }
        const size_t pspan = span * prm->merge;
        for (size_t k = 0; k < np && !st; k++) {
            const size_t p0 = k * pspan, p1 = p0 + pspan < pr->npulses ? p0 + pspan : pr->npulses;
            st = plan_grid(&x, p0, p1, &par[k]);
            if (!st) samples += par[k].nr * par[k].nt;
        }
        if (!st) {
            struct merge_job j = {&x, subs, nsubs, par, prm->merge};
            st = sarbp_parallel_for(0, np, merge_one, &j);
        }
        sub_free(subs, nsubs);
        subs = par;
        nsubs = np;
        span = pspan;
        stages++;
    }
    if (!st) {
        struct final_job j = {&x, subs, nsubs, g, img};
        st = sarbp_parallel_for(0, g->ny, final_row, &j);
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->stages = stages;
        info->final_subs = nsubs;
        info->polar_samples = samples;
    }
    sub_free(subs, nsubs);
    return st;
}
