/* test_image_io.c - image files: .h5, .npy and PNG writers and readers.
 *
 * Files written by sarbp are read back independently (HDF5 calls, a byte-level
 * .npy parse, libpng) as well as through sarbp_image_read. */
#include "test_util.h"
#include "scratch.h"

#include <dirent.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<hdf5.h>)
#include <hdf5.h>
#else
#include <hdf5/serial/hdf5.h>
#endif
#else
#include <hdf5.h>
#endif

static sarbp_image *make_image(size_t nx, size_t ny)
{
    sarbp_grid g = {.nx = nx, .ny = ny, .dx = 0.5, .dy = 0.25, .xc = 10.0, .yc = -3.0, .zc = 1.5};
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_alloc(&g, &img));
    for (size_t iy = 0; iy < ny; iy++)
        for (size_t ix = 0; ix < nx; ix++)
            img->data[iy * nx + ix] = (sarbp_c32){(float)(ix + 0.25 * iy), (float)(-1.0 - iy)};
    return img;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* No temporary of path ("<name>.tmp-XXXXXX" beside it, or the old
 * "<name>.tmp.<pid>") is left in its directory. */
static void assert_no_temp_left(const char *path)
{
    char dir[1024], prefix[512];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    snprintf(prefix, sizeof prefix, "%s.tmp", slash ? slash + 1 : path);
    DIR *d = opendir(dir);
    if (!d) return; /* no directory, no temporary */
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            closedir(d);
            fail_msg("temporary '%s' left in '%s'", e->d_name, dir);
        }
    closedir(d);
}

static void test_format_names(void **state)
{
    (void)state;
    assert_int_equal(sarbp_image_format_from_name("a.h5"), SARBP_IMG_H5);
    assert_int_equal(sarbp_image_format_from_name("dir.npy/a.HDF5"), SARBP_IMG_H5);
    assert_int_equal(sarbp_image_format_from_name("A.NPY"), SARBP_IMG_NPY);
    assert_int_equal(sarbp_image_format_from_name("x/y.Png"), SARBP_IMG_PNG);
    assert_int_equal(sarbp_image_format_from_name("x.h5/noext"), SARBP_IMG_UNKNOWN);
    assert_int_equal(sarbp_image_format_from_name("x.jpg"), SARBP_IMG_UNKNOWN);
    assert_int_equal(sarbp_image_format_from_name("x.tif"), SARBP_IMG_GEOTIFF);
    assert_int_equal(sarbp_image_format_from_name("x.TIFF"), SARBP_IMG_GEOTIFF);
    assert_int_equal(sarbp_image_format_from_name("x.nitf"), SARBP_IMG_SICD);
    assert_int_equal(sarbp_image_format_from_name("x.ntf"), SARBP_IMG_SICD);
    assert_int_equal(sarbp_image_format_from_name("x.sicd"), SARBP_IMG_SICD);
    assert_int_equal(sarbp_image_format_from_name("x.kmz"), SARBP_IMG_KMZ);
    assert_true(sarbp_image_format_is_geo(SARBP_IMG_KMZ) && !sarbp_image_format_is_geo(SARBP_IMG_PNG));
    assert_int_equal(sarbp_image_format_from_name(NULL), SARBP_IMG_UNKNOWN);
}

static void test_attrs(void **state)
{
    (void)state;
    sarbp_image *img = make_image(2, 2);
    tu_ok(sarbp_image_set_attr(img, "window", "hamming"));
    tu_ok(sarbp_image_set_attr(img, "window", "taylor"));
    assert_int_equal(img->nattrs, 1);
    assert_string_equal(sarbp_image_get_attr(img, "window"), "taylor");
    assert_null(sarbp_image_get_attr(img, "nope"));
    char big[1000];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tu_ok(sarbp_image_set_attr(img, "long", big)); /* truncated, not refused */
    assert_int_equal(strlen(sarbp_image_get_attr(img, "long")), sizeof img->attrs[0].value - 1);
    for (int i = 2; i < SARBP_IMAGE_MAX_ATTRS; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        tu_ok(sarbp_image_set_attr(img, k, "v"));
    }
    assert_int_equal(sarbp_image_set_attr(img, "one-too-many", "v"), SARBP_ERR_INVALID);
    sarbp_image_free(img);
    sarbp_image_free(NULL);

    sarbp_grid bad = {.nx = 0, .ny = 3, .dx = 1, .dy = 1};
    assert_int_equal(sarbp_image_alloc(&bad, &img), SARBP_ERR_INVALID);
    assert_null(img);
}

