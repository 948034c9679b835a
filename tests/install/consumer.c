/* consumer.c - a program built against an installed sarbp, the way a user
 * builds one (tests/install/test_install.sh compiles it with pkg-config and
 * with find_package(sarbp)). Public headers only.
 *
 * Simulates a point target at the origin (32 pulses, 64 frequency samples),
 * forms a 16 x 16 image on the CPU, and checks that every pixel is finite
 * and the brightest one is the target's. argv[1], when given, is the
 * version the library must report. Exit 0 when all holds, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sarbp/sarbp.h"

static int fail(const char *what, sarbp_status st)
{
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, sarbp_strerror(st), sarbp_error_detail());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], SARBP_VERSION) != 0) {
        fprintf(stderr, "consumer: sarbp/version.h says %s, expected %s\n", SARBP_VERSION, argv[1]);
        return 1;
    }
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = 32;
    sp.nsamples = 64;
    sarbp_phd *phd = NULL;
    sarbp_status st = sarbp_simulate(&sp, &phd);
    if (st) return fail("simulate", st);

    const sarbp_grid g = {16, 16, 0.25, 0.25, 0.0, 0.0, 0.0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.threads = 1;
    sarbp_image *img = NULL;
    st = sarbp_form_phd(NULL, phd, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL);
    sarbp_phd_free(phd);
    if (st) return fail("form", st);

    size_t peak = 0;
    double peak_mag = -1.0;
    int bad = 0;
    for (size_t i = 0; i < g.nx * g.ny; i++) {
        const double re = img->data[i].re, im = img->data[i].im;
        if (!isfinite(re) || !isfinite(im)) bad++;
        const double m = hypot(re, im);
        if (m > peak_mag) peak_mag = m, peak = i;
    }
    sarbp_image_free(img);
    /* The target at the origin: between the four centre pixels of an even
     * grid, so the peak is one of them (ix, iy in {7, 8}). */
    const size_t ix = peak % g.nx, iy = peak / g.nx;
    const int centred = (ix == 7 || ix == 8) && (iy == 7 || iy == 8);
    printf("consumer: sarbp %s, 16 x 16 image of 32 pulses: peak %.3g at (%zu, %zu), "
           "%d non-finite pixels\n", SARBP_VERSION, peak_mag, ix, iy, bad);
    if (bad || !(peak_mag > 0.0) || !centred) {
        fprintf(stderr, "consumer: the image is wrong\n");
        return 1;
    }
    return 0;
}
