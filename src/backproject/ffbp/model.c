/* ffbp/model.c - the error and cost model of fast factorized
 * backprojection, and the choice of a factorization from it
 * (sarbp_ffbp_predict, sarbp_ffbp_choose).
 *
 * Error: a polar grid sampled os times faster than its data's bandwidth is
 * read by a cubic B-spline (with its exact prefilter), which passes the
 * aliases of the data's spectrum attenuated by about (nu / (1 - nu))^4 in
 * amplitude, nu = 1 / (2 os) the band edge in cycles per sample. A pixel's
 * value passes one such read per merge level and one at the last step;
 * their errors add in power. The data's angular bandwidth is k_max L
 * cos(depression) (L: the sub-aperture's half-extent across the line of
 * sight): the grids are sampled at os_theta times (k_max + pi / dr) L + 1,
 * so the effective oversampling is os_theta times their ratio, per level
 * (ffbp_layout_measure). The aliasing is averaged over a flat band (the
 * pulses spread evenly over the sub-aperture); these errors add in
 * amplitude from level to level (measured: the error grows with the number
 * of levels as a repeating pattern would, not as noise). In range the data
 * are the profiles' band, sampled os_rho times finer than the profiles'
 * bins: the band-edge aliasing at an effective oversampling of 3 os_rho,
 * growing as the square root of the levels (a fit). A floor per read
 * (-93 dB, measured where the aliasing is negligible) covers the rest.
 * Calibration (FFBP_MODEL=1: 144 factorizations x 3 scenes, os_theta 1.5
 * to 9, os_rho 1.5 to 3): measured minus predicted SER from -5.3 to +7.6
 * dB, within -5.3 to +4.3 below 80 dB.
 * Calibrated on the simulated scenes of tests/test_ffbp.c (FFBP_MODEL=1
 * prints predicted against measured).
 *
 * Cost: stage 0 costs per polar sample and pulse, a merge per sample and
 * child, the last step per pixel and sub-image, each grid per sample
 * (prefilter); direct backprojection per pixel and pulse. The weights are
 * seconds measured on the CPU (2-core AMD EPYC, AVX2, 2026-11-26), as ratios. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/ffbp/layout.h"
#include "backproject/ffbp/memo.h"

/* error per read: aliasing constant and floor (power) */
#define ERR_THETA_GAIN 1.5
#define ERR_RHO_UPSAMPLE 3.0 /* measured; the profiles' usual upsampling is 4 */
#define ERR_FLOOR_DB (-93.0) /* per read: measured where the aliasing is negligible */

/* choose() asks the model for this much more than requested: the model's
 * optimistic side against measurement (-5.3 dB on the calibration sweep) */
#define FFBP_MODEL_MARGIN_DB 5.0

/* cost per operation relative to one pixel-pulse pair of sarbp_bp_cpu_fp32 */
#define COST_STAGE0_READ 1.0
#define COST_MERGE_READ 2.0
#define COST_FINAL_READ 2.0
#define COST_SAMPLE 1.0

/* the aliasing power a cubic B-spline passes at oversampling os, averaged
 * over a flat band (nu from 0 to 1 / (2 os)): mean of (nu / (1 - nu))^8 */
static double alias_power(double os)
{
    if (!(os > 0.55)) return 1.0;
    const double nu0 = 0.5 / os;
    const int n = 32; /* midpoint rule: the integrand is smooth */
    double sum = 0;
    for (int i = 0; i < n; i++) {
        const double nu = nu0 * (i + 0.5) / n, r = nu / (1.0 - nu), r2 = r * r, r4 = r2 * r2;
        sum += r4 * r4;
    }
    return sum / n;
}

/* the same at the band's edge: the range data fill their band unevenly
 * (measured: this fits, the average does not) */
static double edge_alias_power(double os)
{
    if (!(os > 0.55)) return 1.0;
    const double nu = 0.5 / os, r = nu / (1.0 - nu), r2 = r * r, r4 = r2 * r2;
    return r4 * r4;
}

static void predict_from(const ffbp_layout_stats *ls, const sarbp_ffbp_params *prm, double pairs,
                         sarbp_ffbp_prediction *out)
{
    /* the reads' errors add in amplitude (measured: a systematic pattern
     * that repeats from level to level, not independent noise) */
    double amp = 0;
    const double floor_p = pow(10.0, ERR_FLOOR_DB / 10.0);
    /* reads of level k's grids: by the merges into level k + 1, or by the
     * last step for the last level */
    for (int k = 0; k < ls->stages; k++) {
        const double os_t = prm->os_theta * ls->os_ratio[k];
        amp += sqrt(ERR_THETA_GAIN * alias_power(os_t));
    }
    /* the range aliasing: measured, it grows more slowly with the number
     * of levels than noise would (as sqrt(levels), a fit); the floor adds in
     * power */
    const double e = amp * amp +
                     sqrt((double)ls->stages) * edge_alias_power(prm->os_rho * ERR_RHO_UPSAMPLE) +
                     ls->stages * floor_p;
    out->error_db = 10.0 * log10(e);
    const double cost = COST_STAGE0_READ * ls->pulse_reads + COST_MERGE_READ * ls->reads_merge +
                        COST_FINAL_READ * ls->reads_final +
                        COST_SAMPLE * (ls->samples0 + ls->samples_merge);
    out->cost_ratio = pairs > 0 ? cost / pairs : 0;
    out->stages = ls->stages;
    out->final_subs = ls->final_subs;
    out->polar_samples = (size_t)(ls->samples0 + ls->samples_merge);
}