static void test_h5_roundtrip(void **state)
{
    (void)state;
    const size_t nx = 5, ny = 3;
    sarbp_image *img = make_image(nx, ny);
    tu_ok(sarbp_image_set_attr(img, "source", "unit test"));
    tu_ok(sarbp_image_set_attr(img, "window", "hamming"));
    const char *path = tu_tmp("io_roundtrip.h5");
    tu_ok(sarbp_image_write_h5(path, img));
    assert_no_temp_left(path);

    /* Independent read with HDF5 */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t d = H5Dopen2(f, "/image", H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2];
    assert_int_equal(H5Sget_simple_extent_ndims(sp), 2);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    assert_int_equal(dims[0], ny);
    assert_int_equal(dims[1], nx);
    hid_t ft = H5Dget_type(d);
    assert_int_equal(H5Tget_class(ft), H5T_COMPOUND);
    assert_int_equal(H5Tget_nmembers(ft), 2);
    char *m0 = H5Tget_member_name(ft, 0), *m1 = H5Tget_member_name(ft, 1);
    assert_string_equal(m0, "r");
    assert_string_equal(m1, "i");
    H5free_memory(m0);
    H5free_memory(m1);
    hid_t mt = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(mt, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(mt, "i", 4, H5T_NATIVE_FLOAT);
    float buf[2 * 5 * 3];
    assert_true(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    assert_memory_equal(buf, img->data, sizeof buf);
    H5Tclose(mt);
    H5Tclose(ft);
    H5Sclose(sp);
    H5Dclose(d);

    double x[5], y[3];
    d = H5Dopen2(f, "/x", H5P_DEFAULT);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
    H5Dclose(d);
    d = H5Dopen2(f, "/y", H5P_DEFAULT);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y) >= 0);
    H5Dclose(d);
    /* pixel centres: x = xc + (ix - (nx-1)/2) dx */
    assert_true(fabs(x[0] - 9.0) < 1e-12 && fabs(x[4] - 11.0) < 1e-12);
    assert_true(fabs(y[0] - (-3.25)) < 1e-12 && fabs(y[2] - (-2.75)) < 1e-12);

    int64_t anx = 0, any = 0;
    hid_t a = H5Aopen(f, "nx", H5P_DEFAULT);
    hid_t at = H5Aget_type(a);
    assert_int_equal(H5Tget_class(at), H5T_INTEGER);
    assert_int_equal(H5Tget_size(at), 8);
    H5Tclose(at);
    H5Aread(a, H5T_NATIVE_INT64, &anx);
    H5Aclose(a);
    a = H5Aopen(f, "ny", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &any);
    H5Aclose(a);
    assert_int_equal(anx, 5);
    assert_int_equal(any, 3);
    const char *dn[5] = {"dx", "dy", "xc", "yc", "zc"};
    const double dv[5] = {0.5, 0.25, 10.0, -3.0, 1.5};
    for (int i = 0; i < 5; i++) {
        double v = 0;
        a = H5Aopen(f, dn[i], H5P_DEFAULT);
        assert_true(a >= 0);
        assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
        H5Aclose(a);
        assert_true(v == dv[i]);
    }
    a = H5Aopen(f, "source", H5P_DEFAULT);
    assert_true(a >= 0);
    at = H5Aget_type(a);
    assert_int_equal(H5Tget_class(at), H5T_STRING);
    char *sv = NULL;
    assert_true(H5Aread(a, at, &sv) >= 0);
    assert_string_equal(sv, "unit test");
    H5free_memory(sv);
    H5Tclose(at);
    H5Aclose(a);
    H5Fclose(f);

    /* And through sarbp */
    sarbp_image *back = NULL;
    tu_ok(sarbp_image_read(path, &back));
    assert_int_equal(back->grid.nx, nx);
    assert_int_equal(back->grid.ny, ny);
    assert_true(back->grid.dx == 0.5 && back->grid.dy == 0.25 && back->grid.xc == 10.0 &&
                back->grid.yc == -3.0 && back->grid.zc == 1.5);
    assert_int_equal(back->has_grid_coords, 1);
    assert_memory_equal(back->data, img->data, nx * ny * sizeof(sarbp_c32));
    assert_string_equal(sarbp_image_get_attr(back, "source"), "unit test");
    assert_string_equal(sarbp_image_get_attr(back, "window"), "hamming");
    assert_null(sarbp_image_get_attr(back, "nx"));

    /* Overwriting an existing file works (rename over it). */
    img->data[0].re = 42;
    tu_ok(sarbp_image_write(path, img, 0));
    sarbp_image_free(back);
    tu_ok(sarbp_image_read(path, &back));
    assert_true(back->data[0].re == 42);
    sarbp_image_free(back);
    sarbp_image_free(img);
}

