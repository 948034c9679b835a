/* cphd_read.c - NGA CPHD 1.0 / 1.1 phase histories.
 *
 * A CPHD file is an ASCII header ("CPHD/1.x.y", then "KEY := VALUE" lines,
 * ended by "\f\n"), an XML block (at most 4 MiB, no element with over 100
 * attributes, both checked before libxml2 parses it; no network, no DTD,
 * no entity substitution; libxml2's error reduced to one line; a
 * CollectionStart that is not a real UTC date and time refused), a block of per-vector
 * parameters (PVP: big-endian, each field at a declared offset in 8-byte
 * words) and the signal block (big-endian CF8, CI4 or CI2 vectors).
 *
 * What is read: one channel of a monostatic collection, FX domain
 * (deramped frequency samples, sample k of vector i at SC0_i + k SCSS_i) or
 * TOA domain (below), with a fixed scene reference point (SRPPos the same
 * for every vector, to 1 mm). The antenna phase centre of a vector is the
 * midpoint of its transmit and receive positions, r0 its range to the SRP;
 * positions are taken from ECEF to the east-north-up frame at the SRP
 * (geo.h), which the phd_file's collection records. Integer samples (and
 * float ones, when the file has it) are scaled by the AmpSF PVP; SGN = +1
 * files are conjugated to sarbp's exp(-j 4 pi f dR / c) convention. Bistatic collections,
 * compressed signals, a moving SRP and any other variant are refused with a
 * message naming what is unsupported.
 *
 * TOA domain, by the standard's convention (CPHD 1.1 Global/SGN: "in TOA
 * domain, phase of the mainlobe peak Phase(dTOA) = SGN x fx_C x dTOA"):
 * vector i holds N range-compressed samples s_n at tau_n = SC0_i + n SCSS_i
 * seconds of time of arrival after the SRP's, the transform over the
 * frequency offset from the vector's centre fx_C = (FX1_i + FX2_i) / 2 of
 * its FX samples X_k at f_k = FX1 + k / (N SCSS):
 *     s_n = sum_k X_k exp(-j SGN 2 pi (f_k - fx_C) tau_n),
 *     X_k = (1/N) sum_n s_n exp(+j SGN 2 pi (f_k - fx_C) tau_n)  (one FFTW of N),
 * so a target at delay t0 peaks at tau = t0 with the phase SGN fx_C t0
 * cycles, and X_k carries exp(SGN j 2 pi f_k t0): FX data as an FX-domain
 * file of the same collection would hold them. fx_C is each vector's own
 * (FX1 + FX2) / 2 from its PVPs (else from Global/FxBand, for files
 * without those PVPs), as the standard defines it; Channel/Parameters/FxC,
 * the channel's nominal centre, is not read: where it disagrees with a
 * vector's centre (FXFixed false, or an inconsistent file) the vector's
 * own centre is what the standard fixes the phase to, and is used.
 * The band is sampled at 1 / (N SCSS), the spacing the TOA window's length
 * allows; no zero padding is needed (padding would only interpolate). Every
 * vector gives K samples, K the largest floor((FX2 - FX1) N SCSS) + 1 over
 * the vectors (at most N). The conversion needs the band inside the
 * 1 / SCSS the samples hold: a TOA_OSR, 1 / (SCSS (FX2 - FX1)), of 1 or
 * less (the band aliased; SARkit's cphdcheck wants 1.1) is refused, as are
 * an SCSS or a band that is not positive and a window too short for two
 * frequency samples.
 *
 * Every size the file declares is distrusted: header numbers are parsed
 * strictly, each block must lie inside the file, the channel's PVP and
 * signal arrays inside their blocks (products overflow-checked), each PVP
 * field inside a vector, and counts within phd_io.h's limits, before
 * anything is allocated from them. */
#include "io/phd_io_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/input_file.h"
#include "io/safe_size.h"
#include "sarbp/date.h"
#include "sarbp/phd_io.h"

#ifndef SARBP_HAVE_LIBXML2

sarbp_status phd_open_cphd(const char *path, const sarbp_reader_options *o, struct phd_file *f)
{
    (void)o;
    (void)f;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': is a CPHD file, and this sarbp was built "
                       "without libxml2 (scripts/install-deps.sh installs it)", path);
}

sarbp_status sarbp_cphd_channels(const char *path, sarbp_cphd_channel **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': is a CPHD file, and this sarbp was built "
                       "without libxml2 (scripts/install-deps.sh installs it)", path);
}

#else

#include <fftw3.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "core/fftw_lock.h"

#define CPHD_MAX_HEADER 65536               /* bytes of the ASCII header */
/* Bytes of the XML block: real CPHD XML is 5 to 200 KB; 4 MiB is 20 times
 * the largest and bounds libxml2's time and memory on a hostile block. */
#define CPHD_MAX_XML ((uint64_t)4 << 20)
/* Attributes of one element: CPHD's have a few at most (xmlns and the
 * schema location on the root, exponents on polynomial coefficients).
 * libxml2 checks each attribute of a start tag against those before it
 * (quadratic: 60,000 on one element take 6 s), so tags are counted before
 * it parses; with 100 at most, a 4 MiB block costs it well under 0.1 s. */
#define CPHD_MAX_ATTRS 100
#define CPHD_MAX_PVP_BYTES 65536            /* NumBytesPVP */
#define CPHD_SRP_TOLERANCE 1e-3             /* m: how far SRPPos may move */

enum sig_format { SIG_CF8, SIG_CI4, SIG_CI2 };

struct cphd_impl {
    FILE *fp;                /* open between read() and release() */
    uint64_t sig_off;        /* file offset of the channel's first sample */
    size_t bps;              /* bytes per complex sample */
    enum sig_format fmt;
    int conj;                /* SGN = +1: conjugate */
    double *ampsf;           /* [npulses] or NULL */
    size_t nsamples;         /* samples per vector in the file */
    /* TOA domain only (toa != 0): per vector SC0, SCSS (s) and the band
     * (Hz; f0 is FX1 in the phd_file's meta); the transform's plan and
     * buffer of nsamples, made at open */
    int toa;
    double *sc0, *scss, *fx2;
    fftw_complex *buf;
    fftw_plan plan;
};

