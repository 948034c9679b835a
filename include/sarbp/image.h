/* sarbp/image.h - complex images and their files.
 *
 * An image is a grid plus complex64 pixels [ny][nx] (row = y, row 0 = south)
 * and a few string attributes recording how it was made. Files:
 *  - .h5:  dataset /image compound {r, i} float32 [ny][nx]; /x [nx], /y [ny]
 *          pixel-centre coordinates (m, float64, attribute units "m");
 *          attributes on the root: grid (nx, ny int64; dx, dy, xc, yc, zc
 *          float64, each with a companion string attribute KEY_units = "m")
 *          and every sarbp_image attribute: those of the provenance table
 *          (image_write.c: npulses, nsamples, upsample, coherent_gain,
 *          max_error_db, ...) as int64 or float64 when their value is such a
 *          number, with KEY_units where physical; the others as strings. The
 *          reader turns numbers back into strings and skips the *_units
 *          companions, so attributes round-trip.
 *          Provenance (set by sarbp form): algorithm (bp, ffbp), ffbp_* (the
 *          factorization and its predicted error), max_error_db (the target),
 *          selection, autofocus, range_window, azimuth_window, interp,
 *          upsample, precision, backend, device, sarbp_version, command_line;
 *          polarisation when the input says ("H:H", transmit:receive).
 *          Formed on terrain (sarbp/terrain.h): dataset /heights float32
 *          [ny][nx], the z (m) each pixel was formed at, and the attribute
 *          heights_source (the heights file, or "dem:FILE").
 *  - .npy: complex64 ('<c8'), shape (ny, nx), C order.
 *  - .png: 8-bit grayscale of 20 log10 |I| over a dB display range
 *          (sarbp_image_display: db_range below the peak -> 0, peak -> 255,
 *          or with SARBP_DB_RANGE_AUTO one chosen from the image), north
 *          (+y) up (row 0 of the PNG is the largest y).
 * Writers go through a temporary file beside the output (created
 * exclusively: a file or symbolic link planted there is never followed),
 * synced and renamed over the output when complete; on failure, or when the
 * process is interrupted (SIGINT, SIGTERM, SIGHUP), the temporary is
 * removed and the output left as it was. */
#ifndef SARBP_IMAGE_H
#define SARBP_IMAGE_H

#include <stddef.h>
#include "sarbp/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_IMAGE_MAX_ATTRS 64

typedef struct {
    char key[48];
    char value[976]; /* a command line fits */
} sarbp_attr;

typedef struct sarbp_image_s {
    sarbp_grid grid;
    sarbp_c32 *data; /* [ny][nx], owned */
    size_t nattrs;
    sarbp_attr attrs[SARBP_IMAGE_MAX_ATTRS];
    int has_grid_coords; /* 1 when the grid is known (.h5); 0 for .npy (unit spacing) */
    double *af_phase;    /* [af_npulses], owned, or NULL: the autofocus phase applied per pulse
                            (rad; pulse j's samples times exp(+j af_phase[j]), pulses in input
                            order after selection), written to .h5 as autofocus/phase */
    size_t af_npulses;
    double *af_range;    /* [af_npulses], owned, or NULL: the autofocus range applied per pulse
                            (m; pulse j's sample at frequency f times exp(+j 4 pi f af_range[j]
                            / c)), written to .h5 as autofocus/range */
} sarbp_image;

/* Zeroed image for grid g. Caller frees with sarbp_image_free. */
sarbp_status sarbp_image_alloc(const sarbp_grid *g, sarbp_image **out);
/* The same with its pixels not set, for a caller that writes every one
 * (a form whose layout is not in place, sarbp_form_layout): an image freed
 * before comes back without the cost of zeroing it again (8 MiB at 1024^2
 * cost a form 0.6 ms, a third of its kernel). */
sarbp_status sarbp_image_alloc_unset(const sarbp_grid *g, sarbp_image **out);
void sarbp_image_free(sarbp_image *img); /* NULL is a no-op */

/* Sets (or replaces) a string attribute; values longer than the slot are
 * truncated. SARBP_ERR_INVALID when the table is full. */
sarbp_status sarbp_image_set_attr(sarbp_image *img, const char *key, const char *value);
const char *sarbp_image_get_attr(const sarbp_image *img, const char *key); /* NULL if absent */
/* Copies phase[n] into img's af_phase (replacing it); n 0: none. */
sarbp_status sarbp_image_set_autofocus(sarbp_image *img, const double *phase, size_t n);
/* Copies range[af_npulses] into img's af_range (replacing it); NULL: none.
 * Set the phases first. */
sarbp_status sarbp_image_set_autofocus_range(sarbp_image *img, const double *range);

