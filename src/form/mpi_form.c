/* mpi_form.c - sarbp/mpi.h with MPI: one image formed in bands of rows
 * across the ranks, assembled on rank 0, or (a .npy) written by each rank
 * into its rows of the one file.
 *
 * Every rank reads the phase history itself: a band needs every pulse, and
 * reading is a small part of forming (measured: README, "Running on a
 * cluster"), while a broadcast from rank 0 would serialise the whole input
 * through one node's link. Rank 0 allocates the whole image as it starts
 * (threads touch its pages while the band forms) and receives each band
 * straight into its rows: its peak memory is the one-process run's (the
 * image plus its own band), the others hold their band only. Before any of
 * that, the ranks compare digests of their input, grid and options (agree):
 * a band from other data must never be assembled into the image.
 *
 * MPI's own errors keep the default handler (MPI_ERRORS_ARE_FATAL): a broken
 * transport ends the job through mpirun. The failures this file turns into
 * statuses are sarbp's: bad input, out of memory, no device, and the file
 * system's under MPI-IO (whose default handler for files, MPI_ERRORS_RETURN,
 * returns them). */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_check.h" /* the .npy header */
#include "io/tempfile.h"
#include "form/plan_internal.h" /* mpi_write_npy_one */
#include "sarbp/bench.h" /* sarbp_form_limits, in the digest */
#include "sarbp/mpi.h"
#include "sarbp/progress.h"


static int g_inited, g_rank, g_size = 1, g_local_rank, g_local_size = 1;

int sarbp_mpi_built(void) { return 1; }

sarbp_status sarbp_mpi_init(int *argc, char ***argv)
{
    if (g_inited || sarbp_mpi_launched() <= 0) return SARBP_OK;
    int provided = 0;
    /* FUNNELED: the back ends run threads, but only the main thread calls MPI */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "MPI_Init failed");
    g_inited = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &g_local_rank);
        MPI_Comm_size(node, &g_local_size);
        MPI_Comm_free(&node);
    }
    return SARBP_OK;
}

void sarbp_mpi_finalize(void)
{
    if (!g_inited) return;
    MPI_Finalize();
    g_inited = 0;
    g_rank = g_local_rank = 0;
    g_size = g_local_size = 1;
}

int sarbp_mpi_rank(void) { return g_rank; }
int sarbp_mpi_size(void) { return g_size; }
int sarbp_mpi_local_rank(void) { return g_local_rank; }
int sarbp_mpi_local_size(void) { return g_local_size; }

/* The exchange: MIN over {the rank if it failed (else size), 0 if it is
 * draining (else 1), 1 if it is draining (else 0), its vote, not its vote}:
 * the lowest failed rank, whether any rank has left, whether all have,
 * whether every rank voted yes, whether none did. */
