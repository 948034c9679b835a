/* image_check.h - the image writers' checks of outputs before any file
 * exists, for output_check.c and the KMZ writer; the .npy header for the
 * MPI ranks that write their rows themselves (src/form/mpi_form.c); the
 * .npy pixel writer the band-by-band stream shares (npy_stream.c), and the
 * host's byte order for the image reader. Not installed. Implemented in
 * image_write.c, which runs the checks again when it writes. */
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

/* Whether this host stores numbers little-endian, as '<c8' pixels are. */
int image_host_little_endian(void);

/* n bytes of p at offset off of fd, whole (pwrite may write less): 0, or
 * -1 with errno set. */
int image_write_at(int fd, const void *p, size_t n, long long off);

/* Pixels rows[nrows][nx] at rows row0.. of the .npy on fd whose header is
 * head bytes, little-endian hosts only: in pieces of 64 MiB, each handed to
 * the disk as soon as it is written (sync_file_range), so that the final
 * fsync finds most of a large image written (the copy into the page cache
 * and the disk's write overlap instead of following each other). 0, or -1
 * with errno set. The whole-image writer and the band-by-band stream
 * (npy_stream.c) both write through it. */
int image_npy_write_rows(int fd, size_t head, size_t nx, size_t row0, size_t nrows, const sarbp_c32 *rows);

#endif
