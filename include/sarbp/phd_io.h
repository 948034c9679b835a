/* sarbp/phd_io.h - reading and writing phase histories.
 *
 * Inputs sarbp reads (detected from the file's content, not its name):
 *  - sarbp's own HDF5 layout (attribute "sarbp_format" = "sarbp-phd", version
 *    checked on load; documented in docs/formats.md);
 *  - Gotcha MATLAB files (v5 through matio; v7.3 through matio or HDF5), one
 *    struct `data` with fields fp, freq, x, y, z, r0, th, phi, af.r_correct,
 *    af.ph_correct;
 *  - HDF5 files with the Gotcha field names at the root or in group "data",
 *    complex as compound {r, i} or {real, imag};
 *  - NGA CPHD 1.0 / 1.1, monostatic, FX or TOA domain (TOA vectors come
 *    out as frequency samples over their band), CF8 / CI4 / CI2 signal
 *    arrays, one channel (cphd_read.c); positions are taken to the east-
 *    north-up frame at the scene reference point (SRPPos), which the reader
 *    reports through sarbp_reader_collection().
 * Several inputs (files, directories, globs) are concatenated in azimuth
 * order. The reader keeps all per-pulse metadata in memory and streams the
 * samples in blocks (HDF5 hyperslabs), so sample memory is bounded by the
 * block the caller asks for.
 *
 * Inputs are distrusted: every declared size is checked against the file
 * and the limits below before anything is allocated, and each file's
 * metadata is read first in a forked probe (sarbp/probe.h), so a malformed
 * file gives SARBP_ERR_FORMAT (or _INVALID) naming it, never a crash. */
#ifndef SARBP_PHD_IO_H
#define SARBP_PHD_IO_H

#include "sarbp/geo.h"
#include "sarbp/phd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_PHD_FORMAT_NAME "sarbp-phd"
#define SARBP_PHD_FORMAT_VERSION 1

/* Plausibility limits on what one input file may declare (docs/formats.md, "The
 * sarbp-phd file"). Beyond them a file is refused before anything is
 * allocated for it; within them every declared size is still checked
 * against the bytes the file holds. */
#define SARBP_PHD_MAX_PULSES ((size_t)1 << 24)  /* pulses in one file: 16,777,216 */
#define SARBP_PHD_MAX_SAMPLES ((size_t)1 << 22) /* samples per pulse: 4,194,304 */

typedef struct sarbp_reader_s sarbp_reader;

/* Expands inputs (a file, a directory: its *.mat / *.h5 / *.hdf5 files
 * sorted by name, or a glob pattern) and opens each, loading all metadata.
 * Checks that the inputs agree (domain, samples per pulse) and that each is
 * valid (sarbp_phd_validate on the metadata). Files are ordered by the
 * azimuth of their first pulse. */
sarbp_status sarbp_reader_open(const char *const *inputs, size_t ninputs, sarbp_reader **out);

/* Options for opening; a NULL options pointer means all defaults. */
typedef struct {
    const char *channel; /* CPHD: the Data/Channel/Identifier to read; NULL: the first */
    /* "HH", "VV", "HV" or "VH" (transmit, receive): keep only the files of
     * that polarisation (and, in a CPHD without channel, its first channel
     * of that polarisation); SARBP_ERR_INVALID when a file's polarisation
     * is unknown or none is left. NULL: every file. */
    const char *polarisation;
} sarbp_reader_options;
sarbp_status sarbp_reader_open_opts(const char *const *inputs, size_t ninputs,
                                    const sarbp_reader_options *o, sarbp_reader **out);

/* Files whose pulses repeat or overlap in azimuth (the HH and VV copies of
 * the same pulses in one folder, a file given under two names) are refused
 * at open: SARBP_ERR_INVALID naming two such files. Files are taken to
 * overlap when their azimuth spans [first, last pulse] meet. */

/* What the inputs say about the collection: the scene reference point
 * (has_ref) and names; all empty for inputs that carry none (sarbp's own
 * HDF5, Gotcha), but for the polarisation their names or attribute give. Owned by the reader. Inputs with a reference must agree on
 * it (SARBP_ERR_MISMATCH at open otherwise). */
const sarbp_collection *sarbp_reader_collection(const sarbp_reader *rd);
/* Supplies the scene reference of inputs that carry none (Gotcha's
 * --scene-ref): their scene frame is then taken to be that reference's.
 * SARBP_ERR_INVALID when the inputs have their own. */
sarbp_status sarbp_reader_set_scene_ref(sarbp_reader *rd, const sarbp_scene_ref *ref);
/* Time of each selected pulse (s after collection()->collect_start; for
 * CPHD the mean of TxTime and RcvTime), or NULL when the inputs have none.
 * Owned by the reader; valid until the next select. */
const double *sarbp_reader_times(const sarbp_reader *rd);

/* Restricts the reader to pulses [i0, i1) of the full concatenation; later
 * meta() and read() see only those (indices restart at 0). */
sarbp_status sarbp_reader_select(sarbp_reader *rd, size_t i0, size_t i1);

/* Metadata of the (selected) pulses; data == NULL. Owned by the reader. */
const sarbp_phd *sarbp_reader_meta(const sarbp_reader *rd);

/* Number of input files after expansion, and the i-th name (for attributes). */
size_t sarbp_reader_nfiles(const sarbp_reader *rd);
const char *sarbp_reader_file(const sarbp_reader *rd, size_t i);
/* Pulses of the i-th file (of the full concatenation, before select), and a
 * short name of its format for people ("sarbp-phd", "Gotcha MATLAB v5",
 * "Gotcha HDF5"); 0 and NULL when i is out of range. Files are numbered in
 * azimuth order. */
