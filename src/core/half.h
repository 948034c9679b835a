/* half.h - IEEE 754 binary16 ("half") conversions on the host, internal to
 * libsarbp (not public API).
 *
 * Portable C11 on the bit patterns (no _Float16, no F16C intrinsics), so the
 * results do not depend on the compiler or the CPU. Rounding is to nearest,
 * ties to even, with subnormal halves (down to 2^-24) produced and read
 * exactly; magnitudes >= 65520 become infinity; a NaN stays a NaN (quieted,
 * sign and the top 9 payload bits kept). Assumes the default floating-point
 * rounding mode (to nearest). All functions are reentrant. */
#ifndef SARBP_HALF_H
#define SARBP_HALF_H

#include <stddef.h>
#include <stdint.h>

#include "sarbp/phd.h"

#define SARBP_HALF_MAX 65504.0 /* largest finite half */

uint16_t sarbp_f32_to_f16(float x);
float sarbp_f16_to_f32(uint16_t h);

/* The power of two s with max(|re|, |im|) * s in (limit / 2, limit] over the
 * n values of x, so that a block scaled by s uses the top octave below limit
 * (limit > 0 and finite, e.g. SARBP_HALF_MAX or a smaller headroom bound).
 * Returns 1.0 when n == 0 or every value is zero, and 0.0 when some value
 * is infinite or NaN (or limit is not positive and finite): the caller
 * reports bad data. s may exceed FLT_MAX (when the largest magnitude is
 * below limit * 2^-128); a caller converting with a float scale checks. */
double sarbp_half_block_scale(const sarbp_c32 *x, size_t n, double limit);

/* out[i] = the __half2 bits of x[i] * scale, laid out as CUDA lays out a
 * __half2 in a 32-bit word: the real part in the low 16 bits, the imaginary
 * part in the high 16 bits (so out can be copied to the device as __half2).
 * Each component is multiplied by scale in FP32 (exact for a power-of-two
 * scale unless the product underflows FP32, far below the smallest half) and
 * rounded to half as sarbp_f32_to_f16 does. x and out must not overlap. */
void sarbp_c32_to_half2(const sarbp_c32 *x, size_t n, float scale, uint32_t *out);

#endif
