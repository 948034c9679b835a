/* image.c - complex images in memory: allocation, attributes.
 *
 * The file formats live in src/io (image_write.c, with the table of output
 * formats and sarbp_image_format_from_name, and image_read.c); this file
 * only owns the sarbp_image object. */
#include "sarbp/image.h"

#include <stdlib.h>
#include <string.h>


static sarbp_status image_alloc(const sarbp_grid *g, int zero, sarbp_image **out)
{
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_alloc: no output pointer");
    *out = NULL;
    if (!g) return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_alloc: no grid");
    SARBP_TRY(sarbp_grid_validate(g));
    sarbp_image *img = calloc(1, sizeof *img);
    if (!img) return sarbp_error(SARBP_ERR_NOMEM, "cannot allocate an image");
    img->data = zero ? calloc(g->nx * g->ny, sizeof *img->data)
                     : malloc(g->nx * g->ny * sizeof *img->data); /* grid_validate bounds it */
    if (!img->data) {
        free(img);
        return sarbp_error(SARBP_ERR_NOMEM, "cannot allocate a %zu x %zu image (%.1f MiB)",
                           g->nx, g->ny,
                           (double)g->nx * (double)g->ny * sizeof(sarbp_c32) / 1048576.0);
    }
    img->grid = *g;
    img->has_grid_coords = 1;
    *out = img;
    return SARBP_OK;
}

sarbp_status sarbp_image_alloc(const sarbp_grid *g, sarbp_image **out)
{
    return image_alloc(g, 1, out);
}

sarbp_status sarbp_image_alloc_unset(const sarbp_grid *g, sarbp_image **out)
{
    return image_alloc(g, 0, out);
}

void sarbp_image_free(sarbp_image *img)
{
    if (!img) return;
    free(img->data);
    free(img->af_phase);
    free(img->af_range);
    free(img);
}

sarbp_status sarbp_image_set_autofocus(sarbp_image *img, const double *phase, size_t n)
{
    double *v = NULL;
    if (n && !(v = malloc(n * sizeof *v)))
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu autofocus phases", n);
    if (n) memcpy(v, phase, n * sizeof *v);
    free(img->af_phase);
    img->af_phase = v;
    img->af_npulses = n;
    if (!n) {
        free(img->af_range);
        img->af_range = NULL;
    }
    return SARBP_OK;
}

sarbp_status sarbp_image_set_autofocus_range(sarbp_image *img, const double *range)
{
    const size_t n = img->af_npulses;
    double *v = NULL;
    if (range && n && !(v = malloc(n * sizeof *v)))
        return sarbp_error(SARBP_ERR_NOMEM, "out of memory for %zu autofocus ranges", n);
    if (v) memcpy(v, range, n * sizeof *v);
    free(img->af_range);
    img->af_range = v;
    return SARBP_OK;
}

/* Copies src into dst[n], truncating, always NUL-terminated. */
static void copy_trunc(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

sarbp_status sarbp_image_set_attr(sarbp_image *img, const char *key, const char *value)
{
    if (!img || !key || !*key || !value)
        return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_set_attr: missing image, key or value");
    char k[sizeof img->attrs[0].key];
    copy_trunc(k, sizeof k, key);
    sarbp_attr *a = NULL;
    for (size_t i = 0; i < img->nattrs && !a; i++)
        if (!strcmp(img->attrs[i].key, k)) a = &img->attrs[i];
    if (!a) {
        if (img->nattrs >= SARBP_IMAGE_MAX_ATTRS)
            return sarbp_error(SARBP_ERR_INVALID, "cannot set image attribute '%s': table full (%d)",
                               key, SARBP_IMAGE_MAX_ATTRS);
        a = &img->attrs[img->nattrs++];
        memcpy(a->key, k, sizeof k);
    }
    copy_trunc(a->value, sizeof a->value, value);
    return SARBP_OK;
}

const char *sarbp_image_get_attr(const sarbp_image *img, const char *key)
{
    if (!img || !key) return NULL;
    for (size_t i = 0; i < img->nattrs; i++)
        if (!strcmp(img->attrs[i].key, key)) return img->attrs[i].value;
    return NULL;
}

