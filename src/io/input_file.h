/* input_file.h - opening an input file: a regular file, never a named pipe,
 * a device or a socket. Not installed.
 *
 * A named pipe given as an input would block open() until some writer came
 * (for ever), and a device would be read without end; so every reader opens
 * its inputs here, or, where a library opens by name (HDF5, matio), has
 * input_check look at the name first. */
#ifndef SARBP_INPUT_FILE_H
#define SARBP_INPUT_FILE_H

#include <stdio.h>

#include "sarbp/status.h"

/* Opens path read-only (O_NONBLOCK, O_NOCTTY, O_CLOEXEC), checks with fstat
 * that it is a regular file, then clears O_NONBLOCK. On success *fd is the
 * open descriptor (the caller closes it). Otherwise *fd is -1 and the
 * status is SARBP_ERR_IO with "cannot open 'PATH': <reason>", or, for
 * something other than a regular file, "'PATH' is not a regular file (a
 * named pipe)" and the like. */
sarbp_status input_open(const char *path, int *fd);

/* input_open as a stdio stream ("rb"); *fp NULL on failure. */
sarbp_status input_fopen(const char *path, FILE **fp);

/* input_open and close: for a library that then opens path by name. */
sarbp_status input_check(const char *path);

#endif
