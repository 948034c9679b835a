/* phd_read_h5.c - HDF5 inputs: sarbp's own layout, and Gotcha field names.
 *
 * sarbp's own layout (written by phd_write_h5.c, described there) is known by
 * its root attribute "sarbp_format". Any other HDF5 file is read as Gotcha
 * fields (fp, freq, x, y, z, r0; optional th, phi, af/r_correct,
 * af/ph_correct) at the root or in group "data" - which covers MATLAB v7.3
 * files and files written with h5py. fp is a compound {r, i} or {real, imag}
 * of any float or integer members, stored [pulse][sample] (MATLAB v7.3 and
 * h5py order) or, when the shape says so unambiguously, [sample][pulse].
 * What the Gotcha fields must hold is gotcha_schema.c's; this file finds
 * and reads them.
 *
 * Opening loads the metadata and closes the file; read() opens it again and
 * reads a hyperslab of the samples, converted to float by HDF5. Nothing is
 * allocated for or read from a dataset before h5_check_dataset has held its
 * declared size against the file and h5_check_number_type its type against
 * what HDF5 will convert. Checks that apply to every format (NaN,
 * validation) are phd_io.c's. Also home of the HDF5 error helpers both HDF5
 * modules use. */
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/gotcha_schema.h"
#include "io/h5_check.h"
#include "io/input_file.h"
#include "io/phd_io_internal.h"
#include "io/safe_size.h"
#include "sarbp/phd_io.h"

/* ---- HDF5 errors ---------------------------------------------------------- */

void phd_h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc) snprintf(data, 256, "%s", e->desc);
    return 0;
}

sarbp_status phd_h5_error(const char *path, const char *call, const char *file, int line)
{
    char desc[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, desc);
    H5Eclear2(H5E_DEFAULT);
    const char *fn = strstr(call, "H5");
    if (!fn) fn = call;
    int fnlen = (int)strcspn(fn, "( ");
    const char *base = strrchr(file, '/');
    return sarbp_error(SARBP_ERR_HDF5, "'%s': %.*s failed (%s:%d)%s%s", path, fnlen, fn,
                       base ? base + 1 : file, line, desc[0] ? ": " : "", desc);
}

/* ---- small readers -------------------------------------------------------- */

static void close_id(hid_t id, herr_t (*close)(hid_t))
{
    if (id >= 0) close(id);
}

/* 1 when loc holds a link named name (a path; each component is checked). */
static int has_link(hid_t loc, const char *name)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    for (char *slash = buf;; slash++) {
        slash = strchr(slash, '/');
        if (slash) *slash = '\0';
        htri_t r = H5Lexists(loc, buf, H5P_DEFAULT);
        if (r <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return 0;
        }
        if (!slash) return 1;
        *slash = '/';
    }
}

static void shape_str(const hsize_t *dims, int rank, char *buf, size_t n)
{
    if (rank == 0) {
        snprintf(buf, n, "scalar");
        return;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int r = 0; r < rank && used < n; r++)
        used += (size_t)snprintf(buf + used, n - used, "%s%llu", r ? " x " : "",
                                 (unsigned long long)dims[r]);
}

/* Opens dataset name at loc and reports its shape; FORMAT when missing or
 * when the file cannot hold what it declares (h5_check_dataset). */
static sarbp_status open_dataset(const char *path, hid_t loc, const char *name, hid_t *d,
                                 int *rank, hsize_t dims[H5S_MAX_RANK])
{
    size_t count;
    *d = -1;
    if (!has_link(loc, name))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': field '%s' is missing", path, name);
    H5O_info_t info;
    sarbp_status st;
    if ((st = PHD_H5(path, H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT))))
        return st;
    if (info.type != H5O_TYPE_DATASET)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': field '%s' is not a dataset", path, name);
    hid_t sp = -1;
    if ((st = PHD_H5(path, *d = H5Dopen2(loc, name, H5P_DEFAULT)))) goto fail;
    if ((st = PHD_H5(path, sp = H5Dget_space(*d)))) goto fail;
    if ((st = PHD_H5(path, *rank = H5Sget_simple_extent_ndims(sp)))) goto fail;
    if ((st = PHD_H5(path, H5Sget_simple_extent_dims(sp, dims, NULL)))) goto fail;
    if ((st = h5_check_dataset(path, name, *d, &count))) goto fail;
    H5Sclose(sp);
    return SARBP_OK;
