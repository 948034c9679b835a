/* sarbp/form.h - the whole pipeline: reader -> back end -> image. */
#ifndef SARBP_FORM_H
#define SARBP_FORM_H

#include "sarbp/backproject.h"
#include "sarbp/image.h"
#include "sarbp/phd_io.h"
#include "sarbp/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double read_s, compute_s, total_s; /* wall-clock seconds */
    size_t npulses;
    double pairs;                      /* pixel-pulse pairs */
    sarbp_stage_times stages;          /* the back end's split (setup, transfer, rc, bp, finish) */
} sarbp_form_stats;

/* Forms the image of all (selected) pulses of rd on grid g with back end be.
 * Streams the samples in blocks of be->block_pulses(). Records attributes
 * (backend, precision, window, upsample, inputs) in the image.
 * *out allocated on success; caller frees. stats may be NULL. */
sarbp_status sarbp_form(sarbp_reader *rd, const sarbp_grid *g, const sarbp_backend *be,
                        const sarbp_rc_params *rc, const sarbp_bp_options *o,
                        sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats);

/* Same, from a phase history already in memory (with data). */
sarbp_status sarbp_form_phd(const sarbp_phd *phd, const sarbp_grid *g, const sarbp_backend *be,
                            const sarbp_rc_params *rc, const sarbp_bp_options *o,
                            sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
