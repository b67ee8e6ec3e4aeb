/* lbp: skimage.feature.local_binary_pattern (HistoQC's "lbp" feature).
 * The sample offsets are computed once as skimage computes them (sin and
 * cos of 2 pi i / P times R, rounded to 5 decimals); each pixel is
 * qc_px_lbp (pixel_math.h), which reads its samples by bilinear
 * interpolation with zeros outside the image. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <math.h>
#include <stdlib.h>

#define MAX_POINTS 31
#define MAX_RADIUS 1000.0

int
qc_cpu_lbp (const qc_fimg_t *src, int points, double radius,
            qc_lbp_method_t method, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || points < 1 || points > MAX_POINTS
        || !(radius > 0) || !(radius <= MAX_RADIUS) || (int) method < 0
        || method > QC_LBP_VAR)
        return -1;
    /* skimage's R is a C float: the offsets use R rounded to float */
    double r = (double) (float) radius;
    double rp[MAX_POINTS], cp[MAX_POINTS];
    for (int i = 0; i < points; i++) {
        double a = 2.0 * M_PI * i / points;
        /* np.round (v, 5): rint (v * 1e5) / 1e5, ties to even */
        rp[i] = rint (-r * sin (a) * 1e5) / 1e5;
        cp[i] = rint (r * cos (a) * 1e5) / 1e5;
    }
    /* Every output reads the whole neighbourhood of the input: in place
     * needs a copy. */
    qc_fimg_t *copy = NULL;
    if (dst == src || dst->px == src->px) {
        copy = qc_fimg_clone (src);
        if (!copy)
            return -1;
        src = copy;
    }
    int w = src->w, h = src->h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            dst->px[(size_t) y * w + x] =
                (float) qc_px_lbp (src->px, w, h, x, y, points, rp, cp, method);
    qc_fimg_destroy (&copy);
    return 0;
}
