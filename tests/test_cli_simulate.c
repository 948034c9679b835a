/* test_cli_simulate.c - 'sarbp simulate': output, exit codes and messages. */
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char out[16384], err[16384];

static int run(const char *fmt, const char *path)
{
    char args[2048];
    snprintf(args, sizeof args, fmt, path);
    return tu_run_cli(args, out, sizeof out, err, sizeof err);
}

static void test_help(void **state)
{
    (void)state;
    assert_int_equal(tu_run_cli("simulate --help", out, sizeof out, err, sizeof err), 0);
    assert_non_null(strstr(out, "usage: sarbp simulate"));
    assert_non_null(strstr(out, "Gotcha"));
    assert_non_null(strstr(out, "--geometry linear --domain chirp"));
    assert_string_equal(err, "");
}

/* Reads path back and compares with the library's simulation of p. */
static void check_roundtrip(const char *path, const sarbp_sim_params *p)
{
    sarbp_phd *ref = NULL, *got = NULL;
    tu_ok(sarbp_simulate(p, &ref));
    const char *inputs[] = {path};
    tu_ok(sarbp_phd_load(inputs, 1, &got));
    assert_int_equal(got->domain, ref->domain);
    assert_int_equal(got->npulses, ref->npulses);
    assert_int_equal(got->nsamples, ref->nsamples);
    assert_non_null(got->data);
    assert_memory_equal(got->data, ref->data, ref->npulses * ref->nsamples * sizeof(sarbp_c32));
    assert_memory_equal(got->pos, ref->pos, 3 * ref->npulses * sizeof(double));
    assert_memory_equal(got->r0, ref->r0, ref->npulses * sizeof(double));
    if (ref->domain == SARBP_DOMAIN_FREQ) {
        assert_memory_equal(got->f0, ref->f0, ref->npulses * sizeof(double));
        assert_memory_equal(got->df, ref->df, ref->npulses * sizeof(double));
    } else {
        assert_true(got->fs == ref->fs && got->t0 == ref->t0 && got->fc == ref->fc &&
                    got->chirp_rate == ref->chirp_rate && got->pulse_len == ref->pulse_len);
    }
    sarbp_phd_free(ref);
    sarbp_phd_free(got);
}

static void test_writes_freq(void **state)
{
    (void)state;
    const char *path = tu_tmp("cli_sim_freq.h5");
    int rc = run("simulate -o '%s' --pulses 16 --samples 32 --targets '1,2;-3,4,0,0.5' "
                 "--noise-db -20 --seed 3",
                 path);
    if (rc != 0) fail_msg("exit %d: %s", rc, err);
    assert_true(tu_exists(path));
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    p.npulses = 16;
    p.nsamples = 32;
    sarbp_target t[2] = {{1, 2, 0, 1}, {-3, 4, 0, 0.5}};
    p.ntargets = 2;
    p.targets = t;
    p.noise_db = -20;
    p.seed = 3;
    check_roundtrip(path, &p);
    remove(path);
}

