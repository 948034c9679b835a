/* status.c - status names and the thread-local error detail (kept sanitised:
 * sanitize.c). */
#include "sarbp/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char detail[1024];
static _Thread_local sarbp_status last = SARBP_OK;

const char *sarbp_strerror(sarbp_status s)
{
    switch (s) {
    case SARBP_OK: return "success";
    case SARBP_ERR_NOMEM: return "out of memory";
    case SARBP_ERR_IO: return "input/output error";
    case SARBP_ERR_FORMAT: return "unrecognised file format";
    case SARBP_ERR_INVALID: return "invalid argument or data";
    case SARBP_ERR_UNSUPPORTED: return "not supported by this build";
    case SARBP_ERR_CUDA: return "CUDA error";
    case SARBP_ERR_CUFFT: return "cuFFT error";
    case SARBP_ERR_FFTW: return "FFTW error";
    case SARBP_ERR_HDF5: return "HDF5 error";
    case SARBP_ERR_PNG: return "PNG error";
    case SARBP_ERR_NODEVICE: return "no usable GPU";
    case SARBP_ERR_MISMATCH: return "inputs do not match";
    case SARBP_ERR_INTERNAL: return "internal error";
    }
    return "unknown error";
}

sarbp_status sarbp_error(sarbp_status s, const char *fmt, ...)
{
    /* formatted apart first: an argument may be detail itself (a caller
     * re-wrapping the current detail), and vsnprintf must not write over
     * what it reads */
    char text[sizeof detail];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sarbp_sanitize(detail, sizeof detail, text);
    last = s;
    return s;
}

const char *sarbp_error_detail(void)
{
    if (detail[0]) return detail;
    return sarbp_strerror(last);
}

void sarbp_error_clear(void)
{
    detail[0] = '\0';
    last = SARBP_OK;
}
