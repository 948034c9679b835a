/* sarbp/form.h - the whole pipeline: reader -> back end -> image, and the
 * partition layer that decides its loop order.
 *
 * Every call takes a session (sarbp/session.h): the plans take their
 * resources from it and count their memory against its budgets, and what
 * they keep for the next form stays in it. NULL: a session made for the
 * call and freed before it returns (nothing outlives the call: a caller
 * forming one image needs no session; one forming image after image
 * passes the same one).
 *
 * The output image is allocated once and written in place, band by band.
 * Each device (one host thread each) takes an equal share of the image's
 * rows and forms it in bands that fit its own memory budget. When a share
 * needs more than one band, the range profiles are computed once per pulse
 * block and kept, so every band reads them instead of the input; when they
 * do not fit beside a band, the input is read and compressed again for
 * every band (streaming; sarbp_form_stats says which). */
#ifndef SARBP_FORM_H
#define SARBP_FORM_H

#include "sarbp/backproject.h"
#include "sarbp/image.h"
#include "sarbp/phd_io.h"
#include "sarbp/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a form is cut up: per device, its rows, bands and whether the range
 * profiles stay resident. */
typedef struct {
    int device;                /* CUDA ordinal (0 for the CPU) */
    size_t row0, nrows;        /* its share of the image's rows */
    size_t band_rows, bands;   /* rows per band (the last may have fewer), how many */
    int kept;                  /* 1: profiles resident, computed once; 0: streamed per band */
    size_t budget, need;       /* bytes: the budget, and what the plan takes of it */
} sarbp_form_part;

typedef struct {
    int nparts;
    sarbp_form_part part[SARBP_MAX_DEVICES];
    int in_place;              /* the back end accumulates in the caller's image (sarbp_bp_memory) */
    int checks;                /* its plans check the samples for NaN and Inf themselves */
} sarbp_form_layout;

/* The layout sarbp_form would use (no image is formed): for tests, -v and
 * benchmarks. SARBP_ERR_NOMEM when a budget cannot hold one band. */
sarbp_status sarbp_form_plan_layout(sarbp_session *s, const sarbp_phd *meta, const sarbp_grid *g,
                                    const sarbp_backend *be, const sarbp_rc_params *rc,
                                    const sarbp_bp_options *o, sarbp_form_layout *out);

typedef struct {
    double total_s, read_s;            /* its thread's wall-clock seconds, of them reading */
    size_t pulses_read;                /* pulses it took from the input (read, or shared by the
                                          device that read them); kept profiles are not read */
    double teardown_s;                 /* of them destroying its plan */
    double pairs;                      /* pixel-pulse pairs it formed */
    sarbp_stage_times stages;          /* its plan's split */
} sarbp_form_dev_stats;

typedef struct {
    double read_s, compute_s, total_s; /* wall-clock seconds */
    double init_s;                     /* of total_s, before any device works: validation,
                                          devices started (CUDA contexts), layout, image */
    size_t npulses;
    size_t pulses_read;                /* pulses read from the input, all devices (a block the
                                          devices share counts once) */
    double pairs;                      /* pixel-pulse pairs */
    sarbp_stage_times stages;          /* the back end's split, summed over devices */
    sarbp_form_layout layout;          /* how it was cut up */
    sarbp_form_dev_stats dev[SARBP_MAX_DEVICES]; /* per layout part */
} sarbp_form_stats;

/* Forms the image of all (selected) pulses of rd on grid g with back end be.
 * Reads the samples in blocks of the plan's block size. Records attributes
 * (backend, precision, window, upsample, inputs) in the image.
 * *out allocated on success; caller frees. stats may be NULL. */
sarbp_status sarbp_form(sarbp_session *s, sarbp_reader *rd, const sarbp_grid *g,
                        const sarbp_backend *be, const sarbp_rc_params *rc, const sarbp_bp_options *o,
                        sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats);

/* Same, from a phase history already in memory (with data). */
sarbp_status sarbp_form_phd(sarbp_session *s, const sarbp_phd *phd, const sarbp_grid *g,
                            const sarbp_backend *be, const sarbp_rc_params *rc,
                            const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image **out,
                            sarbp_form_stats *stats);

/* sarbp_form_phd into the caller's image img (from sarbp_image_alloc, of
 * g's nx x ny; its grid is set to g and every pixel written), for callers
 * that form image after image into the same memory: memory already touched
 * costs no page faults (a fresh 4096^2 image costs milliseconds of them).
 * On failure img's pixels are undefined. */
sarbp_status sarbp_form_phd_into(sarbp_session *s, const sarbp_phd *phd, const sarbp_grid *g,
                                 const sarbp_backend *be, const sarbp_rc_params *rc,
                                 const sarbp_bp_options *o, sarbp_progress *progress, sarbp_image *img,
                                 sarbp_form_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
