/* ffbp/engine_fp32.c - fast factorized backprojection in FP32 on the CPU,
 * multi-threaded, streaming (ffbp/engine.h), and sarbp_ffbp_cpu_fp32.
 *
 * The same factorization as the FP64 prototype (ffbp/proto_fp64.c: polar sub-images
 * about each sub-aperture's phase centre, demodulated by the mean
 * wavenumber kc, cubic B-spline coefficients; the grids of ffbp/layout.h),
 * with the work split for speed and FP32 where it is safe (primer,
 * section 4):
 *
 * - Geometry per polar row in FP64, per sample in FP64 where phase needs
 *   it: a child's range from the law of cosines about the parent's centre,
 *   rho_k = sqrt(rho^2 - 2 (h A + dz dcz) + |d|^2) (d = c_k - c, A = d
 *   along the row's direction, h = the horizontal range, a function of rho
 *   only: one table per grid), its azimuth theta - atan(B / (h - A)) (B =
 *   d across the row; atan by its series for |x| < 0.3, else libm), and
 *   the phase kc (rho_k - rho) in cycles, reduced to [-1/2, 1/2] before it
 *   becomes FP32. These loops carry no branches and vectorise. Where the
 *   sample's offset is small against its range (every airborne geometry;
 *   checked per row), the square roots and divisions go by series in FP64.
 * - Per sample in FP32: the cubic weights, the 4 x 4 taps (with AVX2:
 *   eight samples at a time, each sample's four rows summed with its theta
 *   weights in one register, the eight registers transposed so that the
 *   range weights and the sum run across samples), sin and cos of the
 *   reduced phase by polynomial, the rotation and the sum.
 * - Threads split every grid into its rows (theta); stage 0 the rows of
 *   all the runs a push completes at once; the last step into pixel rows.
 *   Every sample and pixel is computed by the same arithmetic in the same
 *   order whatever the thread count or the push sizes: results are
 *   bit-identical. Grids given back are kept for the next (no page faults).
 *
 * It does not keep pulses: a run of `base` pulses is backprojected once it
 * is complete, and only a few polar grids per level are held. */
#include "backproject/ffbp/engine.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define FFBP_AVX2 1
#else
#define FFBP_AVX2 0
#endif

#include "core/parallel.h"
#include "sarbp/progress.h" /* sarbp_now_s */

#define ATAN_SERIES_MAX 0.3 /* |x| below which atan_series is exact to 1e-13 */
#define SQRT_SERIES_MAX 0.02 /* |x| below which sqrt1p_series is exact to 4e-16 */
#define PREFILTER_HORIZON 16 /* (2 - sqrt 3)^16 = 7e-10: below FP32's rounding */

/* ---- small numerics -------------------------------------------------------- */

/* atan x for |x| <= 0.3 by its Taylor series to x^23 (error below 1e-13) */
static inline double atan_series(double x)
{
    const double y = x * x;
    double p = -1.0 / 23;
    p = 1.0 / 21 + y * p;
    p = -1.0 / 19 + y * p;
    p = 1.0 / 17 + y * p;
    p = -1.0 / 15 + y * p;
    p = 1.0 / 13 + y * p;
    p = -1.0 / 11 + y * p;
    p = 1.0 / 9 + y * p;
    p = -1.0 / 7 + y * p;
    p = 1.0 / 5 + y * p;
    p = -1.0 / 3 + y * p;
    p = 1.0 + y * p;
    return x * p;
}

/* (sqrt(1 + x) - 1) / x for |x| <= 0.02 by its binomial series to x^6
 * (relative error of x times it below 4e-16): a range from a small
 * difference of squares without the square root (eight FP64 square roots
 * take as long as some thirty FMAs) */
static inline double sqrt1p_series(double x)
{
    double p = 33.0 / 2048;
    p = -21.0 / 1024 + x * p;
    p = 7.0 / 256 + x * p;
    p = -5.0 / 128 + x * p;
    p = 1.0 / 16 + x * p;
    p = -1.0 / 8 + x * p;
    return 0.5 + x * p;
}

/* Whether rho_k = sqrt(rho^2 + K0 - 2 h A) may go by the series for every
 * rho of a grid starting at r0 whose largest horizontal range is hmax:
 * |K0 - 2 h A| / rho^2 <= SQRT_SERIES_MAX. */
static inline int range_series_ok(double K0, double A, double hmax, double r0)
{
    return r0 > 0 && fabs(K0) + 2 * hmax * fabs(A) <= SQRT_SERIES_MAX * r0 * r0;
}

/* sin and cos of 2 pi t, t in [-1/2, 1/2] (bp_cpu.c's polynomials: errors
 * 1.0e-6 and 2.6e-6, near -110 dB) */
static inline void sincos_2pi(float t, float *s_out, float *c_out)
{
    const float y = t * t;
    const float s = t * (3.141590357f + y * (-5.167405605f + y * (2.544000149f + y * -0.5594350100f)));
    const float c = 0.9999999404f + y * (-4.934792995f + y * (4.058410645f + y * (-1.331872940f + y * 0.2196824253f)));
    const float sc = s * c;
    *s_out = sc + sc;
    *c_out = c * c - s * s;
}

static inline void cubic_weights(float t, float w[4])
{
    const float u = 1.0f - t, t2 = t * t, t3 = t2 * t;
    w[0] = u * u * u * (1.0f / 6);
    w[1] = (3.0f * t3 - 6.0f * t2 + 4.0f) * (1.0f / 6);
    w[2] = (-3.0f * t3 + 3.0f * t2 + 3.0f * t + 1.0f) * (1.0f / 6);
    w[3] = t3 * (1.0f / 6);
}

/* sum_a w[a] p[a], four complex values p (interleaved) */
static inline void dot4(const float *p, const float w[4], float *re, float *im)
{
#if FFBP_AVX2
    const __m256 wv = _mm256_setr_ps(w[0], w[0], w[1], w[1], w[2], w[2], w[3], w[3]);
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(p), wv);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    *re = _mm_cvtss_f32(s);
    *im = _mm_cvtss_f32(_mm_shuffle_ps(s, s, 1));
#else
    *re = w[0] * p[0] + w[1] * p[2] + w[2] * p[4] + w[3] * p[6];
    *im = w[0] * p[1] + w[1] * p[3] + w[2] * p[5] + w[3] * p[7];
#endif
}

/* sum_b wj[b] sum_a wi[a] p[b rs + a]: 4 x 4 complex taps, rows rs complex
 * apart */
