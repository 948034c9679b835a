/* fuzz_cli_numbers.c - libFuzzer harness for the command line's strict
 * number parsers (src/cli/cli_util.c, compiled into this harness): the
 * input, cut at its first NUL, is given to every parser, and what a parser
 * accepts must keep its promise (finite, within the range asked for, the
 * count of a list within its bounds). A broken promise aborts, which
 * libFuzzer reports like a crash. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROMISE(cond)                                                            \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz_cli_numbers: broken promise: %s\n", #cond);    \
            abort();                                                             \
        }                                                                        \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    double d;
    if (cli_parse_double(s, -1e6, 1e6, &d) == 0) PROMISE(isfinite(d) && d >= -1e6 && d <= 1e6);
    if (cli_parse_double(s, 0, INFINITY, &d) == 0) PROMISE(isfinite(d) && d >= 0);
    long l;
    if (cli_parse_long(s, -5, 1L << 40, &l) == 0) PROMISE(l >= -5 && l <= 1L << 40);
    size_t z;
    if (cli_parse_size(s, 1, (size_t)1 << 31, &z) == 0) PROMISE(z >= 1 && z <= (size_t)1 << 31);
    double v[4];
    int n = cli_parse_list(s, ':', v, 2, 2);
    if (n >= 0) PROMISE(n == 2 && isfinite(v[0]) && isfinite(v[1]));
    n = cli_parse_list(s, ',', v, 1, 3);
    if (n >= 0) {
        PROMISE(n >= 1 && n <= 3);
        for (int i = 0; i < n; i++) PROMISE(isfinite(v[i]));
    }
    int i;
    if (cli_parse_int(s, -3, 1 << 20, &i) == 0) PROMISE(i >= -3 && i <= 1 << 20);
    size_t a, b;
    if (cli_parse_size_range(s, 0, (size_t)1 << 40, &a, &b) == 0)
        PROMISE(a < b && b <= (size_t)1 << 40);
    int iv[4];
    n = cli_parse_int_list(s, ',', 1, 64, iv, 1, 4);
    if (n >= 0) {
        PROMISE(n >= 1 && n <= 4);
        for (int k = 0; k < n; k++) PROMISE(iv[k] >= 1 && iv[k] <= 64);
    }
    size_t nx, ny;
    if (cli_parse_grid(s, (size_t)1 << 31, &nx, &ny) == 0)
        PROMISE(nx >= 1 && ny >= 1 && nx <= (size_t)1 << 31 && ny <= (size_t)1 << 31);
    size_t bytes;
    if (cli_parse_bytes(s, &bytes) == 0) PROMISE(bytes >= 1 && bytes <= (size_t)1 << 62);

    free(s);
    return 0;
}