sarbp_status sarbp_ffbp_predict(const sarbp_profiles *pr, const sarbp_grid *g,
                                const sarbp_ffbp_params *prm, sarbp_ffbp_prediction *out)
{
    memset(out, 0, sizeof *out);
    if (!pr || !g || !prm) return sarbp_error(SARBP_ERR_INVALID, "ffbp: a NULL argument");
    const ffbp_pulses pu = {pr->npulses, pr->pos, pr->fref, pr->dr};
    ffbp_layout_stats ls;
    SARBP_TRY(ffbp_layout_measure(&pu, g, prm, NULL, &ls));
    if (pr->npulses == 0) {
        out->error_db = -INFINITY;
        return SARBP_OK;
    }
    predict_from(&ls, prm, sarbp_grid_pairs(g, pr->npulses), out);
    return SARBP_OK;
}

sarbp_status sarbp_ffbp_choose(const sarbp_profiles *pr, const sarbp_grid *g, double max_error_db,
                               sarbp_ffbp_params *out, double *predicted_db)
{
    if (!pr || !g || !out) return sarbp_error(SARBP_ERR_INVALID, "ffbp: a NULL argument");
    if (!(max_error_db >= -150 && max_error_db <= -10))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: a requested error of %g dB is outside -150 to -10",
                           max_error_db);
    SARBP_TRY(sarbp_grid_validate(g));
    sarbp_ffbp_params_default(out);
    if (predicted_db) *predicted_db = -INFINITY;
    if (pr->npulses == 0) return SARBP_OK;
    static const size_t bases[] = {4, 8, 16, 32, 64}, merges[] = {2, 3, 4}, finals[] = {1, 2, 4, 8, 16};
    static const double os_rhos[] = {1.5, 2, 3};
    const ffbp_pulses pu = {pr->npulses, pr->pos, pr->fref, pr->dr};
    const double pairs = sarbp_grid_pairs(g, pr->npulses);
    double best_cost = INFINITY, best_err = INFINITY, fallback_err = INFINITY;
    sarbp_ffbp_params best = *out, fallback = *out;
    sarbp_status st = SARBP_OK;
    for (size_t b = 0; b < sizeof bases / sizeof *bases && !st; b++)
        for (size_t m = 0; m < sizeof merges / sizeof *merges && !st; m++) {
            if (bases[b] > pr->npulses && b > 0) continue;
            /* the sub-apertures' geometry of this base and merge, once for
             * every final_subs, os_rho and os_theta below */
            ffbp_level_geoms lg;
            st = ffbp_level_geoms_make(&pu, g, bases[b], merges[m], &lg);
            for (size_t f = 0; f < sizeof finals / sizeof *finals && !st; f++)
                for (size_t r = 0; r < sizeof os_rhos / sizeof *os_rhos && !st; r++) {
                    sarbp_ffbp_params p = {bases[b], merges[m], finals[f], 1.0, os_rhos[r]};
                    /* the levels' ratios do not depend on os_theta: measure
                     * once, then the smallest os_theta that meets the request */
                    ffbp_layout_stats ls;
                    st = ffbp_layout_measure(&pu, g, &p, &lg, &ls);
                    if (st) break;
                    sarbp_ffbp_prediction pd;
                    double os = 1.5;
                    for (; os <= 12.0; os += 0.25) {
                        p.os_theta = os;
                        predict_from(&ls, &p, pairs, &pd);
                        if (pd.error_db <= max_error_db - FFBP_MODEL_MARGIN_DB) break;
                    }
                    if (os > 12.0) {
                        p.os_theta = 12.0;
                        predict_from(&ls, &p, pairs, &pd);
                        if (pd.error_db < fallback_err) {
                            fallback_err = pd.error_db;
                            fallback = p;
                        }
                        continue;
                    }
                    /* the cost at that os_theta (the grids' sizes) */
                    st = ffbp_layout_measure(&pu, g, &p, &lg, &ls);
                    if (st) break;
                    predict_from(&ls, &p, pairs, &pd);
                    if (pd.cost_ratio < best_cost) {
                        best_cost = pd.cost_ratio;
                        best_err = pd.error_db;
                        best = p;
                    }
                }
            ffbp_level_geoms_release(&lg);
        }
    if (st) return st;
    if (isfinite(best_cost)) {
        *out = best;
        if (predicted_db) *predicted_db = best_err;
    } else {
        *out = fallback;
        if (predicted_db) *predicted_db = fallback_err;
    }
    return SARBP_OK;
}

