/* test_phd_io.c - phase-history readers and writers (include/sarbp/phd_io.h).
 *
 * Round trips of hand-made phase histories through sarbp's own layout and the
 * Gotcha HDF5 layout (exact, except df recomputed from a frequency vector);
 * HDF5 files written here with raw HDF5 calls in the shapes other tools
 * write; several files ordered by azimuth, block reads across file
 * boundaries, selection and autofocus; every bad input the reader must
 * refuse, with its status and message. With the Gotcha data present: the
 * four MATLAB files, compared with matio's own full read, and their v7.3,
 * compressed v5 and Gotcha HDF5 copies. */
#include "test_util.h"

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers -------------------------------------------------------------- */

/* Pulse i of a test collection: azimuth grows with i (10 deg + i/100 deg) so
 * file order by azimuth is the pulse order. Per-pulse f0 and df vary unless
 * uniform. Samples are float-exact values. */
static sarbp_phd *make_phd(sarbp_domain dom, size_t np, size_t k, int optional, int uniform)
{
    sarbp_phd *p;
    tu_ok(sarbp_phd_alloc(dom, np, k, 1, &p));
    for (size_t i = 0; i < np; i++) {
        double a = (10.0 + 0.01 * (double)i) * M_PI / 180;
        double r = 7000 + 0.125 * (double)i;
        p->pos[3 * i + 0] = r * cos(a);
        p->pos[3 * i + 1] = r * sin(a);
        p->pos[3 * i + 2] = 5000 + 0.25 * (double)i;
        p->r0[i] = sqrt(r * r + p->pos[3 * i + 2] * p->pos[3 * i + 2]);
        if (dom == SARBP_DOMAIN_FREQ) {
            p->f0[i] = 9.5e9 + (uniform ? 0 : 1000.0 * (double)i);
            p->df[i] = 1.5e6 + (uniform ? 0 : 0.5 * (double)i);
        }
        for (size_t j = 0; j < k; j++) {
            p->data[i * k + j].re = (float)sin(0.1 * (double)i + 0.01 * (double)j);
            p->data[i * k + j].im = (float)(0.5 * cos(0.07 * (double)i - 0.02 * (double)j));
        }
    }
    if (optional) {
        tu_ok(sarbp_phd_alloc_optional(p, &p->th));
        tu_ok(sarbp_phd_alloc_optional(p, &p->phi));
        tu_ok(sarbp_phd_alloc_optional(p, &p->r_correct));
        tu_ok(sarbp_phd_alloc_optional(p, &p->ph_correct));
        for (size_t i = 0; i < np; i++) {
            p->th[i] = 10.0 + 0.01 * (double)i;
            p->phi[i] = 35.5 - 0.001 * (double)i;
            p->r_correct[i] = 0.01 * (double)i - 0.3;
            p->ph_correct[i] = 0.02 * (double)i - 1.0;
        }
    }
    if (dom == SARBP_DOMAIN_CHIRP) {
        p->fs = 548.57e6;
        p->chirp_rate = 2e14;
        p->pulse_len = 2.4e-6;
        p->fc = 9.6e9;
        p->t0 = 1.5546e-4;
    }
    return p;
}

/* Same array: both NULL, or equal within rel (0: bit for bit). */
static void same_array(const char *what, const double *a, const double *b, size_t n, double rel)
{
    if (!a || !b) {
        if (a != b) fail_msg("%s: present in one phase history only", what);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double tol = rel * fabs(b[i]);
        if (!(fabs(a[i] - b[i]) <= tol))
            fail_msg("%s[%zu]: %.17g != %.17g (tolerance %g)", what, i, a[i], b[i], tol);
    }
}

/* Metadata equal; df within df_rel, everything else exact. */
static void same_meta(const sarbp_phd *a, const sarbp_phd *b, double df_rel)
{
    assert_int_equal(a->domain, b->domain);
    assert_int_equal(a->npulses, b->npulses);
    assert_int_equal(a->nsamples, b->nsamples);
    size_t n = a->npulses;
    same_array("pos", a->pos, b->pos, 3 * n, 0);
    same_array("r0", a->r0, b->r0, n, 0);
    same_array("f0", a->f0, b->f0, n, 0);
    same_array("df", a->df, b->df, n, df_rel);
    same_array("th", a->th, b->th, n, 0);
    same_array("phi", a->phi, b->phi, n, 0);
    same_array("r_correct", a->r_correct, b->r_correct, n, 0);
    same_array("ph_correct", a->ph_correct, b->ph_correct, n, 0);
    if (a->domain == SARBP_DOMAIN_CHIRP) {
        assert_true(a->fs == b->fs && a->chirp_rate == b->chirp_rate);
        assert_true(a->pulse_len == b->pulse_len && a->fc == b->fc && a->t0 == b->t0);
    }
}

static sarbp_c32 *read_all(sarbp_reader *rd)
{
    const sarbp_phd *m = sarbp_reader_meta(rd);
    sarbp_c32 *d = malloc(m->npulses * m->nsamples * sizeof *d);
    assert_non_null(d);
    tu_ok(sarbp_reader_read(rd, 0, m->npulses, d));
    return d;
}

/* Reading in blocks of `block` pulses gives the same as one read. */
static void check_blocks(sarbp_reader *rd, const sarbp_c32 *full, size_t block)
{
    const sarbp_phd *m = sarbp_reader_meta(rd);
    size_t k = m->nsamples;
    sarbp_c32 *b = malloc(block * k * sizeof *b);
    assert_non_null(b);
    for (size_t p0 = 0; p0 < m->npulses; p0 += block) {
        size_t np = m->npulses - p0 < block ? m->npulses - p0 : block;
        tu_ok(sarbp_reader_read(rd, p0, np, b));
        if (memcmp(b, full + p0 * k, np * k * sizeof *b))
            fail_msg("block %zu:%zu (of %zu) differs from the full read", p0, p0 + np, block);
    }
    free(b);
}

static sarbp_reader *open1(const char *path)
{
    sarbp_reader *rd;
    tu_ok(sarbp_reader_open(&path, 1, &rd));
    return rd;
}

/* The status and message of opening one input. */
static void expect_open_error(const char *path, sarbp_status want, const char *text)
{
    sarbp_reader *rd = NULL;
    sarbp_status st = sarbp_reader_open(&path, 1, &rd);
    if (st != want)
        fail_msg("open '%s': got %s (%s), want %s", path, sarbp_strerror(st),
                 st ? sarbp_error_detail() : "", sarbp_strerror(want));
    assert_null(rd);
    if (!strstr(sarbp_error_detail(), text))
        fail_msg("open '%s': message '%s' lacks '%s'", path, sarbp_error_detail(), text);
    if (!strstr(sarbp_error_detail(), path) && want != SARBP_ERR_IO)
        fail_msg("open '%s': message '%s' does not name the file", path, sarbp_error_detail());
}

