/* image_read.c - reads complex images from HDF5 (sarbp's layout), .npy and
 * SICD in NITF 2.1 (sarbp's own, restored to its grid, or any other with
 * RE32F_IM32F or RE16I_IM16I pixels: sarbp/image.h).
 *
 * The format is told by the file's first bytes, not its name. HDF5: /image
 * must be a 2-D compound of two floats named {r, i} (also {re, im} or
 * {real, imag}); the grid comes from the root attributes dx, dy, xc, yc, zc,
 * else from the /x and /y coordinate datasets, else unit spacing; string
 * attributes on the root become image attributes. .npy: versions 1-3,
 * '<c8' or '<c16' (converted to complex64), 2-D, C or Fortran order.
 * PNG files hold magnitude only and are refused. Errors: a file that cannot
 * be opened or read is SARBP_ERR_IO, one that is not an image SARBP_ERR_FORMAT.
 * Every declared size is checked against the file before anything is
 * allocated (h5_check.h; the .npy length against the file's), and an HDF5
 * image's metadata is read first in a probe child (probe.h). */
#include "sarbp/image.h"
#include "sarbp/phd_io.h" /* SARBP_PHD_MAX_PULSES */

#include <ctype.h>
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/h5_check.h"
#include "io/input_file.h"
#include "io/image_check.h"
#include "io/probe.h"

/* ---- HDF5 ----------------------------------------------------------------- */

static const char *const re_names[] = {"r", "re", "real"};
static const char *const im_names[] = {"i", "im", "imag"};

static int name_in(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, set[i])) return 1;
    return 0;
}

/* Reads a numeric scalar attribute of the root as double; 1 if found. */
static int h5_attr_double(hid_t file, const char *name, double *v)
{
    if (H5Aexists(file, name) <= 0) return 0;
    hid_t a = H5Aopen(file, name, H5P_DEFAULT);
    if (a < 0) return 0;
    int ok = 0;
    hid_t t = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    if (t >= 0 && sp >= 0) {
        H5T_class_t c = H5Tget_class(t);
        if ((c == H5T_INTEGER || c == H5T_FLOAT) && H5Sget_simple_extent_npoints(sp) == 1 &&
            h5_check_number_type("", name, t) == SARBP_OK)
            ok = H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
    }
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return ok;
}

/* Reads a 1-D float dataset of exactly n values, stored in full in path
 * (h5_check_dataset); 1 on success. */
static int h5_coords(const char *path, hid_t file, const char *name, size_t n, double *v)
{
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return 0;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) return 0;
    int ok = 0;
    hid_t sp = H5Dget_space(d);
    hsize_t dim = 0;
    size_t count;
    hid_t t = H5Dget_type(d);
    if (sp >= 0 && t >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
        H5Sget_simple_extent_dims(sp, &dim, NULL) == 1 && dim == n &&
        h5_check_number_type(path, name, t) == SARBP_OK &&
        h5_check_dataset(path, name, d, &count) == SARBP_OK)
        ok = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    else
        sarbp_error_clear();
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
    return ok;
}

/* The autofocus phases (autofocus/phase, written by sarbp form
 * --autofocus estimate) into img, when the dataset is there and sound (a
 * 1-D float dataset of at most SARBP_PHD_MAX_PULSES values, stored in
 * full); otherwise the image goes without them. */
static void h5_autofocus(const char *path, hid_t file, sarbp_image *img)
{
    if (H5Lexists(file, "autofocus", H5P_DEFAULT) <= 0 ||
        H5Lexists(file, "autofocus/phase", H5P_DEFAULT) <= 0)
        return;
    hid_t d = H5Dopen2(file, "autofocus/phase", H5P_DEFAULT);
    if (d < 0) return;
    hid_t sp = H5Dget_space(d);
    hsize_t dim = 0;
    if (sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
        H5Sget_simple_extent_dims(sp, &dim, NULL) == 1 && dim > 0 && dim <= SARBP_PHD_MAX_PULSES) {
        double *v = malloc((size_t)dim * sizeof *v);
        if (v && h5_coords(path, file, "autofocus/phase", (size_t)dim, v) &&
            sarbp_image_set_autofocus(img, v, (size_t)dim) != SARBP_OK)
            sarbp_error_clear();
        /* the range, when there is one of the same length */
        if (v && img->af_phase && H5Lexists(file, "autofocus/range", H5P_DEFAULT) > 0) {
            hid_t dr = H5Dopen2(file, "autofocus/range", H5P_DEFAULT);
            hid_t sr = dr >= 0 ? H5Dget_space(dr) : -1;
            hsize_t n = 0;
            if (sr >= 0 && H5Sget_simple_extent_ndims(sr) == 1 && H5Sget_simple_extent_dims(sr, &n, NULL) == 1 &&
                n == dim && h5_coords(path, file, "autofocus/range", (size_t)dim, v) &&
                sarbp_image_set_autofocus_range(img, v) != SARBP_OK)
                sarbp_error_clear();
            if (sr >= 0) H5Sclose(sr);
            if (dr >= 0) H5Dclose(dr);
        }
        free(v);
    }
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
}

