/* test_geo_outputs.c - geolocated outputs: SICD in NITF, KMZ, GeoTIFF.
 *
 *  - SICD: a CPHD of point targets formed to .nitf and .h5 together; the
 *    NITF headers parsed back by offset (lengths, IMODE P, 32-bit float
 *    pixels), the SICD XML parsed with libxml2 (required elements, the
 *    SICD 1.3.0 namespace), every pixel placed on the ground by the XML's
 *    own SCP, row/column vectors and spacings and compared bit for bit with
 *    the .h5 pixel at that ground position, the spatial-frequency support
 *    against the simulation's band and geometry, ARPPoly against the
 *    antenna positions;
 *  - SICD segmentation: with the segment byte limit lowered for tests
 *    (SARBP_TEST_SICD_SEGMENT_BYTES, sicd_write.c) an image is written in
 *    several image segments; each subheader (IID1, NROWS, NCOLS, IDLVL,
 *    IALVL, ILOC, IGEOLO's outer corners) as SICD volume 2's sizing says,
 *    and the segments' pixels, put together, equal the one-segment file's
 *    bit for bit;
 *  - refusals: a geolocated output without a scene reference, a SICD
 *    without pulse times or on a grid coarser than the band; nothing is
 *    written then, the other outputs of the run included;
 *  - KMZ and GeoTIFF of a grid turned by a heading: corners read back (the
 *    KML in the zip, the GeoTIFF's tie points through libgeotiff) agree
 *    within 0.5 m with corners computed here independently (a local
 *    east-north offset on the ellipsoid's radii of curvature);
 *  - GDAL (gdalinfo, gdal_translate, ogrinfo from Debian's gdal-bin; these
 *    tests skip, saying so, where it is not installed): the NITF driver
 *    opens every kind of SICD sarbp writes (from a CPHD, from an HDF5 with
 *    --prf) with its size, its I and Q bands and the SICD DES, and reads
 *    its pixels bit for bit; the GTiff driver's ground control points and
 *    the LIBKML driver's quad agree within 0.5 m with the independent
 *    corners. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cphd_gen.h"
#include "sarbp/geo.h"

#ifdef SARBP_HAVE_LIBXML2
#include <libxml/parser.h>
#include <libxml/tree.h>
#endif
#ifdef SARBP_TEST_GEOTIFF /* tests/CMakeLists.txt: the library has the GeoTIFF writer */
#include <geotiff/geotiffio.h>
#include <geotiff/geovalues.h>
#include <geotiff/xtiffio.h>
#include <tiffio.h>
#endif

static char out[8192], err[8192];

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

static const void *find(const void *hay, size_t n, const char *needle)
{
    const size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp((const char *)hay + i, needle, m)) return (const char *)hay + i;
    return NULL;
}

static unsigned long long field(const unsigned char *b, size_t off, size_t w)
{
    char tmp[32];
    memcpy(tmp, b + off, w);
    tmp[w] = 0;
    char *end;
    unsigned long long v = strtoull(tmp, &end, 10);
    if (*end) fail_msg("NITF field at %zu '%s' is not a number", off, tmp);
    return v;
}

#ifdef SARBP_HAVE_LIBXML2
static const double LAT0 = 34.043085, LON0 = -118.267202, H0 = 35.0;

/* A CPHD of point targets (circular, 45 degrees, 9.6 GHz, 640 MHz). */
static void make_cphd(const char *path)
{
    const sarbp_target t[] = {{0, 0, 0, 1}, {2, -1.5, 0, 0.5}};
    sarbp_phd *p = tu_targets(t, 2, 128);
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, LAT0, LON0, H0, 0));
    struct cphd_gen g = {.fmt = "CF8"};
    tu_write_cphd(path, p, &r, &g);
    sarbp_phd_free(p);
}

static xmlNode *xchild(xmlNode *n, const char *path)
{
    char part[64];
    while (n && *path) {
        const char *slash = strchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : strlen(path);
        memcpy(part, path, len);
        part[len] = 0;
        xmlNode *c = n->children;
        while (c && !(c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, part)))
            c = c->next;
        n = c;
        path += len + (slash ? 1 : 0);
    }
    if (!n) fail_msg("SICD XML lacks %s", path);
    return n;
}

static double xnum(xmlNode *root, const char *path)
{
    xmlChar *c = xmlNodeGetContent(xchild(root, path));
    double v = strtod((const char *)c, NULL);
    xmlFree(c);
    return v;
}

static void xvec(xmlNode *root, const char *path, double v[3])
{
    char p[128];
    const char *ax[] = {"X", "Y", "Z"};
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s", path, ax[k]);
        v[k] = xnum(root, p);
    }
}

static float be_f32(const unsigned char *p)
{
    uint32_t u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    float f;
    memcpy(&f, &u, 4);
    return f;
}
#endif

