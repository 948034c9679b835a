/* test_mpi.c - 'sarbp form' and 'sarbp batch' under mpiexec -n 2 and -n 3
 * against one process: the CPU images bit-identical (.npy and .png byte for
 * byte, .h5 pixels, grid and attributes; the .h5 files themselves differ in
 * HDF5's object timestamps even between two one-process runs), on data/ (every .h5)
 * and the Gotcha files, gathered at rank 0 and (.npy alone) written by each
 * rank; a bad input or a failed write on one rank fails every rank with exit 1,
 * one message and no output (an earlier file kept); batch gives the same
 * summary and images.
 * Skipped (77) when sarbp was built without MPI or mpiexec is missing. Ranks
 * are oversubscribed on the 2-core machine; as root, Open MPI wants its
 * OMPI_ALLOW_RUN_AS_ROOT variables. */
#include "test_util.h"
#include "mpi_run.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Small, awkward grids: rows not a multiple of the 16-row bands, so the last
 * band is partial and 3 ranks get unequal bands. */
#define GRID "--grid 150x203 --spacing 0.15"

static char err_text[65536];

static int run_sh(const char *cmd)
{
    return tu_mpi_sh(cmd, err_text, sizeof err_text);
}

static void same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = tu_slurp(a, &na), *y = tu_slurp(b, &nb);
    if (!x || !y) fail_msg("cannot read '%s' or '%s'", a, b);
    if (na != nb || memcmp(x, y, na)) fail_msg("'%s' and '%s' differ", a, b);
    free(x);
    free(y);
}

static int run_attr(const char *key)
{
    static const char *const run[] = {"command_line", "device"};
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++)
        if (!strcmp(key, run[i])) return 1;
    return 0;
}

static void same_h5_image(const char *a, const char *b)
{
    sarbp_image *x = NULL, *y = NULL;
    tu_ok(sarbp_image_read(a, &x));
    tu_ok(sarbp_image_read(b, &y));
    assert_int_equal(x->grid.nx, y->grid.nx);
    assert_int_equal(x->grid.ny, y->grid.ny);
    assert_true(x->grid.dx == y->grid.dx && x->grid.dy == y->grid.dy);
    assert_true(x->grid.xc == y->grid.xc && x->grid.yc == y->grid.yc && x->grid.zc == y->grid.zc);
    assert_int_equal(memcmp(x->data, y->data, x->grid.nx * x->grid.ny * sizeof(sarbp_c32)), 0);
    assert_int_equal(x->nattrs, y->nattrs);
    for (size_t i = 0; i < x->nattrs; i++) {
        assert_string_equal(x->attrs[i].key, y->attrs[i].key);
        /* the provenance of the run, not of the image: its own command
         * line (other output names) and rank 0's threads or devices */
        if (run_attr(x->attrs[i].key)) continue;
        assert_string_equal(x->attrs[i].value, y->attrs[i].value);
    }
    sarbp_image_free(x);
    sarbp_image_free(y);
}

/* Forms input with args on 1, 2 and 3 ranks; every output equal to the
 * one-process run's. */
static void form_everywhere(const char *tag, const char *input, const char *args)
{
    char base[1024];
    snprintf(base, sizeof base, "%s/mpi_%s", SARBP_TEST_TMP, tag);
    for (int n = 1; n <= 3; n++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd,
                 "%s'%s' form -q -i '%s' --backend cpu %s -o '%s_%d.npy' -o '%s_%d.png' -o '%s_%d.h5'",
                 tu_mpi_launcher(n), SARBP_EXE, input, args, base, n, base, n, base, n);
        int rc = run_sh(cmd);
        if (rc != 0) fail_msg("%s: exit %d on %d rank(s): %s", tag, rc, n, err_text);
        if (n == 1) continue;
        char a[1200], b[1200];
        static const char *const ext[] = {"npy", "png"};
        for (int e = 0; e < 2; e++) {
            snprintf(a, sizeof a, "%s_1.%s", base, ext[e]);
            snprintf(b, sizeof b, "%s_%d.%s", base, n, ext[e]);
            same_bytes(a, b);
        }
        snprintf(a, sizeof a, "%s_1.h5", base);
        snprintf(b, sizeof b, "%s_%d.h5", base, n);
        same_h5_image(a, b);
        print_message("%s: %d ranks bit-identical to one process\n", tag, n);
    }
}

