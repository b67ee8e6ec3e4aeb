/* The focus step's arithmetic; see focus_algo.h. */
#include "kernels/modules/focus_algo.h"
#include "kernels/modules/blur_algo.h"
#include "kernels/slide/block_measure.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void
qc_focus_defaults (qc_focus_params_t *p)
{
    if (!p)
        return;
    p->magnification = QC_FOCUS_MAGNIFICATION;
    p->window = QC_FOCUS_WINDOW;
    p->relative_threshold = QC_FOCUS_RELATIVE;
    p->edge_relative_threshold = QC_FOCUS_EDGE_RELATIVE;
    p->absolute_threshold = QC_FOCUS_ABSOLUTE;
    p->min_fraction = QC_FOCUS_MIN_FRACTION;
    p->edge_erode = QC_FOCUS_EDGE_ERODE;
    p->max_gray = QC_FOCUS_MAX_GRAY;
    p->min_size = QC_FOCUS_MIN_SIZE;
    p->warn_sharpness = QC_FOCUS_WARN_SHARPNESS;
    p->ratio_threshold = QC_FOCUS_RATIO;
}

int
qc_focus_params_ok (const qc_focus_params_t *p)
{
    return p && p->magnification > 0 && p->magnification <= 1000
        && p->window >= 1 && p->window <= QC_FOCUS_MAX_WINDOW
        && p->window % 2 == 1 && p->relative_threshold >= 0
        && p->relative_threshold <= 1 && p->edge_relative_threshold >= 0
        && p->edge_relative_threshold <= 1 && p->absolute_threshold >= 0
        && p->absolute_threshold <= 8 && p->min_fraction > 0
        && p->min_fraction <= 1 && p->edge_erode >= 0
        && p->edge_erode <= QC_FOCUS_MAX_ERODE && p->max_gray > 0
        && p->max_gray <= 1.0001 && p->min_size >= 0
        && p->min_size <= QC_FOCUS_MAX_MIN_SIZE && p->warn_sharpness >= 0
        && p->warn_sharpness <= 255 && p->ratio_threshold >= 0
        && p->ratio_threshold <= 1;
}

int
qc_focus_band (double want, double level_mag)
{
    if (!(want > 0) || !(level_mag > 0))
        return QC_BLOCK_HF_BAND;
    long b = lround (QC_BLOCK_HF_BAND * want / level_mag);
    return b < 1 ? 1 : b > QC_BLOCK_HF_BAND ? QC_BLOCK_HF_BAND : (int) b;
}

int
qc_focus_pick_level (const double *downsample, int nlevels, double base_mag,
                     double want, int *level)
{
    if (!downsample || nlevels < 1 || !(base_mag > 0) || !(want > 0)
        || !level)
        return -1;
    /* the largest downsample whose magnification base_mag / d is at
     * least want: d <= base_mag / want */
    double limit = base_mag / want * QC_FOCUS_MAG_SLACK;
    int best = -1;
    for (int i = 0; i < nlevels; i++)
        if (downsample[i] > 0 && downsample[i] <= limit
            && (best < 0 || downsample[i] > downsample[best]))
            best = i;
    if (best >= 0) {
        *level = best;
        return 0;
    }
    /* none fine enough: the finest there is */
    best = 0;
    for (int i = 1; i < nlevels; i++)
        if (downsample[i] > 0 && downsample[i] < downsample[best])
            best = i;
    *level = best;
    return 1;
}

/* The window x window sums of the weights (weight: 1 where a pixel is
 * measured) into wsum, and where they are judged: at least min_fraction
 * of the window measured, and tissue. */
static int
window_weights (const qc_ops_t *ops, const qc_fimg_t *weight, const qc_mask_t *tissue,
                int k, double min_fraction, qc_fimg_t *wsum, qc_mask_t *judged)
{
    if (ops->box_filter (weight, k, k, QC_BORDER_CONSTANT, wsum) != 0
        || ops->threshold (wsum, min_fraction - 1e-6, INFINITY, judged) != 0)
        return -1;
    return ops->mask_logic (judged, tissue, QC_LOGIC_AND, judged);
}

/* The window x window RMS of the measured pixels' mean energies (energy
 * is sum's unit: the blocks' hf squared) where judged, -1 elsewhere
 * (qc_blur_local_classify's convention), given window_weights' wsum and
 * judged for the same window. */
static int
window_rms_of (const qc_ops_t *ops, const qc_fimg_t *energy, int k, const qc_fimg_t *wsum,
               const qc_mask_t *judged, qc_fimg_t *out)
{
    if (ops->box_filter (energy, k, k, QC_BORDER_CONSTANT, out) != 0
        || ops->fimg_arith (out, wsum, QC_ARITH_DIV, out) != 0
        || ops->fimg_sqrt (out, out) != 0)
        return -1;
    return ops->fimg_where (judged, out, -1.0, out);
}

/* Both: the window RMS of energy, its weights' sums in wsum, where it is
 * judged in judged. */
