/* test_half.c - the host FP16 conversions of src/core/half.h: FP16 -> FP32 for
 * all 65536 patterns against the binary16 formula and back; FP32 -> FP16
 * against a round-to-nearest-even reference computed in double (and against
 * GCC's _Float16 where the compiler has it) over every tie and near-tie of
 * the half grid, the overflow and underflow boundaries and a large sweep of
 * bit patterns; the block scale; the __half2 layout of the block conversion. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "../src/core/half.h" /* internal header: tests link the library directly */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int half_is_nan(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

/* The value of a half pattern from the binary16 definition, in double. */
static double half_value(uint16_t h)
{
    const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp(m, -24);
    else v = ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

/* Round-to-nearest-even half of x, as the half's value in double (NaN for
 * NaN). Half quantum: 2^-24 below 2^-14, else 2^(exponent - 10). */
static double ref_round(float xf)
{
    const double x = xf;
    if (isnan(x)) return NAN;
    const double a = fabs(x);
    double r;
    if (a >= 65520.0) {
        r = INFINITY;
    } else {
        int e;
        frexp(a, &e); /* a = f 2^e, f in [0.5, 1) */
        const double q = a < 0x1p-14 ? 0x1p-24 : ldexp(1.0, e - 11);
        r = nearbyint(a / q) * q; /* a / q exact: q is a power of two */
    }
    return signbit(x) ? -r : r;
}

static unsigned long long n_checked;

static void check_f32(float x)
{
    const uint16_t h = sarbp_f32_to_f16(x);
    const double want = ref_round(x);
    n_checked++;
    if (isnan(want)) {
        if (!half_is_nan(h)) fail_msg("f32 0x%08x (NaN) -> f16 0x%04x, not a NaN", bits_of(x), h);
        if ((h >> 15) != (bits_of(x) >> 31)) fail_msg("NaN 0x%08x lost its sign", bits_of(x));
        return;
    }
    const double got = half_value(h);
    /* compare values and signs (zero's sign included) */
    if (got != want || !signbit(got) != !signbit(want))
        fail_msg("f32 %a (0x%08x) -> f16 0x%04x = %a, want %a", (double)x, bits_of(x), h, got,
                 want);
#ifdef __FLT16_MAX__
    const _Float16 g = (_Float16)x;
    uint16_t gh;
    memcpy(&gh, &g, sizeof gh);
    if (gh != h)
        fail_msg("f32 %a (0x%08x) -> f16 0x%04x, GCC's _Float16 gives 0x%04x", (double)x,
                 bits_of(x), h, gh);
#endif
}

static void check_both_signs(float x)
{
    check_f32(x);
    check_f32(-x);
}

/* FP16 -> FP32 is exact for every pattern, and FP16 -> FP32 -> FP16 gives
 * the pattern back (a NaN gives a NaN). */
static void test_f16_exhaustive(void **state)
{
    (void)state;
    unsigned nans = 0;
    for (uint32_t u = 0; u < 65536; u++) {
        const uint16_t h = (uint16_t)u;
        const float f = sarbp_f16_to_f32(h);
        const double want = half_value(h);
        const uint16_t back = sarbp_f32_to_f16(f);
        if (half_is_nan(h)) {
            nans++;
            if (!isnan(f)) fail_msg("f16 0x%04x (NaN) -> %a", h, (double)f);
            if (!half_is_nan(back)) fail_msg("NaN 0x%04x came back as 0x%04x", h, back);
            if ((back & 0x8000) != (h & 0x8000)) fail_msg("NaN 0x%04x lost its sign", h);
            continue;
        }
        if ((double)f != want || !signbit(f) != !signbit(want))
            fail_msg("f16 0x%04x -> %a, want %a", h, (double)f, want);
        if (back != h) fail_msg("f16 0x%04x -> %a -> 0x%04x", h, (double)f, back);
    }
    assert_int_equal(nans, 2 * 1023);
}

/* Every tie between neighbouring halves, its FP32 neighbours, and each half
 * itself with its neighbours, for all finite halves and both signs. */
static void test_f32_ties(void **state)
{
    (void)state;
    n_checked = 0;
    for (uint32_t m = 0; m < 0x7c00; m++) {
        const double lo = half_value((uint16_t)m);
        const double hi = m + 1 < 0x7c00 ? half_value((uint16_t)(m + 1)) : 65536.0;
        const float mid = (float)(0.5 * (lo + hi)); /* exact: 12 significant bits */
        assert_true((double)mid == 0.5 * (lo + hi));
        const float h = (float)lo;
        const float pts[] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), h,
                             nextafterf(h, 0), nextafterf(h, INFINITY)};
        for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) check_both_signs(pts[i]);
    }
    print_message("%llu ties and near-ties checked\n", n_checked);
}

