/* Per-pixel arithmetic shared by the CPU backend (kernels/ops/cpu) and the
 * CUDA backend: written once here so that both compute the same numbers
 * and the CPU unit tests check the arithmetic the GPU runs.
 *
 * Rules for this header: no static data (device code cannot read host
 * tables), no allocation, no libc beyond <math.h>; matrices travel by
 * value in qc_mat3_t. Arithmetic is in double, as scikit-image computes
 * in float64; results are stored as float by the callers.
 *
 * The formulas follow scikit-image 0.19 (what HistoQC runs on):
 * uint8 input is first scaled to [0, 1] (img_as_float), then
 *   gray  = 0.2125 R + 0.7154 G + 0.0721 B            (rgb2gray)
 *   HSV   as rgb2hsv (ties between max channels: B wins, then G)
 *   YUV, YIQ, YPbPr, YDbDr, RGB CIE: a 3x3 matrix on [0,1] RGB
 *   YCbCr: matrix in 0..255 units plus (16, 128, 128)
 *   XYZ   = matrix on sRGB-linearised RGB; Lab from XYZ, D65 2-degree
 *   stains (separate_stains): -log(max(c, 1e-6)) / -log(1e-6) per
 *         channel, times the stain matrix, clipped below at 0. */
#ifndef QC_PIXEL_MATH_H
#define QC_PIXEL_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define QC_HD __host__ __device__ inline
#else
#define QC_HD static inline
#endif

/* Row-major 3x3 matrix. */
typedef struct qc_mat3 {
    double m[9];
} qc_mat3_t;

/* How filters see pixels outside the image (scipy.ndimage names):
 *   REFLECT   d c b a | a b c d | d c b a   (ndimage default; skimage
 *             sobel, laplace)
 *   MIRROR    d c b | a b c d | c b a
 *   NEAREST   a a a | a b c d | d d d       (skimage.filters.gaussian
 *             default)
 *   WRAP      b c d | a b c d | a b c
 *   CONSTANT  0 0 0 | a b c d | 0 0 0       (scipy.signal.convolve2d
 *             'fill') */
typedef enum {
    QC_BORDER_REFLECT = 0,
    QC_BORDER_MIRROR = 1,
    QC_BORDER_NEAREST = 2,
    QC_BORDER_WRAP = 3,
    QC_BORDER_CONSTANT = 4
} qc_border_t;

/* Index inside [0, n) that position i reads under the border rule, or
 * -1 for CONSTANT outside the image (the caller reads 0). Works for any
 * overhang, however far (the patterns repeat). n must be >= 1. */
QC_HD int
qc_px_border_index (long i, long n, int mode)
{
    if (i >= 0 && i < n)
        return (int) i;
    switch (mode) {
    case QC_BORDER_NEAREST:
        return i < 0 ? 0 : (int) (n - 1);
    case QC_BORDER_WRAP: {
        long m = i % n;
        return (int) (m < 0 ? m + n : m);
    }
    case QC_BORDER_MIRROR: {
        if (n == 1)
            return 0;
        long p = 2 * n - 2;
        long m = i % p;
        if (m < 0)
            m += p;
        return (int) (m < n ? m : p - m);
    }
    case QC_BORDER_REFLECT: {
        long p = 2 * n;
        long m = i % p;
        if (m < 0)
            m += p;
        return (int) (m < n ? m : p - 1 - m);
    }
    default:
        return -1;
    }
}

/* ---- colour -------------------------------------------------------- */

QC_HD double
qc_px_unit (uint8_t v)
{
    return v / 255.0;
}

/* skimage rgb2gray on uint8 input, in [0, 1]. */
QC_HD double
qc_px_gray (uint8_t r, uint8_t g, uint8_t b)
{
    return qc_px_unit (r) * 0.2125 + qc_px_unit (g) * 0.7154
         + qc_px_unit (b) * 0.0721;
}

/* Population standard deviation of the three channel values (numpy
 * img.std(axis=2) on uint8 RGB, in 0..255 units). */
QC_HD double
qc_px_channel_std (uint8_t r, uint8_t g, uint8_t b)
{
    double m = ((double) r + (double) g + (double) b) / 3.0;
    double dr = r - m, dg = g - m, db = b - m;
    return sqrt ((dr * dr + dg * dg + db * db) / 3.0);
}