/* The pulses' geometry as sarbp_ffbp_choose reads it, in *buf (7 doubles a
 * pulse; the caller frees it). */
static sarbp_status phd_geometry(const sarbp_phd *meta, const sarbp_rc_params *rc,
                                 sarbp_profiles *geo, double **buf)
{
    *buf = NULL;
    if (!meta || !rc || !geo) return sarbp_error(SARBP_ERR_INVALID, "ffbp: a NULL argument");
    if (rc->interp == SARBP_INTERP_QUADRATIC)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "ffbp reads its range profiles with the linear or cubic B-spline, not "
                           "the quadratic (sarbp_rc_params_default_for(rc, prec, 1) picks the cubic)");
    const size_t P = meta->npulses, nbins = sarbp_rc_nbins(meta, rc->upsample);
    if (P > SIZE_MAX / (7 * sizeof(double)))
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: %zu pulses", P);
    double *b = malloc((P ? P : 1) * 7 * sizeof(double));
    if (!b) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the geometry of %zu pulses", P);
    *geo = (sarbp_profiles){0};
    geo->npulses = geo->capacity = P;
    geo->nbins = nbins;
    geo->precision = SARBP_FP32;
    geo->interp = rc->interp;
    geo->pos = b;
    geo->r0 = b + 3 * P;
    geo->rstart = b + 4 * P;
    geo->dr = b + 5 * P;
    geo->fref = b + 6 * P;
    for (size_t i = 0; i < P; i++) sarbp_rc_pulse_geometry(meta, nbins, rc->upsample, i, geo, i);
    *buf = b;
    return SARBP_OK;
}

sarbp_status sarbp_ffbp_choose_phd(const sarbp_phd *meta, const sarbp_rc_params *rc,
                                   const sarbp_grid *g, double max_error_db,
                                   sarbp_ffbp_params *out, sarbp_ffbp_prediction *pred)
{
    if (!g || !out) return sarbp_error(SARBP_ERR_INVALID, "ffbp: a NULL argument");
    if (max_error_db == 0) max_error_db = SARBP_FFBP_DEFAULT_ERROR_DB;
    sarbp_profiles geo;
    double *buf;
    SARBP_TRY(phd_geometry(meta, rc, &geo, &buf));
    sarbp_status st = sarbp_ffbp_choose(&geo, g, max_error_db, out, NULL);
    if (!st && pred) st = sarbp_ffbp_predict(&geo, g, out, pred);
    free(buf);
    return st;
}

/* The memo's key is every input of the choice by value: the pulses'
 * geometry (7 doubles a pulse), the grid, the interpolation and the error
 * target; an equal key gives the same decision, so nothing stale can come
 * back to a caller that refills one phase history in place. */
static int same_grid(const sarbp_grid *a, const sarbp_grid *b)
{
    return a->nx == b->nx && a->ny == b->ny && a->dx == b->dx && a->dy == b->dy &&
           a->xc == b->xc && a->yc == b->yc && a->zc == b->zc && a->row0 == b->row0 &&
           a->ny_full == b->ny_full;
}

sarbp_status sarbp_ffbp_memo_choose(sarbp_ffbp_memo *m, const sarbp_phd *meta,
                                    const sarbp_rc_params *rc, const sarbp_grid *g,
                                    double max_error_db, sarbp_ffbp_params *out,
                                    sarbp_ffbp_prediction *pred)
{
    if (!m) return sarbp_ffbp_choose_phd(meta, rc, g, max_error_db, out, pred);
    if (!g || !out) return sarbp_error(SARBP_ERR_INVALID, "ffbp: a NULL argument");
    if (max_error_db == 0) max_error_db = SARBP_FFBP_DEFAULT_ERROR_DB;
    sarbp_profiles geo;
    double *buf;
    SARBP_TRY(phd_geometry(meta, rc, &geo, &buf));
    const size_t n = geo.npulses * 7;
    if (m->geo && m->npulses == geo.npulses && m->nbins == geo.nbins && m->interp == geo.interp &&
        m->max_error_db == max_error_db && same_grid(&m->grid, g) &&
        !memcmp(m->geo, buf, n * sizeof *buf)) {
        free(buf);
        *out = m->prm;
        if (pred) *pred = m->pred;
        return SARBP_OK;
    }
    sarbp_ffbp_prediction p;
    sarbp_status st = sarbp_ffbp_choose(&geo, g, max_error_db, out, NULL);
    if (!st) st = sarbp_ffbp_predict(&geo, g, out, &p);
    if (st) {
        free(buf);
        return st;
    }
    if (pred) *pred = p;
    sarbp_ffbp_memo_release(m);
    *m = (sarbp_ffbp_memo){buf, geo.npulses, geo.nbins, geo.interp, max_error_db, *g, *out, p};
    return SARBP_OK;
}

void sarbp_ffbp_memo_release(sarbp_ffbp_memo *m)
{
    if (!m) return;
    free(m->geo);
    *m = (sarbp_ffbp_memo){0};
}
