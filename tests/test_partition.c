/* test_partition.c - the partition layer and the typed plan on the CPU:
 *  - a form cut into bands (forced by a small memory budget) gives the image
 *    of one piece, bit for bit on 16-row band boundaries (FP32, FP64), and
 *    within a stated SER where bands split the FP32 path's tiles;
 *  - bands over resident range profiles give the image of bands that
 *    re-read and re-compress the input (streaming), bit for bit, and the
 *    layout says which path ran; the resident bands read the input once
 *    (the form's count of pulses read), the streamed ones once a band;
 *  - a plan executed in blocks of odd sizes (1, 7, 13, ...) gives the image of
 *    one block; kept profiles backprojected again in subsets give it too;
 *  - the threaded path of several devices, through a stand-in back end that
 *    runs CPU plans as "devices": rows shared, each its own budget, bit for
 *    bit the image of one piece;
 *  - the layer's refusals: a budget that cannot hold one band, kept pulses
 *    asked for a region the plan was not made for;
 *  - forming into the caller's image (sarbp_form_phd_into), reused, full of
 *    garbage, banded: the pixels of a fresh image;
 *  - a NaN or Inf sample of an in-memory phase history, found block by
 *    block as form reads it, refused with its sample and pulse, also when
 *    several devices share the blocks read (none waits for ever); the copy
 *    that checks as it copies (a plan's staging) names the same float. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "test_util.h"
#include "scratch.h"
#include "../src/core/sample_check.h" /* internal headers: tests link the library directly */

/* Bands that split the FP32 path's 16 x 16 tiles change each pixel's
 * tile-relative arithmetic, at the level of FP32 against FP64 (about
 * 100 dB): measured 99.2 dB against one piece (clutter scene, 200 x 150 at
 * 0.25 m, GCC Release); 6 dB of headroom, as for FP32 against FP64. */
#define SPLIT_TILE_SER_DB 99.2
#define SPLIT_TILE_HEADROOM_DB 6.0

/* the form's limits the tests set (sarbp/bench.h), reset with each options */
static sarbp_form_limits lim;

static sarbp_phd *scene;

static int setup(void **state)
{
    (void)state;
    scene = tu_clutter_scene(300);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sarbp_phd_free(scene);
    return 0;
}

static sarbp_grid grid(size_t nx, size_t ny)
{
    sarbp_grid g = {nx, ny, 0.25, 0.25, 1.5, -2.0, 0, 0, 0, NULL, 0};
    return g;
}

static sarbp_image *form_o(const sarbp_grid *g, const sarbp_bp_options *o, sarbp_form_stats *st)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, scene, g, &sarbp_backend_cpu, &rc, o, NULL, &img, st));
    return img;
}

static void assert_same(const sarbp_image *a, const sarbp_image *b, const char *what)
{
    const size_t n = a->grid.nx * a->grid.ny;
    if (memcmp(a->data, b->data, n * sizeof(sarbp_c32)))
        fail_msg("%s: images differ (SER %.1f dB)", what, tu_ser_c32(a->data, b->data, n));
    print_message("%s: bit-identical\n", what);
}

/* A budget (host_mem) that leaves room for `rows` image rows beside the
 * block buffers and, keep: the kept profiles. */
static size_t budget_for(const sarbp_grid *g, const sarbp_bp_options *o, size_t rows, int keep)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    const sarbp_bp_desc d = {scene, g, &rc, {0, g->ny}, 0, NULL, NULL, NULL, NULL};
    sarbp_plan_shape m;
    tu_ok(sarbp_backend_cpu.shape(&d, o, 0, &m));
    return m.fixed + rows * m.per_row + (keep ? scene->npulses * m.per_kept_pulse : 0);
}