static inline void dot44(const float *p, size_t rs, const float wi[4], const float wj[4],
                         float *re, float *im)
{
#if FFBP_AVX2
    const size_t s = 2 * rs;
    __m256 v = _mm256_mul_ps(_mm256_set1_ps(wj[0]), _mm256_loadu_ps(p));
    v = _mm256_fmadd_ps(_mm256_set1_ps(wj[1]), _mm256_loadu_ps(p + s), v);
    v = _mm256_fmadd_ps(_mm256_set1_ps(wj[2]), _mm256_loadu_ps(p + 2 * s), v);
    v = _mm256_fmadd_ps(_mm256_set1_ps(wj[3]), _mm256_loadu_ps(p + 3 * s), v);
    const __m256 wv = _mm256_setr_ps(wi[0], wi[0], wi[1], wi[1], wi[2], wi[2], wi[3], wi[3]);
    v = _mm256_mul_ps(v, wv);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    *re = _mm_cvtss_f32(q);
    *im = _mm_cvtss_f32(_mm_shuffle_ps(q, q, 1));
#else
    float r = 0, m = 0;
    for (int b = 0; b < 4; b++) {
        float rr, ri;
        dot4(p + 2 * (size_t)b * rs, wi, &rr, &ri);
        r += wj[b] * rr;
        m += wj[b] * ri;
    }
    *re = r;
    *im = m;
#endif
}

#if FFBP_AVX2
/* Eight samples at a time: each sample's four complex taps (theta already
 * summed, for the 2-D reads) in one register, the eight registers
 * transposed so that the range weights and the sum run across samples
 * (two horizontal sums per sample cost more than the transpose). */

/* r[s] = sample s's taps c0 .. c3 (re, im interleaved); after: r[k] holds
 * element k of every sample (r[0] = c0.re of samples 0..7, r[1] = c0.im, ...) */
static inline void transpose8(__m256 r[8])
{
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* cubic_weights of eight fractions */
static inline void cubic_weights8(__m256 t, __m256 w[4])
{
    const __m256 one = _mm256_set1_ps(1.0f), three = _mm256_set1_ps(3.0f), sixth = _mm256_set1_ps(1.0f / 6);
    const __m256 u = _mm256_sub_ps(one, t), t2 = _mm256_mul_ps(t, t), t3 = _mm256_mul_ps(t2, t);
    w[0] = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(u, u), u), sixth);
    /* 3 t^3 - 6 t^2 + 4 and -3 t^3 + 3 t^2 + 3 t + 1 */
    const __m256 a = _mm256_fmadd_ps(three, _mm256_sub_ps(t3, _mm256_add_ps(t2, t2)), _mm256_set1_ps(4.0f));
    const __m256 b = _mm256_fmadd_ps(three, _mm256_add_ps(_mm256_sub_ps(t2, t3), t), one);
    w[1] = _mm256_mul_ps(a, sixth);
    w[2] = _mm256_mul_ps(b, sixth);
    w[3] = _mm256_mul_ps(t3, sixth);
}

/* v[s]: the taps of samples s = 0..7; t: their range fractions; the eight
 * interpolated values to re[0..8), im[0..8) */
static inline void taps8(__m256 v[8], const float *t, float *re, float *im)
{
    transpose8(v);
    __m256 w[4];
    cubic_weights8(_mm256_loadu_ps(t), w);
    __m256 r = _mm256_mul_ps(w[0], v[0]), m = _mm256_mul_ps(w[0], v[1]);
    r = _mm256_fmadd_ps(w[1], v[2], r);
    m = _mm256_fmadd_ps(w[1], v[3], m);
    r = _mm256_fmadd_ps(w[2], v[4], r);
    m = _mm256_fmadd_ps(w[2], v[5], m);
    r = _mm256_fmadd_ps(w[3], v[6], r);
    m = _mm256_fmadd_ps(w[3], v[7], m);
    _mm256_storeu_ps(re, r);
    _mm256_storeu_ps(im, m);
}

#endif

/* The 2-D reads of samples [0, n) of a row: ii (flat cell indices), ti, tj
 * (fractions) of a grid f of rows nr complex apart, to re, im; eight at a
 * time, theta first (four rows weighted and summed), then taps8. */
static void read44_row(const float *f, size_t nr, const int32_t *ii, const float *ti,
                       const float *tj, float *re, float *im, size_t n)
{
    size_t x = 0;
#if FFBP_AVX2
    const size_t rs = 2 * nr;
    for (; x + 8 <= n; x += 8) {
        __m256 wj[4];
        cubic_weights8(_mm256_loadu_ps(tj + x), wj);
        float wb[4][8];
        for (int b = 0; b < 4; b++) _mm256_storeu_ps(wb[b], wj[b]);
        __m256 v[8];
        for (int k = 0; k < 8; k++) {
            const float *p = f + 2 * ((size_t)ii[x + k] - nr - 1);
            __m256 a = _mm256_mul_ps(_mm256_broadcast_ss(&wb[0][k]), _mm256_loadu_ps(p));
            a = _mm256_fmadd_ps(_mm256_broadcast_ss(&wb[1][k]), _mm256_loadu_ps(p + rs), a);
            a = _mm256_fmadd_ps(_mm256_broadcast_ss(&wb[2][k]), _mm256_loadu_ps(p + 2 * rs), a);
            v[k] = _mm256_fmadd_ps(_mm256_broadcast_ss(&wb[3][k]), _mm256_loadu_ps(p + 3 * rs), a);
        }
        taps8(v, ti + x, re + x, im + x);
    }
#endif
    for (; x < n; x++) {
        float wi[4], wj[4];
        cubic_weights(ti[x], wi);
        cubic_weights(tj[x], wj);
        dot44(f + 2 * ((size_t)ii[x] - nr - 1), nr, wi, wj, &re[x], &im[x]);
    }
}

/* ---- polar sub-images -------------------------------------------------------- */

typedef struct {
    ffbp_polar g;
    size_t p0, p1;  /* its pulses */
    float *f;       /* [nt][nr] complex (interleaved): B-spline coefficients */
    size_t cap;     /* floats f holds */
} sub32;

/* Grids given back, kept for the next: a fresh allocation of megabytes is
 * a page fault per 4 KiB at its first touch, and two threads faulting into
 * one address space wait on each other. At most the grids alive at once
 * (a few per level) are ever held. */
#define GRID_CACHE 32

/* Stage 0 makes the grids of the complete runs of a push, up to this many
 * pulses, in one parallel step (rows of all the runs shared among the
 * threads): one start of the threads and one straggler for them all */
#define RUN_BATCH_PULSES 256
#define RUN_BATCH_MAX 16

/* Per-worker scratch of one row: the per-sample geometry and the sums. */
typedef struct {
    int32_t *ii;    /* the flat index j nr + i of the first tap's cell */
    float *ti, *tj, *cy, *m, *vr, *vi, *ar, *ai;
} row_scratch;

