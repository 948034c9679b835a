/* backend_cuda.c - the CUDA back end: cuFFT range compression and the
 * backprojection kernels of kernels/, with pulse blocks streamed.
 *
 * Two slots of buffers (pinned host staging, raw samples, FFT buffer,
 * lerp-ready profiles, pulse table) alternate between two streams: while
 * block k is backprojected on one stream, block k+1 is read by the caller,
 * copied to the device and range-compressed on the other. Backprojection
 * launches are chained across the streams by events (they accumulate into
 * one image). Device memory is bounded by the block size, not by the number
 * of pulses. An image larger than the device-memory budget is formed in
 * bands of rows, one pass over all pulses per band.
 *
 * FREQ data are range-compressed on the GPU (window, zero-pad and fftshift
 * in one pack pass, batched inverse cuFFT). CHIRP data are range-compressed
 * on the CPU (FFTW, FP32) and uploaded as profiles. */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bp_kernels.h"
#include "sarbp/backproject.h"

#define CUDA_DEFAULT_BLOCK 256

static const char *cufft_name(cufftResult r)
{
    switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT error";
    }
}

#define CUDA_TRY(call)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return sarbp_error(e_ == cudaErrorMemoryAllocation ? SARBP_ERR_NOMEM : SARBP_ERR_CUDA, \
                               "%s failed at %s:%d: %s", #call, __FILE__, __LINE__,      \
                               cudaGetErrorString(e_));                                  \
    } while (0)

#define CUFFT_TRY(call)                                                                  \
    do {                                                                                 \
        cufftResult r_ = (call);                                                         \
        if (r_ != CUFFT_SUCCESS)                                                         \
            return sarbp_error(SARBP_ERR_CUFFT, "%s failed at %s:%d: %s", #call, __FILE__, \
                               __LINE__, cufft_name(r_));                                \
    } while (0)

/* launchers return cudaError_t as int */
#define LAUNCH_TRY(call) CUDA_TRY((cudaError_t)(call))

struct slot {
    sarbp_c32 *h_raw;        /* pinned [block][K] (FREQ) or [block][nbins] profiles (CHIRP) */
    sarbp_dpulse *h_pulses;  /* pinned [block] */
    void *d_raw, *d_fft, *d_prof;
    sarbp_dpulse *d_pulses;
    cudaStream_t stream;
    cudaEvent_t done;        /* the slot's last backprojection finished */
};

struct cuda_plan {
    const sarbp_phd *meta;
    sarbp_grid grid;
    sarbp_bp_config cfg;
    int device;
    size_t block, K, nbins;
    size_t band_rows, passes, band_row0, band_ny;
    sarbp_rc_plan *rc;       /* CPU plan: window tables; CHIRP compression */
    sarbp_profiles *hpr;     /* CPU profiles of one block (geometry; CHIRP data) */
    struct slot s[2];
    int next, have_prev;
    cudaEvent_t prev_bp;     /* last backprojection launched (any slot) */
    void *d_w;               /* FREQ: complex pack weights [K] */
    float *d_waz;            /* [npulses] */
    cufftHandle fft_full, fft_rem;
    size_t rem;
    void *d_img;             /* [band_rows][nx] float2 */
    sarbp_c32 *h_img;        /* full image when passes > 1 */
    int fft_full_ok, fft_rem_ok;
};

static int cuda_available(const sarbp_bp_options *o)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n > 0 && (!o || o->device < n);
}

static void cuda_destroy(void *vp)
{
    struct cuda_plan *p = vp;
    if (!p) return;
    cudaDeviceSynchronize();
    for (int k = 0; k < 2; k++) {
        struct slot *s = &p->s[k];
        cudaFreeHost(s->h_raw);
        cudaFreeHost(s->h_pulses);
        cudaFree(s->d_raw);
        cudaFree(s->d_fft);
        cudaFree(s->d_prof);
        cudaFree(s->d_pulses);
        if (s->stream) cudaStreamDestroy(s->stream);
        if (s->done) cudaEventDestroy(s->done);
    }
    if (p->prev_bp) cudaEventDestroy(p->prev_bp);
    if (p->fft_full_ok) cufftDestroy(p->fft_full);
    if (p->fft_rem_ok) cufftDestroy(p->fft_rem);
    cudaFree(p->d_w);
    cudaFree(p->d_waz);
    cudaFree(p->d_img);
    free(p->h_img);
    sarbp_rc_plan_free(p->rc);
    sarbp_profiles_free(p->hpr);
    free(p);
}

