/* autofocus/cuda/engine_cuda.c - the autofocus engine on a GPU (engine.h):
 * B[P][M] in device memory, made from the FP32 profiles uploaded once,
 * every operation a kernel of kernels/autofocus.cu on one stream, the
 * sweep one cooperative launch. What comes back to the host is small: the
 * blocks' partial sums (added here in block order, so results do not
 * depend on timing), the reprojection's per-chunk sums, the image on
 * request. The device's memory is the engine's own (cudaMalloc'd here and
 * freed by destroy); the device is made current on the calling thread. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autofocus/engine.h"
#include "autofocus_kernels.h"
#include "backproject/cuda/internal.h"

struct cuda_engine {
    af_engine base;
    int device;
    cudaStream_t stream;
    void *d_B;              /* float2 [P][M] */
    void *d_img, *d_w;      /* float2 [M] */
    void *d_phasor;         /* float2 [P] */
    double *d_part;         /* the largest of: image [nimg], reproject [nchunk][P][2], sweep [2][nsw][4] */
    double *d_phi, *d_ref;  /* [P] */
    unsigned *d_bar;        /* [2] */
    double *d_out;          /* [nsw + 1] */
    unsigned char *d_mask;  /* [M] */
    size_t nimg, nchunk;
    int nsw;                /* the sweep's blocks */
    double *h_part;         /* host copies */
    float *h_phasor;        /* [2 P] */
};

static sarbp_status sync_of(struct cuda_engine *e)
{
    CUDA_TRY(cudaStreamSynchronize(e->stream));
    return SARBP_OK;
}

static sarbp_status cuda_image(af_engine *base, const double *phi, double *S)
{
    struct cuda_engine *e = (struct cuda_engine *)base;
    const size_t P = base->P, M = base->M;
    CUDA_TRY(cudaSetDevice(e->device));
    for (size_t j = 0; j < P; j++) {
        e->h_phasor[2 * j] = (float)cos(phi[j]);
        e->h_phasor[2 * j + 1] = (float)sin(phi[j]);
    }
    CUDA_TRY(cudaMemcpyAsync(e->d_phasor, e->h_phasor, 2 * P * sizeof(float), cudaMemcpyHostToDevice, e->stream));
    LAUNCH_TRY(sarbp_af_image(e->d_B, e->d_phasor, P, M, e->d_img, e->d_part, e->stream));
    CUDA_TRY(cudaMemcpyAsync(e->h_part, e->d_part, e->nimg * sizeof(double), cudaMemcpyDeviceToHost, e->stream));
    SARBP_TRY(sync_of(e));
    double s = 0;
    for (size_t b = 0; b < e->nimg; b++) s += e->h_part[b];
    *S = s;
    return SARBP_OK;
}

static sarbp_status cuda_reproject(af_engine *base, int weight, const unsigned char *mask, sarbp_c64 *acc)
{
    struct cuda_engine *e = (struct cuda_engine *)base;
    const size_t P = base->P, M = base->M;
    CUDA_TRY(cudaSetDevice(e->device));
    if (weight == AF_WEIGHT_MASKED)
        CUDA_TRY(cudaMemcpyAsync(e->d_mask, mask, M, cudaMemcpyHostToDevice, e->stream));
    LAUNCH_TRY(sarbp_af_weight(e->d_img, weight == AF_WEIGHT_MASKED ? e->d_mask : NULL, M, e->d_w, e->stream));
    LAUNCH_TRY(sarbp_af_reproject(e->d_B, e->d_w, P, M, e->d_part, e->stream));
    CUDA_TRY(cudaMemcpyAsync(e->h_part, e->d_part, 2 * e->nchunk * P * sizeof(double), cudaMemcpyDeviceToHost,
                             e->stream));
    SARBP_TRY(sync_of(e));
    for (size_t j = 0; j < P; j++) {
        double sr = 0, si = 0;
        for (size_t c = 0; c < e->nchunk; c++) {
            sr += e->h_part[2 * (c * P + j)];
            si += e->h_part[2 * (c * P + j) + 1];
        }
        acc[j] = (sarbp_c64){sr, si};
    }
    return SARBP_OK;
}

