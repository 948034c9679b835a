/* cli_util.c - messages, strict number parsing and the progress line. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_verbosity = 1;

static void vsay(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "sarbp: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'sarbp %s --help' for more information.\n", cmd);
    return CLI_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

int cli_fail_status(const char *cmd, sarbp_status s)
{
    (void)s;
    fprintf(stderr, "sarbp: %s: %s\n", cmd, sarbp_error_detail());
    return CLI_FAIL;
}

void cli_info(int level, const char *fmt, ...)
{
    if (cli_verbosity < level) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_size(const char *s, size_t lo, size_t hi, size_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) return -1;
    *out = (size_t)v;
    return 0;
}

int cli_parse_list(const char *s, char sep, double *vals, int nmin, int nmax)
{
    if (!s) return -1;
    int n = 0;
    const char *p = s;
    for (;;) {
        const char *q = strchr(p, sep);
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (n >= nmax || len == 0 || len >= 64) return -1;
        char tmp[64];
        memcpy(tmp, p, len);
        tmp[len] = '\0';
        if (cli_parse_double(tmp, -INFINITY, INFINITY, &vals[n])) return -1;
        n++;
        if (!q) break;
        p = q + 1;
    }
    return n >= nmin ? n : -1;
}

int cli_parse_grid(const char *s, size_t *nx, size_t *ny)
{
    if (!s) return -1;
    const char *x = strpbrk(s, "xX");
    if (!x) return -1;
    char a[32];
    size_t len = (size_t)(x - s);
    if (len == 0 || len >= sizeof a) return -1;
    memcpy(a, s, len);
    a[len] = '\0';
    if (cli_parse_size(a, 1, (size_t)1 << 31, nx)) return -1;
    if (cli_parse_size(x + 1, 1, (size_t)1 << 31, ny)) return -1;
    return 0;
}

int cli_parse_bytes(const char *s, size_t *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v <= 0) return -1;
    double mul = 1;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': mul = 1024.0; break;
        case 'm': case 'M': mul = 1024.0 * 1024; break;
        case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
        case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: return -1;
        }
        if (end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")) return -1;
    }
    *out = (size_t)(v * mul);
    return 0;
}

void cli_json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

void cli_json_num(double v)
{
    if (isnan(v)) fputs("null", stdout);
    else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", stdout);
    else printf("%.10g", v);
}

/* ---- progress ------------------------------------------------------------ */

struct cli_progress {
    sarbp_progress base;
    const char *label;
    double pairs_per_unit;
    double t_start, t_last;
    int printed;
};

static void progress_update(sarbp_progress *base, size_t done, size_t total)
{
    struct cli_progress *p = (struct cli_progress *)base;
    double t = sarbp_now_s();
    if (done < total && t - p->t_last < 0.25) return;
    p->t_last = t;
    double el = t - p->t_start;
    double rate = el > 0 ? done * p->pairs_per_unit / el / 1e6 : 0;
    double left = (done > 0 && done < total) ? el * (double)(total - done) / done : 0;
    fprintf(stderr, "\r%s: %zu/%zu pulses, %.0f Mbp/s, %.0f s left   ", p->label, done, total,
            rate, left);
    p->printed = 1;
}

sarbp_progress *cli_progress_start(const char *label, double pairs_per_unit)
{
    if (cli_verbosity < 1 || !isatty(STDERR_FILENO)) return NULL;
    struct cli_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->base.update = progress_update;
    p->label = label;
    p->pairs_per_unit = pairs_per_unit;
    p->t_start = p->t_last = sarbp_now_s();
    p->t_last -= 1; /* print the first update */
    return &p->base;
}

void cli_progress_end(sarbp_progress *base)
{
    struct cli_progress *p = (struct cli_progress *)base;
    if (!p) return;
    if (p->printed) fputc('\n', stderr);
    free(p);
}
