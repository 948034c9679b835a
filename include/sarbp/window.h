/* sarbp/window.h - tapering windows for range and azimuth. */
#ifndef SARBP_WINDOW_H
#define SARBP_WINDOW_H

#include <stddef.h>
#include "sarbp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SARBP_WIN_NONE = 0,
    SARBP_WIN_HAMMING = 1,
    SARBP_WIN_HANN = 2,
    SARBP_WIN_TAYLOR = 3
} sarbp_window_kind;

typedef struct {
    sarbp_window_kind kind;
    int nbar;      /* TAYLOR: number of nearly constant sidelobes (default 4) */
    double sll_db; /* TAYLOR: sidelobe level in dB, negative (default -35) */
} sarbp_window;

/* Parses "none", "hamming", "hann", "taylor", "taylor:NBAR:SLL" (SLL in dB,
 * sign optional, e.g. taylor:5:35 or taylor:5:-35). SARBP_ERR_INVALID otherwise. */
sarbp_status sarbp_window_parse(const char *text, sarbp_window *w);

/* Canonical text of w ("taylor:4:-35"), for attributes; buf of n bytes. */
void sarbp_window_format(const sarbp_window *w, char *buf, size_t n);

/* Fills out[0..n-1] with the symmetric window (all ones for NONE; n == 1
 * gives 1). Peak normalised to 1. */
sarbp_status sarbp_window_fill(const sarbp_window *w, size_t n, double *out);

#ifdef __cplusplus
}
#endif
#endif
