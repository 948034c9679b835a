/* test_slow_gotcha_regression.c - the real Gotcha files (read from
 * SARBP_GOTCHA_DIR, never copied into the project) formed by every available
 * path and compared at test time with the FP64 CPU image of the same grid:
 * all 469 pulses of the four files on 512 x 512 pixels at 0.2 m.
 *
 * The FP64 reference is formed once, in the group set-up; each row of the
 * table then forms the data again and runs 'sarbp compare --min-ser'.
 * Skipped when the Gotcha files are absent; CUDA rows skip when the CUDA back
 * end cannot run here (see regression.h). */
#include "regression.h"

#include <stdio.h>
#include <string.h>

#define GOTCHA_FORM_ARGS "--grid 512x512 --spacing 0.2"

static const reg_row ROWS[] = {
    /* data set  back end  precision  min SER (dB) */
    {"gotcha", "cpu", "fp32", 60},
    {"gotcha", "cuda", "fp32", 60},
    {"gotcha", "cuda", "fp16", 50},
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
    if (!reg_usable(row, SARBP_DATA_DIR "/point_targets.h5")) skip();
    reg_check(row, "gotcha", tu_gotcha_dir(), GOTCHA_FORM_ARGS, ref);
}

int main(void)
{
    if (!tu_have_gotcha()) {
        printf("skipped: no Gotcha data in '%s'\n", tu_gotcha_dir());
        return 77; /* CTest's SKIP_RETURN_CODE */
    }
    enum { NROWS = sizeof ROWS / sizeof ROWS[0] };
    struct CMUnitTest tests[NROWS];
    static char names[NROWS][96];
    for (size_t r = 0; r < NROWS; r++) {
        snprintf(names[r], sizeof names[r], "gotcha %s %s >= %g dB", ROWS[r].backend,
                 ROWS[r].precision, ROWS[r].min_ser_db);
        tests[r] = (struct CMUnitTest){names[r], test_row, NULL, NULL, (void *)&ROWS[r]};
    }
    return _cmocka_run_group_tests("gotcha regression", tests, NROWS, form_reference,
                                   remove_reference);
}
