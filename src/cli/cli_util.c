/* cli_util.c - messages, strict number parsing and the progress line. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_verbosity = 1;

/* Prints fmt's text to stderr through sarbp_sanitize: a message may hold a
 * path or a file's string, and no byte of those reaches the terminal raw. */
static void vsay_safe(const char *fmt, va_list ap)
{
    char small[1024], *text = small;
    va_list aq;
    va_copy(aq, ap);
    const int n = vsnprintf(small, sizeof small, fmt, aq);
    va_end(aq);
    if (n < 0) return;
    if ((size_t)n >= sizeof small) {
        text = malloc((size_t)n + 1);
        if (!text) {
            fputs("(message lost: out of memory)", stderr);
            return;
        }
        vsnprintf(text, (size_t)n + 1, fmt, ap);
    }
    fputs(cli_safe(text), stderr);
    if (text != small) free(text);
}

static void vsay(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "sarbp: %s: ", cli_safe(cmd));
    vsay_safe(fmt, ap);
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
    fprintf(stderr, "sarbp: %s: %s\n", cli_safe(cmd), cli_safe(sarbp_error_detail()));
    return CLI_FAIL;
}

void cli_info(int level, const char *fmt, ...)
{
    if (cli_verbosity < level || cli_mpi_rank > 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsay_safe(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b)) return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

const char *cli_safe(const char *s)
{
    enum { SLOTS = 4 };
    static char *slot[SLOTS];
    static size_t cap[SLOTS];
    static unsigned next;
    const unsigned k = next++ % SLOTS;
    const size_t need = sarbp_sanitize(NULL, 0, s) + 1;
    if (need > cap[k]) {
        char *p = realloc(slot[k], need);
        if (!p) return "(text lost: out of memory)";
        slot[k] = p;
        cap[k] = need;
    }
    sarbp_sanitize(slot[k], cap[k], s);
    return slot[k];
}

/* ---- options -------------------------------------------------------------- */

/* The long option an unknown or ambiguous argument names, for the message:
 * "--foo=1" -> "--foo". */
static void option_word(const char *arg, char *buf, size_t n)
{
    size_t len = strcspn(arg, "=");
    if (len >= n) len = n - 1;
    memcpy(buf, arg, len);
    buf[len] = '\0';
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts)
{
    char so[64];
    snprintf(so, sizeof so, "%s%s", shortopts[0] == ':' ? "" : ":", shortopts);
    opterr = 0;
    for (;;) {
        int longind = -1;
        optopt = 0;
        int c = getopt_long(argc, argv, so, longopts, &longind);
        if (c == 'q') {
            cli_verbosity = 0;
            continue;
        }
        if (c == 'v') {
            cli_verbosity++;
            continue;
        }
        if (c != '?' && c != ':') return c;
        /* glibc: optopt is the short option's character, the long option's
         * val when it was given a value it does not take or lacks one, and
         * 0 for a long option it does not know (or an ambiguous prefix). */
        const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
        char word[128];
        option_word(arg, word, sizeof word);
        int is_long = !strncmp(arg, "--", 2);
        if (c == ':') {
            if (is_long) cli_usage(cmd, "option '%s' needs a value", word);
            else cli_usage(cmd, "option '-%c' needs a value", optopt);
        } else if (optopt && !is_long) {
            cli_usage(cmd, "unknown option '-%c'", optopt);
        } else if (optopt) {
            cli_usage(cmd, "option '%s' takes no value", word);
        } else {
            int matches = 0;
            for (const struct option *o = longopts; o->name; o++)
                matches += word[2] && !strncmp(o->name, word + 2, strlen(word + 2));
            cli_usage(cmd, "%s option '%s'", matches > 1 ? "ambiguous" : "unknown", word);
        }
        return CLI_BAD_OPTION;
    }
}

static int stdout_errno; /* why an earlier cli_flush_stdout failed */

void cli_flush_stdout(void)
{
    /* a printf that overflowed the buffer may have failed already: stdio
     * then keeps the error indicator but drops the data, so the fflush
     * below succeeds and only errno, now, says why */
    if (ferror(stdout) && !stdout_errno) stdout_errno = errno;
    if (fflush(stdout) != 0 && !stdout_errno) stdout_errno = errno;
}

int cli_close_stdout(const char *cmd, int rc)
{
    int bad = ferror(stdout), e = stdout_errno;
    errno = 0;
    if (fflush(stdout) != 0) {
        bad = 1;
        if (!e) e = errno;
    }
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad) return rc;
    if (e) fprintf(stderr, "sarbp: %s: cannot write to standard output: %s\n", cmd, strerror(e));
    else fprintf(stderr, "sarbp: %s: cannot write to standard output\n", cmd);
    return rc == CLI_OK ? CLI_FAIL : rc;
}

