/* BlurDetectionModule.identifyBlurryRegionsLocal: the project's blur
 * detector, used by its default config in place of HistoQC's.
 *
 * Why not HistoQC's: it smooths |Laplacian| over the WHOLE image with a
 * sigma of 100 px (2.5x) and thresholds the result absolutely. Glass has
 * no Laplacian, so on a slide with much glass around the tissue the
 * smoothed value of every tissue pixel falls under the threshold (HistoQC
 * removed all tissue of CMU-1 and 66% of the TCGA slide), and a pale or a
 * dense stain moves the value as much as focus does.
 *
 * What this one computes, at image_work_size (default 2.5x, where a 40x
 * scan's out-of-focus blur of ~15 um spans ~4 px):
 *
 *   measured  = img_mask_use (resized to the work size) & gray < max_gray,
 *               eroded by a (2 edge_erode + 1) square: tissue whose 3x3
 *               Laplacian sees neither glass nor the tissue's outline
 *   sharpness = mean of |laplace (gray)| over the measured pixels of a
 *               window x window box (normalised convolution: glass and
 *               holes in the window do not dilute it); judged where at
 *               least min_fraction of the window is measured
 *   reference = median sharpness of the judged pixels that are above
 *               absolute_threshold (the slide's typical in-focus tissue;
 *               pixels already clearly blurred do not pull it down, so a
 *               mostly blurred slide still has a sharp reference)
 *   blurry    = judged tissue whose sharpness < max (absolute_threshold,
 *               relative_threshold * reference)
 *
 * then, as HistoQC's module: resized to img_mask_use's size, ANDed with
 * it, removed from it, saved as "_blurry.png", kept as "blurry", and the
 * same blurry_removed_* columns (so HistoQC's UI reads the output).
 *
 * The mean |Laplacian| is the fine-detail amplitude of the tissue: out of
 * focus, it drops to a few percent of the in-focus value, whatever the
 * stain; the relative threshold (half the slide's typical amplitude) adapts
 * to the scanner, the JPEG quality and the tissue type, and the absolute
 * one (no fine detail at all) catches slides blurred all over.
 *
 * Defaults learned on generated slides (qc-mkslide, blur sigma 24-80 px at
 * 40x, 8,000-60,000 px wide, 11 seeds): Dice 0.92-0.99 against the blur
 * truth, while flagging under 0.1% of the tissue of the real slides
 * CMU-1-Small-Region and TCGA-CR-7395 (tests/unit/test_blur_local.c).
 * Blur under ~1 px at the work size (under ~4 um at 2.5x) is invisible
 * there: raise image_work_size (and window) to find finer blur. */
#include "kernels/modules/blur_algo.h"
#include "kernels/modules/blur_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int
params_ok (const qc_blur_local_params_t *p)
{
    return p && p->window >= 1 && p->window <= QC_BLUR_LOCAL_MAX_WINDOW
        && p->window % 2 == 1 && p->edge_erode >= 0
        && p->edge_erode <= QC_BLUR_LOCAL_MAX_ERODE
        && p->min_fraction > 0 && p->min_fraction <= 1
        && p->relative_threshold >= 0 && p->relative_threshold <= 1
        && p->absolute_threshold >= 0 && p->absolute_threshold <= 8
        && p->max_gray > 0 && p->max_gray <= 1.0001;
}

void
qc_blur_local_defaults (qc_blur_local_params_t *p)
{
    if (!p)
        return;
    p->window = QC_BLUR_LOCAL_WINDOW;
    p->relative_threshold = QC_BLUR_LOCAL_RELATIVE;
    p->absolute_threshold = QC_BLUR_LOCAL_ABSOLUTE;
    p->min_fraction = QC_BLUR_LOCAL_MIN_FRACTION;
    p->edge_erode = QC_BLUR_LOCAL_EDGE_ERODE;
    p->max_gray = QC_BLUR_LOCAL_MAX_GRAY;
}

