/* ffbp/gpu_plan.h - the host side of the FP32 FFBP (private): the FP64
 * geometry of every stage's polar grids, laid out as the kernels of
 * kernels/ffbp.cu take it. Built with or without CUDA (the CPU emulation
 * sarbp_ffbp_emulate_fp32 uses it too). */
#ifndef SARBP_FFBP_GPU_PLAN_H
#define SARBP_FFBP_GPU_PLAN_H

#include "ffbp_kernels.h"
#include "sarbp/bench.h"
#include "sarbp/backproject.h"
#include "sarbp/ffbp.h"

typedef struct {
    sarbp_ffbp_run run;         /* geometry filled in; the caller sets the data pointers
                                   (subs, rows, pulses, prof, buf, img) where they live */
    sarbp_ffbp_dsub *h_subs;    /* every stage's sub-images (run.sub0) */
    sarbp_ffbp_drow *h_rows;    /* every stage's rows (run.row0) */
    sarbp_dpulse *h_pulses;     /* [np] */
    size_t nsubs, nrows;
    size_t buf_samples;         /* the largest stage's samples: each ping-pong buffer */
    size_t polar_samples;       /* all stages */
} sarbp_ffbp_gpu_plan;

/* Plans an FP32 FFBP run of pr (FP32 or FP64, npulses >= 1) on g, the
 * same factorization and grids as sarbp_ffbp_cpu_fp64. It reads pr's
 * geometry only (npulses, nbins, interp, pos, r0, rstart, dr, fref), never
 * its data, which may be NULL. Every size is
 * checked against int and size_t limits. SARBP_ERR_INVALID as the
 * prototype (antenna over the image, bad parameters, grids too large). The
 * plan owns its host arrays: sarbp_ffbp_gpu_plan_release. */
sarbp_status sarbp_ffbp_gpu_plan_make(const sarbp_profiles *pr, const sarbp_grid *g,
                                      const sarbp_ffbp_params *prm, sarbp_ffbp_gpu_plan *p);
void sarbp_ffbp_gpu_plan_release(sarbp_ffbp_gpu_plan *p);

/* The cuda back end's FFBP plan (o->algorithm SARBP_ALGO_FFBP, FP32;
 * cuda/plan_ffbp.c): execute range-compresses blocks on the device (cuFFT,
 * cuda/rc.h) into the whole aperture's resident FP32 profiles (samples
 * NULL: those an earlier region compressed, kept), finish runs
 * the GPU FFBP on the region and copies its rows straight into out. The
 * factorization is d->ffbp, or (none given) chosen at create for
 * o->max_error_db (sarbp_ffbp_choose_phd). dev: the session's context of
 * the device, whose cuFFT estimates are remembered (NULL: none). */
/* Pulses per block of the cuda FFBP plan unless o->pulse_block says (at
 * most the aperture's). */
#define SARBP_CUDA_FFBP_BLOCK 256

sarbp_status sarbp_cuda_ffbp_plan_create(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                         sarbp_bp_plan **out, sarbp_stage_times *stats);

/* The device bytes that plan's range compression takes besides the
 * profiles (blocks of `block` pulses, nbins bins, CHIRP's matched filter
 * length nmf or 0): two staging sets (a block's samples and pulse table
 * each), FFT scratch and spectra, cuFFT's work areas and the weight
 * tables. */
struct sarbp_cuda_device;
sarbp_status sarbp_cuda_ffbp_rc_memory(struct sarbp_cuda_device *dev, const sarbp_phd *meta, size_t block,
                                      size_t nbins, size_t nmf, size_t *bytes);

/* The plan's figures as the prototype reports them. */
void sarbp_ffbp_gpu_plan_info(const sarbp_ffbp_gpu_plan *p, sarbp_ffbp_info *info);

/* The profiles as FP32 [np][nbins]: pr->data32 itself, or a converted copy
 * in *tmp (the caller frees it) for FP64 profiles. NULL when out of memory. */
const sarbp_c32 *sarbp_ffbp_profiles32(const sarbp_profiles *pr, sarbp_c32 **tmp);

#endif
