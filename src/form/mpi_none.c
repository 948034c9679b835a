/* mpi_none.c - sarbp/mpi.h for a build without MPI: one process, rank 0 of
 * 1. A launch of several ranks is refused rather than run as several copies
 * that would each form and write the whole image. */
#include <stdlib.h>
#include <string.h>

#include "form/plan_internal.h"
#include "sarbp/mpi.h"

int sarbp_mpi_built(void) { return 0; }

sarbp_status sarbp_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const int n = sarbp_mpi_launched();
    if (n > 1)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "started as one of %d MPI ranks, but this sarbp "
                           "was built without MPI (rebuild with -DSARBP_MPI=ON)", n);
    return SARBP_OK;
}

void sarbp_mpi_finalize(void) {}
int sarbp_mpi_rank(void) { return 0; }
int sarbp_mpi_size(void) { return 1; }
int sarbp_mpi_local_rank(void) { return 0; }
int sarbp_mpi_local_size(void) { return 1; }

int sarbp_mpi_check(int failed, int *peer)
{
    if (peer) *peer = 0;
    return !failed;
}

int sarbp_mpi_vote(int failed, int yes, int *all_yes, int *any_yes, int *peer)
{
    if (all_yes) *all_yes = !!yes;
    if (any_yes) *any_yes = !!yes;
    return sarbp_mpi_check(failed, peer);
}

int sarbp_mpi_drain(int failed) { return failed ? 0 : -1; }

int sarbp_mpi_compare(const uint64_t *d, int n, int *item, uint64_t *value)
{
    (void)d;
    (void)n;
    if (item) *item = -1;
    if (value) *value = 0;
    return -1;
}

sarbp_status sarbp_mpi_relay(int from, const char *text, int code, char **out, int *code_out)
{
    (void)from;
    *out = strdup(text ? text : "");
    if (code_out) *code_out = code;
    return *out ? SARBP_OK : sarbp_error(SARBP_ERR_NOMEM, "out of memory");
}

sarbp_status sarbp_form_mpi(sarbp_session *s, sarbp_reader *rd, const sarbp_form_plan *fp,
                            sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats,
                            int *peer_failed)
{
    (void)s;
    if (peer_failed) *peer_failed = 0;
    *out = NULL;
    const sarbp_form_decision *d = sarbp_form_plan_decision(fp);
    sarbp_image *img = NULL;
    sarbp_status st = sarbp_image_alloc(&d->grid, &img);
    if (!st) st = sarbp_form_plan_execute((sarbp_form_plan *)fp, rd, NULL, progress, img->data, 1, stats);
    if (!st) st = sarbp_form_plan_attrs(fp, img);
    if (!st) st = sarbp_form_inputs_attr(rd, img);
    if (st) {
        sarbp_image_free(img);
        return st;
    }
    *out = img;
    return SARBP_OK;
}

sarbp_status sarbp_form_mpi_rows(sarbp_session *s, sarbp_reader *rd, const sarbp_form_plan *fp,
                                 sarbp_progress *progress, sarbp_c32 **rows,
                                 sarbp_form_stats *stats, int *peer_failed)
{
    (void)s;
    if (peer_failed) *peer_failed = 0;
    const sarbp_form_decision *d = sarbp_form_plan_decision(fp);
    const size_t n = d->grid.nx * d->rows.nrows;
    *rows = calloc(n ? n : 1, sizeof **rows);
    if (!*rows) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu pixels", d->grid.nx,
                                   d->rows.nrows);
    const sarbp_status st = sarbp_form_plan_execute((sarbp_form_plan *)fp, rd, NULL, progress, *rows, 1, stats);
    if (st) {
        free(*rows);
        *rows = NULL;
    }
    return st;
}

sarbp_status sarbp_mpi_write_npy(const char *const *paths, size_t n, const sarbp_grid *g,
                                 size_t row0, size_t nrows, const sarbp_c32 *rows,
                                 int *peer_failed)
{
    if (peer_failed) *peer_failed = 0;
    if (!sarbp_mpi_writes_rows(paths, n))
        return sarbp_error(SARBP_ERR_INVALID, "the ranks write their own rows into .npy files "
                           "only (not '%s')", n && paths ? paths[0] : "(none)");
    return mpi_write_npy_one(paths, n, g, row0, nrows, rows);
}