struct ffbp_engine {
    ffbp_footprint fp;
    sarbp_grid grid;
    sarbp_region region;
    size_t max_rows;
    sarbp_ffbp_params prm;
    int threads;
    size_t P;
    double *pos;        /* [P][3] */
    double kc, qc, kband, drho;
    int levels;         /* merge levels: sub-images of level `levels` go to the pixels */
    size_t nsub[FFBP_MAX_LEVELS + 1];
    /* the stack: finished sub-images of each level waiting for their
     * siblings, and how many the level has made */
    sub32 *pend[FFBP_MAX_LEVELS + 1];
    size_t npend[FFBP_MAX_LEVELS + 1], made[FFBP_MAX_LEVELS + 1];
    /* the run of pulses being gathered for stage 0 */
    size_t next;        /* the next pulse expected */
    size_t run_n, nbins, run_stride; /* run_n: pulses gathered (runs of base) */
    size_t nbatch;      /* runs the gathering holds */
    sarbp_interp interp;
    float *run;         /* [nbatch base][run_stride] complex: 2 zero bins, the profile, 2 zero bins */
    double *run_geo;    /* [nbatch base][7]: pos, r0, rstart, dr, fref */
    /* scratch */
    size_t max_nr, max_row;
    /* per grid being made (nbatch of them in stage 0; slot 0 for a merge),
     * [nbatch][max_nr] each: */
    double *h;          /* the horizontal range of each rho */
    double *ir2;        /* 1 / rho^2 */
    double *ih;         /* 1 / h (0 where h is 0) */
    row_scratch *rs;    /* [threads] */
    void *rs_mem;
    sarbp_c32 *img;
    float *cache[GRID_CACHE]; /* grids given back, cap[] floats each */
    size_t cache_cap[GRID_CACHE];
    int ncache;
    /* statistics */
    size_t polar_samples, final_count;
    double t_stage0, t_merge, t_final;
};

static size_t ceil_div(size_t a, size_t b)
{
    return a / b + (a % b != 0);
}

/* ---- making sub-images ------------------------------------------------------- */

/* s's grid back to the cache (freed when the cache is full) */
static void sub_release(ffbp_engine *e, sub32 *s)
{
    if (!s->f) return;
    if (e->ncache < GRID_CACHE) {
        e->cache[e->ncache] = s->f;
        e->cache_cap[e->ncache++] = s->cap;
    } else {
        free(s->f);
    }
    s->f = NULL;
}

/* a grid of at least n floats: the smallest cached one that holds it, else
 * a new one */
static float *grid_take(ffbp_engine *e, size_t n, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < e->ncache; i++)
        if (e->cache_cap[i] >= n && (best < 0 || e->cache_cap[i] < e->cache_cap[best])) best = i;
    if (best < 0) {
        *cap = n;
        return malloc(n * sizeof(float));
    }
    float *f = e->cache[best];
    *cap = e->cache_cap[best];
    e->ncache--;
    e->cache[best] = e->cache[e->ncache];
    e->cache_cap[best] = e->cache_cap[e->ncache];
    return f;
}

static sarbp_status sub_alloc(ffbp_engine *e, int k, size_t m, sub32 *s)
{
    memset(s, 0, sizeof *s);
    ffbp_sub_pulses(&e->prm, e->P, k, m, &s->p0, &s->p1);
    SARBP_TRY(ffbp_polar_plan(e->pos, s->p0, s->p1, &e->fp, e->kband, e->prm.os_theta,
                              e->drho / e->prm.os_rho, &s->g));
    if (s->g.nr > e->max_nr || s->g.nt > e->max_row)
        return sarbp_error(SARBP_ERR_INTERNAL, "ffbp: a polar grid outgrew its plan");
    s->f = grid_take(e, s->g.nt * s->g.nr * 2, &s->cap);
    if (!s->f)
        return sarbp_error(SARBP_ERR_NOMEM, "ffbp: out of memory for a %zu x %zu polar grid",
                           s->g.nr, s->g.nt);
    e->polar_samples += s->g.nt * s->g.nr;
    return SARBP_OK;
}

/* the tables of slot `slot`: h[i] = the horizontal range of rho_i about
 * s's centre, 1 / rho_i^2, 1 / h[i] */
static void fill_h(ffbp_engine *e, const sub32 *s, size_t slot)
{
    const double dz = e->fp.z - s->g.c[2];
    double *h = e->h + slot * e->max_nr, *ir2 = e->ir2 + slot * e->max_nr,
           *ih = e->ih + slot * e->max_nr;
    for (size_t i = 0; i < s->g.nr; i++) {
        const double rho = s->g.r0 + (double)i * s->g.dr, h2 = rho * rho - dz * dz;
        h[i] = h2 > 0 ? sqrt(h2) : 0.0;
        ir2[i] = 1.0 / (rho * rho);
        ih[i] = h[i] > 0 ? 1.0 / h[i] : 0.0;
    }
}

/* the grid of task t of a job over several grids: cum[r] tasks come before
 * grid r's (n grids, at most RUN_BATCH_MAX); *first: cum[r] */
static size_t grid_of_task(const size_t *cum, size_t n, size_t t, size_t *first)
{
    size_t r = 0;
    while (r + 1 < n && t >= cum[r + 1]) r++;
    *first = cum[r];
    return r;
}

/* cubic B-spline prefilter of one row (in place, mirror ends) */
static void prefilter_row(float *s, size_t n)
{
    if (n < 2) return;
    const float z = (float)(sqrt(3.0) - 2.0);
    const size_t hz = n < PREFILTER_HORIZON ? n : PREFILTER_HORIZON;
    float zk = 1, re = 0, im = 0;
    for (size_t k = 0; k < hz; k++) {
        re += zk * s[2 * k];
        im += zk * s[2 * k + 1];
        zk *= z;
    }
    s[0] = re;
    s[1] = im;
    for (size_t k = 1; k < n; k++) {
        s[2 * k] += z * s[2 * k - 2];
        s[2 * k + 1] += z * s[2 * k - 1];
    }
    const float q = z / (z * z - 1.0f);
    s[2 * n - 2] = q * (s[2 * n - 2] + z * s[2 * n - 4]);
    s[2 * n - 1] = q * (s[2 * n - 1] + z * s[2 * n - 3]);
    for (size_t k = n - 1; k-- > 0;) {
        s[2 * k] = z * (s[2 * k + 2] - s[2 * k]);
        s[2 * k + 1] = z * (s[2 * k + 3] - s[2 * k + 1]);
    }
    for (size_t k = 0; k < 2 * n; k++) s[k] *= 6.0f;
}

/* the prefilter along theta over columns [c0, c1) of f ([nt][nr] complex):
 * row operations, so the inner loops run along contiguous memory */
static void prefilter_cols(float *f, size_t nr, size_t nt, size_t c0, size_t c1)
{
    if (nt < 2) return;
    const float z = (float)(sqrt(3.0) - 2.0), q = z / (z * z - 1.0f);
    const size_t w = 2 * (c1 - c0), rs = 2 * nr;
    float *b = f + 2 * c0;
    const size_t hz = nt < PREFILTER_HORIZON ? nt : PREFILTER_HORIZON;
    float zk = z;
    for (size_t k = 1; k < hz; k++) {
        const float *r = b + k * rs;
        for (size_t x = 0; x < w; x++) b[x] += zk * r[x];
        zk *= z;
    }
    for (size_t k = 1; k < nt; k++) {
        float *r = b + k * rs;
        const float *p = r - rs;
        for (size_t x = 0; x < w; x++) r[x] += z * p[x];
    }
    {
        float *l = b + (nt - 1) * rs;
        const float *m = l - rs;
        for (size_t x = 0; x < w; x++) l[x] = q * (l[x] + z * m[x]);
    }
    for (size_t k = nt - 1; k-- > 0;) {
        float *r = b + k * rs;
        const float *nx = r + rs;
        for (size_t x = 0; x < w; x++) r[x] = z * (nx[x] - r[x]);
    }
    for (size_t k = 0; k < nt; k++) {
        float *r = b + k * rs;
        for (size_t x = 0; x < w; x++) r[x] *= 6.0f;
    }
}

