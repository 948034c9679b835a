/* image.c - complex images in memory: allocation, attributes, format names.
 *
 * The file formats live in image_write.c and image_read.c; this file only
 * owns the sarbp_image object. */
#include "sarbp/image.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>


sarbp_status sarbp_image_alloc(const sarbp_grid *g, sarbp_image **out)
{
    if (!out) return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_alloc: no output pointer");
    *out = NULL;
    if (!g) return sarbp_error(SARBP_ERR_INVALID, "sarbp_image_alloc: no grid");
    SARBP_TRY(sarbp_grid_validate(g));
    sarbp_image *img = calloc(1, sizeof *img);
    if (!img) return sarbp_error(SARBP_ERR_NOMEM, "cannot allocate an image");
    img->data = calloc(g->nx * g->ny, sizeof *img->data);
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

void sarbp_image_free(sarbp_image *img)
{
    if (!img) return;
    free(img->data);
    free(img);
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

sarbp_image_format sarbp_image_format_from_name(const char *path)
{
    if (!path) return SARBP_IMG_UNKNOWN;
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot) return SARBP_IMG_UNKNOWN;
    if (!strcasecmp(dot, ".h5") || !strcasecmp(dot, ".hdf5")) return SARBP_IMG_H5;
    if (!strcasecmp(dot, ".npy")) return SARBP_IMG_NPY;
    if (!strcasecmp(dot, ".png")) return SARBP_IMG_PNG;
    if (!strcasecmp(dot, ".nitf") || !strcasecmp(dot, ".ntf") || !strcasecmp(dot, ".sicd"))
        return SARBP_IMG_SICD;
    if (!strcasecmp(dot, ".tif") || !strcasecmp(dot, ".tiff")) return SARBP_IMG_GEOTIFF;
    if (!strcasecmp(dot, ".kmz")) return SARBP_IMG_KMZ;
    return SARBP_IMG_UNKNOWN;
}

int sarbp_image_format_is_geo(sarbp_image_format f)
{
    return f == SARBP_IMG_SICD || f == SARBP_IMG_GEOTIFF || f == SARBP_IMG_KMZ;
}
