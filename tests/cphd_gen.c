/* cphd_gen.c - the tests' CPHD writer (cphd_gen.h). */
#include "cphd_gen.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"




static void put_be(unsigned char *p, const void *v, size_t n)
{
    const unsigned char *b = v;
    for (size_t i = 0; i < n; i++) p[i] = b[n - 1 - i]; /* little-endian host */
}

static void put_f64(unsigned char *p, double v) { put_be(p, &v, 8); }

static char *replace(const char *s, const char *from, const char *to)
{
    const char *hit = strstr(s, from);
    assert_non_null(hit);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    assert_non_null(r);
    snprintf(r, n, "%.*s%s%s", (int)(hit - s), s, to, hit + strlen(from));
    return r;
}

/* The integer samples of the CI formats: q = round(v / scale), scale chosen
 * so the largest component of the vector v[2 n] is the format's largest
 * integer; v is replaced by q * scale (what a reader gives back). */
static double quantise(double *v, size_t n, int maxint, int *q)
{
    double m = 0;
    for (size_t j = 0; j < 2 * n; j++) m = fmax(m, fabs(v[j]));
    const double scale = m > 0 ? m / maxint : 1;
    for (size_t j = 0; j < 2 * n; j++) {
        q[j] = (int)lround(v[j] / scale);
        v[j] = (double)q[j] * scale;
    }
    return scale;
}

/* sum_j in[j] exp(j 2 pi (c0 + j step)) over in[2 n] (c0, step in cycles):
 * the phasor turns by a rotation each term and is renewed from cos and sin
 * every 64 terms. */
static void phasor_sum(const double *in, size_t n, double c0, double step, double out[2])
{
    double re = 0, im = 0, cr = 1, ci = 0;
    const double sr = cos(2 * M_PI * fmod(step, 1.0)), si = sin(2 * M_PI * fmod(step, 1.0));
    for (size_t j = 0; j < n; j++) {
        if (j % 64 == 0) {
            const double ph = 2 * M_PI * fmod(c0 + (double)j * step, 1.0);
            cr = cos(ph);
            ci = sin(ph);
        }
        re += in[2 * j] * cr - in[2 * j + 1] * ci;
        im += in[2 * j] * ci + in[2 * j + 1] * cr;
        const double t = cr * sr - ci * si;
        ci = cr * si + ci * sr;
        cr = t;
    }
    out[0] = re;
    out[1] = im;
}

/* The TOA vector s[2 n] of pulse i's FX samples x[2 k] by the CPHD
 * standard's convention (SGN -1; the phase of a target's peak is
 * SGN fx_C dTOA): the transform over the offset g_k = f_k - fx_C from the
 * vector's centre fx_C = (FX1 + FX2) / 2, FX1 = f0 and FX2 = f0 + (k - 1) df
 * as the PVPs say,
 *     s_m = sum_k x_k exp(+j 2 pi g_k tau_m),  tau_m = sc0 + m scss;
 * and back, x_k = (1/n) sum_m s_m exp(-j 2 pi g_k tau_m), exact as
 * n scss df = 1. Direct sums in double, no FFT: the reader's FFT is checked
 * against them. */
static double toa_fxc(const sarbp_phd *p, size_t i)
{
    return p->f0[i] + 0.5 * (double)(p->nsamples - 1) * p->df[i];
}

static void toa_of_fx(const sarbp_phd *p, size_t i, size_t n, double sc0, double scss,
                      const double *x, double *s)
{
    const double g0 = p->f0[i] - toa_fxc(p, i);
    for (size_t m = 0; m < n; m++) {
        const double tau = sc0 + (double)m * scss;
        phasor_sum(x, p->nsamples, g0 * tau, p->df[i] * tau, s + 2 * m);
    }
}

static void fx_of_toa(const sarbp_phd *p, size_t i, size_t n, double sc0, double scss,
                      const double *s, double *x)
{
    for (size_t k = 0; k < p->nsamples; k++) {
        const double g = p->f0[i] + (double)k * p->df[i] - toa_fxc(p, i);
        phasor_sum(s, n, -g * sc0, -g * scss, x + 2 * k);
        x[2 * k] /= (double)n;
        x[2 * k + 1] /= (double)n;
    }
}

