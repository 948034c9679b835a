/* probe.h - running a reader's metadata walk in a forked child (see
 * sarbp/probe.h for the why). Not installed. */
#ifndef SARBP_PROBE_INTERNAL_H
#define SARBP_PROBE_INTERNAL_H

#include "sarbp/probe.h"
#include "sarbp/status.h"

/* Runs walk(path, arg) in a forked child when the probe is enabled
 * (otherwise returns SARBP_OK at once). Returns SARBP_OK when the walk
 * succeeded: the caller then does the real work. Returns the walk's own
 * status and detail when it failed. Returns SARBP_ERR_FORMAT, naming path
 * and lib ("HDF5", "matio"), when the child died on a signal or exceeded
 * the time limit; SARBP_ERR_INTERNAL when no child could be started. walk
 * must not write to files or to shared state the caller relies on: only its
 * status and detail come back. */
sarbp_status probe_run(const char *path, const char *lib,
                       sarbp_status (*walk)(const char *path, void *arg), void *arg);

#endif