/* ---- numbers --------------------------------------------------------------- */

/* strtod and strtol skip leading white space and strtoul takes a sign: a
 * number must start with a digit, a sign (where allowed) or a point. */
static int starts_number(const char *s, int sign_ok)
{
    if (!s) return 0;
    if (sign_ok && (*s == '-' || *s == '+')) s++;
    return isdigit((unsigned char)*s) || *s == '.';
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!starts_number(s, 1)) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || !isfinite(v) || !(v >= lo && v <= hi)) return -1;
    if (errno == ERANGE && v != 0) return -1; /* overflow; underflow to 0 is 0 */
    *out = v;
    return 0;
}

int cli_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!starts_number(s, 1)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_int(const char *s, int lo, int hi, int *out)
{
    long v;
    if (cli_parse_long(s, lo, hi, &v)) return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_size(const char *s, size_t lo, size_t hi, size_t *out)
{
    if (!starts_number(s, 0)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) return -1;
    *out = (size_t)v;
    return 0;
}

/* Copies the field [p, p + len) of a list to buf[n] (fields are short). */
static int field(const char *p, size_t len, char *buf, size_t n)
{
    if (len == 0 || len >= n) return -1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return 0;
}

int cli_parse_size_range(const char *s, size_t lo, size_t hi, size_t *a, size_t *b)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    char first[64];
    size_t x, y;
    if (!colon || field(s, (size_t)(colon - s), first, sizeof first) ||
        cli_parse_size(first, lo, hi, &x) || cli_parse_size(colon + 1, lo, hi, &y) || !(x < y))
        return -1;
    *a = x;
    *b = y;
    return 0;
}

/* Calls one(text, k) for each field of s split at sep; the count, or -1. */
static int split(const char *s, char sep, int nmin, int nmax, int (*one)(const char *, int, void *),
                 void *ctx)
{
    if (!s) return -1;
    int n = 0;
    for (const char *p = s;;) {
        const char *q = strchr(p, sep);
        char tmp[64];
        if (n >= nmax || field(p, q ? (size_t)(q - p) : strlen(p), tmp, sizeof tmp) ||
            one(tmp, n, ctx))
            return -1;
        n++;
        if (!q) break;
        p = q + 1;
    }
    return n >= nmin ? n : -1;
}

static int one_double(const char *s, int k, void *ctx)
{
    return cli_parse_double(s, -INFINITY, INFINITY, (double *)ctx + k);
}

int cli_parse_list(const char *s, char sep, double *vals, int nmin, int nmax)
{
    return split(s, sep, nmin, nmax, one_double, vals);
}

struct int_list {
    int lo, hi, *vals;
};

static int one_int(const char *s, int k, void *ctx)
{
    struct int_list *l = ctx;
    return cli_parse_int(s, l->lo, l->hi, &l->vals[k]);
}

int cli_parse_int_list(const char *s, char sep, int lo, int hi, int *vals, int nmin, int nmax)
{
    struct int_list l = {lo, hi, vals};
    return split(s, sep, nmin, nmax, one_int, &l);
}

