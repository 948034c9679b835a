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
 * imagery in synthetic aperture radar"). The range profiles are computed
 * once and kept. The quadratic and cubic coefficients of the pulse index
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

#include "sarbp/grid.h"
#include "sarbp/phd.h"
#include "sarbp/rangecomp.h"
#include "sarbp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int iterations;       /* quasi-Newton iterations, and sweeps over the pulses, at most;
                             0: 40 */
    int poly_order;       /* the polynomial stage's highest order (2..12); 0: 6; -1: none */
    double tol;           /* stop a stage when an iteration gains less than this fraction
                             of the sharpness; 0: 1e-4 for the polynomial, 1e-3 for a sweep */
    int threads;          /* 0: all cores */
    /* Called after every iteration (may be NULL): the stage (0 the polynomial,
     * iteration 0 a scan's result; 2 a sweep over the pulses), the iteration,
     * the sharpness relative to the uncorrected image's, and the largest phase
     * change of the step (rad). */
    void (*on_iteration)(void *user, int stage, int iteration, double sharpness, double step);
    void *user;
} sarbp_autofocus_options;

void sarbp_autofocus_options_default(sarbp_autofocus_options *o);

typedef struct {
    int iterations;       /* quasi-Newton iterations and sweeps */
    int evaluations;      /* images formed (line searches included) */
    double sharpness;     /* the corrected image's, relative to the uncorrected one's */
} sarbp_autofocus_info;

/* Estimates phase[npulses] (rad; pulse j's samples are to be multiplied by
 * exp(+j phase[j])) for the phase history phd (with its samples) imaged on
 * grid g with range compression rc, in FP32 on the CPU. A phase history
 * already focused gets a correction near zero. info may be NULL. */
sarbp_status sarbp_autofocus_estimate(const sarbp_phd *phd, const sarbp_grid *g,
                                      const sarbp_rc_params *rc, const sarbp_autofocus_options *o,
                                      double *phase, sarbp_autofocus_info *info);

/* Multiplies pulse j's samples of phd by exp(+j phase[j]) (in place). */
void sarbp_autofocus_apply(sarbp_phd *phd, const double *phase);

/* Removes the constant and the linear term over the pulse index from
 * phase[n] (least squares), in place: what an estimate of a phase error is
 * compared after. */
void sarbp_phase_detrend(double *phase, size_t n);

#ifdef __cplusplus
}
#endif
#endif
