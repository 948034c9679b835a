/* test_hostile_strings.c - a file's strings never reach the terminal raw,
 * and an error's reason survives being wrapped.
 *
 *  - sarbp_error: a detail re-wrapped with the current detail as an
 *    argument ("'%s': invalid grid: %s", path, sarbp_error_detail()) keeps
 *    the reason (it once came out "'x.h5': invalid grid: 'x.h5': invalid
 *    grid:", the reason lost to an overlapping vsnprintf);
 *  - sarbp_sanitize: C0, DEL, C1, the line separators, the bidirectional
 *    overrides and bytes that are not UTF-8 become \xHH; printable UTF-8 is
 *    kept; a cut never splits a character or an escape; sanitising twice
 *    changes nothing; the detail sarbp_error records is sanitised;
 *  - the CLI: a CPHD whose header carries terminal escapes, an HDF5 phase
 *    history whose 'domain' attribute does, and a CPHD whose collector name
 *    holds a C1 control and a bidirectional override: 'sarbp info'
 *    (text and --json) and its error messages show them escaped, no ESC,
 *    BEL or C1 byte comes out, the JSON escapes them as \u00XX and is valid
 *    UTF-8; so does a file name of such bytes; the same for the reproducers of
 *    ../shared/data/bad-inputs/2026-11-27 when that folder is present;
 *  - 'sarbp compare' names the file of a NaN pixel, not its role. */
#include "test_util.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cphd_gen.h"
#include "sarbp/geo.h"

#ifndef SARBP_BAD_INPUTS_DIR
#define SARBP_BAD_INPUTS_DIR "../shared/data/bad-inputs"
#endif
#define BATCH_DIR SARBP_BAD_INPUTS_DIR "/2026-11-27"

static char out[16384], err[16384];

/* ---- helpers --------------------------------------------------------------- */

/* 1 when s holds a byte that drives a terminal: C0 but newline, DEL, or a
 * C1 control UTF-8 encoded (C2 80 to C2 9F); raw C1 bytes are not UTF-8
 * (valid_utf8). */
static int has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return 1;
    return 0;
}