int cli_parse_devices(const char *s, sarbp_bp_options *o, char *why, size_t n)
{
    if (!strcmp(s, "all")) {
        const int count = sarbp_cuda_device_count();
        o->device = 0;
        o->ndevices = 0;
        if (count > SARBP_MAX_DEVICES) {
            snprintf(why, n, "--device all: %d devices, at most %d are used together", count,
                     SARBP_MAX_DEVICES);
            return -1;
        }
        if (count > 1) {
            o->ndevices = count;
            for (int k = 0; k < count; k++) o->devices[k] = k;
        }
        return 0;
    }
    int d[SARBP_MAX_DEVICES];
    const int k = cli_parse_int_list(s, ',', 0, 1024, d, 1, SARBP_MAX_DEVICES);
    if (k < 0) {
        snprintf(why, n, "--device wants a device number from 0 to 1024, a list such as 0,1 "
                 "(at most %d) or 'all', not '%s'", SARBP_MAX_DEVICES, s);
        return -1;
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < i; j++)
            if (d[i] == d[j]) {
                snprintf(why, n, "--device names device %d twice in '%s'", d[i], s);
                return -1;
            }
    o->device = d[0];
    o->ndevices = k > 1 ? k : 0;
    for (int i = 0; i < k; i++) o->devices[i] = d[i];
    return 0;
}

void cli_report_layout(const char *cmd, const sarbp_form_stats *st)
{
    const sarbp_form_layout *l = &st->layout;
    for (int k = 0; k < l->nparts; k++) {
        const sarbp_form_part *pt = &l->part[k];
        char dev[32] = "";
        if (l->nparts > 1) snprintf(dev, sizeof dev, "device %d: ", pt->device);
        if (pt->bands <= 1)
            cli_info(2, "sarbp: %s: %srows %zu to %zu in one piece", cmd, dev, pt->row0,
                     pt->row0 + pt->nrows);
        else if (pt->kept)
            cli_info(2, "sarbp: %s: %srows %zu to %zu in %zu bands of %zu rows over resident range "
                     "profiles (input read and compressed once)", cmd, dev, pt->row0,
                     pt->row0 + pt->nrows, pt->bands, pt->band_rows);
        else
            cli_info(2, "sarbp: %s: %srows %zu to %zu in %zu bands of %zu rows, streaming: the range "
                     "profiles do not fit the memory budget beside a band, so the input is read and "
                     "compressed once per band", cmd, dev, pt->row0, pt->row0 + pt->nrows, pt->bands,
                     pt->band_rows);
        if (l->nparts > 1) {
            const sarbp_form_dev_stats *d = &st->dev[k];
            const sarbp_stage_times *t = &d->stages;
            cli_info(2, "sarbp: %s: device %d: %.3f s, %.1f Mbp/s (setup %.4f, read %.4f, transfer "
                     "%.4f, range compression %.4f, backprojection %.4f, "
                     "finish %.4f, teardown %.4f s)", cmd, pt->device, d->total_s,
                     d->pairs / (d->total_s > 0 ? d->total_s : 1) / 1e6, t->setup_s, d->read_s,
                     t->transfer_s, t->rc_s, t->bp_s, t->finish_s, d->teardown_s);
        }
    }
}

int cli_parse_grid(const char *s, size_t max, size_t *nx, size_t *ny)
{
    const char *x = s ? strpbrk(s, "xX") : NULL;
    char a[32];
    size_t u, v;
    if (!x || field(s, (size_t)(x - s), a, sizeof a) || cli_parse_size(a, 1, max, &u) ||
        cli_parse_size(x + 1, 1, max, &v))
        return -1;
    *nx = u;
    *ny = v;
    return 0;
}

int cli_parse_bytes(const char *s, size_t *out)
{
    if (!starts_number(s, 0)) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || !(v > 0)) return -1;
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
    /* in range before the conversion: 2^62 bytes is more than any machine */
    const double bytes = v * mul;
    if (!(bytes >= 1 && bytes <= 0x1p62)) return -1;
    *out = (size_t)bytes;
    return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

