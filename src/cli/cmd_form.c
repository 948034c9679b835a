/* cmd_form.c - sarbp form: phase histories in, images out. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h> /* dup */

#include "cli.h"
#include "sarbp/date.h"
#include "sarbp/mpi.h"
#include "sarbp/output.h"

#define MAX_IO 64
#define MAX_SPACING 1e6        /* metres: 1000 km pixels */

static void help(void)
{
    printf(
"usage: sarbp form -i IN [-i IN...] -o OUT [-o OUT...] [options]\n"
"\n"
"Forms a complex SAR image by backprojection of every pulse onto a ground grid.\n"
"\n"
"inputs and outputs:\n"
"  -i, --input IN        phase history: sarbp .h5, Gotcha .mat (v5/v7.3), Gotcha-style\n"
"                        HDF5 or NGA CPHD 1.0/1.1 (monostatic, FX or TOA, CF8/CI4/CI2);\n"
"                        a directory or a glob reads every file, in azimuth order\n"
"  -o, --output OUT      image file, format from the extension: .h5 (complex64 + x, y\n"
"                        coordinates + attributes), .npy (complex64, Ny x Nx), .png (dB);\n"
"                        geolocated (need a scene reference: CPHD, or --scene-ref):\n"
"                        .nitf/.ntf/.sicd (SICD 1.3 in NITF 2.1, complex float32; needs\n"
"                        pulse times: CPHD, or --prf and --collect-start), .tif\n"
"                        (GeoTIFF, dB, WGS-84 control points),\n"
"                        .kmz (KML ground overlay of the dB PNG)\n"
"      --pulses I0:I1    use pulses I0 (inclusive) to I1 (exclusive)\n"
"      --azimuth A0:A1   use pulses whose azimuth (degrees) lies in [A0, A1]\n"
"      --autofocus [M]   M: estimate: a phase correction per pulse from the data (the\n"
"                        image's sharpness, sum |I|^4, maximised over a polynomial,\n"
"                        then pulse by pulse: the most accurate); pga: phase gradient\n"
"                        autofocus (the brightest points' phase history: fast, for a\n"
"                        few bright points on weak clutter); file (the bare\n"
"                        --autofocus): apply the Gotcha corrections the input\n"
"                        carries; none (default). estimate and pga run on the form's\n"
"                        back end (the cpu, or the first cuda device), in one process,\n"
"                        on top of --phase-csv when both are given, over the whole\n"
"                        grid when it fits 1 GiB (4 GiB on a GPU) at 8 bytes a pulse\n"
"                        and pixel, else over its sharpest 64 x 64 windows\n"
"      --autofocus-range estimate a range per pulse too (frequency-domain data): the\n"
"                        correction applied over the whole band, for navigation\n"
"                        errors of centimetres\n"
"      --autofocus-window X0,Y0,NX,NY  estimate over these pixels of the grid (NX x NY\n"
"                        from column X0, row Y0; repeat for several, at most 64)\n"
"      --autofocus-iterations N  at most N iterations per stage (default 40, pga 20)\n"
"      --autofocus-min-gain G  do no harm: estimate's check (default 0.01). It estimates\n"
"                        on two halves of the pixels and applies the halves' mean only\n"
"                        when each makes the half it never saw sharper by at least\n"
"                        the fraction G; else nothing (the data are focused, and what\n"
"                        it would fit is the scene's speckle); -1: no check\n"
"      --autofocus-csv F also write the estimate as CSV (pulse, phase_rad, and range_m\n"
"                        with --autofocus-range; pulses in input order after\n"
"                        --pulses/--azimuth)\n"
"      --autofocus-plot F.png  also plot the estimated phase per pulse (the .h5 image\n"
"                        carries it as autofocus/phase, and autofocus/range, anyway)\n"
"      --phase-csv F     multiply each selected pulse by exp(j phase) from F (pulse,\n"
"                        phase_rad rows as --autofocus-csv writes, with range_m when\n"
"                        present: a saved estimate, or an error injected to test\n"
"                        autofocus)\n"
"      --channel ID      CPHD: the channel (Data/Channel/Identifier) to read (default:\n"
"                        the first)\n"
"      --polarisation P  HH, VV, HV or VH: read only the inputs of that polarisation\n"
"                        (Gotcha file or folder names, the sarbp .h5 attribute, a\n"
"                        CPHD channel's); inputs whose azimuths repeat or overlap\n"
"                        (HH and VV copies in one folder) are refused without it\n"
"      --scene-ref LAT,LON,HEIGHT[,HEADING]\n"
"                        where the scene origin is on the Earth (WGS-84 degrees and\n"
"                        metres above the ellipsoid) for inputs that do not say (Gotcha,\n"
"                        sarbp .h5); the scene frame is then east-north-up there,\n"
"                        turned by HEADING (the +y axis, degrees clockwise from north;\n"
"                        default 0). CPHD inputs carry their own. Recorded in .h5\n"
"                        outputs (attribute scene_ref); geolocated outputs need it\n"
"      --prf HZ          for inputs without pulse times (Gotcha, sarbp .h5): pulse i\n"
"                        of the selection is at i / HZ seconds; with --collect-start,\n"
"                        what a SICD output needs (a CPHD carries both)\n"
"      --collect-start T the collection start, ISO 8601 UTC (2008-06-01T12:00:00Z)\n"
"      --complex         .tif outputs hold the complex image (CFloat32), not dB\n"
"\n"
"image grid (default: the alias-free scene at half-resolution spacing; with a SICD\n"
"output, two samples a cycle of the ground-plane band, as sicdcheck wants):\n"
"      --grid NXxNY      pixels, e.g. 512x512\n"
"      --spacing D|DX,DY pixel spacing in metres\n"
"      --center X,Y[,Z]  grid centre in metres (scene frame; default 0,0,0)\n"
"\n"
"terrain (form each pixel where the ground is; cpu and cuda, --algorithm bp; docs/terrain.md):\n"
"      --heights FILE    the z of every pixel (m, scene frame): FILE.npy or FILE.h5[:/DSET]\n"
"                        (default dataset /heights), float32/float64 [ny][nx], rows = y\n"
"                        as the image; the .h5 image records it (heights, heights_source)\n"
"      --dem FILE.tif    a GeoTIFF DEM in WGS-84 geographic coordinates (EPSG:4326,\n"
"                        heights above the ellipsoid), sampled bilinearly at each\n"
"                        pixel's latitude and longitude (needs the scene reference)\n"
"      --geoid-offset M  --dem: metres added to every DEM height (orthometric DEMs)\n"
"\n");
    /* the help is longer than stdio's buffer: a flush between the parts
     * keeps the reason of a failed write (sarbp form --help >/dev/full) */
    cli_flush_stdout();
    printf(
"processing:\n"
"      --backend B       cpu, cuda or auto (default auto: cuda when a usable GPU\n"
"                        exists, otherwise cpu, saying so on stderr)\n"
"      --algorithm A     bp (default): direct backprojection, every pulse onto every\n"
"                        pixel; ffbp: fast factorized backprojection (fp32; cpu, or\n"
"                        cuda with range compression on the host):\n"
"                        pulses backprojected in small groups onto coarse polar images\n"
"                        merged in a tree, about N^2 log P work instead of N^2 P, its\n"
"                        error against bp held below --max-error-db by the factorization\n"
"                        it picks (-v prints it and the predicted error); auto: ffbp\n"
"                        where predicted faster than bp at that accuracy, else bp (the\n"
"                        prediction is the cpu's: auto keeps bp on cuda). ffbp needs the\n"
"                        radar outside the image\n"
"      --max-error-db E  ffbp: the error allowed against direct backprojection, dB of\n"
"                        the image's power (default -60: SER >= 60 dB; -80 asks for more\n"
"                        accuracy and costs more time; from -150 to -10)\n"
"      --precision P     fp64 (cpu reference), fp32 (default), fp16 (cuda; with cubic\n"
"                        interpolation, its default), mixed (cuda: cubic bins with their\n"
"                        higher-order terms C, D in FP16, 24 bytes a bin instead of 32),\n"
"                        or exact: the exact image by FP64 direct summation over every\n"
"                        sample (cpu; no FFT, no interpolation; K times slower: small\n"
"                        images)\n"
"      --interp K        range interpolation, a B-spline with a spectral prefilter:\n"
"                        quadratic (default: 8x upsampling, about 76-77 dB SER against\n"
"                        the exact image; on cuda its bins are 16 bytes, the value in\n"
"                        FP32 and its slope and curvature in FP16, 87-104 dB against\n"
"                        FP64 with the same kernel, far below the interpolation error;\n"
"                        888 Gbp/s on an H200), cubic (4x: about 77-78 dB; 762 Gbp/s\n"
"                        in FP32; the default with fp16, mixed and ffbp, which do not\n"
"                        read the quadratic) or linear (8x: about 50 dB)\n"
"      --fast            --interp linear: about 1.1-1.2x the GPU speed of the default\n"
"                        at about 50 dB against the exact image instead of 77\n"
"                        (kernels/BENCHMARKS.md)\n"
"      --window W        range window: none (default), hamming, hann, taylor[:NBAR:SLL]\n"
"      --az-window W     azimuth window over the pulses, same choices\n"
"      --upsample N      range-profile upsampling before interpolation (default 8 for\n"
"                        quadratic and linear, 4 for cubic; cubic at 8 reaches about\n"
"                        100 dB, quadratic at 16 about 95)\n"
"      --threads N       cpu threads (default: all cores); results do not depend on it\n"
"      --device D        cuda device N (default 0), a list such as 0,1, or all: the\n"
"                        image's rows are shared among the devices, one thread each\n"
"      --gpu-mem BYTES   memory budget of each device, e.g. 8G (default: most of its\n"
"                        free memory); a larger image is formed in bands of rows over\n"
"                        range profiles computed once (-v says how it was cut up)\n"
"      --raw-fp16        with --precision fp16: upload raw samples as FP16 too (half the\n"
"                        transfer; caps the dynamic range near 70 dB: a target 80 dB\n"
"                        below a bright one can drown in FP16 quantisation spurs)\n"
"      --variant V       cuda kernel variant (see 'sarbp bench --help'); --tile TXxTY,\n"
"      --ppt N, --pulse-block N  tune it (defaults chosen by measurement)\n"
"      --db-range DB     the dB quick looks (.png, .kmz, dB .tif) show DB below the\n"
"                        peak to the peak (default: chosen from the image, its 1st to\n"
"                        its 99.99th percentile of dB; -v says which)\n"
"  -q, --quiet           no progress or notes (progress: a line rewritten on a terminal;\n"
"                        otherwise a line every 20 s, or SARBP_PROGRESS_INTERVAL s)\n"
"  -v, --verbose         also the sizes, the time and throughput, and where the time\n"
"                        and memory went (setup, read, transfer, range compression,\n"
"                        backprojection, finish; pulse-data and image MiB)\n"
"\n"
"A unit point target at the scene origin forms a peak of exactly P (the number of\n"
"pulses) with no window; windows scale it by their coherent gain (recorded in .h5).\n"
"\n"
"With --algorithm ffbp the image differs from bp's by about the predicted error (SER\n"
"against bp: 60 dB at the default); point targets keep their positions, PSLR and\n"
"ISLR. See README, 'Fast factorized backprojection'.\n"
"\n"
"Under mpirun or srun the ranks share out the image's rows (docs/cluster.md). With\n"
"only .npy outputs each rank writes its own rows into the file (MPI-IO; the output's\n"
"folder must be one that every rank sees); .h5, .png, .nitf, .tif and .kmz are\n"
"written by rank 0, which gathers the whole image.\n"
"\n"
"exit codes: 0 success, 1 failure (bad input file, bad data, device error; no output\n"
"file is left behind), 2 usage error.\n");
}

