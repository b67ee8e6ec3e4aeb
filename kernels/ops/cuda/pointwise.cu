/* Per-pixel ops on the GPU: colour conversions, stain separation,
 * thresholds, mask logic and float arithmetic. One thread per pixel;
 * the arithmetic is pixel_math.h's, as on the CPU (kernels/ops/cpu/colour.c,
 * pointwise.c), and argument checks are the CPU backend's. */
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

/* gray or channel std */
int
rgb_to_1 (const qc_rgb_t *src, qc_fimg_t *dst, int what)
{
    if (!rgb_f_fits (src, dst) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_GET (sc, uint8_t, d_src, 3 * n);
    QC_GET (sc, float, d_dst, n);
    QC_UP (d_src, src->px, 3 * n);
    QC_LAUNCH (k_rgb_to_1, n, d_src, n, what, d_dst);
    QC_DOWN (dst->px, d_dst, n);
    QC_SYNC ();
    return 0;
}

/* Downloads three planes. */
int
down3 (size_t n, float *d0, float *d1, float *d2, qc_fimg_t *c0,
       qc_fimg_t *c1, qc_fimg_t *c2)
{
    QC_DOWN (c0->px, d0, n);
    QC_DOWN (c1->px, d1, n);
    QC_DOWN (c2->px, d2, n);
    QC_SYNC ();
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
    QC_GET (sc, uint8_t, d_src, 3 * n);
    QC_GET (sc, float, d0, n);
    QC_GET (sc, float, d1, n);
    QC_GET (sc, float, d2, n);
    QC_UP (d_src, src->px, 3 * n);
    QC_LAUNCH (k_rgb_to_space, n, d_src, n, (int) space, d0, d1, d2);
    return down3 (n, d0, d1, d2, c0, c1, c2);
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
    QC_GET (sc, uint8_t, d_src, 3 * n);
    QC_GET (sc, float, d0, n);
    QC_GET (sc, float, d1, n);
    QC_GET (sc, float, d2, n);
    QC_UP (d_src, src->px, 3 * n);
    QC_LAUNCH (k_stains, n, d_src, n, *m, t, d0, d1, d2);
    return down3 (n, d0, d1, d2, c0, c1, c2);
}

extern "C" int
qc_cuda_threshold (const qc_fimg_t *src, double lo, double hi, qc_mask_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_mask_valid (dst) || src->w != dst->w
        || src->h != dst->h || lo != lo || hi != hi || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_GET (sc, float, d_src, n);
    QC_GET (sc, uint8_t, d_dst, n);
    QC_UP (d_src, src->px, n);
    QC_LAUNCH (k_threshold, n, d_src, n, lo, hi, d_dst);
    QC_DOWN (dst->px, d_dst, n);
    QC_SYNC ();
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
    QC_GET (sc, uint8_t, d_a, n);
    QC_GET (sc, uint8_t, d_d, n);
    uint8_t *d_b = NULL;
    if (op != QC_LOGIC_NOT) {
        d_b = sc.get<uint8_t> (n);
        if (!d_b)
            return -1;
        QC_UP (d_b, b->px, n);
    }
    QC_UP (d_a, a->px, n);
    QC_LAUNCH (k_logic, n, d_a, d_b, n, (int) op, d_d);
    QC_DOWN (dst->px, d_d, n);
    QC_SYNC ();
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
    QC_GET (sc, float, d_a, n);
    QC_GET (sc, float, d_b, n);
    QC_GET (sc, float, d_d, n);
    QC_UP (d_a, a->px, n);
    QC_UP (d_b, b->px, n);
    QC_LAUNCH (k_arith, n, d_a, d_b, n, (int) op, d_d);
    QC_DOWN (dst->px, d_d, n);
    QC_SYNC ();
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
    QC_GET (sc, float, d_s, n);
    QC_UP (d_s, src->px, n);
    /* in place on the device: each thread reads its pixel, then writes it */
    QC_LAUNCH (k_affine, n, d_s, n, scale, offset, lo, hi, d_s);
    QC_DOWN (dst->px, d_s, n);
    QC_SYNC ();
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
    QC_GET (sc, uint8_t, d_s, n);
    QC_GET (sc, float, d_d, n);
    QC_UP (d_s, src->px, n);
    QC_LAUNCH (k_mask_to_fimg, n, d_s, n, (float) on, (float) off, d_d);
    QC_DOWN (dst->px, d_d, n);
    QC_SYNC ();
    return 0;
}
