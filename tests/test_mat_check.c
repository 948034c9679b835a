/* test_mat_check.c - compressed MATLAB v5 variables (miCOMPRESSED) are
 * inflated and walked by mat_check before matio sees them.
 *
 * Files made here, byte by byte: a compressed variable whose zlib payload is
 * a miMATRIX declaring 1e9 doubles but holding one; the same stream cut
 * short; the same stream with a byte flipped. Each must end as bad input
 * should: `sarbp info` exits 1 with exactly one "sarbp: info: 'FILE': ..."
 * line, in under 5 s and 500 MB (measured with wait4: sarbp and its probe
 * child). A small Gotcha-shaped file written by matio with compression on
 * must still read (exit 0). Every file in tests/fuzz/regressions/phd_mat
 * (fuzzer findings that once made matio allocate 1-2 GB for 10 s) is held
 * to the same bars. The runner follows test_bad_inputs.c. */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <matio.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifndef SARBP_MAT_REGRESSIONS_DIR
#define SARBP_MAT_REGRESSIONS_DIR "tests/fuzz/regressions/phd_mat"
#endif


static const double max_seconds = 5.0;
static const double max_mb = 500.0;

/* `sarbp info path` under a 1 GiB address-space limit (not under ASan);
 * killed after 60 s (the bar is 5). */
static void run_info(const char *path, tu_limited_run *r)
{
    const char *args[] = {"info", path, NULL};
    tu_run_limited(args, 1ULL << 30, 60, r);
}

static void print_run(const char *path, const tu_limited_run *r)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    printf("  info %-52s exit %-3d %6.2f s %7.1f MB%s\n", base, r->code, r->seconds, r->peak_mb,
           r->signal ? "  (signal)" : "");
    fflush(stdout);
}

/* exit 1, one "sarbp: info: " line naming path (and holding want, when
 * given), within the bars. */
static void expect_refused(const char *path, const char *want)
{
    tu_limited_run r;
    run_info(path, &r);
    print_run(path, &r);
    if (!r.exited) fail_msg("info '%s' died on signal %d: %s", path, r.signal, r.err);
    if (r.code != 1) fail_msg("info '%s' exited %d, not 1: %s", path, r.code, r.err);
    size_t len = strlen(r.err);
    const char *nl = strchr(r.err, '\n');
    if (len == 0 || !nl || nl != r.err + len - 1)
        fail_msg("info '%s': stderr is not exactly one line: \"%s\"", path, r.err);
    if (strncmp(r.err, "sarbp: info: ", 13))
        fail_msg("info '%s': stderr does not start with \"sarbp: info: \": %s", path, r.err);
    char quoted[1100];
    snprintf(quoted, sizeof quoted, "'%s'", path);
    if (!strstr(r.err, quoted)) fail_msg("the message does not name %s: %s", quoted, r.err);
    if (want && !strstr(r.err, want)) fail_msg("the message lacks \"%s\": %s", want, r.err);
    if (r.seconds >= max_seconds)
        fail_msg("info '%s' took %.2f s (bar %.0f s)", path, r.seconds, max_seconds);
    if (!tu_under_asan() && r.peak_mb >= max_mb)
        fail_msg("info '%s' peaked at %.0f MB (bar %.0f MB)", path, r.peak_mb, max_mb);
}

/* ---- MATLAB v5 files by hand (little-endian) --------------------------------- */

static size_t put32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    return 4;
}

/* A miMATRIX 'data' of class double, dims rows x cols, holding one double
 * (however many the dimensions declare). Returns its length. */
