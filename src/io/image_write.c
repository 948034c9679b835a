/* image_write.c - writes complex images as HDF5, .npy and PNG.
 *
 * Every writer writes a temporary file beside its output (tempfile.h:
 * exclusive creation, fsync, rename), and several outputs of one image are
 * all or nothing: renamed only when every one is complete. On any failure
 * every temporary is removed, so either the whole image is at each path or
 * nothing new is. An image with a non-finite pixel is refused before any
 * file is created. The layouts are described in sarbp/image.h. HDF5's
 * automatic error printing is turned off: failures are reported through
 * sarbp_error() only. Reading is image_read.c's. */
#define _GNU_SOURCE /* sync_file_range */
#include "sarbp/image.h"
#include "sarbp/output.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h> /* pwrite */

#include "core/parallel.h"
#include "io/geo_write.h"
#include "io/image_check.h"
#include "io/npy_stream.h"
#include "io/tempfile.h"

/* ---- checks and streams --------------------------------------------------- */

/* Flushes and closes the stream f written with success ok (errno then says
 * why not); SARBP_ERR_IO naming path on any failure. */
static sarbp_status close_stream(FILE *f, int ok, const char *path)
{
    int e = errno;
    if (fflush(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    return ok ? SARBP_OK : sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(e));
}

/* check_image's scan: pixels [task x CHECK_PIECE, ...) of img, the bad
 * ones counted and the first kept, per task (tasks run on all cores) */
#define CHECK_PIECE ((size_t)1 << 22)
struct check_scan {
    const sarbp_image *img;
    size_t n;
    size_t *bad, *first; /* [tasks] */
};

static void check_piece(void *arg, size_t task, int worker)
{
    (void)worker;
    const struct check_scan *c = arg;
    const size_t a = task * CHECK_PIECE, b = a + CHECK_PIECE < c->n ? a + CHECK_PIECE : c->n;
    size_t bad = 0, first = 0;
    for (size_t i = a; i < b; i++)
        if (!isfinite(c->img->data[i].re) || !isfinite(c->img->data[i].im)) {
            if (!bad) first = i;
            bad++;
        }
    c->bad[task] = bad;
    c->first[task] = first;
}

/* An image can be written when it has a valid grid and every pixel is
 * finite: a NaN or Inf pixel means the computation went wrong, and a file
 * of them (a PNG of it is black) would pass for a result. The scan runs on
 * every core: a 16384^2 image is 2 GiB to read before its file starts. */
static sarbp_status check_image(const sarbp_image *img, const char *path)
{
    if (!img || !img->data)
        return sarbp_error(SARBP_ERR_INVALID, "no image to write to '%s'", path ? path : "(null)");
    SARBP_TRY(sarbp_grid_validate(&img->grid));
    const size_t n = img->grid.nx * img->grid.ny, tasks = (n + CHECK_PIECE - 1) / CHECK_PIECE;
    size_t *cnt = calloc(2 * (tasks ? tasks : 1), sizeof *cnt);
    if (!cnt) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    struct check_scan c = {img, n, cnt, cnt + tasks};
    sarbp_status st = tasks > 1 ? sarbp_parallel_for(0, tasks, check_piece, &c) : SARBP_OK;
    if (tasks == 1) check_piece(&c, 0, 0);
    size_t bad = 0, first = 0;
    for (size_t k = 0; !st && k < tasks; k++) {
        if (cnt[k] && !bad) first = c.first[k];
        bad += cnt[k];
    }
    free(cnt);
    SARBP_TRY(st);
    if (bad)
        return sarbp_error(SARBP_ERR_INVALID, "image has %zu non-finite pixel%s (NaN or Inf; the "
                           "first at ix %zu, iy %zu): no output written", bad, bad == 1 ? "" : "s",
                           first % img->grid.nx, first / img->grid.nx);
    return SARBP_OK;
}

/* ---- HDF5 ----------------------------------------------------------------- */

/* Innermost message of HDF5's error stack (the most specific one). */
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    char *msg = data;
    if (n == 0 && e->desc) snprintf(msg, 160, "%s", e->desc);
    return 0;
}

static sarbp_status h5_fail(const char *what, const char *path, const char *call, int line)
{
    char msg[160] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5_walk, msg);
    return sarbp_error(SARBP_ERR_HDF5, "cannot %s '%s': %s failed%s%s (%s:%d)", what, path, call,
                       msg[0] ? ": " : "", msg, __FILE__, line);
}

