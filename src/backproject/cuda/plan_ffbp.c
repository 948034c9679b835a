/* cuda/plan_ffbp.c - fast factorized backprojection on a CUDA device. The
 * stages are planned on the host in FP64 (ffbp/gpu_plan.c) and run by
 * kernels/ffbp.cu's dispatcher between two events, from FP32 profiles in
 * device memory. Two users: sarbp_ffbp_cuda takes host profiles (uploaded
 * first, untimed) and adds the image into the caller's; the cuda back
 * end's FFBP plan (below) range-compresses every pulse block on the device
 * (cuda/rc.c) straight into the resident profiles, queues each
 * sub-aperture's stage 0 as soon as its pulses are there, the rest of the
 * region's FFBP and the copy of its image into the caller's rows at
 * finish. The profiles stay on the device across regions: a later region
 * (band) given no samples runs on them, and the input is read once. No
 * banding inside one run: the whole aperture's profiles and the
 * largest stage's polar grids, twice, must fit on the device (bands are the
 * partition layer's regions). */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "copy.h"
#include "rc.h"
#include "device.h"
#include "ffbp_kernels.h"
#include "backproject/ffbp/gpu_plan.h"
#include "backproject/session_internal.h"
#include "core/sample_check.h"
#include "sarbp/bench.h"
#include "sarbp/ffbp.h"

/* The device side of FFBP runs. The polar buffers, image and tables grow to
 * the largest run served (the plan keeps one across its regions); prof
 * and pulses are sized by whoever fills prof. */
struct dev {
    sarbp_cuda_device *ctx;          /* where its memory comes from (NULL: plain cudaMalloc) */
    sarbp_c32 *prof, *buf[2], *img;
    sarbp_dpulse *pulses;
    sarbp_ffbp_dsub *subs;
    sarbp_ffbp_drow *rows;
    size_t n_prof, n_buf, n_img, n_pulses, n_subs, n_rows; /* bytes allocated */
    cudaEvent_t e0, e1, e2, ef;     /* start, tables uploaded, end; the rest's start (stage 0's
                                       rows not yet run, then the merges) */
    cudaEvent_t marks[2 * SARBP_FFBP_MAX_STAGES + SARBP_FFBP_MAX_CHUNKS];
    int nev, nmarks;                 /* created: of e0..e2, of marks */
    sarbp_c32 *h_img, *h_prof_tmp;
};

/* The device memory of a run (not the profiles): freed, sizes zeroed. */
static void dev_free_run(struct dev *d)
{
    sarbp_cuda_dfree(d->ctx, d->buf[0]);
    sarbp_cuda_dfree(d->ctx, d->buf[1]);
    sarbp_cuda_dfree(d->ctx, d->img);
    sarbp_cuda_dfree(d->ctx, d->pulses);
    sarbp_cuda_dfree(d->ctx, d->subs);
    sarbp_cuda_dfree(d->ctx, d->rows);
    d->buf[0] = d->buf[1] = d->img = NULL;
    d->pulses = NULL;
    d->subs = NULL;
    d->rows = NULL;
    d->n_buf = d->n_img = d->n_pulses = d->n_subs = d->n_rows = 0;
}

