/* Statistics of pixels, optionally under a mask: counts, mean/std
 * (two passes in double, numpy's population std), quantiles (numpy's
 * default linear interpolation, by selection rather than sorting). */
#include "kernels/ops/cpu/cpu_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Set bytes of p[0..n): 32-bit counts over blocks (which vectorise
 * without widening every byte to 64 bits), added up in a size_t. */
__attribute__ ((target_clones ("avx2", "default"))) static size_t
count_set (const uint8_t *p, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n;) {
        size_t end = n - i > ((size_t) 1 << 20) ? i + ((size_t) 1 << 20) : n;
        uint32_t b = 0;
        for (; i < end; i++)
            b += p[i] != 0;
        c += b;
    }
    return c;
}

int
qc_cpu_mask_count (const qc_mask_t *m, size_t *count)
{
    if (!qc_mask_valid (m) || !count)
        return -1;
    *count = count_set (m->px, qc_npix (m->w, m->h));
    return 0;
}

#define LANES 4

/* Stats of the n floats f, those under mask only when it is given. Sums run in LANES interleaved partial sums
 * (value i into lane i % LANES; the values after the last whole group
 * into lane 0) added at the end: one running sum waits for each add to
 * finish, which made this the slowest step of the brightness and stain
 * statistics. The result differs from a single sum only in the last
 * bits. The mean comes first; a second pass sums the squared deviations
 * the same way. (Bytes have rgb_stats3 below.) */
typedef struct {
    const float *f;
    size_t n;
    const uint8_t *mask;
    size_t count;
    double sum[LANES], mn[LANES], mx[LANES], ss[LANES];
    double total, lo, hi, mean;
} lanes_t;

static void
lanes_init (lanes_t *s, const float *f, size_t n, const uint8_t *mask)
{
    memset (s, 0, sizeof *s);
    s->f = f, s->n = n, s->mask = mask;
    for (int l = 0; l < LANES; l++) {
        s->mn[l] = INFINITY;
        s->mx[l] = -INFINITY;
    }
}

/* The first pass's values from i on into lane 0, then the totals. */
static void
first_tail (lanes_t *s, size_t i)
{
    for (; i < s->n; i++) {
        if (s->mask && !s->mask[i])
            continue;
        double v = s->f[i];
        s->mn[0] = v < s->mn[0] ? v : s->mn[0];
        s->mx[0] = v > s->mx[0] ? v : s->mx[0];
        s->sum[0] += v;
        s->count++;
    }
    s->total = (s->sum[0] + s->sum[1]) + (s->sum[2] + s->sum[3]);
    s->lo = fmin (fmin (s->mn[0], s->mn[1]), fmin (s->mn[2], s->mn[3]));
    s->hi = fmax (fmax (s->mx[0], s->mx[1]), fmax (s->mx[2], s->mx[3]));
    s->mean = s->count ? s->total / (double) s->count : 0.0;
}

/* The second pass's values from i on into lane 0, then the result. */
static void
second_tail (lanes_t *s, size_t i, qc_stats_t *out)
{
    for (; s->count && i < s->n; i++) {
        if (s->mask && !s->mask[i])
            continue;
        double d = s->f[i] - s->mean;
        s->ss[0] += d * d;
    }
    size_t c = s->count;
    out->n = c;
    out->sum = s->total;
    out->mean = s->mean;
    out->std = c ? sqrt (((s->ss[0] + s->ss[1]) + (s->ss[2] + s->ss[3]))
                         / (double) c) : 0.0;
    out->min = c ? s->lo : 0.0;
    out->max = c ? s->hi : 0.0;
}

static void
stats_of (const float *f, size_t n, const uint8_t *mask, qc_stats_t *out)
{
    lanes_t s;
    lanes_init (&s, f, n, mask);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            if (mask && !mask[i + l])
                continue;
            double v = f[i + l];
            s.mn[l] = v < s.mn[l] ? v : s.mn[l];
            s.mx[l] = v > s.mx[l] ? v : s.mx[l];
            s.sum[l] += v;
            s.count++;
        }
    first_tail (&s, i);
    for (i = 0; s.count && i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            if (mask && !mask[i + l])
                continue;
            double d = f[i + l] - s.mean;
            s.ss[l] += d * d;
        }
    second_tail (&s, i, out);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QC_STATS_AVX2 1

/* Lanes l of the four masked by mask[i + l] == 0, as all-ones/zero. */
__attribute__ ((target ("avx2"))) static inline __m256d
lanes_on (const uint8_t *mask, size_t i)
{
    if (!mask)
        return _mm256_castsi256_pd (_mm256_set1_epi64x (-1));
    int32_t m4;
    memcpy (&m4, mask + i, sizeof m4);
    __m256i b = _mm256_cvtepu8_epi64 (_mm_cvtsi32_si128 (m4));
    __m256i off = _mm256_cmpeq_epi64 (b, _mm256_setzero_si256 ());
    return _mm256_castsi256_pd (_mm256_xor_si256 (off, _mm256_set1_epi64x (-1)));
}