/* ---- reading the file ------------------------------------------------------ */

static uint64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

static double be_f64(const unsigned char *p)
{
    uint64_t u = be64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static float be_f32(const unsigned char *p)
{
    uint32_t u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static sarbp_status read_at(FILE *fp, const char *path, uint64_t off, void *buf, size_t n,
                            const char *what)
{
    if (off > (uint64_t)INT64_MAX || fseeko(fp, (off_t)off, SEEK_SET) != 0)
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    if (fread(buf, 1, n, fp) != n) {
        if (ferror(fp))
            return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': the file ends inside the %s (it was "
                           "shortened while being read?)", path, what);
    }
    return SARBP_OK;
}

/* ---- the ASCII header ------------------------------------------------------ */

struct header {
    char version[20];
    uint64_t xml_size, xml_off, pvp_size, pvp_off, sig_size, sig_off;
    int have[6];
};

/* A whole decimal number, no sign, no spaces, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s) return 0;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 1;
}

static sarbp_status parse_header(FILE *fp, const char *path, uint64_t flen, struct header *h)
{
    memset(h, 0, sizeof *h);
    size_t n = flen < CPHD_MAX_HEADER ? (size_t)flen : CPHD_MAX_HEADER;
    char *buf = malloc(n + 1);
    if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = read_at(fp, path, 0, buf, n, "header");
    if (st) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    char *line = buf, *end = buf + n;
    char *nl = memchr(line, '\n', (size_t)(end - line));
    /* "CPHD/1.0.1": the versions this reader knows are 1.x */
    if (!nl || strncmp(line, "CPHD/1.", 7) || nl - line >= (long)sizeof h->version) {
        free(buf);
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': not a CPHD 1.x file (its first line is not "
                           "'CPHD/1.x')", path);
    }
    memcpy(h->version, line + 5, (size_t)(nl - line - 5));
    line = nl + 1;
    static const char *const keys[] = {"XML_BLOCK_SIZE", "XML_BLOCK_BYTE_OFFSET",
                                       "PVP_BLOCK_SIZE", "PVP_BLOCK_BYTE_OFFSET",
                                       "SIGNAL_BLOCK_SIZE", "SIGNAL_BLOCK_BYTE_OFFSET"};
    uint64_t *vals[] = {&h->xml_size, &h->xml_off, &h->pvp_size, &h->pvp_off, &h->sig_size,
                        &h->sig_off};
    int terminated = 0;
    while (line < end) {
        if (end - line >= 2 && line[0] == '\f' && line[1] == '\n') {
            terminated = 1;
            break;
        }
        nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl) break;
        *nl = '\0';
        char *sep = strstr(line, " := ");
        if (!sep) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD header line '%.60s' is not 'KEY := "
                             "VALUE'", path, line);
            break;
        }
        *sep = '\0';
        const char *value = sep + 4;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            if (strcmp(line, keys[k])) continue;
            if (h->have[k]) {
                st = sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD header gives %s twice", path,
                                 keys[k]);
            } else if (!parse_u64(value, vals[k])) {
                st = sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD header %s '%.40s' is not a whole "
                                 "number", path, keys[k], value);
            }
            h->have[k] = 1;
        }
        if (st) break;
        line = nl + 1;
    }
    free(buf);
    if (st) return st;
    if (!terminated)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD header does not end (no section "
                           "terminator in its first %zu bytes)", path, n);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!h->have[k])
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD header lacks %s", path, keys[k]);
    /* each block inside the file */
    const struct { const char *name; uint64_t off, size; } b[] = {
        {"XML", h->xml_off, h->xml_size}, {"PVP", h->pvp_off, h->pvp_size},
        {"signal", h->sig_off, h->sig_size}};
    for (size_t k = 0; k < 3; k++)
        if (b[k].size > flen || b[k].off > flen - b[k].size)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD header puts the %s block at "
                               "bytes %llu + %llu, beyond the file's %llu bytes (truncated or "
                               "corrupt)", path, b[k].name, (unsigned long long)b[k].off,
                               (unsigned long long)b[k].size, (unsigned long long)flen);
    if (h->xml_size == 0 || h->xml_size > CPHD_MAX_XML)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD XML block of %llu bytes (sarbp reads "
                           "1 byte to %llu MiB; real CPHD XML is 5 to 200 KB)", path,
                           (unsigned long long)h->xml_size,
                           (unsigned long long)(CPHD_MAX_XML >> 20));
    return SARBP_OK;
}

/* ---- the XML block --------------------------------------------------------- */

static int is_elem(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* First child element of n named name (namespace ignored), or NULL. */
static xmlNode *child(xmlNode *n, const char *name)
{
    if (!n) return NULL;
    for (xmlNode *c = n->children; c; c = c->next)
        if (is_elem(c, name)) return c;
    return NULL;
}

/* The element at a '/'-separated path below n, or NULL. */
static xmlNode *at(xmlNode *n, const char *path)
{
    char part[64];
    while (n && *path) {
        const char *slash = strchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : strlen(path);
        if (len >= sizeof part) return NULL;
        memcpy(part, path, len);
        part[len] = '\0';
        n = child(n, part);
        path += len + (slash ? 1 : 0);
    }
    return n;
}

/* The text of a leaf element, trimmed, into buf[size]; 0 when the element
 * is missing, 1 when found (truncated to fit). */
static int text(xmlNode *n, const char *path, char *buf, size_t size)
{
    xmlNode *e = at(n, path);
    buf[0] = '\0';
    if (!e) return 0;
    xmlChar *c = xmlNodeGetContent(e);
    if (!c) return 1;
    const char *s = (const char *)c;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
                   s[len - 1] == '\r'))
        len--;
    if (len >= size) {
        len = size - 1;
        while (len && ((unsigned char)s[len] & 0xc0) == 0x80) len--; /* whole UTF-8 characters */
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++) /* keep messages and attributes printable */
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] == 0x7f) buf[i] = '?';
    xmlFree(c);
    return 1;
}