fail:
    close_id(sp, H5Sclose);
    close_id(*d, H5Dclose);
    *d = -1;
    return st;
}

/* A real-valued vector of at most max values: shape (n), (1, n), (n, 1) or
 * a scalar; any float or integer type, converted to double. *out is
 * malloc'd (caller frees). */
static sarbp_status read_vector(const char *path, hid_t loc, const char *name, size_t max,
                                double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    hid_t d, t = -1;
    int rank = 0;
    hsize_t dims[H5S_MAX_RANK];
    sarbp_status st = open_dataset(path, loc, name, &d, &rank, dims);
    if (st) return st;
    size_t count = 1, bytes; /* h5_check_dataset (open_dataset) ruled out overflow */
    int long_dims = 0;
    for (int r = 0; r < rank; r++) {
        count *= (size_t)dims[r];
        if (dims[r] != 1) long_dims++;
    }
    H5T_class_t cls;
    if (count > max) {
        st = sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' holds %zu values; sarbp reads at "
                         "most %zu", path, name, count, max);
        goto done;
    }
    if (rank > 2 || long_dims > 1) {
        char shape[96];
        shape_str(dims, rank, shape, sizeof shape);
        st = sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' has shape %s; expected a vector",
                         path, name, shape);
        goto done;
    }
    if ((st = PHD_H5(path, t = H5Dget_type(d)))) goto done;
    if ((st = PHD_H5(path, cls = H5Tget_class(t)))) goto done;
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': field '%s' is not an array of real numbers",
                         path, name);
        goto done;
    }
    if ((st = h5_check_number_type(path, name, t))) goto done;
    if (!size_mul(count ? count : 1, sizeof(double), &bytes) || !(*out = malloc(bytes))) {
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (count > 0 &&
        (st = PHD_H5(path, H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out)))) {
        free(*out);
        *out = NULL;
        goto done;
    }
    *n = count;
done:
    close_id(t, H5Tclose);
    H5Dclose(d);
    return st;
}

/* An optional per-pulse vector: NULL when absent, else npulses values. */
static sarbp_status read_optional(const char *path, hid_t loc, const char *name, size_t npulses,
                                  const char *ref, double **out)
{
    *out = NULL;
    if (!has_link(loc, name)) return SARBP_OK;
    size_t n;
    SARBP_TRY(read_vector(path, loc, name, SARBP_PHD_MAX_PULSES, out, &n));
    sarbp_status st = phd_count_mismatch(path, name, n, ref, npulses);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

static sarbp_status open_attr(const char *path, hid_t obj, const char *name, hid_t *a,
                              H5T_class_t *cls)
{
    *a = -1;
    htri_t e = H5Aexists(obj, name);
    if (e < 0) return phd_h5_error(path, "H5Aexists", __FILE__, __LINE__);
    if (!e) return sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute '%s' is missing", path, name);
    sarbp_status st;
    hid_t t = -1, sp = -1;
    hssize_t npoints = 0;
    if ((st = PHD_H5(path, *a = H5Aopen(obj, name, H5P_DEFAULT)))) return st;
    if ((st = PHD_H5(path, t = H5Aget_type(*a)))) goto fail;
    if ((st = PHD_H5(path, *cls = H5Tget_class(t)))) goto fail;
    if ((st = PHD_H5(path, sp = H5Aget_space(*a)))) goto fail;
    if ((st = PHD_H5(path, npoints = H5Sget_simple_extent_npoints(sp)))) goto fail;
    if (npoints != 1) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute '%s' is not a single value", path,
                         name);
        goto fail;
    }
    H5Tclose(t);
    H5Sclose(sp);
    return SARBP_OK;
fail:
    close_id(t, H5Tclose);
    close_id(sp, H5Sclose);
    close_id(*a, H5Aclose);
    *a = -1;
    return st;
}

/* Longest fixed-length string attribute sarbp reads (an attribute lives in
 * an object header of at most 64 KiB). */
