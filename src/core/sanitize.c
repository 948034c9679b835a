/* sanitize.c - untrusted text made safe to show: the one place that decides
 * which bytes of a file's strings (and of paths) reach a terminal as they
 * are.
 *
 * Control characters (C0, DEL, C1), the Unicode line separators and the
 * bidirectional overrides, and bytes that are not UTF-8 are written as
 * \xHH, one escape per byte of the file. Everything else, printable UTF-8
 * included, is copied. It does not quote and does not escape the backslash:
 * the result is for people, not for parsing back, and escaping an escaped
 * text changes nothing, so a detail that is wrapped into another message
 * and printed is not mangled. */
#include "sarbp/status.h"

#include <string.h>

int sarbp_utf8_decode(const char *s, unsigned *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned c = p[0];
    int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
          : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0) return 0;
    if (n > 1) c &= 0x7fu >> n;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
        c = c << 6 | (p[i] & 0x3f);
    }
    if (n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) return 0;
    if (n == 4 && (c < 0x10000 || c > 0x10ffff)) return 0;
    if (cp) *cp = c;
    return n;
}

/* Characters that can drive a terminal or make a line read as another. */
static int unsafe(unsigned cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t sarbp_sanitize(char *out, size_t n, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = 0;  /* the length of the whole result */
    size_t kept = 0; /* the bytes of it in out */
    if (!s) s = "";
    while (*s) {
        unsigned cp = 0;
        const int k = sarbp_utf8_decode(s, &cp);
        const int bytes = k ? k : 1;
        char piece[16];
        size_t m = 0;
        if (k == 0 || unsafe(cp)) {
            for (int i = 0; i < bytes; i++) {
                const unsigned char b = (unsigned char)s[i];
                piece[m++] = '\\';
                piece[m++] = 'x';
                piece[m++] = hex[b >> 4];
                piece[m++] = hex[b & 15];
            }
        } else {
            memcpy(piece, s, (size_t)bytes);
            m = (size_t)bytes;
        }
        /* whole pieces only, and none after the first that did not fit: a
         * cut never splits a character or an escape */
        if (kept == len && len + m < n) {
            memcpy(out + len, piece, m);
            kept += m;
        }
        len += m;
        s += bytes;
    }
    if (n > 0) out[kept] = '\0';
    return len;
}
