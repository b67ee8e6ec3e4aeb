/* trees_predict: the boosted oblivious trees of kernels/ops/trees.h over
 * every pixel. Pixels go in blocks of BLOCK: per tree, each level is one
 * compare-and-or pass over a block of one feature plane (contiguous,
 * branch-free: the compiler vectorises it), then one pass adds the
 * leaves. The margins are summed in tree order in double, as
 * qc_px_trees_margin does per pixel, so both give the same numbers.
 *
 * On x86-64 CPUs with AVX2 (checked at run time) a second path does the
 * same sums eight pixels at a time with every tree's leaf index and the
 * eight margins kept in registers, and the leaves fetched by one gather:
 * the portable path spends half its time storing and reloading the
 * index and the margins between levels and trees. Same order of adds in
 * double, so the same bits (test_classify_model compares the two). */
#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/trees.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QC_PREDICT_AVX2 1
#endif

#define BLOCK 512

/* Four lanes (SSE2 / NEON; a GCC and Clang extension, as in filter.c):
 * -O2 does not vectorise the compare-and-or loop by itself. */
typedef float v4f_t __attribute__ ((vector_size (16)));
typedef int32_t v4i_t __attribute__ ((vector_size (16)));

/* Margins of len (a multiple of 4) pixels starting at start. */
static void
block_margins (const qc_trees_t *m, const qc_fimg_t *const *planes,
               size_t start, int len, double *acc)
{
    const int depth = m->depth;
    v4i_t idx[BLOCK / 4];
    uint32_t lane[BLOCK];
    for (int j = 0; j < len; j++)
        acc[j] = m->base;
    for (int t = 0; t < m->ntrees; t++) {
        for (int j = 0; j < len / 4; j++)
            idx[j] = (v4i_t) { 0, 0, 0, 0 };
        for (int k = 0; k < depth; k++) {
            int at = t * depth + k;
            const float *col = planes[m->feat[at]]->px + start;
            const v4f_t thr = { m->thr[at], m->thr[at], m->thr[at], m->thr[at] };
            const v4i_t bit = { 1 << k, 1 << k, 1 << k, 1 << k };
            for (int j = 0; j < len / 4; j++) {
                v4f_t v;
                memcpy (&v, col + 4 * j, sizeof v);
                idx[j] |= (v > thr) & bit;     /* lanes: -1 where true */
            }
        }
        memcpy (lane, idx, (size_t) len * sizeof *lane);
        const float *leaf = m->leaf + ((size_t) t << depth);
        for (int j = 0; j < len; j++)
            acc[j] += leaf[lane[j]];
    }
}

#ifdef QC_PREDICT_AVX2
#define GROUPS 8                 /* 8 pixels a group, 8 groups a block */
#define APIX   (GROUPS * 8)

/* Adds trees [t0, t1) to the margins acc of GROUPS groups of 8
 * pixels, group g starting at pixel off[g].
 * pad holds each tree's leaves zero-padded to 64. The loops over groups
 * have constant bounds and are unrolled, so a block's indices stay in
 * registers through a tree's levels and the leaves through its lookups;
 * per level the feature column and threshold are set up once for 64
 * pixels. */