#define H5CHK(call)                                                            \
    do {                                                                       \
        if ((call) < 0) {                                                      \
            st = h5_fail("write", path, #call, __LINE__);                      \
            goto done;                                                         \
        }                                                                      \
    } while (0)

static const char *const grid_attr_names[] = {"nx", "ny", "dx", "dy", "xc", "yc", "zc"};

static int is_grid_attr(const char *key)
{
    for (size_t i = 0; i < sizeof grid_attr_names / sizeof grid_attr_names[0]; i++)
        if (!strcmp(key, grid_attr_names[i])) return 1;
    return 0;
}

static herr_t h5_attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0) return -1;
    hid_t a = H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Awrite(a, mtype, v);
    if (a >= 0 && H5Aclose(a) < 0) r = -1;
    H5Sclose(sp);
    return r;
}

/* Attributes written as numbers (when the whole value parses as one), with
 * their units where physical: the provenance's numbers. Everything else is
 * a string. */
static const struct {
    const char *key;
    int is_int;
    const char *units; /* NULL: a pure number */
} numeric_attrs[] = {
    {"npulses", 1, NULL},          {"nsamples", 1, NULL},
    {"upsample", 1, NULL},         {"coherent_gain", 0, NULL},
    {"max_error_db", 0, "dB"},     {"ffbp_predicted_error_db", 0, "dB"},
    {"ffbp_base", 1, NULL},        {"ffbp_merge", 1, NULL},
    {"ffbp_os_theta", 0, NULL},    {"ffbp_os_rho", 0, NULL},
    {"ffbp_stages", 1, NULL},      {"db_range", 0, "dB"},
};

static int numeric_attr(const char *key)
{
    for (size_t i = 0; i < sizeof numeric_attrs / sizeof numeric_attrs[0]; i++)
        if (!strcmp(key, numeric_attrs[i].key)) return (int)i;
    return -1;
}

/* v as a whole int64 (is_int) or finite double: 1 when it is one. */
static int parse_number(const char *v, int is_int, int64_t *iv, double *dv)
{
    char *end;
    errno = 0;
    if (is_int) {
        const long long x = strtoll(v, &end, 10);
        *iv = (int64_t)x;
    } else {
        *dv = strtod(v, &end);
    }
    return *v && !*end && !errno && (is_int || isfinite(*dv));
}

static herr_t h5_string_attr(hid_t loc, const char *name, hid_t stype, const char *v)
{
    return h5_attr_write(loc, name, stype, stype, &v);
}

/* KEY_units = units beside attribute KEY */
static herr_t h5_units(hid_t loc, const char *key, hid_t stype, const char *units)
{
    char name[64];
    snprintf(name, sizeof name, "%s_units", key);
    return h5_string_attr(loc, name, stype, units);
}

static herr_t h5_coords(hid_t file, const char *name, const sarbp_grid *g, int is_y)
{
    size_t n = is_y ? g->ny : g->nx;
    double *v = malloc(n * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < n; i++) v[i] = is_y ? sarbp_grid_y(g, i) : sarbp_grid_x(g, i);
    hsize_t dim = n;
    herr_t r = -1;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    if (sp >= 0) {
        hid_t d = H5Dcreate2(file, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d >= 0) {
            r = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
            hid_t st = H5Tcopy(H5T_C_S1);
            if (r >= 0 && (st < 0 || H5Tset_size(st, H5T_VARIABLE) < 0 ||
                           h5_string_attr(d, "units", st, "m") < 0))
                r = -1;
            if (st >= 0) H5Tclose(st);
            if (H5Dclose(d) < 0) r = -1;
        }
        H5Sclose(sp);
    }
    free(v);
    return r;
}

/* One autofocus dataset of grp (name, v[dims of sp], FP64) with its units and convention. */
static herr_t h5_af_dataset(hid_t grp, hid_t sp, const char *name, const double *v, const char *units,
                            const char *convention, hid_t stype)
{
    hid_t d = H5Dcreate2(grp, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0) return -1;
    herr_t r = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (r >= 0 && (h5_string_attr(d, "units", stype, units) < 0 ||
                   h5_string_attr(d, "convention", stype, convention) < 0))
        r = -1;
    if (H5Dclose(d) < 0) r = -1;
    return r;
}

/* The autofocus estimate: datasets autofocus/phase [npulses] (rad) and, when
 * there is one, autofocus/range (m), with units and sign convention as
 * attributes. */
