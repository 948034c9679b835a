/* ffbp/engine.h - the FP32 fast factorized backprojector as a stream
 * (private to src/backproject; ffbp/engine_fp32.c): pulses go in, in order, a block
 * at a time; runs of `base` pulses become stage-0 polar sub-images, and
 * sub-images merge like a binary counter (a stack of at most merge - 1
 * finished sub-images per level), so the memory held is a few polar grids
 * per level, never the pulses. Each sub-image of the last level is summed
 * at the pixels as soon as it is complete; finish merges what is left.
 * sarbp_ffbp_cpu_fp32 and the cpu back end's FFBP plan (cpu/plan_bp.c)
 * both drive it. */
#ifndef SARBP_FFBP_ENGINE_H
#define SARBP_FFBP_ENGINE_H

#include "backproject/ffbp/layout.h"

typedef struct ffbp_engine ffbp_engine;

/* An engine for rows r of g, adding (+=) its image to img[r.nrows][nx]
 * (held, not owned: it must stay valid until finish). threads <= 0: all
 * cores; the result does not depend on it. All scratch is allocated here;
 * the polar grids are allocated as they are made (a few per level). */
sarbp_status ffbp_engine_create(const ffbp_pulses *pu, const sarbp_grid *g, sarbp_region r,
                                const sarbp_ffbp_params *prm, int threads, sarbp_c32 *img,
                                ffbp_engine **out);

/* Pulses [p0, p0 + pr->npulses) as FP32 profiles (pr->data32; their pos,
 * r0, rstart, dr, fref). p0 must be the next pulse the engine expects
 * (pulses arrive in order; SARBP_ERR_INVALID otherwise). */
sarbp_status ffbp_engine_push(ffbp_engine *e, const sarbp_profiles *pr, size_t p0);

/* All pulses pushed: merges what is left and sums it at the pixels. */
sarbp_status ffbp_engine_finish(ffbp_engine *e);

/* Starts again for rows r (at most the first region's rows) onto img. */
sarbp_status ffbp_engine_restart(ffbp_engine *e, sarbp_region r, sarbp_c32 *img);

/* Pulses the engine expects next. */
size_t ffbp_engine_next(const ffbp_engine *e);

void ffbp_engine_info(const ffbp_engine *e, sarbp_ffbp_info *info);
void ffbp_engine_free(ffbp_engine *e); /* NULL is a no-op */

/* The cpu back end's FFBP plan (cpu/plan_ffbp.c); sarbp_cpu_plan_create
 * calls it for algorithm SARBP_ALGO_FFBP. */
sarbp_status ffbp_cpu_plan_create(const sarbp_bp_desc *d, const sarbp_cpu_options *o,
                                  sarbp_bp_plan **out, sarbp_stage_times *stats);

#endif