/* Number of entries in the scratch directory whose name starts with prefix. */
static int count_prefixed(const char *prefix)
{
    DIR *d = opendir(SARBP_TEST_TMP);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* ---- raw HDF5 in the shapes other tools write ----------------------------- */

struct raw {
    size_t np, k;
    int in_group;          /* under group "data" instead of the root */
    int transposed;        /* fp stored [K][P] */
    int double_members;    /* fp members float64 */
    const char *re, *im;   /* member names ("r", "i" when NULL) */
    const char *omit;      /* a field left out */
    size_t y_count;        /* pulses in y (0: np) */
    int fp_real;           /* fp a plain float dataset */
    long nan_sample;       /* pulse with a NaN sample, -1 none */
    long nan_pos;          /* pulse with a NaN x, -1 none */
    int nonuniform;        /* freq with one odd step */
};

static void h5_vec(hid_t loc, const char *name, int rank, const hsize_t *dims, const double *v)
{
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(sp >= 0 && d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
}

/* Writes the file and returns what the reader should give (float-exact
 * metadata, uniform frequencies, no optional fields). */
static sarbp_phd *write_raw(const char *path, const struct raw *o)
{
    size_t np = o->np, k = o->k;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, np ? np : 1, k, 0, 1);
    for (size_t i = 0; i < p->npulses; i++) { /* float-exact metadata: stored as float32 */
        for (int c = 0; c < 3; c++) p->pos[3 * i + c] = (float)p->pos[3 * i + c];
        p->r0[i] = (float)p->r0[i];
        p->f0[i] = 9.5e9;
        p->df[i] = 2.0e6;
    }
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t loc = o->in_group ? H5Gcreate2(f, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : f;
    assert_true(loc >= 0);
    double *v = calloc((np > k ? np : k) + 1, sizeof *v);
    assert_non_null(v);
    /* x (1, P), y (P, 1), z (P), r0 (P) */
    static const char *const names[] = {"x", "y", "z", "r0"};
    for (int c = 0; c < 4; c++) {
        if (o->omit && !strcmp(o->omit, names[c])) continue;
        size_t n = c == 1 && o->y_count ? o->y_count : np;
        for (size_t i = 0; i < n; i++)
            v[i] = c < 3 ? p->pos[3 * (i % p->npulses) + c] : p->r0[i % p->npulses];
        if (c == 0 && o->nan_pos >= 0) v[o->nan_pos] = NAN;
        hsize_t d1[2] = {1, n}, d2[2] = {n, 1}, d3[1] = {n};
        h5_vec(loc, names[c], c == 2 || c == 3 ? 1 : 2, c == 0 ? d1 : c == 1 ? d2 : d3, v);
    }
    if (!o->omit || strcmp(o->omit, "freq")) {
        for (size_t j = 0; j < k; j++) v[j] = 9.5e9 + 2.0e6 * (double)j;
        if (o->nonuniform && k > 3) v[2] += 0.2e6;
        hsize_t dk[1] = {k};
        /* freq as float64 (float32 would round 9.5e9 + j 2e6) */
        hid_t sp = H5Screate_simple(1, dk, NULL);
        hid_t d = H5Dcreate2(loc, "freq", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
        assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
    }
    if (!o->omit || strcmp(o->omit, "fp")) {
        hsize_t dims[2] = {o->transposed ? k : np, o->transposed ? np : k};
        double *c = calloc(2 * (np * k + 1), sizeof *c); /* interleaved re, im as stored */
        assert_non_null(c);
        for (size_t i = 0; i < np; i++)
            for (size_t j = 0; j < k; j++) {
                size_t at = o->transposed ? j * np + i : i * k + j;
                c[2 * at] = p->data[i * k + j].re;
                c[2 * at + 1] = p->data[i * k + j].im;
                if ((long)i == o->nan_sample && j == 3) c[2 * at] = NAN;
            }
        hid_t sp = H5Screate_simple(2, dims, NULL), ft, mt;
        if (o->fp_real) {
            ft = H5Tcopy(H5T_IEEE_F32LE);
            mt = H5Tcopy(H5T_NATIVE_DOUBLE);
            for (size_t i = 0; i < np * k; i++) c[i] = c[2 * i];
        } else {
            hid_t member = o->double_members ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
            size_t msize = o->double_members ? 8 : 4;
            ft = H5Tcreate(H5T_COMPOUND, 2 * msize);
            H5Tinsert(ft, o->re ? o->re : "r", 0, member);
            H5Tinsert(ft, o->im ? o->im : "i", msize, member);
            mt = H5Tcreate(H5T_COMPOUND, 16);
            H5Tinsert(mt, o->re ? o->re : "r", 0, H5T_NATIVE_DOUBLE);
            H5Tinsert(mt, o->im ? o->im : "i", 8, H5T_NATIVE_DOUBLE);
        }
        hid_t d = H5Dcreate2(loc, "fp", ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(d >= 0);
        if (np * k > 0) assert_true(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, c) >= 0);
        H5Dclose(d);
        H5Tclose(ft);
        H5Tclose(mt);
        H5Sclose(sp);
        free(c);
    }
    free(v);
    if (o->in_group) H5Gclose(loc);
    assert_true(H5Fclose(f) >= 0);
    if (np == 0) {
        sarbp_phd_free(p);
        return NULL;
    }
    return p;
}

static struct raw raw_default(size_t np, size_t k)
{
    struct raw o;
    memset(&o, 0, sizeof o);
    o.np = np;
    o.k = k;
    o.nan_sample = o.nan_pos = -1;
    return o;
}

/* ---- sarbp's own layout ---------------------------------------------------- */

static void roundtrip(sarbp_domain dom, size_t np, size_t k, int optional)
{
    const char *path = tu_tmp("rt.h5");
    sarbp_phd *p = make_phd(dom, np, k, optional, 0);
    tu_ok(sarbp_phd_write_h5(path, p));
    sarbp_reader *rd = open1(path);
    assert_int_equal(sarbp_reader_nfiles(rd), 1);
    assert_string_equal(sarbp_reader_file(rd, 0), path);
    assert_string_equal(sarbp_reader_file_format(rd, 0), "sarbp-phd");
    assert_int_equal(sarbp_reader_file_npulses(rd, 0), np);
    same_meta(sarbp_reader_meta(rd), p, 0);
    sarbp_c32 *d = read_all(rd);
    assert_memory_equal(d, p->data, np * k * sizeof *d);
    check_blocks(rd, d, 7);
    check_blocks(rd, d, 1);
    free(d);
    sarbp_reader_free(rd);

    sarbp_phd *q;
    tu_ok(sarbp_phd_load(&path, 1, &q));
    same_meta(q, p, 0);
    assert_memory_equal(q->data, p->data, np * k * sizeof *d);
    sarbp_phd_free(q);
    sarbp_phd_free(p);
}

static void test_roundtrip_freq(void **state)
{
    (void)state;
    roundtrip(SARBP_DOMAIN_FREQ, 70, 33, 1); /* 70: not a multiple of the 64-pulse chunk */
    roundtrip(SARBP_DOMAIN_FREQ, 200, 424, 0);
}

static void test_roundtrip_chirp(void **state)
{
    (void)state;
    roundtrip(SARBP_DOMAIN_CHIRP, 9, 130, 0);
    roundtrip(SARBP_DOMAIN_CHIRP, 3, 5, 1);
}

static void test_roundtrip_one_pulse(void **state)
{
    (void)state;
    roundtrip(SARBP_DOMAIN_FREQ, 1, 1, 1);
    roundtrip(SARBP_DOMAIN_FREQ, 1, 2, 0);
}

static void test_write_leaves_nothing_on_failure(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 10, 8, 0, 0);
    /* no such directory */
    const char *bad = SARBP_TEST_TMP "/no-such-dir/x.h5";
    assert_int_equal(sarbp_phd_write_h5(bad, p), SARBP_ERR_IO);
    assert_non_null(strstr(sarbp_error_detail(), "cannot create"));
    assert_non_null(strstr(sarbp_error_detail(), "No such file or directory"));

    /* a NaN sample: refused, the earlier file survives, no temporary left */
    const char *path = tu_tmp("keep.h5");
    tu_ok(sarbp_phd_write_h5(path, p));
    p->data[5 * 8 + 2].im = NAN;
    assert_int_equal(sarbp_phd_write_h5(path, p), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "pulse 5"));
    assert_int_equal(count_prefixed("keep.h5."), 0);
    p->data[5 * 8 + 2].im = 0;
    sarbp_phd *q;
    tu_ok(sarbp_phd_load(&path, 1, &q));
    same_meta(q, p, 0);
    sarbp_phd_free(q);

    /* invalid metadata: no file at all */
    const char *path2 = tu_tmp("never.h5");
    p->r0[3] = NAN;
    assert_int_equal(sarbp_phd_write_h5(path2, p), SARBP_ERR_INVALID);
    assert_false(tu_exists(path2));
    assert_int_equal(count_prefixed("never.h5"), 0);
    p->r0[3] = 1000;

    /* no samples */
    sarbp_c32 *data = p->data;
    p->data = NULL;
    assert_int_equal(sarbp_phd_write_h5(path2, p), SARBP_ERR_INVALID);
    p->data = data;
    sarbp_phd_free(p);
}

static void test_writer_streaming(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 50, 16, 1, 0);
    const char *path = tu_tmp("stream.h5");
    sarbp_phd_writer *w;
    tu_ok(sarbp_phd_writer_open(path, p, &w));
    assert_false(tu_exists(path)); /* only the temporary exists while writing */
    assert_int_equal(count_prefixed("stream.h5.tmp"), 1);
    assert_int_equal(sarbp_phd_writer_write(w, 5, 5, p->data), SARBP_ERR_INVALID); /* out of order */
    tu_ok(sarbp_phd_writer_write(w, 0, 20, p->data));
    assert_int_equal(sarbp_phd_writer_commit(w), SARBP_ERR_INVALID); /* 30 pulses missing */
    tu_ok(sarbp_phd_writer_write(w, 20, 30, p->data + 20 * 16));
    assert_int_equal(sarbp_phd_writer_write(w, 50, 1, p->data), SARBP_ERR_INVALID); /* past the end */
    tu_ok(sarbp_phd_writer_commit(w));
    sarbp_phd_writer_free(w);
    assert_int_equal(count_prefixed("stream.h5.tmp"), 0);
    sarbp_phd *q;
    tu_ok(sarbp_phd_load(&path, 1, &q));
    same_meta(q, p, 0);
    assert_memory_equal(q->data, p->data, 50 * 16 * sizeof *p->data);
    sarbp_phd_free(q);

    /* abandoned: nothing remains */
    const char *path2 = tu_tmp("abandoned.h5");
    tu_ok(sarbp_phd_writer_open(path2, p, &w));
    tu_ok(sarbp_phd_writer_write(w, 0, 10, p->data));
    sarbp_phd_writer_free(w);
    assert_false(tu_exists(path2));
    assert_int_equal(count_prefixed("abandoned.h5"), 0);
    sarbp_phd_writer_free(NULL);
    sarbp_phd_free(p);
}

