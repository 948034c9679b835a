/* heights_read.c - height arrays on the image grid (sarbp/terrain.h):
 * .npy or an HDF5 dataset of float32/float64 [ny][nx], checked against the
 * grid before anything is allocated and value by value after; the check
 * every height source passes; the hill of the simulator and the tests.
 * The GeoTIFF DEM is dem_read.c's. */
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
#include "io/safe_size.h"
#include "sarbp/terrain.h"

sarbp_status sarbp_heights_check(const double *h, size_t nx, size_t ny, const char *what)
{
    for (size_t i = 0; i < nx * ny; i++)
        if (!isfinite(h[i]) || fabs(h[i]) > SARBP_HEIGHT_LIMIT)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': height %g at pixel (%zu, %zu) is %s", what,
                               h[i], i % nx, i / nx,
                               isfinite(h[i]) ? "beyond +-12 km of the scene reference"
                                              : "not a number");
    return SARBP_OK;
}

void sarbp_hill_heights(const sarbp_grid *g, double H, double R, double sx, double sy, double *out)
{
    for (size_t iy = 0; iy < g->ny; iy++)
        for (size_t ix = 0; ix < g->nx; ix++)
            out[iy * g->nx + ix] = sarbp_hill_z(H, R, sx, sy, sarbp_grid_x(g, ix), sarbp_grid_y(g, iy));
}

/* ---- .npy ------------------------------------------------------------------ */

/* The value of key in a .npy header dictionary, or NULL. */
static const char *npy_value(const char *h, const char *key)
{
    char q[40];
    snprintf(q, sizeof q, "'%s'", key);
    const char *p = strstr(h, q);
    if (!p) {
        snprintf(q, sizeof q, "\"%s\"", key);
        p = strstr(h, q);
    }
    if (!p) return NULL;
    p += strlen(q);
    while (isspace((unsigned char)*p)) p++;
    if (*p != ':') return NULL;
    p++;
    while (isspace((unsigned char)*p)) p++;
    return p;
}

static sarbp_status npy_heights(const char *path, size_t nx, size_t ny, double *out)
{
    FILE *f;
    SARBP_TRY(input_fopen(path, &f));
    sarbp_status st = SARBP_OK;
    char *h = NULL;
    unsigned char pre[12];
    size_t hlen = 0;
    long off = 0;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' is not a .npy file", path);
        goto done;
    }
    if (pre[6] == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
        off = 10;
    } else if ((pre[6] == 2 || pre[6] == 3) && fread(pre + 10, 1, 2, f) == 2) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        off = 12;
    }
    if (hlen < 10 || hlen > (1u << 16) || !(h = malloc(hlen + 1)) || fread(h, 1, hlen, f) != hlen) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': bad or truncated .npy header", path);
        goto done;
    }
    h[hlen] = '\0';
    const char *d = npy_value(h, "descr"), *fo = npy_value(h, "fortran_order"),
               *sh = npy_value(h, "shape");
    int width = 0, big = 0;
    if (d && (!strncmp(d, "'<f4'", 5) || !strncmp(d, "'<f8'", 5) || !strncmp(d, "'>f4'", 5) ||
              !strncmp(d, "'>f8'", 5))) {
        width = d[3] == '4' ? 4 : 8;
        big = d[1] == '>';
    }
    if (!width) {
        char got[16] = "?";
        if (d) snprintf(got, sizeof got, "%.*s", (int)strcspn(d, ",}"), d);
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' holds %s data; heights are float32 or float64 "
                         "('<f4', '<f8')", path, got);
        goto done;
    }
    if (!fo || strncmp(fo, "False", 5)) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' is not in C order (fortran_order must be False)", path);
        goto done;
    }
    unsigned long long dims[3];
    int nd = 0;
    if (sh && *sh == '(') {
        const char *p = sh + 1;
        for (;;) {
            while (isspace((unsigned char)*p)) p++;
            if (*p == ')') break;
            if (!isdigit((unsigned char)*p) || nd >= 3) {
                nd = -1;
                break;
            }
            char *e;
            errno = 0;
            dims[nd++] = strtoull(p, &e, 10);
            if (errno) {
                nd = -1;
                break;
            }
            p = e;
            while (isspace((unsigned char)*p)) p++;
            if (*p == ',') p++;
        }
    }
    if (nd != 2 || dims[0] != ny || dims[1] != nx) {
        if (nd == 2)
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s' holds heights of shape (%llu, %llu); the image "
                             "grid is (%zu, %zu) (ny, nx)", path, dims[0], dims[1], ny, nx);
        else
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s' is not a 2-D array (ny, nx) = (%zu, %zu)", path,
                             ny, nx);
        goto done;
    }
    struct stat sb;
    size_t need;
    if (fstat(fileno(f), &sb) != 0 || !size_mul3(nx, ny, (size_t)width, &need) ||
        (unsigned long long)sb.st_size < (unsigned long long)off + hlen + need) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' is truncated: %zu x %zu heights do not fit in it",
                         path, nx, ny);
        goto done;
    }
    unsigned char buf[8 * 1024];
    const size_t per = sizeof buf / (size_t)width;
    for (size_t i = 0; i < nx * ny; i += per) {
        const size_t n = nx * ny - i < per ? nx * ny - i : per;
        if (fread(buf, (size_t)width, n, f) != n) {
            st = sarbp_error(SARBP_ERR_IO, "cannot read '%s': short read", path);
            goto done;
        }
        for (size_t k = 0; k < n; k++) {
            unsigned char b[8];
            for (int j = 0; j < width; j++) b[j] = buf[k * (size_t)width + (size_t)(big ? width - 1 - j : j)];
            if (width == 4) { /* little-endian bytes -> host */
                uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                float v;
                memcpy(&v, &u, 4);
                out[i + k] = v;
            } else {
                uint64_t u = 0;
                for (int j = 7; j >= 0; j--) u = u << 8 | b[j];
                double v;
                memcpy(&v, &u, 8);
                out[i + k] = v;
            }
        }
    }
