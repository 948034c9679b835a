/* sarbp/output.h - checking outputs before the work that makes them, and
 * writing a program's own files the way sarbp writes its outputs.
 *
 * A run that forms for an hour and then cannot write its image has lost the
 * hour, and an output that is refused only after others were renamed into
 * place used to cost the user's earlier files. So the commands check every
 * output before they read any pulse: the path (sarbp_output_check_path) and,
 * for images, what each format needs of this grid (its size limits, the
 * scene reference of geolocated formats, the pulse times of a SICD). The
 * checks read metadata only (stat, the grid, the inputs' header); a few
 * microseconds an output. The writers check all of it again when they
 * write: a check passed here is not a promise that the file system has room
 * or that nothing changes meanwhile, and the commit (every output or none,
 * the earlier files kept until all are in place) covers what is left.
 *
 * Errors are values: SARBP_ERR_INVALID or SARBP_ERR_UNSUPPORTED for what the
 * options ask (a format's limit, a missing scene reference), SARBP_ERR_IO for
 * the file system, with a message naming the output as the caller gave it
 * (sarbp_error_detail). The checks are thread safe: they read only. */
#ifndef SARBP_OUTPUT_H
#define SARBP_OUTPUT_H

#include <stddef.h>

#include "sarbp/geo.h"
#include "sarbp/grid.h"
#include "sarbp/image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One output path, which a writer will fill through a temporary in the same
 * folder and a rename over the path: it must be a file name (not "", "." or
 * a name ending in "/"), not a directory, its folder must exist and be
 * writable by this process, and in a folder with the sticky bit (such as
 * /tmp) an existing file of that name must be this user's (or the folder's)
 * for the rename to replace it. SARBP_ERR_INVALID for a bad name,
 * SARBP_ERR_IO otherwise ("cannot create 'PATH': REASON"). */
sarbp_status sarbp_output_check_path(const char *path);

/* What the image outputs will be written from, known before forming. */
typedef struct {
    const sarbp_grid *grid;             /* the image's grid (required) */
    const sarbp_collection *collection; /* what the inputs say (scene reference, names,
                                         * collection start), or NULL: nothing */
    const struct sarbp_phd_s *meta;     /* metadata of the pulses to be formed (scene
                                         * frame), or NULL; a SICD needs it */
    const double *times;                /* [meta->npulses] s after the collection start,
                                         * or NULL: none (or from prf) */
    double prf;                         /* > 0 and times NULL: pulse i at i / prf s */
    const char *collect_start;          /* ISO 8601 UTC, replacing the collection's; NULL:
                                         * the collection's */
    double db_range;                    /* of the 8-bit dB outputs (.png, .tif, .kmz) */
    int tiff_complex;                   /* .tif outputs hold complex float32 pixels */
} sarbp_output_image;

/* Every image output paths[0..n): each path as sarbp_output_check_path, its
 * format from its name, and what that format needs of this image (the
 * checks sarbp_image_write_all_ctx makes before any file exists, less the
 * pixels): PNG and KMZ sides of at most 1,000,000 pixels (libpng's limit),
 * a GeoTIFF under 4 GB, a scene reference for .nitf/.ntf/.sicd, .tif and
 * .kmz, pulse times and a collection start for a SICD. Reads no pulse. */
sarbp_status sarbp_output_check_images(const char *const *paths, size_t n,
                                       const sarbp_output_image *img);

/* ---- writing a file of one's own ----------------------------------------------
 * The way every writer of sarbp puts its file in place, for a program's own
 * outputs (sarbp batch's logs and summaries): a temporary in the output's
 * folder, filled through its descriptor and renamed over the output only
 * when complete and on disk, so that the output is the whole new file or
 * untouched:
 *
 *     sarbp_output_file *f;
 *     if (sarbp_output_file_open(path, &f)) return ...;   (sarbp_error_detail)
 *     ... write(sarbp_output_file_fd(f), ...) ...
 *     if (failed) { sarbp_output_file_discard(f); return ...; }
 *     return sarbp_output_file_commit(f);                  (frees f)
 *
 * The temporary is exclusive and never follows a link: an unnamed file of
 * the folder (O_TMPFILE) where the file system has them, which vanishes
 * with the process however it ends; elsewhere "<path>.tmp-XXXXXX", six
 * random characters, created O_EXCL | O_NOFOLLOW, so that a file or
 * symbolic link planted in the folder is never opened, followed or
 * truncated. It is removed when the program ends on SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGXCPU, SIGALRM, SIGUSR1 or SIGUSR2
 * (the library's handler, installed for those still at their default
 * action) and at exit. Thread safety: different files from different
 * threads. */
typedef struct sarbp_output_file_s sarbp_output_file;

/* Creates an empty temporary for the output path, open read-write at offset
 * 0. SARBP_ERR_INVALID when path has no file name or is too long;
 * SARBP_ERR_IO naming path when its folder is missing or not writable. */
sarbp_status sarbp_output_file_open(const char *path, sarbp_output_file **out);

/* The temporary's descriptor, owned by f: do not close it. Close-on-exec; a
 * child that is to write the file gets it by dup2 (a copy without the
 * flag). Read it back through this descriptor, never by a name. */
int sarbp_output_file_fd(const sarbp_output_file *f);

/* Syncs the temporary to disk, checks that it is still this file, renames
 * it over the output (an earlier file there, or a link, is replaced, never
 * followed, and kept until the rename succeeded) and syncs the folder; the
 * signals above are blocked in the calling thread from the rename to the
 * end and held back in the others. Frees f in every case; on failure the
 * temporary is removed and the output is as it was (SARBP_ERR_IO naming
 * the output). Close the descriptors the caller made of it (dup, fdopen)
 * before, checking the result. NULL: SARBP_OK. */
sarbp_status sarbp_output_file_commit(sarbp_output_file *f);

/* Closes and removes the temporary and frees f. NULL is a no-op. */
void sarbp_output_file_discard(sarbp_output_file *f);

/* For a program that must act on a terminating signal before it dies (sarbp
 * batch passes it on to its children and waits for them): the library's
 * handler for the signals above calls fn(sig), in this process only (never
 * in a forked child), and then removes the temporaries and takes the
 * signal's default action. fn must use async-signal-safe calls only.
 * Installs the handler now, for the signals still at their default action;
 * NULL removes the hook. Call it while no other thread uses this API. */
typedef void (*sarbp_output_signal_fn)(int sig);
void sarbp_output_on_signal(sarbp_output_signal_fn fn);

#ifdef __cplusplus
}
#endif
#endif