static void dev_free(struct dev *d)
{
    sarbp_cuda_dfree(d->ctx, d->prof);
    dev_free_run(d);
    if (d->nev > 0) cudaEventDestroy(d->e0);
    if (d->nev > 1) cudaEventDestroy(d->e1);
    if (d->nev > 2) cudaEventDestroy(d->e2);
    if (d->nev > 3) cudaEventDestroy(d->ef);
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

/* *ptr holds at least bytes (its *cap bytes, or a new allocation from ctx) */
static sarbp_status grow(sarbp_cuda_device *ctx, void **ptr, size_t *cap, size_t bytes)
{
    if (bytes <= *cap) return SARBP_OK;
    sarbp_cuda_dfree(ctx, *ptr);
    *ptr = NULL;
    *cap = 0;
    SARBP_TRY(sarbp_cuda_dmalloc(ctx, ptr, bytes, NULL));
    *cap = bytes;
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

/* Opens plan p's run on the profiles in d->prof (filled before its stage
 * 0 reads them, on the same stream): the buffers grown, the events made,
 * the tables' upload queued between e0 and e1 on stream. The final sum
 * will come in `chunks` row chunks (1 to SARBP_FFBP_MAX_CHUNKS; chunk c
 * final at d->marks[2 nstages + c]). */
static sarbp_status run_open(struct dev *d, const sarbp_ffbp_gpu_plan *p, const sarbp_grid *g,
                             cudaStream_t stream, int chunks)
{
    size_t b_buf = 0, b_img = 0, b_pulses = 0, b_subs = 0, b_rows = 0;
    SARBP_TRY(bytes_of(p->buf_samples, sizeof(sarbp_c32), "a polar buffer", &b_buf));
    SARBP_TRY(bytes_of(g->nx * g->ny, sizeof(sarbp_c32), "the image", &b_img));
    SARBP_TRY(bytes_of((size_t)p->run.np, sizeof(sarbp_dpulse), "the pulse table", &b_pulses));
    SARBP_TRY(bytes_of(p->nsubs, sizeof(sarbp_ffbp_dsub), "the sub-image table", &b_subs));
    SARBP_TRY(bytes_of(p->nrows, sizeof(sarbp_ffbp_drow), "the row table", &b_rows));
    if (!d->prof) return sarbp_error(SARBP_ERR_INTERNAL, "ffbp on the GPU: no profiles on the device");

    /* when one must grow, every one is freed first and made to measure:
     * what the device holds is then this run's need (what
     * sarbp_ffbp_cuda_run_bytes counts), never an earlier run's larger
     * buffers (an earlier plan's kept set) beside this one's */
    if (b_buf > d->n_buf || b_img > d->n_img || b_pulses > d->n_pulses || b_subs > d->n_subs ||
        b_rows > d->n_rows)
        dev_free_run(d);
    if (b_buf > d->n_buf) { /* the ping-pong pair, n_buf bytes each */
        SARBP_TRY(sarbp_cuda_dmalloc(d->ctx, (void **)&d->buf[0], b_buf, NULL));
        SARBP_TRY(sarbp_cuda_dmalloc(d->ctx, (void **)&d->buf[1], b_buf, NULL));
        d->n_buf = b_buf;
    }
    SARBP_TRY(grow(d->ctx, (void **)&d->img, &d->n_img, b_img));
    SARBP_TRY(grow(d->ctx, (void **)&d->pulses, &d->n_pulses, b_pulses));
    SARBP_TRY(grow(d->ctx, (void **)&d->subs, &d->n_subs, b_subs));
    SARBP_TRY(grow(d->ctx, (void **)&d->rows, &d->n_rows, b_rows));
    cudaEvent_t *const ev[4] = {&d->e0, &d->e1, &d->e2, &d->ef};
    for (; d->nev < 4; d->nev++) CUDA_TRY(cudaEventCreate(ev[d->nev]));
    const int nmarks = 2 * p->run.nstages + chunks;
    for (; d->nmarks < nmarks; d->nmarks++) CUDA_TRY(cudaEventCreate(&d->marks[d->nmarks]));
    CUDA_TRY(cudaEventRecord(d->e0, stream));
    CUDA_TRY(cudaMemcpyAsync(d->pulses, p->h_pulses, b_pulses, cudaMemcpyHostToDevice, stream));
    CUDA_TRY(cudaMemcpyAsync(d->subs, p->h_subs, b_subs, cudaMemcpyHostToDevice, stream));
    CUDA_TRY(cudaMemcpyAsync(d->rows, p->h_rows, b_rows, cudaMemcpyHostToDevice, stream));
    CUDA_TRY(cudaEventRecord(d->e1, stream));
    return SARBP_OK;
}

/* Plan p's run with the device pointers of d. */
static sarbp_ffbp_run run_of(const struct dev *d, const sarbp_ffbp_gpu_plan *p, int chunks)
{
    sarbp_ffbp_run r = p->run;
    r.subs = d->subs;
    r.rows = d->rows;
    r.pulses = d->pulses;
    r.prof = d->prof;
    r.buf[0] = d->buf[0];
    r.buf[1] = d->buf[1];
    r.img = d->img;
    r.final_chunks = chunks;
    return r;
}

/* A launch's error as a status. */
static sarbp_status launch_status(int rc, const sarbp_ffbp_run *r)
{
    if (rc == (int)cudaErrorInvalidValue)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: a launch precondition failed "
                           "(%d stages, %d x %d image)", r->nstages, r->nx, r->ny);
    LAUNCH_TRY(rc);
    return SARBP_OK;
}

/* Queues the rest of an opened run behind what stream holds (stage 0 too
 * unless stage0_done: every stage-0 row was queued already), then e2: the
 * image will be in d->img ([g->ny][g->nx]) once run_wait returns. The
 * caller has recorded d->ef where the rest starts. */
static sarbp_status run_rest(struct dev *d, const sarbp_ffbp_gpu_plan *p, cudaStream_t stream, int chunks,
                             int stage0_done)
{
    const int nmarks = 2 * p->run.nstages + chunks;
    void *marks[2 * SARBP_FFBP_MAX_STAGES + SARBP_FFBP_MAX_CHUNKS];
    for (int k = 0; k < nmarks; k++) marks[k] = (void *)d->marks[k];
    sarbp_ffbp_run r = run_of(d, p, chunks);
    r.stage0_done = stage0_done;
    SARBP_TRY(launch_status(sarbp_ffbp_launch(&r, stream, marks), &r));
    CUDA_TRY(cudaEventRecord(d->e2, stream));
    return SARBP_OK;
}

/* The whole run of plan p queued on stream (sarbp_ffbp_cuda's). */
static sarbp_status run_launch(struct dev *d, const sarbp_ffbp_gpu_plan *p, const sarbp_grid *g,
                               cudaStream_t stream, int chunks)
{
    SARBP_TRY(run_open(d, p, g, stream, chunks));
    CUDA_TRY(cudaEventRecord(d->ef, stream));
    return run_rest(d, p, stream, chunks, 0);
}

/* Waits for the run of plan p; its device times into t. s0_ms: the device
 * time of stage-0 rows queued between the pulse blocks (before d->ef). */
static sarbp_status run_wait(struct dev *d, const sarbp_ffbp_gpu_plan *p, double s0_ms,
                             sarbp_ffbp_cuda_times *t)
{
    const sarbp_ffbp_run r = p->run;
    CUDA_TRY(cudaEventSynchronize(d->e2));
    memset(t, 0, sizeof *t);
    double rest = 0;
    SARBP_TRY(elapsed(d->ef, d->e2, &rest));
    SARBP_TRY(elapsed(d->e0, d->e1, &t->tables_ms));
    t->total_ms = t->tables_ms + s0_ms + rest;
    SARBP_TRY(elapsed(d->ef, d->marks[0], &t->stage0_ms));
    t->stage0_ms += s0_ms;
    for (int s = 0; s < r.nstages; s++) {
        double ms = 0;
        if (s > 0) {
            SARBP_TRY(elapsed(d->marks[2 * s - 1], d->marks[2 * s], &ms));
            t->merge_ms += ms;
        }
        SARBP_TRY(elapsed(d->marks[s > 0 ? 2 * s : 0], d->marks[2 * s + 1], &ms));
        t->prefilter_ms += ms;
    }
    SARBP_TRY(elapsed(d->marks[2 * r.nstages - 1], d->e2, &t->final_ms));
    return SARBP_OK;
}

/* sarbp_ffbp_cuda's run: the host profiles pr uploaded (untimed), the image
 * added into img. */
static sarbp_status run_host(struct dev *d, const sarbp_ffbp_gpu_plan *p, const sarbp_profiles *pr,
                             const sarbp_grid *g, sarbp_c32 *img, sarbp_ffbp_cuda_times *t)
{
    size_t b_prof = 0, b_img = 0;
    /* npulses * nbins fits: sarbp_ffbp_gpu_plan_make checked it */
    SARBP_TRY(bytes_of(pr->npulses * pr->nbins, sizeof(sarbp_c32), "the profiles", &b_prof));
    SARBP_TRY(bytes_of(g->nx * g->ny, sizeof(sarbp_c32), "the image", &b_img));
    SARBP_TRY(grow(d->ctx, (void **)&d->prof, &d->n_prof, b_prof));
    d->h_img = malloc(b_img);
    if (!d->h_img) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the image");
    const sarbp_c32 *h_prof = sarbp_ffbp_profiles32(pr, &d->h_prof_tmp);
    if (!h_prof) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the FP32 profiles");
    CUDA_TRY(cudaMemcpy(d->prof, h_prof, b_prof, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaDeviceSynchronize());
    SARBP_TRY(run_launch(d, p, g, NULL, 1));
    SARBP_TRY(run_wait(d, p, 0, t));
    CUDA_TRY(cudaMemcpy(d->h_img, d->img, b_img, cudaMemcpyDeviceToHost));
    const size_t n = g->nx * g->ny;
    for (size_t i = 0; i < n; i++) {
        img[i].re += d->h_img[i].re;
        img[i].im += d->h_img[i].im;
    }
    return SARBP_OK;
}

sarbp_status sarbp_ffbp_cuda_timed(const sarbp_profiles *pr, const sarbp_grid *g,
                                   const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
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
        st = run_host(&d, &p, pr, g, img, t);
        dev_free(&d);
        if (!st) sarbp_ffbp_gpu_plan_info(&p, info);
    }
    sarbp_ffbp_gpu_plan_release(&p);
    return st;
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

#include "backproject/plan.h"
#include "sarbp/progress.h"

/* Pulses are range-compressed on the plan's stream as they come, a block
 * at a time, into their rows of the resident profiles. The region's
 * factorization is planned at its first block (the geometry of every pulse
 * is the metadata's), and stage 0 of each sub-aperture is queued behind
 * the block that completes its pulses, so the device forms the first polar
 * sub-images while the host still reads and stages the later blocks;
 * flush queues the rest of the FFBP behind the last block on the same
 * stream. On a lent H100 host stage 0 and its prefilter were 0.8 of the
 * 2.1 ms the bench problem's FFBP took after the last block
 * (docs/benchmarks/2026-11-journal.md). Everything the device holds is allocated at
 * create except the FFBP's polar buffers, image and tables, which grow to
 * the largest region. */
#define STAGE_EVENTS 4
/* A block's staging: the host fills it, the device uploads and compresses it. */
struct ffbp_stage {
    void *h_raw, *d_raw;       /* [block][K] the block's samples, FP32; host pinned */
    sarbp_dpulse *h_pulses, *d_pulses; /* [block] its pulse table; host pinned */
    cudaEvent_t ev[STAGE_EVENTS]; /* its last block: before upload, uploaded, compressed, and
                                     after the stage-0 rows queued behind it (s0) */
    int nev, pending, s0;      /* ev[] created; recorded and not yet counted; ev[3] recorded */
};

struct ffbp_cuda_plan {
    sarbp_bp_plan base;        /* first: the plan's ops and common state */
    sarbp_cuda_options o;
    sarbp_ffbp_params prm;
    sarbp_rc_plan *rc;         /* CPU plan: bins, interpolation, the tables' source */
    sarbp_profiles *geo;       /* [P] per-pulse geometry, host; one bin (its data unused) */
    size_t nbins;
    sarbp_cuda_rc crc;         /* range compression on crc.stream (sub = block) */
    struct ffbp_stage stage[2]; /* used by blocks in turn: the host fills one while the
                                   device uploads and compresses the other */
    int next;                  /* the staging set of the next block */
    sarbp_cuda_rc_tables_t tab; /* the range compression's tables (cuda/rc.h) */
    int inv_ok, fwd_ok;
    struct dev dv;             /* dv.prof: [P][nbins] complex profiles; the FFBP's buffers */
    sarbp_d2h *copier;         /* the image's way back to the caller's memory */
    sarbp_cuda_device *ctx;    /* the session's context of the device: memory, kept sets */
    sarbp_session *own;        /* a session of the plan's own, when it was given none */
    sarbp_ffbp_gpu_plan fp;    /* the region's factorization, from its first block to finish */
    int opened;                /* fp made, its buffers and tables on the device (run_open) */
    int launched;              /* the rest of its run queued (flush) */
    size_t prefix;             /* the region's pulses [0, prefix) are all compressed */
    size_t s0_subs;            /* stage-0 sub-images queued, the first ones */
    long long s0_rows;         /* their rows */
    double s0_ms;              /* device time of the stage-0 rows queued between blocks */
    int chunks;                /* row chunks of its final sum */
    size_t pulse_bytes;        /* device bytes of pulse data, for stats */
    size_t kit_bytes;          /* of them, the block buffers and cuFFT work areas a kit keeps */
    size_t kit_mem;            /* of kit_bytes, the block buffers (the context's memory) */
    unsigned char *have;       /* [P]: nonzero once pulse i is compressed for this region */
    size_t nhave;
};

/* ---- device resources kept for the next plan --------------------------- */

/* A plan's stream, cuFFT plans, block buffers and events, and its FFBP's
 * device memory (profiles, polar buffers, image, tables) cost a plan about
 * 1.4 ms to make and 0.6 ms to free at the bench size on an H100; a plan
 * gives them back to its device's context in the session (device.h), and
 * the next plan with the same block shapes takes them (a bench's
 * repetitions, a batch's images). The context frees the set when a plan
 * needs its memory or the session ends. */
struct ffbp_kit {
    size_t K, nbins, block, nmf;   /* the shapes it serves (nmf 0: FREQ) */
    cudaStream_t stream;
    cufftHandle inv, fwd;
    int inv_ok, fwd_ok;
    void *d_fft, *d_spec;
    void *d_raw[2];
    sarbp_dpulse *d_pulses[2];
    cudaEvent_t ev[2][STAGE_EVENTS];
    int nev[2];
    struct dev dv;
};

/* A kept set's free function (device.h): everything k holds, its device
 * current. */
static void fkit_free_set(sarbp_cuda_device *ctx, void *set)
{
    struct ffbp_kit *k = set;
    if (k->inv_ok) cufftDestroy(k->inv);
    if (k->fwd_ok) cufftDestroy(k->fwd);
    if (k->stream) cudaStreamDestroy(k->stream);
    sarbp_cuda_dfree(ctx, k->d_fft);
    sarbp_cuda_dfree(ctx, k->d_spec);
    for (int j = 0; j < 2; j++) {
        sarbp_cuda_dfree(ctx, k->d_raw[j]);
        sarbp_cuda_dfree(ctx, k->d_pulses[j]);
        for (int e = 0; e < k->nev[j]; e++) cudaEventDestroy(k->ev[j][e]);
    }
    dev_free(&k->dv);
    free(k);
}

/* Whether kept set k serves plan p's shapes (device_take's test). */
static int fkit_fits(const void *set, const void *plan)
{
    const struct ffbp_kit *k = set;
    const struct ffbp_cuda_plan *p = plan;
    return k->K == p->crc.K && k->nbins == p->nbins && k->block == p->base.block && k->nmf == p->crc.nmf;
}

/* Takes a kept set of p's shapes from its device's context into p (1), or
 * finds none (0). */
static int fkit_take(struct ffbp_cuda_plan *p)
{
    struct ffbp_kit *k = sarbp_cuda_device_take(p->ctx, SARBP_KEEP_FFBP, fkit_fits, p);
    if (!k) return 0;
    sarbp_cuda_rc *c = &p->crc;
    c->stream = k->stream;
    c->inv = k->inv;
    c->fwd = k->fwd;
    p->inv_ok = k->inv_ok;
    p->fwd_ok = k->fwd_ok;
    c->d_fft = k->d_fft;
    c->d_spec = k->d_spec;
    for (int j = 0; j < 2; j++) {
        struct ffbp_stage *g = &p->stage[j];
        g->d_raw = k->d_raw[j];
        g->d_pulses = k->d_pulses[j];
        memcpy(g->ev, k->ev[j], sizeof g->ev);
        g->nev = k->nev[j];
    }
    p->dv = k->dv;
    free(k);
    return 1;
}

/* Gives p's set (its device idle) to the device's context, clearing it
 * from p. */
static void fkit_give(struct ffbp_cuda_plan *p)
{
    sarbp_cuda_rc *c = &p->crc;
    if (!p->ctx || !c->stream || !p->inv_ok || (c->nmf && !p->fwd_ok) || !p->dv.prof || !c->d_fft ||
        (c->nmf && !c->d_spec))
        return; /* a plan whose setup failed half way */
    for (int j = 0; j < 2; j++)
        if (p->stage[j].nev < STAGE_EVENTS || !p->stage[j].d_raw || !p->stage[j].d_pulses) return;
    struct ffbp_kit *k = malloc(sizeof *k);
    if (!k) return; /* p frees it all */
    *k = (struct ffbp_kit){c->K, p->nbins, p->base.block, c->nmf, c->stream, c->inv, c->fwd,
                           p->inv_ok, p->fwd_ok, c->d_fft, c->d_spec, {NULL, NULL}, {NULL, NULL},
                           {{NULL}}, {0, 0}, p->dv};
    for (int j = 0; j < 2; j++) {
        struct ffbp_stage *g = &p->stage[j];
        k->d_raw[j] = g->d_raw;
        k->d_pulses[j] = g->d_pulses;
        memcpy(k->ev[j], g->ev, sizeof g->ev);
        k->nev[j] = g->nev;
    }
    const size_t bytes = p->dv.n_prof + 2 * p->dv.n_buf + p->dv.n_img + p->dv.n_pulses + p->dv.n_subs +
                         p->dv.n_rows + p->kit_mem;
    c->stream = NULL;
    p->inv_ok = p->fwd_ok = 0;
    c->d_fft = c->d_spec = NULL;
    for (int j = 0; j < 2; j++) {
        struct ffbp_stage *g = &p->stage[j];
        g->d_raw = NULL;
        g->d_pulses = NULL;
        g->nev = 0;
    }
    memset(&p->dv, 0, sizeof p->dv);
    sarbp_cuda_device_keep(p->ctx, SARBP_KEEP_FFBP, k, bytes, fkit_free_set);
}

static void cffbp_destroy(sarbp_bp_plan *bp)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    cudaSetDevice(p->o.device);
    if (p->crc.stream) cudaStreamSynchronize(p->crc.stream);
    if (p->opened) sarbp_ffbp_gpu_plan_release(&p->fp);
    fkit_give(p); /* what it keeps is cleared from p */
    dev_free(&p->dv);
    sarbp_d2h_destroy(p->copier);
    for (int k = 0; k < 2; k++) {
        struct ffbp_stage *g = &p->stage[k];
        sarbp_cuda_pinned_put(p->ctx, g->h_raw);
        sarbp_cuda_pinned_put(p->ctx, g->h_pulses);
        sarbp_cuda_dfree(p->ctx, g->d_raw);
        sarbp_cuda_dfree(p->ctx, g->d_pulses);
        for (int e = 0; e < g->nev; e++) cudaEventDestroy(g->ev[e]);
    }
    sarbp_cuda_dfree(p->ctx, p->crc.d_fft);
    sarbp_cuda_dfree(p->ctx, p->crc.d_spec);
    sarbp_cuda_rc_tables_free(p->ctx, &p->tab);
    if (p->inv_ok) cufftDestroy(p->crc.inv);
    if (p->fwd_ok) cufftDestroy(p->crc.fwd);
    if (p->crc.stream) cudaStreamDestroy(p->crc.stream);
    sarbp_rc_plan_free(p->rc);
    sarbp_profiles_free(p->geo);
    free(p->have);
    sarbp_bp_plan_release(&p->base);
    sarbp_session_free(p->own); /* a plan's own session: nothing kept outlives it */
    free(p);
}

/* a * b * size into *bytes unless it overflows */
static sarbp_status bytes_of3(size_t a, size_t b, size_t size, const char *what, size_t *bytes)
{
    if (b && a > SIZE_MAX / b)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: %s of %zu x %zu elements overflows",
                           what, a, b);
    return bytes_of(a * b, size, what, bytes);
}

