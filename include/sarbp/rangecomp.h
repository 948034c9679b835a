/* sarbp/rangecomp.h - range compression on the CPU (FFTW).
 *
 * FREQ data: window the K samples, place them centred on zero frequency
 * (sample k at frequency index k - kc, kc = K / 2), zero-pad to nfft, inverse
 * FFT, fftshift, scale by 1/K. Bin n sits at differential range
 * (n - nfft/2) * dr, dr = c / (2 df nfft), and the profile's phase is
 * referenced to the band centre f0 + kc df (fref): the profile is at
 * baseband, which is what makes interpolating it accurate (a one-sided band
 * carries a residual carrier of B/2 that linear interpolation errs on four
 * times more). A unit target at the origin gives 1 at bin nfft/2 (times the
 * window's coherent gain, mean(w)).
 * CHIRP data: matched filter against the reference chirp by FFT (the
 * compressed spectrum is already centred), upsampled by zero-padding the
 * spectrum, then motion-compensated to the scene origin (times
 * exp(+j 4 pi fc r0 / c)) so both domains backproject alike.
 * The azimuth window multiplies whole pulses by w[global pulse index].
 *
 * Interpolation (sarbp_interp): the profile is read between bins by a
 * B-spline of degree 1 (linear), 2 (quadratic) or 3 (cubic). Its spectrum is
 * divided by the kernel's frequency response before the inverse FFT (a
 * spectral prefilter, folded into the window table, so it costs nothing):
 * then only the kernel's aliases remain as interpolation error. Measured
 * against direct summation over the samples (sarbp_rc_exact_spectrum):
 * linear 51 dB at 8x, quadratic 77 dB at 8x and 95 dB at 16x, cubic 77 dB at
 * 4x and 102 dB at 8x on random band-limited data. */
#ifndef SARBP_RANGECOMP_H
#define SARBP_RANGECOMP_H

#include <stddef.h>
#include "sarbp/phd.h"
#include "sarbp/window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SARBP_EXACT is not an arithmetic precision but the exact image: FP64
 * direct summation over every frequency sample (no FFT, no interpolation),
 * slow (K times direct backprojection), for references and tests.
 * SARBP_MIXED ("mixed", CUDA only): FP32 arithmetic with cubic range bins
 * stored as A, B in FP32 and C, D in FP16 (24 bytes a bin instead of 32;
 * kernels/bp_kernels.h); linear bins have no C, D and are FP32 as with
 * SARBP_FP32. */
typedef enum {
    SARBP_FP64 = 0,
    SARBP_FP32 = 1,
    SARBP_FP16 = 2,
    SARBP_EXACT = 3,
    SARBP_MIXED = 4
} sarbp_precision;
const char *sarbp_precision_name(sarbp_precision p);
sarbp_status sarbp_precision_parse(const char *text, sarbp_precision *p);

/* Interpolation between range bins: B-splines of degree 1, 2 and 3 (the
 * value is the degree) with the spectral prefilter described above. The
 * quadratic B-spline's pieces are centred on the bins (its knots sit
 * halfway between them): a pixel at bin b reads the piece of bin round(b),
 * from bins round(b) - 1 .. round(b) + 1. */
typedef enum {
    SARBP_INTERP_LINEAR = 1,
    SARBP_INTERP_QUADRATIC = 2,
    SARBP_INTERP_CUBIC = 3
} sarbp_interp;
const char *sarbp_interp_name(sarbp_interp k);
sarbp_status sarbp_interp_parse(const char *text, sarbp_interp *k);

/* The kernel's frequency response at nu cycles per bin (|nu| <= 1/2):
 * sinc(nu)^(degree + 1). The prefilter divides by it. */
double sarbp_interp_response(sarbp_interp k, double nu);

typedef struct {
    sarbp_window range_window;
    sarbp_window az_window;
    int upsample;            /* 1..64; default sarbp_interp_default_upsample(interp) */
    sarbp_interp interp;     /* default SARBP_INTERP_QUADRATIC */
} sarbp_rc_params;