struct cols_job {
    sub32 *s;    /* [n] */
    size_t n, chunk;
    size_t cum[RUN_BATCH_MAX + 1]; /* column chunks before grid r */
};

static void cols_task(void *vj, size_t t, int worker)
{
    (void)worker;
    const struct cols_job *j = vj;
    size_t first;
    const sub32 *s = &j->s[grid_of_task(j->cum, j->n, t, &first)];
    const size_t c0 = (t - first) * j->chunk, c1 = c0 + j->chunk < s->g.nr ? c0 + j->chunk : s->g.nr;
    prefilter_cols(s->f, s->g.nr, s->g.nt, c0, c1);
}

/* the prefilter along theta of grids s[0..n) (n <= RUN_BATCH_MAX), in
 * chunks of 64 columns */
static sarbp_status prefilter_theta(ffbp_engine *e, sub32 *s, size_t n)
{
    struct cols_job j = {s, n, 64, {0}};
    for (size_t r = 0; r < n; r++) j.cum[r + 1] = j.cum[r] + ceil_div(s[r].g.nr, j.chunk);
    return sarbp_parallel_for(e->threads, j.cum[n], cols_task, &j);
}

/* reduced phase: cycles to [-1/2, 1/2] */
static inline double reduce_cycles(double c)
{
    return c - floor(c + 0.5);
}

/* ---- stage 0: a run of pulses onto its polar grid ---------------------------- */

struct stage0_job {
    ffbp_engine *e;
    sub32 *s;   /* [n]: the grids of the runs gathered, in order */
    size_t n;
    size_t cum[RUN_BATCH_MAX + 1]; /* rows before grid r */
};

/* Adds the row's samples (vr, vi), turned by their phases cy and weighted
 * by m, into its sums (ar, ai): the same step of stage 0 and the merges. */
static inline void accumulate_row(const row_scratch *w, size_t nr)
{
    for (size_t i = 0; i < nr; i++) {
        float sn, cs;
        sincos_2pi(w->cy[i], &sn, &cs);
        sn *= w->m[i];
        cs *= w->m[i];
        w->ar[i] += w->vr[i] * cs - w->vi[i] * sn;
        w->ai[i] += w->vr[i] * sn + w->vi[i] * cs;
    }
}

/* The row's sums into out (interleaved complex), prefiltered. */
static inline void store_row(const row_scratch *w, float *out, size_t nr)
{
    for (size_t i = 0; i < nr; i++) {
        out[2 * i] = w->ar[i];
        out[2 * i + 1] = w->ai[i];
    }
    prefilter_row(out, nr);
}

/* one pulse seen from a stage-0 grid's row */
typedef struct {
    double K0, A;       /* rho_p^2 = rho^2 + K0 - 2 h A */
    double rbin0, inv_dr; /* the range of the profile's bin 0, 1 / bin spacing */
    double q, dq, ph0;  /* cycles per metre, less the grid's; the phase at rho_p = 0 */
    double nb;          /* bins */
} stage0_pulse;

/* The bin, fraction, mask and phase of the pulse at every sample of the
 * row; series: the range by sqrt1p_series (range_series_ok said so) */
static inline void stage0_geometry(const row_scratch *w, const double *h, const double *ir2,
                                   size_t nr, double r0, double drr, const stage0_pulse *sp,
                                   int series)
{
    int32_t *restrict ii = w->ii;
    float *restrict ti = w->ti, *restrict mm = w->m, *restrict cy = w->cy;
    const double K0 = sp->K0, A = sp->A, rbin0 = sp->rbin0, inv_dr = sp->inv_dr, q = sp->q,
                 dq = sp->dq, ph0 = sp->ph0, nb = sp->nb;
    /* int counters: AVX2 converts 32-bit integers to double, not size_t */
    for (int i = 0; i < (int)nr; i++) {
        const double rho = r0 + (double)i * drr, D = K0 - 2 * h[i] * A;
        double R, d; /* FP64: rho's ulp is 2e-12 m */
        if (series) {
            const double x = D * ir2[i];
            d = rho * x * sqrt1p_series(x);
            R = rho + d;
        } else {
            R = sqrt(rho * rho + D);
            d = R - rho;
        }
        const double b = (R - rbin0) * inv_dr;
        const double fb = floor(b);
        const int ok = fb >= 0 && fb < nb - 1;
        ii[i] = ok ? (int32_t)fb : 0;
        ti[i] = (float)(b - fb);
        mm[i] = ok ? 1.0f : 0.0f;
        cy[i] = (float)reduce_cycles(q * d + dq * rho + ph0);
    }
}

/* task t: a row of one of the runs' grids */
static void stage0_row(void *vj, size_t t, int worker)
{
    const struct stage0_job *j = vj;
    ffbp_engine *e = j->e;
    size_t first;
    const size_t r = grid_of_task(j->cum, j->n, t, &first), jt = t - first;
    const sub32 *s = &j->s[r];
    const row_scratch *w = &e->rs[worker];
    const size_t nr = s->g.nr, npulse = s->p1 - s->p0, p0 = r * e->prm.base;
    const double th = s->g.t0 + (double)jt * s->g.dt, ct = cos(th), st = sin(th);
    const double dz = e->fp.z - s->g.c[2], r0 = s->g.r0, drr = s->g.dr;
    const double *h = e->h + r * e->max_nr, *ir2 = e->ir2 + r * e->max_nr;
    for (size_t i = 0; i < nr; i++) w->ar[i] = w->ai[i] = 0;
    const int cubic = e->interp == SARBP_INTERP_CUBIC;
    for (size_t p = p0; p < p0 + npulse; p++) {
        const double *geo = e->run_geo + 7 * p;
        const double dx = geo[0] - s->g.c[0], dy = geo[1] - s->g.c[1], dzp = geo[2] - s->g.c[2];
        const double A = ct * dx + st * dy, K0 = dx * dx + dy * dy + dzp * dzp - 2 * dz * dzp;
        const double r0p = geo[3], rst = geo[4], inv_dr = 1.0 / geo[5];
        const double q = 2.0 * geo[6] / SARBP_C; /* k / 2 pi: cycles per metre */
        const double dq = q - e->qc, ph0 = reduce_cycles(-q * r0p);
        const stage0_pulse sp = {K0, A, r0p + rst, inv_dr, q, dq, ph0, (double)e->nbins};
        if (range_series_ok(K0, A, h[nr - 1], r0))
            stage0_geometry(w, h, ir2, nr, r0, drr, &sp, 1);
        else
            stage0_geometry(w, h, ir2, nr, r0, drr, &sp, 0);
        const float *prof = e->run + p * e->run_stride;
        if (cubic) {
            size_t i = 0;
#if FFBP_AVX2
            for (; i + 8 <= nr; i += 8) {
                /* bins n - 1 .. n + 2 sit at n + 1 .. n + 4 of the padded run */
                __m256 v[8];
                for (int k = 0; k < 8; k++) v[k] = _mm256_loadu_ps(prof + 2 * ((size_t)w->ii[i + k] + 1));
                taps8(v, w->ti + i, w->vr + i, w->vi + i);
            }
#endif
            for (; i < nr; i++) {
                float wt[4];
                cubic_weights(w->ti[i], wt);
                /* bins n - 1 .. n + 2 sit at n + 1 .. n + 4 of the padded run */
                dot4(prof + 2 * ((size_t)w->ii[i] + 1), wt, &w->vr[i], &w->vi[i]);
            }
        } else {
            for (size_t i = 0; i < nr; i++) {
                const float *b = prof + 2 * ((size_t)w->ii[i] + 2), f = w->ti[i];
                w->vr[i] = b[0] + f * (b[2] - b[0]);
                w->vi[i] = b[1] + f * (b[3] - b[1]);
            }
        }
        accumulate_row(w, nr);
    }
    store_row(w, s->f + 2 * jt * nr, nr);
}