int
qc_blur_local_sharpness (const qc_ops_t *ops, const qc_fimg_t *gray,
                         const qc_mask_t *tissue,
                         const qc_blur_local_params_t *p, qc_fimg_t *sharpness)
{
    if (!ops || !qc_fimg_valid (gray) || !params_ok (p)
        || !qc_fimg_valid (sharpness) || sharpness->w != gray->w
        || sharpness->h != gray->h
        || (tissue && (!qc_mask_valid (tissue) || tissue->w != gray->w
                       || tissue->h != gray->h)))
        return -1;
    int w = gray->w, h = gray->h, k = p->window, rc = -1;
    qc_mask_t *meas = qc_mask_new (w, h);
    qc_fimg_t *weight = qc_fimg_new (w, h);
    qc_fimg_t *tmp = qc_fimg_new (w, h);
    if (!meas || !weight || !tmp)
        goto done;
    /* The pixels measured: stained tissue away from any edge. */
    if (ops->threshold (gray, -INFINITY, p->max_gray, meas) != 0
        || (tissue && ops->mask_logic (meas, tissue, QC_LOGIC_AND, meas) != 0)
        || ops->morph_rect (meas, 2 * p->edge_erode + 1, 2 * p->edge_erode + 1,
                            QC_MORPH_ERODE, meas) != 0
        || ops->mask_to_fimg (meas, 1.0, 0.0, weight) != 0)
        goto done;
    /* sharpness = box (|laplace| * weight) / box (weight); the box counts
     * outside the image as 0 (no tissue there). */
    if (ops->laplace (gray, QC_BORDER_REFLECT, sharpness) != 0
        || ops->mask_to_fimg (meas, 0.0, 0.0, tmp) != 0
        || ops->fimg_arith (sharpness, tmp, QC_ARITH_ABSDIFF, sharpness) != 0
        || ops->fimg_arith (sharpness, weight, QC_ARITH_MUL, sharpness) != 0
        || ops->box_filter (sharpness, k, k, QC_BORDER_CONSTANT, sharpness) != 0
        || ops->box_filter (weight, k, k, QC_BORDER_CONSTANT, weight) != 0
        || ops->fimg_arith (sharpness, weight, QC_ARITH_DIV, sharpness) != 0)
        goto done;
    /* Judged: tissue with enough measured pixels around; -1 elsewhere. */
    if (ops->threshold (weight, p->min_fraction - 1e-6, INFINITY, meas) != 0
        || (tissue && ops->mask_logic (meas, tissue, QC_LOGIC_AND, meas) != 0)
        || ops->mask_to_fimg (meas, 1.0, 0.0, tmp) != 0
        || ops->fimg_arith (sharpness, tmp, QC_ARITH_MUL, sharpness) != 0
        || ops->mask_to_fimg (meas, 0.0, -1.0, tmp) != 0
        || ops->fimg_arith (sharpness, tmp, QC_ARITH_ADD, sharpness) != 0)
        goto done;
    rc = 0;
done:
    qc_mask_destroy (&meas);
    qc_fimg_destroy (&weight);
    qc_fimg_destroy (&tmp);
    return rc;
}

/* The median of the pixels under mask (st: their statistics, n > 0) from
 * a fine histogram: one pass instead of a sort, and exact to 1/4096 of the
 * range, far below what a threshold at half the median can notice. */
#define MEDIAN_BINS 4096

static int
histogram_median (const qc_ops_t *ops, const qc_fimg_t *src,
                  const qc_mask_t *mask, const qc_stats_t *st, double *out)
{
    if (!(st->max > st->min)) {
        *out = st->min;
        return 0;
    }
    uint64_t *hist = calloc (MEDIAN_BINS, sizeof *hist);
    if (!hist)
        return -1;
    if (ops->fimg_histogram (src, mask, MEDIAN_BINS, st->min, st->max,
                             hist) != 0) {
        free (hist);
        return -1;
    }
    double half = 0.5 * (double) st->n, seen = 0, width =
        (st->max - st->min) / MEDIAN_BINS;
    int b = 0;
    while (b < MEDIAN_BINS - 1 && seen + (double) hist[b] < half)
        seen += (double) hist[b++];
    /* Linear inside the bin that holds the middle pixel. */
    double frac = hist[b] ? (half - seen) / (double) hist[b] : 0.5;
    *out = st->min + width * (b + frac);
    free (hist);
    return 0;
}

int
qc_blur_local_reference (const qc_ops_t *ops, const qc_fimg_t *sharpness,
                         double absolute_threshold, qc_mask_t *scratch,
                         double *ref)
{
    if (!ops || !qc_fimg_valid (sharpness) || !qc_mask_valid (scratch)
        || scratch->w != sharpness->w || scratch->h != sharpness->h || !ref)
        return -1;
    qc_stats_t st;
    *ref = 0;
    if (ops->threshold (sharpness, absolute_threshold, INFINITY, scratch) != 0
        || ops->fimg_stats (sharpness, scratch, &st) != 0)
        return -1;
    return st.n > 0 ? histogram_median (ops, sharpness, scratch, &st, ref) : 0;
}

