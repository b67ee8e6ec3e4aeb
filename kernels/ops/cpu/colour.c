/* Colour conversions of whole RGB images into float planes. The per-pixel
 * arithmetic is pixel_math.h's; this file only walks the pixels. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <string.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static int
same_size_rgb_f (const qc_rgb_t *src, const qc_fimg_t *dst)
{
    return qc_rgb_valid (src) && qc_fimg_valid (dst) && src->w == dst->w
        && src->h == dst->h;
}

int
qc_cpu_rgb_to_gray (const qc_rgb_t *src, qc_fimg_t *dst)
{
    if (!same_size_rgb_f (src, dst))
        return -1;
    /* Each term of qc_px_gray depends on one channel value: three
     * 256-entry tables of the same products, added in the same order,
     * give the same numbers without three divisions a pixel. */
    double t[3][256];
    for (int v = 0; v < 256; v++) {
        t[0][v] = qc_px_unit ((uint8_t) v) * 0.2125;
        t[1][v] = qc_px_unit ((uint8_t) v) * 0.7154;
        t[2][v] = qc_px_unit ((uint8_t) v) * 0.0721;
    }
    size_t n = qc_npix (src->w, src->h);
    const uint8_t *p = src->px;
    for (size_t i = 0; i < n; i++, p += 3)
        dst->px[i] = (float) (t[0][p[0]] + t[1][p[1]] + t[2][p[2]]);
    return 0;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QC_COLOUR_AVX2 1

/* qc_px_channel_std four pixels at a time: the same operations in the
 * same order (adds left to right, the divisions by 3, sqrt), each one
 * correctly rounded in a vector lane as in a scalar register, so the
 * same bits. Returns the pixels done (a multiple of 4). */
__attribute__ ((target ("avx2"))) static size_t
channel_std_x4 (const uint8_t *p, size_t n, float *out)
{
    const __m256d three = _mm256_set1_pd (3.0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4, p += 12) {
        __m256d r = _mm256_cvtepi32_pd (_mm_setr_epi32 (p[0], p[3], p[6], p[9]));
        __m256d g = _mm256_cvtepi32_pd (_mm_setr_epi32 (p[1], p[4], p[7], p[10]));
        __m256d b = _mm256_cvtepi32_pd (_mm_setr_epi32 (p[2], p[5], p[8], p[11]));
        __m256d m = _mm256_div_pd (_mm256_add_pd (_mm256_add_pd (r, g), b), three);
        __m256d dr = _mm256_sub_pd (r, m), dg = _mm256_sub_pd (g, m);
        __m256d db = _mm256_sub_pd (b, m);
        __m256d ss = _mm256_add_pd (_mm256_add_pd (_mm256_mul_pd (dr, dr),
                                                   _mm256_mul_pd (dg, dg)),
                                    _mm256_mul_pd (db, db));
        __m256d sd = _mm256_sqrt_pd (_mm256_div_pd (ss, three));
        _mm_storeu_ps (out + i, _mm256_cvtpd_ps (sd));
    }
    return i;
}

/* The linear colour spaces four pixels at a time: qc_px_unit's
 * division by 255, qc_px_mat3_apply's products and sums in its order,
 * the offset, the rounding to float, each correctly rounded as in the
 * scalar loop, so the same bits. Returns the pixels done. */
__attribute__ ((target ("avx2"))) static size_t
linear_space_x4 (const uint8_t *p, size_t n, const qc_mat3_t *m,
                 const double add[3], float *o0, float *o1, float *o2)
{
    const __m256d d255 = _mm256_set1_pd (255.0);
    float *o[3] = { o0, o1, o2 };
    size_t i = 0;
    for (; i + 4 <= n; i += 4, p += 12) {
        __m256d r = _mm256_div_pd (_mm256_cvtepi32_pd (
            _mm_setr_epi32 (p[0], p[3], p[6], p[9])), d255);
        __m256d g = _mm256_div_pd (_mm256_cvtepi32_pd (
            _mm_setr_epi32 (p[1], p[4], p[7], p[10])), d255);
        __m256d b = _mm256_div_pd (_mm256_cvtepi32_pd (
            _mm_setr_epi32 (p[2], p[5], p[8], p[11])), d255);
        for (int j = 0; j < 3; j++) {
            __m256d v = _mm256_add_pd (
                _mm256_add_pd (_mm256_mul_pd (_mm256_set1_pd (m->m[3 * j]), r),
                               _mm256_mul_pd (_mm256_set1_pd (m->m[3 * j + 1]), g)),
                _mm256_mul_pd (_mm256_set1_pd (m->m[3 * j + 2]), b));
            v = _mm256_add_pd (v, _mm256_set1_pd (add[j]));
            _mm_storeu_ps (o[j] + i, _mm256_cvtpd_ps (v));
        }
    }
    return i;
}
#endif