static void test_banded_equals_one_piece(void **state)
{
    (void)state;
    const sarbp_grid g = grid(200, 150); /* 150: bands of 48 leave a last band of 6 rows */
    for (int prec = 0; prec < 2; prec++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        lim = (sarbp_form_limits){0};
        o.limits = &lim;
        o.precision = prec ? SARBP_FP64 : SARBP_FP32;
        sarbp_form_stats st;
        sarbp_image *one = form_o(&g, &o, &st);
        assert_int_equal(st.layout.nparts, 1);
        assert_int_equal(st.layout.part[0].bands, 1);
        /* a budget of 50 rows beside the blocks: bands of 48 (16-row aligned);
         * the profiles (4.9 MiB) are larger than this image and do not fit */
        lim.host_mem = budget_for(&g, &o, 50, 0);
        sarbp_image *banded = form_o(&g, &o, &st);
        const sarbp_form_part *pt = &st.layout.part[0];
        print_message("%s: budget %zu bytes: %zu bands of %zu rows, profiles %s\n",
                      sarbp_precision_name(o.precision), lim.host_mem, pt->bands, pt->band_rows,
                      pt->kept ? "kept" : "streamed");
        assert_int_equal(pt->band_rows, 48);
        assert_int_equal(pt->bands, 4);
        assert_int_equal(pt->kept, 0);
        assert_true(pt->need <= lim.host_mem);
        assert_same(banded, one, prec ? "fp64 banded (budget) vs one piece" : "fp32 banded (budget) vs one piece");
        sarbp_image_free(banded);
        /* bands of at most 50 rows with the budget open: profiles kept */
        lim.host_mem = 0;
        lim.band_rows = 50;
        banded = form_o(&g, &o, &st);
        assert_int_equal(pt->band_rows, 48);
        assert_int_equal(pt->bands, 4);
        assert_int_equal(pt->kept, 1);
        assert_same(banded, one, prec ? "fp64 banded (kept) vs one piece" : "fp32 banded (kept) vs one piece");
        sarbp_image_free(banded);
        sarbp_image_free(one);
    }
}

static void test_bands_that_split_tiles(void **state)
{
    (void)state;
    const sarbp_grid g = grid(200, 150);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    sarbp_image *one = form_o(&g, &o, NULL);
    lim.band_rows = 7; /* below a tile: bands of 7 rows cut every tile */
    sarbp_form_stats st;
    sarbp_image *banded = form_o(&g, &o, &st);
    assert_int_equal(st.layout.part[0].band_rows, 7);
    assert_int_equal(st.layout.part[0].bands, 22);
    const double ser = tu_ser_c32(banded->data, one->data, g.nx * g.ny);
    tu_bar_min(ser, SPLIT_TILE_SER_DB, SPLIT_TILE_HEADROOM_DB, "dB",
               "fp32 bands of 7 rows vs one piece, SER");
    sarbp_image_free(banded);
    sarbp_image_free(one);
}

static void test_resident_equals_streaming(void **state)
{
    (void)state;
    const sarbp_grid g = grid(160, 130);
    for (int prec = 0; prec < 2; prec++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        lim = (sarbp_form_limits){0};
        o.limits = &lim;
        o.precision = prec ? SARBP_FP64 : SARBP_FP32;
        o.pulse_block = 37; /* blocks that do not divide the 300 pulses */
        lim.band_rows = 32;
        sarbp_form_stats st;
        sarbp_image *kept = form_o(&g, &o, &st);
        assert_int_equal(st.layout.part[0].kept, 1);
        assert_int_equal(st.layout.part[0].bands, 5);
        assert_int_equal(st.pulses_read, scene->npulses); /* the input read once */
        lim.stream = 1;
        sarbp_image *streamed = form_o(&g, &o, &st);
        assert_int_equal(st.layout.part[0].kept, 0);
        assert_int_equal(st.layout.part[0].bands, 5);
        assert_int_equal(st.pulses_read, 5 * scene->npulses); /* once per band */
        assert_same(kept, streamed, prec ? "fp64 resident vs streaming" : "fp32 resident vs streaming");
        /* a budget with room for the bands but not the profiles streams */
        lim.stream = 0;
        lim.band_rows = 0;
        lim.host_mem = budget_for(&g, &o, 40, 0);
        sarbp_image *tight = form_o(&g, &o, &st);
        assert_int_equal(st.layout.part[0].kept, 0);
        assert_int_equal(st.layout.part[0].band_rows, 32);
        assert_same(tight, streamed, prec ? "fp64 streamed under a tight budget"
                                          : "fp32 streamed under a tight budget");
        sarbp_image_free(tight);
        sarbp_image_free(kept);
        sarbp_image_free(streamed);
    }
}

/* Runs a plan over the grid, executing the pulses in blocks of sizes[]
 * (cycled); keep: with kept profiles. */
