/* The trees_predict / trees_classify ops' model: a boosted ensemble of
 * oblivious decision trees, as kernels/classify/classify_model.h trains
 * it. The layout lives here, beside the ops interface, because both
 * backends read it (the per-pixel sum is qc_px_trees_margin in
 * pixel_math.h); training and the model's other uses stay in classify/.
 *
 * The struct is open, as the image structs are, so that a device copy
 * is three memcpys. C and CUDA (host code) include this header. */
#ifndef QC_OPS_TREES_H
#define QC_OPS_TREES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define QC_TREES_MAX_DEPTH 10
#define QC_TREES_MAX_TREES 1000
#define QC_TREES_MAX_FEAT  255

typedef struct qc_trees {
    int nfeat;            /* features per sample */
    int ntrees;
    int depth;            /* levels of every tree, 1..QC_TREES_MAX_DEPTH */
    double base;          /* margin before the first tree: the log-odds of
                             the positive fraction of the examples */
    uint8_t *feat;        /* ntrees * depth: feature tested at each level */
    float *thr;           /* ntrees * depth: bit set when value > thr */
    float *leaf;          /* ntrees << depth: margin each leaf adds */
} qc_trees_t;

/* 1 when m is a model both backends can run: sizes within the limits,
 * arrays present, every tested feature below nfeat, a finite base. */
static inline int
qc_trees_valid (const qc_trees_t *m)
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

#endif