static void test_h5_foreign(void **state)
{
    (void)state;
    /* An HDF5 image written by another tool: {real, imag} float64, no grid
     * attributes, /x and /y only; a fixed-length string attribute. */
    const char *path = tu_tmp("io_foreign.h5");
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ct = H5Tcreate(H5T_COMPOUND, 16);
    H5Tinsert(ct, "real", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(ct, "imag", 8, H5T_NATIVE_DOUBLE);
    hsize_t dims[2] = {2, 3};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "image", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const double v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    H5Dwrite(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(ct);
    const double x[3] = {-1, 0, 1}, y[2] = {4, 6};
    hsize_t n3 = 3, n2 = 2;
    sp = H5Screate_simple(1, &n3, NULL);
    d = H5Dcreate2(f, "x", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
    H5Dclose(d);
    H5Sclose(sp);
    sp = H5Screate_simple(1, &n2, NULL);
    d = H5Dcreate2(f, "y", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y);
    H5Dclose(d);
    H5Sclose(sp);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 6);
    sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "origin", st, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, st, "other");
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(st);
    H5Fclose(f);

    sarbp_image *img = NULL;
    tu_ok(sarbp_image_read(path, &img));
    assert_int_equal(img->grid.nx, 3);
    assert_int_equal(img->grid.ny, 2);
    assert_true(img->grid.dx == 1 && img->grid.dy == 2 && img->grid.xc == 0 && img->grid.yc == 5);
    assert_int_equal(img->has_grid_coords, 1);
    assert_true(img->data[4].re == 9 && img->data[4].im == 10);
    assert_string_equal(sarbp_image_get_attr(img, "origin"), "other");
    sarbp_image_free(img);
}

static void test_npy_roundtrip(void **state)
{
    (void)state;
    const size_t nx = 5, ny = 3;
    sarbp_image *img = make_image(nx, ny);
    const char *path = tu_tmp("io_roundtrip.npy");
    tu_ok(sarbp_image_write_npy(path, img));
    assert_no_temp_left(path);

    size_t n;
    unsigned char *b = read_all(path, &n);
    assert_memory_equal(b, "\x93NUMPY\x01\x00", 8);
    size_t hlen = b[8] | (size_t)b[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    assert_int_equal(b[10 + hlen - 1], '\n');
    char *h = calloc(hlen + 1, 1);
    memcpy(h, b + 10, hlen);
    assert_non_null(strstr(h, "'descr': '<c8'"));
    assert_non_null(strstr(h, "'fortran_order': False"));
    assert_non_null(strstr(h, "'shape': (3, 5)"));
    free(h);
    assert_int_equal(n, 10 + hlen + nx * ny * 8);
    assert_memory_equal(b + 10 + hlen, img->data, nx * ny * 8); /* little-endian host */
    free(b);

    sarbp_image *back = NULL;
    tu_ok(sarbp_image_read(path, &back));
    assert_int_equal(back->grid.nx, nx);
    assert_int_equal(back->grid.ny, ny);
    assert_int_equal(back->has_grid_coords, 0);
    assert_true(back->grid.dx == 1 && back->grid.dy == 1);
    assert_memory_equal(back->data, img->data, nx * ny * sizeof(sarbp_c32));
    sarbp_image_free(back);
    sarbp_image_free(img);
}

/* Writes a .npy v1.0 file with the given header dict and payload. */
static void write_npy(const char *path, const char *dict, const void *data, size_t nbytes)
{
    size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64, hlen = total - 10;
    unsigned char *b = calloc(total + nbytes, 1);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)(hlen & 0xff);
    b[9] = (unsigned char)(hlen >> 8);
    memcpy(b + 10, dict, dl);
    memset(b + 10 + dl, ' ', hlen - dl - 1);
    b[total - 1] = '\n';
    if (nbytes) memcpy(b + total, data, nbytes);
    write_bytes(path, b, total + nbytes);
    free(b);
}

static void test_npy_variants(void **state)
{
    (void)state;
    const char *path = tu_tmp("io_c16.npy");
    const double c16[2 * 6] = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6};
    write_npy(path, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }", c16, sizeof c16);
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_read(path, &img));
    assert_int_equal(img->grid.nx, 3);
    assert_int_equal(img->grid.ny, 2);
    assert_true(img->data[4].re == 5 && img->data[4].im == -5);
    sarbp_image_free(img);

    /* Fortran order: element (iy, ix) at ix * ny + iy */
    write_npy(path, "{'descr': '<c16', 'fortran_order': True, 'shape': (2, 3), }", c16, sizeof c16);
    tu_ok(sarbp_image_read(path, &img));
    assert_true(img->data[0 * 3 + 1].re == 3); /* (iy 0, ix 1) = file element 2 */
    assert_true(img->data[1 * 3 + 0].re == 2); /* (iy 1, ix 0) = file element 1 */
    sarbp_image_free(img);

    const float f4[6] = {1, 2, 3, 4, 5, 6};
    write_npy(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4, sizeof f4);
    assert_int_equal(sarbp_image_read(path, &img), SARBP_ERR_FORMAT);
    assert_null(img);
    assert_non_null(strstr(sarbp_error_detail(), "'<f4'"));
    assert_non_null(strstr(sarbp_error_detail(), path));

    write_npy(path, "{'descr': '<c8', 'fortran_order': False, 'shape': (6,), }", f4, sizeof f4);
    assert_int_equal(sarbp_image_read(path, &img), SARBP_ERR_FORMAT);
    assert_non_null(strstr(sarbp_error_detail(), "2-D"));

    /* truncated payload */
    write_npy(path, "{'descr': '<c8', 'fortran_order': False, 'shape': (20, 30), }", f4, sizeof f4);
    assert_int_equal(sarbp_image_read(path, &img), SARBP_ERR_FORMAT);
    assert_non_null(strstr(sarbp_error_detail(), "truncated"));

    /* garbage header */
    write_npy(path, "{'nonsense': 1}", NULL, 0);
    assert_int_equal(sarbp_image_read(path, &img), SARBP_ERR_FORMAT);
}

