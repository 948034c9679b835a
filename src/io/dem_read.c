/* dem_read.c - heights of the image grid from a GeoTIFF DEM (sarbp/terrain.h).
 *
 * Reads one band of a WGS-84 geographic GeoTIFF (EPSG:4326) with libtiff
 * and libgeotiff: only the rows that the grid's pixels reach, after the
 * declared size, the CRS and the georeferencing are checked. Each pixel's
 * latitude and longitude come from the scene reference; the DEM is
 * interpolated bilinearly between sample centres there and the pixel's z is
 * the point of the scene frame's vertical through (x, y) whose ellipsoidal
 * height is the DEM's (fixed-point steps, converged to a micrometre).
 * Striped files only (gdal_translate writes them by default); no resampling
 * beyond the bilinear read. Without libtiff and libgeotiff every DEM is
 * refused saying so. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/input_file.h"
#include "sarbp/terrain.h"

#ifndef SARBP_HAVE_GEOTIFF

sarbp_status sarbp_dem_heights(const char *path, const sarbp_grid *g, const sarbp_scene_ref *ref,
                               double geoid_offset, double **out)
{
    (void)g;
    (void)ref;
    (void)geoid_offset;
    *out = NULL;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot read the DEM '%s': this sarbp was built "
                       "without libtiff and libgeotiff (scripts/install-deps.sh installs them)", path);
}

#else

#include <geotiff/geotiffio.h>
#include <geotiff/geovalues.h>
#include <geotiff/xtiffio.h>
#include <tiffio.h>

#include <pthread.h>

static void silent(const char *module, const char *fmt, va_list ap)
{
    (void)module;
    (void)fmt;
    (void)ap; /* the library never prints */
}

/* libtiff does not know GDAL's no-data tag: it is registered (as GDAL
 * does) by a tag extender chained to any other (libgeotiff's), once. */
static TIFFExtendProc parent_extender;
static pthread_once_t extender_once = PTHREAD_ONCE_INIT;

static void nodata_extender(TIFF *tif)
{
    static const TIFFFieldInfo info[] = {
        {TIFFTAG_GDAL_NODATA, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, "GDALNoDataValue"}};
    if (!TIFFFindField(tif, TIFFTAG_GDAL_NODATA, TIFF_ANY)) TIFFMergeFieldInfo(tif, info, 1);
    if (parent_extender) parent_extender(tif);
}

static void install_extender(void)
{
    parent_extender = TIFFSetTagExtender(nodata_extender);
}

/* The DEM: sample (col, row) at lon0 + col dlon, lat0 + row dlat (sample
 * centres); rows r0 .. r0 + nr - 1 and columns c0 .. c0 + nc - 1 loaded. */
struct dem {
    const char *path;
    uint32_t w, h;
    double lon0, dlon, lat0, dlat;
    int has_nodata;
    double nodata;
    size_t r0, nr, c0, nc;
    double *v; /* [nr][nc] */
};

/* The sample position (fractional column, row) of (lat, lon). */
static void dem_pos(const struct dem *d, double lat, double lon, double *col, double *row)
{
    *col = (lon - d->lon0) / d->dlon;
    *row = (lat - d->lat0) / d->dlat;
}