/* Grid spacing and centre from pixel-centre coordinates v[n]. */
static void grid_from_coords(const double *v, size_t n, double *d, double *c)
{
    *d = n > 1 ? (v[n - 1] - v[0]) / (double)(n - 1) : 1.0;
    *c = 0.5 * (v[0] + v[n - 1]);
}

static herr_t h5_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    sarbp_image *img = data;
    static const char *const grid_names[] = {"nx", "ny", "dx", "dy", "xc", "yc", "zc"};
    if (name_in(name, grid_names, 7)) return 0;
    const size_t nl = strlen(name); /* the writer's units companions (sarbp/image.h) */
    if (nl > 6 && !strcmp(name + nl - 6, "_units")) return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t t = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING &&
        H5Sget_simple_extent_npoints(sp) == 1) {
        if (H5Tis_variable_str(t) > 0) {
            char *s = NULL;
            hid_t mt = H5Tcopy(H5T_C_S1);
            if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 &&
                H5Tset_cset(mt, H5Tget_cset(t)) >= 0 && H5Aread(a, mt, &s) >= 0 && s) {
                sarbp_image_set_attr(img, name, s);
                H5free_memory(s);
            }
            if (mt >= 0) H5Tclose(mt);
        } else {
            size_t size = H5Tget_size(t); /* an attribute lives in a header of <= 64 KiB */
            char *buf = size && size <= 65536 ? calloc(size + 1, 1) : NULL;
            if (buf && H5Aread(a, t, buf) >= 0) sarbp_image_set_attr(img, name, buf);
            free(buf);
        }
    } else if (t >= 0 && sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 &&
               (H5Tget_class(t) == H5T_INTEGER || H5Tget_class(t) == H5T_FLOAT)) {
        /* a number (the provenance's): back to the string the image holds */
        char buf[40];
        long long iv;
        double dv;
        if (H5Tget_class(t) == H5T_INTEGER && H5Aread(a, H5T_NATIVE_LLONG, &iv) >= 0) {
            snprintf(buf, sizeof buf, "%lld", iv);
            sarbp_image_set_attr(img, name, buf);
        } else if (H5Tget_class(t) == H5T_FLOAT && H5Aread(a, H5T_NATIVE_DOUBLE, &dv) >= 0) {
            snprintf(buf, sizeof buf, "%.17g", dv);
            sarbp_image_set_attr(img, name, buf);
        }
    }
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return 0; /* a full table or an odd attribute does not stop the read */
}

/* Reads the HDF5 image path into *out; with meta_only (the probe's walk)
 * makes every metadata call and check of a full read but allocates and
 * reads no pixels, and out is unused. */
