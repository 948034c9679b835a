/* test_exact_gotcha.c - issue 11 on the real Gotcha files (all pulses of
 * SARBP_GOTCHA_DIR, 469 in the four shared files): against the exact image
 * (128 x 128 at 0.2 m) the default CPU path (FP32, cubic, 4x), the FP64 path (cubic 8x)
 * and linear interpolation keep their SER; bars are the measured figure less
 * a stated headroom, never below the floors (70 dB default, 43 dB
 * linear). A unit target simulated on Gotcha's own geometry and frequencies
 * (its positions, r0, f0 and df, pulse by pulse) peaks within 0.1% of P on
 * the default path, where sarbp lost 1.4% before issue 11.
 * Without the Gotcha files the program exits 77, which CTest reports as
 * skipped: it never passes without having run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

#define FLOOR_DEFAULT_DB 70.0
#define FLOOR_LINEAR_DB 43.0
/* Measured on this machine class (2-core AVX-512, FFTW 3; the quadratic's
 * on a 2-core AVX2 one, 2026-11-26); the bars leave this much for other
 * CPUs and FFTW builds. */
#define HEADROOM_DB 3.0

static sarbp_phd *gotcha;

static sarbp_image *form_up(const sarbp_phd *p, const sarbp_grid *g, sarbp_precision prec,
                            sarbp_interp interp, int upsample)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    rc.interp = interp;
    rc.upsample = upsample;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = prec;
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, p, g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL));
    return img;
}

/* at 8x: the accurate cubic and --fast's linear */
static sarbp_image *form_with(const sarbp_phd *p, const sarbp_grid *g, sarbp_precision prec,
                              sarbp_interp interp)
{
    return form_up(p, g, prec, interp, 8);
}

static void check_ser(const char *label, const sarbp_image *t, const sarbp_image *exact,
                      double measured_db, double floor_db)
{
    const double ser = tu_ser_c32(t->data, exact->data, exact->grid.nx * exact->grid.ny);
    const double bar = fmax(measured_db - HEADROOM_DB, floor_db);
    print_message("  %-28s SER %6.2f dB; bar %5.1f dB = max(measured %.1f - headroom %.1f, "
                  "floor %.0f); margin %+.2f dB\n", label, ser, bar, measured_db, HEADROOM_DB,
                  floor_db, ser - bar);
    assert_true(ser >= bar);
}

