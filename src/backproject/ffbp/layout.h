/* ffbp/layout.h - the polar grids of fast factorized backprojection
 * (private to src/backproject; ffbp/layout.c): the footprint of a region of
 * the image, the polar grid of a sub-aperture and the levels of a
 * factorization, shared by the FP64 prototype (ffbp/proto_fp64.c), the FP32
 * engine (ffbp/engine_fp32.c), the GPU plan (ffbp/gpu_plan.c) and the cost
 * and error model (ffbp/model.c). */
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

/* ffbp_polar_plan in two steps: what no factorization parameter changes
 * (the centre c, the footprint's extent in rho and theta seen from it, L
 * and cosd), then the grid's sampling for kband, os_theta and drho. The
 * factorization search (model.c) makes the first once per sub-aperture. */
typedef struct {
    double c[3];
    double rmin, rmax, tmin, tmax;
    double L, cosd;
} ffbp_polar_geom;
sarbp_status ffbp_polar_geom_of(const double *pos, size_t p0, size_t p1, const ffbp_footprint *fp,
                                ffbp_polar_geom *out);
sarbp_status ffbp_polar_size(const ffbp_polar_geom *gm, double kband, double os_theta, double drho,
                             ffbp_polar *out);

/* rho and theta of the point (x, y, z) seen from c */
static inline void ffbp_to_polar(const double *c, double x, double y, double z, double *rho,
                                 double *th)
{
    const double dx = x - c[0], dy = y - c[1], dz = z - c[2];
    *rho = sqrt(dx * dx + dy * dy + dz * dz);
    *th = atan2(dy, dx);
}

/* The pulses' geometry, all npulses of them: pos [npulses][3] (scene frame,
 * m), fref [npulses] (Hz, the profiles' phase reference), dr [npulses] (m,
 * the profiles' bin spacing). The engine copies what it needs. */
typedef struct {
    size_t npulses;
    const double *pos, *fref, *dr;
} ffbp_pulses;

/* The most levels a factorization may have. */
#define FFBP_MAX_LEVELS 64

/* kc (the mean 4 pi fref / c), kband (the largest 4 pi f / c plus half the
 * band, rad/m), drho (the finest bin spacing) and kmax of the pulses. */
void ffbp_pulse_bands(const ffbp_pulses *pu, double *kc, double *kband, double *drho, double *kmax);
/* SARBP_ERR_INVALID, naming what is wrong, for a factorization out of range
 * or a pulse without usable geometry. */
sarbp_status ffbp_check_params(const sarbp_ffbp_params *prm);
sarbp_status ffbp_check_pulses(const ffbp_pulses *pu);
/* Sub-image counts per level n[0..L] (level 0 the runs of base pulses,
 * each next level merge of the last, until at most final_subs remain);
 * returns L. n holds FFBP_MAX_LEVELS + 1. */
int ffbp_level_counts(size_t P, const sarbp_ffbp_params *prm, size_t *n);
/* The pulses [p0, p1) of sub-image m of level k. */
void ffbp_sub_pulses(const sarbp_ffbp_params *prm, size_t P, int k, size_t m, size_t *p0, size_t *p1);

/* The layout only (no allocation of grids): stages, sub-images summed at
 * the pixels, polar samples of all stages, and the work counts of the cost
 * model (sarbp_ffbp_choose). */
typedef struct {
    int stages;
    size_t final_subs;
    double samples0, samples_merge; /* polar samples made by stage 0, by merges */
    double reads_merge;             /* child reads of the merges (samples x children) */
    double reads_final;             /* pixel x sub-image reads of the last step */
    double pulse_reads;             /* stage 0: samples x pulses */
    double os_eff_min;              /* the smallest effective angular oversampling */
    int interp_stages;              /* 2-D interpolations a pixel's value went through */
    /* per level k (0 .. stages - 1): the smallest ratio of a grid's angular
     * sampling rate to the theta bandwidth k_max L cos(depression) of its
     * data, per unit os_theta: the effective oversampling is os_theta times it */
    double os_ratio[65];
} ffbp_layout_stats;

/* The geometry (ffbp_polar_geom) of every sub-aperture of the levels of
 * base and merge on the whole grid g, down to one sub-image: every level a
 * factorization of that base and merge has, whatever its final_subs,
 * os_theta and os_rho. Sub-image m of level k at geo[off[k] + m]. */
typedef struct {
    size_t base, merge, npulses;
    int levels;
    size_t n[FFBP_MAX_LEVELS + 1], off[FFBP_MAX_LEVELS + 1];
    ffbp_polar_geom *geo; /* owned: ffbp_level_geoms_release */
} ffbp_level_geoms;
sarbp_status ffbp_level_geoms_make(const ffbp_pulses *pu, const sarbp_grid *g, size_t base, size_t merge,
                                   ffbp_level_geoms *out);
void ffbp_level_geoms_release(ffbp_level_geoms *lg); /* NULL is a no-op */

/* The layout of prm on g. lg: the sub-apertures' geometry of prm's base
 * and merge for these pulses and grid (ffbp_level_geoms_make), or NULL to
 * compute it; the same figures either way. */
sarbp_status ffbp_layout_measure(const ffbp_pulses *pu, const sarbp_grid *g,
                                 const sarbp_ffbp_params *prm, const ffbp_level_geoms *lg,
                                 ffbp_layout_stats *out);

/* ffbp_unwrap (theta wrapped to within pi of a reference) is the GPU
 * kernels' own, shared through ffbp_kernels.h */

#endif
