/* phd_read_mat.c - Gotcha MATLAB v5 files (v6, v7 compressed too) through matio.
 *
 * A Gotcha file holds one struct `data` with fields fp (K x Np complex, one
 * column per pulse), freq (K), x, y, z, r0, th, phi (Np) and the optional
 * struct af with r_correct, ph_correct (Np). Any numeric MATLAB class is
 * accepted and converted (single and double in practice). fp stored Np x K is
 * accepted when the shape says so unambiguously. What the fields must hold
 * is gotcha_schema.c's; this file finds and reads them.
 *
 * Opening reads the struct's layout (Mat_VarReadInfo) and then only the small
 * fields; read() takes the columns of fp it is asked for with
 * Mat_VarReadDataLinear, so sample memory is the caller's block. (For a
 * compressed v7 file matio inflates the variable from its start for each
 * block: memory stays bounded, time grows with the file, which for Gotcha's
 * one-degree files is small.) MATLAB v7.3 files are HDF5 and are read by
 * phd_read_h5.c. matio's log messages are captured, never printed.
 *
 * matio believes every size a file declares, so mat_check_layout walks the
 * file against its length before matio opens it, struct fields are looked
 * up through a checked field table, and buffers are filled with NaN before
 * matio reads into them, so that a short read cannot pass as data. */
#include <limits.h>
#include <matio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/gotcha_schema.h"
#include "io/mat_check.h"
#include "io/input_file.h"
#include "io/phd_io_internal.h"
#include "io/safe_size.h"
#include "sarbp/phd_io.h"

struct mat_impl {
    int transposed;   /* fp stored Np x K */
    size_t dims[2];   /* fp as stored */
    mat_t *mat;       /* NULL while released */
    matvar_t *data;   /* the struct's layout (Mat_VarReadInfo) */
    matvar_t *fp;     /* borrowed from data */
};

static char mat_log_msg[512];

static void mat_log(int level, char *message)
{
    (void)level;
    snprintf(mat_log_msg, sizeof mat_log_msg, "%s", message ? message : "");
}

static void mat_quiet(void)
{
    mat_log_msg[0] = '\0';
    Mat_LogInitFunc("sarbp", mat_log);
}

/* ": <matio's last message>" or "" */
static const char *mat_why(char *buf, size_t n)
{
    if (mat_log_msg[0]) snprintf(buf, n, ": %s", mat_log_msg);
    else buf[0] = '\0';
    return buf;
}

static int is_numeric(enum matio_classes c)
{
    return c >= MAT_C_DOUBLE && c <= MAT_C_UINT64;
}

static double elem(const void *buf, enum matio_classes c, size_t i)
{
    switch (c) {
    case MAT_C_DOUBLE: return ((const double *)buf)[i];
    case MAT_C_SINGLE: return ((const float *)buf)[i];
    case MAT_C_INT8: return ((const int8_t *)buf)[i];
    case MAT_C_UINT8: return ((const uint8_t *)buf)[i];
    case MAT_C_INT16: return ((const int16_t *)buf)[i];
    case MAT_C_UINT16: return ((const uint16_t *)buf)[i];
    case MAT_C_INT32: return ((const int32_t *)buf)[i];
    case MAT_C_UINT32: return ((const uint32_t *)buf)[i];
    case MAT_C_INT64: return (double)((const int64_t *)buf)[i];
    case MAT_C_UINT64: return (double)((const uint64_t *)buf)[i];
    default: return 0;
    }
}

/* Elements of v; SIZE_MAX when the product overflows (mat_check_layout has
 * ruled that out already; this stays as the reader's own guard). */
static size_t numel(const matvar_t *v)
{
    size_t n = 1;
    for (int r = 0; r < v->rank; r++)
        if (!v->dims || !size_mul(n, v->dims[r], &n)) return (size_t)-1;
    return n;
}

static void shape_str(const matvar_t *v, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int r = 0; r < v->rank && used < n; r++)
        used += (size_t)snprintf(buf + used, n - used, "%s%zu", r ? " x " : "", v->dims[r]);
}