/* out = M * (r, g, b) for r, g, b already in [0, 1]. */
QC_HD void
qc_px_mat3_apply (qc_mat3_t m, double r, double g, double b, double out[3])
{
    out[0] = m.m[0] * r + m.m[1] * g + m.m[2] * b;
    out[1] = m.m[3] * r + m.m[4] * g + m.m[5] * b;
    out[2] = m.m[6] * r + m.m[7] * g + m.m[8] * b;
}

/* skimage rgb2hsv: h, s, v in [0, 1]. */
QC_HD void
qc_px_rgb_to_hsv (uint8_t r8, uint8_t g8, uint8_t b8, double out[3])
{
    double r = qc_px_unit (r8), g = qc_px_unit (g8), b = qc_px_unit (b8);
    double mx = fmax (r, fmax (g, b));
    double d = mx - fmin (r, fmin (g, b));
    double h = 0.0, s = 0.0;
    if (d > 0.0) {
        s = d / mx;
        /* skimage assigns R's formula, then G's, then B's, each over
         * the pixels where that channel equals the max: later wins. */
        if (b == mx)
            h = 4.0 + (r - g) / d;
        else if (g == mx)
            h = 2.0 + (b - r) / d;
        else
            h = (g - b) / d;
        h /= 6.0;
        h -= floor (h);      /* Python's (h / 6) % 1 */
    }
    out[0] = h;
    out[1] = s;
    out[2] = mx;
}

/* sRGB transfer function inverse (skimage rgb2xyz). */
QC_HD double
qc_px_srgb_to_linear (double c)
{
    return c > 0.04045 ? pow ((c + 0.055) / 1.055, 2.4) : c / 12.92;
}

/* skimage rgb2xyz (sRGB, D65). */
QC_HD void
qc_px_rgb_to_xyz (uint8_t r, uint8_t g, uint8_t b, double out[3])
{
    double lr = qc_px_srgb_to_linear (qc_px_unit (r));
    double lg = qc_px_srgb_to_linear (qc_px_unit (g));
    double lb = qc_px_srgb_to_linear (qc_px_unit (b));
    out[0] = 0.412453 * lr + 0.357580 * lg + 0.180423 * lb;
    out[1] = 0.212671 * lr + 0.715160 * lg + 0.072169 * lb;
    out[2] = 0.019334 * lr + 0.119193 * lg + 0.950227 * lb;
}

QC_HD double
qc_px_lab_f (double t)
{
    return t > 0.008856 ? cbrt (t) : 7.787 * t + 16.0 / 116.0;
}

/* skimage rgb2lab (D65, 2-degree observer): L in [0, 100]. */
QC_HD void
qc_px_rgb_to_lab (uint8_t r, uint8_t g, uint8_t b, double out[3])
{
    double xyz[3];
    qc_px_rgb_to_xyz (r, g, b, xyz);
    double fx = qc_px_lab_f (xyz[0] / 0.95047);
    double fy = qc_px_lab_f (xyz[1] / 1.0);
    double fz = qc_px_lab_f (xyz[2] / 1.08883);
    out[0] = 116.0 * fy - 16.0;
    out[1] = 500.0 * (fx - fy);
    out[2] = 200.0 * (fy - fz);
}

/* skimage separate_stains, step 1, per channel: the optical density
 * log(max(c, 1e-6)) / log(1e-6) of a uint8 value scaled to [0, 1]
 * (normalised so the darkest representable value maps to 1). */
QC_HD double
qc_px_stain_od (uint8_t v)
{
    return log (fmax (qc_px_unit (v), 1e-6)) / log (1e-6);
}

/* Step 2: the densities as a row vector times m, the X_from_rgb matrix
 * (e.g. hed_from_rgb), as skimage does (od @ m), clipped below at 0. */
QC_HD void
qc_px_stains_from_od (qc_mat3_t m, double l0, double l1, double l2,
                      double out[3])
{
    for (int j = 0; j < 3; j++) {
        double s = l0 * m.m[j] + l1 * m.m[3 + j] + l2 * m.m[6 + j];
        out[j] = s > 0.0 ? s : 0.0;
    }
}

