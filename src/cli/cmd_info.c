/* cmd_info.c - 'sarbp info': describe phase-history inputs.
 *
 * Opens the inputs with the reader (metadata only: no samples are read) and
 * prints what a user needs before forming an image: size, frequencies,
 * geometry, resolution, the alias-free extent and the grid 'sarbp form'
 * would choose. Text for people, or one JSON object with --json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(FILE *f)
{
    fputs("usage: sarbp info [options] IN...\n"
          "\n"
          "Describes phase histories: pulses, frequencies, geometry, resolution and\n"
          "the image grid 'sarbp form' would choose. Reads metadata only.\n"
          "\n"
          "IN is a file (sarbp's HDF5 layout, a Gotcha MATLAB file, HDF5 with the\n"
          "Gotcha field names, or an NGA CPHD), a directory (its .mat, .h5, .hdf5 and\n"
          ".cphd files) or a glob pattern (quote it). Several inputs are concatenated\n"
          "in azimuth order. A CPHD also tells where the scene is (its scene reference\n"
          "point), the collector and the pulse times, and lists its channels. The\n"
          "polarisation comes from a CPHD channel, a sarbp .h5 attribute or Gotcha's\n"
          "file and folder names (..._HH.mat, pass1/HH/).\n"
          "\n"
          "options:\n"
          "  -i, --input IN   an input, like a positional IN (may be repeated)\n"
          "      --json       print one JSON object instead of text\n"
          "      --channel ID CPHD: the channel to describe (default: the first)\n"
          "      --polarisation P  HH, VV, HV or VH: only the inputs of that polarisation\n"
          "  -q, --quiet      print nothing on stderr but errors\n"
          "  -v, --verbose    also say how long reading the metadata took\n"
          "  -h, --help       show this help and exit\n"
          "\n"
          "exit codes: 0 success, 1 unreadable or invalid input, 2 usage error.\n",
          f);
}

struct facts {
    const sarbp_phd *m;
    sarbp_phd_summary s;
    double df_min, df_max;   /* FREQ: per-pulse step range */
    double az_min, az_max;   /* deg */
    int have_grid;
    sarbp_grid grid;
};

static void gather(const sarbp_phd *m, struct facts *f)
{
    f->m = m;
    f->df_min = INFINITY;
    f->df_max = -INFINITY;
    f->az_min = INFINITY;
    f->az_max = -INFINITY;
    for (size_t i = 0; i < m->npulses; i++) {
        if (m->df) {
            if (m->df[i] < f->df_min) f->df_min = m->df[i];
            if (m->df[i] > f->df_max) f->df_max = m->df[i];
        }
        double a = sarbp_phd_azimuth_deg(m, i);
        if (a < f->az_min) f->az_min = a;
        if (a > f->az_max) f->az_max = a;
    }
}

/* ---- text ------------------------------------------------------------------ */

/* "H:H" -> "HH" (buf[8]); CPHD's own "T:R" notation is kept for CPHD. */
static const char *pol_text(const char *p, const char *from, char *buf)
{
    if (from && strcmp(from, "the CPHD channel") && strlen(p) == 3 && p[1] == ':')
        snprintf(buf, 8, "%c%c", p[0], p[2]);
    else
        snprintf(buf, 8, "%s", cli_safe(p));
    return buf;
}

/* The polarisation of the inputs: "HH (from the file name)", "unknown" or
 * "mixed (see files)" into buf. */
static const char *pol_line(const sarbp_reader *rd, char *buf, size_t n)
{
    const sarbp_collection *c = sarbp_reader_collection(rd);
    const char *from = NULL, *p0 = sarbp_reader_file_polarisation(rd, 0, &from);
    char s[8];
    if (c->polarisation[0] && p0)
        snprintf(buf, n, "%s (from %s)", pol_text(c->polarisation, from, s), from);
    else if (c->polarisation[0])
        snprintf(buf, n, "%s", cli_safe(c->polarisation));
    else
        snprintf(buf, n, "%s", p0 ? "mixed (see files)" : "unknown");
    return buf;
}