#define PHD_MAX_STR_ATTR 65536

/* A string attribute (fixed or variable length) into buf[n], truncated. */
static sarbp_status read_str_attr(const char *path, hid_t obj, const char *name, char *buf,
                                  size_t n)
{
    hid_t a, t = -1, mt = -1;
    H5T_class_t cls;
    SARBP_TRY(open_attr(path, obj, name, &a, &cls));
    sarbp_status st = SARBP_OK;
    htri_t var = 0;
    if (cls != H5T_STRING) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute '%s' is not a string", path, name);
        goto done;
    }
    if ((st = PHD_H5(path, t = H5Aget_type(a)))) goto done;
    if ((st = PHD_H5(path, var = H5Tis_variable_str(t)))) goto done;
    if ((st = PHD_H5(path, mt = H5Tcopy(H5T_C_S1)))) goto done;
    /* HDF5 converts no string between character sets: read UTF-8 (h5py's
     * str) as UTF-8, ASCII as ASCII */
    H5T_cset_t cset;
    if ((st = PHD_H5(path, cset = H5Tget_cset(t)))) goto done;
    if ((st = PHD_H5(path, H5Tset_cset(mt, cset)))) goto done;
    if (var) {
        char *s = NULL;
        if ((st = PHD_H5(path, H5Tset_size(mt, H5T_VARIABLE)))) goto done;
        if ((st = PHD_H5(path, H5Aread(a, mt, &s)))) goto done;
        snprintf(buf, n, "%s", s ? s : "");
        H5free_memory(s);
    } else {
        size_t size = H5Tget_size(t);
        if (size == 0) {
            st = phd_h5_error(path, "H5Tget_size", __FILE__, __LINE__);
            goto done;
        }
        if (size > PHD_MAX_STR_ATTR) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute '%s' declares a string of %zu "
                             "bytes; sarbp reads at most %d", path, name, size, PHD_MAX_STR_ATTR);
            goto done;
        }
        char *tmp = malloc(size + 1);
        if (!tmp) {
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
            goto done;
        }
        if ((st = PHD_H5(path, H5Tset_size(mt, size + 1))) ||
            (st = PHD_H5(path, H5Tset_strpad(mt, H5T_STR_NULLTERM))) ||
            (st = PHD_H5(path, H5Aread(a, mt, tmp)))) {
            free(tmp);
            goto done;
        }
        tmp[size] = '\0';
        snprintf(buf, n, "%s", tmp);
        free(tmp);
    }
done:
    close_id(mt, H5Tclose);
    close_id(t, H5Tclose);
    H5Aclose(a);
    return st;
}

/* A numeric scalar attribute, converted to double. */
static sarbp_status read_num_attr(const char *path, hid_t obj, const char *name, double *v)
{
    hid_t a;
    H5T_class_t cls;
    SARBP_TRY(open_attr(path, obj, name, &a, &cls));
    sarbp_status st = SARBP_OK;
    hid_t t = -1;
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute '%s' is not a number", path, name);
    else if ((st = PHD_H5(path, t = H5Aget_type(a))) == SARBP_OK &&
             (st = h5_check_number_type(path, name, t)) == SARBP_OK)
        st = PHD_H5(path, H5Aread(a, H5T_NATIVE_DOUBLE, v));
    close_id(t, H5Tclose);
    H5Aclose(a);
    return st;
}

/* ---- samples -------------------------------------------------------------- */

struct h5_impl {
    char dset_name[32];  /* from the root: "samples", "fp" or "data/fp" */
    char re[8], im[8];   /* compound member names */
    int transposed;      /* stored [sample][pulse] */
    hsize_t dims[2];     /* as stored */
    hid_t file, dset, memtype; /* -1 while released */
};

