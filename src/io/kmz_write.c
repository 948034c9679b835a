/* kmz_write.c - KMZ quick looks: a KML GroundOverlay of the dB PNG.
 *
 * The PNG is the image's magnitude in dB as the .png writer makes it
 * (north of the scene frame up); the overlay places it with a gx:LatLonQuad
 * at the geodetic positions of the image's four outer corners (the corner
 * pixels' outer edges, on the plane z = zc of the grid), so a grid turned by
 * a heading is placed exactly, with no resampling. The zip holds doc.kml
 * then image.png, both stored (a PNG does not deflate further); CRCs come
 * from zlib. Archives of 4 GiB or more (zip64) are refused. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "io/geo_write.h"
#include "io/image_check.h"
#include "sarbp/geo.h"

/* The scene reference, and the dB PNG's size: libpng's sides, and pixels
 * that fit a zip without zip64 even where they do not compress (speckle
 * hardly does). */
sarbp_status kmz_check(const char *path, const sarbp_image *img, const sarbp_image_context *ctx)
{
    (void)ctx;
    sarbp_scene_ref r;
    SARBP_TRY(sarbp_image_scene_ref(img, path, &r));
    const size_t nx = img->grid.nx, ny = img->grid.ny;
    SARBP_TRY(png8_check_size(path, nx, ny, 1));
    if ((double)(nx + 1) * (double)ny > (double)UINT32_MAX - (1 << 20))
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': %zu x %zu pixels make a "
                           "KMZ of 4 GiB or more (zip64), which sarbp does not write", path, nx,
                           ny);
    return SARBP_OK;
}

/* Geodetic corners of the image's outer edge: lower-left, lower-right,
 * upper-right, upper-left (south-west first in the scene frame). */
static void corners(const sarbp_image *img, const sarbp_scene_ref *r, double lat[4],
                    double lon[4])
{
    const sarbp_grid *g = &img->grid;
    const double hx = 0.5 * (double)g->nx * g->dx, hy = 0.5 * (double)g->ny * g->dy;
    const double c[4][2] = {{-hx, -hy}, {hx, -hy}, {hx, hy}, {-hx, hy}};
    for (int i = 0; i < 4; i++) {
        const double p[3] = {g->xc + c[i][0], g->yc + c[i][1], g->zc};
        double h;
        sarbp_scene_to_geodetic(r, p, &lat[i], &lon[i], &h);
    }
}

static void le16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

struct entry {
    const char *name;
    const unsigned char *data;
    size_t n;
    uint32_t crc, offset;
};

sarbp_status kmz_to(sarbp_tempfile *t, const char *path, const sarbp_image *img, double db_range,
                    const sarbp_image_context *ctx)
{
    (void)ctx;
    sarbp_scene_ref r;
    SARBP_TRY(sarbp_image_scene_ref(img, path, &r));
    double lat[4], lon[4];
    corners(img, &r, lat, lon);
    unsigned char *pix = NULL, *png = NULL;
    size_t npng = 0;
    sarbp_status st = image_db8(img, db_range, &pix);
    if (!st) st = png8_to_memory(pix, img->grid.nx, img->grid.ny, &png, &npng);
    free(pix);
    if (st) return sarbp_error(st, "cannot write '%s': %s", path, sarbp_error_detail());
    char kml[2048];
    int kn = snprintf(kml, sizeof kml,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<kml xmlns=\"http://www.opengis.net/kml/2.2\" xmlns:gx=\"http://www.google.com/kml/ext/2.2\">\n"
        "<GroundOverlay>\n<name>sarbp image</name>\n"
        "<description>magnitude in dB, %g dB below the peak to the peak; %zu x %zu pixels "
        "at %g x %g m</description>\n"
        "<Icon><href>image.png</href></Icon>\n"
        "<gx:LatLonQuad><coordinates>%.10f,%.10f %.10f,%.10f %.10f,%.10f %.10f,%.10f"
        "</coordinates></gx:LatLonQuad>\n</GroundOverlay>\n</kml>\n",
        db_range, img->grid.nx, img->grid.ny, img->grid.dx, img->grid.dy, lon[0], lat[0], lon[1],
        lat[1], lon[2], lat[2], lon[3], lat[3]);
    if (kn < 0 || (size_t)kn >= sizeof kml) {
        free(png);
        return sarbp_error(SARBP_ERR_INTERNAL, "KML text too long");
    }
    if (npng > 0xfffff000u) {
        free(png);
        return sarbp_error(SARBP_ERR_UNSUPPORTED, "cannot write '%s': its PNG of %zu bytes needs "
                           "zip64, which sarbp does not write", path, npng);
    }
    struct entry e[2] = {{"doc.kml", (const unsigned char *)kml, (size_t)kn, 0, 0},
                         {"image.png", png, npng, 0, 0}};
    /* DOS date and time of now */
    time_t tt = time(NULL);
    struct tm tm;
    gmtime_r(&tt, &tm);
    const unsigned dtime = (unsigned)(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
    const unsigned ddate = (unsigned)((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
    FILE *f = sarbp_tempfile_fdopen(t);
    if (!f) {
        free(png);
        return sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    int ok = 1;
    uint32_t off = 0;
    for (int i = 0; i < 2 && ok; i++) {
        unsigned char h[30];
        const size_t nl = strlen(e[i].name);
        e[i].crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), e[i].data, (uInt)e[i].n);
        e[i].offset = off;
        le32(h, 0x04034b50);
        le16(h + 4, 20);
        le16(h + 6, 0);
        le16(h + 8, 0); /* stored */
        le16(h + 10, dtime);
        le16(h + 12, ddate);
        le32(h + 14, e[i].crc);
        le32(h + 18, (uint32_t)e[i].n);
        le32(h + 22, (uint32_t)e[i].n);
        le16(h + 26, (unsigned)nl);
        le16(h + 28, 0);
        ok = fwrite(h, 1, 30, f) == 30 && fwrite(e[i].name, 1, nl, f) == nl &&
             fwrite(e[i].data, 1, e[i].n, f) == e[i].n;
        off += (uint32_t)(30 + nl + e[i].n);
    }
    const uint32_t cd_at = off;
    for (int i = 0; i < 2 && ok; i++) {
        unsigned char h[46];
        const size_t nl = strlen(e[i].name);
        memset(h, 0, sizeof h);
        le32(h, 0x02014b50);
        le16(h + 4, 20);
        le16(h + 6, 20);
        le16(h + 10, 0);
        le16(h + 12, dtime);
        le16(h + 14, ddate);
        le32(h + 16, e[i].crc);
        le32(h + 20, (uint32_t)e[i].n);
        le32(h + 24, (uint32_t)e[i].n);
        le16(h + 28, (unsigned)nl);
        le32(h + 42, e[i].offset);
        ok = fwrite(h, 1, 46, f) == 46 && fwrite(e[i].name, 1, nl, f) == nl;
        off += (uint32_t)(46 + nl);
    }
    unsigned char end[22];
    memset(end, 0, sizeof end);
    le32(end, 0x06054b50);
    le16(end + 8, 2);
    le16(end + 10, 2);
    le32(end + 12, off - cd_at);
    le32(end + 16, cd_at);
    if (ok) ok = fwrite(end, 1, 22, f) == 22;
    free(png);
    int e2 = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e2 = errno;
    }
    return ok ? SARBP_OK : sarbp_error(SARBP_ERR_IO, "cannot write '%s': %s", path, strerror(e2));
}
