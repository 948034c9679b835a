/* sarbp/quality.h - image quality: comparing two images, point-target metrics.
 *
 * Two families of figures (sar-primer.md section 6):
 *  - sarbp_quality_compare: a test image against a reference on the same grid
 *    (SER, worst-window SER, quasi-SNR, PSNR and SSIM of dB images, entropy,
 *    largest error).
 *  - sarbp_pointtarget_measure: impulse-response figures of one point target
 *    (IRW, PSLR, ISLR along two cuts) plus whole-image figures.
 * Every figure's exact definition is given beside its field below. Infinite
 * and undefined values are IEEE +-INFINITY and NAN, never sentinels.
 *
 * Threading: sarbp_quality_compare and sarbp_quality_image_stats are
 * reentrant. sarbp_pointtarget_measure creates FFTW plans, which FFTW does
 * not allow from several threads at once: call it from one thread at a time. */
#ifndef SARBP_QUALITY_H
#define SARBP_QUALITY_H

#include <stddef.h>
#include "sarbp/image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-pixel quasi-SNR values are capped here (dB); pixels whose magnitudes
 * are equal count as the cap. float32 resolves about 144 dB. */
#define SARBP_QSNR_CAP_DB 150.0
/* PSNR and SSIM use magnitude images in dB clipped to this many dB below the
 * reference's peak. */
#define SARBP_QUALITY_DB_FLOOR 80.0
/* SSIM window side (uniform weights). */
#define SARBP_SSIM_WINDOW 7
/* Default window side of the worst-window SER. */
#define SARBP_SER_WINDOW_DEFAULT 32

/* Whole-image figures. */
typedef struct {
    /* H = -sum rho ln rho with rho = |x|^2 / sum |x|^2 (natural log, nats);
     * terms with rho = 0 count 0; NAN for an all-zero image. Lower is better
     * focused; a single bright pixel gives 0, a flat image ln(nx*ny). */
    double entropy;
    double mean_mag;   /* mean |I| over all pixels */
    double max_mag;    /* max |I| */
    size_t max_ix, max_iy;
    double median_mag; /* lower median of the nonzero |I| (0 if none) */
    /* 20 log10(max |I| / median_mag): peak over the typical nonzero pixel;
     * NAN when the image is zero. */
    double dynamic_range_db;
} sarbp_image_stats;

/* Whole-image figures of img; all pixels must be finite (SARBP_ERR_INVALID
 * otherwise). Allocates a temporary copy of the magnitudes (4 bytes a pixel). */
sarbp_status sarbp_quality_image_stats(const sarbp_image *img, sarbp_image_stats *out);

/* Entropy of n complex values as defined in sarbp_image_stats. */
double sarbp_quality_entropy(const sarbp_c32 *data, size_t n);

typedef struct {
    size_t nx, ny;
    /* Global SER (dB) = 10 log10(sum |r|^2 / sum |r - t|^2): +INFINITY when
     * the images are identical (zero error, whatever the reference);
     * -INFINITY when the reference is zero and the test is not. */
    double ser_db;
    /* Worst SER over non-overlapping window x window tiles laid from pixel
     * (0, 0); where window does not divide the size, the last tile of a row
     * or column is smaller (every pixel is in one tile). Tiles whose
     * reference energy is zero are skipped. +INFINITY when every counted tile
     * is error-free; NAN when no tile has reference energy (nwindows = 0). */
    double window_ser_db;
    size_t window;               /* tile side used */
    size_t window_ix, window_iy; /* first pixel (lowest ix, iy) of the worst tile */
    size_t nwindows;             /* tiles counted */
    /* Seed 001's quasi-SNR: the mean, over pixels with |r| > 0, of
     * q = min(20 log10(|r| / ||r| - |t||), SARBP_QSNR_CAP_DB); a pixel with
     * ||r| - |t|| = 0 counts as the cap. Pixels with |r| = 0 are skipped;
     * NAN when there are none. Magnitude only: blind to phase errors. */
    double quasi_snr_db;
    size_t quasi_snr_pixels;
    /* dB images: u = (clamp(20 log10(|x| / peak_ref), -F, 0) + F) / F with
     * F = SARBP_QUALITY_DB_FLOOR, so u is in [0, 1] and both images are
     * scaled by the reference's peak (a gain error shows). |x| = 0 gives 0.
     * PSNR = 10 log10(1 / mean (u_t - u_r)^2) (+INFINITY when equal).
     * SSIM: mean over every position where a SARBP_SSIM_WINDOW square
     * window (clipped to the image when smaller) fits inside the image, of
     * ((2 mu_t mu_r + C1)(2 cov + C2)) / ((mu_t^2 + mu_r^2 + C1)(var_t + var_r + C2))
     * with uniform weights, population (1/N) moments, C1 = (0.01)^2,
     * C2 = (0.03)^2 (K1 = 0.01, K2 = 0.03, L = 1). */
    double psnr_db;
    double ssim;
    double entropy_test, entropy_ref; /* as sarbp_image_stats.entropy */
    /* Largest complex error max |t - r|, its pixel, and its size relative
     * to the reference peak, 20 log10(max_err / peak_ref) dB. */
    double max_err;
    size_t max_err_ix, max_err_iy;
    double max_err_db;
    double peak_test, peak_ref; /* max |t|, max |r| */
    double rel_l2;              /* sqrt(sum |r - t|^2 / sum |r|^2) */
} sarbp_compare_result;