/* ---- merges: children onto the parent's grid -------------------------------- */

struct merge_job {
    ffbp_engine *e;
    sub32 *s;
    const sub32 *kids;
    size_t nkids;
};

/* The child sample position and phase of every parent sample of a row:
 * exact chooses libm's atan (for rows where the series' range is left);
 * series the range by sqrt1p_series and 1 / (h - A) by the geometric
 * series of A / h (merge_series_ok). */
static inline int merge_geometry(const row_scratch *w, const double *h, const double *ir2,
                                    const double *ih, size_t nr, double r0,
                                    double drr, double A, double B, double K0, double kr0,
                                    double kidr, double tofs, double kidt, double qc, const sub32 *k,
                                    int series, int exact)
{
    int big = 0;
    const double nrk = (double)k->g.nr, ntk = (double)k->g.nt;
    int32_t *restrict ii = w->ii;
    float *restrict ti = w->ti, *restrict tj = w->tj, *restrict mm = w->m, *restrict cy = w->cy;
    for (int i = 0; i < (int)nr; i++) { /* int: see stage0_row */
        const double rho = r0 + (double)i * drr, D = K0 - 2 * h[i] * A;
        double R, u;
        if (series) {
            const double x = D * ir2[i], a = A * ih[i];
            R = rho + rho * x * sqrt1p_series(x);
            /* 1 / (1 - a) to a^7: relative error below 3e-14 for |a| <= 0.02 */
            double g = 1.0 + a;
            for (int n = 0; n < 6; n++) g = 1.0 + a * g;
            u = B * ih[i] * g;
        } else {
            R = sqrt(rho * rho + D);
            u = B / (h[i] - A);
        }
        big |= fabs(u) > ATAN_SERIES_MAX; /* an int: fmax would not vectorise */
        const double at = exact ? atan(u) : atan_series(u);
        const double bi = (R - kr0) * kidr, bj = (tofs - at) * kidt;
        const double fi = floor(bi), fj = floor(bj);
        const int ok = fi >= 1 && fi + 2 < nrk && fj >= 1 && fj + 2 < ntk;
        /* clamped in double (branch-free), so masked samples read inside;
         * one flat index (j nr + i < 4e8): one store less lets gcc 12
         * vectorise the loop */
        const double ci = fi >= 1.0 ? (fi <= nrk - 3.0 ? fi : nrk - 3.0) : 1.0; /* NaN: 1 */
        const double cj = fj >= 1.0 ? (fj <= ntk - 3.0 ? fj : ntk - 3.0) : 1.0;
        ii[i] = (int32_t)(cj * nrk + ci);
        ti[i] = (float)(bi - fi);
        tj[i] = (float)(bj - fj);
        mm[i] = ok ? 1.0f : 0.0f;
        cy[i] = (float)reduce_cycles(qc * (R - rho));
    }
    return big;
}

static void merge_row(void *vj, size_t jt, int worker)
{
    const struct merge_job *j = vj;
    ffbp_engine *e = j->e;
    const sub32 *s = j->s;
    const row_scratch *w = &e->rs[worker];
    const size_t nr = s->g.nr;
    const double th = s->g.t0 + (double)jt * s->g.dt, ct = cos(th), st = sin(th);
    const double dz = e->fp.z - s->g.c[2];
    for (size_t i = 0; i < nr; i++) w->ar[i] = w->ai[i] = 0;
    for (size_t c = 0; c < j->nkids; c++) {
        const sub32 *k = &j->kids[c];
        const double dx = k->g.c[0] - s->g.c[0], dy = k->g.c[1] - s->g.c[1], dzc = k->g.c[2] - s->g.c[2];
        const double A = ct * dx + st * dy, B = -st * dx + ct * dy;
        const double K0 = dx * dx + dy * dy + dzc * dzc - 2 * dz * dzc;
        /* the child's theta of this row's direction, on the child's branch */
        const double tk_mid = k->g.t0 + 0.5 * (double)k->g.nt * k->g.dt;
        const double tofs = ffbp_unwrap(th, tk_mid) - k->g.t0;
        const double kidr = 1.0 / k->g.dr, kidt = 1.0 / k->g.dt;
        const double *h = e->h, *ir2 = e->ir2, *ih = e->ih;
        if (range_series_ok(K0, A, h[nr - 1], s->g.r0) && h[0] > 0 &&
            fabs(A) <= SQRT_SERIES_MAX * h[0]) {
            if (merge_geometry(w, h, ir2, ih, nr, s->g.r0, s->g.dr, A, B, K0, k->g.r0, kidr, tofs,
                               kidt, e->qc, k, 1, 0))
                merge_geometry(w, h, ir2, ih, nr, s->g.r0, s->g.dr, A, B, K0, k->g.r0, kidr, tofs,
                               kidt, e->qc, k, 1, 1);
        } else if (merge_geometry(w, h, ir2, ih, nr, s->g.r0, s->g.dr, A, B, K0, k->g.r0, kidr,
                                  tofs, kidt, e->qc, k, 0, 0)) {
            merge_geometry(w, h, ir2, ih, nr, s->g.r0, s->g.dr, A, B, K0, k->g.r0, kidr, tofs, kidt,
                           e->qc, k, 0, 1);
        }
        read44_row(k->f, k->g.nr, w->ii, w->ti, w->tj, w->vr, w->vi, nr);
        accumulate_row(w, nr);
    }
    store_row(w, s->f + 2 * jt * nr, nr);
}

