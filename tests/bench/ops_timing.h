/* An ops table that times another: every entry calls the same entry of
 * the inner table and adds its wall time and call count to a per-op
 * total, so a benchmark can say which ops a slide's seconds go to on
 * each backend (for the GPU: kernels plus the copies each op makes).
 * Header-only, for the benchmark programs; one thread at a time. */
#ifndef QC_OPS_TIMING_H
#define QC_OPS_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/ops/ops.h"

/* X (name, (parameters), (arguments)) for every entry of qc_ops_t. */
#define QC_OPS_LIST(X)                                                                  \
    X (rgb_to_gray, (const qc_rgb_t *a, qc_fimg_t *b), (a, b))                          \
    X (rgb_to_space, (const qc_rgb_t *a, qc_colorspace_t s, qc_fimg_t *b, qc_fimg_t *c, \
                      qc_fimg_t *d), (a, s, b, c, d))                                   \
    X (rgb_channel_std, (const qc_rgb_t *a, qc_fimg_t *b), (a, b))                      \
    X (separate_stains, (const qc_rgb_t *a, const qc_mat3_t *m, qc_fimg_t *b,           \
                         qc_fimg_t *c, qc_fimg_t *d), (a, m, b, c, d))                  \
    X (threshold, (const qc_fimg_t *a, double l, double h, qc_mask_t *b), (a, l, h, b)) \
    X (mask_logic, (const qc_mask_t *a, const qc_mask_t *b, qc_logic_t o, qc_mask_t *d), \
       (a, b, o, d))                                                                    \
    X (fimg_arith, (const qc_fimg_t *a, const qc_fimg_t *b, qc_arith_t o, qc_fimg_t *d), \
       (a, b, o, d))                                                                    \
    X (fimg_affine, (const qc_fimg_t *a, double s, double o, double l, double h,        \
                     qc_fimg_t *d), (a, s, o, l, h, d))                                 \
    X (mask_to_fimg, (const qc_mask_t *a, double on, double off, qc_fimg_t *d),         \
       (a, on, off, d))                                                                 \
    X (mask_count, (const qc_mask_t *a, size_t *n), (a, n))                             \
    X (fimg_stats, (const qc_fimg_t *a, const qc_mask_t *m, qc_stats_t *o), (a, m, o))  \
    X (rgb_stats, (const qc_rgb_t *a, const qc_mask_t *m, qc_stats_t o[3]), (a, m, o))  \
    X (fimg_quantile, (const qc_fimg_t *a, const qc_mask_t *m, double q, double *o),    \
       (a, m, q, o))                                                                    \
    X (rgb_histogram, (const qc_rgb_t *a, const qc_mask_t *m, uint64_t h[3][256]),      \
       (a, m, h))                                                                       \
    X (fimg_histogram, (const qc_fimg_t *a, const qc_mask_t *m, int n, double l,        \
                        double h, uint64_t *o), (a, m, n, l, h, o))                     \
    X (otsu, (const qc_fimg_t *a, const qc_mask_t *m, int n, double *t), (a, m, n, t))  \
    X (gaussian, (const qc_fimg_t *a, double s, double t, qc_border_t b, qc_fimg_t *d), \
       (a, s, t, b, d))                                                                 \
    X (laplace, (const qc_fimg_t *a, qc_border_t b, qc_fimg_t *d), (a, b, d))           \
    X (sobel, (const qc_fimg_t *a, qc_border_t b, qc_fimg_t *d), (a, b, d))             \
    X (box_filter, (const qc_fimg_t *a, int kw, int kh, qc_border_t b, qc_fimg_t *d),   \
       (a, kw, kh, b, d))                                                               \
    X (morph_disk, (const qc_mask_t *a, int r, qc_morph_t o, qc_mask_t *d), (a, r, o, d)) \
    X (morph_rect, (const qc_mask_t *a, int kw, int kh, qc_morph_t o, qc_mask_t *d),    \
       (a, kw, kh, o, d))                                                               \
    X (label, (const qc_mask_t *a, int c, qc_labels_t *o), (a, c, o))                   \
    X (area_filter, (const qc_mask_t *a, int c, size_t lo, size_t hi, qc_mask_t *d),    \
       (a, c, lo, hi, d))                                                               \
    X (fill_holes, (const qc_mask_t *a, int c, size_t t, qc_mask_t *d), (a, c, t, d))   \
    X (region_summary, (const qc_mask_t *a, int c, qc_region_summary_t *o), (a, c, o))  \
    X (resize_rgb, (const qc_rgb_t *a, qc_interp_t i, qc_rgb_t *d), (a, i, d))          \
    X (resize_fimg, (const qc_fimg_t *a, qc_interp_t i, qc_fimg_t *d), (a, i, d))       \
    X (resize_mask, (const qc_mask_t *a, qc_interp_t i, qc_mask_t *d), (a, i, d))       \
    X (frangi, (const qc_fimg_t *a, const double *s, int n, double b, double g, int k,  \
                qc_fimg_t *d), (a, s, n, b, g, k, d))                                   \
    X (lbp, (const qc_fimg_t *a, int p, double r, qc_lbp_method_t m, qc_fimg_t *d),     \
       (a, p, r, m, d))                                                                 \
    X (gabor, (const qc_fimg_t *a, double f, double t, double sx, double sy,            \
               qc_border_t b, qc_fimg_t *d), (a, f, t, sx, sy, b, d))                   \
    X (median_disk, (const qc_fimg_t *a, int r, qc_border_t b, qc_fimg_t *d), (a, r, b, d)) \
    X (trees_predict, (const struct qc_trees *m, const qc_fimg_t *const *p, int n,      \
                       qc_fimg_t *d), (m, p, n, d))                                     \
    X (trees_classify, (const struct qc_trees *m, const qc_fimg_t *const *p, int n,     \
                        double t, qc_mask_t *d), (m, p, n, t, d))