static sarbp_status read_h5(const char *path, sarbp_image **out, int meta_only)
{
    sarbp_status st = SARBP_OK;
    sarbp_image *img = NULL;
    hid_t file = -1, dset = -1, ftype = -1, space = -1, mtype = -1;
    double *cx = NULL, *cy = NULL;

    if ((st = input_check(path)) != SARBP_OK) goto done; /* HDF5 opens by name */
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        st = sarbp_error(SARBP_ERR_FORMAT, "cannot read '%s': not a readable HDF5 file", path);
        goto done;
    }
    if (H5Lexists(file, "image", H5P_DEFAULT) <= 0 ||
        (dset = H5Dopen2(file, "image", H5P_DEFAULT)) < 0) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' has no /image dataset: not a sarbp image", path);
        goto done;
    }
    ftype = H5Dget_type(dset);
    const char *rname = NULL, *iname = NULL;
    char *names[2] = {NULL, NULL};
    if (ftype >= 0 && H5Tget_class(ftype) == H5T_COMPOUND && H5Tget_nmembers(ftype) == 2) {
        for (unsigned m = 0; m < 2; m++) {
            hid_t mt = H5Tget_member_type(ftype, m);
            names[m] = H5Tget_member_name(ftype, m);
            int isfloat = mt >= 0 && H5Tget_class(mt) == H5T_FLOAT;
            if (mt >= 0) H5Tclose(mt);
            if (!isfloat || !names[m]) continue;
            if (name_in(names[m], re_names, 3)) rname = names[m];
            if (name_in(names[m], im_names, 3)) iname = names[m];
        }
    }
    if (rname && iname &&
        (st = h5_check_complex_type(path, "image", ftype, (unsigned)H5Tget_member_index(ftype, rname),
                                    (unsigned)H5Tget_member_index(ftype, iname)))) {
        for (int m = 0; m < 2; m++)
            if (names[m]) H5free_memory(names[m]);
        goto done;
    }
    if (rname && iname) {
        mtype = H5Tcreate(H5T_COMPOUND, sizeof(sarbp_c32));
        if (mtype >= 0 && (H5Tinsert(mtype, rname, offsetof(sarbp_c32, re), H5T_NATIVE_FLOAT) < 0 ||
                           H5Tinsert(mtype, iname, offsetof(sarbp_c32, im), H5T_NATIVE_FLOAT) < 0)) {
            H5Tclose(mtype);
            mtype = -1;
        }
    }
    for (int m = 0; m < 2; m++)
        if (names[m]) H5free_memory(names[m]);
    if (mtype < 0) {
        st = sarbp_error(SARBP_ERR_FORMAT,
                         "'%s': /image is not a complex image (compound {r, i} of floats)", path);
        goto done;
    }
    space = H5Dget_space(dset);
    hsize_t dims[2] = {0, 0};
    if (space < 0 || H5Sget_simple_extent_ndims(space) != 2 ||
        H5Sget_simple_extent_dims(space, dims, NULL) != 2 || dims[0] < 1 || dims[1] < 1) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': /image is not a 2-D array", path);
        goto done;
    }
    if (dims[0] > SARBP_GRID_MAX_PIXELS || dims[1] > SARBP_GRID_MAX_PIXELS / dims[0]) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': /image of %llu x %llu pixels is too large", path,
                         (unsigned long long)dims[1], (unsigned long long)dims[0]);
        goto done;
    }
    size_t npix;
    if ((st = h5_check_dataset(path, "image", dset, &npix))) goto done;

    sarbp_grid g = {.nx = (size_t)dims[1], .ny = (size_t)dims[0], .dx = 1, .dy = 1};
    double anx, any;
    if ((h5_attr_double(file, "nx", &anx) && anx != (double)g.nx) ||
        (h5_attr_double(file, "ny", &any) && any != (double)g.ny)) {
        st = sarbp_error(SARBP_ERR_FORMAT,
                         "'%s': attributes nx, ny disagree with /image's %zu x %zu pixels", path,
                         g.nx, g.ny);
        goto done;
    }
    int have = h5_attr_double(file, "dx", &g.dx) + h5_attr_double(file, "dy", &g.dy) +
               h5_attr_double(file, "xc", &g.xc) + h5_attr_double(file, "yc", &g.yc);
    if (!h5_attr_double(file, "zc", &g.zc)) g.zc = 0;
    int coords = 1;
    if (have != 4) {
        cx = malloc(g.nx * sizeof *cx);
        cy = malloc(g.ny * sizeof *cy);
        if (!cx || !cy) {
            st = sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
            goto done;
        }
        if (h5_coords(path, file, "x", g.nx, cx) && h5_coords(path, file, "y", g.ny, cy)) {
            grid_from_coords(cx, g.nx, &g.dx, &g.xc);
            grid_from_coords(cy, g.ny, &g.dy, &g.yc);
        } else {
            g.dx = g.dy = 1;
            g.xc = g.yc = g.zc = 0;
            coords = 0;
        }
    }
    if (sarbp_grid_validate(&g) != SARBP_OK) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': invalid grid: %s", path, sarbp_error_detail());
        goto done;
    }
    if (meta_only) {
        sarbp_image attrs = {.grid = g}; /* the attribute walk, without pixels */
        H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, NULL, h5_attr_cb, &attrs);
        goto done;
    }
    st = sarbp_image_alloc(&g, &img);
    if (st != SARBP_OK) goto done;
    img->has_grid_coords = coords;
    if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, img->data) < 0) {
        st = sarbp_error(SARBP_ERR_FORMAT, "cannot read '%s': reading /image failed", path);
        goto done;
    }
    H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, NULL, h5_attr_cb, img);
    h5_autofocus(path, file, img);

done:
    free(cx);
    free(cy);
    if (mtype >= 0) H5Tclose(mtype);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
    if (st != SARBP_OK || meta_only) {
        sarbp_image_free(img);
        return st;
    }
    *out = img;
    return SARBP_OK;
}

/* The probe's walk (probe.h), in the child: the whole read for files up to
 * PROBE_FULL_READ bytes, and the image comes back through the probe's pipe
 * (probe_reply) as the sarbp_image struct followed by its pixels, so that
 * the parent never opens such a file with HDF5 (fuzzing found corrupt files
 * on which HDF5 crashes inside the pixel read, and attribute tables on which
 * H5Aiterate2 reads uninitialised memory and then allocates gigabytes: in
 * the child, its address-space limit turns that into an error). Larger
 * files: read_h5's metadata calls alone, and the parent reads the pixels. */
#define PROBE_FULL_READ ((off_t)256 << 20)
static sarbp_status probe_walk(const char *path, void *arg)
{
    (void)arg;
    struct stat sb;
    const int full = stat(path, &sb) == 0 && sb.st_size <= PROBE_FULL_READ;
    sarbp_image *img = NULL;
    sarbp_status st = read_h5(path, full ? &img : NULL, !full);
    if (st != SARBP_OK || !full) {
        sarbp_image_free(img);
        return st;
    }
    /* the child's memory is its own and ends with it: one block, never
     * freed: the header (pointers cleared), the pixels, the autofocus phases */
    size_t npix = img->grid.nx * img->grid.ny, naf = img->af_npulses,
           nafv = naf * (img->af_range ? 2 : 1),
           len = sizeof *img + npix * sizeof(sarbp_c32) + nafv * sizeof(double);
    unsigned char *msg = malloc(len);
    if (!msg) return sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
    sarbp_image head = *img;
    head.data = NULL;
    head.af_phase = NULL;
    /* a range follows the phases: said by a non-NULL pointer never followed */
    head.af_range = img->af_range ? (double *)&head : NULL;
    memcpy(msg, &head, sizeof head);
    memcpy(msg + sizeof head, img->data, npix * sizeof(sarbp_c32));
    if (naf) memcpy(msg + sizeof head + npix * sizeof(sarbp_c32), img->af_phase, naf * sizeof(double));
    if (naf && img->af_range)
        memcpy(msg + sizeof head + npix * sizeof(sarbp_c32) + naf * sizeof(double), img->af_range,
               naf * sizeof(double));
    probe_reply(msg, len);
    return SARBP_OK;
}