/* ---- the last step: a sub-image at the pixels -------------------------------- */

struct final_job {
    ffbp_engine *e;
    const sub32 *s;
};

/* series: rho and 1 / along by their series about the row's middle pixel
 * (final_series_ok said they converge) */
static inline int final_geometry(const row_scratch *w, const sarbp_grid *g, const sub32 *s,
                                    double dy, double dz, double cr, double sr, double tofs,
                                    double qc, int series, int exact)
{
    int big = 0;
    const double nrk = (double)s->g.nr, ntk = (double)s->g.nt, idr = 1.0 / s->g.dr,
                 idt = 1.0 / s->g.dt, r0 = s->g.r0;
    int32_t *restrict ii = w->ii;
    float *restrict ti = w->ti, *restrict tj = w->tj, *restrict mm = w->m, *restrict cy = w->cy;
    const double half = 0.5 * (double)(g->nx - 1), xc = g->xc - s->g.c[0];
    /* the middle pixel's range and along-track distance */
    const double rm2 = xc * xc + dy * dy + dz * dz, irm2 = 1.0 / rm2, rm = sqrt(rm2);
    const double am = xc * cr + dy * sr, iam = 1.0 / am;
    for (int x = 0; x < (int)g->nx; x++) { /* int: see stage0_row; sarbp_grid_x's arithmetic */
        const double ex = ((double)x - half) * g->dx, dx = xc + ex;
        const double along = dx * cr + dy * sr, across = dy * cr - dx * sr;
        double rho, u;
        if (series) {
            const double xs = ex * (2 * xc + ex) * irm2, a = -ex * cr * iam;
            rho = rm + rm * xs * sqrt1p_series(xs);
            /* 1 / (1 - a) to a^7, as in merge_geometry */
            double gs = 1.0 + a;
            for (int n = 0; n < 6; n++) gs = 1.0 + a * gs;
            u = across * iam * gs;
        } else {
            rho = sqrt(dx * dx + dy * dy + dz * dz);
            u = across / along;
        }
        big |= fabs(u) > ATAN_SERIES_MAX; /* an int: fmax would not vectorise */
        const double at = exact ? atan(u) : atan_series(u);
        const double bi = (rho - r0) * idr, bj = (tofs + at) * idt;
        const double fi = floor(bi), fj = floor(bj);
        const int ok = along > 0 && fi >= 1 && fi + 2 < nrk && fj >= 1 && fj + 2 < ntk;
        /* clamped in double (branch-free), so masked samples read inside;
         * one flat index (j nr + i < 4e8): one store less lets gcc 12
         * vectorise the loop */
        const double ci = fi >= 1.0 ? (fi <= nrk - 3.0 ? fi : nrk - 3.0) : 1.0; /* NaN: 1 */
        const double cj = fj >= 1.0 ? (fj <= ntk - 3.0 ? fj : ntk - 3.0) : 1.0;
        ii[x] = (int32_t)(cj * nrk + ci);
        ti[x] = (float)(bi - fi);
        tj[x] = (float)(bj - fj);
        mm[x] = ok ? 1.0f : 0.0f;
        cy[x] = (float)reduce_cycles(qc * rho);
    }
    return big;
}

static void final_row(void *vj, size_t iy, int worker)
{
    const struct final_job *j = vj;
    ffbp_engine *e = j->e;
    const sub32 *s = j->s;
    const row_scratch *w = &e->rs[worker];
    const sarbp_grid *g = &e->grid;
    const double dy = sarbp_grid_y(g, e->region.row0 + iy) - s->g.c[1], dz = g->zc - s->g.c[2];
    /* azimuths about the grid's middle direction: atan of small ratios */
    const double tr = s->g.t0 + 0.5 * (double)(s->g.nt - 1) * s->g.dt, cr = cos(tr), sr = sin(tr);
    /* the series of final_geometry converge when the row's half-width E is
     * small against the middle pixel's range and along-track distance */
    const double xm = g->xc - s->g.c[0], E = 0.5 * (double)(g->nx - 1) * fabs(g->dx);
    const double am = xm * cr + dy * sr, rm2 = xm * xm + dy * dy + dz * dz;
    if (am > 0 && E * fabs(cr) <= SQRT_SERIES_MAX * am &&
        E * (2 * fabs(xm) + E) <= SQRT_SERIES_MAX * rm2) {
        if (final_geometry(w, g, s, dy, dz, cr, sr, tr - s->g.t0, e->qc, 1, 0))
            final_geometry(w, g, s, dy, dz, cr, sr, tr - s->g.t0, e->qc, 1, 1);
    } else if (final_geometry(w, g, s, dy, dz, cr, sr, tr - s->g.t0, e->qc, 0, 0)) {
        final_geometry(w, g, s, dy, dz, cr, sr, tr - s->g.t0, e->qc, 0, 1);
    }
    read44_row(s->f, s->g.nr, w->ii, w->ti, w->tj, w->vr, w->vi, g->nx);
    sarbp_c32 *out = e->img + iy * g->nx;
    for (size_t x = 0; x < g->nx; x++) {
        float sn, cs;
        sincos_2pi(w->cy[x], &sn, &cs);
        sn *= w->m[x];
        cs *= w->m[x];
        out[x].re += w->vr[x] * cs - w->vi[x] * sn;
        out[x].im += w->vr[x] * sn + w->vi[x] * cs;
    }
}

/* ---- the stack ----------------------------------------------------------------- */

static sarbp_status to_pixels(ffbp_engine *e, sub32 *s)
{
    struct final_job j = {e, s};
    const double t0 = sarbp_now_s();
    sarbp_status st = sarbp_parallel_for(e->threads, e->region.nrows, final_row, &j);
    e->t_final += sarbp_now_s() - t0;
    e->final_count++;
    sub_release(e, s);
    return st;
}

/* s, sub-image number e->made[k] of level k, is complete */
static sarbp_status finished(ffbp_engine *e, int k, sub32 *s)
{
    const size_t m = e->made[k]++;
    if (k == e->levels) return to_pixels(e, s);
    e->pend[k][e->npend[k]++] = *s;
    if (e->npend[k] < e->prm.merge && m + 1 < e->nsub[k]) return SARBP_OK;
    /* the parent: number m / merge of level k + 1 */
    sub32 par;
    const double t0 = sarbp_now_s();
    sarbp_status st = sub_alloc(e, k + 1, m / e->prm.merge, &par);
    if (!st) {
        fill_h(e, &par, 0);
        struct merge_job j = {e, &par, e->pend[k], e->npend[k]};
        st = sarbp_parallel_for(e->threads, par.g.nt, merge_row, &j);
    }
    if (!st) st = prefilter_theta(e, &par, 1);
    e->t_merge += sarbp_now_s() - t0;
    for (size_t c = 0; c < e->npend[k]; c++) sub_release(e, &e->pend[k][c]);
    e->npend[k] = 0;
    if (st) {
        sub_release(e, &par);
        return st;
    }
    return finished(e, k + 1, &par);
}

