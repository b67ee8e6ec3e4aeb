/* Histograms and Otsu's threshold.
 *
 * fimg_histogram reproduces numpy.histogram's binning exactly, including
 * its correction of the computed index against the bin edges (edges are
 * numpy.linspace values), because Otsu's threshold and HistoQC's
 * histogram features are decided by which bin an edge value falls in. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

int
qc_cpu_rgb_histogram (const qc_rgb_t *src, const qc_mask_t *mask,
                      uint64_t hist[3][256])
{
    if (!qc_rgb_valid (src) || !hist || !qc_mask_fits (mask, src->w, src->h))
        return -1;
    memset (hist, 0, sizeof (uint64_t) * 3 * 256);
    size_t n = qc_npix (src->w, src->h);
    const uint8_t *p = src->px;
    for (size_t i = 0; i < n; i++, p += 3) {
        if (mask && !mask->px[i])
            continue;
        hist[0][p[0]]++;
        hist[1][p[1]]++;
        hist[2][p[2]]++;
    }
    return 0;
}

static int
histogram_range (const qc_fimg_t *src, const qc_mask_t *mask, int nbins,
                 double lo, double hi, uint64_t *hist)
{
    if (lo == hi) {             /* numpy widens an empty range */
        lo -= 0.5;
        hi += 0.5;
    }
    memset (hist, 0, sizeof (uint64_t) * (size_t) nbins);
    double norm = nbins / (hi - lo);
    size_t n = qc_npix (src->w, src->h);
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask->px[i])
            continue;
        double v = src->px[i];
        if (!(v >= lo && v <= hi))
            continue;
        hist[qc_px_hist_bin (v, lo, hi, nbins, norm)]++;
    }
    return 0;
}

int
qc_cpu_fimg_histogram (const qc_fimg_t *src, const qc_mask_t *mask,
                       int nbins, double lo, double hi, uint64_t *hist)
{
    if (!qc_fimg_valid (src) || !hist || nbins < 1
        || !qc_mask_fits (mask, src->w, src->h) || !isfinite (lo)
        || !isfinite (hi) || lo > hi)
        return -1;
    return histogram_range (src, mask, nbins, lo, hi, hist);
}

int
qc_cpu_otsu (const qc_fimg_t *src, const qc_mask_t *mask, int nbins,
             double *thresh)
{
    if (!qc_fimg_valid (src) || !thresh || nbins < 2
        || !qc_mask_fits (mask, src->w, src->h))
        return -1;
    qc_stats_t st;
    if (qc_cpu_fimg_stats (src, mask, &st) || st.n == 0)
        return -1;
    if (!isfinite (st.min) || !isfinite (st.max))
        return -1;
    if (st.min == st.max) {     /* skimage returns the single value */
        *thresh = st.min;
        return 0;
    }
    uint64_t *hist = malloc (sizeof (uint64_t) * (size_t) nbins);
    double *counts = malloc (sizeof (double) * (size_t) nbins);
    double *centers = malloc (sizeof (double) * (size_t) nbins);
    int rc = -1;
    if (hist && counts && centers
        && histogram_range (src, mask, nbins, st.min, st.max, hist) == 0) {
        for (int i = 0; i < nbins; i++) {
            counts[i] = (double) hist[i];
            centers[i] = (qc_px_hist_edge (st.min, st.max, nbins, i)
                          + qc_px_hist_edge (st.min, st.max, nbins, i + 1))
                         / 2.0;
        }
        *thresh = centers[qc_px_otsu_index (counts, centers, nbins)];
        rc = 0;
    }
    free (hist);
    free (counts);
    free (centers);
    return rc;
}
