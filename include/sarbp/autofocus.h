/* sarbp/autofocus.h - phase errors per pulse estimated from the data
 * itself, natively in backprojection.
 *
 * A pulse's phase error e_j (navigation errors of millimetres at X band)
 * multiplies its whole contribution to the image by exp(-j e_j). The
 * estimator finds the correction phi_j (applied as samples x exp(+j phi_j),
 * the convention of the Gotcha files' af.ph_correct) that maximises the
 * image's sharpness S = sum over pixels of |I|^4, with the image
 *     I(x) = sum_j exp(j phi_j) b_j(x),
 * b_j the backprojected contribution of pulse j. Its gradient is analytic,
 *     dS/dphi_j = -4 Im( exp(j phi_j) sum_x |I(x)|^2 conj(I(x)) b_j(x) ),
 * one reprojection of the weighted image onto the pulses, about one
 * backprojection (Ash 2012, "An autofocus method for backprojection
 * imagery in synthetic aperture radar"). Every pulse's contribution to the
 * pixels estimated on is computed once and kept (8 bytes a pulse and
 * pixel), so an image for new phases costs a matrix-vector product, not a
 * backprojection. The quadratic and cubic coefficients of the pulse index
 * are scanned (+-15 rad in steps of 3: the sharpness is many-peaked in a
 * smooth error of several radians), a quasi-Newton method (L-BFGS) fits a
 * polynomial of orders 2 to 6, then coordinate ascent sweeps the pulses,
 * each pulse's phase solved exactly with the others held (the sharpness is
 * a trigonometric polynomial of degree 2 in it; Ash 2012), a sweep costing
 * about one reprojection. The estimate carries no constant and no linear
 * term over the pulses: they only move the image, and no sharpness measure
 * sees them. */
#ifndef SARBP_AUTOFOCUS_H
#define SARBP_AUTOFOCUS_H

#include <stddef.h>

#include "sarbp/form.h"
#include "sarbp/grid.h"
#include "sarbp/phd.h"
#include "sarbp/rangecomp.h"
#include "sarbp/session.h"
#include "sarbp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A window of the grid: pixels [x0, x0 + nx) x [y0, y0 + ny). */
typedef struct {
    size_t x0, y0, nx, ny;
} sarbp_autofocus_window;

typedef enum {
    SARBP_AF_ESTIMATE = 0, /* the sharpness maximised (above): the default */
    SARBP_AF_PGA = 1       /* phase gradient autofocus (below) */
} sarbp_af_method;

typedef struct {
    sarbp_af_method method;
    int iterations;       /* quasi-Newton iterations, sweeps over the pulses, or PGA
                             iterations, at most; 0: 40 (PGA: 20) */
    int poly_order;       /* the polynomial stage's highest order (2..12); 0: 6; -1: none */
    double tol;           /* stop a stage when an iteration gains less than this fraction
                             of the sharpness; 0: 1e-4 for the polynomial, 1e-3 for a sweep
                             (PGA: when no phase moves more than tol rad; 0: 0.01) */
    int range;            /* 1: also a range per pulse (frequency-domain samples only) */
    /* The pixels estimated over: windows of the grid (nwindows of them; NULL:
     * chosen), or, when none are given, the whole grid if its contributions
     * fit max_bytes, else the windows of 64 x 64 pixels where the uncorrected
     * image is sharpest, as many as fit. */
    const sarbp_autofocus_window *windows;
    size_t nwindows;
    size_t max_bytes;     /* the contributions' memory (8 bytes a pulse and pixel);
                             0: 1 GiB on the CPU, 4 GiB on a GPU */
    int device;           /* -1: the CPU (threads); >= 0: that CUDA device */
    sarbp_session *session; /* the session the device's forms run in (the image the windows
                               are chosen from); NULL: one made for the call */
    int threads;          /* CPU threads; 0: all cores */
    /* Do no harm: the estimator runs on two halves of the pixels (every
     * other window, or a window's left and right halves), and its
     * correction is applied only when each half's estimate sharpens the
     * other half, which it never saw, by at least this fraction; else
     * nothing is applied (the data are focused: what the estimate would
     * fit there is the scene's speckle, not the platform's error). The
     * correction applied is the two halves' estimates averaged. 0: 0.01
     * (a smooth error of about 0.07 rad rms costs the sharpness 1%);
     * negative: no check (the average applied whatever it does). With
     * range, the first estimate is checked (nothing passing: no range and
     * no phase), the second, on the pulses corrected by the range, is not.
     * PGA keeps its own rule (the sharpest of its iterations, none
     * included). */
    double min_gain;
    /* Called after every iteration (may be NULL): the pixels (0 all of
     * them; 1, 2 the halves of the estimator's check), the stage (0 the
     * polynomial, iteration 0 a scan's result; 2 a sweep over the pulses;
     * 3 a PGA iteration; with range, the second estimate reports its
     * stages again), the iteration, the sharpness relative to the
     * uncorrected image's over those pixels, and the largest phase change
     * of the step (rad). */
    void (*on_iteration)(void *user, int half, int stage, int iteration, double sharpness, double step);
    void *user;
} sarbp_autofocus_options;