static sarbp_c32 *plan_image(const sarbp_grid *g, sarbp_precision prec, const size_t *sizes,
                             size_t nsizes, size_t keep)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_c32 *img = calloc(g->nx * g->ny, sizeof *img);
    assert_non_null(img);
    const sarbp_bp_desc d = {scene, g, &rc, {0, g->ny}, keep, prec == SARBP_FP32 ? img : NULL, NULL, NULL, NULL};
    sarbp_cpu_options o;
    sarbp_cpu_options_default(&o);
    o.precision = prec;
    o.pulse_block = 64;
    sarbp_bp_plan *plan;
    sarbp_stage_times t = {0};
    tu_ok(sarbp_cpu_plan_create(&d, &o, &plan, &t));
    size_t p0 = 0;
    for (size_t k = 0; p0 < scene->npulses; k++) {
        size_t n = sizes[k % nsizes];
        if (n > scene->npulses - p0) n = scene->npulses - p0;
        const sarbp_c32 *s = scene->data + p0 * scene->nsamples;
        tu_ok(sarbp_bp_plan_execute(plan, p0, n, s, &t));
        p0 += n;
    }
    tu_ok(sarbp_bp_plan_finish(plan, img, &t));
    assert_true(t.bp_s > 0);
    sarbp_bp_plan_destroy(plan);
    return img;
}

static void test_plan_odd_blocks(void **state)
{
    (void)state;
    const sarbp_grid g = grid(90, 70);
    const size_t n = g.nx * g.ny;
    for (int prec = 0; prec < 2; prec++) {
        const sarbp_precision pr = prec ? SARBP_FP64 : SARBP_FP32;
        const size_t all[] = {300}, odd[] = {1, 7, 13, 64, 65, 3};
        sarbp_c32 *one = plan_image(&g, pr, all, 1, 0);
        sarbp_c32 *pieces = plan_image(&g, pr, odd, 6, 0);
        if (memcmp(one, pieces, n * sizeof *one))
            fail_msg("%s: odd blocks differ from one block (SER %.1f dB)", sarbp_precision_name(pr),
                     tu_ser_c32(pieces, one, n));
        sarbp_c32 *kept = plan_image(&g, pr, odd, 6, 300);
        if (memcmp(one, kept, n * sizeof *one))
            fail_msg("%s: odd blocks, profiles kept, differ from one block", sarbp_precision_name(pr));
        print_message("%s: blocks of 1, 7, 13, 64, 65, 3 pulses: bit-identical to one block\n",
                      sarbp_precision_name(pr));
        free(one);
        free(pieces);
        free(kept);
    }
}

/* Kept profiles backprojected again, in subsets and in another region, the
 * way autofocus would: the sum of the subsets is the whole. */
static void test_plan_kept_subsets(void **state)
{
    (void)state;
    const sarbp_grid g = grid(64, 48);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    const size_t n = g.nx * g.ny;
    sarbp_c32 *whole = calloc(n, sizeof *whole), *again = calloc(n, sizeof *again);
    assert_non_null(whole);
    assert_non_null(again);
    const sarbp_bp_desc d = {scene, &g, &rc, {0, g.ny}, scene->npulses, NULL, NULL, NULL, NULL};
    sarbp_cpu_options o;
    sarbp_cpu_options_default(&o);
    sarbp_bp_plan *plan;
    tu_ok(sarbp_cpu_plan_create(&d, &o, &plan, NULL));
    /* kept profiles of pulses not yet compressed are refused */
    assert_int_equal(sarbp_bp_plan_execute(plan, 0, 10, NULL, NULL), SARBP_ERR_INVALID);
    tu_ok(sarbp_bp_plan_execute(plan, 0, scene->npulses, scene->data, NULL));
    tu_ok(sarbp_bp_plan_finish(plan, whole, NULL));
    /* the same region again from the kept profiles, in three subsets */
    tu_ok(sarbp_bp_plan_region(plan, (sarbp_region){0, g.ny}));
    tu_ok(sarbp_bp_plan_execute(plan, 0, 100, NULL, NULL));
    tu_ok(sarbp_bp_plan_execute(plan, 100, 101, NULL, NULL));
    tu_ok(sarbp_bp_plan_execute(plan, 201, 99, NULL, NULL));
    tu_ok(sarbp_bp_plan_finish(plan, again, NULL));
    if (memcmp(whole, again, n * sizeof *whole)) fail_msg("kept profiles in subsets differ");
    /* a band of the same grid from the kept profiles: its rows of the whole */
    tu_ok(sarbp_bp_plan_region(plan, (sarbp_region){16, 16}));
    tu_ok(sarbp_bp_plan_execute(plan, 0, scene->npulses, NULL, NULL));
    tu_ok(sarbp_bp_plan_finish(plan, again, NULL));
    if (memcmp(whole + 16 * g.nx, again, 16 * g.nx * sizeof *whole))
        fail_msg("a band from kept profiles differs from its rows of the whole");
    /* regions larger than the plan's first, or outside the grid, are refused */
    assert_int_equal(sarbp_bp_plan_region(plan, (sarbp_region){40, 16}), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_bp_plan_execute(plan, 290, 20, NULL, NULL), SARBP_ERR_INVALID);
    sarbp_bp_plan_destroy(plan);
    sarbp_bp_plan_destroy(NULL);
    free(whole);
    free(again);
}

