/* mpi_run.c - mpiexec command lines and a shell with its stderr kept, for
 * the MPI tests (mpi_run.h). */
#include "mpi_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"
#include "test_util.h"

#ifndef SARBP_MPIEXEC
#define SARBP_MPIEXEC ""
#endif

const char *tu_mpiexec(void)
{
    return SARBP_MPIEXEC;
}

int tu_mpi_precondition(void)
{
#ifndef SARBP_HAVE_MPI
    printf("skipped: sarbp was built without MPI (-DSARBP_MPI=OFF or no Open MPI found)\n");
    return TU_SKIP_RC;
#else
    if (!*SARBP_MPIEXEC || access(SARBP_MPIEXEC, X_OK)) {
        printf("skipped: no mpiexec ('%s')\n", SARBP_MPIEXEC);
        return TU_SKIP_RC;
    }
    return 0;
#endif
}

const char *tu_mpi_rank_env(void)
{
    return tu_under_asan() ? "ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 " : "";
}

const char *tu_mpi_launcher(int n)
{
    static char buf[1024];
    if (n <= 1) return "";
    snprintf(buf, sizeof buf, "%s'%s' --oversubscribe -n %d ", tu_mpi_rank_env(), SARBP_MPIEXEC, n);
    return buf;
}

int tu_mpi_sh(const char *cmd, char *err, size_t errn)
{
    char errp[1024];
    snprintf(errp, sizeof errp, "%s/mpi_sh_%d.err", SARBP_TEST_TMP, (int)getpid());
    const size_t len = strlen(cmd) + strlen(errp) + 128;
    char *full = malloc(len);
    assert_non_null(full);
    snprintf(full, len,
             "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; { %s; } 2>'%s'", cmd,
             errp);
    const int rc = system(full);
    free(full);
    err[0] = '\0';
    tu_read_text(errp, err, errn);
    remove(errp);
    if (rc == -1 || !WIFEXITED(rc)) return -1;
    return WEXITSTATUS(rc);
}
