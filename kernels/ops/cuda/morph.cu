/* Binary morphology on the GPU (kernels/ops/cpu/morph.c).
 *
 * Disk: skimage's disk (r) is the union over column offsets dx of the
 * vertical runs |dy| <= isqrt (r^2 - dx^2). With per-column prefix counts
 * of the seeds, a pixel of the dilation tests 2r + 1 runs, each in O(1),
 * exact (the CPU thresholds an exact distance transform: same pixels).
 * Erosion is the complement of the dilation of the complement (outside
 * counts as set for erosion and unset for dilation, as skimage does).
 * Rectangle: any / all over the clipped window, rows then columns, each
 * O(k) per pixel.
 * The images reach the device through QC_IN and QC_OUT (placement.cu);
 * the pass between two (open, close) goes to a scope buffer, never to
 * the input's bytes. */
#include <stdlib.h>

#include "kernels/ops/cuda/cuda_internal.h"

namespace {

bool
mask_pair_ok (const qc_mask_t *src, const qc_mask_t *dst)
{
    return qc_mask_valid (src) && qc_mask_valid (dst) && src->w == dst->w
        && src->h == dst->h;
}

/* c[(y + 1) w + x] = seeds in column x, rows 0..y; seed = (px != 0) ^ inv */
__global__ void
k_colprefix (const uint8_t *px, int w, int h, int inv, int32_t *c)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w)
        return;
    int32_t s = 0;
    c[x] = 0;
    for (int y = 0; y < h; y++) {
        s += (px[(size_t) y * w + x] != 0) ^ inv;
        c[(size_t) (y + 1) * w + x] = s;
    }
}

__global__ void
k_disk (const int32_t *c, int w, int h, const int32_t *hh, int r, int out_inv,
        uint8_t *out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    int x = (int) (i % w), y = (int) (i / w);
    int hit = 0;
    int dx0 = x - r < 0 ? -x : -r, dx1 = x + r >= w ? w - 1 - x : r;
    for (int dx = dx0; dx <= dx1 && !hit; dx++) {
        int k = hh[dx + r];
        int y0 = y - k < 0 ? 0 : y - k, y1 = y + k + 1 > h ? h : y + k + 1;
        int xx = x + dx;
        hit = c[(size_t) y1 * w + xx] - c[(size_t) y0 * w + xx] > 0;
    }
    out[i] = (uint8_t) (hit ^ out_inv);
}

/* One disk pass on the device: out = (seed within r) ^ out_inv. */
int
disk_pass (const uint8_t *d_in, int w, int h, int seed_inv, const int32_t *d_hh,
           int r, int out_inv, int32_t *d_c, uint8_t *d_out)
{
    k_colprefix<<<qc_cuda_blocks ((size_t) w), 256, 0, QC_STREAM>>> (
        d_in, w, h, seed_inv, d_c);
    QC_CK_LAUNCH ();
    size_t n = qc_npix (w, h);
    QC_LAUNCH (k_disk, n, d_c, w, h, d_hh, r, out_inv, d_out);
    return 0;
}

/* axis 0 rows, 1 columns: any (dilate) / all (erode) of the clipped
 * window [p - (k - 1) / 2, p + k / 2]. */
__global__ void
k_rect (const uint8_t *src, int w, int h, int k, int axis, int dilate,
        uint8_t *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    int x = (int) (i % w), y = (int) (i / w);
    int p = axis ? y : x, n = axis ? h : w;
    int lo = p - (k - 1) / 2, hi = p + k / 2;
    lo = lo < 0 ? 0 : lo;
    hi = hi >= n ? n - 1 : hi;
    int any = 0, all = 1;
    for (int q = lo; q <= hi; q++) {
        int v = (axis ? src[(size_t) q * w + x] : src[(size_t) y * w + q]) != 0;
        any |= v;
        all &= v;
    }
    dst[i] = (uint8_t) (dilate ? any : all);
}

int
rect_pass (const uint8_t *d_in, int w, int h, int kw, int kh, int dilate,
           uint8_t *d_tmp, uint8_t *d_out)
{
    size_t n = qc_npix (w, h);
    QC_LAUNCH (k_rect, n, d_in, w, h, kw, 0, dilate, d_tmp);
    QC_LAUNCH (k_rect, n, d_tmp, w, h, kh, 1, dilate, d_out);
    return 0;
}