enum {
    OPT_BACKEND = 256, OPT_PRECISION, OPT_GRID, OPT_SPACING, OPT_CENTER, OPT_WINDOW,
    OPT_AZWINDOW, OPT_UPSAMPLE, OPT_PULSES, OPT_AZIMUTH, OPT_THREADS, OPT_DBRANGE, OPT_DEVICE,
    OPT_VARIANT, OPT_TILE, OPT_PPT, OPT_PULSEBLOCK, OPT_GPUMEM, OPT_AUTOFOCUS, OPT_AF_CSV, OPT_AF_PLOT, OPT_PHASE_CSV,
    OPT_AF_RANGE, OPT_AF_WINDOW, OPT_AF_ITER, OPT_AF_MIN_GAIN, OPT_RAWFP16,
    OPT_INTERP, OPT_FAST, OPT_CHANNEL, OPT_SCENEREF, OPT_PRF, OPT_COLLECTSTART, OPT_COMPLEX,
    OPT_ALGORITHM, OPT_MAXERR, OPT_POLARISATION,
    OPT_HEIGHTS, OPT_DEM, OPT_GEOID /* terrain */
};

static const struct option longopts[] = {
    {"input", required_argument, NULL, 'i'},
    {"output", required_argument, NULL, 'o'},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"grid", required_argument, NULL, OPT_GRID},
    {"spacing", required_argument, NULL, OPT_SPACING},
    {"center", required_argument, NULL, OPT_CENTER},
    {"centre", required_argument, NULL, OPT_CENTER},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"az-window", required_argument, NULL, OPT_AZWINDOW},
    {"upsample", required_argument, NULL, OPT_UPSAMPLE},
    {"pulses", required_argument, NULL, OPT_PULSES},
    {"azimuth", required_argument, NULL, OPT_AZIMUTH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"db-range", required_argument, NULL, OPT_DBRANGE},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"variant", required_argument, NULL, OPT_VARIANT},
    {"tile", required_argument, NULL, OPT_TILE},
    {"ppt", required_argument, NULL, OPT_PPT},
    {"pulse-block", required_argument, NULL, OPT_PULSEBLOCK},
    {"gpu-mem", required_argument, NULL, OPT_GPUMEM},
    {"autofocus", optional_argument, NULL, OPT_AUTOFOCUS},
    {"raw-fp16", no_argument, NULL, OPT_RAWFP16},
    {"autofocus-csv", required_argument, NULL, OPT_AF_CSV},
    {"autofocus-plot", required_argument, NULL, OPT_AF_PLOT},
    {"phase-csv", required_argument, NULL, OPT_PHASE_CSV},
    {"autofocus-range", no_argument, NULL, OPT_AF_RANGE},
    {"autofocus-window", required_argument, NULL, OPT_AF_WINDOW},
    {"autofocus-iterations", required_argument, NULL, OPT_AF_ITER},
    {"autofocus-min-gain", required_argument, NULL, OPT_AF_MIN_GAIN},
    {"interp", required_argument, NULL, OPT_INTERP},
    {"fast", no_argument, NULL, OPT_FAST},
    {"channel", required_argument, NULL, OPT_CHANNEL},
    {"polarisation", required_argument, NULL, OPT_POLARISATION},
    {"polarization", required_argument, NULL, OPT_POLARISATION},
    {"scene-ref", required_argument, NULL, OPT_SCENEREF},
    {"prf", required_argument, NULL, OPT_PRF},
    {"collect-start", required_argument, NULL, OPT_COLLECTSTART},
    {"complex", no_argument, NULL, OPT_COMPLEX},
    {"algorithm", required_argument, NULL, OPT_ALGORITHM},
    {"max-error-db", required_argument, NULL, OPT_MAXERR},
    {"heights", required_argument, NULL, OPT_HEIGHTS},
    {"dem", required_argument, NULL, OPT_DEM},
    {"geoid-offset", required_argument, NULL, OPT_GEOID},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* Terrain (--heights, --dem): the options, and the heights the grid points
 * to once read. The array lives until the image is written; a run that
 * fails on the way leaves it to the process's exit (still reachable). */
static struct {
    const char *heights, *dem; /* at most one */
    double geoid_offset;
    int have_offset;
    double *h;                 /* [ny][nx], or NULL */
    char source[600];          /* the .h5 image's heights_source */
} terrain;

/* The heights of grid g from --heights or --dem into terrain.h, g pointing
 * to them. */
static sarbp_status terrain_load(const sarbp_reader *rd, sarbp_grid *g)
{
    if (terrain.heights) {
        SARBP_TRY(sarbp_heights_read(terrain.heights, g, &terrain.h));
        snprintf(terrain.source, sizeof terrain.source, "%s", terrain.heights);
    } else {
        const sarbp_collection *col = sarbp_reader_collection(rd);
        if (!col || !col->has_ref)
            return sarbp_error(SARBP_ERR_INVALID, "--dem '%s': the input does not say where the "
                               "scene is on the Earth (hint: give --scene-ref LAT,LON,HEIGHT)",
                               terrain.dem);
        SARBP_TRY(sarbp_dem_heights(terrain.dem, g, &col->ref, terrain.geoid_offset, &terrain.h));
        if (terrain.geoid_offset != 0)
            snprintf(terrain.source, sizeof terrain.source, "dem:%s (geoid offset %.17g m)",
                     terrain.dem, terrain.geoid_offset);
        else
            snprintf(terrain.source, sizeof terrain.source, "dem:%s", terrain.dem);
    }
    g->height = terrain.h;
    g->height_stride = g->nx;
    double lo = terrain.h[0], hi = terrain.h[0];
    for (size_t i = 1; i < g->nx * g->ny; i++) {
        lo = terrain.h[i] < lo ? terrain.h[i] : lo;
        hi = terrain.h[i] > hi ? terrain.h[i] : hi;
    }
    cli_info(2, "sarbp: form: terrain: heights from %s, z %.2f to %.2f m", terrain.source, lo, hi);
    return SARBP_OK;
}

