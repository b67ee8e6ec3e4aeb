/* Per-pixel ops: thresholds, mask logic, float arithmetic. Each is one
 * pass over contiguous memory; in place is always allowed. The loops
 * are built twice (target_clones: AVX2, and the baseline chosen at run
 * time): the same operations per pixel, four doubles or eight floats a
 * step instead of two or four. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <math.h>
#include <string.h>

#define QC_CLONES __attribute__ ((target_clones ("avx2", "default")))

/* v > lo for a float v and a double lo is v >= the smallest float above
 * lo (and v < hi is v <= the largest float below hi): the comparisons in
 * float, eight a step, with the same answers, NaN included (false). */
static float
float_above (double lo)
{
    float f = (float) lo;
    return (double) f > lo ? f : nextafterf (f, INFINITY);
}

static float
float_below (double hi)
{
    float f = (float) hi;
    return (double) f < hi ? f : nextafterf (f, -INFINITY);
}

QC_CLONES static void
threshold_loop (const float *restrict src, size_t n, float a, float b,
                uint8_t *restrict dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (uint8_t) ((src[i] >= a) & (src[i] <= b));
}

QC_CLONES static int
arith_loop (const float *pa, const float *pb, size_t n, qc_arith_t op,
            float *pd)
{
    switch (op) {
    case QC_ARITH_ADD:
        for (size_t i = 0; i < n; i++)
            pd[i] = (float) ((double) pa[i] + pb[i]);
        break;
    case QC_ARITH_SUB:
        for (size_t i = 0; i < n; i++)
            pd[i] = (float) ((double) pa[i] - pb[i]);
        break;
    case QC_ARITH_MUL:
        for (size_t i = 0; i < n; i++)
            pd[i] = (float) ((double) pa[i] * pb[i]);
        break;
    case QC_ARITH_ABSDIFF:
        for (size_t i = 0; i < n; i++)
            pd[i] = (float) fabs ((double) pa[i] - pb[i]);
        break;
    case QC_ARITH_DIV:
        for (size_t i = 0; i < n; i++)
            pd[i] = pb[i] != 0.0f ? (float) ((double) pa[i] / pb[i]) : 0.0f;
        break;
    default:
        return -1;
    }
    return 0;
}

QC_CLONES static void
mask_to_fimg_loop (const uint8_t *src, size_t n, float on, float off,
                   float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i] ? on : off;
}

QC_CLONES static void
affine_loop (const float *src, size_t n, double scale, double offset,
             double lo, double hi, float *dst)
{
    for (size_t i = 0; i < n; i++) {
        double v = src[i] * scale + offset;
        v = v < lo ? lo : v > hi ? hi : v;
        dst[i] = (float) v;
    }
}

int
qc_cpu_threshold (const qc_fimg_t *src, double lo, double hi, qc_mask_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_mask_valid (dst) || src->w != dst->w
        || src->h != dst->h || lo != lo || hi != hi)
        return -1;
    size_t n = qc_npix (src->w, src->h);
    if (lo == INFINITY || hi == -INFINITY) {      /* nothing is inside */
        memset (dst->px, 0, n);
        return 0;
    }
    threshold_loop (src->px, n, float_above (lo), float_below (hi), dst->px);
    return 0;
}

