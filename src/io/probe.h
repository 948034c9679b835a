/* probe.h - running a reader's metadata walk in a forked child (see
 * sarbp/probe.h for the why). Not installed. */
#ifndef SARBP_PROBE_INTERNAL_H
#define SARBP_PROBE_INTERNAL_H

#include <stddef.h>

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

/* probe_run, and what the walk handed to probe_reply comes back: *reply
 * (malloc'd, the caller frees) and *reply_len, or NULL and 0 when the walk
 * handed nothing or the probe is off (the caller then reads the file
 * itself). A reply longer than max_reply is an error (SARBP_ERR_FORMAT);
 * so is one that arrives short. This is how the parent avoids opening a
 * hostile file at all: the child reads it whole and sends the result. */
sarbp_status probe_run_reply(const char *path, const char *lib,
                             sarbp_status (*walk)(const char *path, void *arg), void *arg,
                             size_t max_reply, void **reply, size_t *reply_len);

/* Inside a walk only: data (len bytes, valid until the walk returns) is to
 * be sent back to probe_run_reply's caller after a successful walk. */
void probe_reply(const void *data, size_t len);

#endif