/* ---- Gotcha field names in HDF5 ------------------------------------------- */

static void test_gotcha_h5_roundtrip(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 40, 64, 1, 1);
    const char *path = tu_tmp("gotcha.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(path, p));
    sarbp_reader *rd = open1(path);
    assert_string_equal(sarbp_reader_file_format(rd, 0), "Gotcha HDF5");
    /* df comes back from the frequency vector: (f0 + 63 df - f0) / 63 */
    same_meta(sarbp_reader_meta(rd), p, 1e-12);
    sarbp_c32 *d = read_all(rd);
    assert_memory_equal(d, p->data, 40 * 64 * sizeof *d);
    free(d);
    sarbp_reader_free(rd);

    /* one frequency vector for all pulses, or refused */
    p->f0[7] += 1;
    assert_int_equal(sarbp_phd_write_gotcha_h5(tu_tmp("gotcha2.h5"), p), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "pulse 7"));
    assert_false(tu_exists(tu_tmp("gotcha2.h5")));
    sarbp_phd_free(p);
    p = make_phd(SARBP_DOMAIN_CHIRP, 4, 4, 0, 1);
    assert_int_equal(sarbp_phd_write_gotcha_h5(tu_tmp("gotcha3.h5"), p), SARBP_ERR_INVALID);
    sarbp_phd_free(p);
}

static void check_raw(const struct raw *o)
{
    const char *path = tu_tmp("raw.h5");
    sarbp_phd *p = write_raw(path, o);
    sarbp_reader *rd = open1(path);
    same_meta(sarbp_reader_meta(rd), p, 1e-12);
    sarbp_c32 *d = read_all(rd);
    assert_memory_equal(d, p->data, o->np * o->k * sizeof *d);
    check_blocks(rd, d, 3);
    free(d);
    sarbp_reader_free(rd);
    sarbp_phd_free(p);
}

static void test_raw_gotcha_h5_shapes(void **state)
{
    (void)state;
    struct raw o = raw_default(13, 24);
    check_raw(&o);               /* root, [P][K] {r, i} float */
    o.transposed = 1;            /* [K][P], as a MATLAB-order array read naively */
    o.double_members = 1;        /* {r, i} double */
    check_raw(&o);
    o.in_group = 1;
    o.re = "real";
    o.im = "imag";
    check_raw(&o);
    o = raw_default(1, 5);       /* one pulse */
    check_raw(&o);
    o = raw_default(6, 6);       /* square: [P][K] wins */
    check_raw(&o);
}

/* ---- bad inputs ------------------------------------------------------------ */

