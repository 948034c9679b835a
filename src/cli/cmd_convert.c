/* cmd_convert.c - 'sarbp convert': any readable phase history to sarbp's HDF5.
 *
 * Streams blocks of pulses from the reader to the writer, so memory is one
 * block whatever the size of the inputs. The writer works under a temporary
 * name and renames at the end: a failure leaves no output file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sarbp/output.h"

#define BLOCK_BYTES ((size_t)32 << 20) /* samples read and written at a time */

static void help(FILE *f)
{
    fputs("usage: sarbp convert [options] IN... -o OUT.h5\n"
          "\n"
          "Converts phase histories to sarbp's own HDF5 layout (see README), block by\n"
          "block, so inputs larger than memory convert too.\n"
          "\n"
          "IN is a file (sarbp's HDF5 layout, a Gotcha MATLAB file, or HDF5 with the\n"
          "Gotcha field names), a directory (its .mat, .h5 and .hdf5 files) or a glob\n"
          "pattern (quote it). Several inputs are concatenated in azimuth order.\n"
          "\n"
          "options:\n"
          "  -o, --output OUT     file to write (required); written under a temporary\n"
          "                       name and renamed when complete\n"
          "  -i, --input IN       an input, like a positional IN (may be repeated)\n"
          "      --pulses I0:I1   keep pulses I0 to I1-1 of the concatenated inputs\n"
          "      --azimuth A0:A1  keep the pulses with azimuth in [A0, A1] degrees\n"
          "      --channel ID     CPHD: the channel (Data/Channel/Identifier) to convert\n"
          "                       (default: the first)\n"
          "      --polarisation P HH, VV, HV or VH: only the inputs of that polarisation\n"
          "                       (inputs whose azimuths overlap are refused without it)\n"
          "      --autofocus      apply the Gotcha autofocus solution: af.r_correct is\n"
          "                       added to r0 and the samples are multiplied by\n"
          "                       exp(j af.ph_correct); the output carries no af fields\n"
          "  -q, --quiet          print nothing but errors\n"
          "  -v, --verbose        say what was written\n"
          "  -h, --help           show this help and exit\n"
          "\n"
          "exit codes: 0 success, 1 unreadable or invalid input or failed write, 2 usage\n"
          "error (an output that is one of the inputs included).\n",
          f);
}

/* Reads the reader's (selected) pulses block by block into the writer. */
static sarbp_status copy_all(sarbp_reader *rd, const char *out)
{
    const sarbp_phd *m = sarbp_reader_meta(rd);
    size_t block = BLOCK_BYTES / (m->nsamples * sizeof(sarbp_c32));
    if (block < 1) block = 1;
    if (block > m->npulses) block = m->npulses;
    sarbp_c32 *buf = malloc(block * m->nsamples * sizeof *buf);
    if (!buf) return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu pulses", block);
    sarbp_phd_writer *w;
    sarbp_status st = sarbp_phd_writer_open(out, m, &w);
    for (size_t p0 = 0; st == SARBP_OK && p0 < m->npulses; p0 += block) {
        size_t np = m->npulses - p0 < block ? m->npulses - p0 : block;
        st = sarbp_reader_read(rd, p0, np, buf);
        if (st == SARBP_OK) st = sarbp_phd_writer_write(w, p0, np, buf);
    }
    if (st == SARBP_OK) st = sarbp_phd_writer_commit(w);
    if (w) sarbp_phd_writer_free(w);
    free(buf);
    return st;
}

