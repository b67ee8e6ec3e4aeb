/* Statistics of pixels, optionally under a mask: counts, mean/std
 * (two passes in double, numpy's population std), quantiles (numpy's
 * default linear interpolation, by selection rather than sorting). */
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

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

/* A float's order as an unsigned key: larger float, larger key (-0
 * counts as +0). */
static inline uint32_t
float_key (float f)
{
    uint32_t u;
    memcpy (&u, &f, sizeof u);
    u = u << 1 ? u : 0;                          /* -0 as +0 */
    return u ^ ((uint32_t) ((int32_t) u >> 31) | 0x80000000u);
}

#define BINS 65536              /* 16 bits of a key per pass */

static inline float
key_float (uint32_t k)
{
    uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float f;
    memcpy (&f, &u, sizeof f);
    return f;
}

/* The top bin that holds rank (from 0), and the rank within it. */
static uint32_t
top_bin (const uint32_t *top, size_t rank, size_t *within)
{
    size_t before = 0;
    uint32_t bin = 0;
    while (before + top[bin] <= rank)
        before += top[bin++];
    *within = rank - before;
    return bin;
}

/* Counts the low 16 bits of the selected keys whose top 16 bits are bin
 * into low (BINS counts). */
static void
count_low (const float *px, const uint8_t *mask, size_t npx, uint32_t bin,
           uint32_t *low)
{
    memset (low, 0, BINS * sizeof *low);
    for (size_t i = 0; i < npx; i++)
        if ((!mask || mask[i]) && px[i] == px[i]) {
            uint32_t k = float_key (px[i]);
            if (k >> 16 == bin)
                low[k & 0xffffu]++;
        }
}

/* The key of rank within (from 0) in bin, given its low counts. */
static uint32_t
low_key (const uint32_t *low, uint32_t bin, size_t within)
{
    size_t before = 0;
    uint32_t l = 0;
    while (before + low[l] <= within)
        before += low[l++];
    return bin << 16 | l;
}

/* numpy.quantile, linear: the two order statistics found by radix
 * passes over the floats' keys (order-preserving bit patterns), 16 bits
 * at a time, with no copy and no sort: ~4 ms for a 1875 x 1407 plane
 * instead of ~18 ms for selection over a copy of every value. */
int
qc_cpu_fimg_quantile (const qc_fimg_t *src, const qc_mask_t *mask, double q,
                      double *out)
{
    if (!qc_fimg_valid (src) || !out || !(q >= 0.0 && q <= 1.0)
        || !mask_fits (mask, src->w, src->h))
        return -1;
    size_t n = qc_npix (src->w, src->h), cnt = 0;
    const uint8_t *mk = mask ? mask->px : NULL;
    uint32_t *hist = calloc (2 * BINS, sizeof *hist);
    if (!hist)
        return -1;
    int has_nan = 0;
    for (size_t i = 0; i < n; i++) {
        if (mk && !mk[i])
            continue;
        float x = src->px[i];
        if (x != x) {
            has_nan = 1;
            continue;
        }
        hist[float_key (x) >> 16]++;
        cnt++;
    }
    int rc = 0;
    if (has_nan)                /* numpy.quantile propagates NaN */
        *out = NAN;
    else if (cnt == 0)
        rc = -1;
    else {
        /* numpy 'linear': position h = (n - 1) q between order statistics. */
        double h = (double) (cnt - 1) * q;
        size_t k = (size_t) floor (h);
        if (k > cnt - 1)
            k = cnt - 1;
        uint32_t *low = hist + BINS;
        size_t wk, wk1 = 0;
        uint32_t bk = top_bin (hist, k, &wk);
        count_low (src->px, mk, n, bk, low);
        double lo = key_float (low_key (low, bk, wk)), hi = lo;
        if (k + 1 < cnt) {
            uint32_t bk1 = top_bin (hist, k + 1, &wk1);
            if (bk1 != bk)
                count_low (src->px, mk, n, bk1, low);
            hi = key_float (low_key (low, bk1, wk1));
        }
        *out = lo + (h - (double) k) * (hi - lo);
    }
    free (hist);
    return rc;
}