static void test_sicd(void **state)
{
    (void)state;
#ifndef SARBP_HAVE_LIBXML2
    tu_skip("sarbp was built without libxml2: no SICD output");
#else
    const char *cphd = tu_tmp("geo.cphd"), *nitf = tu_tmp("geo.nitf"), *h5 = tu_tmp("geo.h5");
    make_cphd(cphd);
    assert_int_equal(tu_run("form -i %s -o %s -o %s --grid 40x30 --spacing 0.25 --backend cpu -q",
                            cphd, nitf, h5), 0);
    size_t n;
    unsigned char *b = slurp(nitf, &n);
    assert_memory_equal(b, "NITF02.10", 9);
    assert_int_equal(field(b, 342, 12), n);          /* FL */
    assert_int_equal(field(b, 354, 6), 417);         /* HL */
    assert_int_equal(field(b, 360, 3), 1);           /* NUMI */
    const size_t lish = field(b, 363, 6), li = field(b, 369, 10);
    assert_int_equal(lish, 512);
    assert_int_equal(field(b, 388, 3), 1);           /* NUMDES */
    const size_t ldsh = field(b, 391, 4), ld = field(b, 395, 9);
    assert_int_equal(417 + lish + li + ldsh + ld, n);
    const unsigned char *is = b + 417;
    assert_memory_equal(is, "IMSICD000", 9);
    const size_t nrows = field(is, 333, 8), ncols = field(is, 341, 8);
    assert_memory_equal(is + 349, "R  NODISPLYSAR     32RG", 23);
    assert_memory_equal(is + 433, "NC2", 3);
    assert_int_equal(is[463], 'P');
    assert_int_equal(field(is, 480, 2), 32);
    assert_int_equal(li, nrows * ncols * 8);
    const unsigned char *pix = is + lish, *des = pix + li;
    assert_memory_equal(des, "DEXML_DATA_CONTENT", 18);
    assert_int_equal(field(des, 2 + 25 + 2 + 167, 4), 773);

    xmlDoc *doc = xmlReadMemory((const char *)des + ldsh, (int)ld, NULL, NULL, XML_PARSE_NONET);
    assert_non_null(doc);
    xmlNode *root = xmlDocGetRootElement(doc);
    assert_string_equal((const char *)root->name, "SICD");
    assert_string_equal((const char *)root->ns->href, "urn:SICD:1.3.0");
    static const char *const required[] = {
        "CollectionInfo/CollectorName", "CollectionInfo/CoreName", "CollectionInfo/CollectType",
        "CollectionInfo/RadarMode/ModeType", "CollectionInfo/Classification",
        "ImageData/PixelType", "ImageData/FullImage/NumRows", "ImageData/SCPPixel/Row",
        "GeoData/EarthModel", "GeoData/SCP/LLH/HAE", "GeoData/ImageCorners",
        "Grid/ImagePlane", "Grid/Type", "Grid/TimeCOAPoly", "Grid/Row/DeltaK2",
        "Grid/Col/ImpRespWid", "Timeline/CollectStart", "Timeline/CollectDuration",
        "Position/ARPPoly/Z", "RadarCollection/TxFrequency/Max",
        "RadarCollection/RcvChannels/ChanParameters/TxRcvPolarization",
        "ImageFormation/RcvChanProc/ChanIndex", "ImageFormation/TxFrequencyProc/MaxProc",
        "ImageFormation/ImageFormAlgo", "SCPCOA/SCPTime", "SCPCOA/ARPVel/Z",
        "SCPCOA/SideOfTrack", "SCPCOA/GrazeAng", "SCPCOA/LayoverAng"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) xchild(root, required[i]);
    assert_int_equal((size_t)xnum(root, "ImageData/NumRows"), nrows);
    assert_int_equal((size_t)xnum(root, "ImageData/NumCols"), ncols);
    assert_true(nrows * ncols == 40 * 30);

    /* every pixel at its ground position by the XML's own geometry */
    double scp[3], ur[3], uc[3];
    xvec(root, "GeoData/SCP/ECF", scp);
    xvec(root, "Grid/Row/UVectECF", ur);
    xvec(root, "Grid/Col/UVectECF", uc);
    const double rss = xnum(root, "Grid/Row/SS"), css = xnum(root, "Grid/Col/SS");
    const double sr = xnum(root, "ImageData/SCPPixel/Row"), sc = xnum(root, "ImageData/SCPPixel/Col");
    sarbp_image *img;
    tu_ok(sarbp_image_read(h5, &img));
    sarbp_scene_ref ref;
    tu_ok(sarbp_image_scene_ref(img, h5, &ref));
    const sarbp_grid *g = &img->grid;
    size_t bad = 0;
    double worst_off = 0;
    for (size_t r = 0; r < nrows; r++)
        for (size_t c = 0; c < ncols; c++) {
            double e[3], s[3];
            for (int k = 0; k < 3; k++)
                e[k] = scp[k] + ((double)r - sr) * rss * ur[k] + ((double)c - sc) * css * uc[k];
            sarbp_ecef_to_scene(&ref, e, s);
            const double fx = (s[0] - g->xc) / g->dx + 0.5 * (double)(g->nx - 1);
            const double fy = (s[1] - g->yc) / g->dy + 0.5 * (double)(g->ny - 1);
            const long ix = lround(fx), iy = lround(fy);
            worst_off = fmax(worst_off, fmax(fabs(fx - (double)ix), fabs(fy - (double)iy)));
            worst_off = fmax(worst_off, fabs(s[2] - g->zc));
            if (ix < 0 || iy < 0 || ix >= (long)g->nx || iy >= (long)g->ny) {
                bad++;
                continue;
            }
            const sarbp_c32 v = img->data[(size_t)iy * g->nx + (size_t)ix];
            const unsigned char *q = pix + 8 * (r * ncols + c);
            if (be_f32(q) != v.re || be_f32(q + 4) != v.im) bad++;
        }
    print_message("SICD pixels placed by the XML geometry: %zu of %zu differ from the .h5; "
                  "largest offset from a grid point %.2g pixels\n", bad, nrows * ncols, worst_off);
    assert_int_equal(bad, 0);
    assert_true(worst_off < 1e-6);

    /* spatial-frequency support: rows along range at 45 degrees grazing */
    const double kc = 2 * 9.6e9 / SARBP_C * cos(M_PI / 4), bw = 2 * 640e6 / SARBP_C * cos(M_PI / 4);
    const double krow = xnum(root, "Grid/Row/KCtr"), bwrow = xnum(root, "Grid/Row/ImpRespBW");
    print_message("Row KCtr %.4f (about %.4f), ImpRespBW %.4f (about %.4f) cycles/m; Col KCtr "
                  "%.3g\n", krow, kc, bwrow, bw, xnum(root, "Grid/Col/KCtr"));
    assert_true(fabs(krow / kc - 1) < 0.01 && fabs(bwrow / bw - 1) < 0.01);
    assert_true(fabs(xnum(root, "Grid/Col/KCtr")) < 0.05 * krow);
    assert_true(fabs(xnum(root, "SCPCOA/GrazeAng") - 45) < 0.5);
    assert_true(bwrow * rss <= 1 && xnum(root, "Grid/Col/ImpRespBW") * css <= 1);

    /* ARPPoly against the antenna positions (pulse i at 1 ms i + r0 / c) */
    const sarbp_target t[] = {{0, 0, 0, 1}};
    sarbp_phd *p = tu_targets(t, 1, 128);
    double worst = 0;
    for (size_t i = 0; i < p->npulses; i++) {
        const double ti = 0.001 * (double)i + p->r0[i] / SARBP_C;
        double apc[3], e[3];
        sarbp_scene_to_ecef(&ref, p->pos + 3 * i, apc);
        const char *ax[] = {"X", "Y", "Z"};
        for (int k = 0; k < 3; k++) {
            char path[64];
            snprintf(path, sizeof path, "Position/ARPPoly/%s", ax[k]);
            xmlNode *poly = xchild(root, path);
            e[k] = 0;
            for (xmlNode *c = poly->children; c; c = c->next) {
                if (c->type != XML_ELEMENT_NODE) continue;
                xmlChar *ex = xmlGetProp(c, (const xmlChar *)"exponent1");
                xmlChar *v = xmlNodeGetContent(c);
                e[k] += strtod((const char *)v, NULL) * pow(ti, atoi((const char *)ex));
                xmlFree(ex);
                xmlFree(v);
            }
        }
        worst = fmax(worst, sqrt((e[0] - apc[0]) * (e[0] - apc[0]) + (e[1] - apc[1]) * (e[1] - apc[1]) +
                                 (e[2] - apc[2]) * (e[2] - apc[2])));
    }
    print_message("ARPPoly against the antenna positions: %.3g m\n", worst);
    assert_true(worst < 0.01);
    sarbp_phd_free(p);
    sarbp_image_free(img);
    xmlFreeDoc(doc);
    free(b);
#endif
}

