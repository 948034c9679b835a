/* test_mpi_agree.c - ranks that read or are asked different things never
 * assemble an image: 'sarbp form' and 'sarbp batch' under mpiexec -n 2 and
 * -n 3 (the MPMD form, one rank given something else) fail on every rank
 * with exit 1, one message naming the rank and what differs, no output and
 * no temporary, and the user's earlier file of the output's name untouched.
 * With the same input and options on every rank the image is the
 * one-process image byte for byte (test_mpi.c sweeps that widely; here one
 * run checks that the comparison itself changes nothing). Skipped (77)
 * without MPI or mpiexec. */
#include "test_util.h"
#include "mpi_run.h"
#include "scratch.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARGS "--backend cpu --grid 40x37 --spacing 0.3"

static char err_text[65536];

static int run_sh(const char *cmd)
{
    return tu_mpi_sh(cmd, err_text, sizeof err_text);
}

/* Nothing in the scratch folder starts with name but the user's earlier
 * file 'name' itself, which still says "earlier". */
static void only_earlier(const char *name)
{
    DIR *d = opendir(SARBP_TEST_TMP);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, name, strlen(name)) && strcmp(e->d_name, name))
            fail_msg("'%s/%s' was left", SARBP_TEST_TMP, e->d_name);
    closedir(d);
    tu_assert_text(tu_in_dir(SARBP_TEST_TMP, name), "earlier\n");
}

/* point_targets.h5 with every sample negated: the same sizes and metadata,
 * other samples. */
static const char *negated_input(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/mpi_agree_negated.h5", SARBP_TEST_TMP);
    const char *in = SARBP_DATA_DIR "/point_targets.h5";
    sarbp_phd *p = NULL;
    tu_ok(sarbp_phd_load(&in, 1, &p));
    for (size_t i = 0; i < p->npulses * p->nsamples; i++) {
        p->data[i].re = -p->data[i].re;
        p->data[i].im = -p->data[i].im;
    }
    remove(path);
    tu_ok(sarbp_phd_write_h5(path, p));
    sarbp_phd_free(p);
    return path;
}

/* mpiexec with n ranks (2 or 3), rank `odd` running `other` (the arguments
 * after 'sarbp'), every other rank `same`. */
static int run_mpmd(int n, int odd, const char *same, const char *other)
{
    char cmd[16384];
    int len = snprintf(cmd, sizeof cmd, "%s'%s' --oversubscribe", tu_mpi_rank_env(), tu_mpiexec());
    for (int r = 0; r < n; r++)
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, "%s -n 1 '%s' %s", r ? " :" : "",
                        SARBP_EXE, r == odd ? other : same);
    int rc = run_sh(cmd);
    print_message("%d ranks, rank %d different: exit %d\n%s", n, odd, rc, err_text);
    return rc;
}

/* One disagreement: exit 1, one sarbp line naming the rank and what, the
 * earlier output untouched and no temporary. */
static void refused(int n, int odd, const char *same, const char *other, const char *what,
                    const char *out_name)
{
    tu_write_text(tu_in_dir(SARBP_TEST_TMP, out_name), "earlier\n");
    assert_int_equal(run_mpmd(n, odd, same, other), 1);
    assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
    char rank[32];
    snprintf(rank, sizeof rank, "rank %d ", odd);
    if (!strstr(err_text, rank)) fail_msg("no '%s' in: %s", rank, err_text);
    if (!strstr(err_text, what)) fail_msg("no '%s' in: %s", what, err_text);
    only_earlier(out_name);
}

