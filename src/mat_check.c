/* mat_check.c - MATLAB v5 files checked against their own length (see
 * mat_check.h). Follows the "MAT-File Format" document (MathWorks, level 5):
 * a 128-byte header, then data elements, each an 8-byte tag (type, byte
 * count) or a 4-byte small-element tag, padded to 8 bytes. Reads tags and
 * array headers only, never the data. */
#include "mat_check.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "safe_size.h"

enum {
    MI_INT8 = 1, MI_UINT8 = 2, MI_INT16 = 3, MI_UINT16 = 4, MI_INT32 = 5, MI_UINT32 = 6,
    MI_SINGLE = 7, MI_DOUBLE = 9, MI_INT64 = 12, MI_UINT64 = 13, MI_MATRIX = 14,
    MI_COMPRESSED = 15, MI_UTF8 = 16, MI_UTF16 = 17, MI_UTF32 = 18
};
enum { MX_CELL = 1, MX_STRUCT = 2, MX_OBJECT = 3, MX_CHAR = 4, MX_SPARSE = 5, MX_DOUBLE = 6,
       MX_UINT64 = 15 };
enum { MAX_DEPTH = 16, MAX_RANK = 32 };

struct walk {
    const char *path;
    FILE *fp;
    int swap;                /* the file's byte order is not the host's */
    unsigned long long size; /* file length */
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

static sarbp_status bad(const struct walk *w, const char *what)
{
    char hf[32];
    return sarbp_error(SARBP_ERR_FORMAT, "'%s': variable '%s' %s (the file holds %s)", w->path,
                       w->var[0] ? w->var : "?", what, size_human((double)w->size, hf, sizeof hf));
}

static sarbp_status read_at(struct walk *w, unsigned long long off, void *buf, size_t n)
{
    if (off > w->size || n > w->size - off) return bad(w, "runs past the end of the file");
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
        if (!w->var[0])
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': the variable at byte %llu declares %llu "
                               "bytes but the file holds %llu after it: truncated or corrupt",
                               w->path, off, (unsigned long long)e->nbytes, w->size - e->data);
        char msg[160];
        snprintf(msg, sizeof msg, "declares an element of %llu bytes at byte %llu that runs "
                 "past %s", (unsigned long long)e->nbytes, off,
                 lim == w->size ? "the end of the file" : "its parent");
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
    for (unsigned long long off = 128; off < w.size && st == SARBP_OK;) {
        struct elem e;
        w.var[0] = '\0';
        st = next_elem(&w, off, w.size, 0, &e);
        if (st) break;
        if (e.type == MI_MATRIX) {
            st = check_matrix(&w, &e, 0);
            off = e.data + pad8(e.nbytes); /* uncompressed variables are padded */
        } else {
            off = e.end; /* miCOMPRESSED: inflated by matio; other types: skipped */
        }
    }
done:
    fclose(w.fp);
    return st;
}