static sarbp_status need_text(const char *path, xmlNode *n, const char *where, char *buf,
                              size_t size)
{
    if (!text(n, where, buf, size) || !buf[0])
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML lacks %s", path, where);
    return SARBP_OK;
}

static sarbp_status need_u64(const char *path, xmlNode *n, const char *where, uint64_t *v)
{
    char buf[64];
    SARBP_TRY(need_text(path, n, where, buf, sizeof buf));
    if (!parse_u64(buf, v))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD XML %s '%s' is not a whole number",
                           path, where, buf);
    return SARBP_OK;
}

/* ---- per-vector parameters ------------------------------------------------- */

struct pvp_field {
    const char *name;
    int words;    /* 1: F8, 3: X=F8;Y=F8;Z=F8; */
    int required;
    size_t off;   /* bytes within a vector */
    int present;
};

enum { PV_TXTIME, PV_TXPOS, PV_RCVTIME, PV_RCVPOS, PV_SRPPOS, PV_SC0, PV_SCSS, PV_AMPSF, PV_FX1,
       PV_FX2, PV_N };

static sarbp_status pvp_layout(const char *path, xmlNode *root, size_t nbytes,
                               struct pvp_field *f)
{
    xmlNode *pvp = child(root, "PVP");
    if (!pvp) return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML lacks PVP", path);
    for (int k = 0; k < PV_N; k++) {
        xmlNode *e = child(pvp, f[k].name);
        if (!e) {
            if (f[k].required)
                return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML lacks PVP/%s", path,
                                   f[k].name);
            continue;
        }
        char where[64], fmt[64];
        uint64_t off, size;
        snprintf(where, sizeof where, "PVP/%s/Offset", f[k].name);
        SARBP_TRY(need_u64(path, root, where, &off));
        snprintf(where, sizeof where, "PVP/%s/Size", f[k].name);
        SARBP_TRY(need_u64(path, root, where, &size));
        snprintf(where, sizeof where, "PVP/%s/Format", f[k].name);
        SARBP_TRY(need_text(path, root, where, fmt, sizeof fmt));
        const char *want = f[k].words == 1 ? "F8" : "X=F8;Y=F8;Z=F8;";
        if (strcmp(fmt, want) || size != (uint64_t)f[k].words)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': PVP %s has format '%s' and size %llu; "
                               "CPHD defines '%s' and %d", path, f[k].name, fmt,
                               (unsigned long long)size, want, f[k].words);
        if (off > nbytes / 8 || size > nbytes / 8 - off)
            return sarbp_error(SARBP_ERR_FORMAT, "'%s': PVP %s at words %llu + %llu lies outside "
                               "the %zu bytes of a vector's parameters", path, f[k].name,
                               (unsigned long long)off, (unsigned long long)size, nbytes);
        f[k].off = (size_t)off * 8;
        f[k].present = 1;
    }
    return SARBP_OK;
}

/* ---- opening --------------------------------------------------------------- */

static sarbp_status cphd_read(struct phd_file *f, size_t p0, size_t np, sarbp_c32 *dst);

static void cphd_release(struct phd_file *f)
{
    struct cphd_impl *c = f->impl;
    if (c && c->fp) {
        fclose(c->fp);
        c->fp = NULL;
    }
}

static void impl_free(struct cphd_impl *c)
{
    if (!c) return;
    if (c->plan) {
        sarbp_fftw_planner_lock();
        fftw_destroy_plan(c->plan);
        sarbp_fftw_planner_unlock();
    }
    fftw_free(c->buf);
    free(c->ampsf);
    free(c->sc0);
    free(c->scss);
    free(c->fx2);
    free(c);
}

static void cphd_destroy(struct phd_file *f)
{
    impl_free(f->impl);
    f->impl = NULL;
}

static const struct phd_file_ops cphd_ops = {"CPHD", cphd_read, cphd_release, cphd_destroy};

struct channel {
    char id[128];
    uint64_t nvec, nsamp, sig_off, pvp_off;
};

static sarbp_status find_channel(const char *path, xmlNode *root, const char *want,
                                 struct channel *ch)
{
    xmlNode *data = child(root, "Data");
    if (!data) return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML lacks Data", path);
    char ids[256] = "";
    for (xmlNode *c = data->children; c; c = c->next) {
        if (!is_elem(c, "Channel")) continue;
        char id[128];
        text(c, "Identifier", id, sizeof id);
        size_t l = strlen(ids);
        snprintf(ids + l, sizeof ids - l, "%s'%s'", l ? ", " : "", id);
        if (want && strcmp(id, want)) continue;
        memset(ch, 0, sizeof *ch);
        snprintf(ch->id, sizeof ch->id, "%s", id);
        SARBP_TRY(need_u64(path, c, "NumVectors", &ch->nvec));
        SARBP_TRY(need_u64(path, c, "NumSamples", &ch->nsamp));
        SARBP_TRY(need_u64(path, c, "SignalArrayByteOffset", &ch->sig_off));
        SARBP_TRY(need_u64(path, c, "PVPArrayByteOffset", &ch->pvp_off));
        return SARBP_OK;
    }
    if (!ids[0]) return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML lists no Data/Channel",
                                    path);
    return sarbp_error(SARBP_ERR_INVALID, "'%s': no CPHD channel '%s' (it has %s)", path, want,
                       ids);
}

/* Polarisation "TX:RCV" of channel id from Channel/Parameters. */
static void polarisation(xmlNode *root, const char *id, char *out, size_t n)
{
    out[0] = '\0';
    xmlNode *chan = child(root, "Channel");
    if (!chan) return;
    for (xmlNode *p = chan->children; p; p = p->next) {
        if (!is_elem(p, "Parameters")) continue;
        char pid[128], tx[15], rx[15];
        text(p, "Identifier", pid, sizeof pid);
        if (strcmp(pid, id)) continue;
        if (text(p, "Polarization/TxPol", tx, sizeof tx) &&
            text(p, "Polarization/RcvPol", rx, sizeof rx) && tx[0] && rx[0])
            snprintf(out, n, "%s:%s", tx, rx);
        return;
    }
}

