/* The pixel classifier of ClassificationModule.byExampleWithFeatures: a
 * gradient-boosted ensemble of oblivious decision trees (the model
 * family CatBoost uses) trained on feature vectors of example pixels.
 *
 * Why not HistoQC's scikit-learn RandomForestClassifier (100 fully grown
 * trees): predicting a 2-Mpx working image with it takes seconds (tens
 * of thousands of branchy node visits per pixel), and it is trained from
 * an unseeded random state, so two runs disagree. An oblivious tree of
 * depth d asks the same question (feature, threshold) of every node of a
 * level, so it is d compares that build a d-bit leaf index: no branches,
 * vectorisable on the CPU, one thread per pixel on a GPU. Boosting
 * (logistic loss, Newton leaf values, shrinkage, row subsampling) makes
 * a few dozen such trees as accurate as a forest of deep ones on the
 * handful of features HistoQC uses. Training is histogram-based: each
 * feature is cut into at most 255 quantile bins once, so a tree level
 * costs one pass over the samples. Everything draws from one seeded
 * generator: the same examples give the same model, bit for bit.
 *
 * The model's layout (qc_trees_t) is kernels/ops/trees.h's: the ops
 * backends run it (trees_predict, trees_classify). */
#ifndef QC_CLASSIFY_MODEL_H
#define QC_CLASSIFY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ops/trees.h"

typedef struct {
    int ntrees;           /* default 40 */
    int depth;            /* default 6 */
    double learning_rate; /* shrinkage of each tree, (0, 1]; default 0.25 */
    double l2;            /* leaf-value regularisation (> = 0); default 1 */
    double subsample;     /* fraction of samples each tree sees, (0, 1];
                             default 0.7 */
    int nbins;            /* quantile bins per feature, 2..256; default 128 */
    uint64_t seed;        /* default 1 */
} qc_trees_params_t;

void qc_trees_params_default (qc_trees_params_t *p);

/* Trains on n samples of nfeat features: feature j of sample i is
 * x[j][i]; y[i] is 1 for the positive class, 0 otherwise. Both classes
 * must be present. Non-finite feature values are allowed (NaN counts as
 * the lowest bin, as prediction sends it left). NULL with a message on a
 * bad argument or when memory runs out. */
qc_trees_t *qc_trees_train (const float *const *x, int nfeat, size_t n,
                            const uint8_t *y, const qc_trees_params_t *p,
                            char *err, size_t errlen);
void qc_trees_destroy (qc_trees_t **self_p);

/* Probability of the positive class for one sample (f[j] = feature j). */
double qc_trees_prob (const qc_trees_t *self, const float *f);

/* Bytes the model holds (for logs). */
size_t qc_trees_size (const qc_trees_t *self);

#endif