/* The image a probe child sent (probe_walk), checked like any input:
 * grid valid, length matching its pixels. */
static sarbp_status image_from_reply(const char *path, const unsigned char *msg, size_t len,
                                     sarbp_image **out)
{
    sarbp_image head;
    if (len < sizeof head) goto bad;
    memcpy(&head, msg, sizeof head);
    if (sarbp_grid_validate(&head.grid) != SARBP_OK || head.nattrs > SARBP_IMAGE_MAX_ATTRS ||
        head.grid.nx > SARBP_GRID_MAX_PIXELS / head.grid.ny || head.af_npulses > SARBP_PHD_MAX_PULSES ||
        len - sizeof head != head.grid.nx * head.grid.ny * sizeof(sarbp_c32) +
                                 head.af_npulses * (head.af_range ? 2 : 1) * sizeof(double))
        goto bad;
    const size_t pix = head.grid.nx * head.grid.ny * sizeof(sarbp_c32);
    sarbp_image *img;
    SARBP_TRY(sarbp_image_alloc(&head.grid, &img));
    sarbp_c32 *data = img->data;
    *img = head;
    img->data = data;
    img->af_phase = NULL;
    img->af_range = NULL;
    img->af_npulses = 0;
    memcpy(img->data, msg + sizeof head, pix);
    if (head.af_npulses) {
        double *af = malloc(head.af_npulses * sizeof *af);
        if (!af) {
            sarbp_image_free(img);
            return sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
        }
        memcpy(af, msg + sizeof head + pix, head.af_npulses * sizeof *af);
        img->af_phase = af;
        img->af_npulses = head.af_npulses;
        if (head.af_range) {
            double *r = malloc(head.af_npulses * sizeof *r);
            if (!r) {
                sarbp_image_free(img);
                return sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
            }
            memcpy(r, msg + sizeof head + pix + head.af_npulses * sizeof *r, head.af_npulses * sizeof *r);
            img->af_range = r;
        }
    }
    for (size_t a = 0; a < img->nattrs; a++) { /* strings end inside their slots */
        img->attrs[a].key[sizeof img->attrs[a].key - 1] = '\0';
        img->attrs[a].value[sizeof img->attrs[a].value - 1] = '\0';
    }
    *out = img;
    return SARBP_OK;
bad:
    return sarbp_error(SARBP_ERR_INTERNAL, "'%s': the image read in the probe came back damaged",
                       path);
}

/* ---- .npy ----------------------------------------------------------------- */

/* Finds the value of key in the header dict: returns a pointer just after
 * "'key':" (spaces skipped), or NULL. */
static const char *npy_value(const char *h, const char *key)
{
    char q1[64], q2[64];
    snprintf(q1, sizeof q1, "'%s'", key);
    snprintf(q2, sizeof q2, "\"%s\"", key);
    const char *p = strstr(h, q1);
    if (!p) p = strstr(h, q2);
    if (!p) return NULL;
    p += strlen(q1);
    while (isspace((unsigned char)*p)) p++;
    if (*p != ':') return NULL;
    p++;
    while (isspace((unsigned char)*p)) p++;
    return p;
}

struct npy_header {
    char descr[32];
    int fortran;
    int ndim;
    unsigned long long shape[8];
    long data_offset;
};

static sarbp_status npy_parse(FILE *f, const char *path, struct npy_header *hd)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': truncated .npy header", path);
    unsigned major = pre[6];
    size_t hlen;
    long off;
    if (major == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f) != 2)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': truncated .npy header", path);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        off = 12;
    } else {
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': unsupported .npy version %u", path, major);
    }
    if (hlen < 10 || hlen > (1u << 20))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': implausible .npy header length %zu", path, hlen);
    char *h = malloc(hlen + 1);
    if (!h) return sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
    if (fread(h, 1, hlen, f) != hlen) {
        free(h);
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': truncated .npy header", path);
    }
    h[hlen] = '\0';
    sarbp_status st = SARBP_OK;
    const char *p = npy_value(h, "descr");
    if (!p || (*p != '\'' && *p != '"')) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': .npy header has no 'descr'", path);
        goto out;
    }
    const char quote = *p++;
    size_t i = 0;
    while (*p && *p != quote && i + 1 < sizeof hd->descr) hd->descr[i++] = *p++;
    hd->descr[i] = '\0';
    if (*p != quote) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': .npy header has a bad 'descr'", path);
        goto out;
    }
    p = npy_value(h, "fortran_order");
    if (p && !strncmp(p, "True", 4)) hd->fortran = 1;
    else if (p && !strncmp(p, "False", 5)) hd->fortran = 0;
    else {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': .npy header has no 'fortran_order'", path);
        goto out;
    }
    p = npy_value(h, "shape");
    if (!p || *p != '(') {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': .npy header has no 'shape'", path);
        goto out;
    }
    p++;
    hd->ndim = 0;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (*p == ')') break;
        if (!isdigit((unsigned char)*p) || hd->ndim >= 8) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': .npy header has a bad 'shape'", path);
            goto out;
        }
        char *end;
        errno = 0;
        hd->shape[hd->ndim++] = strtoull(p, &end, 10);
        if (errno) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': .npy header has a bad 'shape'", path);
            goto out;
        }
        p = end;
        while (isspace((unsigned char)*p)) p++;
        if (*p == ',') p++;
    }
    hd->data_offset = off + (long)hlen;
