/* test_session.c - the session (sarbp/session.h) on the CPU:
 *  - no library thread is alive after sarbp_session_free, nor after a form
 *    without a session (the threads of /proc/self/task counted);
 *  - two sessions in one process share nothing: each one's host account
 *    sees only its own plans, and forms interleaved in both give the
 *    image of a form without a session, bit for bit;
 *  - a plan never allocates past the session's host budget: a banded form
 *    in a small budget peaks within it and gives the one-piece image; a
 *    plan that would pass it fails at create, saying so, and takes nothing.
 * The CUDA side (device contexts, copier threads, device budget) is
 * test_gpu_session.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

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

static const sarbp_grid g0 = {200, 150, 0.25, 0.25, 1.5, -2.0, 0, 0, 0, NULL, 0};

static sarbp_image *form_in(sarbp_session *s, const sarbp_bp_options *o, sarbp_form_stats *st)
{
    return tu_form_in(s, scene, &g0, &sarbp_backend_cpu, o, st);
}

static void test_no_thread_after_free(void **state)
{
    (void)state;
    const int before = tu_threads_alive();
    assert_true(before >= 1);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    o.threads = 4;
    sarbp_session *s = NULL;
    tu_ok(sarbp_session_create(NULL, &s));
    for (int k = 0; k < 2; k++) { /* bp, then ffbp, in one session */
        o.algorithm = k ? SARBP_ALGO_FFBP : SARBP_ALGO_BP;
        sarbp_image *img = form_in(s, &o, NULL);
        sarbp_image_free(img);
    }
    sarbp_session_free(s);
    assert_int_equal(tu_threads_alive(), before);
    /* without a session: the form's own, freed before it returns */
    sarbp_image *img = form_in(NULL, &o, NULL);
    sarbp_image_free(img);
    assert_int_equal(tu_threads_alive(), before);
    sarbp_session_free(NULL); /* a no-op */
}

static void test_two_sessions_share_nothing(void **state)
{
    (void)state;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    sarbp_image *ref = form_in(NULL, &o, NULL);
    sarbp_session_options so;
    sarbp_session_options_default(&so);
    so.host_budget = (size_t)64 << 20;
    sarbp_session *a = NULL, *b = NULL;
    tu_ok(sarbp_session_create(&so, &a));
    tu_ok(sarbp_session_create(NULL, &b));
    /* a plan alive in a is counted in a alone */
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    const sarbp_bp_desc d = {scene, &g0, &rc, {0, g0.ny}, 0, NULL, a, NULL, NULL};
    sarbp_cpu_options co;
    sarbp_cpu_options_default(&co);
    sarbp_bp_plan *plan = NULL;
    tu_ok(sarbp_cpu_plan_create(&d, &co, &plan, NULL));
    sarbp_session_memory ma, mb;
    sarbp_session_memory_of(a, -1, &ma);
    sarbp_session_memory_of(b, -1, &mb);
    assert_true(ma.used > 0);
    assert_int_equal(ma.budget, so.host_budget);
    assert_int_equal(mb.used, 0);
    assert_int_equal(mb.budget, SIZE_MAX);
    sarbp_bp_plan_destroy(plan);
    sarbp_session_memory_of(a, -1, &ma);
    assert_int_equal(ma.used, 0);
    /* forms interleaved in both: the image of a form without a session */
    for (int k = 0; k < 4; k++) {
        sarbp_image *img = form_in(k % 2 ? b : a, &o, NULL);
        tu_assert_same(img, ref, k % 2 ? "session b" : "session a");
        sarbp_image_free(img);
    }
    sarbp_session_memory_of(a, -1, &ma);
    sarbp_session_memory_of(b, -1, &mb);
    assert_int_equal(ma.used, 0);
    assert_int_equal(mb.used, 0);
    assert_true(ma.peak > 0 && ma.peak <= so.host_budget);
    assert_true(mb.peak > 0);
    /* no device was used by either */
    sarbp_session_memory_of(a, 0, &ma);
    assert_int_equal(ma.budget, 0);
    sarbp_session_free(a);
    sarbp_session_free(b);
    sarbp_image_free(ref);
}

