/* test_gpu_backproject.c - the CUDA back end against the CPU FP64 reference
 * (label gpu; skipped without a device): every kernel variant at awkward
 * sizes and pulse counts (1 x 1 to 4096 x 4096, 1 to 2048 pulses), a unit
 * target's peak, streaming and banding (an image formed in bands of rows)
 * against one piece, and the real Gotcha files. */
#include <math.h>

#include "test_util.h"

static void check_sizes(size_t nx, size_t ny, size_t npulses)
{
    sarbp_phd *p = tu_clutter_scene(npulses);
    sarbp_grid g = {nx, ny, 0.2, 0.2, 0.7, -1.1, 0};
    sarbp_image *ref = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        static const int ppts[] = {1, 2, 4, 8};
        for (size_t k = 0; k < (v == 0 ? 1u : 4u); k++) {
            sarbp_bp_options o;
            sarbp_bp_options_default(&o);
            o.variant = tu_variants[v];
            if (v) o.ppt = ppts[k];
            sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
            double ser = tu_ser_c32(img->data, ref->data, nx * ny);
            print_message("%-4s ppt %d, %zu x %zu, %zu pulses: SER %.1f dB (bar 70)\n", tu_variants[v],
                          v ? ppts[k] : 1, nx, ny, npulses, ser);
            assert_true(ser >= 70);
            sarbp_image_free(img);
        }
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

static void test_sizes(void **state)
{
    (void)state;
    if (!tu_have_gpu()) skip();
    check_sizes(1, 1, 1);
    check_sizes(17, 33, 255);
    check_sizes(17, 33, 257);
    check_sizes(1000, 999, 257);
    check_sizes(512, 512, 2048);
}

/* 4096 x 4096 pixels of 257 pulses: each variant once (its default tile and
 * ppt) against one FP64 reference. The spacing, 0.025 m, is the benchmark's:
 * the grid (102 m) covers the clutter instead of mostly empty, aliased
 * ground. The CPU FP64 reference is 4.3e9 pixel-pulse pairs, about 7 s on
 * 16 cores (~40 Mbp/s a core). */
static void test_size_4096(void **state)
{
    (void)state;
    if (!tu_have_gpu()) skip();
    const size_t n = 4096, npulses = 257;
    sarbp_phd *p = tu_clutter_scene(npulses);
    sarbp_grid g = {n, n, 0.025, 0.025, 0.7, -1.1, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o64;
    sarbp_bp_options_default(&o64);
    o64.precision = SARBP_FP64;
    sarbp_image *ref;
    sarbp_form_stats st;
    tu_ok(sarbp_form_phd(p, &g, &sarbp_backend_cpu, &rc, &o64, NULL, &ref, &st));
    print_message("%zu x %zu, %zu pulses: CPU FP64 reference in %.2f s (%d cores)\n", n, n, npulses,
                  st.total_s, sarbp_cpu_count());
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = tu_variants[v];
        sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        double ser = tu_ser_c32(img->data, ref->data, n * n);
        print_message("%-4s default tile, %zu x %zu, %zu pulses: SER %.1f dB (bar 70)\n", tu_variants[v],
                      n, n, npulses, ser);
        assert_true(ser >= 70);
        sarbp_image_free(img);
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

static void test_unit_target(void **state)
{
    (void)state;
    if (!tu_have_gpu()) skip();
    const sarbp_target t = {0, 0, 0, 1};
    sarbp_phd *p = tu_targets(&t, 1, 257);
    sarbp_grid g = {65, 65, 0.2, 0.2, 0, 0, 0};
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = tu_variants[v];
        sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        size_t c = 32 * 65 + 32;
        double bv;
        size_t best = tu_peak_index(img, &bv);
        print_message("%s: peak %.6f at %zu (P = 257)\n", tu_variants[v], bv, best);
        assert_int_equal(best, c);
        assert_true(fabs(bv / 257.0 - 1) < 1e-4);
        sarbp_image_free(img);
    }
    sarbp_phd_free(p);
}

static void test_streaming_and_tiling(void **state)
{
    (void)state;
    if (!tu_have_gpu()) skip();
    sarbp_phd *p = tu_clutter_scene(600);
    sarbp_grid g = {700, 650, 0.15, 0.15, 0, 0, 0};
    sarbp_bp_options one;
    sarbp_bp_options_default(&one);
    one.pulse_block = 600;
    sarbp_image *a = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &one);
    sarbp_bp_options streamed = one;
    streamed.pulse_block = 64; /* 10 blocks, the last partial */
    sarbp_image *b = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &streamed);
    sarbp_bp_options tiled = streamed;
    size_t passes = 0;
    tiled.gpu_mem = tu_banding_budget(p, &g, &tiled, &passes);
    print_message("banding: gpu_mem %.2f MiB gives %zu bands of rows\n", tiled.gpu_mem / 1048576.0, passes);
    assert_true(passes >= 2);
    sarbp_image *c = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &tiled);
    double s_ab = tu_ser_c32(b->data, a->data, g.nx * g.ny);
    double s_ac = tu_ser_c32(c->data, a->data, g.nx * g.ny);
    double s_bc = tu_ser_c32(c->data, b->data, g.nx * g.ny);
    print_message("streamed vs one block: %.1f dB; banded vs one piece: %.1f dB; banded vs streamed "
                  "(same blocks): %.1f dB (bar 100)\n", s_ab, s_ac, s_bc);
    assert_true(s_ab >= 100);
    assert_true(s_ac >= 100);
    assert_true(s_bc >= 100);
    sarbp_image_free(a);
    sarbp_image_free(b);
    sarbp_image_free(c);
    sarbp_phd_free(p);
}

static void test_gotcha(void **state)
{
    (void)state;
    if (!tu_have_gpu() || !tu_have_gotcha()) skip();
    const char *in[] = {tu_gotcha_dir()};
    sarbp_phd *p;
    tu_ok(sarbp_phd_load(in, 1, &p));
    sarbp_grid g = {512, 512, 0.2, 0.2, 0, 0, 0};
    sarbp_image *ref = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    for (size_t v = 0; v < TU_NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = tu_variants[v];
        sarbp_image *img = tu_form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        double ser = tu_ser_c32(img->data, ref->data, g.nx * g.ny);
        print_message("Gotcha %s: SER %.1f dB (bar 60)\n", tu_variants[v], ser);
        assert_true(ser >= 60);
        sarbp_image_free(img);
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

static void test_bad_config(void **state)
{
    (void)state;
    if (!tu_have_gpu()) skip();
    sarbp_phd *p = tu_clutter_scene(8);
    sarbp_grid g = {16, 16, 0.2, 0.2, 0, 0, 0};
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.variant = "v9";
    sarbp_image *img = NULL;
    assert_int_equal(sarbp_form_phd(p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL), SARBP_ERR_INVALID);
    o.variant = NULL;
    o.device = 999;
    assert_int_equal(sarbp_form_phd(p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL), SARBP_ERR_NODEVICE);
    o.device = 0;
    o.gpu_mem = 1024; /* absurdly small budget: a clear error, not a crash */
    assert_int_equal(sarbp_form_phd(p, &g, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL), SARBP_ERR_NOMEM);
    assert_null(img);
    sarbp_phd_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_target),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_streaming_and_tiling),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_size_4096),
        cmocka_unit_test(test_gotcha),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
