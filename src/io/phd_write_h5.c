/* phd_write_h5.c - writing phase histories as HDF5: sarbp's own layout
 * (streaming, for convert) and Gotcha field names (for tests and interchange).
 *
 * Every file is written to a temporary beside the target (tempfile.h:
 * exclusive creation, fsync, rename) and renamed when complete, so a failure
 * or an interrupted run leaves no partial output. Reading is
 * phd_read_h5.c's. The layout, as docs/formats.md gives it:
 *
 * ## The sarbp-phd file (version 1)
 *
 * An HDF5 file. P pulses of K samples; positions in the scene frame
 * (right-handed, metres, z up, origin at the scene reference point).
 *
 * Root attributes:
 *
 * | attribute | type | meaning |
 * |---|---|---|
 * | `sarbp_format` | string | `"sarbp-phd"`: marks the layout |
 * | `sarbp_format_version` | int32 | `1`; a reader refuses versions newer than its own |
 * | `domain` | string | `"freq"`: deramped frequency samples (Gotcha); `"chirp"`: raw fast-time echoes |
 * | `creator` | string | the sarbp version that wrote the file (informative) |
 * | `fs`, `chirp_rate`, `pulse_len`, `fc`, `t0` | float64 | `chirp` only: sample rate (Hz), chirp rate (Hz/s), pulse length (s), carrier (Hz), two-way delay of sample 0 (s) |
 *
 * Datasets at the root (each with a `units` string attribute):
 *
 * | dataset | shape | type | meaning |
 * |---|---|---|---|
 * | `samples` | [P][K] | compound {`r`, `i`} float32 | the samples, one row per pulse; chunked by up to 64 pulses |
 * | `pos` | [P][3] | float64 | antenna phase centre x, y, z (m) |
 * | `r0` | [P] | float64 | range from the antenna phase centre to the scene origin (m) |
 * | `f0`, `df` | [P] | float64 | `freq` only: frequency of sample 0 and step (Hz); sample k is at f0 + k df |
 * | `th`, `phi` | [P] | float64 | optional: azimuth and elevation angle (deg) |
 * | `r_correct`, `ph_correct` | [P] | float64 | optional: Gotcha autofocus, r0 correction (m) and phase correction (rad), not applied |
 *
 * Readers ignore attributes and datasets they do not know: a later version
 * may add optional ones without a new version number; the number changes
 * only when a version-1 reader would misread the file. */
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/phd_io_internal.h"
#include "sarbp/phd_io.h"
#include "io/tempfile.h"

#ifndef SARBP_VERSION_STRING
#define SARBP_VERSION_STRING "unknown"
#endif

/* ---- temporary file, commit ----------------------------------------------- */

/* An HDF5 file created in a fresh temporary beside path (HDF5 reopens the
 * temporary we created exclusively, through its descriptor's name). Errors
 * name path the way the user gave it. */
static sarbp_status create_temp(const char *path, sarbp_tempfile **tmp, hid_t *file)
{
    *file = -1;
    SARBP_TRY(sarbp_tempfile_create(path, tmp));
    phd_h5_quiet();
    sarbp_status st;
    hid_t fapl = -1;
    if ((st = PHD_H5(path, fapl = H5Pcreate(H5P_FILE_ACCESS))) == SARBP_OK &&
        (st = PHD_H5(path, H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG))) == SARBP_OK)
        st = PHD_H5(path, *file = H5Fcreate(sarbp_tempfile_open_name(*tmp), H5F_ACC_TRUNC,
                                             H5P_DEFAULT, fapl));
    if (fapl >= 0) H5Pclose(fapl);
    if (st != SARBP_OK) {
        sarbp_tempfile_delete(*tmp);
        *tmp = NULL;
        *file = -1;
    }
    return st;
}

/* Closes file and renames the temporary to its path; on any failure the
 * temporary is removed. tmp is freed either way. */