/* --polarisation without --channel: the first channel of that polarisation
 * ("T:R") into id[n]. */
static sarbp_status channel_of_polarisation(const char *path, xmlNode *root, const char *want,
                                            char *id, size_t n)
{
    xmlNode *data = child(root, "Data");
    char seen[256] = "";
    for (xmlNode *c = data ? data->children : NULL; c; c = c->next) {
        if (!is_elem(c, "Channel")) continue;
        char cid[128], pol[32];
        text(c, "Identifier", cid, sizeof cid);
        polarisation(root, cid, pol, sizeof pol);
        if (!strcmp(pol, want)) {
            snprintf(id, n, "%s", cid);
            return SARBP_OK;
        }
        const size_t l = strlen(seen);
        snprintf(seen + l, sizeof seen - l, "%s'%s' %s", l ? ", " : "", cid,
                 pol[0] ? pol : "unknown");
    }
    return sarbp_error(SARBP_ERR_INVALID, "'%s': no CPHD channel of polarisation %s (it has %s)",
                       path, want, seen[0] ? seen : "no channels");
}

/* Checks the XML describes what this reader can read and fills the parts of
 * the implementation and collection that come from it. */
static sarbp_status check_xml(const char *path, xmlNode *root, struct cphd_impl *c,
                              sarbp_collection *coll, uint64_t *nbytes_pvp)
{
    char buf[128];
    if (!is_elem(root, "CPHD"))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': the XML block's root is <%s>, not <CPHD>",
                           path, root ? (const char *)root->name : "");
    SARBP_TRY(need_text(path, root, "CollectionID/CollectType", buf, sizeof buf));
    if (strcmp(buf, "MONOSTATIC"))
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': CollectType %s: sarbp reads monostatic "
                           "CPHD collections only (bistatic is not supported)", path, buf);
    SARBP_TRY(need_text(path, root, "Global/DomainType", buf, sizeof buf));
    if (!strcmp(buf, "TOA")) c->toa = 1;
    else if (strcmp(buf, "FX"))
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': DomainType %s: sarbp reads FX- and "
                           "TOA-domain CPHD signal arrays", path, buf);
    SARBP_TRY(need_text(path, root, "Global/SGN", buf, sizeof buf));
    if (!strcmp(buf, "-1")) c->conj = 0;
    else if (!strcmp(buf, "+1") || !strcmp(buf, "1")) c->conj = 1;
    else return sarbp_error(SARBP_ERR_FORMAT, "'%s': Global/SGN is '%s', not -1 or +1", path, buf);
    SARBP_TRY(need_text(path, root, "Data/SignalArrayFormat", buf, sizeof buf));
    if (!strcmp(buf, "CF8")) c->fmt = SIG_CF8, c->bps = 8;
    else if (!strcmp(buf, "CI4")) c->fmt = SIG_CI4, c->bps = 4;
    else if (!strcmp(buf, "CI2")) c->fmt = SIG_CI2, c->bps = 2;
    else return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': SignalArrayFormat '%s' (sarbp reads "
                            "CF8, CI4 and CI2)", path, buf);
    if (at(root, "Data/SignalCompressionID"))
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': compressed CPHD signal arrays are not "
                           "supported", path);
    SARBP_TRY(need_u64(path, root, "Data/NumBytesPVP", nbytes_pvp));
    if (*nbytes_pvp < 8 || *nbytes_pvp % 8 || *nbytes_pvp > CPHD_MAX_PVP_BYTES)
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': Data/NumBytesPVP %llu is not a multiple of 8 "
                           "from 8 to %d", path, (unsigned long long)*nbytes_pvp,
                           CPHD_MAX_PVP_BYTES);
    text(root, "CollectionID/CollectorName", coll->collector, sizeof coll->collector);
    text(root, "CollectionID/CoreName", coll->core_name, sizeof coll->core_name);
    /* a date that is not one must not reach a SICD (or a pulse time) */
    const char *why;
    if (text(root, "Global/Timeline/CollectionStart", coll->collect_start,
             sizeof coll->collect_start) &&
        !sarbp_date_check(coll->collect_start, &why))
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': Global/Timeline/CollectionStart '%s' is not "
                           "a UTC date and time: %s", path, coll->collect_start, why);
    return SARBP_OK;
}

/* A TOA vector's sampling and band, before anything is derived from them. */
static sarbp_status check_toa_vector(const char *path, size_t i, double scss, double fx1,
                                     double fx2)
{
    if (!(scss > 0))
        return sarbp_error(SARBP_ERR_INVALID, "'%s': TOA vector %zu has SCSS %g s: not a "
                           "positive sample spacing", path, i, scss);
    if (!(fx1 > 0 && fx2 > fx1))
        return sarbp_error(SARBP_ERR_INVALID, "'%s': TOA vector %zu has the band FX1 %g Hz to "
                           "FX2 %g Hz: not a positive band", path, i, fx1, fx2);
    /* TOA_OSR = 1 / (SCSS (FX2 - FX1)) must exceed 1: the N-point transform
     * puts the band in N bins of 1 / (N SCSS), and a band of 1 / SCSS or
     * more would fold its top onto its bottom */
    if (!(scss * (fx2 - fx1) < 1))
        return sarbp_error(SARBP_ERR_INVALID, "'%s': TOA vector %zu: SCSS %g s over its band of "
                           "%g Hz is a TOA_OSR of %.6g, not over 1: the TOA samples cannot hold "
                           "the band (aliased)", path, i, scss, fx2 - fx1,
                           1 / (scss * (fx2 - fx1)));
    return SARBP_OK;
}

/* Reads the channel's PVPs into meta, t, ampsf, the TOA parameters and the
 * scene reference. band: Global/FxBand (NaN when absent), for TOA vectors
 * without FX1 and FX2 PVPs. */