static sarbp_status make_fft(cufftHandle *h, int *ok, int n, int batch)
{
    int dims[1] = {n};
    CUFFT_TRY(cufftPlanMany(h, 1, dims, NULL, 1, n, NULL, 1, n, CUFFT_C2C, batch));
    *ok = 1;
    return SARBP_OK;
}

static sarbp_status setup(struct cuda_plan *p, const sarbp_rc_params *rc, const sarbp_bp_options *o)
{
    const sarbp_phd *m = p->meta;
    CUDA_TRY(cudaSetDevice(p->device));
    SARBP_TRY(sarbp_rc_plan_create(m, rc, SARBP_FP32, p->block, &p->rc));
    p->nbins = sarbp_rc_plan_nbins(p->rc);
    if (p->nbins > (1u << 30) / 16)
        return sarbp_error(SARBP_ERR_INVALID, "%zu range bins per pulse is too many for the GPU", p->nbins);
    SARBP_TRY(sarbp_profiles_alloc(p->block, p->nbins, SARBP_FP32, &p->hpr));

    /* memory: two slots, then the image band */
    size_t raw_b = m->domain == SARBP_DOMAIN_FREQ ? p->K : p->nbins;
    size_t per_slot = p->block * (raw_b * 8 + p->nbins * 8 + p->nbins * 16 + sizeof(sarbp_dpulse));
    size_t fixed = 2 * per_slot + m->npulses * 4 + p->K * 8 + ((size_t)64 << 20); /* + cuFFT work */
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    size_t budget = o->gpu_mem ? o->gpu_mem : (size_t)(0.85 * (double)free_b);
    if (budget > free_b) budget = free_b;
    size_t row_b = p->grid.nx * 8;
    if (budget <= fixed || (budget - fixed) / row_b < 1)
        return sarbp_error(SARBP_ERR_NOMEM,
                           "device memory budget of %.0f MiB is too small: blocks of %zu pulses "
                           "need %.0f MiB plus one image row",
                           budget / 1048576.0, p->block, fixed / 1048576.0);
    p->band_rows = (budget - fixed) / row_b;
    if (p->band_rows > p->grid.ny) p->band_rows = p->grid.ny;
    p->passes = (p->grid.ny + p->band_rows - 1) / p->band_rows;
    CUDA_TRY(cudaMalloc(&p->d_img, p->band_rows * row_b));
    if (p->passes > 1) {
        p->h_img = malloc(p->grid.nx * p->grid.ny * sizeof(sarbp_c32));
        if (!p->h_img) return sarbp_error(SARBP_ERR_NOMEM, "out of host memory for the image");
    }

    for (int k = 0; k < 2; k++) {
        struct slot *s = &p->s[k];
        CUDA_TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
        CUDA_TRY(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
        CUDA_TRY(cudaMallocHost((void **)&s->h_raw, p->block * raw_b * sizeof(sarbp_c32)));
        CUDA_TRY(cudaMallocHost((void **)&s->h_pulses, p->block * sizeof(sarbp_dpulse)));
        CUDA_TRY(cudaMalloc(&s->d_raw, p->block * raw_b * sizeof(sarbp_c32)));
        CUDA_TRY(cudaMalloc(&s->d_fft, p->block * p->nbins * sizeof(sarbp_c32)));
        CUDA_TRY(cudaMalloc(&s->d_prof, p->block * p->nbins * 16));
        CUDA_TRY(cudaMalloc((void **)&s->d_pulses, p->block * sizeof(sarbp_dpulse)));
    }
    CUDA_TRY(cudaEventCreateWithFlags(&p->prev_bp, cudaEventDisableTiming));

    /* azimuth weights for the whole aperture */
    const double *waz = sarbp_rc_plan_az_weights(p->rc);
    float *fw = malloc(m->npulses * sizeof(float));
    if (!fw) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < m->npulses; i++) fw[i] = (float)waz[i];
    cudaError_t e = cudaMalloc((void **)&p->d_waz, m->npulses * sizeof(float));
    if (e == cudaSuccess) e = cudaMemcpy(p->d_waz, fw, m->npulses * sizeof(float), cudaMemcpyHostToDevice);
    free(fw);
    CUDA_TRY(e);

    if (m->domain == SARBP_DOMAIN_FREQ) {
        /* window / K with the fftshift as a phase ramp: out[b] = y[b - N/2] */
        const double *wr = sarbp_rc_plan_range_weights(p->rc);
        sarbp_c32 *w = malloc(p->K * sizeof *w);
        if (!w) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        const double shift = (double)(p->nbins / 2), n = (double)p->nbins;
        for (size_t k = 0; k < p->K; k++) {
            double ph = -2.0 * M_PI * fmod((double)k * shift, n) / n;
            w[k].re = (float)(wr[k] * cos(ph));
            w[k].im = (float)(wr[k] * sin(ph));
        }
        e = cudaMalloc(&p->d_w, p->K * sizeof *w);
        if (e == cudaSuccess) e = cudaMemcpy(p->d_w, w, p->K * sizeof *w, cudaMemcpyHostToDevice);
        free(w);
        CUDA_TRY(e);
        SARBP_TRY(make_fft(&p->fft_full, &p->fft_full_ok, (int)p->nbins, (int)p->block));
        p->rem = m->npulses % p->block;
        if (p->rem) SARBP_TRY(make_fft(&p->fft_rem, &p->fft_rem_ok, (int)p->nbins, (int)p->rem));
    }
    return SARBP_OK;
}