/* Both steps for one pixel. */
QC_HD void
qc_px_separate_stains (qc_mat3_t m, uint8_t r, uint8_t g, uint8_t b,
                       double out[3])
{
    qc_px_stains_from_od (m, qc_px_stain_od (r), qc_px_stain_od (g),
                          qc_px_stain_od (b), out);
}

/* A premultiplied ARGB pixel (OpenSlide's format) composited over an
 * opaque background, rounded to nearest: what PIL's paste of the
 * un-premultiplied RGBA over a solid background gives. */
QC_HD void
qc_px_argb_over (uint32_t p, uint8_t bg_r, uint8_t bg_g, uint8_t bg_b,
                 uint8_t out[3])
{
    uint32_t a = p >> 24;
    uint32_t c[3] = { (p >> 16) & 255u, (p >> 8) & 255u, p & 255u };
    if (a == 255u) {
        out[0] = (uint8_t) c[0];
        out[1] = (uint8_t) c[1];
        out[2] = (uint8_t) c[2];
        return;
    }
    uint32_t bg[3] = { bg_r, bg_g, bg_b };
    for (int k = 0; k < 3; k++) {
        uint32_t v = (c[k] * 255u + bg[k] * (255u - a) + 127u) / 255u;
        out[k] = (uint8_t) (v > 255u ? 255u : v);
    }
}

/* skimage img_as_ubyte of a float in [0, 1]: rint(v * 255); values
 * outside [0, 1] (which skimage refuses) are clipped, NaN gives 0. */
QC_HD uint8_t
qc_px_u8_from_unit (double v)
{
    if (!(v > 0.0))
        return 0;
    if (v >= 1.0)
        return 255;
    return (uint8_t) rint (v * 255.0);
}

/* ---- stencils ------------------------------------------------------ */

/* skimage.filters.laplace (ksize 3): 4 c - up - down - left - right. */
QC_HD double
qc_px_laplace (double c, double up, double down, double left, double right)
{
    return 4.0 * c - up - down - left - right;
}

/* skimage 0.19 sobel magnitude over a 3x3 neighbourhood p (row-major,
 * p[4] the centre): per axis the difference [1, 0, -1] along it,
 * smoothed by [1, 2, 1] / 4 across it; magnitude sqrt((gx^2 + gy^2) / 2). */
QC_HD double
qc_px_sobel (const double p[9])
{
    double gy = ((p[0] - p[6]) + 2.0 * (p[1] - p[7]) + (p[2] - p[8])) / 4.0;
    double gx = ((p[0] - p[2]) + 2.0 * (p[3] - p[5]) + (p[6] - p[8])) / 4.0;
    return sqrt ((gx * gx + gy * gy) / 2.0);
}

/* scipy.ndimage gaussian radius: int(truncate * sigma + 0.5). */
QC_HD int
qc_px_gauss_radius (double sigma, double truncate)
{
    return (int) (truncate * sigma + 0.5);
}

/* ---- histogram ----------------------------------------------------- */

/* skimage threshold_otsu's choice on a histogram: the index i (of
 * n >= 2 bins) maximising w1(i) w2(i+1) (m1(i) - m2(i+1))^2, first on
 * ties, where w1, m1 are weight and mean of bins 0..i and w2, m2 those
 * of bins i+1..n-1. A NaN (an empty class) wins, as in numpy's argmax.
 * The threshold is centers[returned index]. */
QC_HD int
qc_px_otsu_index (const double *counts, const double *centers, int n)
{
    double tw = 0.0, ts = 0.0;
    for (int i = 0; i < n; i++) {
        tw += counts[i];
        ts += counts[i] * centers[i];
    }
    double w1 = 0.0, s1 = 0.0, best = -1.0;
    int best_i = 0;
    for (int i = 0; i + 1 < n; i++) {
        w1 += counts[i];
        s1 += counts[i] * centers[i];
        double w2 = tw - w1, s2 = ts - s1;
        double d = s1 / w1 - s2 / w2;
        double v = w1 * w2 * d * d;
        if (v != v)
            return i;
        if (v > best) {
            best = v;
            best_i = i;
        }
    }
    return best_i;
}

