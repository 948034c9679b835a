/* sarbp/image.h - complex images and their files.
 *
 * An image is a grid plus complex64 pixels [ny][nx] (row = y, row 0 = south)
 * and a few string attributes recording how it was made. Files:
 *  - .h5:  dataset /image compound {r, i} float32 [ny][nx]; /x [nx], /y [ny]
 *          pixel-centre coordinates (m, float64); attributes on the root:
 *          grid (nx, ny, dx, dy, xc, yc, zc) and every sarbp_image attribute
 *          as a string attribute.
 *  - .npy: complex64 ('<c8'), shape (ny, nx), C order.
 *  - .png: 8-bit grayscale of 20 log10 |I|, db_range below the peak -> 0,
 *          peak -> 255, north (+y) up (row 0 of the PNG is the largest y).
 * Writers go through a temporary file beside the output (created
 * exclusively: a file or symbolic link planted there is never followed),
 * synced and renamed over the output when complete; on failure, or when the
 * process is interrupted (SIGINT, SIGTERM, SIGHUP), the temporary is
 * removed and the output left as it was. */
#ifndef SARBP_IMAGE_H
#define SARBP_IMAGE_H

#include <stddef.h>
#include "sarbp/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_IMAGE_MAX_ATTRS 32

typedef struct {
    char key[48];
    char value[464];
} sarbp_attr;

typedef struct sarbp_image_s {
    sarbp_grid grid;
    sarbp_c32 *data; /* [ny][nx], owned */
    size_t nattrs;
    sarbp_attr attrs[SARBP_IMAGE_MAX_ATTRS];
    int has_grid_coords; /* 1 when the grid is known (.h5); 0 for .npy (unit spacing) */
} sarbp_image;

/* Zeroed image for grid g. Caller frees with sarbp_image_free. */
sarbp_status sarbp_image_alloc(const sarbp_grid *g, sarbp_image **out);
void sarbp_image_free(sarbp_image *img); /* NULL is a no-op */

/* Sets (or replaces) a string attribute; values longer than the slot are
 * truncated. SARBP_ERR_INVALID when the table is full. */
sarbp_status sarbp_image_set_attr(sarbp_image *img, const char *key, const char *value);
const char *sarbp_image_get_attr(const sarbp_image *img, const char *key); /* NULL if absent */

typedef enum {
    SARBP_IMG_UNKNOWN = 0, SARBP_IMG_H5, SARBP_IMG_NPY, SARBP_IMG_PNG,
    SARBP_IMG_SICD,    /* .nitf, .ntf, .sicd: SICD 1.3.0 in NITF 2.1 (sicd_write.c) */
    SARBP_IMG_GEOTIFF, /* .tif, .tiff: georeferenced 8-bit dB quick look (geotiff_write.c) */
    SARBP_IMG_KMZ      /* .kmz: KML ground overlay of the dB PNG (kmz_write.c) */
} sarbp_image_format;

/* Format from the file name's extension (.h5/.hdf5, .npy, .png, .nitf/.ntf/
 * .sicd, .tif/.tiff, .kmz), case-insensitive. */
sarbp_image_format sarbp_image_format_from_name(const char *path);
/* The formats' main name endings for messages, ".h5, .npy, ... or .kmz",
 * into buf (n bytes, NUL-terminated, truncated to fit). */
void sarbp_image_format_list(char *buf, size_t n);
/* Whether a format places the image on the Earth (SICD, GeoTIFF, KMZ): it
 * needs the image's scene_ref attribute (sarbp/geo.h). */
int sarbp_image_format_is_geo(sarbp_image_format f);

struct sarbp_phd_s;
/* What geolocated outputs need beyond the image and its attributes (the
 * scene reference, collection names and windows are attributes). */
typedef struct {
    const struct sarbp_phd_s *meta; /* metadata of the pulses formed (scene frame), or NULL */
    const double *times;            /* [meta->npulses] s after the image's collect_start,
                                     * or NULL when unknown */
    int tiff_complex;               /* GeoTIFF: complex float32 pixels (CFloat32) instead
                                     * of the 8-bit dB magnitude */
} sarbp_image_context;

/* Writes img in the format chosen by the extension. db_range > 0 (PNG only).
 * SARBP_ERR_INVALID, before any file is created, when a pixel is NaN or Inf
 * (the detail counts them) or the format is unknown; SARBP_ERR_IO naming
 * path when its directory is missing or not writable. */
sarbp_status sarbp_image_write(const char *path, const sarbp_image *img, double db_range);
/* Writes img to each of paths[0..n) (format from each name), all or nothing:
 * every file is written to its temporary first, and the temporaries are
 * renamed only when all are complete. On failure no output changes. */
sarbp_status sarbp_image_write_all(const char *const *paths, size_t n, const sarbp_image *img,
                                   double db_range);
/* The same with the context geolocated outputs need (NULL: none; then a
 * SICD cannot be written, GeoTIFF and KMZ can). Every output's needs are
 * checked before any file is created: a geolocated output of an image
 * without a scene reference, or a SICD without pulse times, is
 * SARBP_ERR_INVALID naming the output and saying what to give. */
sarbp_status sarbp_image_write_all_ctx(const char *const *paths, size_t n, const sarbp_image *img,
                                       double db_range, const sarbp_image_context *ctx);
sarbp_status sarbp_image_write_h5(const char *path, const sarbp_image *img);
sarbp_status sarbp_image_write_npy(const char *path, const sarbp_image *img);
sarbp_status sarbp_image_write_png(const char *path, const sarbp_image *img, double db_range);

/* Reads a complex image written as .h5 (grid restored) or .npy (complex64 or
 * complex128, 2-D; grid with unit spacing, has_grid_coords = 0). */
sarbp_status sarbp_image_read(const char *path, sarbp_image **out);

#ifdef __cplusplus
}
#endif
#endif
