/* test_cli_first_hour.c - issue 25's surprises of an analyst's first hour,
 * from the command line:
 *  - a grid beyond the alias-free scene, pixels coarser than the resolution
 *    and --autofocus with nothing to apply each warn on one stderr line
 *    before forming, and -q silences them;
 *  - an output that is one of the inputs (same path, a hard link, a file of
 *    an input folder) is a usage error (exit 2) naming both, for form and
 *    convert, and the input is left as it was;
 *  - a folder holding HH and VV copies of the same azimuths is refused with
 *    one line naming two files, and --polarisation keeps one;
 *  - info says the polarisation and where it came from (Gotcha names, the
 *    sarbp-phd attribute, CPHD channels, each channel listed); convert
 *    --channel;
 *  - metrics warns, and says "isolated": false, on clutter.
 * The Gotcha parts skip (exit 77 when nothing ran) without the data. */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cphd_gen.h"
#include "sarbp/geo.h"
#include "test_util.h"

static char out[32768], err[16384];
static char sim[1024]; /* a small simulated phase history, made once */

#define run tu_run /* printf-style, fails on a crash */

static int make_sim(void **state)
{
    (void)state;
    return tu_make_sim(sim, sizeof sim, "first_hour_sim.h5",
                       "--pulses 64 --samples 64 --targets 5,20");
}

static int remove_sim(void **state)
{
    (void)state;
    remove(sim);
    return 0;
}

static void has(const char *text, const char *key)
{
    if (!strstr(text, key)) fail_msg("'%s' is missing from: %s", key, text);
}

static void lacks(const char *text, const char *key)
{
    if (strstr(text, key)) fail_msg("'%s' should not be in: %s", key, text);
}

static off_t size_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* ---- 1. warnings before forming ---------------------------------------- */

static void test_grid_warnings(void **state)
{
    (void)state;
    const char *png = tu_tmp("first_hour.png");
    /* the default grid is the alias-free scene: no warning */
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s'", sim, png), 0);
    lacks(err, "warning");
    /* far beyond it, and coarse: both, one line each, before forming (the
     * output folder does not exist, so nothing is formed) */
    assert_int_not_equal(run("form --backend cpu -i '%s' -o /nonexistent-dir/x.png "
                             "--grid 3000x3000 --spacing 5", sim), 0);
    has(err, "sarbp: form: warning: the grid reaches beyond the alias-free scene");
    has(err, "m in x and ");
    has(err, "sarbp: form: warning: pixels of 5 x 5 m are coarser than the resolution");
    print_message("%s", err);
    /* -q silences them */
    assert_int_not_equal(run("form -q --backend cpu -i '%s' -o /nonexistent-dir/x.png "
                             "--grid 3000x3000 --spacing 5", sim), 0);
    lacks(err, "warning");
    /* a grid off centre reaches beyond too */
    assert_int_not_equal(run("form --backend cpu -i '%s' -o /nonexistent-dir/x.png "
                             "--center 1e4,0", sim), 0);
    has(err, "beyond the alias-free scene");
    remove(png);
}

static void test_autofocus_warning(void **state)
{
    (void)state;
    const char *png = tu_tmp("first_hour_af.png");
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s' --autofocus", sim, png), 0);
    has(err, "sarbp: form: warning: --autofocus: the inputs carry no autofocus corrections");
    assert_int_equal(run("form -q --backend cpu -i '%s' -o '%s' --autofocus", sim, png), 0);
    lacks(err, "warning");
    remove(png);
}

/* ---- 3. no output over an input ------------------------------------------ */

static void test_output_over_input(void **state)
{
    (void)state;
    const off_t n = size_of(sim);
    assert_true(n > 0);
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s'", sim, sim), 2);
    has(err, "sarbp: form: output '");
    has(err, "it would be overwritten");
    has(err, "Try 'sarbp form --help'");
    assert_int_equal(size_of(sim), n);
    /* the same inode under another name */
    const char *hard = tu_tmp("first_hour_link.h5");
    remove(hard);
    assert_int_equal(link(sim, hard), 0);
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s'", sim, hard), 2);
    has(err, hard);
    has(err, sim);
    assert_int_equal(run("convert '%s' -o '%s'", sim, hard), 2);
    has(err, "sarbp: convert: output '");
    assert_int_equal(run("convert -i '%s' -o '%s'", sim, sim), 2);
    has(err, "it would be overwritten");
    assert_int_equal(size_of(sim), n);
    remove(hard);
    /* a file of an input folder */
    const char *dir = tu_tmp("first_hour_dir");
    char inside[2048];
    mkdir(dir, 0777);
    snprintf(inside, sizeof inside, "%s/a.h5", dir);
    assert_int_equal(run("convert '%s' -o '%s'", sim, inside), 0);
    const off_t m = size_of(inside);
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s'", dir, inside), 2);
    has(err, "it would be overwritten");
    assert_int_equal(run("convert '%s' -o '%s'", dir, inside), 2);
    assert_int_equal(size_of(inside), m);
    remove(inside);
    rmdir(dir);
}