static sarbp_status read_pvps(FILE *fp, const char *path, uint64_t pvp_at, size_t nbytes,
                              const struct pvp_field *pf, const double band[2],
                              struct phd_file *f, struct cphd_impl *c)
{
    sarbp_phd *m = f->meta;
    const size_t nv = m->npulses;
    enum { CHUNK = 1024 };
    unsigned char *buf = malloc(CHUNK * nbytes);
    if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = SARBP_OK;
    double srp0[3] = {0, 0, 0};
    double (*apc)[3] = malloc(nv * sizeof *apc);
    if (!apc) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu vectors", nv);
    for (size_t v0 = 0; !st && v0 < nv; v0 += CHUNK) {
        size_t n = nv - v0 < CHUNK ? nv - v0 : CHUNK;
        st = read_at(fp, path, pvp_at + (uint64_t)v0 * nbytes, buf, n * nbytes, "PVP block");
        for (size_t j = 0; !st && j < n; j++) {
            const unsigned char *p = buf + j * nbytes;
            const size_t i = v0 + j;
            double vals[20];
            int nv_ = 0;
            double tx[3], rx[3], srp[3];
            for (int k = 0; k < 3; k++) {
                tx[k] = be_f64(p + pf[PV_TXPOS].off + 8 * k);
                rx[k] = be_f64(p + pf[PV_RCVPOS].off + 8 * k);
                srp[k] = be_f64(p + pf[PV_SRPPOS].off + 8 * k);
                vals[nv_++] = tx[k];
                vals[nv_++] = rx[k];
                vals[nv_++] = srp[k];
            }
            const double ttx = be_f64(p + pf[PV_TXTIME].off), trx = be_f64(p + pf[PV_RCVTIME].off);
            const double sc0 = be_f64(p + pf[PV_SC0].off), scss = be_f64(p + pf[PV_SCSS].off);
            vals[nv_++] = ttx;
            vals[nv_++] = trx;
            vals[nv_++] = sc0;
            vals[nv_++] = scss;
            double amp = 1;
            if (pf[PV_AMPSF].present) vals[nv_++] = amp = be_f64(p + pf[PV_AMPSF].off);
            double fx1 = band[0], fx2 = band[1];
            if (c->toa && pf[PV_FX1].present && pf[PV_FX2].present) {
                vals[nv_++] = fx1 = be_f64(p + pf[PV_FX1].off);
                vals[nv_++] = fx2 = be_f64(p + pf[PV_FX2].off);
            }
            for (int k = 0; k < nv_; k++)
                if (!isfinite(vals[k]) || fabs(vals[k]) > 1e13) {
                    st = sarbp_error(SARBP_ERR_INVALID, "'%s': a per-vector parameter of vector "
                                     "%zu is NaN, Inf or absurd (%g)", path, i, vals[k]);
                    break;
                }
            if (st) break;
            if (i == 0) memcpy(srp0, srp, sizeof srp0);
            const double d = sqrt((srp[0] - srp0[0]) * (srp[0] - srp0[0]) +
                                  (srp[1] - srp0[1]) * (srp[1] - srp0[1]) +
                                  (srp[2] - srp0[2]) * (srp[2] - srp0[2]));
            if (d > CPHD_SRP_TOLERANCE) {
                st = sarbp_error(SARBP_ERR_UNSUPPORTED, "'%s': SRPPos of vector %zu is %.3f m "
                                 "from vector 0's: sarbp forms about one fixed scene reference "
                                 "point (a moving SRP is not supported)", path, i, d);
                break;
            }
            if (c->toa && (st = check_toa_vector(path, i, scss, fx1, fx2))) break;
            for (int k = 0; k < 3; k++) apc[i][k] = 0.5 * (tx[k] + rx[k]);
            f->t[i] = 0.5 * (ttx + trx);
            if (c->toa) { /* f0 the band's start; df once the sample count is known */
                m->f0[i] = fx1;
                c->sc0[i] = sc0;
                c->scss[i] = scss;
                c->fx2[i] = fx2;
            } else {
                m->f0[i] = sc0;
                m->df[i] = scss;
            }
            if (c->ampsf) c->ampsf[i] = amp;
        }
    }
    free(buf);
    if (!st && sarbp_scene_ref_set_ecef(&f->coll->ref, srp0) != SARBP_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", sarbp_error_detail());
        st = sarbp_error(SARBP_ERR_INVALID, "'%s': SRPPos: %s", path, detail);
    }
    if (!st) {
        f->coll->has_ref = 1;
        for (size_t i = 0; i < nv; i++) {
            const double d[3] = {apc[i][0] - srp0[0], apc[i][1] - srp0[1], apc[i][2] - srp0[2]};
            m->r0[i] = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            sarbp_ecef_dir_to_scene(&f->coll->ref, d, m->pos + 3 * i);
        }
    }
    free(apc);
    return st;
}

/* The largest number of attributes on one start tag of xml[n], and the
 * byte offset of that tag: the '=' outside quotes between '<' and '>' (an
 * attribute has exactly one). Comments, CDATA sections, processing
 * instructions, declarations and end tags are skipped; text holds no '<'.
 * A rough count (libxml2 judges well-formedness after), but never less than
 * a well-formed tag's attributes. Linear in n. */
static size_t max_attributes(const char *xml, size_t n, size_t *where)
{
    size_t most = 0;
    *where = 0;
    const char *p = xml, *const end = xml + n;
    while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        const char *const tag = p++;
        const char *close = NULL;
        if (end - p >= 3 && !memcmp(p, "!--", 3)) close = "-->";
        else if (end - p >= 8 && !memcmp(p, "![CDATA[", 8)) close = "]]>";
        else if (p < end && *p == '?') close = "?>";
        else if (p < end && (*p == '!' || *p == '/')) close = ">";
        if (close) {
            const size_t cl = strlen(close);
            while (p < end && !((size_t)(end - p) >= cl && !memcmp(p, close, cl))) p++;
            continue;
        }
        size_t count = 0;
        char quote = 0;
        for (; p < end && (quote || *p != '>'); p++) {
            if (quote) {
                if (*p == quote) quote = 0;
            } else if (*p == '"' || *p == '\'') {
                quote = *p;
            } else if (*p == '=') {
                count++;
            } else if (*p == '<') {
                break; /* not well-formed: libxml2 will say so */
            }
        }
        if (count > most) {
            most = count;
            *where = (size_t)(tag - xml);
        }
    }
    return most;
}

