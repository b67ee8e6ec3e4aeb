/* frangi: skimage 0.19 filters.frangi on a 2-D gray image (what
 * HistoQC's ClassificationModule computes as its "frangi" feature).
 *
 * Per sigma: Gaussian smoothing (scipy's sampled kernel, truncate 4,
 * border REFLECT as skimage's mode default), first differences by
 * np.gradient (central inside, one-sided at the edges) along columns and
 * rows, then the same again for the second differences; skimage 0.19
 * builds the Hessian this way rather than from Gaussian derivatives, and
 * so does this file. The elements are scaled by sigma^2 and each pixel's
 * vesselness is qc_px_frangi (pixel_math.h); the result is the maximum
 * over the sigmas. Differences are taken in double from float planes:
 * the result agrees with skimage's float64 to about 1e-4 relative. */
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SIGMAS 32
#define MAX_SIGMA 1000.0

/* np.gradient along a row of n values: central differences inside,
 * one-sided first differences at the two ends, 0 when n == 1 (numpy
 * refuses such an axis; a zero derivative is the sensible reading). */
static void
grad_row (const float *p, int n, float *out)
{
    if (n < 2) {
        out[0] = 0;
        return;
    }
    out[0] = (float) ((double) p[1] - (double) p[0]);
    for (int x = 1; x + 1 < n; x++)
        out[x] = (float) (0.5 * ((double) p[x + 1] - (double) p[x - 1]));
    out[n - 1] = (float) ((double) p[n - 1] - (double) p[n - 2]);
}

/* np.gradient across rows at row y: the rows it differences and the
 * factor (1/2 inside, 1 at the first and last row, 0 for one row). */
static void
grad_rows_at (int y, int h, int *up, int *dn, double *f)
{
    *up = y > 0 ? y - 1 : y;
    *dn = y + 1 < h ? y + 1 : y;
    *f = h < 2 ? 0.0 : (*up != y && *dn != y) ? 0.5 : 1.0;
}

/* gc = d/dc and gr = d/dr of s. */
static void
gradients (const float *s, int w, int h, float *gc, float *gr)
{
    for (int y = 0; y < h; y++) {
        int up, dn;
        double f;
        grad_rows_at (y, h, &up, &dn, &f);
        const float *a = s + (size_t) up * w, *b = s + (size_t) dn * w;
        float *o = gr + (size_t) y * w;
        for (int x = 0; x < w; x++)
            o[x] = (float) (f * ((double) b[x] - (double) a[x]));
        grad_row (s + (size_t) y * w, w, gc + (size_t) y * w);
    }
}

int
qc_cpu_frangi (const qc_fimg_t *src, const double *sigmas, int nsigmas,
               double beta, double gamma, int black_ridges, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !sigmas || nsigmas < 1 || nsigmas > MAX_SIGMAS
        || !(beta > 0) || !isfinite (beta) || !(gamma > 0) || !isfinite (gamma))
        return -1;
    for (int i = 0; i < nsigmas; i++)
        if (!(sigmas[i] > 0) || !(sigmas[i] <= MAX_SIGMA))
            return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    qc_fimg_t *img = qc_fimg_new (w, h), *sm = qc_fimg_new (w, h);
    float *gc = malloc (n * sizeof *gc), *gr = malloc (n * sizeof *gr);
    float *hcc = malloc ((size_t) w * sizeof *hcc);
    int rc = -1;
    if (!img || !sm || !gc || !gr || !hcc)
        goto out;
    /* skimage's invert of a float image: 1 - v. src is not read after
     * this, so dst may be src. */
    for (size_t i = 0; i < n; i++)
        img->px[i] = black_ridges ? 1.0f - src->px[i] : src->px[i];
    memset (dst->px, 0, n * sizeof *dst->px);
    const double beta_sq = 2.0 * beta * beta, gamma_sq = 2.0 * gamma * gamma;
    for (int k = 0; k < nsigmas; k++) {
        double s2 = sigmas[k] * sigmas[k];
        if (qc_cpu_gaussian (img, sigmas[k], 4.0, QC_BORDER_REFLECT, sm) != 0)
            goto out;
        gradients (sm->px, w, h, gc, gr);
        for (int y = 0; y < h; y++) {
            int up, dn;
            double f;
            grad_rows_at (y, h, &up, &dn, &f);
            /* skimage's 'rc' order: d/dc of gc, d/dr of gc, d/dr of gr */
            grad_row (gc + (size_t) y * w, w, hcc);
            const float *cu = gc + (size_t) up * w, *cd = gc + (size_t) dn * w;
            const float *ru = gr + (size_t) up * w, *rd = gr + (size_t) dn * w;
            float *o = dst->px + (size_t) y * w;
            for (int x = 0; x < w; x++) {
                double hrc = s2 * f * ((double) cd[x] - (double) cu[x]);
                double hrr = s2 * f * ((double) rd[x] - (double) ru[x]);
                double v = qc_px_frangi (s2 * hcc[x], hrc, hrr, beta_sq, gamma_sq);
                if (v > o[x])
                    o[x] = (float) v;
            }
        }
    }
    rc = 0;
out:
    qc_fimg_destroy (&img);
    qc_fimg_destroy (&sm);
    free (gc);
    free (gr);
    free (hcc);
    return rc;
}