/* ---- 2. polarisation, duplicate azimuths ---------------------------------- */

/* A sarbp-phd file with a polarisation attribute says so. */
static void test_phd_polarisation(void **state)
{
    (void)state;
    const char *vv = tu_tmp("first_hour_vv.h5");
    assert_int_equal(run("convert '%s' -o '%s'", sim, vv), 0);
    hid_t f = H5Fopen(vv, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 2);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "polarisation", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, "VV") >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
    assert_int_equal(run("info '%s'", vv), 0);
    has(out, "polarisation:       VV (from the file's polarisation attribute)");
    assert_int_equal(run("info --json '%s'", vv), 0);
    has(out, "\"polarisation\": \"V:V\"");
    assert_int_equal(run("info --polarisation VV '%s'", vv), 0);
    assert_int_equal(run("info --polarisation HH '%s'", vv), 1);
    has(err, "no input is HH polarisation (they are VV)");
    assert_int_equal(run("info --polarisation XX '%s'", vv), 2);
    /* the image records it */
    const char *img = tu_tmp("first_hour_vv_img.h5");
    assert_int_equal(run("form -q --backend cpu -i '%s' -o '%s'", vv, img), 0);
    sarbp_image *im;
    tu_ok(sarbp_image_read(img, &im));
    assert_string_equal(sarbp_image_get_attr(im, "polarisation"), "V:V");
    sarbp_image_free(im);
    /* the simulated file says nothing: --polarisation cannot choose */
    assert_int_equal(run("info --polarisation VV '%s'", sim), 1);
    has(err, "cannot tell the polarisation of");
    remove(img);
    remove(vv);
}

/* Two copies of the same pulses under different names: refused naming
 * both; a hard link is "the same file". */
static void test_overlap_sim(void **state)
{
    (void)state;
    const char *dir = tu_tmp("first_hour_overlap");
    char a[2048], b[2048];
    mkdir(dir, 0777);
    snprintf(a, sizeof a, "%s/a.h5", dir);
    snprintf(b, sizeof b, "%s/b.h5", dir);
    assert_int_equal(run("convert '%s' -o '%s'", sim, a), 0);
    assert_int_equal(run("convert '%s' -o '%s'", sim, b), 0);
    assert_int_equal(run("info '%s'", dir), 1);
    has(err, "sarbp: info: '");
    has(err, "a.h5' and '");
    has(err, "b.h5' hold overlapping azimuths");
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s/x.png'", dir, dir), 1);
    has(err, "hold overlapping azimuths");
    /* half the pulses each: no overlap */
    assert_int_equal(run("convert '%s' --pulses 0:32 -o '%s'", sim, a), 0);
    assert_int_equal(run("convert '%s' --pulses 32:64 -o '%s'", sim, b), 0);
    assert_int_equal(run("info '%s'", dir), 0);
    has(out, "pulses:             64");
    /* overlapping by one pulse */
    assert_int_equal(run("convert '%s' --pulses 31:64 -o '%s'", sim, b), 0);
    assert_int_equal(run("info '%s'", dir), 1);
    has(err, "hold overlapping azimuths");
    remove(a);
    remove(b);
    rmdir(dir);
}

static void gotcha_link(const char *dir, int az, const char *pol)
{
    char src[2048], dst[2048];
    snprintf(src, sizeof src, "%s/data_3dsar_pass1_az%03d_HH.mat", tu_gotcha_dir(), az);
    snprintf(dst, sizeof dst, "%s/data_3dsar_pass1_az%03d_%s.mat", dir, az, pol);
    remove(dst);
    if (symlink(src, dst) != 0) fail_msg("cannot link '%s' to '%s'", dst, src);
}

