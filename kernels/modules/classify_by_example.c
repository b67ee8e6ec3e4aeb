/* ClassificationModule.byExampleWithFeatures: marks the pixels a
 * classifier trained on example images calls positive (HistoQC's default
 * pipeline runs it twice: name = pen_markings and coverslip_edge), and
 * removes them from the tissue mask.
 *
 * As HistoQC, per slide: the features of the working image
 * (qc_run_image at [BaseImage.BaseImage]'s image_work_size), the
 * classifier's probability of the positive class > threshold, objects
 * under area_threshold pixels removed (4-connected, when > 0), dilated
 * by a dilate_kernel_size square (when > 0), limited to img_mask_use;
 * the project's grow_threshold (below 'threshold'; off by default, as
 * in HistoQC) first grows what was found into the pixels over it that
 * touch it;
 * written to <slide>_<name>.png, kept as mask <name> for later steps
 * and forced (SaveModule.saveFinalMask takes it out of the final mask
 * again), taken out of img_mask_use; the column <name> is the mask statistic
 * (mask_statistics, by default 1 - tissue after / tissue before), and a
 * warning is added when no tissue is left.
 *
 * The classifier differs from HistoQC's (a scikit-learn random forest):
 * boosted oblivious trees, trained once per process and config section
 * with a fixed seed (kernels/classify/classify_model.h, classify_cache.h).
 * The project's own examples are built in ("builtin/..." paths, see
 * kernels/classify/examples/README.md); HistoQC's file paths work as in
 * HistoQC. */
#include "kernels/modules/module.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/classify/classify_cache.h"
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

#define STEP "ClassificationModule.byExampleWithFeatures"

typedef struct {
    const char *name;
    double threshold;
    double grow;              /* grow_threshold: what was found grows into
                                 the pixels over it (threshold: off) */
    long long area_threshold;
    long long dilate;
} step_params_t;

static int
read_step_params (const qc_config_section_t *sec, step_params_t *p, char *err,
                  size_t errlen)
{
    if (qc_config_get_string (sec, "name", "classTask", &p->name, err, errlen)
        || qc_config_get_double (sec, "threshold", 0.5, &p->threshold, err, errlen)
        || qc_config_get_double (sec, "grow_threshold", p->threshold, &p->grow, err,
                                 errlen)
        || qc_config_get_int (sec, "area_threshold", 5, &p->area_threshold, err, errlen)
        || qc_config_get_int (sec, "dilate_kernel_size", 0, &p->dilate, err, errlen))
        return -1;
    const char *sn = sec ? qc_config_section_name (sec) : STEP;
    if (!*p->name || strlen (p->name) >= QC_RESULT_MAX_KEY
        || strpbrk (p->name, "/\\\t\n\r"))
        snprintf (err, errlen, "[%s] name = '%.64s': must be a non-empty "
                  "column and file name (no '/', tabs or newlines, under %d "
                  "bytes)", sn, p->name, QC_RESULT_MAX_KEY);
    /* 0 grew into every pixel (all probabilities are over 0): a slide
       taken whole for ink, by a user who meant "off" (a user's review) */
    else if (!(p->grow > 0 && p->grow <= p->threshold))
        snprintf (err, errlen, "[%s] grow_threshold (line %d): above 0 and at most "
                  "threshold (%g); leave it out for none", sn,
                  qc_config_key_line (sec, "grow_threshold"), p->threshold);
    else if (p->dilate > 1000)
        snprintf (err, errlen, "[%s] dilate_kernel_size (line %d): at most 1000",
                  sn, qc_config_key_line (sec, "dilate_kernel_size"));
    else
        return qc_masks_check_stat (sec, err, errlen);
    return -1;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    if (read_step_params (sec, &p, err, errlen) != 0)
        return -1;
    return qc_classifier_check (sec, err, errlen);
}

/* found grown into the pixels of within that touch it (8-connected),
 * as far as they go: a morphological reconstruction (ops.h), one
 * labelling of within. A stroke of ink the classifier is sure of on
 * glass (over threshold) goes on over dense tissue at a lower
 * probability; only what joins a piece found is taken, so a lone
 * doubtful speck is not. (Until 2026-11-30 by 3 x 3 dilations cut by
 * within until nothing changed: ~180 rounds of three whole-plane ops at
 * 10x, 0.48 s of a GPU lane's 1.08 s a slide, and a bound of w + h
 * rounds.) within is edited: found is added to it, so that a pixel
 * found stays found whatever the two thresholds' classifications. */
