/* test_batch_outputs.c - what 'sarbp batch' writes per window and what it
 * refuses before the first window starts (issue 25, item 2):
 *  - -o/--output inside --form-args (spelled -o, -qo, --output=, --outp)
 *    is a usage error: exit 2, one line, nothing created;
 *  - --form-args checked once by form's own option parser: an unknown
 *    option, a bad value, an ambiguous abbreviation, a word that is neither
 *    option nor value, '--', and the options batch gives each window itself
 *    (-i, --pulses, --azimuth, --help) are usage errors before any window;
 *  - --outputs: every format of the list per window as OUTDIR/win_NNN.EXT
 *    (png, h5, npy, nitf, kmz; tif where the library has GeoTIFF), the
 *    summary's column of each format naming it; each window's SICD carries
 *    its own collection start (--collect-start moved on by its first pulse
 *    / --prf); unknown or repeated formats refused; geolocated formats
 *    without a scene reference, or a SICD without pulse times, refused up
 *    front naming the --form-args option that supplies it;
 *  - an input that cannot be read is a row of the summary (CSV and JSON)
 *    with its error, and the exit status is 1; with no readable input at
 *    all the summary still holds every row.
 * Small simulated inputs (data/point_targets.h5: 256 pulses over 4 degrees,
 * two 2-degree windows of 16x16 to 32x32 pixels on the cpu). */
#include "test_util.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INPUT SARBP_DATA_DIR "/point_targets.h5"
#define SMALL "--grid 16x16 --backend cpu"

static char out[8192], err[8192];

