/* test_util.c - helpers shared by sarbp's cmocka tests. */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
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

int tu_count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

int tu_count_prefix_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, prefix, strlen(prefix))) n++;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return n;
}

int tu_sh(char *out, size_t outn, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    if (!p) fail_msg("cannot run '%s': %s", cmd, strerror(errno));
    size_t n = fread(out, 1, outn - 1, p);
    out[n] = '\0';
    char sink[4096]; /* the rest, so the command is not killed by SIGPIPE */
    while (fread(sink, 1, sizeof sink, p) > 0) continue;
    const int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
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

int tu_make_sim(char *path, size_t n, const char *name, const char *args)
{
    char out[4096], err[16384];
    snprintf(path, n, "%s", tu_tmp(name));
    const int rc = tu_run_clif(out, sizeof out, err, sizeof err, "simulate -o '%s' %s", path, args);
    if (rc != 0 || !tu_exists(path)) {
        fprintf(stderr, "sarbp simulate exits %d: %s\n", rc, err);
        return -1;
    }
    return 0;
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

/* The SER of error energy e against signal energy s (both sums of
 * squares); fails the test when the reference has no energy or a sum is
 * not finite. */
static double ser_db(double s, double e, size_t n)
{
    if (!isfinite(s) || !isfinite(e))
        fail_msg("SER: an image holds inf or NaN (signal %g, error %g over %zu pixels)", s, e, n);
    if (!(s > 0)) fail_msg("SER: the reference has no energy (%zu pixels, all zero)", n);
    if (e == 0) return INFINITY;
    return 10 * log10(s / e);
}

double tu_ser_c32(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = (double)r[i].re - t[i].re, di = (double)r[i].im - t[i].im;
        s += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    return ser_db(s, e, n);
}

double tu_ser_c32_c64(const sarbp_c32 *t, const sarbp_c64 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = r[i].re - t[i].re, di = r[i].im - t[i].im;
        s += r[i].re * r[i].re + r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    return ser_db(s, e, n);
}

/* ---- accuracy bars -------------------------------------------------------- */

static void bar_check(int higher_is_better, double value, double measured, double headroom,
                      const char *unit, const char *fmt, va_list ap)
{
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    if (!(headroom >= 0) || !isfinite(measured))
        fail_msg("%s: bad bar (measured %g, headroom %g)", what, measured, headroom);
    const double bar = higher_is_better ? measured - headroom : measured + headroom;
    const int ok = higher_is_better ? value >= bar : value <= bar; /* NaN fails */
    const double used = higher_is_better ? measured - value : value - measured;
    char pct[64];
    if (isnan(value)) snprintf(pct, sizeof pct, "n/a");
    else if (isinf(used)) snprintf(pct, sizeof pct, "%s", used < 0 ? "none (identical)" : "all");
    else if (headroom > 0) snprintf(pct, sizeof pct, "%.0f%%", round(100 * used / headroom) + 0.0);
    else snprintf(pct, sizeof pct, "%s", used > 0 ? "inf%" : "0%");
    const char *sp = *unit ? " " : "";
    print_message("BAR %-4s %s: %.6g%s%s %s %.6g%s%s (measured %.6g, headroom %.6g): %s of headroom "
                  "used\n", ok ? "ok" : "FAIL", what, value, sp, unit, higher_is_better ? ">=" : "<=",
                  bar, sp, unit, measured, headroom, pct);
    if (!ok)
        fail_msg("%s: %.6g %s is past the bar %.6g %s (measured %.6g, headroom %.6g)", what, value,
                 unit, bar, unit, measured, headroom);
}

void tu_bar_min(double value, double measured, double headroom, const char *unit, const char *what,
                ...)
{
    va_list ap;
    va_start(ap, what);
    bar_check(1, value, measured, headroom, unit, what, ap);
    va_end(ap);
}

void tu_bar_max(double value, double measured, double headroom, const char *unit, const char *what,
                ...)
{
    va_list ap;
    va_start(ap, what);
    bar_check(0, value, measured, headroom, unit, what, ap);
    va_end(ap);
}

/* ---- skipping honestly ----------------------------------------------------- */

int tu_nskipped;

int tu_run_group(const char *name, const struct CMUnitTest *tests, size_t n,
                 CMFixtureFunction setup, CMFixtureFunction teardown)
{
    tu_nskipped = 0;
    int rc = _cmocka_run_group_tests(name, tests, n, setup, teardown);
    if (rc == 0 && n > 0 && (size_t)tu_nskipped >= n) {
        printf("%s: every test was skipped: reporting 'skipped' (exit %d) to CTest\n", name,
               TU_SKIP_RC);
        return TU_SKIP_RC;
    }
    if (rc == 0 && tu_nskipped > 0)
        printf("%s: %d of %zu tests skipped (see the 'skipped:' lines)\n", name, tu_nskipped, n);
    return rc;
}

int tu_have_gpu(void) { return sarbp_backend_cuda.available(NULL); }

int tu_gpu_visible(void) { return system("nvidia-smi -L 2>/dev/null | grep -q '^GPU '") == 0; }

int tu_gpu_precondition(const char *program)
{
    if (tu_have_gpu()) return 0;
    const int visible = tu_gpu_visible();
#if defined(SARBP_HAVE_CUDA)
    const int built = 1;
#else
    const int built = 0;
#endif
    const int switched_off = !strcmp(SARBP_CUDA_CONFIG, "OFF");
    if (!visible) {
        printf("%s: skipped: no GPU visible ('nvidia-smi -L' lists none)\n", program);
        return TU_SKIP_RC;
    }
    if (!built && switched_off) {
        printf("%s: skipped: sarbp was configured with SARBP_CUDA=OFF\n", program);
        return TU_SKIP_RC;
    }
    if (!built)
        fprintf(stderr, "%s: FAILED: 'nvidia-smi -L' lists a GPU but sarbp was built without "
                "CUDA (SARBP_CUDA=%s; nvcc not found?)\nhint: configure with -DSARBP_CUDA=OFF "
                "to skip the GPU tests on purpose\n", program, SARBP_CUDA_CONFIG);
    else
        fprintf(stderr, "%s: FAILED: 'nvidia-smi -L' lists a GPU but the CUDA back end is "
                "unusable (cudaGetDeviceCount gives no device: driver, runtime or "
                "CUDA_VISIBLE_DEVICES?)\n", program);
    return 1;
}

int tu_cphd_precondition(void)
{
#ifdef SARBP_HAVE_LIBXML2
    return 0;
#else
    printf("skipped: sarbp was built without libxml2, so it reads no CPHD\n");
    return TU_SKIP_RC;
#endif
}

const sarbp_cuda_variant *tu_variant(size_t v)
{
    size_t n;
    const sarbp_cuda_variant *t = sarbp_cuda_variants(&n);
    assert_true(n == TU_NVARIANTS && v < n);
    return &t[v];
}

/* nc clutter scatterers within +-extent m (-30 to 0 dB, seed 5) and three
 * bright targets, frequency domain, geometry geom. */
static sarbp_phd *clutter_and_bright(sarbp_geometry geom, size_t npulses, size_t nc, double extent,
                                     const sarbp_target bright[3])
{
    sarbp_target *c = NULL;
    tu_ok(sarbp_targets_clutter(nc, extent, -30, 0, 5, &c));
    sarbp_target *all = calloc(nc + 3, sizeof *all);
    assert_non_null(all);
    memcpy(all, c, nc * sizeof *all);
    memcpy(all + nc, bright, 3 * sizeof *all);
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, geom, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.targets = all;
    sp.ntargets = nc + 3;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    free(all);
    free(c);
    return p;
}

sarbp_phd *tu_clutter_scene(size_t npulses)
{
    const sarbp_target bright[] = {{0, 0, 0, 10}, {20, 10, 0, 5}, {-33.3, 21.7, 0, 8}};
    return clutter_and_bright(SARBP_GEOM_CIRCULAR, npulses, 150, 50, bright);
}

sarbp_phd *tu_targets(const sarbp_target *t, size_t n, size_t npulses)
{
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.targets = (sarbp_target *)t;
    sp.ntargets = n;
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    return p;
}

sarbp_profiles *tu_over_image_profiles(sarbp_precision prec)
{
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(4, 64, prec, &pr));
    pr->npulses = 4;
    for (size_t i = 0; i < 4; i++) {
        pr->pos[3 * i] = 0.5 * (double)i;
        pr->pos[3 * i + 1] = 0;
        pr->pos[3 * i + 2] = 1000;
        pr->r0[i] = 1000;
        pr->rstart[i] = -1;
        pr->dr[i] = 0.03;
        pr->fref[i] = 9.6e9;
    }
    if (pr->data32) memset(pr->data32, 0, 4 * 64 * sizeof *pr->data32);
    if (pr->data64) memset(pr->data64, 0, 4 * 64 * sizeof *pr->data64);
    return pr;
}

sarbp_phd *tu_chirp_stripmap(size_t npulses)
{
    static const sarbp_target t[] = {{0, 0, 0, 1}, {7.5, 1.1, 0, 0.7}, {-12.2, -0.6, 0, 0.5}};
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_LINEAR, SARBP_DOMAIN_CHIRP);
    sp.npulses = npulses;
    sp.targets = (sarbp_target *)t;
    sp.ntargets = sizeof t / sizeof t[0];
    sarbp_phd *p;
    tu_ok(sarbp_simulate(&sp, &p));
    return p;
}