/* Everything region-independent: the CPU plan and geometry, the stream and
 * events, cuFFT plans over whole blocks, the profiles, the block's buffers
 * and the range compression's tables. */
static sarbp_status cffbp_setup(struct ffbp_cuda_plan *p, const sarbp_rc_params *rcp)
{
    const sarbp_phd *m = p->base.meta;
    const size_t P = m->npulses, K = m->nsamples, block = p->base.block;
    const int freq = m->domain == SARBP_DOMAIN_FREQ;
    if (P > INT_MAX / 2)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: %zu pulses are too many", P);
    CUDA_TRY(cudaSetDevice(p->o.device));
    /* the CPU plan's tables and geometry do not depend on its block size */
    SARBP_TRY(sarbp_rc_plan_create(m, rcp, SARBP_FP32, 1, &p->rc));
    p->nbins = sarbp_rc_plan_nbins(p->rc);
    if (p->nbins > SARBP_GPU_MAX_BINS)
        return sarbp_error(SARBP_ERR_INVALID, "%zu range bins per pulse is too many for the GPU", p->nbins);
    SARBP_TRY(sarbp_profiles_alloc(P, 1, SARBP_FP32, &p->geo));
    p->geo->npulses = P;
    p->geo->interp = sarbp_rc_plan_interp(p->rc);
    for (size_t i = 0; i < P; i++) sarbp_rc_pulse_geometry(m, p->nbins, 0, i, p->geo, i);
    p->have = calloc(P, 1);
    if (!p->have) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");

    sarbp_cuda_rc *c = &p->crc;
    c->K = K;
    c->nbins = p->nbins;
    c->kc = freq ? (size_t)(-sarbp_rc_plan_first_freq_index(p->rc)) : 0;
    c->nmf = freq ? 0 : sarbp_rc_plan_chirp_nfft(p->rc);
    c->block = block;
    c->sub = block; /* one inverse FFT a block, in place in the profiles */
    size_t b_prof = 0, b_raw = 0, b_fft = 0, b_spec = 0, b_pulses = 0;
    SARBP_TRY(bytes_of3(P, p->nbins, sizeof(sarbp_c32), "the profiles", &b_prof));
    SARBP_TRY(bytes_of3(block, K, sizeof(sarbp_c32), "a block of samples", &b_raw));
    SARBP_TRY(bytes_of3(block, p->nbins, sizeof(sarbp_c32), "the FFT scratch", &b_fft));
    if (!freq) SARBP_TRY(bytes_of3(block, c->nmf, sizeof(sarbp_c32), "the echoes' spectra", &b_spec));
    SARBP_TRY(bytes_of(block, sizeof(sarbp_dpulse), "the pulse table", &b_pulses));

    size_t *pb = &p->pulse_bytes, ws = 0;
    if (fkit_take(p)) { /* an earlier plan's: count what it holds */
        CUFFT_TRY(cufftGetSize(c->inv, &ws));
        p->kit_bytes += ws;
        if (!freq) CUFFT_TRY(cufftGetSize(c->fwd, &ws));
        p->kit_bytes += freq ? 0 : ws;
        p->kit_mem = 2 * (b_raw + b_pulses) + b_fft + (freq ? 0 : b_spec);
        p->kit_bytes += p->kit_mem;
    } else {
        size_t *kb = &p->kit_bytes;
        int dims[1] = {(int)p->nbins}, fdims[1] = {(int)c->nmf};
        CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
        CUFFT_TRY(cufftCreate(&c->inv));
        p->inv_ok = 1;
        CUFFT_TRY(cufftMakePlanMany(c->inv, 1, dims, NULL, 1, dims[0], NULL, 1, dims[0], CUFFT_C2C,
                                    (int)block, &ws));
        *kb += ws;
        CUFFT_TRY(cufftSetStream(c->inv, c->stream));
        if (!freq) {
            CUFFT_TRY(cufftCreate(&c->fwd));
            p->fwd_ok = 1;
            CUFFT_TRY(cufftMakePlanMany(c->fwd, 1, fdims, NULL, 1, fdims[0], NULL, 1, fdims[0],
                                        CUFFT_C2C, (int)block, &ws));
            *kb += ws;
            CUFFT_TRY(cufftSetStream(c->fwd, c->stream));
        }
        for (int k = 0; k < 2; k++) {
            struct ffbp_stage *g = &p->stage[k];
            for (; g->nev < STAGE_EVENTS; g->nev++) CUDA_TRY(cudaEventCreate(&g->ev[g->nev]));
            SARBP_TRY(sarbp_cuda_dmalloc(p->ctx, &g->d_raw, b_raw, kb));
            SARBP_TRY(sarbp_cuda_dmalloc(p->ctx, (void **)&g->d_pulses, b_pulses, kb));
        }
        SARBP_TRY(sarbp_cuda_dmalloc(p->ctx, &c->d_fft, b_fft, kb));
        if (!freq) SARBP_TRY(sarbp_cuda_dmalloc(p->ctx, &c->d_spec, b_spec, kb));
        p->kit_mem = 2 * (b_raw + b_pulses) + b_fft + (freq ? 0 : b_spec);
    }
    *pb += p->kit_bytes;
    /* a kept set's run buffers go before its profiles grow (the first
     * region makes its own to measure) */
    if (b_prof > p->dv.n_prof) dev_free_run(&p->dv);
    SARBP_TRY(grow(p->ctx, (void **)&p->dv.prof, &p->dv.n_prof, b_prof));
    *pb += b_prof;
    SARBP_TRY(sarbp_d2h_create(p->ctx, &p->copier));
    for (int k = 0; k < 2; k++) {
        struct ffbp_stage *g = &p->stage[k];
        SARBP_TRY(sarbp_cuda_pinned_get(p->ctx, b_raw, &g->h_raw));
        SARBP_TRY(sarbp_cuda_pinned_get(p->ctx, b_pulses, (void **)&g->h_pulses));
    }
    SARBP_TRY(sarbp_cuda_rc_tables(p->ctx, m, p->rc, c->stream, &p->tab, pb));
    c->d_w = p->tab.w;
    c->d_filt = p->tab.filt;
    c->d_waz = p->tab.waz;
    return SARBP_OK;
}

