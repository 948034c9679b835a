/* make_seeds.c - writes the harnesses' seed corpora: tiny valid inputs of
 * every format the readers take, made with sarbp itself (simulate, the
 * phase-history and image writers) and with matio for MATLAB v5.
 *
 *   build-fuzz/fuzz/make_seeds tests/fuzz/corpus
 *
 * writes corpus/{phd_h5,phd_mat,image_h5,image_npy,cli_numbers}/. The
 * output is deterministic (simulate's fixed seed), so re-running it on
 * unchanged writers changes nothing but HDF5's timestamps (none are
 * written by default). Not part of the test suite. */
#include <errno.h>
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sarbp/sarbp.h"

static const char *root;

static const char *path(const char *dir, const char *name)
{
    static char buf[1024];
    char d[1024];
    snprintf(d, sizeof d, "%s/%s", root, dir);
    if (mkdir(d, 0777) && errno != EEXIST) {
        perror(d);
        exit(1);
    }
    snprintf(buf, sizeof buf, "%s/%s", d, name);
    return buf;
}

static void ok(sarbp_status s, const char *what)
{
    if (s != SARBP_OK) {
        fprintf(stderr, "make_seeds: %s: %s\n", what, sarbp_error_detail());
        exit(1);
    }
}

static sarbp_phd *sim(sarbp_geometry geom, sarbp_domain dom, size_t np, size_t ns)
{
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, geom, dom);
    sp.npulses = np;
    sp.nsamples = ns;
    sarbp_phd *p;
    ok(sarbp_simulate(&sp, &p), "simulate");
    return p;
}

/* Gotcha's MATLAB layout: struct data {fp [K][P] complex single, freq [K],
 * x, y, z, r0, th, phi [P], af {r_correct, ph_correct} [P]}. */
static void write_mat(const char *file, const sarbp_phd *p, int with_af, enum matio_compression z)
{
    const size_t K = p->nsamples, P = p->npulses;
    mat_t *mat = Mat_CreateVer(file, NULL, MAT_FT_MAT5);
    if (!mat) {
        fprintf(stderr, "make_seeds: cannot create '%s'\n", file);
        exit(1);
    }
    float *re = malloc(K * P * sizeof *re), *im = malloc(K * P * sizeof *im);
    double *v = malloc((K > P ? K : P) * sizeof *v);
    for (size_t i = 0; i < P; i++)
        for (size_t k = 0; k < K; k++) {
            re[i * K + k] = p->data[i * K + k].re; /* column-major K x P */
            im[i * K + k] = p->data[i * K + k].im;
        }
    const char *fields[] = {"fp", "freq", "x", "y", "z", "r0", "th", "phi", "af"};
    size_t one[2] = {1, 1};
    matvar_t *data = Mat_VarCreateStruct("data", 2, one, fields, with_af ? 9 : 8);
    size_t dfp[2] = {K, P}, dk[2] = {K, 1}, dp[2] = {1, P};
    mat_complex_split_t c = {re, im};
    Mat_VarSetStructFieldByName(data, "fp", 0,
                                Mat_VarCreate("fp", MAT_C_SINGLE, MAT_T_SINGLE, 2, dfp, &c, MAT_F_COMPLEX));
    for (size_t k = 0; k < K; k++) v[k] = p->f0[0] + k * p->df[0];
    Mat_VarSetStructFieldByName(data, "freq", 0, Mat_VarCreate("freq", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dk, v, 0));
    static const char *const xyz[] = {"x", "y", "z"};
    for (int a = 0; a < 3; a++) {
        for (size_t i = 0; i < P; i++) v[i] = p->pos[3 * i + a];
        Mat_VarSetStructFieldByName(data, xyz[a], 0,
                                    Mat_VarCreate(xyz[a], MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, v, 0));
    }
    Mat_VarSetStructFieldByName(data, "r0", 0, Mat_VarCreate("r0", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, p->r0, 0));
    Mat_VarSetStructFieldByName(data, "th", 0, Mat_VarCreate("th", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, p->th, 0));
    Mat_VarSetStructFieldByName(data, "phi", 0, Mat_VarCreate("phi", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, p->phi, 0));
    if (with_af) {
        const char *af_fields[] = {"r_correct", "ph_correct"};
        matvar_t *af = Mat_VarCreateStruct("af", 2, one, af_fields, 2);
        for (size_t i = 0; i < P; i++) v[i] = 0.01 * (double)i;
        Mat_VarSetStructFieldByName(af, "r_correct", 0,
                                    Mat_VarCreate("r_correct", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, v, 0));
        for (size_t i = 0; i < P; i++) v[i] = 0.1 * (double)i;
        Mat_VarSetStructFieldByName(af, "ph_correct", 0,
                                    Mat_VarCreate("ph_correct", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dp, v, 0));
        Mat_VarSetStructFieldByName(data, "af", 0, af);
    }
    if (Mat_VarWrite(mat, data, z)) {
        fprintf(stderr, "make_seeds: cannot write '%s'\n", file);
        exit(1);
    }
    Mat_VarFree(data);
    Mat_Close(mat);
    free(re);
    free(im);
    free(v);
}

