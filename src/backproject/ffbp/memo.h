/* ffbp/memo.h - the last FFBP decision, kept by value (internal to the
 * library; a session holds one, sarbp_session_ffbp_choose).
 *
 * Choosing a factorization searches the model (about 40 ms for 2048 pulses
 * and a 4096^2 grid on an H100 host), which a caller forming image after
 * image of one geometry, or a form choosing for its CLI and then for its
 * plans, should pay once. The key is every input of the choice by value,
 * never an address. Not thread safe: the owner locks. */
#ifndef SARBP_FFBP_MEMO_H
#define SARBP_FFBP_MEMO_H

#include "sarbp/ffbp.h"
#include "sarbp/phd.h"
#include "sarbp/rangecomp.h"

typedef struct {
    double *geo; /* [7][npulses], owned; NULL: empty */
    size_t npulses, nbins;
    sarbp_interp interp;
    double max_error_db;
    sarbp_grid grid;
    sarbp_ffbp_params prm;
    sarbp_ffbp_prediction pred;
} sarbp_ffbp_memo;

/* sarbp_ffbp_choose_phd, answered from m when its inputs equal the last
 * ones m holds, otherwise computed and kept in m. m NULL: not kept. */
sarbp_status sarbp_ffbp_memo_choose(sarbp_ffbp_memo *m, const sarbp_phd *meta,
                                    const sarbp_rc_params *rc, const sarbp_grid *g,
                                    double max_error_db, sarbp_ffbp_params *out,
                                    sarbp_ffbp_prediction *pred);
/* Frees what m holds and empties it; NULL is a no-op. */
void sarbp_ffbp_memo_release(sarbp_ffbp_memo *m);

#endif
