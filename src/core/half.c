/* half.c - IEEE binary16 conversions on the bit patterns (see half.h).
 *
 * The FP32 -> FP16 rounding is branch-free (every path is computed and one
 * is selected), so the block conversion loop vectorises: at -O2/-O3 a block
 * of 256 x 512 complex samples converts in well under a millisecond. It does
 * not convert FP16 blocks back; sarbp_f16_to_f32 is the plain scalar inverse,
 * for tests and checks. */
#include "core/half.h"

#include <math.h>
#include <string.h>

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* FP32 bits -> FP16 bits, round to nearest even. |x| is a, by cases:
 *  - a >= 65536 (0x47800000), infinities and NaNs: inf, or a quiet NaN
 *    keeping the top payload bits;
 *  - a >= 2^-14 (0x38800000), a normal half: rebias the exponent
 *    (127 - 15 = 112), then round away the 13 low mantissa bits by adding
 *    0xfff plus the parity of the kept part; a carry into the exponent is
 *    right, and reaches 0x7c00 (inf) exactly from 65520 up;
 *  - below: a subnormal half (units of 2^-24) or zero. Adding 0.5f, whose
 *    FP32 ulp is 2^-24, makes the FPU round a to that grid (to nearest even);
 *    the low bits of the sum are then the half's bits. The sum is a normal
 *    float, so flush-to-zero modes do not change it. */
static inline uint32_t f16_from_f32_bits(uint32_t x)
{
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t a = x & 0x7fffffffu;
    const uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    const uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;
    const uint32_t big = a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : 0x7c00u;
    uint32_t r = a < 0x38800000u ? sub : normal;
    r = a >= 0x47800000u ? big : r;
    return r | sign;
}

uint16_t sarbp_f32_to_f16(float x)
{
    return (uint16_t)f16_from_f32_bits(f32_bits(x));
}

float sarbp_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return bits_f32(sign | 0x7f800000u | (m << 13)); /* inf, NaN */
    if (e) return bits_f32(sign | ((e + 112) << 23) | (m << 13));
    const float f = (float)m * 0x1p-24f; /* subnormal or zero: exact */
    return sign ? -f : f;
}

double sarbp_half_block_scale(const sarbp_c32 *x, size_t n, double limit)
{
    if (!(limit > 0) || !isfinite(limit)) return 0.0;
    /* The largest |component| as bits: for non-negative floats the integer
     * order is the numeric order, and infinities and NaNs lie above every
     * finite value, so one integer max (which vectorises) finds both. */
    const float *v = (const float *)x;
    uint32_t amax = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        const uint32_t a = f32_bits(v[i]) & 0x7fffffffu;
        amax = a > amax ? a : amax;
    }
    if (amax >= 0x7f800000u) return 0.0;
    if (amax == 0) return 1.0;
    /* m = f 2^e, limit = g 2^k with f, g in [0.5, 1): 2^(k - e) brings m to
     * f 2^k, which lies in (limit / 2, limit] when f <= g; otherwise one
     * octave lower does. */
    int e, k;
    const double f = frexp((double)bits_f32(amax), &e);
    const double g = frexp(limit, &k);
    return ldexp(1.0, f <= g ? k - e : k - e - 1);
}

void sarbp_c32_to_half2(const sarbp_c32 *restrict x, size_t n, float scale,
                        uint32_t *restrict out)
{
    for (size_t i = 0; i < n; i++) {
        const uint32_t re = f16_from_f32_bits(f32_bits(x[i].re * scale));
        const uint32_t im = f16_from_f32_bits(f32_bits(x[i].im * scale));
        out[i] = re | im << 16;
    }
}
