/* test_png_range.c - the dB display range of the 8-bit quick looks (.png,
 * .kmz, dB .tif) chosen from the image (issue 25, item 3).
 *
 *  - sarbp_image_display_choose on images of known statistics: magnitudes
 *    spread evenly in dB put the floor and top at the 1st and 99.99th
 *    percentiles within a histogram bin (0.07 dB); a positive db_range
 *    keeps its old meaning (db_range below the peak to the peak); a flat
 *    image gets SARBP_DISPLAY_MIN_DB, an all-zero one 50 dB; anything but
 *    a positive range or SARBP_DB_RANGE_AUTO is refused;
 *  - a PNG written with SARBP_DB_RANGE_AUTO, decoded with libpng: about 1%
 *    black and 0.01% white, and the range the write chose handed back in
 *    the context;
 *  - the CLI: `sarbp form` without --db-range writes the PNG, the KMZ's
 *    PNG and the GeoTIFF with one display, says it with -v, and
 *    --db-range overrides it;
 *  - Gotcha (skipped when the data are missing): the default PNG of the
 *    pass, default grid, has fewer than 5% black pixels (it had about 50%
 *    at the old 50 dB below the peak). */
#include "test_util.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"

#ifdef SARBP_TEST_GEOTIFF
#include <geotiff/xtiffio.h>
#include <tiffio.h>
#endif

static char out[16384], err[16384];
#define run tu_run /* printf-style, fails on a crash */

/* one histogram bin of |I|^2, in dB (image_write.c: 6 mantissa bits) */
#define BIN_DB 0.068

/* Decodes an 8-bit gray PNG from a file or memory (mem != NULL) into a
 * malloc'd [h][w]. */
struct memsrc {
    const unsigned char *p;
    size_t n, at;
};

static void mem_read(png_structp png, png_bytep data, png_size_t len)
{
    struct memsrc *m = png_get_io_ptr(png);
    if (m->at + len > m->n) png_error(png, "short PNG");
    memcpy(data, m->p + m->at, len);
    m->at += len;
}

static unsigned char *png_decode(const char *path, const unsigned char *mem, size_t nmem,
                                 size_t *w, size_t *h)
{
    FILE *volatile f = NULL; /* volatile: kept across libpng's longjmp */
    struct memsrc m = {mem, nmem, 0};
    if (!mem) {
        f = fopen(path, "rb");
        assert_non_null(f);
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    assert_int_equal(setjmp(png_jmpbuf(png)), 0);
    if (f) png_init_io(png, f);
    else png_set_read_fn(png, &m, mem_read);
    png_read_info(png, info);
    assert_int_equal(png_get_bit_depth(png, info), 8);
    assert_int_equal(png_get_color_type(png, info), PNG_COLOR_TYPE_GRAY);
    *w = png_get_image_width(png, info);
    *h = png_get_image_height(png, info);
    unsigned char *pix = malloc(*w * *h);
    assert_non_null(pix);
    for (size_t r = 0; r < *h; r++) png_read_row(png, pix + r * *w, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    if (f) fclose(f);
    return pix;
}

static size_t count_value(const unsigned char *pix, size_t n, unsigned char v)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += pix[i] == v;
    return k;
}

/* nx x ny pixels whose power in dB relative to the peak runs evenly from
 * -span_db to 0 (pixel i of n at -span_db (n - 1 - i) / (n - 1)), shuffled
 * by a fixed stride so the bright ones are not all in one row. */
static sarbp_image *ramp_image(size_t nx, size_t ny, double span_db)
{
    sarbp_grid g = {.nx = nx, .ny = ny, .dx = 1, .dy = 1};
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_alloc(&g, &img));
    const size_t n = nx * ny;
    for (size_t i = 0; i < n; i++) {
        const double db = -span_db * (double)(n - 1 - i) / (double)(n - 1);
        const size_t at = (i * 7919) % n; /* 7919 is prime, n not a multiple of it */
        img->data[at] = (sarbp_c32){(float)(3.0 * pow(10, db / 20)), 0};
    }
    return img;
}