/* libxml2's message as one printable line into out[n]: newlines and other
 * control bytes to spaces (its "not proper UTF-8" message has the bytes on
 * a second line), runs of spaces to one, bytes outside ASCII (they come
 * from the file) to '?', no space at either end. */
static void one_line(const char *msg, char *out, size_t n)
{
    size_t l = 0;
    for (; msg && *msg && l + 1 < n; msg++) {
        char ch = *msg;
        if ((unsigned char)ch < 0x20 || ch == 0x7f) ch = ' ';
        else if ((unsigned char)ch > 0x7f) ch = '?';
        if (ch == ' ' && (l == 0 || out[l - 1] == ' ')) continue;
        out[l++] = ch;
    }
    while (l && out[l - 1] == ' ') l--;
    out[l] = '\0';
}

static sarbp_status open_xml(FILE *fp, const char *path, const struct header *h,
                             xmlDoc **doc)
{
    char *xml = malloc((size_t)h->xml_size);
    if (!xml) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = read_at(fp, path, h->xml_off, xml, (size_t)h->xml_size, "XML block");
    if (st) {
        free(xml);
        return st;
    }
    size_t where;
    const size_t nattr = max_attributes(xml, (size_t)h->xml_size, &where);
    if (nattr > CPHD_MAX_ATTRS) {
        free(xml);
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': an element of the CPHD XML block has %zu "
                           "attributes (at byte %zu of the block; sarbp reads at most %d, real "
                           "CPHD elements have a few)", path, nattr, where, CPHD_MAX_ATTRS);
    }
    /* a parser context of its own: its last error is this parse's */
    xmlParserCtxt *ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        free(xml);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for an XML parser");
    }
    *doc = xmlCtxtReadMemory(ctxt, xml, (int)h->xml_size, NULL, NULL,
                             XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    free(xml);
    if (!*doc) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        char msg[200];
        one_line(e ? e->message : NULL, msg, sizeof msg);
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML block is not well-formed XML "
                         "(line %d: %s)", path, e ? e->line : 0, msg[0] ? msg : "?");
        xmlFreeParserCtxt(ctxt);
        return st;
    }
    xmlFreeParserCtxt(ctxt);
    /* CPHD XML has no DTD; one could only declare entities, whose
     * expansion when text is read is a memory bomb (billion laughs) */
    if ((*doc)->intSubset || (*doc)->extSubset) {
        xmlFreeDoc(*doc);
        *doc = NULL;
        return sarbp_error(SARBP_ERR_FORMAT, "'%s': the CPHD XML block declares a DTD, which "
                           "CPHD does not use", path);
    }
    return SARBP_OK;
}

/* An optional number of the XML: 1 when present and finite. */
static int opt_double(xmlNode *root, const char *where, double *v)
{
    char buf[64], *end;
    if (!text(root, where, buf, sizeof buf) || !buf[0]) return 0;
    *v = strtod(buf, &end);
    return !*end && isfinite(*v);
}

/* TOA: each vector's frequency step 1 / (N SCSS), the number of frequency
 * samples K (the most over the vectors, at most N), the transform's buffer
 * and plan. */