/* The DEM at (lat, lon), bilinear; the error says which pixel asked. */
static sarbp_status dem_at(const struct dem *d, double lat, double lon, size_t ix, size_t iy, double *h)
{
    double cf, rf;
    dem_pos(d, lat, lon, &cf, &rf);
    const double tol = 1e-9;
    if (!(cf >= -tol && rf >= -tol && cf <= (double)(d->w - 1) + tol && rf <= (double)(d->h - 1) + tol)) {
        const double la = d->lat0 + (double)(d->h - 1) * d->dlat, lo = d->lon0 + (double)(d->w - 1) * d->dlon;
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' does not cover the grid: pixel (%zu, %zu) "
                           "at %.6f N, %.6f E lies outside its samples (%.6f to %.6f N, %.6f to %.6f "
                           "E)", d->path, ix, iy, lat, lon, fmin(d->lat0, la), fmax(d->lat0, la),
                           fmin(d->lon0, lo), fmax(d->lon0, lo));
    }
    cf = cf < 0 ? 0 : cf;
    rf = rf < 0 ? 0 : rf;
    size_t c = (size_t)cf, r = (size_t)rf;
    if (c + 1 >= d->w) c = d->w >= 2 ? d->w - 2 : 0;
    if (r + 1 >= d->h) r = d->h >= 2 ? d->h - 2 : 0;
    if (r < d->r0 || c < d->c0 || r + 1 >= d->r0 + d->nr || c + 1 >= d->c0 + d->nc)
        return sarbp_error(SARBP_ERR_INTERNAL, "the DEM '%s': pixel (%zu, %zu) reads outside the rows "
                           "loaded", d->path, ix, iy);
    const double tc = cf - (double)c, tr = rf - (double)r;
    const double *p = d->v + (r - d->r0) * d->nc + (c - d->c0);
    const double s[4] = {p[0], p[1], p[d->nc], p[d->nc + 1]};
    for (int k = 0; k < 4; k++)
        if (isnan(s[k]) || (d->has_nodata && s[k] == d->nodata))
            return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' holds %s where pixel (%zu, %zu) reads "
                               "it (%.6f N, %.6f E)", d->path,
                               isnan(s[k]) ? "NaN" : "its no-data value", ix, iy, lat, lon);
    *h = (1 - tr) * ((1 - tc) * s[0] + tc * s[1]) + tr * ((1 - tc) * s[2] + tc * s[3]);
    return SARBP_OK;
}

/* Size, sample type, CRS and georeferencing of the open DEM. */
static sarbp_status dem_header(TIFF *tif, struct dem *d, uint16_t *bps, uint16_t *fmt)
{
    const char *path = d->path;
    uint32_t w = 0, h = 0;
    uint16_t spp = 1;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h) ||
        w < 1 || h < 1)
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' declares no image size", path);
    if ((size_t)w * (size_t)h > SARBP_DEM_MAX_SAMPLES)
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' declares %u x %u samples: absurdly large "
                           "(at most %zu; cut it to the scene, e.g. gdal_translate -projwin)", path,
                           w, h, SARBP_DEM_MAX_SAMPLES);
    if (w < 2 || h < 2)
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' has %u x %u samples: at least 2 x 2 are "
                           "needed to interpolate", path, w, h);
    d->w = w;
    d->h = h;
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, fmt);
    const int ok = spp == 1 && ((*bps == 16 && (*fmt == SAMPLEFORMAT_INT || *fmt == SAMPLEFORMAT_UINT)) ||
                                (*bps == 32 && (*fmt == SAMPLEFORMAT_INT || *fmt == SAMPLEFORMAT_IEEEFP)) ||
                                (*bps == 64 && *fmt == SAMPLEFORMAT_IEEEFP));
    if (!ok)
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' has %u samples a pixel of %u bits (format "
                           "%u); sarbp reads one band of int16, uint16, int32, float32 or float64",
                           path, spp, *bps, *fmt);
    if (TIFFIsTiled(tif))
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "the DEM '%s' is tiled; sarbp reads striped "
                           "GeoTIFFs (gdal_translate -co TILED=NO)", path);

    /* the CRS: WGS-84 geographic only */
    GTIF *gt = GTIFNew(tif);
    if (!gt) return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' is not a GeoTIFF", path);
    unsigned short model = 0, gcs = 0, raster = RasterPixelIsArea, pcs = 0;
    const int has_model = GTIFKeyGet(gt, GTModelTypeGeoKey, &model, 0, 1) == 1;
    const int has_gcs = GTIFKeyGet(gt, GeographicTypeGeoKey, &gcs, 0, 1) == 1;
    GTIFKeyGet(gt, GTRasterTypeGeoKey, &raster, 0, 1);
    GTIFKeyGet(gt, ProjectedCSTypeGeoKey, &pcs, 0, 1);
    GTIFFree(gt);
    if (!has_model || model != ModelTypeGeographic || !has_gcs || gcs != GCS_WGS_84) {
        char crs[64] = "none";
        if (has_model && model == ModelTypeProjected) snprintf(crs, sizeof crs, "projected (EPSG:%u)", pcs);
        else if (has_gcs) snprintf(crs, sizeof crs, "geographic EPSG:%u", gcs);
        else if (has_model) snprintf(crs, sizeof crs, "model type %u", model);
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' has the wrong CRS (%s): sarbp reads "
                           "WGS-84 geographic DEMs (EPSG:4326; gdalwarp -t_srs EPSG:4326)", path, crs);
    }
    const double half = raster == RasterPixelIsPoint ? 0.0 : 0.5; /* raster (0, 0) to a centre */
    uint16_t n = 0;
    double *scale = NULL, *tie = NULL, *m = NULL;
    if (TIFFGetField(tif, TIFFTAG_GEOPIXELSCALE, &n, &scale) && n >= 2 &&
        TIFFGetField(tif, TIFFTAG_GEOTIEPOINTS, &n, &tie) && n >= 6) {
        d->dlon = scale[0];
        d->dlat = -scale[1];
        d->lon0 = tie[3] + (half - tie[0]) * scale[0];
        d->lat0 = tie[4] - (half - tie[1]) * scale[1];
    } else if (TIFFGetField(tif, TIFFTAG_GEOTRANSMATRIX, &n, &m) && n >= 16) {
        if (m[1] != 0 || m[4] != 0)
            return sarbp_error(SARBP_ERR_UNSUPPORTED, "the DEM '%s' is rotated; sarbp reads "
                               "north-up DEMs (gdalwarp makes one)", path);
        d->dlon = m[0];
        d->dlat = m[5];
        d->lon0 = m[3] + half * m[0];
        d->lat0 = m[7] + half * m[5];
    } else {
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' is not georeferenced (no pixel scale and "
                           "tie point, no transformation)", path);
    }
    if (!isfinite(d->dlon) || !isfinite(d->dlat) || !isfinite(d->lon0) || !isfinite(d->lat0) ||
        d->dlon == 0 || d->dlat == 0 || fabs(d->lat0) > 90 || fabs(d->lon0) > 540)
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' has an unusable georeferencing", path);
    char *nd = NULL;
    if (TIFFGetField(tif, TIFFTAG_GDAL_NODATA, &nd) && nd) {
        char *e;
        d->nodata = strtod(nd, &e);
        d->has_nodata = e != nd;
    }
    return SARBP_OK;
}

