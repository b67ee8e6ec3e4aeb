/* The tissue-mask algorithms (see masks.h): each is a short composition
 * of ops, so a CUDA backend runs them unchanged. */
#include "kernels/modules/masks.h"

#include <math.h>
#include <stdlib.h>

static int
same_size (int w, int h, int w2, int h2)
{
    return w == w2 && h == h2;
}

int
qc_ld_percent_mask (const qc_ops_t *ops, const qc_rgb_t *rgb,
                    const qc_fimg_t *gray, const qc_ld_percent_params_t *p,
                    qc_mask_t *out)
{
    if (!ops || !p || !qc_rgb_valid (rgb) || !qc_fimg_valid (gray)
        || !qc_mask_valid (out) || !same_size (rgb->w, rgb->h, gray->w, gray->h)
        || !same_size (rgb->w, rgb->h, out->w, out->h)
        || isnan (p->lower) || isnan (p->upper) || isnan (p->lower_std)
        || isnan (p->upper_std))
        return -1;
    if (ops->threshold (gray, p->lower, p->upper, out))
        return -1;
    /* The std test only when it can exclude something (HistoQC's defaults
     * are -inf, inf, and the std plane costs a pass and an image). */
    if (isfinite (p->lower_std) || isfinite (p->upper_std)
        || p->lower_std >= p->upper_std) {
        qc_fimg_t *sd = qc_fimg_new (rgb->w, rgb->h);
        qc_mask_t *ms = qc_mask_new (rgb->w, rgb->h);
        int rc = !sd || !ms || ops->rgb_channel_std (rgb, sd)
                 || ops->threshold (sd, p->lower_std, p->upper_std, ms)
                 || ops->mask_logic (out, ms, QC_LOGIC_AND, out);
        qc_fimg_destroy (&sd);
        qc_mask_destroy (&ms);
        if (rc)
            return -1;
    }
    if (p->invert)
        return ops->mask_logic (out, NULL, QC_LOGIC_NOT, out);
    return 0;
}

int
qc_ld_minfilter_mask (const qc_ops_t *ops, const qc_fimg_t *gray, int radius,
                      int threshold, int invert, qc_mask_t *out)
{
    if (!ops || !qc_fimg_valid (gray) || !qc_mask_valid (out)
        || !same_size (gray->w, gray->h, out->w, out->h) || radius < 0)
        return -1;
    /* min over the disk of u8 > t  <=>  every pixel of the disk has
     * u8 > t: an erosion of the binary image u8 > t. skimage's rank
     * filters ignore pixels outside the image, which is erosion with the
     * outside counted as set. u8 = trunc (g * 255) > t <=> g * 255 >= t + 1. */
    qc_fimg_t *scaled = qc_fimg_new (gray->w, gray->h);
    if (!scaled)
        return -1;
    double lo = nextafter ((double) threshold + 1.0, -INFINITY);
    int rc = ops->fimg_affine (gray, 255.0, 0.0, 0.0, 255.0, scaled)
             || ops->threshold (scaled, lo, INFINITY, out);
    qc_fimg_destroy (&scaled);
    if (rc)
        return -1;
    /* A disk wider than the image reaches every pixel from every pixel. */
    int big = gray->w > gray->h ? gray->w : gray->h;
    int r = radius > 2 * big ? 2 * big : radius;
    if (ops->morph_disk (out, r, QC_MORPH_ERODE, out))
        return -1;
    if (invert)
        return ops->mask_logic (out, NULL, QC_LOGIC_NOT, out);
    return 0;
}

int
qc_morph_fatlike (const qc_ops_t *ops, const qc_mask_t *mask,
                  int fat_cell_size, int kernel_size, int max_keep_size,
                  qc_mask_t *fat)
{
    if (!ops || !qc_mask_valid (mask) || !qc_mask_valid (fat)
        || !same_size (mask->w, mask->h, fat->w, fat->h) || fat_cell_size < 0
        || kernel_size < 1 || max_keep_size < 0)
        return -1;
    qc_mask_t *filled = qc_mask_new (mask->w, mask->h);
    qc_mask_t *keep = qc_mask_new (mask->w, mask->h);
    int rc = !filled || !keep
        /* the small holes: remove_small_holes (mask) & ~mask */
        || ops->fill_holes (mask, QC_CONN_OBJECTS, (size_t) fat_cell_size,
                            filled)
        || ops->mask_logic (filled, mask, QC_LOGIC_ANDNOT, filled)
        /* ~remove_small_holes (~small, 9): drops holes-found under 9 px */
        || ops->area_filter (filled, QC_CONN_OBJECTS, 9, SIZE_MAX, filled)
        || ops->morph_rect (filled, kernel_size, kernel_size, QC_MORPH_DILATE,
                            filled)
        /* remove_large_objects keeps components of at most max_keep_size
         * (4-connected); fat is what it removed */
        || ops->area_filter (filled, QC_CONN_OBJECTS, 0,
                             (size_t) max_keep_size, keep)
        || ops->mask_logic (filled, keep, QC_LOGIC_ANDNOT, fat);
    qc_mask_destroy (&filled);
    qc_mask_destroy (&keep);
    return rc ? -1 : 0;
}

