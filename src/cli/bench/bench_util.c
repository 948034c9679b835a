/* bench_util.c - the helpers every sarbp bench shares: SER (whole image and
 * window), the median's comparison, JSON members, the simulated scene, range
 * compression of all its pulses and the exact image of a window. No timing
 * loops and no tables: those are in bench_cpu.c, bench_cuda.c, bench_ffbp.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "sarbp/terrain.h"

double bench_ser_db(const sarbp_c32 *t, const sarbp_c32 *r, size_t n)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = (double)r[i].re - t[i].re, di = (double)r[i].im - t[i].im;
        s += (double)r[i].re * r[i].re + (double)r[i].im * r[i].im;
        e += dr * dr + di * di;
    }
    return e == 0 ? INFINITY : 10 * log10(s / e);
}

/* JSON members: ,"key":value with NaN as null (cli_json_num); the first
 * member of an object passes first = 1. */
void bench_jnum(const char *key, double v)
{
    printf(",\"%s\":", key);
    cli_json_num(v);
}

void bench_jstr(const char *key, const char *v, int first)
{
    printf("%s\"%s\":", first ? "{" : ",", key);
    cli_json_str(v);
}

sarbp_status bench_make_scene(size_t npulses, size_t nsamples, const double *hill, sarbp_phd **out)
{
    sarbp_target *cl = NULL;
    size_t nc = 200;
    SARBP_TRY(sarbp_targets_clutter(nc, 45, -30, 0, 11, &cl));
    sarbp_target *all = malloc((nc + 4) * sizeof *all);
    if (!all) {
        free(cl);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    memcpy(all, cl, nc * sizeof *all);
    const sarbp_target bright[] = {{0, 0, 0, 10}, {20, 10, 0, 5}, {-33.3, 21.7, 0, 8}, {40.1, -44.4, 0, 3}};
    memcpy(all + nc, bright, sizeof bright);
    free(cl);
    if (hill) /* every target on the hill (H, R) */
        for (size_t i = 0; i < nc + 4; i++) all[i].z = sarbp_hill_z(hill[0], hill[1], 0, 0, all[i].x, all[i].y);
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.nsamples = nsamples;
    sp.targets = all;
    sp.ntargets = nc + 4;
    sarbp_status st = sarbp_simulate(&sp, out);
    free(all);
    return st;
}

sarbp_status bench_compress_with(const sarbp_phd *p, const sarbp_rc_params *rc,
                                 sarbp_precision prec, sarbp_profiles **out)
{
    sarbp_rc_plan *plan;
    SARBP_TRY(sarbp_rc_plan_create(p, rc, prec, p->npulses, &plan));
    sarbp_status st = sarbp_profiles_alloc(p->npulses, sarbp_rc_plan_nbins(plan), prec, out);
    if (!st) st = sarbp_rc_execute(plan, 0, p->npulses, p->data, *out);
    sarbp_rc_plan_free(plan);
    return st;
}

int bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* SER of the window (x0, y0, w) of a full image t[g->ny][g->nx] against r[w.ny][w.nx]. */
double bench_window_ser_db(const sarbp_c32 *t, const sarbp_grid *g, const sarbp_grid *w,
                           size_t x0, size_t y0, const sarbp_c32 *r)
{
    double s = 0, e = 0;
    for (size_t iy = 0; iy < w->ny; iy++)
        for (size_t ix = 0; ix < w->nx; ix++) {
            const sarbp_c32 a = t[(y0 + iy) * g->nx + x0 + ix], b = r[iy * w->nx + ix];
            const double dr = (double)b.re - a.re, di = (double)b.im - a.im;
            s += (double)b.re * b.re + (double)b.im * b.im;
            e += dr * dr + di * di;
        }
    return e == 0 ? INFINITY : 10 * log10(s / e);
}

/* The exact image (FP64 direct summation, cpu back end, all cores) of window w */
sarbp_status bench_exact_window(const sarbp_phd *p, const sarbp_grid *w, sarbp_c32 **out)
{
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options o;
    sarbp_bp_options_default(&o);
    o.precision = SARBP_EXACT;
    sarbp_image *im = NULL;
    SARBP_TRY(sarbp_form_phd(bench_session, p, w, &sarbp_backend_cpu, &rc, &o, NULL, &im, NULL));
    *out = im->data;
    im->data = NULL;
    sarbp_image_free(im);
    return SARBP_OK;
}
