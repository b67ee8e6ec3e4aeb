/* Binary morphology and resizing on the GPU (kernels/ops/cpu/morph.c,
 * resize.c).
 *
 * Disk: skimage's disk (r) is the union over column offsets dx of the
 * vertical runs |dy| <= isqrt (r^2 - dx^2). With per-column prefix counts
 * of the seeds, a pixel of the dilation tests 2r + 1 runs, each in O(1),
 * exact (the CPU thresholds an exact distance transform: same pixels).
 * Erosion is the complement of the dilation of the complement (outside
 * counts as set for erosion and unset for dilation, as skimage does).
 * Rectangle: any / all over the clipped window, rows then columns, each
 * O(k) per pixel.
 * Resize: AREA uses the CPU's own axis weights (qc_area_axis_init, made
 * on the host and uploaded) summed in the CPU's order; BILINEAR and
 * NEAREST use pixel_math.h's taps; all three give the CPU's bits. */
#include <stdlib.h>

extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}
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

/* One axis of area weights on the device. */
struct axis_dev {
    const int *first, *count, *off;
    const double *w;
};

int
upload_axis (QcScope &sc, const qc_area_axis_t *ax, axis_dev *out)
{
    size_t nd = (size_t) ax->n_dst;
    size_t nw = (size_t) ax->off[nd - 1] + (size_t) ax->count[nd - 1];
    QC_GET (sc, int, f, nd);
    QC_GET (sc, int, c, nd);
    QC_GET (sc, int, o, nd);
    QC_GET (sc, double, w, nw);
    QC_UP (f, ax->first, nd);
    QC_UP (c, ax->count, nd);
    QC_UP (o, ax->off, nd);
    QC_UP (w, ax->w, nw);
    *out = axis_dev {f, c, o, w};
    return 0;
}

/* T: uint8_t or float; ch channels. */
template <typename T>
__global__ void
k_area (const T *src, int sw, int dw, int dh, int ch, axis_dev ax, axis_dev ay,
        T *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) dw * dh * ch)
        return;
    int c = (int) (i % ch);
    size_t o = i / ch;
    int ox = (int) (o % dw), oy = (int) (o / dw);
    const double *wx = ax.w + ax.off[ox], *wy = ay.w + ay.off[oy];
    double acc = 0.0;
    for (int ky = 0; ky < ay.count[oy]; ky++) {
        size_t j = (size_t) ay.first[oy] + ky;
        const T *p = src + (j * sw + ax.first[ox]) * ch + c;
        double s = 0.0;
        for (int kx = 0; kx < ax.count[ox]; kx++)
            s += wx[kx] * (double) p[(size_t) kx * ch];
        acc += wy[ky] * s;
    }
    if (sizeof (T) == 1)
        dst[i] = (T) qc_px_round_u8 (acc);
    else
        dst[i] = (T) acc;
}

template <typename T>
__global__ void
k_bilinear (const T *src, int sw, int sh, int dw, int dh, int ch, T *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) dw * dh * ch)
        return;
    int k = (int) (i % ch);
    size_t o = i / ch;
    int ox = (int) (o % dw), oy = (int) (o / dw);
    int x0, x1, y0, y1;
    double u, v;
    qc_px_bilinear_tap (sw, dw, ox, &x0, &x1, &u);
    qc_px_bilinear_tap (sh, dh, oy, &y0, &y1, &v);
    size_t r0 = (size_t) y0 * sw, r1 = (size_t) y1 * sw;
    double val = qc_px_bilinear_mix (src[(r0 + x0) * ch + k], src[(r0 + x1) * ch + k],
                                     src[(r1 + x0) * ch + k], src[(r1 + x1) * ch + k],
                                     u, v);
    if (sizeof (T) == 1)
        dst[i] = (T) qc_px_round_u8 (val);
    else
        dst[i] = (T) val;
}

__global__ void
k_nearest (const uint8_t *src, int sw, int sh, int dw, int dh, int elem,
           uint8_t *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) dw * dh * elem)
        return;
    int b = (int) (i % elem);
    size_t o = i / elem;
    int ox = (int) (o % dw), oy = (int) (o / dw);
    int x = qc_px_nearest_index (ox, sw, dw), y = qc_px_nearest_index (oy, sh, dh);
    dst[i] = src[((size_t) y * sw + x) * elem + b];
}

