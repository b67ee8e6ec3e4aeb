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

#define MAX_RADIUS 50

/* The k-th smallest of v[0..n) (v is reordered): Hoare's selection with
 * a median-of-three pivot. */
static float
select_kth (float *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (hi > lo) {
        int mid = lo + (hi - lo) / 2;
        float a = v[lo], b = v[mid], c = v[hi];
        float pivot = a < b ? (b < c ? b : (a < c ? c : a))
                            : (a < c ? a : (b < c ? c : b));
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (pivot < v[j])
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

int
qc_cpu_median_disk (const qc_fimg_t *src, int radius, qc_border_t border,
                    qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || dst->px == src->px || radius < 0
        || radius > MAX_RADIUS || (int) border < QC_BORDER_REFLECT
        || border > QC_BORDER_CONSTANT)
        return -1;
    int side = 2 * radius + 1, k = 0;
    int *dx = malloc ((size_t) side * side * sizeof *dx);
    int *dy = malloc ((size_t) side * side * sizeof *dy);
    float *v = malloc ((size_t) side * side * sizeof *v);
    if (!dx || !dy || !v) {
        free (dx);
        free (dy);
        free (v);
        return -1;
    }
    for (int y = -radius; y <= radius; y++)
        for (int x = -radius; x <= radius; x++)
            if (x * x + y * y <= radius * radius) {
                dx[k] = x;
                dy[k] = y;
                k++;
            }
    int w = src->w, h = src->h;
    for (int y = 0; y < h; y++) {
        int inside_y = y >= radius && y + radius < h;
        for (int x = 0; x < w; x++) {
            const float *p = src->px;
            if (inside_y && x >= radius && x + radius < w) {
                const float *c = p + (size_t) y * w + x;
                for (int i = 0; i < k; i++)
                    v[i] = c[(long) dy[i] * w + dx[i]];
            } else {
                for (int i = 0; i < k; i++) {
                    int yy = qc_px_border_index ((long) y + dy[i], h, border);
                    int xx = qc_px_border_index ((long) x + dx[i], w, border);
                    v[i] = (yy < 0 || xx < 0) ? 0.0f : p[(size_t) yy * w + xx];
                }
            }
            dst->px[(size_t) y * w + x] = select_kth (v, k, k / 2);
        }
    }
    free (dx);
    free (dy);
    free (v);
    return 0;
}