/* Defaults: the estimator, on the CPU (device -1), everything else 0. */
void sarbp_autofocus_options_default(sarbp_autofocus_options *o);

typedef struct {
    int iterations;       /* quasi-Newton iterations, sweeps and PGA iterations */
    int evaluations;      /* images formed from the contributions (line searches included) */
    double sharpness;     /* the corrected image's, relative to the uncorrected one's, over
                             the pixels estimated on */
    size_t pixels;        /* the pixels estimated on */
    int checked;          /* the estimator's halves were checked on each other (min_gain) */
    double held_out[2];   /* the sharpness of half 2 under half 1's estimate and of half 1
                             under half 2's, relative to their uncorrected images' (with
                             range, the first estimate's) */
    int rejected;         /* 1: below 1 + min_gain, no correction applied */
    size_t nwindows;      /* in that many windows (1: the whole grid) */
    double seconds;       /* wall clock, of it: */
    double profiles_s;    /* range compression (CPU threads) */
    double windows_s;     /* choosing the windows (an image of the whole grid) */
    double contributions_s; /* every pulse's contribution to the pixels */
} sarbp_autofocus_info;

/* Estimates phase[npulses] (rad; pulse j's samples are to be multiplied by
 * exp(+j phase[j])) and, with o->range, range[npulses] (m; pulse j's sample
 * at frequency f is to be multiplied by exp(+j 4 pi f range[j] / c), as if
 * its r0 were r0 - range[j]; the phase then holds what is left at each
 * pulse's reference frequency after the range) for the phase history phd
 * (with its samples) imaged on grid g with range compression rc, in FP32.
 * range may be NULL without o->range. A phase history already focused gets
 * a correction near zero. Neither estimate has a constant or a linear term
 * over the pulses. info may be NULL.
 *
 * PGA (o->method SARBP_AF_PGA): the classic method moved into the pulse
 * domain. The image is formed; around its brightest points (one per 32 x
 * 32 pixels at most, never closer than the window) a square window is kept,
 * its conjugate reprojected onto every pulse, and the phase of that
 * reprojection is each pulse's error (the dominant scatterers' phase
 * history, as PGA reads it from the azimuth-compressed lines); the windows
 * halve every iteration. Fast and robust for a few bright points on weak
 * clutter; less accurate than the estimator where no point dominates. */
sarbp_status sarbp_autofocus_estimate(const sarbp_phd *phd, const sarbp_grid *g,
                                      const sarbp_rc_params *rc, const sarbp_autofocus_options *o,
                                      double *phase, double *range, sarbp_autofocus_info *info);

/* A form with autofocus: every pulse of rd (phd NULL) read into memory, or
 * those of phd (with samples; rd NULL), the correction estimated by o on
 * fp's grid with fp's range compression, by fp's back end (the cpu with
 * its threads, or the first cuda device: o's device and threads are not
 * read), applied, and the image formed by fp from memory into *out
 * (allocated; its af_phase, and af_range with o->range, hold the estimate;
 * the attributes as sarbp_form_plan_attrs and, from rd, the inputs). fp
 * must form every row (one process). info may be NULL. */
sarbp_status sarbp_form_plan_execute_autofocused(sarbp_form_plan *fp, sarbp_reader *rd, const sarbp_phd *phd,
                                                 const sarbp_autofocus_options *o, sarbp_progress *progress,
                                                 sarbp_image **out, sarbp_form_stats *stats,
                                                 sarbp_autofocus_info *info);

/* Multiplies pulse j's samples of phd by exp(+j phase[j]) and, with range
 * (may be NULL), each sample at frequency f by exp(+j 4 pi f range[j] / c)
 * (in place). SARBP_ERR_UNSUPPORTED for a range on chirp samples. */
sarbp_status sarbp_autofocus_apply(sarbp_phd *phd, const double *phase, const double *range);

/* Removes the constant and the linear term over the pulse index from
 * phase[n] (least squares), in place: what an estimate of a phase error is
 * compared after. */
void sarbp_phase_detrend(double *phase, size_t n);

#ifdef __cplusplus
}
#endif
#endif