done:
    free(h);
    fclose(f);
    return st;
}

/* ---- HDF5 ------------------------------------------------------------------ */

static sarbp_status h5_heights(const char *path, const char *name, size_t nx, size_t ny, double *out)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    SARBP_TRY(input_check(path));
    sarbp_status st = SARBP_OK;
    hid_t file = -1, d = -1, sp = -1, t = -1;
    if ((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        st = sarbp_error(SARBP_ERR_FORMAT, "cannot open '%s' as HDF5", path);
        goto done;
    }
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0 || (d = H5Dopen2(file, name, H5P_DEFAULT)) < 0) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' has no dataset '%s'", path, name);
        goto done;
    }
    if ((t = H5Dget_type(d)) < 0 || H5Tget_class(t) != H5T_FLOAT ||
        (H5Tget_size(t) != 4 && H5Tget_size(t) != 8)) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' is not float32 or float64", path, name);
        goto done;
    }
    if ((st = h5_check_number_type(path, name, t))) goto done;
    hsize_t dims[3] = {0, 0, 0};
    if ((sp = H5Dget_space(d)) < 0 || H5Sget_simple_extent_ndims(sp) != 2 ||
        H5Sget_simple_extent_dims(sp, dims, NULL) != 2 || dims[0] != ny || dims[1] != nx) {
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': dataset '%s' has shape (%llu, %llu); the image "
                         "grid is (%zu, %zu) (ny, nx)", path, name, (unsigned long long)dims[0],
                         (unsigned long long)dims[1], ny, nx);
        goto done;
    }
    size_t count;
    if ((st = h5_check_dataset(path, name, d, &count))) goto done;
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        st = sarbp_error(SARBP_ERR_FORMAT, "cannot read dataset '%s' of '%s'", name, path);
done:
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    if (file >= 0) H5Fclose(file);
    H5Eclear2(H5E_DEFAULT);
    return st;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    const size_t k = strlen(suffix);
    if (n < k) return 0;
    for (size_t i = 0; i < k; i++)
        if (tolower((unsigned char)s[n - k + i]) != suffix[i]) return 0;
    return 1;
}

sarbp_status sarbp_heights_read(const char *spec, const sarbp_grid *g, double **out)
{
    *out = NULL;
    if (!spec || !*spec) return sarbp_error(SARBP_ERR_INVALID, "no heights file given");
    SARBP_TRY(sarbp_grid_validate(g));
    if (g->ny_full || g->row0)
        return sarbp_error(SARBP_ERR_INVALID, "heights are read for a whole grid, not a band");
    /* FILE.h5:/PATH: the last ':' after an HDF5 name ending */
    char file[4096];
    const char *dset = "/heights";
    const char *colon = strrchr(spec, ':');
    size_t flen = strlen(spec);
    if (colon && colon[1] == '/' &&
        (ends_with(spec, (size_t)(colon - spec), ".h5") || ends_with(spec, (size_t)(colon - spec), ".hdf5"))) {
        flen = (size_t)(colon - spec);
        dset = colon + 1;
    }
    if (flen >= sizeof file) return sarbp_error(SARBP_ERR_INVALID, "heights file name is too long");
    memcpy(file, spec, flen);
    file[flen] = '\0';
    const int h5 = ends_with(file, flen, ".h5") || ends_with(file, flen, ".hdf5");
    if (!h5 && !ends_with(file, flen, ".npy"))
        return sarbp_error(SARBP_ERR_INVALID, "heights file '%s': give a .npy, or an HDF5 file as "
                           "FILE.h5[:/DATASET]", spec);
    double *h = malloc(g->nx * g->ny * sizeof *h); /* the grid is validated: no overflow */
    if (!h) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu x %zu heights", g->nx, g->ny);
    sarbp_status st = h5 ? h5_heights(file, dset, g->nx, g->ny, h) : npy_heights(file, g->nx, g->ny, h);
    if (!st) st = sarbp_heights_check(h, g->nx, g->ny, file);
    if (st) {
        free(h);
        return st;
    }
    *out = h;
    return SARBP_OK;
}
