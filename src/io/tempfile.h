/* tempfile.h - temporary files that become outputs (internal to the library).
 *
 * Every writer (images, phase histories) writes to a temporary in its
 * output's folder and renames it over the output only when the file is
 * complete and on disk, so an output is either the whole new file or
 * untouched:
 *
 *     sarbp_tempfile *t;
 *     SARBP_TRY(sarbp_tempfile_create(path, &t));
 *     st = write_to(sarbp_tempfile_fd(t));      (or a stream, or a name)
 *     if (st) { sarbp_tempfile_delete(t); return st; }
 *     return sarbp_tempfile_commit(t);          (frees t, success or not)
 *
 * The temporary is an unnamed file of the output's folder (O_TMPFILE) where
 * the file system has them and /proc is mounted: it vanishes with the
 * process however the process ends, SIGKILL and power loss included. The
 * commit links it (through /proc/self/fd/N) to "<dir>/<base>.tmp-XXXXXX" and
 * renames that over the output. Elsewhere, and for writers that open the
 * file by name (HDF5: sarbp_tempfile_open_name), the temporary has that
 * name from the start. XXXXXX is six characters from getrandom(); names are created
 * exclusively (O_EXCL | O_NOFOLLOW, link): a file or symbolic link already
 * there, planted or not, is never opened, followed or truncated; creation
 * tries a new name. Mode 0666 less the umask.
 *
 * Every named temporary of the process is on one list. A handler for
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ (ulimit -f), SIGXCPU
 * (ulimit -t), SIGALRM, SIGUSR1 and SIGUSR2 (installed on the first create
 * or sarbp_output_on_signal, only for signals whose disposition is still
 * the default) calls the program's hook (sarbp_output_on_signal), unlinks
 * them with async-signal-safe calls and re-raises the signal with the
 * default action; an atexit handler removes any left at exit. A forked
 * child never removes its parent's temporaries. A named temporary left by SIGKILL or
 * power loss says what it is by its name.
 *
 * A commit of several outputs keeps each file it replaces until every
 * rename has succeeded: renameat2(RENAME_EXCHANGE) swaps the temporary and
 * the earlier file, or where the file system lacks it, the earlier file is
 * linked (or, lacking links, renamed) aside to "<dir>/<base>.old-XXXXXX"
 * before the rename. A failure at any step swaps or renames the earlier
 * files back, so the outputs are byte for byte as they were; only when all
 * are in place are the earlier files removed. From the first rename to the
 * end of the commit the signals above are blocked in the committing thread
 * and held back by the handler in the others, then act: a signal never
 * leaves some outputs new and some old. (SIGKILL still can, between two
 * renames; then each earlier file is at its output or at its .old- or
 * .tmp- name, never lost.)
 *
 * MPI: Open MPI's mpirun, when signalled, sends SIGTERM to the ranks and
 * SIGKILL one second later (odls_base_sigkill_timeout, in seconds, default
 * 1; ompi_info --all | grep sigkill). Named temporaries of a rank still
 * removing files at the SIGKILL stay; give the ranks time, e.g.
 * mpirun --mca odls_base_sigkill_timeout 10 (or OMPI_MCA_odls_base_sigkill_timeout=10).
 *
 * Thread safety: create, commit and delete may be called from several
 * threads on different temporaries. Errors name the output path as the
 * caller gave it (sarbp_error). */
#ifndef SARBP_TEMPFILE_H
#define SARBP_TEMPFILE_H

#include <stddef.h>
#include <stdio.h>

#include "sarbp/status.h"

/* The object of sarbp/output.h's sarbp_output_file, which is this API's
 * public face (open, descriptor, commit, discard). */
typedef struct sarbp_output_file_s sarbp_tempfile;

/* Creates an empty temporary for the output path (read-write descriptor
 * open). SARBP_ERR_IO naming path when the directory is missing or not
 * writable; SARBP_ERR_INVALID when path has no file name or is too long. */
sarbp_status sarbp_tempfile_create(const char *path, sarbp_tempfile **out);

/* The temporary's descriptor, owned by t: do not close it. */
int sarbp_tempfile_fd(const sarbp_tempfile *t);

/* The temporary's name in its folder ("" while an unnamed O_TMPFILE
 * temporary has none, that is until its commit), and the output it will
 * become. Owned by t. */
const char *sarbp_tempfile_name(const sarbp_tempfile *t);
const char *sarbp_tempfile_target(const sarbp_tempfile *t);

/* A name that opens this very file, for libraries that want a name rather
 * than a descriptor (HDF5): "/proc/self/fd/N" where the system has it, so
 * that even a directory entry swapped after creation is not followed;
 * otherwise the temporary's name. Owned by t. Open it without O_EXCL (the
 * file exists) and truncate freely: it is ours. HDF5 resolves the name
 * (realpath), which an unnamed file does not survive: an unnamed temporary
 * is given its "<base>.tmp-XXXXXX" name here (and its descriptor reopened
 * through it, same number, same offset), so from then on it is a named
 * temporary, removed by the handlers but not by SIGKILL. */
const char *sarbp_tempfile_open_name(sarbp_tempfile *t);

/* A write stream on a duplicate of the descriptor (for libpng, stdio). The
 * caller fcloses it, checking the result, before commit. NULL with errno
 * set on failure. */
FILE *sarbp_tempfile_fdopen(sarbp_tempfile *t);

/* Flushes the temporary to disk (fsync), names it if it is unnamed, checks
 * that its name still holds this file, renames it over its output and syncs
 * the directory. Frees t and its descriptor in every case; on failure the
 * temporary is removed and the output is as it was. */
sarbp_status sarbp_tempfile_commit(sarbp_tempfile *t);

/* All or nothing for n temporaries: every one is synced (and named) first,
 * and only when all are complete are they renamed, each earlier output kept
 * aside until all renames succeeded (see the top). When any step fails (a
 * sync; a rename: a directory at the output, another user's file in a
 * sticky folder, a full or read-only file system), every temporary is
 * removed and every output is as it was; in the unlikely case that an
 * earlier file cannot be put back, the message says where it is. Frees
 * every t[i]; t[i] may be NULL (skipped). */
sarbp_status sarbp_tempfile_commit_all(sarbp_tempfile *const *t, size_t n);

/* Closes and removes the temporary and frees t. NULL is a no-op. */
void sarbp_tempfile_delete(sarbp_tempfile *t);

/* ---- for tests only (not part of the library's interface) ----------------
 * flags: SARBP_TEMPFILE_TEST_* below, to take the fallbacks a file system
 * without O_TMPFILE, RENAME_EXCHANGE or hard links takes. hook (may be NULL)
 * is called before every step of a commit that changes a directory, with
 * the step's number from 0 in this commit: it may raise a signal there, and
 * a nonzero return (an errno) makes that step fail as if the system had
 * refused it (steps that remove or put back files ignore it). Not thread
 * safe: set it while no commit runs. */
#define SARBP_TEMPFILE_TEST_NAMED 0x1u       /* no O_TMPFILE: named temporaries */
#define SARBP_TEMPFILE_TEST_NO_EXCHANGE 0x2u /* no RENAME_EXCHANGE */
#define SARBP_TEMPFILE_TEST_NO_LINK 0x4u     /* no hard links: earlier files renamed aside */
typedef int (*sarbp_tempfile_test_fn)(int step, void *arg);
void sarbp_tempfile_test_set(unsigned flags, sarbp_tempfile_test_fn hook, void *arg);

#endif
