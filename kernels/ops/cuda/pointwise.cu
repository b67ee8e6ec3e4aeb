/* Per-pixel ops on the GPU (kernels/ops/cpu/pointwise.c): thresholds,
 * mask logic, float arithmetic, masks as weights. One thread per pixel;
 * the arithmetic is pixel_math.h's, as on the CPU, and argument checks
 * are the CPU backend's. Images reach the device through QC_IN and
 * QC_OUT (placement.cu); no kernel writes an input's bytes. */
#include "kernels/ops/cuda/cuda_internal.h"

namespace {

__global__ void
k_threshold (const float *src, size_t n, double lo, double hi, uint8_t *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double v = src[i];
    dst[i] = (uint8_t) (v > lo && v < hi);
}

__global__ void
k_logic (const uint8_t *a, const uint8_t *b, size_t n, int op, uint8_t *d)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i] != 0, y = b ? b[i] != 0 : 0;
    int r;
    switch (op) {
    case QC_LOGIC_AND: r = x & y; break;
    case QC_LOGIC_OR: r = x | y; break;
    case QC_LOGIC_ANDNOT: r = x & !y; break;
    case QC_LOGIC_XOR: r = x ^ y; break;
    default: r = !x; break;
    }
    d[i] = (uint8_t) r;
}

__global__ void
k_arith (const float *a, const float *b, size_t n, int op, float *d)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = a[i], y = b[i];
    float r;
    switch (op) {
    case QC_ARITH_ADD: r = (float) (x + y); break;
    case QC_ARITH_SUB: r = (float) (x - y); break;
    case QC_ARITH_MUL: r = (float) (x * y); break;
    case QC_ARITH_ABSDIFF: r = (float) fabs (x - y); break;
    default: r = b[i] != 0.0f ? (float) (x / y) : 0.0f; break;
    }
    d[i] = r;
}

__global__ void
k_affine (const float *src, size_t n, double scale, double offset, double lo,
          double hi, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double v = src[i] * scale + offset;
    v = v < lo ? lo : v > hi ? hi : v;
    dst[i] = (float) v;
}

__global__ void
k_mask_to_fimg (const uint8_t *src, size_t n, float on, float off, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i] ? on : off;
}

__global__ void
k_where (const uint8_t *m, const float *src, size_t n, float off, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = m[i] ? src[i] : off;
}

__global__ void
k_sqrt (const float *src, size_t n, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = sqrtf (src[i]);    /* IEEE: correctly rounded, as the CPU's */
}

__global__ void
k_fuse (const uint8_t *m, const float *gray, size_t n, uint8_t *out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint8_t v = m[i] ? 255 : 0;
    out[3 * i] = v;
    out[3 * i + 1] = qc_px_u8_from_unit (gray[i]);
    out[3 * i + 2] = v;
}

} // namespace

extern "C" int
qc_cuda_threshold (const qc_fimg_t *src, double lo, double hi, qc_mask_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_mask_valid (dst) || src->w != dst->w
        || src->h != dst->h || lo != lo || hi != hi || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_src, src);
    QC_OUT (sc, uint8_t, d_dst, dst);
    QC_LAUNCH (k_threshold, n, d_src, n, lo, hi, d_dst);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_mask_logic (const qc_mask_t *a, const qc_mask_t *b, qc_logic_t op,
                    qc_mask_t *dst)
{
    if (!qc_mask_valid (a) || !qc_mask_valid (dst) || a->w != dst->w
        || a->h != dst->h || (int) op < QC_LOGIC_AND || op > QC_LOGIC_NOT)
        return -1;
    if (op != QC_LOGIC_NOT
        && (!qc_mask_valid (b) || b->w != a->w || b->h != a->h))
        return -1;
    if (qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (a->w, a->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_a, a);
    const uint8_t *d_b = NULL;
    if (op != QC_LOGIC_NOT) {
        d_b = static_cast<const uint8_t *> (qc_cuda_in (sc, QC_SPAN (b)));
        if (!d_b)
            return -1;
    }
    QC_OUT (sc, uint8_t, d_d, dst);
    QC_LAUNCH (k_logic, n, d_a, d_b, n, (int) op, d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_fimg_arith (const qc_fimg_t *a, const qc_fimg_t *b, qc_arith_t op,
                    qc_fimg_t *dst)
{
    if (!qc_fimg_valid (a) || !qc_fimg_valid (b) || !qc_fimg_valid (dst)
        || a->w != b->w || a->h != b->h || a->w != dst->w || a->h != dst->h
        || (int) op < QC_ARITH_ADD || op > QC_ARITH_DIV || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (a->w, a->h);
    QcScope sc;
    QC_IN (sc, const float, d_a, a);
    QC_IN (sc, const float, d_b, b);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_arith, n, d_a, d_b, n, (int) op, d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_fimg_affine (const qc_fimg_t *src, double scale, double offset,
                     double lo, double hi, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !(lo <= hi) || scale != scale
        || offset != offset || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_affine, n, d_s, n, scale, offset, lo, hi, d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_mask_to_fimg (const qc_mask_t *src, double on, double off,
                      qc_fimg_t *dst)
{
    if (!qc_mask_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || on != on || off != off || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_mask_to_fimg, n, d_s, n, (float) on, (float) off, d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_fimg_where (const qc_mask_t *m, const qc_fimg_t *src, double off,
                    qc_fimg_t *dst)
{
    if (!qc_mask_valid (m) || !qc_fimg_valid (src) || !qc_fimg_valid (dst)
        || m->w != src->w || m->h != src->h || src->w != dst->w
        || src->h != dst->h || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_m, m);
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_where, n, d_m, d_s, n, (float) off, d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_fimg_sqrt (const qc_fimg_t *src, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_sqrt, n, d_s, n, d_d);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_fuse_rgb (const qc_mask_t *m, const qc_fimg_t *gray, qc_rgb_t *dst)
{
    if (!qc_mask_valid (m) || !qc_fimg_valid (gray) || !qc_rgb_valid (dst)
        || m->w != gray->w || m->h != gray->h || m->w != dst->w
        || m->h != dst->h || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (m->w, m->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_m, m);
    QC_IN (sc, const float, d_g, gray);
    QC_OUT (sc, uint8_t, d_o, dst);
    QC_LAUNCH (k_fuse, n, d_m, d_g, n, d_o);
    QC_FINISH (sc);
    return 0;
}
