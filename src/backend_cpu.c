/* backend_cpu.c - the CPU back end: FFTW range compression, then the FP64
 * reference or the tiled FP32 backprojector, accumulating block by block;
 * or, for precision "exact", each pulse's spectrum summed directly onto the
 * pixels (bp_exact.c). It times its own stages (wall clock) for
 * stage_times(). */
#include <stdlib.h>
#include <string.h>

#include "sarbp/backproject.h"
#include "sarbp/progress.h"

#define CPU_DEFAULT_BLOCK 128

struct cpu_plan {
    sarbp_grid grid;
    sarbp_bp_options o;
    sarbp_rc_plan *rc;
    sarbp_profiles *pr;
    size_t block, K;
    const sarbp_phd *meta;
    sarbp_c64 *acc64; /* FP64, exact */
    sarbp_c64 *spec;  /* exact: the block's spectra [block][nk] */
    double *fa, *fd;  /* exact: [block] */
    size_t nk;
    sarbp_c32 *acc32; /* FP32 */
    sarbp_stage_times times; /* setup, rc, bp, finish; memory; transfer stays 0 */
};

static int cpu_available(const sarbp_bp_options *o)
{
    (void)o;
    return 1;
}

static void cpu_destroy(void *vp)
{
    struct cpu_plan *p = vp;
    if (!p) return;
    sarbp_rc_plan_free(p->rc);
    sarbp_profiles_free(p->pr);
    free(p->acc64);
    free(p->acc32);
    free(p->spec);
    free(p->fa);
    free(p->fd);
    free(p);
}

static sarbp_status cpu_create(const sarbp_phd *meta, const sarbp_grid *grid,
                               const sarbp_rc_params *rc, const sarbp_bp_options *o, void **out)
{
    *out = NULL;
    const double t0 = sarbp_now_s();
    if (o->precision == SARBP_FP16)
        return sarbp_error(SARBP_ERR_UNSUPPORTED,
                           "precision fp16 needs the cuda back end (the cpu back end does fp64 and fp32)");
    SARBP_TRY(sarbp_grid_validate(grid));
    struct cpu_plan *p = calloc(1, sizeof *p);
    if (!p) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    p->grid = *grid;
    p->o = *o;
    p->meta = meta;
    p->K = meta->nsamples;
    p->block = o->pulse_block ? o->pulse_block : CPU_DEFAULT_BLOCK;
    if (p->block > meta->npulses) p->block = meta->npulses;
    const int exact = o->precision == SARBP_EXACT;
    sarbp_status st = sarbp_rc_plan_create(meta, rc, o->precision, p->block, &p->rc);
    if (!st && !exact)
        st = sarbp_profiles_alloc(p->block, sarbp_rc_plan_nbins(p->rc), o->precision, &p->pr);
    if (!st && exact) {
        p->nk = sarbp_rc_exact_size(p->rc);
        p->spec = malloc(p->block * p->nk * sizeof(sarbp_c64));
        p->fa = malloc(p->block * sizeof(double));
        p->fd = malloc(p->block * sizeof(double));
        if (!p->spec || !p->fa || !p->fd) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    size_t npix = grid->nx * grid->ny;
    if (!st) {
        if (o->precision == SARBP_FP64 || exact) p->acc64 = calloc(npix, sizeof(sarbp_c64));
        else p->acc32 = calloc(npix, sizeof(sarbp_c32));
        if (!p->acc64 && !p->acc32)
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for a %zu x %zu image", grid->nx,
                             grid->ny);
    }
    if (st) {
        cpu_destroy(p);
        return st;
    }
    /* pulse data: one block of profiles and its per-pulse geometry (the
     * range compressor's FFT work buffers are its own and not counted) */
    const size_t elem = o->precision == SARBP_FP64 ? sizeof(sarbp_c64) : sizeof(sarbp_c32);
    p->times.pulse_bytes = exact ? p->block * (p->nk * sizeof(sarbp_c64) + 2 * sizeof(double))
                                 : p->pr->capacity * (p->pr->nbins * elem + 7 * sizeof(double));
    p->times.image_bytes = npix * (p->acc64 ? sizeof(sarbp_c64) : sizeof(sarbp_c32));
    p->times.setup_s = sarbp_now_s() - t0;
    *out = p;
    return SARBP_OK;
}