/* Waits for the last block of staging set g and adds its device times to
 * stats (may be NULL), and those of the stage-0 rows queued behind it to
 * *s0_ms. */
static sarbp_status count_block(struct ffbp_stage *g, sarbp_stage_times *stats, double *s0_ms)
{
    if (!g->pending) return SARBP_OK;
    CUDA_TRY(cudaEventSynchronize(g->ev[g->s0 ? 3 : 2]));
    double up = 0, rc = 0, s0 = 0;
    SARBP_TRY(elapsed(g->ev[0], g->ev[1], &up));
    SARBP_TRY(elapsed(g->ev[1], g->ev[2], &rc));
    if (g->s0) SARBP_TRY(elapsed(g->ev[2], g->ev[3], &s0));
    if (stats) {
        stats->transfer_s += 1e-3 * up;
        stats->rc_s += 1e-3 * rc;
    }
    *s0_ms += s0;
    g->pending = g->s0 = 0;
    return SARBP_OK;
}

/* Both staging sets' last blocks, waited for and counted. */
static sarbp_status count_blocks(struct ffbp_cuda_plan *p, sarbp_stage_times *stats)
{
    for (int k = 0; k < 2; k++) SARBP_TRY(count_block(&p->stage[k], stats, &p->s0_ms));
    return SARBP_OK;
}