static size_t lying_matrix(unsigned char *b, uint32_t rows, uint32_t cols)
{
    size_t n = 0;
    n += put32(b + n, 14); /* miMATRIX */
    n += put32(b + n, 56);
    n += put32(b + n, 6); /* array flags: miUINT32, 8 bytes, mxDOUBLE_CLASS */
    n += put32(b + n, 8);
    n += put32(b + n, 6);
    n += put32(b + n, 0);
    n += put32(b + n, 5); /* dimensions: miINT32, 8 bytes */
    n += put32(b + n, 8);
    n += put32(b + n, rows);
    n += put32(b + n, cols);
    n += put32(b + n, (4u << 16) | 1); /* name: small miINT8 element "data" */
    memcpy(b + n, "data", 4);
    n += 4;
    n += put32(b + n, 9); /* real part: miDOUBLE, 8 bytes: one value */
    n += put32(b + n, 8);
    const double one = 1.0;
    memcpy(b + n, &one, 8);
    n += 8;
    assert_int_equal(n, 64);
    return n;
}

/* Writes a v5 file whose one variable is miCOMPRESSED holding z[0..zlen). */
static void write_compressed(const char *path, const unsigned char *z, size_t zlen)
{
    unsigned char head[128];
    memset(head, ' ', 116);
    memcpy(head, "MATLAB 5.0 MAT-file, written by sarbp's tests", 45);
    memset(head + 116, 0, 8);
    head[124] = 0x00;
    head[125] = 0x01;
    head[126] = 'I';
    head[127] = 'M';
    unsigned char tag[8];
    put32(tag, 15);
    put32(tag + 4, (uint32_t)zlen);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(head, 1, 128, f), 128);
    assert_int_equal(fwrite(tag, 1, 8, f), 8);
    assert_int_equal(fwrite(z, 1, zlen, f), zlen);
    assert_int_equal(fclose(f), 0);
}

static size_t deflate_buf(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    uLongf zlen = (uLongf)cap;
    assert_int_equal(compress2(out, &zlen, in, (uLong)n, Z_BEST_COMPRESSION), Z_OK);
    return (size_t)zlen;
}

static void test_compressed_lies(void **state)
{
    (void)state;
    unsigned char m[64], z[256];
    const size_t mlen = lying_matrix(m, 1000, 1000000); /* 1e9 doubles: 8 GB */
    const size_t zlen = deflate_buf(m, mlen, z, sizeof z);
    const char *path = tu_tmp("zlib_1e9_doubles.mat");

    /* a sound zlib stream whose variable declares 8 GB and holds 8 bytes */
    write_compressed(path, z, zlen);
    expect_refused(path, "variable 'data' declares 1000000000 elements but its real part "
                         "holds 8 bytes (its inflated data holds");
    /* the stream cut short: inflates part of the variable, then runs out */
    write_compressed(path, z, zlen / 2);
    expect_refused(path, "its zlib stream is truncated");
    /* a byte of the stream flipped (the adler32 check catches any the
     * decoder does not) */
    unsigned char bad[256];
    memcpy(bad, z, zlen);
    bad[zlen - 6] ^= 0x5a;
    write_compressed(path, bad, zlen);
    expect_refused(path, "zlib stream is corrupt");
    /* not a zlib stream at all */
    memset(bad, 0xff, zlen);
    write_compressed(path, bad, zlen);
    expect_refused(path, "the compressed variable at byte 128: its zlib stream is corrupt");
    /* the variable's own tag declares more than the stream inflates to */
    unsigned char m2[64];
    memcpy(m2, m, sizeof m2);
    put32(m2 + 4, 4096);
    write_compressed(path, z, deflate_buf(m2, mlen, z, sizeof z));
    expect_refused(path, "the compressed variable at byte 128 declares 4096 bytes but "
                         "inflates to 56");
}

/* A Gotcha-shaped struct 'data' (K samples x P pulses), written by matio
 * with zlib compression: it must still read. */
