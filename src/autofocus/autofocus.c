/* autofocus.c - phase (and range) errors per pulse from the data itself
 * (sarbp/autofocus.h): the pixels to estimate on, the estimators over an
 * engine (engine.h: every pulse's contribution to those pixels, kept), and
 * the corrections applied.
 *
 * The estimator: a scan of the quadratic and cubic coefficients; L-BFGS
 * with a backtracking line search over Legendre polynomials of the pulse
 * index; coordinate ascent over every pulse's phase, each solved exactly
 * with the others held. Sharpness and gradients are taken relative to the
 * uncorrected image's sharpness. PGA: the phase of the reprojection of the
 * image's conjugate, windowed about its brightest points. The range: the
 * phase read as a range at each pulse's reference frequency, applied to
 * the samples (exact over the band), and the phase estimated again. */
#include "sarbp/autofocus.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autofocus/engine.h"
#include "core/parallel.h"
#include "sarbp/backproject.h"
#include "sarbp/form.h"
#include "sarbp/host.h"

#define LBFGS_M 6

void sarbp_autofocus_options_default(sarbp_autofocus_options *o)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
}

sarbp_status sarbp_autofocus_apply(sarbp_phd *phd, const double *phase, const double *range)
{
    if (range && phd->domain != SARBP_DOMAIN_FREQ)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "autofocus: a range correction needs frequency-domain samples");
    sarbp_samples_rotate(phd->data, phd->npulses, phd->nsamples, phd->f0, phd->df, phase, range);
    return SARBP_OK;
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

/* ---- the image, its sharpness and the gradient, over an engine ---- */

struct af {
    af_engine *e;
    int half;              /* 0: all the pixels; 1, 2: the halves of the check */
    size_t P;
    sarbp_c64 *acc;        /* [P] */
    double S0;             /* the uncorrected image's sharpness */
    int evaluations;
};

/* The image for phases phi (the engine's last); its sharpness over S0 (S0 0: sets it). */
static sarbp_status image_of(struct af *a, const double *phi, double *S)
{
    double sum;
    SARBP_TRY(a->e->ops->image(a->e, phi, &sum));
    if (a->S0 == 0) a->S0 = sum > 0 ? sum : 1;
    *S = sum / a->S0;
    a->evaluations++;
    return SARBP_OK;
}

/* The gradient of -S / S0 over phi at the engine's last image (phi's):
 *     dS/dphi_j = -4 Im( exp(j phi_j) sum_x |I|^2 conj(I) b_j ). */