/* Pulses [p0, p0 + np), np <= block, samples [np][K]: the pulse table and
 * samples staged in the next pinned set (once its previous block has left
 * it), uploaded and compressed on the plan's stream into their rows of the
 * profiles; the host returns while the device works. */
static sarbp_status compress(struct ffbp_cuda_plan *p, size_t p0, size_t np, const sarbp_c32 *samples,
                             sarbp_stage_times *stats, struct ffbp_stage **staged)
{
    const sarbp_phd *m = p->base.meta;
    const cudaStream_t st = p->crc.stream;
    struct ffbp_stage *g = &p->stage[p->next];
    p->next ^= 1;
    *staged = g;
    SARBP_TRY(count_block(g, stats, &p->s0_ms));
    for (size_t j = 0; j < np; j++) g->h_pulses[j] = sarbp_cuda_rc_pulse(m, p->geo, p0 + j);
    const size_t raw_bytes = np * p->crc.K * sizeof(sarbp_c32), nf = 2 * np * p->crc.K;
    /* the caller's samples, checked as they are copied; staged ones were
     * written here and checked by their writer (sarbp_bp_plan_stage) */
    if (samples != g->h_raw) {
        const size_t bad = sarbp_d2h_host_copy(p->copier, g->h_raw, (const float *)samples, nf);
        if (bad < nf) return sarbp_phd_bad_sample(m, p0, bad);
    }
    CUDA_TRY(cudaEventRecord(g->ev[0], st));
    CUDA_TRY(cudaMemcpyAsync(g->d_pulses, g->h_pulses, np * sizeof(sarbp_dpulse),
                             cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaMemcpyAsync(g->d_raw, g->h_raw, raw_bytes, cudaMemcpyHostToDevice, st));
    CUDA_TRY(cudaEventRecord(g->ev[1], st));
    const sarbp_cuda_rc_out out = {p->dv.prof + p0 * p->nbins, 0, 0, 0, 0, NULL};
    SARBP_TRY(sarbp_cuda_rc_compress(&p->crc, g->d_raw, 0, 1.0f, p0, np, g->d_pulses, &out));
    CUDA_TRY(cudaEventRecord(g->ev[2], st));
    g->pending = 1;
    return SARBP_OK;
}

/* The region's grid (a band of the plan's grid, or all of it). */
static sarbp_status region_grid(const struct ffbp_cuda_plan *p, sarbp_grid *bg)
{
    const sarbp_region r = p->base.region;
    *bg = p->base.grid;
    if (r.row0 != 0 || r.nrows != p->base.grid.ny)
        SARBP_TRY(sarbp_grid_band(&p->base.grid, r.row0, r.nrows, bg));
    return SARBP_OK;
}

/* Row chunks of the final sum: a chunk's rows go back while the next ones
 * are summed; 4 MiB a chunk at least (the copier's lanes a MiB each). */
static int final_chunks(size_t nx, size_t ny)
{
    const size_t min_bytes = (size_t)4 << 20, bytes = nx * ny * sizeof(sarbp_c32);
    size_t n = bytes / min_bytes;
    if (n > SARBP_FFBP_MAX_CHUNKS) n = SARBP_FFBP_MAX_CHUNKS;
    return n < 1 ? 1 : (int)n;
}

/* Plans the region's factorization (from the geometry of every pulse, never
 * their data) and opens its run on the device, once per region. */
static sarbp_status cffbp_open(struct ffbp_cuda_plan *p)
{
    if (p->opened) return SARBP_OK;
    sarbp_grid bg;
    SARBP_TRY(region_grid(p, &bg));
    sarbp_profiles geo = *p->geo;
    geo.nbins = p->nbins;
    geo.data32 = NULL;
    SARBP_TRY(sarbp_ffbp_gpu_plan_make(&geo, &bg, &p->prm, &p->fp));
    p->opened = 1;
    p->s0_subs = 0;
    p->s0_rows = 0;
    p->s0_ms = 0;
    p->chunks = final_chunks(bg.nx, bg.ny);
    return run_open(&p->dv, &p->fp, &bg, p->crc.stream, p->chunks);
}

/* Queues stage 0 (and its prefilter) for the sub-apertures not yet queued
 * whose pulses are all compressed, behind what the stream holds; g: the
 * staging set of the block just queued, whose ev[3] then marks their end
 * (NULL: untimed here). */
static sarbp_status stream_stage0(struct ffbp_cuda_plan *p, struct ffbp_stage *g)
{
    const size_t P = p->base.meta->npulses;
    while (p->prefix < P && p->have[p->prefix]) p->prefix++;
    const sarbp_ffbp_run *r = &p->fp.run;
    const size_t nsub0 = (size_t)(r->sub0[1] - r->sub0[0]);
    size_t k = p->s0_subs;
    long long rows = p->s0_rows;
    while (k < nsub0 && (size_t)p->fp.h_subs[k].s1 <= p->prefix) rows += p->fp.h_subs[k++].nt;
    if (k == p->s0_subs) return SARBP_OK;
    const sarbp_ffbp_run run = run_of(&p->dv, &p->fp, p->chunks);
    SARBP_TRY(launch_status(sarbp_ffbp_launch_stage0(&run, p->s0_rows, rows, p->crc.stream), &run));
    if (g) {
        CUDA_TRY(cudaEventRecord(g->ev[3], p->crc.stream));
        g->s0 = 1;
    }
    p->s0_subs = k;
    p->s0_rows = rows;
    return SARBP_OK;
}

/* The pinned set the next block goes through, once its previous block's
 * upload is done (compress counts its times). */
static sarbp_status cffbp_stage(sarbp_bp_plan *bp, size_t p0, size_t np, sarbp_c32 **buf)
{
    (void)p0;
    (void)np;
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    struct ffbp_stage *g = &p->stage[p->next];
    CUDA_TRY(cudaSetDevice(p->o.device));
    CUDA_TRY(cudaEventSynchronize(g->ev[1])); /* its last upload (none yet: at once) */
    *buf = g->h_raw;
    return SARBP_OK;
}

static sarbp_status cffbp_execute(sarbp_bp_plan *bp, size_t p0, size_t np, const sarbp_c32 *samples,
                                  sarbp_stage_times *stats)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    if (p->launched)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp: pulses came after the region was flushed");
    CUDA_TRY(cudaSetDevice(p->o.device));
    SARBP_TRY(cffbp_open(p));
    const size_t block = p->base.block, keep = p->base.keep_pulses;
    for (size_t q = p0; q < p0 + np; q += block) {
        const size_t n = p0 + np - q < block ? p0 + np - q : block;
        struct ffbp_stage *g = NULL;
        /* samples NULL: the profiles an earlier region compressed are still
         * in dv.prof, queued before on this stream (plan.c checked they
         * were kept) */
        if (samples) SARBP_TRY(compress(p, q, n, samples + (q - p0) * p->crc.K, stats, &g));
        for (size_t i = q; i < q + n; i++) {
            p->nhave += !p->have[i];
            p->have[i] = 1;
        }
        if (samples && q < keep) memset(p->base.kept + q, 1, (q + n < keep ? q + n : keep) - q);
        SARBP_TRY(stream_stage0(p, g));
    }
    return SARBP_OK;
}

