/* gotcha_schema.h - the Gotcha phase-history fields, once for every container.
 *
 * A Gotcha file holds fp (complex samples, one row or column a pulse), freq
 * (the K frequencies, Hz), x, y, z (antenna position a pulse, m), r0 (range to
 * the scene centre a pulse, m) and optionally th, phi (azimuth and elevation
 * a pulse) and the autofocus solution af/r_correct, af/ph_correct (a pulse).
 * gotcha_schema_read checks these fields, in one order whatever holds them,
 * and fills a sarbp_phd. The containers say how a field is found and read
 * through a table of callbacks: phd_read_h5.c (HDF5 datasets, MATLAB v7.3
 * included) and phd_read_mat.c (MATLAB v5 struct fields through matio).
 * Reading the samples stays the container's. Not installed. */
#ifndef SARBP_GOTCHA_SCHEMA_H
#define SARBP_GOTCHA_SCHEMA_H

#include <stddef.h>

#include "sarbp/phd.h"
#include "sarbp/status.h"

/* How a container stores fp untransposed; also the order its shape
 * message names. */
enum gotcha_fp_order {
    GOTCHA_PULSES_BY_SAMPLES, /* [pulse][sample]: HDF5 (MATLAB v7.3 and h5py order) */
    GOTCHA_SAMPLES_BY_PULSES, /* [sample][pulse]: MATLAB v5, one column a pulse */
};

/* fp as stored: filled by the container's fp_shape, transposed by
 * gotcha_schema_read. */
struct gotcha_fp {
    int rank;
    size_t dims[2];  /* valid when rank is 2 */
    char shape[96];  /* for messages: "424 x 117", "scalar" */
    int transposed;  /* stored the other way round from the container's order */
};

/* One container's access to the fields. ctx is the container's own (file,
 * path for its messages); every callback gets it back. Names are the Gotcha
 * field names above; a sarbp_status that is not SARBP_OK has its detail set,
 * naming the file. */
struct gotcha_container {
    enum gotcha_fp_order order;
    /* 1 when field name (one of fp, freq, x, y, z, r0) is present. */
    int (*has)(void *ctx, const char *name);
    /* Field name as a real vector of at most max values, converted to
     * double: *v malloc'd (caller frees), *n values. */
    sarbp_status (*read_vector)(void *ctx, const char *name, size_t max, double **v, size_t *n);
    /* Optional per-pulse field name, in group (the Gotcha struct "af") when
     * group is not NULL: *out NULL when absent, else np values (malloc'd,
     * caller frees); a count other than np is refused against 'x'. */
    sarbp_status (*read_optional)(void *ctx, const char *group, const char *name, size_t np,
                                  double **out);
    /* Checks that fp holds complex numbers and fills fp's rank, dims and
     * shape. np is the pulse count of 'x', for a container that takes a
     * single pulse stored as a vector. */
    sarbp_status (*fp_shape)(void *ctx, size_t np, struct gotcha_fp *fp);
    /* The container's own limit on fp once its shape is accepted; NULL
     * when it has none. */
    sarbp_status (*fp_limit)(void *ctx, const struct gotcha_fp *fp);
};

/* 1 when any of the required fields (fp, freq, x, y, z, r0) is present:
 * the container holds a Gotcha phase history, complete or not. */
int gotcha_schema_found(const struct gotcha_container *c, void *ctx);

/* Reads and checks the Gotcha fields of path, in this order: every required
 * field present; x, y, z (at most SARBP_PHD_MAX_PULSES values) and freq (at
 * most SARBP_PHD_MAX_SAMPLES); y and z as many as x; at least one pulse;
 * freq uniformly spaced (phd_freq_step); fp complex, stored in the
 * container's order or the other way round; the container's fp_limit;
 * phd_check_shape; then r0, th, phi, af's r_correct and ph_correct. Fills
 * *out (FREQ domain, metadata only; caller frees with sarbp_phd_free) and
 * fp. On failure *out is untouched. */
sarbp_status gotcha_schema_read(const char *path, const struct gotcha_container *c, void *ctx,
                                struct gotcha_fp *fp, sarbp_phd **out);

#endif