/* 1 when s is well-formed UTF-8 throughout. */
static int valid_utf8(const char *s)
{
    while (*s) {
        const int n = sarbp_utf8_decode(s, NULL);
        if (!n) return 0;
        s += n;
    }
    return 1;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void reference(sarbp_scene_ref *r)
{
    tu_ok(sarbp_scene_ref_set(r, 34.043085, -118.267202, 35.0, 0));
}

static void write_cphd(const char *path, struct cphd_gen *g)
{
    const sarbp_target t[] = {{0, 0, 0, 1}};
    sarbp_phd *p = tu_targets(t, 1, 16);
    sarbp_scene_ref r;
    reference(&r);
    tu_write_cphd(path, p, &r, g);
    sarbp_phd_free(p);
}

/* ---- the error detail ------------------------------------------------------ */

static void test_rewrap_keeps_reason(void **state)
{
    (void)state;
    sarbp_error(SARBP_ERR_INVALID, "grid spacing 0 x 0.25 m is not positive");
    assert_int_equal(sarbp_error(SARBP_ERR_INVALID, "'%s': invalid grid: %s", "x.h5",
                                 sarbp_error_detail()),
                     SARBP_ERR_INVALID);
    assert_string_equal(sarbp_error_detail(), "'x.h5': invalid grid: grid spacing 0 x 0.25 m is not positive");
    /* twice, and with the detail first in the format */
    sarbp_error(SARBP_ERR_IO, "%s (while writing 'y.png')", sarbp_error_detail());
    assert_string_equal(sarbp_error_detail(), "'x.h5': invalid grid: grid spacing 0 x 0.25 m is not "
                                              "positive (while writing 'y.png')");
    /* a detail at the limit, wrapped: cut, never garbled */
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sarbp_error(SARBP_ERR_INVALID, "%s", big);
    assert_int_equal(strlen(sarbp_error_detail()), 1023);
    sarbp_error(SARBP_ERR_INVALID, "'%s': %s", "z.h5", sarbp_error_detail());
    assert_int_equal(strncmp(sarbp_error_detail(), "'z.h5': aaaa", 12), 0);
    assert_int_equal(strlen(sarbp_error_detail()), 1023);
    sarbp_error_clear();
}

/* ---- the sanitiser ---------------------------------------------------------- */

static void check_sanitize(const char *in, const char *want)
{
    char buf[256];
    const size_t len = sarbp_sanitize(buf, sizeof buf, in);
    assert_string_equal(buf, want);
    assert_int_equal(len, strlen(want));
    /* idempotent: what is printed once prints the same wrapped again */
    char again[256];
    sarbp_sanitize(again, sizeof again, buf);
    assert_string_equal(again, want);
}

static void test_sanitize(void **state)
{
    (void)state;
    check_sanitize("plain 'x.h5': 3 dB", "plain 'x.h5': 3 dB");
    check_sanitize("\x1b]0;PWNED\x07\x1b[2J", "\\x1b]0;PWNED\\x07\\x1b[2J");
    check_sanitize("a\tb\nc\rd\x7f", "a\\x09b\\x0ac\\x0dd\\x7f");
    check_sanitize("C1 \xc2\x9b" "31m", "C1 \\xc2\\x9b31m");     /* U+009B, CSI */
    check_sanitize("raw \x9b" "31m \xff\xfe", "raw \\x9b31m \\xff\\xfe"); /* not UTF-8 */
    check_sanitize("\xe2\x80\xae" "evil", "\\xe2\\x80\\xaeevil");       /* U+202E */
    check_sanitize("\xe2\x80\xa8", "\\xe2\\x80\\xa8");                  /* U+2028 */
    check_sanitize("\xc0\xaf \xed\xa0\x80", "\\xc0\\xaf \\xed\\xa0\\x80"); /* overlong, surrogate */
    check_sanitize("\xe6\x97\xa5\xe6\x9c\xac 45\xc2\xb0 caf\xc3\xa9 \xf0\x9f\x93\xa1",
                   "\xe6\x97\xa5\xe6\x9c\xac 45\xc2\xb0 caf\xc3\xa9 \xf0\x9f\x93\xa1");
    check_sanitize("cut \xe6\x97", "cut \\xe6\\x97"); /* a sequence cut short by the end */
    check_sanitize("a\\x1b", "a\\x1b");                /* backslashes left alone */

    /* the size: counted without out, cut between whole pieces */
    assert_int_equal(sarbp_sanitize(NULL, 0, "\x1b" "ab"), 6);
    assert_int_equal(sarbp_sanitize(NULL, 0, NULL), 0);
    char small[6];
    assert_int_equal(sarbp_sanitize(small, sizeof small, "ab\x1b" "cd"), 8);
    assert_string_equal(small, "ab"); /* "\x1b" did not fit whole: nothing after it */
    assert_int_equal(sarbp_sanitize(small, sizeof small, "ab\xc3\xa9\xc3\xa9"), 6);
    assert_string_equal(small, "ab\xc3\xa9"); /* never half a character */

    /* the recorded detail is sanitised */
    sarbp_error(SARBP_ERR_FORMAT, "'%s': unknown domain '%s'", "f\x1b.h5", "\x1b[2J\xc2\x9b");
    assert_string_equal(sarbp_error_detail(), "'f\\x1b.h5': unknown domain '\\x1b[2J\\xc2\\x9b'");
    sarbp_error_clear();
}

static void test_utf8_decode(void **state)
{
    (void)state;
    unsigned cp = 0;
    assert_int_equal(sarbp_utf8_decode("A", &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(sarbp_utf8_decode("\xc2\x9b", &cp), 2);
    assert_int_equal(cp, 0x9b);
    assert_int_equal(sarbp_utf8_decode("\xf4\x8f\xbf\xbf", &cp), 4);
    assert_int_equal(cp, 0x10ffff);
    assert_int_equal(sarbp_utf8_decode("\xf4\x90\x80\x80", NULL), 0); /* above U+10FFFF */
    assert_int_equal(sarbp_utf8_decode("\xe0\x80\x80", NULL), 0);     /* overlong */
    assert_int_equal(sarbp_utf8_decode("\xc2", NULL), 0);             /* cut by the NUL */
    assert_int_equal(sarbp_utf8_decode("\x80", NULL), 0);
}

/* ---- the CLI ---------------------------------------------------------------- */

/* A CPHD header line of terminal escapes, C1 as UTF-8 and a raw byte. */
static void test_cphd_header_escape(void **state)
{
    (void)state;
    const char *path = tu_tmp("hostile_header.cphd");
    struct cphd_gen g = {.fmt = "CF8", .hfrom = "CLASSIFICATION := UNCLASSIFIED",
                         .hto = "\x1b]0;PWNED\x07\x1b[2J\xc2\x9b" "31mFAKE\xff"};
    write_cphd(path, &g);
    assert_int_equal(tu_run("info '%s'", path), 1);
    printf("%s", err);
    assert_string_equal(out, "");
    assert_int_equal(count_lines(err), 1);
    assert_false(has_control(err));
    assert_true(valid_utf8(err));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "\\x1b]0;PWNED\\x07\\x1b[2J\\xc2\\x9b31mFAKE\\xff"));
    remove(path);
}

/* A string attribute name = v on obj. */
static void str_attr(hid_t obj, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    assert_true(H5Tset_size(t, strlen(v) + 1) >= 0);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0 && H5Awrite(a, t, v) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

/* The head of sarbp's own HDF5 phase-history layout, written with HDF5
 * itself (the reader reads the domain before any dataset), its 'domain'
 * attribute an escape sequence. */
static void test_h5_attribute_escape(void **state)
{
    (void)state;
    const char *path = tu_tmp("hostile_domain.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    str_attr(f, "sarbp_format", SARBP_PHD_FORMAT_NAME);
    const int version = SARBP_PHD_FORMAT_VERSION;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "sarbp_format_version", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &version) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    str_attr(f, "domain", "\x1b]0;PWNED\x07\x1b[2Jtime\xc2\x85");
    assert_true(H5Fclose(f) >= 0);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tu_run("info %s '%s'", k ? "--json" : "", path), 1);
        printf("%s", err);
        assert_string_equal(out, "");
        assert_int_equal(count_lines(err), 1);
        assert_false(has_control(err));
        assert_true(valid_utf8(err));
        assert_non_null(strstr(err, "\\x1b]0;PWNED\\x07\\x1b[2Jtime\\xc2\\x85"));
    }
    remove(path);
}