/* stats_of for float data, the four lanes in one register: the same
 * values into the same lane sums in the same order (a masked lane keeps
 * its sum, min and max as they were), the same tails and totals, so
 * the same bits; min and max are (v < m ? v : m) and (v > m ? v : m),
 * which is what minpd and maxpd compute. */
__attribute__ ((target ("avx2"))) static void
stats_f32_avx2 (const float *f, size_t n, const uint8_t *mask,
                qc_stats_t *out)
{
    lanes_t s;
    lanes_init (&s, f, n, mask);
    __m256d sum = _mm256_setzero_pd ();
    __m256d mn = _mm256_set1_pd (INFINITY), mx = _mm256_set1_pd (-INFINITY);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        __m256d on = lanes_on (mask, i);
        __m256d v = _mm256_cvtps_pd (_mm_loadu_ps (f + i));
        sum = _mm256_blendv_pd (sum, _mm256_add_pd (sum, v), on);
        mn = _mm256_blendv_pd (mn, _mm256_min_pd (v, mn), on);
        mx = _mm256_blendv_pd (mx, _mm256_max_pd (v, mx), on);
        s.count += (size_t) __builtin_popcount (_mm256_movemask_pd (on));
    }
    _mm256_storeu_pd (s.sum, sum);
    _mm256_storeu_pd (s.mn, mn);
    _mm256_storeu_pd (s.mx, mx);
    first_tail (&s, i);
    __m256d ss = _mm256_setzero_pd (), vm = _mm256_set1_pd (s.mean);
    for (i = 0; s.count && i + LANES <= n; i += LANES) {
        __m256d on = lanes_on (mask, i);
        __m256d d = _mm256_sub_pd (_mm256_cvtps_pd (_mm_loadu_ps (f + i)), vm);
        ss = _mm256_blendv_pd (ss, _mm256_add_pd (ss, _mm256_mul_pd (d, d)), on);
    }
    _mm256_storeu_pd (s.ss, ss);
    second_tail (&s, i, out);
}
#endif

int
qc_cpu_fimg_stats (const qc_fimg_t *src, const qc_mask_t *mask,
                   qc_stats_t *out)
{
    if (!qc_fimg_valid (src) || !out || !qc_mask_fits (mask, src->w, src->h))
        return -1;
#ifdef QC_STATS_AVX2
    if (qc_cpu_have_avx2 ()) {
        stats_f32_avx2 (src->px, qc_npix (src->w, src->h),
                        mask ? mask->px : NULL, out);
        return 0;
    }
#endif
    stats_of (src->px, qc_npix (src->w, src->h),
              mask ? mask->px : NULL, out);
    return 0;
}

/* stats_of of the three channels of RGB bytes, in two passes over the
 * pixels instead of six. The first pass sums in integers: stats_of's
 * lane sums of bytes are whole numbers below 2^53, so exact, and their
 * total is the integer sum, whatever the grouping; min and max do not
 * depend on order. The second pass keeps stats_of's lanes (pixel i into
 * lane i % 4, the tail into lane 0) and order, channel by channel, so
 * the spread has the same bits. */
static void
rgb_stats3 (const uint8_t *px, size_t n, const uint8_t *mask,
            qc_stats_t out[3])
{
    uint64_t sum[3] = { 0, 0, 0 };
    int mn[3] = { 256, 256, 256 }, mx[3] = { -1, -1, -1 };
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i])
            continue;
        const uint8_t *p = px + 3 * i;
        for (int c = 0; c < 3; c++) {
            sum[c] += p[c];
            mn[c] = p[c] < mn[c] ? p[c] : mn[c];
            mx[c] = p[c] > mx[c] ? p[c] : mx[c];
        }
        count++;
    }
    double mean[3];
    for (int c = 0; c < 3; c++)
        mean[c] = count ? (double) sum[c] / (double) count : 0.0;
    double ss[3][LANES] = { { 0 } };
    size_t i = 0;
    for (; count && i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            if (mask && !mask[i + l])
                continue;
            const uint8_t *p = px + 3 * (i + l);
            for (int c = 0; c < 3; c++) {
                double d = (double) p[c] - mean[c];
                ss[c][l] += d * d;
            }
        }
    for (; count && i < n; i++) {
        if (mask && !mask[i])
            continue;
        const uint8_t *p = px + 3 * i;
        for (int c = 0; c < 3; c++) {
            double d = (double) p[c] - mean[c];
            ss[c][0] += d * d;
        }
    }
    for (int c = 0; c < 3; c++) {
        out[c].n = count;
        out[c].sum = (double) sum[c];
        out[c].mean = mean[c];
        out[c].std = count ? sqrt (((ss[c][0] + ss[c][1]) + (ss[c][2] + ss[c][3]))
                                   / (double) count) : 0.0;
        out[c].min = count ? (double) mn[c] : 0.0;
        out[c].max = count ? (double) mx[c] : 0.0;
    }
}