sarbp_image *tu_form(const sarbp_phd *p, const sarbp_grid *g, const sarbp_backend *be,
                     sarbp_precision prec, const sarbp_bp_options *tune)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    if (tune) o = *tune;
    else sarbp_bp_options_default(&o);
    o.precision = prec;
    rc.interp = SARBP_INTERP_CUBIC; /* the kernel the arithmetic tests' bars were measured with */
    rc.upsample = 4;
    sarbp_image *img;
    tu_ok(sarbp_form_phd(NULL, p, g, be, &rc, &o, NULL, &img, NULL));
    return img;
}

sarbp_image *tu_form_in(sarbp_session *s, const sarbp_phd *p, const sarbp_grid *g,
                        const sarbp_backend *be, const sarbp_bp_options *o, sarbp_form_stats *st)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_rc_params_default_for(&rc, o->precision, o->algorithm == SARBP_ALGO_FFBP);
    sarbp_image *img = NULL;
    tu_ok(sarbp_form_phd(s, p, g, be, &rc, o, NULL, &img, st));
    return img;
}

void tu_assert_same(const sarbp_image *a, const sarbp_image *b, const char *what)
{
    const size_t n = a->grid.nx * a->grid.ny;
    if (b->grid.nx * b->grid.ny != n || memcmp(a->data, b->data, n * sizeof(sarbp_c32)))
        fail_msg("%s: images differ (SER %.1f dB)", what, tu_ser_c32(a->data, b->data, n));
}

