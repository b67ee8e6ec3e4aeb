/* trees_predict: the boosted oblivious trees of classify_model.h over
 * every pixel. Pixels go in blocks of BLOCK: per tree, each level is one
 * compare-and-or pass over a block of one feature plane (contiguous,
 * branch-free: the compiler vectorises it), then one pass adds the
 * leaves. The margins are summed in tree order in double, as
 * qc_px_trees_margin does per pixel, so both give the same numbers. */
#include "kernels/cpu/cpu_ops.h"
#include "kernels/classify_model.h"

#include <math.h>
#include <string.h>

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

int
qc_cpu_trees_predict (const struct qc_trees *model,
                      const qc_fimg_t *const *planes, int nplanes,
                      qc_fimg_t *dst)
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
    double acc[BLOCK];
    for (size_t start = 0; start < whole; start += BLOCK) {
        int len = whole - start < BLOCK ? (int) (whole - start) : BLOCK;
        block_margins (model, planes, start, len, acc);
        float *out = dst->px + start;
        for (int j = 0; j < len; j++)
            out[j] = (float) qc_px_sigmoid (acc[j]);
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
