/* test_terrain.c - images formed on the real ground (issue 29; docs/terrain.md).
 *
 * The scene: X band, 45 degrees depression, 3 degrees of aperture (160
 * pulses, 256 samples over 640 MHz), a 128 x 128 grid of 0.3 m pixels; five
 * unit point targets on a Gaussian hill (22 m high, radius 8 m) or on a
 * slope (0.35 and -0.25 m per m). The reference is the exact image (FP64
 * direct summation over every sample) on the same 3-D pixels.
 *  - every cpu path on the heights (FP64 and FP32 bp, cubic 4x): SER against
 *    exact as on flat ground, peaks at the targets' map positions; the same
 *    data formed flat is about 0 dB from it;
 *  - FP32 results independent of the thread count, banded equal to whole;
 *  - refusals at plan create: FFBP (cpu and cuda);
 *  - the cuda back end on the heights (FP32, FP16, mixed; v3 and v3a; bands):
 *    SER against exact (skipped without a GPU);
 *  - the CLI: --heights from .npy (float64, float32) and HDF5, the .h5
 *    image's heights and heights_source; simulate --hill; bad height
 *    arrays (shape, dtype, NaN, Inf, no dataset) and SICD output refused
 *    with one message, exit 1, no output;
 *  - --dem: a DEM written by GDAL (gdal_translate of an ASCII grid; skipped
 *    without gdal-bin) and one written here with libtiff and libgeotiff,
 *    both a plane in latitude and longitude (so that bilinear reading is
 *    exact and the truth is known here independently); bad DEMs (wrong CRS,
 *    no coverage, no-data, NaN, huge declared size, truncated) refused.
 * Bars: the (--heights images >= 60 dB from exact, --dem >= 50 dB,
 * flat <= 3 dB) and, tighter, the measured values minus a stated headroom. */
#include "test_util.h"

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sarbp/terrain.h"

#ifdef SARBP_TEST_GEOTIFF /* tests/CMakeLists.txt: built with libtiff and libgeotiff */
#include <geotiff/geotiffio.h>
#include <geotiff/geovalues.h>
#include <geotiff/xtiffio.h>
#include <tiffio.h>
#endif

static char out[8192], err[8192];

#define N 128
#define SPACING 0.3
#define HILL_H 22.0
#define HILL_R 8.0
#define SLOPE_X 0.35
#define SLOPE_Y (-0.25)
#define NT 5
static const double tx[NT] = {0, 6, -8, 12, -13}, ty[NT] = {0, -4, 7, 10, -11};

static sarbp_grid grid(void)
{
    return (sarbp_grid){.nx = N, .ny = N, .dx = SPACING, .dy = SPACING};
}

/* The scene's pulses for the targets t[NT]. */
static sarbp_phd *simulate_targets(sarbp_target *t)
{
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p.npulses = 160;
    p.nsamples = 256;
    p.aperture_deg = 3;
    p.targets = t;
    p.ntargets = NT;
    sarbp_phd *phd = NULL;
    tu_ok(sarbp_simulate(&p, &phd));
    return phd;
}

/* The heights of the hill (H, R) and slope (sx, sy) on g, which points to
 * them (the caller frees them). */
static double *on_hill(sarbp_grid *g, double H, double R, double sx, double sy)
{
    double *h = malloc(g->nx * g->ny * sizeof *h);
    assert_non_null(h);
    sarbp_hill_heights(g, H, R, sx, sy, h);
    g->height = h;
    return h;
}

static sarbp_phd *scene(double H, double R, double sx, double sy)
{
    sarbp_target t[NT];
    for (int k = 0; k < NT; k++)
        t[k] = (sarbp_target){tx[k], ty[k], sarbp_hill_z(H, R, sx, sy, tx[k], ty[k]), 1};
    return simulate_targets(t);
}

/* The pixel of the largest magnitude within +-4 pixels of (x, y) is at
 * most one pixel from it. */
static void assert_peak_near(const sarbp_c32 *img, double x, double y, const char *what)
{
    const sarbp_grid g = grid();
    const long cx = lround(x / SPACING + 0.5 * (N - 1)), cy = lround(y / SPACING + 0.5 * (N - 1));
    long bx = cx, by = cy;
    double best = -1;
    for (long iy = cy - 4; iy <= cy + 4; iy++)
        for (long ix = cx - 4; ix <= cx + 4; ix++) {
            if (ix < 0 || iy < 0 || ix >= N || iy >= N) continue;
            const sarbp_c32 v = img[iy * N + ix];
            const double m = (double)v.re * v.re + (double)v.im * v.im;
            if (m > best) {
                best = m;
                bx = ix;
                by = iy;
            }
        }
    if (labs(bx - cx) > 1 || labs(by - cy) > 1)
        fail_msg("%s: the peak of the target at (%g, %g) m is at pixel (%ld, %ld) = (%.2f, %.2f) m, "
                 "not within a pixel of (%ld, %ld)", what, x, y, bx, by, sarbp_grid_x(&g, (size_t)bx),
                 sarbp_grid_y(&g, (size_t)by), cx, cy);
}

