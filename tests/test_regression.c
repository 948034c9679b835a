/* test_regression.c - image regression on the sample data sets in data/.
 *
 * Every data set listed in data/datasets.txt is formed by every row of the
 * table below and compared with its reference, the exact image (FP64 direct
 * summation over every sample; data/NAME_ref.h5, made by
 * scripts/update-references.sh) through
 * 'sarbp compare --min-ser'. Adding a back end, a precision or a stricter
 * threshold is one line in ROWS; adding a data set is one line in
 * data/datasets.txt plus running scripts/update-references.sh --yes.
 *
 * The last test shows the check can fail: a copy of a reference with a small
 * random phase error (uniform in +-0.05 rad, about 31 dB SER) must make
 * 'sarbp compare --min-ser 70' exit 1. */
#include "regression.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const reg_row ROWS[] = {
    /* data set  back end  precision  min SER (dB) */
    {"*", "cpu", "fp64", 100}, /* cubic 8x vs exact: 101.9, 115.9, 105.5 dB */
    {"*", "cpu", "fp32", 70},  /* 92.9, 88.0, 102.5 dB */
    {"*", "cuda", "fp32", 70}, /* issue 11's bars against the exact image */
    {"*", "cuda", "fp16", 65},
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
    char probe[1024];
    data_path(probe, sizeof probe, sets[0].name, ".h5");
    if (!reg_usable(c->row, probe)) skip();
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

int main(void)
{
    load_datasets();
    const size_t nrows = sizeof ROWS / sizeof ROWS[0];
    reg_case *cases = calloc(nrows * nsets, sizeof *cases);
    struct CMUnitTest *tests = calloc(nrows * nsets + 1, sizeof *tests);
    char(*names)[160] = calloc(nrows * nsets, sizeof *names);
    if (!cases || !tests || !names) return 1;
    size_t n = 0;
    for (size_t r = 0; r < nrows; r++) {
        for (size_t d = 0; d < nsets; d++) {
            if (strcmp(ROWS[r].dataset, "*") && strcmp(ROWS[r].dataset, sets[d].name)) continue;
            cases[n].row = &ROWS[r];
            cases[n].set = &sets[d];
            snprintf(names[n], sizeof names[n], "%.60s %s %s >= %g dB", sets[d].name, ROWS[r].backend,
                     ROWS[r].precision, ROWS[r].min_ser_db);
            tests[n].name = names[n];
            tests[n].test_func = test_row;
            tests[n].initial_state = &cases[n];
            n++;
        }
    }
    tests[n].name = "perturbed reference fails";
    tests[n].test_func = test_perturbed_reference_fails;
    n++;
    int rc = _cmocka_run_group_tests("regression", tests, n, NULL, NULL);
    free(names);
    free(tests);
    free(cases);
    return rc;
}
