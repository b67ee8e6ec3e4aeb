/* LocalTextureEstimationModule.estimateGreyComatrixFeatures: grey-level
 * co-occurrence texture features of small patches of the tissue, as
 * HistoQC computes them:
 *
 *   img   = rgb2gray (image at [BaseImage] image_work_size)
 *   mask  = img_mask_use, or the mask named by mask_name; ~mask if invert
 *   npatches times: a mask pixel (r, c) drawn at random (with
 *         replacement); patch = img[r : r + patch_size, c : c + patch_size]
 *         (cut short at the image's edge); levels = np.digitize (patch,
 *         linspace (0, 1, nlevels), right=True); graycomatrix at distance 5,
 *         angle 0, symmetric, normed; graycoprops of each of feats
 *   columns <prefix_><feat> = mean over the patches, <prefix_><feat>_std =
 *         their (population) standard deviation
 *
 * This file is the step (parameters, masks, columns); texture_glcm.c
 * computes the features (texture_algo.h).
 *
 * One difference, on purpose: HistoQC draws the patches with numpy's
 * global random state, unseeded, so its numbers change from run to run;
 * here the draw is a fixed-seed generator, so the same slide always gives
 * the same numbers (the project's metrics are deterministic).
 *
 * Parameters as HistoQC's: prefix (columns "<prefix>_<feat>"), patch_size
 * 32, npatches 100, nlevels 8, feats "contrast:dissimilarity:homogeneity:
 * ASM:energy:correlation", invert False, mask_name "img_mask_use" (or a
 * mask an earlier step kept: "img_mask_pen_markings" or "pen_markings").
 * An empty mask gives HistoQC's warning and -100 in every column, the
 * value HistoQC's other steps print when a statistic cannot be computed
 * (contrast, stains). HistoQC itself leaves this step's cells out of the
 * row, which shifts the later values into the wrong columns; empty cells
 * (what this step wrote before) hid the columns in HistoQC's UI whenever
 * such a slide came first, as the UI takes a column as numeric from the
 * first row.
 *
 * HistoQC quirk kept: with a single feature and several patches, its
 * results.squeeze () leaves one row per patch and zip pairs the feature
 * with the FIRST patch's value (std 0.0); that is what is printed. */
#include "kernels/modules/texture_algo.h"
#include "kernels/modules/blur_common.h"
#include "kernels/modules/masks.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_FEATS 32

typedef struct {
    qc_glcm_params_t glcm;
    char prefix[QC_MASKS_MAX_PREFIX + 2];      /* "name_" or "" */
    int feats[MAX_FEATS];
    int nfeats;
    int invert;
    const char *mask_name;
} texture_params_t;

static int
parse_feats (const qc_config_section_t *sec, const char *text,
             texture_params_t *p, char *err, size_t errlen)
{
    p->nfeats = 0;
    for (const char *s = text;;) {
        const char *end = strchr (s, ':');
        size_t len = end ? (size_t) (end - s) : strlen (s);
        int f = qc_glcm_feature_parse (s, len);
        if (f < 0 || p->nfeats >= MAX_FEATS) {
            snprintf (err, errlen, "[%s] feats (line %d): '%.*s' is %s",
                      qc_config_section_name (sec),
                      qc_config_key_line (sec, "feats"), (int) (len > 64 ? 64
                                                                : len), s,
                      f < 0 ? "not one of contrast, dissimilarity, "
                      "homogeneity, ASM, energy, correlation"
                      : "one feature too many");
            return -1;
        }
        p->feats[p->nfeats++] = f;
        if (!end)
            return 0;
        s = end + 1;
    }
}

static int
get_params (const qc_config_section_t *sec, texture_params_t *p, char *err,
            size_t errlen)
{
    memset (p, 0, sizeof *p);
    long long patch, npatches, nlevels;
    const char *prefix, *feats;
    if (qc_config_get_string (sec, "prefix", NULL, &prefix, err, errlen)
        || qc_bb_check_int (sec, "patch_size", 32, 1, QC_GLCM_MAX_PATCH,
                            &patch, err, errlen)
        || qc_bb_check_int (sec, "npatches", 100, 1, QC_GLCM_MAX_PATCHES,
                            &npatches, err, errlen)
        || qc_bb_check_int (sec, "nlevels", 8, 2, QC_GLCM_MAX_LEVELS,
                            &nlevels, err, errlen)
        || qc_config_get_string (sec, "feats", "contrast:dissimilarity:"
                                 "homogeneity:ASM:energy:correlation", &feats,
                                 err, errlen)
        || qc_config_get_bool (sec, "invert", 0, &p->invert, err, errlen)
        || qc_config_get_string (sec, "mask_name", "img_mask_use",
                                 &p->mask_name, err, errlen))
        return -1;
    if (qc_masks_prefix_and_mask (sec, prefix, p->mask_name, p->prefix, err,
                                  errlen))
        return -1;
    p->glcm.patch_size = (int) patch;
    p->glcm.npatches = (int) npatches;
    p->glcm.nlevels = (int) nlevels;
    p->glcm.seed = QC_GLCM_SEED;
    return parse_feats (sec, feats, p, err, errlen);
}

