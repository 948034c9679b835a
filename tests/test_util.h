/* test_util.h - helpers shared by sarbp's cmocka tests. */
#ifndef SARBP_TEST_UTIL_H
#define SARBP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sarbp/sarbp.h"
#include "sarbp/bench.h" /* tests reach what programs need not (limits, kernels alone) */

/* Runs the sarbp executable with the given argument string (split by the
 * shell: sh -c "SARBP_EXE args"). Returns the exit code (or -1 if it died on
 * a signal: a crash). When err is non-NULL, stderr is captured into err
 * (errn bytes, NUL-terminated); stdout likewise into out. */
int tu_run_cli(const char *args, char *out, size_t outn, char *err, size_t errn);

/* printf-style tu_run_cli that fails the test when sarbp crashed. Files
 * with static char out[], err[] buffers use it as run("form -i %s", p). */
int tu_run_clif(char *out, size_t outn, char *err, size_t errn, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define tu_run(...) tu_run_clif(out, sizeof out, err, sizeof err, __VA_ARGS__)

/* Runs a shell command (printf-style), its stdout (stderr too when the
 * command says 2>&1) into out (outn bytes, NUL-terminated, truncated);
 * returns its exit status, -1 when it did not exit. For the tests that run
 * other programs on sarbp's files (gdalinfo, SARkit). */
int tu_sh(char *out, size_t outn, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Lines of text (the '\n's), and lines of text that start with prefix
 * ("sarbp:": how many messages a run printed). */
int tu_count_lines(const char *text);
int tu_count_prefix_lines(const char *text, const char *prefix);

/* A path in the test build's scratch directory: SARBP_TEST_TMP/<name>. The
 * file is removed first so tests start clean. Returns a static buffer slot
 * (8 rotate). */
const char *tu_tmp(const char *name);
int tu_exists(const char *path);

/* A phase history for a group of CLI tests, made in its setup: `sarbp
 * simulate -o SARBP_TEST_TMP/<name> <args>`, the path into path (n bytes).
 * Returns 0; -1 when sarbp failed or wrote nothing, its exit code and
 * stderr said on stderr (the group's setup then fails). */
int tu_make_sim(char *path, size_t n, const char *name, const char *args);

/* Gotcha inputs: the directory, and whether the data are present (tests
 * skip() when they are not). */
const char *tu_gotcha_dir(void);
int tu_have_gotcha(void);

/* SER in dB of test against ref (n complex values): 10 log10(sum|r|^2 / sum|r-t|^2);
 * +INFINITY when identical. A reference with no energy (all zero, or
 * n == 0) or a non-finite value in either image fails the test: there is
 * no SER to speak of. */
double tu_ser_c32(const sarbp_c32 *t, const sarbp_c32 *r, size_t n);
double tu_ser_c32_c64(const sarbp_c32 *t, const sarbp_c64 *r, size_t n);
/* The SER of t against r after the best complex gain on t (a constant
 * phase and scale are free: autofocus estimates carry no constant). */
double tu_ser_gain_c32(const sarbp_c32 *t, const sarbp_c32 *r, size_t n);

/* ---- accuracy bars -------------------------------------------------------- */

/* Every accuracy bar is a figure measured on the reference machine minus
 * (for tu_bar_min: higher is better) or plus (tu_bar_max: lower is better)
 * a stated headroom. Each check prints one line that grep can find:
 *
 *   BAR ok   fp32 v3 4096x4096 SER: 107.30 dB >= 100.00 dB (measured 107.30,
 *            headroom 7.30): 0% of headroom used
 *
 * ('BAR FAIL' and the test fails when the value is past the bar or NaN).
 * The percentage is how much of the headroom the value used up; negative
 * when it beat the measured figure. what is printf-style. */
void tu_bar_min(double value, double measured, double headroom, const char *unit, const char *what,
                ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void tu_bar_max(double value, double measured, double headroom, const char *unit, const char *what,
                ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---- skipping honestly ----------------------------------------------------- */

/* Skips the current test, saying why on one line ("skipped: ..."), and
 * counts it for tu_run_group. Use instead of cmocka's bare skip(). */
extern int tu_nskipped;
#define tu_skip(...)                                                             \
    do {                                                                         \
        print_message("skipped: " __VA_ARGS__);                                  \
        print_message("\n");                                                     \
        tu_nskipped++;                                                           \
        skip();                                                                  \
    } while (0)

/* Runs a cmocka group and returns the program's exit status for CTest:
 * cmocka's (the number of failures) when something failed or ran; 77,
 * CTest's SKIP_RETURN_CODE, when every test was skipped (tu_skip), so a
 * program that could not run is reported as skipped, never as passed. */
int tu_run_group(const char *name, const struct CMUnitTest *tests, size_t n,
                 CMFixtureFunction setup, CMFixtureFunction teardown);
#define tu_run_tests(tests) tu_run_group(#tests, tests, sizeof(tests) / sizeof((tests)[0]), NULL, NULL)

/* CTest's code for "skipped" (tests/CMakeLists.txt: SKIP_RETURN_CODE). */
#define TU_SKIP_RC 77

/* Asserts a status is SARBP_OK, printing the error detail when not. */
#define tu_ok(expr)                                                              \
    do {                                                                         \
        sarbp_status tu_s_ = (expr);                                             \
        if (tu_s_ != SARBP_OK)                                                   \
            fail_msg("%s failed: %s (%s)", #expr, sarbp_strerror(tu_s_),         \
                     sarbp_error_detail());                                      \
    } while (0)

/* ---- the CLI under limits (test_bad_inputs.c, test_mat_check.c) ---------- */

/* 1 in a build with AddressSanitizer (its shadow memory needs terabytes of
 * address space: no address-space limit, and peak memory means nothing). */
int tu_under_asan(void);

typedef struct {
    int exited, code, signal; /* exit status, or the signal that ended it */
    double seconds, peak_mb;  /* wall clock; peak resident memory (probe child included) */
    char err[4096];           /* stderr, truncated */
} tu_limited_run;

/* Runs SARBP_EXE with args (NULL-terminated, at most 14), stdout to
 * /dev/null and stderr captured, under an address-space limit of as_limit
 * bytes (0: none; never under ASan); killed after kill_s seconds. */
void tu_run_limited(const char *const *args, unsigned long long as_limit, double kill_s,
                    tu_limited_run *r);

/* ---- the CUDA back end (test_gpu_*.c) ------------------------------------ */

/* Whether a CUDA device is usable. */
int tu_have_gpu(void);

/* Whether 'nvidia-smi -L' lists a GPU. */
int tu_gpu_visible(void);

/* For the main() of a program that needs the CUDA back end, before any
 * test: 0 when it works here; TU_SKIP_RC when it cannot run for a reason
 * that is no fault of sarbp (no GPU visible, or sarbp configured with
 * SARBP_CUDA=OFF); 1, with the reason on stderr, when a GPU is visible but
 * the CUDA back end is unusable or was not built although not switched
 * off. A GPU machine never reports the GPU tests as skipped. */
int tu_gpu_precondition(const char *program);

/* For the main() of a program that reads CPHD: 0 when sarbp reads it; else
 * (built without libxml2) TU_SKIP_RC, saying so on stdout. */
int tu_cphd_precondition(void);

/* The CUDA kernel variants: the library's table (sarbp/cuda_variants.h),
 * row v of TU_NVARIANTS, in id order. */
#define TU_NVARIANTS ((size_t)SARBP_CUDA_VARIANT_LIMIT - 1)
const sarbp_cuda_variant *tu_variant(size_t v);

/* The Gotcha-like simulated scene (circular, frequency domain): 150 clutter
 * points from -30 to 0 dB within +-50 m plus three bright targets. */
sarbp_phd *tu_clutter_scene(size_t npulses);

/* Range profiles of every pulse of p (default windows) in precision prec,
 * interpolation k at upsampling up; caller frees. */
sarbp_profiles *tu_profiles(const sarbp_phd *p, sarbp_precision prec, sarbp_interp k, int up);
/* The FFBP tests' scene: 150 clutter scatterers within +-40 m (-30 to 0
 * dB) and three bright targets, FREQ domain, geometry geom. */
sarbp_phd *tu_ffbp_scene(sarbp_geometry geom, size_t npulses);
/* The exact image (FP64 direct summation, no FFT, no interpolation) of p
 * on g, [ny][nx]; caller frees. */
sarbp_c64 *tu_exact64(const sarbp_phd *p, const sarbp_grid *g);

/* Point targets only, circular, frequency domain (t NULL, n 0: one unit
 * target at the origin). */
sarbp_phd *tu_targets(const sarbp_target *t, size_t n, size_t npulses);
/* Four pulses of zero profiles (64 bins, precision prec) whose antennas
 * fly 1000 m over the scene origin, along x: over the image of the
 * refusal tests. */
sarbp_profiles *tu_over_image_profiles(sarbp_precision prec);
/* Three point targets (unit at the origin, 0.7 and 0.5 off it), linear
 * stripmap geometry, raw chirp echoes (the simulator's defaults). */
sarbp_phd *tu_chirp_stripmap(size_t npulses);

/* Forms g from p on be at precision prec with the cubic B-spline at 4x (the
 * kernel every precision reads, and the one the arithmetic tests' bars were
 * measured with; form's default, the quadratic at 8x, is formed explicitly
 * where it is measured) and tune's options (NULL: the defaults); fails the
 * test on an error. */
sarbp_image *tu_form(const sarbp_phd *p, const sarbp_grid *g, const sarbp_backend *be,
                     sarbp_precision prec, const sarbp_bp_options *tune);

/* p formed on g by be with o in session s (NULL: none), the range
 * compression the defaults for o's precision and algorithm; stats into st
 * (may be NULL). */
sarbp_image *tu_form_in(sarbp_session *s, const sarbp_phd *p, const sarbp_grid *g,
                        const sarbp_backend *be, const sarbp_bp_options *o, sarbp_form_stats *st);
/* Fails unless a and b hold the same pixels bit for bit (their SER said). */
void tu_assert_same(const sarbp_image *a, const sarbp_image *b, const char *what);
/* The threads of this process (the entries of /proc/self/task; -1 when
 * they cannot be read). */
int tu_threads_alive(void);

/* Index of img's largest-magnitude pixel (the first such), its magnitude in
 * *peak. */
size_t tu_peak_index(const sarbp_image *img, double *peak);

/* A device-memory budget that makes the CUDA back end form g in bands of
 * rows: the smallest budget its plan accepts with options o (bisection on
 * create(), to 64 KiB) plus about a quarter of the image's rows. A fixed
 * figure would not do: a 700 x 650 image is 3.6 MB, far below the pulse
 * buffers' share, so a budget like 200 MB leaves it in one band. *passes:
 * the resulting number of bands. */
size_t tu_banding_budget(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *o,
                         size_t *passes);

#endif
