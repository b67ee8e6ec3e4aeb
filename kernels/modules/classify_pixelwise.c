/* ClassificationModule.pixelWise: marks the pixels whose colour a
 * Gaussian naive Bayes model, fitted from a table of example colours
 * (tsv_file: a header line, then class, R, G, B rows, as HistoQC's
 * models/pen_markings_he/he.tsv), gives to the greater class with a
 * probability over threshold, and removes them from the tissue mask.
 *
 * As HistoQC, per slide: the model fitted from the table (kernels/
 * classify/gnb.h), the working image's pixels (qc_run_image at
 * [BaseImage.BaseImage]'s image_work_size) classified, limited to
 * img_mask_use, written to <slide>_<name>.png, kept as mask <name> for
 * later steps (HistoQC's img_mask_<name>; unlike byExampleWithFeatures
 * it is not forced), taken out of img_mask_use; the column <name> is the
 * mask statistic (mask_statistics, by default 1 - tissue after / tissue
 * before), and a warning is added when no tissue is left. HistoQC lists
 * the column twice in its header (the mask's mean first, then the
 * statistic under the same name, which is the value both show); here
 * it is once.
 *
 * The per-pixel test is the model's log odds, a quadratic in each
 * channel, against the threshold's: a few whole-plane ops in float, so
 * that a GPU lane does it on its device. A pixel within about 1e-4 of
 * the threshold's log odds may fall the other way from scikit-learn's
 * double-precision probabilities (test_classify_pixelwise counts them on
 * a real slide). */
#include "kernels/modules/module.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/assets/asset.h"
#include "kernels/classify/gnb.h"
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

#define STEP "ClassificationModule.pixelWise"

typedef struct {
    const char *name;
    double threshold;
    const char *tsv_file;
} step_params_t;

static const char *
sec_name (const qc_config_section_t *sec)
{
    return sec ? qc_config_section_name (sec) : STEP;
}

static int
read_step_params (const qc_config_section_t *sec, step_params_t *p, char *err,
                  size_t errlen)
{
    if (qc_config_get_string (sec, "name", "classTask", &p->name, err, errlen)
        || qc_config_get_double (sec, "threshold", 0.5, &p->threshold, err, errlen)
        || qc_config_get_string (sec, "tsv_file", "", &p->tsv_file, err, errlen))
        return -1;
    const char *sn = sec_name (sec);
    if (!*p->name || strlen (p->name) >= QC_RESULT_MAX_KEY
        || strpbrk (p->name, "/\\\t\n\r"))
        snprintf (err, errlen, "[%s] name = '%.64s': must be a non-empty "
                  "column and file name (no '/', tabs or newlines, under %d "
                  "bytes)", sn, p->name, QC_RESULT_MAX_KEY);
    else if (!*p->tsv_file)
        snprintf (err, errlen, "[%s] tsv_file: not set (HistoQC stops with "
                  "'tsv_file not set'); name the table of example colours, a "
                  "header line, then class, R, G, B rows split by tabs (as "
                  "HistoQC's models/pen_markings_he/he.tsv)", sn);
    /* the probability is in [0, 1]: at 1 or over no pixel is marked, under
       0 every one (the slide's whole tissue taken out) */
    else if (!(p->threshold > 0 && p->threshold < 1))
        snprintf (err, errlen, "[%s] threshold (line %d): between 0 and 1 "
                  "(not either): 1 or more marks no pixel, 0 or less every "
                  "pixel", sn, qc_config_key_line (sec, "threshold"));
    else
        return qc_masks_check_stat (sec, err, errlen);
    return -1;
}

/* The model of the section's table (read from the job's assets, or from
 * disk where the process allows it). */
static int
fit_model (const qc_config_section_t *sec, const step_params_t *p,
           qc_gnb_t *m, char *err, size_t errlen)
{
    unsigned char *bytes = NULL;
    size_t n = 0;
    char why[600], what[600];
    if (qc_asset_read (p->tsv_file, &bytes, &n, why, sizeof why) != 0) {
        snprintf (err, errlen, "[%s] tsv_file (line %d): %s", sec_name (sec),
                  qc_config_key_line (sec, "tsv_file"), why);
        return -1;
    }
    snprintf (what, sizeof what, "[%s] tsv_file (line %d) '%.300s'",
              sec_name (sec), qc_config_key_line (sec, "tsv_file"),
              qc_asset_shown_name (p->tsv_file));
    int rc = qc_gnb_fit_tsv ((const char *) bytes, n, what, m, err, errlen);
    free (bytes);
    return rc;
}

