/* image_check.h - the image writers' checks of outputs before any file
 * exists, for output_check.c and the KMZ writer, and the .npy header for
 * the MPI ranks that write their rows themselves (src/form/mpi_form.c); not
 * installed. Implemented in image_write.c, which runs the checks again when
 * it writes. */
#ifndef SARBP_IMAGE_CHECK_H
#define SARBP_IMAGE_CHECK_H

#include <stddef.h>

#include "sarbp/image.h"

/* Every output paths[0..n) of img, in format fmt[i] (NULL: each from its
 * name): the format known, the dB range of quick looks, each format's own
 * check (its limits for img's grid, the attributes and ctx it needs), then
 * the path (sarbp_output_check_path). Looks at img's grid and attributes
 * only: img->data may be NULL. ctx may be NULL (a SICD is then refused). */
sarbp_status image_check_outputs(const char *const *paths, const sarbp_image_format *fmt,
                                 size_t n, const sarbp_image *img, double db_range,
                                 const sarbp_image_context *ctx);

/* An 8-bit PNG of w x h pixels (channels 1: gray, 3: RGB) can be written
 * and read back by libpng with its default limits: sides of at most
 * PNG_USER_WIDTH_MAX x PNG_USER_HEIGHT_MAX (1,000,000). SARBP_ERR_INVALID
 * naming path otherwise. */
sarbp_status png8_check_size(const char *path, size_t w, size_t h, int channels);

/* The .npy header (version 1.0) of a complex64 ('<c8') image of ny x nx
 * pixels in C order, as sarbp_image_write_npy writes it, into head: its
 * length, a multiple of 64 and at most IMAGE_NPY_HEADER_MAX; the pixels
 * follow it. */
#define IMAGE_NPY_HEADER_MAX 256
size_t image_npy_header(size_t ny, size_t nx, unsigned char head[IMAGE_NPY_HEADER_MAX]);

#endif
