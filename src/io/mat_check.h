/* mat_check.h - MATLAB v5 files checked against their own length.
 *
 * matio trusts the sizes a MAT-file declares: it allocates for them before
 * it reads (gigabytes for a 300-byte file), and a read that runs off the
 * end of a variable is reported as success. mat_check_layout walks the
 * file's element tree first, reading only tags and array headers, so that
 * matio is handed only files whose every declared size fits. Not installed. */
#ifndef SARBP_MAT_CHECK_H
#define SARBP_MAT_CHECK_H

#include "sarbp/status.h"

/* Checks the MATLAB v5 file path: the 128-byte header; every top-level
 * variable inside the file; inside uncompressed variables, recursively,
 * every element inside its parent, dimensions that do not overflow, numeric
 * data holding every declared element (real and imaginary parts), struct
 * field-name tables that hold their fields. Compressed variables (v7) are
 * inflated, one at a time, into memory (at most 1032 times their compressed
 * length and 4 GiB: deflate expands no more) and their insides checked the
 * same way against the inflated length; a zlib stream that is corrupt,
 * truncated or inflates past that bound is refused. Memory: the largest
 * variable's inflated size, freed before returning.
 * SARBP_ERR_FORMAT naming the file, the variable and what does not fit. */
sarbp_status mat_check_layout(const char *path);

#endif