typedef enum {
    SARBP_IMG_UNKNOWN = 0, SARBP_IMG_H5, SARBP_IMG_NPY, SARBP_IMG_PNG,
    SARBP_IMG_SICD,    /* .nitf, .ntf, .sicd: SICD 1.3.0 in NITF 2.1 (sicd_write.c) */
    SARBP_IMG_GEOTIFF, /* .tif, .tiff: georeferenced 8-bit dB quick look (geotiff_write.c) */
    SARBP_IMG_KMZ      /* .kmz: KML ground overlay of the dB PNG (kmz_write.c) */
} sarbp_image_format;

/* Format from the file name's extension (.h5/.hdf5, .npy, .png, .nitf/.ntf/
 * .sicd, .tif/.tiff, .kmz), case-insensitive. */
sarbp_image_format sarbp_image_format_from_name(const char *path);
/* The formats' main name endings for messages, ".h5, .npy, ... or .kmz",
 * into buf (n bytes, NUL-terminated, truncated to fit). */
void sarbp_image_format_list(char *buf, size_t n);
/* Whether a format places the image on the Earth (SICD, GeoTIFF, KMZ): it
 * needs the image's scene_ref attribute (sarbp/geo.h). */
int sarbp_image_format_is_geo(sarbp_image_format f);

/* ---- a .npy written band by band while the image forms ----
 * A large image's rows are written to its .npy output's temporary as each
 * band of them is formed (sarbp_form_request's on_rows), instead of all
 * after the form. The temporary becomes the output only through
 * sarbp_image_write_all_ctx (the context's npy), with the other outputs and
 * after the whole image is checked: a form or a check that fails leaves the
 * earlier file as it was.
 *
 *     sarbp_npy_stream *ns;
 *     SARBP_TRY(sarbp_npy_stream_open(path, ny, nx, &ns));
 *     ... sarbp_npy_stream_rows(ns, row0, nrows, rows) for every band ...
 *     st = sarbp_npy_stream_finish(ns);
 *     if (!st) st = sarbp_image_write_all_ctx(paths, n, img, db, &ctx);   (ctx.npy[i] = ns)
 *     sarbp_npy_stream_free(ns);
 */
typedef struct sarbp_npy_stream_s sarbp_npy_stream;

/* Creates path's temporary (sarbp/output.h's rules), writes the header of
 * a complex64 image of ny x nx pixels and starts the stream's writer
 * thread. SARBP_ERR_UNSUPPORTED on a big-endian host (write the whole
 * image instead); SARBP_ERR_IO naming path when the temporary cannot be
 * made. */
sarbp_status sarbp_npy_stream_open(const char *path, size_t ny, size_t nx, sarbp_npy_stream **out);
/* Queues rows [row0, row0 + nrows) of the image, which lie at rows
 * ([nrows][nx]) and must stay there, unchanged, until
 * sarbp_npy_stream_finish returns; the writer thread writes them at their
 * offset. Thread-safe; a row given twice, or past the image, is
 * SARBP_ERR_INVALID; once a write has failed, its error (a form giving
 * rows through its on_rows then stops instead of forming for nothing). */
sarbp_status sarbp_npy_stream_rows(sarbp_npy_stream *s, size_t row0, size_t nrows,
                                   const sarbp_c32 *rows);
/* Waits for the writer: the first write error (SARBP_ERR_IO naming the
 * output), or SARBP_ERR_INTERNAL when some rows were never given. */
sarbp_status sarbp_npy_stream_finish(sarbp_npy_stream *s);
/* Stops the writer, removes the temporary unless a write of all outputs
 * took it, frees s. NULL is a no-op. */
void sarbp_npy_stream_free(sarbp_npy_stream *s);

struct sarbp_phd_s;
/* What geolocated outputs need beyond the image and its attributes (the
 * scene reference, collection names and windows are attributes). */
typedef struct {
    const struct sarbp_phd_s *meta; /* metadata of the pulses formed (scene frame), or NULL */
    const double *times;            /* [meta->npulses] s after the image's collect_start,
                                     * or NULL when unknown */
    int tiff_complex;               /* GeoTIFF: complex float32 pixels (CFloat32) instead
                                     * of the 8-bit dB magnitude */
    struct sarbp_image_display_s *display; /* out, or NULL: the dB display range the
                                     * write chose for its 8-bit outputs (.png, .kmz,
                                     * a dB .tif; sarbp_image_display_choose), set
                                     * before any file is written; untouched when
                                     * none is 8-bit. Inside the writers never NULL */
    sarbp_npy_stream *const *npy;   /* NULL, or [n] beside the paths: output i is the file
                                     * npy[i] wrote (finished, every row of this image),
                                     * committed with the others, where npy[i] is not NULL */
} sarbp_image_context;

