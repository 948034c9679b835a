/* geo.c - WGS-84 geodetic <-> ECEF <-> scene frame, and the scene reference
 * as image attributes.
 *
 * The scene frame is east-north-up at the scene reference point, turned by
 * a heading about the vertical (sarbp/geo.h). Everything is FP64; ECEF ->
 * geodetic iterates the exact latitude equation with the height written in
 * the form that stays accurate at the poles (p cos(lat) + z sin(lat) - a W),
 * so no special case is needed there. It does not do map projections (UTM
 * for GeoTIFF is geotiff_write.c's). */
#include "sarbp/geo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sarbp/image.h"

#define DEG (M_PI / 180.0)

static double e2(void)
{
    return SARBP_WGS84_F * (2.0 - SARBP_WGS84_F);
}

void sarbp_geodetic_to_ecef(double lat_deg, double lon_deg, double h, double ecef[3])
{
    const double lat = lat_deg * DEG, lon = lon_deg * DEG;
    const double s = sin(lat), c = cos(lat);
    const double n = SARBP_WGS84_A / sqrt(1.0 - e2() * s * s);
    ecef[0] = (n + h) * c * cos(lon);
    ecef[1] = (n + h) * c * sin(lon);
    ecef[2] = (n * (1.0 - e2()) + h) * s;
}

void sarbp_ecef_to_geodetic(const double ecef[3], double *lat_deg, double *lon_deg, double *h)
{
    const double x = ecef[0], y = ecef[1], z = ecef[2];
    const double p = hypot(x, y), ee = e2();
    double lat = atan2(z, p * (1.0 - ee));
    for (int it = 0; it < 30; it++) {
        const double s = sin(lat);
        const double n = SARBP_WGS84_A / sqrt(1.0 - ee * s * s);
        /* the fixed point of tan(lat) = (z + e2 n sin(lat)) / p; it
         * contracts by about e2 = 0.0067 an iteration */
        const double next = atan2(z + ee * n * s, p);
        const double d = fabs(next - lat);
        lat = next;
        if (d < 1e-15) break;
    }
    const double s = sin(lat), c = cos(lat);
    const double w = sqrt(1.0 - ee * s * s);
    *lat_deg = lat / DEG;
    *lon_deg = p > 0 ? atan2(y, x) / DEG : 0.0;
    *h = p * c + z * s - SARBP_WGS84_A * w;
}

static void axes(sarbp_scene_ref *r)
{
    const double la = r->lat_deg * DEG, lo = r->lon_deg * DEG, hd = r->heading_deg * DEG;
    const double e[3] = {-sin(lo), cos(lo), 0};
    const double n[3] = {-sin(la) * cos(lo), -sin(la) * sin(lo), cos(la)};
    const double u[3] = {cos(la) * cos(lo), cos(la) * sin(lo), sin(la)};
    for (int k = 0; k < 3; k++) {
        r->ux[k] = cos(hd) * e[k] - sin(hd) * n[k];
        r->uy[k] = cos(hd) * n[k] + sin(hd) * e[k];
        r->uz[k] = u[k];
    }
}

sarbp_status sarbp_scene_ref_set(sarbp_scene_ref *r, double lat_deg, double lon_deg,
                                 double height_m, double heading_deg)
{
    if (!isfinite(lat_deg) || lat_deg < -90 || lat_deg > 90)
        return sarbp_error(SARBP_ERR_INVALID, "scene reference latitude %g is outside [-90, 90] "
                           "degrees", lat_deg);
    if (!isfinite(lon_deg) || lon_deg < -180 || lon_deg > 360)
        return sarbp_error(SARBP_ERR_INVALID, "scene reference longitude %g is outside "
                           "[-180, 360] degrees", lon_deg);
    if (!isfinite(height_m) || fabs(height_m) > 1e7)
        return sarbp_error(SARBP_ERR_INVALID, "scene reference height %g m is outside "
                           "[-1e7, 1e7] m", height_m);
    if (!isfinite(heading_deg) || fabs(heading_deg) > 360)
        return sarbp_error(SARBP_ERR_INVALID, "scene heading %g is outside [-360, 360] degrees",
                           heading_deg);
    memset(r, 0, sizeof *r);
    r->lat_deg = lat_deg;
    r->lon_deg = lon_deg > 180 ? lon_deg - 360 : lon_deg;
    r->height_m = height_m;
    r->heading_deg = heading_deg;
    sarbp_geodetic_to_ecef(r->lat_deg, r->lon_deg, height_m, r->ecef);
    axes(r);
    return SARBP_OK;
}

sarbp_status sarbp_scene_ref_set_ecef(sarbp_scene_ref *r, const double ecef[3])
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(ecef[k]))
            return sarbp_error(SARBP_ERR_INVALID, "scene reference point is NaN or Inf");
    const double rr = sqrt(ecef[0] * ecef[0] + ecef[1] * ecef[1] + ecef[2] * ecef[2]);
    if (rr < 0.5 * SARBP_WGS84_A || rr > SARBP_WGS84_A + 1e7)
        return sarbp_error(SARBP_ERR_INVALID, "scene reference point (%g, %g, %g) m ECEF is %g km "
                           "from the Earth's centre: not near its surface", ecef[0], ecef[1],
                           ecef[2], rr / 1e3);
    double lat, lon, h;
    sarbp_ecef_to_geodetic(ecef, &lat, &lon, &h);
    SARBP_TRY(sarbp_scene_ref_set(r, lat, lon, h, 0));
    memcpy(r->ecef, ecef, sizeof r->ecef); /* the given point, not its round trip */
    return SARBP_OK;
}

