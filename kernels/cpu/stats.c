/* Statistics of pixels, optionally under a mask: counts, mean/std
 * (two passes in double, numpy's population std), quantiles (numpy's
 * default linear interpolation, by selection rather than sorting). */
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>

static int
mask_fits (const qc_mask_t *mask, int w, int h)
{
    return !mask || (qc_mask_valid (mask) && mask->w == w && mask->h == h);
}

int
qc_cpu_mask_count (const qc_mask_t *m, size_t *count)
{
    if (!qc_mask_valid (m) || !count)
        return -1;
    size_t n = qc_npix (m->w, m->h), c = 0;
    for (size_t i = 0; i < n; i++)
        c += m->px[i] != 0;
    *count = c;
    return 0;
}

/* Stats of n values read through get (strided access without copies). */
static void
stats_of (const float *f, const uint8_t *u8, int stride, size_t n,
          const uint8_t *mask, qc_stats_t *out)
{
    size_t cnt = 0;
    double sum = 0.0, mn = 0.0, mx = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i])
            continue;
        double v = f ? f[i * stride] : u8[i * stride];
        if (cnt == 0)
            mn = mx = v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
        sum += v;
        cnt++;
    }
    double mean = cnt ? sum / (double) cnt : 0.0, ss = 0.0;
    for (size_t i = 0; cnt && i < n; i++) {
        if (mask && !mask[i])
            continue;
        double d = (f ? f[i * stride] : u8[i * stride]) - mean;
        ss += d * d;
    }
    out->n = cnt;
    out->sum = sum;
    out->mean = mean;
    out->std = cnt ? sqrt (ss / (double) cnt) : 0.0;
    out->min = mn;
    out->max = mx;
}

int
qc_cpu_fimg_stats (const qc_fimg_t *src, const qc_mask_t *mask,
                   qc_stats_t *out)
{
    if (!qc_fimg_valid (src) || !out || !mask_fits (mask, src->w, src->h))
        return -1;
    stats_of (src->px, NULL, 1, qc_npix (src->w, src->h),
              mask ? mask->px : NULL, out);
    return 0;
}

int
qc_cpu_rgb_stats (const qc_rgb_t *src, const qc_mask_t *mask,
                  qc_stats_t out[3])
{
    if (!qc_rgb_valid (src) || !out || !mask_fits (mask, src->w, src->h))
        return -1;
    for (int c = 0; c < 3; c++)
        stats_of (NULL, src->px + c, 3, qc_npix (src->w, src->h),
                  mask ? mask->px : NULL, &out[c]);
    return 0;
}

/* Rearranges v so that v[k] holds the k-th smallest value, everything
 * before it <= v[k] and everything after >= v[k] (Hoare selection,
 * median-of-three pivot: expected linear time). */
static void
select_kth (double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a))
                             : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

int
qc_cpu_fimg_quantile (const qc_fimg_t *src, const qc_mask_t *mask, double q,
                      double *out)
{
    if (!qc_fimg_valid (src) || !out || !(q >= 0.0 && q <= 1.0)
        || !mask_fits (mask, src->w, src->h))
        return -1;
    size_t n = qc_npix (src->w, src->h), cnt = 0;
    double *v = malloc (n * sizeof *v);
    if (!v)
        return -1;
    int has_nan = 0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask->px[i])
            continue;
        double x = src->px[i];
        if (x != x)
            has_nan = 1;
        else
            v[cnt++] = x;
    }
    if (cnt == 0 && !has_nan) {
        free (v);
        return -1;
    }
    if (has_nan) {              /* numpy.quantile propagates NaN */
        free (v);
        *out = NAN;
        return 0;
    }
    /* numpy 'linear': position h = (n - 1) q between order statistics. */
    double h = (double) (cnt - 1) * q;
    size_t k = (size_t) floor (h);
    if (k > cnt - 1)
        k = cnt - 1;
    select_kth (v, cnt, k);
    double lo = v[k], hi = lo;
    if (k + 1 < cnt) {
        hi = v[k + 1];          /* the smallest of the upper part */
        for (size_t i = k + 2; i < cnt; i++)
            hi = v[i] < hi ? v[i] : hi;
    }
    *out = lo + (h - (double) k) * (hi - lo);
    free (v);
    return 0;
}
