/* test_window.c - windows: formulas, symmetry, Taylor sidelobes, parse/format. */
#include "test_util.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka here predates assert_near */
#define assert_near(a, b, tol)                                                     \
    do {                                                                         \
        double an_a_ = (a), an_b_ = (b);                                         \
        if (!(fabs(an_a_ - an_b_) <= (tol)))                                     \
            fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, an_a_, an_b_, \
                     (double)(tol));                                             \
    } while (0)

static double *fill(const char *text, size_t n)
{
    sarbp_window w;
    tu_ok(sarbp_window_parse(text, &w));
    double *v = malloc((n ? n : 1) * sizeof *v);
    assert_non_null(v);
    tu_ok(sarbp_window_fill(&w, n, v));
    return v;
}

static void test_none(void **state)
{
    (void)state;
    double *v = fill("none", 17);
    for (size_t i = 0; i < 17; i++) assert_true(v[i] == 1.0);
    free(v);
}

static void test_hamming_hann_formulas(void **state)
{
    (void)state;
    const size_t sizes[] = {2, 3, 8, 64, 101};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        double *h = fill("hamming", n), *g = fill("hann", n);
        for (size_t i = 0; i < n; i++) {
            double c = cos(2 * M_PI * (double)i / (double)(n - 1));
            assert_near(h[i], 0.54 - 0.46 * c, 1e-15);
            assert_near(g[i], 0.5 - 0.5 * c, 1e-15);
        }
        /* named points: ends 0.08 and 0, centre 1 for odd n */
        assert_near(h[0], 0.08, 1e-15);
        assert_near(g[0], 0.0, 1e-15);
        if (n % 2) {
            assert_near(h[n / 2], 1.0, 1e-15);
            assert_near(g[n / 2], 1.0, 1e-15);
        }
        free(h);
        free(g);
    }
}

static void test_symmetry_and_peak(void **state)
{
    (void)state;
    const char *kinds[] = {"none", "hamming", "hann", "taylor", "taylor:5:-40", "taylor:1:35"};
    const size_t sizes[] = {1, 2, 5, 64, 127, 424};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            double *v = fill(kinds[k], n);
            double mx = 0;
            for (size_t i = 0; i < n; i++) {
                assert_true(v[i] == v[n - 1 - i]);
                assert_true(v[i] >= 0 && v[i] <= 1 + 1e-12);
                if (v[i] > mx) mx = v[i];
            }
            if (n == 1) assert_true(v[0] == 1.0);
            /* odd n: the centre sample is the peak, exactly 1 */
            if (n % 2) assert_near(v[n / 2], 1.0, 1e-12);
            else assert_true(mx > 0.99 || n == 2);
            free(v);
        }
    }
}

/* Highest sidelobe (dB below the peak) of a window's spectrum, via a
 * zero-padded FFT: the mainlobe ends at the first local minimum from DC. */
static double highest_sidelobe_db(const double *w, size_t n, size_t nfft)
{
    double *in = fftw_malloc(nfft * sizeof *in);
    fftw_complex *out = fftw_malloc((nfft / 2 + 1) * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    fftw_plan plan = fftw_plan_dft_r2c_1d((int)nfft, in, out, FFTW_ESTIMATE);
    assert_non_null(plan);
    memset(in, 0, nfft * sizeof *in);
    memcpy(in, w, n * sizeof *w);
    fftw_execute(plan);
    size_t m = nfft / 2 + 1;
    double *mag = malloc(m * sizeof *mag);
    assert_non_null(mag);
    for (size_t i = 0; i < m; i++) mag[i] = hypot(out[i][0], out[i][1]);
    size_t i = 1;
    while (i + 1 < m && mag[i + 1] < mag[i]) i++;
    double side = 0;
    for (; i < m; i++)
        if (mag[i] > side) side = mag[i];
    double db = 20 * log10(side / mag[0]);
    free(mag);
    fftw_destroy_plan(plan);
    fftw_free(in);
    fftw_free(out);
    return db;
}

static void test_taylor_sidelobes(void **state)
{
    (void)state;
    struct {
        const char *text;
        double sll;
    } cases[] = {{"taylor", -35}, {"taylor:4:-35", -35}, {"taylor:5:35", -35},
                 {"taylor:6:-40", -40}, {"taylor:4:-30", -30}, {"taylor:8:-50", -50}};
    const size_t n = 512, nfft = 32768;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double *v = fill(cases[c].text, n);
        double sl = highest_sidelobe_db(v, n, nfft);
        printf("  %-14s highest sidelobe %7.2f dB (asked %g, used %.0f%% of 1.5 dB)\n",
               cases[c].text, sl, cases[c].sll, 100 * fabs(sl - cases[c].sll) / 1.5);
        assert_true(fabs(sl - cases[c].sll) <= 1.5);
        free(v);
    }
    /* the classic windows, as a check on the measurement itself */
    double *h = fill("hamming", n), *g = fill("hann", n), *r = fill("none", n);
    double slh = highest_sidelobe_db(h, n, nfft), slg = highest_sidelobe_db(g, n, nfft),
           slr = highest_sidelobe_db(r, n, nfft);
    printf("  hamming %.2f dB, hann %.2f dB, none %.2f dB\n", slh, slg, slr);
    assert_true(slh < -41.5 && slh > -44.5);
    assert_true(slg < -30.5 && slg > -32.5);
    assert_true(slr < -13.0 && slr > -13.5);
    free(h);
    free(g);
    free(r);
}