/* The least-squares 3-means of a histogram (bins weighted by their
 * counts at their centres x[i]): the first bin of the third cluster,
 * every cluster non-empty. Every split of the occupied bins is tried
 * (half a million at most): the global optimum, the same on every run.
 * 0; 1 fewer than three bins are occupied; -1 out of memory. */
static int
three_means (const uint64_t *hist, const double *x, int nbins, int *c3)
{
    int *bin = malloc ((size_t) nbins * sizeof *bin);
    /* prefix sums over the occupied bins: count, sum and sum of squares
       of x less the first occupied bin's (fewer digits lost) */
    double *w = calloc ((size_t) nbins + 1, sizeof *w);
    double *s = calloc ((size_t) nbins + 1, sizeof *s);
    double *q = calloc ((size_t) nbins + 1, sizeof *q);
    int m = 0, rc = -1;
    if (!bin || !w || !s || !q)
        goto done;
    for (int i = 0; i < nbins; i++) {
        if (!hist[i])
            continue;
        double n = (double) hist[i], v = m ? x[i] - x[bin[0]] : 0.0;
        bin[m] = i;
        w[m + 1] = w[m] + n;
        s[m + 1] = s[m] + n * v;
        q[m + 1] = q[m] + n * v * v;
        m++;
    }
    rc = 1;
    if (m < 3)
        goto done;
#define SSE(a, b) (q[b] - q[a] - (s[b] - s[a]) * (s[b] - s[a]) / (w[b] - w[a]))
    double best = INFINITY;
    for (int a = 1; a + 1 < m; a++)          /* cluster 1: occupied bins [0, a) */
        for (int b = a + 1; b < m; b++) {    /* 2: [a, b), 3: [b, m) */
            double cost = SSE (0, a) + SSE (a, b) + SSE (b, m);
            if (cost < best) {
                best = cost;
                *c3 = bin[b];
            }
        }
#undef SSE
    rc = 0;
done:
    free (bin);
    free (w);
    free (s);
    free (q);
    return rc;
}

int
qc_ld_brightest_mask (const qc_ops_t *ops, const qc_fimg_t *gray, int invert,
                      qc_mask_t *out, double *thresh)
{
    if (!ops || !qc_fimg_valid (gray) || !qc_mask_valid (out)
        || !same_size (gray->w, gray->h, out->w, out->h))
        return -1;
    qc_stats_t all;
    if (ops->fimg_stats (gray, NULL, &all) || all.n == 0 || !isfinite (all.min)
        || !isfinite (all.max))
        return -1;
    /* the brightest cluster's darkest value: the whole image's one gray
       when there are fewer than three (scikit-learn then gives clusters
       of one value, the brightest the top one) */
    double t = all.max;
    if (all.max > all.min) {
        enum { NB = QC_LD_KMEANS_BINS };
        uint64_t *hist = calloc (NB, sizeof *hist);
        double *x = malloc (NB * sizeof *x);
        const double width = (all.max - all.min) / NB;
        int c3 = 0, rc = -1;
        if (hist && x && !ops->fimg_histogram (gray, NULL, NB, all.min, all.max, hist)) {
            for (int i = 0; i < NB; i++)
                x[i] = all.min + (i + 0.5) * width;
            rc = three_means (hist, x, NB, &c3);
        }
        free (hist);
        free (x);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            /* the darkest gray from the third cluster's first bin up */
            qc_stats_t top;
            qc_mask_t *sel = qc_mask_new (gray->w, gray->h);
            double edge = nextafter (all.min + c3 * width, -INFINITY);
            int bad = !sel || ops->threshold (gray, edge, INFINITY, sel)
                      || ops->fimg_stats (gray, sel, &top);
            qc_mask_destroy (&sel);
            if (bad)
                return -1;
            t = top.n ? top.min : all.max;
        }
    }
    if (thresh)
        *thresh = t;
    if (ops->threshold (gray, t, INFINITY, out))
        return -1;
    return invert ? ops->mask_logic (out, NULL, QC_LOGIC_NOT, out) : 0;
}

int
qc_final_spur (const qc_ops_t *ops, const qc_mask_t *mask, int radius,
               qc_mask_t *opened)
{
    if (!ops || !qc_mask_valid (mask) || !qc_mask_valid (opened)
        || !same_size (mask->w, mask->h, opened->w, opened->h) || radius < 0)
        return -1;
    return ops->morph_disk (mask, radius, QC_MORPH_OPEN, opened);
}

int
qc_save_fuse (const qc_ops_t *ops, const qc_mask_t *mask,
              const qc_fimg_t *gray, qc_rgb_t *out)
{
    return ops ? ops->fuse_rgb (mask, gray, out) : -1;
}

void
qc_save_macro_size (int64_t w, int64_t h, int dim, int *out_w, int *out_h)
{
    if (!out_w || !out_h)
        return;
    if (w < 1 || h < 1 || dim < 1) {
        *out_w = *out_h = 1;
        return;
    }
    /* rint rounds half to even, as Python 3's round. */
    if (w > h) {
        double s = rint ((double) dim * (double) h / (double) w);
        *out_w = dim;
        *out_h = s < 1 ? 1 : (int) s;
    } else {
        double s = rint ((double) dim * (double) w / (double) h);
        *out_w = s < 1 ? 1 : (int) s;
        *out_h = dim;
    }
}
