/* cuda/rc.h - range compression on the GPU, shared by the cuda back end's
 * plans (private to src/backproject/cuda): the tables it reads, uploaded
 * once per plan, and the sequence of kernels and cuFFT calls that
 * compresses one block of pulses on one stream. cuda/plan_bp.c's plan
 * asks for interpolation-ready bins (bp_kernels.h), cuda/plan_ffbp.c's for the
 * plain complex profiles the FFBP kernels read. */
#ifndef SARBP_CUDA_RC_H
#define SARBP_CUDA_RC_H

#include <cuda_runtime_api.h>
#include <cufft.h>

#include "bp_kernels.h"
#include "device.h"
#include "sarbp/rangecomp.h"


/* The tables the range compression of meta reads (device memory from
 * the context of device.h, bytes each holds): */
typedef struct {
    float *waz;  /* [npulses] float, the azimuth weights */
    void *w;     /* [K] complex pack weights: FREQ, window / K and the
                    interpolation prefilter with the fftshift folded in as a
                    phase ramp; CHIRP, ones (the window is in the filter) */
    void *filt;  /* CHIRP: [nmf] complex, the matched filter with the window
                    and prefilter (sarbp_rc_plan_chirp_filter); FREQ: NULL */
    size_t waz_n, w_n, filt_n;
} sarbp_cuda_rc_tables_t;

/* Fills *t with the tables of meta, built from rc (the CPU plan of meta
 * with the same parameters), uploaded on stream and waited for: only the
 * caller's stream, so that forms sharing the device do not wait for each
 * other. A buffer of *t already holding enough (and not twice too much)
 * is reused (a kept set's); others are allocated from dev. The tables'
 * bytes are added to *bytes. Freed with sarbp_cuda_rc_tables_free, after a failure
 * too. */
sarbp_status sarbp_cuda_rc_tables(sarbp_cuda_device *dev, const sarbp_phd *meta, const sarbp_rc_plan *rc,
                                  cudaStream_t stream, sarbp_cuda_rc_tables_t *t, size_t *bytes);
void sarbp_cuda_rc_tables_free(sarbp_cuda_device *dev, sarbp_cuda_rc_tables_t *t);

/* The pulse table entry (bp_kernels.h) of pulse j of pr's geometry (rows
 * filled by sarbp_rc_pulse_geometry from meta): position, ranges, 1 / bin
 * spacing, reference frequency and, CHIRP, the motion compensation's
 * phase 2 fc r0 / c in cycles, reduced to [0, 1). */
sarbp_dpulse sarbp_cuda_rc_pulse(const sarbp_phd *meta, const sarbp_profiles *pr, size_t j);

/* One stream's range compression of blocks of at most `block` pulses: the
 * shapes, the tables above and the stream's buffers and cuFFT plans (all
 * made by the caller, device pointers). */
typedef struct {
    size_t K, nbins;        /* samples per pulse, bins per profile */
    size_t kc;              /* FREQ: the sample at frequency index 0 (-first_freq_index) */
    size_t nmf;             /* CHIRP: the matched filter's FFT length; 0 for FREQ */
    size_t block;           /* pulses per block: CHIRP's spectra and forward FFT batch */
    size_t sub;             /* pulses per inverse FFT (the batch of inv); CHIRP: block */
    const void *d_w, *d_filt;
    const float *d_waz;     /* [npulses]: indexed by pulse number */
    void *d_fft;            /* [sub][nbins] complex scratch */
    void *d_spec;           /* CHIRP: [block][nmf] complex, the echoes' spectra */
    cufftHandle inv;        /* inverse C2C, nbins, batch sub, set to stream */
    cufftHandle fwd;        /* CHIRP: forward C2C, nmf, batch block, set to stream */
    cudaStream_t stream;
} sarbp_cuda_rc;

/* Where a block's profiles go (device memory). */
typedef struct {
    void *prof;             /* the block's first row */
    int ready;              /* 1: interpolation-ready bins, rows SARBP_ROW_BYTES(half, mixed,
                               cubic, nbins) apart; 0: the complex profiles, float2
                               [np][nbins], the layout of host FP32 profiles (half, cubic,
                               mixed 0 and bound NULL) */
    int half, cubic, mixed;
    float *bound;           /* FP16 or mixed bins: the block's magnitude bound; else NULL */
} sarbp_cuda_rc_out;

/* Compresses pulses [p0, p0 + np) (np <= rc->block) whose raw samples are
 * d_raw [np][K] (FP32, or FREQ with raw_half FP16 scaled by 1 / raw_inv)
 * into out, queued on rc->stream; CHIRP reads the block's pulse table
 * d_pulses [np] (its motion compensation). Rows of out->prof beyond np are
 * not written. */
sarbp_status sarbp_cuda_rc_compress(const sarbp_cuda_rc *rc, const void *d_raw, int raw_half,
                                    float raw_inv, size_t p0, size_t np,
                                    const sarbp_dpulse *d_pulses, const sarbp_cuda_rc_out *out);

#endif
