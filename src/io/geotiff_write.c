/* geotiff_write.c - GeoTIFF quick looks: the dB magnitude, georeferenced.
 *
 * An 8-bit grayscale TIFF of the image's magnitude in dB (as the .png
 * writer makes it, north of the scene frame up), or with complex_pixels the
 * complex image itself (CFloat32: SAMPLEFORMAT_COMPLEXIEEEFP, 64 bits a
 * pixel, the same north-up rows), with ground control points
 * (ModelTiepointTag, one per outer image corner and one at the centre) in
 * WGS-84 geographic coordinates (EPSG 4326, raster pixel-is-area): exact at
 * those points for a grid turned by any heading, never a resampled raster.
 * Written with libtiff and libgeotiff; without them (SARBP_HAVE_GEOTIFF
 * off) a .tif output is refused saying so. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/geo_write.h"
#include "sarbp/geo.h"

#ifndef SARBP_HAVE_GEOTIFF

sarbp_status geotiff_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx)
{
    (void)img;
    (void)ctx;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': this sarbp was built without "
                       "libtiff and libgeotiff (scripts/install-deps.sh installs them)", path);
}

sarbp_status geotiff_to(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                        double db_range, const sarbp_image_context *ctx)
{
    (void)t;
    (void)db_range;
    return geotiff_check(path, img, ctx);
}

#else

#include <geotiff/geotiffio.h>
#include <geotiff/geovalues.h>
#include <geotiff/xtiffio.h>
#include <tiffio.h>

sarbp_status geotiff_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx)
{
    const int complex_pixels = ctx && ctx->tiff_complex;
    sarbp_scene_ref r;
    SARBP_TRY(sarbp_image_scene_ref(img, path, &r));
    /* classic TIFF offsets are 32-bit: keep the raw pixels under 4 GB */
    if (img->grid.nx > 0x7fffffff || img->grid.ny > 0x7fffffff ||
        (double)img->grid.nx * (double)img->grid.ny * (complex_pixels ? 8 : 1) > 4e9)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': %zu x %zu pixels need "
                           "BigTIFF, which sarbp does not write", path, img->grid.nx,
                           img->grid.ny);
    return SARBP_OK;
}

static void silent(const char *module, const char *fmt, va_list ap)
{
    (void)module;
    (void)fmt;
    (void)ap; /* the library never prints */
}

sarbp_status geotiff_to(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                        double db_range, const sarbp_image_context *ctx)
{
    (void)db_range; /* the dB display is ctx->display, chosen once for every output */
    const int complex_pixels = ctx && ctx->tiff_complex;
    SARBP_TRY(geotiff_check(path, img, ctx));
    sarbp_scene_ref r;
    SARBP_TRY(sarbp_image_scene_ref(img, path, &r));
    const sarbp_grid *g = &img->grid;
    const size_t nx = g->nx, ny = g->ny;
    unsigned char *pix = NULL;
    if (!complex_pixels) {
        sarbp_status st = image_db8(img, ctx->display, &pix);
        if (st) return sarbp_error(st, "cannot write '%s': %s", path, sarbp_error_detail());
    }
    /* tie points: raster (column, row) at pixel corners -> (lon, lat, 0);
     * raster row 0 is the north edge (y = yc + ny dy / 2) */
    double tp[5 * 6];
    const double rc[5][2] = {{0, 0}, {(double)nx, 0}, {(double)nx, (double)ny}, {0, (double)ny},
                             {0.5 * (double)nx, 0.5 * (double)ny}};
    for (int i = 0; i < 5; i++) {
        const double p[3] = {g->xc + (rc[i][0] - 0.5 * (double)nx) * g->dx,
                             g->yc + (0.5 * (double)ny - rc[i][1]) * g->dy, g->zc};
        double lat, lon, h;
        sarbp_scene_to_geodetic(&r, p, &lat, &lon, &h);
        const double v[6] = {rc[i][0], rc[i][1], 0, lon, lat, 0};
        memcpy(tp + 6 * i, v, sizeof v);
    }
    TIFFSetErrorHandler(silent);
    TIFFSetWarningHandler(silent);
    int fd = dup(sarbp_tempfile_fd(t));
    TIFF *tif = fd >= 0 ? XTIFFFdOpen(fd, path, "w") : NULL;
    if (!tif) {
        int e = errno;
        if (fd >= 0) close(fd);
        free(pix);
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path,
                           e ? strerror(e) : "libtiff cannot open it");
    }
    int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)nx) &&
             TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)ny) &&
             TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, complex_pixels ? 64 : 8) &&
             TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
                          complex_pixels ? SAMPLEFORMAT_COMPLEXIEEEFP : SAMPLEFORMAT_UINT) &&
             TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1) &&
             TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK) &&
             TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_DEFLATE) &&
             TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0)) &&
             TIFFSetField(tif, TIFFTAG_SOFTWARE, "sarbp " SARBP_VERSION_STRING) &&
             TIFFSetField(tif, TIFFTAG_GEOTIEPOINTS, 5 * 6, tp);
    GTIF *gt = ok ? GTIFNew(tif) : NULL;
    if (gt) {
        ok = GTIFKeySet(gt, GTModelTypeGeoKey, TYPE_SHORT, 1, ModelTypeGeographic) &&
             GTIFKeySet(gt, GTRasterTypeGeoKey, TYPE_SHORT, 1, RasterPixelIsArea) &&
             GTIFKeySet(gt, GeographicTypeGeoKey, TYPE_SHORT, 1, GCS_WGS_84) &&
             GTIFKeySet(gt, GeogAngularUnitsGeoKey, TYPE_SHORT, 1, Angular_Degree) &&
             GTIFWriteKeys(gt);
        GTIFFree(gt);
    } else {
        ok = 0;
    }
    for (size_t row = 0; ok && row < ny; row++) {
        /* row 0 is the north edge: image row iy = ny - 1 */
        void *src = complex_pixels ? (void *)(img->data + (ny - 1 - row) * nx)
                                   : (void *)(pix + row * nx);
        ok = TIFFWriteScanline(tif, src, (uint32_t)row, 0) == 1;
    }
    if (ok) ok = TIFFWriteDirectory(tif) == 1;
    XTIFFClose(tif); /* closes fd */
    free(pix);
    return ok ? SARBP_OK : sarbp_error(SARBP_ERR_IO, "cannot write '%s': libtiff failed", path);
}

#endif /* SARBP_HAVE_GEOTIFF */