/* fp must be a compound of two numbers named {r, i} or {real, imag}. */
static sarbp_status complex_members(const char *path, const char *name, hid_t d,
                                    struct h5_impl *h)
{
    hid_t t = -1;
    sarbp_status st;
    H5T_class_t cls;
    int nm = 0, ok = 0;
    if ((st = PHD_H5(path, t = H5Dget_type(d)))) return st;
    if ((st = PHD_H5(path, cls = H5Tget_class(t)))) goto done;
    if (cls == H5T_COMPOUND && (st = PHD_H5(path, nm = H5Tget_nmembers(t)))) goto done;
    if (cls == H5T_COMPOUND && nm == 2) {
        static const char *const pairs[][2] = {{"r", "i"}, {"real", "imag"}};
        for (size_t p = 0; p < 2 && !ok; p++) {
            int ire = H5Tget_member_index(t, pairs[p][0]);
            int iim = H5Tget_member_index(t, pairs[p][1]);
            H5Eclear2(H5E_DEFAULT);
            if (ire < 0 || iim < 0) continue;
            H5T_class_t cre = H5Tget_member_class(t, (unsigned)ire);
            H5T_class_t cim = H5Tget_member_class(t, (unsigned)iim);
            if ((cre == H5T_FLOAT || cre == H5T_INTEGER) && (cim == H5T_FLOAT || cim == H5T_INTEGER)) {
                /* HDF5 converts members at their declared offsets: check them first */
                if ((st = h5_check_complex_type(path, name, t, (unsigned)ire, (unsigned)iim)))
                    goto done;
                snprintf(h->re, sizeof h->re, "%s", pairs[p][0]);
                snprintf(h->im, sizeof h->im, "%s", pairs[p][1]);
                ok = 1;
            }
        }
    }
    if (!ok)
        st = sarbp_error(SARBP_ERR_FORMAT,
                         "'%s': field '%s' is not complex (a compound {r, i} or {real, imag})",
                         path, name);
done:
    H5Tclose(t);
    return st;
}

static void h5_release(struct phd_file *f)
{
    struct h5_impl *h = f->impl;
    if (!h) return;
    close_id(h->dset, H5Dclose);
    close_id(h->memtype, H5Tclose);
    close_id(h->file, H5Fclose);
    h->dset = h->memtype = h->file = -1;
}

static void h5_destroy(struct phd_file *f)
{
    free(f->impl);
    f->impl = NULL;
}

static sarbp_status h5_reopen(struct phd_file *f)
{
    struct h5_impl *h = f->impl;
    const char *path = f->path;
    sarbp_status st;
    int rank = 0;
    hsize_t dims[H5S_MAX_RANK];
    phd_h5_quiet();
    if ((st = input_check(path))) goto fail; /* HDF5 opens by name: never a named pipe */
    if ((st = PHD_H5(path, h->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)))) goto fail;
    if ((st = open_dataset(path, h->file, h->dset_name, &h->dset, &rank, dims))) goto fail;
    if (rank != 2 || dims[0] != h->dims[0] || dims[1] != h->dims[1]) {
        st = sarbp_error(SARBP_ERR_IO, "'%s' changed since it was opened", path);
        goto fail;
    }
    if ((st = PHD_H5(path, h->memtype = H5Tcreate(H5T_COMPOUND, sizeof(sarbp_c32))))) goto fail;
    if ((st = PHD_H5(path, H5Tinsert(h->memtype, h->re, offsetof(sarbp_c32, re), H5T_NATIVE_FLOAT))))
        goto fail;
    if ((st = PHD_H5(path, H5Tinsert(h->memtype, h->im, offsetof(sarbp_c32, im), H5T_NATIVE_FLOAT))))
        goto fail;
    return SARBP_OK;
fail:
    h5_release(f);
    return st;
}

