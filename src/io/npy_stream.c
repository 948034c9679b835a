/* npy_stream.c - a .npy output written band by band while the image forms
 * (sarbp/image.h). A writer thread of its own takes the bands' rows from a
 * queue and writes each at its offset in the output's temporary with the
 * whole-image writer's own pixel writer (image_npy_write_rows), so that by
 * the end of the form most of the file is written. The temporary becomes
 * the output only in sarbp_image_write_all_ctx, with the other outputs,
 * after the whole image is checked. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_check.h"
#include "io/npy_stream.h"
#include "io/tempfile.h"

struct band {
    size_t row0, nrows;
    const sarbp_c32 *rows;
};

struct sarbp_npy_stream_s {
    sarbp_tempfile *t;       /* NULL once taken (or never made) */
    char *path;
    size_t nx, ny, head;     /* pixels; the header's bytes */
    unsigned char *given;    /* [ny]: 1 for rows handed to the writer */
    size_t nqueued;          /* rows queued, in all */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int started, closing, finished;
    struct band *q;          /* the queue: q[qhead..qn) waiting */
    size_t qn, qcap, qhead;
    sarbp_status st;         /* the first failure */
    char why[512];
};

static void fail(sarbp_npy_stream *s, int err)
{
    pthread_mutex_lock(&s->mu);
    if (!s->st) {
        s->st = SARBP_ERR_IO;
        snprintf(s->why, sizeof s->why, "cannot write '%s': %s", s->path, strerror(err));
    }
    pthread_mutex_unlock(&s->mu);
}

static void *writer_main(void *arg)
{
    sarbp_npy_stream *s = arg;
    const int fd = sarbp_tempfile_fd(s->t);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->qhead == s->qn && !s->closing) pthread_cond_wait(&s->cv, &s->mu);
        if (s->qhead == s->qn) break; /* closing, nothing left */
        const struct band b = s->q[s->qhead++];
        const int failed = s->st != SARBP_OK; /* after a failure the queue only drains */
        pthread_mutex_unlock(&s->mu);
        if (!failed && image_npy_write_rows(fd, s->head, s->nx, b.row0, b.nrows, b.rows)) fail(s, errno);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

