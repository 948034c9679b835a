/* sarbp/output.h - checking outputs before the work that makes them.
 *
 * A run that forms for an hour and then cannot write its image has lost the
 * hour, and an output that is refused only after others were renamed into
 * place used to cost the user's earlier files. So the commands check every
 * output before they read any pulse: the path (sarbp_output_check_path) and,
 * for images, what each format needs of this grid (its size limits, the
 * scene reference of geolocated formats, the pulse times of a SICD). The
 * checks read metadata only (stat, the grid, the inputs' header); a few
 * microseconds an output. The writers check all of it again when they
 * write: a check passed here is not a promise that the file system has room
 * or that nothing changes meanwhile, and the commit (every output or none,
 * the earlier files kept until all are in place) covers what is left.
 *
 * Errors are values: SARBP_ERR_INVALID or SARBP_ERR_UNSUPPORTED for what the
 * options ask (a format's limit, a missing scene reference), SARBP_ERR_IO for
 * the file system, with a message naming the output as the caller gave it
 * (sarbp_error_detail). Thread safe: reads only. */
#ifndef SARBP_OUTPUT_H
#define SARBP_OUTPUT_H

#include <stddef.h>

#include "sarbp/geo.h"
#include "sarbp/grid.h"
#include "sarbp/image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One output path, which a writer will fill through a temporary in the same
 * folder and a rename over the path: it must be a file name (not "", "." or
 * a name ending in "/"), not a directory, its folder must exist and be
 * writable by this process, and in a folder with the sticky bit (such as
 * /tmp) an existing file of that name must be this user's (or the folder's)
 * for the rename to replace it. SARBP_ERR_INVALID for a bad name,
 * SARBP_ERR_IO otherwise ("cannot create 'PATH': REASON"). */
sarbp_status sarbp_output_check_path(const char *path);

/* What the image outputs will be written from, known before forming. */
typedef struct {
    const sarbp_grid *grid;             /* the image's grid (required) */
    const sarbp_collection *collection; /* what the inputs say (scene reference, names,
                                         * collection start), or NULL: nothing */
    const struct sarbp_phd_s *meta;     /* metadata of the pulses to be formed (scene
                                         * frame), or NULL; a SICD needs it */
    const double *times;                /* [meta->npulses] s after the collection start,
                                         * or NULL: none (or from prf) */
    double prf;                         /* > 0 and times NULL: pulse i at i / prf s */
    const char *collect_start;          /* ISO 8601 UTC, replacing the collection's; NULL:
                                         * the collection's */
    double db_range;                    /* of the 8-bit dB outputs (.png, .tif, .kmz) */
    int tiff_complex;                   /* .tif outputs hold complex float32 pixels */
} sarbp_output_image;

/* Every image output paths[0..n): each path as sarbp_output_check_path, its
 * format from its name, and what that format needs of this image (the
 * checks sarbp_image_write_all_ctx makes before any file exists, less the
 * pixels): PNG and KMZ sides of at most 1,000,000 pixels (libpng's limit),
 * a GeoTIFF under 4 GB, a scene reference for .nitf/.ntf/.sicd, .tif and
 * .kmz, pulse times and a collection start for a SICD. Reads no pulse. */
sarbp_status sarbp_output_check_images(const char *const *paths, size_t n,
                                       const sarbp_output_image *img);

#ifdef __cplusplus
}
#endif
#endif
