/* sample_check.h - the NaN and Inf check of phase-history samples, for a
 * back end that checks the samples as it copies them into its staging
 * buffers instead of form checking them on the way (private to the
 * library; sarbp_phd_check_samples is the public check).
 *
 * One pass instead of two: on the bench problem the separate check cost
 * the host 0.10-0.13 ms a pulse block, as much as the copy into pinned
 * memory, while the host's staging set the pace of the blocks
 * (docs/benchmarks/2026-11-journal.md). */
#ifndef SARBP_SAMPLE_CHECK_H
#define SARBP_SAMPLE_CHECK_H

#include <stddef.h>

#include "sarbp/phd.h"

/* Copies the n floats of src to dst (n even: whole samples) and returns the
 * index of the first NaN or Inf among them, or n; the copy stops at the end
 * of the 4096-float chunk that holds a bad float, so dst then holds only
 * part of src. */
size_t sarbp_samples_copy_checked(float *dst, const float *src, size_t n);
/* SARBP_ERR_INVALID naming float `bad` of the samples of pulses p0, ...
 * of phd ([pulse][nsamples] complex samples), as sarbp_phd_check_samples
 * names it. */
sarbp_status sarbp_phd_bad_sample(const sarbp_phd *phd, size_t p0, size_t bad);

#endif