/* The upsampling each kernel is meant for: quadratic 8 (about 76-77 dB
 * against the exact image), cubic 4 (about 77-78 dB), linear 8 (about 50
 * dB). */
int sarbp_interp_default_upsample(sarbp_interp k);

/* Defaults: no windows, quadratic at 8x. */
void sarbp_rc_params_default(sarbp_rc_params *p);

/* The default kernel for a precision and algorithm: the quadratic, except
 * where it is not read: FP16 (the GPU's quadratic bins keep the value in
 * FP32; an FP16 form would be no smaller), mixed (cubic bins with C, D in
 * FP16; the quadratic's bins are always of that kind) and ffbp (its stages
 * read cubic B-splines), which take the cubic. */
sarbp_interp sarbp_interp_default(sarbp_precision prec, int ffbp);

/* Sets p's kernel to sarbp_interp_default(prec, ffbp) and its upsampling to
 * that kernel's default. */
void sarbp_rc_params_default_for(sarbp_rc_params *p, sarbp_precision prec, int ffbp);

/* Smallest n >= x of the form 2^a 3^b 5^c 7^d (fast for FFTW and cuFFT). */
size_t sarbp_fft_size(size_t x);

/* Number of range bins nfft for this phase history and upsampling. */
size_t sarbp_rc_nbins(const sarbp_phd *meta, int upsample);

/* A block of range-compressed pulses: everything a backprojector needs.
 * Pixel p, pulse i: dR = |a_i - p| - r0_i; bin = (dR - rstart_i) / dr_i;
 * value = interp(profile_i, bin) * exp(+j 4 pi fref_i dR / c), where interp
 * is sum_n profile_i[n] beta(bin - n) with beta the B-spline of the
 * profiles' degree (sarbp_interp_weights). */
typedef struct sarbp_profiles_s {
    size_t npulses, nbins;
    size_t capacity;          /* pulses allocated */
    sarbp_precision precision; /* FP64: data64 used; otherwise data32 */
    sarbp_interp interp;      /* how the profiles are to be read between bins */
    sarbp_c64 *data64;        /* [npulses][nbins] */
    sarbp_c32 *data32;        /* [npulses][nbins] */
    double *pos;              /* [npulses][3] */
    double *r0, *rstart, *dr, *fref; /* [npulses] */
} sarbp_profiles;

sarbp_status sarbp_profiles_alloc(size_t capacity, size_t nbins, sarbp_precision prec,
                                  sarbp_profiles **out);
void sarbp_profiles_free(sarbp_profiles *pr); /* NULL is a no-op */

/* Pulses [p0, p0 + n) of pr as profiles of their own (a view: the same
 * memory, nothing to free; p0 + n <= pr->capacity), FP32 or FP64. */
sarbp_profiles sarbp_profiles_slice(const sarbp_profiles *pr, size_t p0, size_t n);

/* Per-pulse geometry of pulse i of meta (pos, r0, rstart, dr, fref) into
 * slot j of pr. Shared by CPU and GPU paths. */
void sarbp_rc_pulse_geometry(const sarbp_phd *meta, size_t nbins, int upsample,
                             size_t i, sarbp_profiles *pr, size_t j);

typedef struct sarbp_rc_plan_s sarbp_rc_plan;

/* Plans for blocks of up to max_block pulses of meta (the whole selected
 * aperture: the azimuth window spans meta->npulses). FFTW plans are made
 * here, once per shape; FP64 uses double plans, FP32/FP16 float plans.
 * meta must outlive the plan. */
sarbp_status sarbp_rc_plan_create(const sarbp_phd *meta, const sarbp_rc_params *p,
                                  sarbp_precision prec, size_t max_block,
                                  sarbp_rc_plan **out);
size_t sarbp_rc_plan_nbins(const sarbp_rc_plan *plan);
double sarbp_rc_plan_coherent_gain(const sarbp_rc_plan *plan);
/* The same gain from the windows alone, without a plan (no FFT planned):
 * a unit target at the origin peaks at npulses * gain. */
sarbp_status sarbp_rc_coherent_gain(const sarbp_phd *meta, const sarbp_rc_params *p, double *gain);

