/* ffbp_cuda.c - fast factorized backprojection on a CUDA device
 * (sarbp_ffbp_cuda): plans the stages on the host in FP64
 * (ffbp_gpu_plan.c), allocates every device buffer up front, uploads the
 * profiles, runs kernels/ffbp.cu's dispatcher between two events, and adds
 * the image into the caller's. One call, one image: no streaming of pulse
 * blocks and no banding (the whole aperture's profiles and the largest
 * stage's polar grids, twice, must fit on the device). */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backproject/ffbp_gpu_plan.h"
#include "ffbp_kernels.h"
#include "sarbp/ffbp.h"

#define CUDA_TRY(call)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return sarbp_error(e_ == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA, \
                               "%s failed at %s:%d: %s", #call, __FILE__, __LINE__,      \
                               cudaGetErrorString(e_));                                  \
    } while (0)

/* launchers return cudaError_t as int */
#define LAUNCH_TRY(call) CUDA_TRY((cudaError_t)(call))

struct dev {
    sarbp_c32 *prof, *buf[2], *img;
    sarbp_dpulse *pulses;
    sarbp_ffbp_dsub *subs;
    sarbp_ffbp_drow *rows;
    cudaEvent_t e0, e1, e2;         /* start, tables uploaded, end */
    cudaEvent_t marks[2 * SARBP_FFBP_MAX_STAGES + 1];
    int nev, nmarks;                 /* created: of e0..e2, of marks */
    sarbp_c32 *h_img, *h_prof_tmp;
};

static void dev_free(struct dev *d)
{
    cudaFree(d->prof);
    cudaFree(d->buf[0]);
    cudaFree(d->buf[1]);
    cudaFree(d->img);
    cudaFree(d->pulses);
    cudaFree(d->subs);
    cudaFree(d->rows);
    if (d->nev > 0) cudaEventDestroy(d->e0);
    if (d->nev > 1) cudaEventDestroy(d->e1);
    if (d->nev > 2) cudaEventDestroy(d->e2);
    for (int k = 0; k < d->nmarks; k++) cudaEventDestroy(d->marks[k]);
    free(d->h_img);
    free(d->h_prof_tmp);
}

/* n * size into *bytes unless it overflows */
static sarbp_status bytes_of(size_t n, size_t size, const char *what, size_t *bytes)
{
    if (size && n > SIZE_MAX / size)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: %s of %zu elements overflows", what, n);
    *bytes = (n ? n : 1) * size;
    return SARBP_OK;
}

/* milliseconds from event a to b */
static sarbp_status elapsed(cudaEvent_t a, cudaEvent_t b, double *ms)
{
    float f = 0;
    CUDA_TRY(cudaEventElapsedTime(&f, a, b));
    *ms = f;
    return SARBP_OK;
}

