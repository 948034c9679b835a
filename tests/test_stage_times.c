/* test_stage_times.c - where the time and memory of a CPU run went: sarbp_form
 * fills sarbp_form_stats.stages from the back end (range compression and
 * backprojection both take time and together fit inside the total; setup
 * and finish are measured; the pulse-block and image memory are the sizes
 * the plan holds; nothing is transferred), for FP32 and FP64; `sarbp form -v`
 * prints the split. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static void check_stages(sarbp_precision prec)
{
    const size_t P = 96, block = 32;
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = P;
    sp.nsamples = 256;
    sarbp_phd *phd;
    tu_ok(sarbp_simulate(&sp, &phd));
    sarbp_grid g = {97, 65, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = prec;
    o.pulse_block = block; /* three execute() calls */
    sarbp_image *img = NULL;
    sarbp_form_stats stats;
    memset(&stats, 0xff, sizeof stats); /* every field must be written */
    tu_ok(sarbp_form_phd(NULL, phd, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, &stats));
    const sarbp_stage_times *t = &stats.stages;
    const double elem = prec == SARBP_FP64 ? sizeof(sarbp_c64) : sizeof(sarbp_c32);
    const size_t nbins = sarbp_rc_nbins(phd, rc.upsample);
    print_message("%s: total %.6f s: setup %.6f, transfer %.6f, rc %.6f, bp %.6f, finish "
                  "%.6f s; pulse data %zu B, image %zu B\n",
                  sarbp_precision_name(prec), stats.total_s, t->setup_s, t->transfer_s, t->rc_s,
                  t->bp_s, t->finish_s, t->pulse_bytes, t->image_bytes);
    assert_true(t->rc_s > 0);
    assert_true(t->bp_s > 0);
    assert_true(t->setup_s >= 0 && t->finish_s >= 0);
    assert_true(t->transfer_s == 0); /* the CPU moves nothing to a device */
    /* the stages run inside form's wall clock (some slack for clock reads) */
    const double sum = t->setup_s + t->rc_s + t->bp_s + t->finish_s;
    assert_true(t->rc_s + t->bp_s <= stats.total_s * 1.05 + 1e-3);
    assert_true(sum <= stats.total_s * 1.05 + 1e-3);
    assert_true(stats.total_s < 60 && isfinite(stats.total_s));
    /* one block of profiles, at least, and the accumulator of the image */
    assert_true(t->pulse_bytes >= block * nbins * (size_t)elem);
    assert_true(t->pulse_bytes < 4 * block * nbins * (size_t)elem);
    assert_int_equal(t->image_bytes, g.nx * g.ny * (size_t)elem);
    /* the fields that were there before keep their meaning */
    assert_int_equal(stats.npulses, P);
    assert_true(stats.read_s >= 0 && stats.read_s <= stats.total_s);
    assert_true(fabs(stats.compute_s - (stats.total_s - stats.read_s)) < 1e-9);
    assert_true(stats.pairs == (double)P * (double)(g.nx * g.ny));
    sarbp_image_free(img);
    sarbp_phd_free(phd);
}

static void test_fp32(void **state)
{
    (void)state;
    check_stages(SARBP_FP32);
}

static void test_fp64(void **state)
{
    (void)state;
    check_stages(SARBP_FP64);
}

/* The options default that the CUDA FP16 path reads. */
static void test_options_default(void **state)
{
    (void)state;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    assert_int_equal(o.raw_fp16, 0);
    assert_int_equal(o.precision, SARBP_FP32);
}

/* `sarbp form -v` prints the split with its units; without -v it does not. */
static void test_cli_verbose(void **state)
{
    (void)state;
    static char out[16384], err[16384];
    char sim[1024];
    snprintf(sim, sizeof sim, "%s", tu_tmp("stage_times_sim.h5"));
    const char *png = tu_tmp("stage_times.png");
    assert_int_equal(tu_run("simulate -o '%s' --pulses 48 --samples 64", sim), 0);
    int rc = tu_run("form -v -i '%s' -o '%s' --backend cpu --grid 33x33", sim, png);
    if (rc != 0) fail_msg("form -v exits %d: %s", rc, err);
    print_message("%s", err);
    const char *keys[] = {"setup", "read", "transfer", "range compression", "backprojection",
                          "finish", "pulse data", "MiB"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(err, keys[i])) fail_msg("form -v: stderr lacks '%s': %s", keys[i], err);
    rc = tu_run("form -i '%s' -o '%s' --backend cpu --grid 33x33", sim, png);
    assert_int_equal(rc, 0);
    assert_null(strstr(err, "backprojection"));
    remove(sim);
    remove(png);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp32),
        cmocka_unit_test(test_fp64),
        cmocka_unit_test(test_options_default),
        cmocka_unit_test(test_cli_verbose),
    };
    return tu_run_tests(tests);
}
