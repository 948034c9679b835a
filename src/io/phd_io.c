/* phd_io.c - the phase-history reader: inputs to files, files to pulses.
 *
 * Expands the inputs (files, directories, glob patterns), detects each file's
 * format from its content, lets the format module load the metadata, checks
 * it, orders the files by the azimuth of their first pulse and concatenates
 * their metadata, refusing files whose azimuths repeat or overlap (HH and
 * VV copies of one pass) unless a polarisation is chosen; the polarisation
 * comes from a CPHD channel, a sarbp-phd attribute or Gotcha's names.
 * Samples stay in the files: sarbp_reader_read maps a block of
 * pulses onto the files and asks each for its part, so sample memory is the
 * caller's block. At most one input file is open at a time.
 *
 * It does not parse any format itself (phd_read_h5.c, phd_read_mat.c) and
 * does not write (phd_write_h5.c). */
#include "sarbp/phd_io.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "io/input_file.h"
#include "io/phd_io_internal.h"
#include "io/probe.h"

struct sarbp_reader_s {
    struct phd_file *files; /* nfiles, in azimuth order */
    size_t nfiles;
    size_t *first;          /* [nfiles + 1]: file i holds pulses [first[i], first[i + 1]) */
    sarbp_phd *all;         /* every pulse as the files give them; data NULL */
    sarbp_phd *vbuf;        /* owns the arrays of view (sized for every pulse) */
    sarbp_phd view;         /* pulses [sel0, sel1), autofocus applied: what meta() returns */
    size_t sel0, sel1;
    int autofocus;
    double *phase;          /* [sel1 - sel0] or NULL: a phase per selected pulse (set_phase) */
    double *range;          /* [sel1 - sel0] or NULL: a range per selected pulse (set_range) */
    size_t open_file;       /* the file whose handle is open, or nfiles for none */
    sarbp_collection coll;  /* the inputs' (or the caller's) geographic reference */
    double *t_all;          /* every pulse's time, NULL unless every file has times */
    double *t_view;         /* the selected pulses' times (sized for every pulse) */
};

/* Re-records the current error detail as "'path': detail". */
static sarbp_status prefixed(sarbp_status s, const char *path)
{
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", sarbp_error_detail());
    return sarbp_error(s, "'%s': %s", path, detail);
}

sarbp_status phd_freq_step(const char *path, const double *freq, size_t k, double *f0, double *df)
{
    if (k < 2)
        return sarbp_error(SARBP_ERR_INVALID, "'%s': %zu frequency samples; need at least 2",
                           path, k);
    for (size_t i = 0; i < k; i++)
        if (!isfinite(freq[i]))
            return sarbp_error(SARBP_ERR_INVALID, "'%s': frequency sample %zu is NaN or Inf",
                               path, i);
    double step = (freq[k - 1] - freq[0]) / (double)(k - 1);
    if (!(step > 0))
        return sarbp_error(SARBP_ERR_INVALID, "'%s': frequencies do not increase", path);
    for (size_t i = 0; i + 1 < k; i++) {
        double dev = fabs(freq[i + 1] - freq[i] - step);
        if (dev > 1e-3 * step)
            return sarbp_error(SARBP_ERR_INVALID,
                               "'%s': frequencies are not uniformly spaced: step %zu is %.6g Hz, "
                               "mean step %.6g Hz",
                               path, i, freq[i + 1] - freq[i], step);
    }
    *f0 = freq[0];
    *df = step;
    return SARBP_OK;
}

sarbp_status phd_check_shape(const char *path, const char *field, size_t npulses,
                             size_t nsamples)
{
    if (npulses > SARBP_PHD_MAX_PULSES)
        return sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' declares %zu pulses; sarbp reads "
                           "at most %zu a file", path, field, npulses, SARBP_PHD_MAX_PULSES);
    if (nsamples > SARBP_PHD_MAX_SAMPLES)
        return sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' declares %zu samples a pulse; "
                           "sarbp reads at most %zu", path, field, nsamples,
                           SARBP_PHD_MAX_SAMPLES);
    return SARBP_OK;
}

sarbp_status phd_count_mismatch(const char *path, const char *name, size_t n,
                                const char *ref_name, size_t ref_n)
{
    if (n == ref_n) return SARBP_OK;
    return sarbp_error(SARBP_ERR_INVALID, "'%s': field '%s' has %zu pulses, '%s' has %zu", path,
                       name, n, ref_name, ref_n);
}

/* ---- inputs to file names ------------------------------------------------- */

struct strlist {
    char **v;
    size_t n, cap;
};

static sarbp_status strlist_push(struct strlist *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = strdup(s);
    if (!l->v[l->n]) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    l->n++;
    return SARBP_OK;
}

