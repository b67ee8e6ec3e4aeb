/* Separable smoothing filters: Gaussian (scipy.ndimage.gaussian_filter
 * semantics) and box mean (scipy.signal.convolve2d 'same' semantics).
 *
 * Both filter rows into a temporary image, then columns into dst, so dst
 * may be src. They accumulate in double: HistoQC blurs with sigma 100
 * (an 801-tap kernel) where float sums would lose digits. The Gaussian
 * runs the column pass as a row pass over the transpose, so both passes
 * stream contiguous memory through a register-blocked kernel; the box
 * filter is two running sums and costs the same for any size. */
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

/* Two doubles as one SSE2 / NEON register (a GCC and Clang extension:
 * -O2 alone does not vectorise the loop below, and an array of
 * accumulators ends up on the stack). Lanes are computed exactly as the
 * scalar code would, so results do not depend on it. */
typedef double qc_v2d_t __attribute__ ((vector_size (16)));

static inline qc_v2d_t
load2 (const double *p)
{
    qc_v2d_t v;
    memcpy (&v, p, sizeof v);
    return v;
}

/* out[x] = wt[0] c[x] + sum_k wt[k] (c[x-k] + c[x+k]) for x in [0, n),
 * c readable from -r to n + r - 1. Eight outputs stay in four registers
 * while the taps stream past; each tap pair is folded first, the kernel
 * being symmetric. */
static void
conv_row_sym (const double *restrict c, const double *restrict wt, int r,
              int n, float *restrict out)
{
    int x = 0;
    for (; x + 8 <= n; x += 8) {
        const double *p = c + x;
        qc_v2d_t w0 = { wt[0], wt[0] };
        qc_v2d_t s0 = w0 * load2 (p), s1 = w0 * load2 (p + 2);
        qc_v2d_t s2 = w0 * load2 (p + 4), s3 = w0 * load2 (p + 6);
        for (int k = 1; k <= r; k++) {
            const qc_v2d_t wk = { wt[k], wt[k] };
            const double *a = p - k, *b = p + k;
            s0 += wk * (load2 (a) + load2 (b));
            s1 += wk * (load2 (a + 2) + load2 (b + 2));
            s2 += wk * (load2 (a + 4) + load2 (b + 4));
            s3 += wk * (load2 (a + 6) + load2 (b + 6));
        }
        float *o = out + x;
        o[0] = (float) s0[0], o[1] = (float) s0[1];
        o[2] = (float) s1[0], o[3] = (float) s1[1];
        o[4] = (float) s2[0], o[5] = (float) s2[1];
        o[6] = (float) s3[0], o[7] = (float) s3[1];
    }
    for (; x < n; x++) {
        double s = wt[0] * c[x];
        for (int k = 1; k <= r; k++)
            s += wt[k] * (c[x - k] + c[x + k]);
        out[x] = (float) s;
    }
}

/* dst = transpose of src (src: h rows of w; dst: w rows of h), in
 * 32 x 32 tiles so that both sides stay in cache. */
static void
transpose (const float *restrict src, int w, int h, float *restrict dst)
{
    for (int y0 = 0; y0 < h; y0 += 32)
        for (int x0 = 0; x0 < w; x0 += 32) {
            int y1 = y0 + 32 < h ? y0 + 32 : h, x1 = x0 + 32 < w ? x0 + 32 : w;
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++)
                    dst[(size_t) x * h + y] = src[(size_t) y * w + x];
        }
}

/* One horizontal Gaussian pass over h rows of w. */
static void
gauss_rows (const float *src, int w, int h, const double *wt, int r,
            qc_border_t border, double *buf, float *dst)
{
    for (int y = 0; y < h; y++) {
        pad_row_f (src + (size_t) y * w, w, r, r, border, buf);
        conv_row_sym (buf + r, wt, r, w, dst + (size_t) y * w);
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
    size_t longest = (size_t) (w > h ? w : h);

    double *wt = malloc ((size_t) (r + 1) * sizeof *wt);
    double *buf = malloc ((longest + 2 * (size_t) r) * sizeof *buf);
    float *tmp = malloc (n * sizeof *tmp);
    float *tmpt = malloc (n * sizeof *tmpt);
    if (!wt || !buf || !tmp || !tmpt) {
        free (wt);
        free (buf);
        free (tmp);
        free (tmpt);
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

    /* Rows, then columns as rows of the transpose: both passes read
     * contiguous memory. src is only read by the first pass, so dst may
     * be src. */
    gauss_rows (src->px, w, h, wt, r, border, buf, tmp);
    transpose (tmp, w, h, tmpt);
    gauss_rows (tmpt, h, w, wt, r, border, buf, tmp);
    transpose (tmp, h, w, dst->px);
    free (wt);
    free (buf);
    free (tmp);
    free (tmpt);
    return 0;
}

/* Adds sign * (the horizontal window sums of source row ry, under the
 * border rule) into colsum; a CONSTANT row outside adds nothing. The sums
 * are recomputed each time a row enters or leaves the window (the same
 * doubles both times, so the running total does not drift), which keeps
 * memory to one padded row. */
static void
add_row (double *colsum, const qc_fimg_t *src, long ry, int kw,
         qc_border_t border, double sign, double *buf)
{
    int w = src->w;
    int k = qc_px_border_index (ry, src->h, border);
    if (k < 0)
        return;
    /* convolve2d 'same' centres the flipped kernel so that the window
     * of x spans [x - kw/2, x + (kw-1)/2]. */
    pad_row_f (src->px + (size_t) k * w, w, kw / 2, (kw - 1) / 2, border, buf);
    double s = 0.0;
    for (int i = 0; i < kw; i++)
        s += buf[i];
    for (int x = 0; x < w; x++) {
        colsum[x] += sign * s;
        if (x + 1 < w)
            s += buf[x + kw] - buf[x];
    }
}

int
qc_cpu_box_filter (const qc_fimg_t *src, int kw, int kh, qc_border_t border,
                   qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !border_ok (border) || kw < 1 || kh < 1
        || kw > MAX_RADIUS || kh > MAX_RADIUS)
        return -1;
    /* Rows leave the window after dst rows near them are written, and
     * border rules read rows above: in place needs the source kept. */
    qc_fimg_t *copy = NULL;
    if (dst == src || dst->px == src->px) {
        copy = qc_fimg_clone (src);
        if (!copy)
            return -1;
        src = copy;
    }
    int w = src->w, h = src->h;
    int up = kh / 2, down = (kh - 1) / 2;
    double *buf = malloc (((size_t) w + (size_t) kw - 1) * sizeof *buf);
    double *colsum = calloc ((size_t) w, sizeof *colsum);
    if (!buf || !colsum) {
        free (buf);
        free (colsum);
        qc_fimg_destroy (&copy);
        return -1;
    }
    for (long yy = -up; yy <= down; yy++)
        add_row (colsum, src, yy, kw, border, 1.0, buf);
    double inv = 1.0 / ((double) kw * (double) kh);
    for (int y = 0; y < h; y++) {
        float *d = dst->px + (size_t) y * w;
        for (int x = 0; x < w; x++)
            d[x] = (float) (colsum[x] * inv);
        if (y + 1 == h)
            break;
        /* slide the window one row down */
        add_row (colsum, src, (long) y + 1 + down, kw, border, 1.0, buf);
        add_row (colsum, src, (long) y - up, kw, border, -1.0, buf);
    }
    free (buf);
    free (colsum);
    qc_fimg_destroy (&copy);
    return 0;
}
