/* test_ffbp.c - fast factorized backprojection against direct FP64
 * backprojection of the same profiles. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sarbp/ffbp.h"

static double secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static sarbp_profiles *profiles_of(const sarbp_phd *p)
{
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, SARBP_FP64, p->npulses, &plan));
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(p->npulses, sarbp_rc_plan_nbins(plan), SARBP_FP64, &pr));
    tu_ok(sarbp_rc_execute(plan, 0, p->npulses, p->data, pr));
    sarbp_rc_plan_free(plan);
    return pr;
}

static sarbp_profiles *profiles32_of(const sarbp_phd *p)
{
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, SARBP_FP32, p->npulses, &plan));
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(p->npulses, sarbp_rc_plan_nbins(plan), SARBP_FP32, &pr));
    pr->interp = sarbp_rc_plan_interp(plan);
    tu_ok(sarbp_rc_execute(plan, 0, p->npulses, p->data, pr));
    sarbp_rc_plan_free(plan);
    return pr;
}

static double ser64(const sarbp_c64 *t, const sarbp_c64 *r, size_t n)
{
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        const double dr = t[i].re - r[i].re, di = t[i].im - r[i].im;
        e += dr * dr + di * di;
        s += r[i].re * r[i].re + r[i].im * r[i].im;
    }
    return 10 * log10(s / e);
}

/* FFBP and direct FP64 BP of p on g (both added to zeroed images) */
static void form_both(const sarbp_phd *p, const sarbp_grid *g, const sarbp_ffbp_params *fp,
                      sarbp_c64 **bp, sarbp_c64 **fb, double *tbp, double *tfb, sarbp_ffbp_info *info)
{
    sarbp_profiles *pr = profiles_of(p);
    const size_t n = g->nx * g->ny;
    *bp = calloc(n, sizeof **bp);
    *fb = calloc(n, sizeof **fb);
    assert_true(*bp && *fb);
    double t0 = secs();
    tu_ok(sarbp_bp_cpu_fp64(pr, g, *bp));
    *tbp = secs() - t0;
    t0 = secs();
    tu_ok(sarbp_ffbp_cpu_fp64(pr, g, fp, *fb, info));
    *tfb = secs() - t0;
    sarbp_profiles_free(pr);
}

static sarbp_phd *scene(sarbp_geometry geom, size_t npulses, int clutter)
{
    sarbp_target *c = NULL;
    size_t nc = clutter ? 150 : 0;
    if (nc) tu_ok(sarbp_targets_clutter(nc, 40, -30, 0, 5, &c));
    sarbp_target *all = calloc(nc + 3, sizeof *all);
    assert_non_null(all);
    if (nc) memcpy(all, c, nc * sizeof *all);
    const sarbp_target bright[] = {{0, 0, 0, 10}, {12, 7, 0, 5}, {-9.3, -11.7, 0, 8}};
    memcpy(all + nc, bright, sizeof bright);
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, geom, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.targets = all;
    sp.ntargets = nc + 3;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    free(all);
    free(c);
    return p;
}

/* The exact image (no FFT, no interpolation) of p on g, FP64. */
static sarbp_c64 *exact_image(const sarbp_phd *p, const sarbp_grid *g)
{
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, SARBP_EXACT, p->npulses, &plan));
    const size_t nk = sarbp_rc_exact_size(plan), np = p->npulses;
    sarbp_c64 *Y = malloc(np * nk * sizeof *Y), *img = calloc(g->nx * g->ny, sizeof *img);
    double *fa = malloc(np * sizeof *fa), *fd = malloc(np * sizeof *fd);
    assert_true(Y && fa && fd && img);
    for (size_t i = 0; i < np; i++)
        tu_ok(sarbp_rc_exact_spectrum(plan, i, p->data + i * p->nsamples, Y + i * nk, fa + i,
                                      fd + i));
    tu_ok(sarbp_bp_exact(np, nk, Y, fa, fd, p->pos, p->r0, g, 0, img));
    free(Y);
    free(fa);
    free(fd);
    sarbp_rc_plan_free(plan);
    return img;
}

