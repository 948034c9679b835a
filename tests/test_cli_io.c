/* test_cli_io.c - 'sarbp info' and 'sarbp convert' through the executable.
 *
 * Exit codes (0, 1 failure, 2 usage) and the stderr line for bad flags and bad
 * files; that a failed convert leaves no output (nor a temporary); that info
 * --json is one well-formed JSON object; convert round trips, with pulse and
 * azimuth windows and autofocus. Gotcha cases skip without the data. */
#include "test_util.h"

#include <ctype.h>
#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16], err[1 << 14];

#define run tu_run /* printf-style, fails on a crash */

static void expect(int rc, int want, const char *stream, const char *text)
{
    if (rc != want) fail_msg("exit %d, want %d; stdout: %s; stderr: %s", rc, want, out, err);
    if (text && !strstr(stream, text)) fail_msg("output lacks '%s'; stdout: %s; stderr: %s", text, out, err);
}

static void contains(const char *stream, const char *text)
{
    if (!strstr(stream, text)) fail_msg("output lacks '%s'; stdout: %s; stderr: %s", text, out, err);
}

/* ---- a small JSON syntax checker (RFC 8259, no extensions) ---------------- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
    if (*p++ != '"') return NULL;
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i])) return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                return NULL;
            }
        }
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *number(const char *p)
{
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (isdigit((unsigned char)*p)) while (isdigit((unsigned char)*p)) p++;
    else return NULL;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return NULL;
        while (isdigit((unsigned char)*p)) p++;
    }
    return p;
}

static const char *value(const char *p, int depth)
{
    if (depth > 32) return NULL;
    p = ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (obj) {
                if (!(p = string(ws(p)))) return NULL;
                p = ws(p);
                if (*p++ != ':') return NULL;
            }
            if (!(p = value(p, depth + 1))) return NULL;
            p = ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"') return string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    return number(p);
}

/* One JSON object and nothing else. */
static int is_json_object(const char *s)
{
    const char *p = ws(s);
    if (*p != '{') return 0;
    p = value(p, 0);
    return p && *ws(p) == '\0';
}

static void test_json_checker(void **state)
{
    (void)state;
    assert_true(is_json_object("{\"a\": [1, -2.5e3, true, null, {\"b\": \"x\\\"y\"}]}\n"));
    assert_false(is_json_object("{\"a\": 1,}"));
    assert_false(is_json_object("{\"a\": nan}"));
    assert_false(is_json_object("{\"a\": 1} {}"));
    assert_false(is_json_object("[1]"));
}

/* ---- fixtures --------------------------------------------------------------- */

static sarbp_phd *make_phd(size_t np, size_t k)
{
    sarbp_phd *p;
    tu_ok(sarbp_phd_alloc(SARBP_DOMAIN_FREQ, np, k, 1, &p));
    tu_ok(sarbp_phd_alloc_optional(p, &p->r_correct));
    tu_ok(sarbp_phd_alloc_optional(p, &p->ph_correct));
    for (size_t i = 0; i < np; i++) {
        double a = (20.0 + 0.02 * (double)i) * M_PI / 180;
        p->pos[3 * i + 0] = 8000 * cos(a);
        p->pos[3 * i + 1] = 8000 * sin(a);
        p->pos[3 * i + 2] = 6000;
        p->r0[i] = 10000;
        p->f0[i] = 9.6e9;
        p->df[i] = 1.0e6;
        p->r_correct[i] = 0.001 * (double)i;
        p->ph_correct[i] = 0.01 * (double)i;
        for (size_t j = 0; j < k; j++) {
            p->data[i * k + j].re = (float)cos(0.3 * (double)(i + j));
            p->data[i * k + j].im = (float)sin(0.2 * (double)i - 0.1 * (double)j);
        }
    }
    return p;
}

