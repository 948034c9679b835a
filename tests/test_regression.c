/* test_regression.c - image regression on the sample data sets in data/.
 *
 * Every data set listed in data/datasets.txt is formed by every row of the
 * table below for the program's back end ('test_regression cpu' and
 * 'test_regression cuda', two CTest tests, the second labelled gpu) and
 * compared with its reference, the exact image (FP64 direct summation over
 * every sample; data/NAME_ref.h5, made by scripts/update-references.sh)
 * through 'sarbp compare --min-ser'. Each row's bar is its measured SER
 * minus a stated headroom. Adding a data set is one line in
 * data/datasets.txt, running scripts/update-references.sh --yes, and one
 * measured row per back end and precision here: a data set without its
 * rows fails.
 *
 * The last test (cpu) shows the check can fail: a copy of a reference with
 * a small random phase error (uniform in +-0.05 rad, about 31 dB SER) must
 * make 'sarbp compare --min-ser 70' exit 1. */
#include "regression.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Measured SER against the exact references, dB, with form's default range
 * processing (the quadratic B-spline at 8x; fp16: the cubic at 4x): what
 * every row measures is mostly the interpolation, so FP64 and FP32 read
 * alike. cpu: this machine class (2-core AMD EPYC; the quadratic's rows on
 * an AVX2 one, 2026-11-26), Release build with GCC; the clang ASan/UBSan
 * build reads within 0.1 dB. cuda: NVIDIA H200 (docs/benchmarks/2026-11-journal.md),
 * default variant v3; the fp32 rows with the quadratic on one of a
 * two-H200 host, 2026-11-26. Headroom: 3 dB for the CPU rows (rounding of the
 * build), 5 dB for CUDA FP32, 5 dB for CUDA FP16 (issue 11's floors: 70 dB
 * for the default path, 65 dB in FP16). */
static const reg_row ROWS[] = {
    /* data set        back end precision measured headroom */
    {"point_targets",  "cpu",  "fp64", 76.81, 3},
    {"clutter",        "cpu",  "fp64", 89.41, 3},
    {"stripmap_chirp", "cpu",  "fp64", 78.97, 3},
    {"point_targets",  "cpu",  "fp32", 76.81, 3},
    {"clutter",        "cpu",  "fp32", 89.08, 3},
    {"stripmap_chirp", "cpu",  "fp32", 78.93, 3},
    {"point_targets",  "cuda", "fp32", 76.75, 5},
    {"clutter",        "cuda", "fp32", 87.10, 5},
    {"stripmap_chirp", "cuda", "fp32", 78.73, 5},
    {"point_targets",  "cuda", "fp16", 73.69, 5},
    {"clutter",        "cuda", "fp16", 72.51, 5},
    {"stripmap_chirp", "cuda", "fp16", 78.05, 5},
};

#define MAX_SETS 32

typedef struct {
    char name[64];
    char form_args[512];
} dataset;

typedef struct {
    const reg_row *row;
    const dataset *set;
} reg_case;

static dataset sets[MAX_SETS];
static size_t nsets;

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = '\0';
    return s;
}

/* data/datasets.txt: "name | simulate arguments | form arguments" per line. */
static void load_datasets(void)
{
    const char *path = SARBP_DATA_DIR "/datasets.txt";
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test_regression: cannot open '%s'\n", path);
        exit(1);
    }
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        char *bar1 = strchr(s, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
        if (!bar2 || nsets == MAX_SETS) {
            fprintf(stderr, "test_regression: '%s': bad line '%s'\n", path, s);
            exit(1);
        }
        *bar1 = *bar2 = '\0';
        snprintf(sets[nsets].name, sizeof sets[nsets].name, "%s", trim(s));
        snprintf(sets[nsets].form_args, sizeof sets[nsets].form_args, "%s", trim(bar2 + 1));
        nsets++;
    }
    fclose(f);
    if (nsets == 0) {
        fprintf(stderr, "test_regression: '%s' lists no data sets\n", path);
        exit(1);
    }
}