static int count_in(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* A usage error before anything: exit 2, one "sarbp:" line holding each of
 * want (NULL-terminated), no output folder, within 5 s. */
static void refused(const char *o, const char *args, const char *const *want)
{
    tu_remove_dir(o);
    const double t0 = sarbp_now_s();
    const int rc = tu_run("batch -q -j 1 --window-deg 2 -o '%s' %s '%s'", o, args, INPUT);
    const double secs = sarbp_now_s() - t0;
    print_message("batch %s: exit %d, %.2f s: %s", args, rc, secs, err);
    assert_int_equal(rc, 2);
    assert_int_equal(tu_count_prefix_lines(err, "sarbp:"), 1);
    assert_non_null(strstr(err, "Try 'sarbp batch --help'"));
    for (; *want; want++)
        if (!strstr(err, *want)) fail_msg("no '%s' in: %s", *want, err);
    assert_int_equal(access(o, F_OK), -1);
    assert_true(secs < 5);
}

static void test_output_in_form_args_refused(void **state)
{
    (void)state;
    char o[1024];
    snprintf(o, sizeof o, "%s/batch_dash_o", SARBP_TEST_TMP);
    refused(o, "--form-args '" SMALL " -o x.npy'", TU_NAMES("'-o'", "same file", "--outputs"));
    refused(o, "--form-args '-ox.npy " SMALL "'", TU_NAMES("'-ox.npy'", "same file"));
    refused(o, "--form-args '-qo x.npy'", TU_NAMES("'-qo'", "same file"));
    refused(o, "--form-args '--output=x.npy'", TU_NAMES("'--output=x.npy'", "same file"));
    refused(o, "--form-args '--outp x.npy'", TU_NAMES("'--outp'", "same file"));
    /* nothing was written where the user pointed either */
    assert_int_equal(access("x.npy", F_OK), -1);
}

static void test_bad_form_args_refused_once(void **state)
{
    (void)state;
    char o[1024];
    snprintf(o, sizeof o, "%s/batch_bad_form_args", SARBP_TEST_TMP);
    /* form's own parser: its messages, said once */
    refused(o, "--form-args '" SMALL " --bogus'", TU_NAMES("--form-args", "'--bogus'"));
    refused(o, "--form-args '--spacing abc'", TU_NAMES("--form-args", "--spacing", "'abc'"));
    refused(o, "--form-args '--window nonsense'", TU_NAMES("--form-args", "--window"));
    refused(o, "--form-args '--p 3'", TU_NAMES("--form-args", "ambiguous", "'--p'"));
    refused(o, "--form-args '--grid'", TU_NAMES("--form-args", "--grid", "needs a value"));
    /* a word that is no option's value: form would read it as an input */
    refused(o, "--form-args '--grid 16x16 16 --backend cpu'", TU_NAMES("'16'", "input"));
    refused(o, "--form-args '--grid 16 16'", TU_NAMES("--grid", "'16'"));
    refused(o, "--form-args '--backend cpu -- --grid 16x16'", TU_NAMES("'--'"));
    /* what batch gives each window itself */
    refused(o, "--form-args '-i other.h5'", TU_NAMES("'-i'"));
    refused(o, "--form-args '--pulses 0:10'", TU_NAMES("'--pulses'", "--window-deg"));
    refused(o, "--form-args '--azimuth 0:1'", TU_NAMES("'--azimuth'", "--window-deg"));
    refused(o, "--form-args '--help'", TU_NAMES("'--help'"));
    /* a good set forms; values that start with '-' are values */
    tu_remove_dir(o);
    const int rc = tu_run("batch -q -j 1 --window-deg 2 --form-args '" SMALL " --center -0.5,0.25 "
                          "--window=hann -v' -o '%s' '%s'", o, INPUT);
    print_message("%s", err);
    assert_int_equal(rc, 0);
    tu_assert_regular(tu_in_dir(o, "win_001.h5"));
}

static void test_outputs_every_format(void **state)
{
    (void)state;
    char o[1024];
    snprintf(o, sizeof o, "%s/batch_outputs", SARBP_TEST_TMP);
    tu_remove_dir(o);
#ifdef SARBP_TEST_GEOTIFF
    const char *list = "png,h5,npy,nitf,tif,kmz";
    static const char *const exts[] = {"png", "h5", "npy", "nitf", "tif", "kmz"};
    const int nexts = 6;
#else
    const char *list = "png,h5,npy,nitf,kmz";
    static const char *const exts[] = {"png", "h5", "npy", "nitf", "kmz"};
    const int nexts = 5;
#endif
    const int rc = tu_run("batch -q -j 2 --window-deg 2 --outputs %s --form-args '--grid 32x32 "
                          "--spacing 0.1 --backend cpu --scene-ref 10,20,0 --prf 500 "
                          "--collect-start 2026-01-02T03:04:05.5Z' -o '%s' '%s'", list, o, INPUT);
    print_message("exit %d: %s", rc, err);
    assert_int_equal(rc, 0);
    for (int w = 0; w < 2; w++)
        for (int e = 0; e < nexts; e++) {
            char name[64];
            snprintf(name, sizeof name, "win_%03d.%s", w, exts[e]);
            tu_assert_regular(tu_in_dir(o, name));
        }
    tu_no_temporaries(o);
    /* the summary names each file in its format's column */
    char *csv = tu_slurp(tu_in_dir(o, "summary.csv"), NULL);
    assert_non_null(csv);
    assert_non_null(strstr(csv, ",png,h5,status,npy,nitf,tif,kmz,error\n"));
    for (int e = 0; e < nexts; e++) {
        char name[64];
        snprintf(name, sizeof name, "win_001.%s", exts[e]);
        if (!strstr(csv, name)) fail_msg("summary.csv does not name %s:\n%s", name, csv);
    }
    assert_int_equal(count_in(csv, ",ok,"), 2);
    free(csv);
    char *json = tu_slurp(tu_in_dir(o, "summary.json"), NULL);
    assert_non_null(json);
    assert_int_equal(count_in(json, "\"status\": \"ok\""), 2);
    assert_int_equal(count_in(json, "\"nx\": 32, \"ny\": 32, \"dx_m\": 0.1, \"dy_m\": 0.1"), 2);
    assert_int_equal(count_in(json, "\"entropy\": null"), 0);
    free(json);
    /* each window's SICD starts at its own first pulse: window 1 at pulse
     * 128, 128 / 500 Hz = 0.256 s after the given start */
    assert_int_equal(tu_sh(out, sizeof out, "grep -ao '<CollectStart>[^<]*' '%s/win_000.nitf' "
                           "'%s/win_001.nitf'", o, o), 0);
    print_message("%s\n", out);
    assert_non_null(strstr(out, "<CollectStart>2026-01-02T03:04:05.5Z"));
    assert_non_null(strstr(out, "<CollectStart>2026-01-02T03:04:05.756000000Z"));

    /* without a complex output: the grid from the log, no entropy */
    tu_remove_dir(o);
    assert_int_equal(tu_run("batch -q -j 2 --window-deg 2 --outputs png --form-args '--grid 24x20 "
                            "--spacing 0.1 --backend cpu' -o '%s' '%s'", o, INPUT), 0);
    json = tu_slurp(tu_in_dir(o, "summary.json"), NULL);
    assert_non_null(json);
    assert_int_equal(count_in(json, "\"nx\": 24, \"ny\": 20, \"dx_m\": 0.1, \"dy_m\": 0.1"), 2);
    assert_int_equal(count_in(json, "\"h5\": null"), 2);
    free(json);
    tu_nothing_named(o, "win_000.h5");
}

static void test_outputs_refused(void **state)
{
    (void)state;
    char o[1024];
    snprintf(o, sizeof o, "%s/batch_outputs_refused", SARBP_TEST_TMP);
    refused(o, "--outputs png,jpg", TU_NAMES("--outputs", "'jpg'"));
    refused(o, "--outputs h5,hdf5", TU_NAMES("--outputs", "twice"));
    refused(o, "--outputs png,,h5", TU_NAMES("--outputs"));
    refused(o, "--outputs ../png", TU_NAMES("--outputs"));
    /* geolocated formats need a scene reference: the input has none */
    refused(o, "--outputs kmz --form-args '" SMALL "'", TU_NAMES("--outputs kmz", "--scene-ref"));
    refused(o, "--outputs png,tif --form-args '" SMALL "'", TU_NAMES("--outputs tif", "--scene-ref"));
    /* a SICD needs pulse times */
    refused(o, "--outputs nitf --form-args '" SMALL " --scene-ref 10,20,0'",
            TU_NAMES("--outputs nitf", "--prf", "--collect-start"));
    refused(o, "--outputs nitf --form-args '" SMALL " --scene-ref 10,20,0 --prf 500'",
            TU_NAMES("--outputs nitf", "--collect-start"));
}

static void test_failed_input_in_summary(void **state)
{
    (void)state;
    char o[1024], bad[1100], missing[1100];
    snprintf(o, sizeof o, "%s/batch_failed_input", SARBP_TEST_TMP);
    snprintf(bad, sizeof bad, "%s/batch_not_a_phd.h5", SARBP_TEST_TMP);
    snprintf(missing, sizeof missing, "%s/batch_no_such_input.h5", SARBP_TEST_TMP);
    tu_write_text(bad, "not a phase history\n");
    remove(missing);
    tu_remove_dir(o);
    int rc = tu_run("batch -q -j 2 --window-deg 2 --form-args '" SMALL "' -o '%s' '%s' '%s' '%s'",
                    o, bad, INPUT, missing);
    print_message("exit %d: %s", rc, err);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "2 input(s) failed"));
    char *csv = tu_slurp(tu_in_dir(o, "summary.csv"), NULL);
    assert_non_null(csv);
    print_message("%s", csv);
    assert_int_equal(tu_count_lines(csv), 5); /* header, bad, two windows, missing */
    assert_int_equal(count_in(csv, ",ok,"), 2);
    assert_int_equal(count_in(csv, ",failed,"), 2);
    /* in the inputs' order, each with its error */
    const char *b = strstr(csv, bad), *w0 = strstr(csv, "\n0,"), *m = strstr(csv, missing);
    assert_non_null(b);
    assert_non_null(w0);
    assert_non_null(m);
    assert_true(b < w0 && w0 < m);
    assert_non_null(strstr(m, "No such file or directory"));
    free(csv);
    char *json = tu_slurp(tu_in_dir(o, "summary.json"), NULL);
    assert_non_null(json);
    assert_int_equal(count_in(json, "\"index\": null"), 2);
    assert_int_equal(count_in(json, "\"status\": \"failed\""), 2);
    assert_int_equal(count_in(json, "\"error\": \"") , 2);
    free(json);

    /* nothing readable: the rows still, and exit 1 */
    tu_remove_dir(o);
    rc = tu_run("batch -q --form-args '" SMALL "' -o '%s' '%s'", o, missing);
    assert_int_equal(rc, 1);
    json = tu_slurp(tu_in_dir(o, "summary.json"), NULL);
    assert_non_null(json);
    assert_int_equal(count_in(json, "\"status\": \"failed\""), 1);
    assert_non_null(strstr(json, "batch_no_such_input.h5"));
    free(json);
    remove(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_in_form_args_refused),
        cmocka_unit_test(test_bad_form_args_refused_once),
        cmocka_unit_test(test_outputs_every_format),
        cmocka_unit_test(test_outputs_refused),
        cmocka_unit_test(test_failed_input_in_summary),
    };
    return tu_run_tests(tests);
}