out:
    free(h);
    return st;
}

static void swap_bytes(unsigned char *p, size_t nbytes, size_t width)
{
    for (size_t i = 0; i + width <= nbytes; i += width)
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

static sarbp_status read_npy(FILE *f, const char *path, sarbp_image **out)
{
    struct npy_header hd = {0};
    rewind(f);
    SARBP_TRY(npy_parse(f, path, &hd));
    size_t width; /* bytes of one real component */
    if (!strcmp(hd.descr, "<c8")) width = 4;
    else if (!strcmp(hd.descr, "<c16")) width = 8;
    else
        return sarbp_error(SARBP_ERR_FORMAT,
                           "'%s' holds '%s' data; sarbp reads complex64 ('<c8') or complex128 "
                           "('<c16') images",
                           path, hd.descr);
    if (hd.ndim != 2)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': expected a 2-D array (ny, nx), found %d-D", path,
                           hd.ndim);
    if (hd.shape[0] < 1 || hd.shape[1] < 1 || hd.shape[0] > SARBP_GRID_MAX_PIXELS ||
        hd.shape[1] > SARBP_GRID_MAX_PIXELS / hd.shape[0])
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': array shape (%llu, %llu) is empty or too large",
                           path, hd.shape[0], hd.shape[1]);
    const size_t ny = (size_t)hd.shape[0], nx = (size_t)hd.shape[1], n = nx * ny;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    if ((unsigned long long)sb.st_size < (unsigned long long)hd.data_offset + (unsigned long long)n * 2 * width)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s' is truncated: %llu bytes for a %zu x %zu image",
                           path, (unsigned long long)sb.st_size, nx, ny);

    sarbp_grid g = {.nx = nx, .ny = ny, .dx = 1, .dy = 1};
    sarbp_image *img = NULL;
    SARBP_TRY(sarbp_image_alloc(&g, &img));
    img->has_grid_coords = 0;
    if (fseek(f, hd.data_offset, SEEK_SET) != 0) {
        sarbp_image_free(img);
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    }
    const int le = image_host_little_endian();
    if (width == 4 && !hd.fortran && le) {
        if (fread(img->data, sizeof(sarbp_c32), n, f) != n) {
            sarbp_image_free(img);
            return sarbp_error(SARBP_ERR_IO, "cannot read '%s': short read", path);
        }
    } else {
        enum { CHUNK = 8192 };
        unsigned char *buf = malloc(CHUNK * 2 * width);
        if (!buf) {
            sarbp_image_free(img);
            return sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
        }
        for (size_t k = 0; k < n; k += CHUNK) {
            size_t m = n - k < CHUNK ? n - k : CHUNK;
            if (fread(buf, 2 * width, m, f) != m) {
                free(buf);
                sarbp_image_free(img);
                return sarbp_error(SARBP_ERR_IO, "cannot read '%s': short read", path);
            }
            if (!le) swap_bytes(buf, m * 2 * width, width);
            for (size_t j = 0; j < m; j++) {
                size_t idx = k + j; /* linear index in file order */
                size_t dst = hd.fortran ? (idx % ny) * nx + idx / ny : idx;
                sarbp_c32 v;
                if (width == 4) {
                    memcpy(&v, buf + j * 8, 8);
                } else {
                    double d[2];
                    memcpy(d, buf + j * 16, 16);
                    v.re = (float)d[0];
                    v.im = (float)d[1];
                }
                img->data[dst] = v;
            }
        }
        free(buf);
    }
    *out = img;
    return SARBP_OK;
}

/* ---- SICD (NITF 2.1) ------------------------------------------------------ */

/* The file header and subheaders are fixed-width ASCII fields (MIL-STD-2500C);
 * what is read: the image segments' sizes, pixel type and mode, and the
 * XML_DATA_CONTENT data extension holding the SICD XML. The XML is read
 * by name, without a parser: the few fields needed are plain elements. */

#define NITF_MAX_SEGS 999
#define SICD_MAX_XML ((size_t)64 << 20)

struct nitf_seg {
    unsigned long long sub_off, sub_len, data_off, data_len;
};

/* Field [at, at + w) of buf (len bytes) as a whole number; -1 when it is
 * not one or lies outside. */
static long long nitf_num(const char *buf, size_t len, size_t at, size_t w)
{
    if (at + w > len || w == 0 || w > 18) return -1;
    long long v = 0;
    for (size_t i = 0; i < w; i++) {
        const char c = buf[at + i];
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

static sarbp_status nitf_pread(FILE *f, const char *path, unsigned long long off, void *buf,
                               size_t n)
{
    if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, n, f) != n)
        return sarbp_error(SARBP_ERR_FORMAT, "cannot read '%s': the NITF file ends before its "
                           "segments do", path);
    return SARBP_OK;
}