static sarbp_status toa_setup(const char *path, struct phd_file *f, struct cphd_impl *c)
{
    sarbp_phd *m = f->meta;
    const size_t n = c->nsamples;
    size_t kmax = 0;
    for (size_t i = 0; i < m->npulses; i++) {
        m->df[i] = 1.0 / ((double)n * c->scss[i]);
        /* at most n: check_toa_vector held SCSS (FX2 - FX1) below 1 */
        const double span = (c->fx2[i] - m->f0[i]) / m->df[i];
        const size_t k = (size_t)floor(span + 1e-9) + 1;
        if (k < 2)
            return sarbp_error(SARBP_ERR_INVALID, "'%s': TOA vector %zu: %zu samples %g s apart "
                               "are too short a window to give two samples of its %g Hz band",
                               path, i, n, c->scss[i], c->fx2[i] - m->f0[i]);
        if (k > kmax) kmax = k;
    }
    m->nsamples = kmax < n ? kmax : n;
    c->buf = fftw_malloc(n * sizeof *c->buf);
    if (!c->buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for a %zu-point FFT", n);
    sarbp_fftw_planner_lock();
    c->plan = fftw_plan_dft_1d((int)n, c->buf, c->buf, FFTW_FORWARD, FFTW_ESTIMATE);
    sarbp_fftw_planner_unlock();
    if (!c->plan)
        return sarbp_error(SARBP_ERR_FFTW, "FFTW could not plan a transform of %zu points", n);
    return SARBP_OK;
}

/* Opens path (input_fopen: a regular file) and says its length in bytes. */
static sarbp_status open_sized(const char *path, FILE **fp, uint64_t *len)
{
    SARBP_TRY(input_fopen(path, fp));
    struct stat sb;
    if (fstat(fileno(*fp), &sb) != 0 || sb.st_size < 0) {
        int e = errno;
        fclose(*fp);
        *fp = NULL;
        return sarbp_error(SARBP_ERR_IO, "cannot read '%s': %s", path, strerror(e));
    }
    *len = (uint64_t)sb.st_size;
    return SARBP_OK;
}

sarbp_status sarbp_cphd_channels(const char *path, sarbp_cphd_channel **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    FILE *fp;
    uint64_t flen = 0;
    SARBP_TRY(open_sized(path, &fp, &flen));
    struct header h;
    xmlDoc *doc = NULL;
    sarbp_status st = parse_header(fp, path, flen, &h);
    if (!st) st = open_xml(fp, path, &h, &doc);
    fclose(fp);
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    xmlNode *data = root ? child(root, "Data") : NULL;
    size_t count = 0;
    for (xmlNode *c = data ? data->children : NULL; c; c = c->next) count += is_elem(c, "Channel");
    sarbp_cphd_channel *v = NULL;
    if (!st && count) {
        v = calloc(count, sizeof *v);
        if (!v) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (xmlNode *c = data ? data->children : NULL; !st && c; c = c->next) {
        if (!is_elem(c, "Channel")) continue;
        uint64_t nvec = 0, nsamp = 0;
        text(c, "Identifier", v[k].id, sizeof v[k].id);
        polarisation(root, v[k].id, v[k].polarisation, sizeof v[k].polarisation);
        if (!(st = need_u64(path, c, "NumVectors", &nvec)) &&
            !(st = need_u64(path, c, "NumSamples", &nsamp))) {
            v[k].nvectors = nvec > SIZE_MAX ? SIZE_MAX : (size_t)nvec;
            v[k].nsamples = nsamp > SIZE_MAX ? SIZE_MAX : (size_t)nsamp;
        }
        k++;
    }
    if (doc) xmlFreeDoc(doc);
    if (st) {
        free(v);
        return st;
    }
    *out = v;
    *n = k;
    return SARBP_OK;
}

sarbp_status phd_open_cphd(const char *path, const sarbp_reader_options *o, struct phd_file *f)
{
    const char *channel = o ? o->channel : NULL;
    FILE *fp;
    uint64_t flen = 0;
    SARBP_TRY(open_sized(path, &fp, &flen));
    struct header h;
    xmlDoc *doc = NULL;
    struct cphd_impl *c = calloc(1, sizeof *c);
    f->coll = calloc(1, sizeof *f->coll);
    sarbp_status st = c && f->coll ? SARBP_OK : sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    if (!st) st = parse_header(fp, path, flen, &h);
    if (!st) st = open_xml(fp, path, &h, &doc);
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    uint64_t nbytes = 0;
    if (!st) st = check_xml(path, root, c, f->coll, &nbytes);
    char by_pol[128], want[8];
    if (!st && !channel && o && o->polarisation &&
        sarbp_polarisation_parse(o->polarisation, want, sizeof want) == 0) {
        st = channel_of_polarisation(path, root, want, by_pol, sizeof by_pol);
        channel = by_pol;
    }
    struct channel ch;
    if (!st) st = find_channel(path, root, channel, &ch);
    struct pvp_field pf[PV_N] = {
        {"TxTime", 1, 1, 0, 0}, {"TxPos", 3, 1, 0, 0}, {"RcvTime", 1, 1, 0, 0},
        {"RcvPos", 3, 1, 0, 0}, {"SRPPos", 3, 1, 0, 0}, {"SC0", 1, 1, 0, 0},
        {"SCSS", 1, 1, 0, 0}, {"AmpSF", 1, 0, 0, 0}, {"FX1", 1, 0, 0, 0},
        {"FX2", 1, 0, 0, 0}};
    if (!st) st = pvp_layout(path, root, (size_t)nbytes, pf);
    if (!st) {
        snprintf(f->coll->source_format, sizeof f->coll->source_format, "CPHD %s%s", h.version,
                 c->toa ? " TOA" : "");
        polarisation(root, ch.id, f->coll->polarisation, sizeof f->coll->polarisation);
        if (ch.nvec == 0 || ch.nsamp == 0)
            st = sarbp_error(SARBP_ERR_INVALID, "'%s': CPHD channel '%s' has %llu vectors of "
                             "%llu samples", path, ch.id, (unsigned long long)ch.nvec,
                             (unsigned long long)ch.nsamp);
        else if (ch.nvec > SARBP_PHD_MAX_PULSES || ch.nsamp > SARBP_PHD_MAX_SAMPLES)
            st = phd_check_shape(path, "Data/Channel", ch.nvec > SIZE_MAX ? SIZE_MAX : (size_t)ch.nvec,
                                 ch.nsamp > SIZE_MAX ? SIZE_MAX : (size_t)ch.nsamp);
    }
    size_t sig_bytes = 0, pvp_bytes = 0;
    if (!st) {
        /* the channel's arrays inside their blocks */
        if (!size_mul3((size_t)ch.nvec, (size_t)ch.nsamp, c->bps, &sig_bytes) ||
            ch.sig_off > h.sig_size || sig_bytes > h.sig_size - ch.sig_off)
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD channel '%s' declares %llu x %llu "
                             "samples at byte %llu of a %llu-byte signal block: they do not fit "
                             "(truncated or corrupt)", path, ch.id, (unsigned long long)ch.nvec,
                             (unsigned long long)ch.nsamp, (unsigned long long)ch.sig_off,
                             (unsigned long long)h.sig_size);
        else if (!size_mul((size_t)ch.nvec, (size_t)nbytes, &pvp_bytes) ||
                 ch.pvp_off > h.pvp_size || pvp_bytes > h.pvp_size - ch.pvp_off)
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s': CPHD channel '%s' declares %llu vectors of "
                             "%llu PVP bytes at byte %llu of a %llu-byte PVP block: they do not "
                             "fit (truncated or corrupt)", path, ch.id,
                             (unsigned long long)ch.nvec, (unsigned long long)nbytes,
                             (unsigned long long)ch.pvp_off, (unsigned long long)h.pvp_size);
    }
    if (!st) st = sarbp_phd_alloc(SARBP_DOMAIN_FREQ, (size_t)ch.nvec, (size_t)ch.nsamp, 0,
                                  &f->meta);
    double band[2] = {NAN, NAN}; /* TOA vectors without FX1, FX2 */
    if (!st && c->toa && !(pf[PV_FX1].present && pf[PV_FX2].present) &&
        !(opt_double(root, "Global/FxBand/FxMin", &band[0]) &&
          opt_double(root, "Global/FxBand/FxMax", &band[1])))
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s': a TOA-domain CPHD needs its band: the XML has "
                         "neither PVP/FX1 and PVP/FX2 nor Global/FxBand", path);
    if (!st) {
        const size_t nv = (size_t)ch.nvec;
        f->t = malloc(nv * sizeof *f->t);
        if (pf[PV_AMPSF].present) c->ampsf = malloc(nv * sizeof *c->ampsf);
        if (c->toa) {
            c->sc0 = malloc(nv * sizeof *c->sc0);
            c->scss = malloc(nv * sizeof *c->scss);
            c->fx2 = malloc(nv * sizeof *c->fx2);
        }
        if (!f->t || (pf[PV_AMPSF].present && !c->ampsf) ||
            (c->toa && (!c->sc0 || !c->scss || !c->fx2)))
            st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    if (!st) st = read_pvps(fp, path, h.pvp_off + ch.pvp_off, (size_t)nbytes, pf, band, f, c);
    if (!st) c->nsamples = (size_t)ch.nsamp;
    if (!st && c->toa) st = toa_setup(path, f, c);
    if (doc) xmlFreeDoc(doc);
    fclose(fp);
    if (st) {
        impl_free(c);
        sarbp_phd_free(f->meta);
        free(f->coll);
        free(f->t);
        f->meta = NULL;
        f->coll = NULL;
        f->t = NULL;
        return st;
    }
    c->sig_off = h.sig_off + ch.sig_off;
    f->impl = c;
    f->ops = &cphd_ops;
    return SARBP_OK;
}