static sarbp_status gradient_of(struct af *a, const double *phi, double *grad)
{
    SARBP_TRY(a->e->ops->reproject(a->e, AF_WEIGHT_SHARPNESS, NULL, a->acc));
    for (size_t j = 0; j < a->P; j++) {
        const double c = cos(phi[j]), s = sin(phi[j]);
        grad[j] = 4.0 * (s * a->acc[j].re + c * a->acc[j].im) / a->S0;
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
        if (o->on_iteration) o->on_iteration(o->user, st->a->half, stage_no, it + 1, -f, t * dmax);
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
        if (o->on_iteration) o->on_iteration(o->user, st->a->half, 0, 0, -fbest, fabs(best));
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

/* Phases x[n] given modulo 2 pi made continuous over the pulses: a
 * smoothed copy (the phase of the mean of exp(j x) over 17 pulses, whose
 * steps from pulse to pulse are small for any error an image survives)
 * is unwrapped step by step, and each pulse put within half a turn of it.
 * Pulse-to-pulse noise of a radian or more would make a plain unwrap jump
 * a turn now and then; the smoothed copy does not. The image is unchanged
 * (each phase moves by whole turns); a range read from the phases needs
 * them continuous. */
#define UNWRAP_HALF 8

static sarbp_status unwrap_smooth(double *x, size_t n)
{
    if (n < 2) return SARBP_OK;
    double *s = malloc(n * sizeof *s);
    if (!s) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    for (size_t j = 0; j < n; j++) {
        double re = 0, im = 0;
        const size_t lo = j > UNWRAP_HALF ? j - UNWRAP_HALF : 0, hi = j + UNWRAP_HALF < n ? j + UNWRAP_HALF : n - 1;
        for (size_t i = lo; i <= hi; i++) re += cos(x[i]), im += sin(x[i]);
        s[j] = atan2(im, re);
        if (j > 0) s[j] = s[j - 1] + remainder(s[j] - s[j - 1], 2.0 * M_PI);
    }
    /* the smoothed curve starts within half a turn of the first phase */
    const double shift = x[0] - remainder(x[0] - s[0], 2.0 * M_PI) - s[0];
    for (size_t j = 0; j < n; j++) x[j] = s[j] + shift + remainder(x[j] - s[j] - shift, 2.0 * M_PI);
    free(s);
    return SARBP_OK;
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
double af_best_phase(sarbp_c64 C1, sarbp_c64 C2)
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

/* Sweeps over the pulses from the engine's last image (phi's) until a
 * sweep gains less than tol; each pulse kept within half a turn of smooth. */
static sarbp_status sweeps(struct af *a, const double *smooth, double *phi, double S_prev, int stage_no,
                           const sarbp_autofocus_options *o, int max_sweeps, int *iters, double *S_out)
{
    int maxit = o->iterations > 0 ? o->iterations : 40;
    if (max_sweeps > 0 && max_sweeps < maxit) maxit = max_sweeps;
    const double tol = o->tol > 0 ? o->tol : 1e-3;
    for (int it = 0; it < maxit; it++) {
        double S, moved;
        SARBP_TRY(a->e->ops->sweep(a->e, phi, smooth, &S, &moved));
        S /= a->S0;
        (*iters)++;
        if (o->on_iteration) o->on_iteration(o->user, a->half, stage_no, it + 1, S, moved);
        const double gain = (S - S_prev) / S_prev;
        S_prev = S;
        if (gain < tol) break;
    }
    *S_out = S_prev;
    return SARBP_OK;
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

/* The polynomial stage over the engine of a (with a scan first when
 * scan_first): x[P], without a constant and a linear term. */
static sarbp_status poly_stage(struct af *a, int order, int scan_first, const sarbp_autofocus_options *o,
                               double *x, int *iters)
{
    const size_t P = a->P;
    memset(x, 0, P * sizeof *x);
    if (order < 2) return SARBP_OK;
    double *phi = calloc(P, sizeof *phi), *gphi = calloc(P, sizeof *gphi), *B = legendre_basis(P, order);
    sarbp_status st = !phi || !gphi || !B ? sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus") : SARBP_OK;
    if (!st) {
        struct stage sg = {a, (size_t)(order - 1), B, phi, gphi};
        double c[11] = {0};
        if (scan_first) st = scan(&sg, c, o);
        if (!st) st = lbfgs(&sg, c, 0, o, iters);
        if (!st) phases_of(&sg, c, x);
    }
    if (!st) sarbp_phase_detrend(x, P);
    free(B);
    free(phi);
    free(gphi);
    return st;
}

/* Coordinate ascent over every pulse from x[P] (at most max_sweeps
 * sweeps, 0: o's), each pulse kept within half a turn of where it
 * started; x = the start plus what the sweeps moved, without a linear
 * term; *S the sharpness. */
static sarbp_status sweep_stage(struct af *a, const sarbp_autofocus_options *o, int max_sweeps, double *x,
                                int *iters, double *S)
{
    const size_t P = a->P;
    double *start = malloc(P * sizeof *start);
    if (!start) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    memcpy(start, x, P * sizeof *start);
    sarbp_status st = image_of(a, x, S);
    if (!st) st = sweeps(a, start, x, *S, 2, o, max_sweeps, iters, S);
    if (!st) {
        for (size_t j = 0; j < P; j++) x[j] -= start[j];
        detrend_wrapped(x, P);
        for (size_t j = 0; j < P; j++) x[j] += start[j];
    }
    free(start);
    return st;
}

/* The estimator over the engine of a: the polynomial stage, then the
 * sweeps; x[P] the estimate. */
static sarbp_status run_estimator(struct af *a, int order, int scan_first, const sarbp_autofocus_options *o,
                                  double *x, int *iters, double *S)
{
    SARBP_TRY(poly_stage(a, order, scan_first, o, x, iters));
    return sweep_stage(a, o, 0, x, iters, S);
}

/* ---- phase gradient autofocus ----
 * Classic PGA centres each range line's brightest point, windows it, and
 * reads the point's phase history from the line's azimuth spectrum; the
 * pulse-to-pulse phase differences, summed over the points (weighted by
 * their energy), integrate to the error. A backprojected image on a ground
 * grid has no azimuth axis to transform along; the same history is the
 * windowed image projected onto each pulse's own pattern about the point:
 * pulse j adds to a pixel x near the point t its value times
 *     exp(+j 4 pi fref_j (|a_j - x| - |a_j - t|) / c),
 * so the windowed image times the conjugate of that, summed over the
 * window, is (for a window wide enough to hold the point's blur) the
 * pulse's contribution to the point: its reflectivity times
 * exp(j (phi_j - e_j)), the residual error. The windows start at an
 * eighth of the smallest estimation window's side and halve every
 * iteration down to 5 x 5 pixels. */
#define PGA_MIN_HALF 2   /* the narrowest window: 5 x 5 pixels */
#define PGA_MAX_POINTS 64
#define PGA_DYNAMIC 0.1f /* points at most 20 dB below the brightest */

struct peak {
    float mag;
    size_t m;
};

static int peak_cmp(const void *pa, const void *pb)
{
    const struct peak *a = pa, *b = pb;
    return a->mag < b->mag ? 1 : a->mag > b->mag ? -1 : (a->m > b->m) - (a->m < b->m);
}

struct pga {
    const af_pixels *px;
    const sarbp_c32 *img;      /* [M] */
    size_t P;
    const double *pos, *fref;  /* the pulses' */
    size_t h;                  /* the windows' half width */
    size_t npts;
    size_t pt[PGA_MAX_POINTS]; /* the points' pixels */
    sarbp_c64 *G;              /* [npts][P] */
};

/* Pixel m's window, column and row in it, and its offset. */
static void pixel_at(const af_pixels *px, size_t m, size_t *w, size_t *ix, size_t *iy, size_t *off)
{
    size_t k = 0, o = 0;
    while (m >= o + px->win[k].nx * px->win[k].ny) o += px->win[k].nx * px->win[k].ny, k++;
    *w = k;
    *off = o;
    *ix = (m - o) % px->win[k].nx;
    *iy = (m - o) / px->win[k].nx;
}

/* The brightest points, no two within 2 h + 1 pixels of each other (nor
 * in another's square), at most one per 32 x 32 pixels and PGA_MAX_POINTS. */
static sarbp_status pga_points(struct pga *pg)
{
    const af_pixels *px = pg->px;
    const size_t M = px->M, h = pg->h;
    size_t want = M / 1024;
    if (want < 4) want = 4;
    if (want > PGA_MAX_POINTS) want = PGA_MAX_POINTS;
    struct peak *pk = malloc(M * sizeof *pk);
    unsigned char *taken = calloc(M, 1);
    if (!pk || !taken) {
        free(pk);
        free(taken);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    }
    for (size_t m = 0; m < M; m++) pk[m] = (struct peak){hypotf(pg->img[m].re, pg->img[m].im), m};
    qsort(pk, M, sizeof *pk, peak_cmp);
    pg->npts = 0;
    /* points within PGA_DYNAMIC of the brightest: weaker ones are mostly clutter */
    const float floor_mag = M ? pk[0].mag * PGA_DYNAMIC : 0;
    for (size_t k = 0; k < M && pg->npts < want && pk[k].mag > 0 && pk[k].mag >= floor_mag; k++) {
        const size_t m = pk[k].m;
        if (taken[m]) continue;
        size_t w, ix, iy, off;
        pixel_at(px, m, &w, &ix, &iy, &off);
        const sarbp_autofocus_window *wi = &px->win[w];
        const size_t r = 2 * h + 1;
        for (size_t y = iy > r ? iy - r : 0; y <= iy + r && y < wi->ny; y++)
            for (size_t x = ix > r ? ix - r : 0; x <= ix + r && x < wi->nx; x++) taken[off + y * wi->nx + x] = 1;
        pg->pt[pg->npts++] = m;
    }
    free(taken);
    free(pk);
    return SARBP_OK;
}

/* Point k's history: G[k][j] = sum over its square of I(x) exp(-j 4 pi
 * fref_j (|a_j - x| - |a_j - t|) / c). */
static void pga_history(void *vctx, size_t k, int worker)
{
    (void)worker;
    const struct pga *pg = vctx;
    const af_pixels *px = pg->px;
    const sarbp_grid *g = px->g;
    size_t w, ix, iy, off;
    pixel_at(px, pg->pt[k], &w, &ix, &iy, &off);
    const sarbp_autofocus_window *wi = &px->win[w];
    const size_t h = pg->h;
    const size_t x0 = ix > h ? ix - h : 0, x1 = ix + h < wi->nx ? ix + h : wi->nx - 1;
    const size_t y0 = iy > h ? iy - h : 0, y1 = iy + h < wi->ny ? iy + h : wi->ny - 1;
    const double tx = sarbp_grid_x(g, wi->x0 + ix), ty = sarbp_grid_y(g, wi->y0 + iy);
    const double tz = sarbp_grid_z(g, wi->x0 + ix, wi->y0 + iy);
    for (size_t j = 0; j < pg->P; j++) {
        const double *a = pg->pos + 3 * j, kph = 4.0 * M_PI * pg->fref[j] / SARBP_C;
        const double rt = sqrt((tx - a[0]) * (tx - a[0]) + (ty - a[1]) * (ty - a[1]) + (tz - a[2]) * (tz - a[2]));
        double sr = 0, si = 0;
        for (size_t y = y0; y <= y1; y++) {
            const double py = sarbp_grid_y(g, wi->y0 + y) - a[1];
            for (size_t x = x0; x <= x1; x++) {
                const double pxx = sarbp_grid_x(g, wi->x0 + x) - a[0];
                const double pz = sarbp_grid_z(g, wi->x0 + x, wi->y0 + y) - a[2];
                const double ph = kph * (sqrt(pxx * pxx + py * py + pz * pz) - rt);
                const sarbp_c32 v = pg->img[off + y * wi->nx + x];
                const double c = cos(ph), s = sin(ph);
                sr += v.re * c + v.im * s;
                si += v.im * c - v.re * s;
            }
        }
        pg->G[k * pg->P + j] = (sarbp_c64){sr, si};
    }
}

static sarbp_status run_pga(struct af *a, const af_pixels *px, const double *pos, const double *fref,
                            const sarbp_autofocus_options *o, double *x, int *iters, double *S)
{
    const size_t P = a->P, M = px->M;
    const int maxit = o->iterations > 0 ? o->iterations : 20;
    const double tol = o->tol > 0 ? o->tol : 0.01;
    sarbp_c32 *img = malloc(M * sizeof *img);
    double *r = malloc(P * sizeof *r);
    struct pga pg = {.px = px, .img = img, .P = P, .pos = pos, .fref = fref};
    pg.G = malloc(PGA_MAX_POINTS * P * sizeof *pg.G);
    sarbp_status st = SARBP_OK;
    if (!img || !r || !pg.G) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    size_t side = SIZE_MAX;
    for (size_t w = 0; w < px->nwin; w++) {
        if (px->win[w].nx < side) side = px->win[w].nx;
        if (px->win[w].ny < side) side = px->win[w].ny;
    }
    pg.h = side / 8 > PGA_MIN_HALF ? side / 8 : PGA_MIN_HALF;
    /* the sharpest estimate is kept, no correction the first: PGA's own
     * noise (clutter in the windows) must not blur a focused image */
    double *best = malloc(P * sizeof *best), Sbest;
    if (!st && !best) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    memset(x, 0, P * sizeof *x);
    if (!st) st = image_of(a, x, S);
    if (!st) {
        memcpy(best, x, P * sizeof *best);
        Sbest = *S;
    }
    for (int it = 0; !st && it < maxit; it++) {
        st = a->e->ops->read_image(a->e, img);
        if (!st) st = pga_points(&pg);
        if (!st) st = sarbp_parallel_for(o->threads, pg.npts, pga_history, &pg);
        if (st) break;
        /* the pulse-to-pulse differences summed over the points, integrated */
        r[0] = 0;
        for (size_t j = 1; j < P; j++) {
            double dr = 0, di = 0;
            for (size_t k = 0; k < pg.npts; k++) {
                const sarbp_c64 u = pg.G[k * P + j], v = pg.G[k * P + j - 1];
                dr += u.re * v.re + u.im * v.im;
                di += u.im * v.re - u.re * v.im;
            }
            r[j] = r[j - 1] + atan2(di, dr);
        }
        sarbp_phase_detrend(r, P);
        double moved = 0;
        for (size_t j = 0; j < P; j++) {
            x[j] -= r[j];
            if (fabs(r[j]) > moved) moved = fabs(r[j]);
        }
        st = image_of(a, x, S);
        if (!st && *S > Sbest) {
            memcpy(best, x, P * sizeof *best);
            Sbest = *S;
        }
        (*iters)++;
        if (o->on_iteration) o->on_iteration(o->user, a->half, 3, it + 1, *S, moved);
        if (moved < tol && pg.h == PGA_MIN_HALF) break;
        if (pg.h > PGA_MIN_HALF) pg.h = pg.h / 2 > PGA_MIN_HALF ? pg.h / 2 : PGA_MIN_HALF;
    }
    if (!st) {
        memcpy(x, best, P * sizeof *x);
        *S = Sbest;
    }
    free(best);
    free(img);
    free(r);
    free(pg.G);
    return st;
}

/* ---- the pixels estimated on ---- */

#define AUTO_SIDE 64

struct block {
    double score;
    size_t x0, y0;
};

static int block_cmp(const void *pa, const void *pb)
{
    const struct block *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    return a->y0 != b->y0 ? (a->y0 > b->y0) - (a->y0 < b->y0) : (a->x0 > b->x0) - (a->x0 < b->x0);
}

/* The uncorrected image of the whole grid, on the CPU or the device. */
static sarbp_status whole_image(const sarbp_phd *phd, const sarbp_grid *g, const sarbp_rc_params *rc,
                                const sarbp_profiles *pr, const sarbp_autofocus_options *o, sarbp_c32 *img)
{
    if (o->device < 0) {
        memset(img, 0, g->nx * g->ny * sizeof *img);
        return sarbp_bp_cpu_fp32(pr, g, o->threads, img);
    }
    sarbp_bp_options bo;
    sarbp_bp_options_default(&bo);
    bo.device = o->device;
    sarbp_image *im = NULL;
    SARBP_TRY(sarbp_form_phd(o->session, phd, g, &sarbp_backend_cuda, rc, &bo, NULL, &im, NULL));
    memcpy(img, im->data, g->nx * g->ny * sizeof *img);
    sarbp_image_free(im);
    return SARBP_OK;
}

/* The windows: the caller's (checked), the whole grid when it fits
 * max_bytes, else the AUTO_SIDE^2 blocks where the uncorrected image is
 * sharpest (sum |I|^4), as many as fit, in the grid's order. *win is the
 * caller's or allocated (*owned). */
static sarbp_status choose_windows(const sarbp_phd *phd, const sarbp_grid *g, const sarbp_rc_params *rc,
                                   const sarbp_profiles *pr, const sarbp_autofocus_options *o,
                                   af_pixels *px, sarbp_autofocus_window **owned)
{
    *owned = NULL;
    px->g = g;
    const size_t P = phd->npulses;
    if (o->nwindows) {
        if (!o->windows) return sarbp_error(SARBP_ERR_INVALID, "autofocus: %zu windows but none given", o->nwindows);
        px->win = o->windows;
        px->nwin = o->nwindows;
        px->M = 0;
        for (size_t w = 0; w < o->nwindows; w++) {
            const sarbp_autofocus_window *wi = &o->windows[w];
            if (wi->nx == 0 || wi->ny == 0 || wi->x0 >= g->nx || wi->nx > g->nx - wi->x0 || wi->y0 >= g->ny ||
                wi->ny > g->ny - wi->y0)
                return sarbp_error(SARBP_ERR_INVALID,
                                   "autofocus window %zu (%zu x %zu pixels at %zu, %zu) is not inside the "
                                   "%zu x %zu grid", w + 1, wi->nx, wi->ny, wi->x0, wi->y0, g->nx, g->ny);
            px->M += wi->nx * wi->ny;
        }
        return SARBP_OK;
    }
    const size_t budget = o->max_bytes ? o->max_bytes : o->device < 0 ? (size_t)1 << 30 : (size_t)4 << 30;
    const size_t maxpix = budget / (8 * P);
    const size_t N = g->nx * g->ny;
    if (N <= maxpix) {
        sarbp_autofocus_window *w = malloc(sizeof *w);
        if (!w) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
        *w = (sarbp_autofocus_window){0, 0, g->nx, g->ny};
        *owned = w;
        *px = (af_pixels){g, w, 1, N};
        return SARBP_OK;
    }
    const size_t side = AUTO_SIDE, bx = (g->nx + side - 1) / side, by = (g->ny + side - 1) / side;
    if (maxpix < side * side)
        return sarbp_error(SARBP_ERR_NOMEM,
                           "autofocus: %zu pulses leave room for %zu pixels in %zu MiB, fewer than one "
                           "window of %zu x %zu", P, maxpix, budget >> 20, side, side);
    sarbp_c32 *img = malloc(N * sizeof *img);
    struct block *bl = calloc(bx * by, sizeof *bl);
    sarbp_status st = (!img || !bl) ? sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus") : SARBP_OK;
    if (!st) st = whole_image(phd, g, rc, pr, o, img);
    for (size_t i = 0; !st && i < by * bx; i++) {
        struct block *b = &bl[i];
        b->x0 = (i % bx) * side;
        b->y0 = (i / bx) * side;
        for (size_t y = b->y0; y < b->y0 + side && y < g->ny; y++)
            for (size_t x = b->x0; x < b->x0 + side && x < g->nx; x++) {
                const double p = (double)img[y * g->nx + x].re * img[y * g->nx + x].re +
                                 (double)img[y * g->nx + x].im * img[y * g->nx + x].im;
                b->score += p * p;
            }
    }
    sarbp_autofocus_window *w = NULL;
    size_t nw = 0, M = 0;
    if (!st) {
        qsort(bl, bx * by, sizeof *bl, block_cmp);
        w = malloc(bx * by * sizeof *w);
        if (!w) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
        for (size_t i = 0; !st && i < bx * by; i++) {
            const size_t nx = g->nx - bl[i].x0 < side ? g->nx - bl[i].x0 : side;
            const size_t ny = g->ny - bl[i].y0 < side ? g->ny - bl[i].y0 : side;
            if (M + nx * ny > maxpix) break;
            w[nw++] = (sarbp_autofocus_window){bl[i].x0, bl[i].y0, nx, ny};
            M += nx * ny;
        }
    }
    free(img);
    free(bl);
    if (st) {
        free(w);
        return st;
    }
    *owned = w;
    *px = (af_pixels){g, w, nw, M};
    return SARBP_OK;
}

/* ---- the estimate ---- */

static sarbp_status engine_for(const sarbp_profiles *pr, const af_pixels *px, const sarbp_autofocus_options *o,
                               af_engine **e)
{
    return o->device < 0 ? af_engine_cpu_create(pr, px, o->threads, e)
                         : af_engine_cuda_create(pr, px, o->device, e);
}

/* The FP32 profiles of phd (all its pulses), blocks of pulses compressed
 * on threads, each with a plan of its own (a plan holds its work buffers). */
struct rc_ctx {
    const sarbp_phd *phd;
    sarbp_rc_plan **plan;
    sarbp_profiles *pr;
    size_t block;
    sarbp_status *st;
};

static void rc_block(void *vctx, size_t t, int worker)
{
    (void)worker;
    const struct rc_ctx *c = vctx;
    const size_t p0 = t * c->block, n = c->phd->npulses - p0 < c->block ? c->phd->npulses - p0 : c->block;
    sarbp_profiles view = sarbp_profiles_slice(c->pr, p0, n);
    c->st[t] = sarbp_rc_execute(c->plan[t], p0, n, c->phd->data + p0 * c->phd->nsamples, &view);
}

static sarbp_status profiles_of(const sarbp_phd *phd, const sarbp_rc_params *rc, int threads,
                                sarbp_profiles **out)
{
    const size_t P = phd->npulses;
    if (threads <= 0) threads = sarbp_cpu_count();
    size_t nt = (size_t)threads;
    if (nt > 64) nt = 64;
    if (nt > (P + 63) / 64) nt = (P + 63) / 64; /* at least 64 pulses a thread */
    const size_t block = (P + nt - 1) / nt;
    nt = (P + block - 1) / block;
    sarbp_rc_plan *plan[64] = {NULL};
    sarbp_status pst[64] = {SARBP_OK};
    sarbp_profiles *pr = NULL;
    sarbp_status st = SARBP_OK;
    for (size_t t = 0; !st && t < nt; t++) st = sarbp_rc_plan_create(phd, rc, SARBP_FP32, block, &plan[t]);
    if (!st) st = sarbp_profiles_alloc(P, sarbp_rc_plan_nbins(plan[0]), SARBP_FP32, &pr);
    if (!st) {
        struct rc_ctx c = {phd, plan, pr, block, pst};
        st = sarbp_parallel_for((int)nt, nt, rc_block, &c);
        for (size_t t = 0; !st && t < nt; t++) st = pst[t];
    }
    if (!st) {
        pr->npulses = P;
        pr->interp = sarbp_rc_plan_interp(plan[0]);
    }
    for (size_t t = 0; t < nt; t++) sarbp_rc_plan_free(plan[t]);
    if (st) {
        sarbp_profiles_free(pr);
        return st;
    }
    *out = pr;
    return SARBP_OK;
}

/* The pixels px cut in two for the estimator's check: every other window
 * (in the grid's order, so the halves interleave), or the one window's
 * left and right halves (top and bottom when it is one column wide); the
 * windows into w[] (px->nwin + 1 of them). 0 when they cannot be cut. */
static int split_pixels(const af_pixels *px, sarbp_autofocus_window *w, af_pixels half[2])
{
    size_t n[2] = {0, 0}, M[2] = {0, 0};
    if (px->nwin >= 2) {
        for (size_t k = 0; k < px->nwin; k++) /* half 0 first: w[0 .. n0) */
            if (k % 2 == 0) w[n[0]++] = px->win[k];
        for (size_t k = 1; k < px->nwin; k += 2) w[n[0] + n[1]++] = px->win[k];
    } else {
        const sarbp_autofocus_window v = px->win[0];
        if (v.nx >= 2) {
            w[0] = (sarbp_autofocus_window){v.x0, v.y0, v.nx / 2, v.ny};
            w[1] = (sarbp_autofocus_window){v.x0 + v.nx / 2, v.y0, v.nx - v.nx / 2, v.ny};
        } else if (v.ny >= 2) {
            w[0] = (sarbp_autofocus_window){v.x0, v.y0, v.nx, v.ny / 2};
            w[1] = (sarbp_autofocus_window){v.x0, v.y0 + v.ny / 2, v.nx, v.ny - v.ny / 2};
        } else {
            return 0;
        }
        n[0] = n[1] = 1;
    }
    for (size_t k = 0; k < n[0] + n[1]; k++) M[k >= n[0]] += w[k].nx * w[k].ny;
    half[0] = (af_pixels){px->g, w, n[0], M[0]};
    half[1] = (af_pixels){px->g, w + n[0], n[1], M[1]};
    return 1;
}

/* Sweeps on a half at most: the check needs to see whether a correction
 * holds where it was not fitted, not its last digits (refine_all makes
 * those); on a GPU a sweep costs a grid barrier per pulse, whatever the
 * pixels. */
#define HALF_SWEEPS 2

/* Each half's estimate xh[h * P ..] on the other half, relative to its
 * uncorrected image: held[h]. */
static sarbp_status held_out(struct af a[2], const double *xh, double held[2])
{
    for (int h = 0; h < 2; h++) SARBP_TRY(image_of(&a[1 - h], xh + h * a[0].P, &held[h]));
    return SARBP_OK;
}

/* The estimator on two halves of the pixels, each over its own engine
 * (a[0], a[1], their uncorrected sharpness set), checked on each other:
 * first the halves' polynomials, and, when those do not hold on the
 * other half, their sweeps over the pulses (white noise has no smooth
 * part). x[P] the halves' mean (*kept 1) once each sharpens the other
 * half by at least min_gain (o), else zero (*kept 0). */
static sarbp_status run_checked(struct af a[2], int order, int scan_first, const sarbp_autofocus_options *o,
                                double *x, int *iters, sarbp_autofocus_info *info, int *kept)
{
    const size_t P = a[0].P;
    const double min_gain = o->min_gain > 0 ? o->min_gain : o->min_gain < 0 ? -INFINITY : 0.01;
    double *xh = malloc(2 * P * sizeof *xh), held[2], Sh;
    if (!xh) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    sarbp_status st = SARBP_OK;
    for (int h = 0; h < 2 && !st; h++) st = poly_stage(&a[h], order, scan_first, o, xh + h * P, iters);
    if (!st) st = held_out(a, xh, held);
    int keep = !st && held[0] >= 1.0 + min_gain && held[1] >= 1.0 + min_gain;
    if (!st && !keep) { /* no smooth error that holds: the pulses one by one */
        for (int h = 0; h < 2 && !st; h++) {
            st = sweep_stage(&a[h], o, HALF_SWEEPS, xh + h * P, iters, &Sh);
            if (!st) st = unwrap_smooth(xh + h * P, P);
            if (!st) sarbp_phase_detrend(xh + h * P, P);
        }
        if (!st) st = held_out(a, xh, held);
        keep = !st && held[0] >= 1.0 + min_gain && held[1] >= 1.0 + min_gain;
    }
    if (!st) {
        *kept = keep;
        /* the mean of the two as phases (each pulse's second within half a turn of its first) */
        for (size_t j = 0; j < P; j++)
            x[j] = keep ? xh[j] + 0.5 * remainder(xh[P + j] - xh[j], 2.0 * M_PI) : 0.0;
        if (o->min_gain >= 0) { /* checked: what it found (else an earlier check's stays) */
            info->checked = 1;
            info->held_out[0] = held[0];
            info->held_out[1] = held[1];
            info->rejected = !keep;
        }
    }
    if (!st) st = unwrap_smooth(x, P);
    if (!st) sarbp_phase_detrend(x, P);
    free(xh);
    return st;
}

/* x[P], the halves' mean, refined over all the pixels px together: a
 * half's estimate fits half the pixels' speckle, and the mean of two
 * such fits is not the optimum of all of them (on Gotcha at 512^2 a
 * random walk came out 0.07 rad rms from it). Sweeps from x, each pulse
 * kept within half a turn of it; *S over px, relative to its uncorrected
 * image's. */
static sarbp_status refine_all(const sarbp_profiles *pr, const af_pixels *px, const sarbp_autofocus_options *o,
                               sarbp_c64 *acc, double *x, int *iters, double *S, sarbp_autofocus_info *info)
{
    const size_t P = pr->npulses;
    af_engine *e = NULL;
    double *zero = calloc(P, sizeof *zero), S0;
    sarbp_status st = !zero ? sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus") : SARBP_OK;
    const double t = sarbp_now_s();
    if (!st) st = engine_for(pr, px, o, &e);
    info->contributions_s += sarbp_now_s() - t;
    struct af all = {.e = e, .P = P, .acc = acc};
    if (!st) st = image_of(&all, zero, &S0); /* its S0 */
    if (!st) st = sweep_stage(&all, o, 0, x, iters, S);
    if (!st) st = unwrap_smooth(x, P);
    if (!st) sarbp_phase_detrend(x, P);
    if (!st) st = image_of(&all, x, S);
    info->evaluations += all.evaluations;
    if (e) e->ops->destroy(e);
    free(zero);
    return st;
}

/* One method over the pulses of phd: x[P]; scan_first for the estimator.
 * The pixels px are chosen here when px->win is NULL (into *owned, the
 * caller's to free), else those given are estimated on again. The
 * estimator runs on two halves of them, checked on each other (run_checked),
 * when they can be cut in two; PGA on them all. */
static sarbp_status estimate_once(const sarbp_phd *phd, const sarbp_grid *g, const sarbp_rc_params *rc,
                                  const sarbp_autofocus_options *o, int order, int scan_first, double *x,
                                  sarbp_autofocus_info *info, double *fref_out, af_pixels *pxp,
                                  sarbp_autofocus_window **owned)
{
    sarbp_profiles *pr = NULL;
    af_engine *e[2] = {NULL, NULL};
    af_pixels px = *pxp, half[2];
    const size_t P = phd->npulses;
    struct af a[2] = {{.P = P}, {.P = P}};
    sarbp_autofocus_window *hw = NULL;
    double t = sarbp_now_s();
    sarbp_status st = profiles_of(phd, rc, o->threads, &pr);
    info->profiles_s += sarbp_now_s() - t;
    t = sarbp_now_s();
    if (!st && !px.win) st = choose_windows(phd, g, rc, pr, o, &px, owned);
    if (!st) *pxp = px;
    info->windows_s += sarbp_now_s() - t;
    int split = 0;
    if (!st && o->method == SARBP_AF_ESTIMATE) {
        if (!(hw = malloc((px.nwin + 1) * sizeof *hw))) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        else split = split_pixels(&px, hw, half);
    }
    t = sarbp_now_s();
    for (int h = 0; h < 1 + split && !st; h++) {
        st = engine_for(pr, split ? &half[h] : &px, o, &e[h]);
        a[h].e = e[h];
        a[h].half = split ? h + 1 : 0;
    }
    info->contributions_s += sarbp_now_s() - t;
    if (!st && fref_out) memcpy(fref_out, pr->fref, P * sizeof *fref_out);
    double *geo = st ? NULL : malloc(4 * P * sizeof *geo); /* PGA's: pos, fref */
    if (!st && !geo) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    if (!st) {
        memcpy(geo, pr->pos, 3 * P * sizeof *geo);
        memcpy(geo + 3 * P, pr->fref, P * sizeof *geo);
    }
    for (int h = 0; h < 1 + split && !st; h++)
        if (!(a[h].acc = malloc(P * sizeof *a[h].acc))) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    double S = 0;
    int iters = 0;
    memset(x, 0, P * sizeof *x);
    for (int h = 0; h < 1 + split && !st; h++) st = image_of(&a[h], x, &S); /* S0 */
    if (!st && split) {
        int kept = 0;
        st = run_checked(a, order, scan_first, o, x, &iters, info, &kept);
        S = 1.0; /* nothing applied: the uncorrected image */
        if (!st && kept) { /* the halves' engines give their memory to one over all the pixels */
            for (int h = 0; h < 2; h++) {
                e[h]->ops->destroy(e[h]);
                e[h] = NULL;
            }
            info->evaluations += a[0].evaluations + a[1].evaluations;
            a[0].evaluations = a[1].evaluations = 0;
            st = refine_all(pr, &px, o, a[0].acc, x, &iters, &S, info);
        }
    } else if (!st) {
        st = o->method == SARBP_AF_PGA ? run_pga(&a[0], &px, geo, geo + 3 * P, o, x, &iters, &S)
                                       : run_estimator(&a[0], order, scan_first, o, x, &iters, &S);
        if (!st) st = unwrap_smooth(x, P);
        if (!st) sarbp_phase_detrend(x, P);
        if (!st) st = image_of(&a[0], x, &S);
    }
    if (!st) {
        info->iterations += iters;
        info->evaluations += a[0].evaluations + a[1].evaluations;
        info->sharpness = S;
        info->pixels = px.M;
        info->nwindows = px.nwin;
    }
    for (int h = 0; h < 2; h++) {
        if (e[h]) e[h]->ops->destroy(e[h]);
        free(a[h].acc);
    }
    sarbp_profiles_free(pr);
    free(hw);
    free(geo);
    return st;
}

sarbp_status sarbp_autofocus_estimate(const sarbp_phd *phd, const sarbp_grid *g,
                                      const sarbp_rc_params *rc, const sarbp_autofocus_options *o,
                                      double *phase, double *range, sarbp_autofocus_info *info)
{
    sarbp_autofocus_options dflt;
    if (!o) {
        sarbp_autofocus_options_default(&dflt);
        o = &dflt;
    }
    sarbp_autofocus_info inf = {0};
    const double t0 = sarbp_now_s();
    if (info) memset(info, 0, sizeof *info);
    if (!phd || !phd->data) return sarbp_error(SARBP_ERR_INVALID, "autofocus needs the samples");
    SARBP_TRY(sarbp_grid_validate(g));
    SARBP_TRY(sarbp_phd_validate(phd));
    const int order = o->poly_order == 0 ? 6 : o->poly_order;
    if (order > 12 || (order < 2 && order != -1))
        return sarbp_error(SARBP_ERR_INVALID, "autofocus: polynomial order %d (2 to 12, or -1: none)",
                           o->poly_order);
    if (o->method != SARBP_AF_ESTIMATE && o->method != SARBP_AF_PGA)
        return sarbp_error(SARBP_ERR_INVALID, "autofocus: unknown method %d", (int)o->method);
    if (o->range && !range) return sarbp_error(SARBP_ERR_INVALID, "autofocus: a range estimate needs its array");
    if (o->range && phd->domain != SARBP_DOMAIN_FREQ)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "autofocus: a range per pulse is estimated for frequency-domain samples only");
    const size_t P = phd->npulses;
    /* Pixels finer than half the resolution add cost and nothing the
     * sharpness sees: without windows of the caller's, the estimate runs
     * on the same scene at the default grid's spacing (half the resolution). */
    sarbp_grid ge = *g, gd;
    if (!o->nwindows && !g->height && sarbp_grid_default(phd, &gd) == SARBP_OK && g->dx < 0.75 * gd.dx &&
        g->dy < 0.75 * gd.dy && !g->ny_full) {
        ge.nx = (size_t)ceil((double)g->nx * g->dx / gd.dx);
        ge.ny = (size_t)ceil((double)g->ny * g->dy / gd.dy);
        ge.dx = gd.dx;
        ge.dy = gd.dy;
    }
    sarbp_error_clear();
    g = &ge;
    double *fref = o->range ? malloc(P * sizeof *fref) : NULL;
    if (o->range && !fref) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    af_pixels px = {0};
    sarbp_autofocus_window *owned = NULL;
    sarbp_status st = estimate_once(phd, g, rc, o, order, 1, phase, &inf, fref, &px, &owned);
    if (!st && o->range && inf.rejected) { /* focused: no range either */
        memset(range, 0, P * sizeof *range);
    } else if (!st && o->range) {
        /* the phase read as a range at each pulse's reference frequency,
         * applied over the whole band, then what is left estimated again */
        for (size_t j = 0; j < P; j++) range[j] = phase[j] * SARBP_C / (4.0 * M_PI * fref[j]);
        sarbp_phase_detrend(range, P);
        sarbp_phd *q = NULL;
        st = sarbp_phd_slice(phd, 0, P, &q);
        if (!st) st = sarbp_autofocus_apply(q, NULL, range);
        sarbp_autofocus_options o2 = *o;
        o2.method = SARBP_AF_ESTIMATE;
        o2.min_gain = -1; /* the first estimate's check said the data need correcting */
        /* on the same pixels: the corrected pulses' image is not formed again to choose them */
        if (!st) st = estimate_once(q, g, rc, &o2, order, 0, phase, &inf, NULL, &px, &owned);
        sarbp_phd_free(q);
    }
    free(owned);
    free(fref);
    inf.seconds = sarbp_now_s() - t0;
    if (!st && info) *info = inf;
    return st;
}