/* The complete runs gathered in e->run (and the last, short run once every
 * pulse is in) onto their grids, in one parallel step; the pulses of an
 * incomplete run move to the front. Then each grid goes on, in order, as
 * if made alone: the image does not depend on how the runs were batched. */
static sarbp_status runs_done(ffbp_engine *e)
{
    const size_t base = e->prm.base;
    size_t n = e->run_n / base, tail = e->run_n % base;
    if (e->next == e->P && tail) { /* the last run is short */
        n++;
        tail = 0;
    }
    if (n == 0) return SARBP_OK;
    sub32 s[RUN_BATCH_MAX];
    const double t0 = sarbp_now_s();
    sarbp_status st = SARBP_OK;
    size_t made = 0;
    struct stage0_job j = {e, s, n, {0}};
    for (; !st && made < n; made++) {
        st = sub_alloc(e, 0, e->made[0] + made, &s[made]);
        if (st) break;
        const size_t want = made + 1 < n || !(e->next == e->P && e->run_n % base) ? base : e->run_n % base;
        if (s[made].p1 - s[made].p0 != want)
            st = sarbp_error(SARBP_ERR_INTERNAL, "ffbp: a run of %zu pulses for %zu", want,
                             s[made].p1 - s[made].p0);
        fill_h(e, &s[made], made);
        j.cum[made + 1] = j.cum[made] + s[made].g.nt;
    }
    if (!st) st = sarbp_parallel_for(e->threads, j.cum[n], stage0_row, &j);
    if (!st) st = prefilter_theta(e, s, n);
    e->t_stage0 += sarbp_now_s() - t0;
    if (tail) {
        memmove(e->run, e->run + n * base * e->run_stride, tail * e->run_stride * sizeof(float));
        memmove(e->run_geo, e->run_geo + 7 * n * base, tail * 7 * sizeof(double));
    }
    e->run_n = tail;
    size_t r = 0;
    for (; !st && r < n; r++) st = finished(e, 0, &s[r]);
    /* on failure: the grids not handed on (finished takes its own) */
    for (size_t q = r; q < made; q++) sub_release(e, &s[q]);
    return st;
}

/* ---- the engine's life ----------------------------------------------------- */

static void drop_stack(ffbp_engine *e)
{
    for (int k = 0; k <= FFBP_MAX_LEVELS; k++) {
        if (e->pend[k])
            for (size_t c = 0; c < e->npend[k]; c++) sub_release(e, &e->pend[k][c]);
        e->npend[k] = 0;
        e->made[k] = 0;
    }
    e->run_n = 0;
    e->next = 0;
    e->final_count = 0;
    e->polar_samples = 0;
    e->t_stage0 = e->t_merge = e->t_final = 0;
}

void ffbp_engine_free(ffbp_engine *e)
{
    if (!e) return;
    drop_stack(e);
    for (int k = 0; k <= FFBP_MAX_LEVELS; k++) free(e->pend[k]);
    for (int i = 0; i < e->ncache; i++) free(e->cache[i]);
    free(e->pos);
    free(e->run);
    free(e->run_geo);
    free(e->h);
    free(e->ir2);
    free(e->ih);
    free(e->rs);
    free(e->rs_mem);
    free(e);
}

/* the largest grid dimensions over footprint fp: scratch sizes */
static sarbp_status plan_sizes(ffbp_engine *e, const ffbp_footprint *fp)
{
    e->max_nr = 0;
    e->max_row = 0;
    for (int k = 0; k <= e->levels; k++)
        for (size_t m = 0; m < e->nsub[k]; m++) {
            size_t p0, p1;
            ffbp_sub_pulses(&e->prm, e->P, k, m, &p0, &p1);
            ffbp_polar g;
            SARBP_TRY(ffbp_polar_plan(e->pos, p0, p1, fp, e->kband, e->prm.os_theta,
                                      e->drho / e->prm.os_rho, &g));
            if (g.nr > e->max_nr) e->max_nr = g.nr;
            if (g.nt > e->max_row) e->max_row = g.nt;
        }
    return SARBP_OK;
}

