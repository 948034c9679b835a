/* cuda/rc.c - range compression on the GPU for the cuda back end's plans
 * (cuda/rc.h): the tables, built on the host in FP64 from the CPU plan's
 * and uploaded as FP32, and one block's compression. FREQ data: window,
 * prefilter, centring, zero-pad and fftshift in one pack pass, batched
 * inverse cuFFT. CHIRP data: the echoes zero-padded, forward cuFFT, the
 * matched filter into the upsampled spectrum with the motion compensation,
 * inverse cuFFT. Then, when asked, one pass to interpolation-ready bins.
 * It allocates nothing per block and never synchronizes. */
#include "rc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *sarbp_cufft_name(cufftResult r)
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

sarbp_status sarbp_cuda_rc_tables(sarbp_cuda_device *dev, const sarbp_phd *meta, const sarbp_rc_plan *rc,
                                  cudaStream_t stream, sarbp_cuda_rc_tables_t *t, size_t *bytes)
{
    const size_t P = meta->npulses, K = meta->nsamples, nbins = sarbp_rc_plan_nbins(rc);
    const int freq = meta->domain == SARBP_DOMAIN_FREQ;
    const size_t nmf = freq ? 0 : sarbp_rc_plan_chirp_nfft(rc);
    if (P > SIZE_MAX / sizeof(float) || K > SIZE_MAX / sizeof(sarbp_c32) || nmf > SIZE_MAX / sizeof(sarbp_c32))
        return sarbp_error(SARBP_ERR_INVALID, "%zu pulses of %zu samples are too many", P, K);
    /* the host tables: azimuth weights, pack weights, CHIRP's filter */
    float *fw = malloc((P ? P : 1) * sizeof(float));
    sarbp_c32 *w = malloc((K ? K : 1) * sizeof *w);
    sarbp_c32 *h = malloc((nmf ? nmf : 1) * sizeof *h);
    if (!fw || !w || !h) {
        free(fw);
        free(w);
        free(h);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    const double *waz = sarbp_rc_plan_az_weights(rc);
    for (size_t i = 0; i < P; i++) fw[i] = (float)waz[i];
    if (freq) {
        /* window / K and prefilter, with the fftshift as a phase ramp on the
         * sample's frequency index m = (k - kc) mod N: out[b] = y[b - N/2] */
        const size_t kc = (size_t)(-sarbp_rc_plan_first_freq_index(rc));
        const double *wr = sarbp_rc_plan_range_weights(rc);
        const double shift = (double)(nbins / 2), n = (double)nbins;
        for (size_t k = 0; k < K; k++) {
            const size_t fi = k >= kc ? k - kc : k + nbins - kc;
            double ph = -2.0 * M_PI * fmod((double)fi * shift, n) / n;
            w[k].re = (float)(wr[k] * cos(ph));
            w[k].im = (float)(wr[k] * sin(ph));
        }
    } else {
        /* the echoes are packed unweighted (the window is in the filter) */
        const sarbp_c64 *hf = sarbp_rc_plan_chirp_filter(rc);
        for (size_t k = 0; k < K; k++) w[k] = (sarbp_c32){1.0f, 0.0f};
        for (size_t k = 0; k < nmf; k++) h[k] = (sarbp_c32){(float)hf[k].re, (float)hf[k].im};
    }
    sarbp_status st = sarbp_cuda_dmalloc_reuse(dev, (void **)&t->waz, &t->waz_n, P * sizeof(float));
    if (!st) st = sarbp_cuda_dmalloc_reuse(dev, &t->w, &t->w_n, K * sizeof *w);
    if (!st && nmf) st = sarbp_cuda_dmalloc_reuse(dev, &t->filt, &t->filt_n, nmf * sizeof *h);
    cudaError_t e = cudaSuccess;
    if (!st) e = cudaMemcpyAsync(t->waz, fw, P * sizeof(float), cudaMemcpyHostToDevice, stream);
    if (!st && !e) e = cudaMemcpyAsync(t->w, w, K * sizeof *w, cudaMemcpyHostToDevice, stream);
    if (!st && !e && nmf) e = cudaMemcpyAsync(t->filt, h, nmf * sizeof *h, cudaMemcpyHostToDevice, stream);
    if (!st && !e) e = cudaStreamSynchronize(stream); /* before the host tables go */
    free(fw);
    free(w);
    free(h);
    SARBP_TRY(st);
    CUDA_TRY(e);
    if (bytes) *bytes += P * sizeof(float) + K * sizeof *w + nmf * sizeof *h;
    return SARBP_OK;
}

void sarbp_cuda_rc_tables_free(sarbp_cuda_device *dev, sarbp_cuda_rc_tables_t *t)
{
    sarbp_cuda_dfree(dev, t->waz);
    sarbp_cuda_dfree(dev, t->w);
    sarbp_cuda_dfree(dev, t->filt);
    memset(t, 0, sizeof *t);
}

sarbp_dpulse sarbp_cuda_rc_pulse(const sarbp_phd *meta, const sarbp_profiles *pr, size_t j)
{
    const double *a = pr->pos + 3 * j;
    double mc = 0;
    if (meta->domain == SARBP_DOMAIN_CHIRP) {
        mc = 2.0 * meta->fc * pr->r0[j] / SARBP_C;
        mc -= floor(mc);
    }
    return (sarbp_dpulse){a[0], a[1], a[2], pr->r0[j], pr->rstart[j], 1.0 / pr->dr[j], pr->fref[j], mc};
}

/* The inverse FFT of rows [0, n) of y (n == rc->sub rows: in place at dst,
 * y == dst) or of the scratch, whose first n rows are then copied to dst. */
static sarbp_status inverse_to(const sarbp_cuda_rc *rc, void *y, void *dst, size_t n)
{
    CUFFT_TRY(cufftExecC2C(rc->inv, y, y, CUFFT_INVERSE));
    if (y != dst)
        CUDA_TRY(cudaMemcpyAsync(dst, y, n * rc->nbins * sizeof(sarbp_c32), cudaMemcpyDeviceToDevice,
                                 rc->stream));
    return SARBP_OK;
}

sarbp_status sarbp_cuda_rc_compress(const sarbp_cuda_rc *rc, const void *d_raw, int raw_half,
                                    float raw_inv, size_t p0, size_t np,
                                    const sarbp_dpulse *d_pulses, const sarbp_cuda_rc_out *out)
{
    const size_t prof_row = out->ready ? SARBP_ROW_BYTES(out->half, out->mixed, out->cubic, rc->nbins)
                                       : rc->nbins * sizeof(sarbp_c32);
    float *const bound = out->bound;
    if (!out->ready && bound)
        return sarbp_error(SARBP_ERR_INTERNAL, "complex profiles take no fp16 bound");
    if (bound) CUDA_TRY(cudaMemsetAsync(bound, 0, sizeof(float), rc->stream));
    if (rc->nmf) {
        /* echoes zero-padded to nmf (azimuth weight), forward FFT, matched
         * filter into the upsampled spectrum (motion compensation folded
         * in, FP16 bound), inverse FFT, interpolation-ready bins. A whole
         * block of complex profiles is filtered and transformed in place. */
        LAUNCH_TRY(sarbp_rc_pack(d_raw, 0, rc->d_spec, rc->d_w, rc->d_waz + p0, 1.0f, (int)rc->block,
                                 (int)np, (int)rc->K, 0, (int)rc->nmf, rc->stream));
        CUFFT_TRY(cufftExecC2C(rc->fwd, rc->d_spec, rc->d_spec, CUFFT_FORWARD));
        void *const y = !out->ready && np == rc->sub ? out->prof : rc->d_fft;
        LAUNCH_TRY(sarbp_rc_chirp_filter(rc->d_spec, y, rc->d_filt, d_pulses, (int)np, (int)rc->nmf,
                                         (int)rc->nbins, bound, rc->stream));
        if (!out->ready) return inverse_to(rc, y, out->prof, np);
        CUFFT_TRY(cufftExecC2C(rc->inv, rc->d_fft, rc->d_fft, CUFFT_INVERSE));
        LAUNCH_TRY(sarbp_rc_interp_ready(rc->d_fft, out->prof, (int)np, (int)rc->nbins, out->cubic,
                                         out->mixed, bound, rc->stream));
        return SARBP_OK;
    }
    const size_t raw_e = raw_half ? 4 : 8;
    if (bound)
        LAUNCH_TRY(sarbp_rc_bound(d_raw, raw_half, rc->d_w, rc->d_waz + p0, raw_inv, (int)np,
                                  (int)rc->K, bound, rc->stream));
    for (size_t j0 = 0; j0 < np; j0 += rc->sub) {
        size_t nv = np - j0 < rc->sub ? np - j0 : rc->sub;
        void *const dst = (char *)out->prof + j0 * prof_row;
        /* complex profiles of a whole batch are packed and transformed in place */
        void *const y = !out->ready && nv == rc->sub ? dst : rc->d_fft;
        LAUNCH_TRY(sarbp_rc_pack((const char *)d_raw + j0 * rc->K * raw_e, raw_half, y, rc->d_w,
                                 rc->d_waz + p0 + j0, raw_inv, (int)rc->sub, (int)nv, (int)rc->K,
                                 (int)rc->kc, (int)rc->nbins, rc->stream));
        if (!out->ready) {
            SARBP_TRY(inverse_to(rc, y, dst, nv));
            continue;
        }
        CUFFT_TRY(cufftExecC2C(rc->inv, rc->d_fft, rc->d_fft, CUFFT_INVERSE));
        LAUNCH_TRY(sarbp_rc_interp_ready(rc->d_fft, dst, (int)nv, (int)rc->nbins, out->cubic,
                                         out->mixed, bound, rc->stream));
    }
    return SARBP_OK;
}