/* What was applied, for the image's provenance (sarbp/image.h) and -v. */
struct provenance {
    int ffbp;
    sarbp_ffbp_params fp;
    sarbp_ffbp_prediction pd;
    double max_error_db;
    char selection[128];
    int autofocus; /* asked: 1 the file's corrections, 2 estimated, 3 pga */
    sarbp_autofocus_info af; /* estimated: how */
    double af_rms;           /* estimated: the correction's rms, rad */
    double af_range_rms;     /* estimated with a range: its rms, m (else 0) */
    char phase_csv[512];     /* --phase-csv: its file */
};

/* The provenance attributes of img (sarbp/image.h) and the one -v line
 * saying what was applied. */
static sarbp_status record_provenance(sarbp_image *img, const struct provenance *pv,
                                      const sarbp_phd *meta,
                                      const sarbp_bp_options *bo, int argc, char **argv)
{
    char buf[976];
    const int has_af = meta->r_correct || meta->ph_correct;
    char est[224], rng[48] = "";
    if (pv->af_range_rms > 0) snprintf(rng, sizeof rng, " and range, %.4f m rms", pv->af_range_rms);
    snprintf(est, sizeof est, "estimated by %s (phase per pulse, %.3f rad rms%s; sharpness x%.3f in %d "
             "iterations over %zu pixels)", pv->autofocus == 3 ? "pga" : "sharpness", pv->af_rms, rng,
             pv->af.sharpness, pv->af.iterations, pv->af.pixels);
    if (pv->autofocus == 2 && pv->af.checked && pv->af.rejected)
        snprintf(est, sizeof est, "estimated by sharpness, none applied (each half's estimate on the "
                 "other half: sharpness x%.4f and x%.4f, below --autofocus-min-gain)",
                 pv->af.held_out[0], pv->af.held_out[1]);
    const char *af = pv->autofocus >= 2 ? est
                     : pv->autofocus ? (has_af ? "applied (Gotcha r0 and phase corrections)"
                                               : "not applied (asked; the input has no corrections)")
                     : has_af ? "not applied (the input has corrections)"
                              : "not applied";
    /* algorithm, FFBP's factorization and device: sarbp_form_plan_attrs */
    const char *dev = sarbp_image_get_attr(img, "device");
    SARBP_TRY(sarbp_image_set_attr(img, "selection", pv->selection));
    SARBP_TRY(sarbp_image_set_attr(img, "autofocus", af));
    if (pv->phase_csv[0]) SARBP_TRY(sarbp_image_set_attr(img, "phase_applied", pv->phase_csv));
    /* the command line, shell-quoted where needed */
    size_t n = (size_t)snprintf(buf, sizeof buf, "sarbp");
    for (int i = 0; i < argc && n < sizeof buf; i++) {
        const char *a = argv[i];
        const int plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789-_./:,=+@%") == strlen(a);
        n += (size_t)snprintf(buf + n, sizeof buf - n, plain ? " %s" : " '%s'", a);
    }
    SARBP_TRY(sarbp_image_set_attr(img, "command_line", buf));
    const char *rw = sarbp_image_get_attr(img, "range_window");
    const char *aw = sarbp_image_get_attr(img, "azimuth_window");
    const char *ip = sarbp_image_get_attr(img, "interp");
    const char *pol = sarbp_image_get_attr(img, "polarisation");
    const char *up = sarbp_image_get_attr(img, "upsample");
    char alg[128] = "bp";
    if (pv->ffbp)
        snprintf(alg, sizeof alg, "ffbp (base %zu, merge %zu, predicted %.1f dB, asked %.1f dB)",
                 pv->fp.base, pv->fp.merge, pv->pd.error_db, pv->max_error_db);
    cli_info(2, "sarbp: form: applied: %s; %s; range window %s, azimuth window %s; autofocus %s; "
             "%s interpolation, upsampling %s; %s; %s; polarisation %s", alg, pv->selection,
             rw ? rw : "none", aw ? aw : "none", af, ip ? ip : "none (exact)", up ? up : "none",
             sarbp_precision_name(bo->precision), dev ? dev : "unknown", pol && *pol ? pol : "unknown");
    return SARBP_OK;
}

/* An output that is one of the inputs (as given, or a file of a directory
 * or glob once the reader expanded them): its name, or NULL. */
static const char *output_over_input(const char *const *outputs, size_t nout,
                                     const char *const *inputs, size_t nin,
                                     const sarbp_reader *rd, const char **input)
{
    for (size_t o = 0; o < nout; o++) {
        for (size_t i = 0; i < nin; i++)
            if (cli_same_file(outputs[o], inputs[i])) {
                *input = inputs[i];
                return outputs[o];
            }
        for (size_t i = 0; rd && i < sarbp_reader_nfiles(rd); i++)
            if (cli_same_file(outputs[o], sarbp_reader_file(rd, i))) {
                *input = sarbp_reader_file(rd, i);
                return outputs[o];
            }
    }
    return NULL;
}

/* Warnings where the image cannot be right, before forming (-q silences
 * them): a grid reaching beyond the alias-free scene, pixels coarser than
 * the resolution. The alias-free scene is the one sarbp_grid_default covers
 * (grid.c): c / (2 df) in range, lambda / (2 dtheta) across, the smaller of
 * the two on both axes, about the origin; computed here without the
 * default's cap on pixels. */
static void warn_grid(const char *cmd, const sarbp_phd *meta, const sarbp_grid *g)
{
    sarbp_phd_summary s;
    if (sarbp_phd_summarize(meta, &s) != SARBP_OK) return;
    double extent = s.extent_range;
    if (meta->npulses > 1 && s.aperture_deg > 0) {
        const double dth = s.aperture_deg * M_PI / 180.0 / (double)(meta->npulses - 1);
        const double cross = SARBP_C / s.fcenter / (2 * dth);
        if (cross < extent) extent = cross;
    }
    /* the outermost pixel centres: the default grid's stay inside */
    const double reach_x = fabs(g->xc) + 0.5 * (double)(g->nx - 1) * g->dx;
    const double reach_y = fabs(g->yc) + 0.5 * (double)(g->ny - 1) * g->dy;
    const double half = 0.5 * extent, tol = 1e-3 * half;
    const double over_x = reach_x - half > tol ? reach_x - half : 0;
    const double over_y = reach_y - half > tol ? reach_y - half : 0;
    if (isfinite(extent) && (over_x > 0 || over_y > 0))
        cli_info(1, "sarbp: %s: warning: the grid reaches beyond the alias-free scene (+-%.1f m "
                 "about the origin) by %.1f m in x and %.1f m in y: pixels there hold replicas "
                 "or nothing", cmd, half, over_x, over_y);
    double res = s.range_res;
    if (isfinite(s.az_res) && s.az_res < res) res = s.az_res;
    if (isfinite(res) && (g->dx > res * (1 + 1e-9) || g->dy > res * (1 + 1e-9))) {
        char az[48] = "no aperture";
        if (isfinite(s.az_res)) snprintf(az, sizeof az, "%.3g m in azimuth", s.az_res);
        cli_info(1, "sarbp: %s: warning: pixels of %g x %g m are coarser than the resolution "
                 "(%.3g m in range, %s): the image is aliased", cmd, g->dx, g->dy,
                 s.range_res, az);
    }
}

/* --phase-csv: a phase per selected pulse from F, rows 'pulse,phase_rad'
 * (the header line optional) or, under the header 'pulse,phase_rad,range_m',
 * rows with a range (m) too (*range then allocated, else NULL): pulses 0..n-1
 * in order, every value finite. */
static sarbp_status read_phase_csv(const char *path, size_t n, double **out, double **range)
{
    *out = NULL;
    *range = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return sarbp_error(SARBP_ERR_IO, "'%s' is not a regular file", path);
    }
    double *v = malloc((n ? n : 1) * sizeof *v), *r = NULL;
    if (!v) {
        fclose(f);
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    }
    char line[256];
    size_t count = 0, lineno = 0;
    int with_range = 0;
    sarbp_status st = SARBP_OK;
    while (!st && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s' line %zu is too long", path, lineno);
            break;
        }
        if (lineno == 1 && !strncmp(line, "pulse,", 6)) { /* the header */
            with_range = !strncmp(line, "pulse,phase_rad,range_m", 23);
            if (with_range && !(r = malloc((n ? n : 1) * sizeof *r))) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
            continue;
        }
        if (line[0] == '\n' || line[0] == '\0') continue;
        char *end;
        errno = 0;
        const unsigned long long idx = strtoull(line, &end, 10);
        double ph = NAN, rg = 0;
        if (end != line && *end == ',') {
            char *e2;
            ph = strtod(end + 1, &e2);
            if (with_range) {
                if (*e2 == ',') rg = strtod(e2 + 1, &e2);
                else ph = NAN;
            }
            while (*e2 == ' ' || *e2 == '\r' || *e2 == '\n') e2++;
            if (*e2) ph = NAN;
        }
        if (errno || !isfinite(ph) || fabs(ph) > 1e6 || !isfinite(rg) || fabs(rg) > 1e3)
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s' line %zu is not 'pulse,phase_rad%s'", path, lineno,
                             with_range ? ",range_m" : "");
        else if (idx != count || count >= n)
            st = sarbp_error(SARBP_ERR_FORMAT, "'%s' line %zu: pulse %llu where %zu was next (the "
                             "selection has %zu pulses)", path, lineno, idx, count, n);
        else {
            if (r) r[count] = rg;
            v[count++] = ph;
        }
    }
    if (!st && ferror(f)) st = sarbp_error(SARBP_ERR_IO, "cannot read '%s'", path);
    if (!st && count != n)
        st = sarbp_error(SARBP_ERR_FORMAT, "'%s' has %zu phases; the selection has %zu pulses", path,
                         count, n);
    fclose(f);
    if (st) {
        free(v);
        free(r);
        return st;
    }
    *out = v;
    *range = r;
    return SARBP_OK;
}