/* A .npy of complex128 (the writer makes complex64), written by hand. */
static void write_npy_c16(const char *file)
{
    static const char hdr[] = "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }";
    char h[128];
    size_t hl = sizeof hdr - 1, total = 10 + hl + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(h, hdr, hl);
    memset(h + hl, ' ', pad);
    h[hl + pad] = '\n';
    unsigned short len = (unsigned short)(hl + pad + 1);
    FILE *f = fopen(file, "wb");
    if (!f) {
        perror(file);
        exit(1);
    }
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned char lb[2] = {(unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
    fwrite(lb, 1, 2, f);
    fwrite(h, 1, len, f);
    for (int i = 0; i < 12; i++) {
        double d = 0.5 * i - 1;
        fwrite(&d, sizeof d, 1, f);
    }
    fclose(f);
}

static void write_text(const char *file, const char *s)
{
    FILE *f = fopen(file, "wb");
    if (!f || fputs(s, f) < 0 || fclose(f)) {
        perror(file);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
        return 2;
    }
    root = argv[1];

    sarbp_phd *f = sim(SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ, 4, 16);
    sarbp_phd *c = sim(SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP, 3, 24);
    ok(sarbp_phd_write_h5(path("phd_h5", "sarbp_freq_4x16.h5"), f), "write sarbp-phd (freq)");
    ok(sarbp_phd_write_h5(path("phd_h5", "sarbp_chirp_3x24.h5"), c), "write sarbp-phd (chirp)");
    ok(sarbp_phd_write_gotcha_h5(path("phd_h5", "gotcha_4x16.h5"), f), "write Gotcha-style HDF5");
    write_mat(path("phd_mat", "gotcha_4x16.mat"), f, 1, MAT_COMPRESSION_NONE);
    write_mat(path("phd_mat", "gotcha_4x16_noaf.mat"), f, 0, MAT_COMPRESSION_NONE);
    write_mat(path("phd_mat", "gotcha_4x16_zlib.mat"), f, 1, MAT_COMPRESSION_ZLIB);

    sarbp_grid g = {3, 2, 0.5, 0.25, 1, -2, 0, 0, 0};
    sarbp_image *img;
    ok(sarbp_image_alloc(&g, &img), "image alloc");
    for (size_t i = 0; i < 6; i++) img->data[i] = (sarbp_c32){(float)i - 2.5f, 0.25f * (float)i};
    ok(sarbp_image_set_attr(img, "backend", "cpu"), "image attr");
    ok(sarbp_image_set_attr(img, "coherent_gain", "1"), "image attr");
    ok(sarbp_image_write_h5(path("image_h5", "image_3x2.h5"), img), "write image .h5");
    ok(sarbp_image_write_npy(path("image_npy", "image_3x2_c8.npy"), img), "write image .npy");
    write_npy_c16(path("image_npy", "image_3x2_c16.npy"));
    sarbp_image_free(img);

    static const char *const numbers[] = {"42", "-3.5e2", "0.2,0.25", "-50:50", "1024x768", "4.5G",
                                          "512MiB", "1e-3", "0:469", "1,2,3"};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%02zu", i);
        write_text(path("cli_numbers", name), numbers[i]);
    }
    sarbp_phd_free(f);
    sarbp_phd_free(c);
    printf("make_seeds: wrote the corpora under %s\n", root);
    return 0;
}