static void test_choose_ramp(void **state)
{
    (void)state;
    const double span = 80;
    sarbp_image *img = ramp_image(200, 150, span);
    sarbp_image_display d;
    tu_ok(sarbp_image_display_choose(img, SARBP_DB_RANGE_AUTO, &d));
    const double want_floor = -span * (1 - SARBP_DISPLAY_FLOOR_PCT / 100);
    const double want_top = -span * (1 - SARBP_DISPLAY_TOP_PCT / 100);
    print_message("auto on an even 80 dB ramp: %.3f to %.3f dB (percentiles %.3f, %.3f)\n",
                  d.floor_db, d.top_db, want_floor, want_top);
    assert_int_equal(d.automatic, 1);
    assert_true(fabs(d.floor_db - want_floor) <= BIN_DB + 0.01);
    assert_true(fabs(d.top_db - want_top) <= BIN_DB + 0.01);
    assert_true(fabs(d.peak_db - 20 * log10(3.0)) < 1e-4);

    /* a given range keeps its meaning */
    tu_ok(sarbp_image_display_choose(img, 40, &d));
    assert_int_equal(d.automatic, 0);
    assert_true(d.floor_db == -40 && d.top_db == 0);

    /* refused: not positive, not finite, not the AUTO value */
    const double bad[] = {0, -2, -0.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sarbp_image_display_choose(img, bad[i], &d), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_image_display_choose(NULL, 50, &d), SARBP_ERR_INVALID);
    sarbp_image_free(img);
}

static void test_choose_flat_and_zero(void **state)
{
    (void)state;
    sarbp_grid g = {.nx = 9, .ny = 7, .dx = 1, .dy = 1};
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_alloc(&g, &img));
    sarbp_image_display d;
    /* all zero: nothing to show, the old default range */
    tu_ok(sarbp_image_display_choose(img, SARBP_DB_RANGE_AUTO, &d));
    assert_true(d.floor_db == -50 && d.top_db == 0 && isinf(d.peak_db) && d.peak_db < 0);
    /* flat: every pixel the peak; the range is the least allowed */
    for (size_t i = 0; i < 63; i++) img->data[i] = (sarbp_c32){0, -2};
    tu_ok(sarbp_image_display_choose(img, SARBP_DB_RANGE_AUTO, &d));
    assert_true(d.top_db == 0);
    assert_true(fabs(d.floor_db + SARBP_DISPLAY_MIN_DB) < 1e-12);
    /* one pixel: the same */
    sarbp_grid g1 = {.nx = 1, .ny = 1, .dx = 1, .dy = 1};
    sarbp_image *one = NULL;
    tu_ok(sarbp_image_alloc(&g1, &one));
    one->data[0] = (sarbp_c32){1e-20f, 0};
    tu_ok(sarbp_image_display_choose(one, SARBP_DB_RANGE_AUTO, &d));
    assert_true(d.top_db == 0 && d.floor_db == -SARBP_DISPLAY_MIN_DB);
    const char *p = tu_tmp("png_range_one.png");
    tu_ok(sarbp_image_write(p, one, SARBP_DB_RANGE_AUTO));
    size_t w, h;
    unsigned char *pix = png_decode(p, NULL, 0, &w, &h);
    assert_int_equal(pix[0], 255);
    free(pix);
    sarbp_image_free(one);
    sarbp_image_free(img);
}