__attribute__ ((target ("avx2"))) static void
block_trees_avx2 (const qc_trees_t *m, const float *pad,
                  const qc_fimg_t *const *planes, const size_t *off, int t0,
                  int t1, double *acc)
{
    const int depth = m->depth;
    int32_t li[APIX] __attribute__ ((aligned (32)));
    for (int t = t0, at = t0 * depth; t < t1; t++) {
        __m256i idx[GROUPS];
#pragma GCC unroll 8
        for (int g = 0; g < GROUPS; g++)
            idx[g] = _mm256_setzero_si256 ();
        /* bit k of the index: level k's answer, as the portable
         * path builds it */
        for (int k = 0; k < depth; k++, at++) {
            const float *col = planes[m->feat[at]]->px;
            const __m256 thr = _mm256_set1_ps (m->thr[at]);
            const __m256i bit = _mm256_set1_epi32 (1 << k);
#pragma GCC unroll 8
            for (int g = 0; g < GROUPS; g++) {
                __m256 gt = _mm256_cmp_ps (_mm256_loadu_ps (col + off[g]),
                                           thr, _CMP_GT_OQ);
                idx[g] = _mm256_or_si256 (
                    idx[g], _mm256_and_si256 (_mm256_castps_si256 (gt), bit));
            }
        }
#pragma GCC unroll 8
        for (int g = 0; g < GROUPS; g++)
            _mm256_store_si256 ((__m256i *) (li + 8 * g), idx[g]);
        /* The leaves in 8 registers: permutes pick within each by
         * the index's low 3 bits, blends between them by bits 3, 4
         * and 5. AVX2's gather would be one instruction, but it
         * made this loop slower on an AMD EPYC (tests/bench/README.md,
         * "Figures behind the code"). */
        const float *lv = pad + ((size_t) t << 6);
        const __m256 l0 = _mm256_load_ps (lv), l1 = _mm256_load_ps (lv + 8),
                     l2 = _mm256_load_ps (lv + 16), l3 = _mm256_load_ps (lv + 24),
                     l4 = _mm256_load_ps (lv + 32), l5 = _mm256_load_ps (lv + 40),
                     l6 = _mm256_load_ps (lv + 48), l7 = _mm256_load_ps (lv + 56);
#pragma GCC unroll 8
        for (int g = 0; g < GROUPS; g++) {
            __m256i x = _mm256_load_si256 ((const __m256i *) (li + 8 * g));
            __m256 b3 = _mm256_castsi256_ps (_mm256_slli_epi32 (x, 28));
            __m256 b4 = _mm256_castsi256_ps (_mm256_slli_epi32 (x, 27));
            __m256 b5 = _mm256_castsi256_ps (_mm256_slli_epi32 (x, 26));
            __m256 q0 = _mm256_blendv_ps (_mm256_permutevar8x32_ps (l0, x),
                                          _mm256_permutevar8x32_ps (l1, x), b3);
            __m256 q1 = _mm256_blendv_ps (_mm256_permutevar8x32_ps (l2, x),
                                          _mm256_permutevar8x32_ps (l3, x), b3);
            __m256 q2 = _mm256_blendv_ps (_mm256_permutevar8x32_ps (l4, x),
                                          _mm256_permutevar8x32_ps (l5, x), b3);
            __m256 q3 = _mm256_blendv_ps (_mm256_permutevar8x32_ps (l6, x),
                                          _mm256_permutevar8x32_ps (l7, x), b3);
            __m256 leaf = _mm256_blendv_ps (_mm256_blendv_ps (q0, q1, b4),
                                            _mm256_blendv_ps (q2, q3, b4), b5);
            double *a = acc + 8 * g;
            _mm256_store_pd (a, _mm256_add_pd (
                _mm256_load_pd (a),
                _mm256_cvtps_pd (_mm256_castps256_ps128 (leaf))));
            _mm256_store_pd (a + 4, _mm256_add_pd (
                _mm256_load_pd (a + 4),
                _mm256_cvtps_pd (_mm256_extractf128_ps (leaf, 1))));
        }
    }
}

/* Probabilities of the n (a multiple of APIX) pixels from start. */
__attribute__ ((target ("avx2"))) static void
predict_avx2 (const qc_trees_t *m, const float *pad,
              const qc_fimg_t *const *planes, size_t start, size_t n,
              float *out)
{
    double acc[APIX] __attribute__ ((aligned (32)));
    size_t off[GROUPS];
    for (size_t i = start; i < start + n; i += APIX) {
        for (int j = 0; j < APIX; j++)
            acc[j] = m->base;
        for (int g = 0; g < GROUPS; g++)
            off[g] = i + 8 * (size_t) g;
        block_trees_avx2 (m, pad, planes, off, 0, m->ntrees, acc);
        for (int j = 0; j < APIX; j++)
            out[i + (size_t) j] = (float) qc_px_sigmoid (acc[j]);
    }
}

/* What qc_cpu_trees_classify needs to stop a block early: the margin
 * threshold and, after t trees, the least and most the other trees can
 * still add. */
typedef struct {
    double logit, eps;        /* decided when beyond logit +- eps */
    double *lo, *hi;          /* ntrees + 1 each */
} bounds_t;

#define SPAN_GROUPS 512     /* groups of 8 pixels classified together */
#define CHUNK 8             /* trees between checks for settled groups */