static sarbp_status commit_temp(const char *path, sarbp_tempfile *tmp, hid_t file)
{
    sarbp_status st = PHD_H5(path, H5Fclose(file));
    if (st != SARBP_OK) {
        sarbp_tempfile_delete(tmp);
        return st;
    }
    return sarbp_tempfile_commit(tmp);
}

/* ---- small writers -------------------------------------------------------- */

static sarbp_status write_str_attr(const char *path, hid_t obj, const char *name,
                                   const char *value)
{
    hid_t t = -1, sp = -1, a = -1;
    sarbp_status st;
    if ((st = PHD_H5(path, t = H5Tcopy(H5T_C_S1)))) goto done;
    if ((st = PHD_H5(path, H5Tset_size(t, strlen(value) + 1)))) goto done;
    if ((st = PHD_H5(path, H5Tset_strpad(t, H5T_STR_NULLTERM)))) goto done;
    if ((st = PHD_H5(path, sp = H5Screate(H5S_SCALAR)))) goto done;
    if ((st = PHD_H5(path, a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)))) goto done;
    st = PHD_H5(path, H5Awrite(a, t, value));
done:
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    return st;
}

/* A scalar attribute stored as file_type from memory mem_type at v. */
static sarbp_status write_num_attr(const char *path, hid_t obj, const char *name,
                                   hid_t file_type, hid_t mem_type, const void *v)
{
    hid_t sp = -1, a = -1;
    sarbp_status st;
    if ((st = PHD_H5(path, sp = H5Screate(H5S_SCALAR)))) goto done;
    if ((st = PHD_H5(path, a = H5Acreate2(obj, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT))))
        goto done;
    st = PHD_H5(path, H5Awrite(a, mem_type, v));
done:
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    return st;
}

/* A float64 dataset of rank 1 or 2 from v (row-major); units may be NULL. */
static sarbp_status write_doubles(const char *path, hid_t loc, const char *name, int rank,
                                  const hsize_t *dims, const double *v, const char *units)
{
    hid_t sp = -1, d = -1;
    sarbp_status st;
    if ((st = PHD_H5(path, sp = H5Screate_simple(rank, dims, NULL)))) goto done;
    if ((st = PHD_H5(path, d = H5Dcreate2(loc, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                          H5P_DEFAULT))))
        goto done;
    if ((st = PHD_H5(path, H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v))))
        goto done;
    if (units) st = write_str_attr(path, d, "units", units);
done:
    if (d >= 0) H5Dclose(d);
    if (sp >= 0) H5Sclose(sp);
    return st;
}

/* Compound {re_name, im_name} of two floats: stored as little-endian IEEE
 * (file) or as sarbp_c32 in memory. */
static sarbp_status complex_type(const char *path, int in_memory, const char *re_name,
                                 const char *im_name, hid_t *t)
{
    hid_t member = in_memory ? H5T_NATIVE_FLOAT : H5T_IEEE_F32LE;
    sarbp_status st;
    if ((st = PHD_H5(path, *t = H5Tcreate(H5T_COMPOUND, sizeof(sarbp_c32))))) return st;
    if ((st = PHD_H5(path, H5Tinsert(*t, re_name, offsetof(sarbp_c32, re), member))) ||
        (st = PHD_H5(path, H5Tinsert(*t, im_name, offsetof(sarbp_c32, im), member)))) {
        H5Tclose(*t);
        *t = -1;
    }
    return st;
}

static sarbp_status check_finite(const char *path, size_t p0, size_t np, size_t k,
                                 const sarbp_c32 *src)
{
    for (size_t i = 0; i < np * k; i++)
        if (!isfinite(src[i].re) || !isfinite(src[i].im))
            return sarbp_error(SARBP_ERR_INVALID,
                               "cannot write '%s': sample %zu of pulse %zu is NaN or Inf", path,
                               i % k, p0 + i / k);
    return SARBP_OK;
}

/* ---- sarbp's own layout, streamed ----------------------------------------- */

