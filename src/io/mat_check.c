/* mat_check.c - MATLAB v5 files checked against their own length (see
 * mat_check.h). Follows the "MAT-File Format" document (MathWorks, level 5):
 * a 128-byte header, then data elements, each an 8-byte tag (type, byte
 * count) or a 4-byte small-element tag, padded to 8 bytes. Reads tags and
 * array headers only, never the data, except that a compressed variable
 * (miCOMPRESSED, a zlib stream holding one miMATRIX) is inflated whole into
 * memory and walked there: the cost is one variable's inflated size at a
 * time, bounded as DEFLATE_MAX_RATIO says. */
#include "io/mat_check.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#include "io/safe_size.h"

enum {
    MI_INT8 = 1, MI_UINT8 = 2, MI_INT16 = 3, MI_UINT16 = 4, MI_INT32 = 5, MI_UINT32 = 6,
    MI_SINGLE = 7, MI_DOUBLE = 9, MI_INT64 = 12, MI_UINT64 = 13, MI_MATRIX = 14,
    MI_COMPRESSED = 15, MI_UTF8 = 16, MI_UTF16 = 17, MI_UTF32 = 18
};
enum { MX_CELL = 1, MX_STRUCT = 2, MX_OBJECT = 3, MX_CHAR = 4, MX_SPARSE = 5, MX_DOUBLE = 6,
       MX_UINT64 = 15 };
enum { MAX_DEPTH = 16, MAX_RANK = 32 };

/* A compressed variable may inflate to at most 1032 times its compressed
 * length (deflate's largest ratio is about 1032:1) plus slack for the zlib
 * header, and never past MAX_INFLATED (4 GiB): the walk holds one inflated
 * variable in memory at a time. */
#define DEFLATE_MAX_RATIO 1032ULL
#define INFLATE_SLACK 4096ULL
#define MAX_INFLATED (1ULL << 32)

/* The walker reads through read_at from one of two sources: the file (fp)
 * or, inside a compressed variable, its inflated bytes (mem). */
struct walk {
    const char *path;
    FILE *fp;
    const unsigned char *mem; /* inflated variable, or NULL: read the file */
    unsigned long long at;    /* mem: the compressed element's offset in the file */
    int swap;                 /* the file's byte order is not the host's */
    unsigned long long size;  /* length of the source: the file or the inflated bytes */
    char var[256];           /* the array being checked ("data.af.ph_correct"), for messages */
};

struct elem {
    uint32_t type;
    unsigned long long data, nbytes, end; /* data start, its length, next element */
};

static uint32_t u32(const struct walk *w, const unsigned char *b)
{
    uint32_t v;
    memcpy(&v, b, 4);
    if (w->swap) v = __builtin_bswap32(v);
    return v;
}

/* "the file" or "its inflated data", for messages */
static const char *source(const struct walk *w)
{
    return w->mem ? "its inflated data" : "the file";
}

static sarbp_status bad(const struct walk *w, const char *what)
{
    char hf[32];
    return sarbp_error(SARBP_ERR_FORMAT, "'%s': variable '%s' %s (%s holds %s)", w->path,
                       w->var[0] ? w->var : "?", what, source(w),
                       size_human((double)w->size, hf, sizeof hf));
}

static sarbp_status read_at(struct walk *w, unsigned long long off, void *buf, size_t n)
{
    if (off > w->size || n > w->size - off) {
        char msg[64];
        snprintf(msg, sizeof msg, "runs past the end of %s", source(w));
        return bad(w, msg);
    }
    if (w->mem) {
        memcpy(buf, w->mem + off, n);
        return SARBP_OK;
    }
    if (fseeko(w->fp, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, n, w->fp) != n)
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", w->path,
                           ferror(w->fp) ? strerror(errno) : "short read");
    return SARBP_OK;
}

static unsigned long long pad8(unsigned long long n)
{
    return (n + 7) & ~7ULL;
}

