/* phd_io_internal.h - what the phase-history readers and writers share.
 *
 * A reader (phd_io.c) is a list of phd_file: one input file with all of its
 * per-pulse metadata in memory and a way to read blocks of its samples. The
 * format modules fill one in: phd_read_h5.c (sarbp's own layout and HDF5 with
 * Gotcha field names, MATLAB v7.3 included) and phd_read_mat.c (MATLAB v5
 * through matio). phd_io.c detects the format, orders and concatenates the
 * files and checks what every format must satisfy. Not installed. */
#ifndef SARBP_PHD_IO_INTERNAL_H
#define SARBP_PHD_IO_INTERNAL_H

#include <stddef.h>

#include "sarbp/geo.h"
#include "sarbp/phd.h"
#include "sarbp/phd_io.h"

struct phd_file;

struct phd_file_ops {
    const char *format; /* for people: "sarbp-phd", "Gotcha HDF5", "Gotcha MATLAB v5" */
    /* Reads pulses [p0, p0 + np) of this file (file-local indices, in range)
     * into dst[np][nsamples], opening the file when it is not open. Does not
     * check for NaN: phd_io.c does that for every format. */
    sarbp_status (*read)(struct phd_file *f, size_t p0, size_t np, sarbp_c32 *dst);
    /* Closes the file if open; read() opens it again. The reader keeps at
     * most one file open, so thousands of inputs do not exhaust descriptors. */
    void (*release)(struct phd_file *f);
    /* Frees impl (the file is released first). */
    void (*destroy)(struct phd_file *f);
};

struct phd_file {
    char *path;                      /* owned */
    const struct phd_file_ops *ops;
    sarbp_phd *meta;                 /* owned; data == NULL */
    void *impl;                      /* the format's state, owned through ops */
    sarbp_collection *coll;          /* owned; NULL when the format carries none (CPHD does) */
    double *t;                       /* owned; [meta->npulses] pulse times (s after
                                      * coll->collect_start), NULL when unknown */
};

/* The format modules, one row each in formats[] (phd_io.c): open path
 * (known to be of the format) and fill f->ops, f->meta, f->impl; the file is
 * released before they return. On failure f is left without meta or impl
 * and the detail names the file. o may be NULL (the defaults). */
/* sarbp-phd and Gotcha HDF5, MATLAB v7.3 included (phd_read_h5.c) */
sarbp_status phd_open_h5(const char *path, const sarbp_reader_options *o, struct phd_file *f);
/* Gotcha MATLAB v5 through matio (phd_read_mat.c) */
sarbp_status phd_open_mat(const char *path, const sarbp_reader_options *o, struct phd_file *f);
/* CPHD 1.0/1.1 (cphd_read.c): o->channel is the Data/Channel/Identifier to
 * read, NULL for the first channel. Fills coll and t too. */
sarbp_status phd_open_cphd(const char *path, const sarbp_reader_options *o, struct phd_file *f);

/* Start frequency and step of a frequency vector freq[k] (Hz):
 * f0 = freq[0], df = (freq[k-1] - freq[0]) / (k - 1). SARBP_ERR_INVALID,
 * naming path, when k < 2, the step is not positive or a step departs from
 * df by more than 1e-3 df (non-uniform sampling). */
sarbp_status phd_freq_step(const char *path, const double *freq, size_t k, double *f0,
                           double *df);

/* Checks a file's declared npulses x nsamples against the documented limits
 * SARBP_PHD_MAX_PULSES and SARBP_PHD_MAX_SAMPLES (SARBP_ERR_INVALID naming
 * path and the field otherwise). */
sarbp_status phd_check_shape(const char *path, const char *field, size_t npulses,
                             size_t nsamples);

/* Checks that npulses fields agree: "'path': field 'name' has n pulses,
 * 'x' has m" (SARBP_ERR_INVALID) otherwise. */
sarbp_status phd_count_mismatch(const char *path, const char *name, size_t n,
                                const char *ref_name, size_t ref_n);

/* ---- HDF5 at the boundary ------------------------------------------------ */

/* Turns HDF5's automatic error printing off (the library never prints);
 * called before any HDF5 use. */
void phd_h5_quiet(void);

/* Records a failed HDF5 call as SARBP_ERR_HDF5: the file, the HDF5 function,
 * where in sarbp it was called and HDF5's own description of the innermost
 * error, then clears HDF5's error stack. Returns SARBP_ERR_HDF5. */
sarbp_status phd_h5_error(const char *path, const char *call, const char *file, int line);

/* Evaluates an HDF5 call (anything returning hid_t, herr_t or htri_t, where
 * negative means failure): SARBP_OK, or the status of phd_h5_error.
 *     if ((st = PHD_H5(path, d = H5Dopen2(loc, "fp", H5P_DEFAULT)))) goto fail; */
#define PHD_H5(path, call) ((call) < 0 ? phd_h5_error((path), #call, __FILE__, __LINE__) : SARBP_OK)

#endif
