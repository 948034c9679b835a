/* test_slow_sarkit.c - interoperability with SARkit, NGA's reference Python
 * tools for CPHD and SICD (pip package sarkit[verification]).
 *
 * A virtual environment under the build directory (tests/venv-sarkit) gets
 * sarkit from PyPI on first use; with no network (or no python3 -m venv)
 * the test is skipped, saying so, never passed. Then:
 *  - CPHD written by SARkit: SARkit reads the test's CPHD (CF8 and CI2, FX
 *    domain; CF8 TOA domain) and writes it again with its own Writer (its
 *    header, alignment and big-endian packing); sarbp forms that file and
 *    the image equals the one formed from the same samples in sarbp's
 *    HDF5;
 *  - SICD read by SARkit: sicdcheck (SARkit's consistency checker, schema
 *    included) reports no error and no warning on sarbp's SICD, and SARkit's
 *    NitfReader gives pixels equal to sarbp's .npy output (a flipped or
 *    transposed view of it, as the SICD orientation rule makes it), one
 *    image segment or several (SARBP_TEST_SICD_SEGMENT_BYTES). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cphd_gen.h"
#include "sarbp/geo.h"

static char out[16384], err[8192];

#define VENV SARBP_TEST_TMP "/../venv-sarkit"

static int have_sarkit(void)
{
    static int state = -1;
    if (state >= 0) return state;
    if (system(VENV "/bin/python -c 'import sarkit.cphd, sarkit.sicd, sarkit.verification' "
                    ">/dev/null 2>&1") == 0)
        return state = 1;
    int rc = system("(python3 -m venv '" VENV "' && timeout 600 '" VENV "/bin/pip' install -q "
                    "'sarkit[verification]') >'" SARBP_TEST_TMP "/pip.log' 2>&1");
    state = rc == 0 && system(VENV "/bin/python -c 'import sarkit.sicd' >/dev/null 2>&1") == 0;
    if (!state) print_message("sarkit could not be installed (see %s/pip.log)\n", SARBP_TEST_TMP);
    return state;
}

#define sh(...) tu_sh(out, sizeof out, __VA_ARGS__)

static const char *const rewrite_py =
    "import sys, sarkit.cphd as sc\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    r = sc.Reader(f)\n"
    "    md = r.metadata\n"
    "    sig, pvp = r.read_channel('CH1')\n"
    "with open(sys.argv[2], 'wb') as f:\n"
    "    with sc.Writer(f, sc.Metadata(xmltree=md.xmltree)) as w:\n"
    "        w.write_signal('CH1', sig)\n"
    "        w.write_pvp('CH1', pvp)\n";

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static double ser_of(const char *a, const char *b)
{
    sarbp_image *x, *y;
    tu_ok(sarbp_image_read(a, &x));
    tu_ok(sarbp_image_read(b, &y));
    const double s = tu_ser_c32(x->data, y->data, x->grid.nx * x->grid.ny);
    sarbp_image_free(x);
    sarbp_image_free(y);
    return s;
}

#define FORM "--backend cpu --precision fp64 --grid 48x40 --spacing 0.3 -q"

static void test_cphd_by_sarkit(void **state)
{
    (void)state;
#ifndef SARBP_HAVE_LIBXML2
    tu_skip("sarbp was built without libxml2, so it reads no CPHD");
#endif
    if (!have_sarkit()) tu_skip("no sarkit: cannot install it from PyPI here (offline?)");
    char py[1024]; /* tu_tmp's slots rotate */
    snprintf(py, sizeof py, "%s", tu_tmp("rewrite.py"));
    write_text(py, rewrite_py);
    const char *fmts[] = {"CF8", "CI2", "CF8"};
    for (int i = 0; i < 3; i++) {
        const sarbp_target t[] = {{0, 0, 0, 1}, {3.5, -2.25, 0, 0.7}};
        sarbp_phd *p = tu_targets(t, 2, 128);
        sarbp_scene_ref r;
        tu_ok(sarbp_scene_ref_set(&r, -33.86, 151.21, 12, 0));
        struct cphd_gen g = {.fmt = fmts[i], .version = i ? "1.1.0" : "1.0.1",
                             .toa_samples = i == 2 ? 600 : 0};
        const char *mine = tu_tmp("mine.cphd"), *theirs = tu_tmp("sarkit.cphd");
        const char *h5 = tu_tmp("sk_phd.h5"), *a = tu_tmp("sk_a.h5"), *b = tu_tmp("sk_b.h5");
        tu_write_cphd(mine, p, &r, &g);
        tu_ok(sarbp_phd_write_h5(h5, p));
        sarbp_phd_free(p);
        if (sh(VENV "/bin/python %s %s %s 2>&1", py, mine, theirs) != 0)
            fail_msg("sarkit could not rewrite the CPHD:\n%s", out);
        assert_int_equal(tu_run("form -i %s -o %s " FORM, theirs, a), 0);
        assert_int_equal(tu_run("form -i %s -o %s " FORM, h5, b), 0);
        /* measured (2-core x86): CF8 175.5 dB, CI2 168.4 dB (fp64; the
         * positions pass through ECEF, CI2 samples through AmpSF), TOA CF8
         * 157.0 dB (the TOA samples rounded to float32) */
        const double measured[] = {175.5, 168.4, 157.0};
        tu_bar_min(ser_of(a, b), measured[i], 30, "dB", "CPHD %s %s written by SARkit vs HDF5, "
                   "fp64 SER", fmts[i], i == 2 ? "TOA" : "FX");
    }
}