void cli_json_fstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const char *p = s ? s : ""; *p;) {
        unsigned cp = 0;
        const int n = sarbp_utf8_decode(p, &cp);
        if (n == 0) fputs("\\ufffd", f); /* not UTF-8: the replacement character */
        else if (cp == '"' || cp == '\\') fprintf(f, "\\%c", (int)cp);
        /* every control character (C0, DEL, C1) and the two line separators
         * JavaScript does not take in a string */
        else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
            fprintf(f, "\\u%04x", cp);
        else fwrite(p, 1, (size_t)n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

void cli_json_str(const char *s)
{
    cli_json_fstr(stdout, s);
}

void cli_json_num(double v)
{
    if (isnan(v)) fputs("null", stdout);
    else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", stdout);
    else printf("%.10g", v);
}

/* ---- progress ------------------------------------------------------------ */

/* Two forms: on a terminal one line rewritten in place (\r) at most 4 times
 * a second; otherwise (a pipe, a log file, a scheduler's output) a plain
 * line of its own every log interval, the first one interval after the
 * start, so a run shorter than that prints nothing. */
#define PROGRESS_TTY_S 0.25
#define PROGRESS_LOG_S 20.0

struct cli_progress {
    sarbp_progress base;
    const char *label;
    double pairs_per_unit;
    double t_start, t_last;
    double interval; /* seconds between lines */
    int tty;         /* stderr is a terminal */
    int printed;
};

/* SARBP_PROGRESS_INTERVAL (seconds, 0.01 to 86400) when set and valid,
 * else PROGRESS_LOG_S */
static double progress_log_interval(void)
{
    const char *e = getenv("SARBP_PROGRESS_INTERVAL");
    double v;
    if (e && *e && !cli_parse_double(e, 0.01, 86400, &v)) return v;
    return PROGRESS_LOG_S;
}

/* "under 1 s left", "about 40 s left", "about 12 min left", "about 3.5 h left" */
static void format_left(char *buf, size_t n, double s)
{
    if (s < 1) snprintf(buf, n, "under 1 s left");
    else if (s < 120) snprintf(buf, n, "about %.0f s left", s);
    else if (s < 7200) snprintf(buf, n, "about %.0f min left", s / 60);
    else snprintf(buf, n, "about %.1f h left", s / 3600);
}

static void progress_update(sarbp_progress *base, size_t done, size_t total)
{
    struct cli_progress *p = (struct cli_progress *)base;
    double t = sarbp_now_s();
    if (done < total && t - p->t_last < p->interval) return;
    double el = t - p->t_start;
    double rate = el > 0 ? done * p->pairs_per_unit / el / 1e6 : 0;
    double left = (done > 0 && done < total) ? el * (double)(total - done) / done : 0;
    if (p->tty) {
        p->t_last = t;
        fprintf(stderr, "\r%s: %zu/%zu pulses, %.0f Mbp/s, %.0f s left   ", p->label, done,
                total, rate, left);
        p->printed = 1;
        return;
    }
    if (done >= total) return; /* the end needs no line: the run's own messages follow */
    p->t_last = t;
    char lbuf[48] = "time left unknown";
    if (done > 0) format_left(lbuf, sizeof lbuf, left);
    const int pct = total ? (int)(100.0 * (double)done / (double)total) : 0; /* never 100 early */
    if (rate >= 1000)
        fprintf(stderr, "sarbp: %s: %d%% (%zu of %zu pulses), %.2f Gbp/s, %s\n", p->label, pct,
                done, total, rate / 1000, lbuf);
    else
        fprintf(stderr, "sarbp: %s: %d%% (%zu of %zu pulses), %.1f Mbp/s, %s\n", p->label, pct,
                done, total, rate, lbuf);
    fflush(stderr);
}

sarbp_progress *cli_progress_start(const char *label, double pairs_per_unit)
{
    if (cli_verbosity < 1 || cli_mpi_rank > 0) return NULL;
    struct cli_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->base.update = progress_update;
    p->label = label;
    p->pairs_per_unit = pairs_per_unit;
    p->tty = isatty(STDERR_FILENO);
    p->interval = p->tty ? PROGRESS_TTY_S : progress_log_interval();
    p->t_start = p->t_last = sarbp_now_s();
    if (p->tty) p->t_last -= 1; /* print the first update */
    return &p->base;
}

void cli_progress_end(sarbp_progress *base)
{
    struct cli_progress *p = (struct cli_progress *)base;
    if (!p) return;
    if (p->printed) fputc('\n', stderr);
    free(p);
}