static void test_png(void **state)
{
    (void)state;
    /* 4 x 3 image: peak 10 at (ix 1, iy 2) = top row; -20 dB at (0, 0);
     * -60 dB (clipped) at (3, 0); zero elsewhere. db_range 40. */
    sarbp_grid g = {.nx = 4, .ny = 3, .dx = 1, .dy = 1};
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_alloc(&g, &img));
    img->data[2 * 4 + 1] = (sarbp_c32){0, 10};
    img->data[0 * 4 + 0] = (sarbp_c32){1, 0};
    img->data[0 * 4 + 3] = (sarbp_c32){0.01f, 0};
    img->data[1 * 4 + 2] = (sarbp_c32){-0.6f, 0.8f}; /* |1|: -20 dB */
    const char *path = tu_tmp("io_image.png");
    tu_ok(sarbp_image_write(path, img, 40));
    assert_no_temp_left(path);

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_int_equal(setjmp(png_jmpbuf(png)), 0);
    png_init_io(png, f);
    png_read_info(png, info);
    assert_int_equal(png_get_image_width(png, info), 4);
    assert_int_equal(png_get_image_height(png, info), 3);
    assert_int_equal(png_get_bit_depth(png, info), 8);
    assert_int_equal(png_get_color_type(png, info), PNG_COLOR_TYPE_GRAY);
    unsigned char rows[3][4];
    for (int r = 0; r < 3; r++) png_read_row(png, rows[r], NULL);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    /* north up: PNG row 0 is image row iy = 2 */
    assert_int_equal(rows[0][1], 255);
    assert_int_equal(rows[0][0], 0);
    assert_int_equal(rows[2][0], 128); /* 255 * (1 - 20/40) = 127.5 -> 128 */
    assert_int_equal(rows[1][2], 128);
    assert_int_equal(rows[2][3], 0);   /* 60 dB down: clipped */

    /* bad dB range: refused, nothing written */
    const char *p2 = tu_tmp("io_bad_range.png");
    assert_int_equal(sarbp_image_write_png(p2, img, 0), SARBP_ERR_INVALID);
    assert_false(tu_exists(p2));
    /* PNG is not readable as an image */
    sarbp_image *back = NULL;
    assert_int_equal(sarbp_image_read(path, &back), SARBP_ERR_FORMAT);
    assert_non_null(strstr(sarbp_error_detail(), "PNG"));
    sarbp_image_free(img);
}

