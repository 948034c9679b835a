/* image_internal.h - helpers shared by the image, quality and plot modules
 * (not part of the public API). */
#ifndef SARBP_IMAGE_INTERNAL_H
#define SARBP_IMAGE_INTERNAL_H

#include <stddef.h>

#include "sarbp/image.h"

/* "<path>.tmp.<pid>" into buf[n]; SARBP_ERR_INVALID when it does not fit. */
sarbp_status sarbp_tmp_name(char *buf, size_t n, const char *path);

/* Renames the complete temporary file tmp to path; on failure removes tmp
 * and returns SARBP_ERR_IO. */
sarbp_status sarbp_tmp_commit(const char *tmp, const char *path);

/* Writes an 8-bit PNG (channels 1: gray, 3: RGB) of w x h pixels, rows top
 * first, through a temporary name. Nothing is left at path on failure. */
sarbp_status sarbp_png_write8(const char *path, const unsigned char *pix, size_t w, size_t h,
                              int channels);

#endif