static void expect_raw_error(struct raw o, sarbp_status want, const char *text)
{
    const char *path = tu_tmp("bad.h5");
    sarbp_phd *p = write_raw(path, &o);
    expect_open_error(path, want, text);
    sarbp_phd_free(p);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    expect_open_error(SARBP_TEST_TMP "/does-not-exist.h5", SARBP_ERR_IO,
                      "cannot open '" SARBP_TEST_TMP "/does-not-exist.h5': No such file or directory");
    const char *txt = tu_tmp("text.h5");
    write_text(txt, "x,y,z\n1,2,3\n");
    expect_open_error(txt, SARBP_ERR_FORMAT, "not a CPHD, MATLAB or HDF5 file");
    const char *empty = tu_tmp("empty.mat");
    write_text(empty, "");
    expect_open_error(empty, SARBP_ERR_FORMAT, "not a CPHD, MATLAB or HDF5 file");

    /* HDF5 with something else in it */
    const char *other = tu_tmp("other.h5");
    hid_t f = H5Fcreate(other, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    double one = 1;
    hsize_t d1 = 1;
    h5_vec(f, "image", 1, &d1, &one);
    H5Fclose(f);
    expect_open_error(other, SARBP_ERR_FORMAT, "holds no phase history");

    struct raw o = raw_default(10, 8);
    o.omit = "r0";
    expect_raw_error(o, SARBP_ERR_FORMAT, "field 'r0' is missing");
    o.omit = "fp";
    expect_raw_error(o, SARBP_ERR_FORMAT, "field 'fp' is missing");
    o = raw_default(10, 8);
    o.in_group = 1;
    o.omit = "freq";
    expect_raw_error(o, SARBP_ERR_FORMAT, "field 'freq' is missing");
    o = raw_default(10, 8);
    o.y_count = 9;
    expect_raw_error(o, SARBP_ERR_INVALID, "field 'y' has 9 pulses, 'x' has 10");
    o = raw_default(10, 8);
    o.fp_real = 1;
    expect_raw_error(o, SARBP_ERR_FORMAT, "field 'fp' is not complex");
    o = raw_default(10, 8);
    o.re = "a";
    o.im = "b";
    expect_raw_error(o, SARBP_ERR_FORMAT, "field 'fp' is not complex");
    o = raw_default(10, 8);
    o.nan_pos = 4;
    expect_raw_error(o, SARBP_ERR_INVALID, "position of pulse 4 is NaN or Inf");
    o = raw_default(10, 8);
    o.nonuniform = 1;
    expect_raw_error(o, SARBP_ERR_INVALID, "not uniformly spaced");
    o = raw_default(0, 8);
    expect_raw_error(o, SARBP_ERR_INVALID, "no pulses");

    /* fp whose shape matches neither way */
    const char *shape = tu_tmp("shape.h5");
    o = raw_default(10, 8);
    sarbp_phd *p = write_raw(shape, &o);
    sarbp_phd_free(p);
    f = H5Fopen(shape, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "freq", H5P_DEFAULT) >= 0);
    double fr[7] = {1e9, 1.1e9, 1.2e9, 1.3e9, 1.4e9, 1.5e9, 1.6e9};
    hsize_t d7 = 7;
    h5_vec(f, "freq", 1, &d7, fr);
    H5Fclose(f);
    expect_open_error(shape, SARBP_ERR_INVALID, "field 'fp' has shape 10 x 8");

    /* a NaN sample: opens, and the read of its block names file and pulse */
    o = raw_default(10, 8);
    o.nan_sample = 6;
    const char *nan = tu_tmp("nan.h5");
    p = write_raw(nan, &o);
    sarbp_reader *rd = open1(nan);
    sarbp_c32 buf[10 * 8];
    tu_ok(sarbp_reader_read(rd, 0, 6, buf));
    assert_int_equal(sarbp_reader_read(rd, 4, 4, buf), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), nan));
    assert_non_null(strstr(sarbp_error_detail(), "sample 3 of pulse 6 is NaN or Inf"));
    /* out of range and empty requests */
    assert_int_equal(sarbp_reader_read(rd, 8, 3, buf), SARBP_ERR_INVALID);
    tu_ok(sarbp_reader_read(rd, 10, 0, buf));
    assert_int_equal(sarbp_reader_select(rd, 5, 5), SARBP_ERR_INVALID);
    assert_int_equal(sarbp_reader_select(rd, 0, 11), SARBP_ERR_INVALID);
    sarbp_reader_free(rd);
    sarbp_phd_free(p);

    /* nothing to open */
    sarbp_reader *none = NULL;
    assert_int_equal(sarbp_reader_open(NULL, 0, &none), SARBP_ERR_INVALID);
    sarbp_reader_free(NULL);
}

static void test_bad_own_format(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 5, 4, 0, 0);
    const char *path = tu_tmp("version.h5");
    tu_ok(sarbp_phd_write_h5(path, p));
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "sarbp_format_version", H5P_DEFAULT);
    int two = SARBP_PHD_FORMAT_VERSION + 1;
    assert_true(H5Awrite(a, H5T_NATIVE_INT, &two) >= 0);
    H5Aclose(a);
    H5Fclose(f);
    expect_open_error(path, SARBP_ERR_FORMAT, "format version 2 is newer");

    tu_ok(sarbp_phd_write_h5(path, p));
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "r0", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_open_error(path, SARBP_ERR_FORMAT, "field 'r0' is missing");

    tu_ok(sarbp_phd_write_h5(path, p));
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete(f, "sarbp_format_version") >= 0);
    H5Fclose(f);
    expect_open_error(path, SARBP_ERR_FORMAT, "attribute 'sarbp_format_version' is missing");

    tu_ok(sarbp_phd_write_h5(path, p));
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "df", H5P_DEFAULT) >= 0);
    double d4[4] = {1, 2, 3, 4};
    hsize_t n4 = 4;
    h5_vec(f, "df", 1, &n4, d4);
    H5Fclose(f);
    expect_open_error(path, SARBP_ERR_INVALID, "field 'df' has 4 pulses, 'samples' has 5");
    sarbp_phd_free(p);
}

/* ---- declared sizes the file does not back ---------------------------------- */

/* Replaces dataset name of the sarbp-phd file path by a float64 vector of n
 * values, chunked by chunk, of which only the first chunk is written (the
 * rest would read as fill values). */
static void sparse_vector(const char *path, const char *name, hsize_t n, hsize_t chunk)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hid_t sp = H5Screate_simple(1, &n, NULL), pl = H5Pcreate(H5P_DATASET_CREATE);
    assert_true(H5Pset_chunk(pl, 1, &chunk) >= 0);
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    assert_true(d >= 0);
    double *v = malloc(chunk * sizeof *v);
    for (hsize_t i = 0; i < chunk; i++) v[i] = 1e4;
    hsize_t start = 0;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &chunk, NULL);
    assert_true(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &chunk, NULL) >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v) >= 0);
    free(v);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Pclose(pl);
    H5Sclose(sp);
    H5Fclose(f);
}

/* A dataset whose chunks were never written, or that declares more than the
 * file holds, is refused before it is read: never fill values, never a
 * gigabyte allocation. */
static void test_declared_sizes(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 8, 16, 0, 1);
    const char *path = tu_tmp("sparse.h5");
    tu_ok(sarbp_phd_write_h5(path, p));
    sparse_vector(path, "r0", 8, 4); /* half of r0 missing */
    expect_open_error(path, SARBP_ERR_FORMAT, "dataset 'r0' declares 8 values (64 bytes) in 2 chunks but the file holds 1 of them");
    tu_ok(sarbp_phd_write_h5(path, p));
    sparse_vector(path, "r0", (hsize_t)1 << 40, 1 << 16); /* 8 TB of r0 in a small file */
    expect_open_error(path, SARBP_ERR_FORMAT, "dataset 'r0' declares 1099511627776 values (8.8 TB)");
    sarbp_phd_free(p);
}

