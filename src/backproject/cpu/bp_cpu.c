/* bp_cpu.c - the production CPU backprojector: FP32, cache-tiled, pthreads.
 *
 * Work split (seed 003, sections 1.3.1-1.3.2): the image is cut into tiles of
 * at most TILE_X x TILE_Y pixels; a task is a group of tiles, which runs the pulses
 * in blocks, each block over every tile of the group, so the profile bins
 * the group needs from a block stay in L2 and a tile's accumulators in L1.
 * Each pixel sums the pulses in order whatever the thread count and group
 * shape: results are bit-identical for any number of threads.
 *
 * Precision (primer, section 4): per (tile, pulse) the range R_c to the tile
 * centre, its range bin and the phasor exp(j 4 pi f dR_c / c) are computed
 * in FP64; per pixel only the small tile-relative quantities run in FP32: the
 * cancellation-free
 *     dR - dR_c = (2 d.(p_c - a) + |d|^2) / (|p - a| + R_c),  d = p - p_c,
 * as a short series (no square root or divide: the GPU's v3 does the same)
 * wherever the tile is small against the range, and the phase of that small
 * range is reduced to cycles in [-1/2, 1/2] before a polynomial sin/cos.
 * The FP32 phase of a pixel far from its tile centre limits the accuracy, so
 * tiles shrink from 16 x 16 (to 8 x 8 at least) where their half diagonal
 * spans more than TILE_MAX_CYCLES cycles; bench scene, X band, against
 * FP64: 98.8 dB at 0.1 m pixels (16 x 16), 99.0 at 0.2 m (16 x 8), 94.3 at
 * 0.4 m (8 x 8; 86.4 with 16 x 16).
 *
 * Speed: per (tile, pulse) the bins the tile can reach (|ddR| <= |d|, so a
 * window of 2 |d|max / dr intervals about the centre's) are staged into a
 * small contiguous buffer, already turned by the centre's phasor and
 * "interpolation-ready": per interval n the polynomial in the fraction t
 * that the kernel evaluates between bins n and n + 1 (cubic B-spline:
 * A + tB + t^2 C + t^3 D from bins n-1 .. n+2; quadratic: A + tB + t^2 C
 * over intervals shifted by half a bin; linear: A + tB), in planes of
 * complex values, with a zero guard entry at each end (intervals whose taps
 * would leave the profile are left out of the window). The pixel loop reads
 * each coefficient as one 64-bit (re, im) element from L1, with no bounds
 * test, weights or centre rotation per pixel. With AVX-512, or AVX2 and FMA,
 * the pixel loop is written with intrinsics, the same operations in the same
 * order in both (gcc 12 does not vectorise the indexed loads of the profile:
 * the loop ran scalar); elsewhere (other CPUs, SARBP_NATIVE=OFF) the same
 * arithmetic runs as plain C.
 *
 * Terrain (a grid with heights): the tile centre sits at the middle of its
 * pixels' heights, each pixel's offset d gains its height above that centre
 * (FP32, small: metres) and x gains U_z d_z, so accuracy holds as on flat
 * ground; the bound |ddR| <= |d| then counts the heights' spread (the tile
 * shrinks where that spans too many cycles, as above). Flat grids run the
 * same loops without the z term. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define BP_VEC 16
#ifndef BP_GATHER64
#define BP_GATHER64 1
#endif
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define BP_VEC 8
#else
#define BP_VEC 1
#endif

#include "core/parallel.h"
#include "sarbp/backproject.h"

#ifndef TILE_X
#define TILE_X 16
#endif
#ifndef TILE_Y
#define TILE_Y 16
#endif
#ifndef TILE_MAX_CYCLES
#define TILE_MAX_CYCLES 130.0
#endif
#define TILE_N (TILE_X * TILE_Y)
#define TILE_NPAD ((TILE_N + 15) / 16 * 16)

/* sin and cos of 2 pi t for t in [-1/2, 1/2]: polynomials for sin and cos
 * of pi t (degrees 7 and 8, interpolating at Chebyshev nodes), then the
 * double angle. Measured in FP32 over the interval: sin 2pi t errs by at
 * most 1.0e-6, cos 2pi t by 2.6e-6 (near -110 dB; the degree-11/12 Taylor
 * pair it replaces erred by 6e-8 at 9 more operations per pixel), far below
 * the FP32 path's 94-100 dB against the exact image on the regression data. */
#define SC_S1 3.141590357f
#define SC_S3 (-5.167405605f)
#define SC_S5 2.544000149f
#define SC_S7 (-0.5594350100f)
#define SC_C0 0.9999999404f
#define SC_C2 (-4.934792995f)
#define SC_C4 4.058410645f
#define SC_C6 (-1.331872940f)
#define SC_C8 0.2196824253f

static inline void sincos_2pi(float t, float *s_out, float *c_out)
{
    const float y = t * t;
    const float s = t * (SC_S1 + y * (SC_S3 + y * (SC_S5 + y * SC_S7)));
    const float c = SC_C0 + y * (SC_C2 + y * (SC_C4 + y * (SC_C6 + y * SC_C8)));
    const float sc = s * c;
    *s_out = sc + sc;
    *c_out = c * c - s * s;
}

/* Per (tile, pulse) terms. The pixel's range relative to the tile centre:
 * x = U.d + |d|^2 / (2 Rc) (U the unit vector from the antenna to the
 * centre), and ddR = 2x / (1 + sqrt(1 + 4 q x)), q = 1 / (2 Rc), evaluated
 * as the series x (1 - e + 2 e^2 - 5 e^3), e = q x, when its truncation
 * (14 e^4 x) is negligible (the caller checks it per tile and pulse), else
 * with the square root and divide. The bin, relative to the staged window,
 * is f0 + ddR inv_dr; entries 0 .. wlast of the window are valid indices. */
