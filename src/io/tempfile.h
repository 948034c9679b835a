/* tempfile.h - temporary files that become outputs (internal to the library).
 *
 * Every writer (images, phase histories) writes to a temporary beside its
 * output and renames it over the output only when the file is complete and
 * on disk, so an output is either the whole new file or untouched:
 *
 *     sarbp_tempfile *t;
 *     SARBP_TRY(sarbp_tempfile_create(path, &t));
 *     st = write_to(sarbp_tempfile_fd(t));      (or a stream, or a name)
 *     if (st) { sarbp_tempfile_delete(t); return st; }
 *     return sarbp_tempfile_commit(t);          (frees t, success or not)
 *
 * The temporary is "<dir>/<base>.tmp-XXXXXX" in the output's own directory
 * (so the rename never crosses file systems), XXXXXX six characters from
 * getrandom(). It is created with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0666
 * less the umask: a file or symbolic link already at that name, planted or
 * not, is never opened, followed or truncated; creation tries a new name.
 *
 * Every live temporary of the process is on one list. A handler for SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT and SIGPIPE (installed on the first create, only
 * for signals whose disposition is still the default) unlinks them with
 * async-signal-safe calls and re-raises the signal with the default action;
 * an atexit handler removes any left at exit. A forked child never removes
 * its parent's temporaries. SIGKILL and power loss can still leave one: the
 * name says what it is.
 *
 * Thread safety: create, commit and delete may be called from several
 * threads on different temporaries. Errors name the output path as the
 * caller gave it (sarbp_error). */
#ifndef SARBP_TEMPFILE_H
#define SARBP_TEMPFILE_H

#include <stddef.h>
#include <stdio.h>

#include "sarbp/status.h"

typedef struct sarbp_tempfile_s sarbp_tempfile;

/* Creates an empty temporary for the output path (read-write descriptor
 * open). SARBP_ERR_IO naming path when the directory is missing or not
 * writable; SARBP_ERR_INVALID when path has no file name or is too long. */
sarbp_status sarbp_tempfile_create(const char *path, sarbp_tempfile **out);

/* The temporary's descriptor, owned by t: do not close it. */
int sarbp_tempfile_fd(const sarbp_tempfile *t);

/* The temporary's name, and the output it will become. Owned by t. */
const char *sarbp_tempfile_name(const sarbp_tempfile *t);
const char *sarbp_tempfile_target(const sarbp_tempfile *t);

/* A name that opens this very file, for libraries that want a name rather
 * than a descriptor (HDF5): "/proc/self/fd/N" where the system has it, so
 * that even a directory entry swapped after creation is not followed;
 * otherwise the temporary's name. Owned by t. Open it without O_EXCL (the
 * file exists) and truncate freely: it is ours. */
const char *sarbp_tempfile_open_name(const sarbp_tempfile *t);

/* A write stream on a duplicate of the descriptor (for libpng, stdio). The
 * caller fcloses it, checking the result, before commit. NULL with errno
 * set on failure. */
FILE *sarbp_tempfile_fdopen(sarbp_tempfile *t);

/* Flushes the temporary to disk (fsync), checks that its name still holds
 * this file, renames it over its output and syncs the directory. Frees t
 * and its descriptor in every case; on failure the temporary is removed and
 * the output is as it was. */
sarbp_status sarbp_tempfile_commit(sarbp_tempfile *t);

/* All or nothing for n temporaries: every one is synced first, and only
 * when all are complete are they renamed. When a sync fails every
 * temporary is removed and no output changes. A rename that fails after
 * earlier ones succeeded (rare: the files are complete and each rename
 * stays within its directory) removes the remaining temporaries and the
 * outputs this call already renamed, so no new output is left. Frees every
 * t[i]; t[i] may be NULL (skipped). */
sarbp_status sarbp_tempfile_commit_all(sarbp_tempfile *const *t, size_t n);

/* Closes and removes the temporary and frees t. NULL is a no-op. */
void sarbp_tempfile_delete(sarbp_tempfile *t);

#endif
