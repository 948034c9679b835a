/* mpi_run.h - what the MPI tests (test_mpi*.c) share: the mpiexec command
 * line and a shell whose stderr is kept. Ranks are oversubscribed on the
 * 2-core machine; as root, Open MPI wants its OMPI_ALLOW_RUN_AS_ROOT
 * variables, which tu_mpi_sh exports. */
#ifndef SARBP_TEST_MPI_RUN_H
#define SARBP_TEST_MPI_RUN_H

#include <stddef.h>

/* The mpiexec sarbp was configured with, "" when none. */
const char *tu_mpiexec(void);

/* For the main() of an MPI test: 0 when sarbp was built with MPI and the
 * mpiexec is there to run; else TU_SKIP_RC, saying why on stdout. */
int tu_mpi_precondition(void);

/* Environment for the ranks, as a prefix of the command line ("" or
 * "VAR=... "). In the sanitizer build the ranks run without
 * LeakSanitizer: Open MPI 4.1 leaves blocks of its own
 * (ompi_op_base_op_select and components it has already unloaded, so no
 * suppression can name them) at MPI_Finalize. sarbp's own allocations on
 * these paths are leak-checked by the one-process runs of the MPI tests
 * and by every other test. */
const char *tu_mpi_rank_env(void);

/* "" for one process, else "ENV 'mpiexec' --oversubscribe -n N ", to put
 * before the command. A static buffer. */
const char *tu_mpi_launcher(int n);

/* Runs cmd with sh, its stderr into err (errn bytes, NUL-terminated,
 * truncated). The exit status, or -1 when it did not exit. */
int tu_mpi_sh(const char *cmd, char *err, size_t errn);

#endif
