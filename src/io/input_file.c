/* input_file.c - an input opened without blocking and checked to be a
 * regular file (input_file.h). It reads nothing. */
#define _GNU_SOURCE
#include "io/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a named pipe";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "a special file";
}

static sarbp_status not_regular(const char *path, mode_t m)
{
    return sarbp_error(SARBP_ERR_IO, "'%s' is not a regular file (%s)", path, kind(m));
}

sarbp_status input_open(const char *path, int *fd)
{
    *fd = -1;
    /* O_NONBLOCK: a named pipe with no writer opens at once instead of
     * waiting for one */
    const int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) {
        const int e = errno;
        struct stat sb;
        /* a socket cannot be opened at all (ENXIO): say what it is */
        if (e == ENXIO && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
            return not_regular(path, sb.st_mode);
        return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(f, &sb) != 0) {
        const int e = errno;
        close(f);
        return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(f);
        return not_regular(path, sb.st_mode);
    }
    const int fl = fcntl(f, F_GETFL);
    if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        const int e = errno;
        close(f);
        return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    *fd = f;
    return SARBP_OK;
}

sarbp_status input_fopen(const char *path, FILE **fp)
{
    *fp = NULL;
    int fd;
    SARBP_TRY(input_open(path, &fd));
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        const int e = errno;
        close(fd);
        return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    *fp = f;
    return SARBP_OK;
}

sarbp_status input_check(const char *path)
{
    int fd;
    SARBP_TRY(input_open(path, &fd));
    close(fd);
    return SARBP_OK;
}
