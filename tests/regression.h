/* regression.h - the regression table's row and the code that checks one,
 * shared by test_regression.c (the sample data sets in data/) and
 * test_slow_gotcha_regression.c (the real Gotcha files).
 *
 * A row is checked the way a user's CI would: the sarbp executable forms the
 * phase history into a temporary .h5 with the row's back end and precision,
 * then 'sarbp compare TMP REF --min-ser DB' must exit 0. Rows for back ends
 * that cannot run here (CUDA without a build or a device) are skipped, never
 * passed silently: reg_usable() decides, and fails the test outright when a
 * GPU is visible but the CUDA back end does not work. */
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

/* 1 when the row's back end and precision can run here: cpu rows always;
 * others are tried once on a tiny grid of probe_input. 0 (the caller skips)
 * only for reasons that are not a fault of sarbp: built without CUDA, no GPU
 * visible ('nvidia-smi -L'), or sarbp saying the precision is not
 * implemented yet. Any other failure of the probe fails the test, so a
 * broken GPU path on a GPU machine is never skipped quietly. */
static inline int reg_usable(const reg_row *row, const char *probe_input)
{
    static struct {
        char key[64];
        int usable;
    } cache[16];
    static size_t ncache;
    char key[64];
    if (!strcmp(row->backend, "cpu")) return 1;
    snprintf(key, sizeof key, "%.30s/%.30s", row->backend, row->precision);
    for (size_t i = 0; i < ncache; i++)
        if (!strcmp(cache[i].key, key)) return cache[i].usable;

    char args[2048], why[1024];
    const char *tmp = tu_tmp("reg_probe.h5");
    snprintf(args, sizeof args, "form -q -i '%s' --backend %s --precision %s --grid 8x8 -o '%s'",
             probe_input, row->backend, row->precision, tmp);
    int rc = tu_run_cli(args, reg_out_, sizeof reg_out_, reg_err_, sizeof reg_err_);
    remove(tmp);
    snprintf(why, sizeof why, "%.1000s", reg_err_);
    int usable = rc == 0;
    if (!usable) {
        int built = tu_run_cli("--version", reg_out_, sizeof reg_out_, NULL, 0) == 0 &&
                    strstr(reg_out_, "cuda") && !strstr(reg_out_, "without CUDA");
        int gpu = system("nvidia-smi -L 2>/dev/null | grep -q '^GPU '") == 0;
        const char *reason = !built ? "built without CUDA"
                             : !gpu ? "no GPU visible"
                             : strstr(why, "not implemented") ? "not implemented yet"
                                                              : NULL;
        if (!reason)
            fail_msg("a GPU is visible and sarbp has the cuda back end, but 'sarbp %s' exits %d: %s",
                     args, rc, why);
        print_message("%s %s rows are skipped: %s\n", row->backend, row->precision, reason);
    }
    if (ncache < sizeof cache / sizeof cache[0]) {
        snprintf(cache[ncache].key, sizeof cache[ncache].key, "%s", key);
        cache[ncache++].usable = usable;
    }
    return usable;
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