/* The element at off, which must end by lim (its parent's end). */
static sarbp_status next_elem(struct walk *w, unsigned long long off, unsigned long long lim,
                              int padded, struct elem *e)
{
    unsigned char tag[8];
    if (off > lim || lim - off < 8) return bad(w, "has an element that runs past its parent");
    SARBP_TRY(read_at(w, off, tag, 8));
    uint32_t t = u32(w, tag);
    if (t >> 16) { /* small element: type and byte count share the first word */
        e->type = t & 0xffff;
        e->nbytes = t >> 16;
        if (e->nbytes > 4) return bad(w, "has a malformed small element");
        e->data = off + 4;
        e->end = off + 8;
        return SARBP_OK;
    }
    e->type = t;
    e->nbytes = u32(w, tag + 4);
    e->data = off + 8;
    if (e->nbytes > lim - e->data) {
        if (!w->var[0] && w->mem)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': the compressed variable at byte %llu "
                               "declares %llu bytes but inflates to %llu: corrupt", w->path,
                               w->at, (unsigned long long)e->nbytes, w->size - e->data);
        if (!w->var[0])
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': the variable at byte %llu declares %llu "
                               "bytes but the file holds %llu after it: truncated or corrupt",
                               w->path, off, (unsigned long long)e->nbytes, w->size - e->data);
        char msg[160];
        snprintf(msg, sizeof msg, "declares an element of %llu bytes at byte %llu that runs "
                 "past %s", (unsigned long long)e->nbytes, off,
                 lim == w->size ? (w->mem ? "its inflated data" : "the end of the file")
                                : "its parent");
        return bad(w, msg);
    }
    e->end = e->data + (padded ? pad8(e->nbytes) : e->nbytes);
    if (e->end > lim) e->end = lim; /* the padding of the last element may be missing */
    return SARBP_OK;
}

static size_t mi_size(uint32_t type)
{
    switch (type) {
    case MI_INT8: case MI_UINT8: case MI_UTF8: return 1;
    case MI_INT16: case MI_UINT16: case MI_UTF16: return 2;
    case MI_INT32: case MI_UINT32: case MI_SINGLE: case MI_UTF32: return 4;
    case MI_DOUBLE: case MI_INT64: case MI_UINT64: return 8;
    default: return 0;
    }
}

static sarbp_status check_matrix(struct walk *w, const struct elem *m, int depth);

/* Numeric data: an element of a numeric type holding numel values. */
static sarbp_status check_numeric(struct walk *w, unsigned long long *off, unsigned long long end,
                                  size_t numel, const char *part)
{
    struct elem e;
    SARBP_TRY(next_elem(w, *off, end, 1, &e));
    size_t sz = mi_size(e.type), need;
    char msg[160];
    if (sz == 0) {
        snprintf(msg, sizeof msg, "stores its %s part as type %u, not a number", part,
                 (unsigned)e.type);
        return bad(w, msg);
    }
    if (!size_mul(numel, sz, &need) || need > e.nbytes) {
        char hb[32];
        snprintf(msg, sizeof msg, "declares %zu elements but its %s part holds %s", numel, part,
                 size_human((double)e.nbytes, hb, sizeof hb));
        return bad(w, msg);
    }
    *off = e.end;
    return SARBP_OK;
}

/* n child matrices, one after another from *off: struct fields (names[i %
 * nfields], each len bytes) or cells (names NULL). */
static sarbp_status check_children(struct walk *w, unsigned long long *off,
                                   unsigned long long end, size_t n, const char *names,
                                   size_t nfields, size_t len, int depth)
{
    size_t base = strlen(w->var);
    for (size_t i = 0; i < n; i++) {
        struct elem c;
        SARBP_TRY(next_elem(w, *off, end, 1, &c));
        if (names)
            snprintf(w->var + base, sizeof w->var - base, ".%.*s", (int)len,
                     names + (i % nfields) * len);
        else
            snprintf(w->var + base, sizeof w->var - base, "{%zu}", i + 1);
        if (c.type != MI_MATRIX) return bad(w, "is not an array");
        SARBP_TRY(check_matrix(w, &c, depth + 1));
        *off = c.end;
    }
    w->var[base] = '\0';
    return SARBP_OK;
}

