/* _sarbp.c - the CPython extension behind the sarbp package (src/python/sarbp).
 *
 * A thin layer over the library's public API, on the stable ABI (Limited
 * API 3.11: one build serves every CPython >= 3.11). It has no numpy C API:
 * arrays come in through the buffer protocol (C-contiguous, checked for
 * format and shape here; the Python layer converts what it can first) and
 * go out as Array objects, which own or borrow the memory and show it to
 * numpy through __array_interface__ (version 3), so numpy wraps it without
 * a copy and keeps the owner alive as the array's base.
 *
 * Types: Array (memory shown to numpy), Phd (a sarbp_phd with its
 * samples), Img (a sarbp_image, the metadata of the pulses that formed it
 * and their times, for the geolocated writers), Session (a sarbp_session).
 * Functions: read_phd, phd_from_arrays, form, image_from_array, image_read,
 * compare, metrics. The GIL is released while the library reads, forms and
 * writes; errors become sarbp.Error with the library's message
 * (sarbp_error_detail, thread-local, so read in the thread that failed).
 *
 * form() follows src/cli/cmd_form.c step by step (its defaults, its checks,
 * its request and plan, its provenance attributes), so that an image formed
 * here equals the CLI's for the same options bit for bit. What it does not
 * do: MPI (one process), --phase-csv, --autofocus estimate (its interface
 * is changing), terrain, the -v notes. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sarbp/sarbp.h"
#include "sarbp/date.h"
#include "sarbp/output.h"

#define MAX_INPUTS 64

static PyObject *Error;          /* sarbp.Error */
static PyObject *ArrayType, *PhdType, *ImgType, *SessionType;

/* ---- errors ----------------------------------------------------------- */

/* Raises sarbp.Error(message) with .status set to st (an int). */
static PyObject *raise_status(sarbp_status st, const char *msg)
{
    PyObject *exc = PyObject_CallFunction(Error, "s", msg);
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong((long)st);
    PyObject *name = PyUnicode_FromString(sarbp_strerror(st));
    if (code && name) {
        PyObject_SetAttrString(exc, "status", code);
        PyObject_SetAttrString(exc, "reason", name);
    }
    Py_XDECREF(code);
    Py_XDECREF(name);
    PyErr_SetObject(Error, exc);
    Py_DECREF(exc);
    return NULL;
}

/* The library's last error of this thread as sarbp.Error. */
static PyObject *raise_sarbp(sarbp_status st)
{
    return raise_status(st, sarbp_error_detail());
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static PyObject *raise_invalid(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return raise_status(SARBP_ERR_INVALID, msg);
}

static void free_self(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp); /* heap types: each instance holds its type */
}

/* ---- Array: memory shown to numpy ------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *owner;  /* keeps data alive (borrowed memory), or NULL */
    void *mem;        /* owned memory (free()), or NULL */
    void *data;
    char typestr[4];  /* "<c8", "<f8" */
    int ndim;
    Py_ssize_t shape[2];
    int readonly;
} ArrayObject;

/* A new Array over data; owner (may be NULL) is kept alive, mem (may be
 * NULL) is freed with the Array. On failure mem is freed. */
static PyObject *array_new(PyObject *owner, void *mem, void *data, const char *typestr, int ndim,
                           Py_ssize_t n0, Py_ssize_t n1, int readonly)
{
    ArrayObject *a = PyObject_New(ArrayObject, (PyTypeObject *)ArrayType);
    if (!a) {
        free(mem);
        return NULL;
    }
    Py_XINCREF(owner);
    a->owner = owner;
    a->mem = mem;
    a->data = data;
    snprintf(a->typestr, sizeof a->typestr, "%s", typestr);
    a->ndim = ndim;
    a->shape[0] = n0;
    a->shape[1] = n1;
    a->readonly = readonly;
    return (PyObject *)a;
}

static void array_dealloc(PyObject *self)
{
    ArrayObject *a = (ArrayObject *)self;
    Py_XDECREF(a->owner);
    free(a->mem);
    free_self(self);
}

static PyObject *array_interface(PyObject *self, void *closure)
{
    (void)closure;
    const ArrayObject *a = (const ArrayObject *)self;
    PyObject *shape = a->ndim == 1 ? Py_BuildValue("(n)", a->shape[0])
                                   : Py_BuildValue("(nn)", a->shape[0], a->shape[1]);
    if (!shape) return NULL;
    PyObject *data = Py_BuildValue("(NO)", PyLong_FromVoidPtr(a->data),
                                   a->readonly ? Py_True : Py_False);
    if (!data) {
        Py_DECREF(shape);
        return NULL;
    }
    return Py_BuildValue("{s:i,s:s,s:N,s:N}", "version", 3, "typestr", a->typestr, "data", data,
                         "shape", shape);
}

static PyGetSetDef array_getset[] = {
    {"__array_interface__", array_interface, NULL, "numpy's array interface (version 3)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot array_slots[] = {
    {Py_tp_dealloc, (void *)array_dealloc},
    {Py_tp_getset, array_getset},
    {Py_tp_doc, (void *)"Memory of the library shown to numpy (np.asarray makes a view)."},
    {0, NULL},
};
static PyType_Spec array_spec = {"sarbp._sarbp.Array", sizeof(ArrayObject), 0,
                                 Py_TPFLAGS_DEFAULT, array_slots};

/* ---- buffers in ------------------------------------------------------- */

/* The element format of a buffer without its byte-order prefix on this
 * (little-endian) machine: "Zf", "d". NULL for a big-endian format. */
static const char *plain_format(const char *f)
{
    if (!f) return "B";
    if (*f == '>' || *f == '!') return NULL;
    if (*f == '@' || *f == '=' || *f == '<') f++;
    return f;
}

/* Takes o's buffer as C-contiguous ndim-D of format fmt ("Zf" complex64,
 * "d" float64) and shape (n0, n1) (-1: any). Raises sarbp.Error naming
 * what on any mismatch; the caller releases b when 0 is returned. */
static int get_buffer(PyObject *o, const char *what, const char *fmt, int ndim, Py_ssize_t n0,
                      Py_ssize_t n1, Py_buffer *b)
{
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        raise_invalid("%s: wants a C-contiguous array (a numpy array converted with "
                      "numpy.ascontiguousarray)", what);
        return -1;
    }
    const char *f = plain_format(b->format);
    const char *want = !strcmp(fmt, "Zf") ? "complex64" : "float64";
    if (!f || strcmp(f, fmt) || b->itemsize != 8) { /* both are 8 bytes */
        raise_invalid("%s: wants %s elements, not buffer format '%s'", what, want,
                      b->format ? b->format : "B");
    } else if (b->ndim != ndim) {
        raise_invalid("%s: wants %d dimension%s, not %d", what, ndim, ndim > 1 ? "s" : "", b->ndim);
    } else if ((n0 >= 0 && b->shape[0] != n0) || (ndim > 1 && n1 >= 0 && b->shape[1] != n1)) {
        if (ndim == 1)
            raise_invalid("%s: wants shape (%zd,), not (%zd,)", what, n0, b->shape[0]);
        else
            raise_invalid("%s: wants shape (%zd, %zd), not (%zd, %zd)", what, n0, n1, b->shape[0],
                          b->shape[1]);
    } else {
        return 0;
    }
    PyBuffer_Release(b);
    return -1;
}

/* ---- Phd: a phase history in memory ----------------------------------- */

typedef struct {
    PyObject_HEAD
    sarbp_phd *phd;   /* with data; owned */
    char *origin;     /* the files it was read from, joined by ';', or NULL */
} PhdObject;

static void phd_dealloc(PyObject *self)
{
    PhdObject *p = (PhdObject *)self;
    sarbp_phd_free(p->phd);
    free(p->origin);
    free_self(self);
}

static PyObject *phd_wrap(sarbp_phd *phd, char *origin)
{
    PhdObject *p = PyObject_New(PhdObject, (PyTypeObject *)PhdType);
    if (!p) {
        sarbp_phd_free(phd);
        free(origin);
        return NULL;
    }
    p->phd = phd;
    p->origin = origin;
    return (PyObject *)p;
}

static PyObject *phd_get_npulses(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(((PhdObject *)self)->phd->npulses);
}

static PyObject *phd_get_nsamples(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(((PhdObject *)self)->phd->nsamples);
}

