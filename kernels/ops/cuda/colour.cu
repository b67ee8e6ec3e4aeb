/* Colour conversions and stain separation on the GPU
 * (kernels/ops/cpu/colour.c). One thread per pixel; the arithmetic is
 * pixel_math.h's, as on the CPU, and argument checks are the CPU
 * backend's. Images reach the device through QC_IN and QC_OUT
 * (placement.cu). */
#include "kernels/ops/cuda/cuda_internal.h"

namespace {

bool
rgb_f_fits (const qc_rgb_t *src, const qc_fimg_t *dst)
{
    return qc_rgb_valid (src) && qc_fimg_valid (dst) && src->w == dst->w
        && src->h == dst->h;
}

/* what: 0 gray, 1 channel std */
__global__ void
k_rgb_to_1 (const uint8_t *rgb, size_t n, int what, float *out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint8_t *p = rgb + 3 * i;
    out[i] = (float) (what ? qc_px_channel_std (p[0], p[1], p[2])
                           : qc_px_gray (p[0], p[1], p[2]));
}

__global__ void
k_rgb_to_space (const uint8_t *rgb, size_t n, int space, float *c0,
                float *c1, float *c2)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint8_t *p = rgb + 3 * i;
    double v[3];
    qc_px_rgb_to_space (space, p[0], p[1], p[2], v);
    c0[i] = (float) v[0];
    c1[i] = (float) v[1];
    c2[i] = (float) v[2];
}

/* The optical densities travel by value: computed on the host with the
 * host's log, as the CPU's table is, so both backends use the same
 * numbers (the device's log may differ in the last bit). */
struct od_table {
    double od[256];
};

__global__ void
k_stains (const uint8_t *rgb, size_t n, qc_mat3_t m, od_table t, float *c0,
          float *c1, float *c2)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint8_t *p = rgb + 3 * i;
    double s[3];
    qc_px_stains_from_od (m, t.od[p[0]], t.od[p[1]], t.od[p[2]], s);
    c0[i] = (float) s[0];
    c1[i] = (float) s[1];
    c2[i] = (float) s[2];
}

/* gray or channel std */
int
rgb_to_1 (const qc_rgb_t *src, qc_fimg_t *dst, int what)
{
    if (!rgb_f_fits (src, dst) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_src, src);
    QC_OUT (sc, float, d_dst, dst);
    QC_LAUNCH (k_rgb_to_1, n, d_src, n, what, d_dst);
    QC_FINISH (sc);
    return 0;
}

} // namespace

extern "C" int
qc_cuda_rgb_to_gray (const qc_rgb_t *src, qc_fimg_t *dst)
{
    return rgb_to_1 (src, dst, 0);
}

extern "C" int
qc_cuda_rgb_channel_std (const qc_rgb_t *src, qc_fimg_t *dst)
{
    return rgb_to_1 (src, dst, 1);
}

extern "C" int
qc_cuda_rgb_to_space (const qc_rgb_t *src, qc_colorspace_t space,
                      qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2)
{
    if (!rgb_f_fits (src, c0) || !rgb_f_fits (src, c1) || !rgb_f_fits (src, c2)
        || (int) space < 0 || space >= QC_CS_COUNT || c0 == c1 || c1 == c2
        || c0 == c2 || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_src, src);
    QC_OUT (sc, float, d0, c0);
    QC_OUT (sc, float, d1, c1);
    QC_OUT (sc, float, d2, c2);
    QC_LAUNCH (k_rgb_to_space, n, d_src, n, (int) space, d0, d1, d2);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_separate_stains (const qc_rgb_t *src, const qc_mat3_t *m,
                         qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2)
{
    if (!m || !rgb_f_fits (src, c0) || !rgb_f_fits (src, c1)
        || !rgb_f_fits (src, c2) || c0 == c1 || c1 == c2 || c0 == c2
        || qc_cuda_begin ())
        return -1;
    od_table t;
    for (int v = 0; v < 256; v++)
        t.od[v] = qc_px_stain_od ((uint8_t) v);
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_src, src);
    QC_OUT (sc, float, d0, c0);
    QC_OUT (sc, float, d1, c1);
    QC_OUT (sc, float, d2, c2);
    QC_LAUNCH (k_stains, n, d_src, n, *m, t, d0, d1, d2);
    QC_FINISH (sc);
    return 0;
}