/* Resize of a packed image: elem bytes a pixel, ch channels of T. */
template <typename T>
int
resize_any (const T *src, int sw, int sh, T *dst, int dw, int dh, int ch,
            qc_interp_t interp)
{
    if (qc_cuda_begin ())
        return -1;
    size_t ns = qc_npix (sw, sh) * ch, nd = qc_npix (dw, dh) * ch;
    QcScope sc;
    QC_GET (sc, T, d_s, ns);
    QC_GET (sc, T, d_d, nd);
    QC_UP (d_s, src, ns);
    if (interp == QC_INTERP_NEAREST) {
        int elem = (int) sizeof (T) * ch;
        QC_LAUNCH (k_nearest, nd * sizeof (T), (const uint8_t *) d_s, sw, sh,
                   dw, dh, elem, (uint8_t *) d_d);
    } else if (interp == QC_INTERP_BILINEAR) {
        QC_LAUNCH (k_bilinear<T>, nd, d_s, sw, sh, dw, dh, ch, d_d);
    } else {
        qc_area_axis_t ax, ay;
        if (qc_area_axis_init (&ax, sw, dw))
            return -1;
        if (qc_area_axis_init (&ay, sh, dh)) {
            qc_area_axis_free (&ax);
            return -1;
        }
        axis_dev dx, dy;
        int rc = upload_axis (sc, &ax, &dx) || upload_axis (sc, &ay, &dy);
        /* the uploads must finish before the host weights are freed */
        rc = rc || qc_cuda_failed (cudaStreamSynchronize (QC_STREAM), "sync",
                                   __FILE__, __LINE__);
        qc_area_axis_free (&ax);
        qc_area_axis_free (&ay);
        if (rc)
            return -1;
        QC_LAUNCH (k_area<T>, nd, d_s, sw, dw, dh, ch, dx, dy, d_d);
    }
    QC_DOWN (dst, d_d, nd);
    QC_SYNC ();
    return 0;
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
    QC_GET (sc, uint8_t, d_a, n);
    QC_GET (sc, uint8_t, d_b, n);
    QC_UP (d_a, src->px, n);
    if (radius == 0) {
        QC_LAUNCH (k_normalise, n, d_a, n, d_b);
    } else {
        QC_GET (sc, int32_t, d_c, ((size_t) h + 1) * w);
        QC_GET (sc, int32_t, d_hh, 2 * (size_t) radius + 1);
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
            rc = disk_pass (d_a, w, h, 0, d_hh, radius, 0, d_c, d_b);
            break;
        case QC_MORPH_ERODE:
            rc = disk_pass (d_a, w, h, 1, d_hh, radius, 1, d_c, d_b);
            break;
        case QC_MORPH_OPEN:
            rc = disk_pass (d_a, w, h, 1, d_hh, radius, 1, d_c, d_b)
                || disk_pass (d_b, w, h, 0, d_hh, radius, 0, d_c, d_a)
                || qc_cuda_failed (cudaMemcpyAsync (d_b, d_a, n, cudaMemcpyDeviceToDevice,
                                                    QC_STREAM), "copy", __FILE__, __LINE__);
            break;
        default:
            rc = disk_pass (d_a, w, h, 0, d_hh, radius, 0, d_c, d_b)
                || disk_pass (d_b, w, h, 1, d_hh, radius, 1, d_c, d_a)
                || qc_cuda_failed (cudaMemcpyAsync (d_b, d_a, n, cudaMemcpyDeviceToDevice,
                                                    QC_STREAM), "copy", __FILE__, __LINE__);
            break;
        }
        if (rc)
            return -1;
    }
    QC_DOWN (dst->px, d_b, n);
    QC_SYNC ();
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
    QC_GET (sc, uint8_t, d_a, n);
    QC_GET (sc, uint8_t, d_t, n);
    QC_GET (sc, uint8_t, d_b, n);
    QC_UP (d_a, src->px, n);
    int rc;
    switch (op) {
    case QC_MORPH_ERODE:
        rc = rect_pass (d_a, w, h, kw, kh, 0, d_t, d_b);
        break;
    case QC_MORPH_DILATE:
        rc = rect_pass (d_a, w, h, kw, kh, 1, d_t, d_b);
        break;
    case QC_MORPH_OPEN:
        rc = rect_pass (d_a, w, h, kw, kh, 0, d_t, d_b)
            || rect_pass (d_b, w, h, kw, kh, 1, d_t, d_a);
        d_b = d_a;
        break;
    default:
        rc = rect_pass (d_a, w, h, kw, kh, 1, d_t, d_b)
            || rect_pass (d_b, w, h, kw, kh, 0, d_t, d_a);
        d_b = d_a;
        break;
    }
    if (rc)
        return -1;
    QC_DOWN (dst->px, d_b, n);
    QC_SYNC ();
    return 0;
}

extern "C" int
qc_cuda_resize_rgb (const qc_rgb_t *src, qc_interp_t interp, qc_rgb_t *dst)
{
    if (!qc_rgb_valid (src) || !qc_rgb_valid (dst) || src == dst
        || src->px == dst->px || (int) interp < QC_INTERP_AREA
        || interp > QC_INTERP_NEAREST)
        return -1;
    return resize_any<uint8_t> (src->px, src->w, src->h, dst->px, dst->w,
                                dst->h, 3, interp);
}

extern "C" int
qc_cuda_resize_fimg (const qc_fimg_t *src, qc_interp_t interp, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src == dst
        || src->px == dst->px || (int) interp < QC_INTERP_AREA
        || interp > QC_INTERP_NEAREST)
        return -1;
    return resize_any<float> (src->px, src->w, src->h, dst->px, dst->w,
                              dst->h, 1, interp);
}

extern "C" int
qc_cuda_resize_mask (const qc_mask_t *src, qc_interp_t interp, qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (dst) || src == dst
        || src->px == dst->px || interp != QC_INTERP_NEAREST)
        return -1;
    return resize_any<uint8_t> (src->px, src->w, src->h, dst->px, dst->w,
                                dst->h, 1, interp);
}