int
qc_cpu_mask_logic (const qc_mask_t *a, const qc_mask_t *b, qc_logic_t op,
                   qc_mask_t *dst)
{
    if (!qc_mask_valid (a) || !qc_mask_valid (dst) || a->w != dst->w
        || a->h != dst->h)
        return -1;
    if (op != QC_LOGIC_NOT
        && (!qc_mask_valid (b) || b->w != a->w || b->h != a->h))
        return -1;
    size_t n = qc_npix (a->w, a->h);
    const uint8_t *pa = a->px;
    const uint8_t *pb = op == QC_LOGIC_NOT ? NULL : b->px;
    uint8_t *pd = dst->px;
    /* Inputs are normalised with != 0 so a stray 255 in a mask built by
     * hand still behaves as "set". */
    switch (op) {
    case QC_LOGIC_AND:
        for (size_t i = 0; i < n; i++)
            pd[i] = (uint8_t) ((pa[i] != 0) & (pb[i] != 0));
        break;
    case QC_LOGIC_OR:
        for (size_t i = 0; i < n; i++)
            pd[i] = (uint8_t) ((pa[i] != 0) | (pb[i] != 0));
        break;
    case QC_LOGIC_ANDNOT:
        for (size_t i = 0; i < n; i++)
            pd[i] = (uint8_t) ((pa[i] != 0) & (pb[i] == 0));
        break;
    case QC_LOGIC_XOR:
        for (size_t i = 0; i < n; i++)
            pd[i] = (uint8_t) ((pa[i] != 0) ^ (pb[i] != 0));
        break;
    case QC_LOGIC_NOT:
        for (size_t i = 0; i < n; i++)
            pd[i] = (uint8_t) (pa[i] == 0);
        break;
    default:
        return -1;
    }
    return 0;
}

int
qc_cpu_fimg_arith (const qc_fimg_t *a, const qc_fimg_t *b, qc_arith_t op,
                   qc_fimg_t *dst)
{
    if (!qc_fimg_valid (a) || !qc_fimg_valid (b) || !qc_fimg_valid (dst)
        || a->w != b->w || a->h != b->h || a->w != dst->w || a->h != dst->h)
        return -1;
    return arith_loop (a->px, b->px, qc_npix (a->w, a->h), op, dst->px);
}

int
qc_cpu_fimg_affine (const qc_fimg_t *src, double scale, double offset,
                    double lo, double hi, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !(lo <= hi) || scale != scale
        || offset != offset)
        return -1;
    affine_loop (src->px, qc_npix (src->w, src->h), scale, offset, lo, hi,
                 dst->px);
    return 0;
}

int
qc_cpu_mask_to_fimg (const qc_mask_t *src, double on, double off,
                     qc_fimg_t *dst)
{
    if (!qc_mask_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || on != on || off != off)
        return -1;
    mask_to_fimg_loop (src->px, qc_npix (src->w, src->h), (float) on,
                       (float) off, dst->px);
    return 0;
}

/* Both loops without a branch: tissue edges made a branch mispredict
 * often (DeconvolutionModule, 2026). */
QC_CLONES static void
where_loop (const uint8_t *m, const float *src, size_t n, float off,
            float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = m[i] ? src[i] : off;
}

int
qc_cpu_fimg_where (const qc_mask_t *m, const qc_fimg_t *src, double off,
                   qc_fimg_t *dst)
{
    if (!qc_mask_valid (m) || !qc_fimg_valid (src) || !qc_fimg_valid (dst)
        || m->w != src->w || m->h != src->h || src->w != dst->w
        || src->h != dst->h)
        return -1;
    where_loop (m->px, src->px, qc_npix (src->w, src->h), (float) off,
                dst->px);
    return 0;
}

QC_CLONES static void
sqrt_loop (const float *src, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = sqrtf (src[i]);
}

int
qc_cpu_fimg_sqrt (const qc_fimg_t *src, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h)
        return -1;
    sqrt_loop (src->px, qc_npix (src->w, src->h), dst->px);
    return 0;
}

/* AVX2 makes qc_px_u8_from_unit's rint one instruction instead of a
 * call into libm (the same rounding). */
QC_CLONES static void
fuse_loop (const uint8_t *mask, const float *gray, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t m = mask[i] ? 255 : 0;
        out[3 * i] = m;
        out[3 * i + 1] = qc_px_u8_from_unit (gray[i]);
        out[3 * i + 2] = m;
    }
}

int
qc_cpu_fuse_rgb (const qc_mask_t *m, const qc_fimg_t *gray, qc_rgb_t *dst)
{
    if (!qc_mask_valid (m) || !qc_fimg_valid (gray) || !qc_rgb_valid (dst)
        || m->w != gray->w || m->h != gray->h || m->w != dst->w
        || m->h != dst->h)
        return -1;
    fuse_loop (m->px, gray->px, qc_npix (m->w, m->h), dst->px);
    return 0;
}