static PyObject *phd_get_domain(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(((PhdObject *)self)->phd->domain == SARBP_DOMAIN_CHIRP ? "chirp"
                                                                                     : "freq");
}

static PyObject *phd_get_origin(PyObject *self, void *c)
{
    (void)c;
    const PhdObject *p = (const PhdObject *)self;
    if (!p->origin) Py_RETURN_NONE;
    return PyUnicode_FromString(p->origin);
}

/* field(name): a read-only view of one of the phd's arrays, or None when
 * the phase history has none. */
static PyObject *phd_field(PyObject *self, PyObject *arg)
{
    const sarbp_phd *p = ((PhdObject *)self)->phd;
    const char *name = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (!name) return NULL;
    const Py_ssize_t P = (Py_ssize_t)p->npulses;
    if (!strcmp(name, "samples"))
        return array_new(self, NULL, p->data, "<c8", 2, P, (Py_ssize_t)p->nsamples, 1);
    if (!strcmp(name, "pos")) return array_new(self, NULL, p->pos, "<f8", 2, P, 3, 1);
    double *v = !strcmp(name, "r0") ? p->r0 : !strcmp(name, "f0") ? p->f0
                : !strcmp(name, "df") ? p->df : !strcmp(name, "th") ? p->th
                : !strcmp(name, "phi") ? p->phi : !strcmp(name, "r_correct") ? p->r_correct
                : !strcmp(name, "ph_correct") ? p->ph_correct : NULL;
    if (!v) Py_RETURN_NONE;
    return array_new(self, NULL, v, "<f8", 1, P, 0, 1);
}

static PyObject *phd_chirp(PyObject *self, PyObject *unused)
{
    (void)unused;
    const sarbp_phd *p = ((PhdObject *)self)->phd;
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d}", "fs", p->fs, "chirp_rate", p->chirp_rate,
                         "pulse_len", p->pulse_len, "fc", p->fc, "t0", p->t0);
}

static PyObject *phd_save(PyObject *self, PyObject *args)
{
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    sarbp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sarbp_phd_write_h5(path, ((PhdObject *)self)->phd);
    Py_END_ALLOW_THREADS
    if (st) return raise_sarbp(st);
    Py_RETURN_NONE;
}

static PyObject *phd_summary(PyObject *self, PyObject *unused)
{
    (void)unused;
    sarbp_phd_summary s;
    sarbp_status st = sarbp_phd_summarize(((PhdObject *)self)->phd, &s);
    if (st) return raise_sarbp(st);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "fmin", s.fmin, "fmax",
                         s.fmax, "bandwidth", s.bandwidth, "fcenter", s.fcenter, "aperture_deg",
                         s.aperture_deg, "range_res", s.range_res, "az_res", s.az_res,
                         "extent_range", s.extent_range, "r0_mean", s.r0_mean, "elevation_deg",
                         s.elevation_deg);
}

static PyGetSetDef phd_getset[] = {
    {"npulses", phd_get_npulses, NULL, NULL, NULL},
    {"nsamples", phd_get_nsamples, NULL, NULL, NULL},
    {"domain", phd_get_domain, NULL, NULL, NULL},
    {"origin", phd_get_origin, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef phd_methods[] = {
    {"field", phd_field, METH_O, NULL},
    {"chirp", phd_chirp, METH_NOARGS, NULL},
    {"save", phd_save, METH_VARARGS, NULL},
    {"summary", phd_summary, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot phd_slots[] = {
    {Py_tp_dealloc, (void *)phd_dealloc},
    {Py_tp_getset, phd_getset},
    {Py_tp_methods, phd_methods},
    {0, NULL},
};
static PyType_Spec phd_spec = {"sarbp._sarbp.Phd", sizeof(PhdObject), 0, Py_TPFLAGS_DEFAULT,
                               phd_slots};

/* A metadata-only copy of p (no samples). */
static sarbp_status meta_copy(const sarbp_phd *p, sarbp_phd **out)
{
    sarbp_phd m = *p;
    m.data = NULL;
    return sarbp_phd_slice(&m, 0, m.npulses, out);
}

/* Reads every pulse of the inputs into memory. */
static sarbp_status read_all(const char *const *paths, size_t n, const sarbp_reader_options *ro,
                             sarbp_phd **out, char **origin)
{
    *out = NULL;
    *origin = NULL;
    sarbp_reader *rd = NULL;
    sarbp_phd *p = NULL;
    sarbp_status st = sarbp_reader_open_opts(paths, n, ro, &rd);
    if (!st) st = meta_copy(sarbp_reader_meta(rd), &p);
    if (!st) {
        const size_t P = p->npulses, K = p->nsamples;
        if (!(p->data = malloc(P * K * sizeof *p->data)))
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu pulses of %zu samples", P, K);
    }
    if (!st) st = sarbp_reader_read(rd, 0, p->npulses, p->data);
    if (!st) {
        size_t len = 1;
        for (size_t i = 0; i < sarbp_reader_nfiles(rd); i++)
            len += strlen(sarbp_reader_file(rd, i)) + 1;
        if (!(*origin = calloc(len, 1))) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; !st && i < sarbp_reader_nfiles(rd); i++) {
            if (i) strcat(*origin, ";");
            strcat(*origin, sarbp_reader_file(rd, i));
        }
    }
    sarbp_reader_free(rd);
    if (st) {
        sarbp_phd_free(p);
        free(*origin);
        *origin = NULL;
        return st;
    }
    *out = p;
    return SARBP_OK;
}

/* A path or a list of paths as C strings: *keep (a new reference the caller
 * releases after the last use of paths) holds them, so that they stay valid
 * while the GIL is released even if the caller's list changes meanwhile. */
static int path_list(PyObject *src, const char **paths, size_t *n, PyObject **keep)
{
    *n = 0;
    *keep = NULL;
    if (PyUnicode_Check(src)) {
        if (!(paths[0] = PyUnicode_AsUTF8AndSize(src, NULL))) return -1;
        Py_INCREF(src);
        *keep = src;
        *n = 1;
        return 0;
    }
    if (!PyList_Check(src) && !PyTuple_Check(src)) {
        raise_invalid("inputs: want a path or a list of paths");
        return -1;
    }
    PyObject *t = PySequence_Tuple(src);
    if (!t) return -1;
    const Py_ssize_t k = PyTuple_Size(t);
    if (k == 0 || k > MAX_INPUTS) {
        Py_DECREF(t);
        if (k == 0) raise_invalid("inputs: the list of paths is empty");
        else raise_invalid("inputs: too many (at most %d)", MAX_INPUTS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *it = PyTuple_GetItem(t, i);
        if (!it || !PyUnicode_Check(it)) {
            Py_DECREF(t);
            raise_invalid("inputs: item %zd is not a path", i);
            return -1;
        }
        if (!(paths[i] = PyUnicode_AsUTF8AndSize(it, NULL))) {
            Py_DECREF(t);
            return -1;
        }
    }
    *keep = t;
    *n = (size_t)k;
    return 0;
}

/* read_phd(paths, channel=None, polarisation=None) -> Phd */
static PyObject *mod_read_phd(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"paths", "channel", "polarisation", NULL};
    PyObject *list;
    const char *channel = NULL, *pol = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zz", kwlist, &list, &channel, &pol)) return NULL;
    const char *paths[MAX_INPUTS];
    size_t n;
    PyObject *keep;
    if (path_list(list, paths, &n, &keep)) return NULL;
    const sarbp_reader_options ro = {.channel = channel, .polarisation = pol};
    sarbp_phd *p = NULL;
    char *origin = NULL;
    sarbp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = read_all(paths, n, &ro, &p, &origin);
    Py_END_ALLOW_THREADS
    Py_DECREF(keep);
    if (st) return raise_sarbp(st);
    return phd_wrap(p, origin);
}

/* phd_from_arrays(samples, pos, r0, f0, df, th, phi, r_correct, ph_correct)
 * -> Phd: samples complex64 [P][K], pos float64 [P][3], the rest float64
 * [P] (None for the optional ones); copied, then validated (metadata and
 * every sample finite). */
static PyObject *mod_phd_from_arrays(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *o[9];
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7], &o[8]))
        return NULL;
    static const char *const names[] = {"samples", "pos", "r0", "f0", "df", "th", "phi",
                                        "r_correct", "ph_correct"};
    Py_buffer b[9];
    int got[9] = {0};
    PyObject *res = NULL;
    sarbp_phd *p = NULL;
    if (get_buffer(o[0], "samples", "Zf", 2, -1, -1, &b[0])) return NULL;
    got[0] = 1;
    const Py_ssize_t P = b[0].shape[0], K = b[0].shape[1];
    if (P == 0 || K == 0) {
        raise_invalid("samples: wants at least one pulse and one sample, not shape (%zd, %zd)", P,
                      K);
        goto done;
    }
    for (int i = 1; i < 9; i++) {
        if (o[i] == Py_None) {
            if (i < 5) {
                raise_invalid("%s: required", names[i]);
                goto done;
            }
            continue;
        }
        if (get_buffer(o[i], names[i], "d", i == 1 ? 2 : 1, P, 3, &b[i])) goto done;
        got[i] = 1;
    }
    sarbp_status st = sarbp_phd_alloc(SARBP_DOMAIN_FREQ, (size_t)P, (size_t)K, 1, &p);
    double **opt[] = {&p->th, &p->phi, &p->r_correct, &p->ph_correct};
    for (int i = 5; !st && i < 9; i++)
        if (got[i]) st = sarbp_phd_alloc_optional(p, opt[i - 5]);
    if (st) {
        raise_sarbp(st);
        goto done;
    }
    memcpy(p->data, b[0].buf, (size_t)b[0].len);
    memcpy(p->pos, b[1].buf, (size_t)b[1].len);
    memcpy(p->r0, b[2].buf, (size_t)b[2].len);
    memcpy(p->f0, b[3].buf, (size_t)b[3].len);
    memcpy(p->df, b[4].buf, (size_t)b[4].len);
    for (int i = 5; i < 9; i++)
        if (got[i]) memcpy(*opt[i - 5], b[i].buf, (size_t)b[i].len);
    Py_BEGIN_ALLOW_THREADS
    st = sarbp_phd_validate(p);
    Py_END_ALLOW_THREADS
    if (st) {
        raise_sarbp(st);
        goto done;
    }
    res = phd_wrap(p, NULL);
    p = NULL;
done:
    sarbp_phd_free(p);
    for (int i = 0; i < 9; i++)
        if (got[i]) PyBuffer_Release(&b[i]);
    return res;
}

