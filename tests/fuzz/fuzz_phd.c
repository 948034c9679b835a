/* fuzz_phd.c - libFuzzer harness for the phase-history readers: the input
 * is one file given to sarbp_reader_open (format by content: HDF5, i.e.
 * sarbp-phd and Gotcha-style HDF5 / MATLAB v7.3, or MATLAB v5 through
 * matio, or NGA CPHD). Built three times, as fuzz_phd_h5, fuzz_phd_mat and
 * fuzz_phd_cphd (FUZZ_SUFFIX), for the three seed corpora. When the file opens, its metadata are touched,
 * every pulse is read (in blocks of at most 16 MiB; a reader that accepts
 * more pulses than the file can hold shows up as a timeout), then a
 * selection and, when the file carries them, the autofocus corrections. */
#include "fuzz_common.h"

#include "sarbp/phd_io.h"

#ifndef FUZZ_SUFFIX
#define FUZZ_SUFFIX ".h5"
#endif

#define FUZZ_BLOCK_BYTES ((size_t)16 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init(FUZZ_SUFFIX);
    return 0;
}

/* Reads every pulse of rd; stops at the first error. */
static void read_all(sarbp_reader *rd)
{
    const sarbp_phd *m = sarbp_reader_meta(rd);
    if (!m || m->nsamples == 0 || m->npulses == 0) return;
    const size_t row = m->nsamples * sizeof(sarbp_c32);
    if (m->nsamples > FUZZ_BLOCK_BYTES / sizeof(sarbp_c32)) return; /* one pulse > 16 MiB */
    size_t block = FUZZ_BLOCK_BYTES / row;
    if (block > m->npulses) block = m->npulses;
    sarbp_c32 *buf = malloc(block * row);
    if (!buf) return;
    volatile double sink = 0; /* the metadata must be readable, all of it */
    for (size_t i = 0; i < m->npulses; i++) {
        sink += m->pos[3 * i] + m->pos[3 * i + 1] + m->pos[3 * i + 2] + m->r0[i];
        if (m->f0) sink += m->f0[i] + m->df[i];
    }
    for (size_t p0 = 0; p0 < m->npulses; p0 += block) {
        size_t np = m->npulses - p0 < block ? m->npulses - p0 : block;
        if (sarbp_reader_read(rd, p0, np, buf) != SARBP_OK) break;
        sink += buf[0].re + buf[np * m->nsamples - 1].im;
    }
    (void)sink;
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in[1] = {fuzz_write_input(data, size)};
    sarbp_reader *rd = NULL;
    if (sarbp_reader_open(in, 1, &rd) == SARBP_OK) {
        read_all(rd);
        const sarbp_phd *m = sarbp_reader_meta(rd);
        const size_t n = m ? m->npulses : 0;
        if (n > 1 && sarbp_reader_select(rd, n / 2, n) == SARBP_OK) read_all(rd);
        sarbp_reader_free(rd);
        rd = NULL;
        /* again with the autofocus corrections applied (a no-op without them) */
        if (sarbp_reader_open(in, 1, &rd) == SARBP_OK) {
            sarbp_reader_set_autofocus(rd, 1);
            read_all(rd);
        }
    }
    sarbp_reader_free(rd);
    sarbp_error_clear();
    fuzz_check_closed();
    return 0;
}