static void test_layout_refusals(void **state)
{
    (void)state;
    const sarbp_grid g = grid(200, 150);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    lim.host_mem = 1024; /* less than one block of profiles */
    sarbp_form_layout lay;
    assert_int_equal(sarbp_form_plan_layout(NULL, scene, &g, &sarbp_backend_cpu, &rc, &o, &lay),
                     SARBP_ERR_NOMEM);
    sarbp_image *img = NULL;
    assert_int_equal(sarbp_form_phd(NULL, scene, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                     SARBP_ERR_NOMEM);
    assert_null(img);
    /* the exact image keeps its spectra like every method (the plan
     * contract): bands over them form what one piece forms, bit for bit */
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    o.precision = SARBP_EXACT;
    lim.band_rows = 16;
    tu_ok(sarbp_form_plan_layout(NULL, scene, &g, &sarbp_backend_cpu, &rc, &o, &lay));
    assert_int_equal(lay.part[0].kept, 1);
    {
        const sarbp_grid ge = grid(24, 40);
        sarbp_form_stats st;
        sarbp_image *banded = form_o(&ge, &o, &st);
        assert_true(st.layout.part[0].bands > 1 && st.layout.part[0].kept);
        assert_int_equal(st.pulses_read, scene->npulses); /* each pulse read once */
        lim.band_rows = 0;
        sarbp_image *one = form_o(&ge, &o, &st);
        assert_int_equal(st.layout.part[0].bands, 1);
        assert_same(one, banded, "exact banded over kept spectra vs one piece");
        sarbp_image_free(one);
        sarbp_image_free(banded);
    }
    /* the cpu back end ignores a device list: one part */
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    o.ndevices = 2;
    o.devices[0] = 0;
    o.devices[1] = 1;
    tu_ok(sarbp_form_plan_layout(NULL, scene, &g, &sarbp_backend_cpu, &rc, &o, &lay));
    assert_int_equal(lay.nparts, 1);
}

/* The one contract (sarbp/backproject.h): every pulse once per region, in
 * order; a block written where stage said is taken as it is, the same as
 * from the caller's memory; the caller's memory is checked for NaN. */
static void test_plan_contract(void **state)
{
    (void)state;
    const sarbp_grid g = grid(32, 32);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_cpu_options co;
    sarbp_cpu_options_default(&co);
    co.pulse_block = 16;
    const sarbp_bp_desc d = {scene, &g, &rc, {0, g.ny}, 0, NULL, NULL, NULL, NULL};
    sarbp_plan_shape m;
    tu_ok(sarbp_cpu_plan_shape(&d, &co, 0, &m));
    assert_int_equal(m.block, 16);
    const size_t K = scene->nsamples, P = scene->npulses;
    sarbp_c32 *a = calloc(g.nx * g.ny, sizeof *a), *b = calloc(g.nx * g.ny, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (int staged = 0; staged < 2; staged++) {
        sarbp_bp_plan *p;
        tu_ok(sarbp_cpu_plan_create(&d, &co, &p, NULL));
        if (P > 32) /* out of order: refused */
            assert_int_equal(sarbp_bp_plan_execute(p, 16, 16, scene->data + 16 * K, NULL), SARBP_ERR_INVALID);
        for (size_t p0 = 0; p0 < P; p0 += 16) {
            const size_t np = P - p0 < 16 ? P - p0 : 16;
            const sarbp_c32 *x = scene->data + p0 * K;
            if (staged) {
                sarbp_c32 *buf;
                tu_ok(sarbp_bp_plan_stage(p, p0, np, &buf));
                memcpy(buf, x, np * K * sizeof *buf);
                x = buf;
            }
            tu_ok(sarbp_bp_plan_execute(p, p0, np, x, NULL));
        }
        tu_ok(sarbp_bp_plan_finish(p, staged ? b : a, NULL));
        sarbp_bp_plan_destroy(p);
    }
    if (memcmp(a, b, g.nx * g.ny * sizeof *a)) fail_msg("staged vs the caller's memory: images differ");
    print_message("staged blocks vs the caller's memory: bit-identical\n");
    /* a NaN in the caller's memory: refused, naming the pulse */
    sarbp_bp_plan *p;
    tu_ok(sarbp_cpu_plan_create(&d, &co, &p, NULL));
    sarbp_c32 *x = malloc(16 * K * sizeof *x);
    assert_non_null(x);
    memcpy(x, scene->data, 16 * K * sizeof *x);
    x[3 * K + 1].im = NAN;
    assert_int_equal(sarbp_bp_plan_execute(p, 0, 16, x, NULL), SARBP_ERR_INVALID);
    print_message("NaN refused: %s\n", sarbp_error_detail());
    assert_non_null(strstr(sarbp_error_detail(), "pulse 3"));
    sarbp_bp_plan_destroy(p);
    free(x);
    free(a);
    free(b);
}

/* A stand-in multi-device back end: the CPU plan behind a registry row that
 * takes a device list, so the partition layer's threads run here. Each
 * "device" counts its calls. */
static int fake_calls[4];

static int fake_available(const sarbp_bp_options *o)
{
    (void)o;
    return 1;
}

static sarbp_status fake_memory(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                                sarbp_plan_shape *m)
{
    (void)device;
    return sarbp_backend_cpu.shape(d, o, 0, m);
}

static sarbp_status fake_create(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                                sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    if (device < 0 || device >= 4) return sarbp_error(SARBP_ERR_NODEVICE, "no fake device %d", device);
    __atomic_add_fetch(&fake_calls[device], 1, __ATOMIC_SEQ_CST);
    if (device == 3) return sarbp_error(SARBP_ERR_NODEVICE, "fake device 3 is broken");
    return sarbp_backend_cpu.create(d, o, 0, out, stats);
}

static const sarbp_backend fake_multi = {"fake", 1, fake_available, fake_memory, fake_create};

/* o: the defaults, one thread a part and the tests' limits reset; the
 * image of g in one piece with them; then o names the three fake devices
 * 2, 0 and 1. */
static sarbp_image *one_then_three(const sarbp_grid *g, sarbp_bp_options *o)
{
    sarbp_bp_options_default(o);
    lim = (sarbp_form_limits){0};
    o->limits = &lim;
    o->threads = 1;
    sarbp_image *one = form_o(g, o, NULL);
    o->ndevices = 3;
    o->devices[0] = 2;
    o->devices[1] = 0;
    o->devices[2] = 1;
    return one;
}

static void test_devices_threads(void **state)
{
    (void)state;
    const sarbp_grid g = grid(120, 200);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_image *one = one_then_three(&g, &o);
    sarbp_form_stats st;
    sarbp_image *three;
    tu_ok(sarbp_form_phd(NULL, scene, &g, &fake_multi, &rc, &o, NULL, &three, &st));
    assert_int_equal(st.layout.nparts, 3);
    size_t next = 0;
    for (int k = 0; k < 3; k++) {
        const sarbp_form_part *pt = &st.layout.part[k];
        print_message("device %d: rows %zu to %zu, %zu band(s), %.3f s\n", pt->device, pt->row0,
                      pt->row0 + pt->nrows, pt->bands, st.dev[k].total_s);
        assert_int_equal(pt->device, o.devices[k]);
        assert_int_equal(pt->row0, next);
        assert_int_equal(pt->row0 % 16, 0);
        next = pt->row0 + pt->nrows;
        assert_true(st.dev[k].pairs > 0);
    }
    assert_int_equal(next, g.ny);
    assert_same(three, one, "three threaded parts vs one piece");
    sarbp_image_free(three);
    /* each part in bands of its own, profiles kept */
    lim.band_rows = 20;
    tu_ok(sarbp_form_phd(NULL, scene, &g, &fake_multi, &rc, &o, NULL, &three, &st));
    for (int k = 0; k < 3; k++) assert_true(st.layout.part[k].bands >= 3 && st.layout.part[k].kept);
    assert_same(three, one, "three threaded parts in bands vs one piece");
    sarbp_image_free(three);
    /* a failing device fails the form, saying which */
    o.devices[1] = 3;
    sarbp_image *bad = NULL;
    assert_int_equal(sarbp_form_phd(NULL, scene, &g, &fake_multi, &rc, &o, NULL, &bad, NULL),
                     SARBP_ERR_NODEVICE);
    assert_null(bad);
    assert_non_null(strstr(sarbp_error_detail(), "device 3: fake device 3 is broken"));
    /* more devices than 16-row units: no empty share */
    const sarbp_grid small = grid(40, 20);
    lim.band_rows = 0;
    o.devices[1] = 0;
    tu_ok(sarbp_form_phd(NULL, scene, &small, &fake_multi, &rc, &o, NULL, &three, &st));
    assert_int_equal(st.layout.nparts, 2);
    sarbp_image_free(three);
    sarbp_image_free(one);
}

/* What the rows hook saw: each row's count, the calls; fail_at: the call
 * that fails (0: none). */
static struct {
    pthread_mutex_t mu;
    unsigned char seen[256];
    int calls, fail_at;
    sarbp_npy_stream *ns;
} hook = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, NULL};

static sarbp_status hook_rows(void *user, size_t row0, size_t nrows, const sarbp_c32 *rows)
{
    assert_ptr_equal(user, &hook);
    pthread_mutex_lock(&hook.mu);
    const int call = ++hook.calls;
    for (size_t r = row0; r < row0 + nrows && r < sizeof hook.seen; r++) hook.seen[r]++;
    pthread_mutex_unlock(&hook.mu);
    if (call == hook.fail_at) return sarbp_error(SARBP_ERR_IO, "the hook's write failed");
    return hook.ns ? sarbp_npy_stream_rows(hook.ns, row0, nrows, rows) : SARBP_OK;
}

/* A form asked for bands (sarbp_form_request.bands_min) with a rows hook,
 * on three threaded parts: each part in at least that many bands over kept
 * profiles, the hook given every row once, as the bands finish; the image
 * is one piece's bit for bit, and a .npy written from the hook's rows is
 * the whole-image writer's file. Where the profiles may not be kept, as
 * few bands as fit; a hook that fails fails the form. */
static void test_rows_as_bands_form(void **state)
{
    (void)state;
    const sarbp_grid g = grid(120, 200);
    sarbp_bp_options o;
    sarbp_image *one = one_then_three(&g, &o);
    sarbp_form_request req = {.backend = &fake_multi, .grid = g, .bp = o, .bands_min = 4,
                              .on_rows = hook_rows, .on_rows_user = &hook};
    sarbp_rc_params_default(&req.rc);
    req.interp_given = req.upsample_given = 1;
    const char *dir = tu_fresh_dir("partition_rows");
    const char *npy = tu_in_dir(dir, "rows.npy"), *whole = tu_in_dir(dir, "whole.npy");
    for (int round = 0; round < 3; round++) {
        memset(hook.seen, 0, sizeof hook.seen);
        hook.calls = 0;
        hook.fail_at = round == 2 ? 2 : 0;
        lim.stream = round == 1;
        sarbp_form_plan *fp;
        tu_ok(sarbp_form_plan_create(NULL, scene, &req, &fp));
        const sarbp_form_layout *lay = &sarbp_form_plan_decision(fp)->layout;
        assert_int_equal(lay->nparts, 3);
        size_t bands = 0;
        for (int k = 0; k < 3; k++) {
            const sarbp_form_part *pt = &lay->part[k];
            print_message("round %d, device %d: rows %zu to %zu in %zu band(s) of %zu, profiles %s\n",
                          round, pt->device, pt->row0, pt->row0 + pt->nrows, pt->bands, pt->band_rows,
                          pt->kept ? "kept" : "not kept");
            if (pt->bands > 1) assert_int_equal(pt->band_rows % 16, 0);
            if (round == 1) assert_int_equal(pt->bands, 1); /* no kept profiles: no bands for it */
            else assert_true(pt->bands >= 4 && pt->kept);
            bands += pt->bands;
        }
        sarbp_image *img;
        tu_ok(sarbp_image_alloc(&g, &img));
        if (round == 0) tu_ok(sarbp_npy_stream_open(npy, g.ny, g.nx, &hook.ns));
        const sarbp_status st = sarbp_form_plan_execute(fp, NULL, scene, NULL, img->data, 1, NULL);
        sarbp_form_plan_free(fp);
        if (round == 2) {
            assert_int_equal(st, SARBP_ERR_IO);
            assert_non_null(strstr(sarbp_error_detail(), "the hook's write failed"));
            sarbp_image_free(img);
            continue;
        }
        tu_ok(st);
        assert_int_equal(hook.calls, (int)bands);
        for (size_t r = 0; r < g.ny; r++) assert_int_equal(hook.seen[r], 1);
        assert_same(img, one, round ? "three parts, one band each, with the hook"
                                    : "three parts in bands for the hook vs one piece");
        if (round == 0) {
            tu_ok(sarbp_npy_stream_finish(hook.ns));
            sarbp_npy_stream *ctx_npy[1] = {hook.ns};
            const sarbp_image_context ctx = {.npy = ctx_npy};
            tu_ok(sarbp_image_write_all_ctx(&npy, 1, img, 50, &ctx));
            sarbp_npy_stream_free(hook.ns);
            hook.ns = NULL;
            tu_ok(sarbp_image_write(whole, img, 50));
            sarbp_image *a, *b;
            tu_ok(sarbp_image_read(npy, &a));
            tu_ok(sarbp_image_read(whole, &b));
            assert_same(a, b, "the .npy written band by band vs the whole image's");
            sarbp_image_free(a);
            sarbp_image_free(b);
        }
        sarbp_image_free(img);
    }
    tu_no_temporaries(dir);
    sarbp_image_free(one);
}

/* sarbp_form_phd_into: into an image full of garbage, reused, banded, on
 * the FP32 path that accumulates in place (which needs the image zeroed
 * first) and the FP64 one that copies: the same pixels as a fresh image;
 * an image of another size is refused. */
static void test_form_into(void **state)
{
    (void)state;
    const sarbp_grid g = grid(120, 90);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    for (int prec = 0; prec < 2; prec++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        lim = (sarbp_form_limits){0};
        o.limits = &lim;
        o.precision = prec ? SARBP_FP64 : SARBP_FP32;
        sarbp_image *fresh = form_o(&g, &o, NULL), *into;
        tu_ok(sarbp_image_alloc(&g, &into));
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < g.nx * g.ny; i++) into->data[i] = (sarbp_c32){1e30f, -7.0f};
            if (pass) lim.host_mem = budget_for(&g, &o, 20, 0); /* bands of 20 rows */
            sarbp_form_stats st;
            tu_ok(sarbp_form_phd_into(NULL, scene, &g, &sarbp_backend_cpu, &rc, &o, NULL, into, &st));
            assert_true(pass == 0 || st.layout.part[0].bands > 1);
            assert_same(into, fresh, prec ? "form into, fp64" : "form into, fp32");
        }
        sarbp_image_free(fresh);
        const sarbp_grid other = grid(121, 90);
        assert_int_equal(sarbp_form_phd_into(NULL, scene, &other, &sarbp_backend_cpu, &rc, &o, NULL, into, NULL),
                         SARBP_ERR_INVALID);
        sarbp_image_free(into);
    }
}

