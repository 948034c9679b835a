/* cphd_seeds.c - CPHD seeds made at fuzzing time with the tests' CPHD
 * writer (tests/cphd_gen.c), so that they follow it as it changes:
 *
 *   build-fuzz/fuzz/cphd_seeds DIR
 *
 * writes into DIR (which must exist):
 *   toa_CF8.cphd    a TOA-domain file (range-compressed vectors);
 *   toa_CI2.cphd    the same in 16-bit integers;
 *   many_attrs.cphd an XML element with 2,000 attributes (real CPHD XML has
 *                   a handful an element; the reader's limits are there to
 *                   be found), small enough that each run of the harness
 *                   stays fast.
 * scripts/fuzz.sh runs it for phd_cphd and passes DIR as a second seed
 * directory; nothing here is committed. Exit 0, or 1 with a message.
 * tu_write_cphd's checks are cmocka assertions: outside a test they end
 * the program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cphd_gen.h"
#include "sarbp/sarbp.h"

static void ok(sarbp_status s, const char *what)
{
    if (s != SARBP_OK) {
        fprintf(stderr, "cphd_seeds: %s: %s\n", what, sarbp_error_detail());
        exit(1);
    }
}

static sarbp_phd *scene(size_t npulses)
{
    const sarbp_target t[] = {{0, 0, 0, 1}, {3.5, -2.25, 0, 0.7}};
    sarbp_sim_params sp;
    sarbp_sim_defaults(&sp, SARBP_GEOM_CIRCULAR, SARBP_DOMAIN_FREQ);
    sp.npulses = npulses;
    sp.nsamples = 32;
    sp.targets = (sarbp_target *)t;
    sp.ntargets = 2;
    sarbp_phd *p;
    ok(sarbp_simulate(&sp, &p), "simulate");
    return p;
}

static void write_one(const char *dir, const char *name, struct cphd_gen *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sarbp_phd *p = scene(8);
    sarbp_scene_ref r;
    ok(sarbp_scene_ref_set(&r, 34.043085, -118.267202, 35.0, 0), "scene reference");
    tu_write_cphd(path, p, &r, g);
    sarbp_phd_free(p);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cphd_seeds DIR\n");
        return 2;
    }
    struct cphd_gen toa = {.fmt = "CF8", .toa_samples = 64};
    write_one(argv[1], "toa_CF8.cphd", &toa);
    struct cphd_gen toa2 = {.fmt = "CI2", .toa_samples = 48};
    write_one(argv[1], "toa_CI2.cphd", &toa2);

    enum { NATTR = 2000 };
    const char *open_tag = "<CollectorName>";
    char *tag = malloc(NATTR * 24 + 64);
    if (!tag) return 1;
    size_t len = (size_t)sprintf(tag, "<CollectorName");
    for (int i = 0; i < NATTR; i++) len += (size_t)sprintf(tag + len, " a%d=\"%d\"", i, i);
    strcpy(tag + len, ">");
    struct cphd_gen many = {.fmt = "CF8", .from = {open_tag}, .to = {tag}};
    write_one(argv[1], "many_attrs.cphd", &many);
    free(tag);
    return 0;
}