/* ---- Img: a formed or read image -------------------------------------- */

typedef struct {
    PyObject_HEAD
    sarbp_image *img;   /* owned */
    sarbp_phd *meta;    /* the pulses that formed it (no samples), owned, or NULL */
    double *times;      /* [meta->npulses] s after collect_start, owned, or NULL */
    double *heights;    /* terrain: the heights img->grid.height borrows, owned, or NULL */
} ImgObject;

static void img_dealloc(PyObject *self)
{
    ImgObject *o = (ImgObject *)self;
    sarbp_image_free(o->img);
    sarbp_phd_free(o->meta);
    free(o->times);
    free(o->heights);
    free_self(self);
}

static PyObject *img_wrap(sarbp_image *img, sarbp_phd *meta, double *times, double *heights)
{
    ImgObject *o = PyObject_New(ImgObject, (PyTypeObject *)ImgType);
    if (!o) {
        sarbp_image_free(img);
        sarbp_phd_free(meta);
        free(times);
        free(heights);
        return NULL;
    }
    o->img = img;
    o->meta = meta;
    o->times = times;
    o->heights = heights;
    return (PyObject *)o;
}

static PyObject *img_get_grid(PyObject *self, void *c)
{
    (void)c;
    const sarbp_grid *g = &((ImgObject *)self)->img->grid;
    return Py_BuildValue("{s:n,s:n,s:d,s:d,s:d,s:d,s:d}", "nx", (Py_ssize_t)g->nx, "ny",
                         (Py_ssize_t)g->ny, "dx", g->dx, "dy", g->dy, "xc", g->xc, "yc", g->yc,
                         "zc", g->zc);
}

static PyObject *img_get_has_grid(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((ImgObject *)self)->img->has_grid_coords);
}

/* data(): the pixels [ny][nx] complex64, writable, borrowed from the image */
static PyObject *img_data(PyObject *self, PyObject *unused)
{
    (void)unused;
    const sarbp_image *img = ((ImgObject *)self)->img;
    return array_new(self, NULL, img->data, "<c8", 2, (Py_ssize_t)img->grid.ny,
                     (Py_ssize_t)img->grid.nx, 0);
}

/* coords(): (x [nx], y [ny]) pixel-centre coordinates, as the .h5 holds them */
static PyObject *img_coords(PyObject *self, PyObject *unused)
{
    (void)unused;
    const sarbp_grid *g = &((ImgObject *)self)->img->grid;
    double *x = malloc((g->nx ? g->nx : 1) * sizeof *x), *y = malloc((g->ny ? g->ny : 1) * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return PyErr_NoMemory();
    }
    for (size_t i = 0; i < g->nx; i++) x[i] = sarbp_grid_x(g, i);
    for (size_t i = 0; i < g->ny; i++) y[i] = sarbp_grid_y(g, i);
    PyObject *ax = array_new(NULL, x, x, "<f8", 1, (Py_ssize_t)g->nx, 0, 1);
    PyObject *ay = array_new(NULL, y, y, "<f8", 1, (Py_ssize_t)g->ny, 0, 1);
    if (!ax || !ay) {
        Py_XDECREF(ax);
        Py_XDECREF(ay);
        return NULL;
    }
    return Py_BuildValue("(NN)", ax, ay);
}

