/* test_provenance.c - what sarbp form records about how an image was made
 * (issue 25 item 5) and reading sarbp's own SICD back (item 6):
 *  - the .h5 image holds npulses, nsamples, upsample as int64, coherent_gain
 *    and ffbp's error target and prediction as float64 (dB units beside
 *    them), x and y with units "m", the algorithm, selection, autofocus,
 *    device and command line; -v says what was applied in one line;
 *  - sarbp_image_read (so metrics and compare) reads the SICD sarbp wrote
 *    back into the .h5 image: same grid, identical pixels, same provenance. */
#include "test_util.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cphd_gen.h"
#include "sarbp/geo.h"

static char out[16384], err[16384];

/* Class of root attribute name of file path (H5T_NO_CLASS when absent) and,
 * for a string, its value in s. */
static H5T_class_t attr_class(const char *path, const char *obj, const char *name, char *s,
                              size_t n)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    H5T_class_t c = H5T_NO_CLASS;
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) {
        hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
        hid_t t = H5Aget_type(a);
        c = H5Tget_class(t);
        if (c == H5T_STRING && s) {
            char *v = NULL;
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(t));
            if (H5Aread(a, mt, &v) >= 0 && v) {
                snprintf(s, n, "%s", v);
                H5free_memory(v);
            }
            H5Tclose(mt);
        }
        H5Tclose(t);
        H5Aclose(a);
    }
    H5Fclose(f);
    return c;
}