static void test_failed_writes(void **state)
{
    (void)state;
    sarbp_image *img = make_image(8, 4);
    const char *names[] = {"no_such_dir/x.h5", "no_such_dir/x.npy", "no_such_dir/x.png"};
    for (int i = 0; i < 3; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", SARBP_TEST_TMP, names[i]);
        sarbp_status s = sarbp_image_write(path, img, 50);
        assert_int_equal(s, SARBP_ERR_IO);
        assert_non_null(strstr(sarbp_error_detail(), path));
        assert_non_null(strstr(sarbp_error_detail(), "No such file or directory"));
        assert_false(tu_exists(path));
        assert_no_temp_left(path);
    }
    /* unknown extension */
    const char *p = tu_tmp("io_unknown.jpg");
    assert_int_equal(sarbp_image_write(p, img, 50), SARBP_ERR_INVALID);
    assert_false(tu_exists(p));
    /* a directory as the target: rename fails, the temp file is removed */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/io_dir_target.h5", SARBP_TEST_TMP);
    rmdir(dir);
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(sarbp_image_write_h5(dir, img), SARBP_ERR_IO);
    assert_no_temp_left(dir);
    rmdir(dir);
    sarbp_image_free(img);
}

/* Non-finite pixels are an error before any file exists, in every format
 * and for several outputs at once; an earlier output of the same name is
 * kept. */
static void test_nonfinite_refused(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("io_nonfinite");
    char h5[600], npy[600], png[600];
    snprintf(h5, sizeof h5, "%s/a.h5", dir);
    snprintf(npy, sizeof npy, "%s/a.npy", dir);
    snprintf(png, sizeof png, "%s/a.png", dir);
    sarbp_image *img = make_image(8, 4);
    tu_ok(sarbp_image_write(npy, img, 50)); /* an earlier result */
    img->data[2 * 8 + 5].im = NAN;
    img->data[3 * 8 + 1].re = INFINITY;
    const char *paths[] = {h5, npy, png};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sarbp_image_write(paths[i], img, 50), SARBP_ERR_INVALID);
        assert_non_null(strstr(sarbp_error_detail(), "image has 2 non-finite pixels"));
        assert_non_null(strstr(sarbp_error_detail(), "ix 5, iy 2"));
    }
    assert_int_equal(sarbp_image_write_h5(h5, img), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_image_write_npy(npy, img), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_image_write_png(png, img, 50), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_image_write_all(paths, 3, img, 50), SARBP_ERR_INVALID);
    assert_false(tu_exists(h5));
    assert_false(tu_exists(png));
    assert_int_equal(tu_count_entries(dir), 1); /* the earlier a.npy, nothing else */
    sarbp_image *back;
    tu_ok(sarbp_image_read(npy, &back));
    assert_true(isfinite(back->data[2 * 8 + 5].im));
    sarbp_image_free(back);
    sarbp_image_free(img);
}

/* A large image: the finite check runs in pieces of 4 Mi pixels on every
 * core and the .npy is written in pieces of 64 MiB, each handed to the
 * disk as it goes: the count and the first bad pixel are the whole image's,
 * and the file reads back bit for bit. */
static void test_large_image(void **state)
{
    (void)state;
    const size_t nx = 3000, ny = 3000, n = nx * ny; /* 9 Mi pixels: 3 check pieces, 2 write pieces */
    sarbp_image *img = make_image(nx, ny);
    const char *npy = tu_tmp("io_large.npy");
    tu_ok(sarbp_image_write(npy, img, 50));
    sarbp_image *back;
    tu_ok(sarbp_image_read(npy, &back));
    assert_int_equal(back->grid.nx * back->grid.ny, n);
    assert_memory_equal(back->data, img->data, n * sizeof *img->data);
    sarbp_image_free(back);
    const size_t late = 5000001, later = 8500000, early = 100;
    img->data[late].re = NAN;
    img->data[later].im = INFINITY;
    assert_int_equal(sarbp_image_write(npy, img, 50), SARBP_ERR_INVALID);
    char want[80];
    snprintf(want, sizeof want, "ix %zu, iy %zu", late % nx, late / nx);
    assert_non_null(strstr(sarbp_error_detail(), "image has 2 non-finite pixels"));
    assert_non_null(strstr(sarbp_error_detail(), want));
    img->data[early].im = -INFINITY;
    assert_int_equal(sarbp_image_write(npy, img, 50), SARBP_ERR_INVALID);
    snprintf(want, sizeof want, "ix %zu, iy %zu", early % nx, early / nx);
    assert_non_null(strstr(sarbp_error_detail(), "image has 3 non-finite pixels"));
    assert_non_null(strstr(sarbp_error_detail(), want));
    tu_ok(sarbp_image_read(npy, &back)); /* the earlier file is kept */
    assert_true(isfinite(back->data[late].re));
    sarbp_image_free(back);
    sarbp_image_free(img);
    remove(npy);
}

