/* test_geo.c - WGS-84 geodetic <-> ECEF <-> scene frame (sarbp/geo.h).
 *
 * Known values: the equator and pole by definition of the ellipsoid, and a
 * published point (SARkit's example CPHD, whose IARP is given both as LLH
 * and ECF); round trips over latitudes, longitudes and heights from the
 * Dead Sea to a GEO orbit, held to 1 mm (measured: below 1e-8 m); the scene
 * frame's axes, its heading, and the scene_ref image attribute. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sarbp/geo.h"

static double dist3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

static void test_known_values(void **state)
{
    (void)state;
    double e[3];
    sarbp_geodetic_to_ecef(0, 0, 0, e);
    const double eq[3] = {6378137.0, 0, 0};
    assert_true(dist3(e, eq) < 1e-6);
    sarbp_geodetic_to_ecef(90, 0, 0, e);
    const double pole[3] = {0, 0, 6356752.314245179}; /* b = a (1 - f) */
    assert_true(dist3(e, pole) < 1e-6);
    sarbp_geodetic_to_ecef(0, 90, 100, e);
    const double e90[3] = {0, 6378237.0, 0};
    assert_true(dist3(e, e90) < 1e-6);
    /* SARkit data/example-cphd-1.0.1.xml: SceneCoordinates/IARP LLH and ECF */
    sarbp_geodetic_to_ecef(34.043085000000005, -118.267202, 35.0, e);
    const double iarp[3] = {-2505550.4775087754, -4659700.31181321, 3550427.2120698043};
    const double d = dist3(e, iarp);
    print_message("SARkit IARP LLH -> ECF: %.3g m from the published ECF\n", d);
    assert_true(d < 1e-3);
    double lat, lon, h;
    sarbp_ecef_to_geodetic(iarp, &lat, &lon, &h);
    assert_true(fabs(lat - 34.043085) < 1e-9 && fabs(lon + 118.267202) < 1e-9 &&
                fabs(h - 35.0) < 1e-3);
    sarbp_ecef_to_geodetic(pole, &lat, &lon, &h);
    assert_true(fabs(lat - 90) < 1e-12 && fabs(h) < 1e-6);
}

static void test_round_trips(void **state)
{
    (void)state;
    const double hs[] = {-430, 0, 35, 8848, 1e4, 5e5, 3.6e6, 1e7};
    double worst = 0, worst_scene = 0;
    for (double lat = -90; lat <= 90; lat += 7.5)
        for (double lon = -180; lon < 180; lon += 22.5)
            for (size_t k = 0; k < sizeof hs / sizeof hs[0]; k++) {
                double e[3], e2[3], la, lo, h;
                sarbp_geodetic_to_ecef(lat, lon, hs[k], e);
                sarbp_ecef_to_geodetic(e, &la, &lo, &h);
                sarbp_geodetic_to_ecef(la, lo, h, e2);
                double d = dist3(e, e2);
                if (d > worst) worst = d;
                assert_true(fabs(h - hs[k]) < 1e-3);
                if (fabs(lat) < 89.9) assert_true(fabs(la - lat) < 1e-10);

                sarbp_scene_ref r;
                tu_ok(sarbp_scene_ref_set(&r, lat, lon, hs[k] < 1e4 ? hs[k] : 0, lon / 3));
                const double p[3] = {12345.678, -2345.5, 987.25};
                double pe[3], back[3];
                sarbp_scene_to_ecef(&r, p, pe);
                sarbp_ecef_to_scene(&r, pe, back);
                d = dist3(p, back);
                if (d > worst_scene) worst_scene = d;
            }
    print_message("round trips: geodetic->ECEF->geodetic %.3g m, scene->ECEF->scene %.3g m "
                  "(bar 1e-3 m)\n", worst, worst_scene);
    assert_true(worst < 1e-3);
    assert_true(worst_scene < 1e-3);
}