static void expect_refused(const char *args, const char *what, const char *const *no_files)
{
    const int rc = tu_run("%s", args);
    size_t lines = 0;
    for (const char *c = err; *c; c++) lines += *c == '\n';
    if (rc != 1 || lines != 1 || !strstr(err, what))
        fail_msg("sarbp %s: exit %d, want 1 and one line with '%s'; stderr:\n%s", args, rc, what,
                 err);
    for (; *no_files; no_files++) assert_false(tu_exists(*no_files));
}

static void test_refusals(void **state)
{
    (void)state;
    const sarbp_target t[] = {{0, 0, 0, 1}};
    sarbp_phd *p = tu_targets(t, 1, 64);
    const char *h5 = tu_tmp("noref_phd.h5");
    tu_ok(sarbp_phd_write_h5(h5, p));
    sarbp_phd_free(p);
    char args[2048];
    const char *names[] = {"r.nitf", "r.kmz", "r.tif"};
#ifdef SARBP_TEST_GEOTIFF
    const int nnames = 3;
#else
    const int nnames = 2; /* .tif: refused for want of libgeotiff first */
#endif
    for (int i = 0; i < nnames; i++) {
        const char *o = tu_tmp(names[i]), *other = tu_tmp("r_other.h5");
        const char *none[] = {o, other, NULL};
        snprintf(args, sizeof args, "form -i %s -o %s -o %s --grid 16x16 --backend cpu -q", h5,
                 other, o);
        expect_refused(args, "give --scene-ref LAT,LON,HEIGHT", none);
        assert_non_null(strstr(err, o));
    }
    char o[1024]; /* tu_tmp's slots rotate */
    snprintf(o, sizeof o, "%s", tu_tmp("times.nitf"));
    const char *none[] = {o, NULL};
    snprintf(args, sizeof args, "form -i %s -o %s --scene-ref 10,20,0 --grid 16x16 --backend cpu -q",
             h5, o);
    expect_refused(args, "needs the pulse times", none);
    /* the times given on the command line: a SICD */
    assert_int_equal(tu_run("form -i %s -o %s --scene-ref 10,20,0 --prf 500 --collect-start "
                            "2026-01-02T03:04:05.5Z --grid 16x16 --spacing 0.1 --backend cpu -q",
                            h5, o), 0);
    size_t n;
    unsigned char *b = slurp(o, &n);
    assert_memory_equal(b, "NITF02.10", 9);
    assert_int_equal(field(b, 342, 12), n);
    assert_non_null(find(b, n, "<CollectStart>2026-01-02T03:04:05.5Z</CollectStart>"));
    free(b);
    assert_int_equal(tu_run("form -i %s -o %s --collect-start yesterday", h5, o), 2);
    assert_non_null(strstr(err, "--collect-start wants an ISO 8601"));
    remove(o);
#ifdef SARBP_HAVE_LIBXML2
    const char *cphd = tu_tmp("coarse.cphd");
    make_cphd(cphd);
    snprintf(args, sizeof args, "form -i %s -o %s --spacing 1 --grid 16x16 --backend cpu -q",
             cphd, o);
    expect_refused(args, "coarser than the image's band needs", none);
    snprintf(args, sizeof args, "form -i %s -o %s --prf 100 --grid 16x16 --backend cpu -q", cphd, o);
    expect_refused(args, "has its own", none);
#endif
}

