/* test_slow_gotcha_regression.c - the real Gotcha files (read from
 * SARBP_GOTCHA_DIR, never copied into the project) formed by every path of
 * the program's back end ('cpu' or 'cuda', two CTest tests, the second also
 * labelled gpu) and compared at test time with the FP64 CPU image of the
 * same grid: all 469 pulses of the four files on 512 x 512 pixels at 0.2 m.
 *
 * The FP64 reference is formed once, in the group set-up; each row of the
 * table then forms the data again and runs 'sarbp compare --min-ser' with
 * the row's measured SER minus its headroom. Reported to CTest as skipped
 * when the Gotcha files are absent (and, for cuda, as regression.h says). */
#include "regression.h"

#include <stdio.h>
#include <string.h>

#define GOTCHA_FORM_ARGS "--grid 512x512 --spacing 0.2"

/* Measured: cpu on this machine class (2-core AMD EPYC); cuda on an NVIDIA
 * H200 (docs/benchmarks/2026-11-journal.md), default variant v3, raw samples in FP32.
 * The floors were 60 dB (FP32) and 50 dB (FP16). */
static const reg_row ROWS[] = {
    /* data set back end precision measured headroom */
    {"gotcha", "cpu",  "fp32", 89.11, 6},
    {"gotcha", "cuda", "fp32", 90.9, 5},
    {"gotcha", "cuda", "fp16", 70.7, 4},
};

static char ref[1024];

static int form_reference(void **state)
{
    (void)state;
    snprintf(ref, sizeof ref, "%s", tu_tmp("reg_gotcha_fp64_ref.h5"));
    char args[4096], err[16384];
    snprintf(args, sizeof args,
             "form -q -i '%s' " GOTCHA_FORM_ARGS " --backend cpu --precision fp64 -o '%s'",
             tu_gotcha_dir(), ref);
    int rc = tu_run_cli(args, NULL, 0, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "'sarbp %s' exits %d: %s", args, rc, err);
        return -1;
    }
    return 0;
}

static int remove_reference(void **state)
{
    (void)state;
    if (ref[0]) remove(ref);
    return 0;
}

static void test_row(void **state)
{
    const reg_row *row = *state;
    reg_check(row, "gotcha", tu_gotcha_dir(), GOTCHA_FORM_ARGS, ref);
}

int main(int argc, char **argv)
{
    int early;
    const char *backend = reg_backend_arg(argc, argv, "test_slow_gotcha_regression", &early);
    if (early) return early;
    if (!tu_have_gotcha()) {
        printf("test_slow_gotcha_regression: skipped: no Gotcha data in '%s'\n", tu_gotcha_dir());
        return TU_SKIP_RC;
    }
    enum { NROWS = sizeof ROWS / sizeof ROWS[0] };
    struct CMUnitTest tests[NROWS];
    static char names[NROWS][96];
    size_t n = 0;
    for (size_t r = 0; r < NROWS; r++) {
        if (strcmp(ROWS[r].backend, backend)) continue;
        snprintf(names[n], sizeof names[n], "gotcha %s %s >= %.2f dB", ROWS[r].backend,
                 ROWS[r].precision, ROWS[r].measured_db - ROWS[r].headroom_db);
        tests[n] = (struct CMUnitTest){names[n], test_row, NULL, NULL, (void *)&ROWS[r]};
        n++;
    }
    return tu_run_group(backend, tests, n, form_reference, remove_reference);
}