static sarbp_status check_matrix(struct walk *w, const struct elem *m, int depth)
{
    if (depth > MAX_DEPTH) return bad(w, "nests structs or cells too deeply");
    if (m->nbytes == 0) return SARBP_OK; /* an empty array: [] */
    unsigned long long off = m->data, end = m->data + m->nbytes;
    struct elem e;
    unsigned char b[8];
    /* array flags: class in the low byte, complex flag 0x800 */
    SARBP_TRY(next_elem(w, off, end, 1, &e));
    if (e.type != MI_UINT32 || e.nbytes != 8) return bad(w, "has malformed array flags");
    SARBP_TRY(read_at(w, e.data, b, 8));
    uint32_t flags = u32(w, b), cls = flags & 0xff;
    int complex = (flags & 0x800) != 0;
    off = e.end;
    /* dimensions */
    SARBP_TRY(next_elem(w, off, end, 1, &e));
    if (e.type != MI_INT32 || e.nbytes % 4 || e.nbytes < 8 || e.nbytes > 4 * MAX_RANK)
        return bad(w, "has malformed dimensions");
    unsigned char db[4 * MAX_RANK];
    SARBP_TRY(read_at(w, e.data, db, (size_t)e.nbytes));
    size_t numel = 1;
    for (size_t r = 0; r < e.nbytes / 4; r++) {
        int32_t d = (int32_t)u32(w, db + 4 * r);
        if (d < 0) return bad(w, "has a negative dimension");
        if (!size_mul(numel, (size_t)d, &numel)) return bad(w, "declares too many elements");
    }
    off = e.end;
    /* name (empty for fields and cells) */
    SARBP_TRY(next_elem(w, off, end, 1, &e));
    if (e.type != MI_INT8) return bad(w, "has a malformed name");
    if (depth == 0) {
        size_t n = e.nbytes < sizeof w->var ? (size_t)e.nbytes : sizeof w->var - 1;
        SARBP_TRY(read_at(w, e.data, w->var, n));
        w->var[n] = '\0';
    }
    off = e.end;
    if (cls >= MX_DOUBLE && cls <= MX_UINT64) {
        SARBP_TRY(check_numeric(w, &off, end, numel, "real"));
        if (complex) SARBP_TRY(check_numeric(w, &off, end, numel, "imaginary"));
        return SARBP_OK;
    }
    if (cls == MX_CELL) return check_children(w, &off, end, numel, NULL, 0, 0, depth);
    if (cls == MX_STRUCT || cls == MX_OBJECT) {
        if (cls == MX_OBJECT) { /* class name */
            SARBP_TRY(next_elem(w, off, end, 1, &e));
            off = e.end;
        }
        SARBP_TRY(next_elem(w, off, end, 1, &e)); /* field-name length */
        if (e.type != MI_INT32 || e.nbytes != 4) return bad(w, "has a malformed field-name length");
        SARBP_TRY(read_at(w, e.data, b, 4));
        uint32_t len = u32(w, b);
        off = e.end;
        SARBP_TRY(next_elem(w, off, end, 1, &e)); /* field names, len bytes each */
        if (e.type != MI_INT8 || len == 0 || len > 4096 || e.nbytes % len)
            return bad(w, "has a malformed field-name table");
        size_t nfields = (size_t)(e.nbytes / len), nchild;
        if (!size_mul(numel, nfields, &nchild)) return bad(w, "declares too many fields");
        /* the names, for messages; inside the parent, so at most the file's length */
        char *names = malloc((size_t)e.nbytes);
        if (!names) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        sarbp_status st = read_at(w, e.data, names, (size_t)e.nbytes);
        off = e.end;
        if (st == SARBP_OK) st = check_children(w, &off, end, nchild, names, nfields, len, depth);
        free(names);
        return st;
    }
    return SARBP_OK; /* char, sparse, ...: inside their parent, which is all sarbp needs */
}

/* The name of the variable whose first n inflated bytes are b, when they
 * hold it (a best effort, for messages about a stream that does not
 * inflate); "" otherwise. */
static void partial_name(const struct walk *w, const unsigned char *b, size_t n, char *name,
                         size_t cap)
{
    name[0] = '\0';
    size_t off = 8; /* the miMATRIX tag */
    for (int i = 0; i < 3; i++) { /* array flags, dimensions, name */
        if (n < off + 8) return;
        uint32_t t = u32(w, b + off), len, data;
        if (t >> 16) {
            len = t >> 16;
            data = 4;
            if (len > 4) return;
        } else {
            len = u32(w, b + off + 4);
            data = 8;
        }
        if (i == 2) {
            if ((t & 0xffff) != MI_INT8 || len >= cap || n - off - data < len) return;
            memcpy(name, b + off + data, len);
            name[len] = '\0';
            return;
        }
        if (t >> 16) off += 8;
        else if (len > n) return;
        else off += 8 + (size_t)pad8(len);
    }
}

/* A compressed element's zlib stream refused: name the variable if its
 * start inflated. */
static sarbp_status bad_stream(const struct walk *w, const unsigned char *b, size_t n,
                               const char *what)
{
    char name[sizeof w->var];
    partial_name(w, b, n, name, sizeof name);
    if (name[0])
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': variable '%s' is compressed and its zlib "
                           "stream %s", w->path, name, what);
    return sarbp_error(SARBP_ERR_FORMAT, "'%s': the compressed variable at byte %llu: its zlib "
                       "stream %s", w->path, w->at, what);
}

/* Inflates the compressed element e (whose data is in the file) into *out
 * (malloc'd, caller frees), *len bytes, refusing a corrupt or truncated
 * stream and one that inflates past cap bytes (DEFLATE_MAX_RATIO). */