static void test_form_disagreements(void **state)
{
    (void)state;
    const char *good = SARBP_DATA_DIR "/point_targets.h5", *neg = negated_input();
    char same[4096], other[4096];
    const char *out = "mpi_agree_out.npy";
    snprintf(same, sizeof same, "form -i '%s' " ARGS " -o '%s/%s'", good, SARBP_TEST_TMP, out);
    for (int n = 2; n <= 3; n++) {
        /* other samples, the same sizes and metadata */
        snprintf(other, sizeof other, "form -i '%s' " ARGS " -o '%s/%s'", neg, SARBP_TEST_TMP, out);
        refused(n, 1, same, other, "read different samples", out);
        /* another grid on the last rank */
        snprintf(other, sizeof other, "form -i '%s' --backend cpu --grid 40x37 --spacing 0.31 -o '%s/%s'",
                 good, SARBP_TEST_TMP, out);
        refused(n, n - 1, same, other, "has a different grid", out);
        /* other options */
        snprintf(other, sizeof other, "form -i '%s' " ARGS " --window hann -o '%s/%s'", good,
                 SARBP_TEST_TMP, out);
        refused(n, 1, same, other, "has different form options", out);
        /* fewer pulses */
        snprintf(other, sizeof other, "form -i '%s' " ARGS " --pulses 0:100 -o '%s/%s'", good,
                 SARBP_TEST_TMP, out);
        refused(n, 1, same, other, "read 100 pulses", out);
    }
    remove(neg);
}

/* The same input and options on every rank: the check passes and the image
 * is the one-process image, byte for byte. */
static void test_form_agreement_unchanged(void **state)
{
    (void)state;
    char cmd[8192], a[1200], b[1200];
    for (int n = 1; n <= 3; n++) {
        snprintf(cmd, sizeof cmd, "%s'%s' form -q -i '%s/point_targets.h5' " ARGS
                 " -o '%s/mpi_agree_same_%d.npy'", tu_mpi_launcher(n), SARBP_EXE, SARBP_DATA_DIR,
                 SARBP_TEST_TMP, n);
        int rc = run_sh(cmd);
        if (rc) fail_msg("%d rank(s): exit %d: %s", n, rc, err_text);
        if (n == 1) continue;
        snprintf(a, sizeof a, "%s/mpi_agree_same_1.npy", SARBP_TEST_TMP);
        snprintf(b, sizeof b, "%s/mpi_agree_same_%d.npy", SARBP_TEST_TMP, n);
        snprintf(cmd, sizeof cmd, "cmp '%s' '%s'", a, b);
        if (run_sh(cmd)) fail_msg("%d ranks: the image differs from one process's", n);
        print_message("%d ranks: byte for byte the one-process image\n", n);
    }
}

static void test_batch_disagreements(void **state)
{
    (void)state;
    const char *good = SARBP_DATA_DIR "/clutter.h5";
    char same[4096], other[4096], dir[1024], cmd[2048];
    snprintf(dir, sizeof dir, "%s/mpi_agree_batch", SARBP_TEST_TMP);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    snprintf(same, sizeof same, "batch -j 1 --window-deg 0.5 --form-args '--grid 32x32 --backend cpu' "
             "-o '%s' '%s'", dir, good);
    for (int n = 2; n <= 3; n++) {
        struct {
            const char *args, *what;
        } cases[] = {
            {"batch -j 1 --window-deg 0.25 --form-args '--grid 32x32 --backend cpu' -o '%s' '%s'",
             "has different options"},
            {"batch -j 1 --window-deg 0.5 --form-args '--grid 48x32 --backend cpu' -o '%s' '%s'",
             "has different options"},
            {"batch -j 1 --window-deg 0.5 --form-args '--grid 32x32 --backend cpu' -o '%s' '%s' "
             "'%s'", "read the inputs differently"},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            assert_int_equal(system(cmd), 0);
            snprintf(other, sizeof other, cases[c].args, dir, good, good);
            assert_int_equal(run_mpmd(n, n - 1, same, other), 1);
            assert_int_equal(tu_count_prefix_lines(err_text, "sarbp:"), 1);
            char rank[32];
            snprintf(rank, sizeof rank, "rank %d ", n - 1);
            assert_non_null(strstr(err_text, rank));
            if (!strstr(err_text, cases[c].what)) fail_msg("no '%s' in: %s", cases[c].what, err_text);
            /* nothing formed, nothing written: not even the folder */
            assert_int_equal(access(dir, F_OK), -1);
        }
    }
}

int main(void)
{
    if (tu_mpi_precondition()) return TU_SKIP_RC;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_disagreements),
        cmocka_unit_test(test_form_agreement_unchanged),
        cmocka_unit_test(test_batch_disagreements),
    };
    return tu_run_tests(tests);
}