/* The table is read and fitted before any slide, so that a missing or
 * broken one stops the job with its reason. */
static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    qc_gnb_t m;
    if (read_step_params (sec, &p, err, errlen) != 0)
        return -1;
    return fit_model (sec, &p, &m, err, errlen);
}

/* found = the pixels of img whose log odds (gnb.h) are over the
 * threshold's: each class's centred squares (qc_gnb_squares), class 0's
 * less class 1's, summed over the channels, then compared with
 * logit (threshold) - k. planes: four images of img's size. */
static int
classify (const qc_ops_t *ops, const qc_gnb_t *m, double threshold,
          const qc_rgb_t *img, qc_fimg_t *planes[4], qc_mask_t *found)
{
    double sc[2][QC_GNB_CHANNELS], off[2][QC_GNB_CHANNELS], c;
    if (qc_gnb_squares (m, sc, off, &c) != 0
        || ops->rgb_to_space (img, QC_CS_RGB, planes[0], planes[1], planes[2]))
        return -1;
    /* per channel, class 0's square less class 1's; x's plane takes
       class 1's square (and the first channel's, the sum) */
    qc_fimg_t *sum = planes[0], *term = planes[3];
    for (int j = 0; j < QC_GNB_CHANNELS; j++) {
        qc_fimg_t *x = planes[j];
        if (ops->fimg_affine (x, sc[0][j], off[0][j], -INFINITY, INFINITY, term)
            || ops->fimg_arith (term, term, QC_ARITH_MUL, term)
            || ops->fimg_affine (x, sc[1][j], off[1][j], -INFINITY, INFINITY, x)
            || ops->fimg_arith (x, x, QC_ARITH_MUL, x)
            || ops->fimg_arith (term, x, QC_ARITH_SUB, j == 0 ? sum : term)
            || (j > 0 && ops->fimg_arith (sum, term, QC_ARITH_ADD, sum)))
            return -1;
    }
    double cut = log (threshold / (1 - threshold)) - c;
    return ops->threshold (sum, cut, INFINITY, found);
}

static int
run (qc_run_t *run)
{
    char err[1024];
    step_params_t p;
    qc_gnb_t model;
    if (read_step_params (run->params, &p, err, sizeof err) != 0
        || fit_model (run->params, &p, &model, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_ops_t *ops = qc_run_ops (run);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    if (!img || !use)
        return -1;
    qc_fimg_t *planes[4] = { NULL, NULL, NULL, NULL };
    qc_mask_t *found = qc_mask_new (img->w, img->h), *before = qc_mask_clone (use);
    int ok = found && before;
    for (int i = 0; i < 4 && ok; i++)
        ok = (planes[i] = qc_fimg_new (img->w, img->h)) != NULL;
    int rc = -1;
    if (!ok)
        qc_run_fail (run, "out of memory");
    else if (classify (ops, &model, p.threshold, img, planes, found) != 0)
        qc_run_fail (run, "classifying the pixels failed (out of memory?)");
    else {
        for (int i = 0; i < 4; i++)
            qc_fimg_destroy (&planes[i]);
        size_t left = 0;
        if (ops->mask_logic (found, use, QC_LOGIC_AND, found)
            || ops->mask_logic (use, found, QC_LOGIC_ANDNOT, use)
            || ops->mask_count (use, &left))
            qc_run_fail (run, "mask arithmetic failed");
        else if (qc_run_save_mask (run, p.name, found) == 0
                 && qc_run_set_mask_statistics (run, p.name, use, before) == 0) {
            if (left == 0)
                qc_run_warn (run, "After " STEP ":%s NO tissue remains "
                             "detectable! Downstream modules likely to be "
                             "incorrect/fail", p.name);
            rc = qc_run_keep_mask (run, p.name, found);   /* takes found */
            found = NULL;
        }
    }
    for (int i = 0; i < 4; i++)
        qc_fimg_destroy (&planes[i]);
    qc_mask_destroy (&found);
    qc_mask_destroy (&before);
    return rc;
}

static const char *const params[] = {
    "name", "threshold", "tsv_file", "mask_statistics", NULL
};

static const char *const no_columns[] = { NULL };

const qc_module_t qc_module_classify_pixelwise = {
    .name = STEP,
    .run = run,
    .check = check,
    .params = params,
    .columns = no_columns,
    .param_columns = qc_masks_name_column,
    .kept_named = qc_masks_name_column,   /* img_mask_<name>: its column's name */
};