__global__ void
k_normalise (const uint8_t *src, size_t n, uint8_t *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i] != 0;
}

} // namespace

extern "C" int
qc_cuda_morph_disk (const qc_mask_t *src, int radius, qc_morph_t op,
                    qc_mask_t *dst)
{
    if (!mask_pair_ok (src, dst) || radius < 0 || radius > QC_IMAGE_MAX_DIM
        || (int) op < QC_MORPH_ERODE || op > QC_MORPH_CLOSE || qc_cuda_begin ())
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_s, src);
    QC_OUT (sc, uint8_t, d_b, dst);
    if (radius == 0) {
        QC_LAUNCH (k_normalise, n, d_s, n, d_b);
    } else {
        QC_GET (sc, int32_t, d_c, ((size_t) h + 1) * w);
        QC_GET (sc, int32_t, d_hh, 2 * (size_t) radius + 1);
        uint8_t *d_a = NULL;    /* the first of two passes */
        if (op == QC_MORPH_OPEN || op == QC_MORPH_CLOSE) {
            if (!(d_a = sc.get<uint8_t> (n)))
                return -1;
        }
        int32_t *hh = (int32_t *) malloc ((2 * (size_t) radius + 1) * sizeof *hh);
        if (!hh)
            return -1;
        long r2 = (long) radius * radius;
        for (long dx = -radius; dx <= radius; dx++)
            hh[dx + radius] = (int32_t) qc_px_isqrt (r2 - dx * dx);
        /* synchronised before hh is freed */
        cudaError_t e = cudaMemcpyAsync (d_hh, hh, (2 * (size_t) radius + 1) * sizeof *hh,
                                         cudaMemcpyHostToDevice, QC_STREAM);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize (QC_STREAM);
        free (hh);
        QC_CK (e);
        int rc = 0;
        switch (op) {
        case QC_MORPH_DILATE:
            rc = disk_pass (d_s, w, h, 0, d_hh, radius, 0, d_c, d_b);
            break;
        case QC_MORPH_ERODE:
            rc = disk_pass (d_s, w, h, 1, d_hh, radius, 1, d_c, d_b);
            break;
        case QC_MORPH_OPEN:
            rc = disk_pass (d_s, w, h, 1, d_hh, radius, 1, d_c, d_a)
                || disk_pass (d_a, w, h, 0, d_hh, radius, 0, d_c, d_b);
            break;
        default:
            rc = disk_pass (d_s, w, h, 0, d_hh, radius, 0, d_c, d_a)
                || disk_pass (d_a, w, h, 1, d_hh, radius, 1, d_c, d_b);
            break;
        }
        if (rc)
            return -1;
    }
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_morph_rect (const qc_mask_t *src, int kw, int kh, qc_morph_t op,
                    qc_mask_t *dst)
{
    if (!mask_pair_ok (src, dst) || kw < 1 || kh < 1 || kw > QC_IMAGE_MAX_DIM
        || kh > QC_IMAGE_MAX_DIM || (int) op < QC_MORPH_ERODE
        || op > QC_MORPH_CLOSE || qc_cuda_begin ())
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_s, src);
    QC_GET (sc, uint8_t, d_t, n);
    QC_OUT (sc, uint8_t, d_b, dst);
    uint8_t *d_a = NULL;        /* the first of two passes */
    if (op == QC_MORPH_OPEN || op == QC_MORPH_CLOSE) {
        if (!(d_a = sc.get<uint8_t> (n)))
            return -1;
    }
    int rc;
    switch (op) {
    case QC_MORPH_ERODE:
        rc = rect_pass (d_s, w, h, kw, kh, 0, d_t, d_b);
        break;
    case QC_MORPH_DILATE:
        rc = rect_pass (d_s, w, h, kw, kh, 1, d_t, d_b);
        break;
    case QC_MORPH_OPEN:
        rc = rect_pass (d_s, w, h, kw, kh, 0, d_t, d_a)
            || rect_pass (d_a, w, h, kw, kh, 1, d_t, d_b);
        break;
    default:
        rc = rect_pass (d_s, w, h, kw, kh, 1, d_t, d_a)
            || rect_pass (d_a, w, h, kw, kh, 0, d_t, d_b);
        break;
    }
    if (rc)
        return -1;
    QC_FINISH (sc);
    return 0;
}