static void strlist_clear(struct strlist *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- the input formats ----------------------------------------------------- */

/* By content: CPHD files open with "CPHD/", MATLAB v5 (and v6, v7) files
 * with a text header; HDF5 files hold the superblock signature at offset 0,
 * 512, 1024, 2048, ... (after a user block such as MATLAB v7.3's 512-byte
 * header). head: the file's first n bytes (n <= 128, fewer only when the
 * file is shorter); fp is open for more. */
#define HEAD_BYTES 128

static int sniff_cphd(FILE *fp, const unsigned char *head, size_t n)
{
    (void)fp;
    return n >= 5 && !memcmp(head, "CPHD/", 5);
}

static int sniff_mat5(FILE *fp, const unsigned char *head, size_t n)
{
    static const char mat5[] = "MATLAB 5.0 MAT-file";
    (void)fp;
    return n == HEAD_BYTES && !memcmp(head, mat5, sizeof mat5 - 1);
}

static int sniff_hdf5(FILE *fp, const unsigned char *head, size_t n)
{
    static const unsigned char h5sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    (void)head;
    (void)n;
    for (long off = 0; off <= (1L << 40); off = off ? 2 * off : 512) {
        unsigned char b[8];
        if (fseek(fp, off, SEEK_SET) != 0 || fread(b, 1, sizeof b, fp) != sizeof b) break;
        if (!memcmp(b, h5sig, sizeof b)) return 1;
    }
    return 0;
}

/* One row per phase-history format: a new format is its module (a file
 * that fills a phd_file, phd_io_internal.h) and one row here. detect()
 * tries the rows in order. */
struct phd_format {
    const char *name;          /* in messages: "not a CPHD, MATLAB or HDF5 file" */
    const char *ext[3];        /* names a directory input picks up; NULL after the last */
    const char *probe;         /* the library whose metadata walk runs in the probe first
                                  (probe.h); NULL: sarbp's own checked parser, no probe */
    int (*sniff)(FILE *fp, const unsigned char *head, size_t n);
    sarbp_status (*open)(const char *path, const sarbp_reader_options *o, struct phd_file *f);
};

static const struct phd_format formats[] = {
    {"CPHD", {".cphd"}, NULL, sniff_cphd, phd_open_cphd},
    {"MATLAB", {".mat"}, "matio", sniff_mat5, phd_open_mat},
    {"HDF5", {".h5", ".hdf5"}, "HDF5", sniff_hdf5, phd_open_h5},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

/* "A, B or C" of the rows' names (what = 0) or extensions (what = 1). */
static void format_list(int what, char *buf, size_t size)
{
    const char *item[16];
    size_t n = 0;
    for (size_t i = 0; i < NFORMATS; i++) {
        if (!what) {
            if (n < 16) item[n++] = formats[i].name;
            continue;
        }
        for (size_t k = 0; k < 3 && formats[i].ext[k]; k++)
            if (n < 16) item[n++] = formats[i].ext[k];
    }
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++) {
        const int w = snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                               item[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

static int is_data_name(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < NFORMATS; i++)
        for (size_t k = 0; k < 3 && formats[i].ext[k]; k++) {
            size_t e = strlen(formats[i].ext[k]);
            if (n > e && !strcasecmp(name + n - e, formats[i].ext[k])) return 1;
        }
    return 0;
}

/* A directory's files of the formats' extensions (regular files only), sorted by name. */
static sarbp_status expand_dir(const char *dir, struct strlist *out)
{
    DIR *d = opendir(dir);
    if (!d) return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", dir, strerror(errno));
    struct strlist names = {0};
    sarbp_status st = SARBP_OK;
    size_t dlen = strlen(dir);
    int slash = dlen > 0 && dir[dlen - 1] == '/';
    struct dirent *e;
    while (st == SARBP_OK && (e = readdir(d)) != NULL) {
        if (!is_data_name(e->d_name)) continue;
        size_t len = dlen + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(p, len, "%s%s%s", dir, slash ? "" : "/", e->d_name);
        struct stat sb;
        if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) st = strlist_push(&names, p);
        free(p);
    }
    closedir(d);
    if (st == SARBP_OK && names.n == 0) {
        char exts[128];
        format_list(1, exts, sizeof exts);
        st = sarbp_error(SARBP_ERR_INVALID, "directory '%s' holds no %s files", dir, exts);
    }
    if (st == SARBP_OK) {
        qsort(names.v, names.n, sizeof names.v[0], cmp_str);
        for (size_t i = 0; i < names.n && st == SARBP_OK; i++) st = strlist_push(out, names.v[i]);
    }
    strlist_clear(&names);
    return st;
}

static sarbp_status expand_path(const char *path, struct strlist *out)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return expand_dir(path, out);
    return strlist_push(out, path);
}

/* A file or directory that exists is taken literally even when its name
 * holds glob characters; otherwise a name with *?[ is a pattern. */
static sarbp_status expand_input(const char *input, struct strlist *out)
{
    struct stat sb;
    if (stat(input, &sb) == 0 || !strpbrk(input, "*?[")) return expand_path(input, out);
    glob_t g;
    int r = glob(input, 0, NULL, &g);
    if (r == GLOB_NOMATCH) {
        globfree(&g);
        return sarbp_error(SARBP_ERR_IO, "no file matches '%s'", input);
    }
    if (r != 0) {
        globfree(&g);
        if (r == GLOB_NOSPACE) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        return sarbp_error(SARBP_ERR_IO, "cannot expand '%s': read error", input);
    }
    sarbp_status st = SARBP_OK;
    for (size_t i = 0; i < g.gl_pathc && st == SARBP_OK; i++) st = expand_path(g.gl_pathv[i], out);
    globfree(&g);
    return st;
}

static const char *file_pol(const struct phd_file *f, const char **from);

/* The same file given twice (under two names, a link): refused, except
 * where the names say different polarisations (HH and VV links to one
 * file): reject_overlaps says that, and --polarisation keeps one. */
static sarbp_status reject_duplicates(const struct phd_file *files, size_t n)
{
    struct stat *sb = malloc((n ? n : 1) * sizeof *sb);
    if (!sb) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = SARBP_OK;
    for (size_t i = 0; i < n && st == SARBP_OK; i++) {
        if (stat(files[i].path, &sb[i]) != 0) {
            st = sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", files[i].path,
                             strerror(errno));
            break;
        }
        for (size_t j = 0; j < i; j++) {
            const char *pi = file_pol(&files[i], NULL), *pj = file_pol(&files[j], NULL);
            if (pi && pj && strcmp(pi, pj)) continue;
            if (sb[j].st_dev == sb[i].st_dev && sb[j].st_ino == sb[i].st_ino) {
                st = sarbp_error(SARBP_ERR_INVALID, "'%s' and '%s' are the same file: "
                                 "each input may be given once", files[j].path, files[i].path);
                break;
            }
        }
    }
    free(sb);
    return st;
}