static PyObject *img_attrs(PyObject *self, PyObject *unused)
{
    (void)unused;
    const sarbp_image *img = ((ImgObject *)self)->img;
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < img->nattrs; i++) {
        PyObject *v = PyUnicode_DecodeUTF8(img->attrs[i].value, (Py_ssize_t)strlen(img->attrs[i].value),
                                           "replace");
        if (!v || PyDict_SetItemString(d, img->attrs[i].key, v)) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *img_af_phase(PyObject *self, PyObject *unused)
{
    (void)unused;
    const sarbp_image *img = ((ImgObject *)self)->img;
    if (!img->af_phase) Py_RETURN_NONE;
    return array_new(self, NULL, img->af_phase, "<f8", 1, (Py_ssize_t)img->af_npulses, 0, 1);
}

static PyObject *img_af_range(PyObject *self, PyObject *unused)
{
    (void)unused;
    const sarbp_image *img = ((ImgObject *)self)->img;
    if (!img->af_range) Py_RETURN_NONE;
    return array_new(self, NULL, img->af_range, "<f8", 1, (Py_ssize_t)img->af_npulses, 0, 1);
}

/* save(paths, db_range, tiff_complex): every path, all or nothing, through
 * the library's writers (format from each name). */
static PyObject *img_save(PyObject *self, PyObject *args)
{
    PyObject *list;
    double db_range;
    int tiff_complex;
    if (!PyArg_ParseTuple(args, "Odp", &list, &db_range, &tiff_complex)) return NULL;
    const char *paths[MAX_INPUTS];
    size_t n;
    PyObject *keep;
    if (path_list(list, paths, &n, &keep)) return NULL;
    const ImgObject *o = (const ImgObject *)self;
    sarbp_image_display display;
    const sarbp_image_context ctx = {.meta = o->meta, .times = o->times,
                                     .tiff_complex = tiff_complex, .display = &display};
    sarbp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sarbp_image_write_all_ctx(paths, n, o->img, db_range, &ctx);
    Py_END_ALLOW_THREADS
    Py_DECREF(keep);
    if (st) return raise_sarbp(st);
    Py_RETURN_NONE;
}

static PyGetSetDef img_getset[] = {
    {"grid", img_get_grid, NULL, NULL, NULL},
    {"has_grid_coords", img_get_has_grid, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef img_methods[] = {
    {"data", img_data, METH_NOARGS, NULL},
    {"coords", img_coords, METH_NOARGS, NULL},
    {"attrs", img_attrs, METH_NOARGS, NULL},
    {"af_phase", img_af_phase, METH_NOARGS, NULL},
    {"af_range", img_af_range, METH_NOARGS, NULL},
    {"save", img_save, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot img_slots[] = {
    {Py_tp_dealloc, (void *)img_dealloc},
    {Py_tp_getset, img_getset},
    {Py_tp_methods, img_methods},
    {0, NULL},
};
static PyType_Spec img_spec = {"sarbp._sarbp.Img", sizeof(ImgObject), 0, Py_TPFLAGS_DEFAULT,
                               img_slots};

/* image_from_array(pixels, dx, dy, xc, yc, zc, has_grid) -> Img: a copy of
 * complex64 [ny][nx] pixels on the grid given (has_grid 0: unit spacing
 * and no coordinates, as a .npy reads). */
static PyObject *mod_image_from_array(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *o;
    sarbp_grid g = {0};
    int has_grid;
    if (!PyArg_ParseTuple(args, "Odddddp", &o, &g.dx, &g.dy, &g.xc, &g.yc, &g.zc, &has_grid))
        return NULL;
    Py_buffer b;
    if (get_buffer(o, "image", "Zf", 2, -1, -1, &b)) return NULL;
    g.ny = (size_t)b.shape[0];
    g.nx = (size_t)b.shape[1];
    sarbp_image *img = NULL;
    sarbp_status st = sarbp_grid_validate(&g);
    if (!st) st = sarbp_image_alloc(&g, &img);
    if (!st) {
        memcpy(img->data, b.buf, (size_t)b.len);
        img->has_grid_coords = has_grid;
    }
    PyBuffer_Release(&b);
    if (st) return raise_sarbp(st);
    return img_wrap(img, NULL, NULL, NULL);
}

static PyObject *mod_image_read(PyObject *m, PyObject *args)
{
    (void)m;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    sarbp_image *img = NULL;
    sarbp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sarbp_image_read(path, &img);
    Py_END_ALLOW_THREADS
    if (st) return raise_sarbp(st);
    return img_wrap(img, NULL, NULL, NULL);
}

/* ---- Session ---------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    sarbp_session *s;  /* NULL once closed */
    int busy;          /* forms and starts using it now (counted under the GIL) */
} SessionObject;

static PyObject *session_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"threads", "device_budget", "host_budget", NULL};
    int threads = 0;
    unsigned long long dev = 0, host = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|iKK", kwlist, &threads, &dev, &host)) return NULL;
    if (threads < 0 || threads > 4096)
        return raise_invalid("threads: wants 0 (the default) to 4096, not %d", threads);
    sarbp_session_options so;
    sarbp_session_options_default(&so);
    so.threads = threads;
    so.device_budget = (size_t)dev;
    so.host_budget = (size_t)host;
    sarbp_session *s = NULL;
    sarbp_status st = sarbp_session_create(&so, &s);
    if (st) return raise_sarbp(st);
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    SessionObject *o = (SessionObject *)alloc(tp, 0);
    if (!o) {
        sarbp_session_free(s);
        return NULL;
    }
    o->s = s;
    o->busy = 0;
    return (PyObject *)o;
}

static void session_free_now(SessionObject *o)
{
    sarbp_session *s = o->s;
    o->s = NULL;
    Py_BEGIN_ALLOW_THREADS /* joins the session's threads */
    sarbp_session_free(s);
    Py_END_ALLOW_THREADS
}

static void session_dealloc(PyObject *self)
{
    SessionObject *o = (SessionObject *)self;
    if (o->s) session_free_now(o);
    free_self(self);
}

static PyObject *session_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    SessionObject *o = (SessionObject *)self;
    if (o->busy) return raise_invalid("Session.close: %d form(s) are using the session", o->busy);
    if (o->s) session_free_now(o);
    Py_RETURN_NONE;
}

static PyObject *session_get_closed(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((SessionObject *)self)->s == NULL);
}

static PyObject *session_memory(PyObject *self, PyObject *args)
{
    int device = -1;
    if (!PyArg_ParseTuple(args, "|i", &device)) return NULL;
    SessionObject *o = (SessionObject *)self;
    if (!o->s) return raise_invalid("Session.memory: the session is closed");
    sarbp_session_memory mm;
    sarbp_session_memory_of(o->s, device, &mm);
    return Py_BuildValue("{s:K,s:K,s:K,s:K}", "budget", (unsigned long long)mm.budget, "used",
                         (unsigned long long)mm.used, "peak", (unsigned long long)mm.peak, "kept",
                         (unsigned long long)mm.kept);
}

/* start(devices): the devices' contexts now, side by side, warmed by a
 * small form (sarbp_form_warm) */
static PyObject *session_start(PyObject *self, PyObject *arg)
{
    SessionObject *o = (SessionObject *)self;
    if (!o->s) return raise_invalid("Session.start: the session is closed");
    if (!PyList_Check(arg)) return raise_invalid("Session.start: wants a list of device numbers");
    const Py_ssize_t n = PyList_Size(arg);
    if (n > SARBP_MAX_DEVICES) return raise_invalid("devices: at most %d, not %zd", SARBP_MAX_DEVICES, n);
    int dev[SARBP_MAX_DEVICES];
    for (Py_ssize_t k = 0; k < n; k++) {
        const long v = PyLong_AsLong(PyList_GetItem(arg, k));
        if (v == -1 && PyErr_Occurred()) return NULL;
        if (v < 0 || v >= SARBP_MAX_DEVICES) return raise_invalid("device: wants 0 to %d, not %ld", SARBP_MAX_DEVICES - 1, v);
        dev[k] = (int)v;
    }
    sarbp_status st;
    o->busy++;
    Py_BEGIN_ALLOW_THREADS
    st = sarbp_form_warm(o->s, dev, (int)n);
    Py_END_ALLOW_THREADS
    o->busy--;
    if (st) return raise_sarbp(st);
    Py_RETURN_NONE;
}

