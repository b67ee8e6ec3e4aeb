/* median_disk: scipy.ndimage.median_filter with the footprint
 * skimage.morphology.disk (radius), what skimage.filters.median computes
 * for a float image (HistoQC's "median" feature, border NEAREST).
 *
 * The footprint has an odd number K of pixels (it is symmetric about its
 * centre), and the result is the exact middle value (rank K / 2), found
 * by quickselect over the K values gathered for each pixel: float values
 * are not quantised, as a histogram method would need. Cost is about
 * 3 K compares a pixel (K = 29 at HistoQC's radius 3). */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>

int
qc_median_disk_args_ok (const qc_fimg_t *src, int radius, qc_border_t border,
                        const qc_fimg_t *dst)
{
    return qc_fimg_valid (src) && qc_fimg_valid (dst) && src->w == dst->w
           && src->h == dst->h && dst != src && radius >= 0
           && radius <= QC_MEDIAN_MAX_RADIUS
           && (int) border >= QC_BORDER_REFLECT && border <= QC_BORDER_CONSTANT;
}

int
qc_disk_offsets (int radius, int *dx, int *dy)
{
    int k = 0;
    for (int y = -radius; y <= radius; y++)
        for (int x = -radius; x <= radius; x++)
            if (x * x + y * y <= radius * radius) {
                dx[k] = x;
                dy[k] = y;
                k++;
            }
    return k;
}

int
qc_cpu_median_disk (const qc_fimg_t *src, int radius, qc_border_t border,
                    qc_fimg_t *dst)
{
    if (!qc_median_disk_args_ok (src, radius, border, dst))
        return -1;
    int side = 2 * radius + 1;
    int *dx = malloc ((size_t) side * side * sizeof *dx);
    int *dy = malloc ((size_t) side * side * sizeof *dy);
    float *v = malloc ((size_t) side * side * sizeof *v);
    if (!dx || !dy || !v) {
        free (dx);
        free (dy);
        free (v);
        return -1;
    }
    int k = qc_disk_offsets (radius, dx, dy);
    for (int y = 0; y < src->h; y++)
        for (int x = 0; x < src->w; x++)
            dst->px[(size_t) y * src->w + x] =
                qc_px_median_at (src->px, src->w, src->h, x, y, dx, dy, k,
                                 radius, border, v);
    free (dx);
    free (dy);
    free (v);
    return 0;
}