static void test_data_sets(void **state)
{
    (void)state;
    static const char *const sets[] = {"point_targets", "clutter", "stripmap_chirp"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        char in[1024];
        snprintf(in, sizeof in, "%s/%s.h5", SARBP_DATA_DIR, sets[i]);
        form_everywhere(sets[i], in, GRID);
    }
    char in[1024];
    snprintf(in, sizeof in, "%s/point_targets.h5", SARBP_DATA_DIR);
    form_everywhere("point_targets_fp64", in, "--grid 70x37 --spacing 0.2 --precision fp64");
    form_everywhere("point_targets_exact", in, "--grid 40x35 --spacing 0.3 --precision exact");
    form_everywhere("point_targets_window", in,
                    "--grid 64x50 --spacing 0.2 --center 1.5,-2 --window taylor --az-window hann --threads 1");
}

static void test_gotcha(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    form_everywhere("gotcha", tu_gotcha_dir(), "--grid 128x131 --spacing 0.2");
}

/* .npy outputs only: each rank writes its own rows into the file (no
 * gather at rank 0), bit-identical to one process, for 2 and 3 ranks, two
 * outputs at once, an earlier file replaced; 3 ranks on a grid of one row
 * band (ranks 1 and 2 hold no rows). A PNG alone still goes through rank 0. */
static void test_rows_written_by_ranks(void **state)
{
    (void)state;
    char in[1024], cmd[8192];
    snprintf(in, sizeof in, "%s/point_targets.h5", SARBP_DATA_DIR);
    char dir[1024], one[1200], png1[1200];
    snprintf(dir, sizeof dir, "%s", tu_fresh_dir("mpi_rows"));
    snprintf(one, sizeof one, "%s/one.npy", dir);
    snprintf(png1, sizeof png1, "%s/one.png", dir);
    static const char *const grids[] = {GRID, "--grid 40x5 --spacing 0.3"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "'%s' form -q -i '%s' --backend cpu %s -o '%s' -o '%s'", SARBP_EXE,
                 in, grids[k], one, png1);
        if (run_sh(cmd)) fail_msg("one process: %s", err_text);
        for (int n = 2; n <= 3; n++) {
            char a[64], b[64];
            snprintf(a, sizeof a, "rows_%d.npy", n);
            snprintf(b, sizeof b, "rows_%d_b.npy", n);
            tu_write_text(tu_in_dir(dir, a), "an earlier file\n");
            snprintf(cmd, sizeof cmd, "%s'%s' form -q -i '%s' --backend cpu %s -o '%s' -o '%s'",
                     tu_mpi_launcher(n), SARBP_EXE, in, grids[k], tu_in_dir(dir, a), tu_in_dir(dir, b));
            if (run_sh(cmd)) fail_msg("%d ranks: %s", n, err_text);
            same_bytes(one, tu_in_dir(dir, a));
            same_bytes(one, tu_in_dir(dir, b));
        }
        snprintf(cmd, sizeof cmd, "%s'%s' form -q -i '%s' --backend cpu %s -o '%s'", tu_mpi_launcher(2),
                 SARBP_EXE, in, grids[k], tu_in_dir(dir, "rows_2.png"));
        if (run_sh(cmd)) fail_msg("2 ranks, png: %s", err_text);
        same_bytes(png1, tu_in_dir(dir, "rows_2.png"));
        tu_no_temporaries(dir);
        print_message("%s: .npy written by 2 and 3 ranks and a .png gathered, bit-identical to one "
                      "process\n", grids[k]);
    }
}

/* A write of its rows that fails on rank 1 of 2 (through mpiexec's ':'
 * form): under a file size limit below its rows' offset (SIGXFSZ ignored:
 * the write fails with EFBIG), and started in another folder, where the
 * relative name of rank 0's temporary is not found (a folder the ranks do
 * not share). Exit 1, one message, no output and no temporary in either
 * folder, and an earlier file of the output's name untouched. */
static void test_rows_write_fails(void **state)
{
    (void)state;
    char in[1024], args[2048], cmd[8192];
    snprintf(in, sizeof in, "%s/point_targets.h5", SARBP_DATA_DIR);
    /* rank 1's rows start at row 600 of 512-pixel rows: 2.4 MB into the file */
    snprintf(args, sizeof args, "form -q -i '%s' --backend cpu --threads 1 --grid 512x1200 --spacing "
             "0.05 -o keep.npy -o fresh.npy", in);
    for (int k = 0; k < 2; k++) {
        const char *dir = tu_fresh_dir("mpi_rows_fail"), *elsewhere = tu_fresh_dir("mpi_rows_elsewhere");
        tu_write_text(tu_in_dir(dir, "keep.npy"), "precious\n");
        /* ulimit -f: 512-byte blocks in sh (1 MiB), 1 KiB in bash; TCP between
         * the ranks, whose shared-memory segments would pass the limit */
        if (k == 0)
            snprintf(cmd, sizeof cmd, "cd '%s' && %s'%s' --oversubscribe --mca pml ob1 --mca btl "
                     "self,tcp -n 1 '%s' %s : -n 1 sh -c \"trap '' XFSZ; ulimit -f 2048; exec '%s' "
                     "%s\"", dir, tu_mpi_rank_env(), tu_mpiexec(), SARBP_EXE, args, SARBP_EXE, args);
        else
            snprintf(cmd, sizeof cmd, "cd '%s' && %s'%s' --oversubscribe -n 1 '%s' %s : -n 1 -wdir '%s' "
                     "'%s' %s", dir, tu_mpi_rank_env(), tu_mpiexec(), SARBP_EXE, args, elsewhere,
                     SARBP_EXE, args);
        const int rc = run_sh(cmd);
        print_message("rank 1 %s: exit %d\n%s", k ? "in another folder" : "past its file size limit",
                      rc, err_text);
        assert_int_equal(rc, 1);
        assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
        assert_non_null(strstr(err_text, k ? "rank 1 cannot open its temporary"
                                           : "rank 1 cannot write its temporary"));
        tu_assert_dir_holds(dir, TU_NAMES("keep.npy"));
        assert_int_equal(tu_count_entries(elsewhere), 0);
        size_t len = 0;
        char *kept = tu_slurp(tu_in_dir(dir, "keep.npy"), &len);
        assert_non_null(kept);
        assert_string_equal(kept, "precious\n");
        free(kept);
    }
}

/* mpiexec's MPMD form: rank 1 (of 2 or 3) is given a file that is not a
 * phase history; the others a good one. */
static void test_bad_input_on_one_rank(void **state)
{
    (void)state;
    const char *junk = tu_tmp("mpi_junk.h5");
    FILE *f = fopen(junk, "w");
    assert_non_null(f);
    fputs("not a phase history\n", f);
    fclose(f);
    char good[1024];
    snprintf(good, sizeof good, "%s/point_targets.h5", SARBP_DATA_DIR);
    for (int n = 2; n <= 3; n++) {
        char out[1024], cmd[8192];
        snprintf(out, sizeof out, "%s/mpi_bad_%d.npy", SARBP_TEST_TMP, n);
        snprintf(cmd, sizeof cmd,
                 "%s'%s' --oversubscribe -n 1 '%s' form -i '%s' --backend cpu " GRID " -o '%s' : "
                 "-n 1 '%s' form -i '%s' --backend cpu " GRID " -o '%s'%s%s%s%s%s%s%s",
                 tu_mpi_rank_env(), tu_mpiexec(), SARBP_EXE, good, out, SARBP_EXE, junk, out,
                 n == 3 ? " : -n 1 '" : "", n == 3 ? SARBP_EXE : "", n == 3 ? "' form -i '" : "",
                 n == 3 ? good : "", n == 3 ? "' --backend cpu " GRID " -o '" : "", n == 3 ? out : "",
                 n == 3 ? "'" : "");
        int rc = run_sh(cmd);
        print_message("%d ranks, bad input on rank 1: exit %d\n%s", n, rc, err_text);
        assert_int_equal(rc, 1);
        assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
        assert_non_null(strstr(err_text, "mpi_junk.h5"));
        char name[64];
        snprintf(name, sizeof name, "mpi_bad_%d.npy", n);
        tu_nothing_named(SARBP_TEST_TMP, name);
    }
    /* an output that cannot be written: rank 0 fails after the others are done */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s'%s' form -i '%s' --backend cpu " GRID " -o '%s/no/such/dir/x.npy'",
             tu_mpi_launcher(3), SARBP_EXE, good, SARBP_TEST_TMP);
    assert_int_equal(run_sh(cmd), 1);
    assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
    /* no device: every rank fails to create its CUDA plan, one message */
    if (!tu_have_gpu()) {
        snprintf(cmd, sizeof cmd, "%s'%s' form -i '%s' --backend cuda " GRID " -o '%s/mpi_nodev.npy'",
                 tu_mpi_launcher(2), SARBP_EXE, good, SARBP_TEST_TMP);
        assert_int_equal(run_sh(cmd), 1);
        assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
        tu_nothing_named(SARBP_TEST_TMP, "mpi_nodev.npy");
    }
    /* a usage error: every rank has it, one message, exit 2 */
    snprintf(cmd, sizeof cmd, "%s'%s' form -i '%s' --grid 0x3 -o x.npy", tu_mpi_launcher(2), SARBP_EXE, good);
    assert_int_equal(run_sh(cmd), 2);
    assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
}

/* The summary without the timing columns (seconds, mbps) and with the
 * output folder's name taken out of the paths. */
