/* cmd_metrics.c - 'sarbp metrics': point-target and whole-image figures.
 *
 * Measures the brightest point target (or the one nearest --target) with
 * sarbp_pointtarget_measure, prints both cuts and the whole-image figures
 * (table or JSON) and optionally plots the cuts. Exit 0 on success, 1 when
 * the image cannot be read or measured or the plot cannot be written, 2 for
 * usage errors. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sarbp/quality.h"

static const char *const CMD = "metrics";

static void help(void)
{
    printf("usage: sarbp metrics IMG [--target X,Y] [--cut-angle DEG] [--json] [--plot OUT.png]\n"
           "\n"
           "Measures the impulse response of a point target in the complex image IMG\n"
           "(.h5 or .npy) and prints whole-image figures.\n"
           "\n"
           "options:\n"
           "      --target X,Y     measure the local maximum nearest (X, Y) m, within %d pixels\n"
           "                       (default: the brightest pixel)\n"
           "      --cut-angle DEG  first cut at DEG from +x toward +y, second at DEG + 90\n"
           "                       (default 0: cuts along x and y)\n"
           "      --json           print one JSON object instead of a table\n"
           "      --plot OUT.png   plot both cuts in dB (800 x 500 PNG)\n"
           "  -q, --quiet          print nothing on stderr but errors\n"
           "  -v, --verbose        also say how long reading and measuring took\n"
           "  -h, --help           print this help and exit\n"
           "\n"
           "method: a %d x %d patch around the peak is brought to baseband (its spectral\n"
           "centre, estimated from the data, removed: the image's range carrier at any pixel\n"
           "spacing) and upsampled %dx by FFT zero padding, the peak refined to a fraction of\n"
           "an upsampled sample, and two cuts through it sampled every 1/16 pixel from the\n"
           "patch's band-limited (trigonometric) interpolant.\n"
           "  IRW    width at -3 dB (m), crossings interpolated linearly\n"
           "  PSLR   highest sidelobe / peak (dB); mainlobe = between the first local minima\n"
           "         of |I| either side of the peak; sidelobes = the rest of the cut, which\n"
           "         spans the patch less one pixel at each edge\n"
           "  ISLR   sidelobe energy / mainlobe energy (dB)\n"
           "  entropy          -sum rho ln rho, rho = |x|^2 / sum|x|^2 (nats)\n"
           "  dynamic range    20 log10(max |I| / median of the nonzero |I|)\n"
           "A .npy image has no grid: positions and distances are then in pixels, x and y\n"
           "counted from the image centre.\n"
           "JSON: undefined values are null.\n"
           "\n"
           "exit codes: 0 success; 1 the image cannot be read or measured, or the plot cannot\n"
           "be written; 2 usage error.\n",
           SARBP_PT_SEARCH, SARBP_PT_PATCH, SARBP_PT_PATCH, SARBP_PT_UPSAMPLE);
}


static void json_field(const char *name, double v)
{
    printf(", \"%s\": ", name);
    cli_json_num(v);
}

static void print_json(const char *path, const sarbp_image *img, const sarbp_pt_result *r)
{
    fputs("{\"image\": ", stdout);
    cli_json_str(path);
    printf(", \"nx\": %zu, \"ny\": %zu", img->grid.nx, img->grid.ny);
    json_field("dx", img->grid.dx);
    json_field("dy", img->grid.dy);
    printf(", \"has_grid_coords\": %s", img->has_grid_coords ? "true" : "false");
    printf(", \"peak\": {\"ix\": %zu, \"iy\": %zu", r->ix, r->iy);
    json_field("x", r->x);
    json_field("y", r->y);
    json_field("value", r->peak);
    printf("}, \"patch\": [%zu, %zu], \"upsample\": %zu, \"cuts\": [", r->patch_nx, r->patch_ny,
           r->upsample);
    for (int k = 0; k < 2; k++) {
        const sarbp_pt_cut *c = &r->cut[k];
        printf("%s{\"angle_deg\": ", k ? ", " : "");
        cli_json_num(c->angle_deg);
        json_field("peak", c->peak);
        json_field("irw_m", c->irw_m);
        json_field("pslr_db", c->pslr_db);
        json_field("islr_db", c->islr_db);
        json_field("null_lo_m", c->null_lo_m);
        json_field("null_hi_m", c->null_hi_m);
        json_field("sidelobe_m", c->sidelobe_m);
        json_field("start_m", c->n ? c->s_m[0] : NAN);
        json_field("end_m", c->n ? c->s_m[c->n - 1] : NAN);
        json_field("step_m", c->step_m);
        putchar('}');
    }
    const sarbp_image_stats *s = &r->stats;
    fputs("], \"image_stats\": {\"entropy\": ", stdout);
    cli_json_num(s->entropy);
    json_field("mean_mag", s->mean_mag);
    json_field("max_mag", s->max_mag);
    printf(", \"max_ix\": %zu, \"max_iy\": %zu", s->max_ix, s->max_iy);
    json_field("median_mag", s->median_mag);
    json_field("dynamic_range_db", s->dynamic_range_db);
    fputs("}}\n", stdout);
}

static void row(const char *label, const char *fmt, double a, double b)
{
    char sa[32], sb[32];
    if (isfinite(a)) snprintf(sa, sizeof sa, fmt, a);
    else snprintf(sa, sizeof sa, "n/a");
    if (isfinite(b)) snprintf(sb, sizeof sb, fmt, b);
    else snprintf(sb, sizeof sb, "n/a");
    printf("%-24s%-16s%s\n", label, sa, sb);
}

static void print_table(const char *path, const sarbp_image *img, const sarbp_pt_result *r)
{
    const sarbp_grid *g = &img->grid;
    printf("image                   %s (%zu x %zu pixels, spacing %g x %g %s)\n", cli_safe(path),
           g->nx, g->ny, g->dx, g->dy, img->has_grid_coords ? "m" : "pixels");
    printf("peak pixel              ix %zu, iy %zu\n", r->ix, r->iy);
    printf("peak                    x %.4f, y %.4f %s, |I| %.6g\n", r->x, r->y,
           img->has_grid_coords ? "m" : "pixels", r->peak);
    printf("patch                   %zu x %zu pixels upsampled %zux\n\n", r->patch_nx, r->patch_ny,
           r->upsample);
    const sarbp_pt_cut *a = &r->cut[0], *b = &r->cut[1];
    printf("%-24s%-16s%s\n", "", "cut 1", "cut 2");
    row("angle (deg)", "%.1f", a->angle_deg, b->angle_deg);
    row("peak |I|", "%.6g", a->peak, b->peak);
    row("IRW (m)", "%.4f", a->irw_m, b->irw_m);
    row("PSLR (dB)", "%.2f", a->pslr_db, b->pslr_db);
    row("ISLR (dB)", "%.2f", a->islr_db, b->islr_db);
    row("first null before (m)", "%.4f", a->null_lo_m, b->null_lo_m);
    row("first null after (m)", "%.4f", a->null_hi_m, b->null_hi_m);
    row("highest sidelobe at (m)", "%.4f", a->sidelobe_m, b->sidelobe_m);
    row("cut from (m)", "%.3f", a->n ? a->s_m[0] : NAN, b->n ? b->s_m[0] : NAN);
    row("cut to (m)", "%.3f", a->n ? a->s_m[a->n - 1] : NAN, b->n ? b->s_m[b->n - 1] : NAN);
    const sarbp_image_stats *s = &r->stats;
    printf("\nwhole image\n");
    printf("entropy                 %.6f nats\n", s->entropy);
    printf("mean |I|                %.6g\n", s->mean_mag);
    printf("max |I|                 %.6g at ix %zu, iy %zu\n", s->max_mag, s->max_ix, s->max_iy);
    printf("median nonzero |I|      %.6g\n", s->median_mag);
    printf("dynamic range           %.2f dB (max / median of nonzero |I|)\n", s->dynamic_range_db);
}

int cmd_metrics(int argc, char **argv)
{
    enum { OPT_TARGET = 256, OPT_ANGLE, OPT_JSON, OPT_PLOT };
    static const struct option opts[] = {
        {"target", required_argument, NULL, OPT_TARGET},
        {"cut-angle", required_argument, NULL, OPT_ANGLE},
        {"json", no_argument, NULL, OPT_JSON},
        {"plot", required_argument, NULL, OPT_PLOT},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    sarbp_pt_options o = {0};
    const char *plot = NULL;
    int json = 0, c;
    while ((c = cli_getopt(CMD, argc, argv, "qvh", opts)) != -1) {
        switch (c) {
        case OPT_TARGET: {
            double v[2];
            if (cli_parse_list(optarg, ',', v, 2, 2) != 2 || fabs(v[0]) > 1e9 || fabs(v[1]) > 1e9)
                return cli_usage(CMD, "--target wants X,Y in metres (within 1e9), not '%s'", optarg);
            o.have_target = 1;
            o.target_x = v[0];
            o.target_y = v[1];
            break;
        }
        case OPT_ANGLE:
            if (cli_parse_double(optarg, -360, 360, &o.cut_angle_deg))
                return cli_usage(CMD, "--cut-angle wants degrees in [-360, 360], not '%s'", optarg);
            break;
        case OPT_JSON: json = 1; break;
        case OPT_PLOT:
            if (!*optarg) return cli_usage(CMD, "--plot wants a file name");
            plot = optarg;
            break;
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE; /* cli_getopt said why */
        }
    }
    if (argc - optind != 1) return cli_usage(CMD, "expected one image (got %d)", argc - optind);
    const char *path = argv[optind];

    sarbp_image *img = NULL;
    double t0 = sarbp_now_s();
    sarbp_status s = sarbp_image_read(path, &img);
    if (s != SARBP_OK) return cli_fail_status(CMD, s);
    cli_info(2, "sarbp: metrics: read '%s' (%zu x %zu) in %.3f s", path, img->grid.nx, img->grid.ny,
             sarbp_now_s() - t0);
    sarbp_pt_result *r = NULL;
    t0 = sarbp_now_s();
    s = sarbp_pointtarget_measure(img, &o, &r);
    if (s != SARBP_OK) {
        sarbp_image_free(img);
        return cli_fail(CMD, "cannot measure '%s': %s", path, sarbp_error_detail());
    }
    cli_info(2, "sarbp: metrics: measured in %.3f s", sarbp_now_s() - t0);
    if (json) print_json(path, img, r);
    else print_table(path, img, r);
    cli_flush_stdout(); /* the figures before a plot's error; main checks the write */
    int rc = CLI_OK;
    if (plot) {
        s = sarbp_pointtarget_plot(plot, r, 800, 500);
        if (s != SARBP_OK) rc = cli_fail_status(CMD, s);
    }
    sarbp_pointtarget_free(r);
    sarbp_image_free(img);
    return rc;
}