static herr_t h5_autofocus(hid_t file, const sarbp_image *img, hid_t stype)
{
    if (!img->af_phase || !img->af_npulses) return 0;
    herr_t r = -1;
    hid_t grp = H5Gcreate2(file, "autofocus", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (grp < 0) return -1;
    hsize_t dim = img->af_npulses;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    if (sp >= 0) {
        r = h5_af_dataset(grp, sp, "phase", img->af_phase, "rad",
                          "applied as pulse j's samples times exp(+1j phase[j]) (as the Gotcha files' "
                          "af.ph_correct), pulses in input order after selection", stype);
        if (r >= 0 && img->af_range)
            r = h5_af_dataset(grp, sp, "range", img->af_range, "m",
                              "applied as pulse j's sample at frequency f times exp(+1j 4 pi f range[j] / c), "
                              "as if its r0 were r0 - range[j]; pulses in input order after selection",
                              stype);
        H5Sclose(sp);
    }
    if (H5Gclose(grp) < 0) r = -1;
    return r;
}

/* Terrain: dataset heights float32 [ny][nx], the z (m, scene frame) each
 * pixel was formed at (sarbp/terrain.h; the source is the attribute
 * heights_source). */
static herr_t h5_heights(hid_t file, const sarbp_grid *g, hid_t stype)
{
    if (!g->height) return 0;
    float *h = malloc(g->nx * g->ny * sizeof *h);
    if (!h) return -1;
    for (size_t iy = 0; iy < g->ny; iy++)
        for (size_t ix = 0; ix < g->nx; ix++) h[iy * g->nx + ix] = (float)sarbp_grid_z(g, ix, iy);
    herr_t r = -1;
    hsize_t dims[2] = {g->ny, g->nx};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    if (sp >= 0) {
        hid_t d = H5Dcreate2(file, "heights", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d >= 0) {
            r = H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, h);
            if (r >= 0 && h5_string_attr(d, "units", stype, "m") < 0) r = -1;
            if (H5Dclose(d) < 0) r = -1;
        }
        H5Sclose(sp);
    }
    free(h);
    return r;
}

/* HDF5 wants a name: it reopens the temporary (ours, created exclusively)
 * through sarbp_tempfile_open_name and truncates it. */
