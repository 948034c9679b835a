/* regression.h - the regression table's row and the code that checks one,
 * shared by test_regression.c (the sample data sets in data/) and
 * test_slow_gotcha_regression.c (the real Gotcha files).
 *
 * A row is checked the way a user's CI would: the sarbp executable forms the
 * phase history into a temporary .h5 with the row's back end and precision,
 * then 'sarbp compare TMP REF --min-ser BAR' must exit 0, BAR being the
 * row's measured SER minus its headroom. Each program runs the rows of one
 * back end (its first argument, 'cpu' or 'cuda'; CTest registers both, the
 * cuda one labelled gpu): a cuda program that cannot run reports 'skipped'
 * to CTest as a whole (tu_gpu_precondition: no GPU visible, or CUDA switched
 * off), and fails where a GPU is visible but CUDA does not work. A row that
 * errors fails; nothing is skipped row by row. */
#ifndef SARBP_TEST_REGRESSION_H
#define SARBP_TEST_REGRESSION_H

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *dataset;   /* data set name */
    const char *backend;   /* cpu | cuda */
    const char *precision; /* fp64 | fp32 | fp16 */
    double measured_db;    /* SER measured against the reference (where: the table says) */
    double headroom_db;    /* the bar given to 'sarbp compare --min-ser' is measured - headroom */
} reg_row;

static char reg_out_[65536], reg_err_[65536];

/* The back end a regression program runs: argv[1], "cpu" or "cuda"; exits 2
 * on anything else. For cuda, returns tu_gpu_precondition's verdict in
 * *early (0: go on). */
static inline const char *reg_backend_arg(int argc, char **argv, const char *program, int *early)
{
    *early = 0;
    if (argc != 2 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "cuda"))) {
        fprintf(stderr, "usage: %s cpu|cuda\n", program);
        exit(2);
    }
    if (!strcmp(argv[1], "cuda")) *early = tu_gpu_precondition(program);
    return argv[1];
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
 * temporary .h5 and asserts that 'sarbp compare TMP ref --min-ser BAR'
 * passes, printing the row's BAR line. label names the case in messages
 * and in the temporary file's name. */
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

    const double bar = row->measured_db - row->headroom_db;
    snprintf(args, sizeof args, "compare '%s' '%s' --min-ser %.2f --json", tmp, ref, bar);
    rc = tu_run_cli(args, reg_out_, sizeof reg_out_, reg_err_, sizeof reg_err_);
    const double ser = reg_json_number(reg_out_, "ser_db");
    if (rc < 0 || rc > 1)
        fail_msg("%s: 'sarbp %s' exits %d: %s%s", label, args, rc, reg_out_, reg_err_);
    tu_bar_min(ser, row->measured_db, row->headroom_db, "dB", "regression %s %s %s SER", label,
               row->backend, row->precision);
    /* the figure passed; sarbp compare must agree */
    if (rc != 0)
        fail_msg("%s: SER %.2f dB passes the bar %.2f dB but 'sarbp %s' exits %d:\n%s%s", label, ser,
                 bar, args, rc, reg_out_, reg_err_);
    remove(tmp);
}

#endif