/* Independent corners: a local east-north offset on the ellipsoid's radii
 * of curvature at the reference (good to micrometres over tens of metres). */
static void corner_ll(double lat0, double lon0, double heading, double x, double y, double *lat,
                      double *lon)
{
    const double a = 6378137.0, f = 1 / 298.257223563, e2 = f * (2 - f);
    const double s = sin(lat0 * M_PI / 180);
    const double nrad = a / sqrt(1 - e2 * s * s), mrad = a * (1 - e2) / pow(1 - e2 * s * s, 1.5);
    const double h = heading * M_PI / 180;
    const double east = x * cos(h) + y * sin(h), north = -x * sin(h) + y * cos(h);
    *lat = lat0 + north / mrad * 180 / M_PI;
    *lon = lon0 + east / (nrad * cos(lat0 * M_PI / 180)) * 180 / M_PI;
}

static double metres(double lat0, double dlat, double dlon)
{
    const double r = 6371000.0, d2r = M_PI / 180;
    return hypot(dlat * d2r * r, dlon * d2r * r * cos(lat0 * d2r));
}

#define QL_ARGS "--scene-ref 52.1,5.2,10,30 --grid 50x40 --spacing 0.3 --center 3,-2 --backend cpu -q"

static void test_kmz_geotiff(void **state)
{
    (void)state;
    const sarbp_target t[] = {{0, 0, 0, 1}, {3, -2, 0, 0.7}};
    sarbp_phd *p = tu_targets(t, 2, 64);
    const char *h5 = tu_tmp("ql_phd.h5"), *kmz = tu_tmp("ql.kmz"), *tif = tu_tmp("ql.tif");
    tu_ok(sarbp_phd_write_h5(h5, p));
    sarbp_phd_free(p);
    const int rc = tu_run("form -i %s -o %s -o %s " QL_ARGS, h5, kmz, tif);
    const int have_tiff = !(rc == 1 && strstr(err, "without libtiff"));
    if (!have_tiff) assert_int_equal(tu_run("form -i %s -o %s " QL_ARGS, h5, kmz), 0);
    else assert_int_equal(rc, 0);
    /* outer corners, scene frame: lower-left, lower-right, upper-right, upper-left */
    const double xs[4] = {3 - 7.5, 3 + 7.5, 3 + 7.5, 3 - 7.5}, ys[4] = {-2 - 6, -2 - 6, -2 + 6, -2 + 6};
    double lat[4], lon[4];
    for (int i = 0; i < 4; i++) corner_ll(52.1, 5.2, 30, xs[i], ys[i], &lat[i], &lon[i]);

    size_t n;
    unsigned char *b = slurp(kmz, &n);
    assert_memory_equal(b, "PK\x03\x04", 4);
    const char *c = find(b, n, "<coordinates>");
    assert_non_null(c);
    c += strlen("<coordinates>");
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        char *end;
        const double lo = strtod(c, &end);
        assert_int_equal(*end, ',');
        const double la = strtod(end + 1, &end);
        c = end;
        worst = fmax(worst, metres(52.1, la - lat[i], lo - lon[i]));
    }
    print_message("KMZ corners against independent ones: %.3g m (bar 0.5 m)\n", worst);
    assert_true(worst < 0.5);
    assert_non_null(find(b, n, "image.png"));
    assert_non_null(find(b, n, "\x89PNG"));
    assert_memory_equal(b + n - 22, "PK\x05\x06", 4);
    free(b);
    if (system("python3 -c 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
               "sys.exit(z.testzip() is not None or z.namelist()!=[\"doc.kml\",\"image.png\"])' "
               "'" SARBP_TEST_TMP "/ql.kmz' 2>/dev/null") == 0)
        print_message("python3 zipfile: the archive tests good\n");

    if (!have_tiff) tu_skip("sarbp was built without libtiff and libgeotiff: no GeoTIFF output");