/* A CPHD's channels, one line each (text) or a JSON array; which was read. */
static void print_channels(const char *path, const sarbp_reader_options *ro, int json)
{
    sarbp_cphd_channel *ch;
    size_t n;
    if (sarbp_cphd_channels(path, &ch, &n) != SARBP_OK) {
        if (json) printf(", \"channels\": null");
        return;
    }
    char want[8] = "";
    if (!ro->channel && ro->polarisation)
        sarbp_polarisation_parse(ro->polarisation, want, sizeof want);
    int chosen_done = 0;
    if (json) printf(", \"channels\": [");
    for (size_t k = 0; k < n; k++) {
        int chosen = 0;
        if (!chosen_done) {
            chosen = ro->channel ? !strcmp(ch[k].id, ro->channel)
                                 : want[0] ? !strcmp(ch[k].polarisation, want) : 1;
            chosen_done = chosen;
        }
        if (json) {
            printf("%s{\"id\": ", k ? ", " : "");
            cli_json_str(ch[k].id);
            printf(", \"polarisation\": ");
            if (ch[k].polarisation[0]) cli_json_str(ch[k].polarisation);
            else printf("null");
            printf(", \"nvectors\": %zu, \"nsamples\": %zu, \"read\": %s}", ch[k].nvectors,
                   ch[k].nsamples, chosen ? "true" : "false");
        } else {
            printf("    channel '%s': polarisation %s, %zu vectors of %zu samples%s\n",
                   cli_safe(ch[k].id), ch[k].polarisation[0] ? cli_safe(ch[k].polarisation)
                                                             : "unknown",
                   ch[k].nvectors, ch[k].nsamples, chosen ? " (read)" : "");
        }
    }
    if (json) printf("]");
    free(ch);
}

/* A file's string for the text output: sanitised (cli_safe), "unknown" when empty. */
static const char *or_unknown(const char *s)
{
    return s && *s ? cli_safe(s) : "unknown";
}

static void print_text(const struct facts *f, const sarbp_reader *rd,
                       const sarbp_reader_options *ro)
{
    char pl[96];
    const sarbp_phd *m = f->m;
    const sarbp_phd_summary *s = &f->s;
    printf("pulses:             %zu\n", m->npulses);
    printf("samples per pulse:  %zu\n", m->nsamples);
    if (m->domain == SARBP_DOMAIN_FREQ) {
        printf("domain:             freq (deramped frequency samples)\n");
        printf("frequencies:        %.6f GHz to %.6f GHz, step %.6f MHz", s->fmin / 1e9,
               s->fmax / 1e9, f->df_min / 1e6);
        if (f->df_max > f->df_min)
            printf(" (varies up to %.6f MHz)", f->df_max / 1e6);
        printf("\n");
    } else {
        printf("domain:             chirp (raw fast-time echoes)\n");
        printf("carrier:            %.6f GHz\n", m->fc / 1e9);
        printf("sample rate:        %.6f MHz\n", m->fs / 1e6);
        printf("chirp rate:         %.6g Hz/s\n", m->chirp_rate);
        printf("pulse length:       %.6g us\n", m->pulse_len * 1e6);
        printf("first sample delay: %.6g us\n", m->t0 * 1e6);
        printf("frequencies:        %.6f GHz to %.6f GHz\n", s->fmin / 1e9, s->fmax / 1e9);
    }
    printf("bandwidth:          %.3f MHz\n", s->bandwidth / 1e6);
    printf("centre frequency:   %.6f GHz\n", s->fcenter / 1e9);
    printf("aperture:           %.4f deg\n", s->aperture_deg);
    printf("azimuth:            %.4f to %.4f deg%s\n", f->az_min, f->az_max,
           m->th ? "" : " (from the antenna positions)");
    printf("range resolution:   %.4f m\n", s->range_res);
    if (isfinite(s->az_res)) printf("azimuth resolution: %.4f m\n", s->az_res);
    else printf("azimuth resolution: none (no aperture)\n");
    printf("alias-free extent:  %.2f m (range)\n", s->extent_range);
    printf("mean r0:            %.3f m\n", s->r0_mean);
    printf("elevation:          %.3f deg\n", s->elevation_deg);
    printf("autofocus data:     %s\n", m->r_correct || m->ph_correct
                                           ? "yes (apply with --autofocus)" : "no");
    printf("polarisation:       %s\n", pol_line(rd, pl, sizeof pl));
    const sarbp_collection *c = sarbp_reader_collection(rd);
    if (c->has_ref)
        printf("scene reference:    %.9f, %.9f deg, %.3f m (WGS-84); ECEF (%.3f, %.3f, %.3f) m; "
               "frame east-north-up there\n", c->ref.lat_deg, c->ref.lon_deg, c->ref.height_m,
               c->ref.ecef[0], c->ref.ecef[1], c->ref.ecef[2]);
    else
        printf("scene reference:    none (give --scene-ref to form for geolocated outputs)\n");
    if (c->source_format[0] || c->collector[0]) {
        printf("collector:          %s\n", or_unknown(c->collector));
        printf("collection:         %s\n", or_unknown(c->core_name));
        printf("collection start:   %s\n", or_unknown(c->collect_start));
    }
    const double *t = sarbp_reader_times(rd);
    if (t) printf("pulse times:        %.6f to %.6f s after the start\n", t[0], t[m->npulses - 1]);
    if (f->have_grid)
        printf("suggested grid:     %zu x %zu pixels of %.4f x %.4f m, centre (%g, %g, %g) m\n",
               f->grid.nx, f->grid.ny, f->grid.dx, f->grid.dy, f->grid.xc, f->grid.yc,
               f->grid.zc);
    size_t n = sarbp_reader_nfiles(rd);
    printf("files:              %zu\n", n);
    for (size_t i = 0; i < n; i++) {
        const char *from, *p = sarbp_reader_file_polarisation(rd, i, &from);
        char ps[8];
        printf("  %s (%zu pulses, %s)", cli_safe(sarbp_reader_file(rd, i)),
               sarbp_reader_file_npulses(rd, i), cli_safe(sarbp_reader_file_format(rd, i)));
        if (p) printf(": %s from %s", pol_text(p, from, ps), from);
        printf("\n");
        if (!strcmp(sarbp_reader_file_format(rd, i), "CPHD"))
            print_channels(sarbp_reader_file(rd, i), ro, 0);
    }
}

