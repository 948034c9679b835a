/* cli_mpi.c - the command line as the ranks of an MPI job.
 *
 * MPI is initialised only when an MPI launcher started the process (its
 * environment says so: sarbp_mpi_launched), and only for the commands that
 * share work across ranks (form, batch): a plain run never loads MPI's
 * runtime (Open MPI's singleton start spawns a helper daemon, opens sockets
 * and can fail in containers), and fork()ing HDF5 probe children stays as in
 * a plain process.
 *
 * Messages come from rank 0 only. The other ranks write their stderr into
 * memory; at the end every rank meets in sarbp_mpi_drain, and when a rank
 * failed on its own, the lowest such rank's messages are relayed to rank 0,
 * which prints them once (rank 0's own were printed as they came). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sarbp/mpi.h"

int cli_mpi_rank;
int cli_mpi_peer_failed;

static FILE *real_stderr;
static char *captured;
static size_t captured_len;

int cli_mpi_begin(const char *cmd, int *argc, char ***argv)
{
    sarbp_status st = sarbp_mpi_init(argc, argv);
    if (st) return cli_fail_status(cmd, st);
    cli_mpi_rank = sarbp_mpi_rank();
    if (cli_mpi_rank > 0) {
        FILE *mem = open_memstream(&captured, &captured_len);
        if (mem) {
            real_stderr = stderr;
            stderr = mem;
        }
    }
    return CLI_OK;
}

int cli_mpi_end(const char *cmd, int rc)
{
    if (sarbp_mpi_size() > 1) {
        const int self = rc != CLI_OK && !cli_mpi_peer_failed;
        const int r = sarbp_mpi_drain(self);
        if (real_stderr) fflush(stderr);
        if (r > 0) {
            char *text = NULL;
            int code = CLI_FAIL;
            if (sarbp_mpi_relay(r, captured, rc, &text, &code) == SARBP_OK && text) {
                fputs(text, stderr);
                if (!*text) fprintf(stderr, "sarbp: %s: rank %d failed\n", cmd, r);
            }
            free(text);
            if (cli_mpi_rank == 0) rc = code;
        }
        if (r >= 0 && rc == CLI_OK) rc = CLI_FAIL;
    }
    if (real_stderr) {
        fclose(stderr);
        stderr = real_stderr;
        real_stderr = NULL;
        free(captured);
        captured = NULL;
    }
    sarbp_mpi_finalize();
    return rc;
}

int cli_mpi_local_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                        "MPI_LOCALRANKID", "PMI_LOCAL_RANK"};
    if (sarbp_mpi_size() <= 1) return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *s = getenv(names[i]);
        long v;
        if (s && !cli_parse_long(s, 0, 1 << 20, &v)) return (int)v;
    }
    return sarbp_mpi_local_rank(); /* MPI's own count of the node's ranks */
}

int cli_mpi_local_size(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE",
                                        "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"};
    if (sarbp_mpi_size() <= 1) return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *s = getenv(names[i]);
        long v;
        if (s && !cli_parse_long(s, 1, 1 << 20, &v)) return (int)v;
    }
    return sarbp_mpi_local_size();
}