static sarbp_status h5_to(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                          double db_range, const sarbp_image_context *ctx)
{
    (void)db_range;
    (void)ctx;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    sarbp_status st = SARBP_OK;
    const sarbp_grid *g = &img->grid;
    hid_t file = -1, mtype = -1, ftype = -1, space = -1, dset = -1, stype = -1;
    H5CHK(file = H5Fcreate(sarbp_tempfile_open_name(t), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));

    H5CHK(mtype = H5Tcreate(H5T_COMPOUND, sizeof(sarbp_c32)));
    H5CHK(H5Tinsert(mtype, "r", offsetof(sarbp_c32, re), H5T_NATIVE_FLOAT));
    H5CHK(H5Tinsert(mtype, "i", offsetof(sarbp_c32, im), H5T_NATIVE_FLOAT));
    H5CHK(ftype = H5Tcreate(H5T_COMPOUND, 8));
    H5CHK(H5Tinsert(ftype, "r", 0, H5T_IEEE_F32LE));
    H5CHK(H5Tinsert(ftype, "i", 4, H5T_IEEE_F32LE));

    hsize_t dims[2] = {g->ny, g->nx};
    H5CHK(space = H5Screate_simple(2, dims, NULL));
    H5CHK(dset = H5Dcreate2(file, "image", ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5CHK(H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, img->data));
    H5CHK(h5_coords(file, "x", g, 0));
    H5CHK(h5_coords(file, "y", g, 1));

    /* String attributes: variable-length UTF-8 (h5py reads them as str). */
    H5CHK(stype = H5Tcopy(H5T_C_S1));
    H5CHK(H5Tset_size(stype, H5T_VARIABLE));
    H5CHK(H5Tset_cset(stype, H5T_CSET_UTF8));
    H5CHK(h5_autofocus(file, img, stype));
    H5CHK(h5_heights(file, g, stype));
    int64_t nx = (int64_t)g->nx, ny = (int64_t)g->ny;
    H5CHK(h5_attr_write(file, "nx", H5T_STD_I64LE, H5T_NATIVE_INT64, &nx));
    H5CHK(h5_attr_write(file, "ny", H5T_STD_I64LE, H5T_NATIVE_INT64, &ny));
    const double gv[5] = {g->dx, g->dy, g->xc, g->yc, g->zc};
    for (int i = 0; i < 5; i++) {
        H5CHK(h5_attr_write(file, grid_attr_names[2 + i], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                            &gv[i]));
        H5CHK(h5_units(file, grid_attr_names[2 + i], stype, "m"));
    }

    /* The image's attributes: numbers as numbers (numeric_attrs), the rest
     * strings. A key that names a grid attribute, or a *_units companion
     * (written here beside its number), is skipped: the grid wins. */
    for (size_t i = 0; i < img->nattrs && i < SARBP_IMAGE_MAX_ATTRS; i++) {
        const sarbp_attr *a = &img->attrs[i];
        const size_t kl = strlen(a->key);
        if (!a->key[0] || is_grid_attr(a->key) ||
            (kl > 6 && !strcmp(a->key + kl - 6, "_units")))
            continue;
        const int k = numeric_attr(a->key);
        int64_t iv;
        double dv;
        if (k >= 0 && parse_number(a->value, numeric_attrs[k].is_int, &iv, &dv)) {
            if (numeric_attrs[k].is_int)
                H5CHK(h5_attr_write(file, a->key, H5T_STD_I64LE, H5T_NATIVE_INT64, &iv));
            else
                H5CHK(h5_attr_write(file, a->key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &dv));
            if (numeric_attrs[k].units) H5CHK(h5_units(file, a->key, stype, numeric_attrs[k].units));
        } else {
            H5CHK(h5_string_attr(file, a->key, stype, a->value));
        }
    }

done:
    if (stype >= 0) H5Tclose(stype);
    if (dset >= 0 && H5Dclose(dset) < 0 && st == SARBP_OK) st = h5_fail("write", path, "H5Dclose", __LINE__);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (mtype >= 0) H5Tclose(mtype);
    if (file >= 0 && H5Fclose(file) < 0 && st == SARBP_OK)
        st = h5_fail("write", path, "H5Fclose", __LINE__);
    if (st != SARBP_OK) H5Eclear2(H5E_DEFAULT);
    return st;
}

/* ---- .npy ----------------------------------------------------------------- */

/* (image_check.h) */
int image_host_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* (image_check.h) */
int image_write_at(int fd, const void *p, size_t n, long long off)
{
    const unsigned char *b = p;
    while (n > 0) {
        const ssize_t w = pwrite(fd, b, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return -1;
        }
        b += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* (image_check.h) */
int image_npy_write_rows(int fd, size_t head, size_t nx, size_t row0, size_t nrows, const sarbp_c32 *rows)
{
    const size_t piece = (size_t)64 << 20, n = nrows * nx * sizeof(sarbp_c32);
    const long long off = (long long)(head + row0 * nx * sizeof(sarbp_c32));
    const unsigned char *p = (const unsigned char *)rows;
    for (size_t done = 0; done < n;) {
        const size_t m = n - done < piece ? n - done : piece;
        if (image_write_at(fd, p + done, m, off + (long long)done)) return -1;
#ifdef SYNC_FILE_RANGE_WRITE
        (void)sync_file_range(fd, (off_t)(off + (long long)done), (off_t)m,
                              SYNC_FILE_RANGE_WRITE); /* starts it, waits for nothing */
#endif
        done += m;
    }
    return 0;
}

static void swap4(unsigned char *p, size_t nbytes)
{
    for (size_t i = 0; i + 4 <= nbytes; i += 4) {
        unsigned char t = p[i];
        p[i] = p[i + 3];
        p[i + 3] = t;
        t = p[i + 1];
        p[i + 1] = p[i + 2];
        p[i + 2] = t;
    }
}

size_t image_npy_header(size_t ny, size_t nx, unsigned char head[IMAGE_NPY_HEADER_MAX])
{
    /* Version 1.0 header: magic, 2-byte length, a Python dict padded with
     * spaces and ended by '\n' so that the data start at a multiple of 64.
     * Two 20-digit sizes make a dict of 100 characters: 128 bytes in all. */
    char dict[IMAGE_NPY_HEADER_MAX - 10];
    const int dl = snprintf(dict, sizeof dict, "{'descr': '<c8', 'fortran_order': False, 'shape': "
                            "(%zu, %zu), }", ny, nx);
    const size_t padded = (10 + (size_t)dl + 1 + 63) / 64 * 64, hlen = padded - 10;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)dl);
    memset(head + 10 + dl, ' ', padded - 10 - (size_t)dl - 1);
    head[padded - 1] = '\n';
    return padded;
}

static sarbp_status npy_to(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                           double db_range, const sarbp_image_context *ctx)
{
    (void)db_range;
    (void)ctx;
    unsigned char head[IMAGE_NPY_HEADER_MAX];
    const size_t padded = image_npy_header(img->grid.ny, img->grid.nx, head);
    if (image_host_little_endian()) { /* the pixels as they lie */
        const int fd = sarbp_tempfile_fd(t);
        if (image_write_at(fd, head, padded, 0) ||
            image_npy_write_rows(fd, padded, img->grid.nx, 0, img->grid.ny, img->data))
            return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        return SARBP_OK;
    }
    FILE *f = sarbp_tempfile_fdopen(t);
    if (!f) return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    int ok = fwrite(head, 1, padded, f) == padded;
    const size_t n = img->grid.nx * img->grid.ny;
    enum { CHUNK = 4096 };
    sarbp_c32 buf[CHUNK];
    for (size_t i = 0; ok && i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        memcpy(buf, img->data + i, m * sizeof *buf);
        swap4((unsigned char *)buf, m * sizeof *buf);
        ok = fwrite(buf, sizeof *buf, m, f) == m;
    }
    return close_stream(f, ok, path);
}

/* ---- PNG ------------------------------------------------------------------ */

struct png_err {
    char msg[200];
};

static void png_err_fn(png_structp png, png_const_charp msg)
{
    struct png_err *e = png_get_error_ptr(png);
    snprintf(e->msg, sizeof e->msg, "%s", msg ? msg : "libpng error");
    png_longjmp(png, 1);
}

static void png_warn_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg; /* the library never prints */
}

