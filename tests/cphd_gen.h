/* cphd_gen.h - a small CPHD 1.0.1 / 1.1.0 writer for tests (not the
 * library's: the reader is tested against an independent writer).
 *
 * Writes a simulated phase history (FREQ domain, positions in the scene
 * frame of r) as a monostatic FX-domain CPHD: the ASCII header, the XML
 * block, big-endian PVP and signal blocks, 64-byte aligned like SARkit's
 * writer; one vector per pulse, TxPos = RcvPos = the antenna phase centre
 * in ECEF, SRPPos = r's reference point, TxTime = 1 ms x the pulse index,
 * RcvTime = TxTime + 2 r0 / c. For CI4 and CI2 the samples are quantised
 * with a per-vector AmpSF and p->data is replaced by what a reader gives
 * back. With toa_samples the file is TOA domain: each vector N = toa_samples
 * range-compressed samples, SCSS = 1 / (N df), SC0 = -0.4 N SCSS, the
 * direct (no FFT) sum s_n = sum_k X_k exp(+j 2 pi (f_k - fx_C) tau_n) of
 * the FX samples over their offset from the vector's centre
 * fx_C = (FX1 + FX2) / 2, as the CPHD standard defines TOA vectors (SGN -1;
 * a target at delay t0 peaks at tau = t0 with the phase SGN fx_C t0
 * cycles), FX1 and FX2 the FX band; CI samples are quantised in the TOA
 * domain and p->data becomes the FX samples of the dequantised vector (the
 * inverse sum).
 * Options inject the lies and variants the reader must refuse. */
#ifndef SARBP_CPHD_GEN_H
#define SARBP_CPHD_GEN_H

#include <stddef.h>

#include "sarbp/geo.h"
#include "sarbp/phd.h"

struct cphd_gen {
    const char *fmt;       /* CF8, CI4, CI2 */
    int sgn;               /* -1 or +1 */
    const char *version;   /* 1.0.1 or 1.1.0 */
    const char *from[4], *to[4]; /* text replacements in the XML */
    const char *hfrom, *hto;     /* one in the header */
    int nchannels;         /* 1 or 2 (the second holds the samples times 2) */
    int nan_vector;        /* > 0: vector nan_vector - 1 has a NaN SC0 */
    double srp_step;       /* m the SRP moves per vector */
    size_t toa_samples;    /* > 0: TOA domain, N samples a vector (N >= K) */
    double toa_scss;       /* != 0: SCSS written instead of the true one (a lie) */
    /* out: the layout */
    size_t pvp_off, pvp_size, sig_off, sig_size, file_size;
};

/* Writes path; fails the (cmocka) test on an I/O error. */
void tu_write_cphd(const char *path, sarbp_phd *p, const sarbp_scene_ref *r, struct cphd_gen *g);

#endif
