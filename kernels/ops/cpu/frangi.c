/* frangi: skimage 0.19 filters.frangi on a 2-D gray image (what
 * HistoQC's ClassificationModule computes as its "frangi" feature).
 *
 * Per sigma: Gaussian smoothing (scipy's sampled kernel, truncate 4,
 * border REFLECT as skimage's mode default; summed in float,
 * filter_f32.c), first differences by
 * np.gradient (central inside, one-sided at the edges) along columns and
 * rows, then the same again for the second differences; skimage 0.19
 * builds the Hessian this way rather than from Gaussian derivatives, and
 * so does this file. The elements are scaled by sigma^2 and each pixel's
 * vesselness is qc_px_frangi (pixel_math.h); the result is the maximum
 * over the sigmas. Differences are taken in double from float planes:
 * the result agrees with skimage's float64 to about 1e-4 relative. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QC_FRANGI_AVX2 1
#endif

/* np.gradient along a row of n values: central differences inside,
 * one-sided first differences at the two ends, 0 when n == 1 (numpy
 * refuses such an axis; a zero derivative is the sensible reading). */
static void
grad_row (const float *p, int n, float *out)
{
    if (n < 2) {
        out[0] = 0;
        return;
    }
    out[0] = (float) ((double) p[1] - (double) p[0]);
    for (int x = 1; x + 1 < n; x++)
        out[x] = (float) (0.5 * ((double) p[x + 1] - (double) p[x - 1]));
    out[n - 1] = (float) ((double) p[n - 1] - (double) p[n - 2]);
}

/* np.gradient across rows at row y: the rows it differences and the
 * factor (1/2 inside, 1 at the first and last row, 0 for one row). */
static void
grad_rows_at (int y, int h, int *up, int *dn, double *f)
{
    *up = y > 0 ? y - 1 : y;
    *dn = y + 1 < h ? y + 1 : y;
    *f = h < 2 ? 0.0 : (*up != y && *dn != y) ? 0.5 : 1.0;
}

/* Row r of gc = d/dc and gr = d/dr of s, the w x h smoothed plane (built
 * for AVX2 too: the same operations, four doubles a step). Rows, not
 * planes: the Hessian of row y needs rows y - 1 .. y + 1 of each only,
 * so two full-size planes (8 bytes a pixel, 1.4 GB at 10x) were
 * scratch that the memory gate did not count. */
__attribute__ ((target_clones ("avx2", "default"))) static void
gradients_row (const float *s, int w, int h, int r, float *gc, float *gr)
{
    int up, dn;
    double f;
    grad_rows_at (r, h, &up, &dn, &f);
    const float *a = s + (size_t) up * w, *b = s + (size_t) dn * w;
    for (int x = 0; x < w; x++)
        gr[x] = (float) (f * ((double) b[x] - (double) a[x]));
    grad_row (s + (size_t) r * w, w, gc);
}

/* One row of vesselness, max'ed into o: what the scalar loop in
 * qc_cpu_frangi computes, from x to w. */
static void
frangi_row_scalar (const float *hcc, const float *cu, const float *cd,
                   const float *ru, const float *rd, double s2, double f,
                   double beta_sq, double gamma_sq, float *o, int x, int w)
{
    for (; x < w; x++) {
        double hrc = s2 * f * ((double) cd[x] - (double) cu[x]);
        double hrr = s2 * f * ((double) rd[x] - (double) ru[x]);
        double v = qc_px_frangi (s2 * hcc[x], hrc, hrr, beta_sq, gamma_sq);
        if (v > o[x])
            o[x] = (float) v;
    }
}

#ifdef QC_FRANGI_AVX2
/* exp (r) of the reduced argument by its Taylor series to r^13 / 13!
 * (the rest is under 2e-17 relative for |r| <= ln2 / 2), in Estrin's
 * scheme: the same polynomial as Horner's rule, in 8 dependent steps
 * instead of 26, so that the four-lane loop is not waiting on one long
 * chain (a third faster here). */