/* Sets every value of dataset name in path to v. */
static void fill_dataset(const char *path, const char *name, double v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    double *x = malloc((size_t)n * sizeof *x);
    for (hssize_t i = 0; i < n; i++) x[i] = v;
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
    free(x);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
}

/* Finite but absurd metadata is refused before anything is derived from it
 * (a df of 1e300 once gave an all-NaN image with exit 0; one of 1e-300 a
 * meaningless one). */
static void test_absurd_metadata(void **state)
{
    (void)state;
    static const struct { const char *field; double v; const char *text; } cases[] = {
        {"df", 1e300, "frequency step of pulse 0 (1e+300 Hz) is not in [1, 1e+13] Hz"},
        {"df", 1e-300, "frequency step of pulse 0 (1e-300 Hz) is not in [1, 1e+13] Hz"},
        {"f0", 1e14, "start frequency of pulse 0 (1e+14 Hz) is not in (0, 1e+13] Hz"},
        {"pos", 1e12, "an antenna position lies beyond 1e+09 m"},
        {"r0", 1e300, "r0 of pulse 0 (1e+300 m) is not in (0, 1e+09] m"},
    };
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 6, 8, 0, 1);
    const char *path = tu_tmp("absurd.h5");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_ok(sarbp_phd_write_h5(path, p));
        fill_dataset(path, cases[i].field, cases[i].v);
        expect_open_error(path, SARBP_ERR_INVALID, cases[i].text);
    }
    sarbp_phd_free(p);
}

/* ---- variable-length string attributes (h5py's default for str) ---------- */

struct str_attrs {
    char name[16][64];
    int n;
};

static herr_t collect_str_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    struct str_attrs *s = data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = H5Aget_type(a);
    if (H5Tget_class(t) == H5T_STRING && s->n < 16) snprintf(s->name[s->n++], 64, "%s", name);
    H5Tclose(t);
    H5Aclose(a);
    return 0;
}

/* Rewrites every fixed-length string attribute of obj as a scalar UTF-8
 * variable-length string, as h5py writes a Python str; returns how many. */
static int attrs_to_vlen(hid_t obj)
{
    struct str_attrs s = {.n = 0};
    assert_true(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, collect_str_attr, &s) >= 0);
    for (int i = 0; i < s.n; i++) {
        hid_t a = H5Aopen(obj, s.name[i], H5P_DEFAULT), t = H5Aget_type(a);
        assert_false(H5Tis_variable_str(t) > 0);
        size_t size = H5Tget_size(t);
        char *val = calloc(size + 1, 1);
        assert_true(H5Aread(a, t, val) >= 0);
        H5Tclose(t);
        H5Aclose(a);
        assert_true(H5Adelete(obj, s.name[i]) >= 0);
        hid_t vt = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
        assert_true(H5Tset_size(vt, H5T_VARIABLE) >= 0);
        assert_true(H5Tset_cset(vt, H5T_CSET_UTF8) >= 0);
        a = H5Acreate2(obj, s.name[i], vt, sp, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(a >= 0);
        const char *p = val;
        assert_true(H5Awrite(a, vt, &p) >= 0);
        H5Aclose(a);
        H5Sclose(sp);
        H5Tclose(vt);
        free(val);
    }
    return s.n;
}

static herr_t dataset_to_vlen(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d >= 0) {
        *(int *)data += attrs_to_vlen(d);
        H5Dclose(d);
    }
    return 0;
}

/* A sarbp-phd file whose string attributes (sarbp_format, domain, creator,
 * every units) are variable-length, as h5py writes them, reads exactly as
 * the fixed-length original and forms the same image. */
static void test_vlen_string_attributes(void **state)
{
    (void)state;
    for (int dom = 0; dom < 2; dom++) {
        sarbp_phd *p = make_phd(dom ? SARBP_DOMAIN_CHIRP : SARBP_DOMAIN_FREQ, 40, 64, 1, 1);
        char fixed[512], vlen[512];
        snprintf(fixed, sizeof fixed, "%s", tu_tmp(dom ? "fixed_chirp.h5" : "fixed_freq.h5"));
        snprintf(vlen, sizeof vlen, "%s", tu_tmp(dom ? "vlen_chirp.h5" : "vlen_freq.h5"));
        tu_ok(sarbp_phd_write_h5(fixed, p));
        tu_ok(sarbp_phd_write_h5(vlen, p));
        hid_t f = H5Fopen(vlen, H5F_ACC_RDWR, H5P_DEFAULT);
        assert_true(f >= 0);
        int nroot = attrs_to_vlen(f), nunits = 0;
        assert_true(H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, NULL, dataset_to_vlen, &nunits) >= 0);
        H5Fclose(f);
        printf("%s: %d root and %d dataset string attributes made variable-length\n",
               dom ? "chirp" : "freq", nroot, nunits);
        assert_true(nroot >= 2);

        const char *in_f = fixed, *in_v = vlen;
        sarbp_phd *a, *b;
        tu_ok(sarbp_phd_load(&in_f, 1, &a));
        tu_ok(sarbp_phd_load(&in_v, 1, &b));
        same_meta(b, a, 0);
        assert_memory_equal(b->data, a->data, 40 * 64 * sizeof(sarbp_c32));
        sarbp_phd_free(a);
        sarbp_phd_free(b);

        char out[64], err[1024];
        char img_f[512], img_v[512];
        snprintf(img_f, sizeof img_f, "%s", tu_tmp("vlen_ref.npy"));
        snprintf(img_v, sizeof img_v, "%s", tu_tmp("vlen_img.npy"));
        assert_int_equal(tu_run("form --backend cpu --grid 32x32 -i %s -o %s", fixed, img_f), 0);
        assert_int_equal(tu_run("form --backend cpu --grid 32x32 -i %s -o %s", vlen, img_v), 0);
        sarbp_image *ia, *ib;
        tu_ok(sarbp_image_read(img_f, &ia));
        tu_ok(sarbp_image_read(img_v, &ib));
        assert_memory_equal(ia->data, ib->data, 32 * 32 * sizeof(sarbp_c32));
        sarbp_image_free(ia);
        sarbp_image_free(ib);
        sarbp_phd_free(p);
    }
}

/* ---- several files ---------------------------------------------------------- */

/* Writes pulses [a, b) of p to SARBP_TEST_TMP/<dir>/<name>. */
static void write_part(const sarbp_phd *p, size_t a, size_t b, const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SARBP_TEST_TMP, dir);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/%s", SARBP_TEST_TMP, dir, name);
    sarbp_phd *s;
    tu_ok(sarbp_phd_slice(p, a, b, &s));
    tu_ok(sarbp_phd_write_h5(path, s));
    sarbp_phd_free(s);
}

