/* test_gpu_backproject.c - the CUDA back end against the CPU FP64 reference
 * (label gpu; skipped without a device): every kernel variant at awkward
 * sizes and pulse counts (1 x 1 to 4096 x 4096, 1 to 2048 pulses), a unit
 * target's peak, streaming and banding (an image formed in bands of rows)
 * against one piece, and the real Gotcha files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int have_gpu(void) { return sarbp_backend_cuda.available(NULL); }

static sarbp_phd *scene(size_t npulses)
{
    sarbp_target *clutter;
    size_t nc = 150;
    tu_ok(sarbp_targets_clutter(nc, 50, -30, 0, 5, &clutter));
    sarbp_target *all = malloc((nc + 3) * sizeof *all);
    memcpy(all, clutter, nc * sizeof *all);
    const sarbp_target bright[] = {{0, 0, 0, 10}, {20, 10, 0, 5}, {-33.3, 21.7, 0, 8}};
    memcpy(all + nc, bright, sizeof bright);
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.targets = all;
    sp.ntargets = nc + 3;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    free(all);
    free(clutter);
    return p;
}

static sarbp_image *form(const sarbp_phd *p, const sarbp_grid *g, const sarbp_backend *be,
                         sarbp_precision prec, const sarbp_bp_options *tune)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    if (tune) o = *tune;
    else sarbp_bp_options_default(&o);
    o.precision = prec;
    sarbp_image *img;
    tu_ok(sarbp_form_phd(p, g, be, &rc, &o, NULL, &img, NULL));
    return img;
}

static const char *variants[] = {"v1", "v2", "v3", "v3a", "v4"};
#define NVARIANTS (sizeof variants / sizeof *variants)

static void check_sizes(size_t nx, size_t ny, size_t npulses)
{
    sarbp_phd *p = scene(npulses);
    sarbp_grid g = {nx, ny, 0.2, 0.2, 0.7, -1.1, 0};
    sarbp_image *ref = form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    for (size_t v = 0; v < NVARIANTS; v++) {
        static const int ppts[] = {1, 2, 4, 8};
        for (size_t k = 0; k < (v == 0 ? 1u : 4u); k++) {
            sarbp_bp_options o;
            sarbp_bp_options_default(&o);
            o.variant = variants[v];
            if (v) o.ppt = ppts[k];
            sarbp_image *img = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
            double ser = tu_ser_c32(img->data, ref->data, nx * ny);
            print_message("%-4s ppt %d, %zu x %zu, %zu pulses: SER %.1f dB (bar 70)\n", variants[v],
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
    if (!have_gpu()) skip();
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
    if (!have_gpu()) skip();
    const size_t n = 4096, npulses = 257;
    sarbp_phd *p = scene(npulses);
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
    for (size_t v = 0; v < NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = variants[v];
        sarbp_image *img = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        double ser = tu_ser_c32(img->data, ref->data, n * n);
        print_message("%-4s default tile, %zu x %zu, %zu pulses: SER %.1f dB (bar 70)\n", variants[v],
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
    if (!have_gpu()) skip();
    sarbp_target t = {0, 0, 0, 1};
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = 257;
    sp.targets = &t;
    sp.ntargets = 1;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    sarbp_grid g = {65, 65, 0.2, 0.2, 0, 0, 0};
    for (size_t v = 0; v < NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = variants[v];
        sarbp_image *img = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        size_t c = 32 * 65 + 32, best = 0;
        double bv = -1;
        for (size_t i = 0; i < 65 * 65; i++) {
            double m = hypot(img->data[i].re, img->data[i].im);
            if (m > bv) { bv = m; best = i; }
        }
        print_message("%s: peak %.6f at %zu (P = 257)\n", variants[v], bv, best);
        assert_int_equal(best, c);
        assert_true(fabs(bv / 257.0 - 1) < 1e-4);
        sarbp_image_free(img);
    }
    sarbp_phd_free(p);
}

/* A device-memory budget that makes the back end form g in bands of rows:
 * the smallest budget its plan accepts (bisection on create(), to 64 KiB)
 * plus about a quarter of the image's rows. A fixed figure would not do: a
 * 700 x 650 image is 3.6 MB, far below the pulse buffers' share, so a
 * budget like 200 MB leaves it in one band. *passes: the resulting number
 * of bands. */
static size_t banding_budget(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *o,
                             size_t *passes)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options t = *o;
    size_t lo = 0, hi = (size_t)4 << 30; /* lo is refused, hi accepted */
    void *plan = NULL;
    t.gpu_mem = hi;
    tu_ok(sarbp_backend_cuda.create(p, g, &rc, &t, &plan));
    sarbp_backend_cuda.destroy(plan);
    while (hi - lo > ((size_t)64 << 10)) {
        t.gpu_mem = lo + (hi - lo) / 2;
        plan = NULL;
        sarbp_status s = sarbp_backend_cuda.create(p, g, &rc, &t, &plan);
        sarbp_backend_cuda.destroy(plan);
        if (s == SARBP_OK) hi = t.gpu_mem;
        else if (s == SARBP_ERR_NOMEM) lo = t.gpu_mem;
        else fail_msg("create with gpu_mem %zu: %s (%s)", t.gpu_mem, sarbp_strerror(s), sarbp_error_detail());
    }
    t.gpu_mem = hi + g->ny / 4 * g->nx * sizeof(sarbp_c32);
    tu_ok(sarbp_backend_cuda.create(p, g, &rc, &t, &plan));
    *passes = sarbp_backend_cuda.passes(plan);
    sarbp_backend_cuda.destroy(plan);
    return t.gpu_mem;
}

static void test_streaming_and_tiling(void **state)
{
    (void)state;
    if (!have_gpu()) skip();
    sarbp_phd *p = scene(600);
    sarbp_grid g = {700, 650, 0.15, 0.15, 0, 0, 0};
    sarbp_bp_options one;
    sarbp_bp_options_default(&one);
    one.pulse_block = 600;
    sarbp_image *a = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &one);
    sarbp_bp_options streamed = one;
    streamed.pulse_block = 64; /* 10 blocks, the last partial */
    sarbp_image *b = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &streamed);
    sarbp_bp_options tiled = streamed;
    size_t passes = 0;
    tiled.gpu_mem = banding_budget(p, &g, &tiled, &passes);
    print_message("banding: gpu_mem %.2f MiB gives %zu bands of rows\n", tiled.gpu_mem / 1048576.0, passes);
    assert_true(passes >= 2);
    sarbp_image *c = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &tiled);
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
    if (!have_gpu() || !tu_have_gotcha()) skip();
    const char *in[] = {tu_gotcha_dir()};
    sarbp_phd *p;
    tu_ok(sarbp_phd_load(in, 1, &p));
    sarbp_grid g = {512, 512, 0.2, 0.2, 0, 0, 0};
    sarbp_image *ref = form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    for (size_t v = 0; v < NVARIANTS; v++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.variant = variants[v];
        sarbp_image *img = form(p, &g, &sarbp_backend_cuda, SARBP_FP32, &o);
        double ser = tu_ser_c32(img->data, ref->data, g.nx * g.ny);
        print_message("Gotcha %s: SER %.1f dB (bar 60)\n", variants[v], ser);
        assert_true(ser >= 60);
        sarbp_image_free(img);
    }
    sarbp_image_free(ref);
    sarbp_phd_free(p);
}

static void test_bad_config(void **state)
{
    (void)state;
    if (!have_gpu()) skip();
    sarbp_phd *p = scene(8);
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