/* Field name of the one-element struct s, or NULL when absent. Walks the
 * field-name table itself: matio's Mat_VarGetStructFieldByName dereferences
 * a missing table (a truncated file gives one). struct_ok() has checked s. */
static matvar_t *field(matvar_t *s, const char *name)
{
    if (!s || s->class_type != MAT_C_STRUCT || !s->data) return NULL;
    unsigned nf = Mat_VarGetNumberOfFields(s);
    char *const *names = Mat_VarGetStructFieldnames(s);
    for (unsigned i = 0; names && i < nf; i++)
        if (names[i] && !strcmp(names[i], name)) return Mat_VarGetStructFieldByIndex(s, i, 0);
    return NULL;
}

/* A struct matio can be asked about: one element, a field-name table for
 * every field and a field pointer for each. */
static sarbp_status struct_ok(const char *path, const char *name, matvar_t *s)
{
    if (s->class_type != MAT_C_STRUCT)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': variable '%s' is not a struct", path, name);
    size_t n = numel(s);
    if (n != 1)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': variable '%s' is an array of %zu structs; "
                           "expected one", path, name, n);
    unsigned nf = Mat_VarGetNumberOfFields(s);
    char *const *names = Mat_VarGetStructFieldnames(s);
    int ok = nf > 0 && names && s->data && s->nbytes / sizeof(matvar_t *) >= nf;
    for (unsigned i = 0; ok && i < nf; i++)
        ok = names[i] != NULL && ((matvar_t **)s->data)[i] != NULL;
    if (!ok)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': struct '%s' has %u fields but its field "
                           "table is missing or incomplete", path, name, nf);
    return SARBP_OK;
}

static sarbp_status open_data(const char *path, mat_t **mat, matvar_t **data)
{
    char why[600];
    *data = NULL;
    *mat = NULL;
    SARBP_TRY(input_check(path)); /* matio opens by name: never a named pipe */
    SARBP_TRY(mat_check_layout(path));
    mat_quiet();
    *mat = Mat_Open(path, MAT_ACC_RDONLY);
    if (!*mat)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': matio cannot read this MATLAB file%s", path,
                           mat_why(why, sizeof why));
    *data = Mat_VarReadInfo(*mat, "data");
    sarbp_status st = SARBP_OK;
    if (!*data)
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': variable 'data' is missing (expected the "
                         "Gotcha struct 'data')", path);
    else
        st = struct_ok(path, "data", *data);
    if (st != SARBP_OK) {
        Mat_VarFree(*data);
        Mat_Close(*mat);
        *data = NULL;
        *mat = NULL;
    }
    return st;
}

/* A real numeric vector field of at most max values, any class, as doubles
 * (malloc'd, caller frees). */
static sarbp_status read_vector(const char *path, mat_t *mat, matvar_t *v, const char *name,
                                size_t max, double **out, size_t *n)
{
    char why[600], shape[96];
    *out = NULL;
    *n = 0;
    if (!v) return sarbp_error(SARBP_ERR_FORMAT, "'%s': field '%s' is missing", path, name);
    if (!is_numeric(v->class_type) || v->isComplex)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': field '%s' is not an array of real numbers",
                           path, name);
    int long_dims = 0;
    for (int r = 0; r < v->rank; r++) long_dims += v->dims[r] != 1;
    size_t count = numel(v);
    if (v->rank > 2 || long_dims > 1) {
        shape_str(v, shape, sizeof shape);
        return sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' has shape %s; expected a vector",
                           path, name, shape);
    }
    if (count > max || count > INT_MAX)
        return sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' holds %zu values; sarbp reads "
                           "at most %zu", path, name, count, max);
    size_t esz = Mat_SizeOfClass(v->class_type), dbytes, rbytes;
    double *d = NULL;
    void *raw = NULL;
    if (size_mul(count ? count : 1, sizeof *d, &dbytes) &&
        size_mul(count ? count : 1, esz, &rbytes)) {
        d = malloc(dbytes);
        raw = malloc(rbytes);
    }
    if (!d || !raw) {
        free(d);
        free(raw);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    /* all ones: NaN for floats, so a read that stops short cannot pass as data */
    memset(raw, 0xff, rbytes);
    mat_log_msg[0] = '\0';
    if (count > 0 && Mat_VarReadDataLinear(mat, v, raw, 0, 1, (int)count) != 0) {
        free(d);
        free(raw);
        return sarbp_error(SARBP_ERR_IO, "'%s': cannot read field '%s'%s", path, name,
                           mat_why(why, sizeof why));
    }
    for (size_t i = 0; i < count; i++) d[i] = elem(raw, v->class_type, i);
    free(raw);
    *out = d;
    *n = count;
    return SARBP_OK;
}