static int
check_texture (const qc_config_section_t *sec, char *err, size_t errlen)
{
    texture_params_t p;
    return get_params (sec, &p, err, errlen);
}

static int
texture_columns (const qc_config_section_t *sec, qc_module_add_column_fn *add,
                 void *ctx)
{
    texture_params_t p;
    char err[256], col[160];
    if (get_params (sec, &p, err, sizeof err) != 0)
        return -1;
    for (int i = 0; i < p.nfeats; i++) {
        const char *f = qc_glcm_feature_name (p.feats[i]);
        snprintf (col, sizeof col, "%s%s", p.prefix, f);
        if (add (ctx, col) != 0)
            return -1;
        snprintf (col, sizeof col, "%s%s_std", p.prefix, f);
        if (add (ctx, col) != 0)
            return -1;
    }
    return 0;
}

static int
run_texture (qc_run_t *run)
{
    texture_params_t p;
    char err[512];
    if (get_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    const qc_mask_t *named = gray ? qc_run_named_mask (run, p.mask_name) : NULL;
    if (!named)
        return -1;
    if (named->w != gray->w || named->h != gray->h)
        return qc_run_fail (run, "mask %s is %d x %d, the image %d x %d",
                            p.mask_name, named->w, named->h, gray->w, gray->h);
    qc_mask_t *inv = NULL;
    if (p.invert) {
        inv = qc_mask_new (named->w, named->h);
        if (!inv || qc_run_ops (run)->mask_logic (named, NULL, QC_LOGIC_NOT,
                                                  inv) != 0) {
            qc_mask_destroy (&inv);
            return qc_run_fail (run, "out of memory for a mask");
        }
    }
    double mean[QC_GLCM_NFEATS], std[QC_GLCM_NFEATS], first[QC_GLCM_NFEATS];
    int rc = qc_glcm_sample (gray, inv ? inv : named, &p.glcm, mean, std,
                             first);
    qc_mask_destroy (&inv);
    if (rc < 0)
        return qc_run_fail (run, "texture features failed (out of memory?)");
    bool empty = rc == 1;
    if (empty)
        qc_run_warn (run, "LocalTextureEstimationModule."
                     "estimateGreyComatrixFeatures:%s Can not estimate the "
                     "empty mask since NO tissue remains detectable in mask",
                     p.prefix);
    int single = p.nfeats == 1 && p.glcm.npatches > 1;
    char buf[QC_PYFLOAT_LEN], col[160];
    for (int i = 0; i < p.nfeats; i++) {
        int f = p.feats[i];
        const char *name = qc_glcm_feature_name (f);
        snprintf (col, sizeof col, "%s%s", p.prefix, name);
        if (qc_run_set (run, col, "%s", empty ? "-100"
                        : qc_pyfloat (single ? first[f] : mean[f], buf, sizeof buf)))
            return -1;
        snprintf (col, sizeof col, "%s%s_std", p.prefix, name);
        if (qc_run_set (run, col, "%s", empty ? "-100"
                        : qc_pyfloat (single ? 0.0 : std[f], buf, sizeof buf)))
            return -1;
    }
    return 0;
}

/* Its mask_name= (qc_module_t needed_masks): its run fails without it. */
static int
texture_needed_masks (const qc_config_section_t *sec, qc_module_add_column_fn *add,
                      void *ctx)
{
    texture_params_t p;
    if (!add || get_params (sec, &p, NULL, 0) != 0)
        return -1;
    return add (ctx, p.mask_name);
}

static const char *const params[] = {
    "prefix", "patch_size", "npatches", "nlevels", "feats", "invert",
    "mask_name", NULL
};

static const char *const no_columns[] = { NULL };

const qc_module_t qc_module_texture = {
    .name = "LocalTextureEstimationModule.estimateGreyComatrixFeatures",
    .run = run_texture,
    .check = check_texture,
    .params = params,
    .columns = no_columns,
    .param_columns = texture_columns,
    .needed_masks = texture_needed_masks,
};
