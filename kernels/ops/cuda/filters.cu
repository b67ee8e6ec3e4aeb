/* Filters on the GPU (kernels/ops/cpu/filter.c, edges.c): separable Gaussian,
 * box mean, Laplacian and Sobel. One thread per output pixel, border
 * rules by qc_px_border_index, sums in double.
 *
 * Gaussian: the kernel weights are the CPU's (qc_cpu_gauss_weights, the
 * one builder of scipy's kernel, on the host), each pass sums its taps
 * in the CPU's order (centre, then symmetric pairs) and the pass between
 * is stored as float as on the CPU, so with -fmad=false both backends
 * give the same bits.
 * Box: a row-window sum into a double image, then a column-window sum
 * (O(kw + kh) per pixel); the CPU slides running sums instead, so the
 * two agree to rounding.
 * Images reach the device through QC_IN and QC_OUT (placement.cu); the
 * intermediate planes are scope buffers, never an input's bytes. */
#include <math.h>
#include <stdlib.h>

#include "kernels/ops/cuda/cuda_internal.h"

extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}

namespace {

const double MAX_RADIUS = (double) (1 << 20);

bool
pair_ok (const qc_fimg_t *src, const qc_fimg_t *dst, qc_border_t border)
{
    return qc_fimg_valid (src) && qc_fimg_valid (dst) && src->w == dst->w
        && src->h == dst->h && (int) border >= QC_BORDER_REFLECT
        && border <= QC_BORDER_CONSTANT;
}

__device__ inline double
at (const float *img, int w, int h, long x, long y, int border)
{
    int xx = qc_px_border_index (x, w, border);
    int yy = qc_px_border_index (y, h, border);
    return (xx < 0 || yy < 0) ? 0.0 : (double) img[(size_t) yy * w + xx];
}

/* axis 0: along rows (x), 1: along columns (y) */
__global__ void
k_gauss (const float *src, int w, int h, const double *wt, int r, int border,
         int axis, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w), y = (long) (i / w);
    double s;
    if (axis == 0) {
        s = wt[0] * at (src, w, h, x, y, border);
        for (int k = 1; k <= r; k++)
            s += wt[k] * (at (src, w, h, x - k, y, border)
                          + at (src, w, h, x + k, y, border));
    } else {
        s = wt[0] * at (src, w, h, x, y, border);
        for (int k = 1; k <= r; k++)
            s += wt[k] * (at (src, w, h, x, y - k, border)
                          + at (src, w, h, x, y + k, border));
    }
    dst[i] = (float) s;
}

__global__ void
k_box_rows (const float *src, int w, int h, int kw, int border, double *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w), y = (long) (i / w);
    /* the row itself is inside the image; only x can leave it */
    double s = 0.0;
    for (long xx = x - kw / 2; xx <= x + (kw - 1) / 2; xx++)
        s += at (src, w, h, xx, y, border);
    dst[i] = s;
}

__global__ void
k_box_cols (const double *rows, int w, int h, int kh, int border, double inv,
            float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w), y = (long) (i / w);
    double s = 0.0;
    for (long yy = y - kh / 2; yy <= y + (kh - 1) / 2; yy++) {
        int k = qc_px_border_index (yy, h, border);
        if (k >= 0)
            s += rows[(size_t) k * w + x];
    }
    dst[i] = (float) (s * inv);
}

/* which: 0 Laplace, 1 Sobel */
__global__ void
k_stencil (const float *src, int w, int h, int border, int which, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w), y = (long) (i / w);
    double p[9];
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            p[(dy + 1) * 3 + dx + 1] = at (src, w, h, x + dx, y + dy, border);
    dst[i] = (float) (which ? qc_px_sobel (p)
                            : qc_px_laplace (p[4], p[1], p[7], p[3], p[5]));
}

int
stencil (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst, int which)
{
    if (!pair_ok (src, dst, border) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_stencil, n, d_s, src->w, src->h, (int) border, which, d_d);
    QC_FINISH (sc);
    return 0;
}

/* Both Gaussian passes with the weights wt[0..r] (host). */
int
gauss_dev (const qc_fimg_t *src, const double *wt, int r, qc_border_t border,
           qc_fimg_t *dst)
{
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_GET (sc, float, d_t, n);
    QC_GET (sc, double, d_w, (size_t) r + 1);
    QC_OUT (sc, float, d_d, dst);
    QC_UP (d_w, wt, (size_t) r + 1);
    QC_LAUNCH (k_gauss, n, d_s, w, h, d_w, r, (int) border, 0, d_t);
    QC_LAUNCH (k_gauss, n, d_t, w, h, d_w, r, (int) border, 1, d_d);
    QC_FINISH (sc);
    return 0;
}

/* A copy of src's n pixels into dst (a radius 0 Gaussian), device to
 * device. */
int
copy_dev (const qc_fimg_t *src, size_t n, qc_fimg_t *dst)
{
    if (qc_cuda_begin ())
        return -1;
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_CK (cudaMemcpyAsync (d_d, d_s, n * sizeof (float),
                            cudaMemcpyDeviceToDevice, QC_STREAM));
    QC_FINISH (sc);
    return 0;
}

} // namespace

extern "C" int
qc_cuda_gaussian (const qc_fimg_t *src, double sigma, double truncate,
                  qc_border_t border, qc_fimg_t *dst)
{
    if (!pair_ok (src, dst, border) || sigma != sigma || !(truncate > 0.0)
        || !isfinite (truncate) || !isfinite (sigma))
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    if (sigma <= 0.0 || truncate * sigma + 0.5 < 1.0) {
        if (dst != src)     /* radius 0: the kernel is [1] (as the CPU) */
            return copy_dev (src, n, dst);
        return 0;
    }
    if (truncate * sigma + 0.5 > MAX_RADIUS || qc_cuda_begin ())
        return -1;
    int r = qc_px_gauss_radius (sigma, truncate);
    double *wt = (double *) malloc ((size_t) (r + 1) * sizeof *wt);
    if (!wt)
        return -1;
    qc_cpu_gauss_weights (sigma, r, wt);    /* the CPU's own weights */
    int rc = gauss_dev (src, wt, r, border, dst);
    free (wt);
    return rc;
}

extern "C" int
qc_cuda_box_filter (const qc_fimg_t *src, int kw, int kh, qc_border_t border,
                    qc_fimg_t *dst)
{
    if (!pair_ok (src, dst, border) || kw < 1 || kh < 1 || kw > MAX_RADIUS
        || kh > MAX_RADIUS || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_GET (sc, double, d_r, n);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_box_rows, n, d_s, src->w, src->h, kw, (int) border, d_r);
    QC_LAUNCH (k_box_cols, n, d_r, src->w, src->h, kh, (int) border,
               1.0 / ((double) kw * (double) kh), d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_laplace (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst)
{
    return stencil (src, border, dst, 0);
}

extern "C" int
qc_cuda_sobel (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst)
{
    return stencil (src, border, dst, 1);
}
