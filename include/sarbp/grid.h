/* sarbp/grid.h - the image grid.
 *
 * A regular grid on the plane z = zc: nx x ny pixels, spacing dx, dy (m),
 * centred at (xc, yc). Pixel (ix, iy) sits at
 *     x = xc + (ix - (nx - 1) / 2) * dx,   y = yc + (iy - (ny - 1) / 2) * dy
 * Images are row-major, row = y, row 0 = smallest y (south).
 *
 * A band of a grid (rows [row0, row0 + ny) of a grid of ny_full rows, the
 * unit that MPI ranks share out) keeps the whole grid's centre and sets
 * row0 and ny_full: its pixels then sit at the whole grid's coordinates bit
 * for bit (a band with a shifted centre would round them differently), so a
 * band formed alone equals the same rows of the whole image. ny_full = 0
 * (what a zeroed or brace-initialised grid holds) means the grid is whole.
 *
 * Terrain (docs/terrain.md): height, when not NULL, gives every pixel its own
 * z, absolute in the scene frame (metres), instead of the plane z = zc:
 * pixel (ix, iy) of the whole grid at height[iy * height_stride + ix]
 * (height_stride 0 means nx), so a band reads row row0 + iy. The caller owns
 * the array and keeps it alive while any copy of the grid is used (plans,
 * images, their writers); copies (sarbp_grid_band, sarbp_grid_window) point
 * into it. zc is then only the scene's reference height (the GeoTIFF and
 * KMZ writers place the corners at it). The cpu back end forms on terrain;
 * cuda and FFBP refuse such a grid at plan create. */
#ifndef SARBP_GRID_H
#define SARBP_GRID_H

#include <stddef.h>
#include "sarbp/phd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t nx, ny;
    double dx, dy;
    double xc, yc, zc;
    size_t row0, ny_full; /* a band: its first row in, and the rows of, the whole grid */
    const double *height; /* NULL: flat at zc; else absolute z (m) per pixel, borrowed */
    size_t height_stride; /* elements between rows of height; 0: nx */
} sarbp_grid;

#define SARBP_GRID_MAX_PIXELS ((size_t)1 << 34) /* 16 Gpixel: larger is absurd */

static inline double sarbp_grid_x(const sarbp_grid *g, size_t ix)
{
    return g->xc + ((double)ix - 0.5 * (double)(g->nx - 1)) * g->dx;
}
static inline double sarbp_grid_y(const sarbp_grid *g, size_t iy)
{
    const size_t n = g->ny_full ? g->ny_full : g->ny;
    return g->yc + ((double)(g->row0 + iy) - 0.5 * (double)(n - 1)) * g->dy;
}

/* The z of pixel (ix, iy) of g (iy counted in g, a band's rows too). */
static inline double sarbp_grid_z(const sarbp_grid *g, size_t ix, size_t iy)
{
    if (!g->height) return g->zc;
    const size_t stride = g->height_stride ? g->height_stride : g->nx;
    return g->height[(g->row0 + iy) * stride + ix];
}

/* nx, ny >= 1, nx*ny <= SARBP_GRID_MAX_PIXELS, spacings finite and > 0,
 * centre finite; a band lies inside its whole grid (row0 = 0 when whole).
 * SARBP_ERR_INVALID with a detail otherwise. */
sarbp_status sarbp_grid_validate(const sarbp_grid *g);

/* Default grid: covers the alias-free extent (square, the smaller of the
 * range extent and 100 m... see grid.c) at half-resolution spacing, centred
 * on the origin. */
sarbp_status sarbp_grid_default(const sarbp_phd *meta, sarbp_grid *g);

/* Rows [row0, row0 + nrows) of the whole grid g as a band (see above);
 * SARBP_ERR_INVALID when they do not lie inside g or g is itself a band. */
sarbp_status sarbp_grid_band(const sarbp_grid *g, size_t row0, size_t nrows, sarbp_grid *band);

/* The window of side x side pixels of g (clipped to g) whose first pixel
 * is (x0, y0) of g, on g's own pixels: for comparing part of an image with
 * a reference formed on the window alone. */
sarbp_grid sarbp_grid_window(const sarbp_grid *g, size_t side, size_t x0, size_t y0);
/* The same window at the centre of g, its first pixel in *x0, *y0. */
sarbp_grid sarbp_grid_centre_window(const sarbp_grid *g, size_t side, size_t *x0, size_t *y0);

/* Pixel-pulse pairs of a job. */
static inline double sarbp_grid_pairs(const sarbp_grid *g, size_t npulses)
{
    return (double)g->nx * (double)g->ny * (double)npulses;
}

#ifdef __cplusplus
}
#endif
#endif
