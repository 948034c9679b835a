/* cmd_compare.c - 'sarbp compare': quality of a test image against a reference.
 *
 * Prints every figure of sarbp_quality_compare (a table, or one JSON object)
 * and checks the optional thresholds. Exit 0 when every threshold given
 * holds, 1 when one fails or an image cannot be read or the grids differ,
 * 2 for usage errors. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sarbp/quality.h"

static const char *const CMD = "compare";

static void help(void)
{
    printf("usage: sarbp compare TEST REF [--min-ser DB] [--min-window-ser DB] [--window N] [--json]\n"
           "\n"
           "Compares the complex image TEST with the reference REF (.h5 or .npy) on the same\n"
           "grid and prints image-quality figures.\n"
           "\n"
           "options:\n"
           "      --min-ser DB         fail when the global SER is below DB\n"
           "      --min-window-ser DB  fail when the worst window SER is below DB\n"
           "      --window N           side of the SER windows in pixels (default %d)\n"
           "      --json               print one JSON object instead of a table\n"
           "  -q, --quiet              print nothing on stderr but errors\n"
           "  -v, --verbose            also say what was read and how long it took\n"
           "  -h, --help               print this help and exit\n"
           "\n"
           "figures (r = REF, t = TEST):\n"
           "  SER               10 log10(sum|r|^2 / sum|r-t|^2); inf when identical\n"
           "  worst window SER  lowest SER over non-overlapping N x N tiles from pixel (0,0)\n"
           "                    (edge tiles smaller; tiles with no reference energy skipped)\n"
           "  quasi-SNR         mean over pixels with |r| > 0 of 20 log10(|r| / ||r|-|t||),\n"
           "                    each pixel capped at %.0f dB\n"
           "  PSNR, SSIM        of the dB images clipped to %.0f dB below the reference\n"
           "                    peak and scaled to [0,1]; SSIM with a %dx%d uniform window\n"
           "  entropy           -sum rho ln rho, rho = |x|^2 / sum|x|^2 (nats)\n"
           "  max |t - r|       largest complex error and its pixel\n"
           "JSON: infinite values are the strings \"inf\" and \"-inf\", undefined ones null.\n"
           "\n"
           "exit codes: 0 every threshold given holds; 1 a threshold fails, an image cannot\n"
           "be read, or the grids differ; 2 usage error.\n",
           SARBP_SER_WINDOW_DEFAULT, SARBP_QSNR_CAP_DB, SARBP_QUALITY_DB_FLOOR, SARBP_SSIM_WINDOW,
           SARBP_SSIM_WINDOW);
}


static void print_json(const char *tp, const char *rp, const sarbp_compare_result *c, int pass)
{
    fputs("{\"test\": ", stdout);
    cli_json_str(tp);
    fputs(", \"ref\": ", stdout);
    cli_json_str(rp);
    printf(", \"nx\": %zu, \"ny\": %zu", c->nx, c->ny);
    fputs(", \"ser_db\": ", stdout);
    cli_json_num(c->ser_db);
    fputs(", \"window_ser_db\": ", stdout);
    cli_json_num(c->window_ser_db);
    printf(", \"window\": %zu, \"window_ix\": %zu, \"window_iy\": %zu, \"nwindows\": %zu", c->window,
           c->window_ix, c->window_iy, c->nwindows);
    fputs(", \"quasi_snr_db\": ", stdout);
    cli_json_num(c->quasi_snr_db);
    printf(", \"quasi_snr_pixels\": %zu", c->quasi_snr_pixels);
    fputs(", \"psnr_db\": ", stdout);
    cli_json_num(c->psnr_db);
    fputs(", \"ssim\": ", stdout);
    cli_json_num(c->ssim);
    fputs(", \"entropy_test\": ", stdout);
    cli_json_num(c->entropy_test);
    fputs(", \"entropy_ref\": ", stdout);
    cli_json_num(c->entropy_ref);
    fputs(", \"max_err\": ", stdout);
    cli_json_num(c->max_err);
    printf(", \"max_err_ix\": %zu, \"max_err_iy\": %zu", c->max_err_ix, c->max_err_iy);
    fputs(", \"max_err_db\": ", stdout);
    cli_json_num(c->max_err_db);
    fputs(", \"peak_test\": ", stdout);
    cli_json_num(c->peak_test);
    fputs(", \"peak_ref\": ", stdout);
    cli_json_num(c->peak_ref);
    fputs(", \"rel_l2\": ", stdout);
    cli_json_num(c->rel_l2);
    printf(", \"pass\": %s}\n", pass ? "true" : "false");
}

/* 1 when img has a NaN or Inf pixel, the first one's place in *ix, *iy. */
static int nonfinite_pixel(const sarbp_image *img, size_t *ix, size_t *iy)
{
    const size_t nx = img->grid.nx, n = nx * img->grid.ny;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(img->data[i].re) || !isfinite(img->data[i].im)) {
            *ix = i % nx;
            *iy = i / nx;
            return 1;
        }
    return 0;
}