/* The same targets on flat ground (z = 0) formed flat: the SER every path
 * reaches against the exact image there, which terrain should match. */
static double flat64 = NAN, flat32 = NAN;

static void test_flat_baseline(void **state)
{
    (void)state;
    sarbp_phd *p = scene(0, 0, 0, 0);
    const sarbp_grid g = grid();
    sarbp_c64 *ex = tu_exact64(p, &g);
    sarbp_image *i64 = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    sarbp_image *i32 = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP32, NULL);
    flat64 = tu_ser_c32_c64(i64->data, ex, N * N);
    flat32 = tu_ser_c32_c64(i32->data, ex, N * N);
    print_message("flat ground: SER against exact: fp64 %.2f dB, fp32 %.2f dB\n", flat64, flat32);
    sarbp_image_free(i64);
    sarbp_image_free(i32);
    free(ex);
    sarbp_phd_free(p);
}

/* Every cpu path on the terrain of (H, R, sx, sy) against the exact image. */
static void paths_on(const char *name, double H, double R, double sx, double sy, double m64,
                     double m32)
{
    sarbp_phd *p = scene(H, R, sx, sy);
    sarbp_grid g = grid();
    double *h = on_hill(&g, H, R, sx, sy);
    sarbp_c64 *ex = tu_exact64(p, &g);
    sarbp_image *i64 = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    sarbp_image *i32 = tu_form(p, &g, &sarbp_backend_cpu, SARBP_FP32, NULL);
    const sarbp_grid flat = grid();
    sarbp_image *f64 = tu_form(p, &flat, &sarbp_backend_cpu, SARBP_FP64, NULL);
    const double s64 = tu_ser_c32_c64(i64->data, ex, N * N), s32 = tu_ser_c32_c64(i32->data, ex, N * N);
    const double sf = tu_ser_c32_c64(f64->data, ex, N * N);
    print_message("%s: SER against exact: fp64 %.2f dB, fp32 %.2f dB; formed flat %.2f dB\n", name,
                  s64, s32, sf);
    tu_bar_min(s64, m64, m64 - 60 < 10 ? m64 - 60 : 10, "dB", "%s heights fp64 SER vs exact", name);
    tu_bar_min(s32, m32, m32 - 60 < 10 ? m32 - 60 : 10, "dB", "%s heights fp32 SER vs exact", name);
    tu_bar_max(sf, 0.5, 2.5, "dB", "%s formed flat SER vs exact (about 0 dB)", name);
    if (isfinite(flat64)) { /* as on flat ground, within 3 dB */
        tu_bar_min(s64, flat64, 3.0, "dB", "%s fp64 SER vs exact against flat ground's", name);
        tu_bar_min(s32, flat32, 3.0, "dB", "%s fp32 SER vs exact against flat ground's", name);
    }
    for (int k = 0; k < NT; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s fp32", name);
        assert_peak_near(i32->data, tx[k], ty[k], what);
        snprintf(what, sizeof what, "%s fp64", name);
        assert_peak_near(i64->data, tx[k], ty[k], what);
    }
    sarbp_image_free(i64);
    sarbp_image_free(i32);
    sarbp_image_free(f64);
    free(ex);
    free(h);
    sarbp_phd_free(p);
}

static void test_hill(void **state)
{
    (void)state;
    paths_on("hill", HILL_H, HILL_R, 0, 0, 78.57, 78.54);
}

static void test_slope(void **state)
{
    (void)state;
    paths_on("slope", 0, 0, SLOPE_X, SLOPE_Y, 76.59, 76.50);
}

/* FP32 and FP64 on terrain: one thread equals two bit for bit, bands of 32
 * rows equal one piece; a window of the grid keeps its heights. */
