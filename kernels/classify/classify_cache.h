/* A trained pixel classifier for one ClassificationModule config section:
 * its features (classify_features.h) and its model (classify_model.h),
 * trained from the section's examples= once per process and shared by
 * every slide and thread after that.
 *
 * HistoQC trains under params["lock"] and keeps the model in its
 * shared_dict under "model_" + name, so two sections with the same name
 * but different examples silently share the first model. Here the cache
 * key is every parameter that shapes the model (features and their
 * parameters, examples, sampling, model size), so equal sections share
 * and different ones do not.
 *
 * classify_train.c checks and trains; classify_cache.c holds the model
 * cache, a per-thread cache of the last image's feature planes (the two
 * default steps classify the same image with the same features) and
 * prediction. */
#ifndef QC_CLASSIFY_CACHE_H
#define QC_CLASSIFY_CACHE_H

#include <stddef.h>

#include "kernels/classify/classify_features.h"
#include "kernels/classify/classify_model.h"
#include "kernels/ops/ops.h"
#include "shared/config.h"

/* At most this many classifiers are cached per process; past it the
 * least recently used one no slide is using makes room. */
#define QC_CLASSIFIER_CACHE_MAX 64
/* Training samples kept when nsamples_per_example is -1 (all pixels):
 * larger example sets are subsampled evenly to this many. */
#define QC_CLASSIFIER_DEFAULT_MAX_SAMPLES 1000000

typedef struct {
    qc_feature_spec_t spec;
    qc_trees_t *model;
    size_t nsamples;         /* pixels trained on */
    size_t npositive;        /* of which in the masks */
    double train_seconds;
} qc_classifier_t;

/* The parameter keys a section may hold for the classifier (features,
 * feature parameters, examples, nsamples_per_example, trees,
 * tree_depth, max_train_samples), NULL-terminated. */
extern const char *const qc_classifier_params[];

/* Checks what training will read, without training: the feature spec,
 * nsamples_per_example, the model parameters, and that examples= holds
 * image:mask pairs of files that exist. 0, or -1 with a message. */
int qc_classifier_check (const qc_config_section_t *sec, char *err,
                         size_t errlen);

/* Trains from the section (uncached). NULL with a message. */
qc_classifier_t *qc_classifier_train (const qc_config_section_t *sec,
                                      const qc_ops_t *ops, char *err,
                                      size_t errlen);
void qc_classifier_destroy (qc_classifier_t **self_p);

/* The cached classifier for the section, trained on first use under a
 * process-wide lock; the caller gives it back with qc_classifier_put.
 * *owned is set to 1 when every cached model was in use and this one is
 * the caller's alone. NULL with a message. */
qc_classifier_t *qc_classifier_get (const qc_config_section_t *sec,
                                    const qc_ops_t *ops, int *owned,
                                    char *err, size_t errlen);
/* Gives back what qc_classifier_get returned (destroys it when owned). */
void qc_classifier_put (qc_classifier_t *clf, int owned);
/* Classifiers in the cache now (tests). */
size_t qc_classifier_cached (void);

/* The probability of the positive class for every pixel of img (prob
 * has img's size). 0 or -1. */
int qc_classifier_predict (const qc_classifier_t *self, const qc_ops_t *ops,
                           const qc_rgb_t *img, qc_fimg_t *prob);

/* found = the probability of the positive class > threshold, for every
 * pixel of img (found has img's size): ops->trees_classify where the
 * backend has it (it may stop early where the answer is settled), else
 * the probabilities, compared. 0 or -1. */
int qc_classifier_classify (const qc_classifier_t *self, const qc_ops_t *ops,
                            const qc_rgb_t *img, double threshold,
                            qc_mask_t *found);

/* Drops this thread's cached feature planes (the last image classified).
 * A cohort never hits that cache across slides; a benchmark that runs
 * one slide again must drop it, or it times the features only once. */
void qc_classifier_forget_planes (void);

#endif