/* ---- one file ------------------------------------------------------------- */

/* The row of formats[] whose content path has. */
static sarbp_status detect(const char *path, const struct phd_format **fmt)
{
    FILE *fp;
    SARBP_TRY(input_fopen(path, &fp)); /* a regular file: a named pipe would block */
    unsigned char head[HEAD_BYTES];
    size_t n = fread(head, 1, sizeof head, fp);
    if (ferror(fp)) {
        int e = errno;
        fclose(fp);
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(e));
    }
    *fmt = NULL;
    for (size_t i = 0; i < NFORMATS && !*fmt; i++)
        if (formats[i].sniff(fp, head, n)) *fmt = &formats[i];
    fclose(fp);
    if (*fmt) {
        sarbp_error_clear();
        return SARBP_OK;
    }
    char names[128];
    format_list(0, names, sizeof names);
    return sarbp_error(SARBP_ERR_FORMAT, "'%s': not a %s file", path, names);
}

static void file_release(struct phd_file *f)
{
    if (f->ops) f->ops->release(f);
}

static void file_clear(struct phd_file *f)
{
    if (f->ops) {
        f->ops->release(f);
        f->ops->destroy(f);
    }
    sarbp_phd_free(f->meta);
    free(f->coll);
    free(f->t);
    free(f->path);
    memset(f, 0, sizeof *f);
}

/* Metadata checks that name the pulse; sarbp_phd_validate does the rest. */
static sarbp_status check_meta(const char *path, const sarbp_phd *m)
{
    if (m->npulses == 0) return sarbp_error(SARBP_ERR_INVALID, "'%s': no pulses", path);
    const struct { const char *name; const double *v; size_t stride; } f[] = {
        {"position", m->pos, 3}, {"position", m->pos + 1, 3}, {"position", m->pos + 2, 3},
        {"r0", m->r0, 1}, {"start frequency", m->f0, 1}, {"frequency step", m->df, 1},
        {"th", m->th, 1}, {"phi", m->phi, 1}, {"r_correct", m->r_correct, 1},
        {"ph_correct", m->ph_correct, 1},
    };
    for (size_t j = 0; j < sizeof f / sizeof f[0]; j++) {
        if (!f[j].v) continue;
        for (size_t i = 0; i < m->npulses; i++)
            if (!isfinite(f[j].v[i * f[j].stride]))
                return sarbp_error(SARBP_ERR_INVALID, "'%s': %s of pulse %zu is NaN or Inf", path,
                                   f[j].name, i);
    }
    sarbp_status st = sarbp_phd_validate(m);
    return st == SARBP_OK ? SARBP_OK : prefixed(st, path);
}

/* ---- polarisation ---------------------------------------------------------- */

int sarbp_polarisation_parse(const char *s, char *out, size_t n)
{
    char t, r;
    if (strlen(s) == 2) {
        t = s[0];
        r = s[1];
    } else if (strlen(s) == 3 && s[1] == ':') {
        t = s[0];
        r = s[2];
    } else {
        return -1;
    }
    t = (char)(t == 'h' ? 'H' : t == 'v' ? 'V' : t);
    r = (char)(r == 'h' ? 'H' : r == 'v' ? 'V' : r);
    if ((t != 'H' && t != 'V') || (r != 'H' && r != 'V') || n < 4) return -1;
    snprintf(out, n, "%c:%c", t, r);
    return 0;
}

/* Gotcha's names say the polarisation: data_3dsar_pass1_az001_HH.mat, or
 * the AFRL layout's folder .../pass1/HH/. 0: the file name, 1: the
 * directory name, -1: neither. */
static int polarisation_in_name(const char *path, char out[4])
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    const size_t len = dot ? (size_t)(dot - base) : strlen(base);
    if (len >= 3 && base[len - 3] == '_') {
        char two[3] = {base[len - 2], base[len - 1], '\0'};
        if (sarbp_polarisation_parse(two, out, 4) == 0) return 0;
    }
    if (base > path) { /* the parent folder's name */
        const char *end = base - 1, *dir = end;
        while (dir > path && dir[-1] != '/') dir--;
        if (end - dir == 2) {
            char two[3] = {dir[0], dir[1], '\0'};
            if (sarbp_polarisation_parse(two, out, 4) == 0) return 1;
        }
    }
    return -1;
}

