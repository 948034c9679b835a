/* sarbp/mpi.h - forming one image across the ranks of an MPI job.
 *
 * The ranks share out the image in bands of whole rows (sarbp_grid_band), so
 * each band's pixels sit at the whole grid's coordinates bit for bit and the
 * CPU back end's band equals the same rows of a one-process image. Every rank
 * reads the phase history itself (a reader of its own); rank 0 assembles the
 * bands into the one output image, receiving them straight into place, or,
 * for a .npy, each rank writes its band into the one file itself.
 *
 * Failures are values here too: after each step that can fail on some ranks
 * only, the ranks exchange a status (sarbp_mpi_check), and a rank that has
 * left the pipeline early answers those exchanges from sarbp_mpi_drain, so
 * no rank waits for one that has given up. Nothing here prints or exits.
 *
 * Built with -DSARBP_MPI (src/form/mpi_form.c); without it (src/form/mpi_none.c) the
 * same calls describe one process, and sarbp_mpi_init refuses a launch of
 * several ranks. All calls are from the main thread only. */
#ifndef SARBP_MPI_H
#define SARBP_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "sarbp/form.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this binary was built with MPI. */
int sarbp_mpi_built(void);

/* The number of ranks the launcher's environment announces (Open MPI's
 * OMPI_COMM_WORLD_SIZE, PMI/PMIx's PMI_SIZE, MPICH's MPI_LOCALNRANKS is not
 * used: it counts one node), or 0 when the process was not started by an MPI
 * launcher. Reads the environment only. */
int sarbp_mpi_launched(void);

/* MPI_Init when the process was started by a launcher (sarbp_mpi_launched()
 * > 0), otherwise nothing: a plain run stays a plain process. Without MPI
 * built, SARBP_ERR_UNSUPPORTED when a launcher announces more than one rank. */
sarbp_status sarbp_mpi_init(int *argc, char ***argv);
/* MPI_Finalize when sarbp_mpi_init initialised MPI; no-op otherwise. */
void sarbp_mpi_finalize(void);
int sarbp_mpi_rank(void); /* 0 without MPI */
int sarbp_mpi_size(void); /* 1 without MPI */
/* This rank among the ranks of its node (MPI_Comm_split_type SHARED, found
 * at sarbp_mpi_init), and how many share the node: for one GPU a rank
 * where the launcher's environment does not say (OMPI_COMM_WORLD_LOCAL_RANK,
 * SLURM_LOCALID). 0 and 1 without MPI. */
int sarbp_mpi_local_rank(void);
int sarbp_mpi_local_size(void);

/* Collective status exchange after a step that may fail on some ranks:
 * failed is this rank's own failure. Returns 1 when every rank may go on;
 * 0 when some rank failed (itself or another) or has already left for
 * sarbp_mpi_drain; then *peer (may be NULL) is 1 when the failure is not this
 * rank's own. One rank: returns !failed. */
int sarbp_mpi_check(int failed, int *peer);

/* sarbp_mpi_check with a vote: *all_yes (may be NULL) is 1 when every rank
 * voted yes, *any_yes when some rank did (for choices the ranks must share,
 * such as the back end). Meaningful only when it returns 1. */
int sarbp_mpi_vote(int failed, int yes, int *all_yes, int *any_yes, int *peer);

/* The last collective of a run, on every rank: answers the other ranks'
 * sarbp_mpi_check calls until every rank is here. failed is 1 when this rank
 * failed on its own (not because another did). Returns the lowest rank that
 * failed on its own, or -1 when none did. */
int sarbp_mpi_drain(int failed);

/* Sends text (NUL-terminated) from rank from to rank 0, where *out receives
 * a malloc'd copy (caller frees); other ranks get *out = NULL. Collective over
 * ranks 0 and from only (the others need not call). Also sends the int code. */
sarbp_status sarbp_mpi_relay(int from, const char *text, int code, char **out, int *code_out);

