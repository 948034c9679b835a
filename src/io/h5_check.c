/* h5_check.c - HDF5 datasets checked against the file that holds them
 * (see h5_check.h). Reads only metadata: dataspace, type, layout, chunk
 * index; never the data. */
#include "io/h5_check.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "io/safe_size.h"

static void shape_str(const hsize_t *dims, int rank, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    if (rank == 0) snprintf(buf, n, "1");
    for (int r = 0; r < rank && used < n; r++)
        used += (size_t)snprintf(buf + used, n - used, "%s%llu", r ? " x " : "",
                                 (unsigned long long)dims[r]);
}

static sarbp_status h5_fail(const char *path, const char *name, const char *call)
{
    H5Eclear2(H5E_DEFAULT);
    return sarbp_error(SARBP_ERR_HDF5, "'%s': dataset '%s': %s failed", path, name, call);
}

/* Layout-specific checks: where the bytes of a dataset of `bytes` declared
 * bytes live, in a file of fsize bytes. */
static sarbp_status check_layout(const char *path, const char *name, hid_t d, hid_t pl,
                                 hid_t sp, int rank, const hsize_t *dims, const char *shape,
                                 size_t bytes, unsigned long long fsize)
{
    char hb[32], hf[32], hs[32];
    size_human((double)bytes, hb, sizeof hb);
    size_human((double)fsize, hf, sizeof hf);
    H5D_layout_t layout = H5Pget_layout(pl);
    int nfilters = H5Pget_nfilters(pl);
    int next = H5Pget_external_count(pl);
    if (layout < 0 || nfilters < 0 || next < 0) return h5_fail(path, name, "H5Pget_layout");
    if (next > 0 || layout == H5D_VIRTUAL)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' keeps its data in other files "
                           "(external or virtual storage), which sarbp does not read", path, name);
    if (bytes == 0) return SARBP_OK;
    if (layout == H5D_CONTIGUOUS) {
        haddr_t off = H5Dget_offset(d);
        H5Eclear2(H5E_DEFAULT);
        if (off == HADDR_UNDEF)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' declares %s values (%s) "
                               "but none were written", path, name, shape, hb);
        if (bytes > fsize || off > fsize - bytes)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' declares %s values (%s) "
                               "at byte %llu but the file holds %s", path, name, shape, hb,
                               (unsigned long long)off, hf);
        return SARBP_OK;
    }
    if (layout != H5D_CHUNKED) return SARBP_OK; /* compact: inside the object header */
    hsize_t chunk[H5S_MAX_RANK];
    if (H5Pget_chunk(pl, H5S_MAX_RANK, chunk) != rank) return h5_fail(path, name, "H5Pget_chunk");
    size_t expected = 1;
    for (int r = 0; r < rank; r++) {
        if (chunk[r] == 0) return h5_fail(path, name, "H5Pget_chunk");
        size_t per = (size_t)((dims[r] + chunk[r] - 1) / chunk[r]);
        if (!size_mul(expected, per, &expected)) break;
    }
    hsize_t nchunks = 0;
    if (H5Dget_num_chunks(d, sp, &nchunks) < 0) return h5_fail(path, name, "H5Dget_num_chunks");
    if (nchunks != expected)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' declares %s values (%s) in "
                           "%zu chunks but the file holds %llu of them (%s)", path, name, shape,
                           hb, expected, (unsigned long long)nchunks, hf);
    hsize_t stored = H5Dget_storage_size(d);
    H5Eclear2(H5E_DEFAULT);
    size_human((double)stored, hs, sizeof hs);
    if (stored > fsize)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' claims %s of storage but the "
                           "file holds %s", path, name, hs, hf);
    if (nfilters == 0 ? stored < bytes : bytes / H5_CHECK_MAX_EXPANSION > stored)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' declares %s values (%s) but "
                           "stores %s%s", path, name, shape, hb, hs,
                           nfilters ? ", more than compression can explain" : "");
    return SARBP_OK;
}

