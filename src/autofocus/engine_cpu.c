/* engine_cpu.c - the autofocus engine on the CPU (engine.h): B[P][M] in
 * host memory, made by the FP32 tiled backprojector one pulse at a time,
 * pulses spread over threads.
 *
 * Pixels are cut into fixed chunks of CHUNK; every sum over pixels is made
 * per chunk and the chunks' partial sums added in chunk order, so no
 * result depends on the thread count. The image is kept in FP64 (the
 * sweeps update it pulse by pulse). A sweep runs on a team of threads that
 * meet at a barrier once per pulse: each thread adds pulse j-1's change to
 * its chunks and, in the same pass, sums pulse j's coefficients there;
 * past the barrier every thread adds the chunks' sums and solves for pulse
 * j's phase alike (partial sums double-buffered by the pulse's parity). */
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "autofocus/engine.h"
#include "core/parallel.h"
#include "sarbp/backproject.h"
#include "sarbp/host.h"

#define CHUNK 2048
#define MAX_THREADS 64

struct cpu_engine {
    af_engine base;
    int threads;
    size_t nchunk;
    sarbp_c32 *B;        /* [P][M] */
    sarbp_c64 *img;      /* [M]: the last image */
    sarbp_c32 *w;        /* [M]: a reprojection's weight */
    sarbp_c64 *part;     /* partial sums: [nchunk][P] (reproject), [2][nchunk][2] (sweep) */
    double *chunk_S;     /* [nchunk] */
    sarbp_c64 *z;        /* [P] image(): exp(j phi), made once per image */
    sarbp_c64 *acc;      /* reproject(): its output */
};

static size_t chunk_end(const struct cpu_engine *e, size_t c)
{
    const size_t end = (c + 1) * CHUNK;
    return end < e->base.M ? end : e->base.M;
}

/* ---- making B ---- */

struct make_ctx {
    const sarbp_profiles *pr;
    const af_pixels *px;
    sarbp_c32 *B;
    size_t M;
    sarbp_status *st; /* [P] */
};

static void make_pulse(void *vctx, size_t j, int worker)
{
    (void)worker;
    const struct make_ctx *c = vctx;
    const sarbp_profiles one = sarbp_profiles_slice(c->pr, j, 1);
    sarbp_c32 *row = c->B + j * c->M;
    memset(row, 0, c->M * sizeof *row);
    size_t off = 0;
    for (size_t w = 0; w < c->px->nwin; w++) {
        const sarbp_autofocus_window *win = &c->px->win[w];
        sarbp_grid wg = *c->px->g;
        /* the window on the grid's own pixels: its rows as a band, its
         * columns by the centre moved a whole number of pixels */
        wg.nx = win->nx;
        wg.xc = sarbp_grid_x(c->px->g, win->x0) + 0.5 * (double)(win->nx - 1) * c->px->g->dx;
        if (wg.height) { /* the window's columns of the heights */
            wg.height_stride = c->px->g->height_stride ? c->px->g->height_stride : c->px->g->nx;
            wg.height += win->x0;
        }
        const sarbp_status st = sarbp_bp_cpu_fp32_rows(&one, &wg, (sarbp_region){win->y0, win->ny}, 1,
                                                       row + off);
        if (st) {
            c->st[j] = st;
            return;
        }
        off += win->nx * win->ny;
    }
}

/* ---- the image ---- */

static void image_chunk(void *vctx, size_t c, int worker)
{
    (void)worker;
    struct cpu_engine *e = vctx;
    const size_t m0 = c * CHUNK, m1 = chunk_end(e, c), M = e->base.M;
    sarbp_c64 *I = e->img + m0;
    memset(I, 0, (m1 - m0) * sizeof *I);
    for (size_t j = 0; j < e->base.P; j++) {
        const double zr = e->z[j].re, zi = e->z[j].im;
        const sarbp_c32 *b = e->B + j * M + m0;
        for (size_t m = 0; m < m1 - m0; m++) {
            I[m].re += zr * b[m].re - zi * b[m].im;
            I[m].im += zr * b[m].im + zi * b[m].re;
        }
    }
    double s = 0;
    for (size_t m = 0; m < m1 - m0; m++) {
        const double p = I[m].re * I[m].re + I[m].im * I[m].im;
        s += p * p;
    }
    e->chunk_S[c] = s;
}