/* The samples of an in-memory phase history are checked block by block as
 * form reads them: a NaN or Inf anywhere (each float of a few samples, in
 * the scan's chunks and at their edges) is refused naming its sample and
 * pulse, and no image comes back. */
static void test_form_refuses_nonfinite_samples(void **state)
{
    (void)state;
    const sarbp_grid g = grid(40, 30);
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    const size_t K = scene->nsamples, n = scene->npulses * K;
    const size_t at[] = {0, 1, 2047, 2048, K + 3, n / 2, n - 1};
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t a = 0; a < sizeof at / sizeof at[0]; a++)
        for (int part = 0; part < 2; part++) {
            const size_t i = at[a];
            float *f = part ? &scene->data[i].im : &scene->data[i].re;
            const float keep = *f;
            *f = bad[(a + (size_t)part) % 3];
            assert_int_equal(sarbp_phd_check_samples(scene, 0, scene->npulses, scene->data),
                             SARBP_ERR_INVALID);
            sarbp_image *img = (sarbp_image *)1;
            assert_int_equal(sarbp_form_phd(NULL, scene, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                             SARBP_ERR_INVALID);
            assert_null(img);
            char want[80];
            snprintf(want, sizeof want, "sample %zu of pulse %zu is NaN or Inf", i % K, i / K);
            assert_non_null(strstr(sarbp_error_detail(), want));
            /* three devices sharing the blocks they read: every one stops,
             * none waits for ever, and the message is the read's */
            sarbp_bp_options om = o;
            om.ndevices = 3;
            om.devices[0] = 0, om.devices[1] = 1, om.devices[2] = 2;
            img = (sarbp_image *)1;
            assert_int_equal(sarbp_form_phd(NULL, scene, &g, &fake_multi, &rc, &om, NULL, &img, NULL),
                             SARBP_ERR_INVALID);
            assert_null(img);
            assert_non_null(strstr(sarbp_error_detail(), want));
            *f = keep;
        }
    tu_ok(sarbp_phd_check_samples(scene, 0, scene->npulses, scene->data));
}

