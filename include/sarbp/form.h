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
    int in_place;              /* the back end accumulates in the caller's image (sarbp_plan_shape) */
} sarbp_form_layout;

/* ---- the grid a form is asked for ----
 * The pulses' default grid (sarbp_grid_default: the alias-free scene at
 * half the resolution) changed by what is given; every field 0 keeps the
 * default. The option names in the messages are the CLI's (--spacing,
 * --grid), the same words a library caller passes here. */
typedef struct {
    double center[3];          /* the scene point the grid is centred on, m */
    double spacing[2];         /* dx, dy, m; 0: the default (or sicd_osr's) */
    size_t nx, ny;             /* pixels; 0: the default scene's extent at the spacing */
    double sicd_osr;           /* > 0 (a SICD will be written) with neither spacing nor pixels
                                  given: the spacing that puts sicd_osr samples on each cycle
                                  of the ground-plane band (sicdcheck wants 1.1 to 2.2) */
} sarbp_grid_request;

typedef struct {
    int sicd_spacing;          /* the spacing is sicd_osr's */
    int request_error;         /* on failure: what was asked is at fault (a usage error), not
                                  the pulses */
} sarbp_grid_choice;

sarbp_status sarbp_form_grid(const sarbp_phd *meta, const sarbp_grid_request *r, sarbp_grid *g,
                             sarbp_grid_choice *c);

/* ---- the form plan: everything a form decides, decided once ----
 * What is asked: the back end (sarbp_backend_auto resolves "auto"), the
 * whole image's grid (sarbp_grid_decide), range compression, the back end
 * options with the algorithm BP, FFBP or AUTO, and the share of the rows
 * this process forms (MPI ranks: the outermost cut of the image). */
/* Rows [row0, row0 + nrows) of a form plan's rows (row 0 its first row)
 * are final and lie at rows ([nrows][nx], in the caller's buffer): the
 * request's on_rows. Called from the device threads, from several at once
 * for different rows, once for each band; it should hand the rows on
 * (another thread writes them) and return. A status other than SARBP_OK
 * stops the form with it. */
typedef sarbp_status (*sarbp_form_rows_fn)(void *user, size_t row0, size_t nrows, const sarbp_c32 *rows);

typedef struct {
    const sarbp_backend *backend;
    sarbp_grid grid;             /* the whole image */
    sarbp_rc_params rc;          /* windows; interp and upsample see below */
    int interp_given;            /* 0: rc.interp is the default for the precision and the
                                    algorithm decided (sarbp_interp_default) */
    int upsample_given;          /* 0: rc.upsample is the default for the interpolation */
    sarbp_bp_options bp;         /* bp.algorithm: SARBP_ALGO_BP, _FFBP or _AUTO (ffbp where the
                                    model predicts it faster at bp.max_error_db; on the cpu, fp32
                                    only) */
    int rank, nranks;            /* forms share rank of nranks equal shares of the rows, cut on
                                    the back end's row alignment (nranks <= 1: every row) */
    size_t bands_min;            /* direct bp: each device's rows in at least this many bands
                                    (the last may be shorter), over range profiles kept on the
                                    device, so that on_rows can take a band's rows while the
                                    next band forms. Where the profiles cannot be kept (reading
                                    the input again for every band), or for FFBP (whose
                                    factorization follows the band), as few as fit. 0 or 1: as
                                    few as fit */
    sarbp_form_rows_fn on_rows;  /* each band's rows as they are final, or NULL */
    void *on_rows_user;
} sarbp_form_request;

/* What was decided, for -v, the image's attributes and the caller's
 * outputs. */
typedef struct {
    const sarbp_backend *backend;
    sarbp_grid grid;             /* the whole image */
    sarbp_region rows;           /* the rows this plan forms (nrows 0: none, a rank past the rows) */
    sarbp_rc_params rc;          /* as formed: interpolation and upsampling decided */
    sarbp_bp_options bp;         /* as formed: algorithm BP or FFBP */
    int ffbp;                    /* FFBP: the factorization and its prediction */
    sarbp_ffbp_params prm;
    sarbp_ffbp_prediction pred;
    int target_met;              /* FFBP asked: the prediction meets bp.max_error_db (else the
                                    most accurate factorization searched is formed) */
    int have_gain;               /* the windows' coherent gain: a unit target at the origin */
    double gain;                 /* peaks at npulses x gain */
    char why[256];               /* AUTO: why this algorithm, one line */
    sarbp_form_layout layout;    /* devices x bands of rows */
} sarbp_form_decision;

typedef struct sarbp_form_plan_s sarbp_form_plan;

/* Decides the form of the pulses of meta (metadata: samples not needed;
 * it must outlive the plan) for req, in session s (NULL: a session of the
 * plan's own, freed with it): algorithm, factorization, interpolation,
 * coherent gain, the rows of req's share, and its devices x bands within
 * the budgets. Nothing is read or formed. SARBP_ERR_NOMEM when a budget
 * cannot hold one band. */
sarbp_status sarbp_form_plan_create(sarbp_session *s, const sarbp_phd *meta,
                                    const sarbp_form_request *req, sarbp_form_plan **out);
const sarbp_form_decision *sarbp_form_plan_decision(const sarbp_form_plan *fp);
void sarbp_form_plan_free(sarbp_form_plan *fp); /* NULL is a no-op */

/* sarbp_session_start, then a small form (16 pulses, 64 x 64 pixels a
 * device, the default options) over devices[0..n-1] of s, side by side:
 * what CUDA loads at a kernel's or cuFFT's first use, the copier's threads
 * and the pinned buffers are then in place before the caller's first form,
 * which no longer pays them (60-90 ms on an H200 before a 1024^2 form of
 * 3.5 ms). The first form of a new shape still makes its cuFFT plans and
 * buffers (a few ms). For a caller forming image after image in s. */
sarbp_status sarbp_form_warm(sarbp_session *s, const int *devices, int n);

/* The layout a form would use (no image is formed): for tests, -v and
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

/* Forms fp's rows from rd (phd NULL) or from phd (with data; rd NULL) into
 * rows ([decision rows][nx], row 0 = its first row; zeroed: they are zero
 * already, as a fresh calloc'd image's), each pulse read once per device
 * where the profiles stay resident. stats may be NULL. */
sarbp_status sarbp_form_plan_execute(sarbp_form_plan *fp, sarbp_reader *rd, const sarbp_phd *phd,
                                     sarbp_progress *progress, sarbp_c32 *rows, int zeroed,
                                     sarbp_form_stats *stats);
/* The attribute "inputs": rd's files, joined by ';'. */
sarbp_status sarbp_form_inputs_attr(sarbp_reader *rd, sarbp_image *img);
/* The attributes saying how fp formed img (back end, device, precision,
 * algorithm and FFBP's factorization, windows, interpolation, pulses,
 * coherent gain). */
sarbp_status sarbp_form_plan_attrs(const sarbp_form_plan *fp, sarbp_image *img);
/* What d forms on, as the attribute "device" says it: "cpu, N threads",
 * "cuda device N" or "cuda devices N,M,...", into buf[n]. */
void sarbp_form_decision_device(const sarbp_form_decision *d, char *buf, size_t n);

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
