/* form/plan_internal.h - the form plan inside src/form (private): what
 * partition.c decides and form.c's runner reads. */
#ifndef SARBP_FORM_PLAN_INTERNAL_H
#define SARBP_FORM_PLAN_INTERNAL_H

#include "sarbp/form.h"

struct sarbp_form_plan_s {
    sarbp_session *s, *own;    /* the session its plans use; own: made for it */
    const sarbp_phd *meta;
    sarbp_form_decision d;
    sarbp_grid band;           /* the grid of d.rows (the whole grid when every row) */
    size_t bands_min;          /* the request's */
    sarbp_form_rows_fn on_rows;
    void *on_rows_user;
};

/* A back end plan's description for rows r of fp's band grid (keep: the
 * pulses whose profiles it keeps; image: the rows formed in place). */
sarbp_bp_desc form_plan_desc(const sarbp_form_plan *fp, sarbp_region r, size_t keep, sarbp_c32 *image);

/* The request of the convenience calls (sarbp_form and kin): everything
 * given, one share. */
sarbp_form_request form_request_given(const sarbp_grid *g, const sarbp_backend *be,
                                      const sarbp_rc_params *rc, const sarbp_bp_options *o);

/* sarbp_mpi_write_npy in one process (mpi_common.c, for mpi_none.c and for
 * mpi_form.c when MPI was not started): rows must be the whole image. */
sarbp_status mpi_write_npy_one(const char *const *paths, size_t n, const sarbp_grid *g,
                               size_t row0, size_t nrows, const sarbp_c32 *rows);

#endif
