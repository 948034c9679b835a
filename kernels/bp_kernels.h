/* bp_kernels.h - the C interface of the CUDA kernels in kernels/.
 *
 * Host pointers are prefixed h_, device pointers d_. Launchers are
 * asynchronous on the given stream and return the launch's cudaError_t
 * (as int, so C code need not include CUDA headers here). */
#ifndef SARBP_BP_KERNELS_H
#define SARBP_BP_KERNELS_H

#include <math.h>
#include <stddef.h>

#include "sarbp/cuda_variants.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-pulse geometry on the device (64 bytes). */
typedef struct {
    double ax, ay, az; /* antenna phase centre, m */
    double r0;         /* range to the scene origin, m */
    double rstart;     /* differential range of bin 0, m */
    double inv_dr;     /* 1 / bin spacing, 1/m */
    double fref;       /* phase reference frequency, Hz */
    double mocomp;     /* CHIRP: motion compensation 2 fc r0 / c reduced to [0, 1) cycles;
                          0 for FREQ data */
} sarbp_dpulse;

/* The most range bins a profile row on the GPU may have: a row of the
 * widest bins (two float4, 32 bytes, cubic FP32) stays under 2^31 bytes, so
 * byte offsets within a row fit an int. The plans refuse more at create. */
#define SARBP_GPU_MAX_BINS (((size_t)1 << 30) / 16)

/* One backprojection launch: pulses [0, np) of a block onto an image band.
 * Profiles are interpolation-ready, one polynomial per bin segment
 * [b, b + 1) so a pixel reads one bin: value(t) = A + t B (linear: A the
 * value, B the difference to the next bin) or A + t (B + t (C + t D))
 * (cubic B-spline: A..D from bins b - 1 .. b + 2). FP32 bins are float4
 * (A, B) or two float4 (A, B), (C, D); FP16 bins are half4 (A, B) or half8
 * (A, B, C, D), complex values as half2. Mixed bins (cubic only) keep A, B
 * in FP32 and C, D in FP16, as two arrays in each pulse's row (structure of
 * arrays, so each gather is naturally aligned: a 24-byte record would
 * straddle 32-byte sectors half the time): AB [nbins] float4, then CD
 * [nbins] half4 (C, D as half2), padded to an even count so the next row
 * stays 16-byte aligned (SARBP_ROW_BYTES). Quadratic bins (mixed set,
 * cubic not: the quadratic B-spline has no other form) are one 16-byte
 * record per bin: A as float2 and B, C as half2, the piece of bin b read at
 * t in [-1/2, 1/2] as A + t (B + t C), the pixel at bin b + t with b the
 * nearest bin. The band holds rows [0, ny) with
 * pixel (ix, iy) at (x0 + ix dx, y0 + iy dy, z); d_img is [ny][nx] float2
 * and is accumulated into (+=). */
typedef struct {
    const void *d_prof;           /* [np] rows of SARBP_ROW_BYTES, bins as above */
    const sarbp_dpulse *d_pulses; /* [np] */
    int np, nbins;
    void *d_img;                  /* float2 [ny][nx] */
    int nx, ny;
    double x0, y0, dx, dy, z;
    const double *d_height;       /* terrain: the absolute z (m) of pixel (ix, iy) at
                                     d_height[iy * nx + ix] (the band's rows, like d_img);
                                     NULL: every pixel at z. v1, v3 and v3a only */
    int half;                     /* profiles in FP16 */
    int cubic;                    /* cubic B-spline bins (A, B, C, D) instead of linear (A, B) */
    int mixed;                    /* not half: cubic with A, B FP32 and C, D FP16, or (cubic
                                     0) quadratic with A FP32 and B, C FP16 (see above) */
    const float *d_bound;         /* half or mixed: the block's magnitude bound (device), from
                                     which the scale the profiles carry follows
                                     (sarbp_half_exp) */
    double max_inv_dr;            /* the largest 1/dr of the launch's pulses */
    double max_k;                 /* the largest 2 fref / c of the launch's pulses, cycles/m */
    double min_range;             /* a lower bound of every antenna-to-pixel range, m */
    int series1;                  /* set by the dispatcher: first-order range series suffices */
} sarbp_bp_launch;