static sarbp_status cuda_create(const sarbp_phd *meta, const sarbp_grid *grid,
                                const sarbp_rc_params *rc, const sarbp_bp_options *o, void **out)
{
    *out = NULL;
    if (o->precision == SARBP_FP64)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "the cuda back end does fp32; fp64 is the cpu reference");
    if (o->precision == SARBP_FP16)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "precision fp16 is not implemented yet; use fp32");
    SARBP_TRY(sarbp_grid_validate(grid));
    if (grid->nx > (1u << 30) || grid->ny > (1u << 30))
        return sarbp_error(SARBP_ERR_INVALID, "grid of %zu x %zu is too large for the GPU kernels", grid->nx, grid->ny);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return sarbp_error(SARBP_ERR_NODEVICE, "no usable CUDA device (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    if (o->device < 0 || o->device >= ndev)
        return sarbp_error(SARBP_ERR_NODEVICE, "there is no CUDA device %d (%d found)", o->device, ndev);
    struct cuda_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    p->meta = meta;
    p->grid = *grid;
    p->device = o->device;
    p->K = meta->nsamples;
    p->cfg.variant = o->variant;
    p->cfg.tile_x = o->tile_x;
    p->cfg.tile_y = o->tile_y;
    p->cfg.ppt = o->ppt;
    char why[160];
    if (sarbp_bp_config_resolve(&p->cfg, why, sizeof why)) {
        free(p);
        return sarbp_error(SARBP_ERR_INVALID, "%s", why);
    }
    p->block = o->pulse_block ? o->pulse_block : CUDA_DEFAULT_BLOCK;
    if (p->block > meta->npulses) p->block = meta->npulses;
    sarbp_status st = setup(p, rc, o);
    if (st) {
        cuda_destroy(p);
        return st;
    }
    *out = p;
    return SARBP_OK;
}

static size_t cuda_block_pulses(const void *vp) { return ((const struct cuda_plan *)vp)->block; }
static size_t cuda_passes(const void *vp) { return ((const struct cuda_plan *)vp)->passes; }

/* Copies the current band to its place in dst (row-major, full image). */
static sarbp_status band_to_host(struct cuda_plan *p, sarbp_c32 *dst)
{
    CUDA_TRY(cudaDeviceSynchronize());
    size_t n = p->band_ny * p->grid.nx;
    CUDA_TRY(cudaMemcpy(dst + p->band_row0 * p->grid.nx, p->d_img, n * sizeof(sarbp_c32),
                        cudaMemcpyDeviceToHost));
    return SARBP_OK;
}

static sarbp_status cuda_begin_pass(void *vp, size_t k)
{
    struct cuda_plan *p = vp;
    if (k >= p->passes) return sarbp_error(SARBP_ERR_INTERNAL, "pass %zu of %zu", k, p->passes);
    CUDA_TRY(cudaSetDevice(p->device));
    if (k > 0) SARBP_TRY(band_to_host(p, p->h_img));
    p->band_row0 = k * p->band_rows;
    p->band_ny = p->grid.ny - p->band_row0 < p->band_rows ? p->grid.ny - p->band_row0 : p->band_rows;
    CUDA_TRY(cudaMemset(p->d_img, 0, p->band_ny * p->grid.nx * sizeof(sarbp_c32)));
    return SARBP_OK;
}