/* The element <name> (any namespace prefix) at or after from in xml: the
 * start of its text in *text, and returns a pointer past its start tag, or
 * NULL. */
static const char *xml_find(const char *xml, const char *from, const char *name,
                            const char **text)
{
    const size_t nl = strlen(name);
    for (const char *p = from ? from : xml; (p = strchr(p, '<')); p++) {
        const char *q = p + 1;
        const char *colon = q;
        while (*colon && *colon != ':' && *colon != '>' && *colon != ' ' && *colon != '/') colon++;
        if (*colon == ':') q = colon + 1;
        if (strncmp(q, name, nl) || (q[nl] != '>' && q[nl] != ' ')) continue;
        const char *gt = strchr(q + nl, '>');
        if (!gt) return NULL;
        *text = gt + 1;
        return gt + 1;
    }
    return NULL;
}

static int xml_double(const char *xml, const char *from, const char *name, double *v)
{
    const char *t;
    if (!xml_find(xml, from, name, &t)) return 0;
    char *end;
    *v = strtod(t, &end);
    return end != t && *end == '<' && isfinite(*v);
}

/* The text of <Parameter name="key">, entities undone, into out (n bytes);
 * 1 when found. */
static int xml_param(const char *xml, const char *key, char *out, size_t n)
{
    char pat[96];
    snprintf(pat, sizeof pat, "name=\"%s\">", key);
    const char *p = strstr(xml, pat);
    if (!p) return 0;
    p += strlen(pat);
    size_t k = 0;
    static const struct { const char *ent; char c; } ents[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    while (*p && *p != '<' && k + 1 < n) {
        char c = *p++;
        if (c == '&')
            for (size_t e = 0; e < sizeof ents / sizeof ents[0]; e++)
                if (!strncmp(p - 1, ents[e].ent, strlen(ents[e].ent))) {
                    c = ents[e].c;
                    p += strlen(ents[e].ent) - 1;
                    break;
                }
        out[k++] = c;
    }
    out[k] = '\0';
    return 1;
}

static sarbp_status read_sicd(FILE *f, const char *path, sarbp_image **out)
{
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    const unsigned long long fsize = (unsigned long long)sb.st_size;
    char hdr[401 + 16 * NITF_MAX_SEGS + 2048];
    const size_t hn = fsize < sizeof hdr ? (size_t)fsize : sizeof hdr;
    SARBP_TRY(nitf_pread(f, path, 0, hdr, hn));
    if (hn < 363 || memcmp(hdr, "NITF02.10", 9))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s' is not a NITF 2.1 file", path);
    const long long hl = nitf_num(hdr, hn, 354, 6), numi = nitf_num(hdr, hn, 360, 3);
    if (hl < 0 || numi < 1 || (unsigned long long)hl > fsize)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': NITF header without an image segment", path);
    struct nitf_seg im[NITF_MAX_SEGS];
    size_t at = 363;
    unsigned long long off = (unsigned long long)hl;
    for (long long i = 0; i < numi; i++, at += 16) {
        const long long lish = nitf_num(hdr, hn, at, 6), li = nitf_num(hdr, hn, at + 6, 10);
        if (lish < 0 || li < 0)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': bad NITF image segment sizes", path);
        im[i] = (struct nitf_seg){off, (unsigned long long)lish, off + (unsigned long long)lish,
                                  (unsigned long long)li};
        off += (unsigned long long)lish + (unsigned long long)li;
    }
    /* graphics (LSSH 4, LS 6), NUMX, text (LTSH 4, LT 5), then the DES */
    const long long nums = nitf_num(hdr, hn, at, 3);
    at += 3;
    int bad = 0;
    for (long long i = 0; nums > 0 && i < nums; i++, at += 10) {
        const long long a = nitf_num(hdr, hn, at, 4), b = nitf_num(hdr, hn, at + 4, 6);
        bad |= a < 0 || b < 0;
        off += (unsigned long long)(a + b);
    }
    at += 3; /* NUMX */
    const long long numt = nitf_num(hdr, hn, at, 3);
    at += 3;
    for (long long i = 0; numt > 0 && i < numt; i++, at += 9) {
        const long long a = nitf_num(hdr, hn, at, 4), b = nitf_num(hdr, hn, at + 4, 5);
        bad |= a < 0 || b < 0;
        off += (unsigned long long)(a + b);
    }
    const long long numdes = nitf_num(hdr, hn, at, 3);
    at += 3;
    if (nums < 0 || numt < 0 || numdes < 0 || bad)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': bad NITF segment counts", path);
    char *xml = NULL;
    for (long long i = 0; i < numdes && !xml; i++, at += 13) {
        const long long ldsh = nitf_num(hdr, hn, at, 4), ld = nitf_num(hdr, hn, at + 4, 9);
        if (ldsh < 27 || ld < 0 || off + (unsigned long long)ldsh + (unsigned long long)ld > fsize)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': bad NITF data extension sizes", path);
        char desid[27];
        SARBP_TRY(nitf_pread(f, path, off, desid, 27));
        if (!memcmp(desid, "DEXML_DATA_CONTENT ", 19) && (size_t)ld <= SICD_MAX_XML) {
            xml = malloc((size_t)ld + 1);
            if (!xml) return sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
            sarbp_status st = nitf_pread(f, path, off + (unsigned long long)ldsh, xml, (size_t)ld);
            if (st) {
                free(xml);
                return st;
            }
            xml[ld] = '\0';
            if (!strstr(xml, "urn:SICD:")) {
                free(xml);
                xml = NULL;
            }
        }
        off += (unsigned long long)(ldsh + ld);
    }
    if (!xml)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s' is a NITF file without SICD XML: not a SICD",
                           path);
    sarbp_status st = SARBP_OK;
    sarbp_image *img = NULL;
    unsigned char *row = NULL;
    /* the array: SICD's NumRows x NumCols, pixel type, row and column spacing */
    const char *idata, *t, *gridel, *rowel, *colel;
    double nrows_d = 0, ncols_d = 0, row_ss = 0, col_ss = 0;
    char ptype[16] = "";
    if (!xml_find(xml, NULL, "ImageData", &idata) || !xml_double(xml, idata, "NumRows", &nrows_d) ||
        !xml_double(xml, idata, "NumCols", &ncols_d) || !xml_find(xml, idata, "PixelType", &t) ||
        !(gridel = xml_find(xml, NULL, "Grid", &t)) ||
        !(rowel = xml_find(xml, gridel, "Row", &t)) || !xml_double(xml, rowel, "SS", &row_ss) ||
        !(colel = xml_find(xml, gridel, "Col", &t)) || !xml_double(xml, colel, "SS", &col_ss)) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': the SICD XML lacks ImageData or Grid/Row, "
                         "Grid/Col spacings", path);
        goto done;
    }
    xml_find(xml, idata, "PixelType", &t);
    sscanf(t, "%15[A-Z0-9_]", ptype);
    if (strcmp(ptype, "RE32F_IM32F") && strcmp(ptype, "RE16I_IM16I")) {
        st = sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': SICD pixel type '%s' is not read (only "
                         "RE32F_IM32F and RE16I_IM16I)", path, ptype);
        goto done;
    }
    const size_t bpp = ptype[2] == '3' ? 8 : 4;
    if (!(nrows_d >= 1 && ncols_d >= 1 && nrows_d <= 1e9 && ncols_d <= 1e9 &&
          nrows_d * ncols_d <= (double)SARBP_GRID_MAX_PIXELS)) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': SICD of %g x %g pixels", path, nrows_d, ncols_d);
        goto done;
    }
    const size_t nrows = (size_t)nrows_d, ncols = (size_t)ncols_d;
    /* the image segments hold the rows in order, IMODE P (I then Q of
     * each pixel, big-endian) */
    unsigned long long rows_in = 0;
    for (long long i = 0; i < numi; i++) {
        char sub[1024];
        const size_t sl = im[i].sub_len < sizeof sub ? (size_t)im[i].sub_len : sizeof sub;
        if ((st = nitf_pread(f, path, im[i].sub_off, sub, sl))) goto done;
        const long long nr = nitf_num(sub, sl, 333, 8), nc = nitf_num(sub, sl, 341, 8);
        if (nr < 1 || nc != (long long)ncols ||
            im[i].data_len != (unsigned long long)nr * ncols * bpp ||
            im[i].data_off + im[i].data_len > fsize || memcmp(sub, "IM", 2)) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': image segment %lld is not %zu columns of "
                             "%s pixels", path, i + 1, ncols, ptype);
            goto done;
        }
        rows_in += (unsigned long long)nr;
    }
    if (rows_in != nrows) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': the image segments hold %llu rows, the SICD "
                         "says %zu", path, rows_in, nrows);
        goto done;
    }
    /* sarbp's own SICD: its grid and orientation; any other, the array */
    char gbuf[256], lbuf[256];
    sarbp_grid g = {.nx = ncols, .ny = nrows, .dx = col_ss, .dy = row_ss};
    long ix0 = 0, ixr = 0, ixc = 1, iy0 = 0, iyr = 1, iyc = 0;
    if (xml_param(xml, "sarbp_grid", gbuf, sizeof gbuf) &&
        xml_param(xml, "sarbp_layout", lbuf, sizeof lbuf)) {
        sarbp_grid h = {0};
        if (sscanf(gbuf, "%zu %zu %lf %lf %lf %lf %lf", &h.nx, &h.ny, &h.dx, &h.dy, &h.xc, &h.yc,
                   &h.zc) != 7 ||
            sscanf(lbuf, "%ld %ld %ld %ld %ld %ld", &ix0, &ixr, &ixc, &iy0, &iyr, &iyc) != 6 ||
            h.nx * h.ny != nrows * ncols || labs(ixr) + labs(ixc) != 1 ||
            labs(iyr) + labs(iyc) != 1 || labs(ixr) == labs(iyr)) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': bad sarbp_grid or sarbp_layout parameter",
                             path);
            goto done;
        }
        g = h;
    }
    if (sarbp_grid_validate(&g) != SARBP_OK) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': invalid grid: %s", path, sarbp_error_detail());
        goto done;
    }
    /* every corner of the array lands in the grid, so every pixel does */
    for (int k = 0; k < 4; k++) {
        const long r = k & 1 ? (long)nrows - 1 : 0, c = k & 2 ? (long)ncols - 1 : 0;
        const long ix = ix0 + ixr * r + ixc * c, iy = iy0 + iyr * r + iyc * c;
        if (ix < 0 || iy < 0 || (size_t)ix >= g.nx || (size_t)iy >= g.ny) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': sarbp_layout puts pixels outside the grid",
                             path);
            goto done;
        }
    }
    if ((st = sarbp_image_alloc(&g, &img))) goto done;
    img->has_grid_coords = 1;
    row = malloc(ncols * bpp);
    if (!row) {
        st = sarbp_error(SARBP_ERR_NOMEM, "cannot read '%s': out of memory", path);
        goto done;
    }
    size_t r = 0;
    for (long long i = 0; i < numi; i++) {
        const size_t nr = (size_t)(im[i].data_len / (ncols * bpp));
        if (fseeko(f, (off_t)im[i].data_off, SEEK_SET) != 0) {
            st = sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
        for (size_t k = 0; k < nr; k++, r++) {
            if (fread(row, 1, ncols * bpp, f) != ncols * bpp) {
                st = sarbp_error(SARBP_ERR_FORMAT, "cannot read '%s': the pixels end early", path);
                goto done;
            }
            for (size_t c = 0; c < ncols; c++) {
                const unsigned char *p = row + c * bpp;
                float v[2];
                for (int q = 0; q < 2; q++) {
                    if (bpp == 8) {
                        const uint32_t u = (uint32_t)p[4 * q] << 24 | (uint32_t)p[4 * q + 1] << 16 |
                                           (uint32_t)p[4 * q + 2] << 8 | p[4 * q + 3];
                        memcpy(&v[q], &u, 4);
                    } else {
                        v[q] = (float)(int16_t)(uint16_t)((unsigned)p[2 * q] << 8 | p[2 * q + 1]);
                    }
                }
                const long ix = ix0 + ixr * (long)r + ixc * (long)c;
                const long iy = iy0 + iyr * (long)r + iyc * (long)c;
                img->data[(size_t)iy * g.nx + (size_t)ix] = (sarbp_c32){v[0], v[1]};
            }
        }
    }
    /* the provenance parameters back as attributes (sarbp/image.h) */
    for (const char *p = xml; (p = strstr(p, "<Parameter name=\"")); p++) {
        char key[48];
        if (sscanf(p + 17, "%47[A-Za-z0-9_]", key) != 1) continue;
        if (!strcmp(key, "sarbp_grid") || !strcmp(key, "sarbp_layout")) continue;
        if (!strstr(xml, "<Type>sarbp backprojection</Type>")) break;
        char val[sizeof img->attrs[0].value];
        if (xml_param(p, key, val, sizeof val)) sarbp_image_set_attr(img, key, val);
    }
    sarbp_image_set_attr(img, "source_format", "SICD");

done:
    free(row);
    free(xml);
    if (st) {
        sarbp_image_free(img);
        return st;
    }
    *out = img;
    return SARBP_OK;
}

