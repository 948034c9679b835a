/* autofocus.c - phase errors per pulse from the data itself, by maximising
 * the image's sharpness in backprojection (sarbp/autofocus.h).
 *
 * The range profiles are compressed once (FP32). An image for phases phi
 * is the FP32 tiled backprojection of the profiles multiplied by
 * exp(j phi_j); the gradient of the sharpness is one reprojection of the
 * weight |I|^2 conj(I) onto every pulse, each pulse's contribution made by
 * the same FP32 tiled backprojector over that pulse alone. Sharpness
 * and gradients are taken relative to the uncorrected image's sharpness
 * (and the weight scaled by the image's peak) so that no scale of the data
 * overflows a float. Three steps: a scan of the quadratic and cubic
 * coefficients; L-BFGS with a backtracking line search over Legendre
 * polynomials of the pulse index; coordinate ascent over every pulse's
 * phase, each solved exactly with the others held. */
#include "sarbp/autofocus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sarbp/backproject.h"

#define LBFGS_M 6

void sarbp_autofocus_options_default(sarbp_autofocus_options *o)
{
    memset(o, 0, sizeof *o);
}

void sarbp_autofocus_apply(sarbp_phd *phd, const double *phase)
{
    const size_t K = phd->nsamples;
    for (size_t j = 0; j < phd->npulses; j++) {
        const double c = cos(phase[j]), s = sin(phase[j]);
        sarbp_c32 *v = phd->data + j * K;
        for (size_t k = 0; k < K; k++) {
            const double re = v[k].re * c - v[k].im * s, im = v[k].re * s + v[k].im * c;
            v[k].re = (float)re;
            v[k].im = (float)im;
        }
    }
}

void sarbp_phase_detrend(double *phase, size_t n)
{
    if (n == 0) return;
    /* least squares a + b (j - mean) */
    const double jm = 0.5 * (double)(n - 1);
    double sp = 0, sjp = 0, sjj = 0;
    for (size_t j = 0; j < n; j++) {
        const double d = (double)j - jm;
        sp += phase[j];
        sjp += d * phase[j];
        sjj += d * d;
    }
    const double a = sp / (double)n, b = sjj > 0 ? sjp / sjj : 0;
    for (size_t j = 0; j < n; j++) phase[j] -= a + b * ((double)j - jm);
}

/* ---- the image, its sharpness and the gradient ---- */

struct af {
    const sarbp_grid *g;
    size_t P, N;
    int threads;
    sarbp_profiles *pr;    /* the compressed pulses, uncorrected */
    sarbp_profiles *work;  /* the same times exp(j phi) */
    sarbp_c32 *img;        /* [N]: the image of the last evaluation */
    sarbp_c64 *w;          /* [N]: |I|^2 conj(I) / peak^3 */
    sarbp_c64 *acc;        /* [P]: sum_x w(x) b_j(x) */
    sarbp_c32 *vbuf;       /* [N]: one pulse's contribution */
    double S0;             /* the uncorrected image's sharpness */
    int evaluations;
};

/* The image for phases phi into a->img; its sharpness over S0 (S0 0: sets it). */
static sarbp_status image_of(struct af *a, const double *phi, double *S)
{
    const size_t nb = a->pr->nbins;
    for (size_t j = 0; j < a->P; j++) {
        const float c = (float)cos(phi[j]), s = (float)sin(phi[j]);
        const sarbp_c32 *x = a->pr->data32 + j * nb;
        sarbp_c32 *y = a->work->data32 + j * nb;
        for (size_t k = 0; k < nb; k++) {
            y[k].re = x[k].re * c - x[k].im * s;
            y[k].im = x[k].re * s + x[k].im * c;
        }
    }
    memset(a->img, 0, a->N * sizeof *a->img);
    SARBP_TRY(sarbp_bp_cpu_fp32(a->work, a->g, a->threads, a->img));
    double sum = 0;
    for (size_t i = 0; i < a->N; i++) {
        const double p = (double)a->img[i].re * a->img[i].re + (double)a->img[i].im * a->img[i].im;
        sum += p * p;
    }
    if (a->S0 == 0) a->S0 = sum > 0 ? sum : 1;
    *S = sum / a->S0;
    a->evaluations++;
    return SARBP_OK;
}