/* ---- JSON ------------------------------------------------------------------ */

/* JSON has no NaN or Inf: null instead. */
static void json_num(const char *key, double v, int comma)
{
    printf("  \"%s\": ", key);
    if (isfinite(v)) printf("%.17g", v);
    else printf("null");
    printf(comma ? ",\n" : "\n");
}

static void print_json(const struct facts *f, const sarbp_reader *rd,
                       const sarbp_reader_options *ro)
{
    const sarbp_phd *m = f->m;
    const sarbp_phd_summary *s = &f->s;
    printf("{\n");
    printf("  \"npulses\": %zu,\n", m->npulses);
    printf("  \"nsamples\": %zu,\n", m->nsamples);
    printf("  \"domain\": \"%s\",\n", m->domain == SARBP_DOMAIN_FREQ ? "freq" : "chirp");
    json_num("freq_first_hz", s->fmin, 1);
    json_num("freq_last_hz", s->fmax, 1);
    if (m->domain == SARBP_DOMAIN_FREQ) {
        json_num("freq_step_hz", f->df_min, 1);
        json_num("freq_step_max_hz", f->df_max, 1);
    } else {
        json_num("fc_hz", m->fc, 1);
        json_num("fs_hz", m->fs, 1);
        json_num("chirp_rate_hz_per_s", m->chirp_rate, 1);
        json_num("pulse_len_s", m->pulse_len, 1);
        json_num("t0_s", m->t0, 1);
    }
    json_num("bandwidth_hz", s->bandwidth, 1);
    json_num("center_freq_hz", s->fcenter, 1);
    json_num("aperture_deg", s->aperture_deg, 1);
    json_num("azimuth_min_deg", f->az_min, 1);
    json_num("azimuth_max_deg", f->az_max, 1);
    json_num("range_res_m", s->range_res, 1);
    json_num("azimuth_res_m", s->az_res, 1);
    json_num("extent_range_m", s->extent_range, 1);
    json_num("r0_mean_m", s->r0_mean, 1);
    json_num("elevation_deg", s->elevation_deg, 1);
    printf("  \"autofocus\": %s,\n", m->r_correct || m->ph_correct ? "true" : "false");
    if (f->have_grid)
        printf("  \"grid\": {\"nx\": %zu, \"ny\": %zu, \"dx\": %.17g, \"dy\": %.17g, "
               "\"xc\": %.17g, \"yc\": %.17g, \"zc\": %.17g},\n",
               f->grid.nx, f->grid.ny, f->grid.dx, f->grid.dy, f->grid.xc, f->grid.yc,
               f->grid.zc);
    else
        printf("  \"grid\": null,\n");
    const sarbp_collection *c = sarbp_reader_collection(rd);
    if (c->has_ref)
        printf("  \"scene_ref\": {\"lat_deg\": %.17g, \"lon_deg\": %.17g, \"height_m\": %.17g, "
               "\"heading_deg\": %.17g, \"ecef_m\": [%.17g, %.17g, %.17g]},\n", c->ref.lat_deg,
               c->ref.lon_deg, c->ref.height_m, c->ref.heading_deg, c->ref.ecef[0], c->ref.ecef[1],
               c->ref.ecef[2]);
    else
        printf("  \"scene_ref\": null,\n");
    const char *keys[] = {"collector", "core_name", "polarisation", "collect_start"};
    const char *vals[] = {c->collector, c->core_name, c->polarisation, c->collect_start};
    for (int k = 0; k < 4; k++) {
        printf("  \"%s\": ", keys[k]);
        if (vals[k][0]) cli_json_str(vals[k]);
        else printf("null");
        printf(",\n");
    }
    const char *pol_from = NULL;
    sarbp_reader_file_polarisation(rd, 0, &pol_from);
    printf("  \"polarisation_from\": ");
    if (c->polarisation[0] && pol_from) cli_json_str(pol_from);
    else printf("null");
    printf(",\n");
    const double *t = sarbp_reader_times(rd);
    if (t) {
        json_num("time_first_s", t[0], 1);
        json_num("time_last_s", t[m->npulses - 1], 1);
    }
    printf("  \"files\": [");
    size_t n = sarbp_reader_nfiles(rd);
    for (size_t i = 0; i < n; i++) {
        printf("%s\n    {\"path\": ", i ? "," : "");
        cli_json_str(sarbp_reader_file(rd, i));
        printf(", \"npulses\": %zu, \"format\": ", sarbp_reader_file_npulses(rd, i));
        cli_json_str(sarbp_reader_file_format(rd, i));
        const char *from, *p = sarbp_reader_file_polarisation(rd, i, &from);
        printf(", \"polarisation\": ");
        if (p) cli_json_str(p);
        else printf("null");
        if (!strcmp(sarbp_reader_file_format(rd, i), "CPHD"))
            print_channels(sarbp_reader_file(rd, i), ro, 1);
        printf("}");
    }
    printf("\n  ]\n}\n");
}

