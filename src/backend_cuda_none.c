/* backend_cuda_none.c - the cuda back end of a build without CUDA: never
 * available, and says so. */
#include "sarbp/backproject.h"

static int none_available(const sarbp_bp_options *o)
{
    (void)o;
    return 0;
}

static sarbp_status none_create(const sarbp_phd *meta, const sarbp_grid *grid,
                                const sarbp_rc_params *rc, const sarbp_bp_options *o, void **plan)
{
    (void)meta, (void)grid, (void)rc, (void)o;
    *plan = NULL;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}

static size_t none_block(const void *p) { (void)p; return 1; }
static sarbp_status none_execute(void *p, size_t p0, size_t np, const sarbp_c32 *s)
{
    (void)p, (void)p0, (void)np, (void)s;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}
static sarbp_status none_finish(void *p, sarbp_c32 *img)
{
    (void)p, (void)img;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA");
}
static void none_destroy(void *p) { (void)p; }
static void none_stage_times(const void *p, sarbp_stage_times *t)
{
    (void)p;
    *t = (sarbp_stage_times){0};
}
static size_t none_passes(const void *p) { (void)p; return 1; }
static sarbp_status none_begin(void *p, size_t k)
{
    (void)p, (void)k;
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

const sarbp_backend sarbp_backend_cuda = {
    "cuda", none_available, none_create, none_block, none_passes, none_begin, none_execute,
    none_finish, none_destroy, none_stage_times,
};
