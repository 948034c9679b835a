/* sarbp/phd.h - the phase-history model.
 *
 * A phase history is per-pulse metadata (always fully in memory: a few doubles
 * a pulse) plus K complex samples a pulse, which readers stream in blocks (see
 * phd_io.h) so memory for samples is bounded by a block, not by the file.
 *
 * Frame: scene-fixed, right-handed, metres, z up; the scene reference point
 * (motion-compensation point) is the origin. Frequencies in Hz. */
#ifndef SARBP_PHD_H
#define SARBP_PHD_H

#include <stddef.h>
#include "sarbp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_C 299792458.0 /* speed of light, m/s */

/* Complex numbers in public interfaces: interleaved (re, im), layout-compatible
 * with C99 float _Complex, fftwf_complex and CUDA float2. */
typedef struct { float re, im; } sarbp_c32;
typedef struct { double re, im; } sarbp_c64;

typedef enum {
    SARBP_DOMAIN_FREQ = 0,  /* deramped, motion-compensated frequency samples (Gotcha) */
    SARBP_DOMAIN_CHIRP = 1  /* raw baseband fast-time samples of a linear FM pulse (stripmap) */
} sarbp_domain;

typedef struct sarbp_phd_s {
    sarbp_domain domain;
    size_t npulses;   /* P */
    size_t nsamples;  /* K, samples per pulse */

    /* Per pulse, arrays of npulses (pos: [npulses][3]). Owned by the phd. */
    double *pos;      /* antenna phase centre x, y, z (m) */
    double *r0;       /* range from APC to the scene origin (m) */
    double *f0;       /* FREQ: first frequency sample (Hz); CHIRP: unused (NULL) */
    double *df;       /* FREQ: frequency step (Hz); CHIRP: unused (NULL) */
    double *th;       /* azimuth angle (deg), NULL when the input has none */
    double *phi;      /* elevation angle (deg), NULL when absent */
    double *r_correct;  /* Gotcha autofocus r0 correction (m), NULL when absent */
    double *ph_correct; /* Gotcha autofocus phase correction (rad), NULL when absent */

    /* CHIRP only (scalars for the whole collection). */
    double fs;         /* fast-time sample rate (Hz) */
    double chirp_rate; /* Kr (Hz/s) */
    double pulse_len;  /* Tr (s) */
    double fc;         /* carrier (Hz) */
    double t0;         /* two-way delay of fast-time sample 0 (s) */

    /* Samples [npulses][nsamples], or NULL when only metadata is held. */
    sarbp_c32 *data;
} sarbp_phd;

/* Allocates a zeroed phd with per-pulse arrays pos, r0 (and f0, df for FREQ)
 * for npulses; optional arrays (th, phi, r_correct, ph_correct) stay NULL.
 * with_data != 0 also allocates data. Caller frees with sarbp_phd_free. */
sarbp_status sarbp_phd_alloc(sarbp_domain domain, size_t npulses, size_t nsamples,
                             int with_data, sarbp_phd **out);
/* Allocates an optional per-pulse array (e.g. &phd->th), zeroed. */
sarbp_status sarbp_phd_alloc_optional(sarbp_phd *phd, double **field);
void sarbp_phd_free(sarbp_phd *phd); /* NULL is a no-op */

/* Plausibility limits on metadata (docs/formats.md): distances (positions, r0,
 * r_correct) and angles within SARBP_PHD_MAX_DISTANCE in magnitude;
 * frequencies (f0, df, the last sample f0 + (K-1) df, fs, fc) within
 * SARBP_PHD_MAX_FREQ; df and fs at least SARBP_PHD_MIN_STEP;
 * |chirp rate| <= 1e6 x SARBP_PHD_MAX_FREQ Hz/s; the chirp's band
 * |chirp rate| x pulse length in [SARBP_PHD_MIN_STEP, SARBP_PHD_MAX_FREQ];
 * its length pulse length x fs at most SARBP_PHD_MAX_SAMPLES samples; pulse
 * length and t0 within 1 s. Within them, every figure derived for a grid (extents,
 * resolutions, pixel counts) stays finite and far inside size_t. */
#define SARBP_PHD_MAX_DISTANCE 1e9 /* m: far beyond any orbit a SAR flies */
#define SARBP_PHD_MAX_FREQ 1e13    /* Hz: 10 THz */
#define SARBP_PHD_MIN_STEP 1.0     /* Hz: a smaller df puts the alias-free range past 1.5e8 m */

/* Checks metadata: npulses, nsamples > 0; positions, r0, f0, df finite and
 * within the limits above; r0, f0, df > 0; chirp scalars positive and
 * within the limits. With data, all samples finite. */
sarbp_status sarbp_phd_validate(const sarbp_phd *phd);
/* SARBP_ERR_INVALID naming the first NaN or Inf of samples x, pulses
 * [p0, p0 + np) of phd ([np][nsamples]). */
sarbp_status sarbp_phd_check_samples(const sarbp_phd *phd, size_t p0, size_t np, const sarbp_c32 *x);

/* New phd holding pulses [i0, i1) of src (metadata and data when present). */
sarbp_status sarbp_phd_slice(const sarbp_phd *src, size_t i0, size_t i1, sarbp_phd **out);

/* Multiplies pulse j's samples v[np][K] by exp(+j phase[j]) and, with range
 * (FREQ samples: sample k at f0[j] + k df[j]), by exp(+j 4 pi f range[j] / c);
 * phase or range may be NULL (f0, df too without range). The one
 * arithmetic of a correction, wherever it is applied (the autofocus, the
 * reader's --phase-csv), so each gives the same samples bit for bit. */
void sarbp_samples_rotate(sarbp_c32 *v, size_t np, size_t K, const double *f0, const double *df,
                          const double *phase, const double *range);

/* Pulse range [*i0, *i1) whose azimuth lies in [a0, a1] degrees; azimuth from
 * th when present, else atan2(y, x) of the APC. SARBP_ERR_INVALID when empty. */
sarbp_status sarbp_phd_azimuth_range(const sarbp_phd *phd, double a0, double a1,
                                     size_t *i0, size_t *i1);

/* Azimuth (deg) of pulse i, from th or the APC position. */
double sarbp_phd_azimuth_deg(const sarbp_phd *phd, size_t i);

/* Derived figures for `sarbp info` and default grids. */
typedef struct {
    double fmin, fmax, bandwidth;   /* Hz (CHIRP: fc +- B/2 from chirp_rate*pulse_len) */
    double fcenter;                 /* Hz */
    double aperture_deg;            /* azimuth span of the pulses */
    double range_res, az_res;       /* m: c/(2B), lambda/(2*dtheta) */
    double extent_range;            /* alias-free extent c/(2 df) (m); CHIRP: swath */
    double r0_mean;                 /* m */
    double elevation_deg;           /* mean */
} sarbp_phd_summary;
sarbp_status sarbp_phd_summarize(const sarbp_phd *phd, sarbp_phd_summary *s);

#ifdef __cplusplus
}
#endif
#endif
