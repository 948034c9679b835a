/* npy_stream.h - between the .npy stream (npy_stream.c) and the writer of
 * all outputs (image_write.c); not installed. */
#ifndef SARBP_NPY_STREAM_H
#define SARBP_NPY_STREAM_H

#include "io/tempfile.h"
#include "sarbp/image.h"

/* The temporary of finished stream s into *out (s no longer owns it), when
 * s wrote every row of an image of grid g to path. SARBP_ERR_INVALID
 * naming path otherwise. */
sarbp_status npy_stream_take(sarbp_npy_stream *s, const char *path, const sarbp_grid *g,
                             sarbp_tempfile **out);

#endif
