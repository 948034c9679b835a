/* plan.h - inside a typed plan (private to the back ends): every back
 * end's plan struct starts with a sarbp_bp_plan whose ops point at its
 * operations, the way FFTW's plans start with their plan_adt. The public
 * calls (plan.c) check their arguments and dispatch through ops. */
#ifndef SARBP_BP_PLAN_H
#define SARBP_BP_PLAN_H

#include "sarbp/backproject.h"

typedef struct {
    /* Where the next block goes (sarbp_bp_plan_stage); the op NULL, or
     * *buf left NULL (a CUDA plan converting raw samples to FP16 as it
     * stages them): a host block the base keeps. Samples the caller passes
     * from elsewhere are checked by the base before execute when the op is
     * NULL; a plan with a stage op checks them as it copies them. */
    sarbp_status (*stage)(sarbp_bp_plan *p, size_t p0, size_t np, sarbp_c32 **buf);
    sarbp_status (*execute)(sarbp_bp_plan *p, size_t p0, size_t np, const sarbp_c32 *samples,
                            sarbp_stage_times *stats);
    sarbp_status (*region)(sarbp_bp_plan *p, sarbp_region r);
    sarbp_status (*finish)(sarbp_bp_plan *p, sarbp_c32 *out, sarbp_stage_times *stats);
    void (*destroy)(sarbp_bp_plan *p);
} sarbp_bp_plan_ops;

struct sarbp_bp_plan_s {
    const sarbp_bp_plan_ops *ops;
    const sarbp_phd *meta;
    sarbp_grid grid;
    sarbp_region region;   /* the current one */
    size_t max_rows;       /* the first region's rows: the most a later one may have */
    size_t keep_pulses;    /* profiles of pulses [0, keep_pulses) are kept */
    size_t block;          /* pulses per internal block */
    size_t next;           /* the pulse the current region expects next */
    sarbp_c32 *staged;     /* what the last stage handed out (execute trusts it), or NULL */
    sarbp_c32 *stage_buf;  /* the default staging: [block][nsamples], made at the first stage */
    unsigned char *kept;   /* [keep_pulses]: nonzero once a pulse's profile is kept */
    sarbp_c32 *image;      /* the caller's whole image, or NULL (sarbp_bp_desc) */
    sarbp_session *session; /* whose host budget host_taken came from (NULL: none) */
    size_t host_taken;     /* bytes of it the plan holds, given back by release */
};

/* The factorization an FFBP plan is given (d->ffbp): plans choose nothing;
 * SARBP_ERR_INVALID, saying so, without it. */
sarbp_status sarbp_bp_desc_ffbp(const sarbp_bp_desc *d, sarbp_ffbp_params *out);

/* Fills the common part from d (kept[] allocated when keep_pulses > 0);
 * the back end's create calls it first. */
sarbp_status sarbp_bp_plan_init(sarbp_bp_plan *p, const sarbp_bp_plan_ops *ops,
                                const sarbp_bp_desc *d);
/* Frees the common part and gives back what it took of the session's
 * host budget (the back end's destroy calls it last). */
void sarbp_bp_plan_release(sarbp_bp_plan *p);

/* The bytes of m for a region of rows rows keeping keep pulses' profiles:
 * fixed + rows x per_row + keep x per_kept_pulse, SIZE_MAX past it. */
size_t sarbp_plan_shape_need(const sarbp_plan_shape *m, size_t rows, size_t keep);

#endif