sarbp_status png8_check_size(const char *path, size_t w, size_t h, int channels)
{
    if (w < 1 || h < 1 || w > 0x7fffffff / 4 || h > 0x7fffffff || (channels != 1 && channels != 3))
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': %zu x %zu is not a valid PNG size",
                           path, w, h);
    /* libpng refuses to write (and by default to read) wider or taller */
    if (w > PNG_USER_WIDTH_MAX || h > PNG_USER_HEIGHT_MAX)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': a PNG side is at most %u pixels "
                           "(libpng's limit), not %zu x %zu", path,
                           (unsigned)(PNG_USER_WIDTH_MAX < PNG_USER_HEIGHT_MAX ? PNG_USER_WIDTH_MAX
                                                                              : PNG_USER_HEIGHT_MAX),
                           w, h);
    return SARBP_OK;
}

static sarbp_status png8_to(sarbp_tempfile *t, const char *path, const unsigned char *pix,
                            size_t w, size_t h, int channels)
{
    FILE *f = sarbp_tempfile_fdopen(t);
    if (!f) return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));

    struct png_err err = {""};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, png_err_fn, png_warn_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return sarbp_error(SARBP_ERR_NOMEM, "cannot write '%s': out of memory in libpng", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return sarbp_error(SARBP_ERR_PNG, "cannot write '%s': %s", path, err.msg);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (size_t y = 0; y < h; y++) png_write_row(png, pix + y * w * (size_t)channels);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);

    return close_stream(f, 1, path);
}

/* ---- the dB display -------------------------------------------------------- */

/* |I|^2 of every pixel into bins of its IEEE double bit pattern: the 11
 * exponent bits and the top HIST_MANT mantissa bits of a positive double
 * are monotonic in its value, so bin k holds [lo(k), lo(k + 1)) with
 * lo(k + 1) / lo(k) <= 1 + 2^-HIST_MANT (0.067 dB of power): a percentile
 * in one pass, with no log10 per pixel and no sort. */
#define HIST_MANT 6
#define HIST_SHIFT (52 - HIST_MANT)
#define HIST_BINS ((size_t)1 << (11 + HIST_MANT))

static size_t hist_bin(double p2)
{
    uint64_t u;
    memcpy(&u, &p2, sizeof u);
    return (size_t)(u >> HIST_SHIFT);
}