static void test_threads_bands(void **state)
{
    (void)state;
    sarbp_phd *p = scene(HILL_H, HILL_R, 0, 0);
    sarbp_grid g = grid();
    double *h = on_hill(&g, HILL_H, HILL_R, 0, 0);
    const sarbp_precision precs[2] = {SARBP_FP32, SARBP_FP64};
    for (int k = 0; k < 2; k++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        o.threads = 1;
        sarbp_image *one = tu_form(p, &g, &sarbp_backend_cpu, precs[k], &o);
        o.threads = 2;
        sarbp_image *two = tu_form(p, &g, &sarbp_backend_cpu, precs[k], &o);
        sarbp_form_limits lim = {.host_mem = (size_t)1 << 30, .band_rows = 32};
        o.limits = &lim;
        sarbp_image *banded = tu_form(p, &g, &sarbp_backend_cpu, precs[k], &o);
        tu_assert_same(one, two, "terrain: 1 thread vs 2");
        tu_assert_same(one, banded, "terrain: bands of 32 rows vs one piece");
        sarbp_image_free(one);
        sarbp_image_free(two);
        sarbp_image_free(banded);
    }
    /* a window keeps the heights under its pixels */
    size_t x0, y0;
    const sarbp_grid w = sarbp_grid_centre_window(&g, 40, &x0, &y0);
    for (size_t iy = 0; iy < w.ny; iy++)
        for (size_t ix = 0; ix < w.nx; ix++)
            assert_true(sarbp_grid_z(&w, ix, iy) == sarbp_grid_z(&g, x0 + ix, y0 + iy));
    sarbp_grid band;
    tu_ok(sarbp_grid_band(&g, 50, 20, &band));
    assert_true(sarbp_grid_z(&band, 7, 3) == h[53 * N + 7]);
    free(h);
    sarbp_phd_free(p);
}

/* FFBP refuses a grid with heights at plan create. */
static void test_refusals_lib(void **state)
{
    (void)state;
    sarbp_phd *p = scene(HILL_H, HILL_R, 0, 0);
    sarbp_grid g = grid();
    double *h = calloc(N * N, sizeof *h);
    assert_non_null(h);
    g.height = h;
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.algorithm = SARBP_ALGO_FFBP;
    sarbp_image *img = NULL;
    assert_int_not_equal(sarbp_form_phd(NULL, p, &g, &sarbp_backend_cpu, &rc, &o, NULL, &img, NULL),
                         SARBP_OK);
    assert_null(img);
    print_message("ffbp: %s\n", sarbp_error_detail());
    assert_non_null(strstr(sarbp_error_detail(), "FFBP forms on a plane; use --algorithm bp"));
    /* the back ends' own refusal, before anything else of theirs */
    const sarbp_bp_desc d = {.meta = p, .grid = &g, .rc = &rc, .region = {0, N}};
    sarbp_bp_plan *plan = NULL;
    sarbp_bp_options_default(&o);
    o.algorithm = SARBP_ALGO_FFBP;
    assert_int_not_equal(sarbp_backend_cpu.create(&d, &o, 0, &plan, NULL), SARBP_OK);
    assert_null(plan);
    assert_int_not_equal(sarbp_backend_cuda.create(&d, &o, 0, &plan, NULL), SARBP_OK); /* ffbp, or no cuda */
    assert_null(plan);
    /* auto on the cpu: direct backprojection, saying why */
    o.algorithm = SARBP_ALGO_AUTO;
    sarbp_form_request req = {.backend = &sarbp_backend_cpu, .grid = g, .rc = rc, .bp = o, .nranks = 1};
    sarbp_form_plan *fp = NULL;
    tu_ok(sarbp_form_plan_create(NULL, p, &req, &fp));
    const sarbp_form_decision *dc = sarbp_form_plan_decision(fp);
    assert_int_equal(dc->bp.algorithm, SARBP_ALGO_BP);
    assert_non_null(strstr(dc->why, "plane"));
    sarbp_form_plan_free(fp);
    free(h);
    sarbp_phd_free(p);
}

/* The cuda back end on the hill: FP32, FP16 and mixed (the default
 * kernel of each), v3a, and bands of 32 rows, against the exact image on the
 * 3-D pixels. Bars: the 60 dB for FP32 (v3, v3a, bands); 50 dB for
 * FP16 and mixed (which reach 71-76 dB on flat ground; measured on an H100:
 * docs/terrain.md). */