sarbp_status h5_check_dataset(const char *path, const char *name, hid_t d, size_t *count)
{
    *count = 0;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    const unsigned long long fsize = (unsigned long long)sb.st_size;
    hid_t sp = -1, t = -1, pl = -1;
    sarbp_status st = SARBP_OK;
    hsize_t dims[H5S_MAX_RANK];
    int rank;
    if ((sp = H5Dget_space(d)) < 0 || (rank = H5Sget_simple_extent_ndims(sp)) < 0 ||
        H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
        st = h5_fail(path, name, "H5Dget_space");
        goto done;
    }
    char shape[160], hf[32];
    shape_str(dims, rank, shape, sizeof shape);
    size_human((double)fsize, hf, sizeof hf);
    size_t n = 1, tsize, bytes;
    int ok = 1;
    for (int r = 0; r < rank && ok; r++) ok = dims[r] <= SIZE_MAX && size_mul(n, (size_t)dims[r], &n);
    if ((t = H5Dget_type(d)) < 0 || (tsize = H5Tget_size(t)) == 0) {
        st = h5_fail(path, name, "H5Dget_type");
        goto done;
    }
    if (!ok || !size_mul(n, tsize, &bytes)) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' declares %s values, more than "
                         "any file holds (the file holds %s)", path, name, shape, hf);
        goto done;
    }
    if ((pl = H5Dget_create_plist(d)) < 0) {
        st = h5_fail(path, name, "H5Dget_create_plist");
        goto done;
    }
    st = check_layout(path, name, d, pl, sp, rank, dims, shape, bytes, fsize);
    if (st == SARBP_OK) *count = n;
done:
    if (pl >= 0) H5Pclose(pl);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    return st;
}

/* ---- types ---------------------------------------------------------------- */

static sarbp_status bad_type(const char *path, const char *name, const char *what)
{
    H5Eclear2(H5E_DEFAULT);
    return sarbp_error(SARBP_ERR_FORMAT, "'%s': '%s' has a malformed number type (%s)", path,
                       name, what);
}

sarbp_status h5_check_number_type(const char *path, const char *name, hid_t t)
{
    H5T_class_t cls = H5Tget_class(t);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) return bad_type(path, name, "not a number");
    size_t size = H5Tget_size(t), prec = H5Tget_precision(t);
    int off = H5Tget_offset(t);
    if (size == 0 || size > 16) return bad_type(path, name, "size");
    if (prec == 0 || off < 0 || prec + (size_t)off > 8 * size)
        return bad_type(path, name, "precision and offset");
    if (cls == H5T_FLOAT) {
        size_t spos, epos, esize, mpos, msize;
        if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0)
            return bad_type(path, name, "float fields");
        if (spos >= prec || esize == 0 || esize > 64 || epos + esize > prec || msize == 0 ||
            mpos + msize > prec)
            return bad_type(path, name, "float fields");
    }
    return SARBP_OK;
}

sarbp_status h5_check_complex_type(const char *path, const char *name, hid_t t, unsigned a,
                                   unsigned b)
{
    size_t size = H5Tget_size(t);
    int n = H5Tget_nmembers(t);
    if (size == 0 || n < 0) return bad_type(path, name, "compound");
    for (int i = 0; i < n; i++) {
        hid_t mt = H5Tget_member_type(t, (unsigned)i);
        if (mt < 0) return bad_type(path, name, "compound member");
        size_t off = H5Tget_member_offset(t, (unsigned)i), msize = H5Tget_size(mt);
        sarbp_status st = SARBP_OK;
        if (msize == 0 || off > size || msize > size - off)
            st = bad_type(path, name, "a compound member lies outside the compound");
        else if ((unsigned)i == a || (unsigned)i == b)
            st = h5_check_number_type(path, name, mt);
        H5Tclose(mt);
        if (st) return st;
    }
    return SARBP_OK;
}