/* Pulse j's contribution b_j to every pixel, into v[N]: the FP32 tiled
 * backprojector of the image (sarbp_bp_cpu_fp32) over that one pulse, so
 * that the gradient and the sweeps see exactly the image's arithmetic. */
static sarbp_status pulse_image(struct af *a, size_t j, sarbp_c32 *v)
{
    const sarbp_profiles one = sarbp_profiles_slice(a->pr, j, 1);
    memset(v, 0, a->N * sizeof *v);
    return sarbp_bp_cpu_fp32(&one, a->g, a->threads, v);
}

/* The gradient of -S / S0 over phi at the image in a->img (formed for phi). */
static sarbp_status gradient_of(struct af *a, const double *phi, double *grad)
{
    double peak = 0;
    for (size_t i = 0; i < a->N; i++) {
        const double m = hypot(a->img[i].re, a->img[i].im);
        if (m > peak) peak = m;
    }
    if (!(peak > 0)) {
        memset(grad, 0, a->P * sizeof *grad);
        return SARBP_OK;
    }
    for (size_t i = 0; i < a->N; i++) {
        const double re = a->img[i].re / peak, im = a->img[i].im / peak, p = re * re + im * im;
        a->w[i] = (sarbp_c64){p * re, -p * im};
    }
    for (size_t j = 0; j < a->P; j++) { /* the reprojection, pulse by pulse */
        SARBP_TRY(pulse_image(a, j, a->vbuf));
        double sr = 0, si = 0;
        for (size_t i = 0; i < a->N; i++) {
            const sarbp_c32 b = a->vbuf[i];
            sr += a->w[i].re * b.re - a->w[i].im * b.im;
            si += a->w[i].re * b.im + a->w[i].im * b.re;
        }
        a->acc[j] = (sarbp_c64){sr, si};
    }
    const double scale = peak * peak * peak / a->S0;
    for (size_t j = 0; j < a->P; j++) {
        /* Im(exp(j phi) acc) */
        const double c = cos(phi[j]), s = sin(phi[j]);
        const double im = s * a->acc[j].re + c * a->acc[j].im;
        grad[j] = 4.0 * im * scale; /* d(-S/S0)/dphi_j */
    }
    return SARBP_OK;
}

/* ---- L-BFGS over the coefficients x of a basis: phi = B x (B: [P][n]) ---- */

struct stage {
    struct af *a;
    size_t n;
    const double *B;       /* [P][n] */
    double *phi, *gphi;    /* [P] scratch */
};

static void phases_of(const struct stage *s, const double *x, double *phi)
{
    for (size_t j = 0; j < s->a->P; j++) {
        double v = 0;
        for (size_t k = 0; k < s->n; k++) v += s->B[j * s->n + k] * x[k];
        phi[j] = v;
    }
}

/* f = -S / S0 at x (the image formed); g (may be NULL): its gradient. */
static sarbp_status eval(struct stage *s, const double *x, double *f, double *g)
{
    phases_of(s, x, s->phi);
    double S;
    SARBP_TRY(image_of(s->a, s->phi, &S));
    *f = -S;
    if (!g) return SARBP_OK;
    SARBP_TRY(gradient_of(s->a, s->phi, s->gphi));
    for (size_t k = 0; k < s->n; k++) {
        double v = 0;
        for (size_t j = 0; j < s->a->P; j++) v += s->B[j * s->n + k] * s->gphi[j];
        g[k] = v;
    }
    return SARBP_OK;
}

/* The largest phase change of a step dx. */
static double step_phase(const struct stage *s, const double *dx)
{
    double m = 0;
    for (size_t j = 0; j < s->a->P; j++) {
        double v = 0;
        for (size_t k = 0; k < s->n; k++) v += s->B[j * s->n + k] * dx[k];
        if (fabs(v) > m) m = fabs(v);
    }
    return m;
}

