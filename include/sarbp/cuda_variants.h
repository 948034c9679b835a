/* sarbp/cuda_variants.h - the CUDA backprojection kernel variants: one table
 * (kernels/backproject_variants.c) that the dispatcher, the configuration
 * check, the tests and 'sarbp bench --help' all read.
 *
 * A variant is chosen by name ("v3a"; sarbp_cuda_options.variant). Its id is
 * pinned: it is the number the dispatcher switches on and the kernels'
 * template parameter, and means nothing else. The table is plain data: it
 * is there (and the same) in a build without CUDA, where no variant runs.
 * Thread-safe (constant). */
#ifndef SARBP_CUDA_VARIANTS_H
#define SARBP_CUDA_VARIANTS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SARBP_CUDA_V1 = 1,  /* "v1" */
    SARBP_CUDA_V2 = 2,  /* "v2" */
    SARBP_CUDA_V3 = 3,  /* "v3" */
    SARBP_CUDA_V3A = 4, /* "v3a" */
    SARBP_CUDA_V4 = 5,  /* "v4" */
    SARBP_CUDA_VARIANT_LIMIT /* one past the largest id */
} sarbp_cuda_variant_id;

/* Flags of a row. */
#define SARBP_CUDA_VARIANT_DEFAULT 0x1u /* the dispatcher's default (exactly one row) */
#define SARBP_CUDA_VARIANT_BENCH 0x2u   /* in 'sarbp bench''s default --variant list */
#define SARBP_CUDA_VARIANT_TILED 0x4u   /* a block owns a tile: 1, 2, 4 or 8 pixels per
                                           thread, 64..1024 threads a block */
#define SARBP_CUDA_VARIANT_MINB 0x8u    /* takes a resident-block bound (12 or 16) at 8
                                           pixels per thread in 64-thread blocks */
#define SARBP_CUDA_VARIANT_MIXED 0x10u  /* reads mixed cubic profiles (precision "mixed":
                                           A, B in FP32, C, D in FP16) */

typedef struct {
    const char *name;     /* "v3a": what users type */
    int id;               /* sarbp_cuda_variant_id */
    unsigned flags;       /* SARBP_CUDA_VARIANT_* */
    const char *summary;  /* one line: what it changes against the others */
    const char *requires; /* one line: its preconditions beyond the flags' */
} sarbp_cuda_variant;

/* The rows, in id order; *n (when n is not NULL) their number. */
const sarbp_cuda_variant *sarbp_cuda_variants(size_t *n);
/* The row named name; NULL or "" the default row; NULL when no row has
 * that name. */
const sarbp_cuda_variant *sarbp_cuda_variant_find(const char *name);
/* The row with that id, or NULL. */
const sarbp_cuda_variant *sarbp_cuda_variant_by_id(int id);

#ifdef __cplusplus
}
#endif
#endif