static sarbp_status inflate_elem(struct walk *w, const struct elem *e, unsigned char **out,
                                 size_t *len)
{
    *out = NULL;
    *len = 0;
    w->at = e->data - 8; /* for bad_stream's messages */
    unsigned long long cap = e->nbytes * DEFLATE_MAX_RATIO + INFLATE_SLACK;
    if (cap > MAX_INFLATED) cap = MAX_INFLATED;
    if (cap > SIZE_MAX) cap = SIZE_MAX;
    if (fseeko(w->fp, (off_t)e->data, SEEK_SET) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", w->path, strerror(errno));
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    unsigned char in[1 << 14];
    size_t have = 0, room = e->nbytes < (1u << 20) ? 4 * (size_t)e->nbytes + 256 : 1u << 22;
    if (room > cap) room = (size_t)cap;
    unsigned char *buf = malloc(room);
    unsigned long long left = e->nbytes;
    sarbp_status st = SARBP_OK;
    int zr = Z_OK;
    if (!buf) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    while (st == SARBP_OK && zr != Z_STREAM_END) {
        if (z.avail_in == 0) {
            if (left == 0) {
                st = bad_stream(w, buf, have, "is truncated");
                break;
            }
            size_t n = left < sizeof in ? (size_t)left : sizeof in;
            if (fread(in, 1, n, w->fp) != n) {
                st = sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", w->path,
                                 ferror(w->fp) ? strerror(errno) : "short read");
                break;
            }
            left -= n;
            z.next_in = in;
            z.avail_in = (uInt)n;
        }
        if (have == room) {
            if (room == cap) {
                char hc[32];
                char what[96];
                snprintf(what, sizeof what, "inflates past %s (%s)",
                         size_human((double)cap, hc, sizeof hc),
                         cap == MAX_INFLATED ? "sarbp's limit"
                                             : "more than deflate can expand its length");
                st = bad_stream(w, buf, have, what);
                break;
            }
            size_t grow = room > cap - room ? (size_t)cap : 2 * room;
            unsigned char *nb = realloc(buf, grow);
            if (!nb) {
                st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
                break;
            }
            buf = nb;
            room = grow;
        }
        size_t chunk = room - have < UINT_MAX ? room - have : UINT_MAX;
        z.next_out = buf + have;
        z.avail_out = (uInt)chunk;
        zr = inflate(&z, Z_NO_FLUSH);
        have += chunk - z.avail_out;
        if (zr == Z_MEM_ERROR) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        else if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR)
            st = bad_stream(w, buf, have, "is corrupt");
        /* Z_BUF_ERROR: no progress possible with this input or output; the
         * loop supplies more of whichever ran out */
    }
    inflateEnd(&z);
    if (st != SARBP_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *len = have;
    return SARBP_OK;
}

static sarbp_status walk_elements(struct walk *w);

/* The compressed element e: inflated, and its insides walked like the file's. */
static sarbp_status check_compressed(struct walk *w, const struct elem *e)
{
    unsigned char *buf;
    size_t len;
    SARBP_TRY(inflate_elem(w, e, &buf, &len));
    struct walk in = *w;
    in.mem = buf;
    in.at = e->data - 8;
    in.size = len;
    in.var[0] = '\0';
    sarbp_status st = walk_elements(&in);
    free(buf);
    return st;
}

/* Every element from the source's start (byte 128 in a file, 0 in an
 * inflated variable) to its end. */
static sarbp_status walk_elements(struct walk *w)
{
    sarbp_status st = SARBP_OK;
    for (unsigned long long off = w->mem ? 0 : 128; off < w->size && st == SARBP_OK;) {
        struct elem e;
        w->var[0] = '\0';
        st = next_elem(w, off, w->size, 0, &e);
        if (st) break;
        if (e.type == MI_MATRIX) {
            st = check_matrix(w, &e, 0);
            off = e.data + pad8(e.nbytes); /* uncompressed variables are padded */
        } else if (e.type == MI_COMPRESSED) {
            if (w->mem)
                return sarbp_error(SARBP_ERR_FORMAT, "'%s': the compressed variable at byte "
                                   "%llu holds compressed data again", w->path, w->at);
            st = check_compressed(w, &e);
            off = e.end;
        } else {
            off = e.end; /* other types: skipped */
        }
    }
    return st;
}

sarbp_status mat_check_layout(const char *path)
{
    struct walk w = {.path = path};
    w.fp = fopen(path, "rb");
    if (!w.fp) return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    sarbp_status st = SARBP_OK;
    unsigned char head[128];
    if (fseeko(w.fp, 0, SEEK_END) != 0 || (w.size = (unsigned long long)ftello(w.fp)) < 128 ||
        fseeko(w.fp, 0, SEEK_SET) != 0 || fread(head, 1, 128, w.fp) != 128) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': MATLAB file shorter than its 128-byte header",
                         path);
        goto done;
    }
    const uint16_t one = 1;
    int host_le = *(const unsigned char *)&one == 1;
    if (head[126] == 'I' && head[127] == 'M') w.swap = !host_le;
    else if (head[126] == 'M' && head[127] == 'I') w.swap = host_le;
    else {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': MATLAB header has no byte-order mark", path);
        goto done;
    }
    st = walk_elements(&w);
done:
    fclose(w.fp);
    return st;
}