static double hist_edge(size_t k) /* the smallest |I|^2 of bin k */
{
    const uint64_t u = (uint64_t)k << HIST_SHIFT;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The bin holding the value of rank r (0-based) among the counted ones. */
static size_t hist_rank(const size_t *h, size_t r)
{
    size_t cum = 0;
    for (size_t k = 0; k < HIST_BINS; k++) {
        cum += h[k];
        if (cum > r) return k;
    }
    return HIST_BINS - 1;
}

sarbp_status sarbp_image_display_choose(const sarbp_image *img, double db_range,
                                        sarbp_image_display *out)
{
    if (!img || !img->data || !out)
        return sarbp_error(SARBP_ERR_INVALID, "no image to choose a dB display range for");
    const int automatic = db_range == SARBP_DB_RANGE_AUTO;
    if (!automatic && !(db_range > 0 && isfinite(db_range)))
        return sarbp_error(SARBP_ERR_INVALID, "dB range %g is not positive", db_range);
    const size_t n = img->grid.nx * img->grid.ny;
    size_t *h = automatic ? calloc(HIST_BINS, sizeof *h) : NULL;
    if (automatic && !h) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a histogram");
    double peak2 = 0;
    size_t counted = 0;
    for (size_t i = 0; i < n; i++) {
        const double p2 = (double)img->data[i].re * img->data[i].re +
                          (double)img->data[i].im * img->data[i].im;
        if (!isfinite(p2) || !(p2 > 0)) continue;
        if (p2 > peak2) peak2 = p2;
        if (h) {
            h[hist_bin(p2)]++;
            counted++;
        }
    }
    *out = (sarbp_image_display){-db_range, 0, peak2 > 0 ? 10 * log10(peak2) : -INFINITY, 0};
    if (!automatic) return SARBP_OK;
    out->automatic = 1;
    out->floor_db = -50;
    if (counted > 0) {
        /* the floor at the lower edge of its bin and the top at the upper
         * edge of its: a bin's width errs towards fewer black and fewer
         * saturated pixels */
        const double last = (double)(counted - 1);
        const size_t kf = hist_rank(h, (size_t)(SARBP_DISPLAY_FLOOR_PCT / 100 * last));
        const size_t kt = hist_rank(h, (size_t)(SARBP_DISPLAY_TOP_PCT / 100 * last + 0.5));
        double top = 10 * log10(hist_edge(kt + 1) / peak2);
        if (!(top <= 0)) top = 0; /* the peak's own bin (or past the last) */
        double floor = 10 * log10(hist_edge(kf) / peak2);
        if (!(floor <= top - SARBP_DISPLAY_MIN_DB)) floor = top - SARBP_DISPLAY_MIN_DB;
        out->floor_db = floor;
        out->top_db = top;
    }
    free(h);
    return SARBP_OK;
}

sarbp_status image_db8(const sarbp_image *img, const sarbp_image_display *d, unsigned char **out)
{
    const size_t nx = img->grid.nx, ny = img->grid.ny, n = nx * ny;
    double peak2 = 0;
    for (size_t i = 0; i < n; i++) {
        double p2 = (double)img->data[i].re * img->data[i].re +
                    (double)img->data[i].im * img->data[i].im;
        if (isfinite(p2) && p2 > peak2) peak2 = p2;
    }
    if (!(d->top_db > d->floor_db))
        return sarbp_error(SARBP_ERR_INVALID, "dB display range %g to %g dB is empty", d->floor_db,
                           d->top_db);
    unsigned char *pix = malloc(n);
    if (!pix) return sarbp_error(SARBP_ERR_NOMEM, "out of memory (%zu x %zu)", nx, ny);
    /* 255 (20 log10(|I| / peak) - floor) / (top - floor), clipped to
     * [0, 255]; row 0 is the northernmost image row (iy = ny - 1). A top
     * below the peak saturates the brightest pixels: they are 254 and the
     * peak alone 255, so the brightest pixel still marks the peak. */
    const double scale = 255.0 / (d->top_db - d->floor_db);
    const int mark_peak = d->top_db < 0;
    for (size_t row = 0; row < ny; row++) {
        const sarbp_c32 *src = img->data + (ny - 1 - row) * nx;
        unsigned char *dst = pix + row * nx;
        for (size_t ix = 0; ix < nx; ix++) {
            double p2 = (double)src[ix].re * src[ix].re + (double)src[ix].im * src[ix].im;
            double v = 0;
            if (peak2 > 0 && p2 > 0 && isfinite(p2)) {
                v = scale * (10.0 * log10(p2 / peak2) - d->floor_db);
                v = v < 0 ? 0 : v > 255 ? 255 : v;
                if (mark_peak && v >= 254.5) v = p2 == peak2 ? 255 : 254;
            }
            dst[ix] = (unsigned char)lround(v);
        }
    }
    *out = pix;
    return SARBP_OK;
}

static sarbp_status png_to(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                          double db_range, const sarbp_image_context *ctx)
{
    (void)db_range; /* chosen once for every output: ctx->display */
    const size_t nx = img->grid.nx, ny = img->grid.ny;
    unsigned char *pix;
    sarbp_status st = png8_check_size(path, nx, ny, 1);
    if (st) return st;
    if ((st = image_db8(img, ctx->display, &pix)))
        return sarbp_error(st, "cannot write '%s': %s", path, sarbp_error_detail());
    st = png8_to(t, path, pix, nx, ny, 1);
    free(pix);
    return st;
}

struct membuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
};

static void mem_write_fn(png_structp png, png_bytep data, png_size_t len)
{
    struct membuf *m = png_get_io_ptr(png);
    if (m->oom) return;
    if (m->n + len > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < m->n + len) cap *= 2;
        unsigned char *q = realloc(m->p, cap);
        if (!q) {
            m->oom = 1;
            return;
        }
        m->p = q;
        m->cap = cap;
    }
    memcpy(m->p + m->n, data, len);
    m->n += len;
}

static void mem_flush_fn(png_structp png)
{
    (void)png;
}

sarbp_status png8_to_memory(const unsigned char *pix, size_t w, size_t h, unsigned char **out,
                            size_t *n)
{
    *out = NULL;
    *n = 0;
    SARBP_TRY(png8_check_size("(memory)", w, h, 1));
    struct png_err err = {""};
    struct membuf m = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, png_err_fn, png_warn_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory in libpng");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(m.p);
        return sarbp_error(SARBP_ERR_PNG, "libpng: %s", err.msg);
    }
    png_set_write_fn(png, &m, mem_write_fn, mem_flush_fn);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (size_t y = 0; y < h; y++) png_write_row(png, pix + y * w);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (m.oom) {
        free(m.p);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a PNG of %zu x %zu", w, h);
    }
    *out = m.p;
    *n = m.n;
    return SARBP_OK;
}

/* PNG's limits, checked before any file exists (size only: the pixels are
 * always representable) */
static sarbp_status png_check(const char *path, const sarbp_image *img,
                              const sarbp_image_context *ctx)
{
    (void)ctx;
    return png8_check_size(path, img->grid.nx, img->grid.ny, 1);
}