static sarbp_status h5_read(struct phd_file *f, size_t p0, size_t np, sarbp_c32 *dst)
{
    struct h5_impl *h = f->impl;
    const char *path = f->path;
    if (h->file < 0) SARBP_TRY(h5_reopen(f));
    size_t k = f->meta->nsamples;
    hsize_t start[2], count[2];
    if (h->transposed) {
        start[0] = 0, start[1] = p0, count[0] = k, count[1] = np;
    } else {
        start[0] = p0, start[1] = 0, count[0] = np, count[1] = k;
    }
    sarbp_c32 *buf = dst;
    size_t bytes;
    if (h->transposed) {
        if (!size_mul3(np, k, sizeof *buf, &bytes) || !(buf = malloc(bytes)))
            return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    hid_t fs = -1, ms = -1;
    sarbp_status st;
    if ((st = PHD_H5(path, fs = H5Dget_space(h->dset)))) goto done;
    if ((st = PHD_H5(path, H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL))))
        goto done;
    if ((st = PHD_H5(path, ms = H5Screate_simple(2, count, NULL)))) goto done;
    if ((st = PHD_H5(path, H5Dread(h->dset, h->memtype, ms, fs, H5P_DEFAULT, buf)))) goto done;
    if (h->transposed)
        for (size_t p = 0; p < np; p++)
            for (size_t i = 0; i < k; i++) dst[p * k + i] = buf[i * np + p];
done:
    close_id(ms, H5Sclose);
    close_id(fs, H5Sclose);
    if (buf != dst) free(buf);
    return st;
}

static const struct phd_file_ops sarbp_ops = {"sarbp-phd", h5_read, h5_release, h5_destroy};
static const struct phd_file_ops gotcha_ops = {"Gotcha HDF5", h5_read, h5_release, h5_destroy};

/* ---- sarbp's own layout --------------------------------------------------- */

static sarbp_status open_own(const char *path, hid_t file, struct phd_file *f,
                             struct h5_impl *h)
{
    char s[64];
    double v;
    SARBP_TRY(read_str_attr(path, file, "sarbp_format", s, sizeof s));
    if (strcmp(s, SARBP_PHD_FORMAT_NAME))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute 'sarbp_format' is '%s', not '%s'",
                           path, s, SARBP_PHD_FORMAT_NAME);
    SARBP_TRY(read_num_attr(path, file, "sarbp_format_version", &v));
    /* range first: converting 1e300 or NaN to int is undefined */
    if (!(v >= 1 && v <= 1e6) || v != floor(v))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': sarbp-phd format version %g is not valid",
                           path, v);
    if (v > SARBP_PHD_FORMAT_VERSION)
        return sarbp_error(SARBP_ERR_FORMAT,
                           "'%s': sarbp-phd format version %d is newer than this sarbp reads "
                           "(%d); a newer sarbp is needed", path, (int)v, SARBP_PHD_FORMAT_VERSION);
    SARBP_TRY(read_str_attr(path, file, "domain", s, sizeof s));
    sarbp_domain domain;
    if (!strcmp(s, "freq")) domain = SARBP_DOMAIN_FREQ;
    else if (!strcmp(s, "chirp")) domain = SARBP_DOMAIN_CHIRP;
    else return sarbp_error(SARBP_ERR_FORMAT, "'%s': unknown domain '%s'", path, s);

    hid_t d;
    int rank = 0;
    hsize_t dims[H5S_MAX_RANK];
    SARBP_TRY(open_dataset(path, file, "samples", &d, &rank, dims));
    sarbp_status st = complex_members(path, "samples", d, h);
    H5Dclose(d);
    if (st) return st;
    if (rank != 2)
        return sarbp_error(SARBP_ERR_INVALID, "'%s': field 'samples' has rank %d, not 2", path,
                           rank);
    size_t np = (size_t)dims[0], k = (size_t)dims[1];
    if (np == 0) return sarbp_error(SARBP_ERR_INVALID, "'%s': no pulses", path);
    if (k == 0) return sarbp_error(SARBP_ERR_INVALID, "'%s': pulses have no samples", path);
    SARBP_TRY(phd_check_shape(path, "samples", np, k));
    snprintf(h->dset_name, sizeof h->dset_name, "samples");
    h->dims[0] = dims[0];
    h->dims[1] = dims[1];
    h->transposed = 0;

    sarbp_phd *m;
    SARBP_TRY(sarbp_phd_alloc(domain, np, k, 0, &m));
    double *vec = NULL;
    size_t n;
    /* pos [P][3] */
    if ((st = open_dataset(path, file, "pos", &d, &rank, dims))) goto fail;
    H5Dclose(d);
    if (rank != 2 || dims[0] != np || dims[1] != 3) {
        char shape[96];
        shape_str(dims, rank, shape, sizeof shape);
        st = sarbp_error(SARBP_ERR_INVALID, "'%s': field 'pos' has shape %s; expected %zu x 3",
                         path, shape, np);
        goto fail;
    }
    if ((st = PHD_H5(path, d = H5Dopen2(file, "pos", H5P_DEFAULT)))) goto fail;
    hid_t t = -1;
    if ((st = PHD_H5(path, t = H5Dget_type(d))) == SARBP_OK &&
        (st = h5_check_number_type(path, "pos", t)) == SARBP_OK)
        st = PHD_H5(path, H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m->pos));
    close_id(t, H5Tclose);
    H5Dclose(d);
    if (st) goto fail;

    struct { const char *name; double **dst; int required; } fields[] = {
        {"r0", &m->r0, 1},
        {"f0", &m->f0, domain == SARBP_DOMAIN_FREQ},
        {"df", &m->df, domain == SARBP_DOMAIN_FREQ},
        {"th", &m->th, 0},
        {"phi", &m->phi, 0},
        {"r_correct", &m->r_correct, 0},
        {"ph_correct", &m->ph_correct, 0},
    };
    for (size_t j = 0; j < sizeof fields / sizeof fields[0]; j++) {
        if (!fields[j].required && !has_link(file, fields[j].name)) continue;
        if ((st = read_vector(path, file, fields[j].name, SARBP_PHD_MAX_PULSES, &vec, &n))) goto fail;
        if ((st = phd_count_mismatch(path, fields[j].name, n, "samples", np))) goto fail;
        free(*fields[j].dst);
        *fields[j].dst = vec;
        vec = NULL;
    }
    if (domain == SARBP_DOMAIN_CHIRP) {
        struct { const char *name; double *dst; } scal[] = {
            {"fs", &m->fs}, {"chirp_rate", &m->chirp_rate}, {"pulse_len", &m->pulse_len},
            {"fc", &m->fc}, {"t0", &m->t0},
        };
        for (size_t j = 0; j < sizeof scal / sizeof scal[0]; j++)
            if ((st = read_num_attr(path, file, scal[j].name, scal[j].dst))) goto fail;
    }
    /* optional: "HH" (or "H:H") says the polarisation; anything else is refused */
    if (H5Aexists(file, "polarisation") > 0) {
        char pol[32], norm[8];
        if ((st = read_str_attr(path, file, "polarisation", pol, sizeof pol))) goto fail;
        if (sarbp_polarisation_parse(pol, norm, sizeof norm)) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': attribute 'polarisation' is '%s', not HH, "
                             "VV, HV or VH", path, pol);
            goto fail;
        }
        f->coll = calloc(1, sizeof *f->coll);
        if (!f->coll) {
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
            goto fail;
        }
        snprintf(f->coll->polarisation, sizeof f->coll->polarisation, "%s", norm);
    }
    f->meta = m;
    return SARBP_OK;
