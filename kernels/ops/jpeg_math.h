/* What libjpeg does to a JPEG tile's decoded components after its IDCT,
 * written once for the CPU backend (kernels/ops/cpu/jpeg_tiles.c, whose
 * components come from libjpeg's raw output) and the CUDA backend
 * (kernels/ops/cuda/jpeg_tiles.cu, whose come from nvJPEG), so that a
 * tile decoded on either gives libtiff's pixels wherever the IDCTs
 * agree: tests/unit/test_jpeg_tiles.c checks it byte for byte on the
 * CPU, against libjpeg's own decoding of every sampling below.
 *
 * The rules are libjpeg-turbo 2.1's (jdsample.c, jdcolor.c, jdmainct.c),
 * for a decoder with its defaults, as libtiff runs it:
 *  - "fancy" upsampling: a component at half the width (2x1) is the
 *    triangle filter 3/4 nearer + 1/4 further sample, rounding up and
 *    down at alternate pixels; half the height (1x2) the same
 *    vertically; half both (2x2) both at once (9/16, 3/16, 3/16, 1/16);
 *    a component 2 samples wide or less is replicated instead. Samples
 *    past the component's edges are its edge samples (libjpeg's context
 *    rows at the top and bottom of the image are copies of the edge
 *    row).
 *  - YCbCr to RGB in 16-bit fixed point with libjpeg's constants,
 *    clamped to 0..255.
 * Other samplings (3x, 4x, or a component finer than another in one
 * direction and coarser in the other) are refused by qc_jpeg_sampling_ok:
 * the host decodes those tiles (ops.h's decode_jpeg).
 *
 * Rules of pixel_math.h: no static data, no allocation, no libc. */
#ifndef QC_JPEG_MATH_H
#define QC_JPEG_MATH_H

#include <stdint.h>

#include "kernels/image/pixel_math.h"   /* QC_HD */

/* A tile's three components as decoded (before upsampling): component
 * c's samples are px[c][y * stride[c] + x] for x < w[c], y < h[c] (w, h:
 * libjpeg's downsampled_width and _height, the image's size times the
 * component's sampling over the largest), and he[c] x ve[c] output
 * pixels share one sample. */
typedef struct qc_jpeg_planes {
    const uint8_t *px[3];
    int stride[3];
    int w[3], h[3];
    int he[3], ve[3];
} qc_jpeg_planes_t;

/* 1 when a component expanded he x ve is one of the upsamplings above. */
QC_HD int
qc_jpeg_sampling_ok (int he, int ve)
{
    return (he == 1 || he == 2) && (ve == 1 || ve == 2);
}

/* Component sample p (w x h, stride) expanded he x ve, at output pixel
 * (x, y): libjpeg's upsampled value. */
QC_HD int
qc_jpeg_upsampled (const uint8_t *p, int stride, int w, int h, int he,
                   int ve, int x, int y)
{
    if (he == 1 && ve == 1)
        return p[(long) y * stride + x];
    if (he == 2 && w <= 2)              /* libjpeg's plain replication */
        return p[(long) (ve == 2 ? y >> 1 : y) * stride + (x >> 1)];
    if (he == 2 && ve == 1) {
        const uint8_t *r = p + (long) y * stride;
        int i = x >> 1;
        if (!(x & 1))
            return i == 0 ? r[0] : (3 * r[i] + r[i - 1] + 1) >> 2;
        return i == w - 1 ? r[i] : (3 * r[i] + r[i + 1] + 2) >> 2;
    }
    /* ve == 2: the nearer row and the next nearer, clamped at the edges */
    int i = y >> 1;
    int n = (y & 1) ? (i + 1 < h ? i + 1 : h - 1) : (i > 0 ? i - 1 : 0);
    const uint8_t *r0 = p + (long) i * stride, *r1 = p + (long) n * stride;
    if (he == 1)
        return (3 * r0[x] + r1[x] + ((y & 1) ? 2 : 1)) >> 2;
    int j = x >> 1;
    int here = 3 * r0[j] + r1[j];
    if (!(x & 1)) {
        if (j == 0)
            return (here * 4 + 8) >> 4;
        return (here * 3 + 3 * r0[j - 1] + r1[j - 1] + 8) >> 4;
    }
    if (j == w - 1)
        return (here * 4 + 7) >> 4;
    return (here * 3 + 3 * r0[j + 1] + r1[j + 1] + 7) >> 4;
}

QC_HD uint8_t
qc_jpeg_clamp (int v)
{
    return (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* libjpeg's YCbCr to RGB (jdcolor.c: FIX(x) is x * 65536 rounded, and
 * each term rounds once, by adding half before the shift). */
QC_HD void
qc_jpeg_ycc_rgb (int y, int cb, int cr, uint8_t *out)
{
    const int32_t half = (int32_t) 1 << 15;
    const int32_t cr_r = 91881, cb_b = 116130;  /* FIX(1.40200), FIX(1.77200) */
    const int32_t cr_g = 46802, cb_g = 22554;   /* FIX(0.71414), FIX(0.34414) */
    int32_t b0 = cb - 128, r0 = cr - 128;
    /* >> of a negative value: arithmetic on every compiler this builds
       with, as libjpeg's RIGHT_SHIFT assumes */
    out[0] = qc_jpeg_clamp (y + (int) ((cr_r * r0 + half) >> 16));
    out[1] = qc_jpeg_clamp (y + (int) ((-cb_g * b0 + half - cr_g * r0) >> 16));
    out[2] = qc_jpeg_clamp (y + (int) ((cb_b * b0 + half) >> 16));
}

/* The RGB pixel at (x, y) of the tile whose components are pl. */
QC_HD void
qc_jpeg_pixel (const qc_jpeg_planes_t *pl, int ycbcr, int x, int y,
               uint8_t *out)
{
    int v[3];
    for (int c = 0; c < 3; c++)
        v[c] = qc_jpeg_upsampled (pl->px[c], pl->stride[c], pl->w[c],
                                  pl->h[c], pl->he[c], pl->ve[c], x, y);
    if (ycbcr)
        qc_jpeg_ycc_rgb (v[0], v[1], v[2], out);
    else
        for (int c = 0; c < 3; c++)
            out[c] = (uint8_t) v[c];
}

#endif
