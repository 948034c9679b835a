/* test_gpu_session.c - the session's CUDA side (sarbp/session.h):
 *  - no library thread is alive after sarbp_session_free: the copier's
 *    lanes a session keeps between forms are joined (the threads of
 *    /proc/self/task counted, after a first form has started the CUDA
 *    driver's own threads, which live as long as the process);
 *  - two sessions in one process share nothing: what one keeps for its
 *    next plan is its own, a device the other never used has no context
 *    in it, and forms in both give the image of a form without a session,
 *    bit for bit; freeing one leaves the other working;
 *  - forms from three threads share one warmed session side by side (the
 *    direct kernels in FP32 and FP16, FFBP, in turns), each the image of
 *    the same form alone without a session, bit for bit; the session keeps
 *    at most four sets of each kind for them, and frees every thread;
 *  - a plan never allocates past the session's device budget: a form in a
 *    budget of the model's fixed need and 3/4 of the image is cut in bands
 *    and peaks within it (bp and ffbp), and a plan that would pass it
 *    fails at create, saying so, holding nothing beyond what the session
 *    keeps.
 * Skips (77) without a usable GPU. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* Bands against one piece: direct backprojection's bar in
 * test_gpu_partition; FFBP's bands are factorized apart (polar grids of
 * their own), each within the -60 dB asked of direct backprojection. */
#define PIECES_DB 120.0
#define FFBP_PIECES_DB 50.0

static sarbp_phd *scene;
static const sarbp_grid g0 = {512, 480, 0.15, 0.15, 0, 0, 0, 0, 0, NULL, 0};

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

static sarbp_image *form_in(sarbp_session *s, const sarbp_bp_options *o, sarbp_form_stats *st)
{
    return tu_form_in(s, scene, &g0, &sarbp_backend_cuda, o, st);
}

static void test_no_thread_after_free(void **state)
{
    (void)state;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    for (int k = 0; k < 2; k++) { /* the driver's threads start with the first forms */
        o.algorithm = k ? SARBP_ALGO_FFBP : SARBP_ALGO_BP;
        sarbp_image_free(form_in(NULL, &o, NULL));
    }
    const int before = tu_threads_alive();
    sarbp_session *s = NULL;
    tu_ok(sarbp_session_create(NULL, &s));
    for (int k = 0; k < 4; k++) {
        o.algorithm = k % 2 ? SARBP_ALGO_FFBP : SARBP_ALGO_BP;
        sarbp_image_free(form_in(s, &o, NULL));
    }
    const int during = tu_threads_alive();
    sarbp_session_memory m;
    sarbp_session_memory_of(s, 0, &m);
    print_message("threads: %d before the session, %d while it keeps its copier, %d MiB kept\n", before,
                  during, (int)(m.kept >> 20));
    assert_true(m.kept > 0); /* the last plan's set */
    sarbp_session_free(s);
    const int after = tu_threads_alive();
    print_message("threads after sarbp_session_free: %d\n", after);
    assert_int_equal(after, before);
}

static void test_two_sessions_share_nothing(void **state)
{
    (void)state;
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    sarbp_image *ref = form_in(NULL, &o, NULL);
    sarbp_session *a = NULL, *b = NULL;
    tu_ok(sarbp_session_create(NULL, &a));
    tu_ok(sarbp_session_create(NULL, &b));
    sarbp_image *img = form_in(a, &o, NULL);
    tu_assert_same(img, ref, "session a");
    sarbp_image_free(img);
    sarbp_session_memory ma, mb;
    sarbp_session_memory_of(a, 0, &ma);
    sarbp_session_memory_of(b, 0, &mb);
    assert_true(ma.kept > 0 && ma.kept == ma.used); /* no plan alive: all of it kept */
    assert_int_equal(mb.budget, 0);                 /* b never opened the device */
    for (int k = 0; k < 4; k++) {
        img = form_in(k % 2 ? a : b, &o, NULL);
        tu_assert_same(img, ref, k % 2 ? "session a again" : "session b");
        sarbp_image_free(img);
    }
    sarbp_session_free(a);
    img = form_in(b, &o, NULL); /* b's own resources, untouched by a's end */
    tu_assert_same(img, ref, "session b after a was freed");
    sarbp_image_free(img);
    sarbp_session_free(b);
    sarbp_image_free(ref);
}

