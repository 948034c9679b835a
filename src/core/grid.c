/* grid.c - image grid validation and the default grid. */
#include "sarbp/grid.h"

#include <math.h>

sarbp_status sarbp_grid_validate(const sarbp_grid *g)
{
    if (g->nx < 1 || g->ny < 1)
        return sarbp_error(SARBP_ERR_INVALID, "grid of %zu x %zu pixels is empty", g->nx, g->ny);
    if (g->nx > SARBP_GRID_MAX_PIXELS / g->ny)
        return sarbp_error(SARBP_ERR_INVALID, "grid of %zu x %zu pixels is absurdly large",
                           g->nx, g->ny);
    if (!isfinite(g->dx) || !isfinite(g->dy) || !(g->dx > 0) || !(g->dy > 0))
        return sarbp_error(SARBP_ERR_INVALID, "grid spacing %g x %g m is not positive", g->dx,
                           g->dy);
    if (!isfinite(g->xc) || !isfinite(g->yc) || !isfinite(g->zc))
        return sarbp_error(SARBP_ERR_INVALID, "grid centre is not finite");
    if (g->ny_full ? g->row0 > g->ny_full || g->ny > g->ny_full - g->row0 : g->row0 != 0)
        return sarbp_error(SARBP_ERR_INVALID, "band of rows %zu to %zu lies outside its grid of %zu rows",
                           g->row0, g->row0 + g->ny, g->ny_full ? g->ny_full : g->ny);
    if (g->height && g->height_stride && g->height_stride < g->nx)
        return sarbp_error(SARBP_ERR_INVALID, "grid heights of %zu a row for %zu pixels a row",
                           g->height_stride, g->nx);
    if (fabs(g->xc) > 1e6 || fabs(g->yc) > 1e6 || fabs(g->zc) > 1e6)
        return sarbp_error(SARBP_ERR_INVALID, "grid centre (%g, %g, %g) is more than 1000 km from "
                           "the scene reference", g->xc, g->yc, g->zc);
    return SARBP_OK;
}

sarbp_status sarbp_grid_default(const sarbp_phd *meta, sarbp_grid *g)
{
    sarbp_phd_summary s;
    SARBP_TRY(sarbp_phd_summarize(meta, &s));
    /* Alias-free extent: in range c/(2 df); in cross range lambda / (2 dtheta)
     * with dtheta the mean angle between pulses. The scene is square. */
    double extent = s.extent_range;
    if (meta->npulses > 1 && s.aperture_deg > 0) {
        double dth = s.aperture_deg * M_PI / 180.0 / (double)(meta->npulses - 1);
        double cross = SARBP_C / s.fcenter / (2 * dth);
        if (cross < extent) extent = cross;
    }
    double res = s.range_res;
    if (isfinite(s.az_res) && s.az_res < res) res = s.az_res;
    double d = 0.5 * res;
    size_t n = (size_t)ceil(extent / d);
    if (n < 1) n = 1;
    if (n > 4096) { /* keep the default affordable; the user can ask for more */
        n = 4096;
    }
    g->nx = g->ny = n;
    g->dx = g->dy = d;
    g->xc = g->yc = g->zc = 0;
    g->row0 = g->ny_full = 0;
    g->height = NULL;
    g->height_stride = 0;
    return SARBP_OK;
}

sarbp_status sarbp_grid_band(const sarbp_grid *g, size_t row0, size_t nrows, sarbp_grid *band)
{
    if (g->ny_full) return sarbp_error(SARBP_ERR_INVALID, "a band of a band is not supported");
    if (nrows < 1 || row0 > g->ny || nrows > g->ny - row0)
        return sarbp_error(SARBP_ERR_INVALID, "band of rows %zu to %zu lies outside the grid's %zu rows",
                           row0, row0 + nrows, g->ny);
    *band = *g;
    band->row0 = row0;
    band->ny = nrows;
    band->ny_full = g->ny;
    return SARBP_OK;
}

sarbp_grid sarbp_grid_window(const sarbp_grid *g, size_t side, size_t x0, size_t y0)
{
    sarbp_grid w = *g;
    if (g->height) { /* the window's pixel (0, 0) is g's (x0, y0) */
        w.height_stride = g->height_stride ? g->height_stride : g->nx;
        w.height = g->height + y0 * w.height_stride + x0;
    }
    w.nx = g->nx < side ? g->nx : side;
    w.ny = g->ny < side ? g->ny : side;
    w.xc = sarbp_grid_x(g, x0) + 0.5 * (double)(w.nx - 1) * g->dx;
    w.yc = sarbp_grid_y(g, y0) + 0.5 * (double)(w.ny - 1) * g->dy;
    return w;
}

sarbp_grid sarbp_grid_centre_window(const sarbp_grid *g, size_t side, size_t *x0, size_t *y0)
{
    *x0 = (g->nx - (g->nx < side ? g->nx : side)) / 2;
    *y0 = (g->ny - (g->ny < side ? g->ny : side)) / 2;
    return sarbp_grid_window(g, side, *x0, *y0);
}