static double sum_chunks(const struct cpu_engine *e)
{
    double s = 0;
    for (size_t c = 0; c < e->nchunk; c++) s += e->chunk_S[c];
    return s;
}

static sarbp_status cpu_image(af_engine *base, const double *phi, double *S)
{
    struct cpu_engine *e = (struct cpu_engine *)base;
    for (size_t j = 0; j < e->base.P; j++) e->z[j] = (sarbp_c64){cos(phi[j]), sin(phi[j])};
    SARBP_TRY(sarbp_parallel_for(e->threads, e->nchunk, image_chunk, e));
    *S = sum_chunks(e);
    return SARBP_OK;
}

/* ---- the reprojection ---- */

static void reproject_chunk(void *vctx, size_t c, int worker)
{
    (void)worker;
    struct cpu_engine *e = vctx;
    const size_t m0 = c * CHUNK, m1 = chunk_end(e, c), M = e->base.M;
    const sarbp_c32 *w = e->w + m0;
    sarbp_c64 *out = e->part + c * e->base.P;
    for (size_t j = 0; j < e->base.P; j++) {
        const sarbp_c32 *b = e->B + j * M + m0;
        double sr = 0, si = 0;
        for (size_t m = 0; m < m1 - m0; m++) {
            sr += (double)w[m].re * b[m].re - (double)w[m].im * b[m].im;
            si += (double)w[m].re * b[m].im + (double)w[m].im * b[m].re;
        }
        out[j] = (sarbp_c64){sr, si};
    }
}

static sarbp_status cpu_reproject(af_engine *base, int weight, const unsigned char *mask, sarbp_c64 *acc)
{
    struct cpu_engine *e = (struct cpu_engine *)base;
    const size_t M = e->base.M, P = e->base.P;
    for (size_t m = 0; m < M; m++) {
        const sarbp_c64 I = e->img[m];
        if (weight == AF_WEIGHT_SHARPNESS) {
            const double p = I.re * I.re + I.im * I.im;
            e->w[m] = (sarbp_c32){(float)(p * I.re), (float)(-p * I.im)};
        } else {
            e->w[m] = mask[m] ? (sarbp_c32){(float)I.re, (float)-I.im} : (sarbp_c32){0, 0};
        }
    }
    SARBP_TRY(sarbp_parallel_for(e->threads, e->nchunk, reproject_chunk, e));
    for (size_t j = 0; j < P; j++) {
        double sr = 0, si = 0;
        for (size_t c = 0; c < e->nchunk; c++) {
            sr += e->part[c * P + j].re;
            si += e->part[c * P + j].im;
        }
        acc[j] = (sarbp_c64){sr, si};
    }
    return SARBP_OK;
}

/* ---- the sweep ---- */

struct team {
    struct cpu_engine *e;
    double *phi;
    const double *ref;
    int nthreads;
    pthread_barrier_t bar;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int go;
    double moved;
};

/* Pulse j's coefficients over chunk c (the image without pulse j is u = I - z v):
 * |u + e^{ip} v|^4 = (a + 2 Re(e^{ip} c))^2, a = |u|^2 + |v|^2, c = conj(u) v. */
static void chunk_pass(struct cpu_engine *e, size_t c, size_t j, sarbp_c64 dprev, double zr, double zi,
                       sarbp_c64 *out4)
{
    const size_t m0 = c * CHUNK, m1 = chunk_end(e, c), M = e->base.M;
    sarbp_c64 *I = e->img + m0;
    /* pulse j - 1's change goes in as pulse j's sums are made; j = P: the
     * last change, and the sharpness */
    const sarbp_c32 *v = j < e->base.P ? e->B + j * M + m0 : NULL;
    const sarbp_c32 *vp = j > 0 ? e->B + (j - 1) * M + m0 : NULL;
    double c1r = 0, c1i = 0, c2r = 0, c2i = 0, s = 0;
    for (size_t m = 0; m < m1 - m0; m++) {
        if (vp) {
            I[m].re += dprev.re * vp[m].re - dprev.im * vp[m].im;
            I[m].im += dprev.re * vp[m].im + dprev.im * vp[m].re;
        }
        if (!v) {
            const double p = I[m].re * I[m].re + I[m].im * I[m].im;
            s += p * p;
            continue;
        }
        const double vr = zr * v[m].re - zi * v[m].im, vi = zr * v[m].im + zi * v[m].re;
        const double ur = I[m].re - vr, ui = I[m].im - vi;
        const double aa = ur * ur + ui * ui + (double)v[m].re * v[m].re + (double)v[m].im * v[m].im;
        const double cr = ur * v[m].re + ui * v[m].im, ci = ur * v[m].im - ui * v[m].re;
        c1r += 4 * aa * cr;
        c1i += 4 * aa * ci;
        c2r += 2 * (cr * cr - ci * ci);
        c2i += 4 * cr * ci;
    }
    out4[0] = (sarbp_c64){c1r, c1i};
    out4[1] = (sarbp_c64){c2r, c2i};
    if (!v) e->chunk_S[c] = s;
}