static void test_h5_provenance(void **state)
{
    (void)state;
    const sarbp_target t[] = {{0, 0, 0, 1}};
    sarbp_phd *p = tu_targets(t, 1, 128);
    const char *phd = tu_tmp("prov_phd.h5");
    tu_ok(sarbp_phd_write_h5(phd, p));
    sarbp_phd_free(p);
    char img[1024];
    snprintf(img, sizeof img, "%s", tu_tmp("prov_img.h5"));
    assert_int_equal(tu_run("form -i %s -o %s --grid 32x24 --spacing 0.25 --pulses 10:110 "
                            "--window hamming --backend cpu --threads 2 -v", phd, img), 0);
    /* one line says what was applied */
    assert_int_equal(tu_count_prefix_lines(err, "sarbp: form: applied: "), 1);
    assert_non_null(strstr(err, "sarbp: form: applied: bp; pulses 10:110 of 128; range window "
                                "hamming, azimuth window none; autofocus not applied;"));
    char s[1024];
    static const char *const ints[] = {"npulses", "nsamples", "upsample", "nx", "ny"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        assert_int_equal(attr_class(img, ".", ints[i], NULL, 0), H5T_INTEGER);
    static const char *const floats[] = {"coherent_gain", "dx", "dy", "xc", "yc", "zc"};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        assert_int_equal(attr_class(img, ".", floats[i], NULL, 0), H5T_FLOAT);
    static const char *const metres[][2] = {{".", "dx_units"}, {".", "dy_units"},
                                             {"x", "units"}, {"y", "units"}};
    for (size_t i = 0; i < 4; i++) {
        s[0] = '\0';
        assert_int_equal(attr_class(img, metres[i][0], metres[i][1], s, sizeof s), H5T_STRING);
        assert_string_equal(s, "m");
    }
    static const char *const strs[][2] = {
        {"algorithm", "bp"}, {"selection", "pulses 10:110 of 128"},
        {"autofocus", "not applied"}, {"device", "cpu, 2 threads"},
        {"range_window", "hamming"}, {"precision", "fp32"}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        s[0] = '\0';
        assert_int_equal(attr_class(img, ".", strs[i][0], s, sizeof s), H5T_STRING);
        assert_string_equal(s, strs[i][1]);
    }
    assert_int_equal(attr_class(img, ".", "command_line", s, sizeof s), H5T_STRING);
    assert_true(!strncmp(s, "sarbp form -i ", 14) && strstr(s, "--window hamming"));
    /* read back: the numbers are the image's attributes again */
    sarbp_image *im;
    tu_ok(sarbp_image_read(img, &im));
    assert_string_equal(sarbp_image_get_attr(im, "npulses"), "100");
    assert_string_equal(sarbp_image_get_attr(im, "upsample"), "8");
    assert_null(sarbp_image_get_attr(im, "dx_units"));
    /* written again, it is the same file's attributes */
    char again[1024];
    snprintf(again, sizeof again, "%s", tu_tmp("prov_again.h5"));
    tu_ok(sarbp_image_write(again, im, 50));
    sarbp_image_free(im);
    assert_int_equal(attr_class(again, ".", "npulses", NULL, 0), H5T_INTEGER);
    assert_int_equal(attr_class(again, ".", "coherent_gain", NULL, 0), H5T_FLOAT);
}

static void test_ffbp_provenance(void **state)
{
    (void)state;
    const sarbp_target t[] = {{0, 0, 0, 1}, {2, -1, 0, 0.5}};
    sarbp_phd *p = tu_targets(t, 2, 256);
    const char *phd = tu_tmp("prov_ffbp_phd.h5");
    tu_ok(sarbp_phd_write_h5(phd, p));
    sarbp_phd_free(p);
    char img[1024], s[256];
    snprintf(img, sizeof img, "%s", tu_tmp("prov_ffbp.h5"));
    assert_int_equal(tu_run("form -i %s -o %s --grid 64x64 --spacing 0.2 --algorithm ffbp "
                            "--backend cpu -v", phd, img), 0);
    assert_non_null(strstr(err, "sarbp: form: applied: ffbp (base "));
    assert_int_equal(attr_class(img, ".", "algorithm", s, sizeof s), H5T_STRING);
    assert_string_equal(s, "ffbp");
    static const char *const f[] = {"max_error_db", "ffbp_predicted_error_db", "ffbp_os_theta",
                                    "ffbp_os_rho"};
    for (size_t i = 0; i < 4; i++) assert_int_equal(attr_class(img, ".", f[i], NULL, 0), H5T_FLOAT);
    assert_int_equal(attr_class(img, ".", "ffbp_base", NULL, 0), H5T_INTEGER);
    assert_int_equal(attr_class(img, ".", "max_error_db_units", s, sizeof s), H5T_STRING);
    assert_string_equal(s, "dB");
    sarbp_image *im;
    tu_ok(sarbp_image_read(img, &im));
    assert_string_equal(sarbp_image_get_attr(im, "max_error_db"), "-60");
    char *end;
    const double pe = strtod(sarbp_image_get_attr(im, "ffbp_predicted_error_db"), &end);
    assert_true(*end == '\0' && pe <= -60);
    sarbp_image_free(im);
}

/* The SICD XML of nitf (the file's text from "<SICD"), malloc'd. */
static char *sicd_xml(const char *nitf)
{
    FILE *f = fopen(nitf, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = '\0';
    char *x = NULL;
    for (long i = 0; i + 5 < n; i++) /* past the binary pixels */
        if (!memcmp(b + i, "<SICD ", 6)) x = b + i;
    assert_non_null(x);
    memmove(b, x, strlen(x) + 1);
    return b;
}

static double xml_num_after(const char *xml, const char *from, const char *tag)
{
    const char *p = strstr(xml, from);
    assert_non_null(p);
    p = strstr(p, tag);
    assert_non_null(p);
    char *end;
    const double v = strtod(p + strlen(tag), &end);
    assert_true(end != p + strlen(tag));
    return v;
}

/* A cut or altered copy of the SICD nitf is an error, never a crash or a
 * wrong image */
static void sicd_damaged(const char *nitf)
{
    FILE *f = fopen(nitf, "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 20];
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 2000 && n < sizeof buf);
    const size_t cuts[] = {4, 300, 400, 1000, n / 2, n - 10};
    char cut[1024];
    snprintf(cut, sizeof cut, "%s", tu_tmp("prov_cut.nitf"));
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        f = fopen(cut, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, cuts[i], f), cuts[i]);
        fclose(f);
        sarbp_image *im = NULL;
        assert_int_not_equal(sarbp_image_read(cut, &im), SARBP_OK);
        assert_null(im);
    }
    /* the layout parameter pointing outside the grid */
    char *p = NULL;
    for (size_t i = 0; i + 20 < n && !p; i++)
        if (!memcmp(buf + i, "name=\"sarbp_layout\">", 20)) p = (char *)buf + i + 20;
    assert_non_null(p);
    p[0] = '9';
    f = fopen(cut, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    sarbp_image *im = NULL;
    assert_int_equal(sarbp_image_read(cut, &im), SARBP_ERR_FORMAT);
    assert_int_equal(tu_run("metrics %s", cut), 1);
}

/* sarbp's SICD (one segment and several, default grid and given one) reads
 * back as its .h5 image; metrics and compare take it */
static void test_sicd_read_back(void **state)
{
    (void)state;
#ifndef SARBP_HAVE_LIBXML2
    tu_skip("sarbp was built without libxml2, so it reads no CPHD");
#endif
    const sarbp_target t[] = {{0, 0, 0, 1}, {2, -1.5, 0, 0.5}};
    sarbp_phd *p = tu_targets(t, 2, 64);
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, 64.1, -21.9, 40, 0));
    struct cphd_gen g = {.fmt = "CF8"};
    char cphd[1024], nitf[1024], h5[1024];
    snprintf(cphd, sizeof cphd, "%s", tu_tmp("prov_src.cphd"));
    snprintf(nitf, sizeof nitf, "%s", tu_tmp("prov.nitf"));
    snprintf(h5, sizeof h5, "%s", tu_tmp("prov_sicd.h5"));
    tu_write_cphd(cphd, p, &r, &g);
    sarbp_phd_free(p);
    const char *grids[] = {"", "--grid 60x44 --spacing 0.2", "--grid 60x44 --spacing 0.2"};
    for (int i = 0; i < 3; i++) {
        if (i == 2) setenv("SARBP_TEST_SICD_SEGMENT_BYTES", "4000", 1);
        const int rc = tu_run("form -i %s -o %s -o %s %s --window taylor --backend cpu -q",
                              cphd, nitf, h5, grids[i]);
        unsetenv("SARBP_TEST_SICD_SEGMENT_BYTES");
        assert_int_equal(rc, 0);
        sarbp_image *a, *b;
        tu_ok(sarbp_image_read(nitf, &a));
        tu_ok(sarbp_image_read(h5, &b));
        assert_int_equal(a->grid.nx, b->grid.nx);
        assert_int_equal(a->grid.ny, b->grid.ny);
        assert_true(a->grid.dx == b->grid.dx && a->grid.dy == b->grid.dy &&
                    a->grid.xc == b->grid.xc && a->grid.yc == b->grid.yc);
        assert_memory_equal(a->data, b->data, a->grid.nx * a->grid.ny * sizeof *a->data);
        static const char *const keys[] = {"algorithm", "selection", "range_window",
                                           "command_line", "polarisation", "scene_ref"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const char *va = sarbp_image_get_attr(a, keys[k]), *vb = sarbp_image_get_attr(b, keys[k]);
            assert_non_null(va);
            assert_non_null(vb);
            assert_string_equal(va, vb);
        }
        print_message("SICD %s: %zu x %zu at %g x %g m, read back identical to the .h5\n",
                      i == 0 ? "default grid" : i == 1 ? "one segment" : "11-row segments",
                      a->grid.nx, a->grid.ny, a->grid.dx, a->grid.dy);
        sarbp_image_free(a);
        sarbp_image_free(b);
        char *xml = sicd_xml(nitf);
        assert_non_null(strstr(xml, "<RcvChannels size=\"1\">"));
        assert_non_null(strstr(xml, "</RcvChannels><Area><Corner><ACP index=\"1\">"));
        assert_non_null(strstr(xml, "<AzAutofocus>NO</AzAutofocus>"));
        assert_non_null(strstr(xml, "<Parameter name=\"algorithm\">bp</Parameter>"));
        assert_non_null(strstr(xml, "<Parameter name=\"autofocus\">not applied</Parameter>"));
        assert_non_null(strstr(xml, "<Parameter name=\"command_line\">sarbp form -i "));
        if (i == 0) { /* the default grid: what sicdcheck's oversampling test wants */
            for (int ax = 0; ax < 2; ax++) {
                const char *el = ax ? "<Col><UVectECF>" : "<Row><UVectECF>";
                const double ss = xml_num_after(xml, el, "<SS>");
                const double bw = xml_num_after(xml, el, "<ImpRespBW>");
                const double osr = 1 / (bw * ss);
                print_message("default grid: %s OSR %.4f (sicdcheck: 1.1 to 2.2)\n",
                              ax ? "Col" : "Row", osr);
                assert_true(osr >= 1.1 && osr <= 2.2);
            }
        }
        free(xml);
        assert_int_equal(tu_run("compare %s %s", nitf, h5), 0);
        assert_non_null(strstr(out, "max |t - r|             0.0000e+00"));
        assert_int_equal(tu_run("metrics %s", nitf), 0);
    }
    sicd_damaged(nitf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h5_provenance),
        cmocka_unit_test(test_ffbp_provenance),
        cmocka_unit_test(test_sicd_read_back),
    };
    return tu_run_tests(tests);
}