/* Overflow, underflow and special values. */
static void test_f32_boundaries(void **state)
{
    (void)state;
    assert_int_equal(sarbp_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(sarbp_f32_to_f16(65519.99609375f), 0x7bff); /* just below the tie */
    assert_int_equal(sarbp_f32_to_f16(65520.0f), 0x7c00);         /* tie: to even = inf */
    assert_int_equal(sarbp_f32_to_f16(-65520.0f), 0xfc00);
    assert_int_equal(sarbp_f32_to_f16(65536.0f), 0x7c00);
    assert_int_equal(sarbp_f32_to_f16(FLT_MAX), 0x7c00);
    assert_int_equal(sarbp_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(sarbp_f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(sarbp_f32_to_f16(0.0f), 0x0000);
    assert_int_equal(sarbp_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(sarbp_f32_to_f16(0x1p-24f), 0x0001);            /* smallest subnormal */
    assert_int_equal(sarbp_f32_to_f16(0x1p-25f), 0x0000);            /* tie: to even = 0 */
    assert_int_equal(sarbp_f32_to_f16(nextafterf(0x1p-25f, 1)), 0x0001);
    assert_int_equal(sarbp_f32_to_f16(0x1.8p-24f), 0x0002);          /* tie 1.5 -> 2 */
    assert_int_equal(sarbp_f32_to_f16(0x1.4p-23f), 0x0002);          /* tie 2.5 -> 2 */
    assert_int_equal(sarbp_f32_to_f16(0x1p-14f), 0x0400);            /* smallest normal */
    assert_int_equal(sarbp_f32_to_f16(nextafterf(0x1p-14f, 0)), 0x0400);
    assert_int_equal(sarbp_f32_to_f16(0x1.ffcp-15f), 0x0400);        /* tie 1023.5 -> 1024 */
    assert_int_equal(sarbp_f32_to_f16(0x1.ffap-15f), 0x03ff);        /* 1023.25 */
    assert_int_equal(sarbp_f32_to_f16(0x1.ff4p-15f), 0x03fe);        /* tie 1022.5 -> 1022 */
    assert_int_equal(sarbp_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(sarbp_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);     /* tie to even */
    assert_int_equal(sarbp_f32_to_f16(1.0f + 0x3p-11f), 0x3c02);     /* tie to even, up */
    assert_int_equal(sarbp_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(sarbp_f32_to_f16(0x1p-149f), 0x0000);           /* FP32 subnormals */
    assert_int_equal(sarbp_f32_to_f16(-0x1p-130f), 0x8000);
    assert_true(half_is_nan(sarbp_f32_to_f16(NAN)));
    assert_true(half_is_nan(sarbp_f32_to_f16(float_of(0x7f800001u)))); /* signalling, tiny payload */
    assert_true(half_is_nan(sarbp_f32_to_f16(float_of(0xffc00000u))));
    assert_int_equal(sarbp_f32_to_f16(float_of(0xffc00000u)) & 0x8000, 0x8000);
    const float specials[] = {65504.0f, 65519.0f, 65520.0f, 65521.0f, 0x1p-24f, 0x1p-25f,
                              0x1p-26f, 0x1p-14f, FLT_MIN, FLT_MAX, FLT_TRUE_MIN, INFINITY};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        check_both_signs(specials[i]);
}

/* A large sweep: every 37th pattern of the exponents that matter (2^-26 to
 * 2^17, where every rounding case lives) and a stride over all 2^32 patterns
 * (infinities, NaNs and FP32 subnormals included). */
static void test_f32_sweep(void **state)
{
    (void)state;
    n_checked = 0;
    for (uint32_t u = 101u << 23; u < 144u << 23; u += 37) {
        check_f32(float_of(u));
        check_f32(float_of(u | 0x80000000u));
    }
    for (uint64_t u = 0; u < (1ull << 32); u += 4093) check_f32(float_of((uint32_t)u));
    print_message("%llu floats checked%s\n", n_checked,
#ifdef __FLT16_MAX__
                  " (against double and GCC's _Float16)"
#else
                  " (against double)"
#endif
    );
}

static double scale_of(const float *v, size_t nfloat, double limit)
{
    return sarbp_half_block_scale((const sarbp_c32 *)v, nfloat / 2, limit);
}

static void check_scale(double m, double limit)
{
    const float v[4] = {0.25f * (float)m, -(float)m, 0.0f, 0.5f * (float)m};
    const double s = scale_of(v, 4, limit);
    const double ms = fabs((double)v[1]) * s;
    int e;
    assert_true(frexp(s, &e) == 0.5); /* a power of two */
    if (!(ms > limit / 2 && ms <= limit))
        fail_msg("max %a, limit %a: scale %a puts it at %a", (double)v[1], limit, s, ms);
}

static void test_block_scale(void **state)
{
    (void)state;
    const float zeros[4] = {0, -0.0f, 0, 0};
    assert_true(sarbp_half_block_scale(NULL, 0, 65504.0) == 1.0);
    assert_true(scale_of(zeros, 4, 65504.0) == 1.0);
    /* the max on a power of two, limit on a power of two: m s == limit */
    const float p2[2] = {1024.0f, -3.0f};
    assert_true(scale_of(p2, 2, 1024.0) == 1.0);
    assert_true(scale_of(p2, 2, 2048.0) == 2.0);
    assert_true(scale_of(p2, 2, 2047.0) == 1.0);
    assert_true(scale_of(p2, 2, 1023.0) == 0.5);
    /* the imaginary part can hold the max */
    const float im[2] = {1.0f, -40000.0f};
    assert_true(scale_of(im, 2, 65504.0) == 1.0);
    assert_true(scale_of(im, 2, 16384.0) == 0.25);
    /* magnitudes of 1e6 and 1e-6, limits of 65504 and 2^14 */
    const double mags[] = {1e6, 1e-6, 1.0, 3.0, 65504.0, 65505.0, 1e-30, 1e30, 0x1p-140};
    const double limits[] = {65504.0, 16384.0, 1.0, 1000.0};
    for (size_t i = 0; i < sizeof mags / sizeof mags[0]; i++)
        for (size_t j = 0; j < sizeof limits / sizeof limits[0]; j++) check_scale(mags[i], limits[j]);
    const float big[2] = {1e6f, 0};
    assert_true(scale_of(big, 2, 65504.0) == 0x1p-4); /* 1e6 / 16 = 62500 */
    const float small[2] = {0, 1e-6f};
    assert_true(scale_of(small, 2, 65504.0) == 0x1p35); /* 1e-6 2^36 = 68719 > 65504 */
    /* non-finite values and bad limits give 0 */
    const float inf[4] = {1, 2, INFINITY, 0};
    const float ninf[4] = {1, 2, 3, -INFINITY};
    const float nan[4] = {NAN, 0, 0, 0};
    assert_true(scale_of(inf, 4, 65504.0) == 0.0);
    assert_true(scale_of(ninf, 4, 65504.0) == 0.0);
    assert_true(scale_of(nan, 4, 65504.0) == 0.0);
    assert_true(scale_of(p2, 2, 0.0) == 0.0);
    assert_true(scale_of(p2, 2, INFINITY) == 0.0);
    assert_true(scale_of(p2, 2, NAN) == 0.0);
}

/* The __half2 layout (real in the low 16 bits), the scale, and agreement with
 * the scalar conversion over an awkward length. */
static void test_c32_to_half2(void **state)
{
    (void)state;
    const size_t n = 1001;
    sarbp_c32 *x = malloc(n * sizeof *x);
    uint32_t *out = malloc((n + 1) * sizeof *out);
    assert_non_null(x);
    assert_non_null(out);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        x[i].re = ldexpf((float)(r & 0xffffff) / 0x1p24f - 0.5f, (int)((r >> 24) % 40) - 30);
        x[i].im = ldexpf((float)((r >> 32) & 0xffffff) / 0x1p24f - 0.5f, (int)((r >> 56) % 40) - 30);
    }
    x[0].re = 1.0f, x[0].im = -2.0f;
    x[1].re = 65504.0f, x[1].im = 0x1p-24f;
    x[2].re = NAN, x[2].im = INFINITY;
    out[n] = 0xdeadbeefu;
    sarbp_c32_to_half2(x, n, 1.0f, out);
    assert_int_equal(out[0], 0xc0003c00u);
    assert_int_equal(out[1], 0x00017bffu);
    assert_true(half_is_nan((uint16_t)(out[2] & 0xffff)));
    assert_int_equal(out[2] >> 16, 0x7c00);
    assert_int_equal(out[n], 0xdeadbeefu); /* nothing written past n */
    const float scales[] = {1.0f, 0x1p-3f, 0x1p20f, 0x1p-10f};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        sarbp_c32_to_half2(x + 3, n - 3, scales[k], out);
        for (size_t i = 3; i < n; i++) {
            const uint32_t want = sarbp_f32_to_f16(x[i].re * scales[k]) |
                                  (uint32_t)sarbp_f32_to_f16(x[i].im * scales[k]) << 16;
            if (out[i - 3] != want)
                fail_msg("scale %a, element %zu: 0x%08x, want 0x%08x", (double)scales[k], i,
                         out[i - 3], want);
        }
    }
    sarbp_c32_to_half2(x, 0, 1.0f, out); /* n == 0 writes nothing */
    free(x);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_exhaustive), cmocka_unit_test(test_f32_ties),
        cmocka_unit_test(test_f32_boundaries), cmocka_unit_test(test_f32_sweep),
        cmocka_unit_test(test_block_scale),    cmocka_unit_test(test_c32_to_half2),
    };
    return tu_run_tests(tests);
}