static sarbp_status cuda_execute(void *vp, size_t p0, size_t np, const sarbp_c32 *samples)
{
    struct cuda_plan *p = vp;
    const sarbp_phd *m = p->meta;
    if (np == 0) return SARBP_OK;
    if (np > p->block) return sarbp_error(SARBP_ERR_INTERNAL, "block of %zu pulses exceeds %zu", np, p->block);
    struct slot *s = &p->s[p->next];
    p->next ^= 1;
    CUDA_TRY(cudaEventSynchronize(s->done)); /* the slot's buffers are free again */

    /* pulse table (and, for CHIRP, the CPU range compression) */
    if (m->domain == SARBP_DOMAIN_CHIRP) {
        SARBP_TRY(sarbp_rc_execute(p->rc, p0, np, samples, p->hpr));
        memcpy(s->h_raw, p->hpr->data32, np * p->nbins * sizeof(sarbp_c32));
    } else {
        for (size_t j = 0; j < np; j++)
            sarbp_rc_pulse_geometry(m, p->nbins, 0, p0 + j, p->hpr, j);
        memcpy(s->h_raw, samples, np * p->K * sizeof(sarbp_c32));
    }
    for (size_t j = 0; j < np; j++) {
        const double *a = p->hpr->pos + 3 * j;
        s->h_pulses[j] = (sarbp_dpulse){a[0], a[1], a[2], p->hpr->r0[j], p->hpr->rstart[j],
                                        1.0 / p->hpr->dr[j], p->hpr->fref[j], 0};
    }
    CUDA_TRY(cudaMemcpyAsync(s->d_pulses, s->h_pulses, np * sizeof(sarbp_dpulse),
                             cudaMemcpyHostToDevice, s->stream));
    if (m->domain == SARBP_DOMAIN_CHIRP) {
        CUDA_TRY(cudaMemcpyAsync(s->d_fft, s->h_raw, np * p->nbins * sizeof(sarbp_c32),
                                 cudaMemcpyHostToDevice, s->stream));
    } else {
        CUDA_TRY(cudaMemcpyAsync(s->d_raw, s->h_raw, np * p->K * sizeof(sarbp_c32),
                                 cudaMemcpyHostToDevice, s->stream));
        LAUNCH_TRY(sarbp_rc_pack(s->d_raw, s->d_fft, p->d_w, p->d_waz + p0, (int)np, (int)p->K,
                                 (int)p->nbins, s->stream));
        cufftHandle h;
        if (np == p->block) h = p->fft_full;
        else if (p->fft_rem_ok && np == p->rem) h = p->fft_rem;
        else return sarbp_error(SARBP_ERR_INTERNAL, "no cuFFT plan for a block of %zu pulses", np);
        CUFFT_TRY(cufftSetStream(h, s->stream));
        CUFFT_TRY(cufftExecC2C(h, s->d_fft, s->d_fft, CUFFT_INVERSE));
    }
    LAUNCH_TRY(sarbp_rc_lerp_ready(s->d_fft, s->d_prof, (int)np, (int)p->nbins, s->stream));

    /* backprojections accumulate into one image: chain them across streams */
    if (p->have_prev) CUDA_TRY(cudaStreamWaitEvent(s->stream, p->prev_bp, 0));
    sarbp_bp_launch a = {
        s->d_prof, s->d_pulses, (int)np, (int)p->nbins, p->d_img, (int)p->grid.nx,
        (int)p->band_ny, sarbp_grid_x(&p->grid, 0), sarbp_grid_y(&p->grid, p->band_row0),
        p->grid.dx, p->grid.dy, p->grid.zc,
    };
    LAUNCH_TRY(sarbp_bp_launch_kernel(&p->cfg, &a, s->stream));
    CUDA_TRY(cudaEventRecord(p->prev_bp, s->stream));
    CUDA_TRY(cudaEventRecord(s->done, s->stream));
    p->have_prev = 1;
    return SARBP_OK;
}

static sarbp_status cuda_finish(void *vp, sarbp_c32 *image)
{
    struct cuda_plan *p = vp;
    CUDA_TRY(cudaSetDevice(p->device));
    if (p->passes == 1) return band_to_host(p, image);
    SARBP_TRY(band_to_host(p, p->h_img));
    memcpy(image, p->h_img, p->grid.nx * p->grid.ny * sizeof(sarbp_c32));
    return SARBP_OK;
}

const sarbp_backend sarbp_backend_cuda = {
    "cuda", cuda_available, cuda_create, cuda_block_pulses, cuda_passes, cuda_begin_pass,
    cuda_execute, cuda_finish, cuda_destroy,
};