/* Rows of rank k of n: the image's ny rows cut into bands of whole multiples
 * of align rows (the last band takes the remainder), as equal as whole
 * multiples allow, earlier ranks taking the extra ones (so rank 0 always has
 * rows). *nrows = 0 when there are fewer multiples than ranks. The work of a
 * row is the same on every row (every pulse reaches every pixel), so equal
 * rows are equal work. The form plan cuts its shares so, on the back end's
 * row alignment (sarbp_form_request.rank, nranks). */
void sarbp_mpi_band_rows(size_t ny, size_t align, int n, int k, size_t *row0, size_t *nrows);

/* ---- the ranks agree on what they form ----
 * Every rank reads its own input, so a node-local copy that differs, a file
 * rewritten while the job starts or options given differently to one rank
 * (mpirun's MPMD ':') would assemble an image whose bands come from
 * different data. Before forming, the ranks compare digests of what they
 * read and what they were asked; any difference fails the job on every rank.
 * The digests are 64-bit hashes for catching accidents, not cryptographic:
 * they do not stand against a forger who picks the bytes. */

/* Adds n bytes at p to the running hash h (start from SARBP_MPI_HASH_SEED)
 * and returns the new hash. Byte order is the host's: ranks of one job are
 * assumed to share it. Pure; thread-safe. */
#define SARBP_MPI_HASH_SEED UINT64_C(0x736172627064676e)
uint64_t sarbp_mpi_hash(uint64_t h, const void *p, size_t n);

/* A hash of m's metadata (domain, sizes, every per-pulse array present:
 * positions, r0, f0, df, th, phi, the autofocus corrections, and the chirp
 * scalars); m->data is not read. Pure; thread-safe. */
uint64_t sarbp_mpi_hash_meta(const sarbp_phd *m);

/* A hash of the samples of rd's selected pulses, read through rd (so the
 * autofocus correction, when on, is in it): every sample when the pulses
 * hold at most SARBP_MPI_HASH_SAMPLES samples, otherwise whole pulses at an
 * even stride that keeps to about that many (the first and the last pulse
 * always). *hashed (may be NULL) receives the number of pulses hashed.
 * Reads in blocks of about 8 MiB; fails as sarbp_reader_read does. */
#define SARBP_MPI_HASH_SAMPLES ((size_t)1 << 24) /* 16 Mi samples: 128 MiB read */
sarbp_status sarbp_mpi_hash_samples(sarbp_reader *rd, uint64_t *h, size_t *hashed);

/* Collective: compares this rank's n values d[] (n the same on every rank,
 * at most SARBP_MPI_COMPARE_MAX: a digest, not data; more are not looked
 * at) with rank 0's. Returns -1 on every rank when all ranks hold the same
 * values; otherwise, on every rank, the lowest rank that differs, with *item
 * (may be NULL) its first differing index and *value (may be NULL) its
 * value there. Allocates nothing. One rank: -1. */
#define SARBP_MPI_COMPARE_MAX 64
int sarbp_mpi_compare(const uint64_t *d, int n, int *item, uint64_t *value);

/* The form plan fp across the ranks, collective: fp is each rank's plan
 * of its share of the rows (sarbp_form_request.rank of nranks = the MPI
 * rank and size: the outermost cut, on the back end's row alignment, so
 * that the shares form bit for bit what one process forms there). Rank 0
 * forms its rows, the first, in place in the whole image and receives the
 * others' rows into it; each other rank forms its rows from its own reader
 * rd and sends them. On rank 0 *out is the whole image (attributes as
 * sarbp_form's); on the others NULL. stats: this rank's rows. One process:
 * fp formed into a new image. A failure on any rank fails
 * all; on ranks other than the failing one the status is SARBP_ERR_INVALID
 * with the detail "another rank failed" and *peer_failed = 1.
 *
 * Before forming, the ranks compare (sarbp_mpi_compare) the sizes of the
 * input, its metadata (sarbp_mpi_hash_meta), its samples
 * (sarbp_mpi_hash_samples), the whole grid g and the options that shape
 * the pixels, as fp decided them: the back end's name, rc, and the options'
 * precision, algorithm, max_error_db, variant, tile, ppt, pulse_block,
 * the limits' band_rows and stream, and raw_fp16 (not
 * threads, devices, memory budgets or verbose, which are each rank's own).
 * When some rank differs, rank 0 returns SARBP_ERR_MISMATCH naming that
 * rank and what differs ("rank 1 read different samples than rank 0"), the
 * others SARBP_ERR_INVALID with *peer_failed = 1: one message, from rank 0.
 * Identical inputs give the same image as without the check, bit for bit. */