/* An optional per-pulse field: NULL when absent. */
static sarbp_status read_optional(const char *path, mat_t *mat, matvar_t *v, const char *name,
                                  size_t np, double **out)
{
    *out = NULL;
    if (!v) return SARBP_OK;
    size_t n;
    SARBP_TRY(read_vector(path, mat, v, name, SARBP_PHD_MAX_PULSES, out, &n));
    sarbp_status st = phd_count_mismatch(path, name, n, "x", np);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* ---- samples -------------------------------------------------------------- */

static void mat_release(struct phd_file *f)
{
    struct mat_impl *m = f->impl;
    if (!m || !m->mat) return;
    Mat_VarFree(m->data);
    Mat_Close(m->mat);
    m->data = m->fp = NULL;
    m->mat = NULL;
}

static void mat_destroy(struct phd_file *f)
{
    free(f->impl);
    f->impl = NULL;
}

static sarbp_status mat_reopen(struct phd_file *f)
{
    struct mat_impl *m = f->impl;
    SARBP_TRY(open_data(f->path, &m->mat, &m->data));
    m->fp = field(m->data, "fp");
    if (!m->fp || m->fp->rank != 2 || m->fp->dims[0] != m->dims[0] ||
        m->fp->dims[1] != m->dims[1]) {
        mat_release(f);
        return sarbp_error(SARBP_ERR_IO, "'%s' changed since it was opened", f->path);
    }
    return SARBP_OK;
}

static sarbp_status mat_read(struct phd_file *f, size_t p0, size_t np, sarbp_c32 *dst)
{
    struct mat_impl *m = f->impl;
    if (!m->mat) SARBP_TRY(mat_reopen(f));
    size_t k = f->meta->nsamples, npf = f->meta->npulses;
    enum matio_classes c = m->fp->class_type;
    size_t esz = Mat_SizeOfClass(c);
    size_t count = m->transposed ? k : np * k; /* elements per matio call */
    size_t bytes;
    void *re = NULL, *im = NULL;
    if (size_mul(count, esz, &bytes)) {
        re = malloc(bytes);
        im = malloc(bytes);
    }
    sarbp_status st = SARBP_OK;
    if (!re || !im) {
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        goto done;
    }
    mat_log_msg[0] = '\0';
    mat_complex_split_t split = {re, im};
    size_t ncalls = m->transposed ? np : 1;
    for (size_t j = 0; j < ncalls; j++) {
        /* column-major K x Np: pulses are contiguous; Np x K: pulse p is every Np-th element */
        size_t start = m->transposed ? p0 + j : p0 * k;
        int stride = m->transposed ? (int)npf : 1;
        memset(re, 0xff, bytes); /* NaN where a short read leaves the buffer alone */
        memset(im, 0xff, bytes);
        if (Mat_VarReadDataLinear(m->mat, m->fp, &split, (int)start, stride, (int)count) != 0) {
            char why[600];
            st = sarbp_error(SARBP_ERR_IO, "'%s': cannot read field 'fp'%s", f->path,
                             mat_why(why, sizeof why));
            goto done;
        }
        sarbp_c32 *out = dst + (m->transposed ? j * k : 0);
        for (size_t i = 0; i < count; i++) {
            out[i].re = (float)elem(re, c, i);
            out[i].im = (float)elem(im, c, i);
        }
    }
done:
    free(re);
    free(im);
    return st;
}

static const struct phd_file_ops mat_ops = {"Gotcha MATLAB v5", mat_read, mat_release,
                                            mat_destroy};

/* ---- Gotcha fields -------------------------------------------------------- */

/* The fields of struct data; gotcha_schema.c checks them. */
struct mat_gotcha {
    const char *path;
    mat_t *mat;
    matvar_t *data;
    matvar_t *fp; /* set by fp_shape */
};

static int gotcha_has(void *ctx, const char *name)
{
    const struct mat_gotcha *g = ctx;
    return field(g->data, name) != NULL;
}

static sarbp_status gotcha_vector(void *ctx, const char *name, size_t max, double **v, size_t *n)
{
    const struct mat_gotcha *g = ctx;
    return read_vector(g->path, g->mat, field(g->data, name), name, max, v, n);
}

/* A group is a struct field of data (af), its fields named "af.r_correct". */
static sarbp_status gotcha_optional(void *ctx, const char *group, const char *name, size_t np,
                                    double **out)
{
    const struct mat_gotcha *g = ctx;
    matvar_t *s = g->data;
    char shown[64];
    *out = NULL;
    snprintf(shown, sizeof shown, "%s%s%s", group ? group : "", group ? "." : "", name);
    if (group) {
        s = field(g->data, group);
        if (!s) return SARBP_OK;
        SARBP_TRY(struct_ok(g->path, group, s));
    }
    return read_optional(g->path, g->mat, field(s, name), shown, np, out);
}

static sarbp_status gotcha_fp_shape(void *ctx, size_t np, struct gotcha_fp *fp)
{
    struct mat_gotcha *g = ctx;
    (void)np;
    g->fp = field(g->data, "fp");
    if (!is_numeric(g->fp->class_type) || !g->fp->isComplex)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': field 'fp' is not a complex numeric array",
                           g->path);
    fp->rank = g->fp->rank;
    if (fp->rank == 2) {
        fp->dims[0] = g->fp->dims[0];
        fp->dims[1] = g->fp->dims[1];
    }
    shape_str(g->fp, fp->shape, sizeof fp->shape);
    return SARBP_OK;
}