/* ---- benchmarking ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_bufs {
    void *d_y, *d_prof, *d_img;
    sarbp_dpulse *d_pulses, *h_pulses;
    cudaEvent_t e0, e1;
    double *times;
};

static void bench_free(struct bench_bufs *b)
{
    cudaFree(b->d_y);
    cudaFree(b->d_prof);
    cudaFree(b->d_img);
    cudaFree(b->d_pulses);
    free(b->h_pulses);
    if (b->e0) cudaEventDestroy(b->e0);
    if (b->e1) cudaEventDestroy(b->e1);
    free(b->times);
}

static sarbp_status bench_run(struct bench_bufs *b, const sarbp_profiles *pr, const sarbp_grid *g,
                              const sarbp_cuda_kernel_cfg *kc, int reps, double *median_ms,
                              sarbp_c32 *img)
{
    sarbp_bp_config cfg = {kc->variant, kc->tile_x, kc->tile_y, kc->ppt};
    char why[160];
    if (sarbp_bp_config_resolve(&cfg, why, sizeof why)) return sarbp_error(SARBP_ERR_INVALID, "%s", why);
    CUDA_TRY(cudaSetDevice(kc->device));
    size_t np = pr->npulses, nb = pr->nbins, npix = g->nx * g->ny;
    CUDA_TRY(cudaMalloc(&b->d_y, np * nb * sizeof(sarbp_c32)));
    CUDA_TRY(cudaMalloc(&b->d_prof, np * nb * 16));
    CUDA_TRY(cudaMalloc(&b->d_img, npix * sizeof(sarbp_c32)));
    CUDA_TRY(cudaMalloc((void **)&b->d_pulses, np * sizeof(sarbp_dpulse)));
    b->h_pulses = malloc(np * sizeof(sarbp_dpulse));
    b->times = malloc((size_t)(reps > 0 ? reps : 1) * sizeof(double));
    if (!b->h_pulses || !b->times) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t j = 0; j < np; j++) {
        const double *a = pr->pos + 3 * j;
        b->h_pulses[j] = (sarbp_dpulse){a[0], a[1], a[2], pr->r0[j], pr->rstart[j], 1.0 / pr->dr[j],
                                        pr->fref[j], 0};
    }
    CUDA_TRY(cudaMemcpy(b->d_pulses, b->h_pulses, np * sizeof(sarbp_dpulse), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(b->d_y, pr->data32, np * nb * sizeof(sarbp_c32), cudaMemcpyHostToDevice));
    LAUNCH_TRY(sarbp_rc_lerp_ready(b->d_y, b->d_prof, (int)np, (int)nb, NULL));
    CUDA_TRY(cudaEventCreate(&b->e0));
    CUDA_TRY(cudaEventCreate(&b->e1));
    sarbp_bp_launch a = {b->d_prof, b->d_pulses, (int)np, (int)nb, b->d_img, (int)g->nx, (int)g->ny,
                         sarbp_grid_x(g, 0), sarbp_grid_y(g, 0), g->dx, g->dy, g->zc};
    if (reps < 1) reps = 1;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        CUDA_TRY(cudaMemset(b->d_img, 0, npix * sizeof(sarbp_c32)));
        CUDA_TRY(cudaEventRecord(b->e0, NULL));
        LAUNCH_TRY(sarbp_bp_launch_kernel(&cfg, &a, NULL));
        CUDA_TRY(cudaEventRecord(b->e1, NULL));
        CUDA_TRY(cudaEventSynchronize(b->e1));
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, b->e0, b->e1));
        if (r >= 0) b->times[r] = ms;
    }
    qsort(b->times, (size_t)reps, sizeof(double), cmp_double);
    *median_ms = reps % 2 ? b->times[reps / 2] : 0.5 * (b->times[reps / 2 - 1] + b->times[reps / 2]);
    if (img) CUDA_TRY(cudaMemcpy(img, b->d_img, npix * sizeof(sarbp_c32), cudaMemcpyDeviceToHost));
    return SARBP_OK;
}

sarbp_status sarbp_cuda_bench_kernel(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_cuda_kernel_cfg *kc, int reps, double *median_ms,
                                     sarbp_c32 *img)
{
    if (pr->precision != SARBP_FP32 || !pr->data32)
        return sarbp_error(SARBP_ERR_INVALID, "kernel benchmarks take FP32 profiles");
    if (!cuda_available(NULL)) return sarbp_error(SARBP_ERR_NODEVICE, "no usable CUDA device");
    struct bench_bufs b;
    memset(&b, 0, sizeof b);
    sarbp_status st = bench_run(&b, pr, g, kc, reps, median_ms, img);
    bench_free(&b);
    return st;
}

sarbp_status sarbp_cuda_device_info(int device, char *name, size_t n, int *sm_count,
                                    int *clock_mhz, int *mem_clock_mhz)
{
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    snprintf(name, n, "%s", prop.name);
    int v = 0;
    *sm_count = prop.multiProcessorCount;
    CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device));
    *clock_mhz = v / 1000;
    CUDA_TRY(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device));
    *mem_clock_mhz = v / 1000;
    return SARBP_OK;
}