/* A valid CPHD whose collector name holds what XML allows but a terminal
 * must not see raw: a C1 control (CSI), a bidirectional override (the
 * reader itself turns C0 controls into '?'). */
static void test_info_prints_file_strings_escaped(void **state)
{
    (void)state;
    const char *path = tu_tmp("hostile_collector.cphd");
    struct cphd_gen g = {.fmt = "CF8", .from = {"SIMSAT"},
                         .to = {"SIM\xc2\x9b" "2JSAT\xe2\x80\xae" "cba\xc2\xb0"}};
    write_cphd(path, &g);
    assert_int_equal(tu_run("info '%s'", path), 0);
    printf("%s", out);
    assert_false(has_control(out));
    assert_non_null(strstr(out, "collector:          SIM\\xc2\\x9b2JSAT\\xe2\\x80\\xaecba\xc2\xb0\n"));
    assert_int_equal(tu_run("info --json '%s'", path), 0);
    printf("%s", out);
    assert_false(has_control(out));
    assert_true(valid_utf8(out));
    assert_non_null(strstr(out, "\"collector\": \"SIM\\u009b2JSAT\xe2\x80\xae" "cba\xc2\xb0\""));
    remove(path);
}

/* A file name of an escape sequence, a C1 control and a byte that is not
 * UTF-8: escaped in the text, \u00XX and U+FFFD in the JSON (cli_json_fstr,
 * what summary.json is to be written with too). */
