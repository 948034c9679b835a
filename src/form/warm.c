/* warm.c - sarbp_form_warm (sarbp/form.h): a small form on a session's
 * devices before a caller's first. */
#include <string.h>

#include "sarbp/form.h"
#include "sarbp/session.h"
#include "sarbp/simulate.h"

sarbp_status sarbp_form_warm(sarbp_session *s, const int *devices, int n)
{
    SARBP_TRY(sarbp_session_start(s, devices, n));
    if (!s || n < 1) return SARBP_OK;
    /* 16 pulses of 64 samples of one point, onto 64 x 64 pixels a device
     * (a share of rows each: one form over them all warms them side by
     * side) */
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = 16;
    sp.nsamples = 64;
    sp.noise_db = -400;
    sarbp_phd *ph = NULL;
    SARBP_TRY(sarbp_simulate(&sp, &ph));
    sarbp_grid g;
    sarbp_status st = sarbp_grid_default(ph, &g);
    if (!st) {
        g.nx = 64;
        g.ny = 64 * (size_t)n;
    }
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    if (n == 1) {
        o.device = devices[0];
    } else {
        memcpy(o.devices, devices, (size_t)n * sizeof *devices);
        o.ndevices = n;
    }
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_image *img = NULL;
    if (!st) st = sarbp_form_phd(s, ph, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL);
    sarbp_image_free(img);
    sarbp_phd_free(ph);
    return st;
}