static void test_budget_is_a_bound(void **state)
{
    (void)state;
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    lim = (sarbp_form_limits){0};
    o.limits = &lim;
    o.precision = SARBP_FP64; /* its own accumulation buffer: an image band costs memory */
    sarbp_image *ref = form_in(NULL, &o, NULL);
    /* the plan's memory for the whole image, as the model counts it */
    sarbp_plan_shape m;
    sarbp_cpu_options co;
    sarbp_cpu_options_default(&co);
    co.precision = o.precision;
    const sarbp_bp_desc whole = {scene, &g0, &rc, {0, g0.ny}, 0, NULL, NULL, NULL, NULL};
    tu_ok(sarbp_cpu_plan_shape(&whole, &co, 0, &m));
    const size_t one_piece = m.fixed + g0.ny * m.per_row;
    for (int keep = 0; keep < 2; keep++) {
        /* room for about a third of the rows; keep: bands of 48 rows and
         * the profiles beside them */
        sarbp_session_options so;
        sarbp_session_options_default(&so);
        so.host_budget = m.fixed + g0.ny / 3 * m.per_row + (keep ? scene->npulses * m.per_kept_pulse : 0);
        lim.band_rows = keep ? 48 : 0;
        assert_true(so.host_budget < one_piece + (keep ? scene->npulses * m.per_kept_pulse : 0));
        sarbp_session *s = NULL;
        tu_ok(sarbp_session_create(&so, &s));
        sarbp_form_layout lay;
        tu_ok(sarbp_form_plan_layout(s, scene, &g0, &sarbp_backend_cpu, &rc, &o, &lay));
        assert_true(lay.part[0].bands > 1);
        assert_int_equal(lay.part[0].kept, keep);
        assert_true(lay.part[0].need <= so.host_budget);
        sarbp_form_stats st;
        sarbp_image *img = form_in(s, &o, &st);
        tu_assert_same(img, ref, keep ? "banded, kept profiles" : "banded");
        sarbp_image_free(img);
        sarbp_session_memory mem;
        sarbp_session_memory_of(s, -1, &mem);
        print_message("budget %.2f MiB: %zu bands of %zu rows (%s), peak %.2f MiB\n",
                      so.host_budget / 1048576.0, st.layout.part[0].bands, st.layout.part[0].band_rows,
                      st.layout.part[0].kept ? "kept" : "streamed", mem.peak / 1048576.0);
        assert_true(mem.peak > 0 && mem.peak <= so.host_budget);
        assert_int_equal(mem.used, 0);
        /* a plan for the whole image (keep: and the profiles) would pass
         * the budget: refused at create, saying so, and nothing is held */
        sarbp_bp_desc d = whole;
        d.session = s;
        d.keep_pulses = keep ? scene->npulses : 0;
        sarbp_bp_plan *plan = NULL;
        assert_int_equal(sarbp_cpu_plan_create(&d, &co, &plan, NULL), SARBP_ERR_NOMEM);
        assert_null(plan);
        assert_non_null(strstr(sarbp_error_detail(), "budget"));
        sarbp_session_memory_of(s, -1, &mem);
        assert_int_equal(mem.used, 0);
        sarbp_session_free(s);
    }
    /* the form's own host_mem is at most what the session leaves */
    sarbp_session_options so;
    sarbp_session_options_default(&so);
    so.host_budget = 1024; /* less than one block of profiles */
    sarbp_session *s = NULL;
    tu_ok(sarbp_session_create(&so, &s));
    lim.host_mem = (size_t)1 << 40;
    lim.band_rows = 0;
    sarbp_form_layout lay;
    assert_int_equal(sarbp_form_plan_layout(s, scene, &g0, &sarbp_backend_cpu, &rc, &o, &lay),
                     SARBP_ERR_NOMEM);
    sarbp_session_free(s);
    sarbp_image_free(ref);
}

/* The session's FFBP decision is kept by value: asked again with equal
 * inputs it answers at once with the same factorization; with positions
 * refilled in place (the same address) it chooses again, as a fresh
 * choice does; two sessions keep their own. */
static void test_ffbp_decision_by_value(void **state)
{
    (void)state;
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_rc_params_default_for(&rc, SARBP_FP32, 1);
    const sarbp_grid g = {256, 256, 0.1, 0.1, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_session *s = NULL;
    tu_ok(sarbp_session_create(NULL, &s));
    sarbp_ffbp_params a, b, fresh;
    sarbp_ffbp_prediction pa, pb, pf;
    double t = sarbp_now_s();
    tu_ok(sarbp_session_ffbp_choose(s, scene, &rc, &g, -60, &a, &pa));
    const double first = sarbp_now_s() - t;
    t = sarbp_now_s();
    tu_ok(sarbp_session_ffbp_choose(s, scene, &rc, &g, -60, &b, &pb));
    const double again = sarbp_now_s() - t;
    print_message("ffbp decision: %.2f ms, then %.3f ms from the session\n", first * 1e3,
                  again * 1e3);
    tu_ok(sarbp_ffbp_choose_phd(scene, &rc, &g, -60, &fresh, &pf));
    assert_memory_equal(&a, &fresh, sizeof a);
    assert_memory_equal(&b, &fresh, sizeof b);
    assert_true(pa.error_db == pf.error_db && pb.error_db == pf.error_db);
    /* another error target or grid is another key */
    tu_ok(sarbp_session_ffbp_choose(s, scene, &rc, &g, -80, &b, &pb));
    tu_ok(sarbp_ffbp_choose_phd(scene, &rc, &g, -80, &fresh, &pf));
    assert_memory_equal(&b, &fresh, sizeof b);
    /* the same phase history refilled in place: a far shorter track */
    const size_t P = scene->npulses;
    double *keep = malloc(3 * P * sizeof *keep);
    assert_non_null(keep);
    memcpy(keep, scene->pos, 3 * P * sizeof *keep);
    const double *p0 = scene->pos, *p1 = scene->pos + 3 * (P - 1);
    for (size_t i = 0; i < P; i++)
        for (int k = 0; k < 3; k++) /* a tenth of the aperture, about its middle */
            scene->pos[3 * i + k] = 0.5 * (keep[k] + keep[3 * (P - 1) + k]) +
                                    0.1 * ((double)i / (double)(P - 1) - 0.5) * (p1[k] - p0[k]);
    tu_ok(sarbp_session_ffbp_choose(s, scene, &rc, &g, -60, &b, &pb));
    tu_ok(sarbp_ffbp_choose_phd(scene, &rc, &g, -60, &fresh, &pf));
    /* the refill must change the decision, or this could not fail */
    assert_true(pf.error_db != pa.error_db || memcmp(&fresh, &a, sizeof a));
    assert_memory_equal(&b, &fresh, sizeof b);
    assert_true(pb.error_db == pf.error_db);
    memcpy(scene->pos, keep, 3 * P * sizeof *keep);
    free(keep);
    sarbp_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_thread_after_free),
        cmocka_unit_test(test_two_sessions_share_nothing),
        cmocka_unit_test(test_budget_is_a_bound),
        cmocka_unit_test(test_ffbp_decision_by_value),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