/* ---- classification features (ClassificationModule) ----------------- */

/* skimage 0.19 frangi at one scale, 2-D, for one pixel. h00, h01, h11:
 * the Hessian of the Gaussian-smoothed image (second differences by
 * np.gradient twice) times sigma^2; beta_sq = 2 beta^2, gamma_sq =
 * 2 gamma^2. The eigenvalues sorted by magnitude (l1 the smaller; a tie
 * keeps skimage's order, the larger eigenvalue first) give
 *   exp (-(l1 / |l2|)^2 / beta_sq) * (1 - exp (-(l1^2 + l2^2) / gamma_sq))
 * (alpha plays no part in 2-D), and 0 where l2 > 0: skimage's
 * "remove background" for the ridge polarity the caller's sign chose.
 * |l2| == 0 divides by 1e-10 as skimage's _divide_nonzero does. */
QC_HD double
qc_px_frangi (double h00, double h01, double h11, double beta_sq,
              double gamma_sq)
{
    double half_tr = 0.5 * (h00 + h11);
    double root = 0.5 * sqrt (4.0 * h01 * h01 + (h00 - h11) * (h00 - h11));
    double a = half_tr + root, b = half_tr - root;
    double l1 = a, l2 = b;
    if (fabs (b) < fabs (a)) {
        l1 = b;
        l2 = a;
    }
    if (l2 > 0.0)
        return 0.0;
    double den = fabs (l2) == 0.0 ? 1e-10 : fabs (l2);
    double rb = (l1 / den) * (l1 / den);
    double rg = l1 * l1 + l2 * l2;
    return exp (-rb / beta_sq) * (1.0 - exp (-rg / gamma_sq));
}

/* Methods of skimage.feature.local_binary_pattern. */
typedef enum {
    QC_LBP_DEFAULT = 0,   /* sum of bit_i 2^i */
    QC_LBP_ROR,           /* smallest of the P bit rotations of default */
    QC_LBP_UNIFORM,       /* bits set when <= 2 changes (i to i+1, not
                             wrapping, as skimage counts), else P + 1 */
    QC_LBP_NRI_UNIFORM,   /* skimage's non-rotation-invariant uniform
                             codes (0 .. P (P - 1) + 2) */
    QC_LBP_VAR            /* variance of the P samples (NaN when 0) */
} qc_lbp_method_t;

/* skimage bilinear_interpolation with mode 'C', cval 0: the value of a
 * w x h float image at (row r, column c); corners outside read 0. */
QC_HD double
qc_px_bilinear_zero (const float *img, long w, long h, double r, double c)
{
    long r0 = (long) floor (r), c0 = (long) floor (c);
    long r1 = (long) ceil (r), c1 = (long) ceil (c);
    double dr = r - (double) r0, dc = c - (double) c0;
    double tl = (r0 >= 0 && r0 < h && c0 >= 0 && c0 < w) ? img[r0 * w + c0] : 0.0;
    double tr = (r0 >= 0 && r0 < h && c1 >= 0 && c1 < w) ? img[r0 * w + c1] : 0.0;
    double bl = (r1 >= 0 && r1 < h && c0 >= 0 && c0 < w) ? img[r1 * w + c0] : 0.0;
    double br = (r1 >= 0 && r1 < h && c1 >= 0 && c1 < w) ? img[r1 * w + c1] : 0.0;
    double top = (1.0 - dc) * tl + dc * tr;
    double bottom = (1.0 - dc) * bl + dc * br;
    return (1.0 - dr) * top + dr * bottom;
}

/* skimage local_binary_pattern at pixel (row y, column x) of a w x h
 * image: sample i (0 <= i < p <= 31) is read at (y + rp[i], x + cp[i]),
 * where rp[i] = round (-R sin (2 pi i / P), 5) and cp[i] = round
 * (R cos (2 pi i / P), 5) as skimage rounds them; bit i is set when the
 * sample is >= the centre. */