static sarbp_status cuda_sweep(af_engine *base, double *phi, const double *ref, double *S, double *moved)
{
    struct cuda_engine *e = (struct cuda_engine *)base;
    const size_t P = base->P, M = base->M;
    CUDA_TRY(cudaSetDevice(e->device));
    CUDA_TRY(cudaMemcpyAsync(e->d_phi, phi, P * sizeof *phi, cudaMemcpyHostToDevice, e->stream));
    CUDA_TRY(cudaMemcpyAsync(e->d_ref, ref, P * sizeof *ref, cudaMemcpyHostToDevice, e->stream));
    LAUNCH_TRY(sarbp_af_sweep(e->d_B, e->d_img, P, M, e->d_phi, e->d_ref, e->d_part, e->d_bar, e->d_out, e->nsw,
                              e->stream));
    CUDA_TRY(cudaMemcpyAsync(phi, e->d_phi, P * sizeof *phi, cudaMemcpyDeviceToHost, e->stream));
    CUDA_TRY(cudaMemcpyAsync(e->h_part, e->d_out, ((size_t)e->nsw + 1) * sizeof(double), cudaMemcpyDeviceToHost,
                             e->stream));
    SARBP_TRY(sync_of(e));
    double s = 0;
    for (int b = 0; b < e->nsw; b++) s += e->h_part[b];
    *S = s;
    *moved = e->h_part[e->nsw];
    return SARBP_OK;
}

static sarbp_status cuda_read_image(af_engine *base, sarbp_c32 *out)
{
    struct cuda_engine *e = (struct cuda_engine *)base;
    CUDA_TRY(cudaSetDevice(e->device));
    CUDA_TRY(cudaMemcpyAsync(out, e->d_img, base->M * sizeof *out, cudaMemcpyDeviceToHost, e->stream));
    return sync_of(e);
}

static void cuda_destroy(af_engine *base)
{
    struct cuda_engine *e = (struct cuda_engine *)base;
    if (!e) return;
    if (cudaSetDevice(e->device) == cudaSuccess) {
        if (e->stream) cudaStreamSynchronize(e->stream);
        cudaFree(e->d_B);
        cudaFree(e->d_img);
        cudaFree(e->d_w);
        cudaFree(e->d_phasor);
        cudaFree(e->d_part);
        cudaFree(e->d_phi);
        cudaFree(e->d_ref);
        cudaFree(e->d_bar);
        cudaFree(e->d_out);
        cudaFree(e->d_mask);
        if (e->stream) cudaStreamDestroy(e->stream);
    }
    free(e->h_part);
    free(e->h_phasor);
    free(e);
}

static const af_engine_ops cuda_ops = {cuda_image, cuda_reproject, cuda_sweep, cuda_read_image, cuda_destroy};

