/* test_gpu_partition.c - the partition layer and the typed plan on the GPU:
 *  - bands over resident range profiles against bands that re-read and
 *    re-compress the input (streaming): the same launches on the same
 *    profiles, so bit for bit (FP32 and FP16);
 *  - banded (bands of whole tile rows, profiles resident) against one
 *    piece, and a plan executed in blocks of odd sizes against one block:
 *    at least the 120 dB (pulse groups per launch change the
 *    accumulation order; the launch-wide bounds change per band);
 *  - kept profiles backprojected again in subsets against the whole;
 *  - two devices, when there are two (skipped otherwise): the image's rows
 *    shared, each device's budget its own, against one device.
 * Skips (77) without a usable GPU. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The bar for images formed in pieces against one piece. */
#define PIECES_DB 120.0

/* the form's limits the tests set (sarbp/bench.h), reset with each options */
static sarbp_form_limits lim;

static sarbp_phd *scene;

static int setup(void **state)
{
    (void)state;
    scene = tu_clutter_scene(600);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sarbp_phd_free(scene);
    return 0;
}

static sarbp_image *form_o(const sarbp_grid *g, const sarbp_bp_options *o, sarbp_form_stats *st)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_rc_params_default_for(&rc, o->precision, o->algorithm == SARBP_ALGO_FFBP);
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, scene, g, &sarbp_backend_cuda, &rc, o, NULL, &img, st));
    return img;
}

static void at_least(double ser, const char *what)
{
    print_message("%s: SER %.1f dB (at least %.0f)\n", what, ser, PIECES_DB);
    if (!(ser >= PIECES_DB)) fail_msg("%s: SER %.1f dB is below %.0f dB", what, ser, PIECES_DB);
}

static void test_resident_vs_streaming(void **state)
{
    (void)state;
    const sarbp_grid g = {700, 650, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};
    for (int h = 0; h < 2; h++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        lim = (sarbp_form_limits){0};
        o.limits = &lim;
        o.precision = h ? SARBP_FP16 : SARBP_FP32;
        o.pulse_block = 64; /* 10 blocks, the last partial */
        sarbp_form_stats st;
        sarbp_image *one = form_o(&g, &o, &st);
        assert_int_equal(st.layout.part[0].bands, 1);
        lim.band_rows = 200;  /* rounded down to tile rows */
        sarbp_image *kept = form_o(&g, &o, &st);
        const sarbp_form_part *pt = &st.layout.part[0];
        print_message("%s: %zu bands of %zu rows, profiles %s\n", sarbp_precision_name(o.precision),
                      pt->bands, pt->band_rows, pt->kept ? "kept" : "streamed");
        assert_true(pt->bands >= 3);
        assert_int_equal(pt->kept, 1);
        lim.stream = 1;
        sarbp_image *streamed = form_o(&g, &o, &st);
        assert_int_equal(pt->kept, 0);
        const size_t n = g.nx * g.ny;
        if (memcmp(kept->data, streamed->data, n * sizeof(sarbp_c32)))
            fail_msg("%s: resident and streaming bands differ (SER %.1f dB)",
                     sarbp_precision_name(o.precision), tu_ser_c32(kept->data, streamed->data, n));
        at_least(tu_ser_c32(kept->data, one->data, n), h ? "fp16 banded vs one piece" : "fp32 banded vs one piece");
        sarbp_image_free(one);
        sarbp_image_free(kept);
        sarbp_image_free(streamed);
    }
}

static void test_plan_odd_blocks(void **state)
{
    (void)state;
    const sarbp_grid g = {300, 260, 0.2, 0.2, 0, 0, 0, 0, 0, NULL, 0};
    const size_t n = g.nx * g.ny;
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_c32 *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b), *c = calloc(n, sizeof *c);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    sarbp_cuda_options o;
    sarbp_cuda_options_default(&o);
    o.pulse_block = 600;
    sarbp_bp_desc d = {scene, &g, &rc, {0, g.ny}, 0, NULL, NULL, NULL, NULL};
    sarbp_bp_plan *plan;
    tu_ok(sarbp_cuda_plan_create(&d, &o, &plan, NULL));
    tu_ok(sarbp_bp_plan_execute(plan, 0, scene->npulses, scene->data, NULL));
    tu_ok(sarbp_bp_plan_finish(plan, a, NULL));
    sarbp_bp_plan_destroy(plan);
    /* blocks of 1, 7, 13, 64, 65, 3, ... through a plan of blocks of 64, keeping them */
    o.pulse_block = 64;
    d.keep_pulses = scene->npulses;
    sarbp_stage_times t = {0};
    tu_ok(sarbp_cuda_plan_create(&d, &o, &plan, &t));
    const size_t sizes[] = {1, 7, 13, 64, 65, 3};
    for (size_t p0 = 0, k = 0; p0 < scene->npulses; k++) {
        size_t m = sizes[k % 6];
        if (m > scene->npulses - p0) m = scene->npulses - p0;
        tu_ok(sarbp_bp_plan_execute(plan, p0, m, scene->data + p0 * scene->nsamples, &t));
        p0 += m;
    }
    tu_ok(sarbp_bp_plan_finish(plan, b, &t));
    assert_true(t.bp_s > 0);
    at_least(tu_ser_c32(b, a, n), "fp32 plan, odd blocks vs one block");
    /* the kept profiles again, in subsets, over the same region */
    tu_ok(sarbp_bp_plan_region(plan, (sarbp_region){0, g.ny}));
    tu_ok(sarbp_bp_plan_execute(plan, 0, 250, NULL, &t));
    tu_ok(sarbp_bp_plan_execute(plan, 250, 350, NULL, &t));
    tu_ok(sarbp_bp_plan_finish(plan, c, &t));
    at_least(tu_ser_c32(c, a, n), "fp32 plan, kept profiles in two subsets vs one block");
    sarbp_bp_plan_destroy(plan);
    free(a);
    free(b);
    free(c);
}

static void test_two_devices(void **state)
{
    (void)state;
    if (sarbp_cuda_device_count() < 2) {
        tu_skip("one CUDA device: the two-device test needs two");
        return;
    }
    const sarbp_grid g = {900, 700, 0.12, 0.12, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    sarbp_form_stats st;
    sarbp_image *one = form_o(&g, &o, &st);
    o.ndevices = 2;
    o.devices[0] = 0;
    o.devices[1] = 1;
    sarbp_image *two = form_o(&g, &o, &st);
    assert_int_equal(st.layout.nparts, 2);
    assert_int_equal(st.layout.part[0].row0 + st.layout.part[0].nrows, st.layout.part[1].row0);
    assert_int_equal(st.layout.part[1].row0 + st.layout.part[1].nrows, g.ny);
    at_least(tu_ser_c32(two->data, one->data, g.nx * g.ny), "fp32 two devices vs one");
    /* each device in bands of its own budget, profiles resident */
    lim.band_rows = 128;
    sarbp_image *banded = form_o(&g, &o, &st);
    assert_true(st.layout.part[0].bands >= 2 && st.layout.part[1].bands >= 2);
    at_least(tu_ser_c32(banded->data, one->data, g.nx * g.ny), "fp32 two devices in bands vs one");
    sarbp_image_free(one);
    sarbp_image_free(two);
    sarbp_image_free(banded);
}

int main(void)
{
    const int pre = tu_gpu_precondition("test_gpu_partition");
    if (pre) return pre;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resident_vs_streaming),
        cmocka_unit_test(test_plan_odd_blocks),
        cmocka_unit_test(test_two_devices),
    };
    return tu_run_group("test_gpu_partition", tests, sizeof tests / sizeof tests[0], setup, teardown);
}