static void test_cuda(void **state)
{
    (void)state;
    if (sarbp_cuda_device_count() < 1) tu_skip("no CUDA device");
    sarbp_phd *p = scene(HILL_H, HILL_R, 0, 0);
    sarbp_grid g = grid();
    double *h = on_hill(&g, HILL_H, HILL_R, 0, 0);
    sarbp_c64 *ex = tu_exact64(p, &g);
    const sarbp_grid flat = grid();
    sarbp_c64 *exf = tu_exact64(p, &flat);
    struct {
        const char *name;
        sarbp_precision prec;
        const char *variant;
        int bands;
        double min_db;
    } runs[] = {
        {"fp32", SARBP_FP32, NULL, 0, 60.0},   {"fp16", SARBP_FP16, NULL, 0, 50.0},
        {"mixed", SARBP_MIXED, NULL, 0, 50.0}, {"fp32 v3a", SARBP_FP32, "v3a", 0, 60.0},
        {"fp32 bands of 32 rows", SARBP_FP32, NULL, 32, 60.0},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        sarbp_bp_options o;
        sarbp_bp_options_default(&o);
        sarbp_form_limits lim = {.band_rows = (size_t)runs[k].bands};
        if (runs[k].bands) o.limits = &lim;
        o.variant = runs[k].variant;
        sarbp_image *t = tu_form(p, &g, &sarbp_backend_cuda, runs[k].prec, &o);
        sarbp_image *f = tu_form(p, &flat, &sarbp_backend_cuda, runs[k].prec, &o);
        const double s = tu_ser_c32_c64(t->data, ex, N * N), sf = tu_ser_c32_c64(f->data, exf, N * N);
        print_message("cuda %s on the hill: SER against exact %.2f dB (flat data on flat ground: %.2f dB)\n",
                      runs[k].name, s, sf);
        tu_bar_min(s, s, s - runs[k].min_db, "dB", "cuda %s heights SER vs exact", runs[k].name);
        for (int j = 0; j < NT; j++) assert_peak_near(t->data, tx[j], ty[j], runs[k].name);
        sarbp_image_free(t);
        sarbp_image_free(f);
    }
    /* pulses moved to heights 30 m apart over the aperture: chunks of
     * pulses the kernel cannot fold into one reference height run the loop
     * that adds each pulse's own height term. The samples no longer match
     * the geometry (about 40 dB from exact, the cpu's FP64 alike), so the
     * reference is the cpu's FP64 image of the same profiles. */
    sarbp_phd *q;
    tu_ok(sarbp_phd_slice(p, 0, p->npulses, &q));
    for (size_t j = 0; j < q->npulses; j++) q->pos[3 * j + 2] += 30.0 * (double)j / (double)q->npulses;
    sarbp_image *r64 = tu_form(q, &g, &sarbp_backend_cpu, SARBP_FP64, NULL);
    sarbp_image *t = tu_form(q, &g, &sarbp_backend_cuda, SARBP_FP32, NULL);
    const double s = tu_ser_c32(t->data, r64->data, N * N);
    print_message("cuda fp32 on the hill, pulses at varying heights: SER against the cpu's fp64 %.2f dB\n", s);
    tu_bar_min(s, s, s - 60.0, "dB", "cuda fp32 heights, pulses at varying heights, SER vs cpu fp64");
    sarbp_image_free(t);
    sarbp_image_free(r64);
    sarbp_phd_free(q);
    free(ex);
    free(exf);
    free(h);
    sarbp_phd_free(p);
}

/* ---- files ------------------------------------------------------------------ */

/* A .npy of ny x nx values of descr ('<f8', '<f4', '<i4') from v (doubles). */
static void write_npy(const char *path, const char *descr, size_t ny, size_t nx, const double *v)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char hdr[128];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu), }",
                     descr, ny, nx);
    while ((n + 11) % 64) hdr[n++] = ' ';
    hdr[n++] = '\n';
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff),
                                   (unsigned char)(n >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (size_t i = 0; i < nx * ny; i++) {
        if (!strcmp(descr, "<f8")) fwrite(&v[i], 8, 1, f);
        else if (!strcmp(descr, "<f4")) {
            const float x = (float)v[i];
            fwrite(&x, 4, 1, f);
        } else {
            const int32_t x = (int32_t)v[i];
            fwrite(&x, 4, 1, f);
        }
    }
    assert_int_equal(fclose(f), 0);
}

/* An HDF5 file with dataset name float32 [ny][nx]. */
static void write_h5(const char *path, const char *name, size_t ny, size_t nx, const double *v)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hsize_t dims[2] = {ny, nx};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F32LE, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Pclose(lcpl);
    H5Fclose(f);
}

/* The image of a CLI run, read back. */
static sarbp_image *read_image(const char *path)
{
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_read(path, &img));
    assert_int_equal(img->grid.nx, N);
    assert_int_equal(img->grid.ny, N);
    return img;
}

/* The .h5 image's heights dataset equals h (as float32). */
static void assert_h5_heights(const char *path, const double *h)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t d = H5Dopen2(f, "heights", H5P_DEFAULT);
    assert_true(d >= 0);
    float *v = malloc(N * N * sizeof *v);
    assert_non_null(v);
    assert_true(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    for (size_t i = 0; i < N * N; i++) assert_true(v[i] == (float)h[i]);
    free(v);
    H5Dclose(d);
    H5Fclose(f);
}

