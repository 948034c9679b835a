/* cuda/none.c - the cuda back end (and sarbp_ffbp_cuda) of a build without CUDA: never
 * available, and says so. */
#include "backproject/session_internal.h"
#include "sarbp/bench.h"
#include "sarbp/backproject.h"
#include "sarbp/ffbp.h"

void sarbp_cuda_options_default(sarbp_cuda_options *o)
{
    *o = (sarbp_cuda_options){0};
    o->precision = SARBP_FP32;
}

int sarbp_cuda_device_count(void) { return 0; }

sarbp_status sarbp_cuda_plan_shape(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                    size_t budget, sarbp_plan_shape *m)
{
    (void)d, (void)o, (void)budget;
    *m = (sarbp_plan_shape){0};
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

/* a session's device contexts: none to open */
sarbp_status sarbp_cuda_device_open(int device, size_t budget, int threads,
                                    struct sarbp_cuda_device **out)
{
    (void)device, (void)budget, (void)threads;
    *out = NULL;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

void sarbp_cuda_device_close(struct sarbp_cuda_device *d) { (void)d; }

void sarbp_cuda_device_memory(struct sarbp_cuda_device *d, sarbp_session_memory *m)
{
    (void)d;
    *m = (sarbp_session_memory){0};
}

sarbp_status sarbp_cuda_plan_create(const sarbp_bp_desc *d, const sarbp_cuda_options *o,
                                    sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    (void)d, (void)o, (void)stats;
    *out = NULL;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

sarbp_status sarbp_cuda_bench_kernel(const sarbp_profiles *pr, const sarbp_grid *g,
                                     const sarbp_cuda_kernel_cfg *cfg, int reps,
                                     double *median_ms, sarbp_c32 *img)
{
    (void)pr, (void)g, (void)cfg, (void)reps, (void)median_ms, (void)img;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

sarbp_status sarbp_cuda_device_info(int device, char *name, size_t n, int *sm_count,
                                    int *clock_mhz, int *mem_clock_mhz)
{
    (void)device, (void)name, (void)n, (void)sm_count, (void)clock_mhz, (void)mem_clock_mhz;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

sarbp_status sarbp_ffbp_cuda(const sarbp_profiles *pr, const sarbp_grid *g,
                             const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
                             sarbp_ffbp_info *info, double *device_ms)
{
    (void)pr, (void)g, (void)prm, (void)device, (void)img, (void)info;
    if (device_ms) *device_ms = 0;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

sarbp_status sarbp_ffbp_cuda_timed(const sarbp_profiles *pr, const sarbp_grid *g,
                                   const sarbp_ffbp_params *prm, int device, sarbp_c32 *img,
                                   sarbp_ffbp_info *info, sarbp_ffbp_cuda_times *t)
{
    (void)pr, (void)g, (void)prm, (void)device, (void)img, (void)info;
    *t = (sarbp_ffbp_cuda_times){0};
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}
