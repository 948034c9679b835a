/* fuzz_common.h - what every sarbp libFuzzer harness shares: the input
 * bytes written to a file (the readers take paths) in a private
 * directory of this process, removed at exit, and the switch that turns
 * off the readers' forked-child probe of HDF5 opens, so that a crash in
 * a parser happens in the fuzzed process where libFuzzer can see it.
 *
 * Not a library: each harness includes it once. */
#ifndef SARBP_FUZZ_COMMON_H
#define SARBP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sarbp/sarbp.h"

#ifdef FUZZ_HDF5
#include <hdf5.h>
#endif

/* The environment variable that turns the readers' probe off (set to
 * "1" once, before the first input). Keep it in step with src/. */
#ifndef FUZZ_NO_PROBE_ENV
#define FUZZ_NO_PROBE_ENV "SARBP_NO_PROBE"
#endif

static char fuzz_dir_[512];
static char fuzz_path_[600];

static void fuzz_cleanup_(void)
{
    if (fuzz_path_[0]) unlink(fuzz_path_);
    if (fuzz_dir_[0]) rmdir(fuzz_dir_);
}

/* Called from LLVMFuzzerInitialize. suffix names the input file (".h5",
 * ".mat", ".npy"): the readers detect the format by content, the suffix
 * only keeps directory expansion and messages honest. /dev/shm keeps the
 * per-input write off the disk; $TMPDIR (or /tmp) when it is absent. */
static void fuzz_init(const char *suffix)
{
    setenv(FUZZ_NO_PROBE_ENV, "1", 1);
#ifdef FUZZ_HDF5
    /* HDF5 keeps freed blocks on free lists until H5close; libFuzzer's
     * in-process leak check would take them for leaks after every input.
     * With no free lists, what it reports is memory that is really held. */
    H5set_free_list_limits(0, 0, 0, 0, 0, 0);
#endif
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    snprintf(fuzz_dir_, sizeof fuzz_dir_, "%s/sarbp-fuzz-XXXXXX", base);
    if (!mkdtemp(fuzz_dir_)) {
        perror("sarbp fuzz: mkdtemp");
        abort();
    }
    snprintf(fuzz_path_, sizeof fuzz_path_, "%s/input%s", fuzz_dir_, suffix);
    atexit(fuzz_cleanup_);
}

/* After the reader has returned and been freed, no HDF5 object may be
 * open: one left open (an error path that skips a close) is a leak of
 * sarbp's, which LeakSanitizer would otherwise blame on HDF5 or miss (HDF5
 * closes everything at exit). Aborts, so libFuzzer records the input. */
static void fuzz_check_closed(void)
{
#ifdef FUZZ_HDF5
    const ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (n > 0) {
        fprintf(stderr, "sarbp fuzz: %zd HDF5 object(s) left open after the reader returned\n", n);
        abort();
    }
#endif
}

/* Writes the input to this process's file and returns its path. */
static const char *fuzz_write_input(const uint8_t *data, size_t size)
{
    FILE *f = fopen(fuzz_path_, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
        perror("sarbp fuzz: cannot write the input file");
        abort();
    }
    return fuzz_path_;
}

#endif
