/* gotcha_schema.c - the Gotcha fields checked and turned into a sarbp_phd,
 * whichever container holds them.
 *
 * What a field is and how it is read (HDF5 dataset or MATLAB struct field,
 * any numeric type converted to double) is the container's, through its
 * callbacks; what the fields must be, and in which order they are checked,
 * is here, so that an HDF5 file and a MATLAB file with the same fields are
 * accepted or refused alike. Reads no samples. */
#include <stddef.h>
#include <stdlib.h>

#include "io/gotcha_schema.h"
#include "io/phd_io_internal.h"
#include "sarbp/phd_io.h"

static const char *const required[] = {"fp", "freq", "x", "y", "z", "r0"};

int gotcha_schema_found(const struct gotcha_container *c, void *ctx)
{
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (c->has(ctx, required[i])) return 1;
    return 0;
}

/* fp's shape against np pulses of k samples, stored in c's order or the
 * other way round; the message names the container's order. */
static sarbp_status fp_orientation(const char *path, const struct gotcha_container *c,
                                   size_t np, size_t k, struct gotcha_fp *fp)
{
    int by_pulse = c->order == GOTCHA_PULSES_BY_SAMPLES;
    size_t rows = by_pulse ? np : k, cols = by_pulse ? k : np;
    if (fp->rank == 2 && fp->dims[0] == rows && fp->dims[1] == cols) {
        fp->transposed = 0;
        return SARBP_OK;
    }
    if (fp->rank == 2 && fp->dims[0] == cols && fp->dims[1] == rows) {
        fp->transposed = 1;
        return SARBP_OK;
    }
    if (by_pulse)
        return sarbp_error(SARBP_ERR_INVALID,
                           "'%s': field 'fp' has shape %s; expected %zu x %zu (pulses x samples: "
                           "%zu pulses in 'x', %zu frequencies in 'freq')",
                           path, fp->shape, np, k, np, k);
    return sarbp_error(SARBP_ERR_INVALID,
                       "'%s': field 'fp' has shape %s; expected %zu x %zu (samples x pulses: "
                       "%zu frequencies in 'freq', %zu pulses in 'x')",
                       path, fp->shape, k, np, k, np);
}

sarbp_status gotcha_schema_read(const char *path, const struct gotcha_container *c, void *ctx,
                                struct gotcha_fp *fp, sarbp_phd **out)
{
    *fp = (struct gotcha_fp){0};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!c->has(ctx, required[i]))
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': field '%s' is missing", path,
                               required[i]);
    static const char *const names[4] = {"x", "y", "z", "freq"};
    static const size_t max[4] = {SARBP_PHD_MAX_PULSES, SARBP_PHD_MAX_PULSES,
                                  SARBP_PHD_MAX_PULSES, SARBP_PHD_MAX_SAMPLES};
    double *v[4] = {NULL};
    size_t n[4];
    sarbp_phd *m = NULL;
    sarbp_status st = SARBP_OK;
    for (size_t j = 0; j < 4 && st == SARBP_OK; j++)
        st = c->read_vector(ctx, names[j], max[j], &v[j], &n[j]);
    size_t np = n[0], k = n[3];
    if (st == SARBP_OK) st = phd_count_mismatch(path, "y", n[1], "x", np);
    if (st == SARBP_OK) st = phd_count_mismatch(path, "z", n[2], "x", np);
    if (st == SARBP_OK && np == 0) st = sarbp_error(SARBP_ERR_INVALID, "'%s': no pulses", path);
    double f0 = 0, df = 0;
    if (st == SARBP_OK) st = phd_freq_step(path, v[3], k, &f0, &df);
    if (st == SARBP_OK) st = c->fp_shape(ctx, np, fp);
    if (st == SARBP_OK) st = fp_orientation(path, c, np, k, fp);
    if (st == SARBP_OK && c->fp_limit) st = c->fp_limit(ctx, fp);
    if (st == SARBP_OK) st = phd_check_shape(path, "fp", np, k);
    if (st) goto done;

    if ((st = sarbp_phd_alloc(SARBP_DOMAIN_FREQ, np, k, 0, &m))) goto done;
    for (size_t i = 0; i < np; i++) {
        for (int a = 0; a < 3; a++) m->pos[3 * i + a] = v[a][i];
        m->f0[i] = f0;
        m->df[i] = df;
    }
    double *r0 = NULL;
    if ((st = c->read_optional(ctx, NULL, "r0", np, &r0))) goto done;
    free(m->r0);
    m->r0 = r0;
    if ((st = c->read_optional(ctx, NULL, "th", np, &m->th))) goto done;
    if ((st = c->read_optional(ctx, NULL, "phi", np, &m->phi))) goto done;
    if ((st = c->read_optional(ctx, "af", "r_correct", np, &m->r_correct))) goto done;
    if ((st = c->read_optional(ctx, "af", "ph_correct", np, &m->ph_correct))) goto done;
    *out = m;
    m = NULL;
done:
    sarbp_phd_free(m);
    for (size_t j = 0; j < 4; j++) free(v[j]);
    return st;
}
