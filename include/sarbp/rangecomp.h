/* sarbp/rangecomp.h - range compression on the CPU (FFTW).
 *
 * FREQ data: window the K samples, zero-pad to nfft, inverse FFT, fftshift,
 * scale by 1/K. Bin n sits at differential range (n - nfft/2) * dr,
 * dr = c / (2 df nfft); a unit target at the origin gives 1 at bin nfft/2
 * (times the window's coherent gain, mean(w)).
 * CHIRP data: matched filter against the reference chirp by FFT, upsampled
 * by zero-padding the spectrum, then motion-compensated to the scene origin
 * (times exp(+j 4 pi fc r0 / c)) so both domains backproject alike.
 * The azimuth window multiplies whole pulses by w[global pulse index]. */
#ifndef SARBP_RANGECOMP_H
#define SARBP_RANGECOMP_H

#include <stddef.h>
#include "sarbp/phd.h"
#include "sarbp/window.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SARBP_FP64 = 0, SARBP_FP32 = 1, SARBP_FP16 = 2 } sarbp_precision;
const char *sarbp_precision_name(sarbp_precision p);
sarbp_status sarbp_precision_parse(const char *text, sarbp_precision *p);

typedef struct {
    sarbp_window range_window;
    sarbp_window az_window;
    int upsample;            /* >= 1; default 8 */
} sarbp_rc_params;

void sarbp_rc_params_default(sarbp_rc_params *p);

/* Smallest n >= x of the form 2^a 3^b 5^c 7^d (fast for FFTW and cuFFT). */
size_t sarbp_fft_size(size_t x);

/* Number of range bins nfft for this phase history and upsampling. */
size_t sarbp_rc_nbins(const sarbp_phd *meta, int upsample);

/* A block of range-compressed pulses: everything a backprojector needs.
 * Pixel p, pulse i: dR = |a_i - p| - r0_i; bin = (dR - rstart_i) / dr_i;
 * value = lerp(profile_i, bin) * exp(+j 4 pi fref_i dR / c). */
typedef struct sarbp_profiles_s {
    size_t npulses, nbins;
    size_t capacity;          /* pulses allocated */
    sarbp_precision precision; /* FP64: data64 used; otherwise data32 */
    sarbp_c64 *data64;        /* [npulses][nbins] */
    sarbp_c32 *data32;        /* [npulses][nbins] */
    double *pos;              /* [npulses][3] */
    double *r0, *rstart, *dr, *fref; /* [npulses] */
} sarbp_profiles;

sarbp_status sarbp_profiles_alloc(size_t capacity, size_t nbins, sarbp_precision prec,
                                  sarbp_profiles **out);
void sarbp_profiles_free(sarbp_profiles *pr); /* NULL is a no-op */

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

/* Compresses pulses [p0, p0 + np) of meta, whose samples are
 * samples[np][nsamples], into out (capacity >= np, same precision, nbins). */
sarbp_status sarbp_rc_execute(sarbp_rc_plan *plan, size_t p0, size_t np,
                              const sarbp_c32 *samples, sarbp_profiles *out);
void sarbp_rc_plan_free(sarbp_rc_plan *plan);

/* Host-side tables shared with GPU range compression: the range window (K
 * values, already divided by K) and the azimuth window over the aperture. */
const double *sarbp_rc_plan_range_weights(const sarbp_rc_plan *plan); /* [nsamples] */
const double *sarbp_rc_plan_az_weights(const sarbp_rc_plan *plan);    /* [meta->npulses] */

#ifdef __cplusplus
}
#endif
#endif
