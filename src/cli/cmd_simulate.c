/* cmd_simulate.c - 'sarbp simulate': exact point-target phase histories to HDF5.
 *
 * Parses options into sarbp_sim_params (defaults from sarbp_sim_defaults for
 * the chosen geometry and domain), builds the target list (--targets, then
 * --clutter), runs sarbp_simulate and writes sarbp's own HDF5 layout through
 * sarbp_phd_write_h5 (temporary name, renamed when complete: a failed run
 * leaves no output file). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sarbp/output.h"

static const char *const CMD = "simulate";

static void help(void)
{
    printf(
        "usage: sarbp simulate -o OUT.h5 [options]\n"
        "\n"
        "Simulates exact point-target phase histories (computed in FP64, stored as\n"
        "FP32) and writes them in sarbp's HDF5 layout. The scene reference point is\n"
        "the origin; positions are metres in the scene frame (x, y ground, z up).\n"
        "\n"
        "The defaults are Gotcha-like: a circular aperture of 512 pulses over 4\n"
        "degrees centred on azimuth 0, range 10 km, elevation 45 degrees, 512\n"
        "deramped frequency samples over 640 MHz around 9.6 GHz, one unit target at\n"
        "the origin. '--geometry linear --domain chirp' gives seed 004's stripmap\n"
        "case: a straight track (PRF 533.33 Hz, 154.2 m/s, 1024 pulses) at 23500 m\n"
        "range and elevation 0, lambda 0.03125 m, 2.4 us chirps of 480 MHz sampled\n"
        "at 548.57 MHz, 3072 samples from 23305 m, one target at 4 m azimuth.\n"
        "\n"
        "  -o, --output FILE     output file (required)\n"
        "      --geometry G      circular (default) or linear\n"
        "      --domain D        freq (default; deramped, motion-compensated\n"
        "                        frequency samples) or chirp (raw baseband echoes)\n"
        "      --targets LIST    point targets 'x,y[,z[,amp]];...' (z 0, amp 1 when\n"
        "                        left out; amp may be negative). Default: one unit\n"
        "                        target at (0,0,0), linear: (0,4,0); none with --clutter\n"
        "      --clutter N       add N random scatterers, uniform in a square of\n"
        "                        half width --clutter-extent, -20 to 0 dB, random sign\n"
        "      --clutter-extent M  half width of the clutter square (default 50 m)\n"
        "      --pulses N        pulses (default 512; linear 1024)\n"
        "      --samples K       samples per pulse (default 512; chirp 3072)\n"
        "      --fc HZ           carrier, the band centre (default 9.6e9;\n"
        "                        linear c/0.03125 m = 9.593e9)\n"
        "      --bandwidth HZ    bandwidth (default 640e6; chirp 480e6)\n"
        "      --range M         slant range to the scene origin (default 10000;\n"
        "                        linear 23500)\n"
        "      --elevation DEG   elevation angle (default 45; linear 0)\n"
        "      --aperture DEG    circular: azimuth span (default 4)\n"
        "      --prf HZ          linear: pulse repetition frequency (default 533.33)\n"
        "      --velocity M/S    linear: platform speed (default 154.2)\n"
        "      --pulse-length S  chirp: pulse length (default 2.4e-6)\n"
        "      --fs HZ           chirp: fast-time sample rate (default 548.57e6)\n"
        "      --near-range M    chirp: slant range of sample 0 (default: the swath\n"
        "                        centred on --range; linear 23305 unless --range,\n"
        "                        --samples or --fs is given)\n"
        "      --noise-db DB     add complex Gaussian noise of this power per sample\n"
        "                        relative to a unit target's (default: no noise)\n"
        "      --seed S          seed of the noise and the clutter (default 1)\n"
        "      --hill H,R        put every target on a Gaussian hill of height H m and\n"
        "                        radius R m (its standard deviation) at the origin:\n"
        "                        z = H exp(-(x^2+y^2)/(2 R^2)) plus the target's own z\n"
        "      --slope SX,SY     and on a plane of slopes SX, SY (m per m): z += SX x + SY y\n"
        "                        (sarbp form --heights with the same field forms them\n"
        "                        in focus; docs/terrain.md)\n"
        "  -q, --quiet           no messages but errors\n"
        "  -v, --verbose         say what was simulated\n"
        "  -h, --help            show this help\n"
        "\n"
        "exit codes: 0 success, 1 failure, 2 usage error.\n");
}

enum {
    O_GEOMETRY = 256, O_DOMAIN, O_TARGETS, O_CLUTTER, O_CLUTTER_EXTENT, O_PULSES, O_SAMPLES,
    O_FC, O_BANDWIDTH, O_RANGE, O_ELEVATION, O_APERTURE, O_PRF, O_VELOCITY, O_PULSE_LENGTH,
    O_FS, O_NEAR_RANGE, O_NOISE_DB, O_SEED,
    O_HILL, O_SLOPE, /* terrain */
    O_END
};