static void exchange(int failed, int draining, int yes, int out[5])
{
    int in[5] = {failed ? g_rank : g_size, draining ? 0 : 1, draining ? 1 : 0, !!yes, !yes};
    MPI_Allreduce(in, out, 5, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
}

int sarbp_mpi_vote(int failed, int yes, int *all_yes, int *any_yes, int *peer)
{
    if (peer) *peer = 0;
    if (g_size == 1) {
        if (all_yes) *all_yes = !!yes;
        if (any_yes) *any_yes = !!yes;
        return !failed;
    }
    int out[5];
    exchange(failed, 0, yes, out);
    if (all_yes) *all_yes = out[3];
    if (any_yes) *any_yes = !out[4];
    if (out[0] == g_size && out[1] == 1) return 1;
    if (peer) *peer = !failed;
    return 0;
}

int sarbp_mpi_check(int failed, int *peer)
{
    return sarbp_mpi_vote(failed, 1, NULL, NULL, peer);
}

int sarbp_mpi_drain(int failed)
{
    if (g_size == 1) return failed ? 0 : -1;
    int out[5];
    do exchange(failed, 1, 1, out);
    while (out[2] != 1);
    return out[0] < g_size ? out[0] : -1;
}

sarbp_status sarbp_mpi_relay(int from, const char *text, int code, char **out, int *code_out)
{
    *out = NULL;
    if (!text) text = "";
    if (g_rank == 0 && from == 0) {
        *out = strdup(text);
        if (code_out) *code_out = code;
        return *out ? SARBP_OK : sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    if (g_rank == from) {
        int head[2] = {(int)strnlen(text, 1 << 20), code};
        MPI_Send(head, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Send(text, head[0], MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    } else if (g_rank == 0) {
        int head[2];
        MPI_Recv(head, 2, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char *buf = malloc((size_t)head[0] + 1);
        MPI_Recv(buf ? buf : (char[1]){0}, buf ? head[0] : 0, MPI_CHAR, from, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        buf[head[0]] = 0;
        *out = buf;
        if (code_out) *code_out = head[1];
    }
    return SARBP_OK;
}

/* Pixels move as bytes in pieces of at most 1 GiB (MPI counts are int). */
#define PIECE ((size_t)1 << 30)

static void send_rows(const sarbp_c32 *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t bytes = n * sizeof(sarbp_c32);
    for (size_t o = 0; o < bytes; o += PIECE)
        MPI_Send(b + o, (int)(bytes - o < PIECE ? bytes - o : PIECE), MPI_BYTE, 0, 3, MPI_COMM_WORLD);
}

static void recv_rows(sarbp_c32 *p, size_t n, int from)
{
    unsigned char *b = (unsigned char *)p;
    size_t bytes = n * sizeof(sarbp_c32);
    for (size_t o = 0; o < bytes; o += PIECE)
        MPI_Recv(b + o, (int)(bytes - o < PIECE ? bytes - o : PIECE), MPI_BYTE, from, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static sarbp_status peer_failure(int *peer_failed)
{
    *peer_failed = 1;
    return sarbp_error(SARBP_ERR_INVALID, "another rank failed");
}

int sarbp_mpi_compare(const uint64_t *d, int n, int *item, uint64_t *value)
{
    if (item) *item = -1;
    if (value) *value = 0;
    if (g_size == 1 || n <= 0) return -1;
    if (n > SARBP_MPI_COMPARE_MAX) n = SARBP_MPI_COMPARE_MAX;
    /* rank 0's values to all; each rank finds its first difference; the
     * lowest rank that has one tells the others what it was */
    uint64_t ref[SARBP_MPI_COMPARE_MAX];
    memcpy(ref, d, (size_t)n * sizeof *ref);
    MPI_Bcast(ref, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int first = -1;
    for (int i = 0; i < n && first < 0; i++)
        if (ref[i] != d[i]) first = i;
    int me = first >= 0 ? g_rank : g_size, who;
    MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (who == g_size) return -1;
    uint64_t what[2] = {(uint64_t)first, first >= 0 ? d[first] : 0};
    MPI_Bcast(what, 2, MPI_UINT64_T, who, MPI_COMM_WORLD);
    if (item) *item = (int)what[0];
    if (value) *value = what[1];
    return who;
}

/* What the ranks compare before forming (sarbp/mpi.h); the sizes as they
 * are, for the message. */
enum { D_PULSES, D_SAMPLES, D_META, D_DATA, D_GRID, D_OPTIONS, ND };

static uint64_t hash_f64(uint64_t h, double v) { return sarbp_mpi_hash(h, &v, sizeof v); }
static uint64_t hash_u64(uint64_t h, uint64_t v) { return sarbp_mpi_hash(h, &v, sizeof v); }
static uint64_t hash_str(uint64_t h, const char *s)
{
    return s ? sarbp_mpi_hash(hash_u64(h, 1), s, strlen(s)) : hash_u64(h, 0);
}

static uint64_t hash_grid(const sarbp_grid *g)
{
    uint64_t h = SARBP_MPI_HASH_SEED;
    const uint64_t n[] = {g->nx, g->ny, g->row0, g->ny_full};
    const double x[] = {g->dx, g->dy, g->xc, g->yc, g->zc};
    h = sarbp_mpi_hash(h, n, sizeof n);
    return sarbp_mpi_hash(h, x, sizeof x);
}

static uint64_t hash_window(uint64_t h, const sarbp_window *w)
{
    h = hash_u64(h, (uint64_t)w->kind);
    h = hash_u64(h, (uint64_t)(int64_t)w->nbar);
    return hash_f64(h, w->sll_db);
}

static uint64_t hash_options(const sarbp_backend *be, const sarbp_rc_params *rc,
                             const sarbp_bp_options *o)
{
    uint64_t h = hash_str(SARBP_MPI_HASH_SEED, be ? be->name : NULL);
    h = hash_window(h, &rc->range_window);
    h = hash_window(h, &rc->az_window);
    h = hash_u64(h, (uint64_t)(int64_t)rc->upsample);
    h = hash_u64(h, (uint64_t)rc->interp);
    if (!o) return hash_u64(h, 0);
    const sarbp_form_limits none = {0}, *lim = o->limits ? o->limits : &none;
    const int64_t ints[] = {o->precision, o->algorithm, o->tile_x, o->tile_y, o->ppt,
                            lim->stream, o->raw_fp16};
    h = sarbp_mpi_hash(h, ints, sizeof ints);
    h = hash_f64(h, o->max_error_db);
    h = hash_str(h, o->variant);
    h = hash_u64(h, o->pulse_block);
    return hash_u64(h, lim->band_rows);
}

/* The digests of this rank; *hashed: how many pulses' samples were hashed. */
static sarbp_status digest(sarbp_reader *rd, const sarbp_grid *g, const sarbp_backend *be,
                           const sarbp_rc_params *rc, const sarbp_bp_options *o, uint64_t d[ND],
                           size_t *hashed)
{
    const sarbp_phd *m = sarbp_reader_meta(rd);
    d[D_PULSES] = m->npulses;
    d[D_SAMPLES] = m->nsamples;
    d[D_META] = sarbp_mpi_hash_meta(m);
    d[D_GRID] = hash_grid(g);
    d[D_OPTIONS] = hash_options(be, rc, o);
    return sarbp_mpi_hash_samples(rd, &d[D_DATA], hashed);
}

/* Rank 0's message for rank r, whose item differs (its value v). */
static sarbp_status disagreement(int r, int item, uint64_t v, const uint64_t d[ND], size_t hashed)
{
    const char *const what = "the MPI ranks disagree: rank";
    const char *const hint = "every rank must read the same input with the same options";
    switch (item) {
    case D_PULSES:
    case D_SAMPLES:
        return sarbp_error(SARBP_ERR_MISMATCH, "%s %d read %llu pulses of %llu samples, rank 0 "
                           "%llu of %llu; %s", what, r,
                           (unsigned long long)(item == D_PULSES ? v : d[D_PULSES]),
                           (unsigned long long)(item == D_SAMPLES ? v : d[D_SAMPLES]),
                           (unsigned long long)d[D_PULSES], (unsigned long long)d[D_SAMPLES], hint);
    case D_META:
        return sarbp_error(SARBP_ERR_MISMATCH, "%s %d read different pulse metadata (positions, "
                           "ranges, frequencies or angles) than rank 0; %s", what, r, hint);
    case D_DATA:
        if (hashed == d[D_PULSES])
            return sarbp_error(SARBP_ERR_MISMATCH, "%s %d read different samples than rank 0 "
                               "(every sample hashed); %s", what, r, hint);
        return sarbp_error(SARBP_ERR_MISMATCH, "%s %d read different samples than rank 0 (in the "
                           "%zu of %llu pulses hashed); %s", what, r, hashed,
                           (unsigned long long)d[D_PULSES], hint);
    case D_GRID:
        return sarbp_error(SARBP_ERR_MISMATCH, "%s %d has a different grid than rank 0; %s", what,
                           r, hint);
    default:
        return sarbp_error(SARBP_ERR_MISMATCH, "%s %d has different form options than rank 0 "
                           "(back end, precision, algorithm, windows or interpolation); %s", what,
                           r, hint);
    }
}

/* The check before forming: 0 when every rank read and was asked the same;
 * otherwise the status this rank returns. */
static sarbp_status agree(sarbp_reader *rd, const sarbp_grid *g, const sarbp_backend *be,
                          const sarbp_rc_params *rc, const sarbp_bp_options *o, int *peer_failed)
{
    uint64_t d[ND];
    size_t hashed = 0;
    sarbp_status st = digest(rd, g, be, rc, o, d, &hashed);
    if (!sarbp_mpi_check(st != SARBP_OK, NULL)) return st ? st : peer_failure(peer_failed);
    int item;
    uint64_t v;
    const int r = sarbp_mpi_compare(d, ND, &item, &v);
    if (r < 0) return SARBP_OK;
    if (g_rank != 0) return peer_failure(peer_failed);
    return disagreement(r, item, v, d, hashed);
}

/* Rank 0 of several: stats of the whole image, formed by every rank by
 * now, since t0. */
static void whole_stats(sarbp_form_stats *stats, const sarbp_grid *g, sarbp_reader *rd, double t0)
{
    if (!stats || g_rank != 0 || g_size == 1) return;
    stats->total_s = sarbp_now_s() - t0;
    stats->compute_s = stats->total_s - stats->read_s;
    stats->pairs = sarbp_grid_pairs(g, sarbp_reader_meta(rd)->npulses);
}

/* How both forms begin: *pf is peer_failed, or dummy when that is NULL,
 * cleared; with several ranks, every rank checks that all were read and
 * asked the same (agree). */
static sarbp_status form_begin(sarbp_reader *rd, const sarbp_form_decision *d, int *peer_failed, int *dummy,
                               int **pf)
{
    *pf = peer_failed ? peer_failed : dummy;
    **pf = 0;
    return g_size > 1 ? agree(rd, &d->grid, d->backend, &d->rc, &d->bp, *pf) : SARBP_OK;
}

sarbp_status sarbp_form_mpi(sarbp_session *s, sarbp_reader *rd, const sarbp_form_plan *fp,
                            sarbp_progress *progress, sarbp_image **out, sarbp_form_stats *stats,
                            int *peer_failed)
{
    *out = NULL;
    (void)s;
    const sarbp_form_decision *d = sarbp_form_plan_decision(fp);
    const sarbp_grid *g = &d->grid;
    const double t0 = sarbp_now_s();
    int peer_dummy;
    sarbp_status st = form_begin(rd, d, peer_failed, &peer_dummy, &peer_failed);
    if (st) return st;

    /* rank 0 forms its rows, the first, in place in the whole image; the
     * others into a band of their own */
    sarbp_image *img = NULL;
    sarbp_c32 *band = NULL;
    const size_t nx = g->nx, nrows = d->rows.nrows;
    if (g_rank == 0) st = sarbp_image_alloc(g, &img);
    else if (nrows && !(band = calloc(nrows * nx, sizeof *band)))
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu pixels", nx, nrows);
    if (!st && nrows)
        st = sarbp_form_plan_execute((sarbp_form_plan *)fp, rd, NULL, progress,
                                     img ? img->data + d->rows.row0 * nx : band, 1, stats);
    if (!st && img) st = sarbp_form_plan_attrs(fp, img);
    if (!st && img) st = sarbp_form_inputs_attr(rd, img);
    if (g_size > 1 && !sarbp_mpi_check(st != SARBP_OK, NULL)) {
        free(band);
        sarbp_image_free(img);
        return st ? st : peer_failure(peer_failed);
    }
    if (st) {
        sarbp_image_free(img);
        return st;
    }
    if (g_rank == 0) {
        /* every other rank's rows, in rank order: they follow rank 0's */
        size_t next = d->rows.row0 + nrows;
        for (int r = 1; r < g_size; r++) {
            uint64_t nr = 0;
            MPI_Recv(&nr, 1, MPI_UINT64_T, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (nr) recv_rows(img->data + next * nx, (size_t)nr * nx, r);
            next += (size_t)nr;
        }
        *out = img;
        whole_stats(stats, g, rd, t0); /* its rows formed and the others' assembled */
    } else {
        const uint64_t nr = nrows;
        MPI_Send(&nr, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
        if (nrows) send_rows(band, nrows * nx);
    }
    free(band);
    return SARBP_OK;
}

/* ---- the ranks write their own rows (sarbp/mpi.h) --------------------------- */

sarbp_status sarbp_form_mpi_rows(sarbp_session *s, sarbp_reader *rd, const sarbp_form_plan *fp,
                                 sarbp_progress *progress, sarbp_c32 **rows,
                                 sarbp_form_stats *stats, int *peer_failed)
{
    *rows = NULL;
    (void)s;
    const sarbp_form_decision *d = sarbp_form_plan_decision(fp);
    const sarbp_grid *g = &d->grid;
    const double t0 = sarbp_now_s();
    int peer_dummy;
    sarbp_status st = form_begin(rd, d, peer_failed, &peer_dummy, &peer_failed);
    if (st) return st;
    const size_t nx = g->nx, nrows = d->rows.nrows;
    sarbp_c32 *band = NULL;
    if (stats && !nrows) memset(stats, 0, sizeof *stats);
    if (nrows && !(band = calloc(nrows * nx, sizeof *band)))
        st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu pixels", nx, nrows);
    if (!st && nrows)
        st = sarbp_form_plan_execute((sarbp_form_plan *)fp, rd, NULL, progress, band, 1, stats);
    if (!sarbp_mpi_check(st != SARBP_OK, NULL)) {
        free(band);
        return st ? st : peer_failure(peer_failed);
    }
    whole_stats(stats, g, rd, t0);
    *rows = band;
    return SARBP_OK;
}

/* This rank's failure of an MPI-IO call rc on the temporary name of output
 * path: MPI's reason. */
static sarbp_status io_failure(int rc, const char *path, const char *what, const char *name)
{
    char msg[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) == MPI_SUCCESS && len >= 0 && len <= MPI_MAX_ERROR_STRING)
        msg[len] = '\0';
    return sarbp_error(SARBP_ERR_IO, "cannot write '%s': rank %d cannot %s its temporary '%s': %s%s",
                       path, g_rank, what, name, msg,
                       strcmp(what, "open") ? ""
                                            : " (hint: write into a folder that every rank sees "
                                              "under the same name)");
}

/* n bytes from p at offset off of fh, in pieces MPI's int counts hold.
 * MPI_SUCCESS or MPI's error code (MPI_ERR_IO for a short write). */
static int write_bytes(MPI_File fh, MPI_Offset off, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t o = 0; o < n; o += PIECE) {
        const int m = (int)(n - o < PIECE ? n - o : PIECE);
        MPI_Status status;
        int got = 0;
        const int rc = MPI_File_write_at(fh, off + (MPI_Offset)o, b + o, m, MPI_BYTE, &status);
        if (rc != MPI_SUCCESS) return rc;
        if (MPI_Get_count(&status, MPI_BYTE, &got) != MPI_SUCCESS || got != m) return MPI_ERR_IO;
    }
    return MPI_SUCCESS;
}

/* This rank's rows (and on rank 0 the header head[nhead]) into the
 * temporary name of output path, synced. */
static sarbp_status write_rows(const char *path, const char *name, const unsigned char *head,
                               size_t nhead, size_t nx, size_t row0, size_t nrows,
                               const sarbp_c32 *rows)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) return io_failure(rc, path, "open", name);
    const size_t row_bytes = nx * sizeof(sarbp_c32);
    if (g_rank == 0) rc = write_bytes(fh, 0, head, nhead);
    if (rc == MPI_SUCCESS && nrows)
        rc = write_bytes(fh, (MPI_Offset)(nhead + row0 * row_bytes), rows, nrows * row_bytes);
    if (rc == MPI_SUCCESS) rc = MPI_File_sync(fh);
    const int rc_close = MPI_File_close(&fh);
    if (rc == MPI_SUCCESS && rc_close != MPI_SUCCESS)
        return io_failure(rc_close, path, "close", name);
    return rc == MPI_SUCCESS ? SARBP_OK : io_failure(rc, path, "write", name);
}

sarbp_status sarbp_mpi_write_npy(const char *const *paths, size_t n, const sarbp_grid *g,
                                 size_t row0, size_t nrows, const sarbp_c32 *rows,
                                 int *peer_failed)
{
    int peer_dummy;
    if (!peer_failed) peer_failed = &peer_dummy;
    *peer_failed = 0;
    if (!sarbp_mpi_writes_rows(paths, n))
        return sarbp_error(SARBP_ERR_INVALID, "the ranks write their own rows into .npy files "
                           "only (not '%s')", n && paths ? paths[0] : "(none)");
    if (!g_inited) return mpi_write_npy_one(paths, n, g, row0, nrows, rows);
    /* every rank is here (none has left for sarbp_mpi_drain) before the
     * collectives below */
    if (!sarbp_mpi_check(0, NULL)) return peer_failure(peer_failed);

    /* every pixel finite, counted over the ranks, before any file exists */
    const size_t nx = g->nx;
    uint64_t bad = 0, first = UINT64_MAX, all_bad = 0, all_first = 0;
    for (size_t i = 0; i < nrows * nx; i++)
        if (!isfinite(rows[i].re) || !isfinite(rows[i].im)) {
            if (!bad) first = (uint64_t)(row0 * nx + i);
            bad++;
        }
    MPI_Allreduce(&bad, &all_bad, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&first, &all_first, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (all_bad && g_rank != 0) return peer_failure(peer_failed);
    if (all_bad)
        return sarbp_error(SARBP_ERR_INVALID, "image has %llu non-finite pixel%s (NaN or Inf; the "
                           "first at ix %llu, iy %llu): no output written",
                           (unsigned long long)all_bad, all_bad == 1 ? "" : "s",
                           (unsigned long long)(all_first % nx), (unsigned long long)(all_first / nx));

    /* rank 0 makes the temporaries, named so that the others can open them */
    sarbp_status st = SARBP_OK;
    sarbp_tempfile **t = g_rank == 0 ? calloc(n, sizeof *t) : NULL;
    if (g_rank == 0 && !t) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; t && i < n && !st; i++) {
        st = sarbp_tempfile_create(paths[i], &t[i]);
        if (!st) sarbp_tempfile_open_name(t[i]);
        if (!st && !*sarbp_tempfile_name(t[i]))
            st = sarbp_error(SARBP_ERR_IO, "cannot write '%s': its temporary could not be given a "
                             "name for the other ranks", paths[i]);
    }
    int peer = 0;
    if (sarbp_mpi_check(st != SARBP_OK, &peer)) {
        /* each output in turn: its temporary's name to every rank, which
         * writes its rows there (after its first failure, only listens) */
        unsigned char head[IMAGE_NPY_HEADER_MAX];
        const size_t nhead = image_npy_header(g->ny, nx, head);
        for (size_t i = 0; i < n; i++) {
            char name[4096] = "";
            if (g_rank == 0) snprintf(name, sizeof name, "%s", sarbp_tempfile_name(t[i]));
            MPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
            if (!st) st = write_rows(paths[i], name, head, nhead, nx, row0, nrows, rows);
        }
        /* every rank's rows on disk, or none of the outputs */
        if (sarbp_mpi_check(st != SARBP_OK, &peer)) {
            if (g_rank == 0) {
                st = sarbp_tempfile_commit_all(t, n); /* frees them */
                n = 0;
            }
            if (!sarbp_mpi_check(st != SARBP_OK, &peer) && peer) st = peer_failure(peer_failed);
        } else if (peer) {
            st = peer_failure(peer_failed);
        }
    } else if (peer) {
        st = peer_failure(peer_failed);
    }
    for (size_t i = 0; t && i < n; i++) sarbp_tempfile_delete(t[i]);
    free(t);
    return st;
}
