/* main.c - the sarbp command: a table of subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int mpi; /* shares its work across MPI ranks (cli_mpi.c) */
};

static const struct subcommand commands[] = {
    {"form", cmd_form, "form an image from phase histories", 1},
    {"batch", cmd_batch, "form one image per azimuth window, with a summary", 1},
    {"simulate", cmd_simulate, "simulate point-target phase histories", 0},
    {"info", cmd_info, "describe phase-history files", 0},
    {"convert", cmd_convert, "convert phase histories to sarbp's HDF5 layout", 0},
    {"compare", cmd_compare, "compare two complex images (SER, SSIM, ...)", 0},
    {"metrics", cmd_metrics, "point-target and whole-image quality metrics", 0},
    {"bench", cmd_bench, "measure backprojection throughput and accuracy", 0},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: sarbp <command> [options]\n\n"
               "sarbp forms synthetic aperture radar images by backprojection.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'sarbp <command> --help' describes a command's options.\n"
               "\nexit codes: 0 success, 1 failure (bad input, failed check, device\n"
               "error), 2 usage error.\n");
}

/* Every path out checks that stdout was written (cli_close_stdout): a
 * result lost to a full disk or a closed pipe is a failure, not success. */
int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return cli_close_stdout("help", CLI_OK);
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
#ifdef SARBP_HAVE_CUDA
        printf("sarbp %s (back ends: cpu, cuda)\n", SARBP_VERSION_STRING);
#else
        printf("sarbp %s (back ends: cpu; built without CUDA)\n", SARBP_VERSION_STRING);
#endif
        return cli_close_stdout("version", CLI_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const struct subcommand *c = &commands[i];
        if (strcmp(argv[1], c->name)) continue;
        /* A file-size limit (ulimit -f, as schedulers set) would end the
         * process by SIGXFSZ at the write that crosses it. Ignored, the
         * write fails with EFBIG instead, and the writer says so, naming
         * the output, and removes its temporary: exit 1, one message.
         * batch keeps the default, so that a SIGXFSZ sent to it is
         * forwarded to its windows like SIGTERM (its own writes are small);
         * its windows are sarbp forms that ignore it again here. */
        struct sigaction xfsz;
        if (strcmp(c->name, "batch") && sigaction(SIGXFSZ, NULL, &xfsz) == 0 &&
            !(xfsz.sa_flags & SA_SIGINFO) && xfsz.sa_handler == SIG_DFL)
            signal(SIGXFSZ, SIG_IGN);
        if (!c->mpi) {
            const int rc = c->run(argc - 1, argv + 1);
            return cli_close_stdout(c->name, rc);
        }
        int rc = cli_mpi_begin(c->name, &argc, &argv);
        if (rc == CLI_OK) rc = c->run(argc - 1, argv + 1);
        return cli_close_stdout(c->name, cli_mpi_end(c->name, rc));
    }
    fprintf(stderr, "sarbp: '%s' is not a sarbp command\nTry 'sarbp --help' for the list.\n",
            argv[1]);
    return CLI_USAGE;
}