struct sarbp_phd_writer_s {
    char *path;
    sarbp_tempfile *tmp;
    hid_t file, samples, memtype;
    size_t npulses, nsamples, next;
};

static sarbp_status write_meta(sarbp_phd_writer *w, const sarbp_phd *m)
{
    const char *path = w->path;
    hid_t file = w->file;
    const int version = SARBP_PHD_FORMAT_VERSION;
    SARBP_TRY(write_str_attr(path, file, "sarbp_format", SARBP_PHD_FORMAT_NAME));
    SARBP_TRY(write_num_attr(path, file, "sarbp_format_version", H5T_STD_I32LE, H5T_NATIVE_INT,
                             &version));
    SARBP_TRY(write_str_attr(path, file, "domain",
                             m->domain == SARBP_DOMAIN_FREQ ? "freq" : "chirp"));
    SARBP_TRY(write_str_attr(path, file, "creator", "sarbp " SARBP_VERSION_STRING));
    if (m->domain == SARBP_DOMAIN_CHIRP) {
        const struct { const char *name; double v; } scal[] = {
            {"fs", m->fs}, {"chirp_rate", m->chirp_rate}, {"pulse_len", m->pulse_len},
            {"fc", m->fc}, {"t0", m->t0},
        };
        for (size_t j = 0; j < sizeof scal / sizeof scal[0]; j++)
            SARBP_TRY(write_num_attr(path, file, scal[j].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                     &scal[j].v));
    }
    hsize_t dims[2] = {m->npulses, 3};
    SARBP_TRY(write_doubles(path, file, "pos", 2, dims, m->pos, "m"));
    const struct { const char *name; const double *v; const char *units; } vec[] = {
        {"r0", m->r0, "m"}, {"f0", m->f0, "Hz"}, {"df", m->df, "Hz"},
        {"th", m->th, "deg"}, {"phi", m->phi, "deg"},
        {"r_correct", m->r_correct, "m"}, {"ph_correct", m->ph_correct, "rad"},
    };
    for (size_t j = 0; j < sizeof vec / sizeof vec[0]; j++)
        if (vec[j].v) SARBP_TRY(write_doubles(path, file, vec[j].name, 1, dims, vec[j].v,
                                              vec[j].units));
    return SARBP_OK;
}

static sarbp_status create_samples(sarbp_phd_writer *w, const sarbp_phd *m)
{
    const char *path = w->path;
    hsize_t dims[2] = {m->npulses, m->nsamples};
    size_t rows = ((size_t)1 << 20) / (m->nsamples * sizeof(sarbp_c32)); /* ~1 MiB chunks */
    if (rows > 64) rows = 64;
    if (rows < 1) rows = 1;
    if (rows > m->npulses) rows = m->npulses;
    hsize_t chunk[2] = {rows, m->nsamples < ((size_t)1 << 24) ? m->nsamples : (size_t)1 << 24};
    hid_t ft = -1, sp = -1, dcpl = -1;
    sarbp_status st;
    if ((st = complex_type(path, 0, "r", "i", &ft))) goto done;
    if ((st = complex_type(path, 1, "r", "i", &w->memtype))) goto done;
    if ((st = PHD_H5(path, sp = H5Screate_simple(2, dims, NULL)))) goto done;
    if ((st = PHD_H5(path, dcpl = H5Pcreate(H5P_DATASET_CREATE)))) goto done;
    if ((st = PHD_H5(path, H5Pset_chunk(dcpl, 2, chunk)))) goto done;
    if ((st = PHD_H5(path, w->samples = H5Dcreate2(w->file, "samples", ft, sp, H5P_DEFAULT, dcpl,
                                                   H5P_DEFAULT))))
        goto done;
    st = write_str_attr(path, w->samples, "units", "1");
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    return st;
}