sarbp_status sarbp_form_mpi(sarbp_session *s, sarbp_reader *rd, const sarbp_form_plan *fp,
                            sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats,
                            int *peer_failed);

/* ---- the ranks write their own rows ----
 * sarbp_form_mpi holds the whole image on rank 0, which a format written
 * in one stream needs (PNG, SICD/NITF, GeoTIFF, KMZ, and HDF5 from a
 * serial HDF5 library). A .npy is a header and the rows in order, so each
 * rank writes its rows at their offset in the one file (MPI-IO) and no
 * rank holds more than its rows: sarbp_form_mpi_rows, then
 * sarbp_mpi_write_npy. */

/* 1 when every output paths[0..n) (format from its name) can be written
 * by the ranks each writing their rows (sarbp_mpi_write_npy): .npy, on a
 * little-endian host (a .npy's pixels are little-endian; a big-endian
 * host's image goes through rank 0, whose writer swaps them). 0 for
 * n = 0. Pure. */
int sarbp_mpi_writes_rows(const char *const *paths, size_t n);

/* sarbp_form_mpi without the assembly, collective: after the same check
 * that the ranks agree, each rank forms its rows (fp's decision: rows.row0,
 * rows.nrows) into *rows, malloc'd [nrows][nx] (caller frees; NULL when
 * the rank has no rows), and the ranks wait for each other. stats: this
 * rank's rows, except on rank 0 of several ranks: total_s until every rank
 * had formed its rows, and the pairs of the whole image. Failures as
 * sarbp_form_mpi's. One process: fp's rows, the whole image. */
sarbp_status sarbp_form_mpi_rows(sarbp_session *s, sarbp_reader *rd, const sarbp_form_plan *fp,
                                 sarbp_progress *progress, sarbp_c32 **rows,
                                 sarbp_form_stats *stats, int *peer_failed);

/* Collective: the image of grid g (the whole grid), of which this rank
 * holds rows [row0, row0 + nrows) in rows ([nrows][nx], host memory; NULL
 * when nrows is 0), written to every .npy file paths[0..n) (complex64 as
 * sarbp_image_write_npy writes it, byte for byte), all or nothing.
 *
 * First every rank checks its pixels: a NaN or Inf anywhere fails every
 * rank before any file exists (the message, on rank 0, counts them and
 * gives the first, as sarbp_image_write's). Then rank 0 creates each
 * output's temporary beside it (named: "<path>.tmp-XXXXXX", see
 * sarbp/output.h) and tells the others its name; every rank opens it
 * (MPI_File_open on MPI_COMM_SELF: a collective open that fails on some
 * ranks would leave the others a handle whose close waits for them), writes
 * its rows at their offset (rank 0 the header too) and syncs them
 * (MPI_File_sync); only when every rank has succeeded does rank 0 rename
 * the temporaries over the outputs (sarbp_tempfile_commit_all: an earlier
 * file of that name is kept until then). On any failure on any rank the
 * temporaries are removed and every output is as it was.
 *
 * The output's folder must be one every rank sees under the same name (a
 * shared file system, the ranks started in the same working directory
 * when the path is relative): a rank that cannot open the temporary fails
 * the job, its message naming the temporary.
 *
 * Returns the same outcome on every rank: SARBP_OK, this rank's own error,
 * or SARBP_ERR_INVALID "another rank failed" with *peer_failed = 1 (may be
 * NULL). SARBP_ERR_INVALID on every rank when sarbp_mpi_writes_rows says
 * no. One process (MPI not started): rows must be the whole image, written
 * by sarbp_image_write_all. */
sarbp_status sarbp_mpi_write_npy(const char *const *paths, size_t n, const sarbp_grid *g,
                                 size_t row0, size_t nrows, const sarbp_c32 *rows,
                                 int *peer_failed);

#ifdef __cplusplus
}
#endif
#endif