sarbp_status sarbp_scene_ref_parse(const char *text, sarbp_scene_ref *r)
{
    double v[4] = {0, 0, 0, 0};
    int n = 0, ok = 1;
    const char *s = text;
    for (;;) {
        char *end;
        if (n == 4 || !*s || *s == ',' || *s == ' ') {
            ok = 0;
            break;
        }
        v[n] = strtod(s, &end);
        if (end == s || !isfinite(v[n])) {
            ok = 0;
            break;
        }
        n++;
        s = end;
        if (*s != ',') break;
        s++;
    }
    if (!ok || *s || n < 3)
        return sarbp_error(SARBP_ERR_INVALID, "scene reference '%s' is not LAT,LON,HEIGHT"
                           "[,HEADING] (degrees, degrees, metres, degrees)", text);
    return sarbp_scene_ref_set(r, v[0], v[1], v[2], v[3]);
}

void sarbp_scene_ref_format(const sarbp_scene_ref *r, char *buf, size_t n)
{
    /* 1e-11 degree is 1.1 mm at the equator: 12 decimals keep 0.1 mm */
    snprintf(buf, n, "%.12f,%.12f,%.4f,%.10f", r->lat_deg, r->lon_deg, r->height_m,
             r->heading_deg);
}

void sarbp_scene_to_ecef(const sarbp_scene_ref *r, const double xyz[3], double ecef[3])
{
    for (int k = 0; k < 3; k++)
        ecef[k] = r->ecef[k] + xyz[0] * r->ux[k] + xyz[1] * r->uy[k] + xyz[2] * r->uz[k];
}

void sarbp_ecef_to_scene(const sarbp_scene_ref *r, const double ecef[3], double xyz[3])
{
    const double d[3] = {ecef[0] - r->ecef[0], ecef[1] - r->ecef[1], ecef[2] - r->ecef[2]};
    sarbp_ecef_dir_to_scene(r, d, xyz);
}

void sarbp_scene_to_geodetic(const sarbp_scene_ref *r, const double xyz[3], double *lat_deg,
                             double *lon_deg, double *h)
{
    double e[3];
    sarbp_scene_to_ecef(r, xyz, e);
    sarbp_ecef_to_geodetic(e, lat_deg, lon_deg, h);
}

void sarbp_ecef_dir_to_scene(const sarbp_scene_ref *r, const double v[3], double out[3])
{
    const double x = v[0] * r->ux[0] + v[1] * r->ux[1] + v[2] * r->ux[2];
    const double y = v[0] * r->uy[0] + v[1] * r->uy[1] + v[2] * r->uy[2];
    const double z = v[0] * r->uz[0] + v[1] * r->uz[1] + v[2] * r->uz[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

void sarbp_scene_dir_to_ecef(const sarbp_scene_ref *r, const double v[3], double out[3])
{
    double e[3];
    for (int k = 0; k < 3; k++) e[k] = v[0] * r->ux[k] + v[1] * r->uy[k] + v[2] * r->uz[k];
    memcpy(out, e, sizeof e);
}

/* ---- the scene reference in image attributes ------------------------------- */

sarbp_status sarbp_image_set_collection(struct sarbp_image_s *img, const sarbp_collection *c)
{
    if (c->has_ref) {
        char buf[128];
        sarbp_scene_ref_format(&c->ref, buf, sizeof buf);
        SARBP_TRY(sarbp_image_set_attr(img, SARBP_ATTR_SCENE_REF, buf));
    }
    const struct { const char *key, *value; } s[] = {
        {"collector", c->collector}, {"core_name", c->core_name},
        {"polarisation", c->polarisation}, {"collect_start", c->collect_start},
        {"source_format", c->source_format},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (s[i].value[0]) SARBP_TRY(sarbp_image_set_attr(img, s[i].key, s[i].value));
    return SARBP_OK;
}

sarbp_status sarbp_image_scene_ref(const struct sarbp_image_s *img, const char *what,
                                   sarbp_scene_ref *r)
{
    const char *v = sarbp_image_get_attr(img, SARBP_ATTR_SCENE_REF);
    if (!v)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': a geolocated output needs the "
                           "scene's position on the Earth, and the input has none (give "
                           "--scene-ref LAT,LON,HEIGHT[,HEADING])", what);
    if (sarbp_scene_ref_parse(v, r) != SARBP_OK)
        return sarbp_error(SARBP_ERR_INVALID, "cannot write '%s': the image's scene_ref "
                           "attribute '%s' is not LAT,LON,HEIGHT,HEADING", what, v);
    return SARBP_OK;
}
