/* sarbp/status.h - errors as values.
 *
 * Every library call that can fail returns a sarbp_status. The failing call
 * also records a human-readable detail (thread-local) that the CLI prints,
 * e.g. "cannot open 'x.h5': No such file or directory". The library never
 * prints and never exits. */
#ifndef SARBP_STATUS_H
#define SARBP_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Numbers are pinned: scripts and tests may rely on them. */
typedef enum {
    SARBP_OK = 0,
    SARBP_ERR_NOMEM = 1,       /* allocation failed */
    SARBP_ERR_IO = 2,          /* cannot open, read, write or rename a file */
    SARBP_ERR_FORMAT = 3,      /* file readable but not in a layout sarbp knows */
    SARBP_ERR_INVALID = 4,     /* invalid argument or data (NaN, bad shape, ...) */
    SARBP_ERR_UNSUPPORTED = 5, /* valid request this build cannot do */
    SARBP_ERR_CUDA = 6,        /* CUDA runtime call failed */
    SARBP_ERR_CUFFT = 7,       /* cuFFT call failed */
    SARBP_ERR_FFTW = 8,        /* FFTW plan creation failed */
    SARBP_ERR_HDF5 = 9,        /* HDF5 library call failed */
    SARBP_ERR_PNG = 10,        /* libpng failed */
    SARBP_ERR_NODEVICE = 11,   /* no usable GPU */
    SARBP_ERR_MISMATCH = 12,   /* inputs disagree (grids, shapes) */
    SARBP_ERR_INTERNAL = 13    /* a bug: an invariant did not hold */
} sarbp_status;

/* Short fixed description of a status ("out of memory", ...). Never NULL. */
const char *sarbp_strerror(sarbp_status s);

/* Records a printf-style detail for the calling thread and returns s, so a
 * failing path reads: return sarbp_error(SARBP_ERR_IO, "cannot open '%s': %s", p, strerror(errno));
 * The arguments may include sarbp_error_detail() itself (re-wrapping the
 * current detail: "'%s': %s", path, sarbp_error_detail()). The detail is
 * kept sanitised (sarbp_sanitize): a file's strings in it cannot drive a
 * terminal. At most 1023 bytes are kept. */
sarbp_status sarbp_error(sarbp_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The calling thread's last recorded detail, or sarbp_strerror of the last
 * status when none was given. Valid until the next sarbp_error on this thread. */
const char *sarbp_error_detail(void);
void sarbp_error_clear(void);

/* Untrusted text (a file's strings, paths) made safe to print: control
 * characters (C0, DEL, C1), U+2028/U+2029, the bidirectional overrides
 * (U+202A-U+202E, U+2066-U+2069) and bytes that are not UTF-8 become \xHH,
 * one escape per byte; everything else is copied. The backslash is not
 * escaped, so sanitising a sanitised text changes nothing (it is for people,
 * not to be parsed back). Writes at most n bytes to out, NUL included,
 * cutting only between whole characters or escapes; returns the length the
 * whole result has (like snprintf: >= n means it was cut). s NULL reads as
 * "". Thread-safe. */
size_t sarbp_sanitize(char *out, size_t n, const char *s);

/* Length (1 to 4) of the well-formed UTF-8 character at s (shortest form, no
 * surrogates, at most U+10FFFF; a NUL is a character of length 1), or 0 when
 * the bytes there are not one. *cp (may be NULL) gets its code point. */
int sarbp_utf8_decode(const char *s, unsigned *cp);

/* Propagate a failing status: SARBP_TRY(sarbp_foo(...)); */
#define SARBP_TRY(expr)                                                        \
    do {                                                                       \
        sarbp_status sarbp_try_s_ = (expr);                                    \
        if (sarbp_try_s_ != SARBP_OK) return sarbp_try_s_;                     \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