static void test_multi_file(void **state)
{
    (void)state;
    const size_t np = 100, k = 12;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, np, k, 1, 0);
    /* names sort against azimuth: the reader must order by azimuth */
    write_part(p, 0, 37, "multi", "c.h5");
    write_part(p, 37, 38, "multi", "a.hdf5"); /* one pulse */
    write_part(p, 38, 100, "multi", "b.h5");
    char readme[1024];
    snprintf(readme, sizeof readme, "%s/multi/README.txt", SARBP_TEST_TMP);
    write_text(readme, "not data: skipped by the directory expansion\n");

    const char *dir = SARBP_TEST_TMP "/multi";
    sarbp_reader *rd = open1(dir);
    assert_int_equal(sarbp_reader_nfiles(rd), 3);
    assert_non_null(strstr(sarbp_reader_file(rd, 0), "c.h5"));
    assert_non_null(strstr(sarbp_reader_file(rd, 1), "a.hdf5"));
    assert_non_null(strstr(sarbp_reader_file(rd, 2), "b.h5"));
    assert_int_equal(sarbp_reader_file_npulses(rd, 1), 1);
    same_meta(sarbp_reader_meta(rd), p, 0);
    sarbp_c32 *d = read_all(rd);
    assert_memory_equal(d, p->data, np * k * sizeof *d);
    for (size_t b = 1; b <= 40; b += 13) check_blocks(rd, d, b); /* across file boundaries */

    /* select: indices restart at 0 */
    tu_ok(sarbp_reader_select(rd, 30, 45));
    const sarbp_phd *m = sarbp_reader_meta(rd);
    assert_int_equal(m->npulses, 15);
    sarbp_phd *s;
    tu_ok(sarbp_phd_slice(p, 30, 45, &s));
    same_meta(m, s, 0);
    sarbp_c32 part[15 * 12];
    tu_ok(sarbp_reader_read(rd, 0, 15, part));
    assert_memory_equal(part, p->data + 30 * k, sizeof part);
    tu_ok(sarbp_reader_read(rd, 6, 2, part)); /* pulses 36, 37: two files */
    assert_memory_equal(part, p->data + 36 * k, 2 * k * sizeof *part);
    assert_int_equal(sarbp_reader_read(rd, 10, 6, part), SARBP_ERR_INVALID);

    /* autofocus on the selection */
    sarbp_reader_set_autofocus(rd, 1);
    m = sarbp_reader_meta(rd);
    assert_null(m->r_correct);
    assert_null(m->ph_correct);
    for (size_t i = 0; i < 15; i++) assert_true(m->r0[i] == s->r0[i] + s->r_correct[i]);
    tu_ok(sarbp_reader_read(rd, 0, 15, part));
    double worst = 0;
    for (size_t i = 0; i < 15; i++)
        for (size_t j = 0; j < k; j++) {
            const sarbp_c32 a = s->data[i * k + j];
            double c = cos(s->ph_correct[i]), sn = sin(s->ph_correct[i]);
            double re = a.re * c - a.im * sn, im = a.re * sn + a.im * c;
            double e = hypot(part[i * k + j].re - re, part[i * k + j].im - im);
            if (e > worst) worst = e;
        }
    assert_true(worst < 1e-6); /* |samples| <= 1.2: float rounding of the rotation */
    sarbp_reader_set_autofocus(rd, 0);
    same_meta(sarbp_reader_meta(rd), s, 0);
    sarbp_phd_free(s);
    free(d);
    sarbp_reader_free(rd);

    /* files listed in any order, a glob, a trailing slash: the same reader */
    const char *lists[][3] = {
        {SARBP_TEST_TMP "/multi/b.h5", SARBP_TEST_TMP "/multi/a.hdf5", SARBP_TEST_TMP "/multi/c.h5"},
        {SARBP_TEST_TMP "/multi/*.h*", NULL, NULL},
        {SARBP_TEST_TMP "/multi/", NULL, NULL},
        {SARBP_TEST_TMP "/multi/[ab].*", SARBP_TEST_TMP "/multi/c.h5", NULL},
    };
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        size_t n = 0;
        while (n < 3 && lists[l][n]) n++;
        tu_ok(sarbp_reader_open(lists[l], n, &rd));
        assert_int_equal(sarbp_reader_nfiles(rd), 3);
        assert_non_null(strstr(sarbp_reader_file(rd, 0), "c.h5"));
        same_meta(sarbp_reader_meta(rd), p, 0);
        sarbp_reader_free(rd);
    }

    /* inputs that disagree, or repeat */
    write_part(p, 0, 10, "mismatch", "k12.h5");
    sarbp_phd *q = make_phd(SARBP_DOMAIN_FREQ, 10, 13, 0, 0);
    tu_ok(sarbp_phd_write_h5(SARBP_TEST_TMP "/mismatch/k13.h5", q));
    sarbp_phd_free(q);
    const char *mm = SARBP_TEST_TMP "/mismatch";
    rd = NULL;
    assert_int_equal(sarbp_reader_open(&mm, 1, &rd), SARBP_ERR_MISMATCH);
    assert_non_null(strstr(sarbp_error_detail(), "k12.h5"));
    assert_non_null(strstr(sarbp_error_detail(), "k13.h5"));
    assert_null(rd);
    q = make_phd(SARBP_DOMAIN_CHIRP, 10, 12, 0, 0);
    tu_ok(sarbp_phd_write_h5(SARBP_TEST_TMP "/mismatch/k13.h5", q));
    sarbp_phd_free(q);
    assert_int_equal(sarbp_reader_open(&mm, 1, &rd), SARBP_ERR_MISMATCH);
    const char *twice[] = {SARBP_TEST_TMP "/multi/b.h5", SARBP_TEST_TMP "/multi"};
    assert_int_equal(sarbp_reader_open(twice, 2, &rd), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "same file"));
    mkdir(SARBP_TEST_TMP "/emptydir", 0777);
    expect_open_error(SARBP_TEST_TMP "/emptydir", SARBP_ERR_INVALID,
                      "holds no .cphd, .mat, .h5 or .hdf5 files");
    expect_open_error(SARBP_TEST_TMP "/multi/*.nothing", SARBP_ERR_IO, "no file matches");
    sarbp_phd_free(p);
}

/* ---- MATLAB files written here -------------------------------------------- */

static matvar_t *mat_real(const char *name, enum matio_classes c, size_t r, size_t cols,
                          const double *v)
{
    size_t dims[2] = {r, cols}, n = r * cols;
    if (c == MAT_C_SINGLE) {
        float *f = malloc((n ? n : 1) * sizeof *f);
        for (size_t i = 0; i < n; i++) f[i] = (float)v[i];
        matvar_t *m = Mat_VarCreate(name, MAT_C_SINGLE, MAT_T_SINGLE, 2, dims, f, 0);
        free(f);
        return m;
    }
    return Mat_VarCreate(name, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, (void *)v, 0);
}

/* A Gotcha-like v5 file of p (uniform frequencies), fields as MATLAB has them;
 * omit leaves one out; fp in double when dbl. Returns p's float-exact copy. */