/* A block large enough to be scanned in parts on several threads: the
 * first bad float of the block is named, whichever part finds one first,
 * and one at the very end is found too. */
static void test_large_block_check_names_first(void **state)
{
    (void)state;
    const size_t K = 1000, P = 700, n = K * P; /* 5.3 MiB: six parts */
    sarbp_phd m;
    memset(&m, 0, sizeof m);
    m.nsamples = K;
    sarbp_c32 *x = calloc(n, sizeof *x);
    assert_non_null(x);
    tu_ok(sarbp_phd_check_samples(&m, 0, P, x));
    const size_t at[][2] = {{n - 1, n - 1}, {5 * n / 6, n / 7}, {n / 2 + 3, 262144 / 2 - 1}, {3, 2}};
    for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
        x[at[a][0]].im = NAN;
        x[at[a][1]].re = INFINITY;
        const size_t first = at[a][0] < at[a][1] ? at[a][0] : at[a][1];
        assert_int_equal(sarbp_phd_check_samples(&m, 10, P, x), SARBP_ERR_INVALID);
        char want[80];
        snprintf(want, sizeof want, "sample %zu of pulse %zu is NaN or Inf", first % K, 10 + first / K);
        assert_non_null(strstr(sarbp_error_detail(), want));
        x[at[a][0]].im = 0;
        x[at[a][1]].re = 0;
    }
    free(x);
}