int
qc_cpu_rgb_stats (const qc_rgb_t *src, const qc_mask_t *mask,
                  qc_stats_t out[3])
{
    if (!qc_rgb_valid (src) || !out || !qc_mask_fits (mask, src->w, src->h))
        return -1;
    rgb_stats3 (src->px, qc_npix (src->w, src->h), mask ? mask->px : NULL,
                out);
    return 0;
}

#define float_key qc_px_float_key
#define key_float qc_px_key_float
#define BINS QC_RADIX_BINS

uint32_t
qc_cpu_radix_bin (const uint32_t *top, size_t rank, size_t *within)
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
#ifdef QC_STATS_AVX2
/* count_low's scan, eight values at a time: the values whose key has
 * the top bits bin are found with vector compares (the same keys as
 * float_key: -0 as +0, negatives' bits flipped) and only those, a
 * small share, are counted one by one. Returns where it stopped. */
__attribute__ ((target ("avx2"))) static size_t
count_low_avx2 (const float *px, const uint8_t *mask, size_t npx,
                uint32_t bin, uint32_t *low)
{
    const __m256i sign = _mm256_set1_epi32 ((int) 0x80000000u);
    const __m256i want = _mm256_set1_epi32 ((int) bin);
    size_t i = 0;
    for (; i + 8 <= npx; i += 8) {
        __m256 v = _mm256_loadu_ps (px + i);
        __m256i u = _mm256_castps_si256 (v);
        /* -0 as +0: u << 1 == 0 gives 0 */
        __m256i zero_like = _mm256_cmpeq_epi32 (_mm256_slli_epi32 (u, 1),
                                                _mm256_setzero_si256 ());
        u = _mm256_andnot_si256 (zero_like, u);
        __m256i neg = _mm256_srai_epi32 (u, 31);
        __m256i k = _mm256_xor_si256 (u, _mm256_or_si256 (neg, sign));
        __m256i hit = _mm256_cmpeq_epi32 (_mm256_srli_epi32 (k, 16), want);
        int bits = _mm256_movemask_ps (_mm256_castsi256_ps (hit));
        if (!bits)
            continue;
        for (int j = 0; j < 8; j++)
            if (bits >> j & 1 && (!mask || mask[i + j]) && px[i + j] == px[i + j])
                low[float_key (px[i + j]) & 0xffffu]++;
    }
    return i;
}
#endif

static void
count_low (const float *px, const uint8_t *mask, size_t npx, uint32_t bin,
           uint32_t *low)
{
    memset (low, 0, BINS * sizeof *low);
    size_t i = 0;
#ifdef QC_STATS_AVX2
    if (qc_cpu_have_avx2 ())
        i = count_low_avx2 (px, mask, npx, bin, low);
#endif
    for (; i < npx; i++)
        if ((!mask || mask[i]) && px[i] == px[i]) {
            uint32_t k = float_key (px[i]);
            if (k >> 16 == bin)
                low[k & 0xffffu]++;
        }
}

uint32_t
qc_cpu_radix_key (const uint32_t *low, uint32_t bin, size_t within)
{
    size_t before = 0;
    uint32_t l = 0;
    while (before + low[l] <= within)
        before += low[l++];
    return bin << 16 | l;
}

/* numpy.quantile, linear: the two order statistics found by radix
 * passes over the floats' keys (order-preserving bit patterns), 16 bits
 * at a time, with no copy and no sort: faster than selection over a
 * copy of every value (tests/bench/README.md, "Figures behind the
 * code"). */
int
qc_cpu_fimg_quantile (const qc_fimg_t *src, const qc_mask_t *mask, double q,
                      double *out)
{
    if (!qc_fimg_valid (src) || !out || !(q >= 0.0 && q <= 1.0)
        || !qc_mask_fits (mask, src->w, src->h))
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
        uint32_t bk = qc_cpu_radix_bin (hist, k, &wk);
        count_low (src->px, mk, n, bk, low);
        double lo = key_float (qc_cpu_radix_key (low, bk, wk)), hi = lo;
        if (k + 1 < cnt) {
            uint32_t bk1 = qc_cpu_radix_bin (hist, k + 1, &wk1);
            if (bk1 != bk)
                count_low (src->px, mk, n, bk1, low);
            hi = key_float (qc_cpu_radix_key (low, bk1, wk1));
        }
        *out = lo + (h - (double) k) * (hi - lo);
    }
    free (hist);
    return rc;
}