/* FP16 profiles are scaled by 2^e, e = sarbp_half_exp(bound), where bound is
 * an upper bound of the block's profile magnitudes: values then lie below
 * 2^14 and their differences below 2^15, inside FP16's 65504, with the most
 * headroom for weak values a power of two allows; a power of two makes the
 * scaling exact. The kernels multiply their sums by 2^-e once.
 *
 * Mixed profiles carry the same scale, for the same reason, on all four
 * coefficients: C and D (FP16) need it to stay inside FP16's range (|C| <=
 * 2 bound, |D| <= 4/3 bound: below 2^15 after scaling), and A and B (FP32)
 * take it too because a power of two is exact in FP32, so the kernel
 * evaluates A + t (B + t (C + t D)) with no per-pair rescaling and divides
 * its sums by 2^e once, as for FP16. A per-bin scale relative to A was
 * rejected: it costs a multiply (and an exponent to find or store) per
 * pixel-pulse pair in an L1-bound loop, and overflows C, D where A passes
 * through zero while C, D do not. What the block scale gives away is only
 * relative precision below FP16's normal range, from 2^-27 (-162 dB) of the
 * block's bound down: bins that weak do not count at the SER the path aims
 * at (tests/test_mixed_pack.c). */
#define SARBP_HALF_TOP 14
#ifdef __CUDACC__
#define SARBP_HD __host__ __device__
#else
#define SARBP_HD
#endif
SARBP_HD static inline int sarbp_half_exp(float bound)
{
    if (!(bound > 0.0f) || bound > 3.0e38f) return 0;
    int e;
    (void)frexpf(bound, &e); /* bound = m 2^e, 0.5 <= m < 1 */
    e = SARBP_HALF_TOP - e;
    return e < -120 ? -120 : e > 120 ? 120 : e;
}

/* One component (real or imaginary) of the polynomial of bin segment
 * [b, b + 1), scaled by s, from the bins ym = y_{b-1}, y0, y1, y2 = y_{b+2}:
 * linear (cubic 0): c[0] = A = y0, c[1] = B = y1 - y0; cubic B-spline:
 * A = (ym + 4 y0 + y1) / 6, B = (y1 - ym) / 2, C = (ym - 2 y0 + y1) / 2,
 * D = (y2 - ym + 3 (y0 - y1)) / 6. The device's packing
 * (sarbp_rc_interp_ready) and the host tests both call this. */
SARBP_HD static inline void sarbp_segment_coeffs(float ym, float y0, float y1, float y2, int cubic,
                                                 float s, float c[4])
{
    if (!cubic) {
        c[0] = s * y0;
        c[1] = s * (y1 - y0);
        return;
    }
    const float k6 = s / 6.0f, k2 = 0.5f * s;
    c[0] = k6 * (ym + 4.0f * y0 + y1);
    c[1] = k2 * (y1 - ym);
    c[2] = k2 * (ym - 2.0f * y0 + y1);
    c[3] = k6 * (y2 - ym + 3.0f * (y0 - y1));
}

/* The quadratic B-spline's piece around bin b, scaled by s, from ym = y_{b-1},
 * y0, y1 = y_{b+1}: value A + t (B + t C) for t in [-1/2, 1/2] with
 * A = (ym + 6 y0 + y1) / 8, B = (y1 - ym) / 2, C = (ym - 2 y0 + y1) / 2. */
SARBP_HD static inline void sarbp_segment_coeffs_quadratic(float ym, float y0, float y1, float s,
                                                           float c[3])
{
    const float k2 = 0.5f * s;
    c[0] = 0.125f * s * (ym + 6.0f * y0 + y1);
    c[1] = k2 * (y1 - ym);
    c[2] = k2 * (ym - 2.0f * y0 + y1);
}

/* Variants: the table in backproject_variants.c (sarbp/cuda_variants.h)
 * names them, gives their ids and says what each changes; backproject.cu's
 * header says how. Every variant reads FP32 or FP16 profiles
 * (sarbp_bp_launch.half); those flagged SARBP_CUDA_VARIANT_MIXED also read
 * mixed ones (sarbp_bp_launch.mixed). */
typedef struct {
    const char *variant; /* a name in the table; NULL or "" = the table's default */
    int tile_x, tile_y;  /* pixels; 0 = default. tile_x = threads in x */
    int ppt;             /* pixels per thread: 1, 2, 4, 8; 0 = default */
    int minb;            /* v2/v3/v3a at 8 pixels per thread in blocks of 64 threads: 12 or
                            16 = compiled for that many resident blocks per SM (fewer
                            registers, more warps); -1 = the compiler's choice; 0 = by
                            the profile format (16 for all but FP16 cubic) */
} sarbp_bp_config;

/* Resolves defaults and checks the configuration (variant in the table, ppt
 * in {1,2,4,8}, tile_y a multiple of ppt, threads per block <= 1024, the
 * variant's flags). variant then points to the table's name. Returns 0 when
 * valid, else -1 and a reason in why. */
int sarbp_bp_config_resolve(sarbp_bp_config *cfg, char *why, size_t nwhy);