#ifndef SARBP_TEST_GEOTIFF
    tu_skip("sarbp was built without libtiff and libgeotiff: no GeoTIFF to read back");
#else
    TIFF *tf = XTIFFOpen(tif, "r");
    assert_non_null(tf);
    uint32_t w = 0, h = 0;
    TIFFGetField(tf, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tf, TIFFTAG_IMAGELENGTH, &h);
    assert_int_equal(w, 50);
    assert_int_equal(h, 40);
    uint16_t count = 0;
    double *tp = NULL;
    assert_true(TIFFGetField(tf, TIFFTAG_GEOTIEPOINTS, &count, &tp));
    assert_true(count >= 24);
    GTIF *gt = GTIFNew(tf);
    assert_non_null(gt);
    short model = 0, gcs = 0;
    assert_true(GTIFKeyGet(gt, GTModelTypeGeoKey, &model, 0, 1));
    assert_true(GTIFKeyGet(gt, GeographicTypeGeoKey, &gcs, 0, 1));
    assert_int_equal(model, ModelTypeGeographic);
    assert_int_equal(gcs, 4326);
    GTIFFree(gt);
    /* raster (col, row) corners: row 0 is the north (upper) edge */
    worst = 0;
    for (int i = 0; i < count / 6; i++) {
        const double col = tp[6 * i], row = tp[6 * i + 1];
        const double x = 3 + (col - 25) * 0.3, y = -2 + (20 - row) * 0.3;
        double la, lo;
        corner_ll(52.1, 5.2, 30, x, y, &la, &lo);
        worst = fmax(worst, metres(52.1, tp[6 * i + 4] - la, tp[6 * i + 3] - lo));
    }
    print_message("GeoTIFF tie points (%d) against independent ones: %.3g m (bar 0.5 m)\n",
                  count / 6, worst);
    assert_true(worst < 0.5);
    XTIFFClose(tf);

    /* --complex: the complex pixels themselves, north row first */
    const char *ctif = tu_tmp("qlc.tif"), *ch5 = tu_tmp("qlc.h5");
    assert_int_equal(tu_run("form -i %s -o %s -o %s --complex " QL_ARGS, h5, ctif, ch5), 0);
    sarbp_image *img;
    tu_ok(sarbp_image_read(ch5, &img));
    tf = XTIFFOpen(ctif, "r");
    assert_non_null(tf);
    uint16_t bps = 0, fmt = 0;
    TIFFGetField(tf, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetField(tf, TIFFTAG_SAMPLEFORMAT, &fmt);
    assert_int_equal(bps, 64);
    assert_int_equal(fmt, SAMPLEFORMAT_COMPLEXIEEEFP);
    sarbp_c32 line[50];
    size_t differ = 0;
    for (uint32_t row = 0; row < 40; row++) {
        assert_int_equal(TIFFReadScanline(tf, line, row, 0), 1);
        differ += memcmp(line, img->data + (39 - row) * 50, sizeof line) != 0;
    }
    assert_int_equal(differ, 0);
    XTIFFClose(tf);
    sarbp_image_free(img);
#endif
}

/* ---- GDAL ------------------------------------------------------------------ */

static char gout[1 << 18]; /* what gdalinfo and ogrinfo print */

/* Whether gdalinfo runs here; prints its version once. */
static int have_gdal(void)
{
    static int state = -1;
    if (state < 0) {
        state = tu_sh(gout, sizeof gout, "gdalinfo --version 2>&1") == 0;
        if (state) print_message("%s", gout);
    }
    return state;
}

#define NEED_GDAL()                                                                        \
    do {                                                                                   \
        if (!have_gdal())                                                                  \
            tu_skip("gdalinfo is not installed (Debian: gdal-bin, scripts/install-deps.sh)"); \
    } while (0)

/* The n numbers following "key": at or after *from in gdalinfo's JSON
 * into v; *from moves past them. Fails the test when absent. */
static void jnums(const char **from, const char *key, double *v, int n)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(*from, k);
    if (!p) fail_msg("gdalinfo's JSON has no %s after offset %td", key, *from - gout);
    p += strlen(k);
    for (int i = 0; i < n; i++) {
        while (*p && !strchr("-0123456789", *p)) p++;
        char *end;
        v[i] = strtod(p, &end);
        if (end == p) fail_msg("gdalinfo's JSON: no number %d after %s", i, key);
        p = end;
    }
    *from = p;
}