static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"geometry", required_argument, NULL, O_GEOMETRY},
    {"domain", required_argument, NULL, O_DOMAIN},
    {"targets", required_argument, NULL, O_TARGETS},
    {"clutter", required_argument, NULL, O_CLUTTER},
    {"clutter-extent", required_argument, NULL, O_CLUTTER_EXTENT},
    {"pulses", required_argument, NULL, O_PULSES},
    {"samples", required_argument, NULL, O_SAMPLES},
    {"fc", required_argument, NULL, O_FC},
    {"bandwidth", required_argument, NULL, O_BANDWIDTH},
    {"range", required_argument, NULL, O_RANGE},
    {"elevation", required_argument, NULL, O_ELEVATION},
    {"aperture", required_argument, NULL, O_APERTURE},
    {"prf", required_argument, NULL, O_PRF},
    {"velocity", required_argument, NULL, O_VELOCITY},
    {"pulse-length", required_argument, NULL, O_PULSE_LENGTH},
    {"fs", required_argument, NULL, O_FS},
    {"near-range", required_argument, NULL, O_NEAR_RANGE},
    {"noise-db", required_argument, NULL, O_NOISE_DB},
    {"seed", required_argument, NULL, O_SEED},
    {"hill", required_argument, NULL, O_HILL},
    {"slope", required_argument, NULL, O_SLOPE},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* Numeric options: where the value goes and its accepted range; positive
 * options exclude lo (0). */
struct num_opt {
    int id;
    const char *name;
    int positive;
    double lo, hi;
    size_t off; /* offset of the double in sarbp_sim_params */
};

static const struct num_opt num_opts[] = {
    {O_FC, "fc", 1, 0, 1e15, offsetof(sarbp_sim_params, fc)},
    {O_BANDWIDTH, "bandwidth", 1, 0, 1e15, offsetof(sarbp_sim_params, bandwidth)},
    {O_RANGE, "range", 1, 0, 1e9, offsetof(sarbp_sim_params, range)},
    {O_ELEVATION, "elevation", 0, -89.999, 89.999, offsetof(sarbp_sim_params, elevation_deg)},
    {O_APERTURE, "aperture", 0, 0, 360, offsetof(sarbp_sim_params, aperture_deg)},
    {O_PRF, "prf", 1, 0, 1e12, offsetof(sarbp_sim_params, prf)},
    {O_VELOCITY, "velocity", 1, 0, 1e9, offsetof(sarbp_sim_params, velocity)},
    {O_PULSE_LENGTH, "pulse-length", 1, 0, 1, offsetof(sarbp_sim_params, pulse_len)},
    {O_FS, "fs", 1, 0, 1e15, offsetof(sarbp_sim_params, fs)},
    {O_NEAR_RANGE, "near-range", 0, 0, 1e9, offsetof(sarbp_sim_params, near_range)},
    {O_NOISE_DB, "noise-db", 0, -1000, 200, offsetof(sarbp_sim_params, noise_db)},
};

