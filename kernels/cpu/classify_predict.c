/* trees_predict: the boosted oblivious trees of classify_model.h over
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
#include "kernels/cpu/cpu_ops.h"
#include "kernels/classify_model.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QC_PREDICT_AVX2 1
#endif

#define BLOCK 512

static int
model_ok (const qc_trees_t *m)
{
    if (!m || !m->feat || !m->thr || !m->leaf || m->nfeat < 1
        || m->nfeat > QC_TREES_MAX_FEAT || m->ntrees < 1
        || m->ntrees > QC_TREES_MAX_TREES || m->depth < 1
        || m->depth > QC_TREES_MAX_DEPTH || !isfinite (m->base))
        return 0;
    for (int i = 0; i < m->ntrees * m->depth; i++)
        if (m->feat[i] >= m->nfeat)
            return 0;
    return 1;
}

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

/* Probabilities of the n (a multiple of APIX) pixels from start. pad
 * holds each tree's leaves zero-padded to 64. The loops over groups
 * have constant bounds and are unrolled, so a block's indices stay in
 * registers through a tree's levels and the leaves through its lookups;
 * per level the feature column and threshold are set up once for 64
 * pixels. */
__attribute__ ((target ("avx2"))) static void
predict_avx2 (const qc_trees_t *m, const float *pad,
              const qc_fimg_t *const *planes, size_t start, size_t n,
              float *out)
{
    const int depth = m->depth;
    double acc[APIX] __attribute__ ((aligned (32)));
    int32_t li[APIX] __attribute__ ((aligned (32)));
    for (size_t i = start; i < start + n; i += APIX) {
        for (int j = 0; j < APIX; j++)
            acc[j] = m->base;
        for (int t = 0, at = 0; t < m->ntrees; t++) {
            __m256i idx[GROUPS];
#pragma GCC unroll 8
            for (int g = 0; g < GROUPS; g++)
                idx[g] = _mm256_setzero_si256 ();
            /* bit k of the index: level k's answer, as the portable
             * path builds it */
            for (int k = 0; k < depth; k++, at++) {
                const float *col = planes[m->feat[at]]->px + i;
                const __m256 thr = _mm256_set1_ps (m->thr[at]);
                const __m256i bit = _mm256_set1_epi32 (1 << k);
#pragma GCC unroll 8
                for (int g = 0; g < GROUPS; g++) {
                    __m256 gt = _mm256_cmp_ps (_mm256_loadu_ps (col + 8 * g),
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
             * made this loop 2x slower on an AMD EPYC. */
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
        for (int j = 0; j < APIX; j++)
            out[i + (size_t) j] = (float) qc_px_sigmoid (acc[j]);
    }
}

static int
have_avx2 (void)
{
    static int known = -1;     /* a benign race: every thread finds the same */
    if (known < 0) {
        __builtin_cpu_init ();
        known = __builtin_cpu_supports ("avx2") ? 1 : 0;
    }
    return known;
}
#endif

static int
predict (const struct qc_trees *model, const qc_fimg_t *const *planes,
         int nplanes, qc_fimg_t *dst, int allow_avx2)
{
    if (!model_ok (model) || !planes || nplanes != model->nfeat
        || !qc_fimg_valid (dst))
        return -1;
    for (int j = 0; j < nplanes; j++)
        if (!qc_fimg_valid (planes[j]) || planes[j]->w != dst->w
            || planes[j]->h != dst->h)
            return -1;
    /* dst may be one of the planes: each block reads all planes before
     * it writes its own pixels, and no block reads another's. */
    size_t n = qc_npix (dst->w, dst->h);
    size_t whole = n - n % 4;
#ifdef QC_PREDICT_AVX2
    float *pad = NULL;
    if (allow_avx2 && model->depth <= 6 && have_avx2 ()
        && (pad = aligned_alloc (32, (size_t) model->ntrees * 64 * sizeof *pad))) {
        for (int t = 0; t < model->ntrees; t++) {
            float *lv = pad + ((size_t) t << 6);
            memset (lv, 0, 64 * sizeof *lv);
            memcpy (lv, model->leaf + ((size_t) t << model->depth),
                    ((size_t) 1 << model->depth) * sizeof *lv);
        }
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