struct tile_pulse {
    const float *stage; /* planes A, B (, C, D) of wlast + 1 complex, ps floats apart */
    int wlast, ps;
    float f0;           /* the centre's bin, relative to the window */
    float ux, uy, uz, q; /* U, 1 / (2 Rc) */
    float inv_dr, kcyc;
};

static inline float tile_ddr(const struct tile_pulse *tp, int series, int terrain, float dx,
                             float dy, float dz, float dd)
{
    float x = tp->ux * dx + tp->uy * dy + tp->q * dd;
    if (terrain) x += tp->uz * dz;
    const float e = tp->q * x;
    if (series == 1) return x - x * e;
    if (series == 3) return x * (1.0f - e * (1.0f - e * (2.0f - 5.0f * e)));
    return 2.0f * x / (1.0f + sqrtf(1.0f + 4.0f * e));
}

/* One pulse over one tile, the portable loop: ncoef 2 (linear), 3
 * (quadratic) or 4 (cubic) complex coefficients per staged bin. */
static inline void tile_pixels_c(const struct tile_pulse *tp, int ncoef, int series, int terrain,
                                 int n, const float *restrict dxs, const float *restrict dys,
                                 const float *restrict dzs, const float *restrict dds,
                                 float *restrict are, float *restrict aim)
{
    for (int j = 0; j < n; j++) {
        const float ddR = tile_ddr(tp, series, terrain, dxs[j], dys[j], dzs[j], dds[j]);
        const float fb = tp->f0 + ddR * tp->inv_dr;
        const float fl = floorf(fb);
        const float t = fb - fl;
        int idx = (int)fl;
        idx = idx < 0 ? 0 : idx > tp->wlast ? tp->wlast : idx;
        const float *s = tp->stage + 2 * idx;
        float vr = s[(ncoef - 1) * tp->ps], vi = s[(ncoef - 1) * tp->ps + 1];
        for (int k = ncoef - 2; k >= 0; k--) {
            vr = vr * t + s[k * tp->ps];
            vi = vi * t + s[k * tp->ps + 1];
        }
        float cyc = ddR * tp->kcyc;
        cyc -= floorf(cyc + 0.5f);
        float sn, cs;
        sincos_2pi(cyc, &sn, &cs);
        are[j] += vr * cs - vi * sn;
        aim[j] += vr * sn + vi * cs;
    }
}