static sarbp_status cffbp_region(sarbp_bp_plan *bp, sarbp_region r)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    (void)r; /* the pulses come again for every region, or their kept profiles */
    if (p->opened) { /* a region begun and never finished: dropped */
        CUDA_TRY(cudaSetDevice(p->o.device));
        CUDA_TRY(cudaStreamSynchronize(p->crc.stream));
        sarbp_ffbp_gpu_plan_release(&p->fp);
        p->opened = p->launched = 0;
    }
    memset(p->have, 0, p->base.meta->npulses);
    p->nhave = 0;
    p->prefix = 0;
    return SARBP_OK;
}

/* The region's image, [ny][nx] on the device, into out through the pinned
 * bounce buffers (cuda/copy.h): chunk c of the final sum once its mark has
 * passed, while the device sums the next. */
static sarbp_status image_to_host(const struct ffbp_cuda_plan *p, sarbp_c32 *out, size_t nx, size_t ny)
{
    const int nch = p->chunks, m0 = 2 * p->fp.run.nstages;
    size_t ends[SARBP_FFBP_MAX_CHUNKS];
    cudaEvent_t evs[SARBP_FFBP_MAX_CHUNKS];
    for (int c = 0; c < nch; c++) {
        ends[c] = (size_t)sarbp_ffbp_chunk_row((int)ny, nch, c + 1) * nx * sizeof(sarbp_c32);
        evs[c] = p->dv.marks[m0 + c];
    }
    return sarbp_d2h_copy_chunks(p->copier, out, p->dv.img, nch, ends, evs);
}