static int is_gotcha(const struct phd_file *f)
{
    return f->ops && !strncmp(f->ops->format, "Gotcha", 6);
}

/* A Gotcha file without a collection of its own gets one holding the
 * polarisation its name says. */
static sarbp_status name_polarisation(struct phd_file *f)
{
    char pol[4];
    if (!is_gotcha(f) || (f->coll && f->coll->polarisation[0]) ||
        polarisation_in_name(f->path, pol) < 0)
        return SARBP_OK;
    if (!f->coll) {
        f->coll = calloc(1, sizeof *f->coll);
        if (!f->coll) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    snprintf(f->coll->polarisation, sizeof f->coll->polarisation, "%s", pol);
    return SARBP_OK;
}

static const char *file_pol(const struct phd_file *f, const char **from)
{
    static const char *const names[] = {"the file name", "the directory name"};
    const char *dummy;
    if (!from) from = &dummy;
    *from = NULL;
    if (!f->coll || !f->coll->polarisation[0]) return NULL;
    if (f->ops && !strcmp(f->ops->format, "CPHD")) {
        *from = "the CPHD channel";
    } else if (is_gotcha(f)) {
        char pol[4];
        const int w = polarisation_in_name(f->path, pol);
        *from = names[w > 0];
    } else {
        *from = "the file's polarisation attribute";
    }
    return f->coll->polarisation;
}

/* "H:H" -> "HH" in buf[8], for messages. */
static const char *pol_short(const char *p, char buf[8])
{
    if (!p) return "unknown";
    if (strlen(p) == 3 && p[1] == ':') snprintf(buf, 8, "%c%c", p[0], p[2]);
    else snprintf(buf, 8, "%.7s", p);
    return buf;
}

/* --polarisation: drops the files of other polarisations. */
static sarbp_status keep_polarisation(sarbp_reader *rd, const char *want_in)
{
    char want[8], a[8], b[8];
    if (sarbp_polarisation_parse(want_in, want, sizeof want))
        return sarbp_error(SARBP_ERR_INVALID, "unknown polarisation '%s' (HH, VV, HV or VH)",
                           want_in);
    size_t kept = 0;
    char other_buf[16];
    const char *other = NULL; /* a copy: the file's own strings go with file_clear */
    for (size_t i = 0; i < rd->nfiles; i++) {
        const char *p = file_pol(&rd->files[i], NULL);
        if (!p)
            return sarbp_error(SARBP_ERR_INVALID, "cannot tell the polarisation of '%s' (its "
                               "name, format and attributes do not say): --polarisation cannot "
                               "choose", rd->files[i].path);
        if (!strcmp(p, want)) {
            rd->files[kept++] = rd->files[i];
        } else {
            snprintf(other_buf, sizeof other_buf, "%s", p);
            other = other_buf;
            file_clear(&rd->files[i]);
        }
    }
    const size_t n = rd->nfiles;
    rd->nfiles = kept;
    for (size_t i = kept; i < n; i++) memset(&rd->files[i], 0, sizeof rd->files[i]);
    if (kept == 0)
        return sarbp_error(SARBP_ERR_INVALID, "no input is %s polarisation (they are %s)",
                           pol_short(want, a), pol_short(other, b));
    return SARBP_OK;
}

/* Files (in azimuth order) whose pulses repeat or overlap: HH and VV copies
 * of the same azimuths, a file under two names. */
static sarbp_status reject_overlaps(const sarbp_reader *rd)
{
    size_t hold = 0; /* the file reaching furthest so far */
    double hold_lo = 0, hold_hi = -INFINITY;
    for (size_t i = 0; i < rd->nfiles; i++) {
        const sarbp_phd *m = rd->files[i].meta;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t p = 0; p < m->npulses; p++) {
            const double az = sarbp_phd_azimuth_deg(m, p);
            if (az < lo) lo = az;
            if (az > hi) hi = az;
        }
        if (i > 0 && lo <= hold_hi) {
            const struct phd_file *f = &rd->files[hold], *g = &rd->files[i];
            const char *pf = file_pol(f, NULL), *pg = file_pol(g, NULL);
            char a[8], b[8];
            if (pf && pg && strcmp(pf, pg))
                return sarbp_error(SARBP_ERR_INVALID, "'%s' (%s) and '%s' (%s) hold the same "
                                   "azimuths (%.4f to %.4f deg and %.4f to %.4f deg): choose "
                                   "one polarisation (--polarisation)", f->path, pol_short(pf, a),
                                   g->path, pol_short(pg, b), hold_lo, hold_hi, lo, hi);
            return sarbp_error(SARBP_ERR_INVALID, "'%s' and '%s' hold overlapping azimuths (%.4f "
                               "to %.4f deg and %.4f to %.4f deg): their pulses would be formed "
                               "twice; give each pulse once", f->path, g->path, hold_lo, hold_hi,
                               lo, hi);
        }
        if (hi > hold_hi) {
            hold = i;
            hold_lo = lo;
            hold_hi = hi;
        }
    }
    return SARBP_OK;
}

const char *sarbp_reader_file_polarisation(const sarbp_reader *rd, size_t i, const char **from)
{
    if (from) *from = NULL;
    return i < rd->nfiles ? file_pol(&rd->files[i], from) : NULL;
}