/* The preconditions of a launch that depend on its geometry (v4: the bins a
 * tile needs fit in shared memory). Returns 0 when they hold, else -1 and a
 * reason in why. Nothing is printed. */
int sarbp_bp_launch_check(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, char *why,
                          size_t nwhy);

/* The dispatcher: launches the configured variant (a resolved cfg). Returns
 * a cudaError_t, or SARBP_BP_EPRECOND when a launcher's precondition does not
 * hold (sarbp_bp_launch_check says which); it never prints. */
#define SARBP_BP_EPRECOND (-1)
int sarbp_bp_launch_kernel(const sarbp_bp_config *cfg, const sarbp_bp_launch *a, void *stream);
/* Loads the kernel sarbp_bp_launch_kernel would launch for cfg and a's
 * formats (np, nx, ny > 0, nbins >= 2) on the current device, without
 * running it, so that the first launch does not load it. Same returns. */
int sarbp_bp_load_kernel(const sarbp_bp_config *cfg, const sarbp_bp_launch *a);

/* Bytes of one profile bin (host and device code); mixed: 24, in two arrays. */
#define SARBP_BIN_BYTES(half, cubic) (((half) ? 8 : 16) * ((cubic) ? 2 : 1))
/* Bytes of one pulse's row of nbins bins: a row is 16-byte aligned when the
 * first is (mixed cubic: the CD array padded to an even number of bins;
 * quadratic: 16 bytes a bin). */
#define SARBP_ROW_BYTES(half, mixed, cubic, nbins)                                       \
    ((mixed) ? 16 * (size_t)(nbins) + ((cubic) ? 8 * (((size_t)(nbins) + 1) & ~(size_t)1) : 0) \
             : (size_t)(nbins) * SARBP_BIN_BYTES(half, cubic))

/* Range compression helpers (rangecomp.cu). The raw block d_in is [np][K]
 * complex, FP32 (float2) or, with in_half, FP16 (half2) scaled on the host by
 * 1 / raw_inv_scale (a power of two). */
/* d_out[j][(k - kc) mod nfft] = d_in[j][k] * d_w[k] * d_waz[j] (the K
 * samples centred on frequency index 0, zeros elsewhere) for rows
 * j < nvalid, and zero rows for nvalid <= j < nrows; d_w is complex
 * (window / K and the interpolation prefilter, with the fftshift phase
 * folded in). */
int sarbp_rc_pack(const void *d_in, int in_half, void *d_out, const void *d_w, const float *d_waz,
                  float raw_inv_scale, int nrows, int nvalid, int K, int kc, int nfft, void *stream);
/* *d_bound = max over the np pulses of sum_k |d_in[j][k] d_w[k] d_waz[j]|: a
 * bound of every profile magnitude the inverse FFT can produce (triangle
 * inequality). *d_bound must be 0 on entry (it is raised by atomicMax). */
int sarbp_rc_bound(const void *d_in, int in_half, const void *d_w, const float *d_waz,
                   float raw_inv_scale, int np, int K, float *d_bound, void *stream);
/* *d_bound = max |d_y| over n complex values (d_bound 0 on entry). */
int sarbp_rc_maxabs(const void *d_y, size_t n, float *d_bound, void *stream);
/* CHIRP compression after the forward FFT of the echoes d_spec[np][nmf]:
 * d_out[j][b] = d_spec[j][k] * d_filt[k] * exp(+j 2 pi mocomp_j) for the
 * spectral index k that bin b holds (b < (nmf + 1) / 2: k = b; the last
 * nmf - (nmf + 1) / 2 bins hold the negative frequencies; zeros between),
 * nbins >= nmf; with d_bound non-NULL also raises *d_bound to the largest
 * row sum of |d_out| (the bound of the inverse FFT's magnitudes). */
int sarbp_rc_chirp_filter(const void *d_spec, void *d_out, const void *d_filt,
                          const sarbp_dpulse *d_pulses, int np, int nmf, int nbins,
                          float *d_bound, void *stream);
/* Row j of d_prof (SARBP_ROW_BYTES apart) = the interpolation-ready bins
 * (linear or cubic, as described above) of the complex profile d_y[j]
 * (float2, bins outside [0, nbins) read as 0), np pulses. d_bound NULL:
 * FP32; d_bound non-NULL: scaled by 2^sarbp_half_exp(*d_bound) and, mixed
 * 0, FP16, or, mixed 1, cubic A, B FP32 and C, D FP16 or (cubic 0) the
 * quadratic's A FP32 and B, C FP16. */
int sarbp_rc_interp_ready(const void *d_y, void *d_prof, int np, int nbins, int cubic, int mixed,
                          const float *d_bound, void *stream);

#ifdef __cplusplus
}
#endif
#endif