#if BP_VEC == 16
/* The same, 16 pixels at a time; n is a multiple of 16. */
static inline void tile_pixels_avx512(const struct tile_pulse *tp, int ncoef, int series,
                                      int terrain, int n, const float *restrict dxs,
                                      const float *restrict dys, const float *restrict dzs,
                                      const float *restrict dds, float *restrict are,
                                      float *restrict aim)
{
    const __m512 ux = _mm512_set1_ps(tp->ux), uy = _mm512_set1_ps(tp->uy), q = _mm512_set1_ps(tp->q);
    const __m512 uz = _mm512_set1_ps(tp->uz);
    const __m512 f0 = _mm512_set1_ps(tp->f0), inv_dr = _mm512_set1_ps(tp->inv_dr);
    const __m512 kcyc = _mm512_set1_ps(tp->kcyc), one = _mm512_set1_ps(1.0f);
    const __m512i wlast = _mm512_set1_epi32(tp->wlast), zero = _mm512_setzero_si512();
    const float *sa = tp->stage, *sb = sa + tp->ps, *sc = sb + tp->ps, *sd = sc + tp->ps;
#if BP_GATHER64
    const __m512i dup_lo = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const __m512i dup_hi = _mm512_add_epi32(dup_lo, _mm512_set1_epi32(8));
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
#endif
    for (int j = 0; j < n; j += 16) {
        const __m512 dx = _mm512_load_ps(dxs + j), dy = _mm512_load_ps(dys + j);
        const __m512 dd = _mm512_load_ps(dds + j);
        __m512 x = _mm512_fmadd_ps(ux, dx, _mm512_fmadd_ps(uy, dy, _mm512_mul_ps(q, dd)));
        if (terrain) x = _mm512_fmadd_ps(uz, _mm512_load_ps(dzs + j), x);
        const __m512 e = _mm512_mul_ps(q, x);
        __m512 ddR;
        if (series == 1) {
            ddR = _mm512_fnmadd_ps(x, e, x);
        } else if (series == 3) {
            __m512 s = _mm512_fnmadd_ps(_mm512_set1_ps(5.0f), e, _mm512_set1_ps(2.0f));
            s = _mm512_fnmadd_ps(e, s, one);
            s = _mm512_fnmadd_ps(e, s, one);
            ddR = _mm512_mul_ps(x, s);
        } else {
            const __m512 r = _mm512_sqrt_ps(_mm512_fmadd_ps(_mm512_set1_ps(4.0f), e, one));
            ddR = _mm512_div_ps(_mm512_add_ps(x, x), _mm512_add_ps(one, r));
        }
        const __m512 fb = _mm512_fmadd_ps(ddR, inv_dr, f0);
        const __m512 fl = _mm512_roundscale_ps(fb, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        const __m512 t = _mm512_sub_ps(fb, fl);
        __m512i idx = _mm512_cvttps_epi32(fl);
        idx = _mm512_min_epi32(_mm512_max_epi32(idx, zero), wlast);
#if BP_GATHER64
        /* each staged complex value is one 64-bit element: 8-lane gathers of
         * (re, im) pairs, the Horner steps on interleaved pairs with t
         * duplicated, then one split into re and im */
        const __m256i ilo = _mm512_castsi512_si256(idx), ihi = _mm512_extracti64x4_epi64(idx, 1);
        const __m512 tlo = _mm512_permutexvar_ps(dup_lo, t), thi = _mm512_permutexvar_ps(dup_hi, t);
#define G64(plane, half) _mm512_castpd_ps(_mm512_i32gather_pd(half, (const double *)(plane), 8))
        __m512 vlo, vhi;
        if (ncoef == 4) {
            vlo = _mm512_fmadd_ps(G64(sd, ilo), tlo, G64(sc, ilo));
            vhi = _mm512_fmadd_ps(G64(sd, ihi), thi, G64(sc, ihi));
            vlo = _mm512_fmadd_ps(vlo, tlo, G64(sb, ilo));
            vhi = _mm512_fmadd_ps(vhi, thi, G64(sb, ihi));
        } else if (ncoef == 3) {
            vlo = _mm512_fmadd_ps(G64(sc, ilo), tlo, G64(sb, ilo));
            vhi = _mm512_fmadd_ps(G64(sc, ihi), thi, G64(sb, ihi));
        } else {
            vlo = G64(sb, ilo);
            vhi = G64(sb, ihi);
        }
        vlo = _mm512_fmadd_ps(vlo, tlo, G64(sa, ilo));
        vhi = _mm512_fmadd_ps(vhi, thi, G64(sa, ihi));
#undef G64
        const __m512 vr = _mm512_permutex2var_ps(vlo, even, vhi);
        const __m512 vi = _mm512_permutex2var_ps(vlo, odd, vhi);
#else
        idx = _mm512_add_epi32(idx, idx);
        __m512 vr, vi;
        if (ncoef == 4) {
            vr = _mm512_i32gather_ps(idx, sd, 4);
            vi = _mm512_i32gather_ps(idx, sd + 1, 4);
            vr = _mm512_fmadd_ps(vr, t, _mm512_i32gather_ps(idx, sc, 4));
            vi = _mm512_fmadd_ps(vi, t, _mm512_i32gather_ps(idx, sc + 1, 4));
            vr = _mm512_fmadd_ps(vr, t, _mm512_i32gather_ps(idx, sb, 4));
            vi = _mm512_fmadd_ps(vi, t, _mm512_i32gather_ps(idx, sb + 1, 4));
        } else if (ncoef == 3) {
            vr = _mm512_i32gather_ps(idx, sc, 4);
            vi = _mm512_i32gather_ps(idx, sc + 1, 4);
            vr = _mm512_fmadd_ps(vr, t, _mm512_i32gather_ps(idx, sb, 4));
            vi = _mm512_fmadd_ps(vi, t, _mm512_i32gather_ps(idx, sb + 1, 4));
        } else {
            vr = _mm512_i32gather_ps(idx, sb, 4);
            vi = _mm512_i32gather_ps(idx, sb + 1, 4);
        }
        vr = _mm512_fmadd_ps(vr, t, _mm512_i32gather_ps(idx, sa, 4));
        vi = _mm512_fmadd_ps(vi, t, _mm512_i32gather_ps(idx, sa + 1, 4));
#endif
        __m512 cyc = _mm512_mul_ps(ddR, kcyc);
        cyc = _mm512_sub_ps(cyc, _mm512_roundscale_ps(cyc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m512 y = _mm512_mul_ps(cyc, cyc);
        __m512 s = _mm512_fmadd_ps(y, _mm512_set1_ps(SC_S7), _mm512_set1_ps(SC_S5));
        s = _mm512_fmadd_ps(y, s, _mm512_set1_ps(SC_S3));
        s = _mm512_fmadd_ps(y, s, _mm512_set1_ps(SC_S1));
        s = _mm512_mul_ps(s, cyc);
        __m512 c = _mm512_fmadd_ps(y, _mm512_set1_ps(SC_C8), _mm512_set1_ps(SC_C6));
        c = _mm512_fmadd_ps(y, c, _mm512_set1_ps(SC_C4));
        c = _mm512_fmadd_ps(y, c, _mm512_set1_ps(SC_C2));
        c = _mm512_fmadd_ps(y, c, _mm512_set1_ps(SC_C0));
        const __m512 h = _mm512_mul_ps(s, c);
        const __m512 sn = _mm512_add_ps(h, h);
        const __m512 cs = _mm512_fmsub_ps(c, c, _mm512_mul_ps(s, s));
        __m512 ar = _mm512_load_ps(are + j), ai = _mm512_load_ps(aim + j);
        ar = _mm512_fmadd_ps(vr, cs, _mm512_fnmadd_ps(vi, sn, ar));
        ai = _mm512_fmadd_ps(vr, sn, _mm512_fmadd_ps(vi, cs, ai));
        _mm512_store_ps(are + j, ar);
        _mm512_store_ps(aim + j, ai);
    }
}
#elif BP_VEC == 8
/* The complex entries ix[0], ix[1], ix[4] and ix[5] of a staged plane, as
 * (re, im) pairs in that order, by scalar 64-bit loads: AVX2's gathers are
 * microcoded on AMD. Zen 3, bench, one thread, quadratic / cubic / linear
 * Mbp/s per core-second: 406 / 307 / 454 so, 238 / 208 / 298 with 4-lane
 * _mm256_i32gather_pd of the pairs, 194 / 147 / 239 with 8-lane
 * _mm256_i32gather_ps of re and im. */
static inline __m256 load4x64(const float *plane, const int *ix)
{
    const __m64 *p = (const __m64 *)plane;
    const __m128 lo = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(p + ix[0])));
    const __m128 hi = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(p + ix[4])));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadh_pi(lo, p + ix[1])),
                                _mm_loadh_pi(hi, p + ix[5]), 1);
}