static sarbp_status run(struct dev *d, sarbp_ffbp_gpu_plan *p, const sarbp_profiles *pr,
                        const sarbp_grid *g, int device, sarbp_c32 *img, int add,
                        sarbp_ffbp_cuda_times *t)
{
    size_t b_prof = 0, b_buf = 0, b_img = 0, b_pulses = 0, b_subs = 0, b_rows = 0;
    SARBP_TRY(bytes_of(pr->npulses * pr->nbins, sizeof(sarbp_c32), "the profiles", &b_prof));
    SARBP_TRY(bytes_of(p->buf_samples, sizeof(sarbp_c32), "a polar buffer", &b_buf));
    SARBP_TRY(bytes_of(g->nx * g->ny, sizeof(sarbp_c32), "the image", &b_img));
    SARBP_TRY(bytes_of(pr->npulses, sizeof(sarbp_dpulse), "the pulse table", &b_pulses));
    SARBP_TRY(bytes_of(p->nsubs, sizeof(sarbp_ffbp_dsub), "the sub-image table", &b_subs));
    SARBP_TRY(bytes_of(p->nrows, sizeof(sarbp_ffbp_drow), "the row table", &b_rows));

    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaMalloc((void **)&d->prof, b_prof));
    CUDA_TRY(cudaMalloc((void **)&d->buf[0], b_buf));
    CUDA_TRY(cudaMalloc((void **)&d->buf[1], b_buf));
    CUDA_TRY(cudaMalloc((void **)&d->img, b_img));
    CUDA_TRY(cudaMalloc((void **)&d->pulses, b_pulses));
    CUDA_TRY(cudaMalloc((void **)&d->subs, b_subs));
    CUDA_TRY(cudaMalloc((void **)&d->rows, b_rows));
    CUDA_TRY(cudaEventCreate(&d->e0));
    d->nev = 1;
    CUDA_TRY(cudaEventCreate(&d->e1));
    d->nev = 2;
    CUDA_TRY(cudaEventCreate(&d->e2));
    d->nev = 3;
    const int nmarks = 2 * p->run.nstages + 1;
    void *marks[2 * SARBP_FFBP_MAX_STAGES + 1];
    for (; d->nmarks < nmarks; d->nmarks++) {
        CUDA_TRY(cudaEventCreate(&d->marks[d->nmarks]));
        marks[d->nmarks] = (void *)d->marks[d->nmarks];
    }
    d->h_img = add ? malloc(b_img) : NULL;
    if (add && !d->h_img) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the image");
    const sarbp_c32 *h_prof = sarbp_ffbp_profiles32(pr, &d->h_prof_tmp);
    if (!h_prof) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the FP32 profiles");

    /* the profiles' upload is not timed */
    CUDA_TRY(cudaMemcpy(d->prof, h_prof, b_prof, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaDeviceSynchronize());

    sarbp_ffbp_run r = p->run;
    r.subs = d->subs;
    r.rows = d->rows;
    r.pulses = d->pulses;
    r.prof = d->prof;
    r.buf[0] = d->buf[0];
    r.buf[1] = d->buf[1];
    r.img = d->img;
    CUDA_TRY(cudaEventRecord(d->e0, NULL));
    CUDA_TRY(cudaMemcpyAsync(d->pulses, p->h_pulses, b_pulses, cudaMemcpyHostToDevice, NULL));
    CUDA_TRY(cudaMemcpyAsync(d->subs, p->h_subs, b_subs, cudaMemcpyHostToDevice, NULL));
    CUDA_TRY(cudaMemcpyAsync(d->rows, p->h_rows, b_rows, cudaMemcpyHostToDevice, NULL));
    CUDA_TRY(cudaEventRecord(d->e1, NULL));
    const int rc = sarbp_ffbp_launch(&r, NULL, marks);
    if (rc == (int)cudaErrorInvalidValue)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: a launch precondition failed "
                           "(%d stages, %d x %d image)", r.nstages, r.nx, r.ny);
    LAUNCH_TRY(rc);
    CUDA_TRY(cudaEventRecord(d->e2, NULL));
    CUDA_TRY(cudaEventSynchronize(d->e2));
    memset(t, 0, sizeof *t);
    SARBP_TRY(elapsed(d->e0, d->e2, &t->total_ms));
    SARBP_TRY(elapsed(d->e0, d->e1, &t->tables_ms));
    SARBP_TRY(elapsed(d->e1, d->marks[0], &t->stage0_ms));
    for (int s = 0; s < r.nstages; s++) {
        double ms;
        if (s > 0) {
            SARBP_TRY(elapsed(d->marks[2 * s - 1], d->marks[2 * s], &ms));
            t->merge_ms += ms;
        }
        SARBP_TRY(elapsed(d->marks[s > 0 ? 2 * s : 0], d->marks[2 * s + 1], &ms));
        t->prefilter_ms += ms;
    }
    SARBP_TRY(elapsed(d->marks[2 * r.nstages - 1], d->marks[2 * r.nstages], &t->final_ms));
    if (!add) { /* straight into the caller's rows */
        CUDA_TRY(cudaMemcpy(img, d->img, b_img, cudaMemcpyDeviceToHost));
        return SARBP_OK;
    }
    CUDA_TRY(cudaMemcpy(d->h_img, d->img, b_img, cudaMemcpyDeviceToHost));
    const size_t n = g->nx * g->ny;
    for (size_t i = 0; i < n; i++) {
        img[i].re += d->h_img[i].re;
        img[i].im += d->h_img[i].im;
    }
    return SARBP_OK;
}

/* sarbp_ffbp_cuda_timed, adding into img (add) or writing it (!add) */
static sarbp_status ffbp_cuda(const sarbp_profiles *pr, const sarbp_grid *g,
                              const sarbp_ffbp_params *prm, int device, sarbp_c32 *img, int add,
                              sarbp_ffbp_info *info, sarbp_ffbp_cuda_times *t)
{
    memset(t, 0, sizeof *t);
    if (!(pr->precision == SARBP_FP64 ? pr->data64 != NULL : pr->data32 != NULL) ||
        pr->precision == SARBP_FP16 || pr->precision == SARBP_EXACT)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU takes FP32 or FP64 profiles");
    SARBP_TRY(sarbp_cuda_check_device(device));
    CUDA_TRY(cudaSetDevice(device));
    if (pr->npulses == 0) return SARBP_OK;
    sarbp_ffbp_gpu_plan p;
    sarbp_status st = sarbp_ffbp_gpu_plan_make(pr, g, prm, &p);
    if (!st) {
        struct dev d;
        memset(&d, 0, sizeof d);
        st = run(&d, &p, pr, g, device, img, add, t);
        dev_free(&d);
        if (!st) sarbp_ffbp_gpu_plan_info(&p, info);
    }
    sarbp_ffbp_gpu_plan_release(&p);
    return st;
}

sarbp_status sarbp_ffbp_cuda_timed(const sarbp_profiles *pr, const sarbp_grid *g,
                                   const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
                                   sarbp_ffbp_info *info, sarbp_ffbp_cuda_times *t)
{
    return ffbp_cuda(pr, g, prm, device, img, 1, info, t);
}

sarbp_status sarbp_ffbp_cuda(const sarbp_profiles *pr, const sarbp_grid *g,
                             const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
                             sarbp_ffbp_info *info, double *device_ms)
{
    sarbp_ffbp_cuda_times t;
    const sarbp_status st = sarbp_ffbp_cuda_timed(pr, g, prm, device, img, info, &t);
    if (device_ms) *device_ms = t.total_ms;
    return st;
}

/* ---- the cuda back end's FFBP plan ---- */

#include "backproject/bp_plan.h"
#include "core/parallel.h"
#include "sarbp/progress.h"

/* Host range compression: pulses in chunks of RC_CHUNK, one FFTW plan per
 * thread (at most RC_THREADS), so that it keeps up with the device. */
#define RC_CHUNK 16
#define RC_THREADS 16

struct ffbp_cuda_plan {
    sarbp_bp_plan base;        /* first: the plan's ops and common state */
    sarbp_cuda_options o;
    sarbp_ffbp_params prm;
    sarbp_rc_plan *rc[RC_THREADS];
    int nrc;
    sarbp_profiles *pr;        /* the whole aperture's FP32 profiles, host */
    unsigned char *have;       /* [P]: nonzero once pulse i is compressed for this region */
    size_t nhave;
};

static void cffbp_destroy(sarbp_bp_plan *bp)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    for (int k = 0; k < p->nrc; k++) sarbp_rc_plan_free(p->rc[k]);
    sarbp_profiles_free(p->pr);
    free(p->have);
    sarbp_bp_plan_release(&p->base);
    free(p);
}

struct rc_job {
    struct ffbp_cuda_plan *p;
    size_t p0, np;
    const sarbp_c32 *samples;
    sarbp_status st[RC_THREADS];
};

static void rc_task(void *ctx, size_t task, int worker)
{
    struct rc_job *j = ctx;
    if (j->st[worker]) return;
    const size_t q = j->p0 + task * RC_CHUNK, n = j->p0 + j->np - q < RC_CHUNK ? j->p0 + j->np - q : RC_CHUNK;
    sarbp_profiles v = sarbp_profiles_slice(j->p->pr, q, n);
    j->st[worker] = sarbp_rc_execute(j->p->rc[worker], q, n,
                                     j->samples + (q - j->p0) * j->p->base.meta->nsamples, &v);
}

static sarbp_status cffbp_execute(sarbp_bp_plan *bp, size_t p0, size_t np, const sarbp_c32 *samples,
                                  sarbp_stage_times *stats)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    if (!samples) /* the layout keeps nothing for this plan (per_kept_pulse SIZE_MAX) */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "the cuda ffbp plan keeps no profiles");
    const double t0 = sarbp_now_s();
    struct rc_job j = {p, p0, np, samples, {SARBP_OK}};
    SARBP_TRY(sarbp_parallel_for(p->nrc, (np + RC_CHUNK - 1) / RC_CHUNK, rc_task, &j));
    for (int k = 0; k < p->nrc; k++) SARBP_TRY(j.st[k]);
    for (size_t i = p0; i < p0 + np; i++) {
        p->nhave += !p->have[i];
        p->have[i] = 1;
    }
    if (stats) stats->rc_s += sarbp_now_s() - t0;
    return SARBP_OK;
}

static sarbp_status cffbp_region(sarbp_bp_plan *bp, sarbp_region r)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    (void)r; /* the pulses come again for every region */
    memset(p->have, 0, p->base.meta->npulses);
    p->nhave = 0;
    return SARBP_OK;
}

static sarbp_status cffbp_finish(sarbp_bp_plan *bp, sarbp_c32 *out, sarbp_stage_times *stats)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    const double t0 = sarbp_now_s();
    const size_t P = p->base.meta->npulses;
    if (p->nhave != P)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp needs every pulse: %zu of %zu came", p->nhave, P);
    const sarbp_region r = p->base.region;
    sarbp_grid bg = p->base.grid;
    if (r.row0 != 0 || r.nrows != p->base.grid.ny)
        SARBP_TRY(sarbp_grid_band(&p->base.grid, r.row0, r.nrows, &bg));
    p->pr->npulses = P;
    sarbp_ffbp_cuda_times t;
    SARBP_TRY(ffbp_cuda(p->pr, &bg, &p->prm, p->o.device, out, 0, NULL, &t));
    if (stats) {
        stats->bp_s += t.total_ms * 1e-3;
        stats->finish_s += sarbp_now_s() - t0;
    }
    return SARBP_OK;
}

static const sarbp_bp_plan_ops cffbp_ops = {cffbp_execute, cffbp_region, cffbp_finish,
                                            cffbp_destroy};

sarbp_status sarbp_cuda_ffbp_plan_create(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                         sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    *out = NULL;
    const double t0 = sarbp_now_s();
    if (o->precision != SARBP_FP32)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "ffbp runs in fp32 only (precision %s asked)",
                           sarbp_precision_name(o->precision));
    struct ffbp_cuda_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = sarbp_bp_plan_init(&p->base, &cffbp_ops, d);
    const sarbp_phd *meta = d->meta;
    const size_t P = meta->npulses;
    p->o = *o;
    p->base.block = o->pulse_block ? o->pulse_block : 256;
    if (p->base.block > P) p->base.block = P ? P : 1;
    if (!st && P == 0) st = sarbp_error(SARBP_ERR_INVALID, "ffbp: no pulses");
    if (!st) st = sarbp_ffbp_choose_phd(meta, d->rc, d->grid, o->max_error_db, &p->prm, NULL);
    int nrc = sarbp_cpu_count();
    nrc = nrc < 1 ? 1 : nrc > RC_THREADS ? RC_THREADS : nrc;
    for (; !st && p->nrc < nrc; p->nrc++) {
        st = sarbp_rc_plan_create(meta, d->rc, SARBP_FP32, RC_CHUNK, &p->rc[p->nrc]);
        if (st) break;
    }
    if (!st) st = sarbp_profiles_alloc(P, sarbp_rc_plan_nbins(p->rc[0]), SARBP_FP32, &p->pr);
    if (!st) {
        p->pr->interp = sarbp_rc_plan_interp(p->rc[0]);
        p->have = calloc(P, 1);
        if (!p->have) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    if (st) {
        cffbp_destroy(&p->base);
        return st;
    }
    if (stats) {
        stats->setup_s += sarbp_now_s() - t0;
        stats->pulse_bytes = P * p->pr->nbins * sizeof(sarbp_c32);
        stats->image_bytes = p->base.max_rows * d->grid->nx * sizeof(sarbp_c32);
    }
    *out = &p->base;
    return SARBP_OK;
}