/* The device memory, the pixels' coordinates and the pulses uploaded, B made and scaled. */
static sarbp_status setup(struct cuda_engine *e, const sarbp_profiles *pr, const af_pixels *px)
{
    const size_t P = e->base.P, M = e->base.M;
    CUDA_TRY(cudaSetDevice(e->device));
    CUDA_TRY(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    e->nsw = sarbp_af_sweep_blocks(e->device);
    if (e->nsw <= 0)
        return sarbp_error(SARBP_ERR_CUDA, "autofocus: CUDA device %d cannot run a cooperative launch", e->device);
    if ((size_t)e->nsw * SARBP_AF_THREADS > M) /* no block without pixels */
        e->nsw = (int)((M + SARBP_AF_THREADS - 1) / SARBP_AF_THREADS);
    e->nimg = (M + SARBP_AF_THREADS - 1) / SARBP_AF_THREADS;
    e->nchunk = (M + SARBP_AF_CHUNK - 1) / SARBP_AF_CHUNK;
    size_t npart = e->nimg;
    if (2 * e->nchunk * P > npart) npart = 2 * e->nchunk * P;
    if (8 * (size_t)e->nsw + 8 > npart) npart = 8 * (size_t)e->nsw + 8;
    e->h_part = malloc(npart * sizeof *e->h_part);
    e->h_phasor = malloc(2 * P * sizeof *e->h_phasor);
    if (!e->h_part || !e->h_phasor) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    CUDA_TRY(cudaMalloc(&e->d_B, P * M * 2 * sizeof(float)));
    CUDA_TRY(cudaMalloc(&e->d_img, M * 2 * sizeof(float)));
    CUDA_TRY(cudaMalloc(&e->d_w, M * 2 * sizeof(float)));
    CUDA_TRY(cudaMalloc(&e->d_phasor, P * 2 * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&e->d_part, npart * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&e->d_phi, P * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&e->d_ref, P * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&e->d_bar, 2 * sizeof(unsigned)));
    CUDA_TRY(cudaMemsetAsync(e->d_bar, 0, 2 * sizeof(unsigned), e->stream));
    CUDA_TRY(cudaMalloc((void **)&e->d_out, ((size_t)e->nsw + 1) * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&e->d_mask, M));

    /* the pixels' positions and the pulses, for the contributions */
    double *xyz = malloc(3 * M * sizeof *xyz);
    sarbp_af_pulse *pul = malloc(P * sizeof *pul);
    void *d_prof = NULL, *d_xyz = NULL, *d_pul = NULL;
    sarbp_status st = (!xyz || !pul) ? sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus") : SARBP_OK;
    if (!st) {
        size_t m = 0;
        for (size_t w = 0; w < px->nwin; w++) {
            const sarbp_autofocus_window *wi = &px->win[w];
            for (size_t iy = 0; iy < wi->ny; iy++)
                for (size_t ix = 0; ix < wi->nx; ix++, m++) {
                    xyz[3 * m] = sarbp_grid_x(px->g, wi->x0 + ix);
                    xyz[3 * m + 1] = sarbp_grid_y(px->g, wi->y0 + iy);
                    xyz[3 * m + 2] = sarbp_grid_z(px->g, wi->x0 + ix, wi->y0 + iy);
                }
        }
        for (size_t j = 0; j < P; j++)
            pul[j] = (sarbp_af_pulse){pr->pos[3 * j], pr->pos[3 * j + 1], pr->pos[3 * j + 2], pr->r0[j],
                                      pr->rstart[j], 1.0 / pr->dr[j], 4.0 * M_PI * pr->fref[j] / SARBP_C};
    }
    const int interp = pr->interp == SARBP_INTERP_QUADRATIC ? SARBP_AF_QUADRATIC
                       : pr->interp == SARBP_INTERP_CUBIC   ? SARBP_AF_CUBIC
                                                            : SARBP_AF_LINEAR;
    cudaError_t ce = cudaSuccess;
    if (!st) {
        ce = cudaMalloc(&d_prof, P * pr->nbins * sizeof(sarbp_c32));
        if (!ce) ce = cudaMalloc(&d_xyz, 3 * M * sizeof(double));
        if (!ce) ce = cudaMalloc(&d_pul, P * sizeof *pul);
        if (!ce) ce = cudaMemcpyAsync(d_prof, pr->data32, P * pr->nbins * sizeof(sarbp_c32), cudaMemcpyHostToDevice,
                                      e->stream);
        if (!ce) ce = cudaMemcpyAsync(d_xyz, xyz, 3 * M * sizeof(double), cudaMemcpyHostToDevice, e->stream);
        if (!ce) ce = cudaMemcpyAsync(d_pul, pul, P * sizeof *pul, cudaMemcpyHostToDevice, e->stream);
        if (!ce) ce = (cudaError_t)sarbp_af_contrib(d_prof, d_pul, (int)P, (int)pr->nbins, interp, d_xyz, M,
                                                    e->d_B, e->stream);
        if (!ce) ce = cudaStreamSynchronize(e->stream);
        if (ce) st = sarbp_error(ce == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA,
                                 "autofocus: the contributions on CUDA device %d: %s", e->device,
                                 cudaGetErrorString(ce));
    }
    cudaFree(d_prof);
    cudaFree(d_xyz);
    cudaFree(d_pul);
    free(xyz);
    free(pul);
    if (st) return st;
    /* scaled so the uncorrected image peaks at 1 */
    double *zero = calloc(P, sizeof *zero);
    sarbp_c32 *img = malloc(M * sizeof *img);
    double S;
    if (!zero || !img) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    if (!st) st = cuda_image(&e->base, zero, &S);
    if (!st) st = cuda_read_image(&e->base, img);
    double peak = 0;
    for (size_t m = 0; !st && m < M; m++) {
        const double a = hypot(img[m].re, img[m].im);
        if (a > peak) peak = a;
    }
    free(zero);
    free(img);
    if (!st && peak > 0 && isfinite(peak)) {
        LAUNCH_TRY(sarbp_af_scale(e->d_B, P * M, (float)(1.0 / peak), e->stream));
        st = sync_of(e);
    }
    return st;
}

sarbp_status af_engine_cuda_create(const sarbp_profiles *pr, const af_pixels *px, int device, af_engine **out)
{
    *out = NULL;
    const size_t P = pr->npulses, M = px->M;
    if (P == 0 || M == 0) return sarbp_error(SARBP_ERR_INVALID, "autofocus: no pulses or no pixels");
    if (M > SIZE_MAX / 8 / P) return sarbp_error(SARBP_ERR_NOMEM, "autofocus: %zu pulses x %zu pixels overflow", P, M);
    if (pr->nbins > INT32_MAX || P > INT32_MAX)
        return sarbp_error(SARBP_ERR_INVALID, "autofocus: %zu pulses of %zu bins are too many for the GPU", P,
                           pr->nbins);
    SARBP_TRY(sarbp_cuda_check_device(device));
    struct cuda_engine *e = calloc(1, sizeof *e);
    if (!e) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for autofocus");
    e->base.ops = &cuda_ops;
    e->base.P = P;
    e->base.M = M;
    e->device = device;
    const sarbp_status st = setup(e, pr, px);
    if (st) {
        cuda_destroy(&e->base);
        return st;
    }
    *out = &e->base;
    return SARBP_OK;
}