static size_t cpu_block_pulses(const void *vp)
{
    return ((const struct cpu_plan *)vp)->block;
}

static size_t cpu_passes(const void *vp)
{
    (void)vp;
    return 1;
}

static sarbp_status cpu_begin_pass(void *vp, size_t k)
{
    (void)vp;
    return k == 0 ? SARBP_OK : sarbp_error(SARBP_ERR_INTERNAL, "the cpu back end makes one pass");
}

static sarbp_status cpu_execute(void *vp, size_t p0, size_t np, const sarbp_c32 *samples)
{
    struct cpu_plan *p = vp;
    if (np > p->block)
        return sarbp_error(SARBP_ERR_INTERNAL, "block of %zu pulses exceeds the plan's %zu", np,
                           p->block);
    const double t0 = sarbp_now_s();
    if (p->spec) { /* the exact image: spectra, then direct summation */
        for (size_t j = 0; j < np; j++)
            SARBP_TRY(sarbp_rc_exact_spectrum(p->rc, p0 + j, samples + j * p->K, p->spec + j * p->nk,
                                              p->fa + j, p->fd + j));
        const double t1 = sarbp_now_s();
        p->times.rc_s += t1 - t0;
        sarbp_status st = sarbp_bp_exact(np, p->nk, p->spec, p->fa, p->fd, p->meta->pos + 3 * p0,
                                         p->meta->r0 + p0, &p->grid, p->o.threads, p->acc64);
        p->times.bp_s += sarbp_now_s() - t1;
        return st;
    }
    sarbp_status st = sarbp_rc_execute(p->rc, p0, np, samples, p->pr);
    const double t1 = sarbp_now_s();
    p->times.rc_s += t1 - t0;
    if (st) return st;
    if (p->o.precision == SARBP_FP64) st = sarbp_bp_cpu_fp64(p->pr, &p->grid, p->acc64);
    else st = sarbp_bp_cpu_fp32(p->pr, &p->grid, p->o.threads, p->acc32);
    p->times.bp_s += sarbp_now_s() - t1;
    return st;
}

static sarbp_status cpu_finish(void *vp, sarbp_c32 *image)
{
    struct cpu_plan *p = vp;
    const double t0 = sarbp_now_s();
    size_t npix = p->grid.nx * p->grid.ny;
    if (p->acc32) {
        memcpy(image, p->acc32, npix * sizeof(sarbp_c32));
    } else {
        for (size_t i = 0; i < npix; i++) {
            image[i].re = (float)p->acc64[i].re;
            image[i].im = (float)p->acc64[i].im;
        }
    }
    p->times.finish_s += sarbp_now_s() - t0;
    return SARBP_OK;
}

static void cpu_stage_times(const void *vp, sarbp_stage_times *t)
{
    *t = ((const struct cpu_plan *)vp)->times;
}

const sarbp_backend sarbp_backend_cpu = {
    "cpu", cpu_available, cpu_create, cpu_block_pulses, cpu_passes, cpu_begin_pass, cpu_execute,
    cpu_finish, cpu_destroy, cpu_stage_times,
};

void sarbp_bp_options_default(sarbp_bp_options *o)
{
    memset(o, 0, sizeof *o);
    o->precision = SARBP_FP32;
}

const sarbp_backend *sarbp_backend_find(const char *name)
{
    if (!strcmp(name, "cpu")) return &sarbp_backend_cpu;
    if (!strcmp(name, "cuda")) return &sarbp_backend_cuda;
    return NULL;
}