/* One scene: FFBP at the defaults against direct BP (same profiles) and
 * against the exact image; bars from the measured figures (test header). */
static void check_scene(const char *what, sarbp_geometry geom, size_t P, sarbp_grid g,
                        double meas_bp, double meas_exact)
{
    sarbp_phd *p = scene(geom, P, 1);
    sarbp_ffbp_params fp;
    sarbp_ffbp_params_default(&fp);
    sarbp_c64 *bp, *fb;
    double tbp, tfb;
    sarbp_ffbp_info info;
    form_both(p, &g, &fp, &bp, &fb, &tbp, &tfb, &info);
    sarbp_c64 *ex = exact_image(p, &g);
    const size_t n = g.nx * g.ny;
    const double s_bp = ser64(fb, bp, n), s_ex = ser64(fb, ex, n), s_bpex = ser64(bp, ex, n);
    printf("%s: P %zu, %zux%zu at %.3f m: ffbp %d stages (%zu summed at the pixels), %.2f Msamples "
           "polar; bp %.2f s, ffbp %.2f s (FP64, this machine)\n",
           what, P, g.nx, g.ny, g.dx, info.stages, info.final_subs, info.polar_samples / 1e6, tbp, tfb);
    printf("  SER: ffbp vs bp %.1f dB, ffbp vs exact %.1f dB (bp vs exact %.1f dB)\n", s_bp, s_ex,
           s_bpex);
    tu_bar_min(s_bp, meas_bp, 3.5, "dB", "%s: SER of ffbp against direct BP", what);
    tu_bar_min(s_ex, meas_exact, 3.5, "dB", "%s: SER of ffbp against the exact image", what);

    /* finer angular sampling: measurably smaller error */
    sarbp_ffbp_params fine = fp;
    fine.os_theta = 6;
    memset(fb, 0, n * sizeof *fb);
    sarbp_profiles *pr = profiles_of(p);
    tu_ok(sarbp_ffbp_cpu_fp64(pr, &g, &fine, fb, NULL));
    const double s_fine = ser64(fb, bp, n);
    printf("  os_theta %.0f -> %.0f: SER vs bp %.1f -> %.1f dB\n", fp.os_theta, fine.os_theta, s_bp,
           s_fine);
    tu_bar_min(s_fine - s_bp, 2.0, 1.0, "dB", "%s: SER gain of os_theta 6 over 4", what);
    sarbp_profiles_free(pr);
    free(ex);
    free(bp);
    free(fb);
    sarbp_phd_free(p);
}

static void report(const char *what, const sarbp_grid *g, size_t P, double os, double ser,
                   double tbp, double tfb, const sarbp_ffbp_info *info)
{
    printf("%s: P %zu, %zux%zu at %.3f m, os_theta %.1f: SER vs BP %.1f dB; %d stages, %zu final, "
           "%.2f Msamples; bp %.2f s, ffbp %.2f s (%.1fx)\n",
           what, P, g->nx, g->ny, g->dx, os, ser, info->stages, info->final_subs,
           info->polar_samples / 1e6, tbp, tfb, tbp / tfb);
}

/* SER against direct BP for a few os_theta (FFBP_OSR, FFBP_BASE,
 * FFBP_FINAL, FFBP_MERGE change the rest) */
