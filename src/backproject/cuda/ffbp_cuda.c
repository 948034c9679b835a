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
                        const sarbp_grid *g, int device, sarbp_c32 *img, sarbp_ffbp_cuda_times *t)
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
    d->h_img = malloc(b_img);
    if (!d->h_img) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for the image");
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
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return sarbp_error(SARBP_ERR_NODEVICE, "no usable CUDA device (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    if (device < 0 || device >= ndev)
        return sarbp_error(SARBP_ERR_NODEVICE, "there is no CUDA device %d (%d found)", device, ndev);
    CUDA_TRY(cudaSetDevice(device));
    if (pr->npulses == 0) return SARBP_OK;
    sarbp_ffbp_gpu_plan p;
    sarbp_status st = sarbp_ffbp_gpu_plan_make(pr, g, prm, &p);
    if (!st) {
        struct dev d;
        memset(&d, 0, sizeof d);
        st = run(&d, &p, pr, g, device, img, t);
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
