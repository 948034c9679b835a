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
 * checked at the top level only: their insides are zlib streams that only
 * matio inflates (the probe in probe.h contains what that may do).
 * SARBP_ERR_FORMAT naming the file, the variable and what does not fit. */
sarbp_status mat_check_layout(const char *path);

#endif
