/* geo_write.h - the geolocated image writers behind image_write.c (not
 * installed): SICD in NITF (sicd_write.c), GeoTIFF (geotiff_write.c) and
 * KMZ (kmz_write.c).
 *
 * Each has a check, run for every output before any file is created (so a
 * refused output leaves nothing behind and no other output is written),
 * and a writer to a temporary (tempfile.h) that image_write.c commits with
 * the others. Both take the image (its grid and its scene_ref, collection
 * and window attributes) and the context (sarbp/image.h). */
#ifndef SARBP_GEO_WRITE_H
#define SARBP_GEO_WRITE_H

#include "sarbp/image.h"
#include "io/tempfile.h"

/* The geolocated writers, rows of writers[] in image_write.c. X_check:
 * everything that can be checked before any file exists; X_to: the file,
 * written into the temporary t that becomes path. db_range is the dB
 * quick look's range (ignored by SICD), ctx may be NULL. */
sarbp_status sicd_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx);
sarbp_status sicd_to(sarbp_tempfile *t, const char *path, const sarbp_image *img, double db_range,
                     const sarbp_image_context *ctx);

/* ctx->tiff_complex: complex FP32 pixels instead of the 8-bit dB quick look */
sarbp_status geotiff_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx);
sarbp_status geotiff_to(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                        double db_range, const sarbp_image_context *ctx);

sarbp_status kmz_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx);
sarbp_status kmz_to(sarbp_tempfile *t, const char *path, const sarbp_image *img, double db_range,
                    const sarbp_image_context *ctx);

/* 8-bit dB magnitude of img, north-up rows as the PNG writer makes them
 * (row 0 = largest y): 255 (20 log10(|I| / peak) - d->floor_db) /
 * (d->top_db - d->floor_db), clipped (sarbp/image.h: sarbp_image_display;
 * the writers find d in ctx->display). *out malloc'd [ny][nx]; caller
 * frees. (image_write.c) */
sarbp_status image_db8(const sarbp_image *img, const sarbp_image_display *d, unsigned char **out);
/* A PNG of pix[h][w] (gray) into memory: *out malloc'd, *n bytes. (image_write.c) */
sarbp_status png8_to_memory(const unsigned char *pix, size_t w, size_t h, unsigned char **out,
                            size_t *n);

#endif