/* path still holds the 7 bytes "earlier" test_npy_stream put there */
static void assert_earlier(const char *path)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    assert_int_equal(n, 7);
    assert_memory_equal(b, "earlier", 7);
    free(b);
}

/* A .npy written band by band (sarbp_npy_stream, bands given out of
 * order as devices finish them) is byte for byte the file the whole-image
 * writer makes; it replaces the earlier file only through the write of all
 * outputs, after the image is checked; rows given twice or never, a
 * non-finite pixel, or a stream freed unwritten leave the earlier file and
 * no temporary. */
static void test_npy_stream(void **state)
{
    (void)state;
    const size_t nx = 37, ny = 29;
    sarbp_image *img = make_image(nx, ny);
    const char *dir = tu_fresh_dir("io_npy_stream");
    const char *whole = tu_in_dir(dir, "whole.npy"), *out = tu_in_dir(dir, "out.npy");
    const char *png = tu_in_dir(dir, "out.png");
    tu_ok(sarbp_image_write(whole, img, 50));
    write_bytes(out, "earlier", 7);

    /* freed before any write took it: nothing changes */
    sarbp_npy_stream *ns = NULL;
    tu_ok(sarbp_npy_stream_open(out, ny, nx, &ns));
    tu_ok(sarbp_npy_stream_rows(ns, 0, 10, img->data));
    sarbp_npy_stream_free(ns);
    assert_earlier(out);
    tu_no_temporaries(dir);

    /* rows twice, past the end, or some never given */
    tu_ok(sarbp_npy_stream_open(out, ny, nx, &ns));
    tu_ok(sarbp_npy_stream_rows(ns, 20, 9, img->data + 20 * nx));
    assert_int_equal(sarbp_npy_stream_rows(ns, 25, 2, img->data + 25 * nx), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "given twice"));
    assert_int_equal(sarbp_npy_stream_rows(ns, 28, 2, img->data), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_npy_stream_finish(ns), SARBP_ERR_INTERNAL);
    assert_non_null(strstr(sarbp_error_detail(), "9 of its 29 rows"));
    sarbp_image_context ctx = {0};
    sarbp_npy_stream *one[1] = {ns};
    ctx.npy = one;
    assert_int_equal(sarbp_image_write_all_ctx(&out, 1, img, 50, &ctx), SARBP_ERR_INVALID);
    sarbp_npy_stream_free(ns);
    assert_earlier(out);
    tu_no_temporaries(dir);

    /* whole, in three bands out of order, with a .png beside it */
    tu_ok(sarbp_npy_stream_open(out, ny, nx, &ns));
    tu_ok(sarbp_npy_stream_rows(ns, 16, 13, img->data + 16 * nx));
    tu_ok(sarbp_npy_stream_rows(ns, 0, 8, img->data));
    tu_ok(sarbp_npy_stream_rows(ns, 8, 8, img->data + 8 * nx));
    tu_ok(sarbp_npy_stream_finish(ns));
    /* a non-finite pixel: the image is checked before the file is taken */
    img->data[3 * nx + 5].re = NAN;
    sarbp_npy_stream *two[2] = {NULL, ns};
    const char *paths[2] = {png, out};
    ctx.npy = two;
    assert_int_equal(sarbp_image_write_all_ctx(paths, 2, img, 50, &ctx), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "non-finite"));
    assert_earlier(out);
    assert_false(tu_exists(png));
    sarbp_npy_stream_free(ns);
    tu_no_temporaries(dir);

    tu_ok(sarbp_npy_stream_open(out, ny, nx, &ns));
    sarbp_image *ref = make_image(nx, ny);
    tu_ok(sarbp_npy_stream_rows(ns, 16, 13, ref->data + 16 * nx));
    tu_ok(sarbp_npy_stream_rows(ns, 0, 16, ref->data));
    tu_ok(sarbp_npy_stream_finish(ns));
    two[1] = ns;
    tu_ok(sarbp_image_write_all_ctx(paths, 2, ref, 50, &ctx));
    sarbp_npy_stream_free(ns); /* the write took its file */
    size_t n, nw;
    unsigned char *w = read_all(whole, &nw), *b = read_all(out, &n);
    assert_int_equal(n, nw);
    assert_memory_equal(b, w, n);
    free(b);
    free(w);
    assert_true(tu_exists(png));
    tu_no_temporaries(dir);

    /* not a .npy, or another image's rows */
    assert_int_equal(sarbp_npy_stream_open(png, ny, nx, &ns), SARBP_ERR_INVALID);
    tu_ok(sarbp_npy_stream_open(out, ny - 1, nx, &ns));
    tu_ok(sarbp_npy_stream_rows(ns, 0, ny - 1, ref->data));
    tu_ok(sarbp_npy_stream_finish(ns));
    one[0] = ns;
    ctx.npy = one;
    assert_int_equal(sarbp_image_write_all_ctx(&out, 1, ref, 50, &ctx), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "not this image's"));
    sarbp_npy_stream_free(ns);
    tu_no_temporaries(dir);
    sarbp_image_free(ref);
    sarbp_image_free(img);
}