__attribute__ ((target ("avx2"))) static inline __m256d
exp_poly_avx2 (__m256d r)
{
    static const double c[14] = {
        1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720,
        1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800,
        1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0
    };
#define PAIR(k) _mm256_add_pd (_mm256_set1_pd (c[k]), \
                               _mm256_mul_pd (_mm256_set1_pd (c[k + 1]), r))
    __m256d r2 = _mm256_mul_pd (r, r), r4 = _mm256_mul_pd (r2, r2);
    __m256d r8 = _mm256_mul_pd (r4, r4);
    __m256d b0 = _mm256_add_pd (PAIR (0), _mm256_mul_pd (PAIR (2), r2));
    __m256d b1 = _mm256_add_pd (PAIR (4), _mm256_mul_pd (PAIR (6), r2));
    __m256d b2 = _mm256_add_pd (PAIR (8), _mm256_mul_pd (PAIR (10), r2));
    __m256d b3 = PAIR (12);
#undef PAIR
    return _mm256_add_pd (_mm256_add_pd (b0, _mm256_mul_pd (b1, r4)),
                          _mm256_mul_pd (_mm256_add_pd (b2, _mm256_mul_pd (b3, r4)),
                                         r8));
}

/* x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so n ln2 is
 * exact): r returned, n in *n. */