static void print_table(const char *tp, const char *rp, const sarbp_compare_result *c)
{
    printf("test                    %s\n", cli_safe(tp));
    printf("reference               %s\n", cli_safe(rp));
    printf("size                    %zu x %zu pixels\n", c->nx, c->ny);
    printf("SER                     %.2f dB\n", c->ser_db);
    if (c->nwindows)
        printf("worst window SER        %.2f dB (%zu x %zu tile at ix %zu, iy %zu; %zu tiles)\n",
               c->window_ser_db, c->window, c->window, c->window_ix, c->window_iy, c->nwindows);
    else
        printf("worst window SER        n/a (no tile has reference energy)\n");
    printf("mean quasi-SNR          %.2f dB (%zu pixels, capped at %.0f dB)\n", c->quasi_snr_db,
           c->quasi_snr_pixels, SARBP_QSNR_CAP_DB);
    printf("PSNR of dB images       %.2f dB\n", c->psnr_db);
    printf("mean SSIM of dB images  %.6f\n", c->ssim);
    printf("entropy test / ref      %.6f / %.6f nats\n", c->entropy_test, c->entropy_ref);
    printf("max |t - r|             %.4e at ix %zu, iy %zu (%.2f dB re reference peak)\n", c->max_err,
           c->max_err_ix, c->max_err_iy, c->max_err_db);
    printf("peak |t| / |r|          %.6e / %.6e\n", c->peak_test, c->peak_ref);
    printf("relative L2 error       %.4e\n", c->rel_l2);
}

int cmd_compare(int argc, char **argv)
{
    enum { OPT_MIN_SER = 256, OPT_MIN_WSER, OPT_WINDOW, OPT_JSON };
    static const struct option opts[] = {
        {"min-ser", required_argument, NULL, OPT_MIN_SER},
        {"min-window-ser", required_argument, NULL, OPT_MIN_WSER},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"json", no_argument, NULL, OPT_JSON},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    double min_ser = NAN, min_wser = NAN;
    size_t window = SARBP_SER_WINDOW_DEFAULT;
    int json = 0, have_min = 0, have_wmin = 0, c;
    while ((c = cli_getopt(CMD, argc, argv, "qvh", opts)) != -1) {
        switch (c) {
        case OPT_MIN_SER:
            if (cli_parse_double(optarg, -1e6, 1e6, &min_ser))
                return cli_usage(CMD, "--min-ser wants a number of dB, not '%s'", optarg);
            have_min = 1;
            break;
        case OPT_MIN_WSER:
            if (cli_parse_double(optarg, -1e6, 1e6, &min_wser))
                return cli_usage(CMD, "--min-window-ser wants a number of dB, not '%s'", optarg);
            have_wmin = 1;
            break;
        case OPT_WINDOW:
            if (cli_parse_size(optarg, 1, (size_t)1 << 20, &window))
                return cli_usage(CMD, "--window wants a whole number of pixels >= 1, not '%s'", optarg);
            break;
        case OPT_JSON: json = 1; break;
        case 'h': help(); return CLI_OK;
        default: return CLI_USAGE; /* cli_getopt said why */
        }
    }
    if (argc - optind != 2)
        return cli_usage(CMD, "expected two images, TEST and REF (got %d)", argc - optind);
    const char *tp = argv[optind], *rp = argv[optind + 1];

    sarbp_image *t = NULL, *r = NULL;
    double t0 = sarbp_now_s();
    sarbp_status s = sarbp_image_read(tp, &t);
    if (s != SARBP_OK) return cli_fail_status(CMD, s);
    s = sarbp_image_read(rp, &r);
    if (s != SARBP_OK) {
        sarbp_image_free(t);
        return cli_fail_status(CMD, s);
    }
    cli_info(2, "sarbp: compare: read '%s' (%zu x %zu) and '%s' (%zu x %zu) in %.3f s", tp,
             t->grid.nx, t->grid.ny, rp, r->grid.nx, r->grid.ny, sarbp_now_s() - t0);
    sarbp_compare_result res;
    s = sarbp_quality_compare(t, r, window, &res);
    size_t ix = 0, iy = 0;
    const char *bad = NULL; /* the file of a NaN or Inf pixel: named, not its role */
    if (s == SARBP_ERR_INVALID)
        bad = nonfinite_pixel(t, &ix, &iy) ? tp : nonfinite_pixel(r, &ix, &iy) ? rp : NULL;
    sarbp_image_free(t);
    sarbp_image_free(r);
    if (bad) return cli_fail(CMD, "'%s' has a non-finite pixel at ix %zu, iy %zu", bad, ix, iy);
    if (s == SARBP_ERR_MISMATCH)
        return cli_fail(CMD, "'%s' and '%s' are not on the same grid: %s", tp, rp, sarbp_error_detail());
    if (s != SARBP_OK) return cli_fail_status(CMD, s);

    /* A threshold holds only when the figure is defined and not below it. */
    int pass = 1;
    char msg[2][256];
    int nmsg = 0;
    if (have_min && !(res.ser_db >= min_ser)) {
        pass = 0;
        if (isnan(res.ser_db))
            snprintf(msg[nmsg++], sizeof msg[0], "SER is undefined: cannot check --min-ser %g dB", min_ser);
        else
            snprintf(msg[nmsg++], sizeof msg[0], "SER %.1f dB is below --min-ser %g dB", res.ser_db,
                     min_ser);
    }
    if (have_wmin && !(res.window_ser_db >= min_wser)) {
        pass = 0;
        if (isnan(res.window_ser_db))
            snprintf(msg[nmsg++], sizeof msg[0],
                     "no window has reference energy: cannot check --min-window-ser %g dB", min_wser);
        else
            snprintf(msg[nmsg++], sizeof msg[0],
                     "worst window SER %.1f dB (tile at ix %zu, iy %zu) is below --min-window-ser %g dB",
                     res.window_ser_db, res.window_ix, res.window_iy, min_wser);
    }
    if (json) print_json(tp, rp, &res, pass);
    else print_table(tp, rp, &res);
    cli_flush_stdout(); /* the figures before the verdict; main checks the write */
    for (int i = 0; i < nmsg; i++) cli_fail(CMD, "%s", msg[i]);
    return pass ? CLI_OK : CLI_FAIL;
}
