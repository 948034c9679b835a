/* h5_check.h - HDF5 datasets checked against the file that holds them.
 *
 * HDF5 believes a dataset's dataspace: H5Dread of a dataset that declares
 * 2^61 elements allocates for them, of a chunked one whose chunks were never
 * written returns fill values, of an external one reads whatever file it
 * names. Every reader (phase histories, images) calls h5_check_dataset on a
 * dataset before it allocates for it or reads it. Not installed. */
#ifndef SARBP_H5_CHECK_H
#define SARBP_H5_CHECK_H

#include <hdf5.h>
#include <stddef.h>

#include "sarbp/status.h"

/* A deflate stream expands at most about 1032:1: a filtered dataset may
 * declare at most this many times the bytes it stores. */
#define H5_CHECK_MAX_EXPANSION 1100

/* Checks that dataset d (called name in messages, in file path) can hold
 * what its dataspace declares: the element count and count x type size do
 * not overflow; the data lie in path itself (no external or virtual
 * storage); a contiguous dataset's bytes lie inside the file; a chunked one
 * has every chunk written, and stores at least its declared bytes
 * (unfiltered) or one 1/H5_CHECK_MAX_EXPANSION of them (filtered), within
 * the file's length. *count gets the number of elements. SARBP_ERR_FORMAT
 * (or SARBP_ERR_HDF5 when HDF5 fails) naming the file otherwise. */
sarbp_status h5_check_dataset(const char *path, const char *name, hid_t d, size_t *count);

/* Checks that t (the type of dataset or attribute name) is a number HDF5
 * can convert without reading outside it: an integer or float of 1 to 16
 * bytes whose precision and offset lie within its size, and for a float
 * whose sign, exponent and mantissa fields lie within its precision.
 * SARBP_ERR_FORMAT naming path and name otherwise. */
sarbp_status h5_check_number_type(const char *path, const char *name, hid_t t);

/* Checks that compound type t (of dataset name) has every member inside
 * it (offset + size <= the compound's size) and that members a and b
 * (indices) are numbers as above. */
sarbp_status h5_check_complex_type(const char *path, const char *name, hid_t t, unsigned a,
                                   unsigned b);

#endif