/* Several outputs are all or nothing: one that cannot be written (missing
 * directory, or a directory in the way at rename) leaves none of them, and
 * earlier files of those names are as they were. */
static void test_write_all(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("io_write_all");
    char ok_png[600], ok_h5[600], bad[600], blocked[600], inside[700];
    snprintf(ok_png, sizeof ok_png, "%s/ok.png", dir);
    snprintf(ok_h5, sizeof ok_h5, "%s/ok.h5", dir);
    snprintf(bad, sizeof bad, "%s/no-such-dir/x.h5", dir);
    snprintf(blocked, sizeof blocked, "%s/blocked.npy", dir);
    snprintf(inside, sizeof inside, "%s/keep", blocked);
    sarbp_image *img = make_image(6, 5);

    const char *first_bad[] = {ok_png, bad, ok_h5};
    assert_int_equal(sarbp_image_write_all(first_bad, 3, img, 50), SARBP_ERR_IO);
    assert_non_null(strstr(sarbp_error_detail(), "no-such-dir/x.h5': No such file or directory"));
    assert_int_equal(tu_count_entries(dir), 0);

    /* every file complete, the last rename refused: the earlier renames are undone */
    assert_int_equal(mkdir(blocked, 0777), 0);
    FILE *f = fopen(inside, "w");
    assert_non_null(f);
    fclose(f);
    const char *last_blocked[] = {ok_png, ok_h5, blocked};
    assert_int_equal(sarbp_image_write_all(last_blocked, 3, img, 50), SARBP_ERR_IO);
    assert_non_null(strstr(sarbp_error_detail(), "blocked.npy"));
    assert_false(tu_exists(ok_png));
    assert_false(tu_exists(ok_h5));
    assert_int_equal(tu_count_entries(dir), 1); /* blocked.npy, the directory */

    /* and all of them when all can be written */
    const char *good[] = {ok_png, ok_h5};
    tu_ok(sarbp_image_write_all(good, 2, img, 50));
    assert_true(tu_exists(ok_png) && tu_exists(ok_h5));
    assert_no_temp_left(ok_png);
    assert_no_temp_left(ok_h5);
    assert_int_equal(tu_count_entries(dir), 3);
    assert_int_equal(sarbp_image_write_all(good, 0, img, 50), SARBP_ERR_INVALID);
    sarbp_image_free(img);
}

/* A symbolic link planted at the old temporary name "<out>.tmp.<pid>" (or at
 * a plausible new one) is never followed: its target keeps its bytes, in
 * every format. */