static void test_gotcha_vs_exact(void **state)
{
    (void)state;
    const sarbp_grid g = {128, 128, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    const sarbp_phd *p = gotcha;
    print_message("Gotcha: %zu pulses x %zu samples, 128 x 128 at 0.2 m\n", p->npulses,
                  p->nsamples);
    assert_int_equal(p->npulses, 469);
    double t0 = sarbp_now_s();
    sarbp_image *exact = form_with(p, &g, SARBP_EXACT, SARBP_INTERP_CUBIC);
    const double t_exact = sarbp_now_s() - t0;
    sarbp_image *dflt = form_up(p, &g, SARBP_FP32, SARBP_INTERP_QUADRATIC, 8);
    sarbp_image *fp64 = form_with(p, &g, SARBP_FP64, SARBP_INTERP_CUBIC);
    sarbp_image *lin = form_with(p, &g, SARBP_FP32, SARBP_INTERP_LINEAR);
    sarbp_image *cub = form_up(p, &g, SARBP_FP32, SARBP_INTERP_CUBIC, 4);
    check_ser("default (cpu fp32 quadratic 8x)", dflt, exact, 76.44, FLOOR_DEFAULT_DB);
    check_ser("cpu fp32 cubic 4x", cub, exact, 76.88, FLOOR_DEFAULT_DB);
    check_ser("cpu fp64 cubic 8x", fp64, exact, 101.50, FLOOR_DEFAULT_DB);
    check_ser("cpu fp32 linear 8x (--fast)", lin, exact, 50.72, FLOOR_LINEAR_DB);
    /* linear would trip the default path's floor */
    assert_true(tu_ser_c32(lin->data, exact->data, g.nx * g.ny) < FLOOR_DEFAULT_DB);
    print_message("  times: exact %.1f s, four paths %.1f s\n", t_exact,
                  sarbp_now_s() - t0 - t_exact);
    sarbp_image_free(cub);
    sarbp_image_free(exact);
    sarbp_image_free(dflt);
    sarbp_image_free(fp64);
    sarbp_image_free(lin);
}

/* Gotcha's metadata with the samples of a unit target at q:
 * exp(-j 4 pi f_ik dR_i(q) / c), dR_i(q) = |a_i - q| - r0_i. */
static sarbp_phd *unit_target_on_gotcha(double qx, double qy)
{
    sarbp_phd *p;
    tu_ok(sarbp_phd_slice(gotcha, 0, gotcha->npulses, &p));
    const size_t K = p->nsamples;
    for (size_t i = 0; i < p->npulses; i++) {
        const double *a = p->pos + 3 * i;
        const double dR = sqrt((a[0] - qx) * (a[0] - qx) + (a[1] - qy) * (a[1] - qy) +
                               a[2] * a[2]) - p->r0[i];
        for (size_t k = 0; k < K; k++) {
            double cyc = -2.0 * (p->f0[i] + (double)k * p->df[i]) * dR / SARBP_C;
            cyc -= floor(cyc);
            p->data[i * K + k].re = (float)cos(2 * M_PI * cyc);
            p->data[i * K + k].im = (float)sin(2 * M_PI * cyc);
        }
    }
    return p;
}

static void test_gotcha_unit_target_peak(void **state)
{
    (void)state;
    const double bar = 1e-3;
    const double qs[2][2] = {{0, 0}, {3.37, -2.19}};
    for (int j = 0; j < 2; j++) {
        sarbp_phd *p = unit_target_on_gotcha(qs[j][0], qs[j][1]);
        const double P = (double)p->npulses;
        const sarbp_grid g = {33, 33, 0.2, 0.2, qs[j][0], qs[j][1], 0, 0, 0, NULL, 0};
        const size_t at = 16 * 33 + 16;
        sarbp_image *ex = form_with(p, &g, SARBP_EXACT, SARBP_INTERP_CUBIC);
        sarbp_image *df = form_up(p, &g, SARBP_FP32, SARBP_INTERP_QUADRATIC, 8);
        double peak;
        assert_int_equal(tu_peak_index(df, &peak), at);
        const double e = hypot(ex->data[at].re, ex->data[at].im) / P - 1;
        const double d = hypot(df->data[at].re, df->data[at].im) / P - 1;
        print_message("unit target at (%.2f, %.2f) on Gotcha's geometry: exact |I| / P - 1 = "
                      "%+.1e, default %+.2e (bar %.0e: %.1f%% used)\n", qs[j][0], qs[j][1], e, d,
                      bar, 100 * fabs(d) / bar);
        assert_true(fabs(e) < 1e-6);
        assert_true(fabs(d) < bar);
        sarbp_image_free(ex);
        sarbp_image_free(df);
        sarbp_phd_free(p);
    }
}

int main(void)
{
    if (!tu_have_gotcha()) {
        fprintf(stderr, "test_exact_gotcha: no Gotcha files in '%s': skipped (exit 77)\n",
                tu_gotcha_dir());
        return 77;
    }
    const char *in[1] = {tu_gotcha_dir()};
    if (sarbp_phd_load(in, 1, &gotcha) != SARBP_OK) {
        fprintf(stderr, "test_exact_gotcha: cannot load '%s': %s\n", in[0], sarbp_error_detail());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gotcha_vs_exact),
        cmocka_unit_test(test_gotcha_unit_target_peak),
    };
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sarbp_phd_free(gotcha);
    return rc;
}