static void test_compressed_valid(void **state)
{
    (void)state;
    enum { K = 8, P = 4 };
    const char *path = tu_tmp("zlib_valid.mat");
    static float re[K * P], im[K * P];
    static double freq[K], x[P], y[P], z[P], r0[P], th[P], phi[P];
    for (int i = 0; i < K * P; i++) {
        re[i] = (float)i;
        im[i] = -(float)i;
    }
    for (int k = 0; k < K; k++) freq[k] = 9.5e9 + 2e6 * k;
    for (int p = 0; p < P; p++) {
        x[p] = 7000 + p;
        y[p] = 100 + p;
        z[p] = 5000;
        r0[p] = 8600 + p;
        th[p] = 10 + 0.01 * p;
        phi[p] = 35;
    }
    mat_t *mat = Mat_CreateVer(path, NULL, MAT_FT_MAT5);
    assert_non_null(mat);
    const char *names[] = {"fp", "freq", "x", "y", "z", "r0", "th", "phi"};
    size_t one[2] = {1, 1};
    matvar_t *s = Mat_VarCreateStruct("data", 2, one, names, 8);
    assert_non_null(s);
    size_t dfp[2] = {K, P}, dk[2] = {K, 1}, dp[2] = {1, P};
    mat_complex_split_t fp = {re, im};
    Mat_VarSetStructFieldByName(s, "fp", 0,
        Mat_VarCreate(NULL, MAT_C_SINGLE, MAT_T_SINGLE, 2, dfp, &fp, MAT_F_COMPLEX));
    Mat_VarSetStructFieldByName(s, "freq", 0,
        Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dk, freq, 0));
    double *vec[] = {x, y, z, r0, th, phi};
    for (int i = 0; i < 6; i++)
        Mat_VarSetStructFieldByName(s, names[2 + i], 0,
            Mat_VarCreate(NULL, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, vec[i], 0));
    assert_int_equal(Mat_VarWrite(mat, s, MAT_COMPRESSION_ZLIB), 0);
    Mat_VarFree(s);
    Mat_Close(mat);
    /* compressed indeed: the first variable's tag is miCOMPRESSED */
    FILE *f = fopen(path, "rb");
    unsigned char tag[4];
    assert_int_equal(fseek(f, 128, SEEK_SET), 0);
    assert_int_equal(fread(tag, 1, 4, f), 4);
    fclose(f);
    assert_int_equal(tag[0], 15);

    tu_limited_run r;
    run_info(path, &r);
    print_run(path, &r);
    if (r.code != 0) fail_msg("info on a valid compressed file exited %d: %s", r.code, r.err);
    sarbp_reader *rd = NULL;
    tu_ok(sarbp_reader_open(&path, 1, &rd));
    const sarbp_phd *m = sarbp_reader_meta(rd);
    assert_int_equal(m->npulses, P);
    assert_int_equal(m->nsamples, K);
    sarbp_c32 buf[K * P];
    tu_ok(sarbp_reader_read(rd, 0, P, buf));
    for (int i = 0; i < K * P; i++) {
        assert_true(buf[i].re == re[i]);
        assert_true(buf[i].im == im[i]);
    }
    sarbp_reader_free(rd);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every fuzzer finding kept in the regressions folder. */
static void test_fuzz_regressions(void **state)
{
    (void)state;
    DIR *d = opendir(SARBP_MAT_REGRESSIONS_DIR);
    assert_non_null(d);
    char *paths[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", SARBP_MAT_REGRESSIONS_DIR, e->d_name);
        paths[n++] = strdup(p);
    }
    closedir(d);
    assert_true(n > 0);
    qsort(paths, n, sizeof paths[0], cmp_str);
    for (size_t i = 0; i < n; i++) {
        expect_refused(paths[i], NULL);
        free(paths[i]);
    }
}

int main(void)
{
    printf("bars: exit 1, one message, < %.0f s, < %.0f MB%s\n", max_seconds, max_mb,
           tu_under_asan() ? " (memory not limited or checked: AddressSanitizer)" : "");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compressed_lies),
        cmocka_unit_test(test_compressed_valid),
        cmocka_unit_test(test_fuzz_regressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
