/* mpi_common.c - what the MPI and the one-process builds share: the
 * launcher's environment, the split of an image into bands of rows, the
 * digests the ranks compare before forming and the outputs the ranks can
 * write themselves. No MPI calls here (mpi_form.c makes them; mpi_none.c
 * stands in for them). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "form/plan_internal.h"
#include "sarbp/mpi.h"
#include "sarbp/phd_io.h"

static int env_int(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s) return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 0 || v > INT_MAX ? -1 : (int)v;
}

int sarbp_mpi_launched(void)
{
    /* Open MPI's mpirun/mpiexec; PMI-1/2 (srun --mpi=pmi2, MPICH's hydra);
     * PMIx (srun --mpi=pmix), which announces a rank but not always the size */
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const int n = env_int(sizes[i]);
        if (n > 0) return n;
    }
    if (env_int("PMIX_RANK") >= 0 || env_int("PMI_RANK") >= 0) {
        const int n = env_int("SLURM_NTASKS");
        return n > 0 ? n : 1;
    }
    return 0;
}

void sarbp_mpi_band_rows(size_t ny, size_t align, int n, int k, size_t *row0, size_t *nrows)
{
    if (align < 1) align = 1;
    const size_t units = (ny + align - 1) / align, nn = (size_t)(n > 0 ? n : 1), kk = (size_t)k;
    const size_t base = units / nn, extra = units % nn;
    const size_t u0 = kk * base + (kk < extra ? kk : extra), nu = base + (kk < extra);
    const size_t r0 = u0 * align, r1 = (u0 + nu) * align;
    *row0 = r0 < ny ? r0 : ny;
    *nrows = (r1 < ny ? r1 : ny) - *row0;
}

int sarbp_mpi_writes_rows(const char *const *paths, size_t n)
{
    const uint16_t one = 1;
    if (*(const unsigned char *)&one != 1) return 0; /* a .npy is little-endian: rank 0's writer swaps */
    for (size_t i = 0; i < n; i++)
        if (!paths || sarbp_image_format_from_name(paths[i]) != SARBP_IMG_NPY) return 0;
    return n > 0;
}

sarbp_status mpi_write_npy_one(const char *const *paths, size_t n, const sarbp_grid *g,
                               size_t row0, size_t nrows, const sarbp_c32 *rows)
{
    if (row0 != 0 || nrows != g->ny)
        return sarbp_error(SARBP_ERR_INVALID, "one process writes the whole image, not rows %zu to "
                           "%zu of %zu", row0, row0 + nrows, g->ny);
    sarbp_image *img = calloc(1, sizeof *img);
    if (!img) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    img->grid = *g;
    img->data = (sarbp_c32 *)rows; /* read only */
    const sarbp_status st = sarbp_image_write_all(paths, n, img, SARBP_DB_RANGE_AUTO);
    free(img);
    return st;
}

/* ---- digests ---------------------------------------------------------------
 * A word at a time: each step (xor, multiply by an odd constant, rotate,
 * multiply) is a bijection of the state for a fixed word, so a change in one
 * word always changes the state after it; the murmur3 finaliser spreads the
 * last words. Fast (a few GB/s) and plenty against accidents. */

static uint64_t step(uint64_t h, uint64_t w)
{
    h ^= w * UINT64_C(0x9e3779b97f4a7c15);
    h = (h << 31 | h >> 33) * UINT64_C(0xc2b2ae3d27d4eb4f);
    return h + UINT64_C(0x165667b19e3779f9);
}

static uint64_t finish(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    return h ^ (h >> 33);
}

uint64_t sarbp_mpi_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = step(h, w);
    }
    uint64_t tail = 0;
    memcpy(&tail, b + i, n - i);
    return finish(step(step(h, tail), (uint64_t)n));
}

static uint64_t hash_u64(uint64_t h, uint64_t v) { return sarbp_mpi_hash(h, &v, sizeof v); }

/* an array of n doubles, or its absence (NULL differs from any array) */
static uint64_t hash_doubles(uint64_t h, const double *a, size_t n)
{
    h = hash_u64(h, a != NULL);
    return a ? sarbp_mpi_hash(h, a, n * sizeof *a) : h;
}

uint64_t sarbp_mpi_hash_meta(const sarbp_phd *m)
{
    uint64_t h = SARBP_MPI_HASH_SEED;
    h = hash_u64(h, (uint64_t)m->domain);
    h = hash_u64(h, m->npulses);
    h = hash_u64(h, m->nsamples);
    const size_t n = m->npulses;
    h = hash_doubles(h, m->pos, 3 * n);
    h = hash_doubles(h, m->r0, n);
    h = hash_doubles(h, m->f0, n);
    h = hash_doubles(h, m->df, n);
    h = hash_doubles(h, m->th, n);
    h = hash_doubles(h, m->phi, n);
    h = hash_doubles(h, m->r_correct, n);
    h = hash_doubles(h, m->ph_correct, n);
    const double chirp[] = {m->fs, m->chirp_rate, m->pulse_len, m->fc, m->t0};
    return hash_doubles(h, chirp, sizeof chirp / sizeof chirp[0]);
}

sarbp_status sarbp_mpi_hash_samples(sarbp_reader *rd, uint64_t *h, size_t *hashed)
{
    const sarbp_phd *m = sarbp_reader_meta(rd);
    const size_t np = m->npulses, k = m->nsamples;
    *h = SARBP_MPI_HASH_SEED;
    if (hashed) *hashed = 0;
    if (!np || !k) return SARBP_OK;
    /* every pulse, or one in stride; blocks of about 1 Mi samples (8 MiB) */
    const size_t per = SARBP_MPI_HASH_SAMPLES / k > 0 ? SARBP_MPI_HASH_SAMPLES / k : 1;
    const size_t stride = np <= per ? 1 : (np + per - 1) / per;
    const size_t block = stride > 1 ? 1 : ((size_t)1 << 20) / k > 0 ? ((size_t)1 << 20) / k : 1;
    sarbp_c32 *buf = malloc(block * k * sizeof *buf);
    if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    size_t count = 0;
    sarbp_status st = SARBP_OK;
    for (size_t p = 0; p < np && !st;) {
        const size_t n = np - p < block ? np - p : block;
        st = sarbp_reader_read(rd, p, n, buf);
        if (st) break;
        *h = sarbp_mpi_hash(hash_u64(*h, p), buf, n * k * sizeof *buf);
        count += n;
        if (stride == 1) p += n;
        else if (p + 1 == np) break;
        else p = p + stride < np ? p + stride : np - 1; /* the last pulse always */
    }
    free(buf);
    if (hashed) *hashed = count;
    return st;
}
