/* backproject_variants.c - the table of backprojection kernel variants
 * (sarbp/cuda_variants.h): one row per variant of kernels/backproject.cu.
 *
 * Plain C data, compiled in every build (with or without CUDA), so that
 * 'sarbp bench --help' and the tests list the same variants everywhere.
 * The dispatcher (sarbp_bp_launch_kernel) and the configuration check
 * (sarbp_bp_config_resolve) look variants up here by name; a new variant
 * is its kernel and launcher in backproject.cu, its case in the
 * dispatcher's switch, and one row here. */
#include <string.h>

#include "sarbp/cuda_variants.h"

#define TILED SARBP_CUDA_VARIANT_TILED
#define MINB SARBP_CUDA_VARIANT_MINB
#define MIXED SARBP_CUDA_VARIANT_MIXED
#define BENCH SARBP_CUDA_VARIANT_BENCH

/* summary and requires: at most 54 characters each ('sarbp bench --help'
 * prints them under the option, within 80 columns) */
static const sarbp_cuda_variant variants[] = {
    {"v1", SARBP_CUDA_V1, MIXED,
     "FP64, one thread per pixel: the baseline and reference",
     "1 pixel per thread, at most 1024 threads a block"},
    {"v2", SARBP_CUDA_V2, TILED | MINB | MIXED,
     "tiled FP32, the exact sqrt/divide range formula",
     "tile height a multiple of PPT, 64..1024 threads"},
    {"v3", SARBP_CUDA_V3, SARBP_CUDA_VARIANT_DEFAULT | BENCH | TILED | MINB | MIXED,
     "v2 with a series range, rounding floor, folded phase",
     "as v2"},
    {"v3a", SARBP_CUDA_V3A, BENCH | TILED | MINB | MIXED,
     "v3 with a float-float phase: the accurate variant",
     "as v2"},
    {"v4", SARBP_CUDA_V4, BENCH | TILED,
     "v3 with a tile's range bins staged in shared memory",
     "as v2; bins of 16 pulses fit 200 KiB; no mixed bins"},
};

#define NVARIANTS (sizeof variants / sizeof variants[0])

const sarbp_cuda_variant *sarbp_cuda_variants(size_t *n)
{
    if (n) *n = NVARIANTS;
    return variants;
}

const sarbp_cuda_variant *sarbp_cuda_variant_find(const char *name)
{
    for (size_t i = 0; i < NVARIANTS; i++)
        if (name && *name ? !strcmp(variants[i].name, name)
                          : (variants[i].flags & SARBP_CUDA_VARIANT_DEFAULT) != 0)
            return &variants[i];
    return NULL;
}

const sarbp_cuda_variant *sarbp_cuda_variant_by_id(int id)
{
    for (size_t i = 0; i < NVARIANTS; i++)
        if (variants[i].id == id) return &variants[i];
    return NULL;
}