sarbp_status sarbp_phd_writer_open(const char *path, const sarbp_phd *meta, sarbp_phd_writer **out)
{
    *out = NULL;
    sarbp_status st = sarbp_phd_validate(meta);
    if (st != SARBP_OK) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", sarbp_error_detail());
        return sarbp_error(st, "cannot write '%s': %s", path, detail);
    }
    sarbp_phd_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    w->file = w->samples = w->memtype = -1;
    w->npulses = meta->npulses;
    w->nsamples = meta->nsamples;
    st = create_temp(path, &w->tmp, &w->file);
    if (st == SARBP_OK) st = write_meta(w, meta);
    if (st == SARBP_OK) st = create_samples(w, meta);
    if (st != SARBP_OK) {
        sarbp_phd_writer_free(w);
        return st;
    }
    *out = w;
    return SARBP_OK;
}

sarbp_status sarbp_phd_writer_write(sarbp_phd_writer *w, size_t p0, size_t np,
                                    const sarbp_c32 *src)
{
    if (w->file < 0) return sarbp_error(SARBP_ERR_INVALID, "'%s' is already closed", w->path);
    if (p0 != w->next || np > w->npulses - w->next)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write pulses %zu:%zu of '%s': %zu of %zu "
                           "written, blocks must come in order", p0, p0 + np, w->path, w->next,
                           w->npulses);
    if (np == 0) return SARBP_OK;
    SARBP_TRY(check_finite(w->path, p0, np, w->nsamples, src));
    hsize_t start[2] = {p0, 0}, count[2] = {np, w->nsamples};
    hid_t fs = -1, ms = -1;
    sarbp_status st;
    if ((st = PHD_H5(w->path, fs = H5Dget_space(w->samples)))) goto done;
    if ((st = PHD_H5(w->path, H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL))))
        goto done;
    if ((st = PHD_H5(w->path, ms = H5Screate_simple(2, count, NULL)))) goto done;
    if ((st = PHD_H5(w->path, H5Dwrite(w->samples, w->memtype, ms, fs, H5P_DEFAULT, src))))
        goto done;
    w->next += np;
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return st;
}

static void close_handles(sarbp_phd_writer *w)
{
    if (w->samples >= 0) H5Dclose(w->samples);
    if (w->memtype >= 0) H5Tclose(w->memtype);
    w->samples = w->memtype = -1;
}

sarbp_status sarbp_phd_writer_commit(sarbp_phd_writer *w)
{
    if (w->file < 0) return sarbp_error(SARBP_ERR_INVALID, "'%s' is already closed", w->path);
    if (w->next != w->npulses)
        return sarbp_error(SARBP_ERR_INVALID, "cannot finish '%s': %zu of %zu pulses written",
                           w->path, w->next, w->npulses);
    /* closing the samples flushes their chunk cache: a full disk shows here */
    sarbp_status st = PHD_H5(w->path, H5Dclose(w->samples));
    w->samples = -1;
    close_handles(w);
    hid_t file = w->file;
    w->file = -1;
    if (st == SARBP_OK) {
        st = commit_temp(w->path, w->tmp, file);
    } else {
        H5Fclose(file);
        sarbp_tempfile_delete(w->tmp);
    }
    w->tmp = NULL; /* renamed, or removed */
    return st;
}

void sarbp_phd_writer_free(sarbp_phd_writer *w)
{
    if (!w) return;
    close_handles(w);
    if (w->file >= 0) H5Fclose(w->file);
    sarbp_tempfile_delete(w->tmp);
    H5Eclear2(H5E_DEFAULT);
    free(w->path);
    free(w);
}

sarbp_status sarbp_phd_write_h5(const char *path, const sarbp_phd *phd)
{
    if (!phd || !phd->data)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': no samples", path);
    sarbp_phd_writer *w;
    SARBP_TRY(sarbp_phd_writer_open(path, phd, &w));
    sarbp_status st = sarbp_phd_writer_write(w, 0, phd->npulses, phd->data);
    if (st == SARBP_OK) st = sarbp_phd_writer_commit(w);
    sarbp_phd_writer_free(w);
    return st;
}

/* ---- Gotcha field names --------------------------------------------------- */

