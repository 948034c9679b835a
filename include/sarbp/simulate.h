/* sarbp/simulate.h - exact point-target phase histories (FP64).
 *
 * FREQ domain: S_ik = sum_t amp_t * exp(-j 4 pi f_ik dR_i(q_t) / c),
 * f_ik = fc - B/2 + k * B / K, dR_i(q) = |a_i - q| - r0_i, r0_i = |a_i|.
 * CHIRP domain: baseband echoes amp * rect((tau - tau_q)/Tr) *
 * exp(j pi Kr (tau - tau_q)^2) * exp(-j 2 pi fc tau_q), tau_q = 2 |a_i - q| / c,
 * Kr = B / Tr, sampled at tau = t0 + n / fs, t0 = 2 near_range / c; the rect
 * is centred on tau_q and closed: |tau - tau_q| <= Tr / 2.
 * Geometry CIRCULAR: a_i = (Rg cos th_i, Rg sin th_i, R sin el), Rg = R cos el,
 * th_i = -aperture/2 + i * aperture / (P - 1) (first and last pulse at the
 * aperture's edges; th = 0 when P == 1), centred on azimuth 0.
 * Geometry LINEAR: a straight track parallel to y, a_i = (Rg, y_i, R sin el),
 * y_i = (i - (P - 1) / 2) * V / PRF: the tangent of the circular track at
 * azimuth 0, so both geometries look from +x towards the origin and azimuth
 * increases with the pulse index (seed 004's stripmap when el = 0).
 * Both record th_i = atan2(y, x) and phi_i = atan2(z, hypot(x, y)) in degrees.
 * All arithmetic is FP64 (dR in the cancellation-free form
 * (|q|^2 - 2 q.a) / (|a - q| + |a|)); samples are rounded to FP32 once.
 * Noise (noise_db > -300): complex Gaussian, E|n|^2 = 10^(noise_db/10) per
 * sample (a unit target's samples have |s|^2 = 1), a deterministic function of
 * seed (same seed and parameters -> the same bits; independent of rand()).
 * Thread safety: all functions are reentrant. */
#ifndef SARBP_SIMULATE_H
#define SARBP_SIMULATE_H

#include <stddef.h>
#include "sarbp/phd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SARBP_GEOM_CIRCULAR = 0, SARBP_GEOM_LINEAR = 1 } sarbp_geometry;

typedef struct {
    double x, y, z, amp;
} sarbp_target;

typedef struct {
    sarbp_geometry geometry;
    sarbp_domain domain;
    size_t npulses;        /* default 512 (circular), 1024 (linear) */
    size_t nsamples;       /* default 512 (freq), 3072 (chirp) */
    double fc;             /* Hz, carrier (FREQ: band centre); default 9.6e9 (circular),
                            * c / 0.03125 m = 9.5934e9 (linear) */
    double bandwidth;      /* Hz, default 640e6 (freq: df = B / K), 480e6 (chirp) */
    double range;          /* m, slant range to the scene origin; default 10e3 (circular), 23500 (linear) */
    double elevation_deg;  /* default 45 (circular), 0 (linear) */
    double aperture_deg;   /* CIRCULAR: azimuth span, default 4 */
    double prf, velocity;  /* LINEAR: default 533.33 Hz, 154.2 m/s */
    double pulse_len;      /* CHIRP: default 2.4e-6 s */
    double fs;             /* CHIRP: default 548.57e6 Hz */
    double near_range;     /* CHIRP: slant range of sample 0 (m); 0 means range - swath/2,
                            * swath = nsamples / fs * c / 2; default 0 (circular),
                            * 23305 (linear) */
    double noise_db;       /* noise power per sample relative to a unit target's sample power; <= -300: none */
    unsigned long long seed;
    size_t ntargets;
    sarbp_target *targets; /* borrowed; NULL/0 means one unit target at the
                            * geometry's default: the origin (CIRCULAR) or
                            * (0, 4, 0), 4 m along track (LINEAR, seed 004's
                            * target at 23500 m range, 4 m azimuth) */
} sarbp_sim_params;

/* Fills the defaults for a geometry and domain (see field comments):
 * CIRCULAR: Gotcha-like, fc 9.6 GHz, 512 pulses over 4 degrees, range 10 km,
 * elevation 45 degrees. LINEAR: seed 004's stripmap, fc = c / 0.03125 m,
 * PRF 533.33 Hz, V 154.2 m/s, 1024 pulses, range 23500 m, elevation 0.
 * FREQ: 512 samples over 640 MHz. CHIRP: 3072 samples at fs 548.57 MHz of a
 * 2.4 us pulse sweeping 480 MHz. No noise, seed 1, the default target. */
void sarbp_sim_defaults(sarbp_sim_params *p, sarbp_geometry geom, sarbp_domain dom);

/* Parses "x,y,z,amp;x,y,z,amp" (metres, scene frame; z and amp optional:
 * "x,y" means z = 0, amp = 1). Spaces around numbers are allowed; empty
 * items, non-numbers and non-finite values are SARBP_ERR_INVALID naming the
 * item. *out allocated with malloc, caller frees; *out = NULL, *n = 0 on
 * failure. */
sarbp_status sarbp_targets_parse(const char *text, sarbp_target **out, size_t *n);

/* n random point scatterers for tests and demo data: x, y uniform in
 * [-half_extent, half_extent], z = 0, |amp| = 10^(dB/20) with dB uniform in
 * [amp_db_min, amp_db_max] and a random sign. A deterministic function of
 * seed. *out allocated with malloc (n >= 1), caller frees. */
sarbp_status sarbp_targets_clutter(size_t n, double half_extent, double amp_db_min,
                                   double amp_db_max, unsigned long long seed,
                                   sarbp_target **out);

/* Simulates the collection (with data). Checks p (counts >= 1, at most 2^31
 * samples in all, finite positive physical values, FREQ: fc > B/2, CHIRP:
 * sample 0 at a non-negative range), SARBP_ERR_INVALID otherwise. FREQ: f0, df
 * set per pulse; CHIRP: fs, chirp_rate, pulse_len, fc, t0 set. th and phi are
 * always filled. Caller frees with sarbp_phd_free. */
sarbp_status sarbp_simulate(const sarbp_sim_params *p, sarbp_phd **out);

#ifdef __cplusplus
}
#endif
#endif
