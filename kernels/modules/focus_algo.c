/* The focus step's arithmetic; see focus_algo.h. */
#include "kernels/modules/focus_algo.h"
#include "kernels/modules/blur_algo.h"
#include "kernels/slide/block_measure.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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

/* Two populations of window RMS: a focus fault over a third or more of
 * the tissue makes the median the fault's own (.35 of it flagged none of
 * a 1 um fault over 54-74% of a real slide's tissue, 38% of one over
 * 37%). The split is Otsu's, of log RMS (a fault scales detail: on a log
 * axis the two populations are alike in width), from a histogram the ops
 * make (SPLIT_BINS equal bins over [min, max]: at most 1/4096 of the
 * range, 0.01 gray levels on a slide whose RMS reaches 40); the classes'
 * medians are found on the host as qc_blur_local_reference's is. */
#define SPLIT_BINS 4096
#define SPLIT_MIN 1e-3

typedef struct {
    double lo_median, hi_median; /* the classes' medians */
    double hi_share;             /* of the pixels, in the upper class */
    double eta;                  /* between-class / total variance of log
                                    RMS (Otsu's separability: 2 / pi for
                                    one normal population, 1 for two
                                    points) */
} split_t;

/* Otsu's split of log rms over the pixels at or above floor (and above
 * SPLIT_MIN: log takes no 0). 0 with *s set (all 0: nothing to split),
 * -1 on failure. scratch is overwritten. */
static int
log_split (const qc_ops_t *ops, const qc_fimg_t *rms, double floor,
           qc_mask_t *scratch, split_t *s)
{
    qc_stats_t st;
    *s = (split_t) { 0 };
    if (ops->threshold (rms, floor > SPLIT_MIN ? floor : SPLIT_MIN, INFINITY, scratch) != 0
        || ops->fimg_stats (rms, scratch, &st) != 0)
        return -1;
    if (st.n < 2 || !(st.max > st.min) || !(st.min > 0))
        return 0;
    uint64_t *hist = calloc (SPLIT_BINS, sizeof *hist);
    if (!hist)
        return -1;
    if (ops->fimg_histogram (rms, scratch, SPLIT_BINS, st.min, st.max, hist) != 0) {
        free (hist);
        return -1;
    }
    double width = (st.max - st.min) / SPLIT_BINS, n = 0, sx = 0, sxx = 0;
    for (int b = 0; b < SPLIT_BINS; b++) {
        double x = log (st.min + width * (b + 0.5)), c = (double) hist[b];
        n += c;
        sx += c * x;
        sxx += c * x * x;
    }
    double var = sxx / n - (sx / n) * (sx / n), best = -1, w0 = 0, s0 = 0;
    int cut = -1;
    for (int b = 0; b < SPLIT_BINS - 1; b++) {
        double x = log (st.min + width * (b + 0.5)), c = (double) hist[b];
        w0 += c;
        s0 += c * x;
        if (w0 <= 0 || w0 >= n)
            continue;
        double m0 = s0 / w0, m1 = (sx - s0) / (n - w0);
        double between = w0 * (n - w0) * (m0 - m1) * (m0 - m1) / (n * n);
        if (between > best) {
            best = between;
            cut = b;
        }
    }
    if (cut < 0 || !(var > 0)) {
        free (hist);
        return 0;
    }
    /* the classes' medians: bins [0, cut] and (cut, end) */
    double nlo = 0;
    for (int b = 0; b <= cut; b++)
        nlo += (double) hist[b];
    double meds[2];
    for (int k = 0; k < 2; k++) {
        int b0 = k ? cut + 1 : 0, b1 = k ? SPLIT_BINS : cut + 1;
        double half = 0.5 * (k ? n - nlo : nlo), seen = 0;
        int b = b0;
        while (b < b1 - 1 && seen + (double) hist[b] < half)
            seen += (double) hist[b++];
        double frac = hist[b] ? (half - seen) / (double) hist[b] : 0.5;
        meds[k] = st.min + width * (b + frac);
    }
    free (hist);
    s->lo_median = meds[0];
    s->hi_median = meds[1];
    s->hi_share = (n - nlo) / n;
    s->eta = best / var;
    return 0;
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
    /* Where the tissue's detail is two populations, the reference is
     * the upper one's: the median is the fault's own where a fault
     * covers a third or more of the tissue (see SPLIT_BINS). Two, when
     * Otsu's classes of log RMS are QC_FOCUS_SPLIT_RATIO apart (medians)
     * and well separated (eta at least QC_FOCUS_SPLIT_ETA), and the
     * upper holds QC_FOCUS_SPLIT_SHARE of the tissue (a few sharp specks
     * on a slide out of focus all over are no reference). The numbers,
     * measured (window RMS above absolute_threshold, at 10x):
     *   - clean and pale tissue in focus (CMU-1-Small-Region and its
     *     pyramid, TCGA-CR-7395's pyramid, the probe's controls of both,
     *     ten generated 40x slides, two with pale tissue, two at 20x):
     *     medians 1.13-1.98 apart, eta 0.62-0.76 (the 1.98 and the 0.76:
     *     a generated slide's pale patches, at 0.5 of the median); slides
     *     out of focus all over (0.75-3 um, real and generated) 1.05-1.59
     *     apart, eta 0.61-0.83
     *   - a 1 um fault over 37-74% of a real slide's tissue (TCGA: 37%,
     *     54%; CMU-1: 74%): 2.86-3.55 apart, eta 0.80-0.81, upper share
     *     0.30-0.60; found 0.38, 0.01, 0.00 of it before, 0.78, 0.68,
     *     0.93 with this, flagging none of the tissue in focus; over 86%
     *     of TCGA's: 1.81 apart (its 14% in focus is no population Otsu
     *     finds: missed, and warned of, as before)
     * Where the rule holds and the fault is a minority (22 generated and
     * real slides with 1-3 um faults over 2-34% of the tissue) the upper
     * median is 1.00-1.24x the median: the found share rose by 0.00-0.08
     * (1 um over 21% of TCGA's tissue: 0.75 to 0.83), what else was
     * flagged by at most 0.001 of the tissue, and pale patches beside
     * faults and coarse blur (0.33-0.5 of their stain), where the ratio
     * rule had left 0.08-0.15 of them flagged, by 0.002-0.003. The ratio
     * rule, below, still spares pale tissue in focus: its reference is
     * the tissue this one leaves unflagged. */
    {
        split_t sp;
        if (log_split (ops, rms, p->absolute_threshold, blurry, &sp) != 0)
            goto done;
        if (sp.lo_median > 0 && sp.hi_median >= QC_FOCUS_SPLIT_RATIO * sp.lo_median
            && sp.eta >= QC_FOCUS_SPLIT_ETA && sp.hi_share >= QC_FOCUS_SPLIT_SHARE
            && sp.hi_median > ref)
            ref = sp.hi_median;
    }
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
