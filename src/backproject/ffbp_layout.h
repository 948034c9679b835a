/* ffbp_layout.h - the polar grids of fast factorized backprojection
 * (private to src/backproject): the footprint of a region of the image and
 * the polar grid of a sub-aperture, shared by the FP64 prototype (ffbp.c),
 * the FP32 engine (ffbp_cpu.c) and its cost and error model. */
#ifndef SARBP_FFBP_LAYOUT_H
#define SARBP_FFBP_LAYOUT_H

#include <math.h>

#include "ffbp_kernels.h"
#include "sarbp/backproject.h"
#include "sarbp/ffbp.h"

/* The image rectangle (pixel centres) and its plane. */
typedef struct {
    double x0, x1, y0, y1, z;
} ffbp_footprint;

/* Rows r of g. */
void ffbp_footprint_of(const sarbp_grid *g, sarbp_region r, ffbp_footprint *fp);

/* A polar grid about the phase centre c: rho = r0 + i dr (i < nr), theta =
 * t0 + j dt (j < nt). L: the sub-aperture's horizontal half-extent across
 * the line of sight to the footprint's centre; cosd: the cosine of the
 * depression angle to the footprint's centre (the theta bandwidth is about
 * k L cosd). */
typedef struct {
    double c[3];
    double r0, dr, t0, dt;
    size_t nr, nt;
    double L, cosd;
} ffbp_polar;

/* The grid of the sub-aperture of antenna positions pos[p0..p1) ([][3]):
 * angular sampling pi / (os_theta (kband L + 1)), range spacing drho, the
 * footprint covered with a margin of 8 samples each side.
 * SARBP_ERR_INVALID when a phase centre lies over the image or the grid
 * would be absurdly large. */
sarbp_status ffbp_polar_plan(const double *pos, size_t p0, size_t p1, const ffbp_footprint *fp,
                             double kband, double os_theta, double drho, ffbp_polar *out);

/* ffbp_unwrap (theta wrapped to within pi of a reference) is the GPU
 * kernels' own, shared through ffbp_kernels.h */

#endif