static int
grow_into (const qc_ops_t *ops, qc_mask_t *within, qc_mask_t *found)
{
    if (ops->mask_logic (within, found, QC_LOGIC_OR, within) != 0)
        return -1;
    return ops->reconstruct (within, found, 8, found);
}

/* The positive pixels as HistoQC post-processes them, before the tissue
 * mask limits them. */
static int
classify (qc_run_t *run, const qc_ops_t *ops, const qc_classifier_t *clf,
          const step_params_t *p, const qc_rgb_t *img, qc_mask_t *found)
{
    int rc = qc_classifier_classify (clf, ops, img, p->threshold, found);
    if (rc == 0 && p->area_threshold > 0)
        rc = ops->area_filter (found, QC_CONN_OBJECTS, (size_t) p->area_threshold,
                               SIZE_MAX, found);
    /* after the area filter: a speck too small to keep does not grow (a
       real slide in focus had 0.4% of its tissue taken for ink when
       specks grew first) */
    if (rc == 0 && p->grow < p->threshold) {
        qc_mask_t *within = qc_mask_new (img->w, img->h);
        rc = !within || qc_classifier_classify (clf, ops, img, p->grow, within)
             || grow_into (ops, within, found) ? -1 : 0;
        qc_mask_destroy (&within);
    }
    if (rc == 0 && p->dilate > 0)
        rc = ops->morph_rect (found, (int) p->dilate, (int) p->dilate,
                              QC_MORPH_DILATE, found);
    return rc == 0 ? 0 : qc_run_fail (run, "classifying the pixels failed (out "
                                      "of memory?)");
}

static int
run (qc_run_t *run)
{
    char err[512];
    step_params_t p;
    if (read_step_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_ops_t *ops = qc_run_ops (run);
    int owned = 0;
    qc_classifier_t *clf = qc_classifier_get (run->params, ops, &owned, err,
                                              sizeof err);
    if (!clf)
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    qc_mask_t *found = NULL, *before = NULL;
    int rc = -1;
    if (!img || !use)
        goto done;
    found = qc_mask_new (img->w, img->h);
    before = qc_mask_clone (use);
    if (!found || !before) {
        qc_run_fail (run, "out of memory");
        goto done;
    }
    if (classify (run, ops, clf, &p, img, found) != 0)
        goto done;
    size_t left = 0;
    if (ops->mask_logic (found, use, QC_LOGIC_AND, found)
        || ops->mask_logic (use, found, QC_LOGIC_ANDNOT, use)
        || ops->mask_count (use, &left)) {
        qc_run_fail (run, "mask arithmetic failed");
        goto done;
    }
    if (qc_run_save_mask (run, p.name, found)
        || qc_run_set_mask_statistics (run, p.name, use, before))
        goto done;
    if (left == 0)
        qc_run_warn (run, "After " STEP ":%s NO tissue remains detectable! "
                     "Downstream modules likely to be incorrect/fail", p.name);
    rc = qc_run_keep_mask (run, p.name, found);   /* takes found */
    found = NULL;
    /* HistoQC's img_mask_force: saveFinalMask takes these pixels out of
       the final mask again, whatever a later step (fillSmallHoles
       closing the hole the ink left in the tissue) put back */
    if (rc == 0)
        rc = qc_run_force_mask (run, p.name);
done:
    qc_mask_destroy (&found);
    qc_mask_destroy (&before);
    qc_classifier_put (clf, owned);
    return rc;
}

/* HistoQC's parameters, the feature and training ones of
 * classify_cache.c, and mask_statistics (a per-step override). */
static const char *const params[] = {
    "name", "threshold", "grow_threshold", "area_threshold", "dilate_kernel_size",
    "mask_statistics",
    "examples", "nsamples_per_example", "features", "laplace_ksize",
    "frangi_scale_range", "frangi_scale_step", "frangi_beta1", "frangi_beta2",
    "frangi_black_ridges", "gabor_theta", "gabor_sigma", "gabor_frequency",
    "lbp_radius", "lbp_points", "lbp_method", "median_disk_size",
    "gaussian_sigma", "gaussian_multichan", "trees", "tree_depth",
    "max_train_samples", NULL
};

static const char *const no_columns[] = { NULL };

const qc_module_t qc_module_classify_by_example = {
    .name = STEP,
    .run = run,
    .check = check,
    .params = params,
    .columns = no_columns,
    .param_columns = qc_masks_name_column,
    .kept_named = qc_masks_name_column,   /* img_mask_<name>: its column's name */
};
