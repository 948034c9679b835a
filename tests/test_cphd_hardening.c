/* test_cphd_hardening.c - hostile CPHD XML, dates that are not dates
 * (issue 24), and the reproducers of bad-inputs/2026-11-27 that are
 * about them.
 *
 *  - sarbp_date_check (sarbp/date.h): real calendar dates and times only;
 *  - the reproducers cphd_xml_60k_attributes.cphd.gz (decompressed into
 *    the test's scratch directory, never into the project),
 *    cphd_xml_bad_utf8.cphd and cphd_collect_start_not_a_date.cphd, through
 *    form and info: exit 1, one stderr line naming the file, no output and
 *    no temporary, under 2 s and 500 MB (each run prints its margin);
 *  - made here: an XML block over the 4 MiB cap, an element with 101
 *    attributes (refused) and one with 100 and with '=' inside its values
 *    (read), XML that is not UTF-8 (one line);
 *  - form --collect-start with a date that is not one: exit 2 naming the
 *    option;
 *  - the library's SICD writer refuses a collection start that is not a
 *    date (SARBP_ERR_INVALID, no file), with a valid one as the control.
 * Exit 77 (skipped) without libxml2; the reproducers' test skips, saying
 * so, when their directory is absent. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cphd_gen.h"
#include "scratch.h"
#include "sarbp/date.h"
#include "sarbp/geo.h"

#ifndef SARBP_BAD_INPUTS_DIR
#define SARBP_BAD_INPUTS_DIR "../shared/data/bad-inputs"
#endif
#define REPRO_DIR SARBP_BAD_INPUTS_DIR "/2026-11-27"

static char out[8192], err[8192];

static const double max_seconds = 2.0;
static const double max_mb = 500.0;

/* ---- the date validator ------------------------------------------------------ */

static void test_date_check(void **state)
{
    (void)state;
    static const char *const good[] = {
        "2026-11-23T10:00:00.000000Z", "2026-11-23T10:00:00Z", "2026-11-23T10:00:00",
        "2024-02-29T00:00:00Z",        "2000-02-29T23:59:59Z", "2016-12-31T23:59:60Z",
        "0001-01-01T00:00:00Z",        "9999-12-31T23:59:59.9999999Z",
        "2008-06-01T12:00:00.5"};
    static const struct { const char *s, *why; } bad[] = {
        {"9999-99-99T99:99:99Z", "month"},  {"0000-00-00T00:00:00Z", "year"},
        {"2026-00-10T00:00:00Z", "month"},  {"2026-13-10T00:00:00Z", "month"},
        {"2026-01-00T00:00:00Z", "day"},    {"2026-01-32T00:00:00Z", "day"},
        {"2023-02-29T00:00:00Z", "day"},    {"1900-02-29T00:00:00Z", "day"},
        {"2026-04-31T00:00:00Z", "day"},    {"2026-01-01T24:00:00Z", "hour"},
        {"2026-01-01T23:60:00Z", "minute"}, {"2026-01-01T23:59:61Z", "second"},
        {"2026-01-01T00:00:00.Z", "fractional"}, {"2026-01-01T00:00:00+01:00", "form"},
        {"2026-01-01 00:00:00Z", "form"},   {"2026-1-01T00:00:00Z", "form"},
        {"yesterday", "form"},              {"", "form"},
        {"2026-01-01T00:00:00ZZ", "form"},  {"+2026-01-01T00:00:00Z", "form"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *why = "unset";
        if (!sarbp_date_check(good[i], &why))
            fail_msg("'%s' refused (%s)", good[i], why ? why : "no reason");
        assert_null(why);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why = NULL;
        if (sarbp_date_check(bad[i].s, &why)) fail_msg("'%s' accepted as a date", bad[i].s);
        if (!why || !strstr(why, bad[i].why))
            fail_msg("'%s': reason '%s', want one about the %s", bad[i].s, why ? why : "(none)",
                     bad[i].why);
    }
    assert_false(sarbp_date_check(NULL, NULL));
    print_message("%zu dates accepted, %zu refused with the right reason\n",
                  sizeof good / sizeof good[0], sizeof bad / sizeof bad[0]);
}

/* ---- files ------------------------------------------------------------------- */

/* form and info on path: exit 1, one line "sarbp: CMD: ..." naming path and
 * saying what, nothing left in the output directory, under the bars. */
static void expect_refused(const char *path, const char *what)
{
    const char *cmds[] = {"form", "info"};
    for (int c = 0; c < 2; c++) {
        const char *dir = tu_fresh_dir("cphd_hardening_out");
        char o[1100];
        snprintf(o, sizeof o, "%s/img.nitf", dir);
        const char *form[] = {"form", "--backend", "cpu", "-q", "-i", path, "-o", o, NULL};
        const char *info[] = {"info", path, NULL};
        tu_limited_run r;
        tu_run_limited(c ? info : form, 1ULL << 30, 60, &r);
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        print_message("  %-5s %-40s exit %d  %.3f s of %.0f  %.1f MB of %.0f\n", cmds[c], base,
                      r.code, r.seconds, max_seconds, r.peak_mb, max_mb);
        if (!r.exited) fail_msg("%s '%s' died on signal %d", cmds[c], base, r.signal);
        const size_t len = strlen(r.err);
        const char *nl = strchr(r.err, '\n');
        char prefix[32], quoted[1100];
        snprintf(prefix, sizeof prefix, "sarbp: %s: ", cmds[c]);
        snprintf(quoted, sizeof quoted, "'%s'", path);
        if (r.code != 1 || !nl || nl != r.err + len - 1 || strncmp(r.err, prefix, strlen(prefix)) ||
            !strstr(r.err, quoted) || !strstr(r.err, what))
            fail_msg("%s '%s': exit %d, want 1 with one line naming it and saying '%s':\n%s",
                     cmds[c], base, r.code, what, r.err);
        if (tu_count_entries(dir)) fail_msg("%s '%s' left files in %s", cmds[c], base, dir);
        if (r.seconds >= max_seconds)
            fail_msg("%s '%s' took %.2f s (bar %.0f s)", cmds[c], base, r.seconds, max_seconds);
        if (!tu_under_asan() && r.peak_mb >= max_mb)
            fail_msg("%s '%s' peaked at %.0f MB (bar %.0f MB)", cmds[c], base, r.peak_mb, max_mb);
    }
}

static void test_reproducers(void **state)
{
    (void)state;
    struct stat sb;
    if (stat(REPRO_DIR "/cphd_xml_60k_attributes.cphd.gz", &sb) != 0)
        tu_skip("no reproducers at %s", REPRO_DIR);
    /* decompressed into the scratch directory, never next to the project */
    const char *big = tu_tmp("cphd_xml_60k_attributes.cphd");
    if (tu_sh(out, sizeof out, "gzip -dc '%s' > '%s' 2>&1",
              REPRO_DIR "/cphd_xml_60k_attributes.cphd.gz", big) != 0)
        tu_skip("gzip cannot decompress the reproducer here: %s", out);
    char path[1024];
    snprintf(path, sizeof path, "%s", big);
    expect_refused(path, "has 60000 attributes");
    expect_refused(REPRO_DIR "/cphd_xml_bad_utf8.cphd", "not proper UTF-8");
    expect_refused(REPRO_DIR "/cphd_collect_start_not_a_date.cphd",
                   "CollectionStart '9999-99-99T99:99:99Z' is not a UTC date and time");
    /* the valid file beside them is read */
    assert_int_equal(tu_run("info %s", REPRO_DIR "/mini_ok.cphd"), 0);
    unlink(path);
}

static sarbp_phd *scene(void)
{
    const sarbp_target t[] = {{0, 0, 0, 1}, {2, -1.5, 0, 0.5}};
    return tu_targets(t, 2, 32);
}

static void write_cphd(const char *path, struct cphd_gen *g)
{
    sarbp_phd *p = scene();
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, 34.05, -118.25, 35.0, 0));
    if (!g->fmt) g->fmt = "CF8";
    tu_write_cphd(path, p, &r, g);
    sarbp_phd_free(p);
}