#define NPVP 28 /* words: the 27 required parameters plus AmpSF */

void tu_write_cphd(const char *path, sarbp_phd *p, const sarbp_scene_ref *r, struct cphd_gen *g)
{
    const size_t np = p->npulses, k = p->nsamples;
    const int ci = strcmp(g->fmt, "CF8") != 0;
    const size_t bps = !strcmp(g->fmt, "CF8") ? 8 : !strcmp(g->fmt, "CI4") ? 4 : 2;
    const int nch = g->nchannels ? g->nchannels : 1;
    const size_t ns = g->toa_samples ? g->toa_samples : k; /* samples a vector in the file */
    const size_t chan_sig = np * ns * bps, chan_pvp = np * NPVP * 8;
    assert_true(ns >= k);

    char chans[1024] = "", params[1024] = "";
    for (int c = 0; c < nch; c++) {
        size_t l = strlen(chans);
        snprintf(chans + l, sizeof chans - l,
                 "<Channel><Identifier>CH%d</Identifier><NumVectors>%zu</NumVectors>"
                 "<NumSamples>%zu</NumSamples><SignalArrayByteOffset>%zu</SignalArrayByteOffset>"
                 "<PVPArrayByteOffset>%zu</PVPArrayByteOffset></Channel>\n",
                 c + 1, np, ns, c * chan_sig, c * chan_pvp);
        l = strlen(params);
        snprintf(params + l, sizeof params - l,
                 "<Parameters><Identifier>CH%d</Identifier><RefVectorIndex>0</RefVectorIndex>"
                 "<FXFixed>true</FXFixed><TOAFixed>true</TOAFixed><SRPFixed>true</SRPFixed>"
                 "<Polarization><TxPol>%s</TxPol><RcvPol>V</RcvPol></Polarization>"
                 "<FxC>%.17g</FxC><FxBW>%.17g</FxBW></Parameters>\n",
                 c + 1, c ? "H" : "V", p->f0[0] + 0.5 * (double)(k - 1) * p->df[0],
                 (double)(k - 1) * p->df[0]);
    }
    static const char *const names[] = {"TxTime", "TxPos", "TxVel", "RcvTime", "RcvPos",
                                        "RcvVel", "SRPPos", "aFDOP", "aFRR1", "aFRR2", "FX1",
                                        "FX2", "TOA1", "TOA2", "TDTropoSRP", "SC0", "SCSS",
                                        "AmpSF"};
    static const int words[] = {1, 3, 3, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    char pvp[4096] = "<PVP>\n";
    int off[18], o = 0;
    for (int i = 0; i < 18; i++) {
        off[i] = o;
        size_t l = strlen(pvp);
        snprintf(pvp + l, sizeof pvp - l,
                 "<%s><Offset>%d</Offset><Size>%d</Size><Format>%s</Format></%s>\n", names[i], o,
                 words[i], words[i] == 1 ? "F8" : "X=F8;Y=F8;Z=F8;", names[i]);
        o += words[i];
    }
    assert_int_equal(o, NPVP);
    strcat(pvp, "</PVP>\n");

    char *xml = malloc(16384);
    assert_non_null(xml);
    snprintf(xml, 16384,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<CPHD xmlns=\"http://api.nsgreg.nga.mil/schema/cphd/%s\">\n"
             "<CollectionID><CollectorName>SIMSAT</CollectorName><CoreName>TESTCORE</CoreName>"
             "<CollectType>MONOSTATIC</CollectType><RadarMode><ModeType>SPOTLIGHT</ModeType>"
             "</RadarMode><Classification>UNCLASSIFIED</Classification>"
             "<ReleaseInfo>UNRESTRICTED</ReleaseInfo></CollectionID>\n"
             "<Global><DomainType>%s</DomainType><SGN>%+d</SGN><Timeline>"
             "<CollectionStart>2026-11-23T10:00:00.000000Z</CollectionStart>"
             "<TxTime1>0</TxTime1><TxTime2>%.17g</TxTime2></Timeline>"
             "<FxBand><FxMin>%.17g</FxMin><FxMax>%.17g</FxMax></FxBand>"
             "<TOASwath><TOAMin>-1e-6</TOAMin><TOAMax>1e-6</TOAMax></TOASwath></Global>\n"
             "<SceneCoordinates><EarthModel>WGS_84</EarthModel><IARP><ECF><X>%.17g</X>"
             "<Y>%.17g</Y><Z>%.17g</Z></ECF><LLH><Lat>%.15g</Lat><Lon>%.15g</Lon>"
             "<HAE>%.6f</HAE></LLH></IARP></SceneCoordinates>\n"
             "<Data><SignalArrayFormat>%s</SignalArrayFormat><NumBytesPVP>%d</NumBytesPVP>"
             "<NumCPHDChannels>%d</NumCPHDChannels>\n%s</Data>\n"
             "<Channel><RefChId>CH1</RefChId><FXFixedCPHD>true</FXFixedCPHD>"
             "<TOAFixedCPHD>true</TOAFixedCPHD><SRPFixedCPHD>true</SRPFixedCPHD>\n%s</Channel>\n"
             "%s</CPHD>\n",
             g->version ? g->version : "1.0.1", g->toa_samples ? "TOA" : "FX",
             g->sgn ? g->sgn : -1, 0.001 * (double)np,
             p->f0[0], p->f0[0] + (double)(k - 1) * p->df[0], r->ecef[0], r->ecef[1],
             r->ecef[2], r->lat_deg, r->lon_deg, r->height_m, g->fmt, NPVP * 8, nch, chans,
             params, pvp);
    for (int i = 0; i < 4 && g->from[i]; i++) {
        char *x = replace(xml, g->from[i], g->to[i]);
        free(xml);
        xml = x;
    }
    const size_t xml_size = strlen(xml);
    const size_t xml_off = 1024;
    const size_t pvp_off = (xml_off + xml_size + 2 + 63) / 64 * 64;
    const size_t pvp_size = nch * chan_pvp;
    const size_t sig_off = (pvp_off + pvp_size + 63) / 64 * 64;
    const size_t sig_size = nch * chan_sig;
    char header[1024];
    snprintf(header, sizeof header,
             "CPHD/%s\nXML_BLOCK_SIZE := %zu\nXML_BLOCK_BYTE_OFFSET := %zu\n"
             "PVP_BLOCK_SIZE := %zu\nPVP_BLOCK_BYTE_OFFSET := %zu\nSIGNAL_BLOCK_SIZE := %zu\n"
             "SIGNAL_BLOCK_BYTE_OFFSET := %zu\nCLASSIFICATION := UNCLASSIFIED\n"
             "RELEASE_INFO := UNRESTRICTED\n\f\n",
             g->version ? g->version : "1.0.1", xml_size, xml_off, pvp_size, pvp_off, sig_size,
             sig_off);
    char *hdr = g->hfrom ? replace(header, g->hfrom, g->hto) : strdup(header);
    assert_true(strlen(hdr) < xml_off);

    const size_t total = sig_off + sig_size;
    unsigned char *file = calloc(1, total);
    assert_non_null(file);
    memcpy(file, hdr, strlen(hdr));
    memcpy(file + xml_off, xml, xml_size);
    memcpy(file + xml_off + xml_size, "\f\n", 2);
    const int sgn = g->sgn ? g->sgn : -1;
    int *q = malloc(2 * ns * sizeof *q);
    double *v = malloc(2 * ns * sizeof *v), *x = malloc(2 * k * sizeof *x);
    assert_true(q && v && x);
    for (size_t i = 0; i < np; i++) {
        /* the vector as stored, SGN -1 (before the channel's factor): the
         * FX samples, or the TOA vector of them (window [sc0, sc0 + 1/df),
         * 0.4 of it before the SRP's delay) */
        const double scss = 1 / ((double)ns * p->df[i]), sc0 = -0.4 * (double)ns * scss;
        for (size_t j = 0; j < k; j++) {
            x[2 * j] = p->data[i * k + j].re;
            x[2 * j + 1] = p->data[i * k + j].im;
        }
        if (g->toa_samples) toa_of_fx(p, i, ns, sc0, scss, x, v);
        else memcpy(v, x, 2 * k * sizeof *v);
        double amp = 1;
        if (ci) { /* p->data becomes what the reader should give back */
            amp = quantise(v, ns, bps == 4 ? 32767 : 127, q);
            if (g->toa_samples) fx_of_toa(p, i, ns, sc0, scss, v, x);
            else memcpy(x, v, 2 * k * sizeof *x);
            for (size_t j = 0; j < k; j++) {
                p->data[i * k + j].re = (float)x[2 * j];
                p->data[i * k + j].im = (float)x[2 * j + 1];
            }
        }
        for (int c = 0; c < nch; c++) {
            unsigned char *pv = file + pvp_off + c * chan_pvp + i * NPVP * 8;
            double apc[3], srp[3] = {r->ecef[0], r->ecef[1], r->ecef[2]};
            sarbp_scene_to_ecef(r, p->pos + 3 * i, apc);
            srp[2] += g->srp_step * (double)i;
            const double t = 0.001 * (double)i, dt = 2 * p->r0[i] / SARBP_C;
            put_f64(pv + 8 * off[0], t);
            put_f64(pv + 8 * off[3], t + dt);
            for (int d = 0; d < 3; d++) {
                put_f64(pv + 8 * (off[1] + d), apc[d]);
                put_f64(pv + 8 * (off[4] + d), apc[d]);
                put_f64(pv + 8 * (off[6] + d), srp[d]);
                put_f64(pv + 8 * (off[2] + d), 100.0 * d); /* velocities: unused */
                put_f64(pv + 8 * (off[5] + d), 100.0 * d);
            }
            put_f64(pv + 8 * off[10], p->f0[i]);
            put_f64(pv + 8 * off[11], p->f0[i] + (double)(k - 1) * p->df[i]);
            put_f64(pv + 8 * off[12], g->toa_samples ? sc0 : -1e-6);
            put_f64(pv + 8 * off[13], g->toa_samples ? sc0 + (double)(ns - 1) * scss : 1e-6);
            const double sc0_pvp = g->toa_samples ? sc0 : p->f0[i];
            put_f64(pv + 8 * off[15], (int)i + 1 == g->nan_vector ? NAN : sc0_pvp);
            put_f64(pv + 8 * off[16], g->toa_scss ? g->toa_scss : g->toa_samples ? scss : p->df[i]);
            put_f64(pv + 8 * off[17], ci ? amp * (c + 1) : 1.0);
            unsigned char *s = file + sig_off + c * chan_sig + i * ns * bps;
            for (size_t j = 0; j < ns; j++) { /* the channel's factor; SGN +1 conjugates */
                const float re = (float)v[2 * j] * (float)(c + 1);
                const float im = (float)v[2 * j + 1] * (float)(c + 1) * (float)-sgn;
                if (!ci) {
                    put_be(s + 8 * j, &re, 4);
                    put_be(s + 8 * j + 4, &im, 4);
                } else if (bps == 4) {
                    const int16_t a = (int16_t)q[2 * j], b = (int16_t)(q[2 * j + 1] * -sgn);
                    put_be(s + 4 * j, &a, 2);
                    put_be(s + 4 * j + 2, &b, 2);
                } else {
                    s[2 * j] = (unsigned char)(int8_t)q[2 * j];
                    s[2 * j + 1] = (unsigned char)(int8_t)(q[2 * j + 1] * -sgn);
                }
            }
        }
    }
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(file, 1, total, fp), total);
    assert_int_equal(fclose(fp), 0);
    g->pvp_off = pvp_off;
    g->pvp_size = pvp_size;
    g->sig_off = sig_off;
    g->sig_size = sig_size;
    g->file_size = total;
    free(q);
    free(v);
    free(x);
    free(file);
    free(hdr);
    free(xml);
}