#define FORM_ARGS "--grid 128x128 --spacing 0.3 --backend cpu -q"

/* sarbp simulate --hill, sarbp form --heights (.npy float64 and float32,
 * HDF5), against the exact image on the same heights. */
static void test_cli_heights(void **state)
{
    (void)state;
    char sim[512], targets[256] = "";
    for (int k = 0; k < NT; k++)
        snprintf(targets + strlen(targets), sizeof targets - strlen(targets), "%s%g,%g", k ? ";" : "",
                 tx[k], ty[k]);
    char args[512];
    snprintf(args, sizeof args, "--pulses 160 --samples 256 --aperture 3 --hill 22,8 --targets '%s'",
             targets);
    assert_int_equal(tu_make_sim(sim, sizeof sim, "terrain_hill_sim.h5", args), 0);
    sarbp_phd *p = scene(HILL_H, HILL_R, 0, 0); /* the same targets, in memory */
    sarbp_grid g = grid();
    double *h = malloc(N * N * sizeof *h);
    assert_non_null(h);
    sarbp_hill_heights(&g, HILL_H, HILL_R, 0, 0, h);
    const char *npy = tu_tmp("terrain_h.npy"), *npy32 = tu_tmp("terrain_h32.npy");
    const char *h5 = tu_tmp("terrain_h.h5"), *img = tu_tmp("terrain_img.h5");
    write_npy(npy, "<f8", N, N, h);
    write_npy(npy32, "<f4", N, N, h);
    write_h5(h5, "/terrain/z", N, N, h);
    g.height = h;
    sarbp_c64 *ex = tu_exact64(p, &g);

    assert_int_equal(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, img, npy), 0);
    sarbp_image *a = read_image(img);
    const double s = tu_ser_c32_c64(a->data, ex, N * N);
    print_message("cli --heights (.npy float64), fp32 quadratic 8x: SER against exact %.2f dB\n", s);
    tu_bar_min(s, 79.33, 10.0, "dB", "cli --heights fp32 SER vs exact");
    assert_non_null(sarbp_image_get_attr(a, "heights_source"));
    assert_string_equal(sarbp_image_get_attr(a, "heights_source"), npy);
    assert_h5_heights(img, h);
    for (int k = 0; k < NT; k++) assert_peak_near(a->data, tx[k], ty[k], "cli --heights");
    sarbp_image_free(a);

    /* float32 heights: the pixels at the float32 values */
    float *h32 = malloc(N * N * sizeof *h32);
    double *hr = malloc(N * N * sizeof *hr);
    assert_true(h32 && hr);
    for (size_t i = 0; i < N * N; i++) hr[i] = (double)(float)h[i];
    const char *img2 = tu_tmp("terrain_img32.h5");
    assert_int_equal(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, img2, npy32), 0);
    a = read_image(img2);
    assert_h5_heights(img2, hr);
    sarbp_image_free(a);
    /* HDF5, a dataset in a group */
    assert_int_equal(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s:/terrain/z", sim, img2, h5), 0);
    a = read_image(img2);
    assert_h5_heights(img2, hr);
    sarbp_image_free(a);
    free(h32);
    free(hr);
    free(ex);
    free(h);
    sarbp_phd_free(p);
}

/* One message, exit code rc, no output. */
static void assert_refused(int got, int rc, const char *outp, const char *what)
{
    print_message("%s: %s", what, err);
    if (got != rc) fail_msg("%s: exit %d, expected %d; stderr: %s", what, got, rc, err);
    assert_int_equal(tu_count_prefix_lines(err, "sarbp:"), 1);
    assert_false(tu_exists(outp));
}