static double jnum(const char **from, const char *key)
{
    double v;
    jnums(from, key, &v, 1);
    return v;
}

/* gdalinfo opens a SICD sarbp wrote with GDAL's NITF driver: its size, two
 * Float32 bands I and Q (GDAL's view of RE32F_IM32F), the SICD XML DES;
 * gdal_translate's pixels equal the file's, bit for bit. */
static void check_sicd_by_gdal(const char *nitf)
{
    size_t n;
    unsigned char *b = slurp(nitf, &n);
    const unsigned char *is = b + field(b, 354, 6);
    const size_t nrows = field(is, 333, 8), ncols = field(is, 341, 8);
    const unsigned char *pix = is + field(b, 363, 6);
    assert_int_equal(tu_sh(gout, sizeof gout, "gdalinfo -json -mdd xml:DES '%s' 2>&1", nitf), 0);
    const char *p = gout;
    if (!strstr(gout, "\"driverShortName\":\"NITF\"")) fail_msg("gdalinfo %s:\n%.2000s", nitf, gout);
    double wh[2];
    jnums(&p, "size", wh, 2);
    assert_true(wh[0] == (double)ncols && wh[1] == (double)nrows);
    const char *bands = strstr(gout, "\"bands\":"); /* bands 1 and 2: I and Q, Float32 */
    assert_non_null(bands);
    assert_true(strstr(bands, "\"band\":2") && !strstr(bands, "\"band\":3"));
    const char *f1 = strstr(bands, "\"type\":\"Float32\"");
    assert_true(f1 && strstr(f1 + 1, "\"type\":\"Float32\""));
    assert_true(strstr(bands, "\"NITF_ISUBCAT\":\"I\"") && strstr(bands, "\"NITF_ISUBCAT\":\"Q\""));
    /* the DES as GDAL lists it (its XML inside a JSON string: quotes escaped) */
    assert_non_null(strstr(gout, "des name=\\\"XML_DATA_CONTENT\\\""));
    assert_non_null(strstr(gout, "\\\"DESSHTN\\\" value=\\\"urn:SICD:1.3.0\\\""));
    assert_non_null(strstr(gout, "\"NITF_ICAT\":\"SAR\""));
    assert_non_null(strstr(gout, "\"NITF_IMODE\":\"P\""));
    char raw[1024];
    snprintf(raw, sizeof raw, "%s.gdal.raw", nitf);
    remove(raw);
    assert_int_equal(tu_sh(gout, sizeof gout, "gdal_translate -q -of ENVI -co INTERLEAVE=BIP "
                           "'%s' '%s' 2>&1", nitf, raw), 0);
    size_t rn;
    unsigned char *r = slurp(raw, &rn);
    assert_int_equal(rn, nrows * ncols * 8);
    size_t differ = 0;
    for (size_t i = 0; i < rn; i += 4) /* ENVI: this machine's order; NITF: big-endian */
        differ += r[i] != pix[i + 3] || r[i + 1] != pix[i + 2] || r[i + 2] != pix[i + 1] ||
                  r[i + 3] != pix[i];
    print_message("GDAL reads %s: %zu x %zu, I and Q Float32, the SICD DES; %zu of %zu floats "
                  "differ\n", strrchr(nitf, '/') + 1, nrows, ncols, differ, rn / 4);
    assert_int_equal(differ, 0);
    free(r);
    free(b);
}

static void test_sicd_by_gdal(void **state)
{
    (void)state;
    NEED_GDAL();
    const sarbp_target t[] = {{0, 0, 0, 1}, {1.5, 2, 0, 0.5}};
    sarbp_phd *p = tu_targets(t, 2, 64);
    const char *h5 = tu_tmp("gd_phd.h5"), *nitf = tu_tmp("gd_prf.nitf");
    tu_ok(sarbp_phd_write_h5(h5, p));
    sarbp_phd_free(p);
    assert_int_equal(tu_run("form -i %s -o %s --scene-ref -12.5,130.8,20 --prf 400 "
                            "--collect-start 2026-05-06T07:08:09Z --grid 21x17 --spacing 0.1 "
                            "--backend cpu -q", h5, nitf), 0);
    check_sicd_by_gdal(nitf);
#ifdef SARBP_HAVE_LIBXML2
    const char *cphd = tu_tmp("gd.cphd"), *cn = tu_tmp("gd_cphd.nitf");
    make_cphd(cphd);
    assert_int_equal(tu_run("form -i %s -o %s --grid 40x30 --spacing 0.25 --window taylor "
                            "--backend cpu -q", cphd, cn), 0);
    check_sicd_by_gdal(cn);
#endif
}

/* GCPs (pixel, line, lon, lat) gdalinfo lists, against the independent
 * corners: the worst distance in metres. */
