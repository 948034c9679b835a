/* test_variants.c - the table of CUDA kernel variants (sarbp/cuda_variants.h,
 * kernels/backproject_variants.c): one row per id, one meaning per number,
 * and 'sarbp bench --help' lists what the table holds. Plain data: runs in
 * every build, with or without CUDA or a GPU. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static void test_rows(void **state)
{
    (void)state;
    size_t n;
    const sarbp_cuda_variant *t = sarbp_cuda_variants(&n);
    assert_int_equal(n, TU_NVARIANTS);
    int defaults = 0;
    for (size_t i = 0; i < n; i++) {
        /* in id order, ids 1.. with no gap: an id is the row's number */
        assert_int_equal(t[i].id, (int)i + 1);
        assert_non_null(t[i].name);
        assert_non_null(t[i].summary);
        assert_non_null(t[i].requires);
        /* bench --help prints them at column 26 within 80 */
        assert_true(strlen(t[i].summary) > 0 && strlen(t[i].summary) <= 54);
        assert_true(strlen(t[i].requires) > 0 && strlen(t[i].requires) <= 54);
        for (size_t j = 0; j < i; j++) assert_string_not_equal(t[i].name, t[j].name);
        assert_ptr_equal(sarbp_cuda_variant_find(t[i].name), &t[i]);
        assert_ptr_equal(sarbp_cuda_variant_by_id(t[i].id), &t[i]);
        if (t[i].flags & SARBP_CUDA_VARIANT_DEFAULT) defaults++;
        /* a resident-block bound exists only for the tiled kernels */
        if (t[i].flags & SARBP_CUDA_VARIANT_MINB) assert_true(t[i].flags & SARBP_CUDA_VARIANT_TILED);
    }
    assert_int_equal(defaults, 1);
    assert_int_equal(sarbp_cuda_variant_find(NULL)->flags & SARBP_CUDA_VARIANT_DEFAULT,
                     SARBP_CUDA_VARIANT_DEFAULT);
    /* precision mixed works with the default variant (others may refuse it) */
    assert_true(sarbp_cuda_variant_find(NULL)->flags & SARBP_CUDA_VARIANT_MIXED);
    assert_ptr_equal(sarbp_cuda_variant_find(""), sarbp_cuda_variant_find(NULL));
    assert_null(sarbp_cuda_variant_find("v9"));
    assert_null(sarbp_cuda_variant_by_id(0));
    assert_null(sarbp_cuda_variant_by_id(SARBP_CUDA_VARIANT_LIMIT));
    /* the names the enum's comments promise */
    assert_string_equal(sarbp_cuda_variant_by_id(SARBP_CUDA_V3A)->name, "v3a");
    assert_string_equal(sarbp_cuda_variant_by_id(SARBP_CUDA_V4)->name, "v4");
}

static void test_bench_help(void **state)
{
    (void)state;
    static char out[16384], err[4096];
    assert_int_equal(tu_run("bench --help"), 0);
    size_t n;
    const sarbp_cuda_variant *t = sarbp_cuda_variants(&n);
    char want[256];
    for (size_t i = 0; i < n; i++) {
        snprintf(want, sizeof want, " %s\n", t[i].summary);
        if (!strstr(out, want)) fail_msg("bench --help does not list %s: '%s'", t[i].name, want);
        snprintf(want, sizeof want, " %s\n", t[i].requires);
        if (!strstr(out, want)) fail_msg("bench --help does not say what %s needs", t[i].name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_bench_help),
    };
    return tu_run_tests(tests);
}