static void test_cli_bad_heights(void **state)
{
    (void)state;
    char sim[512];
    assert_int_equal(tu_make_sim(sim, sizeof sim, "terrain_bad_sim.h5",
                                 "--pulses 160 --samples 256 --aperture 3"), 0);
    double *h = calloc((N + 1) * N, sizeof *h);
    assert_non_null(h);
    const char *o = tu_tmp("terrain_bad.h5"), *f = tu_tmp("terrain_bad.npy");
    write_npy(f, "<f8", N - 1, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, f), 1, o, "shape");
    assert_non_null(strstr(err, "shape"));
    write_npy(f, "<i4", N, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, f), 1, o, "dtype");
    h[77] = NAN;
    write_npy(f, "<f8", N, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, f), 1, o, "nan");
    h[77] = INFINITY;
    write_npy(f, "<f4", N, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, f), 1, o, "inf");
    h[77] = 3e4;
    write_npy(f, "<f8", N, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, f), 1, o, "range");
    h[77] = 0;
    /* truncated */
    write_npy(f, "<f8", N, N, h);
    assert_int_equal(truncate(f, 128 + N * N * 4), 0);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, f), 1, o, "truncated");
    const char *h5 = tu_tmp("terrain_bad_h.h5");
    write_h5(h5, "/z", N, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s:/nothing", sim, o, h5), 1, o,
                   "no dataset");
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s", sim, o, tu_tmp("none.npy")), 1,
                   o, "missing file");
    /* usage: ffbp */
    write_npy(f, "<f8", N, N, h);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s --algorithm ffbp", sim, o, f), 2,
                   o, "ffbp");
    assert_non_null(strstr(err, "FFBP forms on a plane"));
    /* SICD: a plane */
    const char *nitf = tu_tmp("terrain_bad.nitf");
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --heights %s --scene-ref 35,-117,0 --prf 500 "
                          "--collect-start 2008-06-01T12:00:00Z", sim, nitf, f), 1, nitf, "sicd");
    assert_non_null(strstr(err, "SICD"));
    free(h);
}

/* ---- DEMs ------------------------------------------------------------------ */

#define LAT0 35.0
#define LON0 (-117.0)
#define DEM_CS 1e-4 /* degrees a sample */
#define DEM_N 12    /* samples a side, centred on the scene reference */

/* The DEM's height: a plane in latitude and longitude (about 0.3 m per m
 * east, -0.2 m per m north), which the bilinear reading reproduces exactly. */
static double dem_h(double lat, double lon)
{
    return 5.0 + 0.3 * (lon - LON0) * 91000.0 - 0.2 * (lat - LAT0) * 111000.0;
}

/* Sample (col, row) of the DEM, row 0 north, pixel-is-area, centred on
 * (LAT0 + dlat, LON0). */
static double dem_lat(int row, double dlat)
{
    return LAT0 + dlat + (0.5 * DEM_N - row - 0.5) * DEM_CS;
}
static double dem_lon(int col)
{
    return LON0 + (col + 0.5 - 0.5 * DEM_N) * DEM_CS;
}

/* The z of (x, y) on the DEM's surface, found here on the frame's vertical. */
static double dem_truth_z(const sarbp_scene_ref *r, double x, double y)
{
    double p[3] = {x, y, 0};
    for (int it = 0; it < 20; it++) {
        double lat, lon, hh;
        sarbp_scene_to_geodetic(r, p, &lat, &lon, &hh);
        p[2] += dem_h(lat, lon) - hh;
    }
    return p[2];
}

/* A scene whose targets sit on the DEM, its truth heights on the grid and
 * the exact image there. */
static sarbp_phd *dem_scene(const sarbp_scene_ref *r, double *h, sarbp_c64 **ex)
{
    sarbp_target t[NT];
    for (int k = 0; k < NT; k++) t[k] = (sarbp_target){tx[k], ty[k], dem_truth_z(r, tx[k], ty[k]), 1};
    sarbp_phd *phd = simulate_targets(t);
    sarbp_grid g = grid();
    for (size_t iy = 0; iy < N; iy++)
        for (size_t ix = 0; ix < N; ix++)
            h[iy * N + ix] = dem_truth_z(r, sarbp_grid_x(&g, ix), sarbp_grid_y(&g, iy));
    g.height = h;
    *ex = tu_exact64(phd, &g);
    return phd;
}

/* The CLI on a DEM against the exact image on the truth; the phase history
 * written for it into sim. */
static void form_dem_cli(const char *dem, const char *what, double measured)
{
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, LAT0, LON0, 0, 0));
    double *h = malloc(N * N * sizeof *h);
    assert_non_null(h);
    sarbp_c64 *ex = NULL;
    sarbp_phd *p = dem_scene(&r, h, &ex);
    const char *sim = tu_tmp("terrain_dem_sim.h5"), *img = tu_tmp("terrain_dem_img.h5");
    tu_ok(sarbp_phd_write_h5(sim, p));
    assert_int_equal(tu_run("form -i %s -o %s " FORM_ARGS " --dem %s --scene-ref 35,-117,0", sim, img,
                            dem), 0);
    sarbp_image *a = read_image(img);
    const double s = tu_ser_c32_c64(a->data, ex, N * N);
    print_message("%s: cli --dem, fp32 quadratic 8x: SER against exact on the true surface %.2f dB\n",
                  what, s);
    tu_bar_min(s, measured, measured - 50 < 10 ? measured - 50 : 10, "dB", "%s --dem SER vs exact", what);
    char src[600];
    snprintf(src, sizeof src, "dem:%s", dem);
    assert_string_equal(sarbp_image_get_attr(a, "heights_source"), src);
    for (int k = 0; k < NT; k++) assert_peak_near(a->data, tx[k], ty[k], what);
    sarbp_image_free(a);
    /* and the heights themselves, through the library */
    sarbp_grid g = grid();
    double *hd = NULL;
    tu_ok(sarbp_dem_heights(dem, &g, &r, 0, &hd));
    double worst = 0;
    for (size_t i = 0; i < N * N; i++) worst = fmax(worst, fabs(hd[i] - h[i]));
    print_message("%s: heights from the DEM within %.3g m of the truth\n", what, worst);
    assert_true(worst < 1e-5);
    free(hd);
    free(ex);
    free(h);
    sarbp_phd_free(p);
}

