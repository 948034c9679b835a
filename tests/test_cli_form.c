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

#include "test_util.h"

static char out[16384], err[16384];
static char sim[1024]; /* a small simulated phase history, made once */

#define run tu_run /* printf-style, fails on a crash */

static int make_sim(void **state)
{
    (void)state;
    snprintf(sim, sizeof sim, "%s", tu_tmp("cli_form_sim.h5"));
    int rc = run("simulate -o '%s' --pulses 64 --samples 64 --targets 5,20", sim);
    if (rc != 0 || !tu_exists(sim)) {
        fprintf(stderr, "sarbp simulate exits %d: %s\n", rc, err);
        return -1;
    }
    return 0;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_nan_sample),
        cmocka_unit_test(test_three_outputs),
    };
    return cmocka_run_group_tests(tests, make_sim, remove_sim);
}