static int
window_rms (const qc_ops_t *ops, const qc_fimg_t *energy,
            const qc_fimg_t *weight, const qc_mask_t *tissue, int k,
            double min_fraction, qc_fimg_t *out, qc_fimg_t *wsum,
            qc_mask_t *judged)
{
    if (window_weights (ops, weight, tissue, k, min_fraction, wsum, judged) != 0)
        return -1;
    return window_rms_of (ops, energy, k, wsum, judged, out);
}

/* Ratios of fine to coarser detail above this are taken as this (sharp
 * tissue reads 0.3-0.7, JPEG noise on flat tissue a little more). */
#define RATIO_MAX 4.0

/* Where little detail may be blur: the ratio of fine to coarser detail
 * is under rthr (a fault takes the fine), or the coarser detail itself
 * is under mthr (a coarse blur of 15 um leaves neither, and their ratio
 * is noise); elsewhere the tissue has its structure, only less stain.
 * scratch is overwritten. */
static int
spare_structure (const qc_ops_t *ops, const qc_fimg_t *ratio, const qc_fimg_t *mid_rms,
                 double rthr, double mthr, qc_mask_t *out, qc_mask_t *scratch)
{
    if (ops->threshold (ratio, -0.5, rthr, out) != 0
        || ops->threshold (mid_rms, -0.5, mthr, scratch) != 0)
        return -1;
    return ops->mask_logic (out, scratch, QC_LOGIC_OR, out);
}