static void measure(const char *what, sarbp_geometry geom, size_t P, sarbp_grid g)
{
    sarbp_phd *p = scene(geom, P, 1);
    const double os[] = {3, 4, 6};
    for (size_t k = 0; k < 3; k++) {
        sarbp_ffbp_params fp;
        sarbp_ffbp_params_default(&fp);
        fp.os_theta = os[k];
        if (getenv("FFBP_BASE")) fp.base = (size_t)atoi(getenv("FFBP_BASE"));
        if (getenv("FFBP_FINAL")) fp.final_subs = (size_t)atoi(getenv("FFBP_FINAL"));
        if (getenv("FFBP_OSR")) fp.os_rho = atof(getenv("FFBP_OSR"));
        if (getenv("FFBP_MERGE")) fp.merge = (size_t)atoi(getenv("FFBP_MERGE"));
        sarbp_c64 *bp, *fb;
        double tbp, tfb;
        sarbp_ffbp_info info;
        form_both(p, &g, &fp, &bp, &fb, &tbp, &tfb, &info);
        report(what, &g, P, os[k], ser64(fb, bp, g.nx * g.ny), tbp, tfb, &info);
        free(bp);
        free(fb);
    }
    sarbp_phd_free(p);
}

/* Measured 2026-11-23 (2-core x86, FP64): circular 131x97 from 256 pulses
 * at 0.2 m: ffbp vs bp 73.5 dB, vs exact 77.2 (bp vs exact 76.1); linear
 * 127x129 from 512 pulses at 0.25 m: 67.5 and 68.4 (bp 76.0). Bars: those
 * less 3.5 dB. */
static void test_circular(void **state)
{
    (void)state;
    check_scene("circular", SARBP_GEOM_CIRCULAR, 256, (sarbp_grid){131, 97, 0.2, 0.2, 0, 0, 0, 0, 0}, 73.5,
                77.2);
}

static void test_linear(void **state)
{
    (void)state;
    check_scene("linear", SARBP_GEOM_LINEAR, 512, (sarbp_grid){127, 129, 0.25, 0.25, 0, 0, 0, 0, 0}, 67.5,
                68.4);
}

/* A point target: the same peak pixel as direct BP, the refined peak
 * within 0.1 pixel, PSLR and ISLR within 0.2 dB of BP's in both cuts
 * (measured: 0.0001 pixel, 0.0004 dB). */
static void test_point_target(void **state)
{
    (void)state;
    const sarbp_target t = {1.33, -0.72, 0, 1}; /* off the half-pixel ties */
    sarbp_phd *p = tu_targets(&t, 1, 256);
    sarbp_grid g = {96, 96, 0.1, 0.1, 0, 0, 0, 0, 0};
    sarbp_ffbp_params fp;
    sarbp_ffbp_params_default(&fp);
    sarbp_c64 *bp, *fb;
    double tbp, tfb;
    sarbp_ffbp_info info;
    form_both(p, &g, &fp, &bp, &fb, &tbp, &tfb, &info);
    sarbp_image *ib, *ifb;
    tu_ok(sarbp_image_alloc(&g, &ib));
    tu_ok(sarbp_image_alloc(&g, &ifb));
    ib->has_grid_coords = ifb->has_grid_coords = 1;
    for (size_t i = 0; i < g.nx * g.ny; i++) {
        ib->data[i] = (sarbp_c32){(float)bp[i].re, (float)bp[i].im};
        ifb->data[i] = (sarbp_c32){(float)fb[i].re, (float)fb[i].im};
    }
    sarbp_pt_result *rb, *rf;
    tu_ok(sarbp_pointtarget_measure(ib, NULL, &rb));
    tu_ok(sarbp_pointtarget_measure(ifb, NULL, &rf));
    printf("point target: bp peak (%zu, %zu) at (%.4f, %.4f) m, ffbp (%zu, %zu) at (%.4f, %.4f) m\n",
           rb->ix, rb->iy, rb->x, rb->y, rf->ix, rf->iy, rf->x, rf->y);
    assert_int_equal(rb->ix, rf->ix);
    assert_int_equal(rb->iy, rf->iy);
    const double dpos = hypot(rb->x - rf->x, rb->y - rf->y) / g.dx;
    tu_bar_max(dpos, 0.0001, 0.0999, "pixel", "refined peak of ffbp from bp's");
    for (int c = 0; c < 2; c++) {
        printf("  cut %d: PSLR bp %.2f ffbp %.2f dB; ISLR bp %.2f ffbp %.2f dB\n", c, rb->cut[c].pslr_db,
               rf->cut[c].pslr_db, rb->cut[c].islr_db, rf->cut[c].islr_db);
        const double dp = fabs(rb->cut[c].pslr_db - rf->cut[c].pslr_db),
                     di = fabs(rb->cut[c].islr_db - rf->cut[c].islr_db);
        tu_bar_max(dp, 0.0005, 0.1995, "dB", "cut %d: PSLR of ffbp from bp's", c);
        tu_bar_max(di, 0.0005, 0.1995, "dB", "cut %d: ISLR of ffbp from bp's", c);
    }
    sarbp_pointtarget_free(rb);
    sarbp_pointtarget_free(rf);
    sarbp_image_free(ib);
    sarbp_image_free(ifb);
    free(bp);
    free(fb);
    sarbp_phd_free(p);
}