int tu_threads_alive(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

size_t tu_peak_index(const sarbp_image *img, double *peak)
{
    size_t best = 0, n = img->grid.nx * img->grid.ny;
    double bv = -1;
    for (size_t i = 0; i < n; i++) {
        double m = hypot(img->data[i].re, img->data[i].im);
        if (m > bv) { bv = m; best = i; }
    }
    *peak = bv;
    return best;
}

size_t tu_banding_budget(const sarbp_phd *p, const sarbp_grid *g, const sarbp_bp_options *o,
                         size_t *passes)
{
    /* the smallest budget the layout takes, then a quarter of the rows more:
     * a few bands (over kept profiles unless o->stream) */
    sarbp_rc_params rc; /* tu_form's: cubic 4x */
    sarbp_rc_params_default(&rc);
    rc.interp = SARBP_INTERP_CUBIC;
    rc.upsample = 4;
    sarbp_bp_options t = *o;
    sarbp_form_layout lay;
    size_t lo = 0, hi = (size_t)4 << 30; /* lo is refused, hi accepted */
    t.gpu_mem = hi;
    tu_ok(sarbp_form_plan_layout(NULL, p, g, &sarbp_backend_cuda, &rc, &t, &lay));
    while (hi - lo > ((size_t)64 << 10)) {
        t.gpu_mem = lo + (hi - lo) / 2;
        sarbp_status s = sarbp_form_plan_layout(NULL, p, g, &sarbp_backend_cuda, &rc, &t, &lay);
        if (s == SARBP_OK) hi = t.gpu_mem;
        else if (s == SARBP_ERR_NOMEM) lo = t.gpu_mem;
        else fail_msg("layout with gpu_mem %zu: %s (%s)", t.gpu_mem, sarbp_strerror(s), sarbp_error_detail());
    }
    t.gpu_mem = hi + (p->npulses * 64 + g->ny / 4 * g->nx) * sizeof(sarbp_c32);
    tu_ok(sarbp_form_plan_layout(NULL, p, g, &sarbp_backend_cuda, &rc, &t, &lay));
    if (lay.part[0].bands < 2) {
        /* a need that barely falls with the rows (FFBP: a band's polar grids
         * keep the image's range extent): halfway from the least accepted
         * budget to the least that takes the image in one piece */
        size_t lo1 = hi, one = t.gpu_mem; /* lo1 gives bands, one gives one piece */
        while (one - lo1 > ((size_t)16 << 10)) {
            t.gpu_mem = lo1 + (one - lo1) / 2;
            tu_ok(sarbp_form_plan_layout(NULL, p, g, &sarbp_backend_cuda, &rc, &t, &lay));
            if (lay.part[0].bands < 2) one = t.gpu_mem;
            else lo1 = t.gpu_mem;
        }
        t.gpu_mem = hi + (lo1 - hi) / 2;
        tu_ok(sarbp_form_plan_layout(NULL, p, g, &sarbp_backend_cuda, &rc, &t, &lay));
    }
    *passes = lay.part[0].bands;
    return t.gpu_mem;
}

/* ---- the CLI under limits ------------------------------------------------ */

int tu_under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#else
    return 0;
#endif
#else
    return 0;
#endif
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

void tu_run_limited(const char *const *args, unsigned long long as_limit, double kill_s,
                    tu_limited_run *r)
{
    memset(r, 0, sizeof *r);
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/limited_%d.err", SARBP_TEST_TMP, (int)getpid());
    const char *argv[16] = {SARBP_EXE};
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
    argv[n] = NULL;
    const double t0 = mono_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (devnull < 0 || efd < 0) _exit(126);
        dup2(devnull, STDOUT_FILENO);
        dup2(efd, STDERR_FILENO);
        if (as_limit && !tu_under_asan()) {
            struct rlimit rl = {(rlim_t)as_limit, (rlim_t)as_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        execv(SARBP_EXE, (char *const *)argv);
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(pid, &ws, WNOHANG, &ru);
        if (w == pid) break;
        assert_true(w == 0 || errno == EINTR);
        if (mono_s() - t0 > kill_s) kill(pid, SIGKILL);
        usleep(2000);
    }
    r->seconds = mono_s() - t0;
    r->peak_mb = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux; includes the probe child */
    r->exited = WIFEXITED(ws);
    r->code = r->exited ? WEXITSTATUS(ws) : -1;
    r->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    slurp(errpath, r->err, sizeof r->err);
    unlink(errpath);
}

/* ---- FFBP test scenes (test_ffbp*.c, test_gpu_ffbp.c) ---- */

sarbp_profiles *tu_profiles(const sarbp_phd *p, sarbp_precision prec, sarbp_interp k, int up)
{
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    prm.interp = k;
    prm.upsample = up;
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, prec, p->npulses, &plan));
    sarbp_profiles *pr;
    tu_ok(sarbp_profiles_alloc(p->npulses, sarbp_rc_plan_nbins(plan), prec, &pr));
    tu_ok(sarbp_rc_execute(plan, 0, p->npulses, p->data, pr));
    sarbp_rc_plan_free(plan);
    return pr;
}