static void test_dem_gdal(void **state)
{
    (void)state;
    char buf[4096];
    if (tu_sh(buf, sizeof buf, "command -v gdal_translate") != 0)
        tu_skip("gdal_translate (gdal-bin) is not installed");
    const char *asc = tu_tmp("terrain_dem.asc"), *tif = tu_tmp("terrain_dem_gdal.tif");
    FILE *f = fopen(asc, "w");
    assert_non_null(f);
    fprintf(f, "ncols %d\nnrows %d\nxllcorner %.17g\nyllcorner %.17g\ncellsize %.17g\n", DEM_N, DEM_N,
            LON0 - 0.5 * DEM_N * DEM_CS, LAT0 - 0.5 * DEM_N * DEM_CS, DEM_CS);
    for (int row = 0; row < DEM_N; row++)
        for (int col = 0; col < DEM_N; col++)
            fprintf(f, "%.17g%s", dem_h(dem_lat(row, 0), dem_lon(col)), col + 1 < DEM_N ? " " : "\n");
    assert_int_equal(fclose(f), 0);
    const int rc = tu_sh(buf, sizeof buf, "gdal_translate -q -of GTiff -ot Float64 -a_srs EPSG:4326 %s %s 2>&1",
                         asc, tif);
    if (rc != 0) fail_msg("gdal_translate failed: %s", buf);
    form_dem_cli(tif, "gdal dem", 76.39);
}

#ifdef SARBP_TEST_GEOTIFF
enum dem_fault { DEM_GOOD, DEM_UTM, DEM_FAR, DEM_NODATA, DEM_NAN, DEM_HUGE, DEM_SHORT };

/* GDAL's no-data tag, unknown to libtiff, registered as GDAL does. */
static TIFFExtendProc parent_extender;
static void nodata_extender(TIFF *tif)
{
    static const TIFFFieldInfo info[] = {
        {TIFFTAG_GDAL_NODATA, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, "GDALNoDataValue"}};
    if (!TIFFFindField(tif, TIFFTAG_GDAL_NODATA, TIFF_ANY)) TIFFMergeFieldInfo(tif, info, 1);
    if (parent_extender) parent_extender(tif);
}

/* A float32 DEM through libtiff and libgeotiff. */
static void write_dem(const char *path, enum dem_fault fault)
{
    static int installed;
    if (!installed) {
        parent_extender = TIFFSetTagExtender(nodata_extender);
        installed = 1;
    }
    const double dlat = fault == DEM_FAR ? 0.01 : 0;
    const uint32_t w = fault == DEM_HUGE ? 70000 : DEM_N, hgt = fault == DEM_HUGE ? 70000 : DEM_N;
    TIFF *tif = XTIFFOpen(path, "w");
    assert_non_null(tif);
    assert_true(TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w) && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, hgt) &&
                TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 32) &&
                TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP) &&
                TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1) &&
                TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK) &&
                TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
                TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, fault == DEM_HUGE || fault == DEM_SHORT ? hgt : 1));
    const double scale[3] = {DEM_CS, DEM_CS, 0};
    const double tie[6] = {0, 0, 0, LON0 - 0.5 * DEM_N * DEM_CS, LAT0 + dlat + 0.5 * DEM_N * DEM_CS, 0};
    assert_true(TIFFSetField(tif, TIFFTAG_GEOPIXELSCALE, 3, scale) &&
                TIFFSetField(tif, TIFFTAG_GEOTIEPOINTS, 6, tie));
    if (fault == DEM_NODATA) assert_true(TIFFSetField(tif, TIFFTAG_GDAL_NODATA, "-9999"));
    GTIF *gt = GTIFNew(tif);
    assert_non_null(gt);
    if (fault == DEM_UTM) {
        GTIFKeySet(gt, GTModelTypeGeoKey, TYPE_SHORT, 1, ModelTypeProjected);
        GTIFKeySet(gt, ProjectedCSTypeGeoKey, TYPE_SHORT, 1, 32611);
    } else {
        GTIFKeySet(gt, GTModelTypeGeoKey, TYPE_SHORT, 1, ModelTypeGeographic);
        GTIFKeySet(gt, GeographicTypeGeoKey, TYPE_SHORT, 1, GCS_WGS_84);
    }
    GTIFKeySet(gt, GTRasterTypeGeoKey, TYPE_SHORT, 1, RasterPixelIsArea);
    GTIFKeySet(gt, GeogAngularUnitsGeoKey, TYPE_SHORT, 1, Angular_Degree);
    assert_true(GTIFWriteKeys(gt));
    GTIFFree(gt);
    if (fault == DEM_HUGE || fault == DEM_SHORT) { /* one strip declared, 8 bytes of it present */
        const float two[2] = {0, 0};
        assert_true(TIFFWriteRawStrip(tif, 0, (void *)two, sizeof two) == (tmsize_t)sizeof two);
    } else {
        float row[DEM_N];
        for (int r = 0; r < DEM_N; r++) {
            for (int c = 0; c < DEM_N; c++) row[c] = (float)dem_h(dem_lat(r, dlat), dem_lon(c));
            if (r == DEM_N / 2 && fault == DEM_NODATA) row[DEM_N / 2] = -9999.0f;
            if (r == DEM_N / 2 && fault == DEM_NAN) row[DEM_N / 2] = NAN;
            assert_int_equal(TIFFWriteScanline(tif, row, (uint32_t)r, 0), 1);
        }
    }
    assert_int_equal(TIFFWriteDirectory(tif), 1);
    XTIFFClose(tif);
}
#endif