/* Loads path's metadata into f (path known to be of format fmt) and checks it. */
static sarbp_status load(const char *path, const struct phd_format *fmt,
                         const sarbp_reader_options *o, struct phd_file *f)
{
    f->path = strdup(path);
    if (!f->path) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = fmt->open(path, o, f);
    if (st == SARBP_OK) st = check_meta(path, f->meta);
    if (st == SARBP_OK) st = name_polarisation(f);
    if (st != SARBP_OK) file_clear(f);
    return st;
}

/* The probe's walk (probe.h): exactly the metadata reads and checks of
 * load(), in the child. */
static sarbp_status probe_walk(const char *path, void *arg)
{
    struct phd_file f;
    memset(&f, 0, sizeof f);
    sarbp_status st = load(path, (const struct phd_format *)arg, NULL, &f);
    if (st == SARBP_OK) file_clear(&f);
    return st;
}

/* Files read through a library (HDF5, matio) are walked in the probe first
 * (probe.h); a CPHD is parsed by sarbp's own checked code (cphd_read.c) and
 * libxml2 without it. */
static sarbp_status file_open(const char *path, const sarbp_reader_options *o,
                              struct phd_file *f)
{
    memset(f, 0, sizeof *f);
    const struct phd_format *fmt;
    SARBP_TRY(detect(path, &fmt));
    if (fmt->probe) SARBP_TRY(probe_run(path, fmt->probe, probe_walk, (void *)fmt));
    return load(path, fmt, o, f);
}

/* ---- the reader ----------------------------------------------------------- */

static sarbp_status check_agree(const struct phd_file *a, const struct phd_file *b)
{
    const sarbp_phd *x = a->meta, *y = b->meta;
    if (x->domain != y->domain)
        return sarbp_error(SARBP_ERR_MISMATCH, "'%s' holds %s data, '%s' holds %s data", a->path,
                           x->domain == SARBP_DOMAIN_FREQ ? "frequency-domain" : "chirp",
                           b->path, y->domain == SARBP_DOMAIN_FREQ ? "frequency-domain" : "chirp");
    if (x->nsamples != y->nsamples)
        return sarbp_error(SARBP_ERR_MISMATCH, "'%s' has %zu samples per pulse, '%s' has %zu",
                           a->path, x->nsamples, b->path, y->nsamples);
    if (x->domain == SARBP_DOMAIN_CHIRP &&
        (x->fs != y->fs || x->chirp_rate != y->chirp_rate || x->pulse_len != y->pulse_len ||
         x->fc != y->fc || x->t0 != y->t0))
        return sarbp_error(SARBP_ERR_MISMATCH,
                           "'%s' and '%s' differ in chirp parameters (fs, chirp rate, pulse "
                           "length, fc, t0)", a->path, b->path);
    return SARBP_OK;
}

struct az_key {
    double az;
    size_t index;
};

static int cmp_az(const void *pa, const void *pb)
{
    const struct az_key *a = pa, *b = pb;
    if (a->az < b->az) return -1;
    if (a->az > b->az) return 1;
    return a->index < b->index ? -1 : a->index > b->index; /* stable for ties */
}

static sarbp_status sort_by_azimuth(struct phd_file *files, size_t n)
{
    struct az_key *k = malloc(n * sizeof *k);
    struct phd_file *tmp = malloc(n * sizeof *tmp);
    if (!k || !tmp) {
        free(k);
        free(tmp);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        k[i].az = sarbp_phd_azimuth_deg(files[i].meta, 0);
        k[i].index = i;
    }
    qsort(k, n, sizeof *k, cmp_az);
    for (size_t i = 0; i < n; i++) tmp[i] = files[k[i].index];
    memcpy(files, tmp, n * sizeof *tmp);
    free(tmp);
    free(k);
    return SARBP_OK;
}

/* An optional per-pulse field survives concatenation when every file has it. */
static sarbp_status concat_optional(sarbp_reader *rd)
{
    sarbp_phd *all = rd->all;
    double **dst[] = {&all->th, &all->phi, &all->r_correct, &all->ph_correct};
    for (size_t j = 0; j < sizeof dst / sizeof dst[0]; j++) {
        int everywhere = 1;
        for (size_t i = 0; i < rd->nfiles; i++) {
            const sarbp_phd *m = rd->files[i].meta;
            const double *src[] = {m->th, m->phi, m->r_correct, m->ph_correct};
            if (!src[j]) everywhere = 0;
        }
        if (!everywhere) continue;
        SARBP_TRY(sarbp_phd_alloc_optional(all, dst[j]));
        for (size_t i = 0; i < rd->nfiles; i++) {
            const sarbp_phd *m = rd->files[i].meta;
            const double *src[] = {m->th, m->phi, m->r_correct, m->ph_correct};
            memcpy(*dst[j] + rd->first[i], src[j], m->npulses * sizeof(double));
        }
    }
    return SARBP_OK;
}

/* Inputs that carry a scene reference must agree on it (to 1 mm: their
 * positions are relative to it); the strings survive where all agree.
 * Pulse times survive when every file has them. */