static void test_gotcha_hh_vv(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *dir = tu_tmp("first_hour_hhvv");
    mkdir(dir, 0777);
    gotcha_link(dir, 1, "HH");
    gotcha_link(dir, 2, "HH");
    gotcha_link(dir, 1, "VV");
    gotcha_link(dir, 2, "VV");
    assert_int_equal(run("info '%s'", dir), 1);
    has(err, "(HH) and '");
    has(err, "(VV) hold the same azimuths");
    has(err, "choose one polarisation (--polarisation)");
    print_message("%s", err);
    assert_int_equal(run("form --backend cpu -i '%s' -o '%s/x.png'", dir, dir), 1);
    has(err, "hold the same azimuths");
    /* one line */
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(strchr(err, '\n') + 1, '\n'));
    assert_int_equal(run("info --polarisation VV '%s'", dir), 0);
    has(out, "polarisation:       VV (from the file name)");
    has(out, "files:              2");
    lacks(out, "_HH.mat");
    assert_int_equal(run("info --polarisation hh --json '%s'", dir), 0);
    has(out, "\"polarisation\": \"H:H\"");
    has(out, "\"polarisation_from\": \"the file name\"");
    assert_int_equal(run("info --polarisation HV '%s'", dir), 1);
    has(err, "no input is HV polarisation");
    char p[2048];
    for (int az = 1; az <= 2; az++)
        for (int k = 0; k < 2; k++) {
            snprintf(p, sizeof p, "%s/data_3dsar_pass1_az%03d_%s.mat", dir, az, k ? "VV" : "HH");
            remove(p);
        }
    rmdir(dir);
}

static void test_gotcha_info(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    assert_int_equal(run("info '%s'", tu_gotcha_dir()), 0);
    has(out, "polarisation:       HH (from the file name)");
    has(out, "_az001_HH.mat (117 pulses, Gotcha MATLAB v5): HH from the file name\n");
    /* and the image records it (the SICD writer reads the same attribute) */
    const char *img = tu_tmp("first_hour_gotcha.h5");
    assert_int_equal(run("form -q --backend cpu -i '%s' --pulses 0:16 --grid 16x16 -o '%s'",
                         tu_gotcha_dir(), img), 0);
    sarbp_image *im;
    tu_ok(sarbp_image_read(img, &im));
    assert_string_equal(sarbp_image_get_attr(im, "polarisation"), "H:H");
    sarbp_image_free(im);
    remove(img);
}

static void test_polarisation_parse(void **state)
{
    (void)state;
    char p[8];
    const char *good[][2] = {{"HH", "H:H"}, {"vv", "V:V"}, {"Hv", "H:V"}, {"V:H", "V:H"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(sarbp_polarisation_parse(good[i][0], p, sizeof p), 0);
        assert_string_equal(p, good[i][1]);
    }
    const char *bad[] = {"", "H", "HHH", "XX", "H:X", "H-H", "RHC:RHC"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sarbp_polarisation_parse(bad[i], p, sizeof p), -1);
    assert_int_equal(sarbp_polarisation_parse("HH", p, 3), -1); /* no room */
}

/* Gotcha: a 3000 x 3000 grid at 0.2 m reaches beyond +-51 m; 500 x 500 at
 * 0.2 m stays inside. Nothing is formed: the output folder is missing. */
static void test_gotcha_grid(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    assert_int_not_equal(run("form --backend cpu -i '%s' -o /nonexistent-dir/x.png "
                             "--grid 3000x3000 --spacing 0.2", tu_gotcha_dir()), 0);
    print_message("%s", err);
    /* the smaller of range c / (2 df) = 101.9 m and cross range about 105 m */
    has(err, "sarbp: form: warning: the grid reaches beyond the alias-free scene (+-50.9 m");
    has(err, "by 249.0 m in x and 249.0 m in y");
    lacks(err, "coarser");
    assert_int_not_equal(run("form --backend cpu -i '%s' -o /nonexistent-dir/x.png "
                             "--grid 500x500 --spacing 0.2", tu_gotcha_dir()), 0);
    lacks(err, "warning");
    assert_int_not_equal(run("form --backend cpu -i '%s' -o /nonexistent-dir/x.png "
                             "--grid 100x100 --spacing 1", tu_gotcha_dir()), 0);
    has(err, "sarbp: form: warning: pixels of 1 x 1 m are coarser than the resolution");
    lacks(err, "alias-free");
}

/* ---- 4. CPHD channels -------------------------------------------------------- */

static void test_cphd_channels(void **state)
{
    (void)state;
    const sarbp_target t[] = {{0, 0, 0, 1}};
    sarbp_phd *p = tu_targets(t, 1, 64);
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, 34.043085, -118.267202, 35.0, 0));
    struct cphd_gen g = {.fmt = "CF8", .nchannels = 2};
    const char *cphd = tu_tmp("first_hour.cphd"), *h5 = tu_tmp("first_hour_ch2.h5");
    tu_write_cphd(cphd, p, &r, &g);
    sarbp_phd_free(p);
    assert_int_equal(run("info '%s'", cphd), 0);
    has(out, "channel 'CH1': polarisation V:V");
    has(out, "(read)");
    has(out, "channel 'CH2': polarisation H:V");
    has(out, "polarisation:       V:V (from the CPHD channel)");
    assert_int_equal(run("info --json '%s'", cphd), 0);
    has(out, "\"channels\": [{\"id\": \"CH1\", \"polarisation\": \"V:V\"");
    has(out, "{\"id\": \"CH2\", \"polarisation\": \"H:V\"");
    /* --polarisation picks the channel */
    assert_int_equal(run("info --polarisation HV '%s'", cphd), 0);
    has(out, "polarisation:       H:V");
    assert_int_equal(run("info --polarisation HH '%s'", cphd), 1);
    has(err, "no CPHD channel of polarisation H:H");
    /* convert --channel */
    assert_int_equal(run("convert --channel CH2 '%s' -o '%s'", cphd, h5), 0);
    assert_true(tu_exists(h5));
    assert_int_equal(run("convert --channel CH9 '%s' -o '%s'", cphd, h5), 1);
    has(err, "no CPHD channel 'CH9'");
    assert_int_equal(run("convert --polarisation XY '%s' -o '%s'", cphd, h5), 2);
    assert_int_equal(run("convert --channel '' '%s' -o '%s'", cphd, h5), 2);
    assert_int_equal(run("convert '%s' -o '%s'", cphd, cphd), 2);
    remove(h5);
    remove(cphd);
}