static void test_png_auto(void **state)
{
    (void)state;
    const size_t nx = 301, ny = 203, n = nx * ny;
    sarbp_image *img = ramp_image(nx, ny, 90);
    /* and one target 20 dB above the rest: the top stays at the ramp's
     * 99.99th percentile, 20 dB below the peak */
    const size_t at = ((n - 1) * 7919) % n; /* ramp_image's brightest pixel */
    img->data[at].re *= 10;
    const char *p = tu_tmp("png_range_auto.png");
    sarbp_image_display d = {0};
    const sarbp_image_context ctx = {.display = &d};
    tu_ok(sarbp_image_write_all_ctx(&p, 1, img, SARBP_DB_RANGE_AUTO, &ctx));
    assert_int_equal(d.automatic, 1);
    size_t w, h;
    unsigned char *pix = png_decode(p, NULL, 0, &w, &h);
    assert_int_equal(w, nx);
    assert_int_equal(h, ny);
    const size_t black = count_value(pix, n, 0), white = count_value(pix, n, 255),
                 sat = count_value(pix, n, 254);
    print_message("auto PNG of a 90 dB ramp: %.3f to %.3f dB; %.3f%% black, %.4f%% saturated "
                  "(254), %zu white (255)\n", d.floor_db, d.top_db, 100.0 * black / n,
                  100.0 * sat / n, white);
    /* 1% below the floor, plus the half grey level rounded to 0 (90 dB /
     * 255 / 2 = 0.18 dB of 90: 0.2%), plus a bin */
    assert_true(black >= n / 100 - n / 500 && black <= n / 100 + n / 200);
    /* the top at the 99.99th percentile, below the peak: the peak alone is
     * 255, and 254 holds the 0.01% above the top and the grey level and a
     * half below it (1.5 / 255 of 89 dB: 0.6% of this ramp) */
    assert_true(d.top_db < 0);
    assert_int_equal(white, 1);
    assert_int_equal(pix[(ny - 1 - at / nx) * nx + at % nx], 255);
    assert_true(fabs(d.top_db + 20) < 0.2 && fabs(d.floor_db + 20 + 90 * 0.99) < 0.2);
    assert_true(sat >= n / 10000 && sat <= n / 100);
    /* the pixel of rank r maps as the display says: check the mid grey */
    size_t mid = 0;
    for (size_t i = 0; i < n; i++) mid += pix[i] >= 127 && pix[i] <= 128;
    assert_true(mid > 0);
    free(pix);

    /* the same image with an explicit range: the old mapping, about 1/3 black */
    const char *p2 = tu_tmp("png_range_40.png");
    tu_ok(sarbp_image_write_all_ctx(&p2, 1, img, 40, &ctx));
    assert_true(d.automatic == 0 && d.floor_db == -40 && d.top_db == 0);
    pix = png_decode(p2, NULL, 0, &w, &h);
    const size_t black40 = count_value(pix, n, 0);
    print_message("--db-range 40 on it: %.1f%% black\n", 100.0 * black40 / n);
    assert_true(black40 > n / 2); /* 70 of 90 dB below the range */
    free(pix);
    /* non-positive ranges stay refused for the dB outputs (.h5 ignores it) */
    const char *p3 = tu_tmp("png_range_bad.png");
    assert_int_equal(sarbp_image_write_png(p3, img, -2), SARBP_ERR_INVALID);
    assert_false(tu_exists(p3));
    sarbp_image_free(img);
}

/* The image.png entry of a stored KMZ (sarbp writes it uncompressed). */
static const unsigned char *kmz_png(const unsigned char *z, size_t n, size_t *len)
{
    for (size_t i = 0; i + 30 < n; i++) {
        if (memcmp(z + i, "PK\x03\x04", 4)) continue;
        const size_t size = z[i + 18] | z[i + 19] << 8 | (size_t)z[i + 20] << 16 |
                            (size_t)z[i + 21] << 24;
        const size_t nl = z[i + 26] | z[i + 27] << 8, ne = z[i + 28] | z[i + 29] << 8;
        if (nl == 9 && !memcmp(z + i + 30, "image.png", 9)) {
            *len = size;
            return z + i + 30 + nl + ne;
        }
    }
    fail_msg("no image.png in the KMZ");
    return NULL;
}

/* whether z[0..n) holds the text s */
static int holds(const unsigned char *z, size_t n, const char *s)
{
    const size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(z + i, s, k)) return 1;
    return 0;
}