/* read() hands matio an int count of elements. */
static sarbp_status gotcha_fp_limit(void *ctx, const struct gotcha_fp *fp)
{
    const struct mat_gotcha *g = ctx;
    (void)fp;
    if (numel(g->fp) > INT_MAX)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': field 'fp' is too large for matio's "
                           "reader; convert the file to HDF5", g->path);
    return SARBP_OK;
}

static const struct gotcha_container gotcha_mat = {
    GOTCHA_SAMPLES_BY_PULSES, gotcha_has, gotcha_vector, gotcha_optional, gotcha_fp_shape,
    gotcha_fp_limit,
};

/* ---- entry ---------------------------------------------------------------- */

static sarbp_status load_meta(const char *path, mat_t *mat, matvar_t *data, struct mat_impl *mi,
                              sarbp_phd **out)
{
    struct mat_gotcha g = {path, mat, data, NULL};
    struct gotcha_fp fp;
    SARBP_TRY(gotcha_schema_read(path, &gotcha_mat, &g, &fp, out));
    mi->transposed = fp.transposed;
    mi->dims[0] = fp.dims[0];
    mi->dims[1] = fp.dims[1];
    return SARBP_OK;
}

sarbp_status phd_open_mat(const char *path, const sarbp_reader_options *o, struct phd_file *f)
{
    (void)o;
    struct mat_impl *mi = calloc(1, sizeof *mi);
    if (!mi) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    mat_t *mat;
    matvar_t *data;
    sarbp_status st = open_data(path, &mat, &data);
    if (st == SARBP_OK) {
        st = load_meta(path, mat, data, mi, &f->meta);
        Mat_VarFree(data);
        Mat_Close(mat);
    }
    if (st != SARBP_OK) {
        free(mi);
        return st;
    }
    f->impl = mi;
    f->ops = &mat_ops;
    return SARBP_OK;
}