#define MAX_COUNT ((size_t)1 << 24)

int cmd_simulate(int argc, char **argv)
{
    const char *val[O_END] = {0}; /* option text by id, last one wins */
    const char *output = NULL;

    int c;
    while ((c = cli_getopt(CMD, argc, argv, "o:qvh", longopts)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'h': help(); return CLI_OK;
        case CLI_BAD_OPTION: return CLI_USAGE; /* cli_getopt said why */
        default:
            if (c >= O_GEOMETRY && c < O_END) val[c] = optarg;
            break;
        }
    }
    if (optind < argc) return cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
    if (!output || !*output) return cli_usage(CMD, "no output file given (-o FILE)");

    sarbp_geometry geom = SARBP_GEOM_CIRCULAR;
    if (val[O_GEOMETRY]) {
        if (!strcmp(val[O_GEOMETRY], "circular")) geom = SARBP_GEOM_CIRCULAR;
        else if (!strcmp(val[O_GEOMETRY], "linear")) geom = SARBP_GEOM_LINEAR;
        else return cli_usage(CMD, "invalid --geometry '%s' (expected circular or linear)",
                              val[O_GEOMETRY]);
    }
    sarbp_domain dom = SARBP_DOMAIN_FREQ;
    if (val[O_DOMAIN]) {
        if (!strcmp(val[O_DOMAIN], "freq")) dom = SARBP_DOMAIN_FREQ;
        else if (!strcmp(val[O_DOMAIN], "chirp")) dom = SARBP_DOMAIN_CHIRP;
        else return cli_usage(CMD, "invalid --domain '%s' (expected freq or chirp)",
                              val[O_DOMAIN]);
    }

    sarbp_sim_params p;
    sarbp_sim_defaults(&p, geom, dom);
    if (val[O_PULSES] && cli_parse_size(val[O_PULSES], 1, MAX_COUNT, &p.npulses))
        return cli_usage(CMD, "invalid --pulses '%s' (expected a whole number from 1 to %zu)",
                         val[O_PULSES], MAX_COUNT);
    if (val[O_SAMPLES] && cli_parse_size(val[O_SAMPLES], 1, MAX_COUNT, &p.nsamples))
        return cli_usage(CMD, "invalid --samples '%s' (expected a whole number from 1 to %zu)",
                         val[O_SAMPLES], MAX_COUNT);
    for (size_t i = 0; i < sizeof num_opts / sizeof num_opts[0]; i++) {
        const struct num_opt *o = &num_opts[i];
        if (!val[o->id]) continue;
        double *dst = (double *)((char *)&p + o->off);
        if (cli_parse_double(val[o->id], o->lo, o->hi, dst) || (o->positive && !(*dst > 0))) {
            if (o->positive)
                return cli_usage(CMD, "invalid --%s '%s' (expected a positive number up to %g)",
                                 o->name, val[o->id], o->hi);
            return cli_usage(CMD, "invalid --%s '%s' (expected a number from %g to %g)", o->name,
                             val[o->id], o->lo, o->hi);
        }
    }
    if (val[O_SEED]) {
        size_t seed;
        if (cli_parse_size(val[O_SEED], 0, SIZE_MAX, &seed))
            return cli_usage(CMD, "invalid --seed '%s' (expected a whole number)", val[O_SEED]);
        p.seed = (unsigned long long)seed;
    }
    /* seed 004's near range belongs to its range and swath: when those
     * change, centre the swath on the range instead */
    if (!val[O_NEAR_RANGE] && (val[O_RANGE] || val[O_SAMPLES] || val[O_FS])) p.near_range = 0;

    size_t nclutter = 0;
    double extent = 50;
    if (val[O_CLUTTER] && cli_parse_size(val[O_CLUTTER], 0, 1000000, &nclutter))
        return cli_usage(CMD, "invalid --clutter '%s' (expected a whole number from 0 to 1000000)",
                         val[O_CLUTTER]);
    if (val[O_CLUTTER_EXTENT] && cli_parse_double(val[O_CLUTTER_EXTENT], 0, 1e6, &extent))
        return cli_usage(CMD, "invalid --clutter-extent '%s' (expected a number from 0 to 1e6)",
                         val[O_CLUTTER_EXTENT]);

    /* terrain: the targets on a hill and a slope */
    double hill[2] = {0, 0}, slope[2] = {0, 0};
    if (val[O_HILL] && (cli_parse_list(val[O_HILL], ',', hill, 2, 2) < 0 || fabs(hill[0]) > 1e4 ||
                        !(hill[1] > 0 && hill[1] <= 1e6)))
        return cli_usage(CMD, "invalid --hill '%s' (expected H,R: a height within +-1e4 m and a "
                         "radius in (0, 1e6] m)", val[O_HILL]);
    if (val[O_SLOPE] && (cli_parse_list(val[O_SLOPE], ',', slope, 2, 2) < 0 || fabs(slope[0]) > 10 ||
                         fabs(slope[1]) > 10))
        return cli_usage(CMD, "invalid --slope '%s' (expected SX,SY, each within +-10 m per m)",
                         val[O_SLOPE]);
    const int on_terrain = val[O_HILL] || val[O_SLOPE];

    sarbp_target *given = NULL, *all = NULL, *clutter = NULL;
    size_t ngiven = 0;
    if (val[O_TARGETS] && sarbp_targets_parse(val[O_TARGETS], &given, &ngiven) != SARBP_OK)
        return cli_usage(CMD, "invalid --targets: %s", sarbp_error_detail());
    sarbp_target deflt = {0, geom == SARBP_GEOM_LINEAR ? 4 : 0, 0, 1}; /* sarbp_sim_params' */

    int rc = CLI_FAIL;
    sarbp_phd *phd = NULL;
    sarbp_status st;
    if (nclutter) {
        st = sarbp_targets_clutter(nclutter, extent, -20, 0, p.seed, &clutter);
        if (st != SARBP_OK) {
            rc = cli_fail_status(CMD, st);
            goto done;
        }
        all = malloc((ngiven + nclutter) * sizeof *all);
        if (!all) {
            rc = cli_fail(CMD, "out of memory for %zu targets", ngiven + nclutter);
            goto done;
        }
        if (ngiven) memcpy(all, given, ngiven * sizeof *all);
        memcpy(all + ngiven, clutter, nclutter * sizeof *all);
        p.targets = all;
        p.ntargets = ngiven + nclutter;
    } else if (ngiven) {
        p.targets = given;
        p.ntargets = ngiven;
    }

    if (on_terrain) {
        if (!p.ntargets) {
            p.targets = &deflt;
            p.ntargets = 1;
        }
        for (size_t i = 0; i < p.ntargets; i++)
            p.targets[i].z += sarbp_hill_z(hill[0], hill[1], slope[0], slope[1], p.targets[i].x,
                                           p.targets[i].y);
    }

    /* the output before the work: a path that cannot take it fails now */
    st = sarbp_output_check_path(output);
    if (st == SARBP_OK) st = sarbp_simulate(&p, &phd);
    if (st != SARBP_OK) {
        rc = cli_fail_status(CMD, st);
        goto done;
    }
    st = sarbp_phd_write_h5(output, phd);
    if (st != SARBP_OK) {
        rc = cli_fail_status(CMD, st);
        goto done;
    }
    cli_info(2, "sarbp: simulate: wrote '%s': %s geometry, %s domain, %zu pulses x %zu samples, %zu target%s",
             output, geom == SARBP_GEOM_LINEAR ? "linear" : "circular",
             dom == SARBP_DOMAIN_CHIRP ? "chirp" : "freq", phd->npulses, phd->nsamples,
             p.ntargets ? p.ntargets : 1, (p.ntargets == 1 || p.ntargets == 0) ? "" : "s");
    rc = CLI_OK;
done:
    sarbp_phd_free(phd);
    free(given);
    free(clutter);
    free(all);
    return rc;
}
