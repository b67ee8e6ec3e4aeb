/* BubbleRegionByRegion.detectSmoothness, as HistoQC computes it: areas so
 * smooth that a pixel barely differs from the mean of its neighbourhood
 * (the inside of air bubbles, out-of-focus glass, blank tissue):
 *
 *   img  = rgb2gray (image at [BaseImage] image_work_size)
 *   flat = |box_mean (img, kernel_size) - img| < threshold
 *          (scipy convolve2d 'same' with ones/k^2: zero outside the image)
 *   flat = remove_small_objects (flat, min_object_size)     (4-connected)
 *   flat = ~remove_small_objects (~flat, min_object_size)   (small holes)
 *   save "_flat.png" = flat & img_mask_use; img_mask_use &= ~flat
 *   flat_areas = printMaskHelper (step's mask_statistics)
 *
 * Defaults are HistoQC's code defaults (threshold .01, kernel_size 10,
 * min_object_size 100); its config.ini sets min_object_size 500. The flat
 * mask (not limited to img_mask_use, as HistoQC's s["img_mask_flat"]) is
 * kept as "flat". */
#include "kernels/modules/bubble_algo.h"
#include "kernels/modules/blur_common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

int
qc_bubble_flat_map (const qc_ops_t *ops, const qc_fimg_t *gray,
                    const qc_bubble_params_t *p, qc_mask_t *flat)
{
    if (!ops || !qc_fimg_valid (gray) || !p || !qc_mask_valid (flat)
        || flat->w != gray->w || flat->h != gray->h || p->kernel_size < 1
        || p->kernel_size > QC_BUBBLE_MAX_KERNEL || !isfinite (p->threshold)
        || p->min_object_size < 0)
        return -1;
    qc_fimg_t *mean = qc_fimg_new (gray->w, gray->h);
    size_t min = (size_t) p->min_object_size;
    int rc = -1;
    if (mean
        && ops->box_filter (gray, p->kernel_size, p->kernel_size,
                            QC_BORDER_CONSTANT, mean) == 0
        && ops->fimg_arith (mean, gray, QC_ARITH_ABSDIFF, mean) == 0
        && ops->threshold (mean, -INFINITY, p->threshold, flat) == 0
        && ops->area_filter (flat, QC_CONN_OBJECTS, min, SIZE_MAX, flat) == 0
        && ops->mask_logic (flat, NULL, QC_LOGIC_NOT, flat) == 0
        && ops->area_filter (flat, QC_CONN_OBJECTS, min, SIZE_MAX, flat) == 0
        && ops->mask_logic (flat, NULL, QC_LOGIC_NOT, flat) == 0)
        rc = 0;
    qc_fimg_destroy (&mean);
    return rc;
}

static int
get_params (const qc_config_section_t *sec, qc_bubble_params_t *p, char *err,
            size_t errlen)
{
    long long k, min;
    if (qc_bb_check_range (sec, "threshold", QC_BUBBLE_THRESHOLD, -INFINITY,
                           INFINITY, &p->threshold, err, errlen)
        || qc_bb_check_int (sec, "kernel_size", QC_BUBBLE_KERNEL, 1,
                            QC_BUBBLE_MAX_KERNEL, &k, err, errlen)
        || qc_bb_check_int (sec, "min_object_size", QC_BUBBLE_MIN_OBJECT, 0,
                            (long long) QC_IMAGE_MAX_PIXELS, &min, err, errlen)
        || qc_bb_check_mask_statistics (sec, err, errlen))
        return -1;
    p->kernel_size = (int) k;
    p->min_object_size = min;
    return 0;
}

static int
check_smoothness (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_bubble_params_t p;
    return get_params (sec, &p, err, errlen);
}

static int
run_smoothness (qc_run_t *run)
{
    qc_bubble_params_t p;
    char err[512];
    if (get_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *use = gray ? qc_run_mask (run) : NULL;
    if (!use)
        return -1;
    if (use->w != gray->w || use->h != gray->h)
        return qc_run_fail (run, "img_mask_use is %d x %d, the image %d x %d",
                            use->w, use->h, gray->w, gray->h);
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *flat = qc_mask_new (gray->w, gray->h);
    qc_mask_t *before = qc_mask_clone (use);
    qc_mask_t *shown = qc_mask_new (gray->w, gray->h);
    int rc = -1;
    if (!flat || !before || !shown)
        qc_run_fail (run, "out of memory for %d x %d masks", gray->w, gray->h);
    else if (qc_bubble_flat_map (ops, gray, &p, flat) != 0
             || ops->mask_logic (flat, use, QC_LOGIC_AND, shown) != 0
             || ops->mask_logic (use, flat, QC_LOGIC_ANDNOT, use) != 0)
        qc_run_fail (run, "smoothness filter failed on a %d x %d image (out "
                     "of memory?)", gray->w, gray->h);
    else if (qc_run_save_mask (run, "flat", shown) == 0
             && qc_run_set_mask_statistics (run, "flat_areas", use, before) == 0
             && qc_bb_warn_if_empty (run, use,
                                     "BubbleRegionByRegion.detectSmoothness:")
                == 0) {
        rc = qc_run_keep_mask (run, "flat", flat);
        flat = NULL;   /* the run owns it now, also when keeping failed */
    }
    qc_mask_destroy (&flat);
    qc_mask_destroy (&before);
    qc_mask_destroy (&shown);
    return rc;
}

static const char *const params[] = {
    "threshold", "kernel_size", "min_object_size", "mask_statistics", NULL
};

static const char *const columns[] = { "flat_areas", NULL };

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "flat", NULL };

const qc_module_t qc_module_bubble_smoothness = {
    .name = "BubbleRegionByRegion.detectSmoothness",
    .run = run_smoothness,
    .check = check_smoothness,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