static void test_planted_links(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("io_links");
    char victim[600];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious", f);
    fclose(f);
    sarbp_image *img = make_image(5, 3);
    const char *names[] = {"x.h5", "x.npy", "x.png"};
    for (int i = 0; i < 3; i++) {
        char out[600], old[700], plausible[700];
        snprintf(out, sizeof out, "%s/%s", dir, names[i]);
        snprintf(old, sizeof old, "%s.tmp.%ld", out, (long)getpid());
        snprintf(plausible, sizeof plausible, "%s.tmp-000000", out);
        assert_int_equal(symlink(victim, old), 0);
        assert_int_equal(symlink(victim, plausible), 0);
        tu_ok(sarbp_image_write(out, img, 50));
        struct stat st;
        assert_int_equal(lstat(out, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(lstat(old, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
    }
    size_t n;
    unsigned char *b = read_all(victim, &n);
    assert_int_equal(n, 8);
    assert_memory_equal(b, "precious", 8);
    free(b);
    assert_int_equal(tu_count_entries(dir), 1 + 3 * 3);
    sarbp_image_free(img);
}

static void test_bad_reads(void **state)
{
    (void)state;
    sarbp_image *img = NULL;
    char path[600];
    snprintf(path, sizeof path, "%s/io_missing_file.h5", SARBP_TEST_TMP);
    remove(path);
    assert_int_equal(sarbp_image_read(path, &img), SARBP_ERR_IO);
    assert_null(img);
    assert_non_null(strstr(sarbp_error_detail(), path));
    assert_non_null(strstr(sarbp_error_detail(), "No such file"));

    const char *junk = tu_tmp("io_corrupt.h5");
    write_bytes(junk, "this is not an image at all, just some text\n", 44);
    assert_int_equal(sarbp_image_read(junk, &img), SARBP_ERR_FORMAT);
    assert_non_null(strstr(sarbp_error_detail(), junk));

    /* empty file */
    const char *empty = tu_tmp("io_empty.npy");
    write_bytes(empty, "", 0);
    assert_int_equal(sarbp_image_read(empty, &img), SARBP_ERR_FORMAT);

    /* valid HDF5 with the HDF5 signature but cut short */
    sarbp_image *good = make_image(64, 64);
    const char *h5 = tu_tmp("io_truncated.h5");
    tu_ok(sarbp_image_write_h5(h5, good));
    size_t n;
    unsigned char *b = read_all(h5, &n);
    write_bytes(h5, b, n / 3);
    free(b);
    assert_int_equal(sarbp_image_read(h5, &img), SARBP_ERR_FORMAT);
    assert_non_null(strstr(sarbp_error_detail(), h5));

    /* HDF5 without /image */
    const char *noimg = tu_tmp("io_noimage.h5");
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fcreate(noimg, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    assert_int_equal(sarbp_image_read(noimg, &img), SARBP_ERR_FORMAT);
    assert_non_null(strstr(sarbp_error_detail(), "/image"));

    /* a directory */
    assert_int_equal(sarbp_image_read(SARBP_TEST_TMP, &img), SARBP_ERR_IO);
    assert_null(img);
    sarbp_image_free(good);
}

/* A 3 KB file declaring a 65536 x 65536 image (32 GB) is refused before
 * anything is allocated; an h5py-style variable-length UTF-8 attribute is
 * read like a fixed-length one. */
static void test_declared_image(void **state)
{
    (void)state;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (int written = 0; written < 2; written++) {
        const char *path = tu_tmp(written ? "io_vlen_attr.h5" : "io_huge_declared.h5");
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t ct = H5Tcreate(H5T_COMPOUND, 8);
        H5Tinsert(ct, "r", 0, H5T_IEEE_F32LE);
        H5Tinsert(ct, "i", 4, H5T_IEEE_F32LE);
        hsize_t dims[2] = {written ? 2 : 65536, written ? 2 : 65536}, chunk[2] = {1, 64};
        hid_t sp = H5Screate_simple(2, dims, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
        if (!written) H5Pset_chunk(pl, 2, chunk);
        hid_t d = H5Dcreate2(f, "image", ct, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
        assert_true(d >= 0);
        const float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        if (written) assert_true(H5Dwrite(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        H5Dclose(d);
        H5Pclose(pl);
        H5Sclose(sp);
        H5Tclose(ct);
        hid_t vt = H5Tcopy(H5T_C_S1);
        H5Tset_size(vt, H5T_VARIABLE);
        H5Tset_cset(vt, H5T_CSET_UTF8);
        sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, "origin", vt, sp, H5P_DEFAULT, H5P_DEFAULT);
        const char *origin = "h5py";
        H5Awrite(a, vt, &origin);
        H5Aclose(a);
        H5Sclose(sp);
        H5Tclose(vt);
        H5Fclose(f);

        sarbp_image *img = NULL;
        if (!written) {
            assert_int_equal(sarbp_image_read(path, &img), SARBP_ERR_FORMAT);
            assert_null(img);
            printf("%s\n", sarbp_error_detail());
            assert_non_null(strstr(sarbp_error_detail(), "declares 65536 x 65536 values"));
            assert_non_null(strstr(sarbp_error_detail(), path));
        } else {
            tu_ok(sarbp_image_read(path, &img));
            assert_true(img->data[3].re == 7 && img->data[3].im == 8);
            assert_string_equal(sarbp_image_get_attr(img, "origin"), "h5py");
            sarbp_image_free(img);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_names),  cmocka_unit_test(test_attrs),
        cmocka_unit_test(test_h5_roundtrip),  cmocka_unit_test(test_h5_foreign),
        cmocka_unit_test(test_npy_roundtrip), cmocka_unit_test(test_npy_variants),
        cmocka_unit_test(test_png),           cmocka_unit_test(test_failed_writes),
        cmocka_unit_test(test_bad_reads),     cmocka_unit_test(test_nonfinite_refused),
        cmocka_unit_test(test_large_image),   cmocka_unit_test(test_npy_stream),
        cmocka_unit_test(test_write_all),     cmocka_unit_test(test_planted_links),
        cmocka_unit_test(test_declared_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