static double gcps_against_independent(const char *tif, int *count)
{
    assert_int_equal(tu_sh(gout, sizeof gout, "gdalinfo -json '%s' 2>&1", tif), 0);
    assert_non_null(strstr(gout, "\"driverShortName\":\"GTiff\""));
    assert_non_null(strstr(gout, "ID[\\\"EPSG\\\",4326]"));
    const char *p = strstr(gout, "\"gcpList\":");
    assert_non_null(p);
    double worst = 0;
    *count = 0;
    while (strstr(p, "\"pixel\":")) {
        const double col = jnum(&p, "pixel"), row = jnum(&p, "line");
        const double lon = jnum(&p, "x"), lat = jnum(&p, "y");
        double la, lo; /* QL_ARGS: 50 x 40 at 0.3 m about (3, -2), heading 30 */
        corner_ll(52.1, 5.2, 30, 3 + (col - 25) * 0.3, -2 + (20 - row) * 0.3, &la, &lo);
        worst = fmax(worst, metres(52.1, lat - la, lon - lo));
        ++*count;
    }
    return worst;
}

static void test_geotiff_kmz_by_gdal(void **state)
{
    (void)state;
    NEED_GDAL();
    const sarbp_target t[] = {{0, 0, 0, 1}, {3, -2, 0, 0.7}};
    sarbp_phd *p = tu_targets(t, 2, 64);
    const char *h5 = tu_tmp("gq_phd.h5"), *kmz = tu_tmp("gq.kmz");
    tu_ok(sarbp_phd_write_h5(h5, p));
    sarbp_phd_free(p);
    assert_int_equal(tu_run("form -i %s -o %s " QL_ARGS, h5, kmz), 0);
    /* the KMZ through OGR's LIBKML driver: the GroundOverlay's quad as a polygon */
    assert_int_equal(tu_sh(gout, sizeof gout, "ogrinfo -ro -al '%s' 2>&1", kmz), 0);
    const char *poly = strstr(gout, "POLYGON ((");
    if (!poly) fail_msg("ogrinfo %s:\n%.2000s", kmz, gout);
    poly += strlen("POLYGON ((");
    const double xs[4] = {3 - 7.5, 3 + 7.5, 3 + 7.5, 3 - 7.5}, ys[4] = {-2 - 6, -2 - 6, -2 + 6, -2 + 6};
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        char *end;
        const double lo = strtod(poly, &end), la = strtod(end, &end);
        assert_true(*end == ',' || *end == ')');
        poly = end + 1;
        double lat, lon;
        corner_ll(52.1, 5.2, 30, xs[i], ys[i], &lat, &lon);
        worst = fmax(worst, metres(52.1, la - lat, lo - lon));
    }
    print_message("ogrinfo (LIBKML): KMZ corners against independent ones: %.3g m (bar 0.5 m)\n",
                  worst);
    assert_true(worst < 0.5);
#ifndef SARBP_TEST_GEOTIFF
    tu_skip("sarbp was built without libtiff and libgeotiff: no GeoTIFF for gdalinfo");
#else
    const char *tif = tu_tmp("gq.tif"), *ctif = tu_tmp("gqc.tif");
    assert_int_equal(tu_run("form -i %s -o %s " QL_ARGS, h5, tif), 0);
    assert_int_equal(tu_run("form -i %s -o %s --complex " QL_ARGS, h5, ctif), 0);
    const char *files[2] = {tif, ctif}, *types[2] = {"Byte", "CFloat32"};
    for (int i = 0; i < 2; i++) {
        int count;
        worst = gcps_against_independent(files[i], &count);
        const char *p2 = gout;
        double wh[2];
        jnums(&p2, "size", wh, 2);
        assert_true(wh[0] == 50 && wh[1] == 40);
        char type[64];
        snprintf(type, sizeof type, "\"type\":\"%s\"", types[i]);
        assert_non_null(strstr(gout, type));
        print_message("gdalinfo: %s GeoTIFF, %d GCPs against independent corners: %.3g m "
                      "(bar 0.5 m)\n", types[i], count, worst);
        assert_int_equal(count, 5);
        assert_true(worst < 0.5);
    }
#endif
}

/* The same image as one segment and in segments of 7 rows: the headers as
 * SICD volume 2's image sizing says, the pixels reassembled bit for bit. */