/* Rows [r0, r0 + nr), columns [c0, c0 + nc) of the DEM into d->v. */
static sarbp_status dem_load(TIFF *tif, struct dem *d, uint16_t bps, uint16_t fmt)
{
    d->v = malloc(d->nr * d->nc * sizeof *d->v);
    const tmsize_t ls = TIFFScanlineSize(tif);
    if (ls < (tmsize_t)((size_t)d->w * bps / 8))
        return sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' has an unusable row size", d->path);
    unsigned char *buf = _TIFFmalloc(ls);
    if (!d->v || !buf) {
        if (buf) _TIFFfree(buf);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the DEM '%s'", d->path);
    }
    sarbp_status st = SARBP_OK;
    for (size_t r = 0; r < d->nr && !st; r++) {
        if (TIFFReadScanline(tif, buf, (uint32_t)(d->r0 + r), 0) != 1) {
            st = sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' is truncated or corrupt: cannot read "
                             "row %zu of %u", d->path, d->r0 + r, d->h);
            break;
        }
        double *o = d->v + r * d->nc;
        for (size_t c = 0; c < d->nc; c++) {
            const unsigned char *p = buf + (d->c0 + c) * (bps / 8);
            if (bps == 16 && fmt == SAMPLEFORMAT_INT) { int16_t v; memcpy(&v, p, 2); o[c] = v; }
            else if (bps == 16) { uint16_t v; memcpy(&v, p, 2); o[c] = v; }
            else if (bps == 32 && fmt == SAMPLEFORMAT_INT) { int32_t v; memcpy(&v, p, 4); o[c] = v; }
            else if (bps == 32) { float v; memcpy(&v, p, 4); o[c] = v; }
            else { double v; memcpy(&v, p, 8); o[c] = v; }
        }
    }
    _TIFFfree(buf);
    return st;
}