/* The same with AVX2 and FMA, 8 pixels at a time; n is a multiple of 8. */
static inline void tile_pixels_avx2(const struct tile_pulse *tp, int ncoef, int series,
                                    int terrain, int n, const float *restrict dxs,
                                    const float *restrict dys, const float *restrict dzs,
                                    const float *restrict dds, float *restrict are,
                                    float *restrict aim)
{
    const __m256 ux = _mm256_set1_ps(tp->ux), uy = _mm256_set1_ps(tp->uy), q = _mm256_set1_ps(tp->q);
    const __m256 uz = _mm256_set1_ps(tp->uz);
    const __m256 f0 = _mm256_set1_ps(tp->f0), inv_dr = _mm256_set1_ps(tp->inv_dr);
    const __m256 kcyc = _mm256_set1_ps(tp->kcyc), one = _mm256_set1_ps(1.0f);
    const __m256i wlast = _mm256_set1_epi32(tp->wlast), zero = _mm256_setzero_si256();
    const float *sa = tp->stage, *sb = sa + tp->ps, *sc = sb + tp->ps, *sd = sc + tp->ps;
    for (int j = 0; j < n; j += 8) {
        const __m256 dx = _mm256_load_ps(dxs + j), dy = _mm256_load_ps(dys + j);
        const __m256 dd = _mm256_load_ps(dds + j);
        __m256 x = _mm256_fmadd_ps(ux, dx, _mm256_fmadd_ps(uy, dy, _mm256_mul_ps(q, dd)));
        if (terrain) x = _mm256_fmadd_ps(uz, _mm256_load_ps(dzs + j), x);
        const __m256 e = _mm256_mul_ps(q, x);
        __m256 ddR;
        if (series == 1) {
            ddR = _mm256_fnmadd_ps(x, e, x);
        } else if (series == 3) {
            __m256 s = _mm256_fnmadd_ps(_mm256_set1_ps(5.0f), e, _mm256_set1_ps(2.0f));
            s = _mm256_fnmadd_ps(e, s, one);
            s = _mm256_fnmadd_ps(e, s, one);
            ddR = _mm256_mul_ps(x, s);
        } else {
            const __m256 r = _mm256_sqrt_ps(_mm256_fmadd_ps(_mm256_set1_ps(4.0f), e, one));
            ddR = _mm256_div_ps(_mm256_add_ps(x, x), _mm256_add_ps(one, r));
        }
        const __m256 fb = _mm256_fmadd_ps(ddR, inv_dr, f0);
        const __m256 fl = _mm256_round_ps(fb, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        const __m256 t = _mm256_sub_ps(fb, fl);
        __m256i idx = _mm256_cvttps_epi32(fl);
        idx = _mm256_min_epi32(_mm256_max_epi32(idx, zero), wlast);
        /* each staged complex value is one 64-bit element (load4x64):
         * pixels 0, 1, 4, 5 into one vector and 2, 3, 6, 7 into another, so
         * that in-lane unpacks duplicate t for them and in-lane shuffles
         * split the results into re and im in pixel order */
        int ix[8];
        _mm256_storeu_si256((__m256i *)ix, idx);
        const __m256 tlo = _mm256_unpacklo_ps(t, t), thi = _mm256_unpackhi_ps(t, t);
        __m256 vlo, vhi;
        if (ncoef == 4) {
            vlo = _mm256_fmadd_ps(load4x64(sd, ix), tlo, load4x64(sc, ix));
            vhi = _mm256_fmadd_ps(load4x64(sd, ix + 2), thi, load4x64(sc, ix + 2));
            vlo = _mm256_fmadd_ps(vlo, tlo, load4x64(sb, ix));
            vhi = _mm256_fmadd_ps(vhi, thi, load4x64(sb, ix + 2));
        } else if (ncoef == 3) {
            vlo = _mm256_fmadd_ps(load4x64(sc, ix), tlo, load4x64(sb, ix));
            vhi = _mm256_fmadd_ps(load4x64(sc, ix + 2), thi, load4x64(sb, ix + 2));
        } else {
            vlo = load4x64(sb, ix);
            vhi = load4x64(sb, ix + 2);
        }
        vlo = _mm256_fmadd_ps(vlo, tlo, load4x64(sa, ix));
        vhi = _mm256_fmadd_ps(vhi, thi, load4x64(sa, ix + 2));
        const __m256 vr = _mm256_shuffle_ps(vlo, vhi, _MM_SHUFFLE(2, 0, 2, 0));
        const __m256 vi = _mm256_shuffle_ps(vlo, vhi, _MM_SHUFFLE(3, 1, 3, 1));
        __m256 cyc = _mm256_mul_ps(ddR, kcyc);
        cyc = _mm256_sub_ps(cyc, _mm256_round_ps(cyc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256 y = _mm256_mul_ps(cyc, cyc);
        __m256 s = _mm256_fmadd_ps(y, _mm256_set1_ps(SC_S7), _mm256_set1_ps(SC_S5));
        s = _mm256_fmadd_ps(y, s, _mm256_set1_ps(SC_S3));
        s = _mm256_fmadd_ps(y, s, _mm256_set1_ps(SC_S1));
        s = _mm256_mul_ps(s, cyc);
        __m256 c = _mm256_fmadd_ps(y, _mm256_set1_ps(SC_C8), _mm256_set1_ps(SC_C6));
        c = _mm256_fmadd_ps(y, c, _mm256_set1_ps(SC_C4));
        c = _mm256_fmadd_ps(y, c, _mm256_set1_ps(SC_C2));
        c = _mm256_fmadd_ps(y, c, _mm256_set1_ps(SC_C0));
        const __m256 h = _mm256_mul_ps(s, c);
        const __m256 sn = _mm256_add_ps(h, h);
        const __m256 cs = _mm256_fmsub_ps(c, c, _mm256_mul_ps(s, s));
        __m256 ar = _mm256_load_ps(are + j), ai = _mm256_load_ps(aim + j);
        ar = _mm256_fmadd_ps(vr, cs, _mm256_fnmadd_ps(vi, sn, ar));
        ai = _mm256_fmadd_ps(vr, sn, _mm256_fmadd_ps(vi, cs, ai));
        _mm256_store_ps(are + j, ar);
        _mm256_store_ps(aim + j, ai);
    }
}
#endif

/* One pulse over one tile: n pixels, the scratch padded to a multiple of 16
 * (TILE_NPAD), so the vector loops run n rounded up to their width (padding
 * lanes are never written back); series 1 or 3 (the order of tile_ddr's
 * series) or 0 (its exact form); terrain: the pixels' heights dzs count. */
static void tile_pixels(const struct tile_pulse *tp, int nc, int series, int terrain, int n,
                        const float *dxs, const float *dys, const float *dzs, const float *dds,
                        float *are, float *aim)
{
#if BP_VEC == 16
#define TILE_PIXELS(nc, sr, tr) \
    tile_pixels_avx512(tp, nc, sr, tr, (n + 15) & ~15, dxs, dys, dzs, dds, are, aim)
#elif BP_VEC == 8
#define TILE_PIXELS(nc, sr, tr) \
    tile_pixels_avx2(tp, nc, sr, tr, (n + 7) & ~7, dxs, dys, dzs, dds, are, aim)
#else
#define TILE_PIXELS(nc, sr, tr) tile_pixels_c(tp, nc, sr, tr, n, dxs, dys, dzs, dds, are, aim)
#endif
#define TILE_CHAIN(tr)                                         \
    do {                                                       \
        if (nc == 4 && series == 1) TILE_PIXELS(4, 1, tr);     \
        else if (nc == 4 && series == 3) TILE_PIXELS(4, 3, tr); \
        else if (nc == 4) TILE_PIXELS(4, 0, tr);               \
        else if (nc == 3 && series == 1) TILE_PIXELS(3, 1, tr); \
        else if (nc == 3 && series == 3) TILE_PIXELS(3, 3, tr); \
        else if (nc == 3) TILE_PIXELS(3, 0, tr);               \
        else if (series == 1) TILE_PIXELS(2, 1, tr);           \
        else if (series == 3) TILE_PIXELS(2, 3, tr);           \
        else TILE_PIXELS(2, 0, tr);                            \
    } while (0)
    if (terrain) TILE_CHAIN(1);
    else TILE_CHAIN(0);
#undef TILE_CHAIN
#undef TILE_PIXELS
}

/* Stages the w - 2 intervals n = n0 + 1 .. n0 + w - 2 (between bins n and
 * n + 1, every tap inside profile prof) of the window turned by (cr, ci),
 * as entries 1 .. w - 2 of planes ps floats apart; entries 0 and w - 1 are
 * zero guards. The cubic B-spline between n and n + 1, p = bins n-1 .. n+2:
 *     A = (p0 + p2) / 6 + 2 p1 / 3,  B = (p2 - p0) / 2,
 *     C = (p0 + p2) / 2 - p1,        D = (p3 - p0) / 6 + (p1 - p2) / 2;
 * linear: A = p1, B = p2 - p1. The quadratic B-spline's piece of bin n
 * (bins p0, p1, p2 = n-1 .. n+1), read over [n - 1/2, n + 1/2) as interval n
 * of bins shifted by half a bin (the caller adds 1/2 to the bin position,
 * so t' = t + 1/2 is in [0, 1)): A = (p0 + p1) / 2, B = p1 - p0,
 * C = (p0 + p2) / 2 - p1. raw is scratch for w + 1 complex values.
 * Plain loops over contiguous floats: the compiler vectorises them. */
static void stage_window(const sarbp_c32 *prof, long n0, int w, sarbp_interp k, float cr, float ci,
                         int ps, float *restrict raw, float *restrict st)
{
    const int m = w - 2; /* staged intervals */
    const int cubic = k == SARBP_INTERP_CUBIC, quad = k == SARBP_INTERP_QUADRATIC;
    const int nraw = cubic ? m + 3 : m + 2 - (quad ? 0 : 1);
    const float *restrict src = (const float *)(prof + n0 + (cubic || quad ? 0 : 1));
    for (int b = 0; b < nraw; b++) {
        const float pr = src[2 * b], pi = src[2 * b + 1];
        raw[2 * b] = pr * cr - pi * ci;
        raw[2 * b + 1] = pr * ci + pi * cr;
    }
    float *restrict A = st, *restrict B = st + ps, *restrict C = B + ps, *restrict D = C + ps;
    const int nf = 2 * m;
    if (cubic) {
        for (int f = 0; f < nf; f++) {
            const float p0 = raw[f], p1 = raw[f + 2], p2 = raw[f + 4], p3 = raw[f + 6];
            A[f + 2] = (p0 + p2) * (1.0f / 6.0f) + p1 * (2.0f / 3.0f);
            B[f + 2] = (p2 - p0) * 0.5f;
            C[f + 2] = (p0 + p2) * 0.5f - p1;
            D[f + 2] = (p3 - p0) * (1.0f / 6.0f) + (p1 - p2) * 0.5f;
        }
        C[0] = C[1] = C[nf + 2] = C[nf + 3] = 0;
        D[0] = D[1] = D[nf + 2] = D[nf + 3] = 0;
    } else if (quad) {
        for (int f = 0; f < nf; f++) {
            const float p0 = raw[f], p1 = raw[f + 2], p2 = raw[f + 4];
            A[f + 2] = (p0 + p1) * 0.5f;
            B[f + 2] = p1 - p0;
            C[f + 2] = (p0 + p2) * 0.5f - p1;
        }
        C[0] = C[1] = C[nf + 2] = C[nf + 3] = 0;
    } else {
        for (int f = 0; f < nf; f++) {
            A[f + 2] = raw[f];
            B[f + 2] = raw[f + 2] - raw[f];
        }
    }
    A[0] = A[1] = A[nf + 2] = A[nf + 3] = 0;
    B[0] = B[1] = B[nf + 2] = B[nf + 3] = 0;
}

/* A task is a group of GROUP_X x GROUP_Y tiles; it runs the pulses in blocks
 * of PULSE_BLOCK, each block over every tile of the group in turn, so the
 * profile bins the group needs from a block (a few hundred bins per pulse)
 * stay in L2 while its tiles take their windows from them. */
#ifndef GROUP_X
#define GROUP_X 4
#endif
#ifndef GROUP_Y
#define GROUP_Y 4
#endif
#ifndef PULSE_BLOCK
#define PULSE_BLOCK 32
#endif
#define GROUP_N (GROUP_X * GROUP_Y)

struct tile_scratch {
    float dx[TILE_NPAD], dy[TILE_NPAD], dz[TILE_NPAD], dd[TILE_NPAD];
    float are[TILE_NPAD], aim[TILE_NPAD];
};

struct tile_info {
    size_t x0, y0, nx, ny;
    double pcx, pcy, pcz, hd; /* centre; the largest |d| (the half diagonal when flat), which
                                 bounds |ddR| */
};

/* Floats of one worker's staging buffers: four planes of ps(wmax) floats and
 * the turned raw bins (wmax + 1 complex), in 64-byte multiples. */
static int plane_floats(int w)
{
    return (2 * w + 15) / 16 * 16;
}

static size_t stage_floats(int wmax)
{
    return 4 * (size_t)plane_floats(wmax) + (2 * (size_t)wmax + 2 + 15) / 16 * 16;
}

struct fp32_ctx {
    const sarbp_profiles *pr;
    const sarbp_grid *g;
    size_t row0, nrows;           /* the rows formed; img row 0 = grid row row0 */
    sarbp_c32 *img;
    size_t tw, th;                /* tile shape, at most TILE_X x TILE_Y */
    size_t ntx, nty;
    size_t gw, gh, ngx;           /* tiles per group (at most GROUP_X x GROUP_Y); groups across */
    int wmax;                     /* staged window entries at most */
    struct tile_scratch *scratch; /* GROUP_N per worker */
    float *stage;                 /* stage_floats(wmax) per worker */
};

/* Pulses [i0, i1) over one tile. First the per-(tile, pulse) terms for the
 * whole block, in FP64, in a loop the compiler vectorises (no library
 * calls: the centre's phasor, whose error is common to the tile, by the
 * FP32 polynomial); then per pulse the staging and the pixel loop. */
static void tile_pulses(const struct fp32_ctx *c, const struct tile_info *ti,
                        struct tile_scratch *s, size_t i0, size_t i1, float *stage, float *raw)
{
    const sarbp_profiles *pr = c->pr;
    const double pcx = ti->pcx, pcy = ti->pcy, pcz = ti->pcz, hd = ti->hd;
    const int n = (int)(ti->nx * ti->ny);
    const int cubic = pr->interp == SARBP_INTERP_CUBIC, quad = pr->interp == SARBP_INTERP_QUADRATIC;
    const int nc = cubic ? 4 : quad ? 3 : 2;
    const long nbins = (long)pr->nbins;
    /* valid intervals (every tap inside the profile); the quadratic's are
     * its bins' pieces, shifted by half a bin (stage_window) */
    const double vlo = cubic || quad ? 1 : 0, vhi = (double)nbins - (cubic || quad ? 3 : 2);
    const double shift = quad ? 0.5 : 0.0;
    const int np = (int)(i1 - i0);
    double bc[PULSE_BLOCK], wlo[PULSE_BLOCK], whi[PULSE_BLOCK], e[PULSE_BLOCK];
    float cr[PULSE_BLOCK], ci[PULSE_BLOCK], ux[PULSE_BLOCK], uy[PULSE_BLOCK], uz[PULSE_BLOCK];
    float q[PULSE_BLOCK];
    float idr[PULSE_BLOCK], kc[PULSE_BLOCK];
    const double *restrict pos = pr->pos + 3 * i0, *restrict r0 = pr->r0 + i0;
    const double *restrict rs = pr->rstart + i0, *restrict dr = pr->dr + i0, *restrict fr = pr->fref + i0;
    for (int k = 0; k < np; k++) {
        const double vx = pcx - pos[3 * k], vy = pcy - pos[3 * k + 1], vz = pcz - pos[3 * k + 2];
        const double Rc = sqrt(vx * vx + vy * vy + vz * vz), iRc = 1.0 / Rc;
        const double dRc = Rc - r0[k], idr_ = 1.0 / dr[k];
        bc[k] = (dRc - rs[k]) * idr_ + shift;
        /* intervals the tile can reach (|ddR| <= hd), one more each side for
         * FP32 rounding, within the valid ones */
        const double span = hd * idr_;
        const double lo = floor(bc[k] - span) - 1.0, hi = floor(bc[k] + span) + 1.0;
        wlo[k] = lo > vlo ? lo : vlo;
        whi[k] = hi < vhi ? hi : vhi;
        const double kcyc = 2.0 * fr[k] / SARBP_C, cyc = kcyc * dRc;
        float sn, cs;
        sincos_2pi((float)(cyc - floor(cyc + 0.5)), &sn, &cs);
        cr[k] = cs;
        ci[k] = sn;
        ux[k] = (float)(vx * iRc);
        uy[k] = (float)(vy * iRc);
        uz[k] = (float)(vz * iRc);
        q[k] = (float)(0.5 * iRc);
        idr[k] = (float)idr_;
        kc[k] = (float)kcyc;
        e[k] = hd * 0.5 * iRc * 1.01; /* e = x / (2 Rc) at most, x <= hd (1 + e) */
    }
    for (int k = 0; k < np; k++) {
        /* the window two pulses on, from L2 or beyond into L1 while this one runs */
        if (k + 2 < np && wlo[k + 2] <= whi[k + 2]) {
            const char *p0 = (const char *)(pr->data32 + (i0 + (size_t)k + 2) * pr->nbins + (long)wlo[k + 2] - 1);
            const char *p1 = (const char *)(pr->data32 + (i0 + (size_t)k + 2) * pr->nbins + (long)whi[k + 2] + 3);
            for (const char *a = p0; a < p1; a += 64) __builtin_prefetch(a);
        }
        if (!(wlo[k] <= whi[k])) continue; /* the tile sees no valid interval of this pulse */
        const long n0 = (long)wlo[k] - 1;  /* entry 0: the guard below the window */
        const int w = (int)((long)whi[k] - (long)wlo[k]) + 3;
        assert(w <= c->wmax); /* wmax bounds 2 span + 6 */
        const int ps = plane_floats(w);
        stage_window(pr->data32 + (i0 + (size_t)k) * pr->nbins, n0, w, pr->interp, cr[k], ci[k], ps,
                     raw, stage);
        const struct tile_pulse tp = {stage, w - 1, ps, (float)(bc[k] - (double)n0), ux[k], uy[k],
                                      uz[k], q[k], idr[k], kc[k]};
        /* the series to e (truncation 2 e^2 x) where that is below 1e-6
         * cycles, else to e^3 (14 e^4 x) where that is below 1e-7 cycles,
         * else the square root */
        const double x = hd * 1.01, ek = e[k], ek2 = ek * ek, kcyc = kc[k];
        const int series = ek >= 0.05 ? 0 : 2.0 * ek2 * x * kcyc < 1e-6 ? 1
                           : 14.0 * ek2 * ek2 * x * kcyc < 1e-7 ? 3 : 0;
        tile_pixels(&tp, nc, series, c->g->height != NULL, n, s->dx, s->dy, s->dz, s->dd, s->are,
                    s->aim);
    }
}

static void run_group(void *vctx, size_t task, int worker)
{
    const struct fp32_ctx *c = vctx;
    const sarbp_grid *g = c->g;
    struct tile_scratch *scr = c->scratch + (size_t)worker * GROUP_N;
    float *stage = c->stage + (size_t)worker * stage_floats(c->wmax);
    float *raw = stage + 4 * (size_t)plane_floats(c->wmax);
    const size_t gx = task % c->ngx, gy = task / c->ngx;
    struct tile_info ti[GROUP_N];
    int nt = 0;
    for (size_t ty = gy * c->gh; ty < (gy + 1) * c->gh && ty < c->nty; ty++)
        for (size_t tx = gx * c->gw; tx < (gx + 1) * c->gw && tx < c->ntx; tx++) {
            struct tile_info *t = &ti[nt];
            struct tile_scratch *s = &scr[nt++];
            t->x0 = tx * c->tw;
            t->y0 = c->row0 + ty * c->th;
            t->nx = (t->x0 + c->tw <= g->nx) ? c->tw : g->nx - t->x0;
            t->ny = (t->y0 + c->th <= c->row0 + c->nrows) ? c->th : c->row0 + c->nrows - t->y0;
            const size_t n = t->nx * t->ny;
            /* tile centre (FP64) and pixel offsets from it (FP32, small); the
             * padding lanes sit at the centre and are never written back */
            t->pcx = 0.5 * (sarbp_grid_x(g, t->x0) + sarbp_grid_x(g, t->x0 + t->nx - 1));
            t->pcy = 0.5 * (sarbp_grid_y(g, t->y0) + sarbp_grid_y(g, t->y0 + t->ny - 1));
            t->hd = 0.5 * hypot((double)(t->nx - 1) * g->dx, (double)(t->ny - 1) * g->dy);
            t->pcz = g->zc;
            if (g->height) { /* the centre at the middle of the tile's heights */
                double zlo = INFINITY, zhi = -INFINITY;
                for (size_t j = 0; j < n; j++) {
                    const double z = sarbp_grid_z(g, t->x0 + j % t->nx, t->y0 + j / t->nx);
                    zlo = z < zlo ? z : zlo;
                    zhi = z > zhi ? z : zhi;
                }
                t->pcz = 0.5 * (zlo + zhi);
                t->hd = 0;
            }
            for (size_t j = 0; j < TILE_NPAD; j++) {
                if (j >= n) {
                    s->dx[j] = s->dy[j] = s->dz[j] = s->dd[j] = s->are[j] = s->aim[j] = 0;
                    continue;
                }
                const size_t ix = t->x0 + j % t->nx, iy = t->y0 + j / t->nx;
                const double dx = sarbp_grid_x(g, ix) - t->pcx, dy = sarbp_grid_y(g, iy) - t->pcy;
                const double dz = g->height ? sarbp_grid_z(g, ix, iy) - t->pcz : 0.0;
                const double dd = dx * dx + dy * dy + dz * dz;
                if (g->height && sqrt(dd) > t->hd) t->hd = sqrt(dd);
                s->dx[j] = (float)dx;
                s->dy[j] = (float)dy;
                s->dz[j] = (float)dz;
                s->dd[j] = (float)dd;
                const sarbp_c32 v = c->img[(iy - c->row0) * g->nx + ix];
                s->are[j] = v.re;
                s->aim[j] = v.im;
            }
        }

    const size_t np = c->pr->npulses;
    for (size_t i0 = 0; i0 < np; i0 += PULSE_BLOCK) {
        const size_t i1 = i0 + PULSE_BLOCK < np ? i0 + PULSE_BLOCK : np;
        for (int k = 0; k < nt; k++) tile_pulses(c, &ti[k], &scr[k], i0, i1, stage, raw);
    }

    for (int k = 0; k < nt; k++) {
        const size_t n = ti[k].nx * ti[k].ny;
        for (size_t j = 0; j < n; j++) {
            const size_t ix = ti[k].x0 + j % ti[k].nx, iy = ti[k].y0 + j / ti[k].nx;
            c->img[(iy - c->row0) * g->nx + ix].re = scr[k].are[j];
            c->img[(iy - c->row0) * g->nx + ix].im = scr[k].aim[j];
        }
    }
}

/* A bound on |d| over every tile of tw x th pixels of rows r: the half
 * diagonal, and on terrain the half spread of a tile's heights with it. */
static double tile_reach(const sarbp_grid *g, sarbp_region r, size_t tw, size_t th)
{
    const double hd = 0.5 * hypot((double)(tw - 1) * g->dx, (double)(th - 1) * g->dy);
    if (!g->height) return hd;
    double spread = 0;
    for (size_t y0 = r.row0; y0 < r.row0 + r.nrows; y0 += th)
        for (size_t x0 = 0; x0 < g->nx; x0 += tw) {
            double zlo = INFINITY, zhi = -INFINITY;
            for (size_t iy = y0; iy < y0 + th && iy < r.row0 + r.nrows; iy++)
                for (size_t ix = x0; ix < x0 + tw && ix < g->nx; ix++) {
                    const double z = sarbp_grid_z(g, ix, iy);
                    zlo = z < zlo ? z : zlo;
                    zhi = z > zhi ? z : zhi;
                }
            if (zhi - zlo > spread) spread = zhi - zlo;
        }
    return hypot(hd, 0.5 * spread) * (1 + 1e-12);
}

sarbp_status sarbp_bp_cpu_fp32(const sarbp_profiles *pr, const sarbp_grid *g, int threads,
                               sarbp_c32 *img)
{
    return sarbp_bp_cpu_fp32_rows(pr, g, (sarbp_region){0, g->ny}, threads, img);
}

sarbp_status sarbp_bp_cpu_fp32_rows(const sarbp_profiles *pr, const sarbp_grid *g, sarbp_region r,
                                    int threads, sarbp_c32 *img)
{
    if (pr->precision == SARBP_FP64 || !pr->data32)
        return sarbp_error(SARBP_ERR_INTERNAL, "FP32 backprojection needs FP32 profiles");
    if (pr->nbins > INT32_MAX / 4)
        return sarbp_error(SARBP_ERR_INVALID, "too many range bins for the CPU path");
    SARBP_TRY(sarbp_grid_validate(g));
    if (r.row0 > g->ny || r.nrows > g->ny - r.row0)
        return sarbp_error(SARBP_ERR_INVALID, "rows %zu to %zu are outside the grid's %zu", r.row0,
                           r.row0 + r.nrows, g->ny);
    if (r.nrows == 0) return SARBP_OK;
    if (threads <= 0) threads = sarbp_cpu_count();
    struct fp32_ctx c;
    c.pr = pr;
    c.g = g;
    c.row0 = r.row0;
    c.nrows = r.nrows;
    c.img = img;
    /* The FP32 phase of a pixel at d from its tile centre carries about
     * 2^-24 of the ddR kcyc cycles it spans: smaller tiles (down to 8 x 8)
     * where the tile's half diagonal spans more than TILE_MAX_CYCLES (coarse
     * pixels; 16 x 16 at 0.1 m and X band span 68). Per (tile, pulse) costs
     * then weigh more: bench scene at 0.2 m, 424 Mbp/s per core at 99.0 dB
     * against FP64 (16 x 8) instead of 449 at 93.2 (16 x 16). */
    double kmax = 0;
    for (size_t i = 0; i < pr->npulses; i++)
        if (2.0 * pr->fref[i] / SARBP_C > kmax) kmax = 2.0 * pr->fref[i] / SARBP_C;
    c.tw = TILE_X;
    c.th = TILE_Y;
    while (c.tw * c.th > 64 &&
           tile_reach(g, r, c.tw, c.th) * kmax > TILE_MAX_CYCLES) {
        if ((double)c.tw * g->dx >= (double)c.th * g->dy) c.tw /= 2;
        else c.th /= 2;
    }
    c.ntx = (g->nx + c.tw - 1) / c.tw;
    c.nty = (r.nrows + c.th - 1) / c.th;
    /* smaller groups where there would be too few to share among the threads */
    c.gw = GROUP_X;
    c.gh = GROUP_Y;
    while (c.gw * c.gh > 1 && ((c.ntx + c.gw - 1) / c.gw) * ((c.nty + c.gh - 1) / c.gh) < 4 * (size_t)threads) {
        if (c.gw >= c.gh) c.gw /= 2;
        else c.gh /= 2;
    }
    c.ngx = (c.ntx + c.gw - 1) / c.gw;
    const size_t ngy = (c.nty + c.gh - 1) / c.gh;
    /* the staged window: at most 2 span + 6 entries (span = the tile's half
     * diagonal in bins of the finest pulse), and never more than the profile */
    double drmin = INFINITY;
    for (size_t i = 0; i < pr->npulses; i++)
        if (pr->dr[i] < drmin) drmin = pr->dr[i];
    const double hd = tile_reach(g, r, c.tw, c.th);
    double wm = pr->npulses ? 2.0 * ceil(hd / drmin) + 8.0 : 8.0;
    if (!(wm <= (double)pr->nbins + 8.0)) wm = (double)pr->nbins + 8.0;
    c.wmax = (int)wm;
    c.scratch = aligned_alloc(64, (size_t)threads * GROUP_N * sizeof(struct tile_scratch));
    c.stage = aligned_alloc(64, (size_t)threads * stage_floats(c.wmax) * sizeof(float));
    sarbp_status st = SARBP_OK;
    if (!c.scratch || !c.stage) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for tile buffers");
    else st = sarbp_parallel_for(threads, c.ngx * ngy, run_group, &c);
    free(c.scratch);
    free(c.stage);
    return st;
}
