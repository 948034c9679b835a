/* test_cli_form.c - `sarbp form` from the command line: bad inputs give the
 * documented exit code (1 failure, 2 usage), a message "sarbp: form: ..."
 * naming the problem, and no output file; a good run writes .png, .npy and
 * .h5 at once, which agree with each other and put north up. */
#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"
#include "scratch.h"

static char out[16384], err[16384];
static char sim[1024]; /* a small simulated phase history, made once */

#define run tu_run /* printf-style, fails on a crash */

static int make_sim(void **state)
{
    (void)state;
    return tu_make_sim(sim, sizeof sim, "cli_form_sim.h5",
                       "--pulses 64 --samples 64 --targets 5,20");
}

static int remove_sim(void **state)
{
    (void)state;
    remove(sim);
    return 0;
}

/* Runs `sarbp form` with args (which must write to outp, when given) and
 * checks the exit code, "sarbp: form:" and each key word (case-sensitive)
 * in stderr, and that outp does not exist afterwards. */
static void bad(int want, const char *outp, const char *args, const char *const *keys)
{
    if (outp) remove(outp);
    int rc = run("form -q %s", args);
    if (rc != want) fail_msg("'sarbp form %s' exits %d, want %d; stderr: %s", args, rc, want, err);
    if (!strstr(err, "sarbp: form:"))
        fail_msg("'sarbp form %s': stderr lacks 'sarbp: form:': %s", args, err);
    for (; keys && *keys; keys++)
        if (!strstr(err, *keys))
            fail_msg("'sarbp form %s': stderr lacks '%s': %s", args, *keys, err);
    if (outp && tu_exists(outp)) fail_msg("'sarbp form %s' left '%s' behind", args, outp);
    print_message("exit %d: %s", rc, err);
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_bad_usage(void **state)
{
    (void)state;
    const char *o = tu_tmp("cli_form_bad.png");
    char a[4096];
#define BAD(want, keys, ...)                                                     \
    do {                                                                         \
        snprintf(a, sizeof a, __VA_ARGS__);                                      \
        bad(want, o, a, keys);                                                   \
    } while (0)
    BAD(2, KEYS("--grid", "0x10"), "-i '%s' -o '%s' --grid 0x10", sim, o);
    BAD(2, KEYS("--grid", "abc"), "-i '%s' -o '%s' --grid abc", sim, o);
    BAD(2, KEYS("--spacing", "-1"), "-i '%s' -o '%s' --spacing -1", sim, o);
    BAD(2, KEYS("--upsample", "'0'"), "-i '%s' -o '%s' --upsample 0", sim, o);
    BAD(2, KEYS("--threads", "'0'"), "-i '%s' -o '%s' --threads 0", sim, o);
    BAD(2, KEYS("--pulses", "5:2"), "-i '%s' -o '%s' --pulses 5:2", sim, o);
    BAD(2, KEYS("unknown", "option"), "-i '%s' -o '%s' --no-such-option", sim, o);
    BAD(2, KEYS("no output"), "-i '%s'", sim);
    BAD(2, KEYS("fp16", "cuda"), "-i '%s' -o '%s' --precision fp16 --backend cpu", sim, o);
    BAD(2, KEYS("mixed", "cuda"), "-i '%s' -o '%s' --precision mixed --backend cpu", sim, o);
    BAD(2, KEYS("precision", "fp8", "mixed"), "-i '%s' -o '%s' --precision fp8", sim, o);
    BAD(2, KEYS("quadratic", "fp16"), "-i '%s' -o '%s' --interp quadratic --precision fp16", sim, o);
    BAD(2, KEYS("ffbp", "quadratic"), "-i '%s' -o '%s' --interp quadratic --algorithm ffbp", sim, o);
    BAD(2, KEYS("interpolation", "quintic", "quadratic"), "-i '%s' -o '%s' --interp quintic", sim, o);
    /* unknown extension: that file must not appear either */
    const char *x = tu_tmp("cli_form_bad.xyz");
    snprintf(a, sizeof a, "-i '%s' -o '%s'", sim, x);
    bad(2, x, a, KEYS("format", "cli_form_bad.xyz"));
#undef BAD
}

static void test_bad_inputs(void **state)
{
    (void)state;
    const char *o = tu_tmp("cli_form_bad2.png");
    char a[4096];
    /* missing input */
    const char *missing = tu_tmp("cli_form_no_such_input.h5");
    snprintf(a, sizeof a, "-i '%s' -o '%s'", missing, o);
    bad(1, o, a, KEYS("cli_form_no_such_input.h5"));
    /* a text file */
    const char *txt = tu_tmp("cli_form_text.h5");
    FILE *f = fopen(txt, "w");
    assert_non_null(f);
    fputs("this is not a phase history\n", f);
    fclose(f);
    snprintf(a, sizeof a, "-i '%s' -o '%s'", txt, o);
    bad(1, o, a, KEYS("cli_form_text.h5"));
    remove(txt);
    /* pulses beyond the input */
    snprintf(a, sizeof a, "-i '%s' -o '%s' --pulses 0:100000", sim, o);
    bad(1, o, a, KEYS("--pulses", "100000", "64 pulses"));
    /* output into a missing directory: fails when writing, leaves nothing */
    const char *dir = tu_tmp("cli_form_no_such_dir");
    char deep[1200];
    snprintf(deep, sizeof deep, "%s/img.png", dir);
    snprintf(a, sizeof a, "-i '%s' -o '%s'", sim, deep);
    bad(1, deep, a, KEYS("cli_form_no_such_dir"));
    assert_false(tu_exists(dir));
}

/* A phase history whose samples hold one NaN. The writers refuse NaN, so the
 * file is written with a marker sample whose bytes are then overwritten (the
 * samples are stored chunked but unfiltered: raw float32 pairs). */
static void test_nan_sample(void **state)
{
    (void)state;
    const char *path = tu_tmp("cli_form_nan.h5");
    sarbp_phd *p;
    tu_ok(sarbp_phd_alloc(SARBP_DOMAIN_FREQ, 8, 16, 1, &p));
    for (size_t i = 0; i < p->npulses; i++) {
        double th = (-2.0 + 4.0 * (double)i / 7.0) * M_PI / 180;
        p->pos[3 * i] = 7071 * cos(th);
        p->pos[3 * i + 1] = 7071 * sin(th);
        p->pos[3 * i + 2] = 7071;
        p->r0[i] = 10000;
        p->f0[i] = 9.28e9;
        p->df[i] = 40e6;
    }
    for (size_t k = 0; k < p->npulses * p->nsamples; k++) p->data[k] = (sarbp_c32){1, 0};
    const float marker[2] = {1234.5678f, -8765.4321f};
    p->data[5 * 16 + 3] = (sarbp_c32){marker[0], marker[1]};
    tu_ok(sarbp_phd_write_h5(path, p));
    sarbp_phd_free(p);

    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    unsigned char *buf = malloc((size_t)n);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    long at = -1;
    for (long i = 0; i + 8 <= n; i++)
        if (!memcmp(buf + i, marker, 8)) {
            assert_int_equal(at, -1); /* exactly one */
            at = i;
        }
    assert_true(at >= 0);
    const float nan = NAN;
    fseek(f, at, SEEK_SET);
    assert_int_equal(fwrite(&nan, sizeof nan, 1, f), 1);
    fclose(f);
    free(buf);

    const char *o = tu_tmp("cli_form_nan.png");
    char a[4096];
    snprintf(a, sizeof a, "-i '%s' -o '%s' --grid 16x16 --spacing 1", path, o);
    bad(1, o, a, KEYS("cli_form_nan.h5", "pulse 5"));
    remove(path);
}

static void test_three_outputs(void **state)
{
    (void)state;
    const char *png = tu_tmp("cli_form_ok.png"), *npy = tu_tmp("cli_form_ok.npy"),
               *h5 = tu_tmp("cli_form_ok.h5");
    const size_t nx = 121, ny = 481; /* 0.1 m pixels land on (5, 20) */
    int rc = run("form -q -i '%s' -o '%s' -o '%s' -o '%s' --grid %zux%zu --spacing 0.1 --backend "
                 "cpu",
                 sim, png, npy, h5, nx, ny);
    if (rc != 0) fail_msg("form exits %d: %s", rc, err);
    assert_true(tu_exists(png) && tu_exists(npy) && tu_exists(h5));

    sarbp_image *a, *b;
    tu_ok(sarbp_image_read(h5, &a));
    tu_ok(sarbp_image_read(npy, &b));
    assert_int_equal(a->grid.nx, nx);
    assert_int_equal(a->grid.ny, ny);
    assert_int_equal(b->grid.nx, nx);
    assert_int_equal(b->grid.ny, ny);
    assert_true(a->has_grid_coords);
    assert_memory_equal(a->data, b->data, nx * ny * sizeof(sarbp_c32));
    /* brightest pixel at the target (5, 20) */
    size_t best = 0;
    double bv = -1;
    for (size_t i = 0; i < nx * ny; i++) {
        double m = hypot(a->data[i].re, a->data[i].im);
        if (m > bv) { bv = m; best = i; }
    }
    double bx = sarbp_grid_x(&a->grid, best % nx), by = sarbp_grid_y(&a->grid, best / nx);
    print_message("image peak %.2f at (%.2f, %.2f) m\n", bv, bx, by);
    assert_true(fabs(bx - 5) <= 0.15 && fabs(by - 20) <= 0.15);

    /* the PNG: same size, brightest pixel in the upper half (north up) */
    FILE *f = fopen(png, "rb");
    assert_non_null(f);
    png_structp ps = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop pi = png_create_info_struct(ps);
    assert_non_null(ps);
    assert_non_null(pi);
    if (setjmp(png_jmpbuf(ps))) fail_msg("libpng cannot read '%s'", png);
    png_init_io(ps, f);
    png_read_png(ps, pi, PNG_TRANSFORM_STRIP_16 | PNG_TRANSFORM_PACKING | PNG_TRANSFORM_EXPAND,
                 NULL);
    size_t w = png_get_image_width(ps, pi), h = png_get_image_height(ps, pi);
    int ch = png_get_channels(ps, pi);
    assert_int_equal(w, nx);
    assert_int_equal(h, ny);
    png_bytepp rows = png_get_rows(ps, pi);
    size_t br = 0, bc = 0;
    int bval = -1;
    for (size_t r = 0; r < h; r++)
        for (size_t c = 0; c < w; c++)
            if (rows[r][c * (size_t)ch] > bval) {
                bval = rows[r][c * (size_t)ch];
                br = r;
                bc = c;
            }
    print_message("png %zu x %zu, %d channel(s); brightest %d at row %zu, column %zu\n", w, h, ch,
                  bval, br, bc);
    assert_true(br < h / 2);
    assert_int_equal(br, ny - 1 - best / nx); /* row 0 of the PNG is the largest y */
    assert_int_equal(bc, best % nx);
    png_destroy_read_struct(&ps, &pi, NULL);
    fclose(f);
    sarbp_image_free(a);
    sarbp_image_free(b);
    remove(png);
    remove(npy);
    remove(h5);
}

/* ---- outputs: atomic, all or nothing, finite ------------------------------ */

/* `-o ok.png -o /nonexistent-dir/x.h5`: exit 1 naming the bad output, and
 * no ok.png (nor a temporary) in either order; an earlier ok.png is kept. */
static void test_outputs_all_or_nothing(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("cli_form_all");
    char ok[600], ok2[600];
    snprintf(ok, sizeof ok, "%s/ok.png", dir);
    snprintf(ok2, sizeof ok2, "%s/ok.npy", dir);
    int rc = run("form -q -i '%s' --grid 16x16 --backend cpu -o '%s' -o /nonexistent-dir/x.h5 "
                 "-o '%s'", sim, ok, ok2);
    if (rc != 1) fail_msg("exit %d, want 1; stderr: %s", rc, err);
    if (!strstr(err, "sarbp: form: cannot create '/nonexistent-dir/x.h5': No such file or directory"))
        fail_msg("stderr: %s", err);
    assert_int_equal(tu_count_entries(dir), 0);
    rc = run("form -q -i '%s' --grid 16x16 --backend cpu -o /nonexistent-dir/x.h5 -o '%s'", sim, ok);
    assert_int_equal(rc, 1);
    assert_int_equal(tu_count_entries(dir), 0);

    tu_write_text(ok, "earlier");
    rc = run("form -q -i '%s' --grid 16x16 --backend cpu -o '%s' -o '%s/sub/x.npy'", sim, ok, dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "sub/x.npy': No such file or directory"));
    tu_assert_text(ok, "earlier");
    assert_int_equal(tu_count_entries(dir), 1);

    rc = run("form -q -i '%s' --grid 16x16 --backend cpu -o '%s' -o '%s'", sim, ok, ok2);
    if (rc != 0) fail_msg("exit %d; stderr: %s", rc, err);
    assert_int_equal(tu_count_entries(dir), 2);
}

