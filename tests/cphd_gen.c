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
 * so the largest component is the format's largest integer; p->data is
 * replaced by q * scale (what the reader gives back), scale per pulse. */
static double quantise(sarbp_phd *p, size_t i, int maxint, int *q)
{
    const size_t k = p->nsamples;
    double m = 0;
    for (size_t j = 0; j < k; j++) {
        m = fmax(m, fabs(p->data[i * k + j].re));
        m = fmax(m, fabs(p->data[i * k + j].im));
    }
    const double scale = m > 0 ? m / maxint : 1;
    for (size_t j = 0; j < k; j++) {
        q[2 * j] = (int)lround(p->data[i * k + j].re / scale);
        q[2 * j + 1] = (int)lround(p->data[i * k + j].im / scale);
        p->data[i * k + j].re = (float)((double)q[2 * j] * scale);
        p->data[i * k + j].im = (float)((double)q[2 * j + 1] * scale);
    }
    return scale;
}

#define NPVP 28 /* words: the 27 required parameters plus AmpSF */

void tu_write_cphd(const char *path, sarbp_phd *p, const sarbp_scene_ref *r, struct cphd_gen *g)
{
    const size_t np = p->npulses, k = p->nsamples;
    const int ci = strcmp(g->fmt, "CF8") != 0;
    const size_t bps = !strcmp(g->fmt, "CF8") ? 8 : !strcmp(g->fmt, "CI4") ? 4 : 2;
    const int nch = g->nchannels ? g->nchannels : 1;
    const size_t chan_sig = np * k * bps, chan_pvp = np * NPVP * 8;

    char chans[1024] = "", params[1024] = "";
    for (int c = 0; c < nch; c++) {
        size_t l = strlen(chans);
        snprintf(chans + l, sizeof chans - l,
                 "<Channel><Identifier>CH%d</Identifier><NumVectors>%zu</NumVectors>"
                 "<NumSamples>%zu</NumSamples><SignalArrayByteOffset>%zu</SignalArrayByteOffset>"
                 "<PVPArrayByteOffset>%zu</PVPArrayByteOffset></Channel>\n",
                 c + 1, np, k, c * chan_sig, c * chan_pvp);
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
             "<Global><DomainType>FX</DomainType><SGN>%+d</SGN><Timeline>"
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
             g->version ? g->version : "1.0.1", g->sgn ? g->sgn : -1, 0.001 * (double)np,
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
    int *q = malloc(2 * k * sizeof *q);
    assert_non_null(q);
    for (int c = 0; c < nch; c++)
        for (size_t i = 0; i < np; i++) {
            unsigned char *v = file + pvp_off + c * chan_pvp + i * NPVP * 8;
            double apc[3], srp[3] = {r->ecef[0], r->ecef[1], r->ecef[2]};
            sarbp_scene_to_ecef(r, p->pos + 3 * i, apc);
            srp[2] += g->srp_step * (double)i;
            const double t = 0.001 * (double)i, dt = 2 * p->r0[i] / SARBP_C;
            put_f64(v + 8 * off[0], t);
            put_f64(v + 8 * off[3], t + dt);
            for (int d = 0; d < 3; d++) {
                put_f64(v + 8 * (off[1] + d), apc[d]);
                put_f64(v + 8 * (off[4] + d), apc[d]);
                put_f64(v + 8 * (off[6] + d), srp[d]);
                put_f64(v + 8 * (off[2] + d), 100.0 * d); /* velocities: unused */
                put_f64(v + 8 * (off[5] + d), 100.0 * d);
            }
            put_f64(v + 8 * off[10], p->f0[i]);
            put_f64(v + 8 * off[11], p->f0[i] + (double)(k - 1) * p->df[i]);
            put_f64(v + 8 * off[12], -1e-6);
            put_f64(v + 8 * off[13], 1e-6);
            put_f64(v + 8 * off[15], (int)i + 1 == g->nan_vector ? NAN : p->f0[i]);
            put_f64(v + 8 * off[16], p->df[i]);
            double amp = 1;
            unsigned char *s = file + sig_off + c * chan_sig + i * k * bps;
            if (ci && c == 0) amp = quantise(p, i, bps == 4 ? 32767 : 127, q);
            for (size_t j = 0; j < k; j++) {
                const float re = p->data[i * k + j].re * (float)(c + 1);
                const float im = p->data[i * k + j].im * (float)(c + 1) * (float)-(g->sgn ? g->sgn : -1);
                if (!ci) {
                    put_be(s + 8 * j, &re, 4);
                    put_be(s + 8 * j + 4, &im, 4);
                } else if (bps == 4) {
                    const int16_t a = (int16_t)q[2 * j], b = (int16_t)(q[2 * j + 1] * -(g->sgn ? g->sgn : -1));
                    put_be(s + 4 * j, &a, 2);
                    put_be(s + 4 * j + 2, &b, 2);
                } else {
                    s[2 * j] = (unsigned char)(int8_t)q[2 * j];
                    s[2 * j + 1] = (unsigned char)(int8_t)(q[2 * j + 1] * -(g->sgn ? g->sgn : -1));
                }
            }
            put_f64(v + 8 * off[17], ci ? amp * (c + 1) : 1.0);
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
    free(file);
    free(hdr);
    free(xml);
}