static sarbp_status lbfgs(struct stage *st, double *x, int stage_no, const sarbp_autofocus_options *o,
                          int *iters)
{
    const size_t n = st->n;
    const int maxit = o->iterations > 0 ? o->iterations : 40;
    const double tol = o->tol > 0 ? o->tol : 1e-4;
    double *mem = calloc((4 + 2 * LBFGS_M) * n + 2 * LBFGS_M, sizeof *mem);
    if (!mem) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    double *g = mem, *d = g + n, *xt = d + n, *gt = xt + n, *S = gt + n, *Y = S + LBFGS_M * n;
    double *rho = Y + LBFGS_M * n, *alpha = rho + LBFGS_M;
    int head = 0, have = 0;
    double f = 0;
    sarbp_status err = eval(st, x, &f, g);
    for (int it = 0; !err && it < maxit; it++) {
        /* the direction: two-loop recursion over the pairs kept */
        for (size_t i = 0; i < n; i++) d[i] = -g[i];
        for (int k = 0; k < have; k++) {
            const int m = (head - 1 - k + LBFGS_M) % LBFGS_M;
            double v = 0;
            for (size_t i = 0; i < n; i++) v += S[m * n + i] * d[i];
            alpha[m] = rho[m] * v;
            for (size_t i = 0; i < n; i++) d[i] -= alpha[m] * Y[m * n + i];
        }
        if (have) {
            const int m = (head - 1 + LBFGS_M) % LBFGS_M;
            double sy = 0, yy = 0;
            for (size_t i = 0; i < n; i++) {
                sy += S[m * n + i] * Y[m * n + i];
                yy += Y[m * n + i] * Y[m * n + i];
            }
            const double gam = yy > 0 ? sy / yy : 1;
            for (size_t i = 0; i < n; i++) d[i] *= gam;
        }
        for (int k = have - 1; k >= 0; k--) {
            const int m = (head - 1 - k + LBFGS_M) % LBFGS_M;
            double v = 0;
            for (size_t i = 0; i < n; i++) v += Y[m * n + i] * d[i];
            const double b = rho[m] * v;
            for (size_t i = 0; i < n; i++) d[i] += S[m * n + i] * (alpha[m] - b);
        }
        double dg = 0;
        for (size_t i = 0; i < n; i++) dg += d[i] * g[i];
        if (!(dg < 0)) { /* not a descent direction: start again from the gradient */
            have = 0;
            for (size_t i = 0; i < n; i++) d[i] = -g[i];
            dg = 0;
            for (size_t i = 0; i < n; i++) dg += d[i] * g[i];
            if (!(dg < 0)) break; /* a stationary point */
        }
        /* steps of at most 1 rad on any pulse: the sharpness is periodic */
        const double dmax = step_phase(st, d);
        double t = dmax > 1.0 ? 1.0 / dmax : 1.0;
        double ft = f;
        int ok = 0;
        for (int ls = 0; ls < 20 && !err; ls++, t *= 0.5) {
            for (size_t i = 0; i < n; i++) xt[i] = x[i] + t * d[i];
            err = eval(st, xt, &ft, NULL);
            if (!err && ft <= f + 1e-4 * t * dg) {
                ok = 1;
                break;
            }
        }
        if (err || !ok) break;
        err = gradient_of(st->a, st->phi, st->gphi); /* the image of xt is in a->img */
        if (err) break;
        for (size_t k = 0; k < n; k++) {
            double v = 0;
            for (size_t j = 0; j < st->a->P; j++) v += st->B[j * n + k] * st->gphi[j];
            gt[k] = v;
        }
        double sy = 0;
        for (size_t i = 0; i < n; i++) {
            S[head * n + i] = xt[i] - x[i];
            Y[head * n + i] = gt[i] - g[i];
            sy += S[head * n + i] * Y[head * n + i];
        }
        if (sy > 1e-300) {
            rho[head] = 1.0 / sy;
            head = (head + 1) % LBFGS_M;
            if (have < LBFGS_M) have++;
        }
        const double gain = (f - ft) / fabs(f);
        memcpy(x, xt, n * sizeof *x);
        memcpy(g, gt, n * sizeof *g);
        f = ft;
        (*iters)++;
        if (o->on_iteration) o->on_iteration(o->user, stage_no, it + 1, -f, t * dmax);
        if (gain < tol) break;
    }
    free(mem);
    return err;
}

/* The sharpness is many-peaked in a smooth error of several radians: a
 * quasi-Newton step from zero climbs the nearest peak. So the quadratic and
 * the cubic coefficients are first scanned, one after the other, over
 * +-SCAN_RAD in steps of SCAN_STEP (a residual of at most half a step
 * leaves the image focused enough for the climb), keeping the sharpest. */