/* point targets + clutter within +-40 m (the prototype's test scene) */
sarbp_phd *tu_ffbp_scene(sarbp_geometry geom, size_t npulses)
{
    const sarbp_target bright[] = {{0, 0, 0, 10}, {12, 7, 0, 5}, {-9.3, -11.7, 0, 8}};
    return clutter_and_bright(geom, npulses, 150, 40, bright);
}

/* The exact image (no FFT, no interpolation) of p on g, FP64. */
sarbp_c64 *tu_exact64(const sarbp_phd *p, const sarbp_grid *g)
{
    sarbp_rc_params prm;
    sarbp_rc_params_default(&prm);
    sarbp_rc_plan *plan;
    tu_ok(sarbp_rc_plan_create(p, &prm, SARBP_EXACT, p->npulses, &plan));
    const size_t nk = sarbp_rc_exact_size(plan), np = p->npulses;
    sarbp_c64 *Y = malloc(np * nk * sizeof *Y), *img = calloc(g->nx * g->ny, sizeof *img);
    double *fa = malloc(np * sizeof *fa), *fd = malloc(np * sizeof *fd);
    assert_true(Y && fa && fd && img);
    for (size_t i = 0; i < np; i++)
        tu_ok(sarbp_rc_exact_spectrum(plan, i, p->data + i * p->nsamples, Y + i * nk, fa + i,
                                      fd + i));
    tu_ok(sarbp_bp_exact(np, nk, Y, fa, fd, p->pos, p->r0, g, 0, img));
    free(Y);
    free(fa);
    free(fd);
    sarbp_rc_plan_free(plan);
    return img;
}

double tu_ser_gain_c32(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double nr = 0, ni = 0, tt = 0, e = 0, sr = 0;
    for (size_t i = 0; i < n; i++) { /* <t, r> / <t, t> */
        nr += (double)t[i].re * r[i].re + (double)t[i].im * r[i].im;
        ni += (double)t[i].re * r[i].im - (double)t[i].im * r[i].re;
        tt += (double)t[i].re * t[i].re + (double)t[i].im * t[i].im;
    }
    const double gr = tt > 0 ? nr / tt : 0, gi = tt > 0 ? ni / tt : 0;
    for (size_t i = 0; i < n; i++) {
        const double er = r[i].re - (gr * t[i].re - gi * t[i].im);
        const double ei = r[i].im - (gr * t[i].im + gi * t[i].re);
        e += er * er + ei * ei;
        sr += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
    }
    return e > 0 ? 10.0 * log10(sr / e) : INFINITY;
}