sarbp_status sarbp_dem_heights(const char *path, const sarbp_grid *g, const sarbp_scene_ref *ref,
                               double geoid_offset, double **out)
{
    *out = NULL;
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->ny_full || g->row0)
        return sarbp_error(SARBP_ERR_INVALID, "heights are read for a whole grid, not a band");
    if (!isfinite(geoid_offset) || fabs(geoid_offset) > 1000)
        return sarbp_error(SARBP_ERR_INVALID, "geoid offset %g m is not within +-1000 m", geoid_offset);
    SARBP_TRY(input_check(path));
    TIFFSetErrorHandler(silent);
    TIFFSetWarningHandler(silent);
    pthread_once(&extender_once, install_extender);
    TIFF *tif = XTIFFOpen(path, "r");
    if (!tif)
        return sarbp_error(SARBP_ERR_FORMAT, "cannot read the DEM '%s': not a TIFF file, or truncated",
                           path);
    struct dem d = {.path = path};
    uint16_t bps = 0, fmt = SAMPLEFORMAT_UINT;
    double *h = NULL;
    sarbp_status st = dem_header(tif, &d, &bps, &fmt);
    /* the rows and columns the grid reaches, at its reference height, and
     * a margin for the heights' lean from the frame's vertical */
    double cmin = INFINITY, cmax = -INFINITY, rmin = INFINITY, rmax = -INFINITY;
    for (size_t iy = 0; !st && iy < g->ny; iy++)
        for (size_t ix = 0; ix < g->nx; ix++) {
            const double p[3] = {sarbp_grid_x(g, ix), sarbp_grid_y(g, iy), g->zc};
            double lat, lon, hh, cf, rf;
            sarbp_scene_to_geodetic(ref, p, &lat, &lon, &hh);
            dem_pos(&d, lat, lon, &cf, &rf);
            cmin = fmin(cmin, cf);
            cmax = fmax(cmax, cf);
            rmin = fmin(rmin, rf);
            rmax = fmax(rmax, rf);
        }
    if (!st) {
        const double lo_c = fmax(0, floor(cmin) - 4), hi_c = fmin((double)d.w - 1, ceil(cmax) + 4);
        const double lo_r = fmax(0, floor(rmin) - 4), hi_r = fmin((double)d.h - 1, ceil(rmax) + 4);
        if (!(lo_c <= hi_c && lo_r <= hi_r)) { /* wholly outside: say so for the first pixel */
            d.r0 = d.c0 = 0;
            d.nr = d.nc = 0;
            const double p[3] = {sarbp_grid_x(g, 0), sarbp_grid_y(g, 0), g->zc};
            double lat, lon, hh, v;
            sarbp_scene_to_geodetic(ref, p, &lat, &lon, &hh);
            st = dem_at(&d, lat, lon, 0, 0, &v);
            if (!st) st = sarbp_error(SARBP_ERR_INTERNAL, "the DEM '%s': no rows reached", path);
        } else {
            d.c0 = (size_t)lo_c;
            d.nc = (size_t)hi_c - d.c0 + 1;
            d.r0 = (size_t)lo_r;
            d.nr = (size_t)hi_r - d.r0 + 1;
            st = dem_load(tif, &d, bps, fmt);
        }
    }
    XTIFFClose(tif);
    if (!st && !(h = malloc(g->nx * g->ny * sizeof *h)))
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu heights", g->nx, g->ny);
    for (size_t iy = 0; !st && iy < g->ny; iy++)
        for (size_t ix = 0; !st && ix < g->nx; ix++) {
            /* z on the frame's vertical where the geodetic height is the DEM's */
            double p[3] = {sarbp_grid_x(g, ix), sarbp_grid_y(g, iy), g->zc};
            for (int it = 0; it < 8 && !st; it++) {
                double lat, lon, hh, hd = 0;
                sarbp_scene_to_geodetic(ref, p, &lat, &lon, &hh);
                st = dem_at(&d, lat, lon, ix, iy, &hd);
                if (st) break;
                hd += geoid_offset;
                if (!(fabs(hd - ref->height_m) <= SARBP_HEIGHT_LIMIT)) {
                    st = sarbp_error(SARBP_ERR_FORMAT, "the DEM '%s' gives a height of %g m at "
                                     "pixel (%zu, %zu): more than 12 km from the scene reference's",
                                     path, hd, ix, iy);
                    break;
                }
                const double step = hd - hh;
                p[2] += step;
                if (fabs(step) < 1e-6) break;
            }
            h[iy * g->nx + ix] = p[2];
        }
    free(d.v);
    if (!st) st = sarbp_heights_check(h, g->nx, g->ny, path);
    if (st) {
        free(h);
        return st;
    }
    *out = h;
    return SARBP_OK;
}

#endif /* SARBP_HAVE_GEOTIFF */
