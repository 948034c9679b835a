/* test_util.c - helpers shared by sarbp's cmocka tests. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void slurp(const char *path, char *buf, size_t n)
{
    if (!buf || n == 0) return;
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

int tu_run_cli(const char *args, char *out, size_t outn, char *err, size_t errn)
{
    char outp[512], errp[512];
    snprintf(outp, sizeof outp, "%s/cli_%d.out", SARBP_TEST_TMP, (int)getpid());
    snprintf(errp, sizeof errp, "%s/cli_%d.err", SARBP_TEST_TMP, (int)getpid());
    size_t len = strlen(args) + 2 * sizeof outp + strlen(SARBP_EXE) + 64;
    char *cmd = malloc(len);
    assert_non_null(cmd);
    snprintf(cmd, len, "'%s' %s </dev/null >'%s' 2>'%s'", SARBP_EXE, args, outp, errp);
    int rc = system(cmd);
    free(cmd);
    slurp(outp, out, outn);
    slurp(errp, err, errn);
    remove(outp);
    remove(errp);
    if (rc == -1) return -1;
    if (WIFEXITED(rc)) {
        int code = WEXITSTATUS(rc);
        /* sh reports a child killed by signal N as 128 + N */
        if (code > 128) return -1;
        return code;
    }
    return -1;
}

int tu_run_clif(char *out, size_t outn, char *err, size_t errn, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    int rc = tu_run_cli(args, out, outn, err, errn);
    if (rc < 0) fail_msg("'sarbp %s' crashed; stderr: %s", args, err ? err : "");
    return rc;
}

const char *tu_tmp(const char *name)
{
    static char slots[8][512];
    static int next;
    char *p = slots[next++ & 7];
    snprintf(p, 512, "%s/%s", SARBP_TEST_TMP, name);
    remove(p);
    return p;
}

int tu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* SARBP_GOTCHA_DIR in the environment overrides the built-in path (for
 * test binaries run on another machine, such as a GPU node). */
const char *tu_gotcha_dir(void)
{
    const char *e = getenv("SARBP_GOTCHA_DIR");
    return e && *e ? e : SARBP_GOTCHA_DIR;
}

int tu_have_gotcha(void)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/data_3dsar_pass1_az001_HH.mat", tu_gotcha_dir());
    return tu_exists(p);
}

double tu_ser_c32(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = (double)r[i].re - t[i].re, di = (double)r[i].im - t[i].im;
        s += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    if (e == 0) return INFINITY;
    return 10 * log10(s / e);
}

double tu_ser_c32_c64(const sarbp_c32 *t, const sarbp_c64 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = r[i].re - t[i].re, di = r[i].im - t[i].im;
        s += r[i].re * r[i].re + r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    if (e == 0) return INFINITY;
    return 10 * log10(s / e);
}
