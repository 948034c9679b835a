/* regression.h - the regression table's row and the code that checks one,
 * shared by test_regression.c (the sample data sets in data/) and
 * test_slow_gotcha_regression.c (the real Gotcha files).
 *
 * A row is checked the way a user's CI would: the sarbp executable forms the
 * phase history into a temporary .h5 with the row's back end and precision,
 * then 'sarbp compare TMP REF --min-ser DB' must exit 0. Rows for back ends
 * that cannot run here (CUDA without a build or a device) are skipped, never
 * passed silently: reg_cuda_usable() decides, and fails the test outright
 * when a GPU is visible but the CUDA back end does not work. */
#ifndef SARBP_TEST_REGRESSION_H
#define SARBP_TEST_REGRESSION_H

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *dataset;   /* data set name, or "*" for every data set */
    const char *backend;   /* cpu | cuda */
    const char *precision; /* fp64 | fp32 | fp16 */
    double min_ser_db;     /* the threshold given to 'sarbp compare --min-ser' */
} reg_row;

static char reg_out_[65536], reg_err_[65536];

/* 1 when 'sarbp form --backend cuda' runs here (tried on a tiny grid of
 * probe_input); 0 when it cannot because sarbp was built without CUDA or no
 * GPU is visible (the caller skips). A visible GPU with a CUDA build that
 * still fails is a test failure, not a skip. Probes once per process. */
static inline int reg_cuda_usable(const char *probe_input)
{
    static int known = -1;
    if (known >= 0) return known;
    char args[2048];
    const char *tmp = tu_tmp("reg_cuda_probe.h5");
    snprintf(args, sizeof args, "form -q -i '%s' --backend cuda --precision fp32 --grid 8x8 -o '%s'",
             probe_input, tmp);
    int rc = tu_run_cli(args, reg_out_, sizeof reg_out_, reg_err_, sizeof reg_err_);
    remove(tmp);
    if (rc == 0) return known = 1;
    char why[1024];
    snprintf(why, sizeof why, "%.1000s", reg_err_);
    int built = tu_run_cli("--version", reg_out_, sizeof reg_out_, NULL, 0) == 0 &&
                strstr(reg_out_, "cuda") && !strstr(reg_out_, "without CUDA");
    int gpu = system("nvidia-smi -L 2>/dev/null | grep -q '^GPU '") == 0;
    if (built && gpu)
        fail_msg("a GPU is visible and sarbp has the cuda back end, but 'sarbp %s' exits %d: %s",
                 args, rc, why);
    print_message("cuda back end not usable here (%s): its rows are skipped\n",
                  !built ? "built without CUDA" : "no GPU visible");
    return known = 0;
}

/* Prints the figure 'sarbp compare --json' gives for key (a number), or
 * returns NAN when it is not there. */
static inline double reg_json_number(const char *json, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(json, pat);
    if (!p) return NAN;
    p = strchr(p + strlen(pat), ':');
    if (!p) return NAN;
    p++;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '"') p++;
    if (!strncmp(p, "inf", 3) || !strncmp(p, "Infinity", 8)) return INFINITY;
    char *end;
    double v = strtod(p, &end);
    return end == p ? NAN : v;
}

/* Forms input (FORM_ARGS plus the row's back end and precision) into a
 * temporary .h5 and asserts that 'sarbp compare TMP ref --min-ser' passes.
 * label names the case in messages and in the temporary file's name. */
static inline void reg_check(const reg_row *row, const char *label, const char *input,
                             const char *form_args, const char *ref)
{
    char name[256], args[4096];
    snprintf(name, sizeof name, "reg_%s_%s_%s.h5", label, row->backend, row->precision);
    for (char *c = name; *c; c++)
        if (*c == '/' || *c == ' ') *c = '_';
    const char *tmp = tu_tmp(name);

    snprintf(args, sizeof args, "form -q -i '%s' %s --backend %s --precision %s -o '%s'", input,
             form_args, row->backend, row->precision, tmp);
    int rc = tu_run_cli(args, reg_out_, sizeof reg_out_, reg_err_, sizeof reg_err_);
    if (rc != 0) fail_msg("%s: 'sarbp %s' exits %d: %s", label, args, rc, reg_err_);
    assert_true(tu_exists(tmp));

    snprintf(args, sizeof args, "compare '%s' '%s' --min-ser %g --json", tmp, ref, row->min_ser_db);
    rc = tu_run_cli(args, reg_out_, sizeof reg_out_, reg_err_, sizeof reg_err_);
    double ser = reg_json_number(reg_out_, "ser_db");
    if (rc != 0)
        fail_msg("%s %s %s: SER %.2f dB is below the %.1f dB required (compare exits %d)\n"
                 "'sarbp %s'\n%s%s",
                 label, row->backend, row->precision, ser, row->min_ser_db, rc, args, reg_out_,
                 reg_err_);
    print_message("%-16s %-4s %-4s SER %7.2f dB (min %5.1f dB, margin %6.2f dB)\n", label,
                  row->backend, row->precision, ser, row->min_ser_db, ser - row->min_ser_db);
    remove(tmp);
}

#endif