/* Compares test against ref. The images must have the same nx, ny; when both
 * carry grid coordinates (has_grid_coords), also dx, dy within 1e-9 relative
 * and xc, yc, zc within 1e-9 of max(|centre|, image extent): otherwise
 * SARBP_ERR_MISMATCH with the differing figure in the detail. window >= 1.
 * Non-finite pixels: SARBP_ERR_INVALID. Temporary memory: 8 bytes a pixel. */
sarbp_status sarbp_quality_compare(const sarbp_image *test, const sarbp_image *ref, size_t window,
                                   sarbp_compare_result *out);

/* ---- point target -------------------------------------------------------- */

/* Patch side (pixels) around the peak and upsampling factor: a 64 x 64 patch
 * (smaller when the image is), placed with the peak pixel at its centre
 * where the image allows, is brought to baseband and interpolated 16x by
 * FFT zero padding. The peak is the upsampled maximum within one pixel of
 * the peak pixel, refined by a parabola through its neighbours along each
 * axis; its value is the interpolant there.
 * Baseband: a backprojected image keeps its range carrier (a target's
 * spectrum lies near 2 fc cos(el) / c cycles/m along the range direction,
 * about 45 for Gotcha-like data, usually folded by the pixel sampling). The
 * patch is multiplied by the conjugate ramp at its spectral centre,
 * estimated from the data - the argument of the lag-1 autocorrelation along
 * x and along y (the power-weighted circular mean of the spectrum) - so no
 * carrier or phase reference is assumed; pixel magnitudes do not change.
 * Interpolation: each bin of the patch's spectrum is placed at its frequency
 * in the square band [-m/2, m/2] (the Nyquist bin of an even size split
 * evenly), unless the band is oblique to the grid and overhangs that square:
 * then a bin goes to the alias (+-m along x and/or y) nearest the band's
 * centre in the band's own shape (its principal axes and widths, from the
 * second moments of the power spectrum). That is exact interpolation of a
 * band-limited periodic patch whose band fits between its replicas.
 * Limits (measured, tests/test_metrics_spacing.c, on images formed with
 * 32x range upsampling): an unwindowed target reads PSLR -13.26 to -13.32 dB
 * and IRW within 0.2% of 0.886 x resolution at spacings 0.1, 0.11, 0.125
 * and 0.2 m, range along x, y or at 30 degrees, elevation 45 or 0, however
 * the carrier folds; -13.19 / -13.37 dB and IRW +0.4% where an oblique band
 * overhangs the square pixel band (elevation 0, 30 degrees, 0.18 m). What
 * remains:
 *  - an image whose band overlaps its own replicas on the pixel lattice is
 *    aliased and no interpolation recovers its cuts (elevation 0, range at
 *    30 degrees, 0.2 m: 2.8% of the band overlaps, PSLR reads -12.87 dB);
 *  - the image's own errors count: at the default 8x range upsampling the
 *    linear interpolation of the profiles moves PSLR by up to +-0.3 dB with
 *    where the pixels fall (-13.11 to -13.58 dB over those cases);
 *  - other bright scatterers in the patch weigh on the centre estimate;
 *  - ISLR covers only the sidelobes within the cut (the patch less one
 *    pixel at each edge): a 1-D sinc loses about 1 / (pi^2 L) of its energy
 *    beyond +-L resolutions, so ISLR reads -10.2 dB over +-9 resolutions
 *    and -9.9 dB over +-26, against -9.68 dB for infinite extent. */
#define SARBP_PT_PATCH 64
#define SARBP_PT_UPSAMPLE 16
/* --target searches local maxima within this many pixels. */
#define SARBP_PT_SEARCH 4

