/* image_internal.h - helpers shared by the image, quality and plot modules
 * (not part of the public API). */
#ifndef SARBP_IMAGE_INTERNAL_H
#define SARBP_IMAGE_INTERNAL_H

#include <stddef.h>

#include "sarbp/image.h"

/* Writes an 8-bit PNG (channels 1: gray, 3: RGB) of w x h pixels, rows top
 * first, through a temporary beside path (tempfile.h). Nothing is left at
 * path on failure. */
sarbp_status sarbp_png_write8(const char *path, const unsigned char *pix, size_t w, size_t h,
                              int channels);

#endif