/* The scene as a CPHD at tu_tmp(name), with one replacement in its XML.
 * Returns a static buffer. */
static const char *cphd_with(const char *name, const char *from, const char *to)
{
    static char path[1024];
    struct cphd_gen g = {.from = {from}, .to = {to}};
    snprintf(path, sizeof path, "%s", tu_tmp(name));
    write_cphd(path, &g);
    return path;
}

/* "<CollectorName" with n attributes name="v", each value vlen bytes of
 * '=', then more and ">"; malloc'd */
static char *collector_attributes(size_t n, size_t vlen, const char *more)
{
    const size_t each = 16 + vlen;
    char *s = malloc(n * each + strlen(more) + 64);
    assert_non_null(s);
    size_t l = (size_t)sprintf(s, "<CollectorName");
    for (size_t i = 0; i < n; i++) {
        l += (size_t)sprintf(s + l, " a%zu=\"", i);
        memset(s + l, '=', vlen);
        l += vlen;
        s[l++] = '"';
    }
    sprintf(s + l, "%s>", more);
    return s;
}

static void test_xml_limits(void **state)
{
    (void)state;
    /* over the 4 MiB cap: padding in an element of its own */
    {
        const size_t pad = (size_t)5 << 20;
        char *to = malloc(pad + 64);
        assert_non_null(to);
        strcpy(to, "<Pad>");
        memset(to + 5, 'x', pad);
        strcpy(to + 5 + pad, "</Pad></CPHD>");
        const char *path = cphd_with("xml_5mib.cphd", "</CPHD>", to);
        free(to);
        expect_refused(path, "sarbp reads 1 byte to 4 MiB");
    }
    /* 101 attributes on one element: refused before libxml2 parses */
    {
        char *to = collector_attributes(101, 1, "");
        const char *path = cphd_with("attrs_101.cphd", "<CollectorName>", to);
        free(to);
        expect_refused(path, "has 101 attributes");
    }
    /* 100: 99 with values full of '=' and one with '>' and '=' inside
     * single quotes: read */
    {
        char *to = collector_attributes(99, 30, " q='>=>'");
        const char *path = cphd_with("attrs_100.cphd", "<CollectorName>", to);
        free(to);
        if (tu_run("info %s", path) != 0)
            fail_msg("100 attributes with '=' in their values refused:\n%s", err);
        assert_non_null(strstr(out, "collector:          SIMSAT"));
    }
    /* XML that is not UTF-8: one line, libxml2's inner newline gone */
    expect_refused(cphd_with("not_utf8.cphd", "<CoreName>TESTCORE", "<CoreName>TEST\xff\xfe\xc3("),
                   "not well-formed XML");
    /* a CollectionStart that is not a date, and an empty one */
    expect_refused(cphd_with("feb29.cphd", "2026-11-23T10:00:00.000000Z", "2023-02-29T10:00:00.000000Z"),
                   "'2023-02-29T10:00:00.000000Z' is not a UTC date and time: the day");
    expect_refused(cphd_with("nostart.cphd", "2026-11-23T10:00:00.000000Z", ""),
                   "CollectionStart '' is not a UTC date");
}