/* test_forms_share_a_session: a thread's forms, its failures counted */
#define SHARE_KINDS 3
#define SHARE_THREADS 3
#define SHARE_FORMS 4
static sarbp_image *share_ref[SHARE_KINDS];

static void share_options(int kind, sarbp_bp_options *o)
{
    sarbp_bp_options_default(o);
    if (kind == 1) o->precision = SARBP_FP16;
    if (kind == 2) o->algorithm = SARBP_ALGO_FFBP;
}

struct share_job {
    sarbp_session *s;
    int id, bad;
};

static void *share_main(void *arg)
{
    struct share_job *j = arg;
    for (int k = 0; k < SHARE_FORMS; k++) {
        const int kind = (j->id + k) % SHARE_KINDS;
        sarbp_bp_options o;
        share_options(kind, &o);
        sarbp_image *img = NULL;
        sarbp_rc_params rc; /* as tu_form_in's */
        sarbp_rc_params_default(&rc);
        sarbp_rc_params_default_for(&rc, o.precision, o.algorithm == SARBP_ALGO_FFBP);
        if (sarbp_form_phd(j->s, scene, &g0, &sarbp_backend_cuda, &rc, &o, NULL, &img, NULL) ||
            memcmp(img->data, share_ref[kind]->data, g0.nx * g0.ny * sizeof(sarbp_c32)))
            j->bad++;
        sarbp_image_free(img);
    }
    return NULL;
}

static void test_forms_share_a_session(void **state)
{
    (void)state;
    for (int kind = 0; kind < SHARE_KINDS; kind++) {
        sarbp_bp_options o;
        share_options(kind, &o);
        share_ref[kind] = form_in(NULL, &o, NULL);
    }
    const int before = tu_threads_alive();
    sarbp_session *s = NULL;
    tu_ok(sarbp_session_create(NULL, &s));
    const int dev0 = 0;
    tu_ok(sarbp_form_warm(s, &dev0, 1));
    struct share_job jobs[SHARE_THREADS];
    pthread_t th[SHARE_THREADS];
    for (int t = 0; t < SHARE_THREADS; t++) {
        jobs[t] = (struct share_job){s, t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, share_main, &jobs[t]), 0);
    }
    int bad = 0;
    for (int t = 0; t < SHARE_THREADS; t++) {
        pthread_join(th[t], NULL);
        bad += jobs[t].bad;
    }
    sarbp_session_memory m;
    sarbp_session_memory_of(s, 0, &m);
    print_message("%d forms in %d threads sharing a session: %d not the image alone; %d MiB kept, "
                  "%d MiB at the peak\n", SHARE_THREADS * SHARE_FORMS, SHARE_THREADS, bad,
                  (int)(m.kept >> 20), (int)(m.peak >> 20));
    assert_int_equal(bad, 0);
    assert_true(m.kept > 0 && m.kept == m.used); /* no plan alive: all of it kept */
    sarbp_session_free(s);
    assert_int_equal(tu_threads_alive(), before);
    for (int kind = 0; kind < SHARE_KINDS; kind++) sarbp_image_free(share_ref[kind]);
}

