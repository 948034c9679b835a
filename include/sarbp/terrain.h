/* sarbp/terrain.h - heights per pixel: forming the image on the real ground.
 *
 * A grid with heights (sarbp/grid.h: height, height_stride) places pixel
 * (ix, iy) at (x, y, z) with x, y the grid's and z = height[iy][ix],
 * absolute in the scene frame (metres, z up). The heights come from a file
 * on the image grid (an array [ny][nx], sarbp_heights_read), from a DEM in
 * WGS-84 geographic coordinates sampled at each pixel (sarbp_dem_heights),
 * or from a formula (sarbp_hill_z for tests and demos). docs/terrain.md has
 * the conventions and what each back end does with them.
 *
 * Every height array handed out is malloc'd [ny][nx] (row = y, row 0 the
 * smallest y, as the image), checked (finite, within SARBP_HEIGHT_LIMIT of
 * the scene reference); the caller frees it, and keeps it alive while a
 * grid points to it. All functions are reentrant. */
#ifndef SARBP_TERRAIN_H
#define SARBP_TERRAIN_H

#include <math.h>
#include <stddef.h>

#include "sarbp/geo.h"
#include "sarbp/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* |z| (m) a height may reach: from below the Dead Sea shore to above
 * Everest, with margin for the frame's curvature over a scene. */
#define SARBP_HEIGHT_LIMIT 12000.0
/* A DEM of more samples than this is refused as absurd (1 Gsample: a
 * 1-arc-second DEM of 8 x 8 degrees) before anything is allocated. */
#define SARBP_DEM_MAX_SAMPLES ((size_t)1 << 30)

/* Checks n heights: finite, |h| <= SARBP_HEIGHT_LIMIT. SARBP_ERR_FORMAT
 * naming what (the file) and the first bad pixel (ix, iy of a row of nx)
 * otherwise. */
sarbp_status sarbp_heights_check(const double *h, size_t nx, size_t ny, const char *what);

/* Reads the heights of the whole grid g (not a band) from spec:
 *   FILE.npy            float32 or float64 ('<f4', '<f8', '>f4', '>f8'),
 *                       shape (ny, nx), C order;
 *   FILE.h5:/PATH       (also .hdf5) an HDF5 dataset of float32 or float64,
 *                       dims [ny][nx];
 *   FILE.h5             the dataset /heights.
 * Metres, absolute z in the scene frame. The shape and the file's length
 * are checked against g before anything is allocated; then the values
 * (sarbp_heights_check). *out malloc'd [ny][nx]; SARBP_ERR_FORMAT,
 * SARBP_ERR_IO naming the file otherwise (*out NULL). */
sarbp_status sarbp_heights_read(const char *spec, const sarbp_grid *g, double **out);

/* Heights of the whole grid g from a GeoTIFF DEM at path: one band of
 * int16, uint16, int32, float32 or float64 samples, WGS-84 geographic
 * (EPSG:4326: GTModelTypeGeoKey geographic, GeographicTypeGeoKey 4326),
 * georeferenced by ModelPixelScale + ModelTiepoint or a ModelTransformation
 * without rotation, heights above the ellipsoid in metres (geoid_offset,
 * metres, is added to every sample: a constant geoid undulation for a DEM
 * of orthometric heights). Each pixel's latitude and longitude come from the
 * scene reference ref; the DEM is sampled there bilinearly between sample
 * centres, and the pixel's z is found exactly on the scene frame's vertical
 * through (x, y) (a few fixed-point steps: sarbp_scene_to_geodetic's height
 * = the DEM's). Refused, naming path, when the DEM is not EPSG:4326, does
 * not cover the grid, holds its no-data value (GDAL_NODATA) or NaN where a
 * pixel reads it, declares more than SARBP_DEM_MAX_SAMPLES, or is
 * truncated; SARBP_ERR_UNSUPPORTED in a build without libtiff and
 * libgeotiff. *out malloc'd [ny][nx]. */
sarbp_status sarbp_dem_heights(const char *path, const sarbp_grid *g, const sarbp_scene_ref *ref,
                               double geoid_offset, double **out);

/* A Gaussian hill of height H (m) and radius R (m, its standard deviation)
 * centred at the scene origin, plus a plane of slopes (sx, sy) (m per m):
 *     z = H exp(-(x^2 + y^2) / (2 R^2)) + sx x + sy y.
 * R <= 0 means no hill. */
static inline double sarbp_hill_z(double H, double R, double sx, double sy, double x, double y)
{
    const double hill = R > 0 ? H * exp(-(x * x + y * y) / (2.0 * R * R)) : 0.0;
    return hill + sx * x + sy * y;
}

/* Fills out[ny][nx] with sarbp_hill_z at the pixels of the whole grid g. */
void sarbp_hill_heights(const sarbp_grid *g, double H, double R, double sx, double sy, double *out);

#ifdef __cplusplus
}
#endif
#endif