/* The copy that checks as it copies (a plan staging its samples,
 * sarbp_plan_shape.checks): every byte copied when all are finite; else the
 * first NaN or Inf named, wherever it lies against the 4096-float chunks
 * it checks in, and named as sarbp_phd_check_samples names it. */
static void test_copy_checked(void **state)
{
    (void)state;
    const size_t K = 300, P = 50, n = 2 * K * P; /* 30000 floats: 7 chunks, the last partial */
    sarbp_phd m;
    memset(&m, 0, sizeof m);
    m.nsamples = K;
    float *src = malloc(n * sizeof *src), *dst = malloc(n * sizeof *dst);
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < n; i++) src[i] = (float)i - 7.5f;
    memset(dst, 0xff, n * sizeof *dst);
    assert_int_equal(sarbp_samples_copy_checked(dst, src, n), n);
    assert_memory_equal(dst, src, n * sizeof *dst);
    assert_int_equal(sarbp_samples_copy_checked(dst, src, 0), 0);
    const size_t at[] = {0, 1, 4095, 4096, 4097, 8191, 2 * K + 5, n - 2, n - 1};
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
        const float keep = src[at[a]];
        src[at[a]] = bad[a % 3];
        if (at[a] + 9 < n) src[at[a] + 9] = NAN; /* a later one is not the one named */
        assert_int_equal(sarbp_samples_copy_checked(dst, src, n), at[a]);
        assert_int_equal(sarbp_phd_bad_sample(&m, 10, at[a]), SARBP_ERR_INVALID);
        char want[80];
        snprintf(want, sizeof want, "sample %zu of pulse %zu is NaN or Inf", (at[a] / 2) % K, 10 + at[a] / 2 / K);
        assert_non_null(strstr(sarbp_error_detail(), want));
        assert_int_equal(sarbp_phd_check_samples(&m, 10, P, (const sarbp_c32 *)src), SARBP_ERR_INVALID);
        assert_non_null(strstr(sarbp_error_detail(), want));
        src[at[a]] = keep;
        if (at[a] + 9 < n) src[at[a] + 9] = (float)(at[a] + 9) - 7.5f;
    }
    free(src);
    free(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_into),
        cmocka_unit_test(test_form_refuses_nonfinite_samples),
        cmocka_unit_test(test_large_block_check_names_first),
        cmocka_unit_test(test_copy_checked),
        cmocka_unit_test(test_banded_equals_one_piece),
        cmocka_unit_test(test_bands_that_split_tiles),
        cmocka_unit_test(test_resident_equals_streaming),
        cmocka_unit_test(test_plan_odd_blocks),
        cmocka_unit_test(test_plan_kept_subsets),
        cmocka_unit_test(test_layout_refusals),
        cmocka_unit_test(test_plan_contract),
        cmocka_unit_test(test_devices_threads),
        cmocka_unit_test(test_rows_as_bands_form),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