int
qc_cpu_rgb_channel_std (const qc_rgb_t *src, qc_fimg_t *dst)
{
    if (!same_size_rgb_f (src, dst))
        return -1;
    size_t n = qc_npix (src->w, src->h), i = 0;
    const uint8_t *p = src->px;
#ifdef QC_COLOUR_AVX2
    if (qc_cpu_have_avx2 ())
        i = channel_std_x4 (p, n, dst->px);
#endif
    for (p += 3 * i; i < n; i++, p += 3)
        dst->px[i] = (float) qc_px_channel_std (p[0], p[1], p[2]);
    return 0;
}

/* The linear spaces: skimage's X_from_rgb matrices (published values;
 * rgbcie_from_rgb is skimage's rgbcie_from_xyz @ xyz_from_rgb). */
static int
linear_space_matrix (qc_colorspace_t space, qc_mat3_t *m, double add[3])
{
    static const double yuv[9] = { 0.299, 0.587, 0.114,
        -0.14714119, -0.28886916, 0.43601035,
        0.61497538, -0.51496512, -0.10001026 };
    static const double yiq[9] = { 0.299, 0.587, 0.114,
        0.59590059, -0.27455667, -0.32134392,
        0.21153661, -0.52273617, 0.31119955 };
    static const double ypbpr[9] = { 0.299, 0.587, 0.114,
        -0.168736, -0.331264, 0.5,
        0.5, -0.418688, -0.081312 };
    static const double ycbcr[9] = { 65.481, 128.553, 24.966,
        -37.797, -74.203, 112.0,
        112.0, -93.786, -18.214 };
    static const double ydbdr[9] = { 0.299, 0.587, 0.114,
        -0.45, -0.883, 1.333,
        -1.333, 1.116, 0.217 };
    static const double rgbcie[9] = {
        0.13725336022997064, 0.02629377905995245, -0.0146615357119699,
        0.01638562378596666, 0.14980089868815039, 0.01669445806092686,
        0.00329058761832357, 0.01979351133648332, 0.1696916440498896 };
    const double *src = NULL;
    add[0] = add[1] = add[2] = 0.0;
    switch (space) {
    case QC_CS_YUV: src = yuv; break;
    case QC_CS_YIQ: src = yiq; break;
    case QC_CS_YPBPR: src = ypbpr; break;
    case QC_CS_YDBDR: src = ydbdr; break;
    case QC_CS_RGBCIE: src = rgbcie; break;
    case QC_CS_YCBCR:
        src = ycbcr;
        add[0] = 16.0;
        add[1] = add[2] = 128.0;
        break;
    default:
        return -1;
    }
    memcpy (m->m, src, sizeof m->m);
    return 0;
}

int
qc_cpu_rgb_to_space (const qc_rgb_t *src, qc_colorspace_t space,
                     qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2)
{
    if (!same_size_rgb_f (src, c0) || !same_size_rgb_f (src, c1)
        || !same_size_rgb_f (src, c2) || (int) space < 0
        || space >= QC_CS_COUNT)
        return -1;
    if (c0 == c1 || c1 == c2 || c0 == c2)
        return -1;
    size_t n = qc_npix (src->w, src->h), i = 0;
    const uint8_t *p = src->px;
    qc_mat3_t m;
    double add[3], v[3];
    int linear = linear_space_matrix (space, &m, add) == 0;
#ifdef QC_COLOUR_AVX2
    if (linear && qc_cpu_have_avx2 ()) {
        i = linear_space_x4 (p, n, &m, add, c0->px, c1->px, c2->px);
        p += 3 * i;
    }
#endif
    for (; i < n; i++, p += 3) {
        if (linear)
            qc_px_mat3_apply (m, qc_px_unit (p[0]), qc_px_unit (p[1]),
                              qc_px_unit (p[2]), v);
        else if (space == QC_CS_HSV)
            qc_px_rgb_to_hsv (p[0], p[1], p[2], v);
        else if (space == QC_CS_XYZ)
            qc_px_rgb_to_xyz (p[0], p[1], p[2], v);
        else if (space == QC_CS_LAB)
            qc_px_rgb_to_lab (p[0], p[1], p[2], v);
        else {                  /* RGB: raw values */
            v[0] = p[0];
            v[1] = p[1];
            v[2] = p[2];
        }
        c0->px[i] = (float) (v[0] + add[0]);
        c1->px[i] = (float) (v[1] + add[1]);
        c2->px[i] = (float) (v[2] + add[2]);
    }
    return 0;
}