fail:
    free(vec);
    sarbp_phd_free(m);
    return st;
}

/* ---- Gotcha field names --------------------------------------------------- */

/* The fields at loc (the root or group "data"); gotcha_schema.c checks them. */
struct h5_gotcha {
    const char *path;
    hid_t loc;
    struct h5_impl *h; /* fp's member names; NULL to look only (has) */
};

static int gotcha_has(void *ctx, const char *name)
{
    const struct h5_gotcha *g = ctx;
    return has_link(g->loc, name);
}

static sarbp_status gotcha_vector(void *ctx, const char *name, size_t max, double **v, size_t *n)
{
    const struct h5_gotcha *g = ctx;
    return read_vector(g->path, g->loc, name, max, v, n);
}

/* A group's field is the link path "group/name", and is named so. */
static sarbp_status gotcha_optional(void *ctx, const char *group, const char *name, size_t np,
                                    double **out)
{
    const struct h5_gotcha *g = ctx;
    char link[64];
    snprintf(link, sizeof link, "%s%s%s", group ? group : "", group ? "/" : "", name);
    return read_optional(g->path, g->loc, link, np, "x", out);
}

/* fp is a compound {r, i} or {real, imag}; a single pulse may be stored as
 * a vector (h5py squeezes it) and is read as 1 x K. */