int
qc_blur_local_classify (const qc_ops_t *ops, const qc_fimg_t *sharpness,
                        const qc_blur_local_params_t *p, qc_mask_t *blurry,
                        double *threshold_used)
{
    if (!ops || !qc_fimg_valid (sharpness) || !params_ok (p)
        || !qc_mask_valid (blurry) || blurry->w != sharpness->w
        || blurry->h != sharpness->h)
        return -1;
    /* The reference: median of the judged pixels above the floor. */
    double thr = p->absolute_threshold, ref = 0;
    if (qc_blur_local_reference (ops, sharpness, p->absolute_threshold, blurry,
                                 &ref) != 0)
        return -1;
    if (p->relative_threshold * ref > thr)
        thr = p->relative_threshold * ref;
    /* Judged pixels hold >= 0, the others -1. */
    if (ops->threshold (sharpness, -0.5, thr, blurry) != 0)
        return -1;
    if (threshold_used)
        *threshold_used = thr;
    return 0;
}

int
qc_blur_local_map (const qc_ops_t *ops, const qc_fimg_t *gray,
                   const qc_mask_t *tissue, const qc_blur_local_params_t *p,
                   qc_mask_t *blurry, double *threshold_used)
{
    if (!qc_fimg_valid (gray))
        return -1;
    qc_fimg_t *s = qc_fimg_new (gray->w, gray->h);
    int rc = s && qc_blur_local_sharpness (ops, gray, tissue, p, s) == 0
          && qc_blur_local_classify (ops, s, p, blurry, threshold_used) == 0
        ? 0 : -1;
    qc_fimg_destroy (&s);
    return rc;
}

static int
get_params (const qc_config_section_t *sec, qc_blur_local_params_t *p,
            const char **work_size, char *err, size_t errlen)
{
    long long erode;
    qc_blur_local_defaults (p);
    if (qc_bb_check_odd_window (sec, "window", p->window,
                                QC_BLUR_LOCAL_MAX_WINDOW, &p->window, err,
                                errlen)
        || qc_bb_check_int (sec, "edge_erode", p->edge_erode, 0,
                            QC_BLUR_LOCAL_MAX_ERODE, &erode, err, errlen)
        || qc_bb_check_sharpness (sec, &p->relative_threshold,
                                  &p->absolute_threshold, &p->min_fraction,
                                  &p->max_gray, err, errlen)
        || qc_bb_check_work_size (sec, err, errlen)
        || qc_bb_check_mask_statistics (sec, err, errlen)
        || qc_config_get_string (sec, "image_work_size", "2.5x", work_size,
                                 err, errlen))
        return -1;
    p->edge_erode = (int) erode;
    return 0;
}

static int
check_local (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_blur_local_params_t p;
    const char *ws;
    return get_params (sec, &p, &ws, err, errlen);
}

static int
run_local (qc_run_t *run)
{
    qc_blur_local_params_t p;
    const char *ws;
    char err[512];
    if (get_params (run->params, &p, &ws, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, ws);
    const qc_mask_t *use = gray ? qc_run_mask (run) : NULL;
    if (!use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *tissue = qc_mask_new (gray->w, gray->h);
    qc_mask_t *blurry = qc_mask_new (gray->w, gray->h);
    int rc = -1;
    double thr = 0;
    if (!tissue || !blurry)
        qc_run_fail (run, "out of memory for %d x %d masks", gray->w, gray->h);
    else if (ops->resize_mask (use, QC_INTERP_NEAREST, tissue) != 0
             || qc_blur_local_map (ops, gray, tissue, &p, blurry, &thr) != 0)
        qc_run_fail (run, "sharpness map failed on a %d x %d image (out of "
                     "memory?)", gray->w, gray->h);
    else
        rc = qc_blur_apply (run, blurry,
                            "BlurDetectionModule.identifyBlurryRegionsLocal");
    qc_mask_destroy (&tissue);
    qc_mask_destroy (&blurry);
    return rc;
}

static const char *const params[] = {
    "image_work_size", "window", "relative_threshold", "absolute_threshold",
    "min_fraction", "edge_erode", "max_gray", "mask_statistics", NULL
};

static const char *const columns[] = {
    "blurry_removed_num_regions", "blurry_removed_mean_area",
    "blurry_removed_max_area", "blurry_removed_percent", NULL
};

const qc_module_t qc_module_blur_local = {
    .name = "BlurDetectionModule.identifyBlurryRegionsLocal",
    .run = run_local,
    .check = check_local,
    .params = params,
    .columns = columns,
};