static void test_writes_linear_chirp(void **state)
{
    (void)state;
    const char *path = tu_tmp("cli_sim_chirp.h5");
    int rc = run("simulate -o '%s' --geometry linear --domain chirp --pulses 8 -q", path);
    if (rc != 0) fail_msg("exit %d: %s", rc, err);
    assert_true(tu_exists(path));
    assert_string_equal(err, "");
    sarbp_sim_params p;
    sarbp_sim_defaults(&p, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    p.npulses = 8;
    check_roundtrip(path, &p);
    remove(path);

    /* clutter and -v */
    path = tu_tmp("cli_sim_clutter.h5");
    rc = run("simulate --output='%s' --clutter 20 --clutter-extent 30 --pulses 8 --samples 64 -v",
             path);
    if (rc != 0) fail_msg("exit %d: %s", rc, err);
    assert_true(tu_exists(path));
    assert_non_null(strstr(err, "20 targets"));
    remove(path);
}

/* A usage error: exit 2, a message naming `what`, the hint, no output. */
static void expect_usage(const char *fmt, const char *what)
{
    const char *path = tu_tmp("cli_sim_bad.h5");
    int rc = run(fmt, path);
    if (rc != 2) fail_msg("'%s': exit %d, expected 2 (stderr: %s)", fmt, rc, err);
    if (!strstr(err, what)) fail_msg("'%s': stderr does not name '%s': %s", fmt, what, err);
    assert_non_null(strstr(err, "sarbp: simulate: "));
    assert_non_null(strstr(err, "Try 'sarbp simulate --help'"));
    assert_false(tu_exists(path));
}

static void test_usage_errors(void **state)
{
    (void)state;
    expect_usage("simulate -o '%s' --pulses 0", "--pulses");
    expect_usage("simulate -o '%s' --pulses abc", "--pulses");
    expect_usage("simulate -o '%s' --pulses -5", "--pulses");
    expect_usage("simulate -o '%s' --samples 1.5", "--samples");
    expect_usage("simulate -o '%s' --targets '1,2;x'", "--targets");
    expect_usage("simulate -o '%s' --targets '1,2;x'", "'x'");
    expect_usage("simulate -o '%s' --targets ''", "--targets");
    expect_usage("simulate -o '%s' --bogus", "--bogus");
    expect_usage("simulate -o '%s' -Z", "-Z");
    expect_usage("simulate -o '%s' --geometry spiral", "--geometry");
    expect_usage("simulate -o '%s' --domain time", "--domain");
    expect_usage("simulate -o '%s' --fc nan", "--fc");
    expect_usage("simulate -o '%s' --fc -1", "--fc");
    expect_usage("simulate -o '%s' --range 0", "--range");
    expect_usage("simulate -o '%s' --elevation 90", "--elevation");
    expect_usage("simulate -o '%s' --noise-db 1e400", "--noise-db");
    expect_usage("simulate -o '%s' --seed x", "--seed");
    expect_usage("simulate -o '%s' --clutter -1", "--clutter");
    expect_usage("simulate -o '%s' extra", "extra");
    expect_usage("simulate -o '%s' --pulses", "--pulses");
    expect_usage("simulate --pulses 4%.0s", "-o");
    /* numbers beyond any integer: usage errors, no undefined conversion */
    expect_usage("simulate -o '%s' --pulses 1e20", "--pulses");
    expect_usage("simulate -o '%s' --pulses 99999999999999999999", "--pulses");
    expect_usage("simulate -o '%s' --samples -1", "--samples");
    expect_usage("simulate -o '%s' --seed 1e30", "--seed");
    expect_usage("simulate -o '%s' --seed 99999999999999999999", "--seed");
    expect_usage("simulate -o '%s' --clutter 1e30", "--clutter");
    expect_usage("simulate -o '%s' --prf 1e300", "--prf");
    expect_usage("simulate -o '%s' --fs ' 1e9'", "--fs");
    assert_null(strstr(err, "runtime error"));
}

/* A runtime failure: exit 1, "sarbp: simulate: ...", no output. */
static void test_failures(void **state)
{
    (void)state;
    const char *path = tu_tmp("cli_sim_fail.h5");
    /* a 640 MHz band around 100 MHz reaches below 0 Hz */
    int rc = run("simulate -o '%s' --fc 100e6", path);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "sarbp: simulate: "));
    assert_non_null(strstr(err, "below 0 Hz"));
    assert_null(strstr(err, "Try"));
    assert_false(tu_exists(path));
    /* 2^48 samples */
    rc = run("simulate -o '%s' --pulses 16777216 --samples 16777216", path);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "2^31"));
    assert_false(tu_exists(path));
    /* a directory that does not exist */
    rc = run("simulate -o '%s/no/such/dir/x.h5' --pulses 4 --samples 4", path);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "sarbp: simulate: cannot create '"));
    assert_non_null(strstr(err, "no/such/dir/x.h5': No such file or directory"));
}

/* The output goes through a temporary beside it: a link planted at the old
 * name "<out>.tmp.<pid>.<n>" (for the next 3000 process ids) or a plausible
 * new one is never followed, and only the output is left. -v says what was
 * written; -q and the default print nothing. */
static void test_output_file(void **state)
{
    (void)state;
    char dir[600], cmd[1400], victim[700], outp[700], link[900];
    snprintf(dir, sizeof dir, "%s/cli_sim_links", SARBP_TEST_TMP);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(outp, sizeof outp, "%s/sim.h5", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious", f);
    fclose(f);
    int nlinks = 0;
    for (long pid = (long)getpid(); pid < (long)getpid() + 3000; pid++) {
        snprintf(link, sizeof link, "%s.tmp.%ld.0", outp, pid);
        assert_int_equal(symlink(victim, link), 0);
        nlinks++;
    }
    snprintf(link, sizeof link, "%s.tmp-Sim123", outp);
    assert_int_equal(symlink(victim, link), 0);
    nlinks++;
    int rc = run("simulate -v -o '%s' --pulses 8 --samples 8", outp);
    if (rc != 0) fail_msg("exit %d: %s", rc, err);
    assert_non_null(strstr(err, "wrote '"));
    assert_non_null(strstr(err, "8 pulses x 8 samples"));
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
    rc = run("simulate -q -o '%s' --pulses 8 --samples 8", outp);
    assert_int_equal(rc, 0);
    assert_int_equal(err[0], '\0');
    rc = run("simulate -o '%s' --pulses 8 --samples 8", outp);
    assert_int_equal(rc, 0);
    assert_int_equal(err[0], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_writes_freq),
        cmocka_unit_test(test_writes_linear_chirp),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_output_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