static PyGetSetDef session_getset[] = {
    {"closed", session_get_closed, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef session_methods[] = {
    {"close", session_close, METH_NOARGS, NULL},
    {"memory", session_memory, METH_VARARGS, NULL},
    {"start", session_start, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot session_slots[] = {
    {Py_tp_new, (void *)session_new},
    {Py_tp_dealloc, (void *)session_dealloc},
    {Py_tp_getset, session_getset},
    {Py_tp_methods, session_methods},
    {0, NULL},
};
static PyType_Spec session_spec = {"sarbp._sarbp.Session", sizeof(SessionObject), 0,
                                   Py_TPFLAGS_DEFAULT, session_slots};

/* ---- form ------------------------------------------------------------- */

/* What form() was asked, parsed (strings borrowed from the arguments). */
struct form_args {
    const char *paths[MAX_INPUTS];
    size_t npaths;
    const sarbp_phd *phd;         /* in memory instead of paths */
    const char *phd_origin;
    sarbp_reader_options ro;
    int have_pulses, have_az;
    size_t pulses[2];
    double az[2];
    size_t nx, ny;
    double spacing[2], center[3];
    const char *backend, *algorithm;
    int autofocus;                /* 0 none, 1 file, 2 estimate, 3 pga */
    int af_range;                 /* estimate: a range per pulse too */
    const char *heights_spec;     /* terrain: FILE.npy or FILE.h5[:/DSET] (--heights), or */
    const double *heights_arr;    /* [heights_ny][heights_nx] on the grid */
    size_t heights_ny, heights_nx;
    double max_error_db;
    sarbp_rc_params rc;
    int have_interp, have_upsample;
    sarbp_bp_options bo;
    sarbp_session *session;       /* NULL: one for this form */
    size_t gpu_mem;
    int have_scene_ref;
    sarbp_scene_ref scene_ref;
    double prf;
    const char *collect_start;
    const char *call;             /* the command_line attribute */
};

struct form_result {
    sarbp_image *img;
    sarbp_phd *meta;              /* the pulses formed, no samples */
    double *times;
    double *heights;              /* terrain: the image's grid borrows them; the Img owns them */
};

/* The Gotcha corrections applied to a phase history in memory, as the
 * reader applies them (phd_io.c: r0 += r_correct, samples times
 * exp(j ph_correct) in double): the same samples as --autofocus file. */
static void apply_file_corrections(sarbp_phd *p)
{
    const size_t K = p->nsamples;
    if (p->r_correct)
        for (size_t i = 0; i < p->npulses; i++) p->r0[i] += p->r_correct[i];
    if (p->ph_correct)
        for (size_t j = 0; j < p->npulses; j++) {
            const double c = cos(p->ph_correct[j]), s = sin(p->ph_correct[j]);
            for (size_t i = 0; i < K; i++) {
                sarbp_c32 *v = &p->data[j * K + i];
                const double re = v->re * c - v->im * s, im = v->re * s + v->im * c;
                v->re = (float)re;
                v->im = (float)im;
            }
        }
    free(p->r_correct);
    free(p->ph_correct);
    p->r_correct = p->ph_correct = NULL;
}

/* The provenance attributes cmd_form.c's record_provenance sets. */
static sarbp_status provenance(sarbp_image *img, const struct form_args *a, const char *selection, int has_af)
{
    /* algorithm, FFBP's factorization and device: sarbp_form_plan_attrs */
    const char *af = a->autofocus == 3   ? "estimated by pga (phase per pulse)"
                     : a->autofocus == 2 ? (a->af_range ? "estimated by sharpness (range and phase per pulse)"
                                                        : "estimated by sharpness (phase per pulse)")
                     : a->autofocus ? (has_af ? "applied (Gotcha r0 and phase corrections)"
                                              : "not applied (asked; the input has no corrections)")
                     : has_af ? "not applied (the input has corrections)"
                              : "not applied";
    SARBP_TRY(sarbp_image_set_attr(img, "selection", selection));
    SARBP_TRY(sarbp_image_set_attr(img, "autofocus", af));
    if (a->call) SARBP_TRY(sarbp_image_set_attr(img, "command_line", a->call));
    return SARBP_OK;
}

/* The form itself, without the GIL: cmd_form.c's steps from the checks of
 * its options to the provenance of the image. */
static sarbp_status run_form(struct form_args *a, struct form_result *r)
{
    memset(r, 0, sizeof *r);
    sarbp_rc_params rc = a->rc;
    sarbp_bp_options bo = a->bo;
    const int want_ffbp = !strcmp(a->algorithm, "ffbp");
    /* the default kernel: quadratic, but cubic where the quadratic has no
     * form (fp16) or is not read (ffbp) */
    if (!a->have_interp) rc.interp = sarbp_interp_default(bo.precision, want_ffbp);
    if (!a->have_upsample) rc.upsample = sarbp_interp_default_upsample(rc.interp);
    if (rc.interp == SARBP_INTERP_QUADRATIC && bo.precision == SARBP_FP16)
        return sarbp_error(SARBP_ERR_INVALID, "interp='quadratic' has no fp16 form (its bins keep "
                           "the value in FP32): use precision='fp32', or interp='cubic' with fp16");
    if (rc.interp == SARBP_INTERP_QUADRATIC && want_ffbp)
        return sarbp_error(SARBP_ERR_INVALID, "algorithm='ffbp' reads its profiles with the cubic "
                           "(or linear) B-spline: not interp='quadratic'");
    if (a->have_pulses && a->have_az)
        return sarbp_error(SARBP_ERR_INVALID, "pulses and azimuth exclude each other");
    if (want_ffbp && bo.precision != SARBP_FP32)
        return sarbp_error(SARBP_ERR_INVALID, "algorithm='ffbp' runs in fp32 only (not "
                           "precision='%s')", sarbp_precision_name(bo.precision));
    const sarbp_backend *be;
    int fell_back = 0;
    if (!strcmp(a->backend, "auto")) be = sarbp_backend_auto(&bo, &fell_back);
    else be = sarbp_backend_find(a->backend);
    if (!be) return sarbp_error(SARBP_ERR_INVALID, "unknown back end '%s' (cpu, cuda or auto)", a->backend);
    if (be == &sarbp_backend_cpu && (bo.precision == SARBP_FP16 || bo.precision == SARBP_MIXED))
        return sarbp_error(SARBP_ERR_INVALID, "precision='%s' needs backend='cuda'",
                           sarbp_precision_name(bo.precision));
    if (bo.raw_fp16 && bo.precision != SARBP_FP16)
        return sarbp_error(SARBP_ERR_INVALID, "raw_fp16 goes with precision='fp16'");
    if (be == &sarbp_backend_cuda && bo.precision == SARBP_FP64)
        return sarbp_error(SARBP_ERR_INVALID, "precision='fp64' is the cpu reference: use backend='cpu'");
    if (be == &sarbp_backend_cuda && bo.precision == SARBP_EXACT)
        return sarbp_error(SARBP_ERR_INVALID, "precision='exact' is computed on the cpu: use "
                           "backend='cpu'");

    sarbp_reader *rd = NULL;
    sarbp_phd *own = NULL;          /* a selection or correction of a phd in memory */
    const sarbp_phd *meta;
    sarbp_session *sess = NULL;
    sarbp_form_plan *plan = NULL;
    sarbp_image *img = NULL;
    char selection[128];
    int has_af;
    sarbp_status st = SARBP_OK;
    if (a->phd) {
        meta = a->phd;
        has_af = meta->r_correct || meta->ph_correct;
        if (a->have_scene_ref)
            st = sarbp_error(SARBP_ERR_INVALID, "scene_ref is for inputs read from files");
    } else {
        st = sarbp_reader_open_opts(a->paths, a->npaths, &a->ro, &rd);
        if (!st && a->have_scene_ref) st = sarbp_reader_set_scene_ref(rd, &a->scene_ref);
        if (st) goto done;
        meta = sarbp_reader_meta(rd);
        has_af = meta->r_correct || meta->ph_correct;
        sarbp_reader_set_autofocus(rd, a->autofocus == 1);
        meta = sarbp_reader_meta(rd);
    }
    if (st) goto done;
    /* the selection */
    size_t i0 = 0, i1 = meta->npulses;
    if (a->have_pulses) {
        if (a->pulses[1] > meta->npulses) {
            st = sarbp_error(SARBP_ERR_INVALID, "pulses %zu:%zu is outside the %zu pulses of the "
                             "input", a->pulses[0], a->pulses[1], meta->npulses);
            goto done;
        }
        i0 = a->pulses[0];
        i1 = a->pulses[1];
        snprintf(selection, sizeof selection, "pulses %zu:%zu of %zu", i0, i1, meta->npulses);
    } else if (a->have_az) {
        if ((st = sarbp_phd_azimuth_range(meta, a->az[0], a->az[1], &i0, &i1))) goto done;
        snprintf(selection, sizeof selection, "azimuth %g:%g deg: pulses %zu:%zu of %zu", a->az[0],
                 a->az[1], i0, i1, meta->npulses);
    } else {
        snprintf(selection, sizeof selection, "all %zu pulses", meta->npulses);
    }
    if (rd && (a->have_pulses || a->have_az)) {
        if ((st = sarbp_reader_select(rd, i0, i1))) goto done;
        meta = sarbp_reader_meta(rd);
    } else if (!rd && (a->have_pulses || a->have_az || a->autofocus == 1)) {
        if ((st = sarbp_phd_slice(a->phd, i0, i1, &own))) goto done;
        if (a->autofocus == 1) apply_file_corrections(own);
        meta = own;
    }
    /* the grid (no SICD output is named here: sicd_osr 0) */
    const sarbp_grid_request greq = {{a->center[0], a->center[1], a->center[2]},
                                     {a->spacing[0], a->spacing[1]}, a->nx, a->ny, 0};
    sarbp_grid g;
    sarbp_grid_choice gc;
    if ((st = sarbp_form_grid(meta, &greq, &g, &gc))) goto done;
    /* terrain: the heights of the grid's pixels, from a file or the caller's array */
    if (a->heights_spec) {
        if ((st = sarbp_heights_read(a->heights_spec, &g, &r->heights))) goto done;
    } else if (a->heights_arr) {
        if (a->heights_ny != g.ny || a->heights_nx != g.nx) {
            st = sarbp_error(SARBP_ERR_INVALID, "heights: wants shape (%zu, %zu), the grid's rows and "
                             "columns, not (%zu, %zu)", g.ny, g.nx, a->heights_ny, a->heights_nx);
            goto done;
        }
        if (!(r->heights = malloc(g.nx * g.ny * sizeof *r->heights))) {
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu heights", g.nx, g.ny);
            goto done;
        }
        memcpy(r->heights, a->heights_arr, g.nx * g.ny * sizeof *r->heights);
        if ((st = sarbp_heights_check(r->heights, g.nx, g.ny, "heights"))) goto done;
    }
    g.height = r->heights;
    /* a session for this form when none is given: gpu_mem is its device
     * budget, as the CLI's --gpu-mem */
    if (a->session) {
        sess = a->session;
        bo.gpu_mem = a->gpu_mem;
    } else {
        sarbp_session_options so;
        sarbp_session_options_default(&so);
        so.device_budget = a->gpu_mem;
        bo.gpu_mem = 0;
        if ((st = sarbp_session_create(&so, &sess))) goto done;
    }
    bo.max_error_db = a->max_error_db;
    bo.algorithm = want_ffbp ? SARBP_ALGO_FFBP : strcmp(a->algorithm, "auto") ? SARBP_ALGO_BP
                                                                              : SARBP_ALGO_AUTO;
    const sarbp_form_request req = {.backend = be, .grid = g, .rc = rc,
                                    .interp_given = a->have_interp,
                                    .upsample_given = a->have_upsample, .bp = bo, .rank = 0,
                                    .nranks = 1};
    st = sarbp_form_plan_create(sess, meta, &req, &plan);
    const sarbp_form_decision *dc = st ? NULL : sarbp_form_plan_decision(plan);
    if (!st && dc->ffbp && want_ffbp && !dc->target_met)
        st = sarbp_error(SARBP_ERR_INVALID, "max_error_db %g cannot be met: the most accurate ffbp "
                         "factorization searched predicts %.1f dB (hint: algorithm='bp')",
                         a->max_error_db, dc->pred.error_db);
    if (st) goto done;
    if (a->autofocus >= 2) { /* estimated: the library's autofocused form, as the CLI's */
        sarbp_autofocus_options ao;
        sarbp_autofocus_options_default(&ao);
        ao.method = a->autofocus == 3 ? SARBP_AF_PGA : SARBP_AF_ESTIMATE;
        ao.range = a->af_range;
        ao.session = sess;
        st = sarbp_form_plan_execute_autofocused(plan, rd, rd ? NULL : meta, &ao, NULL, &img, NULL, NULL);
    } else {
        /* every pixel is written unless the layout accumulates in place */
        const int zero = dc->layout.in_place;
        st = zero ? sarbp_image_alloc(&dc->grid, &img) : sarbp_image_alloc_unset(&dc->grid, &img);
        if (!st) st = sarbp_form_plan_execute(plan, rd, rd ? NULL : meta, NULL, img->data, zero, NULL);
        if (!st) st = sarbp_form_plan_attrs(plan, img);
        if (!st && rd) st = sarbp_form_inputs_attr(rd, img);
    }
    if (!st && !rd && a->phd_origin) st = sarbp_image_set_attr(img, "inputs", a->phd_origin);
    if (!st && rd) st = sarbp_image_set_collection(img, sarbp_reader_collection(rd));
    if (!st) st = provenance(img, a, selection, has_af);
    /* what the geolocated writers need: the pulses' metadata and times */
    if (!st) st = meta_copy(meta, &r->meta);
    const double *times = rd ? sarbp_reader_times(rd) : NULL;
    if (!st && (a->prf > 0 || a->collect_start) && (times || sarbp_image_get_attr(img, "collect_start")))
        st = sarbp_error(SARBP_ERR_INVALID, "prf and collect_start are for inputs without pulse "
                         "times; '%s' has its own", a->paths[0]);
    if (!st && (times || a->prf > 0)) {
        if (!(r->times = malloc(meta->npulses * sizeof *r->times)))
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; r->times && i < meta->npulses; i++)
            r->times[i] = times ? times[i] : (double)i / a->prf;
    }
    if (!st && a->collect_start) st = sarbp_image_set_attr(img, "collect_start", a->collect_start);
    if (!st && r->heights)
        st = sarbp_image_set_attr(img, "heights_source", a->heights_spec ? a->heights_spec : "array");
done:
    sarbp_form_plan_free(plan);
    if (sess != a->session) sarbp_session_free(sess);
    sarbp_reader_free(rd);
    sarbp_phd_free(own);
    if (st) {
        sarbp_image_free(img);
        sarbp_phd_free(r->meta);
        free(r->times);
        free(r->heights);
        memset(r, 0, sizeof *r);
        return st;
    }
    r->img = img;
    return SARBP_OK;
}

/* Two numbers from a sequence of 2 (or 2-3 for the centre). */
static int seq_doubles(PyObject *o, const char *what, double *v, int lo, int hi)
{
    if (o == Py_None) return 0;
    PyObject *t = PySequence_Tuple(o);
    if (!t) {
        PyErr_Clear();
        raise_invalid("%s: wants a sequence of %d to %d numbers", what, lo, hi);
        return -1;
    }
    const Py_ssize_t n = PyTuple_Size(t);
    if (n < lo || n > hi) {
        Py_DECREF(t);
        raise_invalid("%s: wants %d to %d numbers, not %zd", what, lo, hi, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        v[i] = PyFloat_AsDouble(PyTuple_GetItem(t, i));
        if (v[i] == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_DECREF(t);
            raise_invalid("%s: item %zd is not a number", what, i);
            return -1;
        }
    }
    Py_DECREF(t);
    return 0;
}

/* form(source, ...) -> Img; every option already checked for type and
 * range by the Python layer (sarbp/__init__.py), checked again here where
 * the library does not. */
static PyObject *mod_form(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"source", "nx", "ny", "spacing", "center", "backend", "precision",
                             "algorithm", "interp", "upsample", "window", "az_window", "autofocus",
                             "devices", "threads", "session", "gpu_mem", "pulses", "azimuth",
                             "channel", "polarisation", "max_error_db", "scene_ref", "prf",
                             "collect_start", "raw_fp16", "call", "autofocus_range", "heights", NULL};
    PyObject *source, *spacing = Py_None, *center = Py_None, *devices = Py_None, *session = Py_None;
    PyObject *pulses = Py_None, *azimuth = Py_None;
    Py_ssize_t nx = 0, ny = 0;
    const char *precision = "fp32", *interp = NULL, *window = "none", *az_window = "none";
    const char *autofocus = "none", *scene_ref = NULL;
    int upsample = 0, threads = 0, raw_fp16 = 0, af_range = 0;
    PyObject *heights = Py_None;
    unsigned long long gpu_mem = 0;
    struct form_args a;
    memset(&a, 0, sizeof a);
    a.backend = "auto";
    a.algorithm = "bp";
    a.max_error_db = SARBP_FFBP_DEFAULT_ERROR_DB;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|nnOOssszisssOiOKOOzzdzdzpzpO", kwlist, &source, &nx,
                                     &ny, &spacing, &center, &a.backend, &precision, &a.algorithm,
                                     &interp, &upsample, &window, &az_window, &autofocus, &devices,
                                     &threads, &session, &gpu_mem, &pulses, &azimuth,
                                     &a.ro.channel, &a.ro.polarisation, &a.max_error_db, &scene_ref,
                                     &a.prf, &a.collect_start, &raw_fp16, &a.call, &af_range, &heights))
        return NULL;
    sarbp_rc_params_default(&a.rc);
    sarbp_bp_options_default(&a.bo);
    if (nx < 0 || ny < 0 || nx > ((Py_ssize_t)1 << 31) || ny > ((Py_ssize_t)1 << 31))
        return raise_invalid("grid: wants positive sizes of at most 2^31, not (%zd, %zd)", nx, ny);
    a.nx = (size_t)nx;
    a.ny = (size_t)ny;
    if (seq_doubles(spacing, "spacing", a.spacing, 2, 2) || seq_doubles(center, "center", a.center, 2, 3))
        return NULL;
    if (strcmp(a.backend, "cpu") && strcmp(a.backend, "cuda") && strcmp(a.backend, "auto"))
        return raise_invalid("backend: unknown back end '%s' (cpu, cuda or auto)", a.backend);
    if (strcmp(a.algorithm, "bp") && strcmp(a.algorithm, "ffbp") && strcmp(a.algorithm, "auto"))
        return raise_invalid("algorithm: unknown algorithm '%s' (bp, ffbp or auto)", a.algorithm);
    if (sarbp_precision_parse(precision, &a.bo.precision))
        return raise_invalid("precision: unknown precision '%s' (fp64, fp32, fp16, mixed or exact)",
                             precision);
    if (interp) {
        if (sarbp_interp_parse(interp, &a.rc.interp))
            return raise_invalid("interp: unknown interpolation '%s' (quadratic, cubic or linear)",
                                 interp);
        a.have_interp = 1;
    }
    if (upsample) {
        if (upsample < 1 || upsample > 64)
            return raise_invalid("upsample: wants an integer from 1 to 64, not %d", upsample);
        a.rc.upsample = upsample;
        a.have_upsample = 1;
    }
    if (sarbp_window_parse(window, &a.rc.range_window))
        return raise_invalid("window: %s", sarbp_error_detail());
    if (sarbp_window_parse(az_window, &a.rc.az_window))
        return raise_invalid("az_window: %s", sarbp_error_detail());
    if (!strcmp(autofocus, "none")) a.autofocus = 0;
    else if (!strcmp(autofocus, "file")) a.autofocus = 1;
    else if (!strcmp(autofocus, "estimate")) a.autofocus = 2;
    else if (!strcmp(autofocus, "pga")) a.autofocus = 3;
    else return raise_invalid("autofocus: unknown mode '%s' (none, file, estimate or pga)", autofocus);
    if (af_range && a.autofocus != 2) return raise_invalid("autofocus_range: goes with autofocus='estimate'");
    a.af_range = af_range;
    if (threads < 0 || threads > 4096)
        return raise_invalid("threads: wants an integer from 1 to 4096, not %d", threads);
    a.bo.threads = threads;
    a.bo.raw_fp16 = raw_fp16;
    if (devices != Py_None) {
        PyObject *t = PySequence_Tuple(devices);
        if (!t) return NULL;
        const Py_ssize_t k = PyTuple_Size(t);
        if (k < 1 || k > SARBP_MAX_DEVICES) {
            Py_DECREF(t);
            return raise_invalid("device: wants 1 to %d devices, not %zd", SARBP_MAX_DEVICES, k);
        }
        for (Py_ssize_t i = 0; i < k; i++) {
            const long d = PyLong_AsLong(PyTuple_GetItem(t, i));
            if (d == -1 && PyErr_Occurred()) {
                Py_DECREF(t);
                return NULL;
            }
            if (d < 0 || d > 1024) {
                Py_DECREF(t);
                return raise_invalid("device: wants device numbers from 0 to 1024, not %ld", d);
            }
            a.bo.devices[i] = (int)d;
            for (Py_ssize_t j = 0; j < i; j++)
                if (a.bo.devices[j] == (int)d) {
                    Py_DECREF(t);
                    return raise_invalid("device: names device %ld twice", d);
                }
        }
        a.bo.device = a.bo.devices[0];
        a.bo.ndevices = k > 1 ? (int)k : 0;
        Py_DECREF(t);
    }
    if (seq_doubles(azimuth, "azimuth", a.az, 2, 2)) return NULL;
    if (azimuth != Py_None) {
        if (!(a.az[1] >= a.az[0]))
            return raise_invalid("azimuth: wants (A0, A1) in degrees with A0 <= A1");
        a.have_az = 1;
    }
    if (pulses != Py_None) {
        unsigned long long p0, p1;
        if (!PyArg_ParseTuple(pulses, "KK", &p0, &p1)) {
            PyErr_Clear();
            return raise_invalid("pulses: wants (I0, I1), whole numbers with 0 <= I0 < I1");
        }
        if (p1 <= p0) return raise_invalid("pulses: wants (I0, I1) with I0 < I1, not (%llu, %llu)", p0, p1);
        a.pulses[0] = (size_t)p0;
        a.pulses[1] = (size_t)p1;
        a.have_pulses = 1;
    }
    if (a.ro.polarisation) {
        char pol[8];
        if (sarbp_polarisation_parse(a.ro.polarisation, pol, sizeof pol))
            return raise_invalid("polarisation: wants HH, VV, HV or VH, not '%s'", a.ro.polarisation);
    }
    if (!(a.max_error_db >= -150 && a.max_error_db <= -10))
        return raise_invalid("max_error_db: wants a number of dB from -150 to -10, not %g",
                             a.max_error_db);
    if (scene_ref) {
        if (sarbp_scene_ref_parse(scene_ref, &a.scene_ref))
            return raise_invalid("scene_ref: %s", sarbp_error_detail());
        a.have_scene_ref = 1;
    }
    if (a.prf != 0 && !(a.prf >= 1e-3 && a.prf <= 1e9))
        return raise_invalid("prf: wants a pulse rate in Hz from 1e-3 to 1e9, not %g", a.prf);
    if (a.collect_start) {
        const char *why = "it is longer than 39 characters";
        if (strlen(a.collect_start) > 39 || !sarbp_date_check(a.collect_start, &why))
            return raise_invalid("collect_start: wants an ISO 8601 UTC date and time such as "
                                 "2008-06-01T12:00:00Z, not '%s': %s", a.collect_start, why);
    }
    a.gpu_mem = (size_t)gpu_mem;
    SessionObject *so = NULL;
    if (session != Py_None) {
        if (!PyObject_TypeCheck(session, (PyTypeObject *)SessionType))
            return raise_invalid("session: wants a sarbp.Session");
        so = (SessionObject *)session;
        if (!so->s) return raise_invalid("session: the session is closed");
    }
    PyObject *keep = NULL; /* holds the paths' strings while the GIL is released */
    if (PyObject_TypeCheck(source, (PyTypeObject *)PhdType)) {
        a.phd = ((PhdObject *)source)->phd;
        a.phd_origin = ((PhdObject *)source)->origin;
    } else if (path_list(source, a.paths, &a.npaths, &keep)) {
        return NULL;
    }
    /* terrain: a file spec (the argument holds the string), or a float64
     * array [ny][nx] held as a buffer while the GIL is released */
    Py_buffer hb;
    int have_hb = 0;
    if (PyUnicode_Check(heights)) {
        if (!(a.heights_spec = PyUnicode_AsUTF8AndSize(heights, NULL))) {
            Py_XDECREF(keep);
            return NULL;
        }
    } else if (heights != Py_None) {
        if (get_buffer(heights, "heights", "d", 2, -1, -1, &hb)) {
            Py_XDECREF(keep);
            return NULL;
        }
        have_hb = 1;
        a.heights_arr = hb.buf;
        a.heights_ny = (size_t)hb.shape[0];
        a.heights_nx = (size_t)hb.shape[1];
    }
    if (so) {
        so->busy++; /* forms in other threads may share it (sarbp/session.h) */
        a.session = so->s;
    }
    struct form_result r;
    sarbp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = run_form(&a, &r);
    Py_END_ALLOW_THREADS
    if (so) so->busy--;
    if (have_hb) PyBuffer_Release(&hb);
    Py_XDECREF(keep);
    if (st) return raise_sarbp(st);
    return img_wrap(r.img, r.meta, r.times, r.heights);
}

/* ---- quality ---------------------------------------------------------- */

/* A figure as the CLI's JSON has it: NaN (undefined) is None. */
static PyObject *num(double v)
{
    if (isnan(v)) Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

static int put(PyObject *d, const char *key, PyObject *v)
{
    if (!v) return -1;
    const int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

/* compare(test Img, ref Img, window) -> dict of sarbp_compare_result */
static PyObject *mod_compare(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *t, *r;
    Py_ssize_t window;
    if (!PyArg_ParseTuple(args, "O!O!n", (PyTypeObject *)ImgType, &t, (PyTypeObject *)ImgType, &r,
                          &window))
        return NULL;
    if (window < 1) return raise_invalid("window: wants a whole number of pixels >= 1, not %zd", window);
    sarbp_compare_result c;
    sarbp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sarbp_quality_compare(((ImgObject *)t)->img, ((ImgObject *)r)->img, (size_t)window, &c);
    Py_END_ALLOW_THREADS
    if (st) return raise_sarbp(st);
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    if (put(d, "nx", PyLong_FromSize_t(c.nx)) || put(d, "ny", PyLong_FromSize_t(c.ny)) ||
        put(d, "ser_db", num(c.ser_db)) || put(d, "window_ser_db", num(c.window_ser_db)) ||
        put(d, "window", PyLong_FromSize_t(c.window)) ||
        put(d, "window_ix", PyLong_FromSize_t(c.window_ix)) ||
        put(d, "window_iy", PyLong_FromSize_t(c.window_iy)) ||
        put(d, "nwindows", PyLong_FromSize_t(c.nwindows)) ||
        put(d, "quasi_snr_db", num(c.quasi_snr_db)) ||
        put(d, "quasi_snr_pixels", PyLong_FromSize_t(c.quasi_snr_pixels)) ||
        put(d, "psnr_db", num(c.psnr_db)) || put(d, "ssim", num(c.ssim)) ||
        put(d, "entropy_test", num(c.entropy_test)) || put(d, "entropy_ref", num(c.entropy_ref)) ||
        put(d, "max_err", num(c.max_err)) || put(d, "max_err_ix", PyLong_FromSize_t(c.max_err_ix)) ||
        put(d, "max_err_iy", PyLong_FromSize_t(c.max_err_iy)) ||
        put(d, "max_err_db", num(c.max_err_db)) || put(d, "peak_test", num(c.peak_test)) ||
        put(d, "peak_ref", num(c.peak_ref)) || put(d, "rel_l2", num(c.rel_l2))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* metrics(img, target or None, cut_angle) -> dict of sarbp_pt_result, the
 * CLI's JSON keys. The GIL is held: sarbp_pointtarget_measure plans FFTs,
 * which FFTW allows from one thread at a time. */
static PyObject *mod_metrics(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *io, *target;
    double angle;
    if (!PyArg_ParseTuple(args, "O!Od", (PyTypeObject *)ImgType, &io, &target, &angle)) return NULL;
    sarbp_pt_options o = {0};
    if (target != Py_None) {
        double v[2];
        if (seq_doubles(target, "target", v, 2, 2)) return NULL;
        if (!(fabs(v[0]) <= 1e9 && fabs(v[1]) <= 1e9))
            return raise_invalid("target: wants X, Y in metres (within 1e9)");
        o.have_target = 1;
        o.target_x = v[0];
        o.target_y = v[1];
    }
    if (!(angle >= -360 && angle <= 360))
        return raise_invalid("cut_angle: wants degrees in [-360, 360], not %g", angle);
    o.cut_angle_deg = angle;
    const sarbp_image *img = ((ImgObject *)io)->img;
    sarbp_pt_result *r = NULL;
    sarbp_status st = sarbp_pointtarget_measure(img, &o, &r);
    if (st) return raise_sarbp(st);
    PyObject *d = PyDict_New(), *peak = PyDict_New(), *cuts = PyList_New(0), *stats = PyDict_New();
    int bad = !d || !peak || !cuts || !stats;
    if (!bad)
        bad = put(d, "nx", PyLong_FromSize_t(img->grid.nx)) ||
              put(d, "ny", PyLong_FromSize_t(img->grid.ny)) || put(d, "dx", num(img->grid.dx)) ||
              put(d, "dy", num(img->grid.dy)) ||
              put(d, "has_grid_coords", PyBool_FromLong(img->has_grid_coords)) ||
              put(peak, "ix", PyLong_FromSize_t(r->ix)) || put(peak, "iy", PyLong_FromSize_t(r->iy)) ||
              put(peak, "x", num(r->x)) || put(peak, "y", num(r->y)) ||
              put(peak, "value", num(r->peak)) || PyDict_SetItemString(d, "peak", peak) ||
              put(d, "patch", Py_BuildValue("[nn]", (Py_ssize_t)r->patch_nx, (Py_ssize_t)r->patch_ny)) ||
              put(d, "upsample", PyLong_FromSize_t(r->upsample));
    for (int k = 0; !bad && k < 2; k++) {
        const sarbp_pt_cut *c = &r->cut[k];
        PyObject *cd = PyDict_New();
        bad = !cd || put(cd, "angle_deg", num(c->angle_deg)) || put(cd, "peak", num(c->peak)) ||
              put(cd, "irw_m", num(c->irw_m)) || put(cd, "pslr_db", num(c->pslr_db)) ||
              put(cd, "islr_db", num(c->islr_db)) || put(cd, "null_lo_m", num(c->null_lo_m)) ||
              put(cd, "null_hi_m", num(c->null_hi_m)) || put(cd, "sidelobe_m", num(c->sidelobe_m)) ||
              put(cd, "start_m", num(c->n ? c->s_m[0] : NAN)) ||
              put(cd, "end_m", num(c->n ? c->s_m[c->n - 1] : NAN)) ||
              put(cd, "step_m", num(c->step_m)) || PyList_Append(cuts, cd);
        Py_XDECREF(cd);
    }
    const sarbp_image_stats *s = &r->stats;
    if (!bad)
        bad = PyDict_SetItemString(d, "cuts", cuts) || put(stats, "entropy", num(s->entropy)) ||
              put(stats, "mean_mag", num(s->mean_mag)) || put(stats, "max_mag", num(s->max_mag)) ||
              put(stats, "max_ix", PyLong_FromSize_t(s->max_ix)) ||
              put(stats, "max_iy", PyLong_FromSize_t(s->max_iy)) ||
              put(stats, "median_mag", num(s->median_mag)) ||
              put(stats, "dynamic_range_db", num(s->dynamic_range_db)) ||
              PyDict_SetItemString(d, "image_stats", stats) ||
              put(d, "contrast_db", num(r->contrast_db)) ||
              put(d, "isolated", PyBool_FromLong(r->isolated));
    sarbp_pointtarget_free(r);
    Py_XDECREF(peak);
    Py_XDECREF(cuts);
    Py_XDECREF(stats);
    if (bad) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* ---- the module ------------------------------------------------------- */

static PyObject *mod_cuda_device_count(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    int n;
    Py_BEGIN_ALLOW_THREADS
    n = sarbp_cuda_device_count();
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
}

static PyObject *mod_cpu_count(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromLong(sarbp_cpu_count());
}

static PyMethodDef module_methods[] = {
    {"read_phd", (PyCFunction)(void (*)(void))mod_read_phd, METH_VARARGS | METH_KEYWORDS, NULL},
    {"phd_from_arrays", mod_phd_from_arrays, METH_VARARGS, NULL},
    {"form", (PyCFunction)(void (*)(void))mod_form, METH_VARARGS | METH_KEYWORDS, NULL},
    {"image_from_array", mod_image_from_array, METH_VARARGS, NULL},
    {"image_read", mod_image_read, METH_VARARGS, NULL},
    {"compare", mod_compare, METH_VARARGS, NULL},
    {"metrics", mod_metrics, METH_VARARGS, NULL},
    {"cuda_device_count", mod_cuda_device_count, METH_NOARGS, NULL},
    {"cpu_count", mod_cpu_count, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_sarbp",
    "The sarbp library's C interface; use the sarbp package instead.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *mod, const char *name, PyType_Spec *spec, PyObject **out)
{
    *out = PyType_FromSpec(spec);
    if (!*out) return -1;
    Py_INCREF(*out);
    if (PyModule_AddObject(mod, name, *out)) {
        Py_DECREF(*out);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__sarbp(void)
{
    PyObject *mod = PyModule_Create(&module_def);
    if (!mod) return NULL;
    Error = PyErr_NewExceptionWithDoc("sarbp.Error",
                                      "A failure of the sarbp library or a bad argument; the message "
                                      "names the file or argument. .status is the library's status "
                                      "number (sarbp/status.h), .reason its short description.",
                                      NULL, NULL);
    if (!Error) goto fail;
    Py_INCREF(Error);
    if (PyModule_AddObject(mod, "Error", Error)) {
        Py_DECREF(Error);
        goto fail;
    }
    if (add_type(mod, "Array", &array_spec, &ArrayType) || add_type(mod, "Phd", &phd_spec, &PhdType) ||
        add_type(mod, "Img", &img_spec, &ImgType) ||
        add_type(mod, "Session", &session_spec, &SessionType))
        goto fail;
    if (PyModule_AddStringConstant(mod, "version", SARBP_VERSION_STRING) ||
        PyModule_AddIntConstant(mod, "have_cuda",
#ifdef SARBP_HAVE_CUDA
                                1
#else
                                0
#endif
                                ) ||
        PyModule_AddIntConstant(mod, "max_inputs", MAX_INPUTS))
        goto fail;
    return mod;
fail:
    Py_DECREF(mod);
    return NULL;
}
