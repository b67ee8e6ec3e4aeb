/* BlurDetectionModule.identifyBlurryRegions, as HistoQC computes it:
 *
 *   img    = rgb2gray (image at image_work_size, default 2.5x)
 *   blurry = gaussian (|laplace (img)|, sigma = blur_radius) <= blur_threshold
 *   blurry = resize (blurry, img_mask_use's size, nearest) & img_mask_use
 *   save "_blurry.png"; keep it as "blurry"; img_mask_use &= ~blurry
 *   blurry_removed_num_regions / _mean_area / _max_area (8-connected)
 *   blurry_removed_percent (printMaskHelper, step's mask_statistics)
 *
 * Defaults are HistoQC's code defaults (blur_radius 7, blur_threshold 0.1,
 * 2.5x); its config.ini sets 100 and .15. skimage's laplace reflects at
 * the border and its gaussian repeats the edge pixel (truncate 4), as the
 * ops do with QC_BORDER_REFLECT / QC_BORDER_NEAREST.
 *
 * Known weakness kept on purpose (this is the faithful module): with a
 * sigma of 100 px the glass around the tissue, whose Laplacian is ~0,
 * pulls the smoothed value of all tissue under the threshold; HistoQC
 * removed all tissue of CMU-1 this way. BlurDetectionModule.
 * identifyBlurryRegionsLocal (blur_local.c) is the project's answer. */
#include "kernels/modules/blur_algo.h"
#include "kernels/modules/blur_common.h"

#include <math.h>
#include <stdio.h>

/* A Gaussian radius the filter accepts (4 sigma + 0.5 <= 2^20). */
#define MAX_BLUR_RADIUS 200000

int
qc_blur_histoqc_map (const qc_ops_t *ops, const qc_fimg_t *gray,
                     const qc_blur_histoqc_params_t *p, qc_mask_t *blurry)
{
    if (!ops || !qc_fimg_valid (gray) || !p || !qc_mask_valid (blurry)
        || blurry->w != gray->w || blurry->h != gray->h
        || p->blur_radius < 0 || p->blur_radius > MAX_BLUR_RADIUS
        || !isfinite (p->blur_threshold))
        return -1;
    qc_fimg_t *lap = qc_fimg_new (gray->w, gray->h);
    qc_fimg_t *zero = qc_fimg_new (gray->w, gray->h);
    int rc = -1;
    /* |x| as |x - 0|: the ops table has no abs of its own. */
    if (lap && zero
        && ops->laplace (gray, QC_BORDER_REFLECT, lap) == 0
        && ops->fimg_arith (lap, zero, QC_ARITH_ABSDIFF, lap) == 0
        && ops->gaussian (lap, (double) p->blur_radius, 4.0,
                          QC_BORDER_NEAREST, lap) == 0
        /* v <= t is "not t < v": threshold is strict on both sides. */
        && ops->threshold (lap, p->blur_threshold, INFINITY, blurry) == 0
        && ops->mask_logic (blurry, NULL, QC_LOGIC_NOT, blurry) == 0)
        rc = 0;
    qc_fimg_destroy (&lap);
    qc_fimg_destroy (&zero);
    return rc;
}

static int
get_params (const qc_config_section_t *sec, qc_blur_histoqc_params_t *p,
            const char **work_size, char *err, size_t errlen)
{
    long long radius;
    double thr;
    if (qc_bb_check_int (sec, "blur_radius", QC_BLUR_HISTOQC_RADIUS, 0,
                         MAX_BLUR_RADIUS, &radius, err, errlen)
        || qc_bb_check_range (sec, "blur_threshold", QC_BLUR_HISTOQC_THRESHOLD,
                              -INFINITY, INFINITY, &thr, err, errlen)
        || qc_bb_check_work_size (sec, err, errlen)
        || qc_bb_check_mask_statistics (sec, err, errlen)
        || qc_config_get_string (sec, "image_work_size", "2.5x", work_size,
                                 err, errlen))
        return -1;
    p->blur_radius = (int) radius;
    p->blur_threshold = thr;
    return 0;
}

static int
check_blur (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_blur_histoqc_params_t p;
    const char *ws;
    return get_params (sec, &p, &ws, err, errlen);
}

/* From a blurry map at the work size to the removal HistoQC makes at the
 * mask's size; shared with the local detector, which reports the same
 * columns and files. Takes ownership of nothing. */
int
qc_blur_apply (qc_run_t *run, const qc_mask_t *blurry_work, const char *what)
{
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *found = qc_mask_new (use->w, use->h);
    qc_mask_t *before = qc_mask_clone (use);
    if (!found || !before) {
        qc_mask_destroy (&found);
        qc_mask_destroy (&before);
        return qc_run_fail (run, "out of memory for %d x %d masks", use->w,
                            use->h);
    }
    int rc = -1;
    if (ops->resize_mask (blurry_work, QC_INTERP_NEAREST, found) != 0
        || ops->mask_logic (found, use, QC_LOGIC_AND, found) != 0
        || ops->mask_logic (use, found, QC_LOGIC_ANDNOT, use) != 0)
        qc_run_fail (run, "combining the blurry mask with img_mask_use failed");
    else if (qc_run_save_mask (run, "blurry", found) == 0
             && qc_bb_set_regions (run, "blurry_removed", found) == 0
             && qc_run_set_mask_statistics (run, "blurry_removed_percent", use,
                                            before) == 0
             && qc_bb_warn_if_empty (run, use, what) == 0)
        rc = 0;
    qc_mask_destroy (&before);
    if (rc != 0) {
        qc_mask_destroy (&found);
        return -1;
    }
    /* For the fuse image and finalComputations (HistoQC's
     * s["img_mask_blurry"]); the run owns it from here. */
    return qc_run_keep_mask (run, "blurry", found);
}

static int
run_blur (qc_run_t *run)
{
    qc_blur_histoqc_params_t p;
    const char *ws;
    char err[512];
    if (get_params (run->params, &p, &ws, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, ws);
    if (!gray)
        return -1;
    qc_mask_t *blurry = qc_mask_new (gray->w, gray->h);
    if (!blurry)
        return qc_run_fail (run, "out of memory for a %d x %d mask", gray->w,
                            gray->h);
    int rc = 0;
    if (qc_blur_histoqc_map (qc_run_ops (run), gray, &p, blurry) != 0)
        rc = qc_run_fail (run, "blur filter failed on a %d x %d image "
                          "(out of memory?)", gray->w, gray->h);
    else
        rc = qc_blur_apply (run, blurry,
                            "BlurDetectionModule.identifyBlurryRegions");
    qc_mask_destroy (&blurry);
    return rc;
}

static const char *const params[] = {
    "image_work_size", "blur_radius", "blur_threshold", "mask_statistics",
    NULL
};

static const char *const columns[] = {
    "blurry_removed_num_regions", "blurry_removed_mean_area",
    "blurry_removed_max_area", "blurry_removed_percent", NULL
};

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "blurry", NULL };

const qc_module_t qc_module_blur_histoqc = {
    .name = "BlurDetectionModule.identifyBlurryRegions",
    .run = run_blur,
    .check = check_blur,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