static void write_mat(const char *path, const sarbp_phd *p, const char *omit, int dbl,
                      int compress)
{
    size_t np = p->npulses, k = p->nsamples;
    const char *fields[] = {"fp", "freq", "x", "y", "z", "r0", "th", "af"};
    size_t nf = 0;
    const char *use[8];
    for (size_t i = 0; i < 8; i++)
        if (!omit || strcmp(omit, fields[i])) use[nf++] = fields[i];
    size_t one[2] = {1, 1};
    remove(path);
    mat_t *mat = Mat_CreateVer(path, NULL, MAT_FT_MAT5);
    assert_non_null(mat);
    matvar_t *s = Mat_VarCreateStruct("data", 2, one, use, (unsigned)nf);
    double *v = malloc((np > k ? np : k) * sizeof *v);
    for (size_t f = 0; f < nf; f++) {
        const char *n = use[f];
        matvar_t *m = NULL;
        if (!strcmp(n, "fp")) {
            size_t dims[2] = {k, np};
            if (dbl) {
                double *re = malloc(np * k * sizeof *re), *im = malloc(np * k * sizeof *im);
                for (size_t i = 0; i < np * k; i++) re[i] = p->data[i].re, im[i] = p->data[i].im;
                mat_complex_split_t c = {re, im};
                m = Mat_VarCreate("fp", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, &c, MAT_F_COMPLEX);
                free(re);
                free(im);
            } else {
                float *re = malloc(np * k * sizeof *re), *im = malloc(np * k * sizeof *im);
                for (size_t i = 0; i < np * k; i++) re[i] = p->data[i].re, im[i] = p->data[i].im;
                mat_complex_split_t c = {re, im};
                m = Mat_VarCreate("fp", MAT_C_SINGLE, MAT_T_SINGLE, 2, dims, &c, MAT_F_COMPLEX);
                free(re);
                free(im);
            }
        } else if (!strcmp(n, "freq")) {
            for (size_t j = 0; j < k; j++) v[j] = p->f0[0] + (double)j * p->df[0];
            m = mat_real("freq", MAT_C_DOUBLE, k, 1, v);
        } else if (!strcmp(n, "af")) {
            const char *afn[] = {"r_correct", "ph_correct"};
            m = Mat_VarCreateStruct("af", 2, one, afn, 2);
            Mat_VarSetStructFieldByName(m, "r_correct", 0,
                                        mat_real("r_correct", MAT_C_DOUBLE, 1, np, p->r_correct));
            Mat_VarSetStructFieldByName(m, "ph_correct", 0,
                                        mat_real("ph_correct", MAT_C_DOUBLE, 1, np, p->ph_correct));
        } else {
            for (size_t i = 0; i < np; i++)
                v[i] = !strcmp(n, "r0") ? p->r0[i] : !strcmp(n, "th") ? p->th[i]
                                                                      : p->pos[3 * i + (n[0] - 'x')];
            m = mat_real(n, MAT_C_DOUBLE, 1, np, v);
        }
        assert_non_null(m);
        Mat_VarSetStructFieldByName(s, n, 0, m);
    }
    assert_int_equal(Mat_VarWrite(mat, s, compress ? MAT_COMPRESSION_ZLIB : MAT_COMPRESSION_NONE), 0);
    Mat_VarFree(s);
    Mat_Close(mat);
    free(v);
}

static void test_mat_written_here(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(SARBP_DOMAIN_FREQ, 21, 10, 1, 1);
    free(p->phi);
    p->phi = NULL;
    p->df[0] = 2.0e6; /* exact frequency vector */
    for (size_t i = 0; i < 21; i++) p->df[i] = 2.0e6;
    const char *path = tu_tmp("w.mat");
    for (int variant = 0; variant < 3; variant++) {
        write_mat(path, p, NULL, variant == 1, variant == 2);
        sarbp_reader *rd = open1(path);
        assert_string_equal(sarbp_reader_file_format(rd, 0), "Gotcha MATLAB v5");
        same_meta(sarbp_reader_meta(rd), p, 0);
        sarbp_c32 *d = read_all(rd);
        assert_memory_equal(d, p->data, 21 * 10 * sizeof *d);
        check_blocks(rd, d, 4);
        free(d);
        sarbp_reader_free(rd);
    }
    write_mat(path, p, "r0", 0, 0);
    expect_open_error(path, SARBP_ERR_FORMAT, "field 'r0' is missing");
    write_mat(path, p, "fp", 0, 1);
    expect_open_error(path, SARBP_ERR_FORMAT, "field 'fp' is missing");
    /* without af and th: optional */
    write_mat(path, p, "af", 0, 0);
    sarbp_reader *rd = open1(path);
    assert_null(sarbp_reader_meta(rd)->r_correct);
    sarbp_reader_free(rd);

    /* no struct 'data' */
    mat_t *mat = Mat_CreateVer(path, NULL, MAT_FT_MAT5);
    size_t dims[2] = {1, 1};
    double one = 1;
    matvar_t *v = Mat_VarCreate("other", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, &one, 0);
    Mat_VarWrite(mat, v, MAT_COMPRESSION_NONE);
    Mat_VarFree(v);
    Mat_Close(mat);
    expect_open_error(path, SARBP_ERR_FORMAT, "variable 'data' is missing");

    /* af.ph_correct, the last array in the file, declaring one element more
     * than it stores: matio would read the next bytes (or zeros) as its value */
    write_mat(path, p, NULL, 0, 0);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    static unsigned char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    static const unsigned char dims_1x21[16] = {5, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 21, 0, 0, 0};
    long last = -1;
    for (size_t i = 0; i + 16 <= len; i++)
        if (!memcmp(buf + i, dims_1x21, 16)) last = (long)i;
    assert_true(last > 0);
    assert_int_equal(fseek(f, last + 12, SEEK_SET), 0);
    assert_int_equal(fputc(22, f), 22);
    assert_int_equal(fclose(f), 0);
    expect_open_error(path, SARBP_ERR_FORMAT,
                      "variable 'data.af.ph_correct' declares 22 elements but its real part "
                      "holds 168 bytes");
    sarbp_phd_free(p);
}

/* ---- the Gotcha files ------------------------------------------------------- */

static const char *const gotcha_names[] = {
    "data_3dsar_pass1_az001_HH.mat", "data_3dsar_pass1_az002_HH.mat",
    "data_3dsar_pass1_az003_HH.mat", "data_3dsar_pass1_az004_HH.mat",
};

static const char *gotcha_file(int i)
{
    static char path[4][1024];
    snprintf(path[i], sizeof path[i], "%s/%s", tu_gotcha_dir(), gotcha_names[i]);
    return path[i];
}