/* Compresses pulses [p0, p0 + np) of meta, whose samples are
 * samples[np][nsamples], into out (capacity >= np, same precision, nbins). */
sarbp_status sarbp_rc_execute(sarbp_rc_plan *plan, size_t p0, size_t np,
                              const sarbp_c32 *samples, sarbp_profiles *out);
void sarbp_rc_plan_free(sarbp_rc_plan *plan);
sarbp_interp sarbp_rc_plan_interp(const sarbp_rc_plan *plan);

/* FREQ: the frequency index of sample 0 after centring, -kc (sample k sits
 * at FFT index (k - kc) mod nbins); 0 for CHIRP data. */
long sarbp_rc_plan_first_freq_index(const sarbp_rc_plan *plan);

/* CHIRP: the matched filter's FFT length nmf (0 for FREQ data) and its
 * spectrum [nmf] (conjugate reference spectrum times the range window and
 * the interpolation prefilter, normalised so a unit echo compresses to 1;
 * FFT order, index k < (nmf + 1) / 2 for frequency k fs / nmf, else
 * (k - nmf) fs / nmf). The GPU compresses chirp data with the same table:
 * spectrum of the echo times this, placed into nbins (zero-padded between
 * the halves), inverse FFT, times exp(+j 4 pi fc r0 / c). */
size_t sarbp_rc_plan_chirp_nfft(const sarbp_rc_plan *plan);
const sarbp_c64 *sarbp_rc_plan_chirp_filter(const sarbp_rc_plan *plan);

/* The exact image's view of pulse i (global index) with samples s[nsamples]:
 * its windowed spectrum as n uniformly spaced frequency samples Y[k] at
 * fa + k fd (Hz), such that the pulse contributes
 *     sum_k Y[k] exp(+j 4 pi (fa + k fd) dR / c)
 * to a pixel at differential range dR. FREQ: the samples times the range
 * and azimuth windows and 1/K; CHIRP: the matched-filter spectrum (FP64
 * FFT) with the motion compensation folded in. No prefilter, no FFT size,
 * no interpolation: this is what every range-compressed path approximates.
 * Y holds sarbp_rc_exact_size(plan) values. Not thread-safe (uses the
 * plan's FP64 work buffers). */
size_t sarbp_rc_exact_size(const sarbp_rc_plan *plan);
sarbp_status sarbp_rc_exact_spectrum(sarbp_rc_plan *plan, size_t i, const sarbp_c32 *s,
                                     sarbp_c64 *Y, double *fa, double *fd);

/* Cubic B-spline interpolation weights at fraction t in [0, 1) between
 * bins n and n + 1: w[0..3] for bins n-1 .. n+2 (bins off the profile read
 * as 0). A pixel is read for segments n = 0 .. nbins - 2. */
static inline void sarbp_interp_weights_cubic(double t, double w[4])
{
    const double u = 1.0 - t, t2 = t * t, t3 = t2 * t;
    w[0] = u * u * u / 6.0;
    w[1] = (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0;
    w[2] = (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0;
    w[3] = t3 / 6.0;
}

/* Quadratic B-spline weights at offset t in [-1/2, 1/2] from bin n (the
 * nearest): w[0..2] for bins n-1 .. n+1 (bins off the profile read as 0). A
 * pixel is read for n = 0 .. nbins - 2, as for the other kernels. */
static inline void sarbp_interp_weights_quadratic(double t, double w[3])
{
    const double a = 0.5 - t, b = 0.5 + t;
    w[0] = 0.5 * a * a;
    w[1] = 0.75 - t * t;
    w[2] = 0.5 * b * b;
}

/* Host-side tables shared with GPU range compression: the range window (K
 * values, already divided by K, the interpolation prefilter folded in) and
 * the azimuth window over the aperture. */
const double *sarbp_rc_plan_range_weights(const sarbp_rc_plan *plan); /* [nsamples] */
const double *sarbp_rc_plan_az_weights(const sarbp_rc_plan *plan);    /* [meta->npulses] */

#ifdef __cplusplus
}
#endif
#endif