enum {
#define QC_OT_ENUM(name, params, args) QC_OT_##name,
    QC_OPS_LIST (QC_OT_ENUM)
#undef QC_OT_ENUM
    QC_OT_COUNT
};

static const char *const qc_ot_names[] = {
#define QC_OT_NAME(name, params, args) #name,
    QC_OPS_LIST (QC_OT_NAME)
#undef QC_OT_NAME
};

static const qc_ops_t *qc_ot_inner;
static double qc_ot_seconds[QC_OT_COUNT];
static long qc_ot_calls[QC_OT_COUNT];

static inline double
qc_ot_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

#define QC_OT_WRAP(name, params, args)                                  \
    static int qc_ot_##name params                                      \
    {                                                                   \
        double t0 = qc_ot_now ();                                       \
        int rc = qc_ot_inner->name args;                                \
        qc_ot_seconds[QC_OT_##name] += qc_ot_now () - t0;               \
        qc_ot_calls[QC_OT_##name]++;                                    \
        return rc;                                                      \
    }
QC_OPS_LIST (QC_OT_WRAP)
#undef QC_OT_WRAP

/* The timing table over inner (NULL: the CPU backend); the totals start
 * at zero. Entries inner leaves NULL stay NULL. */
static __attribute__ ((unused)) const qc_ops_t *
qc_ops_timed (const qc_ops_t *inner)
{
    static qc_ops_t t;
    qc_ot_inner = inner ? inner : qc_ops_cpu ();
    t.name = qc_ot_inner->name;
#define QC_OT_SET(name, params, args) t.name = qc_ot_inner->name ? qc_ot_##name : NULL;
    QC_OPS_LIST (QC_OT_SET)
#undef QC_OT_SET
    for (int i = 0; i < QC_OT_COUNT; i++) {
        qc_ot_seconds[i] = 0;
        qc_ot_calls[i] = 0;
    }
    return &t;
}

/* Prints the ops that took time, most first, and their total. */
static __attribute__ ((unused)) void
qc_ops_timed_report (FILE *to, const char *title)
{
    int idx[QC_OT_COUNT];
    double total = 0;
    for (int i = 0; i < QC_OT_COUNT; i++) {
        idx[i] = i;
        total += qc_ot_seconds[i];
    }
    for (int i = 1; i < QC_OT_COUNT; i++)
        for (int j = i; j > 0 && qc_ot_seconds[idx[j]] > qc_ot_seconds[idx[j - 1]]; j--) {
            int k = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = k;
        }
    fprintf (to, "  %s: %.3f s in ops\n", title, total);
    for (int i = 0; i < QC_OT_COUNT && qc_ot_calls[idx[i]]; i++)
        if (qc_ot_seconds[idx[i]] >= 0.0005)
            fprintf (to, "    %-16s %8.1f ms  %4ld calls\n", qc_ot_names[idx[i]],
                     qc_ot_seconds[idx[i]] * 1e3, qc_ot_calls[idx[i]]);
}

#endif