static int count_prefixed(const char *prefix)
{
    DIR *d = opendir(SARBP_TEST_TMP);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

static sarbp_phd *load(const char *path)
{
    sarbp_phd *p;
    tu_ok(sarbp_phd_load(&path, 1, &p));
    return p;
}

/* ---- usage ------------------------------------------------------------------ */

static void test_usage(void **state)
{
    (void)state;
    expect(run("info --help"), 0, out, "usage: sarbp info");
    expect(run("convert --help"), 0, out, "usage: sarbp convert");
    expect(run("info"), 2, err, "Try 'sarbp info --help'");
    expect(run("info --bogus x.h5"), 2, err, "sarbp: info: unknown option '--bogus'");
    expect(run("info -Z x.h5"), 2, err, "unknown option '-Z'");
    expect(run("info --json=1 x.h5"), 2, err, "takes no value");
    expect(run("info -i"), 2, err, "needs a value");
    expect(run("convert --bogus"), 2, err, "Try 'sarbp convert --help'");
    expect(run("convert x.h5"), 2, err, "no output given");
    expect(run("convert -o y.h5"), 2, err, "no input given");
    expect(run("convert x.h5 -o y.h5 --pulses 5:2"), 2, err, "--pulses wants I0:I1");
    expect(run("convert x.h5 -o y.h5 --pulses 5"), 2, err, "--pulses wants I0:I1");
    expect(run("convert x.h5 -o y.h5 --azimuth 1:abc"), 2, err, "--azimuth wants A0:A1");
    expect(run("convert x.h5 -o y.h5 --pulses 0:2 --azimuth 1:2"), 2, err, "cannot be combined");
}

/* ---- bad files -------------------------------------------------------------- */

static void test_bad_files(void **state)
{
    (void)state;
    const char *txt = tu_tmp("cli_text.mat");
    FILE *f = fopen(txt, "w");
    fputs("hello\n", f);
    fclose(f);
    expect(run("info '%s'", txt), 1, err, "sarbp: info: '");
    contains(err, "': not a CPHD, MATLAB or HDF5 file");
    expect(run("info '%s/nope.h5'", SARBP_TEST_TMP), 1, err, "sarbp: info: cannot open '");
    contains(err, "No such file or directory");

    const char *o = tu_tmp("cli_bad_out.h5");
    expect(run("convert '%s' -o '%s'", txt, o), 1, err, "sarbp: convert: '");
    assert_false(tu_exists(o));
    assert_int_equal(count_prefixed("cli_bad_out.h5"), 0);

    /* a failure after the output was started: a NaN sample in pulse 150 */
    sarbp_phd *p = make_phd(200, 64);
    const char *in = tu_tmp("cli_nan_in.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(in, p));
    sarbp_phd_free(p);
    hid_t h = H5Fopen(in, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(h, "data/fp", H5P_DEFAULT);
    hid_t fs = H5Dget_space(d), ms, mt = H5Tcreate(H5T_COMPOUND, sizeof(sarbp_c32));
    H5Tinsert(mt, "real", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(mt, "imag", sizeof(float), H5T_NATIVE_FLOAT);
    hsize_t start[2] = {150, 9}, count[2] = {1, 1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    ms = H5Screate_simple(2, count, NULL);
    const sarbp_c32 bad = {NAN, 0};
    assert_true(H5Dwrite(d, mt, ms, fs, H5P_DEFAULT, &bad) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
    H5Dclose(d);
    assert_true(H5Fclose(h) >= 0);
    expect(run("convert '%s' -o '%s'", in, o), 1, err, "sample 9 of pulse 150 is NaN or Inf");
    assert_false(tu_exists(o));
    assert_int_equal(count_prefixed("cli_bad_out.h5"), 0);
    expect(run("info '%s'", in), 0, out, "200"); /* info reads no samples */

    expect(run("convert '%s' -o '%s' --pulses 10:500", in, o), 1, err, "sarbp: convert: ");
    assert_false(tu_exists(o));
    expect(run("convert '%s' -o '%s/no-dir/x.h5'", in, SARBP_TEST_TMP), 1, err, "cannot create");
    expect(run("convert '%s' -o '%s' --azimuth 80:90", in, o), 1, err, "no pulse has azimuth");
    assert_false(tu_exists(o));
    assert_int_equal(count_prefixed("cli_bad_out.h5"), 0);
}

/* ---- info and convert on made-up data --------------------------------------- */

static void test_convert_roundtrip(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(150, 40);
    const char *in = tu_tmp("cli_in.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(in, p));

    expect(run("info '%s'", in), 0, out, "pulses:             150");
    contains(out, "samples per pulse:  40");
    contains(out, "Gotcha HDF5");
    expect(run("info --json -i '%s'", in), 0, out, "\"npulses\": 150");
    if (!is_json_object(out)) fail_msg("not one JSON object: %s", out);

    const char *o = tu_tmp("cli_out.h5");
    expect(run("convert '%s' -o '%s'", in, o), 0, out, NULL);
    assert_string_equal(err, "");
    sarbp_phd *q = load(o);
    assert_int_equal(q->npulses, 150);
    assert_memory_equal(q->data, p->data, 150 * 40 * sizeof *p->data);
    assert_memory_equal(q->pos, p->pos, 150 * 3 * sizeof(double));
    assert_non_null(q->ph_correct);
    sarbp_phd_free(q);
    expect(run("info '%s'", o), 0, out, "sarbp-phd");

    /* a pulse window, then again from the converted file (sarbp -> sarbp) */
    const char *o2 = tu_tmp("cli_out2.h5");
    expect(run("convert -i '%s' --pulses 10:35 --output='%s' -v", o, o2), 0, err, "wrote 25 pulses");
    q = load(o2);
    assert_int_equal(q->npulses, 25);
    assert_memory_equal(q->data, p->data + 10 * 40, 25 * 40 * sizeof *p->data);
    assert_memory_equal(q->r0, p->r0 + 10, 25 * sizeof(double));
    sarbp_phd_free(q);

    /* autofocus: applied, and the af fields gone */
    expect(run("convert '%s' -o '%s' --autofocus --pulses 100:110", in, o2), 0, out, NULL);
    q = load(o2);
    assert_null(q->r_correct);
    assert_null(q->ph_correct);
    for (size_t i = 0; i < 10; i++) {
        assert_true(q->r0[i] == p->r0[100 + i] + p->r_correct[100 + i]);
        double c = cos(p->ph_correct[100 + i]), s = sin(p->ph_correct[100 + i]);
        const sarbp_c32 a = p->data[(100 + i) * 40 + 7], b = q->data[i * 40 + 7];
        assert_true(fabs(b.re - (a.re * c - a.im * s)) < 1e-6);
        assert_true(fabs(b.im - (a.re * s + a.im * c)) < 1e-6);
    }
    sarbp_phd_free(q);

    /* azimuth window: pulses 20 + 0.02 i deg, [21, 22] holds i = 50..100 */
    expect(run("convert '%s' -o '%s' --azimuth 21:22", in, o2), 0, out, NULL);
    q = load(o2);
    assert_int_equal(q->npulses, 51);
    assert_memory_equal(q->data, p->data + 50 * 40, 51 * 40 * sizeof *p->data);
    sarbp_phd_free(q);
    sarbp_phd_free(p);
}

/* ---- the Gotcha files ------------------------------------------------------- */

static void test_gotcha(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    const char *dir = tu_gotcha_dir();
    expect(run("info '%s'", dir), 0, out, "469");
    contains(out, "samples per pulse:  424");
    contains(out, "9.288080 GHz");
    expect(run("info --json '%s'", dir), 0, out, "\"npulses\": 469");
    if (!is_json_object(out)) fail_msg("not one JSON object: %s", out);
    contains(out, "\"nsamples\": 424");

    const char *o = tu_tmp("cli_gotcha.h5");
    expect(run("convert '%s' -o '%s'", dir, o), 0, out, NULL);
    sarbp_phd *a = load(dir), *b = load(o);
    assert_int_equal(b->npulses, 469);
    assert_memory_equal(a->data, b->data, 469 * 424 * sizeof *a->data);
    assert_memory_equal(a->pos, b->pos, 469 * 3 * sizeof(double));
    assert_memory_equal(a->df, b->df, 469 * sizeof(double));
    sarbp_phd_free(b);

    /* the second degree with autofocus */
    expect(run("convert '%s/*.mat' -o '%s' --azimuth 1:2 --autofocus", dir, o), 0, out, NULL);
    size_t i0, i1;
    tu_ok(sarbp_phd_azimuth_range(a, 1, 2, &i0, &i1));
    b = load(o);
    assert_int_equal(b->npulses, i1 - i0);
    for (size_t i = 0; i < b->npulses; i++)
        assert_true(b->r0[i] == a->r0[i0 + i] + a->r_correct[i0 + i]);
    sarbp_phd_free(b);
    sarbp_phd_free(a);
}

/* ---- every command: options, stdout, -q/-v ------------------------------- */

static const char *const commands[] = {"form", "simulate", "info", "convert",
                                       "compare", "metrics", "bench"};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Runs sarbp with stdout on /dev/full (a disk that is always full): stderr
 * into err. Returns the exit code, or -1 for a crash. */
static int run_full(const char *fmt, ...)
{
    char args[2048], errp[600], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(errp, sizeof errp, "%s/cli_full_%d.err", SARBP_TEST_TMP, (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' %s </dev/null >/dev/full 2>'%s'", SARBP_EXE, args, errp);
    int rc = system(cmd);
    err[0] = '\0';
    FILE *f = fopen(errp, "r");
    if (f) {
        size_t n = fread(err, 1, sizeof err - 1, f);
        err[n] = '\0';
        fclose(f);
    }
    remove(errp);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) > 128) fail_msg("'sarbp %s' crashed: %s", args, err);
    return WEXITSTATUS(rc);
}

/* An unknown option is one line naming it plus the hint, nothing else
 * (getopt's own message is off); -q and -v are accepted by every command;
 * --help to a full disk is a failure. */
static void test_every_command(void **state)
{
    (void)state;
    const int have_full = access("/dev/full", W_OK) == 0;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const char *c = commands[i];
        char want[256];
        const char *bad[][2] = {{"--foo", "--foo"}, {"--foo=3", "--foo"}, {"-Z", "-Z"}};
        for (size_t k = 0; k < 3; k++) {
            int rc = run("%s %s", c, bad[k][0]);
            snprintf(want, sizeof want,
                     "sarbp: %s: unknown option '%s'\nTry 'sarbp %s --help' for more information.\n",
                     c, bad[k][1], c);
            if (rc != 2 || strcmp(err, want))
                fail_msg("'sarbp %s %s': exit %d, stderr:\n%swant exit 2 and:\n%s", c, bad[k][0], rc,
                         err, want);
        }
        expect(run("%s -q -v --quiet --verbose --help", c), 0, out, "usage: sarbp ");
        if (!have_full) continue;
        int rc = run_full("%s --help", c);
        snprintf(want, sizeof want, "sarbp: %s: cannot write to standard output: No space left on device\n", c);
        if (rc != 1 || strcmp(err, want))
            fail_msg("'sarbp %s --help >/dev/full': exit %d, stderr: %s", c, rc, err);
    }
    /* the value checks share the scanner */
    expect(run("compare --window"), 2, err, "sarbp: compare: option '--window' needs a value");
    expect(run("bench --json=yes"), 2, err, "sarbp: bench: option '--json' takes no value");
    expect(run("bench --precision fp32,fp8"), 2, err,
           "sarbp: bench: --precision wants a list of fp32, fp16 and mixed");
    expect(run("compare --min 3 a.h5 b.h5"), 2, err, "sarbp: compare: ambiguous option '--min'");
    expect(run("--version"), 0, out, "sarbp ");
    if (!have_full) tu_skip("no writable /dev/full: the option checks ran, the full-disk ones could not");
    assert_int_equal(run_full("--version"), 1);
}

/* Results to a full disk: exit 1 with one message, for text and JSON. */
static void test_stdout_full(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0) tu_skip("no writable /dev/full");
    sarbp_phd *p = make_phd(20, 16);
    const char *in = tu_tmp("cli_full_in.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(in, p));
    sarbp_phd_free(p);
    assert_int_equal(run_full("info --json '%s'", in), 1);
    assert_string_equal(err, "sarbp: info: cannot write to standard output: No space left on device\n");
    assert_int_equal(run_full("info '%s'", in), 1);
    assert_non_null(strstr(err, "sarbp: info: cannot write to standard output"));
    assert_int_equal(run_full("bench --grid 8x8 --pulses 4 --samples 8 --threads 1 --json"), 1);
    assert_non_null(strstr(err, "sarbp: bench: cannot write to standard output"));
    /* a command that prints nothing to stdout is not troubled by it */
    const char *o = tu_tmp("cli_full_out.h5");
    assert_int_equal(run_full("convert -q '%s' -o '%s'", in, o), 0);
    assert_true(tu_exists(o));
    remove(o);
    remove(in);
}

/* -q silences notes, never errors; -v adds detail; both on info and convert. */
static void test_quiet_verbose(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(20, 16);
    const char *in = tu_tmp("cli_qv_in.h5"), *o = tu_tmp("cli_qv_out.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(in, p));
    sarbp_phd_free(p);
    expect(run("info -v '%s'", in), 0, err, "sarbp: info: read the metadata of 1 file in ");
    expect(run("info '%s'", in), 0, out, "pulses:");
    if (err[0]) fail_msg("info printed on stderr: %s", err);
    expect(run("convert -v '%s' -o '%s'", in, o), 0, err, "sarbp: convert: wrote 20 pulses");
    expect(run("convert -q -v -q '%s' -o '%s'", in, o), 0, out, NULL);
    if (err[0]) fail_msg("convert -q printed: %s", err);
    expect(run("convert -q '%s' -o '%s/no-dir/x.h5'", in, SARBP_TEST_TMP), 1, err,
           "sarbp: convert: cannot create '");
    remove(in);
    remove(o);
}

/* bench --json: every line one valid JSON object, no bare nan or inf
 * (cli_json_num writes NaN as null): per kernel (cubic, linear) one row per
 * thread count with both SERs, then the FP64 row. */
static void test_bench_json(void **state)
{
    (void)state;
    int rc = run("bench --backend cpu --grid 16x12 --pulses 8 --samples 16 --threads 1,2 --json");
    if (rc != 0) fail_msg("bench exits %d: %s", rc, err);
    assert_non_null(strstr(out, "\"threads\":2"));
    assert_non_null(strstr(out, "\"ser_exact_db\":"));
    assert_non_null(strstr(out, "\"fp64_ser_exact_db\":"));
    assert_null(strstr(out, "nan"));
    assert_null(strstr(out, ":inf"));
    int lines = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), lines++)
        if (!is_json_object(line)) fail_msg("not a JSON object: %s", line);
    assert_int_equal(lines, 9); /* 3 kernels x (2 thread counts + the FP64 line) */
}

/* Numbers out of range are usage errors naming the option, with no
 * undefined behaviour on the way ("runtime error" from the sanitizers). */
static void test_number_ranges(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"bench --threads 1e20", "--threads"},
        {"bench --threads 99999999999999999999", "--threads"},
        {"bench --threads 1,-2", "--threads"},
        {"bench --reps 1e30", "--reps"},
        {"bench --grid 1e30x5", "--grid"},
        {"bench --pulses 1e20", "--pulses"},
        {"bench --samples -1", "--samples"},
        {"bench --spacing 1e-300", "--spacing"},
        {"bench --device 1e10", "--device"},
        {"bench --variant v3:1e10x8", "--variant"},
        {"convert x.h5 -o y.h5 --pulses 0:1e20", "--pulses"},
        {"convert x.h5 -o y.h5 --pulses 0:99999999999999999999", "--pulses"},
        {"convert x.h5 -o y.h5 --pulses -1:4", "--pulses"},
        {"compare --window 1e30 a.h5 b.h5", "--window"},
        {"compare --min-ser 1e400 a.h5 b.h5", "--min-ser"},
        {"metrics --cut-angle 1e300 a.h5", "--cut-angle"},
        {"metrics --target 1e300,0 a.h5", "--target"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run("%s", cases[i][0]);
        const int want = 2;
        if (rc != want || !strstr(err, cases[i][1]) || strstr(err, "runtime error"))
            fail_msg("'%s': exit %d, want %d naming %s; stderr: %s", cases[i][0], rc, want,
                     cases[i][1], err);
    }
}

/* convert never follows a link planted at an old temporary name
 * ("<out>.tmp.<pid>.<n>") or a plausible new one, and leaves no temporary. */
static void test_convert_links(void **state)
{
    (void)state;
    char dir[600], cmd[1400], victim[700], outp[700], link[900];
    snprintf(dir, sizeof dir, "%s/cli_convert_links", SARBP_TEST_TMP);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(outp, sizeof outp, "%s/out.h5", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious", f);
    fclose(f);
    sarbp_phd *p = make_phd(20, 16);
    const char *in = tu_tmp("cli_links_in.h5");
    tu_ok(sarbp_phd_write_gotcha_h5(in, p));
    sarbp_phd_free(p);
    int nlinks = 0;
    for (long pid = (long)getpid(); pid < (long)getpid() + 3000; pid++) {
        snprintf(link, sizeof link, "%s.tmp.%ld.0", outp, pid);
        assert_int_equal(symlink(victim, link), 0);
        nlinks++;
    }
    snprintf(link, sizeof link, "%s.tmp-abcdef", outp);
    assert_int_equal(symlink(victim, link), 0);
    nlinks++;
    expect(run("convert -q '%s' -o '%s'", in, outp), 0, out, NULL);
    char buf[16] = "";
    f = fopen(victim, "r");
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, sizeof buf - 1, f), 8);
    fclose(f);
    assert_string_equal(buf, "precious");
    struct stat st;
    assert_int_equal(lstat(outp, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(n, 1 + nlinks + 1);
    remove(in);
}

/* An interrupted convert (SIGINT, SIGTERM, SIGHUP while its temporary is
 * being written) dies of that signal and leaves nothing in the output's
 * directory. The input is large enough (64 MiB of samples) that the
 * temporary lives for a while; a run that ends before its temporary was
 * seen is retried, and the test skips if that never works. */
static void test_interrupted_convert(void **state)
{
    (void)state;
    sarbp_phd *p = make_phd(2048, 4096);
    const char *in = tu_tmp("cli_int_in.h5");
    tu_ok(sarbp_phd_write_h5(in, p));
    sarbp_phd_free(p);
    char dir[600], cmd[1400], outp[700];
    snprintf(dir, sizeof dir, "%s/cli_interrupted", SARBP_TEST_TMP);
    snprintf(outp, sizeof outp, "%s/out.h5", dir);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    int tested = 0;
    for (int k = 0; k < 3; k++) {
        for (int attempt = 0; attempt < 3; attempt++) {
            snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
            assert_int_equal(system(cmd), 0);
            pid_t pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) {
                execl(SARBP_EXE, "sarbp", "convert", "-q", in, "-o", outp, (char *)NULL);
                _exit(127);
            }
            int seen = 0, status;
            for (int poll = 0; poll < 20000 && !seen; poll++) {
                DIR *d = opendir(dir);
                assert_non_null(d);
                struct dirent *e;
                while ((e = readdir(d)) != NULL) seen |= !strncmp(e->d_name, "out.h5.tmp-", 11);
                closedir(d);
                if (!seen) {
                    if (waitpid(pid, &status, WNOHANG) == pid) break; /* too fast */
                    usleep(100);
                }
            }
            if (!seen) {
                waitpid(pid, &status, 0);
                continue;
            }
            assert_int_equal(kill(pid, sigs[k]), 0);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (WIFEXITED(status)) continue; /* finished between the look and the kill */
            if (!WIFSIGNALED(status) || WTERMSIG(status) != sigs[k])
                fail_msg("convert was not ended by signal %d (status 0x%x)", sigs[k], status);
            DIR *d = opendir(dir);
            assert_non_null(d);
            struct dirent *e;
            while ((e = readdir(d)) != NULL)
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                    fail_msg("signal %d left '%s' behind", sigs[k], e->d_name);
            closedir(d);
            tested++;
            break;
        }
    }
    remove(in);
    print_message("interrupted %d of 3 runs while writing\n", tested);
    if (tested < 3) tu_skip("the runs ended before they could be interrupted");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_checker),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_every_command),
        cmocka_unit_test(test_stdout_full),
        cmocka_unit_test(test_quiet_verbose),
        cmocka_unit_test(test_bench_json),
        cmocka_unit_test(test_number_ranges),
        cmocka_unit_test(test_convert_links),
        cmocka_unit_test(test_interrupted_convert),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_convert_roundtrip),
        cmocka_unit_test(test_gotcha),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