int cmd_info(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_CHANNEL, OPT_POLARISATION };
    static const struct option opts[] = {
        {"input", required_argument, NULL, 'i'},
        {"json", no_argument, NULL, OPT_JSON},
        {"channel", required_argument, NULL, OPT_CHANNEL},
        {"polarisation", required_argument, NULL, OPT_POLARISATION},
        {"polarization", required_argument, NULL, OPT_POLARISATION},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs) return cli_fail("info", "out of memory");
    size_t ninputs = 0;
    int json = 0, c;
    sarbp_reader_options ro = {.channel = NULL};
    while ((c = cli_getopt("info", argc, argv, "i:qvh", opts)) != -1) {
        switch (c) {
        case 'i': inputs[ninputs++] = optarg; break;
        case OPT_JSON: json = 1; break;
        case OPT_CHANNEL: ro.channel = optarg; break;
        case OPT_POLARISATION: {
            char pol[8];
            if (sarbp_polarisation_parse(optarg, pol, sizeof pol)) {
                free(inputs);
                return cli_usage("info", "--polarisation wants HH, VV, HV or VH, not '%s'",
                                 optarg);
            }
            ro.polarisation = optarg;
            break;
        }
        case 'h':
            free(inputs);
            help(stdout);
            return CLI_OK;
        default:
            free(inputs);
            return CLI_USAGE; /* cli_getopt said why */
        }
    }
    for (int i = optind; i < argc; i++) inputs[ninputs++] = argv[i];
    if (ninputs == 0) {
        free(inputs);
        return cli_usage("info", "no input given");
    }

    sarbp_reader *rd;
    double t0 = sarbp_now_s();
    sarbp_status st = sarbp_reader_open_opts(inputs, ninputs, &ro, &rd);
    free(inputs);
    if (st != SARBP_OK) return cli_fail_status("info", st);
    cli_info(2, "sarbp: info: read the metadata of %zu file%s in %.3f s",
             sarbp_reader_nfiles(rd), sarbp_reader_nfiles(rd) == 1 ? "" : "s", sarbp_now_s() - t0);
    struct facts f;
    memset(&f, 0, sizeof f);
    gather(sarbp_reader_meta(rd), &f);
    st = sarbp_phd_summarize(f.m, &f.s);
    if (st != SARBP_OK) {
        sarbp_reader_free(rd);
        return cli_fail_status("info", st);
    }
    f.have_grid = sarbp_grid_default(f.m, &f.grid) == SARBP_OK;
    if (json) print_json(&f, rd, &ro);
    else print_text(&f, rd, &ro);
    sarbp_reader_free(rd);
    return CLI_OK; /* main checks that stdout was written */
}