QC_HD double
qc_px_lbp (const float *img, int w, int h, int x, int y, int p,
           const double *rp, const double *cp, qc_lbp_method_t method)
{
    double centre = img[(long) y * w + x];
    unsigned bits = 0;
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < p; i++) {
        double t = qc_px_bilinear_zero (img, w, h, y + rp[i], x + cp[i]);
        sum += t;
        sq += t * t;
        if (t - centre >= 0.0)
            bits |= 1u << i;
    }
    if (method == QC_LBP_VAR) {
        double var = (sq - sum * sum / p) / p;
        return var != 0.0 ? var : NAN;
    }
    if (method == QC_LBP_UNIFORM || method == QC_LBP_NRI_UNIFORM) {
        int changes = 0, ones = 0, first_one = -1, first_zero = -1;
        for (int i = 0; i < p; i++) {
            int b = (bits >> i) & 1u;
            if (i + 1 < p)
                changes += b != (int) ((bits >> (i + 1)) & 1u);
            if (b) {
                ones++;
                if (first_one < 0)
                    first_one = i;
            } else if (first_zero < 0) {
                first_zero = i;
            }
        }
        if (method == QC_LBP_UNIFORM)
            return changes <= 2 ? (double) ones : (double) (p + 1);
        if (changes > 2)
            return (double) p * (p - 1) + 2;
        if (ones == 0)
            return 0.0;
        if (ones == p)
            return (double) p * (p - 1) + 1;
        int rot = first_one == 0 ? ones - first_zero : p - first_one;
        return 1.0 + (double) (ones - 1) * p + rot;
    }
    if (method == QC_LBP_ROR) {
        unsigned best = bits, v = bits;
        for (int i = 1; i < p; i++) {
            v = (v >> 1) | ((v & 1u) << (p - 1));
            if (v < best)
                best = v;
        }
        bits = best;
    }
    return (double) bits;
}

/* One pixel's margin (log-odds) under a boosted ensemble of oblivious
 * trees (kernels/ops/trees.h): tree t tests feature feat[t d + k]
 * against thr[t d + k] at level k (bit k of the leaf index set when the
 * value is greater; NaN goes left) and adds leaf[(t << d) + index].
 * f(j) is feature j of this pixel: plane j at pixel i, planes[j][i].
 * Summed in tree order in double, as the CPU's blocked loop does. */
QC_HD double
qc_px_trees_margin (const float *const *planes, size_t i, int ntrees,
                    int depth, const uint8_t *feat, const float *thr,
                    const float *leaf, double base)
{
    double m = base;
    for (int t = 0; t < ntrees; t++) {
        unsigned idx = 0;
        for (int k = 0; k < depth; k++) {
            int at = t * depth + k;
            idx |= (unsigned) (planes[feat[at]][i] > thr[at]) << k;
        }
        m += leaf[((size_t) t << depth) + idx];
    }
    return m;
}

/* Logistic function: probability from a margin. */
QC_HD double
qc_px_sigmoid (double m)
{
    return 1.0 / (1.0 + exp (-m));
}

/* ---- shared by the CUDA backend (kernels/ops/cuda): formulas the CPU
 * backend computes in its own loops, written once more here so that the
 * kernels call them; tests/unit/test_kernel_math.c checks on the CPU that
 * each gives exactly what the CPU op gives. ---- */

/* numpy.linspace (lo, hi, nbins + 1) edge i (numpy.histogram's edges). */
QC_HD double
qc_px_hist_edge (double lo, double hi, int nbins, int i)
{
    if (i == nbins)
        return hi;
    return (double) i * ((hi - lo) / nbins) + lo;
}

/* numpy.histogram's bin of v in [lo, hi] (the caller checked the range;
 * norm = nbins / (hi - lo)): the computed index, corrected against the
 * edges as numpy corrects it. */
QC_HD int
qc_px_hist_bin (double v, double lo, double hi, int nbins, double norm)
{
    long idx = (long) ((v - lo) * norm);
    if (idx >= nbins)
        idx = nbins - 1;
    if (idx < 0)
        idx = 0;
    if (v < qc_px_hist_edge (lo, hi, nbins, (int) idx) && idx > 0)
        idx--;
    else if (idx != nbins - 1
             && v >= qc_px_hist_edge (lo, hi, nbins, (int) idx + 1))
        idx++;
    return (int) idx;
}

/* A resized value rounded to uint8: to nearest, clipped, NaN gives 0. */
QC_HD uint8_t
qc_px_round_u8 (double v)
{
    if (!(v > 0.0))
        return 0;
    if (v >= 255.0)
        return 255;
    return (uint8_t) (v + 0.5);
}

/* Bilinear resize taps of output o along an axis of n_src -> n_dst:
 * sample at (o + 0.5) n_src / n_dst - 0.5 clamped to the edge pixels;
 * *t is the weight of *i1. */
QC_HD void
qc_px_bilinear_tap (int n_src, int n_dst, int o, int *i0, int *i1, double *t)
{
    double s = (double) n_src / n_dst;
    double x = (o + 0.5) * s - 0.5;
    if (x < 0.0)
        x = 0.0;
    if (x > n_src - 1)
        x = n_src - 1;
    int a = (int) floor (x);
    *i0 = a;
    *i1 = a + 1 < n_src ? a + 1 : a;
    *t = x - a;
}

/* Bilinear blend of four neighbours (u along x, v along y). */
QC_HD double
qc_px_bilinear_mix (double pa, double pb, double pc, double pd, double u,
                    double v)
{
    double top = pa + (pb - pa) * u, bot = pc + (pd - pc) * u;
    return top + (bot - top) * v;
}

/* Nearest resize: the source pixel whose area holds output o's centre. */
QC_HD int
qc_px_nearest_index (int o, int n_src, int n_dst)
{
    int x = (int) floor ((o + 0.5) * n_src / n_dst);
    return x < n_src ? x : n_src - 1;
}

/* Largest k >= 0 with k * k <= v (v >= 0), exact for any long: the
 * half-height of skimage's disk (r) at column offset dx is
 * qc_px_isqrt (r^2 - dx^2). */
QC_HD long
qc_px_isqrt (long v)
{
    if (v <= 0)
        return 0;
    long k = (long) sqrt ((double) v);
    while (k > 0 && k * k > v)
        k--;
    while ((k + 1) * (k + 1) <= v)
        k++;
    return k;
}

/* One pixel of rgb_to_space: space is a qc_colorspace_t (kernels/ops/ops.h:
 * RGB 0, HSV 1, RGB CIE 2, XYZ 3, YUV 4, YIQ 5, YPbPr 6, YCbCr 7,
 * YDbDr 8, Lab 9). The linear spaces use skimage's X_from_rgb matrices
 * (rgbcie_from_rgb is rgbcie_from_xyz @ xyz_from_rgb); YCbCr adds
 * (16, 128, 128) in 0..255 units; RGB gives the raw values. */
QC_HD void
qc_px_rgb_to_space (int space, uint8_t r, uint8_t g, uint8_t b,
                    double out[3])
{
    double m[9], add0 = 0.0, add12 = 0.0;
    switch (space) {
    case 1: qc_px_rgb_to_hsv (r, g, b, out); return;
    case 3: qc_px_rgb_to_xyz (r, g, b, out); return;
    case 9: qc_px_rgb_to_lab (r, g, b, out); return;
    case 4:
        m[0] = 0.299; m[1] = 0.587; m[2] = 0.114;
        m[3] = -0.14714119; m[4] = -0.28886916; m[5] = 0.43601035;
        m[6] = 0.61497538; m[7] = -0.51496512; m[8] = -0.10001026;
        break;
    case 5:
        m[0] = 0.299; m[1] = 0.587; m[2] = 0.114;
        m[3] = 0.59590059; m[4] = -0.27455667; m[5] = -0.32134392;
        m[6] = 0.21153661; m[7] = -0.52273617; m[8] = 0.31119955;
        break;
    case 6:
        m[0] = 0.299; m[1] = 0.587; m[2] = 0.114;
        m[3] = -0.168736; m[4] = -0.331264; m[5] = 0.5;
        m[6] = 0.5; m[7] = -0.418688; m[8] = -0.081312;
        break;
    case 7:
        m[0] = 65.481; m[1] = 128.553; m[2] = 24.966;
        m[3] = -37.797; m[4] = -74.203; m[5] = 112.0;
        m[6] = 112.0; m[7] = -93.786; m[8] = -18.214;
        add0 = 16.0;
        add12 = 128.0;
        break;
    case 8:
        m[0] = 0.299; m[1] = 0.587; m[2] = 0.114;
        m[3] = -0.45; m[4] = -0.883; m[5] = 1.333;
        m[6] = -1.333; m[7] = 1.116; m[8] = 0.217;
        break;
    case 2:
        m[0] = 0.13725336022997064; m[1] = 0.02629377905995245;
        m[2] = -0.0146615357119699; m[3] = 0.01638562378596666;
        m[4] = 0.14980089868815039; m[5] = 0.01669445806092686;
        m[6] = 0.00329058761832357; m[7] = 0.01979351133648332;
        m[8] = 0.1696916440498896;
        break;
    default:
        out[0] = r;
        out[1] = g;
        out[2] = b;
        return;
    }
    double u0 = qc_px_unit (r), u1 = qc_px_unit (g), u2 = qc_px_unit (b);
    out[0] = m[0] * u0 + m[1] * u1 + m[2] * u2 + add0;
    out[1] = m[3] * u0 + m[4] * u1 + m[5] * u2 + add12;
    out[2] = m[6] * u0 + m[7] * u1 + m[8] * u2 + add12;
}

