/* test_util.h - helpers shared by sarbp's cmocka tests. */
#ifndef SARBP_TEST_UTIL_H
#define SARBP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sarbp/sarbp.h"

/* Runs the sarbp executable with the given argument string (split by the
 * shell: sh -c "SARBP_EXE args"). Returns the exit code (or -1 if it died on
 * a signal: a crash). When err is non-NULL, stderr is captured into err
 * (errn bytes, NUL-terminated); stdout likewise into out. */
int tu_run_cli(const char *args, char *out, size_t outn, char *err, size_t errn);

/* printf-style tu_run_cli that fails the test when sarbp crashed. Files
 * with static char out[], err[] buffers use it as run("form -i %s", p). */
int tu_run_clif(char *out, size_t outn, char *err, size_t errn, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define tu_run(...) tu_run_clif(out, sizeof out, err, sizeof err, __VA_ARGS__)

/* A path in the test build's scratch directory: SARBP_TEST_TMP/<name>. The
 * file is removed first so tests start clean. Returns a static buffer slot
 * (8 rotate). */
const char *tu_tmp(const char *name);
int tu_exists(const char *path);

/* Gotcha inputs: the directory, and whether the data are present (tests
 * skip() when they are not). */
const char *tu_gotcha_dir(void);
int tu_have_gotcha(void);

/* SER in dB of test against ref (n complex values): 10 log10(sum|r|^2 / sum|r-t|^2);
 * +INFINITY when identical. */
double tu_ser_c32(const sarbp_c32 *t, const sarbp_c32 *r, size_t n);
double tu_ser_c32_c64(const sarbp_c32 *t, const sarbp_c64 *r, size_t n);

/* Asserts a status is SARBP_OK, printing the error detail when not. */
#define tu_ok(expr)                                                              \
    do {                                                                         \
        sarbp_status tu_s_ = (expr);                                             \
        if (tu_s_ != SARBP_OK)                                                   \
            fail_msg("%s failed: %s (%s)", #expr, sarbp_strerror(tu_s_),         \
                     sarbp_error_detail());                                      \
    } while (0)

#endif