int
qc_focus_map (const qc_ops_t *ops, const qc_fimg_t *sum, qc_fimg_t *mid,
              const qc_fimg_t *count, const qc_mask_t *tissue,
              const qc_focus_params_t *p, qc_mask_t *blurry,
              double *threshold_used, double *reference, double *ratio_reference)
{
    if (!ops || !qc_fimg_valid (sum) || !qc_fimg_valid (count)
        || !qc_mask_valid (tissue) || !qc_mask_valid (blurry)
        || !qc_focus_params_ok (p) || count->w != sum->w
        || count->h != sum->h || tissue->w != sum->w || tissue->h != sum->h
        || blurry->w != sum->w || blurry->h != sum->h
        || (mid && (!qc_fimg_valid (mid) || mid->w != sum->w || mid->h != sum->h)))
        return -1;
    int w = sum->w, h = sum->h, k = p->window, rc = -1;
    bool by_ratio = mid && p->ratio_threshold > 0;
    /* planes a GPU lane holds at once, at 10x (test_device_lane bounds
       them): the ratio reuses the first window's RMS, the spared mask
       the edges' one */
    qc_mask_t *judged = qc_mask_new (w, h), *grow = qc_mask_new (w, h);
    qc_fimg_t *energy = qc_fimg_new (w, h), *weight = qc_fimg_new (w, h);
    qc_fimg_t *rms = qc_fimg_new (w, h), *wsum = qc_fimg_new (w, h);
    qc_fimg_t *mid_rms = by_ratio ? qc_fimg_new (w, h) : NULL;
    if (!judged || !grow || !energy || !weight || !rms || !wsum || (by_ratio && !mid_rms))
        goto done;
    /* each measured pixel's mean block energy; weight 1 where measured */
    if (ops->threshold (count, 0.5, INFINITY, judged) != 0
        || ops->mask_to_fimg (judged, 1.0, 0.0, weight) != 0
        || ops->fimg_arith (sum, count, QC_ARITH_DIV, energy) != 0
        || window_rms (ops, energy, weight, tissue, k, p->min_fraction, rms,
                       wsum, judged) != 0)
        goto done;
    /* the slide's own in-focus detail, and blurry under a share of it */
    double ref = 0, thr = p->absolute_threshold, rref = 0;
    if (qc_blur_local_reference (ops, rms, p->absolute_threshold, blurry,
                                 &ref) != 0)
        goto done;
    if (p->relative_threshold * ref > thr)
        thr = p->relative_threshold * ref;
    if (ops->threshold (rms, -0.5, thr, blurry) != 0)
        goto done;
    /* Little detail is not blur by itself: pale tissue in focus has little
     * of it at every scale, a focus fault loses the fine scale most. On
     * generated 40x slides (8000 x 6000, at 10x, the blocks' medians) the
     * ratio of fine to coarser detail was 0.77-0.98 of the slide's on
     * tissue at a third of its stain (JPEG quality 50-80), and 0.06-0.32
     * in 1 um faults. Where the coarser detail is gone too (under
     * QC_FOCUS_MID_FLOOR of its median: coarse blur) the ratio is noise,
     * and the fine detail judges alone. The edges, below, are not judged
     * by the ratio: its window straddles a blurred region's rim too, and
     * reads between the two sides (coarse-blur Dice fell by up to 0.1
     * when they were). On bench_focus_sweep's 32 slides, against the
     * same step without the ratio: fine-blur Dice 0.926-0.985 (was
     * 0.914-0.978; higher on 31, mean +0.011), coarse blur 0.918-0.988
     * (was 0.936-0.989; mean -0.0005, at worst -0.018: a pixel or two of
     * some rims), pale tissue (at 0.33-0.5 of its stain) flagged 0-5.6%
     * (was 0-8.8%; what is left lies where a pale patch meets coarse
     * blur). On a real slide (CMU-1, 20x) with 1-3 um faults and pale
     * patches (0.1-0.5 of the stain) made from its own pixels: faults
     * found alike with and without the rule (0.89-0.96), pale patches at
     * 0.25 and under flagged up to 72% without it, up to 22% with it. */
    /* the ratio's references need tissue in focus: a slide whose median
       detail is under QC_FOCUS_RATIO_MIN_DETAIL (out of focus over most
       of it, warned of) has none, and its blurred tissue's own ratio
       would spare it (2 um over 65-73% of a real slide's tissue: 45%
       flagged without the rule, none with it) */
    if (by_ratio && ref >= QC_FOCUS_RATIO_MIN_DETAIL) {
        double mref = 0;
        /* rms becomes the ratio (the edges measure their own RMS), at
           most RATIO_MAX: a window of almost no coarser detail reads any
           ratio, which would stretch the histogram its median comes from.
           The window's weights are the first's (wsum and judged, kept) */
        if (ops->fimg_arith (mid, count, QC_ARITH_DIV, mid) != 0
            || window_rms_of (ops, mid, k, wsum, judged, mid_rms) != 0
            || ops->fimg_arith (rms, mid_rms, QC_ARITH_DIV, rms) != 0
            || ops->fimg_where (judged, rms, -1.0, rms) != 0
            || ops->threshold (rms, -2.0, RATIO_MAX, grow) != 0
            || ops->fimg_where (grow, rms, RATIO_MAX, rms) != 0)
            goto done;
        /* the references are the tissue's that its fine detail judged
           sharp: where a fault covers most of the slide, the median of
           all would be the fault's own (a 2 um fault on 58% of a real
           slide's tissue was then spared whole) */
        if (ops->mask_logic (judged, blurry, QC_LOGIC_ANDNOT, grow) != 0
            || ops->fimg_where (grow, rms, -1.0, wsum) != 0
            || qc_blur_local_reference (ops, wsum, 0.0, judged, &rref) != 0
            || ops->fimg_where (grow, mid_rms, -1.0, wsum) != 0
            || qc_blur_local_reference (ops, wsum, 0.0, judged, &mref) != 0)
            goto done;
        /* no coarser detail anywhere (a band of 1 has no frequency under
           it: the caller gives no mid then) leaves nothing to judge by */
        if (rref <= 0 || mref <= 0)
            rref = 0;
        else if (spare_structure (ops, rms, mid_rms, p->ratio_threshold * rref,
                                  QC_FOCUS_MID_FLOOR * mref, grow, judged) != 0
                 || ops->mask_logic (blurry, grow, QC_LOGIC_AND, blurry) != 0)
            goto done;
    }
    /* The edges: the window straddles sharp tissue there, and its RMS,
     * which the sharp side dominates, under-reads the blur (a band of
     * about window / 2 pixels: on generated slides fine-blur Dice rose
     * from 0.80-0.95 to 0.90-0.98). Only tissue next to blurry tissue is
     * judged again, more locally, so smooth tissue in focus elsewhere
     * stays (the real slides' specks grew from 0.1-0.4% of their tissue
     * to 0.3-0.8%, and min_size drops them, below). */
    if (k > QC_FOCUS_EDGE_WINDOW) {
        double edge = p->edge_relative_threshold * ref;
        if (edge < p->absolute_threshold)
            edge = p->absolute_threshold;
        if (window_rms (ops, energy, weight, tissue, QC_FOCUS_EDGE_WINDOW,
                        p->min_fraction, rms, wsum, judged) != 0
            || ops->threshold (rms, -0.5, edge, judged) != 0
            || ops->morph_rect (blurry, k, k, QC_MORPH_DILATE, grow) != 0
            || ops->mask_logic (grow, judged, QC_LOGIC_AND, grow) != 0
            || ops->mask_logic (blurry, grow, QC_LOGIC_OR, blurry) != 0)
            goto done;
    }
    /* A focus fault spans the space between a scanner's focus points
     * (millimetres); a speck of smooth tissue in focus is what the
     * thresholds above let through on real slides (pieces of 14-60
     * pixels, 0.3-0.8% of their tissue, before this). */
    if (p->min_size > 1
        && ops->area_filter (blurry, QC_CONN_OBJECTS, (size_t) p->min_size,
                             SIZE_MAX, blurry) != 0)
        goto done;
    if (threshold_used)
        *threshold_used = thr;
    if (reference)
        *reference = ref;
    if (ratio_reference)
        *ratio_reference = rref;
    rc = 0;
done:
    qc_mask_destroy (&judged);
    qc_mask_destroy (&grow);
    qc_fimg_destroy (&mid_rms);
    qc_fimg_destroy (&energy);
    qc_fimg_destroy (&weight);
    qc_fimg_destroy (&rms);
    qc_fimg_destroy (&wsum);
    return rc;
}