sarbp_status sarbp_npy_stream_open(const char *path, size_t ny, size_t nx, sarbp_npy_stream **out)
{
    *out = NULL;
    if (!path || !*path) return sarbp_error(SARBP_ERR_INVALID, "no output path given");
    if (sarbp_image_format_from_name(path) != SARBP_IMG_NPY)
        return sarbp_error(SARBP_ERR_INVALID, "'%s' is not a .npy output", path);
    if (nx == 0 || ny == 0 || nx > SIZE_MAX / sizeof(sarbp_c32) / ny ||
        nx * ny * sizeof(sarbp_c32) > (size_t)INT64_MAX - IMAGE_NPY_HEADER_MAX)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': a %zu x %zu image", path, nx, ny);
    if (!image_host_little_endian()) /* the pixels would need swapping: the whole-image writer does */
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': rows are written as they form on "
                           "little-endian hosts only", path);
    sarbp_npy_stream *s = calloc(1, sizeof *s);
    if (!s) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    s->nx = nx;
    s->ny = ny;
    s->path = strdup(path);
    s->given = calloc(ny, 1);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (!s->path || !s->given) {
        sarbp_npy_stream_free(s);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    sarbp_status st = sarbp_tempfile_create(path, &s->t);
    if (!st) {
        unsigned char head[IMAGE_NPY_HEADER_MAX];
        s->head = image_npy_header(ny, nx, head);
        if (image_write_at(sarbp_tempfile_fd(s->t), head, s->head, 0))
            st = sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    if (!st) {
        s->started = pthread_create(&s->th, NULL, writer_main, s) == 0;
        if (!s->started) st = sarbp_error(SARBP_ERR_NOMEM, "cannot start a thread to write '%s'", path);
    }
    if (st) {
        sarbp_npy_stream_free(s);
        return st;
    }
    *out = s;
    return SARBP_OK;
}

sarbp_status sarbp_npy_stream_rows(sarbp_npy_stream *s, size_t row0, size_t nrows, const sarbp_c32 *rows)
{
    if (!s || !rows || row0 > s->ny || nrows > s->ny - row0)
        return sarbp_error(SARBP_ERR_INVALID, "rows %zu to %zu of a %zu-row .npy", row0, row0 + nrows,
                           s ? s->ny : 0);
    pthread_mutex_lock(&s->mu);
    if (s->st) { /* an earlier band's write failed (a full disk, a size limit): stop the form */
        const sarbp_status failed = s->st;
        char why[sizeof s->why];
        memcpy(why, s->why, sizeof why);
        pthread_mutex_unlock(&s->mu);
        return sarbp_error(failed, "%s", why);
    }
    sarbp_status st = s->finished ? SARBP_ERR_INVALID : SARBP_OK;
    for (size_t r = row0; !st && r < row0 + nrows; r++)
        if (s->given[r]) st = SARBP_ERR_INVALID;
    if (!st && s->qn == s->qcap) {
        const size_t cap = s->qcap ? 2 * s->qcap : 16;
        struct band *q = realloc(s->q, cap * sizeof *q);
        if (q) {
            s->q = q;
            s->qcap = cap;
        } else {
            st = SARBP_ERR_NOMEM;
        }
    }
    if (!st) {
        memset(s->given + row0, 1, nrows);
        s->nqueued += nrows;
        s->q[s->qn++] = (struct band){row0, nrows, rows};
        pthread_cond_signal(&s->cv);
    }
    const int finished = s->finished;
    pthread_mutex_unlock(&s->mu);
    if (st == SARBP_ERR_NOMEM) return sarbp_error(st, "out of memory");
    if (st)
        return sarbp_error(st, "'%s': rows %zu to %zu given %s", s->path, row0, row0 + nrows,
                           finished ? "after the end" : "twice");
    return SARBP_OK;
}

/* Stops the writer once its queue is empty. */
static void stop(sarbp_npy_stream *s)
{
    if (!s->started) return;
    pthread_mutex_lock(&s->mu);
    s->closing = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    s->started = 0;
}

sarbp_status sarbp_npy_stream_finish(sarbp_npy_stream *s)
{
    if (!s) return sarbp_error(SARBP_ERR_INVALID, "no .npy stream");
    stop(s);
    s->finished = 1;
    if (s->st) return sarbp_error(s->st, "%s", s->why);
    if (!s->t) return sarbp_error(SARBP_ERR_INVALID, "'%s': its file was already taken", s->path);
    if (s->nqueued != s->ny)
        return sarbp_error(SARBP_ERR_INTERNAL, "'%s': %zu of its %zu rows were formed", s->path,
                           s->nqueued, s->ny);
    return SARBP_OK;
}

void sarbp_npy_stream_free(sarbp_npy_stream *s)
{
    if (!s) return;
    stop(s);
    sarbp_tempfile_delete(s->t);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->q);
    free(s->given);
    free(s->path);
    free(s);
}

/* (io/npy_stream.h) */
sarbp_status npy_stream_take(sarbp_npy_stream *s, const char *path, const sarbp_grid *g,
                             sarbp_tempfile **out)
{
    *out = NULL;
    if (!s->finished || s->st || s->nqueued != s->ny || !s->t)
        return sarbp_error(SARBP_ERR_INVALID, "'%s' was not written whole: finish its stream first",
                           path);
    if (strcmp(s->path, path) || g->nx != s->nx || g->ny != s->ny)
        return sarbp_error(SARBP_ERR_INVALID, "the rows written for '%s' (%zu x %zu) are not this "
                           "image's ('%s', %zu x %zu)", s->path, s->nx, s->ny, path, g->nx, g->ny);
    *out = s->t;
    s->t = NULL;
    return SARBP_OK;
}