typedef struct {
    int have_target;           /* 1: use the local maximum nearest (target_x, target_y) */
    double target_x, target_y; /* m, scene frame */
    double cut_angle_deg;      /* cut 0 at this angle from +x toward +y, cut 1 at +90 */
} sarbp_pt_options;

/* One cut through the refined peak, sampled every step_m = min(dx, dy) / 16
 * metres by evaluating the patch's trigonometric (band-limited) interpolant
 * exactly at each point - the function the upsampled grid samples - as far
 * as the cut stays inside the patch less one original pixel at each edge
 * (where the periodic interpolation wraps round).
 * Mainlobe: from the first local minimum of |I| on one side of the peak to
 * the first on the other ("first nulls"), found by walking down from the
 * peak while |I| decreases; both nulls belong to the mainlobe. Sidelobe
 * region: every other sample of the cut. */
typedef struct {
    double angle_deg; /* from +x toward +y */
    double peak;      /* max |I| along the cut (image units) */
    /* -3 dB width: distance between the crossings of peak / sqrt(2) on
     * either side, linearly interpolated between samples (m); NAN when the
     * cut ends before a crossing. */
    double irw_m;
    double pslr_db;   /* 20 log10(max sidelobe |I| / peak); NAN without both nulls */
    double islr_db;   /* 10 log10(sum sidelobe |I|^2 / sum mainlobe |I|^2); NAN likewise */
    double null_lo_m, null_hi_m; /* mainlobe edges, signed distance from the peak (m); NAN if absent */
    double sidelobe_m; /* signed position of the highest sidelobe (m) */
    size_t n;          /* samples */
    double step_m;     /* sample spacing (m) */
    size_t ipeak;      /* index of the sample at distance 0 */
    double *s_m;       /* [n] signed distance from the refined peak (m), owned */
    double *mag;       /* [n] |I|, owned */
} sarbp_pt_cut;

typedef struct {
    size_t ix, iy;    /* peak pixel */
    double px, py;    /* refined peak in fractional pixel indices */
    double x, y;      /* refined peak (m); pixel units centred on the image
                         when the image has no grid coordinates */
    double peak;      /* |I| at the refined peak (band-limited interpolant) */
    size_t patch_nx, patch_ny, upsample;
    /* Spectral centre of the patch, removed before interpolating (cycles/m
     * along x and y; cycles a pixel when the image has no grid
     * coordinates): the image's carrier folded into the pixel band,
     * in (-1 / (2 dx), 1 / (2 dx)] and likewise in y. */
    double carrier_x, carrier_y;
    sarbp_pt_cut cut[2];
    sarbp_image_stats stats;
    /* Whether the peak looks like an isolated point target, whose IRW, PSLR
     * and ISLR mean something: contrast_db = 20 log10(peak pixel |I| /
     * median |I| of the patch's pixels) (speckle's brightest pixel of a
     * 64 x 64 patch stands about 11 dB above its median; a point target
     * tens of dB); isolated = 0 when contrast_db < SARBP_PT_MIN_CONTRAST_DB
     * or either cut's PSLR is above SARBP_PT_MAX_PSLR_DB or undefined. */
    double contrast_db;
    int isolated;
} sarbp_pt_result;
#define SARBP_PT_MIN_CONTRAST_DB 15.0
#define SARBP_PT_MAX_PSLR_DB (-6.0)

/* Measures the point target of img: the brightest pixel, or with
 * opt->have_target the local maximum nearest the target within
 * SARBP_PT_SEARCH pixels (SARBP_ERR_INVALID when there is none). opt may be
 * NULL (brightest pixel, cuts along x and y). Caller frees *out with
 * sarbp_pointtarget_free. */
sarbp_status sarbp_pointtarget_measure(const sarbp_image *img, const sarbp_pt_options *opt,
                                       sarbp_pt_result **out);
void sarbp_pointtarget_free(sarbp_pt_result *r); /* NULL is a no-op */

/* Plots both cuts of r in dB relative to the peak (two panels, mainlobe
 * shaded, -3 dB and PSLR levels marked, tick labels) as an RGB PNG of
 * width x height pixels (at least 320 x 200), written through a temporary
 * name. */
sarbp_status sarbp_pointtarget_plot(const char *path, const sarbp_pt_result *r, size_t width,
                                    size_t height);

/* Plots v[n] (radians, one a pulse: an autofocus estimate) against the
 * index as an RGB PNG of width x height pixels (at least 320 x 200) with
 * title, written through a temporary name. */
sarbp_status sarbp_phase_plot(const char *path, const char *title, const double *v, size_t n,
                              size_t width, size_t height);

#ifdef __cplusplus
}
#endif
#endif
