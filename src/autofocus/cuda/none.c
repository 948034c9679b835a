/* autofocus/cuda/none.c - the autofocus engine on a GPU in a build without
 * CUDA: never available, and says so. */
#include "autofocus/engine.h"

sarbp_status af_engine_cuda_create(const sarbp_profiles *pr, const af_pixels *px, int device,
                                   af_engine **out)
{
    (void)pr, (void)px, (void)device;
    *out = NULL;
    return sarbp_error(SARBP_ERR_UNSUPPORTED, "this sarbp was built without CUDA: autofocus runs on the cpu");
}