/* The estimate as CSV, through a temporary committed whole. */
static sarbp_status write_af_csv(const char *path, const sarbp_image *img)
{
    sarbp_output_file *f;
    SARBP_TRY(sarbp_output_file_open(path, &f));
    FILE *fp = fdopen(dup(sarbp_output_file_fd(f)), "w");
    sarbp_status st = fp ? SARBP_OK : sarbp_error(SARBP_ERR_IO, "cannot write '%s'", path);
    if (fp) {
        int bad = fprintf(fp, img->af_range ? "pulse,phase_rad,range_m\n" : "pulse,phase_rad\n") < 0;
        for (size_t j = 0; !bad && j < img->af_npulses; j++)
            bad = (img->af_range ? fprintf(fp, "%zu,%.17g,%.17g\n", j, img->af_phase[j], img->af_range[j])
                                 : fprintf(fp, "%zu,%.17g\n", j, img->af_phase[j])) < 0;
        if (fclose(fp) != 0 || bad) st = sarbp_error(SARBP_ERR_IO, "cannot write '%s'", path);
    }
    if (!st) return sarbp_output_file_commit(f);
    sarbp_output_file_discard(f);
    return st;
}

static void af_iteration(void *user, int half, int stage, int it, double sharpness, double step)
{
    (void)user;
    static const char *const names[] = {"polynomial", "", "per pulse", "pga"};
    char on[24] = "";
    if (half) snprintf(on, sizeof on, "half %d: ", half);
    if (it == 0) cli_info(2, "sarbp: form: autofocus: %sscan: sharpness x%.4f at %.1f rad", on, sharpness, step);
    else cli_info(2, "sarbp: form: autofocus: %s%s iteration %d: sharpness x%.4f, step %.3f rad", on,
                  stage >= 0 && stage <= 3 ? names[stage] : "", it, sharpness, step);
}

/* What --autofocus estimate|pga was asked (the library's options less the
 * back end, which is the form's). */
struct af_request {
    int method;         /* 2 the estimator, 3 pga */
    int range;
    int iterations;
    double min_gain;    /* 0: the library's default */
    sarbp_autofocus_window win[64];
    size_t nwin;
};

/* --autofocus estimate|pga: the library's autofocused form
 * (sarbp_form_plan_execute_autofocused), and what it found said with -v. */
static sarbp_status form_autofocused(sarbp_session *sess, sarbp_reader *rd, sarbp_form_plan *plan,
                                     const struct af_request *ar, sarbp_progress *prog, sarbp_image **out,
                                     sarbp_form_stats *stats, struct provenance *pv)
{
    sarbp_autofocus_options o;
    sarbp_autofocus_options_default(&o);
    o.method = ar->method == 3 ? SARBP_AF_PGA : SARBP_AF_ESTIMATE;
    o.range = ar->range;
    o.iterations = ar->iterations;
    o.min_gain = ar->min_gain;
    o.windows = ar->nwin ? ar->win : NULL;
    o.nwindows = ar->nwin;
    o.session = sess;
    o.on_iteration = af_iteration;
    sarbp_autofocus_info *info = &pv->af;
    SARBP_TRY(sarbp_form_plan_execute_autofocused(plan, rd, NULL, &o, prog, out, stats, info));
    const sarbp_image *img = *out;
    const size_t P = img->af_npulses;
    double ss = 0, sr = 0;
    for (size_t j = 0; j < P; j++) {
        ss += img->af_phase[j] * img->af_phase[j];
        if (img->af_range) sr += img->af_range[j] * img->af_range[j];
    }
    pv->af_rms = sqrt(ss / (double)(P ? P : 1));
    pv->af_range_rms = img->af_range ? sqrt(sr / (double)(P ? P : 1)) : 0;
    if (img->af_range)
        cli_info(2, "sarbp: form: autofocus: estimated a range per pulse, %.4f m rms, and what is left "
                 "of the phase, %.3f rad rms", pv->af_range_rms, pv->af_rms);
    if (info->checked)
        cli_info(2, "sarbp: form: autofocus: each half's estimate on the other half: sharpness x%.4f and "
                 "x%.4f (at least x%.4f asked): %s", info->held_out[0], info->held_out[1],
                 1.0 + (o.min_gain > 0 ? o.min_gain : o.min_gain < 0 ? -INFINITY : 0.01),
                 info->rejected ? "no correction applied (the data are focused as far as the scene "
                                  "tells; --autofocus-min-gain sets the bar)"
                                : "their mean applied");
    const int gpu = sarbp_form_plan_decision(plan)->backend == &sarbp_backend_cuda;
    cli_info(2, "sarbp: form: autofocus: %s, %.3f rad rms; sharpness x%.3f in %d iterations (%d images) "
             "over %zu pixels in %zu window%s, %.2f s on the %s",
             img->af_range ? "phase left" : "estimated a phase per pulse", pv->af_rms, info->sharpness,
             info->iterations, info->evaluations, info->pixels, info->nwindows, info->nwindows == 1 ? "" : "s",
             info->seconds, gpu ? "gpu" : "cpu");
    cli_info(2, "sarbp: form: autofocus: range compression %.3f s, windows %.3f s, contributions %.3f s, "
             "search %.3f s", info->profiles_s, info->windows_s, info->contributions_s,
             info->seconds - info->profiles_s - info->windows_s - info->contributions_s);
    return SARBP_OK;
}

/* A large image's .npy outputs are written as its bands form: images of
 * at least STREAM_MIN_BYTES, in bands of at least that much (at most
 * STREAM_BANDS of them), so that by the end of the form only the last
 * band is left to write (at 16384^2, 256 MiB of 2 GiB). */
#define STREAM_MIN_BYTES ((double)(64 << 20))
#define STREAM_BANDS 8

/* The .npy outputs written as the image forms: streams[i] beside
 * outputs[i] (NULL for the other formats). */
struct npy_streams {
    sarbp_npy_stream **s;
    size_t n;
};

/* The bands a form into outputs should be cut into for streamed .npy
 * outputs, or 0 when none are streamed (small images, MPI, autofocus). */
static size_t stream_bands(const char *const *outputs, size_t nout, const sarbp_grid *g, int autofocus)
{
    const double bytes = (double)g->nx * (double)g->ny * sizeof(sarbp_c32);
    if (sarbp_mpi_size() > 1 || autofocus >= 2 || bytes < STREAM_MIN_BYTES) return 0;
    int any = 0;
    for (size_t i = 0; i < nout; i++) any |= sarbp_image_format_from_name(outputs[i]) == SARBP_IMG_NPY;
    if (!any) return 0;
    const double n = bytes / STREAM_MIN_BYTES;
    return n >= STREAM_BANDS ? STREAM_BANDS : (size_t)n;
}

/* the form's on_rows: each band to every streamed output */
static sarbp_status stream_rows(void *user, size_t row0, size_t nrows, const sarbp_c32 *rows)
{
    const struct npy_streams *w = user;
    for (size_t i = 0; i < w->n; i++)
        if (w->s[i]) SARBP_TRY(sarbp_npy_stream_rows(w->s[i], row0, nrows, rows));
    return SARBP_OK;
}

static sarbp_status streams_open(struct npy_streams *w, const char *const *outputs, size_t nout,
                                 const sarbp_grid *g)
{
    w->s = calloc(nout, sizeof *w->s);
    if (!w->s) return sarbp_error(SARBP_ERR_NOMEM, "out of memory");
    w->n = nout;
    for (size_t i = 0; i < nout; i++)
        if (sarbp_image_format_from_name(outputs[i]) == SARBP_IMG_NPY)
            SARBP_TRY(sarbp_npy_stream_open(outputs[i], g->ny, g->nx, &w->s[i]));
    return SARBP_OK;
}

static sarbp_status streams_finish(const struct npy_streams *w)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->s[i]) SARBP_TRY(sarbp_npy_stream_finish(w->s[i]));
    return SARBP_OK;
}

/* the streams, and their temporaries unless a write took them */
static void streams_free(struct npy_streams *w)
{
    for (size_t i = 0; i < w->n; i++) sarbp_npy_stream_free(w->s[i]);
    free(w->s);
    w->s = NULL;
    w->n = 0;
}