#define SCAN_RAD 15.0
#define SCAN_STEP 3.0

static sarbp_status scan(struct stage *st, double *c, const sarbp_autofocus_options *o)
{
    double f0;
    SARBP_TRY(eval(st, c, &f0, NULL));
    for (size_t k = 0; k < 2 && k < st->n; k++) {
        double best = c[k], fbest = f0;
        for (double v = -SCAN_RAD; v <= SCAN_RAD + 1e-9; v += SCAN_STEP) {
            if (v == 0.0) continue;
            c[k] = v;
            double f;
            SARBP_TRY(eval(st, c, &f, NULL));
            if (f < fbest) {
                fbest = f;
                best = v;
            }
        }
        c[k] = best;
        f0 = fbest;
        if (o->on_iteration) o->on_iteration(o->user, 0, 0, -fbest, fabs(best));
    }
    return SARBP_OK;
}

/* The linear term of phases d[n] given modulo 2 pi (each within a turn of
 * zero): a least-squares line refitted to the residuals wrapped into
 * (-pi, pi], so that a phase that came out a turn away does not tilt it,
 * removed from d. */
static void detrend_wrapped(double *d, size_t n)
{
    if (n < 2) return;
    const double jm = 0.5 * (double)(n - 1);
    double sjj = 0, a = 0, b = 0;
    for (size_t j = 0; j < n; j++) sjj += ((double)j - jm) * ((double)j - jm);
    for (int it = 0; it < 8; it++) {
        double sr = 0, sjr = 0;
        for (size_t j = 0; j < n; j++) {
            const double r = remainder(d[j] - a - b * ((double)j - jm), 2.0 * M_PI);
            sr += r;
            sjr += ((double)j - jm) * r;
        }
        a += sr / (double)n;
        b += sjr / sjj;
    }
    for (size_t j = 0; j < n; j++) d[j] -= a + b * ((double)j - jm);
}

/* ---- coordinate ascent, pulse by pulse (Ash 2012) ----
 * With every other pulse held, the sharpness is a trigonometric polynomial
 * of degree 2 in the pulse's phase: with u the image without pulse j and
 * v = b_j, |u + e^{i phi} v|^4 = (a + 2 Re(e^{i phi} c))^2, a = |u|^2 + |v|^2,
 * c = conj(u) v, so
 *     S(phi) = K + Re(e^{i phi} C1) + Re(e^{2 i phi} C2),
 *     C1 = sum 4 a c,  C2 = sum 2 c^2,
 * whose maximum is found on a grid of angles and polished by Newton. One
 * sweep over the pulses costs about one reprojection and climbs out of the
 * shallow valleys a gradient method stops in. */
/* The best phase of S(phi) = Re(e^{i phi} C1) + Re(e^{2 i phi} C2) (and
 * a constant): the best of a grid of angles, refined by golden section. */