static void test_sicd_segments(void **state)
{
    (void)state;
#ifndef SARBP_HAVE_LIBXML2
    tu_skip("sarbp was built without libxml2: no CPHD to make a SICD from");
#else
    const char *cphd = tu_tmp("seg.cphd");
    char one[1024], seg[1024];
    snprintf(one, sizeof one, "%s", tu_tmp("seg_one.nitf"));
    snprintf(seg, sizeof seg, "%s", tu_tmp("seg_seven.nitf"));
    make_cphd(cphd);
#define SEG_FORM "form -i %s -o %s --grid 40x30 --spacing 0.25 --backend cpu --threads 1 -q"
    assert_int_equal(tu_run(SEG_FORM, cphd, one), 0);
    size_t n1, n2;
    unsigned char *a = slurp(one, &n1);
    assert_int_equal(field(a, 360, 3), 1);
    const unsigned char *ia = a + field(a, 354, 6);
    const size_t nrows = field(ia, 333, 8), ncols = field(ia, 341, 8), per = 7;
    const size_t nseg = (nrows + per - 1) / per;
    char limit[32]; /* 7 rows and a few bytes */
    snprintf(limit, sizeof limit, "%zu", per * ncols * 8 + 5);
    setenv("SARBP_TEST_SICD_SEGMENT_BYTES", limit, 1);
    const int rc = tu_run(SEG_FORM, cphd, seg);
    snprintf(limit, sizeof limit, "%zu", ncols * 8 - 1); /* not one row */
    setenv("SARBP_TEST_SICD_SEGMENT_BYTES", limit, 1);
    char o[1024];
    snprintf(o, sizeof o, "%s", tu_tmp("seg_refused.nitf"));
    const int rc_row = tu_run(SEG_FORM, cphd, o);
    static char err_row[sizeof err];
    memcpy(err_row, err, sizeof err);
    setenv("SARBP_TEST_SICD_SEGMENT_BYTES", "32", 1); /* one row of 4 a segment: 1000 > 999 */
    const int rc_many = tu_run("form -i %s -o %s --grid 1000x4 --spacing 0.01 --backend cpu -q",
                               cphd, o);
    unsetenv("SARBP_TEST_SICD_SEGMENT_BYTES");
    assert_int_equal(rc, 0);
    assert_int_equal(rc_row, 1);
    assert_non_null(strstr(err_row, "do not fit a NITF image segment"));
    assert_int_equal(rc_many, 1);
    assert_non_null(strstr(err, "1000 x 4 pixels need more than the 999 image segments"));
    assert_false(tu_exists(o));

    unsigned char *b = slurp(seg, &n2);
    assert_int_equal(field(b, 342, 12), n2);                /* FL */
    assert_int_equal(field(b, 354, 6), 401 + 16 * nseg);    /* HL */
    assert_int_equal(field(b, 360, 3), nseg);               /* NUMI */
    size_t at = 401 + 16 * nseg, rows = 0, differ = 0;
    const unsigned char *pa = ia + 512;
    for (size_t i = 0; i < nseg; i++) {
        const size_t lish = field(b, 363 + 16 * i, 6), li = field(b, 369 + 16 * i, 10);
        const unsigned char *is = b + at;
        const size_t nr = i + 1 < nseg ? per : nrows - per * (nseg - 1);
        char iid[32];
        snprintf(iid, sizeof iid, "SICD%03zu", i + 1);
        assert_int_equal(lish, 512);
        assert_memory_equal(is, "IM", 2);
        assert_memory_equal(is + 2, iid, 7);
        assert_int_equal(field(is, 333, 8), nr);
        assert_int_equal(field(is, 341, 8), ncols);
        assert_int_equal(li, nr * ncols * 8);
        assert_int_equal(field(is, 482, 3), i + 1);          /* IDLVL */
        assert_int_equal(field(is, 485, 3), i);              /* IALVL */
        assert_int_equal(field(is, 488, 5), i ? per : 0);    /* ILOC row */
        assert_int_equal(field(is, 493, 5), 0);              /* ILOC column */
        assert_int_equal(is[463], 'P');
        if (i == 0) assert_memory_equal(is + 372, ia + 372, 30);             /* FRFC, FRLC */
        if (i + 1 == nseg) assert_memory_equal(is + 402, ia + 402, 30);      /* LRLC, LRFC */
        differ += memcmp(is + 512, pa + rows * ncols * 8, li) != 0;
        rows += nr;
        at += lish + li;
    }
    assert_int_equal(rows, nrows);
    assert_memory_equal(b + at, "DEXML_DATA_CONTENT", 18);
    assert_non_null(find(b + at, n2 - at, "<NumRows>"));
    print_message("SICD in %zu segments of %zu rows (%zu x %zu pixels): %zu segments differ from "
                  "the one-segment file's rows\n", nseg, per, nrows, ncols, differ);
    assert_int_equal(differ, 0);
    if (have_gdal()) { /* GDAL lists the segments as subdatasets and opens each */
        assert_int_equal(tu_sh(gout, sizeof gout, "gdalinfo -json '%s' 2>&1", seg), 0);
        char last[64];
        snprintf(last, sizeof last, "NITF_IM:%zu:", nseg - 1);
        assert_non_null(strstr(gout, last));
        for (size_t i = 0; i < nseg; i++) {
            assert_int_equal(tu_sh(gout, sizeof gout, "gdalinfo -json 'NITF_IM:%zu:%s' 2>&1", i,
                                   seg), 0);
            const char *p = gout;
            double wh[2];
            jnums(&p, "size", wh, 2);
            assert_true(wh[0] == (double)ncols &&
                        wh[1] == (double)(i + 1 < nseg ? per : nrows - per * (nseg - 1)));
        }
        print_message("gdalinfo lists the %zu image segments and opens each at its size\n", nseg);
    }
    free(a);
    free(b);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sicd),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_kmz_geotiff),
        cmocka_unit_test(test_sicd_segments),
        cmocka_unit_test(test_sicd_by_gdal),
        cmocka_unit_test(test_geotiff_kmz_by_gdal),
    };
    return tu_run_tests(tests);
}
