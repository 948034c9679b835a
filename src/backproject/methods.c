/* methods.c - the table of back ends and the defaults: turns the
 * generic options of a form (sarbp_bp_options) into each back end's own and
 * calls its typed create. Adding a back end is one row here. */
#include <string.h>

#include "sarbp/backproject.h"
#include "sarbp/bench.h" /* sarbp_form_limits */

void sarbp_bp_options_default(sarbp_bp_options *o)
{
    memset(o, 0, sizeof *o);
    o->precision = SARBP_FP32;
}

static void cpu_options(const sarbp_bp_options *o, sarbp_cpu_options *c)
{
    sarbp_cpu_options_default(c);
    c->precision = o->precision;
    c->threads = o->threads;
    c->pulse_block = o->pulse_block;
    c->algorithm = o->algorithm;
}

const char *sarbp_algorithm_name(sarbp_algorithm a)
{
    return a == SARBP_ALGO_FFBP ? "ffbp" : a == SARBP_ALGO_AUTO ? "auto" : "bp";
}

/* A grid with heights (terrain) is formed by direct backprojection (cpu
 * and cuda): FFBP would form the flat plane z = zc, so it refuses it here,
 * before any plan exists. */
static sarbp_status terrain_refused(const sarbp_bp_desc *d, sarbp_algorithm a)
{
    if (!d || !d->grid || !d->grid->height) return SARBP_OK;
    if (a == SARBP_ALGO_FFBP)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "--heights: FFBP forms on a plane; use "
                           "--algorithm bp");
    return SARBP_OK;
}

static int cpu_available(const sarbp_bp_options *o)
{
    (void)o;
    return 1;
}

static sarbp_status cpu_shape(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                               sarbp_plan_shape *m)
{
    (void)device;
    SARBP_TRY(terrain_refused(d, o->algorithm));
    sarbp_cpu_options c;
    cpu_options(o, &c);
    return sarbp_cpu_plan_shape(d, &c, o->limits ? o->limits->host_mem : 0, m);
}

static sarbp_status cpu_create(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                               sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    (void)device;
    *out = NULL;
    SARBP_TRY(terrain_refused(d, o->algorithm));
    sarbp_cpu_options c;
    cpu_options(o, &c);
    return sarbp_cpu_plan_create(d, &c, out, stats);
}

static void cuda_options(const sarbp_bp_options *o, int device, sarbp_cuda_options *c)
{
    sarbp_cuda_options_default(c);
    c->precision = o->precision;
    c->device = device;
    c->variant = o->variant;
    c->tile_x = o->tile_x;
    c->tile_y = o->tile_y;
    c->ppt = o->ppt;
    c->pulse_block = o->pulse_block;
    c->raw_fp16 = o->raw_fp16;
    c->algorithm = o->algorithm;
    c->band_rows = o->limits ? o->limits->band_rows : 0;
}

static int cuda_available(const sarbp_bp_options *o)
{
    const int n = sarbp_cuda_device_count();
    if (n <= 0) return 0;
    if (!o) return 1;
    if (o->ndevices == 0) return o->device >= 0 && o->device < n;
    for (int k = 0; k < o->ndevices; k++)
        if (o->devices[k] < 0 || o->devices[k] >= n) return 0;
    return 1;
}

static sarbp_status cuda_shape(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                                sarbp_plan_shape *m)
{
    SARBP_TRY(terrain_refused(d, o->algorithm));
    sarbp_cuda_options c;
    cuda_options(o, device, &c);
    return sarbp_cuda_plan_shape(d, &c, o->gpu_mem, m);
}

static sarbp_status cuda_create(const sarbp_bp_desc *d, const sarbp_bp_options *o, int device,
                                sarbp_bp_plan **out, sarbp_stage_times *stats)
{
    *out = NULL;
    SARBP_TRY(terrain_refused(d, o->algorithm));
    sarbp_cuda_options c;
    cuda_options(o, device, &c);
    return sarbp_cuda_plan_create(d, &c, out, stats);
}

const sarbp_backend sarbp_backend_cpu = {"cpu", 0, cpu_available, cpu_shape, cpu_create};
const sarbp_backend sarbp_backend_cuda = {"cuda", 1, cuda_available, cuda_shape, cuda_create};

static const sarbp_backend *const backends[] = {&sarbp_backend_cpu, &sarbp_backend_cuda};

const sarbp_backend *sarbp_backend_find(const char *name)
{
    for (size_t k = 0; k < sizeof backends / sizeof backends[0]; k++)
        if (!strcmp(name, backends[k]->name)) return backends[k];
    return NULL;
}

const sarbp_backend *sarbp_backend_auto(const sarbp_bp_options *o, int *fell_back)
{
    const int cpu_only = o->precision == SARBP_FP64 || o->precision == SARBP_EXACT;
    const int cuda = !cpu_only && sarbp_backend_cuda.available(o);
    if (fell_back) *fell_back = !cpu_only && !cuda;
    return cuda ? &sarbp_backend_cuda : &sarbp_backend_cpu;
}