static void test_parse_format(void **state)
{
    (void)state;
    sarbp_window w, w2;
    char buf[64];
    const char *canon[] = {"none", "hamming", "hann", "taylor:4:-35", "taylor:7:-42.5"};
    for (size_t i = 0; i < sizeof canon / sizeof canon[0]; i++) {
        tu_ok(sarbp_window_parse(canon[i], &w));
        sarbp_window_format(&w, buf, sizeof buf);
        assert_string_equal(buf, canon[i]);
        tu_ok(sarbp_window_parse(buf, &w2));
        assert_int_equal(w.kind, w2.kind);
        if (w.kind == SARBP_WIN_TAYLOR) {
            assert_int_equal(w.nbar, w2.nbar);
            assert_true(w.sll_db == w2.sll_db);
        }
    }
    tu_ok(sarbp_window_parse("taylor", &w));
    assert_int_equal(w.kind, SARBP_WIN_TAYLOR);
    assert_int_equal(w.nbar, 4);
    assert_true(w.sll_db == -35);
    tu_ok(sarbp_window_parse("taylor:5:35", &w));
    assert_int_equal(w.nbar, 5);
    assert_true(w.sll_db == -35);
    sarbp_window_format(&w, buf, sizeof buf);
    assert_string_equal(buf, "taylor:5:-35");
    /* a zeroed taylor struct means the defaults */
    sarbp_window z = {SARBP_WIN_TAYLOR, 0, 0};
    sarbp_window_format(&z, buf, sizeof buf);
    assert_string_equal(buf, "taylor:4:-35");
    double a[32], b[32];
    tu_ok(sarbp_window_fill(&z, 32, a));
    tu_ok(sarbp_window_parse("taylor", &w));
    tu_ok(sarbp_window_fill(&w, 32, b));
    for (int i = 0; i < 32; i++) assert_true(a[i] == b[i]);
    /* a short buffer truncates, never overflows */
    char tiny[4] = {'x', 'x', 'x', 'x'};
    sarbp_window_format(&w, tiny, 3);
    assert_int_equal(tiny[2], '\0');
    assert_int_equal(tiny[3], 'x');
}

static void test_parse_bad(void **state)
{
    (void)state;
    const char *bad[] = {"",           "ham",          "hamming ",      "taylor:",
                         "taylor:4",   "taylor:4:",    "taylor::-35",   "taylor:x:-35",
                         "taylor:4:y", "taylor:0:-35", "taylor:4:0",    "taylor:4:-35:1",
                         "taylor:4.5:-35", "taylor:-4:-35", "taylor:4:nan", "taylor:4:inf",
                         "kaiser"};
    sarbp_window w = {SARBP_WIN_HANN, 9, -9};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sarbp_error_clear();
        sarbp_status s = sarbp_window_parse(bad[i], &w);
        if (s != SARBP_ERR_INVALID) fail_msg("'%s' was accepted", bad[i]);
        assert_non_null(strstr(sarbp_error_detail(), "window"));
        /* w untouched on failure */
        assert_int_equal(w.kind, SARBP_WIN_HANN);
    }
    assert_int_equal(sarbp_window_parse(NULL, &w), SARBP_ERR_INVALID);
    /* fill rejects bad structs */
    double v[8];
    sarbp_window bw = {SARBP_WIN_TAYLOR, -1, -35};
    assert_int_equal(sarbp_window_fill(&bw, 8, v), SARBP_ERR_INVALID);
    bw.nbar = 4;
    bw.sll_db = 10;
    assert_int_equal(sarbp_window_fill(&bw, 8, v), SARBP_ERR_INVALID);
    bw.kind = (sarbp_window_kind)42;
    assert_int_equal(sarbp_window_fill(&bw, 8, v), SARBP_ERR_INVALID);
    tu_ok(sarbp_window_parse("HAMMING", &w)); /* names are case-insensitive */
    assert_int_equal(w.kind, SARBP_WIN_HAMMING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_hamming_hann_formulas),
        cmocka_unit_test(test_symmetry_and_peak),
        cmocka_unit_test(test_taylor_sidelobes),
        cmocka_unit_test(test_parse_format),
        cmocka_unit_test(test_parse_bad),
    };
    return tu_run_tests(tests);
}