/* The old temporary "<out>.tmp.<pid>" was opened without O_EXCL: a link
 * planted there was followed and its target overwritten. Links at the old
 * names of the next 4000 process ids (the sarbp run's id lies among them
 * unless the machine starts thousands of processes meanwhile) and at
 * plausible new names stay links, and their target keeps its bytes. */
static void test_planted_links(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("cli_form_links");
    char victim[600], png[600], h5[600], link[800];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(png, sizeof png, "%s/out.png", dir);
    snprintf(h5, sizeof h5, "%s/out.h5", dir);
    tu_write_text(victim, "precious");
    enum { NPID = 4000 };
    int nlinks = 0;
    for (long pid = (long)getpid(); pid < (long)getpid() + NPID; pid++) {
        snprintf(link, sizeof link, "%s.tmp.%ld", png, pid);
        assert_int_equal(symlink(victim, link), 0);
        snprintf(link, sizeof link, "%s.tmp.%ld", h5, pid);
        assert_int_equal(symlink(victim, link), 0);
        nlinks += 2;
    }
    const char *plausible[] = {"out.png.tmp-AAAAAA", "out.h5.tmp-000000", ".out.png.tmp-aaaaaa",
                               "out.png.tmp", "out.h5.tmp"};
    for (size_t i = 0; i < sizeof plausible / sizeof plausible[0]; i++) {
        snprintf(link, sizeof link, "%s/%s", dir, plausible[i]);
        assert_int_equal(symlink(victim, link), 0);
        nlinks++;
    }
    int rc = run("form -q -i '%s' --grid 16x16 --backend cpu -o '%s' -o '%s'", sim, png, h5);
    if (rc != 0) fail_msg("exit %d; stderr: %s", rc, err);
    tu_assert_text(victim, "precious");
    struct stat st;
    assert_int_equal(lstat(png, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(lstat(h5, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(tu_count_entries(dir), 1 + nlinks + 2);
    /* the links are still links to the victim */
    snprintf(link, sizeof link, "%s.tmp.%ld", png, (long)getpid() + 1);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

/* Samples near FLT_MAX are finite, so the reader takes them, but range
 * compression overflows: the image would be Inf and NaN. That is exit 1
 * with "image has N non-finite pixels", and no output. */
static void test_nonfinite_image(void **state)
{
    (void)state;
    const char *dir = tu_fresh_dir("cli_form_nonfinite");
    char in[600], png[600], h5[600];
    snprintf(in, sizeof in, "%s/huge.h5", dir);
    snprintf(png, sizeof png, "%s/huge.png", dir);
    snprintf(h5, sizeof h5, "%s/huge.h5.out.h5", dir);
    sarbp_phd *p;
    tu_ok(sarbp_phd_alloc(SARBP_DOMAIN_FREQ, 8, 16, 1, &p));
    for (size_t i = 0; i < p->npulses; i++) {
        double th = (-2.0 + 4.0 * (double)i / 7.0) * M_PI / 180;
        p->pos[3 * i] = 7071 * cos(th);
        p->pos[3 * i + 1] = 7071 * sin(th);
        p->pos[3 * i + 2] = 7071;
        p->r0[i] = 10000;
        p->f0[i] = 9.28e9;
        p->df[i] = 40e6;
    }
    for (size_t k = 0; k < p->npulses * p->nsamples; k++) p->data[k] = (sarbp_c32){3e38f, 3e38f};
    tu_ok(sarbp_phd_write_h5(in, p));
    sarbp_phd_free(p);
    int rc = run("form -q -i '%s' -o '%s' -o '%s' --grid 16x16 --spacing 1 --backend cpu", in, png,
                 h5);
    if (rc != 1) fail_msg("exit %d, want 1; stderr: %s", rc, err);
    if (!strstr(err, "sarbp: form: image has ") || !strstr(err, "non-finite pixel"))
        fail_msg("stderr: %s", err);
    print_message("%s", err);
    assert_int_equal(tu_count_entries(dir), 1); /* the input only */
}

/* Numbers that would overflow an integer conversion are usage errors
 * naming the option, and no undefined behaviour (the sanitizer build
 * prints "runtime error" on a float-cast overflow). */
static void test_number_ranges(void **state)
{
    (void)state;
    const char *o = tu_tmp("cli_form_range.png");
    static const char *const cases[][2] = {
        {"--pulses 0:1e20", "--pulses"},
        {"--pulses 0:18446744073709551616", "--pulses"},
        {"--pulses -1:5", "--pulses"},
        {"--pulses ' 1:5'", "--pulses"},
        {"--spacing 1e-300", "--spacing"},
        {"--spacing 1e300", "--spacing"},
        {"--spacing 0.5,1e-300", "--spacing"},
        {"--gpu-mem 1e308G", "--gpu-mem"},
        {"--gpu-mem 1e30T", "--gpu-mem"},
        {"--gpu-mem -5G", "--gpu-mem"},
        {"--gpu-mem 1e-30", "--gpu-mem"},
        {"--grid 1e30x5", "--grid"},
        {"--grid 99999999999999999999x5", "--grid"},
        {"--grid 5x-5", "--grid"},
        {"--threads 99999999999999999999", "--threads"},
        {"--threads 1e9", "--threads"},
        {"--threads -1", "--threads"},
        {"--threads 5000", "--threads"},
        {"--tile 1e10x8", "--tile"},
        {"--device 1e10", "--device"},
        {"--device -1", "--device"},
        {"--upsample 1e300", "--upsample"},
        {"--ppt 3", "--ppt"},
        {"--pulse-block 1e30", "--pulse-block"},
        {"--db-range 1e308", "--db-range"},
        {"--azimuth 1e400:2", "--azimuth"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run("form -q -i '%s' -o '%s' %s", sim, o, cases[i][0]);
        if (rc != 2 || !strstr(err, cases[i][1]) || !strstr(err, "sarbp: form: ") ||
            !strstr(err, "Try 'sarbp form --help'") || strstr(err, "runtime error"))
            fail_msg("'form %s': exit %d, want 2 naming %s; stderr: %s", cases[i][0], rc,
                     cases[i][1], err);
        assert_false(tu_exists(o));
    }
}

/* --device: one device, a list or all; a bad list is a usage error with
 * one message (exit 2), for form and bench alike. A list runs here too: the
 * cpu back end ignores it, auto falls back to the cpu without a GPU. */
static void test_device_list(void **state)
{
    (void)state;
    const char *o = tu_tmp("cli_form_dev.npy");
    static const char *const bad[] = {
        "", "0,", ",1", "0,,1", "0,0", "1,2,1", "0,x", "x", "All", "0;1", "0 1", "-1,0",
        "0,1025", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int b = 0; b < 2; b++) {
            const char *sub = b ? "bench" : "form";
            int rc = b ? run("bench --backend cuda --device '%s'", bad[i])
                       : run("form -q -i '%s' -o '%s' --device '%s'", sim, o, bad[i]);
            char want[64];
            snprintf(want, sizeof want, "sarbp: %s: --device", sub);
            const char *nl = strchr(err, '\n');
            const int lines = nl && strstr(nl + 1, "Try 'sarbp ") == nl + 1 && !strchr(strchr(nl + 1, '\n') + 1, '\n');
            if (rc != 2 || strncmp(err, want, strlen(want)) || !lines)
                fail_msg("'%s --device %s': exit %d, want 2 and one message; stderr: %s", sub, bad[i],
                         rc, err);
            assert_false(tu_exists(o));
        }
    }
    /* good lists parse: the cpu back end forms the image (devices unused) */
    static const char *const good[] = {"0", "3", "0,1", "1,0,2", "all"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = run("form -q -i '%s' -o '%s' --grid 16x16 --backend cpu --device %s", sim, o, good[i]);
        if (rc != 0) fail_msg("'form --backend cpu --device %s': exit %d; stderr: %s", good[i], rc, err);
    }
    remove(o);
}

/* -q: no notes on stderr (the no-GPU note included); -v: the sizes and
 * where the time went; by default (stderr not a terminal) nothing. */
static void test_quiet_verbose(void **state)
{
    (void)state;
    const char *o = tu_tmp("cli_form_qv.npy");
    int rc = run("form -q -i '%s' -o '%s' --grid 16x16", sim, o);
    assert_int_equal(rc, 0);
    if (err[0]) fail_msg("-q printed: %s", err);
    rc = run("form -i '%s' -o '%s' --grid 16x16 --backend cpu", sim, o);
    assert_int_equal(rc, 0);
    if (err[0]) fail_msg("a quiet run printed: %s", err);
    rc = run("form -v -i '%s' -o '%s' --grid 16x16 --backend cpu", sim, o);
    assert_int_equal(rc, 0);
    if (!strstr(err, "sarbp: form: 64 pulses x 64 samples, grid 16 x 16") ||
        !strstr(err, "backprojection"))
        fail_msg("-v printed: %s", err);
    rc = run("form --verbose --quiet -i '%s' -o '%s' --grid 16x16", sim, o);
    assert_int_equal(rc, 0);
    if (err[0]) fail_msg("--verbose --quiet printed: %s", err);
    /* errors are never silenced */
    rc = run("form -q -i '%s' -o /nonexistent-dir/x.npy --grid 16x16", sim);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "sarbp: form: cannot create"));
    remove(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_nan_sample),
        cmocka_unit_test(test_three_outputs),
        cmocka_unit_test(test_outputs_all_or_nothing),
        cmocka_unit_test(test_planted_links),
        cmocka_unit_test(test_nonfinite_image),
        cmocka_unit_test(test_number_ranges),
        cmocka_unit_test(test_quiet_verbose),
        cmocka_unit_test(test_device_list),
    };
    return cmocka_run_group_tests(tests, make_sim, remove_sim);
}