static sarbp_status gotcha_fp_shape(void *ctx, size_t np, struct gotcha_fp *fp)
{
    const struct h5_gotcha *g = ctx;
    hid_t d = -1;
    int rank = 0;
    hsize_t dims[H5S_MAX_RANK];
    sarbp_status st = open_dataset(g->path, g->loc, "fp", &d, &rank, dims);
    if (st == SARBP_OK) st = complex_members(g->path, "fp", d, g->h);
    close_id(d, H5Dclose);
    if (st) return st;
    if (rank == 1 && np == 1) { /* one pulse, squeezed */
        dims[1] = dims[0];
        dims[0] = 1;
        rank = 2;
    }
    fp->rank = rank;
    if (rank == 2) {
        fp->dims[0] = (size_t)dims[0];
        fp->dims[1] = (size_t)dims[1];
    }
    shape_str(dims, rank, fp->shape, sizeof fp->shape);
    return SARBP_OK;
}

static const struct gotcha_container gotcha_h5 = {
    GOTCHA_PULSES_BY_SAMPLES, gotcha_has, gotcha_vector, gotcha_optional, gotcha_fp_shape, NULL,
};

static int has_any_gotcha_field(const char *path, hid_t loc)
{
    struct h5_gotcha g = {path, loc, NULL};
    return gotcha_schema_found(&gotcha_h5, &g);
}

static sarbp_status open_gotcha(const char *path, hid_t loc, const char *prefix,
                                struct phd_file *f, struct h5_impl *h)
{
    struct h5_gotcha g = {path, loc, h};
    struct gotcha_fp fp;
    SARBP_TRY(gotcha_schema_read(path, &gotcha_h5, &g, &fp, &f->meta));
    h->transposed = fp.transposed;
    h->dims[0] = fp.dims[0];
    h->dims[1] = fp.dims[1];
    snprintf(h->dset_name, sizeof h->dset_name, "%s%sfp", prefix, *prefix ? "/" : "");
    return SARBP_OK;
}

/* ---- entry ---------------------------------------------------------------- */

sarbp_status phd_open_h5(const char *path, const sarbp_reader_options *o, struct phd_file *f)
{
    (void)o;
    phd_h5_quiet();
    struct h5_impl *h = calloc(1, sizeof *h);
    if (!h) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    h->file = h->dset = h->memtype = -1;
    hid_t file = -1, grp = -1;
    sarbp_status st;
    htri_t own = 0;
    if ((st = input_check(path))) goto done; /* HDF5 opens by name: never a named pipe */
    if ((st = PHD_H5(path, file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)))) goto done;
    if ((st = PHD_H5(path, own = H5Aexists(file, "sarbp_format")))) goto done;
    if (own) {
        st = open_own(path, file, f, h);
        if (st == SARBP_OK) f->ops = &sarbp_ops;
    } else if (has_link(file, "image") && has_link(file, "x") && has_link(file, "y") &&
               !has_link(file, "fp")) {
        /* a sarbp image (image, x, y): x and y are Gotcha field names too */
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' is a sarbp image, not a phase history", path);
    } else if (has_any_gotcha_field(path, file)) {
        st = open_gotcha(path, file, "", f, h);
        if (st == SARBP_OK) f->ops = &gotcha_ops;
    } else if (has_link(file, "data") &&
               (st = PHD_H5(path, grp = H5Gopen2(file, "data", H5P_DEFAULT))) == SARBP_OK &&
               has_any_gotcha_field(path, grp)) {
        st = open_gotcha(path, grp, "data", f, h);
        if (st == SARBP_OK) f->ops = &gotcha_ops;
    } else if (st == SARBP_OK) {
        st = sarbp_error(SARBP_ERR_FORMAT,
                         "'%s': HDF5 file holds no phase history (no 'sarbp_format' attribute, "
                         "no Gotcha fields fp, freq, x, y, z, r0 at the root or in group 'data')",
                         path);
    }
done:
    close_id(grp, H5Gclose);
    close_id(file, H5Fclose);
    if (st == SARBP_OK) {
        f->impl = h;
    } else {
        free(h);
        sarbp_phd_free(f->meta);
        f->meta = NULL;
        f->ops = NULL;
    }
    return st;
}