/* ---- dispatch ------------------------------------------------------------- */

sarbp_status sarbp_image_read(const char *path, sarbp_image **out)
{
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_read: no output pointer");
    *out = NULL;
    if (!path || !*path) return sarbp_error(SARBP_ERR_INVALID, "no image path given");
    FILE *f;
    SARBP_TRY(input_fopen(path, &f)); /* a regular file: a named pipe would block */
    unsigned char magic[8] = {0};
    size_t got = fread(magic, 1, sizeof magic, f);
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(e));
    }
    if (got >= 6 && !memcmp(magic, "\x93NUMPY", 6)) {
        sarbp_status st = read_npy(f, path, out);
        fclose(f);
        return st;
    }
    if (got >= 4 && !memcmp(magic, "NITF", 4)) {
        sarbp_status st = read_sicd(f, path, out);
        fclose(f);
        return st;
    }
    fclose(f);
    if (got >= 8 && !memcmp(magic, "\x89PNG\r\n\x1a\n", 8))
        return sarbp_error(SARBP_ERR_FORMAT,
                           "'%s' is a PNG, which holds magnitude only: read the .h5 or .npy image",
                           path);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (H5Fis_hdf5(path) > 0) {
        void *msg;
        size_t len;
        SARBP_TRY(probe_run_reply(path, "HDF5", probe_walk, NULL,
                                  sizeof(sarbp_image) + SARBP_GRID_MAX_PIXELS * sizeof(sarbp_c32),
                                  &msg, &len));
        if (!msg) return read_h5(path, out, 0); /* no probe, or a file too large for it */
        sarbp_status st = image_from_reply(path, msg, len, out);
        free(msg);
        return st;
    }
    return sarbp_error(SARBP_ERR_FORMAT, "'%s' is not a sarbp image (neither HDF5, .npy nor SICD)", path);
}