/* ---- the output formats ------------------------------------------------------ */

#define W_DB 0x1u  /* an 8-bit dB quick look: needs a positive dB range */
#define W_GEO 0x2u /* geolocated: needs the scene reference (sarbp_image_format_is_geo) */

/* One row per image format: a new format is its writer (a file such as
 * kmz_write.c, declared in geo_write.h), a SARBP_IMG_* value (sarbp/image.h)
 * and one row here. The messages and sarbp_image_format_from_name read the
 * rows. */
struct image_writer {
    sarbp_image_format fmt;
    const char *ext[4]; /* names ending so, case-insensitive; NULL after the last; the
                           first one in messages */
    unsigned flags;     /* W_* */
    /* what can be checked before any file exists; NULL: nothing beyond the image */
    sarbp_status (*check)(const char *path, const sarbp_image *img, const sarbp_image_context *ctx);
    sarbp_status (*write)(sarbp_tempfile *t, const char *path, const sarbp_image *img,
                          double db_range, const sarbp_image_context *ctx);
};

static const struct image_writer writers[] = {
    {SARBP_IMG_H5, {".h5", ".hdf5"}, 0, NULL, h5_to},
    {SARBP_IMG_NPY, {".npy"}, 0, NULL, npy_to},
    {SARBP_IMG_PNG, {".png"}, W_DB, png_check, png_to},
    {SARBP_IMG_SICD, {".nitf", ".ntf", ".sicd"}, W_GEO, sicd_check, sicd_to},
    {SARBP_IMG_GEOTIFF, {".tif", ".tiff"}, W_DB | W_GEO, geotiff_check, geotiff_to},
    {SARBP_IMG_KMZ, {".kmz"}, W_DB | W_GEO, kmz_check, kmz_to},
};
#define NWRITERS (sizeof writers / sizeof writers[0])

static const struct image_writer *writer_of(sarbp_image_format f)
{
    for (size_t i = 0; i < NWRITERS; i++)
        if (writers[i].fmt == f) return &writers[i];
    return NULL;
}

sarbp_image_format sarbp_image_format_from_name(const char *path)
{
    if (!path) return SARBP_IMG_UNKNOWN;
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot) return SARBP_IMG_UNKNOWN;
    for (size_t i = 0; i < NWRITERS; i++)
        for (size_t k = 0; k < 4 && writers[i].ext[k]; k++)
            if (!strcasecmp(dot, writers[i].ext[k])) return writers[i].fmt;
    return SARBP_IMG_UNKNOWN;
}

int sarbp_image_format_is_geo(sarbp_image_format f)
{
    const struct image_writer *w = writer_of(f);
    return w && (w->flags & W_GEO);
}

