/* cli.h - shared helpers of the sarbp command-line tool.
 *
 * Exit codes: 0 success; 1 failure (bad file, bad data, failed threshold,
 * device error); 2 usage error (unknown option, bad number). Messages go
 * to stderr as "sarbp: <command>: <what failed>". */
#ifndef SARBP_CLI_H
#define SARBP_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "sarbp/sarbp.h"
#include "sarbp/bench.h" /* sarbp bench and the layout tests */

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* -q: 0 quiet, 1 normal (default), 2 verbose (-v), 3 (-vv) */
extern int cli_verbosity;

/* Prints "sarbp: CMD: message" and "Try 'sarbp CMD --help' for more information."
 * to stderr; returns CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints "sarbp: CMD: message" to stderr; returns CLI_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints "sarbp: CMD: <sarbp_error_detail()>" for a failed library call; returns CLI_FAIL. */
int cli_fail_status(const char *cmd, sarbp_status s);
/* Every message above and cli_info's lines go through sarbp_sanitize (the
 * whole formatted text): a path or a file's string cannot drive the
 * terminal. */
/* Informational line to stderr when verbosity >= level. */
void cli_info(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* getopt_long with sarbp's messages: opterr is off, and an unknown option,
 * a missing value or a value given to a flag prints one line "sarbp: CMD:
 * unknown option '--foo'" plus "Try 'sarbp CMD --help'" and returns
 * CLI_BAD_OPTION (the caller returns CLI_USAGE). -q and -v are handled here
 * for every command (cli_verbosity) and never returned: shortopts and
 * longopts must list them (CLI_COMMON_LONGOPTS). Returns the option, or -1
 * at the end of the options. */
#define CLI_BAD_OPTION (-2)
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);
#define CLI_COMMON_LONGOPTS                                                    \
    {"quiet", no_argument, NULL, 'q'}, {"verbose", no_argument, NULL, 'v'},    \
        {"help", no_argument, NULL, 'h'}

/* Checks that everything written to stdout reached it (fflush, ferror,
 * fclose). On failure prints "sarbp: CMD: cannot write to standard output:
 * ..." and returns CLI_FAIL when rc was CLI_OK; otherwise returns rc. Called
 * once by main after every command. */
int cli_close_stdout(const char *cmd, int rc);
/* fflush(stdout) for a command that wants its results out before a later
 * message on stderr; a failure is remembered for cli_close_stdout. */
void cli_flush_stdout(void);

/* Checked number parsing, the only way the CLI turns text into numbers:
 * the whole string must be one number (no leading space, no trailing text),
 * finite, within [lo, hi] (so every later conversion to an integer type is
 * in range). Return 0 on success, -1 otherwise, leaving *out unchanged. */
int cli_parse_double(const char *s, double lo, double hi, double *out);
int cli_parse_long(const char *s, long lo, long hi, long *out);
int cli_parse_int(const char *s, int lo, int hi, int *out);
int cli_parse_size(const char *s, size_t lo, size_t hi, size_t *out);
/* "A:B" whole numbers in [lo, hi] with A < B (--pulses I0:I1). */
int cli_parse_size_range(const char *s, size_t lo, size_t hi, size_t *a, size_t *b);
/* "A<sep>B[<sep>C...]" -> nmin to nmax finite numbers (returns the count or -1). */
int cli_parse_list(const char *s, char sep, double *vals, int nmin, int nmax);
/* The same for whole numbers in [lo, hi]. */
int cli_parse_int_list(const char *s, char sep, int lo, int hi, int *vals, int nmin, int nmax);
/* --device: "N" (one device, o->device), "N,M,..." (several, distinct, at
 * most SARBP_MAX_DEVICES) or "all" (every CUDA device found; none found:
 * device 0, so that the back end says it is missing). 0, or -1 with a
 * one-line reason in why[n]. */
int cli_parse_devices(const char *s, sarbp_bp_options *o, char *why, size_t n);
/* Prints (-v) how a form was cut up: per device its rows, bands, and
 * whether the range profiles stayed resident or were streamed; with several
 * devices their throughput. */
void cli_report_layout(const char *cmd, const sarbp_form_stats *st);
/* "NXxNY", each from 1 to max */
int cli_parse_grid(const char *s, size_t max, size_t *nx, size_t *ny);
/* "123", "4.5G", "512M", "64K" (bytes, binary units, optional B or iB),
 * from 1 byte to 2^62 bytes */
int cli_parse_bytes(const char *s, size_t *out);

/* a and b name the same file: the same path, or the same device and inode
 * (a hard link; a file reached through a link or another spelling). 0 when
 * they differ or either cannot be stat'ed. For refusing an output that is
 * one of the inputs. */
int cli_same_file(const char *a, const char *b);

/* s sanitised for printing (sarbp_sanitize): what the CLI prints of a
 * file's strings or a path in plain text goes through it. The result lives
 * in one of four slots reused in turn: valid until the fourth next call
 * (so one printf may take up to four). Not thread-safe (the CLI prints from
 * one thread). Never NULL. */
const char *cli_safe(const char *s);

/* JSON output: a string with quotes and escapes, every control character
 * (C0, DEL, C1) and U+2028/U+2029 as \u00XX / \u20XX, bytes that are not
 * UTF-8 as U+FFFD, so the output is always valid JSON in valid UTF-8; to f,
 * or to stdout (cli_json_str). A number with NaN as null and infinities as
 * the strings "inf" / "-inf" (JSON has neither). */
void cli_json_fstr(FILE *f, const char *s);
void cli_json_str(const char *s);
void cli_json_num(double v);

/* Progress on stderr (pulses done, rate, time left) at verbosity >= 1 (-q
 * silences it) on rank 0. When stderr is a terminal: one line rewritten in
 * place, throttled to ~4 Hz. Otherwise (pipes, log files, schedulers): a
 * plain line such as "sarbp: form: 45% (212 of 469 pulses), 1.20 Gbp/s,
 * about 40 s left" every 20 s, the first 20 s after the start (so shorter
 * runs print none); the environment variable SARBP_PROGRESS_INTERVAL
 * (seconds, 0.01 to 86400) sets another interval, e.g. for tests.
 * pairs_per_unit converts units (pulses) to pixel-pulse pairs. Returns NULL
 * when disabled (a NULL progress is a no-op for the library). */
sarbp_progress *cli_progress_start(const char *label, double pairs_per_unit);
void cli_progress_end(sarbp_progress *p);

/* MPI (cli_mpi.c). cli_mpi_begin initialises MPI when a launcher started
 * the process and, on ranks other than 0, holds stderr in memory; after the
 * command, cli_mpi_end meets the other ranks, has rank 0 print the messages
 * of the lowest rank that failed on its own, finalises MPI and returns the
 * exit code (failure on every rank when any failed). A command that stops
 * because another rank failed sets cli_mpi_peer_failed and prints nothing.
 * cli_mpi_rank > 0 silences cli_info and progress. cli_mpi_local_rank: this
 * rank's number on its node, from the launcher's environment or else MPI's
 * (sarbp_mpi_local_rank); -1 in one process. */
extern int cli_mpi_rank;
extern int cli_mpi_peer_failed;
int cli_mpi_begin(const char *cmd, int *argc, char ***argv);
int cli_mpi_end(const char *cmd, int rc);
int cli_mpi_local_rank(void);
/* Ranks on this node, found the same way (1 in one process). */
int cli_mpi_local_size(void);

/* Subcommands: argc/argv start at the subcommand's name. */
int cmd_form(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_batch(int argc, char **argv);

#endif