/* Queues the rest of the region's FFBP behind the range compression (the
 * stage-0 rows not yet queued, the merges, the final sum). The region was
 * opened by its first block (every pulse came). */
static sarbp_status cffbp_flush(struct ffbp_cuda_plan *p, sarbp_stage_times *stats)
{
    if (p->launched) return SARBP_OK;
    const double t0 = sarbp_now_s();
    const size_t P = p->base.meta->npulses;
    if (p->nhave != P)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp needs every pulse: %zu of %zu came", p->nhave, P);
    if (!p->opened) return sarbp_error(SARBP_ERR_INTERNAL, "ffbp: a region flushed before it opened");
    CUDA_TRY(cudaSetDevice(p->o.device));
    CUDA_TRY(cudaEventRecord(p->dv.ef, p->crc.stream));
    SARBP_TRY(stream_stage0(p, NULL)); /* every pulse is here: the rest of stage 0 */
    p->launched = 1;
    SARBP_TRY(run_rest(&p->dv, &p->fp, p->crc.stream, p->chunks, 1));
    if (stats) stats->finish_s += sarbp_now_s() - t0;
    return SARBP_OK;
}

static sarbp_status cffbp_finish(sarbp_bp_plan *bp, sarbp_c32 *out, sarbp_stage_times *stats)
{
    struct ffbp_cuda_plan *p = (struct ffbp_cuda_plan *)bp;
    SARBP_TRY(cffbp_flush(p, stats));
    const double t0 = sarbp_now_s();
    CUDA_TRY(cudaSetDevice(p->o.device));
    sarbp_grid bg;
    SARBP_TRY(region_grid(p, &bg));
    sarbp_ffbp_cuda_times t = {0};
    sarbp_status st = image_to_host(p, out, bg.nx, bg.ny);
    if (!st) st = count_blocks(p, stats); /* the last blocks' stage-0 rows into s0_ms */
    if (!st) st = run_wait(&p->dv, &p->fp, p->s0_ms, &t);
    sarbp_ffbp_gpu_plan_release(&p->fp);
    p->opened = p->launched = 0;
    SARBP_TRY(st);
    if (stats) {
        stats->bp_s += t.total_ms * 1e-3;
        stats->finish_s += sarbp_now_s() - t0;
    }
    return SARBP_OK;
}

