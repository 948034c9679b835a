/* mpi_common.c - what the MPI and the one-process builds share: the
 * launcher's environment and the split of an image into bands of rows. No
 * MPI calls here (mpi_form.c makes them; mpi_none.c stands in for them). */
#include <limits.h>
#include <stdlib.h>

#include "sarbp/mpi.h"

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