/* ".h5, .npy, .png, .nitf, .tif or .kmz": each row's first name ending */
void sarbp_image_format_list(char *buf, size_t size)
{
    if (size == 0) return;
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NWRITERS && len < size; i++) {
        const int w = snprintf(buf + len, size - len, "%s%s",
                               i == 0 ? "" : i + 1 == NWRITERS ? " or " : ", ", writers[i].ext[0]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* ---- all formats, all or nothing ----------------------------------------- */

sarbp_status image_check_outputs(const char *const *paths, const sarbp_image_format *fmt,
                                 size_t n, const sarbp_image *img, double db_range,
                                 const sarbp_image_context *ctx)
{
    if (n == 0 || !paths) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    for (size_t i = 0; i < n; i++) {
        if (!paths[i] || !*paths[i]) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
        const struct image_writer *w =
            writer_of(fmt ? fmt[i] : sarbp_image_format_from_name(paths[i]));
        if (!w) {
            char exts[128];
            sarbp_image_format_list(exts, sizeof exts);
            return sarbp_error(SARBP_ERR_INVALID, "cannot tell the image format of '%s' from its "
                               "name (use %s)", paths[i], exts);
        }
        if ((w->flags & W_DB) && db_range != SARBP_DB_RANGE_AUTO &&
            (!(db_range > 0) || !isfinite(db_range)))
            return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': dB range %g is not positive",
                               paths[i], db_range);
    }
    if (!img) return sarbp_error(SARBP_ERR_INVALID, "no image to write to '%s'", paths[0]);
    SARBP_TRY(sarbp_grid_validate(&img->grid));
    for (size_t i = 0; i < n; i++) {
        const struct image_writer *w =
            writer_of(fmt ? fmt[i] : sarbp_image_format_from_name(paths[i]));
        if (w->check) SARBP_TRY(w->check(paths[i], img, ctx));
    }
    for (size_t i = 0; i < n; i++) SARBP_TRY(sarbp_output_check_path(paths[i]));
    return SARBP_OK;
}

/* Checks everything that can be checked before a file exists (the image
 * and its pixels, then each output as image_check_outputs), writes every
 * output to its own temporary and renames them all only when all are
 * complete. */
static sarbp_status write_files(const char *const *paths, const sarbp_image_format *fmt, size_t n,
                                const sarbp_image *img, double db_range,
                                const sarbp_image_context *ctx)
{
    if (n == 0) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    for (size_t i = 0; i < n; i++)
        if (!paths[i] || !*paths[i]) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    SARBP_TRY(check_image(img, paths[0]));
    SARBP_TRY(image_check_outputs(paths, fmt, n, img, db_range, ctx));
    /* one dB display for every 8-bit output (.png, .kmz, a dB .tif), chosen
     * before any file exists (a pass over the pixels: none without one);
     * the writers see it in their context, the caller in ctx->display. A
     * non-positive db_range (given to .h5 or .npy only, which do not read
     * it) is the default 50 dB below the peak. */
    int quick_look = 0;
    for (size_t i = 0; i < n; i++)
        quick_look |= fmt[i] == SARBP_IMG_PNG || fmt[i] == SARBP_IMG_KMZ ||
                      (fmt[i] == SARBP_IMG_GEOTIFF && !(ctx && ctx->tiff_complex));
    sarbp_image_display disp = {0};
    const int db_ok = db_range == SARBP_DB_RANGE_AUTO || (db_range > 0 && isfinite(db_range));
    if (quick_look) SARBP_TRY(sarbp_image_display_choose(img, db_ok ? db_range : 50, &disp));
    sarbp_image_context wctx = {0};
    if (ctx) wctx = *ctx;
    wctx.display = &disp;
    sarbp_tempfile **t = calloc(n, sizeof *t);
    if (!t) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = SARBP_OK;
    for (size_t i = 0; i < n && st == SARBP_OK; i++) {
        if (ctx && ctx->npy && ctx->npy[i]) { /* written as the image formed */
            st = fmt[i] == SARBP_IMG_NPY ? npy_stream_take(ctx->npy[i], paths[i], &img->grid, &t[i])
                                         : sarbp_error(SARBP_ERR_INVALID, "'%s' is not a .npy output",
                                                       paths[i]);
            continue;
        }
        st = sarbp_tempfile_create(paths[i], &t[i]);
        if (st == SARBP_OK) st = writer_of(fmt[i])->write(t[i], paths[i], img, db_range, &wctx);
    }
    if (st == SARBP_OK && quick_look && ctx && ctx->display) *ctx->display = disp;
    if (st == SARBP_OK) {
        st = sarbp_tempfile_commit_all(t, n);
    } else {
        for (size_t i = 0; i < n; i++) sarbp_tempfile_delete(t[i]);
    }
    free(t);
    return st;
}

sarbp_status sarbp_image_write_all(const char *const *paths, size_t n, const sarbp_image *img,
                                   double db_range)
{
    return sarbp_image_write_all_ctx(paths, n, img, db_range, NULL);
}

sarbp_status sarbp_image_write_all_ctx(const char *const *paths, size_t n, const sarbp_image *img,
                                       double db_range, const sarbp_image_context *ctx)
{
    if (!paths) n = 0;
    sarbp_image_format *fmt = malloc((n ? n : 1) * sizeof *fmt);
    if (!fmt) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) fmt[i] = sarbp_image_format_from_name(paths[i]);
    sarbp_status st = write_files(paths, fmt, n, img, db_range, ctx);
    free(fmt);
    return st;
}

sarbp_status sarbp_image_write(const char *path, const sarbp_image *img, double db_range)
{
    return sarbp_image_write_all(&path, 1, img, db_range);
}

sarbp_status sarbp_image_write_h5(const char *path, const sarbp_image *img)
{
    const sarbp_image_format f = SARBP_IMG_H5;
    return write_files(&path, &f, 1, img, 0, NULL);
}

sarbp_status sarbp_image_write_npy(const char *path, const sarbp_image *img)
{
    const sarbp_image_format f = SARBP_IMG_NPY;
    return write_files(&path, &f, 1, img, 0, NULL);
}

sarbp_status sarbp_image_write_png(const char *path, const sarbp_image *img, double db_range)
{
    const sarbp_image_format f = SARBP_IMG_PNG;
    return write_files(&path, &f, 1, img, db_range, NULL);
}

sarbp_status sarbp_png_write8(const char *path, const unsigned char *pix, size_t w, size_t h,
                              int channels)
{
    if (!path || !*path) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    SARBP_TRY(png8_check_size(path, w, h, channels));
    sarbp_tempfile *t;
    SARBP_TRY(sarbp_tempfile_create(path, &t));
    sarbp_status st = png8_to(t, path, pix, w, h, channels);
    if (st != SARBP_OK) {
        sarbp_tempfile_delete(t);
        return st;
    }
    return sarbp_tempfile_commit(t);
}