size_t sarbp_reader_file_npulses(const sarbp_reader *rd, size_t i);
const char *sarbp_reader_file_format(const sarbp_reader *rd, size_t i);

/* Polarisation of the i-th file as "T:R" (transmit:receive, "H:H"), or NULL
 * when unknown; *from (may be NULL) says where it came from: "the CPHD
 * channel", "the file's polarisation attribute" (sarbp-phd), "the file
 * name" (Gotcha's data_3dsar_pass1_az001_HH.mat) or "the directory name"
 * (the AFRL layout .../pass1/HH/...). Owned by the reader. The reader's
 * collection()->polarisation holds it when every file agrees. */
const char *sarbp_reader_file_polarisation(const sarbp_reader *rd, size_t i, const char **from);

/* Parses "HH", "hh", "H:H" (and VV, HV, VH) into "H:H" in out[n]; -1 for
 * anything else. */
int sarbp_polarisation_parse(const char *s, char *out, size_t n);

/* The channels of a CPHD file, for listing (sarbp info): *out gets n
 * entries the caller frees with free(). Reads the header and XML only. */
typedef struct {
    char id[128];           /* Data/Channel/Identifier */
    char polarisation[32];  /* "T:R" from Channel/Parameters/Polarization, "" unknown */
    size_t nvectors, nsamples;
} sarbp_cphd_channel;
sarbp_status sarbp_cphd_channels(const char *path, sarbp_cphd_channel **out, size_t *n);

/* Reads samples of pulses [p0, p0 + np) (selected indices) into
 * dst[np][nsamples]. Checks every sample is finite (SARBP_ERR_INVALID naming
 * the file and pulse otherwise). When the inputs carry ph_correct and
 * apply_autofocus was set, the phase correction is applied here. */
sarbp_status sarbp_reader_read(sarbp_reader *rd, size_t p0, size_t np, sarbp_c32 *dst);

/* Gotcha autofocus: when on and the inputs carry af fields, meta()->r0 gets
 * r_correct added and read() multiplies pulse i by exp(j*ph_correct[i]).
 * Off by default. While on, meta()->r_correct and ph_correct are NULL: the
 * corrections are in r0 and the samples, and must not be applied again. */
void sarbp_reader_set_autofocus(sarbp_reader *rd, int on);

/* A phase per selected pulse (rad, phase[n], n the selected pulses):
 * read() multiplies pulse i's samples by exp(j phase[i]) (after the file's
 * own corrections, when on): an autofocus estimate saved before, or an
 * error injected to test one. Set after the selection (a new selection
 * drops it); NULL removes it. SARBP_ERR_INVALID for a count that is not
 * the selection's or a value that is not a finite angle. */
sarbp_status sarbp_reader_set_phase(sarbp_reader *rd, const double *phase, size_t n);
/* The same with a range per selected pulse (m, range[n]): read() multiplies
 * pulse i's sample at frequency f by exp(+j 4 pi f range[i] / c), as if its
 * r0 were r0 - range[i] (sarbp_autofocus_apply's convention). Frequency-
 * domain samples only (SARBP_ERR_UNSUPPORTED otherwise); a value that is
 * not finite or past 1 km: SARBP_ERR_INVALID. */
sarbp_status sarbp_reader_set_range(sarbp_reader *rd, const double *range, size_t n);

void sarbp_reader_free(sarbp_reader *rd); /* NULL is a no-op */

/* Convenience: open, optionally select [i0, i1) (i1 == 0: all), read all. */
sarbp_status sarbp_phd_load(const char *const *inputs, size_t ninputs, sarbp_phd **out);

/* Writes phd (with data) in sarbp's own HDF5 layout, to a temporary name
 * renamed to path when complete. */
sarbp_status sarbp_phd_write_h5(const char *path, const sarbp_phd *phd);

/* Writes phd as a Gotcha-style HDF5 file (group "data", fields fp [P][K]
 * compound {real, imag}, freq, x, y, z, r0, th when present); for tests
 * and interchange. FREQ domain with one f0/df for all pulses only.
 * (phi, af/r_correct and af/ph_correct are written too when present.) */
sarbp_status sarbp_phd_write_gotcha_h5(const char *path, const sarbp_phd *phd);

/* Streaming writer of sarbp's own layout, for phase histories larger than
 * memory (sarbp convert). open() checks meta (sarbp_phd_validate; meta->data
 * is not used) and writes all metadata to a temporary file beside path;
 * write() adds the samples of pulses [p0, p0 + np), src[np][nsamples], in
 * order (p0 must be the number of pulses written so far) and rejects NaN or
 * Inf; commit() closes the file and renames it to path once every pulse is
 * written. free() without a successful commit removes the temporary file, so
 * a failure leaves no output. Not thread-safe. */
typedef struct sarbp_phd_writer_s sarbp_phd_writer;
sarbp_status sarbp_phd_writer_open(const char *path, const sarbp_phd *meta,
                                   sarbp_phd_writer **out);
sarbp_status sarbp_phd_writer_write(sarbp_phd_writer *w, size_t p0, size_t np,
                                    const sarbp_c32 *src);
sarbp_status sarbp_phd_writer_commit(sarbp_phd_writer *w);
void sarbp_phd_writer_free(sarbp_phd_writer *w); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif
