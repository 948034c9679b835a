/* form.c - the pipeline: pulses in blocks from a reader (or memory) through a
 * back end into an image, with attributes recording how it was made. */
#include "sarbp/form.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef sarbp_status (*read_fn)(void *src, size_t p0, size_t np, sarbp_c32 *dst);

static void record_attrs(sarbp_image *img, const sarbp_backend *be, const sarbp_rc_params *rc,
                         const sarbp_bp_options *o, const sarbp_phd *meta)
{
    char buf[64];
    sarbp_image_set_attr(img, "sarbp_version", SARBP_VERSION_STRING);
    sarbp_image_set_attr(img, "backend", be->name);
    sarbp_image_set_attr(img, "precision", sarbp_precision_name(o->precision));
    if (o->variant) sarbp_image_set_attr(img, "variant", o->variant);
    sarbp_window_format(&rc->range_window, buf, sizeof buf);
    sarbp_image_set_attr(img, "range_window", buf);
    sarbp_window_format(&rc->az_window, buf, sizeof buf);
    sarbp_image_set_attr(img, "azimuth_window", buf);
    snprintf(buf, sizeof buf, "%d", rc->upsample);
    sarbp_image_set_attr(img, "upsample", buf);
    if (o->precision != SARBP_EXACT) sarbp_image_set_attr(img, "interp", sarbp_interp_name(rc->interp));
    snprintf(buf, sizeof buf, "%zu", meta->npulses);
    sarbp_image_set_attr(img, "npulses", buf);
    snprintf(buf, sizeof buf, "%zu", meta->nsamples);
    sarbp_image_set_attr(img, "nsamples", buf);
    sarbp_image_set_attr(img, "domain", meta->domain == SARBP_DOMAIN_FREQ ? "freq" : "chirp");
    /* the windows' coherent gain: a unit target at the origin peaks at
     * npulses * coherent_gain (the plan that knows it is cheap to make) */
    sarbp_rc_plan *plan = NULL;
    if (sarbp_rc_plan_create(meta, rc, SARBP_FP32, 1, &plan) == SARBP_OK) {
        snprintf(buf, sizeof buf, "%.10g", sarbp_rc_plan_coherent_gain(plan));
        sarbp_image_set_attr(img, "coherent_gain", buf);
    }
    sarbp_rc_plan_free(plan);
}

/* The output image is fresh, lazily mapped memory: its first touch costs a
 * page fault per page (tens of ms for a 4096^2 image, single-threaded),
 * which would land in finish(), after the compute. Threads touch it while
 * the back end computes instead, with transparent huge pages asked for
 * where the system offers them. */
#define PREFAULT_MIN_BYTES ((size_t)16 << 20)
#define PREFAULT_THREADS 8

struct prefault_part {
    unsigned char *p;
    size_t n;
};

struct prefault {
    pthread_t th[PREFAULT_THREADS];
    struct prefault_part part[PREFAULT_THREADS];
    int nth;
    unsigned char *mem;
    size_t n;
};

static void *prefault_main(void *arg)
{
    const struct prefault_part *part = arg;
    memset(part->p, 0, part->n);
    return NULL;
}

static void prefault_start(struct prefault *pf, void *mem, size_t n)
{
    pf->nth = 0;
    if (n < PREFAULT_MIN_BYTES) return;
#ifdef MADV_HUGEPAGE
    {
        const uintptr_t huge = (uintptr_t)2 << 20;
        uintptr_t a = ((uintptr_t)mem + huge - 1) & ~(huge - 1), e = ((uintptr_t)mem + n) & ~(huge - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#endif
    int nth = sarbp_cpu_count() / 2;
    if (nth < 1) nth = 1;
    if (nth > PREFAULT_THREADS) nth = PREFAULT_THREADS;
    pf->mem = mem;
    pf->n = n;
    for (int k = 0; k < nth; k++) {
        size_t a = n * k / nth, b = n * (k + 1) / nth;
        pf->part[k] = (struct prefault_part){pf->mem + a, b - a};
        if (pthread_create(&pf->th[k], NULL, prefault_main, &pf->part[k])) {
            memset(pf->mem + a, 0, n - a); /* no thread: do the rest here */
            break;
        }
        pf->nth++;
    }
}

static void prefault_join(struct prefault *pf)
{
    for (int k = 0; k < pf->nth; k++) pthread_join(pf->th[k], NULL);
    pf->nth = 0;
}

static sarbp_status form_core(const sarbp_phd *meta, read_fn rd, void *src, const sarbp_grid *g,
                              const sarbp_backend *be, const sarbp_rc_params *rc,
                              const sarbp_bp_options *o, sarbp_progress *progress,
                              sarbp_image **out, sarbp_form_stats *stats)
{
    *out = NULL;
    double t_start = sarbp_now_s(), t_read = 0;
    SARBP_TRY(sarbp_grid_validate(g));
    SARBP_TRY(sarbp_phd_validate(meta));
    void *plan = NULL;
    sarbp_image *img = NULL;
    sarbp_c32 *buf = NULL;
    double t_setup = sarbp_now_s();
    sarbp_status st = be->create(meta, g, rc, o, &plan);
    t_setup = sarbp_now_s() - t_setup;
    size_t block = st ? 0 : be->block_pulses(plan);
    if (!st && block == 0) st = sarbp_error(SARBP_ERR_INTERNAL, "back end wants blocks of 0 pulses");
    if (!st) {
        buf = malloc(block * meta->nsamples * sizeof(sarbp_c32));
        if (!buf) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for a block of %zu pulses", block);
    }
    if (!st) st = sarbp_image_alloc(g, &img);
    struct prefault pf = {0};
    if (!st) prefault_start(&pf, img->data, g->nx * g->ny * sizeof(sarbp_c32));
    size_t passes = st ? 0 : be->passes(plan);
    for (size_t k = 0; !st && k < passes; k++) {
        st = be->begin_pass(plan, k);
        for (size_t p0 = 0; !st && p0 < meta->npulses; p0 += block) {
            size_t np = meta->npulses - p0 < block ? meta->npulses - p0 : block;
            double t0 = sarbp_now_s();
            st = rd(src, p0, np, buf);
            t_read += sarbp_now_s() - t0;
            if (!st) st = be->execute(plan, p0, np, buf);
            sarbp_progress_update(progress, k * meta->npulses + p0 + np, passes * meta->npulses);
        }
    }
    prefault_join(&pf);
    double t_finish = sarbp_now_s();
    if (!st) st = be->finish(plan, img->data);
    t_finish = sarbp_now_s() - t_finish;
    sarbp_stage_times stages = {0};
    if (!st && be->stage_times) be->stage_times(plan, &stages);
    if (stages.setup_s <= 0) stages.setup_s = t_setup;
    if (stages.finish_s <= 0) stages.finish_s = t_finish;
    be->destroy(plan);
    free(buf);
    if (st) {
        sarbp_image_free(img);
        return st;
    }
    record_attrs(img, be, rc, o, meta);
    double t_end = sarbp_now_s();
    if (stats) {
        stats->read_s = t_read;
        stats->total_s = t_end - t_start;
        stats->compute_s = stats->total_s - t_read;
        stats->npulses = meta->npulses;
        stats->pairs = sarbp_grid_pairs(g, meta->npulses);
        stats->stages = stages;
    }
    *out = img;
    return SARBP_OK;
}

static sarbp_status read_reader(void *src, size_t p0, size_t np, sarbp_c32 *dst)
{
    return sarbp_reader_read(src, p0, np, dst);
}

static sarbp_status read_memory(void *src, size_t p0, size_t np, sarbp_c32 *dst)
{
    const sarbp_phd *phd = src;
    memcpy(dst, phd->data + p0 * phd->nsamples, np * phd->nsamples * sizeof(sarbp_c32));
    return SARBP_OK;
}

sarbp_status sarbp_form(sarbp_reader *rd, const sarbp_grid *g, const sarbp_backend *be,
                        const sarbp_rc_params *rc, const sarbp_bp_options *o,
                        sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats)
{
    sarbp_status st = form_core(sarbp_reader_meta(rd), read_reader, rd, g, be, rc, o, progress,
                                out, stats);
    if (st) return st;
    /* inputs, joined */
    char files[sizeof((*out)->attrs[0].value)] = "";
    for (size_t i = 0; i < sarbp_reader_nfiles(rd); i++) {
        size_t len = strlen(files);
        snprintf(files + len, sizeof files - len, "%s%s", i ? ";" : "", sarbp_reader_file(rd, i));
    }
    sarbp_image_set_attr(*out, "inputs", files);
    return SARBP_OK;
}

sarbp_status sarbp_form_phd(const sarbp_phd *phd, const sarbp_grid *g, const sarbp_backend *be,
                            const sarbp_rc_params *rc, const sarbp_bp_options *o,
                            sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats)
{
    if (!phd->data) return sarbp_error(SARBP_ERR_INVALID, "phase history holds no samples");
    return form_core(phd, read_memory, (void *)phd, g, be, rc, o, progress, out, stats);
}