static const char *const read_py =
    "import sys, numpy as np, sarkit.sicd as ss\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    a = ss.NitfReader(f).read_image()\n"
    "b = np.load(sys.argv[2])\n"
    "views = [b, b[::-1], b[:, ::-1], b[::-1, ::-1], b.T, b.T[::-1], b.T[:, ::-1], b.T[::-1, ::-1]]\n"
    "hits = [i for i, v in enumerate(views) if v.shape == a.shape and np.array_equal(a, v)]\n"
    "print('sarkit', a.shape, a.dtype, 'equal to view', hits)\n"
    "sys.exit(0 if len(hits) == 1 else 1)\n";

/* Each image segment's NROWS, ILOC, IDLVL, IALVL and IGEOLO against
 * SARkit's own SICD image sizing (the writer's; private to SARkit, so its
 * absence exits 3) run with the same lowered segment limit. */
static const char *const sizing_py =
    "import sys\n"
    "try:\n"
    "    import sarkit.sicd._constants as c, sarkit.sicd._io as sio\n"
    "    sizing = sio.image_segment_sizing_calculations\n"
    "except (ImportError, AttributeError):\n"
    "    sys.exit(3)\n"
    "c.IS_SIZE_MAX = int(sys.argv[2])\n"
    "import sarkit.sicd as ss\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    r = ss.NitfReader(f)\n"
    "    n, want = sizing(r.metadata.xmltree)\n"
    "    got = [s['subheader'] for s in r.jbp['ImageSegments']]\n"
    "key = lambda h: (h['NROWS'].value, h['ILOC'].value[0], h['IDLVL'].value, h['IALVL'].value, h['IGEOLO'].value)\n"
    "bad = [i for i, (h, w) in enumerate(zip(got, want)) if key(h) != (w.nrows, w.iloc_rows, w.idlvl, w.ialvl, w.igeolo)]\n"
    "print('sarbp wrote', len(got), 'segments, SARkit sizes', n, '; differing:', bad)\n"
    "sys.exit(0 if n == len(got) and not bad else 1)\n";