/* Tile bounds. Over a BOX x BOX tile of pixels, a feature spans
 * [min, max]: a tree level whose threshold lies outside that span
 * answers the same for every pixel of the tile, and only the leaves
 * reachable through the other levels remain. Summed over all trees, the
 * least and most of those leaves bound every pixel's margin; when the
 * bounds fall on one side of the threshold (by eps, as the early stops
 * below), the whole tile is decided without evaluating a tree per pixel.
 * Exact: each pixel's own leaves are among those summed. On the default
 * pen and coverslip classifiers ~83% of the 16 x 16 tiles of a slide
 * (glass, plain tissue) are decided this way.
 *
 * A tree's reachable leaves are named by a base-3 code, one digit per
 * level: 0 every pixel goes left, 1 right, 2 either (or a NaN in the
 * tile: NaN goes left, the others may not). lo and hi hold each code's
 * least and most leaf. */
#define BOX 16
_Static_assert (BOX == 16, "tile_span reads a tile row as two 8-float vectors");

typedef struct {
    int ncodes;               /* 3^depth */
    float *lo, *hi;           /* ntrees * ncodes */
} box_tables_t;

static int
box_tables_init (box_tables_t *bt, const qc_trees_t *m)
{
    int nc = 1;
    for (int k = 0; k < m->depth; k++)
        nc *= 3;
    bt->ncodes = nc;
    bt->lo = malloc ((size_t) m->ntrees * (size_t) nc * 2 * sizeof *bt->lo);
    if (!bt->lo)
        return -1;
    bt->hi = bt->lo + (size_t) m->ntrees * (size_t) nc;
    for (int t = 0; t < m->ntrees; t++) {
        const float *lv = m->leaf + ((size_t) t << m->depth);
        float *lo = bt->lo + (size_t) t * (size_t) nc;
        float *hi = bt->hi + (size_t) t * (size_t) nc;
        /* a code with a 2 at level k covers the codes with 0 and 1
         * there, both smaller numbers: increasing order has them ready */
        for (int c = 0; c < nc; c++) {
            int leaf = 0, p3 = 1, k2 = -1, p2 = 0;
            for (int k = 0, rest = c; k < m->depth; k++, rest /= 3, p3 *= 3) {
                if (rest % 3 == 2) {
                    k2 = k;
                    p2 = p3;
                    break;
                }
                leaf |= (rest % 3) << k;
            }
            if (k2 < 0) {
                lo[c] = hi[c] = lv[leaf];
                continue;
            }
            int c0 = c - 2 * p2, c1 = c - p2;
            lo[c] = lo[c0] < lo[c1] ? lo[c0] : lo[c1];
            hi[c] = hi[c0] > hi[c1] ? hi[c0] : hi[c1];
        }
    }
    return 0;
}

/* Per feature, the least and most value of the BOX x BOX tile at (x0,
 * y0) of w-wide planes, and whether any is NaN. */
__attribute__ ((target ("avx2"))) static void
tile_span (const qc_fimg_t *const *planes, int nfeat, int w, int x0, int y0,
           float *fmin, float *fmax, int *nan)
{
    for (int f = 0; f < nfeat; f++) {
        /* the two halves of a row in their own registers: min, max and
         * the NaN test do not depend on order, and two chains run side
         * by side */
        __m256 mn = _mm256_set1_ps (INFINITY), mx = _mm256_set1_ps (-INFINITY);
        __m256 un = _mm256_setzero_ps ();
        __m256 mn2 = mn, mx2 = mx, un2 = un;
        for (int y = y0; y < y0 + BOX; y++) {
            const float *row = planes[f]->px + (size_t) y * (size_t) w + x0;
            __m256 v = _mm256_loadu_ps (row), v2 = _mm256_loadu_ps (row + 8);
            un = _mm256_or_ps (un, _mm256_cmp_ps (v, v, _CMP_UNORD_Q));
            un2 = _mm256_or_ps (un2, _mm256_cmp_ps (v2, v2, _CMP_UNORD_Q));
            mn = _mm256_min_ps (mn, v);
            mn2 = _mm256_min_ps (mn2, v2);
            mx = _mm256_max_ps (mx, v);
            mx2 = _mm256_max_ps (mx2, v2);
        }
        mn = _mm256_min_ps (mn, mn2);
        mx = _mm256_max_ps (mx, mx2);
        un = _mm256_or_ps (un, un2);
        float a[8], b[8];
        _mm256_storeu_ps (a, mn);
        _mm256_storeu_ps (b, mx);
        fmin[f] = a[0];
        fmax[f] = b[0];
        for (int j = 1; j < 8; j++) {
            fmin[f] = a[j] < fmin[f] ? a[j] : fmin[f];
            fmax[f] = b[j] > fmax[f] ? b[j] : fmax[f];
        }
        nan[f] = _mm256_movemask_ps (un) != 0;
    }
}