static void test_dem_libtiff(void **state)
{
    (void)state;
#ifndef SARBP_TEST_GEOTIFF
    tu_skip("built without libtiff and libgeotiff: --dem is refused (checked in test_cli_bad_dems)");
#else
    const char *tif = tu_tmp("terrain_dem_libtiff.tif");
    write_dem(tif, DEM_GOOD);
    form_dem_cli(tif, "libtiff dem (float32)", 76.39);
#endif
}

static void test_cli_bad_dems(void **state)
{
    (void)state;
    char sim[512];
    assert_int_equal(tu_make_sim(sim, sizeof sim, "terrain_dem_bad_sim.h5",
                                 "--pulses 160 --samples 256 --aperture 3"), 0);
    const char *o = tu_tmp("terrain_dem_bad.tif"), *d = tu_tmp("terrain_bad_dem.tif");
#ifndef SARBP_TEST_GEOTIFF
    FILE *f = fopen(d, "w");
    fputs("II*\0", f);
    fclose(f);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --dem %s --scene-ref 35,-117,0", sim, o, d), 1,
                   o, "no libtiff");
    assert_non_null(strstr(err, "without libtiff"));
#else
    static const struct {
        enum dem_fault fault;
        const char *what, *says;
    } bad[] = {
        {DEM_UTM, "wrong crs", "wrong CRS"},
        {DEM_FAR, "no coverage", "does not cover"},
        {DEM_NODATA, "no-data", "no-data"},
        {DEM_NAN, "nan", "NaN"},
        {DEM_HUGE, "huge", "absurdly large"},
        {DEM_SHORT, "short strip", "truncated"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_dem(d, bad[k].fault);
        assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --dem %s --scene-ref 35,-117,0", sim, o, d),
                       1, o, bad[k].what);
        assert_non_null(strstr(err, bad[k].says));
        assert_non_null(strstr(err, d));
    }
    /* truncated: a good DEM cut short */
    write_dem(d, DEM_GOOD);
    FILE *f = fopen(d, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fclose(f);
    assert_int_equal(truncate(d, len / 2), 0);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --dem %s --scene-ref 35,-117,0", sim, o, d), 1,
                   o, "truncated");
    /* no scene reference */
    write_dem(d, DEM_GOOD);
    assert_refused(tu_run("form -i %s -o %s " FORM_ARGS " --dem %s", sim, o, d), 1, o, "no scene ref");
    assert_non_null(strstr(err, "--scene-ref"));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_baseline),
        cmocka_unit_test(test_hill),
        cmocka_unit_test(test_slope),
        cmocka_unit_test(test_threads_bands),
        cmocka_unit_test(test_refusals_lib),
        cmocka_unit_test(test_cuda),
        cmocka_unit_test(test_cli_heights),
        cmocka_unit_test(test_cli_bad_heights),
        cmocka_unit_test(test_dem_gdal),
        cmocka_unit_test(test_dem_libtiff),
        cmocka_unit_test(test_cli_bad_dems),
    };
    return tu_run_tests(tests);
}
