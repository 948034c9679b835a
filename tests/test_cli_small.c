/* test_cli_small.c - the small surprises of a first hour with the CLI (issue 25, item 7).
 *
 * An image .h5 given where a phase history is wanted ('info', 'form -i')
 * is named for what it is; the automatic back end's fall-back to the cpu is
 * said only with -v; ffbp's -v counts the memory that holds the image (not
 * 0.0 MiB); 'bench --help' lists each option once. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[1 << 16], err[1 << 14];

#define run tu_run /* printf-style, fails on a crash */

static void expect(int rc, int want, const char *stream, const char *text)
{
    if (rc != want) fail_msg("exit %d, want %d; stdout: %s; stderr: %s", rc, want, out, err);
    if (text && !strstr(stream, text)) fail_msg("output lacks '%s'; stdout: %s; stderr: %s", text, out, err);
}

/* A small simulated phase history, and an image formed from it. */
static void scene(const char **phd, const char **img)
{
    *phd = tu_tmp("small_phd.h5");
    *img = tu_tmp("small_img.h5");
    expect(run("simulate -q -o '%s' --pulses 32 --samples 64 --targets 0,0", *phd), 0, err, NULL);
    expect(run("form -q -i '%s' --grid 16x16 --backend cpu -o '%s'", *phd, *img), 0, err, NULL);
}

static void test_image_is_not_a_phase_history(void **state)
{
    (void)state;
    const char *phd, *img;
    scene(&phd, &img);
    char want[512];
    snprintf(want, sizeof want, "'%s' is a sarbp image, not a phase history", img);

    expect(run("info '%s'", img), 1, err, want);
    if (strstr(err, "is missing")) fail_msg("info still says a field is missing: %s", err);
    if (tu_count_prefix_lines(err, "sarbp:") != 1) fail_msg("want one message; stderr: %s", err);

    const char *o = tu_tmp("small_again.npy");
    expect(run("form -i '%s' --grid 16x16 --backend cpu -o '%s'", img, o), 1, err, want);
    if (strstr(err, "is missing")) fail_msg("form still says a field is missing: %s", err);
    if (tu_exists(o)) fail_msg("a failed form left '%s'", o);

    /* the phase history itself still reads */
    expect(run("info '%s'", phd), 0, out, NULL);
}

/* --backend auto on a machine without a usable GPU falls back to the cpu:
 * news with -v, never by default (every run would say it). */
static void test_cpu_fallback_note_only_with_v(void **state)
{
    (void)state;
    const char *phd, *img;
    scene(&phd, &img);
    const char *o = tu_tmp("small_auto.npy");
    expect(run("form -i '%s' --grid 16x16 -o '%s'", phd, o), 0, err, NULL);
    if (strstr(err, "no usable CUDA device"))
        fail_msg("the cpu fall-back is said without -v: %s", err);
    if (tu_have_gpu()) return; /* no fall-back to see with -v */
    expect(run("form -v -i '%s' --grid 16x16 -o '%s'", phd, o), 0, err,
           "no usable CUDA device; using the cpu back end");
}

/* ffbp on the cpu sums straight into the image: -v counts the image's own
 * memory (a 256 x 192 image of complex64: 0.375 MiB, '0.0 MiB' before). */
static void test_ffbp_v_image_memory(void **state)
{
    (void)state;
    const char *phd, *img;
    scene(&phd, &img);
    const char *o = tu_tmp("small_ffbp.npy");
    expect(run("form -v -i '%s' --grid 256x192 --spacing 0.05 --backend cpu --algorithm ffbp -o '%s'",
               phd, o),
           0, err, "image ");
    const char *p = strstr(err, "pulse data ");
    p = p ? strstr(p, ", image ") : NULL;
    if (!p) fail_msg("no 'pulse data ..., image ... MiB' line: %s", err);
    const double mib = strtod(p + strlen(", image "), NULL);
    const double want = 256.0 * 192 * 8 / (1 << 20); /* 0.375 MiB */
    if (!(mib > 0.0)) fail_msg("ffbp -v says image %.2f MiB, want about %.2f: %s", mib, want, err);
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static void test_bench_help_lists_each_option_once(void **state)
{
    (void)state;
    expect(run("bench --help"), 0, out, "--algorithm");
    /* options are listed as '  --name' at a line's start */
    static const char *const opts[] = {"--algorithm", "--backend", "--precision", "--reps",
                                       "--device", "--grid", "--pulses", "--threads"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        char entry[64];
        snprintf(entry, sizeof entry, "\n  %s ", opts[i]);
        if (count(out, entry) != 1)
            fail_msg("'bench --help' lists %s %d times:\n%s", opts[i], count(out, entry), out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_is_not_a_phase_history),
        cmocka_unit_test(test_cpu_fallback_note_only_with_v),
        cmocka_unit_test(test_ffbp_v_image_memory),
        cmocka_unit_test(test_bench_help_lists_each_option_once),
    };
    return tu_run_tests(tests);
}
