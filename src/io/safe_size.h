/* safe_size.h - sizes that a file declares, checked before they are used.
 *
 * Every count read from a file (dataset dimensions, MATLAB lengths,
 * attribute values) is hostile until checked: multiply it only through
 * size_mul, and describe it to people with size_human. Not installed. */
#ifndef SARBP_SAFE_SIZE_H
#define SARBP_SAFE_SIZE_H

#include <stddef.h>
#include <stdio.h>

/* *out = a * b; returns 1, or 0 (and *out = SIZE_MAX) when it overflows. */
static inline int size_mul(size_t a, size_t b, size_t *out)
{
    if (__builtin_mul_overflow(a, b, out)) {
        *out = (size_t)-1;
        return 0;
    }
    return 1;
}

/* *out = a * b * c, likewise. */
static inline int size_mul3(size_t a, size_t b, size_t c, size_t *out)
{
    size_t ab;
    return size_mul(a, b, &ab) && size_mul(ab, c, out);
}

/* "2.7 KB", "4 TB", "512 bytes" (decimal units) into buf[n]; returns buf. */
static inline const char *size_human(double bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    size_t u = 0;
    while (bytes >= 1000 && u + 1 < sizeof unit / sizeof unit[0]) {
        bytes /= 1000;
        u++;
    }
    if (u == 0) snprintf(buf, n, "%.0f %s", bytes, unit[0]);
    else snprintf(buf, n, "%.*f %s", bytes < 10 ? 1 : 0, bytes, unit[u]);
    return buf;
}

#endif
