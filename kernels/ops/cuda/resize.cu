/* Resizing on the GPU (kernels/ops/cpu/resize.c). AREA uses the CPU's
 * own axis weights (qc_area_axis_init, made on the host and uploaded)
 * summed in the CPU's order; BILINEAR and NEAREST use pixel_math.h's
 * taps; all three give the CPU's bits. The images reach the device
 * through QC_IN and QC_OUT (placement.cu). */
#include <stdlib.h>

extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}
#include "kernels/ops/cuda/cuda_internal.h"

namespace {

/* Resizing in place is refused (as on the CPU): two images with the
 * same host or device bytes. */
template <typename T>
int
same_bytes (const T *a, const T *b)
{
    return (a->px && a->px == b->px) || (a->at.dev && a->at.dev == b->at.dev);
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

/* Resize of a packed image I: ch channels of T a pixel. */
template <typename T, typename I>
int
resize_any (const I *src, I *dst, int ch, qc_interp_t interp)
{
    if (qc_cuda_begin ())
        return -1;
    int sw = src->w, sh = src->h, dw = dst->w, dh = dst->h;
    size_t nd = qc_npix (dw, dh) * ch;
    QcScope sc;
    QC_IN (sc, const T, d_s, src);
    QC_OUT (sc, T, d_d, dst);
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
    QC_FINISH (sc);
    return 0;
}

} // namespace

extern "C" int
qc_cuda_resize_rgb (const qc_rgb_t *src, qc_interp_t interp, qc_rgb_t *dst)
{
    if (!qc_rgb_valid (src) || !qc_rgb_valid (dst) || src == dst
        || same_bytes (src, dst) || (int) interp < QC_INTERP_AREA
        || interp > QC_INTERP_NEAREST)
        return -1;
    return resize_any<uint8_t> (src, dst, 3, interp);
}

extern "C" int
qc_cuda_resize_fimg (const qc_fimg_t *src, qc_interp_t interp, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src == dst
        || same_bytes (src, dst) || (int) interp < QC_INTERP_AREA
        || interp > QC_INTERP_NEAREST)
        return -1;
    return resize_any<float> (src, dst, 1, interp);
}

extern "C" int
qc_cuda_resize_mask (const qc_mask_t *src, qc_interp_t interp, qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (dst) || src == dst
        || same_bytes (src, dst) || interp != QC_INTERP_NEAREST)
        return -1;
    return resize_any<uint8_t> (src, dst, 1, interp);
}