/* One process, its .npy outputs written as the bands form: the image is
 * allocated here rather than by sarbp_form_mpi, so that the streams'
 * writer is done with its rows before a failed form frees them. */
static sarbp_status form_streamed(sarbp_reader *rd, sarbp_form_plan *plan, sarbp_progress *prog,
                                  struct npy_streams *w, sarbp_image **out, sarbp_form_stats *stats)
{
    *out = NULL;
    sarbp_image *img = NULL;
    sarbp_status st = sarbp_image_alloc(&sarbp_form_plan_decision(plan)->grid, &img);
    if (!st) st = sarbp_form_plan_execute(plan, rd, NULL, prog, img->data, 1, stats);
    if (!st) st = sarbp_form_plan_attrs(plan, img);
    if (!st) st = sarbp_form_inputs_attr(rd, img);
    if (!st) st = streams_finish(w); /* every band's rows written */
    if (st) {
        streams_free(w); /* its writer stops before the rows it reads are freed */
        sarbp_image_free(img);
        return st;
    }
    *out = img;
    return SARBP_OK;
}

/* -v: where the time went; plan_s: the form plan's creation (the devices
 * start there), write_s: the outputs' (< 0: written elsewhere); streamed:
 * .npy rows were written as their bands formed. */
static void report_times(const sarbp_form_stats *stats, double plan_s, double write_s, int streamed)
{
    const double total = stats->total_s + plan_s;
    cli_info(2, "sarbp: form: %.3f s (starting the devices and the layout %.3f s, read %.3f s), "
             "%.1f Mbp/s", total, stats->init_s + plan_s, stats->read_s,
             stats->pairs / (total > 0 ? total : 1) / 1e6);
    if (write_s >= 0)
        cli_info(2, "sarbp: form: the outputs written in %.3f s%s", write_s,
                 streamed ? " after the form (the .npy rows as their bands formed)" : "");
    const sarbp_stage_times *t = &stats->stages;
    cli_info(2, "sarbp: form: setup %.3f s, read %.3f s, transfer %.3f s, range compression "
             "%.3f s, backprojection %.3f s, finish %.3f s; pulse data %.1f MiB, image %.1f MiB",
             t->setup_s, stats->read_s, t->transfer_s, t->rc_s, t->bp_s, t->finish_s,
             (double)t->pulse_bytes / (1 << 20), (double)t->image_bytes / (1 << 20));
    cli_report_layout("form", stats);
}

/* Under MPI with .npy outputs only (sarbp_mpi_writes_rows): every rank
 * forms its rows and writes them into the outputs itself, and no rank
 * holds the whole image (sarbp/mpi.h). The provenance attributes a .npy
 * cannot carry are said with -v only. The CLI's exit status. */
static int form_own_rows(const char *cmd, sarbp_session *sess, sarbp_reader *rd,
                         sarbp_form_plan *plan, sarbp_progress *prog, const char *const *outputs,
                         size_t nout, sarbp_form_stats *stats, const struct provenance *pv,
                         const sarbp_bp_options *bo, int argc, char **argv)
{
    const sarbp_form_decision *dc = sarbp_form_plan_decision(plan);
    sarbp_c32 *rows = NULL;
    int peer = 0;
    sarbp_status st = sarbp_form_mpi_rows(sess, rd, plan, prog, &rows, stats, &peer);
    if (!st) st = sarbp_mpi_write_npy(outputs, nout, &dc->grid, dc->rows.row0, dc->rows.nrows, rows,
                                      &peer);
    free(rows);
    if (st) {
        cli_mpi_peer_failed = peer;
        return peer ? CLI_FAIL : cli_fail_status(cmd, st);
    }
    sarbp_image *attrs = NULL; /* the -v line of what was applied: attributes, no pixels */
    if (sarbp_mpi_rank() == 0 && cli_verbosity >= 2 && (attrs = calloc(1, sizeof *attrs)) &&
        !sarbp_form_plan_attrs(plan, attrs) &&
        !sarbp_image_set_collection(attrs, sarbp_reader_collection(rd)))
        record_provenance(attrs, pv, sarbp_reader_meta(rd), bo, argc, argv);
    free(attrs);
    return CLI_OK;
}