/* Writes 0 or 1 to the pixels of every tile the bounds decide and 2 to
 * all others; returns how many pixels were decided. */
__attribute__ ((target ("avx2"))) static size_t
box_pass (const qc_trees_t *m, const box_tables_t *bt, const bounds_t *bd,
          const qc_fimg_t *const *planes, int w, int h, uint8_t *out)
{
    memset (out, 2, qc_npix (w, h));
    size_t decided = 0;
    float fmin[QC_TREES_MAX_FEAT], fmax[QC_TREES_MAX_FEAT];
    int nan[QC_TREES_MAX_FEAT];
    for (int y0 = 0; y0 + BOX <= h; y0 += BOX)
        for (int x0 = 0; x0 + BOX <= w; x0 += BOX) {
            tile_span (planes, m->nfeat, w, x0, y0, fmin, fmax, nan);
            double lo = m->base, hi = m->base;
            for (int t = 0, at = 0; t < m->ntrees; t++) {
                int code = 0;
                for (int k = 0, p3 = 1; k < m->depth; k++, at++, p3 *= 3) {
                    int f = m->feat[at];
                    float thr = m->thr[at];
                    code += p3 * (nan[f] ? 2 : fmin[f] > thr ? 1
                                  : fmax[f] <= thr ? 0 : 2);
                }
                lo += bt->lo[(size_t) t * (size_t) bt->ncodes + (size_t) code];
                hi += bt->hi[(size_t) t * (size_t) bt->ncodes + (size_t) code];
            }
            int v = lo > bd->logit + bd->eps ? 1 : hi < bd->logit - bd->eps ? 0 : 2;
            if (v == 2)
                continue;
            for (int y = y0; y < y0 + BOX; y++)
                memset (out + (size_t) y * (size_t) w + x0, v, BOX);
            decided += BOX * BOX;
        }
    return decided;
}

/* mask = probability > threshold for the n (a multiple of 8) pixels from
 * start, those box_pass left undecided (a 2 in out). Trees go in chunks
 * of 8; after each, a group of 8 pixels whose
 * margins are all so far from the threshold that the remaining trees
 * cannot carry them across is decided and leaves; the groups still
 * open are packed 8 at a time for the next chunk. */
__attribute__ ((target ("avx2"))) static void
classify_avx2 (const qc_trees_t *m, const float *pad, const bounds_t *bd,
               double threshold, const qc_fimg_t *const *planes,
               size_t start, size_t n, uint8_t *out)
{
    static __thread double gacc[SPAN_GROUPS * 8] __attribute__ ((aligned (32)));
    int open[SPAN_GROUPS];
    double acc[APIX] __attribute__ ((aligned (32)));
    size_t off[GROUPS];
    for (size_t base = start; base < start + n; base += 8 * SPAN_GROUPS) {
        size_t left = (start + n - base) / 8;
        int ng = left < SPAN_GROUPS ? (int) left : SPAN_GROUPS, nopen = 0;
        for (int g = 0; g < ng; g++) {
            /* decided by the tile bounds: 0 or 1 in all 8, no 2 */
            uint64_t word;
            memcpy (&word, out + base + 8 * (size_t) g, sizeof word);
            if (!(word & 0x0202020202020202ull))
                continue;
            open[nopen++] = g;
            for (int j = 0; j < 8; j++)
                gacc[8 * g + j] = m->base;
        }
        for (int t = 0; t < m->ntrees && nopen > 0;) {
            int t1 = t + CHUNK < m->ntrees ? t + CHUNK : m->ntrees;
            for (int b = 0; b < nopen; b += GROUPS) {
                /* a short last batch repeats its first group into
                 * scratch lanes that are not copied back */
                int nb = nopen - b < GROUPS ? nopen - b : GROUPS;
                for (int g = 0; g < GROUPS; g++) {
                    int gi = open[b + (g < nb ? g : 0)];
                    off[g] = base + 8 * (size_t) gi;
                    memcpy (acc + 8 * g, gacc + 8 * gi, 8 * sizeof *acc);
                }
                block_trees_avx2 (m, pad, planes, off, t, t1, acc);
                for (int g = 0; g < nb; g++)
                    memcpy (gacc + 8 * open[b + g], acc + 8 * g, 8 * sizeof *acc);
            }
            t = t1;
            int keep = 0;
            for (int k = 0; k < nopen; k++) {
                int gi = open[k];
                const double *a = gacc + 8 * gi;
                uint8_t *o = out + base + 8 * (size_t) gi;
                int decided = 1;
                if (t == m->ntrees)
                    for (int j = 0; j < 8; j++)
                        o[j] = (double) (float) qc_px_sigmoid (a[j]) > threshold;
                else {
                    for (int j = 0; j < 8 && decided; j++)
                        decided = a[j] + bd->lo[t] > bd->logit + bd->eps
                                  || a[j] + bd->hi[t] < bd->logit - bd->eps;
                    if (decided)
                        for (int j = 0; j < 8; j++)
                            o[j] = a[j] + bd->lo[t] > bd->logit + bd->eps;
                }
                if (!decided)
                    open[keep++] = gi;
            }
            nopen = keep;
        }
    }
}