/* Refusals: an antenna over the image, and invalid parameters. */
static void test_refusals(void **state)
{
    (void)state;
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(4, 64, SARBP_FP64, &pr));
    pr->npulses = 4;
    for (size_t i = 0; i < 4; i++) {
        pr->pos[3 * i] = 0.5 * (double)i;
        pr->pos[3 * i + 1] = 0;
        pr->pos[3 * i + 2] = 1000;
        pr->r0[i] = 1000;
        pr->rstart[i] = -1;
        pr->dr[i] = 0.03;
        pr->fref[i] = 9.6e9;
    }
    sarbp_grid g = {16, 16, 1, 1, 0, 0, 0, 0, 0};
    sarbp_c64 img[256] = {{0, 0}};
    sarbp_ffbp_params fp;
    sarbp_ffbp_params_default(&fp);
    assert_int_equal(sarbp_ffbp_cpu_fp64(pr, &g, &fp, img, NULL), SARBP_ERR_INVALID);
    printf("over the image: %s\n", sarbp_error_detail());
    fp.os_theta = 0.5;
    assert_int_equal(sarbp_ffbp_cpu_fp64(pr, &g, &fp, img, NULL), SARBP_ERR_INVALID);
    sarbp_profiles_free(pr);
}

/* FP32 FFBP against the FP64 prototype and FP64 direct BP (same scene) */
static void fp32_scene(const char *what, sarbp_geometry geom, size_t P, sarbp_grid g)
{
    sarbp_phd *p = scene(geom, P, 1);
    sarbp_ffbp_params fp;
    sarbp_ffbp_params_default(&fp);
    sarbp_c64 *bp, *fb;
    double tbp, tfb;
    sarbp_ffbp_info info;
    form_both(p, &g, &fp, &bp, &fb, &tbp, &tfb, &info);
    sarbp_profiles *pr = profiles32_of(p);
    const size_t n = g.nx * g.ny;
    sarbp_c32 *f32 = calloc(n, sizeof *f32);
    assert_non_null(f32);
    const double t0 = secs();
    tu_ok(sarbp_ffbp_cpu_fp32(pr, &g, &fp, 0, f32, &info));
    const double t32 = secs() - t0;
    const double s64 = tu_ser_c32_c64(f32, fb, n), sbp = tu_ser_c32_c64(f32, bp, n);
    printf("%s fp32: P %zu, %zux%zu: vs ffbp fp64 %.1f dB, vs bp fp64 %.1f dB (fp64 ffbp vs bp %.1f); "
           "fp32 %.3f s, fp64 ffbp %.3f s, bp %.3f s\n",
           what, P, g.nx, g.ny, s64, sbp, ser64(fb, bp, n), t32, tfb, tbp);
    free(f32);
    free(bp);
    free(fb);
    sarbp_profiles_free(pr);
    sarbp_phd_free(p);
}

static void test_fp32(void **state)
{
    (void)state;
    fp32_scene("circular", SARBP_GEOM_CIRCULAR, 256, (sarbp_grid){131, 97, 0.2, 0.2, 0, 0, 0, 0, 0});
    fp32_scene("linear", SARBP_GEOM_LINEAR, 512, (sarbp_grid){127, 129, 0.25, 0.25, 0, 0, 0, 0, 0});
}

