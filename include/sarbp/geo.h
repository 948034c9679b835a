/* sarbp/geo.h - where the scene is on the Earth.
 *
 * sarbp forms images in a scene frame: right-handed, metres, z up, origin
 * at the scene reference point (SRP, the motion-compensation point). This
 * header ties that frame to the Earth so geolocated outputs (SICD, GeoTIFF,
 * KMZ) can say where each pixel is:
 *  - WGS-84 geodetic (latitude, longitude in degrees, height above the
 *    ellipsoid in metres) <-> ECEF (earth-centred, earth-fixed, metres);
 *  - the scene frame: east-north-up at the SRP, optionally turned about
 *    the vertical by a heading (the direction of the frame's +y axis in
 *    degrees clockwise from true north; 0: x east, y north).
 * Conversions are FP64; round trips geodetic -> ECEF -> geodetic and scene
 * -> ECEF -> scene hold to well under a millimetre for heights from -1e4 m
 * to 1e7 m (tests/test_geo.c). All functions are reentrant. */
#ifndef SARBP_GEO_H
#define SARBP_GEO_H

#include <stddef.h>
#include "sarbp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SARBP_WGS84_A 6378137.0               /* semi-major axis (m) */
#define SARBP_WGS84_F (1.0 / 298.257223563)   /* flattening */

/* lat, lon in degrees, h in metres above the ellipsoid -> ecef[3] (m). */
void sarbp_geodetic_to_ecef(double lat_deg, double lon_deg, double h, double ecef[3]);
/* ecef[3] (m) -> lat, lon (deg, lon in (-180, 180]), h (m). Iterative,
 * converged to 1e-15 rad; at the poles lon = 0. */
void sarbp_ecef_to_geodetic(const double ecef[3], double *lat_deg, double *lon_deg, double *h);

/* The scene reference: the SRP and the scene frame's axes in ECEF. */
typedef struct {
    double lat_deg, lon_deg, height_m; /* SRP, WGS-84 */
    double heading_deg;                /* scene +y, clockwise from north */
    double ecef[3];                    /* SRP in ECEF (m) */
    double ux[3], uy[3], uz[3];        /* ECEF unit vectors of scene x, y, z */
} sarbp_scene_ref;

/* Fills r from the SRP and heading. SARBP_ERR_INVALID when lat is outside
 * [-90, 90], lon outside [-180, 360], |h| > 1e7 m, |heading| > 360, or any
 * value is not finite. */
sarbp_status sarbp_scene_ref_set(sarbp_scene_ref *r, double lat_deg, double lon_deg,
                                 double height_m, double heading_deg);
/* The same from an SRP given in ECEF (heading 0: east-north-up). */
sarbp_status sarbp_scene_ref_set_ecef(sarbp_scene_ref *r, const double ecef[3]);

/* Parses "LAT,LON,HEIGHT[,HEADING]" (degrees, metres, degrees). */
sarbp_status sarbp_scene_ref_parse(const char *text, sarbp_scene_ref *r);
/* Writes "LAT,LON,HEIGHT,HEADING" with enough digits to round-trip below
 * a millimetre into buf[n]; the form sarbp_scene_ref_parse reads. */
void sarbp_scene_ref_format(const sarbp_scene_ref *r, char *buf, size_t n);

/* Scene frame (x, y, z in m) <-> ECEF; and scene frame -> geodetic. */
void sarbp_scene_to_ecef(const sarbp_scene_ref *r, const double xyz[3], double ecef[3]);
void sarbp_ecef_to_scene(const sarbp_scene_ref *r, const double ecef[3], double xyz[3]);
void sarbp_scene_to_geodetic(const sarbp_scene_ref *r, const double xyz[3], double *lat_deg,
                             double *lon_deg, double *h);
/* An ECEF direction (velocity, unit vector) -> scene axes, and back. */
void sarbp_ecef_dir_to_scene(const sarbp_scene_ref *r, const double v[3], double out[3]);
void sarbp_scene_dir_to_ecef(const sarbp_scene_ref *r, const double v[3], double out[3]);

/* What is known about the collection beyond the phase history itself.
 * Strings are empty when unknown. */
typedef struct {
    int has_ref;              /* 1 when ref holds the scene reference */
    sarbp_scene_ref ref;
    char collector[64];       /* collector (platform, sensor) name */
    char core_name[128];      /* collection identifier */
    char polarisation[32];    /* "H:V" (transmit:receive), "" unknown */
    char collect_start[40];   /* ISO 8601 UTC of time 0 of the pulse times */
    char source_format[32];   /* "CPHD 1.0.1", ... ("" for sarbp's own formats) */
} sarbp_collection;

/* The image attributes (sarbp/image.h) that record a scene reference:
 * "scene_ref" = sarbp_scene_ref_format(), and the collection's strings. */
#define SARBP_ATTR_SCENE_REF "scene_ref"

struct sarbp_image_s;
/* Records c in img's attributes: scene_ref (when c->has_ref), collector,
 * core_name, polarisation, collect_start (when not empty). */
sarbp_status sarbp_image_set_collection(struct sarbp_image_s *img, const sarbp_collection *c);
/* Reads img's scene_ref attribute back. SARBP_ERR_INVALID, saying how to
 * give one (--scene-ref), when the image has none or it does not parse;
 * what names the output that needs it, for the message. */
sarbp_status sarbp_image_scene_ref(const struct sarbp_image_s *img, const char *what,
                                   sarbp_scene_ref *r);

#ifdef __cplusplus
}
#endif
#endif