static void data_path(char *buf, size_t n, const char *name, const char *suffix)
{
    snprintf(buf, n, "%s/%s%s", SARBP_DATA_DIR, name, suffix);
}

static void test_row(void **state)
{
    const reg_case *c = *state;
    char input[1024], ref[1024];
    data_path(input, sizeof input, c->set->name, ".h5");
    data_path(ref, sizeof ref, c->set->name, "_ref.h5");
    if (!tu_exists(input) || !tu_exists(ref))
        fail_msg("'%s' or '%s' is missing: run scripts/update-references.sh --yes", input, ref);
    reg_check(c->row, c->set->name, input, c->set->form_args, ref);
}

/* Uniform in [-1, 1), deterministic (xorshift64). */
static double uniform_pm1(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void test_perturbed_reference_fails(void **state)
{
    (void)state;
    char ref[1024], args[4096], out[16384], err[16384];
    data_path(ref, sizeof ref, sets[0].name, "_ref.h5");

    /* The unperturbed reference passes against itself... */
    snprintf(args, sizeof args, "compare '%s' '%s' --min-ser 70", ref, ref);
    int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
    if (rc != 0) fail_msg("'sarbp %s' exits %d: %s%s", args, rc, out, err);

    /* ...a copy with a phase error of +-0.05 rad does not. */
    sarbp_image *img = NULL;
    tu_ok(sarbp_image_read(ref, &img));
    const size_t n = img->grid.nx * img->grid.ny;
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < n; i++) {
        const double phi = 0.05 * uniform_pm1(&seed);
        const double c = cos(phi), s = sin(phi);
        const double re = img->data[i].re, im = img->data[i].im;
        img->data[i].re = (float)(re * c - im * s);
        img->data[i].im = (float)(re * s + im * c);
    }
    const char *bad = tu_tmp("reg_perturbed_ref.h5");
    tu_ok(sarbp_image_write_h5(bad, img));
    sarbp_image_free(img);

    snprintf(args, sizeof args, "compare '%s' '%s' --min-ser 70", bad, ref);
    rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
    print_message("phase-perturbed copy: 'sarbp compare --min-ser 70' exits %d\n%s%s", rc, out,
                  err);
    assert_int_equal(rc, 1);
    remove(bad);
}

int main(int argc, char **argv)
{
    int early;
    const char *backend = reg_backend_arg(argc, argv, "test_regression", &early);
    if (early) return early;
    load_datasets();
    const size_t nrows = sizeof ROWS / sizeof ROWS[0];
    reg_case *cases = calloc(nrows * nsets, sizeof *cases);
    struct CMUnitTest *tests = calloc(nrows * nsets + 1, sizeof *tests);
    char(*names)[160] = calloc(nrows * nsets, sizeof *names);
    if (!cases || !tests || !names) return 1;
    size_t n = 0;
    for (size_t d = 0; d < nsets; d++) {
        size_t rows_for_set = 0;
        for (size_t r = 0; r < nrows; r++) {
            if (strcmp(ROWS[r].dataset, sets[d].name)) continue;
            rows_for_set++;
            if (strcmp(ROWS[r].backend, backend)) continue;
            cases[n].row = &ROWS[r];
            cases[n].set = &sets[d];
            snprintf(names[n], sizeof names[n], "%.60s %s %s >= %.2f dB", sets[d].name,
                     ROWS[r].backend, ROWS[r].precision, ROWS[r].measured_db - ROWS[r].headroom_db);
            tests[n].name = names[n];
            tests[n].test_func = test_row;
            tests[n].initial_state = &cases[n];
            n++;
        }
        if (rows_for_set == 0) {
            fprintf(stderr, "test_regression: data set '%s' has no measured rows in ROWS\n",
                    sets[d].name);
            return 1;
        }
    }
    if (!strcmp(backend, "cpu")) {
        tests[n].name = "perturbed reference fails";
        tests[n].test_func = test_perturbed_reference_fails;
        n++;
    }
    int rc = tu_run_group(backend, tests, n, NULL, NULL);
    free(names);
    free(tests);
    free(cases);
    return rc;
}