/* ---- metrics on clutter ------------------------------------------------------ */

/* A .npy of complex64 speckle: no point target anywhere. */
static void write_speckle(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char hdr[128];
    int len = snprintf(hdr, sizeof hdr,
                       "{'descr': '<c8', 'fortran_order': False, 'shape': (%zu, %zu), }", n, n);
    const int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    const uint16_t hl = (uint16_t)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f);
    fputc(hl >> 8, f);
    fwrite(hdr, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    srand(25);
    for (size_t i = 0; i < 2 * n * n; i++) {
        /* Gaussian by Box-Muller: circular complex speckle */
        const double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = rand() / (RAND_MAX + 1.0);
        const float x = (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
        fwrite(&x, sizeof x, 1, f);
    }
    fclose(f);
}

static void test_metrics_clutter(void **state)
{
    (void)state;
    const char *npy = tu_tmp("first_hour_speckle.npy");
    write_speckle(npy, 128);
    assert_int_equal(run("metrics --json '%s'", npy), 0);
    has(out, "\"isolated\": false");
    has(err, "sarbp: metrics: warning: the peak at (");
    has(err, "is not an isolated point target");
    print_message("%s", err);
    assert_int_equal(run("metrics -q '%s'", npy), 0);
    has(out, "isolated point target   no");
    lacks(err, "warning");
    /* a simulated point target is one (the shared sim's target, at y = 20 m,
     * lies outside its +-7 m alias-free scene and aliases) */
    const char *img = tu_tmp("first_hour_pt.h5"), *pt = tu_tmp("first_hour_pt_phd.h5");
    assert_int_equal(run("simulate -o '%s' --pulses 64 --samples 64", pt), 0);
    assert_int_equal(run("form -q --backend cpu -i '%s' -o '%s'", pt, img), 0);
    remove(pt);
    assert_int_equal(run("metrics --json '%s'", img), 0);
    has(out, "\"isolated\": true");
    lacks(err, "warning");
    remove(img);
    remove(npy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_polarisation_parse),
        cmocka_unit_test(test_grid_warnings),
        cmocka_unit_test(test_autofocus_warning),
        cmocka_unit_test(test_output_over_input),
        cmocka_unit_test(test_phd_polarisation),
        cmocka_unit_test(test_overlap_sim),
        cmocka_unit_test(test_gotcha_hh_vv),
        cmocka_unit_test(test_gotcha_info),
        cmocka_unit_test(test_gotcha_grid),
        cmocka_unit_test(test_cphd_channels),
        cmocka_unit_test(test_metrics_clutter),
    };
    return tu_run_group("first_hour", tests, sizeof tests / sizeof tests[0], make_sim, remove_sim);
}
