/* form_af.c - a form with autofocus (sarbp/autofocus.h,
 * sarbp_form_plan_execute_autofocused): every pulse in memory, the
 * correction estimated on the plan's grid by the plan's back end, applied,
 * and the image formed from memory carrying the estimate. The CLI's
 * --autofocus estimate|pga and Python's form(autofocus=...) call this. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sarbp/autofocus.h"
#include "sarbp/form.h"

sarbp_status sarbp_form_plan_execute_autofocused(sarbp_form_plan *fp, sarbp_reader *rd, const sarbp_phd *phd,
                                                 const sarbp_autofocus_options *o, sarbp_progress *progress,
                                                 sarbp_image **out, sarbp_form_stats *stats,
                                                 sarbp_autofocus_info *info)
{
    *out = NULL;
    if (!rd == !phd) return sarbp_error(SARBP_ERR_INVALID, "autofocus: a reader or a phase history, one of them");
    const sarbp_phd *meta = rd ? sarbp_reader_meta(rd) : phd;
    const sarbp_form_decision *d = sarbp_form_plan_decision(fp);
    if (d->rows.row0 != 0 || d->rows.nrows != d->grid.ny)
        return sarbp_error(SARBP_ERR_INVALID, "autofocus forms the whole image in one process");
    const size_t P = meta->npulses, K = meta->nsamples;
    if (rd && K && P > SIZE_MAX / K / sizeof(sarbp_c32))
        return sarbp_error(SARBP_ERR_NOMEM, "autofocus: %zu pulses of %zu samples overflow", P, K);
    sarbp_phd *p = NULL;
    double *phase = NULL, *range = NULL;
    sarbp_image *img = NULL;
    sarbp_status st = sarbp_phd_slice(meta, 0, P, &p); /* the samples too, from a phase history */
    if (!st && rd && !(p->data = malloc(P * K * sizeof *p->data)))
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu pulses of %zu samples", P, K);
    if (!st && (!(phase = malloc(P * sizeof *phase)) || !(range = calloc(P, sizeof *range))))
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    if (!st && rd) st = sarbp_reader_read(rd, 0, P, p->data);
    /* the plan's back end, threads and (first) device */
    sarbp_autofocus_options oo = *o;
    oo.threads = d->bp.threads;
    oo.device = d->backend == &sarbp_backend_cuda ? (d->bp.ndevices > 0 ? d->bp.devices[0] : d->bp.device) : -1;
    if (!st) st = sarbp_autofocus_estimate(p, &d->grid, &d->rc, &oo, phase, oo.range ? range : NULL, info);
    if (!st) st = sarbp_autofocus_apply(p, phase, oo.range ? range : NULL);
    if (!st) st = sarbp_image_alloc(&d->grid, &img);
    if (!st) st = sarbp_form_plan_execute(fp, NULL, p, progress, img->data, 1, stats);
    if (!st) st = sarbp_form_plan_attrs(fp, img);
    if (!st && rd) st = sarbp_form_inputs_attr(rd, img);
    if (!st) st = sarbp_image_set_autofocus(img, phase, P);
    if (!st && oo.range) st = sarbp_image_set_autofocus_range(img, range);
    sarbp_phd_free(p);
    free(phase);
    free(range);
    if (st) {
        sarbp_image_free(img);
        return st;
    }
    *out = img;
    return SARBP_OK;
}