struct worker {
    struct team *t;
    int id;
};

static void *sweep_worker(void *arg_)
{
    const struct worker *arg = arg_;
    struct team *t = arg->t;
    pthread_mutex_lock(&t->lock);
    while (!t->go) pthread_cond_wait(&t->cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
    if (arg->id >= t->nthreads) return NULL; /* a thread past those that started */
    struct cpu_engine *e = t->e;
    const size_t P = e->base.P, nc = e->nchunk;
    sarbp_c64 dprev = {0, 0};
    double moved = 0;
    for (size_t j = 0; j <= P; j++) {
        sarbp_c64 *part = e->part + (j & 1) * nc * 2;
        const double pj = j < P ? t->phi[j] : 0, zr = cos(pj), zi = sin(pj);
        for (size_t c = (size_t)arg->id; c < nc; c += (size_t)t->nthreads)
            chunk_pass(e, c, j, dprev, zr, zi, part + 2 * c);
        /* past it every chunk's sums for pulse j are in; the buffer of j + 1
         * is the other one, and that of j + 2 is written only after every
         * thread has passed the next barrier, so done reading this one */
        pthread_barrier_wait(&t->bar);
        if (j == P) break;
        sarbp_c64 C1 = {0, 0}, C2 = {0, 0};
        for (size_t c = 0; c < nc; c++) {
            C1.re += part[2 * c].re;
            C1.im += part[2 * c].im;
            C2.re += part[2 * c + 1].re;
            C2.im += part[2 * c + 1].im;
        }
        const double np = af_best_phase(C1, C2);
        dprev = (sarbp_c64){cos(np) - zr, sin(np) - zi};
        const double d = fabs(remainder(np - pj, 2.0 * M_PI));
        if (d > moved) moved = d;
        /* every thread read phi[j] before the barrier */
        if (arg->id == 0) t->phi[j] = t->ref[j] + remainder(np - t->ref[j], 2.0 * M_PI);
    }
    if (arg->id == 0) t->moved = moved;
    return NULL;
}

static sarbp_status cpu_sweep(af_engine *base, double *phi, const double *ref, double *S, double *moved)
{
    struct cpu_engine *e = (struct cpu_engine *)base;
    struct team t = {.e = e, .phi = phi, .ref = ref};
    int want = e->threads;
    if ((size_t)want > e->nchunk) want = (int)e->nchunk;
    pthread_mutex_init(&t.lock, NULL);
    pthread_cond_init(&t.cond, NULL);
    struct worker args[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started = 1; /* this thread is worker 0 */
    for (int i = 0; i < want; i++) args[i] = (struct worker){&t, i};
    for (; started < want; started++)
        if (pthread_create(&th[started], NULL, sweep_worker, &args[started]) != 0) break;
    /* as many as started share the work; their number is fixed before any works */
    t.nthreads = started;
    sarbp_status st = SARBP_OK;
    if (pthread_barrier_init(&t.bar, NULL, (unsigned)started) != 0) {
        st = sarbp_error(SARBP_ERR_NOMEM, "autofocus: cannot make a barrier for %d threads", started);
        t.nthreads = 0; /* every worker leaves at once */
    }
    pthread_mutex_lock(&t.lock);
    t.go = 1;
    pthread_cond_broadcast(&t.cond);
    pthread_mutex_unlock(&t.lock);
    if (!st) sweep_worker(&args[0]);
    for (int i = 1; i < started; i++) pthread_join(th[i], NULL);
    if (!st) pthread_barrier_destroy(&t.bar);
    pthread_cond_destroy(&t.cond);
    pthread_mutex_destroy(&t.lock);
    if (st) return st;
    *S = sum_chunks(e);
    *moved = t.moved;
    return SARBP_OK;
}

static sarbp_status cpu_read_image(af_engine *base, sarbp_c32 *out)
{
    struct cpu_engine *e = (struct cpu_engine *)base;
    for (size_t m = 0; m < e->base.M; m++) out[m] = (sarbp_c32){(float)e->img[m].re, (float)e->img[m].im};
    return SARBP_OK;
}

static void cpu_destroy(af_engine *base)
{
    struct cpu_engine *e = (struct cpu_engine *)base;
    if (!e) return;
    free(e->B);
    free(e->img);
    free(e->w);
    free(e->part);
    free(e->chunk_S);
    free(e->z);
    free(e);
}

static const af_engine_ops cpu_ops = {cpu_image, cpu_reproject, cpu_sweep, cpu_read_image, cpu_destroy};

/* B times s, in place, pulse rows spread over threads. */
struct scale_ctx {
    sarbp_c32 *B;
    size_t M;
    float s;
};
static void scale_row(void *vctx, size_t j, int worker)
{
    (void)worker;
    const struct scale_ctx *c = vctx;
    sarbp_c32 *r = c->B + j * c->M;
    for (size_t m = 0; m < c->M; m++) r[m].re *= c->s, r[m].im *= c->s;
}

sarbp_status af_engine_cpu_create(const sarbp_profiles *pr, const af_pixels *px, int threads,
                                  af_engine **out)
{
    *out = NULL;
    const size_t P = pr->npulses, M = px->M;
    if (threads <= 0) threads = sarbp_cpu_count();
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (P == 0 || M == 0) return sarbp_error(SARBP_ERR_INVALID, "autofocus: no pulses or no pixels");
    if (M > SIZE_MAX / sizeof(sarbp_c32) / P)
        return sarbp_error(SARBP_ERR_NOMEM, "autofocus: %zu pulses x %zu pixels overflow", P, M);
    struct cpu_engine *e = calloc(1, sizeof *e);
    if (!e) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    e->base.ops = &cpu_ops;
    e->base.P = P;
    e->base.M = M;
    e->threads = threads;
    e->nchunk = (M + CHUNK - 1) / CHUNK;
    e->B = malloc(P * M * sizeof *e->B);
    e->img = malloc(M * sizeof *e->img);
    e->w = malloc(M * sizeof *e->w);
    e->part = malloc(e->nchunk * (P > 4 ? P : 4) * sizeof *e->part); /* reproject's or a sweep's */
    e->chunk_S = malloc(e->nchunk * sizeof *e->chunk_S);
    e->z = malloc(P * sizeof *e->z);
    sarbp_status *pst = calloc(P, sizeof *pst);
    sarbp_status st = SARBP_OK;
    if (!e->B || !e->img || !e->w || !e->part || !e->chunk_S || !e->z || !pst)
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus (%zu pulses x %zu pixels, %.1f GiB)",
                         P, M, (double)P * (double)M * 8.0 / 1073741824.0);
    if (!st) {
        struct make_ctx mc = {pr, px, e->B, M, pst};
        st = sarbp_parallel_for(threads, P, make_pulse, &mc);
        for (size_t j = 0; !st && j < P; j++) st = pst[j];
    }
    free(pst);
    double *zero = st ? NULL : calloc(P, sizeof *zero);
    if (!st && !zero) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    double S;
    if (!st) st = cpu_image(&e->base, zero, &S);
    if (!st) { /* scale so the uncorrected image peaks at 1 */
        double peak = 0;
        for (size_t m = 0; m < M; m++) {
            const double a = hypot(e->img[m].re, e->img[m].im);
            if (a > peak) peak = a;
        }
        if (peak > 0 && isfinite(peak)) {
            struct scale_ctx sc = {e->B, M, (float)(1.0 / peak)};
            st = sarbp_parallel_for(threads, P, scale_row, &sc);
        }
    }
    free(zero);
    if (st) {
        cpu_destroy(&e->base);
        return st;
    }
    *out = &e->base;
    return SARBP_OK;
}
