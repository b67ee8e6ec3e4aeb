/* Separable smoothing filters: Gaussian (scipy.ndimage.gaussian_filter
 * semantics) and box mean (scipy.signal.convolve2d 'same' semantics).
 *
 * Both run a horizontal pass into a temporary image and a vertical pass
 * into dst, so dst may be src. Inner loops run over contiguous x with
 * the kernel tap outside, which compilers vectorise, and accumulate in
 * double: HistoQC blurs with sigma 100 (an 801-tap kernel), where float
 * accumulation would lose digits. */
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

/* Kernel radius and padded rows must stay far from int overflow. */
#define MAX_RADIUS (1 << 20)

static int
border_ok (qc_border_t border)
{
    return (int) border >= QC_BORDER_REFLECT && border <= QC_BORDER_CONSTANT;
}

/* buf[i] = row[i - pad] under the border rule, for i in [0, w + pl + pr). */
static void
pad_row_f (const float *row, int w, int pl, int pr, qc_border_t border,
           double *buf)
{
    for (long i = 0; i < (long) w + pl + pr; i++) {
        int k = qc_px_border_index (i - pl, w, border);
        buf[i] = k < 0 ? 0.0 : row[k];
    }
}

int
qc_cpu_gaussian (const qc_fimg_t *src, double sigma, double truncate,
                 qc_border_t border, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !border_ok (border) || sigma != sigma
        || !(truncate > 0.0) || !isfinite (truncate) || !isfinite (sigma))
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    if (sigma <= 0.0 || truncate * sigma + 0.5 < 1.0) {
        /* radius 0: the kernel is [1] */
        if (dst != src)
            memcpy (dst->px, src->px, n * sizeof (float));
        return 0;
    }
    if (truncate * sigma + 0.5 > MAX_RADIUS)
        return -1;
    int r = qc_px_gauss_radius (sigma, truncate);

    double *wt = malloc ((size_t) (r + 1) * sizeof *wt);
    double *buf = malloc (((size_t) w + 2 * (size_t) r) * sizeof *buf);
    double *acc = malloc ((size_t) w * sizeof *acc);
    float *tmp = malloc (n * sizeof *tmp);
    if (!wt || !buf || !acc || !tmp) {
        free (wt);
        free (buf);
        free (acc);
        free (tmp);
        return -1;
    }
    /* scipy samples exp(-x^2 / (2 sigma^2)) at integers and normalises. */
    double sum = 0.0;
    for (int k = 0; k <= r; k++) {
        wt[k] = exp (-0.5 / (sigma * sigma) * (double) k * (double) k);
        sum += k ? 2.0 * wt[k] : wt[k];
    }
    for (int k = 0; k <= r; k++)
        wt[k] /= sum;

    for (int y = 0; y < h; y++) {
        pad_row_f (src->px + (size_t) y * w, w, r, r, border, buf);
        const double *c = buf + r;
        for (int x = 0; x < w; x++)
            acc[x] = wt[0] * c[x];
        for (int k = 1; k <= r; k++) {
            double wk = wt[k];
            const double *a = c - k, *b = c + k;
            for (int x = 0; x < w; x++)
                acc[x] += wk * (a[x] + b[x]);
        }
        float *t = tmp + (size_t) y * w;
        for (int x = 0; x < w; x++)
            t[x] = (float) acc[x];
    }
    for (int y = 0; y < h; y++) {
        const float *c = tmp + (size_t) y * w;
        for (int x = 0; x < w; x++)
            acc[x] = wt[0] * c[x];
        for (int k = 1; k <= r; k++) {
            int ya = qc_px_border_index ((long) y - k, h, border);
            int yb = qc_px_border_index ((long) y + k, h, border);
            const float *a = ya < 0 ? NULL : tmp + (size_t) ya * w;
            const float *b = yb < 0 ? NULL : tmp + (size_t) yb * w;
            double wk = wt[k];
            if (a && b)
                for (int x = 0; x < w; x++)
                    acc[x] += wk * ((double) a[x] + b[x]);
            else if (a || b) {
                const float *o = a ? a : b;
                for (int x = 0; x < w; x++)
                    acc[x] += wk * o[x];
            }
        }
        float *d = dst->px + (size_t) y * w;
        for (int x = 0; x < w; x++)
            d[x] = (float) acc[x];
    }
    free (wt);
    free (buf);
    free (acc);
    free (tmp);
    return 0;
}

/* Adds sign * (row ry of the horizontal sums, under the border rule)
 * into colsum; a CONSTANT row outside adds nothing. */
static void
add_row (double *colsum, const double *hs, long ry, int w, int h,
         qc_border_t border, double sign)
{
    int k = qc_px_border_index (ry, h, border);
    if (k < 0)
        return;
    const double *row = hs + (size_t) k * w;
    for (int x = 0; x < w; x++)
        colsum[x] += sign * row[x];
}

int
qc_cpu_box_filter (const qc_fimg_t *src, int kw, int kh, qc_border_t border,
                   qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !border_ok (border) || kw < 1 || kh < 1
        || kw > MAX_RADIUS || kh > MAX_RADIUS)
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    /* convolve2d 'same' centres the flipped kernel so that the window
     * of x spans [x - k/2, x + (k-1)/2]. */
    int left = kw / 2, right = (kw - 1) / 2;
    int up = kh / 2, down = (kh - 1) / 2;
    double *buf = malloc (((size_t) w + (size_t) kw - 1) * sizeof *buf);
    double *hs = malloc (n * sizeof *hs);
    double *colsum = calloc ((size_t) w, sizeof *colsum);
    if (!buf || !hs || !colsum) {
        free (buf);
        free (hs);
        free (colsum);
        return -1;
    }
    for (int y = 0; y < h; y++) {
        pad_row_f (src->px + (size_t) y * w, w, left, right, border, buf);
        double s = 0.0;
        for (int i = 0; i < kw; i++)
            s += buf[i];
        double *o = hs + (size_t) y * w;
        for (int x = 0; x < w; x++) {
            o[x] = s;
            if (x + 1 < w)
                s += buf[x + kw] - buf[x];
        }
    }
    for (long yy = -up; yy <= down; yy++)
        add_row (colsum, hs, yy, w, h, border, 1.0);
    double inv = 1.0 / ((double) kw * (double) kh);
    for (int y = 0; y < h; y++) {
        float *d = dst->px + (size_t) y * w;
        for (int x = 0; x < w; x++)
            d[x] = (float) (colsum[x] * inv);
        /* slide the window one row down */
        add_row (colsum, hs, (long) y + 1 + down, w, h, border, 1.0);
        add_row (colsum, hs, (long) y - up, w, h, border, -1.0);
    }
    free (buf);
    free (hs);
    free (colsum);
    return 0;
}