static sarbp_status concat_collection(sarbp_reader *rd)
{
    const struct phd_file *f0 = &rd->files[0];
    static const sarbp_collection none; /* a file that says nothing (Gotcha without a name) */
    const sarbp_collection *c0 = f0->coll ? f0->coll : &none;
    int all_times = 1;
    for (size_t i = 0; i < rd->nfiles; i++) {
        const struct phd_file *f = &rd->files[i];
        const sarbp_collection *c = f->coll ? f->coll : &none;
        if (!f->t) all_times = 0;
        if (!c0->has_ref != !c->has_ref)
            return sarbp_error(SARBP_ERR_MISMATCH, "'%s' %s a geographic scene reference and "
                               "'%s' %s: they cannot be formed together",
                               f0->path, c0->has_ref ? "has" : "has no", f->path,
                               c->has_ref ? "has" : "has none");
        if (i == 0) {
            rd->coll = *c;
            continue;
        }
        const double *a = c0->ref.ecef, *b = c->ref.ecef;
        const double d = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                              (a[2] - b[2]) * (a[2] - b[2]));
        if (c->has_ref && (d > 1e-3 || fabs(c0->ref.heading_deg - c->ref.heading_deg) > 1e-9))
            return sarbp_error(SARBP_ERR_MISMATCH, "'%s' and '%s' have different scene "
                               "reference points (%.3f m apart): their positions are in "
                               "different frames", f0->path, f->path, d);
        char *mine[] = {rd->coll.collector, rd->coll.core_name, rd->coll.polarisation,
                        rd->coll.collect_start, rd->coll.source_format};
        const char *theirs[] = {c->collector, c->core_name, c->polarisation,
                                c->collect_start, c->source_format};
        for (size_t j = 0; j < sizeof mine / sizeof mine[0]; j++)
            if (strcmp(mine[j], theirs[j])) mine[j][0] = '\0';
    }
    if (!all_times) return SARBP_OK;
    /* times are relative to each file's collect_start: only one start is
     * meaningful, so several files keep times only with the same start */
    rd->t_all = malloc(rd->first[rd->nfiles] * sizeof *rd->t_all);
    rd->t_view = malloc(rd->first[rd->nfiles] * sizeof *rd->t_view);
    if (!rd->t_all || !rd->t_view) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < rd->nfiles; i++)
        memcpy(rd->t_all + rd->first[i], rd->files[i].t,
               rd->files[i].meta->npulses * sizeof(double));
    if (rd->nfiles > 1 && !rd->coll.collect_start[0]) {
        free(rd->t_all);
        free(rd->t_view);
        rd->t_all = rd->t_view = NULL;
    }
    return SARBP_OK;
}

static sarbp_status concat(sarbp_reader *rd)
{
    rd->first = malloc((rd->nfiles + 1) * sizeof *rd->first);
    if (!rd->first) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    size_t total = 0;
    for (size_t i = 0; i < rd->nfiles; i++) {
        rd->first[i] = total;
        total += rd->files[i].meta->npulses;
    }
    rd->first[rd->nfiles] = total;
    const sarbp_phd *m0 = rd->files[0].meta;
    SARBP_TRY(sarbp_phd_alloc(m0->domain, total, m0->nsamples, 0, &rd->all));
    sarbp_phd *all = rd->all;
    all->fs = m0->fs;
    all->chirp_rate = m0->chirp_rate;
    all->pulse_len = m0->pulse_len;
    all->fc = m0->fc;
    all->t0 = m0->t0;
    for (size_t i = 0; i < rd->nfiles; i++) {
        const sarbp_phd *m = rd->files[i].meta;
        size_t o = rd->first[i], n = m->npulses;
        memcpy(all->pos + 3 * o, m->pos, 3 * n * sizeof(double));
        memcpy(all->r0 + o, m->r0, n * sizeof(double));
        if (all->f0) memcpy(all->f0 + o, m->f0, n * sizeof(double));
        if (all->df) memcpy(all->df + o, m->df, n * sizeof(double));
    }
    SARBP_TRY(concat_optional(rd));
    SARBP_TRY(concat_collection(rd));
    /* the view's arrays: a copy sized for every pulse, rewritten by select */
    return sarbp_phd_slice(all, 0, total, &rd->vbuf);
}

static void copy_range(double *dst, const double *src, size_t i0, size_t n)
{
    if (dst && src) memcpy(dst, src + i0, n * sizeof(double));
}

static void refresh_view(sarbp_reader *rd)
{
    const sarbp_phd *all = rd->all;
    sarbp_phd *v = rd->vbuf;
    size_t i0 = rd->sel0, n = rd->sel1 - rd->sel0;
    memcpy(v->pos, all->pos + 3 * i0, 3 * n * sizeof(double));
    copy_range(v->r0, all->r0, i0, n);
    copy_range(v->f0, all->f0, i0, n);
    copy_range(v->df, all->df, i0, n);
    copy_range(v->th, all->th, i0, n);
    copy_range(v->phi, all->phi, i0, n);
    copy_range(v->r_correct, all->r_correct, i0, n);
    copy_range(v->ph_correct, all->ph_correct, i0, n);
    copy_range(rd->t_view, rd->t_all, i0, n);
    rd->view = *v;
    rd->view.npulses = n;
    rd->view.data = NULL;
    if (rd->autofocus) {
        /* applied corrections leave the view, so nothing applies them twice */
        if (v->r_correct) {
            for (size_t i = 0; i < n; i++) v->r0[i] += v->r_correct[i];
            rd->view.r_correct = NULL;
        }
        rd->view.ph_correct = NULL;
    }
}