static void test_budget_is_a_bound(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.algorithm = f ? SARBP_ALGO_FFBP : SARBP_ALGO_BP;
        sarbp_form_stats st;
        sarbp_session *s = NULL;
        tu_ok(sarbp_session_create(NULL, &s));
        sarbp_image *one = form_in(s, &o, &st);
        assert_int_equal(st.layout.part[0].bands, 1);
        sarbp_session_memory m;
        sarbp_session_memory_of(s, 0, &m);
        const size_t whole = m.peak;
        /* the memory model the layout reads, for the whole image: the fixed
         * need (pulse blocks, or FFBP's profiles and one piece's polar
         * grids) and an image row. A budget of that need and 3/4 of the
         * image's rows forces bands and holds them (FFBP: a band's polar
         * grids are within the whole image's, its image smaller), however
         * the fixed need compares with the image */
        sarbp_rc_params rc;
        sarbp_rc_params_default(&rc);
        sarbp_rc_params_default_for(&rc, o.precision, f);
        sarbp_ffbp_params prm; /* ffbp: the factorization the form chose */
        if (f) tu_ok(sarbp_ffbp_choose_phd(scene, &rc, &g0, 0, &prm, NULL));
        const sarbp_bp_desc d = {scene, &g0, &rc, {0, g0.ny}, 0, NULL, s, f ? &prm : NULL, NULL};
        sarbp_plan_shape bm;
        tu_ok(sarbp_backend_cuda.shape(&d, &o, 0, &bm));
        sarbp_session_free(s);
        sarbp_session_options so;
        sarbp_session_options_default(&so);
        so.device_budget = bm.fixed + bm.per_row * (3 * g0.ny / 4);
        print_message("%s: the model's fixed need %.2f MiB, %.4f MiB a row\n",
                      sarbp_algorithm_name(o.algorithm), bm.fixed / 1048576.0, bm.per_row / 1048576.0);
        tu_ok(sarbp_session_create(&so, &s));
        sarbp_image *banded = form_in(s, &o, &st);
        sarbp_session_memory_of(s, 0, &m);
        print_message("%s: one piece peaked at %.2f MiB; in a budget of %.2f MiB: %zu bands of %zu "
                      "rows, peak %.2f MiB\n", sarbp_algorithm_name(o.algorithm), whole / 1048576.0,
                      so.device_budget / 1048576.0, st.layout.part[0].bands, st.layout.part[0].band_rows,
                      m.peak / 1048576.0);
        assert_true(st.layout.part[0].bands > 1);
        assert_true(m.peak <= so.device_budget);
        const size_t n = g0.nx * g0.ny;
        const double ser = tu_ser_c32(banded->data, one->data, n), bar = f ? FFBP_PIECES_DB : PIECES_DB;
        print_message("%s: banded vs one piece: SER %.1f dB (at least %.0f)\n",
                      sarbp_algorithm_name(o.algorithm), ser, bar);
        assert_true(ser >= bar);
        /* a plan for the whole image in a budget of 1 MiB: refused at create */
        sarbp_cuda_options co;
        sarbp_cuda_options_default(&co);
        co.algorithm = o.algorithm;
        sarbp_bp_plan *plan = NULL;
        so.device_budget = (size_t)1 << 20; /* less than the profiles or the image band */
        sarbp_session *small = NULL;
        tu_ok(sarbp_session_create(&so, &small));
        sarbp_bp_desc ds = d;
        ds.session = small;
        assert_int_equal(sarbp_cuda_plan_create(&ds, &co, &plan, NULL), SARBP_ERR_NOMEM);
        assert_null(plan);
        assert_non_null(strstr(sarbp_error_detail(), "budget"));
        sarbp_session_memory_of(small, 0, &m);
        assert_true(m.peak <= so.device_budget);
        assert_int_equal(m.used, m.kept); /* what the failed plan gave back to be kept, if anything */
        sarbp_session_free(small);
        sarbp_session_free(s);
        sarbp_image_free(one);
        sarbp_image_free(banded);
    }
}

int main(void)
{
    const int pre = tu_gpu_precondition("test_gpu_session");
    if (pre) return pre;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_thread_after_free),
        cmocka_unit_test(test_two_sessions_share_nothing),
        cmocka_unit_test(test_forms_share_a_session),
        cmocka_unit_test(test_budget_is_a_bound),
    };
    return tu_run_group("test_gpu_session", tests, sizeof tests / sizeof tests[0], setup, teardown);
}