static char *summary_without_times(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/summary.csv", dir);
    size_t n;
    char *s = tu_slurp(p, &n);
    if (!s) fail_msg("no '%s'", p);
    char *out = calloc(1, n + 1), *o = out;
    for (char *line = s; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        int col = 0;
        for (char *c = line;; c++) {
            const int sep = *c == ',' || *c == 0;
            if (col != 11 && col != 12 && !sep) *o++ = *c;
            if (sep) {
                if (col != 11 && col != 12) *o++ = ',';
                col++;
                if (!*c) break;
            }
        }
        *o++ = '\n';
        line = end ? end + 1 : NULL;
    }
    free(s);
    /* paths: drop the folder */
    for (char *q; (q = strstr(out, dir));) memmove(q, q + strlen(dir), strlen(q + strlen(dir)) + 1);
    return out;
}

static void test_batch(void **state)
{
    (void)state;
    const char *input = tu_have_gotcha() ? tu_gotcha_dir() : SARBP_DATA_DIR "/clutter.h5";
    const char *win = tu_have_gotcha() ? "1" : "0.5";
    char d1[1024], d2[1024], cmd[4096];
    snprintf(d1, sizeof d1, "%s/mpi_batch_1", SARBP_TEST_TMP);
    snprintf(d2, sizeof d2, "%s/mpi_batch_2", SARBP_TEST_TMP);
    for (int n = 1; n <= 2; n++) {
        snprintf(cmd, sizeof cmd,
                 "rm -rf '%s' && %s'%s' batch -j %d --window-deg %s --form-args '--grid 96x80 "
                 "--spacing 0.3 --backend cpu' -o '%s' '%s'",
                 n == 1 ? d1 : d2, tu_mpi_launcher(n), SARBP_EXE, n == 1 ? 2 : 1, win, n == 1 ? d1 : d2,
                 input);
        int rc = run_sh(cmd);
        if (rc != 0) fail_msg("batch on %d rank(s): exit %d: %s", n, rc, err_text);
    }
    char *a = summary_without_times(d1), *b = summary_without_times(d2);
    print_message("%s", a);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, ",ok,"));
    free(a);
    free(b);
    for (int w = 0; w < 4; w++) {
        char p1[1200], p2[1200];
        snprintf(p1, sizeof p1, "%s/win_%03d.png", d1, w);
        snprintf(p2, sizeof p2, "%s/win_%03d.png", d2, w);
        if (access(p1, F_OK)) break;
        same_bytes(p1, p2);
        snprintf(p1, sizeof p1, "%s/win_%03d.h5", d1, w);
        snprintf(p2, sizeof p2, "%s/win_%03d.h5", d2, w);
        same_h5_image(p1, p2);
    }
}

/* A window that fails on rank 1 (a wrapper that fails win_001 only): reported
 * once through rank 0, the others formed, exit 1. */
static void test_batch_failed_window(void **state)
{
    (void)state;
    if (!tu_have_gotcha()) tu_skip("no Gotcha data in '%s'", tu_gotcha_dir());
    char wrapper[1024], dir[1024], cmd[8192], p[1200];
    snprintf(wrapper, sizeof wrapper, "%s/mpi_fail_win_001.sh", SARBP_TEST_TMP);
    snprintf(dir, sizeof dir, "%s/mpi_batch_fail", SARBP_TEST_TMP);
    FILE *f = fopen(wrapper, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\ncase \"$*\" in *win_001.h5*) echo 'sarbp: form: injected failure' >&2; "
               "exit 1 ;; esac\nexec '%s' \"$@\"\n", SARBP_EXE);
    fclose(f);
    assert_int_equal(chmod(wrapper, 0755), 0);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && %s'%s' batch --sarbp '%s' -j 1 --form-args '--grid 64x64 --backend cpu' "
             "-o '%s' '%s'", dir, tu_mpi_launcher(2), SARBP_EXE, wrapper, dir, tu_gotcha_dir());
    assert_int_equal(run_sh(cmd), 1);
    print_message("%s", err_text);
    assert_int_equal(tu_count_prefix_lines(err_text, "sarbp: batch: window win_001"), 1);
    assert_non_null(strstr(err_text, "injected failure"));
    snprintf(p, sizeof p, "%s/summary.csv", dir);
    size_t n;
    char *csv = tu_slurp(p, &n);
    assert_non_null(csv);
    assert_non_null(strstr(csv, "win_000.h5,ok"));
    assert_non_null(strstr(csv, ",,failed"));
    assert_non_null(strstr(csv, "win_003.h5,ok"));
    free(csv);
    remove(wrapper);
}

int main(void)
{
    if (tu_mpi_precondition()) return TU_SKIP_RC;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_sets),
        cmocka_unit_test(test_gotcha),
        cmocka_unit_test(test_rows_written_by_ranks),
        cmocka_unit_test(test_rows_write_fails),
        cmocka_unit_test(test_bad_input_on_one_rank),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_batch_failed_window),
    };
    return tu_run_tests(tests);
}
