/* grid_request.c - the grid a form is asked for (form.h): the pulses'
 * default grid (sarbp_grid_default), changed by what the caller gave. It
 * lives beside the form plan rather than in core because a SICD output's
 * default spacing comes from io (sarbp_image_sicd_spacing). */
#include "sarbp/form.h"

#include <string.h>

#define MAX_SIDE 2147483648.0 /* pixels per side */

sarbp_status sarbp_form_grid(const sarbp_phd *meta, const sarbp_grid_request *r, sarbp_grid *g,
                             sarbp_grid_choice *c)
{
    sarbp_grid_choice none;
    if (!c) c = &none;
    memset(c, 0, sizeof *c);
    SARBP_TRY(sarbp_grid_default(meta, g));
    const double extent_x = g->dx * (double)g->nx, extent_y = g->dy * (double)g->ny;
    double spacing[2] = {r->spacing[0], r->spacing[1]};
    int have_spacing = spacing[0] > 0 || spacing[1] > 0;
    /* a SICD on the default grid: the spacing that puts sicd_osr samples on
     * each cycle of the ground-plane band (the default's half the slant
     * resolution oversamples a ground grid 1 / cos(grazing) more, beyond the
     * 1.1 to 2.2 sicdcheck accepts) over the same scene */
    if (r->sicd_osr > 0 && !have_spacing && !r->nx &&
        sarbp_image_sicd_spacing(meta, r->center[0], r->center[1], r->center[2], r->sicd_osr,
                                 spacing) == SARBP_OK) {
        have_spacing = 1;
        c->sicd_spacing = 1;
    }
    c->request_error = 1; /* from here on, what was asked is at fault */
    if (have_spacing) {
        g->dx = spacing[0];
        g->dy = spacing[1];
        if (!r->nx) {
            /* the default extent at this spacing: range-checked before the
             * conversion (a spacing of 1e-300 would overflow size_t) */
            const double fx = extent_x / g->dx + 0.5, fy = extent_y / g->dy + 0.5;
            if (!(fx < MAX_SIDE && fy < MAX_SIDE))
                return sarbp_error(SARBP_ERR_INVALID,
                                   "--spacing %g,%g m gives %.3g x %.3g pixels over the default "
                                   "%.1f x %.1f m scene: too many (give a larger spacing or --grid)",
                                   g->dx, g->dy, fx, fy, extent_x, extent_y);
            g->nx = fx >= 1 ? (size_t)fx : 1;
            g->ny = fy >= 1 ? (size_t)fy : 1;
        }
    }
    if (r->nx) {
        g->nx = r->nx;
        g->ny = r->ny;
    }
    g->xc = r->center[0];
    g->yc = r->center[1];
    g->zc = r->center[2];
    SARBP_TRY(sarbp_grid_validate(g));
    c->request_error = 0;
    return SARBP_OK;
}