static void test_cli_outputs_agree(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("png_range_cli");
    char sim[512], png[512], kmz[512], tif[512], png50[512];
    snprintf(sim, sizeof sim, "%s", tu_in_dir(dir, "sim.h5"));
    snprintf(png, sizeof png, "%s", tu_in_dir(dir, "a.png"));
    snprintf(kmz, sizeof kmz, "%s", tu_in_dir(dir, "a.kmz"));
    snprintf(tif, sizeof tif, "%s", tu_in_dir(dir, "a.tif"));
    snprintf(png50, sizeof png50, "%s", tu_in_dir(dir, "b.png"));
    assert_int_equal(run("simulate -o '%s' --pulses 64 --samples 64 --targets 5,20", sim), 0);
#ifdef SARBP_TEST_GEOTIFF
    const int with_tif = 1;
#else
    const int with_tif = 0;
#endif
    int rc = run("form -v --backend cpu -i '%s' -o '%s' -o '%s'%s%s --grid 96x80 --scene-ref "
                 "34.04,-118.27,35", sim, png, kmz, with_tif ? " -o " : "", with_tif ? tif : "");
    assert_int_equal(rc, 0);
    const char *said = strstr(err, "quick looks show ");
    assert_non_null(said);
    assert_non_null(strstr(said, "chosen from the image"));
    double lo, hi;
    assert_int_equal(sscanf(said, "quick looks show %lf to %lf dB", &lo, &hi), 2);
    assert_true(lo < hi && hi <= 0);
    assert_int_equal(tu_count_prefix_lines(err, "sarbp: form: quick looks"), 1);

    size_t w, h, nz, npng = 0;
    unsigned char *a = png_decode(png, NULL, 0, &w, &h);
    assert_true(w == 96 && h == 80);
    unsigned char *z = (unsigned char *)tu_slurp(kmz, &nz);
    const unsigned char *inner = kmz_png(z, nz, &npng);
    size_t w2, h2;
    unsigned char *b = png_decode(NULL, inner, npng, &w2, &h2);
    assert_true(w2 == w && h2 == h);
    assert_memory_equal(a, b, w * h); /* one display for every output */
    char desc[160];
    snprintf(desc, sizeof desc, "%.1f dB to %.1f dB relative to the peak (chosen from the image)",
             lo, hi);
    assert_true(holds(z, nz, desc));
    free(b);
    free(z);
#ifdef SARBP_TEST_GEOTIFF
    TIFF *t = XTIFFOpen(tif, "r");
    assert_non_null(t);
    unsigned char *row = malloc(w);
    for (size_t r = 0; r < h; r++) {
        assert_int_equal(TIFFReadScanline(t, row, (uint32_t)r, 0), 1);
        assert_memory_equal(row, a + r * w, w);
    }
    free(row);
    XTIFFClose(t);
#endif
    const size_t black_auto = count_value(a, w * h, 0);
    free(a);

    /* --db-range overrides, and -v says so */
    rc = run("form -v --backend cpu -i '%s' -o '%s' --grid 96x80 --db-range 30", sim, png50);
    assert_int_equal(rc, 0);
    said = strstr(err, "quick looks show ");
    assert_non_null(said);
    assert_non_null(strstr(said, "-30.0 to 0.0 dB relative to the peak"));
    assert_non_null(strstr(said, "--db-range)"));
    a = png_decode(png50, NULL, 0, &w, &h);
    const size_t black30 = count_value(a, w * h, 0);
    print_message("simulated targets: %zu black pixels of %zu chosen from the image, %zu at "
                  "--db-range 30\n", black_auto, w * h, black30);
    assert_true(black30 > black_auto);
    free(a);
    /* no dB output: nothing said about a display */
    rc = run("form -v --backend cpu -i '%s' -o '%s' --grid 96x80", sim, tu_in_dir(dir, "c.npy"));
    assert_int_equal(rc, 0);
    assert_null(strstr(err, "quick looks"));
}

static void test_gotcha_default_png(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data at %s", tu_gotcha_dir());
    const char *dir = tu_fresh_dir("png_range_gotcha");
    char png[512], png50[512];
    snprintf(png, sizeof png, "%s", tu_in_dir(dir, "g.png"));
    snprintf(png50, sizeof png50, "%s", tu_in_dir(dir, "g50.png"));
    /* the analyst's first command: default grid, default everything */
    int rc = run("form -v -i '%s' -o '%s'", tu_gotcha_dir(), png);
    assert_int_equal(rc, 0);
    const char *said = strstr(err, "quick looks show ");
    assert_non_null(said);
    size_t w, h;
    unsigned char *pix = png_decode(png, NULL, 0, &w, &h);
    const size_t n = w * h, black = count_value(pix, n, 0),
                 white = count_value(pix, n, 255) + count_value(pix, n, 254);
    double mean = 0;
    for (size_t i = 0; i < n; i++) mean += pix[i];
    mean /= (double)n;
    char line[200];
    snprintf(line, sizeof line, "%s", said);
    line[strcspn(line, "\n")] = '\0';
    print_message("Gotcha default PNG %zu x %zu: %s; %.2f%% black, %.3f%% white or saturated "
                  "(255, 254), mean grey %.1f\n",
                  w, h, line, 100.0 * black / n, 100.0 * white / n, mean);
    assert_true(black * 20 < n); /* fewer than 5% exactly black */
    assert_true(white * 200 < n); /* at most 0.5% saturated */
    assert_true(mean > 60); /* the scene shows: not a dark picture */
    free(pix);

    /* the old default, asked for: about half of it black */
    rc = run("form -i '%s' -o '%s' --db-range 50", tu_gotcha_dir(), png50);
    assert_int_equal(rc, 0);
    pix = png_decode(png50, NULL, 0, &w, &h);
    const size_t black50 = count_value(pix, w * h, 0);
    print_message("Gotcha with --db-range 50: %.2f%% black\n", 100.0 * black50 / (w * h));
    assert_true(black50 * 5 > w * h);
    free(pix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose_ramp),
        cmocka_unit_test(test_choose_flat_and_zero),
        cmocka_unit_test(test_png_auto),
        cmocka_unit_test(test_cli_outputs_agree),
        cmocka_unit_test(test_gotcha_default_png),
    };
    return tu_run_tests(tests);
}