static double best_phase(sarbp_c64 C1, sarbp_c64 C2)
{
#define FVAL(p) (C1.re * cos(p) - C1.im * sin(p) + C2.re * cos(2 * (p)) - C2.im * sin(2 * (p)))
    double best = 0, fbest = -INFINITY;
    for (int k = 0; k < 64; k++) {
        const double p = 2.0 * M_PI * k / 64.0, f = FVAL(p);
        if (f > fbest) {
            fbest = f;
            best = p;
        }
    }
    /* golden-section refinement within a grid step either side */
    double lo = best - 2.0 * M_PI / 64.0, hi = best + 2.0 * M_PI / 64.0;
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = hi - gr * (hi - lo), x2 = lo + gr * (hi - lo), f1 = FVAL(x1), f2 = FVAL(x2);
    for (int it = 0; it < 30; it++) {
        if (f1 > f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - gr * (hi - lo);
            f1 = FVAL(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + gr * (hi - lo);
            f2 = FVAL(x2);
        }
    }
    const double m = 0.5 * (lo + hi);
    return FVAL(m) > fbest ? m : best;
#undef FVAL
}

/* Sweeps over the pulses until a sweep gains less than tol; img: the image
 * of phi, kept current in FP64. */
static sarbp_status sweeps(struct af *a, const double *smooth, double *phi, sarbp_c64 *img,
                           const sarbp_autofocus_options *o, int *iters)
{
    const int maxit = o->iterations > 0 ? o->iterations : 40;
    const double tol = o->tol > 0 ? o->tol : 1e-3;
    const sarbp_c32 *v = a->vbuf;
    double S_prev = 0;
    for (size_t i = 0; i < a->N; i++) {
        const double p = img[i].re * img[i].re + img[i].im * img[i].im;
        S_prev += p * p;
    }
    sarbp_status st = SARBP_OK;
    for (int it = 0; !st && it < maxit; it++) {
        double moved = 0;
        for (size_t j = 0; !st && j < a->P; j++) {
            st = pulse_image(a, j, a->vbuf);
            if (st) break;
            const double zr = cos(phi[j]), zi = sin(phi[j]);
            sarbp_c64 C1 = {0, 0}, C2 = {0, 0};
            for (size_t i = 0; i < a->N; i++) {
                const double vr = zr * v[i].re - zi * v[i].im, vi = zr * v[i].im + zi * v[i].re;
                const double ur = img[i].re - vr, ui = img[i].im - vi;
                const double aa = ur * ur + ui * ui + v[i].re * v[i].re + v[i].im * v[i].im;
                const double cr = ur * v[i].re + ui * v[i].im, ci = ur * v[i].im - ui * v[i].re;
                C1.re += 4 * aa * cr;
                C1.im += 4 * aa * ci;
                C2.re += 2 * (cr * cr - ci * ci);
                C2.im += 4 * cr * ci;
            }
            const double np = best_phase(C1, C2);
            const double dr = cos(np) - zr, di = sin(np) - zi;
            for (size_t i = 0; i < a->N; i++) {
                img[i].re += dr * v[i].re - di * v[i].im;
                img[i].im += dr * v[i].im + di * v[i].re;
            }
            const double d = fabs(remainder(np - phi[j], 2.0 * M_PI));
            if (d > moved) moved = d;
            /* the pulse's own part, a turn at most either side of the
             * smooth estimate it started from */
            phi[j] = smooth[j] + remainder(np - smooth[j], 2.0 * M_PI);
        }
        if (st) break;
        double S = 0;
        for (size_t i = 0; i < a->N; i++) {
            const double p = img[i].re * img[i].re + img[i].im * img[i].im;
            S += p * p;
        }
        (*iters)++;
        if (o->on_iteration) o->on_iteration(o->user, 2, it + 1, S / a->S0, moved);
        const double gain = (S - S_prev) / S_prev;
        S_prev = S;
        if (gain < tol) break;
    }
    return st;
}

/* Legendre polynomials of orders 2 .. order at the pulses, t in [-1, 1]. */
static double *legendre_basis(size_t P, int order)
{
    const size_t n = (size_t)(order - 1);
    double *B = malloc(P * n * sizeof *B);
    if (!B) return NULL;
    for (size_t j = 0; j < P; j++) {
        const double t = P > 1 ? 2.0 * (double)j / (double)(P - 1) - 1.0 : 0.0;
        double p0 = 1, p1 = t;
        for (int k = 2; k <= order; k++) {
            const double p2 = ((2.0 * k - 1.0) * t * p1 - (k - 1.0) * p0) / k;
            B[j * n + (size_t)(k - 2)] = p2;
            p0 = p1;
            p1 = p2;
        }
    }
    return B;
}

sarbp_status sarbp_autofocus_estimate(const sarbp_phd *phd, const sarbp_grid *g,
                                      const sarbp_rc_params *rc, const sarbp_autofocus_options *o,
                                      double *phase, sarbp_autofocus_info *info)
{
    sarbp_autofocus_options dflt;
    if (!o) {
        sarbp_autofocus_options_default(&dflt);
        o = &dflt;
    }
    if (info) memset(info, 0, sizeof *info);
    if (!phd || !phd->data) return sarbp_error(SARBP_ERR_INVALID, "autofocus needs the samples");
    SARBP_TRY(sarbp_grid_validate(g));
    SARBP_TRY(sarbp_phd_validate(phd));
    const int order = o->poly_order == 0 ? 6 : o->poly_order;
    if (order > 12 || (order < 2 && order != -1))
        return sarbp_error(SARBP_ERR_INVALID, "autofocus: polynomial order %d (2 to 12, or -1: none)",
                           o->poly_order);
    const size_t P = phd->npulses, N = g->nx * g->ny;
    struct af a = {.g = g, .P = P, .N = N, .threads = o->threads};
    sarbp_rc_plan *plan = NULL;
    double *B = NULL, *x = NULL, *phi = NULL, *gphi = NULL;
    sarbp_status st = sarbp_rc_plan_create(phd, rc, SARBP_FP32, P, &plan);
    const size_t nb = st ? 0 : sarbp_rc_plan_nbins(plan);
    if (!st) st = sarbp_profiles_alloc(P, nb, SARBP_FP32, &a.pr);
    if (!st) st = sarbp_profiles_alloc(P, nb, SARBP_FP32, &a.work);
    if (!st) st = sarbp_rc_execute(plan, 0, P, phd->data, a.pr);
    if (!st) {
        a.pr->interp = sarbp_rc_plan_interp(plan);
        /* the corrected copy shares the geometry */
        sarbp_profiles *w = a.work;
        w->npulses = P;
        w->interp = a.pr->interp;
        memcpy(w->pos, a.pr->pos, 3 * P * sizeof *w->pos);
        memcpy(w->r0, a.pr->r0, P * sizeof *w->r0);
        memcpy(w->rstart, a.pr->rstart, P * sizeof *w->rstart);
        memcpy(w->dr, a.pr->dr, P * sizeof *w->dr);
        memcpy(w->fref, a.pr->fref, P * sizeof *w->fref);
        a.img = malloc(N * sizeof *a.img);
        a.w = malloc(N * sizeof *a.w);
        a.acc = malloc(P * sizeof *a.acc);
        a.vbuf = malloc(N * sizeof *a.vbuf);
        phi = calloc(P, sizeof *phi);
        gphi = calloc(P, sizeof *gphi);
        x = calloc(P, sizeof *x);
        if (!a.img || !a.w || !a.acc || !a.vbuf || !phi || !gphi || !x)
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus (%zu pixels, %zu pulses)", N, P);
    }
    int iters = 0;
    double S = 0;
    if (!st) st = image_of(&a, phi, &S); /* S0 */
    if (!st && order >= 2) { /* the polynomial stage */
        B = legendre_basis(P, order);
        if (!B) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        struct stage sg = {&a, (size_t)(order - 1), B, phi, gphi};
        double c[11] = {0};
        if (!st) st = scan(&sg, c, o);
        if (!st) st = lbfgs(&sg, c, 0, o, &iters);
        if (!st) phases_of(&sg, c, x);
    }
    if (!st) { /* every pulse: coordinate ascent from the polynomial's phases */
        sarbp_phase_detrend(x, P);
        st = image_of(&a, x, &S);
        sarbp_c64 *img = st ? NULL : malloc(N * sizeof *img);
        if (!st && !img) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
        for (size_t i = 0; img && i < N; i++) img[i] = (sarbp_c64){a.img[i].re, a.img[i].im};
        double *smooth = st ? NULL : malloc(P * sizeof *smooth);
        if (!st && !smooth) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
        if (!st) {
            memcpy(smooth, x, P * sizeof *smooth);
            st = sweeps(&a, smooth, x, img, o, &iters);
        }
        if (!st) { /* x = smooth + its per-pulse part, each without a linear term */
            for (size_t j = 0; j < P; j++) x[j] -= smooth[j];
            detrend_wrapped(x, P);
            for (size_t j = 0; j < P; j++) x[j] += smooth[j];
        }
        free(smooth);
        free(img);
    }
    if (!st) {
        memcpy(phase, x, P * sizeof *phase);
        st = image_of(&a, x, &S);
    }
    if (!st && info) {
        info->iterations = iters;
        info->evaluations = a.evaluations;
        info->sharpness = S;
    }
    sarbp_rc_plan_free(plan);
    sarbp_profiles_free(a.pr);
    sarbp_profiles_free(a.work);
    free(a.img);
    free(a.w);
    free(a.acc);
    free(a.vbuf);
    free(B);
    free(x);
    free(phi);
    free(gphi);
    return st;
}