__attribute__ ((target ("avx2"))) static inline __m256d
exp_reduce_avx2 (__m256d x, __m256d *n)
{
    *n = _mm256_round_pd (_mm256_mul_pd (x, _mm256_set1_pd (1.4426950408889634)),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_sub_pd (x, _mm256_mul_pd (*n, _mm256_set1_pd (6.93145751953125e-1)));
    return _mm256_sub_pd (r, _mm256_mul_pd (*n, _mm256_set1_pd (1.42860682030941723212e-6)));
}

/* 2^k for whole k in [-1022, 1023], built from its exponent bits. */
__attribute__ ((target ("avx2"))) static inline __m256d
pow2_avx2 (__m256d k)
{
    const __m256d magic = _mm256_set1_pd (6755399441055744.0);   /* 1.5 * 2^52 */
    __m256i ik = _mm256_castpd_si256 (_mm256_add_pd (k, magic));
    return _mm256_castsi256_pd (_mm256_slli_epi64 (
        _mm256_add_epi64 (ik, _mm256_set1_epi64x (1023)), 52));
}

/* exp (x) of four doubles x <= 0, to about 1 ulp: exp (r) of the
 * reduced argument by exp_poly_avx2, then times 2^n in two halves so
 * that no power underflows before the result does. Below -745 the
 * result is 0, as libm's. */
__attribute__ ((target ("avx2"))) static inline __m256d
exp_neg_avx2 (__m256d x)
{
    const __m256d lo_lim = _mm256_set1_pd (-745.2);
    __m256d under = _mm256_cmp_pd (x, lo_lim, _CMP_LT_OQ);
    x = _mm256_max_pd (x, lo_lim);
    __m256d n, p = exp_poly_avx2 (exp_reduce_avx2 (x, &n));
    /* 2^n as 2^a 2^b, a = floor (n / 2): each half at least -538 */
    __m256d a = _mm256_floor_pd (_mm256_mul_pd (n, _mm256_set1_pd (0.5)));
    __m256d b = _mm256_sub_pd (n, a);
    __m256d y = _mm256_mul_pd (_mm256_mul_pd (p, pow2_avx2 (a)), pow2_avx2 (b));
    return _mm256_andnot_pd (under, y);
}

/* exp_neg_avx2 where every lane has x > -700 (the beta term's argument,
 * -2 (l1 / l2)^2 >= -2 by default): nothing underflows, so 2^n is one
 * power, and p 2^n is the same number as (p 2^a) 2^b, each product by a
 * power of two being exact there; the same bits with fewer steps. */
__attribute__ ((target ("avx2"))) static inline __m256d
exp_neg_mid_avx2 (__m256d x)
{
    __m256d ok = _mm256_cmp_pd (x, _mm256_set1_pd (-700.0), _CMP_GT_OQ);
    if (_mm256_movemask_pd (ok) != 0xf)
        return exp_neg_avx2 (x);
    __m256d n, p = exp_poly_avx2 (exp_reduce_avx2 (x, &n));
    return _mm256_mul_pd (p, pow2_avx2 (n));
}

/* exp_neg_avx2 where every lane has |x| < 0.34: there n rounds to 0, so
 * r is x itself and both powers are 1, and the polynomial alone gives
 * the same bits. The gamma term's argument (-rg / 2 gamma^2, gamma 15
 * by default) is nearly always that small. */
__attribute__ ((target ("avx2"))) static inline __m256d
exp_neg_small_avx2 (__m256d x)
{
    const __m256d sign = _mm256_set1_pd (-0.0);
    __m256d small = _mm256_cmp_pd (_mm256_andnot_pd (sign, x),
                                   _mm256_set1_pd (0.34), _CMP_LT_OQ);
    if (_mm256_movemask_pd (small) == 0xf)
        return exp_poly_avx2 (x);
    return exp_neg_avx2 (x);
}

/* The constants of one row's vesselness. */
typedef struct {
    __m256d s2, s2f, half, four, zero, one, sign, tiny, nbeta, ngamma,
            ngamma_abs, slack;
} vconst_t;

/* The Hessian's eigenvalues at the four pixels from x, l1 the smaller
 * in size (qc_px_frangi's first lines), and pos: lanes with l2 > 0. */
__attribute__ ((target ("avx2"))) static inline void
eigen4 (const vconst_t *k, const float *hcc, const float *cu, const float *cd,
        const float *ru, const float *rd, int x, __m256d *l1, __m256d *l2,
        __m256d *pos)
{
    __m256d h00 = _mm256_mul_pd (k->s2, _mm256_cvtps_pd (_mm_loadu_ps (hcc + x)));
    __m256d h01 = _mm256_mul_pd (k->s2f, _mm256_sub_pd (_mm256_cvtps_pd (_mm_loadu_ps (cd + x)),
                                                        _mm256_cvtps_pd (_mm_loadu_ps (cu + x))));
    __m256d h11 = _mm256_mul_pd (k->s2f, _mm256_sub_pd (_mm256_cvtps_pd (_mm_loadu_ps (rd + x)),
                                                        _mm256_cvtps_pd (_mm_loadu_ps (ru + x))));
    __m256d half_tr = _mm256_mul_pd (k->half, _mm256_add_pd (h00, h11));
    __m256d d = _mm256_sub_pd (h00, h11);
    __m256d root = _mm256_mul_pd (k->half, _mm256_sqrt_pd (_mm256_add_pd (
        _mm256_mul_pd (_mm256_mul_pd (k->four, h01), h01), _mm256_mul_pd (d, d))));
    __m256d a = _mm256_add_pd (half_tr, root), b = _mm256_sub_pd (half_tr, root);
    __m256d swap = _mm256_cmp_pd (_mm256_andnot_pd (k->sign, b),
                                  _mm256_andnot_pd (k->sign, a), _CMP_LT_OQ);
    *l1 = _mm256_blendv_pd (a, b, swap);
    *l2 = _mm256_blendv_pd (b, a, swap);
    *pos = _mm256_cmp_pd (*l2, k->zero, _CMP_GT_OQ);
}

/* Lanes whose vesselness cannot beat old: bright-side ones (v is 0 and
 * old >= 0) and those where v <= 1 - exp (-rg / g) <= rg / g (with room
 * for the rounding of the computed v) is below what an earlier sigma
 * left. At the larger sigmas most of a slide's glass and smooth tissue
 * is here, and the exponentials are skipped when a whole group is. */
__attribute__ ((target ("avx2"))) static inline __m256d
cannot_win (const vconst_t *k, __m256d rg, __m256d pos, __m256d old)
{
    __m256d bound = _mm256_mul_pd (_mm256_mul_pd (rg, k->ngamma_abs), k->slack);
    return _mm256_or_pd (pos, _mm256_cmp_pd (bound, old, _CMP_LT_OQ));
}

/* max (old, vesselness) of four pixels, as floats: the rest of
 * qc_px_frangi (the same formulas in the same order, but for exp, not
 * libm's, and the divisions inside the exponents, products with the
 * reciprocals: each moves a value by about an ulp of a double, which
 * the float result rarely shows). */
__attribute__ ((target ("avx2"))) static inline __m128
vessel4 (const vconst_t *k, __m256d l1, __m256d l2, __m256d rg, __m256d pos,
         __m256d old)
{
    __m256d al2 = _mm256_andnot_pd (k->sign, l2);
    __m256d den = _mm256_blendv_pd (al2, k->tiny, _mm256_cmp_pd (al2, k->zero, _CMP_EQ_OQ));
    __m256d q = _mm256_div_pd (l1, den);
    __m256d rb = _mm256_mul_pd (q, q);
    __m256d eb = exp_neg_mid_avx2 (_mm256_mul_pd (rb, k->nbeta));
    __m256d eg = exp_neg_small_avx2 (_mm256_mul_pd (rg, k->ngamma));
    __m256d v = _mm256_mul_pd (eb, _mm256_sub_pd (k->one, eg));
    v = _mm256_andnot_pd (pos, v);
    __m256d gt = _mm256_cmp_pd (v, old, _CMP_GT_OQ);
    return _mm256_cvtpd_ps (_mm256_blendv_pd (old, v, gt));
}

/* frangi_row_scalar eight, then four, pixels at a time: two groups of
 * four side by side give the divider, the square root and the
 * exponentials independent work to overlap. A group whose lanes all
 * cannot win is left as it is (storing old back would change nothing). */
__attribute__ ((target ("avx2"))) static void
frangi_row_avx2 (const float *hcc, const float *cu, const float *cd,
                 const float *ru, const float *rd, double s2, double f,
                 double beta_sq, double gamma_sq, float *o, int w)
{
    const vconst_t k = {
        _mm256_set1_pd (s2), _mm256_set1_pd (s2 * f), _mm256_set1_pd (0.5),
        _mm256_set1_pd (4.0), _mm256_setzero_pd (), _mm256_set1_pd (1.0),
        _mm256_set1_pd (-0.0), _mm256_set1_pd (1e-10),
        _mm256_set1_pd (-1.0 / beta_sq), _mm256_set1_pd (-1.0 / gamma_sq),
        _mm256_set1_pd (1.0 / gamma_sq), _mm256_set1_pd (1.0 + 1e-9)
    };
    int x = 0;
    for (; x + 8 <= w; x += 8) {
        __m256d l1a, l2a, posa, l1b, l2b, posb;
        eigen4 (&k, hcc, cu, cd, ru, rd, x, &l1a, &l2a, &posa);
        eigen4 (&k, hcc, cu, cd, ru, rd, x + 4, &l1b, &l2b, &posb);
        if ((_mm256_movemask_pd (posa) & _mm256_movemask_pd (posb)) == 0xf)
            continue;
        __m256d rga = _mm256_add_pd (_mm256_mul_pd (l1a, l1a), _mm256_mul_pd (l2a, l2a));
        __m256d rgb = _mm256_add_pd (_mm256_mul_pd (l1b, l1b), _mm256_mul_pd (l2b, l2b));
        __m256d olda = _mm256_cvtps_pd (_mm_loadu_ps (o + x));
        __m256d oldb = _mm256_cvtps_pd (_mm_loadu_ps (o + x + 4));
        int la = _mm256_movemask_pd (cannot_win (&k, rga, posa, olda));
        int lb = _mm256_movemask_pd (cannot_win (&k, rgb, posb, oldb));
        if (la == 0xf && lb == 0xf)
            continue;
        if (la != 0xf)
            _mm_storeu_ps (o + x, vessel4 (&k, l1a, l2a, rga, posa, olda));
        if (lb != 0xf)
            _mm_storeu_ps (o + x + 4, vessel4 (&k, l1b, l2b, rgb, posb, oldb));
    }
    for (; x + 4 <= w; x += 4) {
        __m256d l1, l2, pos;
        eigen4 (&k, hcc, cu, cd, ru, rd, x, &l1, &l2, &pos);
        if (_mm256_movemask_pd (pos) == 0xf)
            continue;
        __m256d rg = _mm256_add_pd (_mm256_mul_pd (l1, l1), _mm256_mul_pd (l2, l2));
        __m256d old = _mm256_cvtps_pd (_mm_loadu_ps (o + x));
        if (_mm256_movemask_pd (cannot_win (&k, rg, pos, old)) == 0xf)
            continue;
        _mm_storeu_ps (o + x, vessel4 (&k, l1, l2, rg, pos, old));
    }
    frangi_row_scalar (hcc, cu, cd, ru, rd, s2, f, beta_sq, gamma_sq, o, x, w);
}

#endif

int
qc_frangi_args_ok (const qc_fimg_t *src, const double *sigmas, int nsigmas,
                   double beta, double gamma, const qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !sigmas || nsigmas < 1
        || nsigmas > QC_FRANGI_MAX_SIGMAS || !(beta > 0) || !isfinite (beta)
        || !(gamma > 0) || !isfinite (gamma))
        return 0;
    for (int i = 0; i < nsigmas; i++)
        if (!(sigmas[i] > 0) || !(sigmas[i] <= QC_FRANGI_MAX_SIGMA))
            return 0;
    return 1;
}