int cmd_convert(int argc, char **argv)
{
    enum { OPT_PULSES = 256, OPT_AZIMUTH, OPT_AUTOFOCUS, OPT_CHANNEL, OPT_POLARISATION };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"input", required_argument, NULL, 'i'},
        {"pulses", required_argument, NULL, OPT_PULSES},
        {"azimuth", required_argument, NULL, OPT_AZIMUTH},
        {"autofocus", no_argument, NULL, OPT_AUTOFOCUS},
        {"channel", required_argument, NULL, OPT_CHANNEL},
        {"polarisation", required_argument, NULL, OPT_POLARISATION},
        {"polarization", required_argument, NULL, OPT_POLARISATION},
        CLI_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs) return cli_fail("convert", "out of memory");
    size_t ninputs = 0, i0 = 0, i1 = 0;
    const char *out = NULL;
    int have_pulses = 0, have_az = 0, autofocus = 0, c, rc = CLI_OK;
    double az[2] = {0, 0};
    sarbp_reader_options ro = {NULL, NULL};
    char pol[8];
    while (rc == CLI_OK && (c = cli_getopt("convert", argc, argv, "o:i:qvh", opts)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'i': inputs[ninputs++] = optarg; break;
        case OPT_PULSES:
            if (cli_parse_size_range(optarg, 0, SIZE_MAX, &i0, &i1))
                rc = cli_usage("convert", "--pulses wants I0:I1, whole numbers with 0 <= I0 < I1, "
                               "not '%s'", optarg);
            have_pulses = 1;
            break;
        case OPT_AZIMUTH:
            if (cli_parse_list(optarg, ':', az, 2, 2) != 2 || !(az[1] >= az[0]))
                rc = cli_usage("convert", "--azimuth wants A0:A1 in degrees with A0 <= A1, "
                               "not '%s'", optarg);
            have_az = 1;
            break;
        case OPT_AUTOFOCUS: autofocus = 1; break;
        case OPT_CHANNEL:
            if (!*optarg) rc = cli_usage("convert", "--channel wants a channel identifier");
            ro.channel = optarg;
            break;
        case OPT_POLARISATION:
            if (sarbp_polarisation_parse(optarg, pol, sizeof pol))
                rc = cli_usage("convert", "--polarisation wants HH, VV, HV or VH, not '%s'",
                               optarg);
            ro.polarisation = optarg;
            break;
        case 'h':
            free(inputs);
            help(stdout);
            return CLI_OK;
        default: rc = CLI_USAGE; break; /* cli_getopt said why */
        }
    }
    if (rc == CLI_OK) {
        for (int i = optind; i < argc; i++) inputs[ninputs++] = argv[i];
        if (ninputs == 0) rc = cli_usage("convert", "no input given");
        else if (!out) rc = cli_usage("convert", "no output given (-o OUT.h5)");
        else if (have_pulses && have_az)
            rc = cli_usage("convert", "--pulses and --azimuth cannot be combined");
        for (size_t i = 0; rc == CLI_OK && i < ninputs; i++)
            if (cli_same_file(out, inputs[i]))
                rc = cli_usage("convert", "output '%s' is the input '%s': it would be "
                               "overwritten", out, inputs[i]);
    }
    if (rc != CLI_OK) {
        free(inputs);
        return rc;
    }

    sarbp_reader *rd;
    sarbp_status st = sarbp_reader_open_opts(inputs, ninputs, &ro, &rd);
    free(inputs);
    if (st != SARBP_OK) return cli_fail_status("convert", st);
    for (size_t i = 0; i < sarbp_reader_nfiles(rd); i++)
        if (cli_same_file(out, sarbp_reader_file(rd, i))) {
            rc = cli_usage("convert", "output '%s' is the input '%s': it would be overwritten",
                           out, sarbp_reader_file(rd, i));
            sarbp_reader_free(rd);
            return rc;
        }
    /* the output before any pulse is read */
    if ((st = sarbp_output_check_path(out)) != SARBP_OK) {
        sarbp_reader_free(rd);
        return cli_fail_status("convert", st);
    }
    const sarbp_phd *m = sarbp_reader_meta(rd);
    if (have_az) st = sarbp_phd_azimuth_range(m, az[0], az[1], &i0, &i1);
    if (st == SARBP_OK && (have_pulses || have_az)) st = sarbp_reader_select(rd, i0, i1);
    if (st == SARBP_OK && autofocus) {
        if (!m->r_correct && !m->ph_correct)
            cli_info(1, "sarbp: convert: warning: the inputs carry no autofocus data; "
                        "--autofocus changes nothing");
        sarbp_reader_set_autofocus(rd, 1);
    }
    if (st == SARBP_OK) st = copy_all(rd, out);
    if (st == SARBP_OK) {
        m = sarbp_reader_meta(rd);
        cli_info(2, "sarbp: convert: wrote %zu pulses of %zu samples to '%s'", m->npulses,
                 m->nsamples, out);
    }
    sarbp_reader_free(rd);
    return st == SARBP_OK ? CLI_OK : cli_fail_status("convert", st);
}