static void test_axes(void **state)
{
    (void)state;
    sarbp_scene_ref r;
    tu_ok(sarbp_scene_ref_set(&r, 0, 0, 0, 0));
    const double x[3] = {0, 1, 0}, y[3] = {0, 0, 1}, z[3] = {1, 0, 0};
    assert_true(dist3(r.ux, x) < 1e-15 && dist3(r.uy, y) < 1e-15 && dist3(r.uz, z) < 1e-15);
    /* heading 90: +y points east, +x south */
    tu_ok(sarbp_scene_ref_set(&r, 0, 0, 0, 90));
    const double s[3] = {0, 0, -1};
    assert_true(dist3(r.uy, x) < 1e-15 && dist3(r.ux, s) < 1e-15);
    /* right-handed and orthonormal anywhere */
    tu_ok(sarbp_scene_ref_set(&r, 52.3, 4.9, 12, 33));
    const double c[3] = {r.ux[1] * r.uy[2] - r.ux[2] * r.uy[1], r.ux[2] * r.uy[0] - r.ux[0] * r.uy[2],
                         r.ux[0] * r.uy[1] - r.ux[1] * r.uy[0]};
    assert_true(dist3(c, r.uz) < 1e-15);
    /* a point 100 m north of the SRP is 100 m north on the ellipsoid's
     * tangent plane: its latitude grows by about 100 / M (meridian radius) */
    tu_ok(sarbp_scene_ref_set(&r, 52.3, 4.9, 12, 0));
    const double north[3] = {0, 100, 0};
    double lat, lon, h;
    sarbp_scene_to_geodetic(&r, north, &lat, &lon, &h);
    assert_true(lat > 52.3 + 0.00089 && lat < 52.3 + 0.00091 && fabs(lon - 4.9) < 1e-12);
    assert_true(h > 12 && h < 12.01); /* the plane rises above the curved Earth */
}

static void test_parse_and_attrs(void **state)
{
    (void)state;
    sarbp_scene_ref r, r2;
    tu_ok(sarbp_scene_ref_parse("34.5,-118.25,35", &r));
    assert_true(r.lat_deg == 34.5 && r.lon_deg == -118.25 && r.height_m == 35 &&
                r.heading_deg == 0);
    tu_ok(sarbp_scene_ref_parse("-12.5,200,-3,45.5", &r));
    assert_true(r.lon_deg == -160 && r.heading_deg == 45.5);
    const char *bad[] = {"", "1,2", "1,2,3,4,5", "91,0,0", "0,0,1e8", "a,b,c", "1,2,3,",
                         "1,,3", "0,0,nan", "0,0,0,400", " 1,2,3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sarbp_scene_ref_parse(bad[i], &r2), SARBP_ERR_INVALID);
        assert_non_null(strstr(sarbp_error_detail(), "scene"));
    }
    char buf[128];
    tu_ok(sarbp_scene_ref_set(&r, 34.043085000000005, -118.267202, 35.0, 12.25));
    sarbp_scene_ref_format(&r, buf, sizeof buf);
    tu_ok(sarbp_scene_ref_parse(buf, &r2));
    assert_true(dist3(r.ecef, r2.ecef) < 1e-3);

    sarbp_grid g = {4, 3, 1, 1, 0, 0, 0, 0, 0, NULL, 0};
    sarbp_image *img;
    tu_ok(sarbp_image_alloc(&g, &img));
    assert_int_equal(sarbp_image_scene_ref(img, "x.kmz", &r2), SARBP_ERR_INVALID);
    assert_non_null(strstr(sarbp_error_detail(), "--scene-ref"));
    assert_non_null(strstr(sarbp_error_detail(), "'x.kmz'"));
    sarbp_collection c;
    memset(&c, 0, sizeof c);
    c.has_ref = 1;
    c.ref = r;
    snprintf(c.polarisation, sizeof c.polarisation, "H:H");
    tu_ok(sarbp_image_set_collection(img, &c));
    tu_ok(sarbp_image_scene_ref(img, "x.kmz", &r2));
    assert_true(dist3(r.ecef, r2.ecef) < 1e-3 && fabs(r2.heading_deg - 12.25) < 1e-9);
    assert_string_equal(sarbp_image_get_attr(img, "polarisation"), "H:H");
    assert_null(sarbp_image_get_attr(img, "collector"));
    sarbp_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_parse_and_attrs),
    };
    return tu_run_tests(tests);
}