static void test_sicd_by_sarkit(void **state)
{
    (void)state;
#ifndef SARBP_HAVE_LIBXML2
    tu_skip("sarbp was built without libxml2, so it reads no CPHD");
#endif
    if (!have_sarkit()) tu_skip("no sarkit: cannot install it from PyPI here (offline?)");
    const sarbp_target t[] = {{0, 0, 0, 1}, {2, -1.5, 0, 0.5}};
    sarbp_phd *p = tu_targets(t, 2, 128);
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, 64.1, -21.9, 40, 0));
    struct cphd_gen g = {.fmt = "CI4"};
    const char *cphd = tu_tmp("sicd_src.cphd"), *nitf = tu_tmp("sk.nitf"), *npy = tu_tmp("sk.npy");
    tu_write_cphd(cphd, p, &r, &g);
    sarbp_phd_free(p);
    const char *windows[] = {"", "--window taylor --az-window hamming", ""};
    for (int i = 0; i < 3; i++) {
        /* the third: image segments of 11 rows of 44 pixels (sicd_write.c's
         * limit for tests) */
        if (i == 2) setenv("SARBP_TEST_SICD_SEGMENT_BYTES", "4000", 1);
        const int rc_form = tu_run("form -i %s -o %s -o %s --grid 60x44 --spacing 0.2 %s "
                                   "--backend cpu -q", cphd, nitf, npy, windows[i]);
        unsetenv("SARBP_TEST_SICD_SEGMENT_BYTES");
        assert_int_equal(rc_form, 0);
        /* segmented: sicdcheck sizes the segments with the true 10 GB limit
         * (its own constant), so the two checks built on that sizing are
         * left out; the IID1, IDLVL, IALVL and size checks still run */
        const int rc = sh(VENV "/bin/sicdcheck --no-color %s %s 2>&1",
                          i == 2 ? "--ignore check_nitf_imseg_size check_nitf_igeolo --" : "",
                          nitf);
        print_message("sicdcheck (%s): exit %d, %zu bytes of findings\n",
                      i == 2 ? "in image segments" : i ? windows[i] : "no window", rc,
                      strlen(out));
        if (rc != 0 || strstr(out, "[Error]") || strstr(out, "[Warning]"))
            fail_msg("sicdcheck on %s:\n%s", nitf, out);
        char py[1024];
        snprintf(py, sizeof py, "%s", tu_tmp("read.py"));
        write_text(py, read_py);
        if (sh(VENV "/bin/python %s %s %s 2>&1", py, nitf, npy) != 0)
            fail_msg("sarkit's pixels differ from the .npy:\n%s", out);
        print_message("%s", out);
        if (i == 2) {
            snprintf(py, sizeof py, "%s", tu_tmp("sizing.py"));
            write_text(py, sizing_py);
            const int src = sh(VENV "/bin/python %s %s 4000 2>&1", py, nitf);
            if (src == 3) print_message("SARkit has no image_segment_sizing_calculations here: "
                                        "segment headers not compared with its sizing\n");
            else if (src != 0) fail_msg("segments against SARkit's sizing:\n%s", out);
            else print_message("%s", out);
        }
    }
}

/* A Gotcha pass with --scene-ref (and the pulse times Gotcha lacks) gives
 * a SICD that sicdcheck finds nothing in. */
static void test_gotcha_sicd(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in %s", tu_gotcha_dir());
    if (!have_sarkit()) tu_skip("no sarkit: cannot install it from PyPI here (offline?)");
    const char *nitf = tu_tmp("gotcha.nitf");
    assert_int_equal(tu_run("form -i %s --scene-ref 39.78,-84.09,250 --prf 117 --collect-start "
                            "2008-01-01T00:00:00Z --grid 128x128 --spacing 0.2 -o %s "
                            "--backend cpu -q", tu_gotcha_dir(), nitf), 0);
    const int rc = sh(VENV "/bin/sicdcheck --no-color %s 2>&1", nitf);
    print_message("sicdcheck (Gotcha): exit %d, %zu bytes of findings\n", rc, strlen(out));
    if (rc != 0 || strstr(out, "[Error]") || strstr(out, "[Warning]"))
        fail_msg("sicdcheck on %s:\n%s", nitf, out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cphd_by_sarkit),
        cmocka_unit_test(test_sicd_by_sarkit),
        cmocka_unit_test(test_gotcha_sicd),
    };
    return tu_run_tests(tests);
}