int
qc_cpu_frangi (const qc_fimg_t *src, const double *sigmas, int nsigmas,
               double beta, double gamma, int black_ridges, qc_fimg_t *dst)
{
    if (!qc_frangi_args_ok (src, sigmas, nsigmas, beta, gamma, dst))
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    qc_fimg_t *img = qc_fimg_new (w, h), *sm = qc_fimg_new (w, h);
    /* rows r - 1, r, r + 1 of gc and of gr, row r at index r % 3 */
    float *gc = malloc (3 * (size_t) w * sizeof *gc), *gr = malloc (3 * (size_t) w * sizeof *gr);
    float *hcc = malloc ((size_t) w * sizeof *hcc);
    int rc = -1;
    if (!img || !sm || !gc || !gr || !hcc)
        goto out;
    /* skimage's invert of a float image: 1 - v. src is not read after
     * this, so dst may be src. */
    for (size_t i = 0; i < n; i++)
        img->px[i] = black_ridges ? 1.0f - src->px[i] : src->px[i];
    memset (dst->px, 0, n * sizeof *dst->px);
    const double beta_sq = 2.0 * beta * beta, gamma_sq = 2.0 * gamma * gamma;
    for (int k = 0; k < nsigmas; k++) {
        double s2 = sigmas[k] * sigmas[k];
        if (qc_cpu_gaussian_f32 (img, sigmas[k], 4.0, QC_BORDER_REFLECT, sm) != 0)
            goto out;
        gradients_row (sm->px, w, h, 0, gc, gr);
        for (int y = 0; y < h; y++) {
            int up, dn;
            double f;
            grad_rows_at (y, h, &up, &dn, &f);
            if (dn > y)         /* rows up and y are in the ring already */
                gradients_row (sm->px, w, h, dn, gc + (size_t) (dn % 3) * w,
                               gr + (size_t) (dn % 3) * w);
            /* skimage's 'rc' order: d/dc of gc, d/dr of gc, d/dr of gr */
            grad_row (gc + (size_t) (y % 3) * w, w, hcc);
            const float *cu = gc + (size_t) (up % 3) * w, *cd = gc + (size_t) (dn % 3) * w;
            const float *ru = gr + (size_t) (up % 3) * w, *rd = gr + (size_t) (dn % 3) * w;
            float *o = dst->px + (size_t) y * w;
#ifdef QC_FRANGI_AVX2
            if (qc_cpu_have_avx2 ())
                frangi_row_avx2 (hcc, cu, cd, ru, rd, s2, f, beta_sq, gamma_sq,
                                 o, w);
            else
#endif
                frangi_row_scalar (hcc, cu, cd, ru, rd, s2, f, beta_sq,
                                   gamma_sq, o, 0, w);
        }
    }
    rc = 0;
out:
    qc_fimg_destroy (&img);
    qc_fimg_destroy (&sm);
    free (gc);
    free (gr);
    free (hcc);
    return rc;
}