/* s > 0 ? s : 0 without a branch (SSE2's maxsd picks its second operand
 * unless the first is greater, as the comparison does for NaN and -0):
 * stains are positive and zero about equally often, and the branch
 * mispredicted on half the pixels. */
static inline double
clip_low (double s)
{
#ifdef __SSE2__
    return _mm_cvtsd_f64 (_mm_max_sd (_mm_set_sd (s), _mm_setzero_pd ()));
#else
    return s > 0.0 ? s : 0.0;
#endif
}

int
qc_cpu_separate_stains (const qc_rgb_t *src, const qc_mat3_t *m,
                        qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2)
{
    if (!m || !same_size_rgb_f (src, c0) || !same_size_rgb_f (src, c1)
        || !same_size_rgb_f (src, c2) || c0 == c1 || c1 == c2 || c0 == c2)
        return -1;
    /* Each stain is od(r) m[j] + od(g) m[3+j] + od(b) m[6+j]
     * (qc_px_stains_from_od): nine 256-entry tables of those products,
     * added in the same order and clipped the same way, give the same
     * numbers without a log or a multiply per pixel. */
    double t[3][3][256];            /* [stain j][channel c][value] */
    for (int v = 0; v < 256; v++) {
        double od = qc_px_stain_od ((uint8_t) v);
        for (int j = 0; j < 3; j++)
            for (int c = 0; c < 3; c++)
                t[j][c][v] = od * m->m[3 * c + j];
    }
    size_t n = qc_npix (src->w, src->h);
    const uint8_t *p = src->px;
    float *o[3] = { c0->px, c1->px, c2->px };
    for (size_t i = 0; i < n; i++, p += 3)
        for (int j = 0; j < 3; j++)
            o[j][i] = (float) clip_low (t[j][0][p[0]] + t[j][1][p[1]]
                                        + t[j][2][p[2]]);
    return 0;
}

static const char *const space_names[QC_CS_COUNT] = {
    "RGB", "HSV", "RGB CIE", "XYZ", "YUV", "YIQ", "YPbPr", "YCbCr",
    "YDbDr", "Lab"
};

int
qc_colorspace_parse (const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < QC_CS_COUNT; i++)
        if (strcasecmp (name, space_names[i]) == 0)
            return i;
    return -1;
}

const char *
qc_colorspace_name (qc_colorspace_t space)
{
    if ((int) space < 0 || space >= QC_CS_COUNT)
        return "unknown";
    return space_names[space];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* Four pixels at a time while they are opaque (as a scanned slide's
 * pixels all are): their B, G, R bytes reordered to R, G, B by one
 * SSSE3 shuffle (built for AVX2, the feature checked at run time), 16
 * bytes stored of which the next store overwrites the last 4 (so it
 * stops 6 pixels before the end). Returns the pixels done. */
__attribute__ ((target ("avx2"))) static size_t
argb_opaque_x4 (const uint32_t *src, size_t n, uint8_t *out)
{
    const __m128i alpha = _mm_set1_epi32 ((int) 0xff000000u);
    const __m128i order = _mm_setr_epi8 (2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13,
                                         12, -1, -1, -1, -1);
    size_t x = 0;
    for (; x + 6 <= n; x += 4) {
        __m128i v = _mm_loadu_si128 ((const __m128i *) (src + x));
        __m128i a = _mm_cmpeq_epi32 (_mm_and_si128 (v, alpha), alpha);
        if (_mm_movemask_epi8 (a) != 0xffff)
            break;
        _mm_storeu_si128 ((__m128i *) (out + 3 * x), _mm_shuffle_epi8 (v, order));
    }
    return x;
}
#endif

void
qc_cpu_argb_over_row (const uint32_t *src, size_t n, const uint8_t bg[3],
                      uint8_t *out)
{
    if (!src || !bg || !out)
        return;
    size_t x = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int fast = qc_cpu_have_avx2 ();
#endif
    while (x < n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        if (fast)
            x += argb_opaque_x4 (src + x, n - x, out + 3 * x);
#endif
        /* one pixel the slow way: transparent, or the row's end */
        if (x < n) {
            qc_px_argb_over (src[x], bg[0], bg[1], bg[2], out + 3 * x);
            x++;
        }
    }
}