static void test_gotcha_files(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *dir = tu_gotcha_dir();
    sarbp_reader *rd = open1(dir);
    const sarbp_phd *m = sarbp_reader_meta(rd);
    assert_int_equal(m->npulses, 469);
    assert_int_equal(m->nsamples, 424);
    assert_int_equal(sarbp_reader_nfiles(rd), 4);
    static const size_t counts[4] = {117, 117, 118, 117};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(sarbp_reader_file(rd, (size_t)i), gotcha_file(i));
        assert_int_equal(sarbp_reader_file_npulses(rd, (size_t)i), counts[i]);
    }
    /* freq is single precision: 9.28808e9 is stored as 9288080384 (float
     * spacing 1024 Hz there). The steps of the stored vector are 1471488 or
     * 1470464 Hz (the float grid); the mean step (freq[423] - freq[0]) / 423
     * is 1471301.6 Hz, uncertain by 1024 / 423 = 2.4 Hz. */
    for (size_t i = 0; i < m->npulses; i++) {
        if (fabs(m->f0[i] - 9.28808e9) > 1e3) fail_msg("f0[%zu] = %.1f", i, m->f0[i]);
        if (fabs(m->df[i] - 1471301.6) > 3) fail_msg("df[%zu] = %.3f", i, m->df[i]);
    }
    printf("gotcha: f0 %.1f Hz (9288080000 + %.0f), df %.3f Hz\n", m->f0[0], m->f0[0] - 9.28808e9,
           m->df[0]);
    assert_non_null(m->th);
    assert_non_null(m->phi);
    assert_non_null(m->r_correct);
    assert_non_null(m->ph_correct);
    for (size_t i = 1; i < m->npulses; i++) assert_true(m->th[i] > m->th[i - 1]);
    assert_true(m->th[0] >= 0 && m->th[0] < 0.01 && m->th[468] > 3.99 && m->th[468] < 4.0);
    assert_true(fabs(m->r0[0] - 10158) < 50);

    /* samples: the same as matio's own full read of each file */
    sarbp_c32 *d = read_all(rd);
    size_t at = 0;
    for (int f = 0; f < 4; f++) {
        mat_t *mat = Mat_Open(gotcha_file(f), MAT_ACC_RDONLY);
        assert_non_null(mat);
        matvar_t *v = Mat_VarRead(mat, "data");
        matvar_t *fp = Mat_VarGetStructFieldByName(v, "fp", 0);
        assert_int_equal(fp->class_type, MAT_C_SINGLE);
        const mat_complex_split_t *c = fp->data;
        size_t n = fp->dims[0] * fp->dims[1];
        for (size_t i = 0; i < n; i++)
            if (d[at + i].re != ((const float *)c->Re)[i] || d[at + i].im != ((const float *)c->Im)[i])
                fail_msg("file %d element %zu differs from matio's read", f, i);
        at += n;
        Mat_VarFree(v);
        Mat_Close(mat);
    }
    assert_int_equal(at, 469 * 424);
    check_blocks(rd, d, 100); /* blocks 100:200, 200:300 cross files */
    check_blocks(rd, d, 117);
    check_blocks(rd, d, 469);

    /* the same through a reversed list, a glob, and the load convenience */
    const char *rev[] = {gotcha_file(3), gotcha_file(2), gotcha_file(1), gotcha_file(0)};
    char glob[1100];
    snprintf(glob, sizeof glob, "%s/data_3dsar_pass1_az00?_HH.mat", dir);
    const char *globp = glob;
    sarbp_reader *rd2;
    for (int l = 0; l < 2; l++) {
        tu_ok(l ? sarbp_reader_open(&globp, 1, &rd2) : sarbp_reader_open(rev, 4, &rd2));
        for (int i = 0; i < 4; i++) assert_string_equal(sarbp_reader_file(rd2, (size_t)i), gotcha_file(i));
        same_meta(sarbp_reader_meta(rd2), m, 0);
        sarbp_reader_free(rd2);
    }
    sarbp_phd *all;
    tu_ok(sarbp_phd_load(&dir, 1, &all));
    same_meta(all, m, 0);
    assert_memory_equal(all->data, d, 469 * 424 * sizeof *d);

    /* Gotcha HDF5 written from the MATLAB data reads the same */
    const char *h5 = tu_tmp("gotcha_from_mat.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(h5, all));
    tu_ok(sarbp_reader_open(&h5, 1, &rd2));
    same_meta(sarbp_reader_meta(rd2), m, 1e-12);
    sarbp_c32 *d2 = read_all(rd2);
    assert_memory_equal(d2, d, 469 * 424 * sizeof *d);
    free(d2);
    sarbp_reader_free(rd2);

    /* select and autofocus on real data */
    tu_ok(sarbp_reader_select(rd, 200, 300));
    sarbp_reader_set_autofocus(rd, 1);
    const sarbp_phd *s = sarbp_reader_meta(rd);
    assert_int_equal(s->npulses, 100);
    for (size_t i = 0; i < 100; i++) assert_true(s->r0[i] == all->r0[200 + i] + all->r_correct[200 + i]);
    sarbp_phd_free(all);
    free(d);
    sarbp_reader_free(rd);
}

/* MATLAB v7.3 (HDF5 inside) and compressed v5 copies made with matio. */
static void test_gotcha_copies(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *orig = gotcha_file(0);
    mat_t *in = Mat_Open(orig, MAT_ACC_RDONLY);
    assert_non_null(in);
    matvar_t *v = Mat_VarRead(in, "data");
    assert_non_null(v);
    Mat_Close(in);
    sarbp_phd *ref;
    tu_ok(sarbp_phd_load(&orig, 1, &ref));
    static const struct { const char *name; enum mat_ft ver; enum matio_compression z; } copies[] = {
        {"az001_v73.mat", MAT_FT_MAT73, MAT_COMPRESSION_NONE},
        {"az001_v7z.mat", MAT_FT_MAT5, MAT_COMPRESSION_ZLIB},
    };
    for (size_t c = 0; c < 2; c++) {
        const char *path = tu_tmp(copies[c].name);
        mat_t *out = Mat_CreateVer(path, NULL, copies[c].ver);
        assert_non_null(out);
        assert_int_equal(Mat_VarWrite(out, v, copies[c].z), 0);
        Mat_Close(out);
        sarbp_reader *rd = open1(path);
        printf("%s read as %s\n", copies[c].name, sarbp_reader_file_format(rd, 0));
        same_meta(sarbp_reader_meta(rd), ref, 0);
        sarbp_c32 *d = read_all(rd);
        assert_memory_equal(d, ref->data, 117 * 424 * sizeof *d);
        check_blocks(rd, d, 50);
        free(d);
        sarbp_reader_free(rd);
    }
    Mat_VarFree(v);
    sarbp_phd_free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_freq),
        cmocka_unit_test(test_roundtrip_chirp),
        cmocka_unit_test(test_roundtrip_one_pulse),
        cmocka_unit_test(test_write_leaves_nothing_on_failure),
        cmocka_unit_test(test_writer_streaming),
        cmocka_unit_test(test_gotcha_h5_roundtrip),
        cmocka_unit_test(test_raw_gotcha_h5_shapes),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_bad_own_format),
        cmocka_unit_test(test_vlen_string_attributes),
        cmocka_unit_test(test_declared_sizes),
        cmocka_unit_test(test_absurd_metadata),
        cmocka_unit_test(test_multi_file),
        cmocka_unit_test(test_mat_written_here),
        cmocka_unit_test(test_gotcha_files),
        cmocka_unit_test(test_gotcha_copies),
    };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
