/* output_check.c - outputs checked before the work that makes them
 * (sarbp/output.h): the path from stat and access, the image formats'
 * needs from image_write.c's own checks run on an image without pixels.
 * Nothing here creates, opens or renames a file: the writers and the commit
 * (tempfile.c) do, and check again. */
#include "sarbp/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/image_check.h"
#include "sarbp/phd.h"

#define PATH_LIMIT 4080 /* what tempfile.c takes (PATH_MAX less its suffix) */

sarbp_status sarbp_output_check_path(const char *path)
{
    if (!path || !*path) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': not a file name", path);
    if (strlen(path) >= PATH_LIMIT)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));

    char *dir = strdup(path);
    if (!dir) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else dir[slash - path] = '\0';
    struct stat d, f;
    int err = stat(dir, &d) != 0 ? errno : !S_ISDIR(d.st_mode) ? ENOTDIR : 0;
    /* the rename needs write and search permission in the folder (and a
     * file system mounted read-write): as the process, not its real user */
    if (!err && faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) err = errno;
    free(dir);
    if (err) return sarbp_error(SARBP_ERR_IO, "cannot create '%s': %s", path, strerror(err));

    if (lstat(path, &f) != 0) {
        if (errno == ENOENT) return SARBP_OK;
        return sarbp_error(SARBP_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    }
    if (S_ISDIR(f.st_mode))
        return sarbp_error(SARBP_ERR_IO, "cannot create '%s': %s", path, strerror(EISDIR));
    /* in a sticky folder only the file's owner, the folder's owner or a
     * privileged process may rename over a name (root: CAP_FOWNER) */
    const uid_t me = geteuid();
    if ((d.st_mode & S_ISVTX) && me != 0 && f.st_uid != me && d.st_uid != me)
        return sarbp_error(SARBP_ERR_IO, "cannot create '%s': %s (it belongs to another user, "
                           "uid %ld, in a folder with the sticky bit)", path, strerror(EPERM),
                           (long)f.st_uid);
    return SARBP_OK;
}

sarbp_status sarbp_output_check_images(const char *const *paths, size_t n,
                                       const sarbp_output_image *o)
{
    if (!o || !o->grid) return sarbp_error(SARBP_ERR_INVALID, "no image grid to check outputs for");
    /* the image as the writers will see it, less its pixels: the grid and
     * the attributes the geolocated formats read */
    sarbp_image *img = calloc(1, sizeof *img);
    double *times = NULL;
    if (!img) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    img->grid = *o->grid;
    img->has_grid_coords = 1;
    sarbp_status st = SARBP_OK;
    if (o->collection) st = sarbp_image_set_collection(img, o->collection);
    if (!st && o->collect_start) st = sarbp_image_set_attr(img, "collect_start", o->collect_start);
    sarbp_image_context ctx = {o->meta, o->times, o->tiff_complex};
    if (!st && !ctx.times && o->prf > 0 && o->meta && o->meta->npulses) {
        times = malloc(o->meta->npulses * sizeof *times);
        if (!times) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; times && i < o->meta->npulses; i++) times[i] = (double)i / o->prf;
        ctx.times = times;
    }
    if (!st) st = image_check_outputs(paths, NULL, n, img, o->db_range, &ctx);
    free(times);
    free(img);
    return st;
}