sarbp_status ffbp_engine_create(const ffbp_pulses *pu, const sarbp_grid *g, sarbp_region r,
                                const sarbp_ffbp_params *prm, int threads, sarbp_c32 *img,
                                ffbp_engine **out)
{
    *out = NULL;
    SARBP_TRY(ffbp_check_params(prm));
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->height) /* terrain (sarbp/terrain.h): the polar images lie on a plane */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "FFBP forms on a plane; use --algorithm bp");
    if (r.nrows == 0 || r.row0 >= g->ny || r.nrows > g->ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: rows %zu to %zu are not in the grid", r.row0,
                           r.row0 + r.nrows);
    if (pu->npulses == 0) return sarbp_error(SARBP_ERR_INVALID, "ffbp: no pulses");
    if (g->nx > (size_t)INT32_MAX / 2)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: %zu pixels per row: at most %d", g->nx,
                           INT32_MAX / 2);
    SARBP_TRY(ffbp_check_pulses(pu));
    ffbp_engine *e = calloc(1, sizeof *e);
    if (!e) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    e->grid = *g;
    e->region = r;
    e->max_rows = r.nrows;
    e->prm = *prm;
    e->threads = threads > 0 ? threads : sarbp_cpu_count();
    e->P = pu->npulses;
    e->img = img;
    ffbp_footprint_of(g, r, &e->fp);
    double kmax;
    ffbp_pulse_bands(pu, &e->kc, &e->kband, &e->drho, &kmax);
    e->qc = e->kc / (2 * M_PI);
    e->levels = ffbp_level_counts(e->P, prm, e->nsub);
    sarbp_status st = SARBP_OK;
    if (e->levels >= FFBP_MAX_LEVELS) st = sarbp_error(SARBP_ERR_INVALID, "ffbp: too many levels");
    e->pos = st ? NULL : malloc(3 * e->P * sizeof(double));
    if (!st && !e->pos) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    if (!st) memcpy(e->pos, pu->pos, 3 * e->P * sizeof(double));
    for (int k = 0; !st && k < e->levels; k++) {
        e->pend[k] = calloc(prm->merge, sizeof(sub32));
        if (!e->pend[k]) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    /* scratch for the whole grid's footprint: any band's polar grids lie
     * inside it (a band sees a part of the same rectangle), so a later
     * region never needs more */
    ffbp_footprint whole;
    ffbp_footprint_of(g, (sarbp_region){0, g->ny}, &whole);
    if (!st) st = plan_sizes(e, &whole);
    if (!st) {
        const size_t n = e->max_nr > g->nx ? e->max_nr : g->nx;
        e->nbatch = RUN_BATCH_PULSES / prm->base;
        if (e->nbatch < 1) e->nbatch = 1;
        if (e->nbatch > RUN_BATCH_MAX) e->nbatch = RUN_BATCH_MAX;
        e->h = malloc(e->nbatch * e->max_nr * sizeof(double));
        e->ir2 = malloc(e->nbatch * e->max_nr * sizeof(double));
        e->ih = malloc(e->nbatch * e->max_nr * sizeof(double));
        e->rs = calloc((size_t)e->threads, sizeof *e->rs);
        /* 9 arrays of n 4-byte values per thread, 64 bytes between them */
        const size_t per = (n + 16) * 4;
        e->rs_mem = malloc((size_t)e->threads * 9 * per + 64);
        if (!e->h || !e->ir2 || !e->ih || !e->rs || !e->rs_mem) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        for (int t = 0; !st && t < e->threads; t++) {
            char *b = (char *)e->rs_mem + (size_t)t * 9 * per;
            row_scratch *w = &e->rs[t];
            w->ii = (int32_t *)(void *)b;
            w->ti = (float *)(void *)(b + 1 * per);
            w->tj = (float *)(void *)(b + 2 * per);
            w->cy = (float *)(void *)(b + 3 * per);
            w->m = (float *)(void *)(b + 4 * per);
            w->vr = (float *)(void *)(b + 5 * per);
            w->vi = (float *)(void *)(b + 6 * per);
            w->ar = (float *)(void *)(b + 7 * per);
            w->ai = (float *)(void *)(b + 8 * per);
        }
        e->run_geo = malloc(e->nbatch * prm->base * 7 * sizeof(double));
        if (!e->run_geo) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    if (st) {
        ffbp_engine_free(e);
        return st;
    }
    *out = e;
    return SARBP_OK;
}

sarbp_status ffbp_engine_restart(ffbp_engine *e, sarbp_region r, sarbp_c32 *img)
{
    if (r.nrows == 0 || r.nrows > e->max_rows || r.row0 >= e->grid.ny || r.nrows > e->grid.ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: rows %zu to %zu: at most %zu rows inside %zu",
                           r.row0, r.row0 + r.nrows, e->max_rows, e->grid.ny);
    drop_stack(e);
    e->region = r;
    e->img = img;
    ffbp_footprint_of(&e->grid, r, &e->fp);
    return SARBP_OK;
}

size_t ffbp_engine_next(const ffbp_engine *e)
{
    return e->next;
}

sarbp_status ffbp_engine_push(ffbp_engine *e, const sarbp_profiles *pr, size_t p0)
{
    if (!e->img) return sarbp_error(SARBP_ERR_INTERNAL, "ffbp: no image to add to");
    if (p0 != e->next)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: pulses must come in order: pulse %zu, expected %zu",
                           p0, e->next);
    if (pr->npulses > e->P - p0)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: pulses %zu to %zu of %zu", p0, p0 + pr->npulses, e->P);
    if (pr->npulses == 0) return SARBP_OK;
    if (pr->precision == SARBP_FP64 || !pr->data32)
        return sarbp_error(SARBP_ERR_INTERNAL, "ffbp: the FP32 engine needs FP32 profiles");
    if (!e->run) { /* the first block says how long a profile is */
        e->nbins = pr->nbins;
        e->interp = pr->interp;
        e->run_stride = 2 * (pr->nbins + 4);
        if (pr->nbins < 2 || pr->nbins > ((size_t)1 << 28) ||
            e->nbatch * e->prm.base > SIZE_MAX / sizeof(float) / e->run_stride)
            return sarbp_error(SARBP_ERR_INVALID, "ffbp: profiles of %zu bins", pr->nbins);
        e->run = calloc(e->nbatch * e->prm.base * e->run_stride, sizeof(float));
        if (!e->run) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a run of %zu pulses",
                                        e->prm.base);
    } else if (pr->nbins != e->nbins || pr->interp != e->interp) {
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: profiles changed length or interpolation");
    }
    for (size_t i = 0; i < pr->npulses; i++) {
        const size_t p = p0 + i;
        float *dst = e->run + e->run_n * e->run_stride;
        memcpy(dst + 4, pr->data32 + i * pr->nbins, pr->nbins * sizeof(sarbp_c32));
        double *geo = e->run_geo + 7 * e->run_n;
        geo[0] = e->pos[3 * p];
        geo[1] = e->pos[3 * p + 1];
        geo[2] = e->pos[3 * p + 2];
        geo[3] = pr->r0[i];
        geo[4] = pr->rstart[i];
        geo[5] = pr->dr[i];
        geo[6] = pr->fref[i];
        if (!(geo[5] > 0) || !isfinite(geo[3]) || !isfinite(geo[4]) || !isfinite(geo[6]))
            return sarbp_error(SARBP_ERR_INVALID, "ffbp: pulse %zu has no usable geometry", p);
        e->run_n++;
        e->next++;
        if (e->run_n == e->nbatch * e->prm.base || e->next == e->P) SARBP_TRY(runs_done(e));
    }
    /* the complete runs of this push now, not when the next one comes */
    return e->run_n >= e->prm.base ? runs_done(e) : SARBP_OK;
}

sarbp_status ffbp_engine_finish(ffbp_engine *e)
{
    if (e->next != e->P)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: finish after %zu of %zu pulses", e->next, e->P);
    /* every level's last group was merged as it completed (finished()
     * merges a short group when its last member is the level's last) */
    if (e->final_count != e->nsub[e->levels])
        return sarbp_error(SARBP_ERR_INTERNAL, "ffbp: %zu of %zu sub-images reached the pixels",
                           e->final_count, e->nsub[e->levels]);
    return SARBP_OK;
}

void ffbp_engine_info(const ffbp_engine *e, sarbp_ffbp_info *info)
{
    info->stages = e->levels + 1;
    info->final_subs = e->nsub[e->levels];
    info->polar_samples = e->polar_samples;
    info->stage0_s = e->t_stage0;
    info->merge_s = e->t_merge;
    info->final_s = e->t_final;
}

/* ---- the one-call form --------------------------------------------------------- */

sarbp_status sarbp_ffbp_cpu_fp32(const sarbp_profiles *pr, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, int threads, sarbp_c32 *img,
                                 sarbp_ffbp_info *info)
{
    if (!pr || !g || !prm || !img) return sarbp_error(SARBP_ERR_INVALID, "ffbp: a NULL argument");
    if (pr->precision == SARBP_FP64 || !pr->data32)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: sarbp_ffbp_cpu_fp32 needs FP32 profiles");
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->height) /* terrain (sarbp/terrain.h): the polar images lie on a plane */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "FFBP forms on a plane; use --algorithm bp");
    if (info) memset(info, 0, sizeof *info);
    if (pr->npulses == 0) return SARBP_OK;
    const ffbp_pulses pu = {pr->npulses, pr->pos, pr->fref, pr->dr};
    ffbp_engine *e;
    SARBP_TRY(ffbp_engine_create(&pu, g, (sarbp_region){0, g->ny}, prm, threads, img, &e));
    sarbp_status st = ffbp_engine_push(e, pr, 0);
    if (!st) st = ffbp_engine_finish(e);
    if (!st && info) ffbp_engine_info(e, info);
    ffbp_engine_free(e);
    return st;
}
