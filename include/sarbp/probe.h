/* sarbp/probe.h - input files opened first in a disposable process.
 *
 * Some malformed HDF5 and MATLAB files crash or hang inside HDF5 1.10 or
 * matio themselves, where no check of sarbp's can reach (docs/formats.md lists the
 * known ones). So before a reader touches an HDF5 or MATLAB input's
 * metadata, it repeats the same metadata reads in a forked child (no exec)
 * under a memory limit and a time limit (and with core dumps off). A child that dies on a signal, runs
 * out of time or address space stands for a malformed file: the reader
 * returns SARBP_ERR_FORMAT naming the file, and the caller never crashes. A
 * child that finds an ordinary error hands its message back, and the reader
 * returns it without touching the file itself. Sample and pixel data are
 * read in the caller's process only, after the probe; their sizes were
 * checked by the probe against the file.
 *
 * On by default. Fuzzing harnesses turn it off (to see crashes where they
 * happen) with sarbp_probe_enable(0) or the environment variable
 * SARBP_NO_PROBE=1. SARBP_PROBE_TIMEOUT=S changes the time limit (seconds,
 * default 3: a bad input must end within 5 s; a good file's metadata take
 * milliseconds). */
#ifndef SARBP_PROBE_H
#define SARBP_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_PROBE_TIMEOUT_S 3                       /* default time limit */
/* Address space the child may add to the parent's: this plus eight times
 * the input's length. */
#define SARBP_PROBE_MEMORY ((unsigned long long)384 << 20)

/* Turns the probe on (the default) or off for the whole process. Not
 * thread-safe: call before reading inputs. */
void sarbp_probe_enable(int on);

/* 1 when the probe runs: enabled and SARBP_NO_PROBE unset (or "0"). */
int sarbp_probe_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
