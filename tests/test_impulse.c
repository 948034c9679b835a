/* test_impulse.c - the impulse response of a simulated unit point target,
 * measured with sarbp_pointtarget_measure, against theory (PSLR -13.26 dB,
 * ISLR -9.7 dB for an unwindowed aperture) and against its own measured
 * figures:
 *  - circular Gotcha-like geometry (512 pulses over 4 degrees), no window,
 *    FP64, in both cuts (x = range for a platform at azimuth 0, y =
 *    azimuth): the distance from theory stays within its measured value
 *    plus a headroom (PSLR 0.205 / 0.351 dB, ISLR 0.439 / 0.756 dB away);
 *  - FP32 equals FP64's PSLR and ISLR (measured within 0.0002 dB);
 *  - Hamming in range and azimuth: PSLR -42.93 / -41.78 dB;
 *  - seed 004's stripmap case (linear track, chirp domain, target at
 *    (0, 4, 0)): PSLR 0.05 / 0.02 dB and ISLR 0.43 / 0.47 dB from theory,
 *    with the differences to seed 004's table 3 printed.
 * Every bar is a measured figure (this machine class, both builds) plus a
 * stated headroom, checked and printed by tu_bar_* ('BAR' lines); the
 * issue's floors (0.5 dB PSLR, 1 dB ISLR from theory; -38 dB with Hamming)
 * lie outside every bar. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define PSLR_THEORY -13.26
#define ISLR_THEORY -9.7

/* |measured - theory| per cut (x, y), and the headroom above it. */
static const double CIRC_PSLR_DEV[2] = {0.205, 0.351}, CIRC_ISLR_DEV[2] = {0.439, 0.756};
static const double STRIP_PSLR_DEV[2] = {0.05, 0.02}, STRIP_ISLR_DEV[2] = {0.43, 0.47};
#define PSLR_DEV_HEADROOM_DB 0.15
#define ISLR_DEV_HEADROOM_DB 0.2
/* |FP32 - FP64| for PSLR and ISLR: 0.0002 dB at most. */
#define FP32_DIFF_DB 0.0002
#define FP32_DIFF_HEADROOM_DB 0.01
/* Hamming in both dimensions: PSLR per cut. */
static const double HAMMING_PSLR[2] = {-42.93, -41.78};
#define HAMMING_HEADROOM_DB 1.5

static sarbp_image *form(const sarbp_phd *p, const sarbp_grid *g, sarbp_precision prec,
                         sarbp_window_kind win, double *seconds)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    rc.range_window.kind = win;
    rc.az_window.kind = win;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = prec;
    sarbp_image *img;
    sarbp_form_stats st;
    tu_ok(sarbp_form_phd(NULL, p, g, &sarbp_backend_cpu, &rc, &o, NULL, &img, &st));
    if (seconds) *seconds = st.total_s;
    return img;
}

static sarbp_pt_result *measure(const sarbp_image *img, double tx, double ty, const char *what)
{
    sarbp_pt_options opt = {1, tx, ty, 0.0};
    sarbp_pt_result *r;
    tu_ok(sarbp_pointtarget_measure(img, &opt, &r));
    print_message("%-28s peak %.4f at (%.4f, %.4f) m\n", what, r->peak, r->x, r->y);
    for (int c = 0; c < 2; c++)
        print_message("  cut %d (%s, %3.0f deg): IRW %.4f m  PSLR %7.2f dB  ISLR %7.2f dB  "
                      "nulls %.3f/%.3f m, %zu samples\n",
                      c, c == 0 ? "x, range  " : "y, azimuth", r->cut[c].angle_deg,
                      r->cut[c].irw_m, r->cut[c].pslr_db, r->cut[c].islr_db, r->cut[c].null_lo_m,
                      r->cut[c].null_hi_m, r->cut[c].n);
    return r;
}

static sarbp_phd *circular(void)
{
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = 512;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    return p;
}

/* Ground resolution 0.33 m in range, 0.22 m in azimuth. The spacing is
 * chosen for the patch's FFT interpolation, not only for resolution: a
 * backprojected image keeps the range carrier, its x spectrum centred at
 * 2 fc cos(el) / c = 45.3 cycles/m, +-1.5 wide. At 0.15 m (period 6.67/m)
 * that band aliases to [-2.9, 0.1], inside +-3.33: sampled without loss. At
 * 0.1 m it lands on the Nyquist edge and the cut is garbage (PSLR -0.7 dB),
 * although 0.1 m is finer than half the resolution. 0.15 m also puts 14
 * sidelobes on each side inside the 64-pixel patch (ISLR about -10.1 dB;
 * at 0.05 m only 5, and ISLR reads -10.9 / -11.0 dB: a truncation effect). */
static const sarbp_grid CIRC_GRID = {129, 129, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};