/* ---- samples --------------------------------------------------------------- */

/* Sample i of a stored vector s: AmpSF a applied, SGN +1 conjugated. */
static void sample_at(const struct cphd_impl *c, const unsigned char *s, size_t i, double a,
                      double *re, double *im)
{
    if (c->fmt == SIG_CF8) {
        *re = be_f32(s + 8 * i);
        *im = be_f32(s + 8 * i + 4);
    } else if (c->fmt == SIG_CI4) {
        *re = (int16_t)((uint16_t)s[4 * i] << 8 | s[4 * i + 1]);
        *im = (int16_t)((uint16_t)s[4 * i + 2] << 8 | s[4 * i + 3]);
    } else {
        *re = (int8_t)s[2 * i];
        *im = (int8_t)s[2 * i + 1];
    }
    *re *= a;
    *im *= c->conj ? -a : a;
}

/* Multiplies z by exp(-j 2 pi cycles). */
static void rotate(double z[2], double cycles)
{
    const double c = cos(2 * M_PI * cycles), s = sin(2 * M_PI * cycles);
    const double re = z[0] * c + z[1] * s, im = z[1] * c - z[0] * s;
    z[0] = re;
    z[1] = im;
}

/* The TOA vector v in c->buf to its m->nsamples frequency samples at
 * f_k = FX1 + k df (the header comment's X_k, SGN -1 after the conjugation),
 * with g_k = f_k - fx_C = (FX1 - fx_C) + k df the offset from the vector's
 * centre fx_C = (FX1 + FX2) / 2 that the standard fixes the TOA phase to:
 * X_k = exp(-j 2 pi g_k SC0) / N  DFT_k[s_n exp(-j 2 pi (FX1 - fx_C) SCSS n)],
 * since df SCSS = 1 / N. Phases are reduced to cycles in [0, 1) before the
 * sine. */
static void toa_to_fx(struct cphd_impl *c, const sarbp_phd *m, size_t v, sarbp_c32 *d)
{
    const size_t n = c->nsamples;
    const double fx1 = m->f0[v], scss = c->scss[v], sc0 = c->sc0[v];
    const double g0 = fx1 - 0.5 * (fx1 + c->fx2[v]); /* FX1 - fx_C: minus half the band */
    const double a = g0 * scss - floor(g0 * scss);
    for (size_t j = 0; j < n; j++) {
        const double cyc = a * (double)j;
        rotate(c->buf[j], cyc - floor(cyc));
    }
    fftw_execute(c->plan);
    const double b = g0 * sc0 - floor(g0 * sc0), db = sc0 / ((double)n * scss);
    for (size_t k = 0; k < m->nsamples; k++) {
        const double cyc = b + db * (double)k;
        double z[2] = {c->buf[k][0] / (double)n, c->buf[k][1] / (double)n};
        rotate(z, cyc - floor(cyc));
        d[k].re = (float)z[0];
        d[k].im = (float)z[1];
    }
}

static sarbp_status cphd_read(struct phd_file *f, size_t p0, size_t np, sarbp_c32 *dst)
{
    struct cphd_impl *c = f->impl;
    if (!c->fp) {
        SARBP_TRY(input_fopen(f->path, &c->fp));
    }
    /* n samples a vector in the file, k out (FX: the same; TOA: the band's) */
    const size_t n = c->nsamples, k = f->meta->nsamples, row = n * c->bps;
    size_t per = ((size_t)1 << 22) / row; /* about 4 MiB a read */
    if (per < 1) per = 1;
    if (per > np) per = np;
    unsigned char *buf = malloc(per * row);
    if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    sarbp_status st = SARBP_OK;
    for (size_t v0 = 0; !st && v0 < np; v0 += per) {
        const size_t nr = np - v0 < per ? np - v0 : per;
        st = read_at(c->fp, f->path, c->sig_off + (uint64_t)(p0 + v0) * row, buf, nr * row,
                     "signal block");
        for (size_t j = 0; !st && j < nr; j++) {
            const unsigned char *s = buf + j * row;
            sarbp_c32 *d = dst + (v0 + j) * k;
            const double a = c->ampsf ? c->ampsf[p0 + v0 + j] : 1.0;
            for (size_t i = 0; i < n; i++) {
                double re, im;
                sample_at(c, s, i, a, &re, &im);
                if (c->toa) {
                    c->buf[i][0] = re;
                    c->buf[i][1] = im;
                } else {
                    d[i].re = (float)re;
                    d[i].im = (float)im;
                }
            }
            if (c->toa) toa_to_fx(c, f->meta, p0 + v0 + j, d);
        }
    }
    free(buf);
    return st;
}

#endif /* SARBP_HAVE_LIBXML2 */
