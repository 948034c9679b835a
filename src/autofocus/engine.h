/* engine.h - what the autofocus estimators compute over (private to the
 * library): every pulse's contribution to every pixel of a set of windows
 * of the grid, kept, and the few operations the estimators need on it.
 *
 * The contribution b_j(m) of pulse j to pixel m is the FP32 backprojection
 * of that pulse alone onto that pixel (the arithmetic of the image). They
 * are made once, as B[P][M] (FP32 complex), scaled so that the image of the
 * uncorrected pulses peaks at 1; then for phases phi
 *     image:      I(m) = sum_j exp(j phi_j) b_j(m), and S = sum_m |I(m)|^4
 *     reproject:  acc_j = sum_m w(m) b_j(m), the weight w made from the
 *                 last image: |I|^2 conj(I) (the sharpness's gradient) or
 *                 conj(I) on a mask (phase gradient autofocus)
 *     sweep:      coordinate ascent, pulse after pulse, each pulse's phase
 *                 solved exactly with the others held (Ash 2012)
 * each about one pass over B: a matrix-vector product instead of a
 * backprojection. The CPU engine keeps B in host memory and splits pixels
 * over threads; the CUDA engine keeps it on the device. Both give results
 * that do not depend on the thread count. */
#ifndef SARBP_AUTOFOCUS_ENGINE_H
#define SARBP_AUTOFOCUS_ENGINE_H

#include "sarbp/autofocus.h"
#include "sarbp/rangecomp.h"

typedef struct af_engine af_engine;

enum { AF_WEIGHT_SHARPNESS = 0, AF_WEIGHT_MASKED = 1 };

typedef struct {
    /* The image for phi[P] (kept as the last image); *S its sharpness. */
    sarbp_status (*image)(af_engine *e, const double *phi, double *S);
    /* acc[P] from the last image: weight AF_WEIGHT_SHARPNESS (mask NULL)
     * or AF_WEIGHT_MASKED (mask[M], 1 where the pixel counts). */
    sarbp_status (*reproject)(af_engine *e, int weight, const unsigned char *mask, sarbp_c64 *acc);
    /* One sweep over the pulses from the last image, which must be phi's:
     * phi[j] becomes the best phase of pulse j, kept within half a turn of
     * ref[j]; the last image follows. *S: the new sharpness; *moved: the
     * largest change of a phase (rad, modulo a turn). */
    sarbp_status (*sweep)(af_engine *e, double *phi, const double *ref, double *S, double *moved);
    /* The last image into out[M]. */
    sarbp_status (*read_image)(af_engine *e, sarbp_c32 *out);
    void (*destroy)(af_engine *e);
} af_engine_ops;

struct af_engine {
    const af_engine_ops *ops;
    size_t P, M;
};

/* The windows' pixels in order, each window row-major: pixel m of window
 * w at (x0 + m % nx, y0 + m / nx) of the grid. */
typedef struct {
    const sarbp_grid *g;
    const sarbp_autofocus_window *win;
    size_t nwin;
    size_t M;           /* pixels of all windows */
} af_pixels;

/* Engines over the FP32 profiles pr (P pulses) and the pixels px; the
 * profiles are not kept. threads <= 0: all cores. */
sarbp_status af_engine_cpu_create(const sarbp_profiles *pr, const af_pixels *px, int threads,
                                  af_engine **out);
/* SARBP_ERR_UNSUPPORTED in a build without CUDA. */
sarbp_status af_engine_cuda_create(const sarbp_profiles *pr, const af_pixels *px, int device,
                                   af_engine **out);

/* The best phase of Re(e^{i p} C1) + Re(e^{2 i p} C2): what a sweep solves
 * for each pulse (shared so that the engines agree). */
double af_best_phase(sarbp_c64 C1, sarbp_c64 C2);

#endif