/* predicted error (sarbp_ffbp_predict) against measured (FP32 FFBP vs FP64
 * direct BP) over a grid of factorizations: FFBP_MODEL=1 */
static void model_sweep(const char *what, sarbp_geometry geom, size_t P, sarbp_grid g)
{
    sarbp_phd *p = scene(geom, P, 1);
    sarbp_profiles *pr = profiles_of(p), *p32 = profiles32_of(p);
    const size_t n = g.nx * g.ny;
    sarbp_c64 *bp = calloc(n, sizeof *bp);
    sarbp_c32 *f32 = calloc(n, sizeof *f32);
    assert_true(bp && f32);
    tu_ok(sarbp_bp_cpu_fp64(pr, &g, bp));
    const double oss[] = {1.5, 2, 3, 4, 6}, osr[] = {1.5, 2};
    const size_t bases[] = {8, 32}, finals[] = {1, 8}, merges[] = {2, 4};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 2; b++)
            for (size_t f = 0; f < 2; f++)
                for (size_t m = 0; m < 2; m++)
                    for (size_t r = 0; r < 2; r++) {
                        sarbp_ffbp_params fp = {bases[b], merges[m], finals[f], oss[a], osr[r]};
                        sarbp_ffbp_prediction pd;
                        tu_ok(sarbp_ffbp_predict(p32, &g, &fp, &pd));
                        memset(f32, 0, n * sizeof *f32);
                        sarbp_ffbp_info info;
                        const double t0 = secs();
                        tu_ok(sarbp_ffbp_cpu_fp32(p32, &g, &fp, 0, f32, &info));
                        const double t = secs() - t0;
                        const double ser = tu_ser_c32_c64(f32, bp, n);
                        printf("model %s: base %zu merge %zu final %zu os %.1f/%.1f: stages %d: "
                               "predicted %.1f measured %.1f (diff %+.1f) dB; cost %.3f, %.3f s\n",
                               what, fp.base, fp.merge, fp.final_subs, fp.os_theta, fp.os_rho,
                               pd.stages, -pd.error_db, ser, ser + pd.error_db, pd.cost_ratio, t);
                    }
    free(bp);
    free(f32);
    sarbp_profiles_free(pr);
    sarbp_profiles_free(p32);
    sarbp_phd_free(p);
}

static void test_model_sweep(void **state)
{
    (void)state;
    if (!getenv("FFBP_MODEL")) {
        printf("the model sweep runs with FFBP_MODEL=1\n");
        return;
    }
    model_sweep("circular", SARBP_GEOM_CIRCULAR, 256, (sarbp_grid){131, 97, 0.2, 0.2, 0, 0, 0, 0, 0});
    model_sweep("linear", SARBP_GEOM_LINEAR, 512, (sarbp_grid){127, 129, 0.25, 0.25, 0, 0, 0, 0, 0});
    model_sweep("circ512", SARBP_GEOM_CIRCULAR, 1024, (sarbp_grid){256, 256, 0.1, 0.1, 0, 0, 0, 0, 0});
}

static void test_sweep(void **state)
{
    (void)state;
    if (!getenv("FFBP_SWEEP")) {
        printf("the parameter sweep runs with FFBP_SWEEP=1\n");
        return;
    }
    measure("circular", SARBP_GEOM_CIRCULAR, 256, (sarbp_grid){131, 97, 0.2, 0.2, 0, 0, 0, 0, 0});
    measure("linear", SARBP_GEOM_LINEAR, 512, (sarbp_grid){127, 129, 0.25, 0.25, 0, 0, 0, 0, 0});
    measure("circular", SARBP_GEOM_CIRCULAR, 1024, (sarbp_grid){512, 512, 0.1, 0.1, 0, 0, 0, 0, 0});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_circular),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_point_target),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_fp32),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_model_sweep),
    };
    return tu_run_group("ffbp", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