#endif

#ifdef QC_PREDICT_AVX2
/* The model's leaves zero-padded to 64 per tree, for the AVX2 path;
 * NULL when that path cannot run (no AVX2, trees deeper than 6, no
 * memory). */
static float *
padded_leaves (const qc_trees_t *model)
{
    if (model->depth > 6 || !qc_cpu_have_avx2 ())
        return NULL;
    float *pad = aligned_alloc (32, (size_t) model->ntrees * 64 * sizeof *pad);
    if (!pad)
        return NULL;
    for (int t = 0; t < model->ntrees; t++) {
        float *lv = pad + ((size_t) t << 6);
        memset (lv, 0, 64 * sizeof *lv);
        memcpy (lv, model->leaf + ((size_t) t << model->depth),
                ((size_t) 1 << model->depth) * sizeof *lv);
    }
    return pad;
}
#endif

static int
planes_ok (const qc_trees_t *model, const qc_fimg_t *const *planes,
           int nplanes, int w, int h)
{
    if (!qc_trees_valid (model) || !planes || nplanes != model->nfeat)
        return 0;
    for (int j = 0; j < nplanes; j++)
        if (!qc_fimg_valid (planes[j]) || planes[j]->w != w
            || planes[j]->h != h)
            return 0;
    return 1;
}

static int
predict (const struct qc_trees *model, const qc_fimg_t *const *planes,
         int nplanes, qc_fimg_t *dst, int allow_avx2)
{
    if (!qc_fimg_valid (dst) || !planes_ok (model, planes, nplanes, dst->w,
                                            dst->h))
        return -1;
    /* dst may be one of the planes: each block reads all planes before
     * it writes its own pixels, and no block reads another's. */
    size_t n = qc_npix (dst->w, dst->h);
    size_t whole = n - n % 4;
#ifdef QC_PREDICT_AVX2
    float *pad = allow_avx2 ? padded_leaves (model) : NULL;
    if (pad) {
        size_t blocks = n - n % APIX;
        predict_avx2 (model, pad, planes, 0, blocks, dst->px);
        free (pad);
        whole = blocks;   /* the rest one by one below */
    } else
#endif
    {
    double acc[BLOCK];
    for (size_t start = 0; start < whole; start += BLOCK) {
        int len = whole - start < BLOCK ? (int) (whole - start) : BLOCK;
        block_margins (model, planes, start, len, acc);
        float *out = dst->px + start;
        for (int j = 0; j < len; j++)
            out[j] = (float) qc_px_sigmoid (acc[j]);
    }
    }
    /* the last n % 4 pixels one by one, by the same sum */
    const float *pp[QC_TREES_MAX_FEAT];
    for (int j = 0; j < nplanes; j++)
        pp[j] = planes[j]->px;
    for (size_t i = whole; i < n; i++)
        dst->px[i] = (float) qc_px_sigmoid (
            qc_px_trees_margin (pp, i, model->ntrees, model->depth, model->feat,
                                model->thr, model->leaf, model->base));
    return 0;
}