sarbp_status sarbp_reader_open(const char *const *inputs, size_t ninputs, sarbp_reader **out)
{
    return sarbp_reader_open_opts(inputs, ninputs, NULL, out);
}

sarbp_status sarbp_reader_open_opts(const char *const *inputs, size_t ninputs,
                                    const sarbp_reader_options *o, sarbp_reader **out)
{
    *out = NULL;
    if (ninputs == 0) return sarbp_error(SARBP_ERR_INVALID, "no input files");
    struct strlist paths = {0};
    sarbp_status st = SARBP_OK;
    for (size_t i = 0; i < ninputs && st == SARBP_OK; i++) st = expand_input(inputs[i], &paths);
    sarbp_reader *rd = NULL;
    if (st == SARBP_OK) {
        rd = calloc(1, sizeof *rd);
        if (rd) rd->files = calloc(paths.n, sizeof *rd->files);
        if (!rd || !rd->files) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; st == SARBP_OK && i < paths.n; i++) {
        st = file_open(paths.v[i], o, &rd->files[i]);
        if (st == SARBP_OK) {
            rd->nfiles++;
            st = check_agree(&rd->files[0], &rd->files[i]);
        }
    }
    strlist_clear(&paths);
    if (st == SARBP_OK && o && o->polarisation) st = keep_polarisation(rd, o->polarisation);
    if (st == SARBP_OK) st = reject_duplicates(rd->files, rd->nfiles);
    if (st == SARBP_OK) st = sort_by_azimuth(rd->files, rd->nfiles);
    if (st == SARBP_OK) st = reject_overlaps(rd);
    if (st == SARBP_OK) st = concat(rd);
    if (st != SARBP_OK) {
        sarbp_reader_free(rd);
        return st;
    }
    rd->sel0 = 0;
    rd->sel1 = rd->all->npulses;
    rd->open_file = rd->nfiles;
    refresh_view(rd);
    *out = rd;
    return SARBP_OK;
}

sarbp_status sarbp_reader_select(sarbp_reader *rd, size_t i0, size_t i1)
{
    if (i1 <= i0 || i1 > rd->all->npulses)
        return sarbp_error(SARBP_ERR_INVALID, "pulse range %zu:%zu is empty or outside 0:%zu", i0,
                           i1, rd->all->npulses);
    rd->sel0 = i0;
    rd->sel1 = i1;
    free(rd->phase); /* it was the old selection's */
    rd->phase = NULL;
    free(rd->range);
    rd->range = NULL;
    refresh_view(rd);
    return SARBP_OK;
}

const sarbp_phd *sarbp_reader_meta(const sarbp_reader *rd)
{
    return &rd->view;
}

size_t sarbp_reader_nfiles(const sarbp_reader *rd)
{
    return rd->nfiles;
}

const char *sarbp_reader_file(const sarbp_reader *rd, size_t i)
{
    return i < rd->nfiles ? rd->files[i].path : NULL;
}

size_t sarbp_reader_file_npulses(const sarbp_reader *rd, size_t i)
{
    return i < rd->nfiles ? rd->files[i].meta->npulses : 0;
}

const char *sarbp_reader_file_format(const sarbp_reader *rd, size_t i)
{
    return i < rd->nfiles ? rd->files[i].ops->format : NULL;
}

const sarbp_collection *sarbp_reader_collection(const sarbp_reader *rd)
{
    return &rd->coll;
}

const double *sarbp_reader_times(const sarbp_reader *rd)
{
    return rd->t_all ? rd->t_view : NULL;
}

sarbp_status sarbp_reader_set_scene_ref(sarbp_reader *rd, const sarbp_scene_ref *ref)
{
    if (rd->coll.has_ref) {
        char buf[128];
        sarbp_scene_ref_format(&rd->coll.ref, buf, sizeof buf);
        return sarbp_error(SARBP_ERR_INVALID, "'%s' carries its own scene reference (%s): its "
                           "positions are relative to it, so another cannot be given",
                           rd->files[0].path, buf);
    }
    rd->coll.ref = *ref;
    rd->coll.has_ref = 1;
    return SARBP_OK;
}

void sarbp_reader_set_autofocus(sarbp_reader *rd, int on)
{
    rd->autofocus = on != 0;
    refresh_view(rd);
}

static sarbp_status check_finite(const char *path, size_t p0, size_t np, size_t k,
                                 const sarbp_c32 *d)
{
    for (size_t p = 0; p < np; p++)
        for (size_t i = 0; i < k; i++) {
            const sarbp_c32 v = d[p * k + i];
            if (!isfinite(v.re) || !isfinite(v.im))
                return sarbp_error(SARBP_ERR_INVALID, "'%s': sample %zu of pulse %zu is NaN or Inf",
                                   path, i, p0 + p);
        }
    return SARBP_OK;
}

