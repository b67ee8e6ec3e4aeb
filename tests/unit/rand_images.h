/* Random test images for the kernel tests (test_kernel_math,
 * test_cuda_equiv): a fixed xorshift stream, so every run sees the same
 * images. Header of static functions. */
#ifndef QC_TEST_RAND_IMAGES_H
#define QC_TEST_RAND_IMAGES_H

#include <stdint.h>

#include "kernels/image/image.h"

static uint64_t rng = 88172645463325252ull;

static uint32_t
rnd (void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t) (rng >> 11);
}

static qc_rgb_t *
rand_rgb (int w, int h)
{
    qc_rgb_t *img = qc_rgb_new (w, h);
    for (size_t i = 0; img && i < qc_npix (w, h) * 3; i++)
        img->px[i] = (uint8_t) rnd ();
    return img;
}

/* Smooth-ish floats in [0, 1) with some exact repeats (histogram edges). */
static qc_fimg_t *
rand_fimg (int w, int h)
{
    qc_fimg_t *img = qc_fimg_new (w, h);
    for (size_t i = 0; img && i < qc_npix (w, h); i++)
        img->px[i] = rnd () % 5 == 0 ? (float) (rnd () % 8) / 8.0f
                                     : (float) (rnd () % 1000000) / 1e6f;
    return img;
}

/* Blobs, so that morphology has shapes to work on. */
static qc_mask_t *
rand_mask (int w, int h, int density)
{
    qc_mask_t *m = qc_mask_new (w, h);
    for (size_t i = 0; m && i < qc_npix (w, h); i++)
        m->px[i] = (uint8_t) ((int) (rnd () % 100) < density);
    return m;
}

#endif
