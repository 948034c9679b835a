/* fuzz_image.c - libFuzzer harness for sarbp_image_read: the input is an
 * image file, sarbp's HDF5 layout (fuzz_image_h5) or .npy (fuzz_image_npy);
 * FUZZ_SUFFIX picks which (the reader goes by the name's suffix). An image
 * that opens has every pixel and attribute touched. */
#include "fuzz_common.h"

#include "sarbp/image.h"

#ifndef FUZZ_SUFFIX
#define FUZZ_SUFFIX ".h5"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init(FUZZ_SUFFIX);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size);
    sarbp_image *img = NULL;
    if (sarbp_image_read(path, &img) == SARBP_OK && img) {
        volatile double sink = 0;
        const size_t n = img->grid.nx * img->grid.ny;
        for (size_t i = 0; i < n; i++) sink += img->data[i].re + img->data[i].im;
        for (size_t i = 0; i < img->nattrs; i++)
            sink += (double)strlen(img->attrs[i].key) + (double)strlen(img->attrs[i].value);
        (void)sink;
    }
    sarbp_image_free(img);
    sarbp_error_clear();
    fuzz_check_closed();
    return 0;
}