/* The 8-bit dB quick looks (.png, dB .tif, .kmz) show 20 log10 |I| in dB
 * relative to the image's peak |I|: floor_db and below -> 0, top_db and
 * above -> 255, linear between (rounded); when top_db < 0, everything
 * above it but the peak itself is 254, so the quick look's one brightest
 * pixel is still the image's peak. A positive db_range gives
 * floor_db = -db_range, top_db = 0. SARBP_DB_RANGE_AUTO chooses them from
 * the image's own magnitudes, so that the scene shows whatever its dynamic
 * range: floor_db at the SARBP_DISPLAY_FLOOR_PCT percentile and top_db at
 * the SARBP_DISPLAY_TOP_PCT percentile of 20 log10 |I| over the pixels
 * that are not exactly zero (a histogram of 0.07 dB bins, one pass, no
 * sort): about 1% of the pixels black and 0.01% saturated. floor_db is at
 * least SARBP_DISPLAY_MIN_DB below top_db (a flat image), and an image
 * with no nonzero pixel gets the range 50 dB below its (zero) peak. */
#define SARBP_DB_RANGE_AUTO (-1.0)
#define SARBP_DISPLAY_FLOOR_PCT 1.0
#define SARBP_DISPLAY_TOP_PCT 99.99
#define SARBP_DISPLAY_MIN_DB 10.0
typedef struct sarbp_image_display_s {
    double floor_db;  /* dB relative to the peak, shown black; < top_db */
    double top_db;    /* dB relative to the peak, shown white; <= 0 */
    double peak_db;   /* 20 log10 of the peak |I| (-inf for an all-zero image) */
    int automatic;    /* 1: chosen from the image (SARBP_DB_RANGE_AUTO); 0: from db_range */
} sarbp_image_display;

/* The display range of img for db_range (> 0, or SARBP_DB_RANGE_AUTO);
 * reads every pixel once (non-finite ones are ignored). SARBP_ERR_INVALID
 * for any other db_range or no image; SARBP_ERR_NOMEM. Thread-safe. */
sarbp_status sarbp_image_display_choose(const sarbp_image *img, double db_range,
                                        sarbp_image_display *out);

/* Writes img in the format chosen by the extension. db_range > 0 or
 * SARBP_DB_RANGE_AUTO (the 8-bit dB outputs only: PNG, dB GeoTIFF, KMZ).
 * SARBP_ERR_INVALID, before any file is created, when a pixel is NaN or Inf
 * (the detail counts them) or the format is unknown; SARBP_ERR_IO naming
 * path when its directory is missing or not writable. */
sarbp_status sarbp_image_write(const char *path, const sarbp_image *img, double db_range);
/* Writes img to each of paths[0..n) (format from each name), all or nothing:
 * every file is written to its temporary first, and the temporaries are
 * renamed only when all are complete. On failure no output changes. */
sarbp_status sarbp_image_write_all(const char *const *paths, size_t n, const sarbp_image *img,
                                   double db_range);
/* The same with the context geolocated outputs need (NULL: none; then a
 * SICD cannot be written, GeoTIFF and KMZ can). Every output's needs are
 * checked before any file is created: a geolocated output of an image
 * without a scene reference, or a SICD without pulse times, is
 * SARBP_ERR_INVALID naming the output and saying what to give. */
sarbp_status sarbp_image_write_all_ctx(const char *const *paths, size_t n, const sarbp_image *img,
                                       double db_range, const sarbp_image_context *ctx);
sarbp_status sarbp_image_write_h5(const char *path, const sarbp_image *img);
/* The pixel spacing (dx, dy in metres) at which a SICD of a ground grid
 * centred at (xc, yc, zc) over the pulses of meta holds osr samples per
 * cycle of its spatial-frequency support along x and y (the support is
 * the ground projection of every pulse's band, as the SICD's ImpRespBW;
 * sicdcheck wants osr from 1.1 to 2.2). SARBP_ERR_INVALID when the pulses
 * span no band along an axis. */
sarbp_status sarbp_image_sicd_spacing(const struct sarbp_phd_s *meta, double xc, double yc,
                                      double zc, double osr, double spacing[2]);
sarbp_status sarbp_image_write_npy(const char *path, const sarbp_image *img);
sarbp_status sarbp_image_write_png(const char *path, const sarbp_image *img, double db_range);
/* An 8-bit PNG of raw pixels (channels 1: gray, 3: RGB), w x h, rows top
 * first, written through a temporary beside path: nothing is left at path
 * on failure and a file the user had there stays until the new one is
 * whole. For plots and other quick looks that are not an image's pixels. */
sarbp_status sarbp_png_write8(const char *path, const unsigned char *pix, size_t w, size_t h,
                              int channels);

/* Reads a complex image written as .h5 (grid restored), .npy (complex64 or
 * complex128, 2-D; grid with unit spacing, has_grid_coords = 0) or SICD in
 * NITF 2.1 (RE32F_IM32F, one or several image segments, told by the "NITF"
 * magic): a SICD written by sarbp is turned back into its .h5 image (grid
 * and orientation from the sarbp_grid and sarbp_layout parameters of its
 * ImageFormation/Processing block, pixels identical); any other SICD is
 * read as nx = NumCols, ny = NumRows, dx = Col/SS, dy = Row/SS, centre 0,
 * pixel (ix, iy) = SICD (row iy, column ix). */
sarbp_status sarbp_image_read(const char *path, sarbp_image **out);

#ifdef __cplusplus
}
#endif
#endif