static const sarbp_bp_plan_ops cffbp_ops = {cffbp_stage, cffbp_execute, cffbp_region,
                                             cffbp_finish, cffbp_destroy};

sarbp_status sarbp_cuda_ffbp_rc_memory(sarbp_cuda_device *dev, const sarbp_phd *meta, size_t block,
                                      size_t nbins, size_t nmf, size_t *bytes)
{
    *bytes = 0;
    if (block == 0) return SARBP_OK; /* no pulses: the plan refuses them */
    const size_t K = meta->nsamples;
    size_t raw = 0, fft = 0, spec = 0, ws = 0;
    SARBP_TRY(bytes_of3(block, K, sizeof(sarbp_c32), "a block of samples", &raw));
    SARBP_TRY(bytes_of3(block, nbins, sizeof(sarbp_c32), "the FFT scratch", &fft));
    SARBP_TRY(bytes_of3(block, nmf, sizeof(sarbp_c32), "the echoes' spectra", &spec));
    if (block > INT_MAX || nbins > INT_MAX || nmf > INT_MAX)
        return sarbp_error(SARBP_ERR_INVALID, "ffbp on the GPU: blocks of %zu pulses of %zu bins "
                           "are too large", block, nbins);
    CUFFT_TRY(sarbp_cuda_fft_work(dev, (int)nbins, (int)block, &ws));
    size_t n = raw + fft + ws;
    if (nmf) {
        CUFFT_TRY(sarbp_cuda_fft_work(dev, (int)nmf, (int)block, &ws));
        n += spec + ws;
    }
    /* two staging sets (a block's samples and pulse table each, as
     * cffbp_setup allocates them), the azimuth, pack and filter weights:
     * far below SIZE_MAX where the profiles fit at all */
    *bytes = n + raw + 2 * block * sizeof(sarbp_dpulse) + meta->npulses * sizeof(float) +
             (K + nmf) * sizeof(sarbp_c32);
    return SARBP_OK;
}

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
    p->o = *o;
    sarbp_status st = sarbp_bp_plan_init(&p->base, &cffbp_ops, d);
    if (!st) st = sarbp_cuda_plan_device(d->session, o->device, &p->own, &p->ctx);
    p->dv.ctx = p->ctx;
    const sarbp_phd *meta = d->meta;
    const size_t P = meta->npulses;
    p->base.block = o->pulse_block ? o->pulse_block : SARBP_CUDA_FFBP_BLOCK;
    if (p->base.block > P) p->base.block = P ? P : 1;
    if (!st && P == 0) st = sarbp_error(SARBP_ERR_INVALID, "ffbp: no pulses");
    if (!st) st = sarbp_bp_desc_ffbp(d, &p->prm);
    if (!st) st = cffbp_setup(p, d->rc);
    if (st) {
        cffbp_destroy(&p->base);
        return st;
    }
    if (stats) {
        stats->setup_s += sarbp_now_s() - t0;
        stats->pulse_bytes = p->pulse_bytes;
        stats->image_bytes = p->base.max_rows * d->grid->nx * sizeof(sarbp_c32);
    }
    *out = &p->base;
    return SARBP_OK;
}