int cmd_form(int argc, char **argv)
{
    struct provenance pv = {0};
    const char *cmd = "form";
    const char *inputs[MAX_IO], *outputs[MAX_IO];
    size_t nin = 0, nout = 0;
    const char *backend = "auto";
    sarbp_rc_params rc;
    sarbp_rc_params_default(&rc);
    sarbp_bp_options bo;
    sarbp_bp_options_default(&bo);
    size_t gnx = 0, gny = 0;
    double spacing[2] = {0, 0}, center[3] = {0, 0, 0};
    const char *af_csv = NULL, *af_plot = NULL, *phase_csv = NULL;
    struct af_request afr = {0};
    int af_opts = 0; /* an --autofocus-* option of the estimators was given */
    int have_device = 0, have_spacing = 0, have_pulses = 0, have_az = 0, autofocus = 0, have_upsample = 0;
    int have_interp = 0;
    size_t pulses[2];
    double az[2], db_range = SARBP_DB_RANGE_AUTO;
    sarbp_reader_options ro = {.channel = NULL};
    sarbp_scene_ref scene_ref;
    int have_scene_ref = 0;
    double prf = 0;
    const char *collect_start = NULL;
    int tiff_complex = 0;
    const char *algorithm = "bp";
    double max_error_db = SARBP_FFBP_DEFAULT_ERROR_DB;
    int c;
    while ((c = cli_getopt(cmd, argc, argv, "i:o:qvh", longopts)) != -1) {
        int n;
        switch (c) {
        case 'i':
            if (nin == MAX_IO) return cli_usage(cmd, "too many inputs (at most %d)", MAX_IO);
            inputs[nin++] = optarg;
            break;
        case 'o':
            if (nout == MAX_IO) return cli_usage(cmd, "too many outputs (at most %d)", MAX_IO);
            if (sarbp_image_format_from_name(optarg) == SARBP_IMG_UNKNOWN) {
                char exts[128];
                sarbp_image_format_list(exts, sizeof exts);
                return cli_usage(cmd, "cannot tell the format of '%s' (use %s)", optarg, exts);
            }
            outputs[nout++] = optarg;
            break;
        case OPT_BACKEND:
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "auto"))
                return cli_usage(cmd, "unknown back end '%s' (cpu, cuda or auto)", optarg);
            backend = optarg;
            break;
        case OPT_PRECISION:
            if (sarbp_precision_parse(optarg, &bo.precision))
                return cli_usage(cmd, "unknown precision '%s' (fp64, fp32, fp16, mixed or exact)",
                                 optarg);
            break;
        case OPT_INTERP:
            if (sarbp_interp_parse(optarg, &rc.interp))
                return cli_usage(cmd, "unknown interpolation '%s' (quadratic, cubic or linear)",
                                 optarg);
            have_interp = 1;
            break;
        case OPT_FAST:
            rc.interp = SARBP_INTERP_LINEAR;
            have_interp = 1;
            break;
        case OPT_GRID:
            if (cli_parse_grid(optarg, (size_t)1 << 31, &gnx, &gny))
                return cli_usage(cmd, "--grid wants NXxNY with positive sizes, not '%s'", optarg);
            break;
        case OPT_SPACING:
            n = cli_parse_list(optarg, ',', spacing, 1, 2);
            if (n < 0 || !(spacing[0] > 0 && spacing[0] <= MAX_SPACING) ||
                (n == 2 && !(spacing[1] > 0 && spacing[1] <= MAX_SPACING)))
                return cli_usage(cmd, "--spacing wants D or DX,DY in metres (> 0, at most %g), "
                                 "not '%s'", MAX_SPACING, optarg);
            if (n == 1) spacing[1] = spacing[0];
            have_spacing = 1;
            break;
        case OPT_CENTER:
            if (cli_parse_list(optarg, ',', center, 2, 3) < 0)
                return cli_usage(cmd, "--center wants X,Y or X,Y,Z in metres, not '%s'", optarg);
            break;
        case OPT_WINDOW:
            if (sarbp_window_parse(optarg, &rc.range_window))
                return cli_usage(cmd, "--window: %s", sarbp_error_detail());
            break;
        case OPT_AZWINDOW:
            if (sarbp_window_parse(optarg, &rc.az_window))
                return cli_usage(cmd, "--az-window: %s", sarbp_error_detail());
            break;
        case OPT_UPSAMPLE:
            if (cli_parse_int(optarg, 1, 64, &rc.upsample))
                return cli_usage(cmd, "--upsample wants an integer from 1 to 64, not '%s'", optarg);
            have_upsample = 1;
            break;
        case OPT_PULSES:
            if (cli_parse_size_range(optarg, 0, SIZE_MAX, &pulses[0], &pulses[1]))
                return cli_usage(cmd, "--pulses wants I0:I1, whole numbers with 0 <= I0 < I1, "
                                 "not '%s'", optarg);
            have_pulses = 1;
            break;
        case OPT_AZIMUTH:
            if (cli_parse_list(optarg, ':', az, 2, 2) < 0 || az[1] < az[0])
                return cli_usage(cmd, "--azimuth wants A0:A1 in degrees with A0 <= A1, not '%s'", optarg);
            have_az = 1;
            break;
        case OPT_THREADS:
            if (cli_parse_int(optarg, 1, 4096, &bo.threads))
                return cli_usage(cmd, "--threads wants an integer from 1 to 4096, not '%s'", optarg);
            break;
        case OPT_DBRANGE:
            if (cli_parse_double(optarg, 1e-3, 1000, &db_range))
                return cli_usage(cmd, "--db-range wants a number of dB in (0, 1000], not '%s'", optarg);
            break;
        case OPT_DEVICE:
        {
            char why[160];
            if (cli_parse_devices(optarg, &bo, why, sizeof why)) return cli_usage(cmd, "%s", why);
            have_device = 1;
            break;
        }
        case OPT_VARIANT:
            bo.variant = optarg;
            break;
        case OPT_TILE: {
            size_t tx, ty;
            if (cli_parse_grid(optarg, 1024, &tx, &ty))
                return cli_usage(cmd, "--tile wants TXxTY (at most 1024 each), not '%s'", optarg);
            bo.tile_x = (int)tx;
            bo.tile_y = (int)ty;
            break;
        }
        case OPT_PPT:
            if (cli_parse_int(optarg, 1, 8, &n) || (n & (n - 1)))
                return cli_usage(cmd, "--ppt wants 1, 2, 4 or 8, not '%s'", optarg);
            bo.ppt = n;
            break;
        case OPT_PULSEBLOCK:
            if (cli_parse_size(optarg, 1, 1 << 20, &bo.pulse_block))
                return cli_usage(cmd, "--pulse-block wants a positive number of pulses, not '%s'", optarg);
            break;
        case OPT_GPUMEM:
            if (cli_parse_bytes(optarg, &bo.gpu_mem))
                return cli_usage(cmd, "--gpu-mem wants a size from 1 byte to 4 EiB such as 8G or "
                                 "512M, not '%s'", optarg);
            break;
        case OPT_CHANNEL:
            if (!*optarg) return cli_usage(cmd, "--channel wants a channel identifier");
            ro.channel = optarg;
            break;
        case OPT_POLARISATION: {
            char pol[8];
            if (sarbp_polarisation_parse(optarg, pol, sizeof pol))
                return cli_usage(cmd, "--polarisation wants HH, VV, HV or VH, not '%s'", optarg);
            ro.polarisation = optarg;
            break;
        }
        case OPT_SCENEREF:
            if (sarbp_scene_ref_parse(optarg, &scene_ref))
                return cli_usage(cmd, "--scene-ref: %s", sarbp_error_detail());
            have_scene_ref = 1;
            break;
        case OPT_PRF:
            if (cli_parse_double(optarg, 1e-3, 1e9, &prf))
                return cli_usage(cmd, "--prf wants a pulse rate in Hz from 1e-3 to 1e9, not '%s'",
                                 optarg);
            break;
        case OPT_COLLECTSTART: {
            const char *why = "it is longer than 39 characters";
            if (strlen(optarg) > 39 || !sarbp_date_check(optarg, &why))
                return cli_usage(cmd, "--collect-start wants an ISO 8601 UTC date and time such "
                                 "as 2008-06-01T12:00:00Z, not '%s': %s", optarg, why);
            collect_start = optarg;
            break;
        }
        case OPT_ALGORITHM:
            if (strcmp(optarg, "bp") && strcmp(optarg, "ffbp") && strcmp(optarg, "auto"))
                return cli_usage(cmd, "unknown algorithm '%s' (bp, ffbp or auto)", optarg);
            algorithm = optarg;
            break;
        case OPT_MAXERR:
            if (cli_parse_double(optarg, -150, -10, &max_error_db))
                return cli_usage(cmd, "--max-error-db wants a number of dB from -150 to -10, not '%s'",
                                 optarg);
            break;
        case OPT_COMPLEX: tiff_complex = 1; break;
        case OPT_AUTOFOCUS: {
            /* --autofocus, --autofocus=M or --autofocus M (M one of the modes) */
            const char *m = optarg;
            if (!m && optind < argc && (!strcmp(argv[optind], "estimate") || !strcmp(argv[optind], "file") ||
                                        !strcmp(argv[optind], "none") || !strcmp(argv[optind], "pga")))
                m = argv[optind++];
            if (!m || !strcmp(m, "file")) autofocus = 1;
            else if (!strcmp(m, "estimate")) autofocus = 2;
            else if (!strcmp(m, "pga")) autofocus = 3;
            else if (!strcmp(m, "none")) autofocus = 0;
            else return cli_usage(cmd, "unknown --autofocus mode '%s' (estimate, pga, file or none)", m);
            break;
        }
        case OPT_RAWFP16: bo.raw_fp16 = 1; break;
        case OPT_AF_CSV: af_csv = optarg; break;
        case OPT_AF_RANGE: afr.range = 1, af_opts = 1; break;
        case OPT_AF_ITER: {
            long v;
            if (cli_parse_long(optarg, 1, 10000, &v) != 0)
                return cli_usage(cmd, "--autofocus-iterations wants a whole number from 1 to 10000, not '%s'",
                                 optarg);
            afr.iterations = (int)v;
            af_opts = 1;
            break;
        }
        case OPT_AF_MIN_GAIN: {
            double v;
            if (cli_parse_double(optarg, -1, 1, &v) != 0 || !(v == -1 || v >= 0))
                return cli_usage(cmd, "--autofocus-min-gain wants a fraction from 0 to 1, or -1 (no "
                                 "check), not '%s'", optarg);
            afr.min_gain = v == 0 ? 1e-12 : v; /* 0 in the options is the default */
            af_opts = 1;
            break;
        }
        case OPT_AF_WINDOW: {
            unsigned long long w[4];
            int used = 0;
            if (afr.nwin == sizeof afr.win / sizeof afr.win[0])
                return cli_usage(cmd, "--autofocus-window: at most %zu windows",
                                 sizeof afr.win / sizeof afr.win[0]);
            if (sscanf(optarg, "%llu,%llu,%llu,%llu%n", &w[0], &w[1], &w[2], &w[3], &used) != 4 ||
                optarg[used] || optarg[0] == '-' || strchr(optarg, '-') || w[2] == 0 || w[3] == 0 ||
                w[0] > 1u << 20 || w[1] > 1u << 20 || w[2] > 1u << 20 || w[3] > 1u << 20)
                return cli_usage(cmd, "--autofocus-window wants X0,Y0,NX,NY (pixels, NX and NY > 0), not '%s'",
                                 optarg);
            afr.win[afr.nwin++] = (sarbp_autofocus_window){w[0], w[1], w[2], w[3]};
            af_opts = 1;
            break;
        }
        case OPT_AF_PLOT: af_plot = optarg; break;
        case OPT_PHASE_CSV: phase_csv = optarg; break;
        case OPT_HEIGHTS: terrain.heights = optarg; break;
        case OPT_DEM: terrain.dem = optarg; break;
        case OPT_GEOID:
            if (cli_parse_double(optarg, -1000, 1000, &terrain.geoid_offset))
                return cli_usage(cmd, "--geoid-offset wants metres from -1000 to 1000, not '%s'", optarg);
            terrain.have_offset = 1;
            break;
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE; /* cli_getopt said why */
        }
    }
    while (optind < argc) { /* bare arguments are inputs too */
        if (nin == MAX_IO) return cli_usage(cmd, "too many inputs (at most %d)", MAX_IO);
        inputs[nin++] = argv[optind++];
    }
    if (nin == 0) return cli_usage(cmd, "no input: give -i FILE");
    if (nout == 0) return cli_usage(cmd, "no output: give -o IMAGE.png (or .h5, .npy)");
    const char *over_in, *over = output_over_input(outputs, nout, inputs, nin, NULL, &over_in);
    if (over)
        return cli_usage(cmd, "output '%s' is the input '%s': it would be overwritten", over,
                         over_in);
    /* the default kernel: quadratic, but cubic where the quadratic has no
     * form (fp16) or is not read (ffbp) */
    if (!have_interp) rc.interp = sarbp_interp_default(bo.precision, !strcmp(algorithm, "ffbp"));
    if (!have_upsample) rc.upsample = sarbp_interp_default_upsample(rc.interp);
    if (rc.interp == SARBP_INTERP_QUADRATIC && bo.precision == SARBP_FP16)
        return cli_usage(cmd, "--interp quadratic has no fp16 form (its bins keep the value in "
                         "FP32): use --precision fp32, or --interp cubic with fp16");
    if (rc.interp == SARBP_INTERP_QUADRATIC && !strcmp(algorithm, "ffbp"))
        return cli_usage(cmd, "--algorithm ffbp reads its profiles with the cubic (or linear) "
                         "B-spline: not --interp quadratic");
    if (have_pulses && have_az) return cli_usage(cmd, "--pulses and --azimuth exclude each other");
    if ((af_csv || af_plot || af_opts) && autofocus < 2)
        return cli_usage(cmd, "--autofocus-csv, -plot, -range, -window, -iterations and -min-gain go with "
                         "--autofocus estimate or pga");
    afr.method = autofocus;
    if (afr.range && autofocus != 2)
        return cli_usage(cmd, "--autofocus-range goes with --autofocus estimate (pga estimates a phase)");
    if (af_plot && sarbp_image_format_from_name(af_plot) != SARBP_IMG_PNG)
        return cli_usage(cmd, "--autofocus-plot '%s': the plot is a .png", af_plot);
    if (autofocus >= 2 && sarbp_mpi_size() > 1)
        return cli_usage(cmd, "--autofocus estimate and pga run in one process (not under mpirun)");
    bo.verbose = cli_verbosity;
    if (!have_device && cli_mpi_local_rank() >= 0) bo.device = cli_mpi_local_rank(); /* one GPU a rank */
    if (!bo.threads && cli_mpi_local_size() > 1) /* the node's cores shared by its ranks */
        bo.threads = sarbp_cpu_count() / cli_mpi_local_size() > 0 ? sarbp_cpu_count() / cli_mpi_local_size() : 1;

    /* back end */
    const sarbp_backend *be;
    int fell_back = 0; /* said once the inputs are read: a bad input gets one line */
    const int want_ffbp = !strcmp(algorithm, "ffbp");
    if (want_ffbp && bo.precision != SARBP_FP32)
        return cli_usage(cmd, "--algorithm ffbp runs in fp32 only (not --precision %s)",
                         sarbp_precision_name(bo.precision));
    if (!strcmp(backend, "auto")) be = sarbp_backend_auto(&bo, &fell_back);
    else be = sarbp_backend_find(backend);
    const int on_terrain = terrain.heights || terrain.dem;
    if (terrain.heights && terrain.dem) return cli_usage(cmd, "--heights and --dem exclude each other");
    if (terrain.have_offset && !terrain.dem) return cli_usage(cmd, "--geoid-offset goes with --dem");
    if (on_terrain && want_ffbp)
        return cli_usage(cmd, "--%s: FFBP forms on a plane; use --algorithm bp",
                         terrain.dem ? "dem" : "heights");
    if (sarbp_mpi_size() > 1) { /* one back end for every band */
        int all_cuda = 1, any_cuda = 0, peer = 0;
        if (!sarbp_mpi_vote(0, be == &sarbp_backend_cuda, &all_cuda, &any_cuda, &peer)) {
            cli_mpi_peer_failed = peer;
            return peer ? CLI_FAIL : cli_fail(cmd, "failed"); /* only peers fail here */
        }
        if (any_cuda && !all_cuda)
            return fell_back ? cli_fail(cmd, "no usable CUDA device on this rank (%d) while others "
                                        "have one; hint: give --backend cpu or --backend cuda",
                                        sarbp_mpi_rank())
                             : (cli_mpi_peer_failed = 1, CLI_FAIL);
    }
    if (be == &sarbp_backend_cpu && (bo.precision == SARBP_FP16 || bo.precision == SARBP_MIXED))
        return cli_usage(cmd, "--precision %s needs --backend cuda", sarbp_precision_name(bo.precision));
    if (bo.raw_fp16 && bo.precision != SARBP_FP16)
        return cli_usage(cmd, "--raw-fp16 goes with --precision fp16");
    if (be == &sarbp_backend_cuda && bo.precision == SARBP_FP64)
        return cli_usage(cmd, "--precision fp64 is the cpu reference: use --backend cpu");
    if (be == &sarbp_backend_cuda && bo.precision == SARBP_EXACT)
        return cli_usage(cmd, "--precision exact is computed on the cpu: use --backend cpu");

    sarbp_reader *rd = NULL;
    sarbp_status st = sarbp_reader_open_opts(inputs, nin, &ro, &rd);
    if (st) return cli_fail_status(cmd, st);
    if (have_scene_ref && (st = sarbp_reader_set_scene_ref(rd, &scene_ref))) {
        sarbp_reader_free(rd);
        return cli_fail_status(cmd, st);
    }
    /* auto chose the cpu: news only with -v (a GPU-less machine hears it on no run) */
    if (fell_back) cli_info(2, "sarbp: form: no usable CUDA device; using the cpu back end");
    if ((over = output_over_input(outputs, nout, inputs, nin, rd, &over_in))) {
        /* over_in may be the reader's own name of a file: said before it goes */
        const int urc = cli_usage(cmd, "output '%s' is the input '%s': it would be overwritten",
                                  over, over_in);
        sarbp_reader_free(rd);
        return urc;
    }
    if (autofocus == 1 && !sarbp_reader_meta(rd)->r_correct && !sarbp_reader_meta(rd)->ph_correct)
        cli_info(1, "sarbp: form: warning: --autofocus: the inputs carry no autofocus "
                 "corrections (af.r_correct, af.ph_correct); nothing to apply");
    sarbp_reader_set_autofocus(rd, autofocus == 1);
    const sarbp_phd *meta = sarbp_reader_meta(rd);
    if (have_pulses) {
        if (pulses[1] > meta->npulses) {
            size_t np = meta->npulses;
            sarbp_reader_free(rd);
            return cli_fail(cmd, "--pulses %zu:%zu is outside the %zu pulses of the input",
                            pulses[0], pulses[1], np);
        }
        snprintf(pv.selection, sizeof pv.selection, "pulses %zu:%zu of %zu", pulses[0],
                 pulses[1], meta->npulses);
        st = sarbp_reader_select(rd, pulses[0], pulses[1]);
    } else if (have_az) {
        size_t i0, i1;
        st = sarbp_phd_azimuth_range(meta, az[0], az[1], &i0, &i1);
        if (!st)
            snprintf(pv.selection, sizeof pv.selection, "azimuth %g:%g deg: pulses %zu:%zu of "
                     "%zu", az[0], az[1], i0, i1, meta->npulses);
        if (!st) st = sarbp_reader_select(rd, i0, i1);
    } else {
        snprintf(pv.selection, sizeof pv.selection, "all %zu pulses", meta->npulses);
    }
    if (st) {
        sarbp_reader_free(rd);
        return cli_fail_status(cmd, st);
    }
    meta = sarbp_reader_meta(rd);
    if (phase_csv) { /* a phase per selected pulse, applied as the samples are read */
        double *ph = NULL, *rg = NULL;
        st = read_phase_csv(phase_csv, meta->npulses, &ph, &rg);
        if (!st) st = sarbp_reader_set_phase(rd, ph, meta->npulses);
        if (!st && rg) st = sarbp_reader_set_range(rd, rg, meta->npulses);
        free(ph);
        free(rg);
        if (st) {
            sarbp_reader_free(rd);
            return cli_fail_status(cmd, st);
        }
        snprintf(pv.phase_csv, sizeof pv.phase_csv, "%s", phase_csv);
    }

    int sicd_out = 0;
    for (size_t i = 0; i < nout; i++)
        sicd_out |= sarbp_image_format_from_name(outputs[i]) == SARBP_IMG_SICD;
    const sarbp_grid_request greq = {{center[0], center[1], center[2]},
                                     {have_spacing ? spacing[0] : 0, have_spacing ? spacing[1] : 0},
                                     gnx, gny, sicd_out ? 2.0 : 0};
    sarbp_grid g;
    sarbp_grid_choice gc;
    st = sarbp_form_grid(meta, &greq, &g, &gc);
    if (st) {
        sarbp_reader_free(rd);
        return gc.request_error ? cli_usage(cmd, "%s", sarbp_error_detail()) : cli_fail_status(cmd, st);
    }
    if (gc.sicd_spacing)
        cli_info(2, "sarbp: form: SICD output: default spacing %g x %g m (2 samples a cycle of "
                 "the ground-plane band)", g.dx, g.dy);
    warn_grid(cmd, meta, &g);
    if ((terrain.heights || terrain.dem) && (st = terrain_load(rd, &g))) {
        sarbp_reader_free(rd);
        return cli_fail_status(cmd, st);
    }
    /* every output before any pulse is read: its path, its format's limits
     * for this grid, the geolocation it needs (rank 0 writes them) */
    if (sarbp_mpi_rank() == 0) {
        const sarbp_output_image oi = {&g, sarbp_reader_collection(rd), meta, sarbp_reader_times(rd),
                                       prf, collect_start, db_range, tiff_complex};
        st = sarbp_output_check_images(outputs, nout, &oi);
        if (!st && af_csv) st = sarbp_output_check_path(af_csv);
        if (!st && af_plot) st = sarbp_output_check_path(af_plot);
    }
    int out_peer = 0;
    if (!sarbp_mpi_check(st != SARBP_OK, &out_peer)) {
        sarbp_reader_free(rd);
        if (out_peer) cli_mpi_peer_failed = 1;
        return out_peer ? CLI_FAIL : cli_fail_status(cmd, st);
    }
    /* one session for the command: --gpu-mem is its device budget, a bound
     * no plan passes; it keeps the FFBP decision made here for the form;
     * freed (its threads joined) once the image is formed */
    sarbp_session_options so;
    sarbp_session_options_default(&so);
    so.device_budget = bo.gpu_mem;
    bo.gpu_mem = 0;
    sarbp_session *sess = NULL;
    st = sarbp_session_create(&so, &sess);
    if (st) {
        sarbp_reader_free(rd);
        return cli_fail_status(cmd, st);
    }
    /* the form plan decides the rest once: the algorithm (ffbp when asked,
     * or under auto where the model predicts it faster at this accuracy),
     * its factorization, the interpolation, this rank's rows and the
     * devices x bands */
    bo.max_error_db = max_error_db;
    bo.algorithm = want_ffbp ? SARBP_ALGO_FFBP : strcmp(algorithm, "auto") ? SARBP_ALGO_BP : SARBP_ALGO_AUTO;
    /* a large image's .npy outputs: written band by band as the image forms */
    struct npy_streams streams = {NULL, 0};
    const size_t bands = stream_bands(outputs, nout, &g, autofocus);
    const sarbp_form_request req = {.backend = be, .grid = g, .rc = rc, .interp_given = have_interp,
                                    .upsample_given = have_upsample, .bp = bo,
                                    .rank = sarbp_mpi_rank(), .nranks = sarbp_mpi_size(),
                                    .bands_min = bands, .on_rows = bands ? stream_rows : NULL,
                                    .on_rows_user = &streams};
    sarbp_form_plan *plan = NULL;
    const double t_plan = sarbp_now_s();
    st = sarbp_form_plan_create(sess, meta, &req, &plan);
    const double plan_s = sarbp_now_s() - t_plan;
    const sarbp_form_decision *dc = st ? NULL : sarbp_form_plan_decision(plan);
    if (!st && dc->ffbp && want_ffbp && !dc->target_met)
        st = sarbp_error(SARBP_ERR_INVALID, "--max-error-db %g cannot be met: the most accurate ffbp "
                         "factorization searched predicts %.1f dB (hint: --algorithm bp)",
                         max_error_db, dc->pred.error_db);
    if (st) {
        sarbp_form_plan_free(plan);
        sarbp_session_free(sess);
        sarbp_reader_free(rd);
        return cli_fail_status(cmd, st);
    }
    rc = dc->rc;
    bo = dc->bp;
    if (dc->ffbp) {
        const sarbp_ffbp_params *fp = &dc->prm;
        const sarbp_ffbp_prediction *pd = &dc->pred;
        pv.ffbp = 1;
        pv.fp = *fp;
        pv.pd = *pd;
        pv.max_error_db = max_error_db;
        cli_info(2, "sarbp: form: ffbp: base %zu, merge %zu, %zu sub-images summed at the pixels, "
                 "os_theta %.2f, os_rho %.2f; %d stages, %.1f Msamples of polar grids; predicted "
                 "error %.1f dB (asked %.1f), %.2f of direct backprojection's time",
                 fp->base, fp->merge, pd->final_subs, fp->os_theta, fp->os_rho, pd->stages,
                 (double)pd->polar_samples / 1e6, pd->error_db, max_error_db, pd->cost_ratio);
    } else if (dc->why[0]) {
        cli_info(2, "sarbp: form: auto: %s", dc->why);
    }
    cli_info(2, "sarbp: form: %zu pulses x %zu samples, grid %zu x %zu at %g x %g m, back end %s, %s, %s",
             meta->npulses, meta->nsamples, g.nx, g.ny, g.dx, g.dy, be->name,
             sarbp_precision_name(bo.precision), sarbp_algorithm_name(bo.algorithm));

    if ((prf > 0 || collect_start) &&
        (sarbp_reader_times(rd) || *sarbp_reader_collection(rd)->collect_start)) {
        sarbp_form_plan_free(plan);
        sarbp_session_free(sess);
        sarbp_reader_free(rd);
        return cli_fail(cmd, "--prf and --collect-start are for inputs without pulse times; "
                        "'%s' has its own", inputs[0]);
    }
    if (bands && (st = streams_open(&streams, outputs, nout, &g))) {
        streams_free(&streams);
        sarbp_form_plan_free(plan);
        sarbp_session_free(sess);
        sarbp_reader_free(rd);
        return cli_fail_status(cmd, st);
    }
    sarbp_progress *prog = cli_progress_start("form", (double)g.nx * (double)g.ny);
    sarbp_image *img = NULL;
    sarbp_form_stats stats;
    int peer_failed = 0; /* under MPI: ranks share the rows, rank 0 gets the image */
    if (sarbp_mpi_size() > 1 && sarbp_mpi_writes_rows(outputs, nout)) {
        /* .npy only: each rank writes its own rows, no rank gathers them */
        const int rc_rows = form_own_rows(cmd, sess, rd, plan, prog, outputs, nout, &stats, &pv, &bo,
                                          argc, argv);
        sarbp_form_plan_free(plan);
        sarbp_session_free(sess);
        cli_progress_end(prog);
        sarbp_reader_free(rd);
        free(terrain.h);
        terrain.h = NULL;
        if (rc_rows == CLI_OK && sarbp_mpi_rank() == 0) report_times(&stats, plan_s, -1, 0);
        return rc_rows;
    }
    if (autofocus >= 2) /* the estimate applied to the samples in memory, then formed */
        st = form_autofocused(sess, rd, plan, &afr, prog, &img, &stats, &pv);
    else if (streams.n)
        st = form_streamed(rd, plan, prog, &streams, &img, &stats);
    else
        st = sarbp_form_mpi(sess, rd, plan, prog, &img, &stats, &peer_failed);
    sarbp_form_plan_free(plan);
    sarbp_session_free(sess);
    cli_progress_end(prog);
    if (st && peer_failed) cli_mpi_peer_failed = 1;
    if (st || !img) { /* no image: a rank other than 0, whose band went to rank 0 */
        streams_free(&streams);
        sarbp_reader_free(rd);
        return st ? (peer_failed ? CLI_FAIL : cli_fail_status(cmd, st)) : CLI_OK;
    }
    st = sarbp_image_set_collection(img, sarbp_reader_collection(rd));
    pv.autofocus = autofocus;
    if (!st) st = record_provenance(img, &pv, sarbp_reader_meta(rd), &bo, argc, argv);
    if (!st && terrain.h) st = sarbp_image_set_attr(img, "heights_source", terrain.source);
    if (st) {
        streams_free(&streams);
        sarbp_reader_free(rd);
        sarbp_image_free(img);
        return cli_fail_status(cmd, st);
    }

    sarbp_image_display display; /* the quick looks' dB range, as written */
    sarbp_image_context ctx = {.meta = sarbp_reader_meta(rd), .times = sarbp_reader_times(rd),
                               .tiff_complex = tiff_complex, .display = &display,
                               .npy = streams.s};
    double *times = NULL;
    if (prf > 0) {
        times = malloc(ctx.meta->npulses * sizeof *times);
        if (!times) st = sarbp_error(SARBP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; times && i < ctx.meta->npulses; i++) times[i] = (double)i / prf;
        ctx.times = times;
    }
    if (!st && collect_start) st = sarbp_image_set_attr(img, "collect_start", collect_start);
    const double t_write = sarbp_now_s();
    if (!st) st = sarbp_image_write_all_ctx(outputs, nout, img, db_range, &ctx); /* all or nothing */
    const double write_s = sarbp_now_s() - t_write;
    const int streamed = streams.n > 0;
    streams_free(&streams); /* the write took their files, or they go */
    /* the estimate's own outputs, once the image is written */
    if (!st && af_csv) st = write_af_csv(af_csv, img);
    if (!st && af_plot) {
        char title[160];
        snprintf(title, sizeof title, "autofocus estimate: phase per pulse (rad), %.3f rad rms",
                 pv.af_rms);
        st = sarbp_phase_plot(af_plot, title, img->af_phase, img->af_npulses, 900, 360);
    }
    free(times);
    sarbp_reader_free(rd);
    if (st) {
        sarbp_image_free(img);
        return cli_fail_status(cmd, st);
    }
    for (size_t i = 0; i < nout; i++) { /* the dB range of the 8-bit outputs, once */
        const sarbp_image_format f = sarbp_image_format_from_name(outputs[i]);
        if (f != SARBP_IMG_PNG && f != SARBP_IMG_KMZ && (f != SARBP_IMG_GEOTIFF || tiff_complex))
            continue;
        cli_info(2, "sarbp: form: quick looks show %.1f to %.1f dB relative to the peak (black to "
                 "white; %s)", display.floor_db, display.top_db,
                 display.automatic ? "chosen from the image: its 1st and 99.99th percentiles of "
                                     "dB; --db-range DB shows DB below the peak to the peak"
                                   : "--db-range");
        break;
    }
    report_times(&stats, plan_s, write_s, streamed);
    sarbp_image_free(img);
    free(terrain.h);
    terrain.h = NULL;
    return CLI_OK;
}