static void test_hostile_file_name(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/name\x1b[2J\xc2\x9b\xff.cphd", SARBP_TEST_TMP);
    remove(path);
    struct cphd_gen g = {.fmt = "CF8"};
    write_cphd(path, &g);
    assert_int_equal(tu_run("info '%s'", path), 0);
    assert_false(has_control(out));
    assert_true(valid_utf8(out));
    assert_non_null(strstr(out, "name\\x1b[2J\\xc2\\x9b\\xff.cphd (16 pulses, CPHD)"));
    assert_int_equal(tu_run("info --json '%s'", path), 0);
    printf("%s", out);
    assert_false(has_control(out));
    assert_true(valid_utf8(out));
    assert_non_null(strstr(out, "name\\u001b[2J\\u009b\\ufffd.cphd\""));
    assert_int_equal(tu_run("info '%s.missing'", path), 1); /* the name in a message */
    printf("%s", err);
    assert_false(has_control(err));
    assert_true(valid_utf8(err));
    assert_non_null(strstr(err, "name\\x1b[2J\\xc2\\x9b\\xff.cphd.missing"));
    remove(path);
}

/* The reproducers of 2026-11-27, when the shared folder is here. */
static void test_reproducers(void **state)
{
    (void)state;
    const char *files[] = {"cphd_header_terminal_escape.cphd", "h5_domain_terminal_escape.h5"};
    int ran = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", BATCH_DIR, files[i]);
        if (access(path, R_OK) != 0) continue;
        ran++;
        assert_int_equal(tu_sh(out, sizeof out, "'%s' info '%s' 2>&1; echo \"exit $?\"", SARBP_EXE,
                               path), 0);
        printf("%s", out);
        assert_false(has_control(out));
        assert_true(valid_utf8(out));
        assert_null(strchr(out, '\x1b'));
        assert_non_null(strstr(out, "\\x1b"));
        assert_non_null(strstr(out, files[i]));
        assert_non_null(strstr(out, "\nexit 1\n"));
        assert_int_equal(count_lines(out), 2);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/img_dx_zero_garbled_message.h5", BATCH_DIR);
    if (access(path, R_OK) == 0) {
        ran++;
        assert_int_equal(tu_run("compare '%s' '%s'", path, path), 1);
        printf("%s", err);
        assert_string_equal(out, "");
        assert_int_equal(count_lines(err), 1);
        /* the reason, once */
        assert_non_null(strstr(err, "invalid grid: grid spacing"));
        assert_null(strstr(strstr(err, "invalid grid") + 1, "invalid grid"));
    }
    if (!ran) tu_skip("no reproducers at %s", BATCH_DIR);
}

/* An .npy of nx x ny complex64 pixels, pixel nan_at (if < n) NaN. */
static void write_npy(const char *path, size_t nx, size_t ny, size_t nan_at)
{
    char dict[128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '<c8', 'fortran_order': False, 'shape': (%zu, %zu), }",
                      ny, nx);
    size_t hl = 10 + (size_t)dl + 1, pad = (64 - hl % 64) % 64;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    const unsigned short hlen = (unsigned short)((size_t)dl + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hlen & 0xff, f);
    fputc(hlen >> 8, f);
    fputs(dict, f);
    for (size_t i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    for (size_t i = 0; i < nx * ny; i++) {
        float v[2] = {i == nan_at ? NAN : (float)(i % 7), 0.5f};
        fwrite(v, sizeof v, 1, f); /* little-endian hosts only: the CI's */
    }
    assert_int_equal(fclose(f), 0);
}

static void test_compare_names_nan_file(void **state)
{
    (void)state;
    const char *good = tu_tmp("cmp_good.npy"), *bad = tu_tmp("cmp_nan.npy");
    write_npy(good, 5, 4, (size_t)-1);
    write_npy(bad, 5, 4, 7);
    assert_int_equal(tu_run("compare '%s' '%s'", bad, good), 1);
    printf("%s", err);
    assert_string_equal(out, "");
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, bad));
    assert_non_null(strstr(err, "ix 2, iy 1"));
    assert_null(strstr(err, "test image"));
    assert_int_equal(tu_run("compare '%s' '%s'", good, bad), 1);
    printf("%s", err);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, bad));
    assert_null(strstr(err, "reference"));
    remove(good);
    remove(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewrap_keeps_reason),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_utf8_decode),
        cmocka_unit_test(test_cphd_header_escape),
        cmocka_unit_test(test_h5_attribute_escape),
        cmocka_unit_test(test_info_prints_file_strings_escaped),
        cmocka_unit_test(test_hostile_file_name),
        cmocka_unit_test(test_reproducers),
        cmocka_unit_test(test_compare_names_nan_file),
    };
    return tu_run_tests(tests);
}