/* A float's order as an unsigned key: larger float, larger key (-0
 * counts as +0); the radix select of fimg_quantile (both backends)
 * counts these, 16 bits at a time. */
QC_HD uint32_t
qc_px_float_key (float f)
{
    union { float f; uint32_t u; } v;
    v.f = f;
    uint32_t u = v.u << 1 ? v.u : 0;             /* -0 as +0 */
    return u ^ ((uint32_t) ((int32_t) u >> 31) | 0x80000000u);
}

QC_HD float
qc_px_key_float (uint32_t k)
{
    union { float f; uint32_t u; } v;
    v.u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    return v.f;
}

/* The k-th smallest of v[0..n) (v is reordered): Hoare's selection with
 * a median-of-three pivot; median_disk's per-pixel median on both
 * backends, so that they pick the same value. */
QC_HD float
qc_px_select_kth (float *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (hi > lo) {
        int mid = lo + (hi - lo) / 2;
        float a = v[lo], b = v[mid], c = v[hi];
        float pivot = a < b ? (b < c ? b : (a < c ? c : a))
                            : (a < c ? a : (b < c ? c : b));
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (pivot < v[j])
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* median_disk at pixel (x, y) of a w x h image: the k values under the
 * footprint (dx, dy; reaching radius at most) gathered into v, under
 * the border rule, and their middle one (rank k / 2). */
QC_HD float
qc_px_median_at (const float *p, int w, int h, int x, int y, const int *dx,
                 const int *dy, int k, int radius, int border, float *v)
{
    if (y >= radius && y + radius < h && x >= radius && x + radius < w) {
        const float *c = p + (size_t) y * w + x;
        for (int i = 0; i < k; i++)
            v[i] = c[(long) dy[i] * w + dx[i]];
    } else {
        for (int i = 0; i < k; i++) {
            int yy = qc_px_border_index ((long) y + dy[i], h, border);
            int xx = qc_px_border_index ((long) x + dx[i], w, border);
            v[i] = (yy < 0 || xx < 0) ? 0.0f : p[(size_t) yy * w + xx];
        }
    }
    return qc_px_select_kth (v, k, k / 2);
}

/* Gabor's direct 2-D sum (sigma_x != sigma_y) at pixel (x, y) of a w x h
 * image: the (2 y0 + 1) x (2 x0 + 1) taps k, row-major, under the border
 * rule; an outside pixel (CONSTANT) adds nothing. */
QC_HD double
qc_px_taps_2d_at (const float *src, long w, long h, long x, long y,
                  const double *k, int x0, int y0, int border)
{
    int kw = 2 * x0 + 1, kh = 2 * y0 + 1;
    double s = 0.0;
    for (int j = 0; j < kh; j++) {
        int yy = qc_px_border_index (y + j - y0, h, border);
        if (yy < 0)
            continue;
        for (int i = 0; i < kw; i++) {
            int xx = qc_px_border_index (x + i - x0, w, border);
            if (xx >= 0)
                s += k[(size_t) j * kw + i] * src[(size_t) yy * w + xx];
        }
    }
    return s;
}

#endif