static void apply_phase(const double *ph, size_t np, size_t k, sarbp_c32 *d)
{
    for (size_t p = 0; p < np; p++) {
        double c = cos(ph[p]), s = sin(ph[p]);
        for (size_t i = 0; i < k; i++) {
            sarbp_c32 *v = &d[p * k + i];
            double re = v->re * c - v->im * s, im = v->re * s + v->im * c;
            v->re = (float)re;
            v->im = (float)im;
        }
    }
}

/* The file holding pulse g of the concatenation. */
static size_t file_of(const sarbp_reader *rd, size_t g)
{
    size_t lo = 0, hi = rd->nfiles; /* first[lo] <= g < first[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (rd->first[mid] <= g) lo = mid;
        else hi = mid;
    }
    return lo;
}

sarbp_status sarbp_reader_read(sarbp_reader *rd, size_t p0, size_t np, sarbp_c32 *dst)
{
    size_t n = rd->sel1 - rd->sel0, k = rd->all->nsamples;
    if (p0 > n || np > n - p0)
        return sarbp_error(SARBP_ERR_INVALID, "pulses %zu:%zu are outside 0:%zu", p0, p0 + np, n);
    size_t g = rd->sel0 + p0, end = g + np;
    while (g < end) {
        size_t fi = file_of(rd, g);
        struct phd_file *f = &rd->files[fi];
        size_t local = g - rd->first[fi];
        size_t m = (end < rd->first[fi + 1] ? end : rd->first[fi + 1]) - g;
        if (rd->open_file != fi && rd->open_file < rd->nfiles)
            file_release(&rd->files[rd->open_file]);
        rd->open_file = fi;
        SARBP_TRY(f->ops->read(f, local, m, dst));
        SARBP_TRY(check_finite(f->path, local, m, k, dst));
        if (rd->autofocus && rd->all->ph_correct) apply_phase(rd->all->ph_correct + g, m, k, dst);
        if (rd->phase || rd->range) /* as the autofocus applies them (one arithmetic) */
            sarbp_samples_rotate(dst, m, k, rd->all->f0 ? rd->all->f0 + g : NULL, rd->all->df ? rd->all->df + g : NULL,
                                 rd->phase ? rd->phase + (g - rd->sel0) : NULL,
                                 rd->range ? rd->range + (g - rd->sel0) : NULL);
        dst += m * k;
        g += m;
    }
    return SARBP_OK;
}

sarbp_status sarbp_reader_set_phase(sarbp_reader *rd, const double *phase, size_t n)
{
    free(rd->phase);
    rd->phase = NULL;
    if (!phase) return SARBP_OK;
    if (n != rd->sel1 - rd->sel0)
        return sarbp_error(SARBP_ERR_INVALID, "%zu phases for %zu selected pulses", n, rd->sel1 - rd->sel0);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(phase[i]) || fabs(phase[i]) > 1e6)
            return sarbp_error(SARBP_ERR_INVALID, "phase %zu (%g) is not a finite angle", i, phase[i]);
    if (n && !(rd->phase = malloc(n * sizeof *rd->phase)))
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu phases", n);
    if (n) memcpy(rd->phase, phase, n * sizeof *rd->phase);
    return SARBP_OK;
}

sarbp_status sarbp_reader_set_range(sarbp_reader *rd, const double *range, size_t n)
{
    free(rd->range);
    rd->range = NULL;
    if (!range) return SARBP_OK;
    if (rd->all->domain != SARBP_DOMAIN_FREQ)
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "a range per pulse is applied to frequency-domain "
                           "samples only");
    if (n != rd->sel1 - rd->sel0)
        return sarbp_error(SARBP_ERR_INVALID, "%zu ranges for %zu selected pulses", n, rd->sel1 - rd->sel0);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(range[i]) || fabs(range[i]) > 1e3)
            return sarbp_error(SARBP_ERR_INVALID, "range %zu (%g m) is not a correction (at most 1 km)", i,
                               range[i]);
    if (n && !(rd->range = malloc(n * sizeof *rd->range)))
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu ranges", n);
    if (n) memcpy(rd->range, range, n * sizeof *rd->range);
    return SARBP_OK;
}

void sarbp_reader_free(sarbp_reader *rd)
{
    if (!rd) return;
    free(rd->phase);
    free(rd->range);
    for (size_t i = 0; i < rd->nfiles; i++) file_clear(&rd->files[i]);
    free(rd->files);
    free(rd->first);
    sarbp_phd_free(rd->all);
    sarbp_phd_free(rd->vbuf);
    free(rd->t_all);
    free(rd->t_view);
    free(rd);
}

sarbp_status sarbp_phd_load(const char *const *inputs, size_t ninputs, sarbp_phd **out)
{
    *out = NULL;
    sarbp_reader *rd;
    SARBP_TRY(sarbp_reader_open(inputs, ninputs, &rd));
    const sarbp_phd *m = sarbp_reader_meta(rd);
    sarbp_phd *p;
    sarbp_status st = sarbp_phd_slice(m, 0, m->npulses, &p);
    if (st == SARBP_OK) {
        p->data = malloc(m->npulses * m->nsamples * sizeof(sarbp_c32));
        if (!p->data) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu pulses of %zu "
                                       "samples", m->npulses, m->nsamples);
        else st = sarbp_reader_read(rd, 0, m->npulses, p->data);
        if (st != SARBP_OK) sarbp_phd_free(p);
        else *out = p;
    }
    sarbp_reader_free(rd);
    return st;
}