/* ---- --collect-start and the SICD writer ----------------------------------------- */

static void test_collect_start_option(void **state)
{
    (void)state;
    sarbp_phd *p = scene();
    const char *h5 = tu_tmp("cs_phd.h5"), *o = tu_tmp("cs.nitf");
    tu_ok(sarbp_phd_write_h5(h5, p));
    sarbp_phd_free(p);
    static const char *const bad[] = {"0000-00-00T00:00:00Z", "9999-99-99T99:99:99Z",
                                      "2026-02-29T00:00:00Z", "2026-01-01T24:00:00Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int rc = tu_run("form -i %s -o %s --scene-ref 10,20,0 --prf 500 --collect-start %s "
                              "--backend cpu -q", h5, o, bad[i]);
        if (rc != 2 || !strstr(err, "--collect-start") || !strstr(err, bad[i]) ||
            strchr(err, '\n') == NULL || strstr(strchr(err, '\n') + 1, "--collect-start"))
            fail_msg("--collect-start %s: exit %d, want 2 naming the option:\n%s", bad[i], rc,
                     err);
        assert_false(tu_exists(o));
    }
    /* the control: a real date makes a SICD */
    assert_int_equal(tu_run("form -i %s -o %s --scene-ref 10,20,0 --prf 500 --collect-start "
                            "2024-02-29T23:59:60Z --backend cpu -q --grid 32x32 --spacing 0.3",
                            h5, o), 0);
    assert_true(tu_exists(o));
}

static void test_sicd_writer_refuses(void **state)
{
    (void)state;
    char cphd[1024], img_h5[1024];
    snprintf(cphd, sizeof cphd, "%s", tu_tmp("sicd_src.cphd"));
    snprintf(img_h5, sizeof img_h5, "%s", tu_tmp("sicd_img.h5"));
    struct cphd_gen g = {.fmt = "CF8"};
    write_cphd(cphd, &g);
    assert_int_equal(tu_run("form -i %s -o %s --backend cpu -q --grid 32x32 --spacing 0.3", cphd,
                            img_h5), 0);
    sarbp_image *img;
    tu_ok(sarbp_image_read(img_h5, &img));
    const char *in = cphd;
    sarbp_reader *rd;
    tu_ok(sarbp_reader_open(&in, 1, &rd));
    const sarbp_image_context ctx = {.meta = sarbp_reader_meta(rd),
                                     .times = sarbp_reader_times(rd)};
    const char *nitf = tu_tmp("lib.nitf");
    tu_ok(sarbp_image_write_all_ctx(&nitf, 1, img, 0, &ctx)); /* the control */
    assert_true(tu_exists(nitf));
    static const char *const bad[] = {"9999-99-99T99:99:99Z", "0000-00-00T00:00:00Z",
                                      "2023-02-29T00:00:00Z", "2026-11-23T10:00:00+01:00"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nitf = tu_tmp("lib_bad.nitf");
        tu_ok(sarbp_image_set_attr(img, "collect_start", bad[i]));
        const sarbp_status st = sarbp_image_write_all_ctx(&nitf, 1, img, 0, &ctx);
        if (st != SARBP_ERR_INVALID || !strstr(sarbp_error_detail(), "collection start") ||
            !strstr(sarbp_error_detail(), bad[i]))
            fail_msg("SICD with collection start '%s': %s (%s), want SARBP_ERR_INVALID",
                     bad[i], sarbp_strerror(st), sarbp_error_detail());
        assert_false(tu_exists(nitf));
    }
    print_message("SICD writer: %zu collection starts refused: %s\n",
                  sizeof bad / sizeof bad[0], sarbp_error_detail());
    sarbp_reader_free(rd);
    sarbp_image_free(img);
}

int main(void)
{
    if (tu_cphd_precondition()) return TU_SKIP_RC;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_date_check),
        cmocka_unit_test(test_reproducers),
        cmocka_unit_test(test_xml_limits),
        cmocka_unit_test(test_collect_start_option),
        cmocka_unit_test(test_sicd_writer_refuses),
    };
    return tu_run_tests(tests);
}