static void test_circular_unwindowed(void **state)
{
    (void)state;
    sarbp_phd *p = circular();
    sarbp_image *i64 = form(p, &CIRC_GRID, SARBP_FP64, SARBP_WIN_NONE, NULL);
    sarbp_image *i32 = form(p, &CIRC_GRID, SARBP_FP32, SARBP_WIN_NONE, NULL);
    sarbp_pt_result *r64 = measure(i64, 0, 0, "circular, no window, FP64");
    sarbp_pt_result *r32 = measure(i32, 0, 0, "circular, no window, FP32");
    for (int c = 0; c < 2; c++) {
        print_message("  cut %d: FP64 PSLR - theory %+.3f dB, ISLR - theory %+.3f dB; "
                      "FP32 - FP64: PSLR %+.4f dB, ISLR %+.4f dB\n",
                      c, r64->cut[c].pslr_db - PSLR_THEORY, r64->cut[c].islr_db - ISLR_THEORY,
                      r32->cut[c].pslr_db - r64->cut[c].pslr_db,
                      r32->cut[c].islr_db - r64->cut[c].islr_db);
    }
    for (int c = 0; c < 2; c++) {
        tu_bar_max(fabs(r64->cut[c].pslr_db - PSLR_THEORY), CIRC_PSLR_DEV[c], PSLR_DEV_HEADROOM_DB,
                   "dB", "cpu fp64 circular cut %d |PSLR - theory|", c);
        tu_bar_max(fabs(r64->cut[c].islr_db - ISLR_THEORY), CIRC_ISLR_DEV[c], ISLR_DEV_HEADROOM_DB,
                   "dB", "cpu fp64 circular cut %d |ISLR - theory|", c);
        tu_bar_max(fabs(r32->cut[c].pslr_db - r64->cut[c].pslr_db), FP32_DIFF_DB,
                   FP32_DIFF_HEADROOM_DB, "dB", "cpu fp32 circular cut %d |PSLR - FP64's|", c);
        tu_bar_max(fabs(r32->cut[c].islr_db - r64->cut[c].islr_db), FP32_DIFF_DB,
                   FP32_DIFF_HEADROOM_DB, "dB", "cpu fp32 circular cut %d |ISLR - FP64's|", c);
    }
    sarbp_pointtarget_free(r64);
    sarbp_pointtarget_free(r32);
    sarbp_image_free(i64);
    sarbp_image_free(i32);
    sarbp_phd_free(p);
}

static void test_circular_hamming(void **state)
{
    (void)state;
    sarbp_phd *p = circular();
    sarbp_image *img = form(p, &CIRC_GRID, SARBP_FP64, SARBP_WIN_HAMMING, NULL);
    sarbp_pt_result *r = measure(img, 0, 0, "circular, Hamming x2, FP64");
    for (int c = 0; c < 2; c++)
        tu_bar_max(r->cut[c].pslr_db, HAMMING_PSLR[c], HAMMING_HEADROOM_DB, "dB",
                   "cpu fp64 circular Hamming cut %d PSLR", c);
    sarbp_pointtarget_free(r);
    sarbp_image_free(img);
    sarbp_phd_free(p);
}

/* Seed 004's stripmap case. Resolution: range c / 2B = 0.31 m, azimuth
 * lambda / (2 * aperture angle) = 1.24 m (1024 pulses: a 296 m track at
 * 23.5 km). Spacing 0.125 m in x (range): the range carrier is exactly
 * 2 fc / c = 64 cycles/m, a multiple of 1 / 0.125 m, so the image is at
 * baseband on this grid (0.1 m and 0.15 m alias the +-1.6 cycles/m band
 * across Nyquist and break the cut); 0.5 m in y (azimuth). Both put about
 * 13 resolution cells on each side of the peak inside the 64-pixel patch. */
static void test_stripmap_seed004(void **state)
{
    (void)state;
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    sarbp_grid g = {129, 129, 0.125, 0.5, 0, 4, 0, 0, 0, NULL, 0};
    double secs = 0;
    sarbp_image *img = form(p, &g, SARBP_FP64, SARBP_WIN_NONE, &secs);
    print_message("stripmap: %zu pulses x %zu samples, grid %zu x %zu at %.3f x %.3f m, "
                  "formed in %.2f s\n",
                  p->npulses, p->nsamples, g.nx, g.ny, g.dx, g.dy, secs);
    sarbp_pt_result *r = measure(img, 0, 4, "stripmap seed 004, FP64");
    static const double seed_pslr[2] = {-13.31, -13.20}, seed_islr[2] = {-10.19, -10.20};
    for (int c = 0; c < 2; c++)
        print_message("  %s: PSLR %.2f dB (seed 004 %.2f, diff %+.2f; theory diff %+.2f), "
                      "ISLR %.2f dB (seed 004 %.2f, diff %+.2f; theory diff %+.2f)\n",
                      c == 0 ? "range  " : "azimuth", r->cut[c].pslr_db, seed_pslr[c],
                      r->cut[c].pslr_db - seed_pslr[c], r->cut[c].pslr_db - PSLR_THEORY,
                      r->cut[c].islr_db, seed_islr[c], r->cut[c].islr_db - seed_islr[c],
                      r->cut[c].islr_db - ISLR_THEORY);
    for (int c = 0; c < 2; c++) {
        tu_bar_max(fabs(r->cut[c].pslr_db - PSLR_THEORY), STRIP_PSLR_DEV[c], PSLR_DEV_HEADROOM_DB,
                   "dB", "cpu fp64 stripmap cut %d |PSLR - theory|", c);
        tu_bar_max(fabs(r->cut[c].islr_db - ISLR_THEORY), STRIP_ISLR_DEV[c], ISLR_DEV_HEADROOM_DB,
                   "dB", "cpu fp64 stripmap cut %d |ISLR - theory|", c);
    }
    sarbp_pointtarget_free(r);
    sarbp_image_free(img);
    sarbp_phd_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_circular_unwindowed),
        cmocka_unit_test(test_circular_hamming),
        cmocka_unit_test(test_stripmap_seed004),
    };
    return tu_run_tests(tests);
}