int
qc_cpu_trees_predict (const struct qc_trees *model,
                      const qc_fimg_t *const *planes, int nplanes,
                      qc_fimg_t *dst)
{
    return predict (model, planes, nplanes, dst, 1);
}

int
qc_cpu_trees_predict_portable (const struct qc_trees *model,
                               const qc_fimg_t *const *planes, int nplanes,
                               qc_fimg_t *dst)
{
    return predict (model, planes, nplanes, dst, 0);
}

/* The probability's threshold as a margin, and how far from it a margin
 * must be for the float probability to fall on the same side: the
 * probability moves by about p (1 - p) per unit of margin, and a float
 * near p is within 6e-8 of it; eps keeps 4x that. */
static void
margin_threshold (double threshold, double *logit, double *eps)
{
    *logit = log (threshold / (1.0 - threshold));
    *eps = 2.4e-7 / (threshold * (1.0 - threshold));
}

static _Thread_local size_t t_box_decided;

size_t
qc_cpu_trees_box_decided (void)
{
    return t_box_decided;
}

int
qc_cpu_trees_classify (const struct qc_trees *model,
                       const qc_fimg_t *const *planes, int nplanes,
                       double threshold, qc_mask_t *dst)
{
    if (!qc_mask_valid (dst) || !planes_ok (model, planes, nplanes, dst->w,
                                            dst->h)
        || threshold != threshold)
        return -1;
    size_t n = qc_npix (dst->w, dst->h), done = 0;
    t_box_decided = 0;
#ifdef QC_PREDICT_AVX2
    /* Early stops need a threshold strictly inside (0, 1), away from
     * the ends where a float probability saturates. */
    float *pad = threshold > 1e-3 && threshold < 1.0 - 1e-3
                 ? padded_leaves (model) : NULL;
    bounds_t bd = { 0, 0, NULL, NULL };
    if (pad) {
        bd.lo = malloc (2 * ((size_t) model->ntrees + 1) * sizeof *bd.lo);
        if (!bd.lo) {
            free (pad);
            pad = NULL;
        }
    }
    if (pad) {
        /* after t trees, the others add between lo[t] and hi[t] */
        bd.hi = bd.lo + model->ntrees + 1;
        bd.lo[model->ntrees] = bd.hi[model->ntrees] = 0.0;
        size_t nleaf = (size_t) 1 << model->depth;
        for (int t = model->ntrees - 1; t >= 0; t--) {
            const float *lv = model->leaf + (size_t) t * nleaf;
            double mn = lv[0], mx = lv[0];
            for (size_t k = 1; k < nleaf; k++) {
                mn = lv[k] < mn ? lv[k] : mn;
                mx = lv[k] > mx ? lv[k] : mx;
            }
            bd.lo[t] = bd.lo[t + 1] + mn;
            bd.hi[t] = bd.hi[t + 1] + mx;
        }
        margin_threshold (threshold, &bd.logit, &bd.eps);
        box_tables_t bt;
        if (box_tables_init (&bt, model) == 0) {
            t_box_decided = box_pass (model, &bt, &bd, planes, dst->w, dst->h,
                                      dst->px);
            free (bt.lo);
        } else {
            memset (dst->px, 2, n);     /* no memory: every tile open */
        }
        done = n - n % 8;
        classify_avx2 (model, pad, &bd, threshold, planes, 0, done, dst->px);
        free (pad);
        free (bd.lo);
    }
#endif
    /* the last n % 8 pixels one by one, by the same sum */
    if (done > 0) {
        const float *pp[QC_TREES_MAX_FEAT];
        for (int j = 0; j < nplanes; j++)
            pp[j] = planes[j]->px;
        for (size_t i = done; i < n; i++)
            dst->px[i] = (uint8_t) ((double) (float) qc_px_sigmoid (
                qc_px_trees_margin (pp, i, model->ntrees, model->depth,
                                    model->feat, model->thr, model->leaf,
                                    model->base)) > threshold);
        return 0;
    }
    /* without the AVX2 path: the probabilities, compared */
    {
        qc_fimg_t *prob = qc_fimg_new (dst->w, dst->h);
        if (!prob || predict (model, planes, nplanes, prob, 1) != 0) {
            qc_fimg_destroy (&prob);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            dst->px[i] = (uint8_t) ((double) prob->px[i] > threshold);
        qc_fimg_destroy (&prob);
    }
    return 0;
}