static sarbp_status write_gotcha(const char *path, hid_t file, const sarbp_phd *p)
{
    size_t np = p->npulses, k = p->nsamples;
    hid_t g = -1, af = -1, ft = -1, mt = -1, sp = -1, d = -1;
    double *buf = malloc((np > k ? np : k) * sizeof *buf);
    sarbp_status st;
    if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    if ((st = PHD_H5(path, g = H5Gcreate2(file, "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT))))
        goto done;
    hsize_t dims[2] = {np, k};
    if ((st = complex_type(path, 0, "real", "imag", &ft))) goto done;
    if ((st = complex_type(path, 1, "real", "imag", &mt))) goto done;
    if ((st = PHD_H5(path, sp = H5Screate_simple(2, dims, NULL)))) goto done;
    if ((st = PHD_H5(path, d = H5Dcreate2(g, "fp", ft, sp, H5P_DEFAULT, H5P_DEFAULT,
                                          H5P_DEFAULT))))
        goto done;
    if ((st = PHD_H5(path, H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->data)))) goto done;
    for (size_t i = 0; i < k; i++) buf[i] = p->f0[0] + (double)i * p->df[0];
    hsize_t nk = k, npd = np;
    if ((st = write_doubles(path, g, "freq", 1, &nk, buf, NULL))) goto done;
    static const char *const xyz[] = {"x", "y", "z"};
    for (int c = 0; c < 3; c++) {
        for (size_t i = 0; i < np; i++) buf[i] = p->pos[3 * i + c];
        if ((st = write_doubles(path, g, xyz[c], 1, &npd, buf, NULL))) goto done;
    }
    if ((st = write_doubles(path, g, "r0", 1, &npd, p->r0, NULL))) goto done;
    if (p->th && (st = write_doubles(path, g, "th", 1, &npd, p->th, NULL))) goto done;
    if (p->phi && (st = write_doubles(path, g, "phi", 1, &npd, p->phi, NULL))) goto done;
    if (p->r_correct || p->ph_correct) {
        if ((st = PHD_H5(path, af = H5Gcreate2(g, "af", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT))))
            goto done;
        if (p->r_correct &&
            (st = write_doubles(path, af, "r_correct", 1, &npd, p->r_correct, NULL)))
            goto done;
        if (p->ph_correct &&
            (st = write_doubles(path, af, "ph_correct", 1, &npd, p->ph_correct, NULL)))
            goto done;
    }
done:
    if (d >= 0) H5Dclose(d);
    if (sp >= 0) H5Sclose(sp);
    if (mt >= 0) H5Tclose(mt);
    if (ft >= 0) H5Tclose(ft);
    if (af >= 0) H5Gclose(af);
    if (g >= 0) H5Gclose(g);
    free(buf);
    return st;
}

sarbp_status sarbp_phd_write_gotcha_h5(const char *path, const sarbp_phd *phd)
{
    if (!phd || !phd->data)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': no samples", path);
    if (phd->domain != SARBP_DOMAIN_FREQ)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': the Gotcha layout holds "
                           "frequency-domain data only", path);
    sarbp_status st = sarbp_phd_validate(phd);
    if (st != SARBP_OK) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", sarbp_error_detail());
        return sarbp_error(st, "cannot write '%s': %s", path, detail);
    }
    for (size_t i = 1; i < phd->npulses; i++)
        if (phd->f0[i] != phd->f0[0] || phd->df[i] != phd->df[0])
            return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': start frequency or step "
                               "varies between pulses (pulse %zu); the Gotcha layout holds one "
                               "frequency vector", path, i);
    sarbp_tempfile *tmp;
    hid_t file;
    SARBP_TRY(create_temp(path, &tmp, &file));
    st = write_gotcha(path, file, phd);
    if (st == SARBP_OK) {
        st = commit_temp(path, tmp, file);
    } else {
        H5Fclose(file);
        H5Eclear2(H5E_DEFAULT);
        sarbp_tempfile_delete(tmp);
    }
    return st;
}
