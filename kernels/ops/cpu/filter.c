/* Separable smoothing filters: Gaussian (scipy.ndimage.gaussian_filter
 * semantics) and box mean (scipy.signal.convolve2d 'same' semantics).
 *
 * Both filter rows into a temporary image, then columns into dst, so dst
 * may be src. They accumulate in double: HistoQC blurs with sigma 100
 * (an 801-tap kernel) where float sums would lose digits. The Gaussian's
 * column pass walks strips of columns down the rows (contiguous memory,
 * the strip's rows in cache), adding each output's taps in the order the
 * row pass does, so the two passes treat a pixel alike; the box filter
 * is two running sums and costs the same for any size. The hot loops
 * have AVX2 clones (picked at run time; no FMA, so the same bits). */
#include "kernels/ops/cpu/cpu_ops.h"

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
    for (long i = 0; i < pl; i++) {
        int k = qc_px_border_index (i - pl, w, border);
        buf[i] = k < 0 ? 0.0 : row[k];
    }
    for (int i = 0; i < w; i++)
        buf[pl + i] = row[i];
    for (long i = (long) pl + w; i < (long) w + pl + pr; i++) {
        int k = qc_px_border_index (i - pl, w, border);
        buf[i] = k < 0 ? 0.0 : row[k];
    }
}

/* Four doubles as one vector (a GCC and Clang extension: -O2 alone does
 * not vectorise the loop below, and an array of accumulators ends up on
 * the stack); one AVX register, or two SSE2 / NEON ones. Lanes are
 * computed exactly as the scalar code would, so results do not depend
 * on it. */
typedef double qc_v4d_t __attribute__ ((vector_size (32)));

/* Unaligned load; a macro, since a function returning a 32-byte vector
 * has a different ABI with and without AVX. */
#define LOAD4(v, p) memcpy (&(v), (p), sizeof (v))

/* out[x] = wt[0] c[x] + sum_k wt[k] (c[x-k] + c[x+k]) for x in [0, n),
 * c readable from -r to n + r - 1. Sixteen outputs stay in four vectors
 * while the taps stream past; each tap pair is folded first, the kernel
 * being symmetric. */
__attribute__ ((target_clones ("avx2", "default"))) static void
conv_row_sym (const double *restrict c, const double *restrict wt, int r,
              int n, float *restrict out)
{
    int x = 0;
    for (; x + 16 <= n; x += 16) {
        const double *p = c + x;
        const qc_v4d_t w0 = { wt[0], wt[0], wt[0], wt[0] };
        qc_v4d_t s0, s1, s2, s3, a0, a1, a2, a3, b0, b1, b2, b3;
        LOAD4 (a0, p);
        LOAD4 (a1, p + 4);
        LOAD4 (a2, p + 8);
        LOAD4 (a3, p + 12);
        s0 = w0 * a0, s1 = w0 * a1, s2 = w0 * a2, s3 = w0 * a3;
        for (int k = 1; k <= r; k++) {
            const qc_v4d_t wk = { wt[k], wt[k], wt[k], wt[k] };
            const double *pa = p - k, *pb = p + k;
            LOAD4 (a0, pa);
            LOAD4 (b0, pb);
            LOAD4 (a1, pa + 4);
            LOAD4 (b1, pb + 4);
            LOAD4 (a2, pa + 8);
            LOAD4 (b2, pb + 8);
            LOAD4 (a3, pa + 12);
            LOAD4 (b3, pb + 12);
            s0 += wk * (a0 + b0);
            s1 += wk * (a1 + b1);
            s2 += wk * (a2 + b2);
            s3 += wk * (a3 + b3);
        }
        float *o = out + x;
        for (int j = 0; j < 4; j++) {
            o[j] = (float) s0[j];
            o[4 + j] = (float) s1[j];
            o[8 + j] = (float) s2[j];
            o[12 + j] = (float) s3[j];
        }
    }
    for (; x < n; x++) {
        double s = wt[0] * c[x];
        for (int k = 1; k <= r; k++)
            s += wt[k] * (c[x - k] + c[x + k]);
        out[x] = (float) s;
    }
}

#define STRIP 256     /* columns per strip of the column pass */

/* acc[x] += wk (up[x] + dn[x]), a NULL row reading 0 (a CONSTANT
 * border), the sum formed as the row pass forms it. */
__attribute__ ((target_clones ("avx2", "default"))) static void
add_tap (double *restrict acc, const float *up, const float *dn, double wk,
         int n)
{
    if (up && dn)
        for (int x = 0; x < n; x++)
            acc[x] += wk * ((double) up[x] + (double) dn[x]);
    else if (up || dn) {
        const float *v = up ? up : dn;
        for (int x = 0; x < n; x++)
            acc[x] += wk * (0.0 + (double) v[x]);
    } else
        for (int x = 0; x < n; x++)
            acc[x] += wk * (0.0 + 0.0);
}

/* The vertical pass: dst row y = wt[0] src[y] + sum_k wt[k] (src[y-k] +
 * src[y+k]) under the border rule, in double, per pixel in the order
 * conv_row_sym adds (so a column is filtered as a row would be). */
static void
gauss_cols (const float *src, int w, int h, const double *wt, int r,
            qc_border_t border, double *acc, float *dst)
{
    for (int x0 = 0; x0 < w; x0 += STRIP) {
        int n = w - x0 < STRIP ? w - x0 : STRIP;
        for (int y = 0; y < h; y++) {
            int c = qc_px_border_index (y, h, border);
            const float *mid = src + (size_t) c * w + x0;
            for (int x = 0; x < n; x++)
                acc[x] = wt[0] * (double) mid[x];
            for (int k = 1; k <= r; k++) {
                int u = qc_px_border_index ((long) y - k, h, border);
                int d = qc_px_border_index ((long) y + k, h, border);
                add_tap (acc, u < 0 ? NULL : src + (size_t) u * w + x0,
                         d < 0 ? NULL : src + (size_t) d * w + x0, wt[k], n);
            }
            float *o = dst + (size_t) y * w + x0;
            for (int x = 0; x < n; x++)
                o[x] = (float) acc[x];
        }
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
qc_cpu_gauss_setup (const qc_fimg_t *src, double sigma, double truncate,
                    qc_border_t border, int max_radius, qc_fimg_t *dst, int *r)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || !border_ok (border) || sigma != sigma
        || !(truncate > 0.0) || !isfinite (truncate) || !isfinite (sigma)
        || !r)
        return -1;
    if (sigma <= 0.0 || truncate * sigma + 0.5 < 1.0) {
        /* radius 0: the kernel is [1] */
        if (dst != src)
            memcpy (dst->px, src->px, qc_npix (src->w, src->h) * sizeof (float));
        return 0;
    }
    if (truncate * sigma + 0.5 > max_radius)
        return -1;
    *r = qc_px_gauss_radius (sigma, truncate);
    return 1;
}

void
qc_cpu_gauss_weights (double sigma, int r, double *wt)
{
    /* scipy samples exp(-x^2 / (2 sigma^2)) at integers and normalises. */
    double sum = 0.0;
    for (int k = 0; k <= r; k++) {
        wt[k] = exp (-0.5 / (sigma * sigma) * (double) k * (double) k);
        sum += k ? 2.0 * wt[k] : wt[k];
    }
    for (int k = 0; k <= r; k++)
        wt[k] /= sum;
}

int
qc_cpu_gaussian (const qc_fimg_t *src, double sigma, double truncate,
                 qc_border_t border, qc_fimg_t *dst)
{
    int r, go = qc_cpu_gauss_setup (src, sigma, truncate, border, MAX_RADIUS,
                                    dst, &r);
    if (go <= 0)
        return go;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    size_t longest = (size_t) (w > h ? w : h);

    double *wt = malloc ((size_t) (r + 1) * sizeof *wt);
    double *buf = malloc ((longest + 2 * (size_t) r + STRIP) * sizeof *buf);
    float *tmp = malloc (n * sizeof *tmp);
    if (!wt || !buf || !tmp) {
        free (wt);
        free (buf);
        free (tmp);
        return -1;
    }
    qc_cpu_gauss_weights (sigma, r, wt);

    /* Rows, then columns. src is only read by the first pass, so dst
     * may be src. */
    gauss_rows (src->px, w, h, wt, r, border, buf, tmp);
    gauss_cols (tmp, w, h, wt, r, border, buf, dst->px);
    free (wt);
    free (buf);
    free (tmp);
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

/* add_row (row ry_in, +1) then add_row (row ry_out, -1), with the two
 * rows' running sums in one loop: each is a chain of dependent adds, and
 * two chains side by side run in about the time of one. Every colsum[x]
 * still gets +s_in and then -s_out, the same numbers in the same order. */
static void
slide_rows (double *colsum, const qc_fimg_t *src, long ry_in, long ry_out,
            int kw, qc_border_t border, double *buf, double *buf2)
{
    int w = src->w;
    int ki = qc_px_border_index (ry_in, src->h, border);
    int ko = qc_px_border_index (ry_out, src->h, border);
    if (ki < 0 || ko < 0) {             /* a row outside adds nothing */
        add_row (colsum, src, ry_in, kw, border, 1.0, buf);
        add_row (colsum, src, ry_out, kw, border, -1.0, buf);
        return;
    }
    pad_row_f (src->px + (size_t) ki * w, w, kw / 2, (kw - 1) / 2, border, buf);
    pad_row_f (src->px + (size_t) ko * w, w, kw / 2, (kw - 1) / 2, border,
               buf2);
    double si = 0.0, so = 0.0;
    for (int i = 0; i < kw; i++)
        si += buf[i];
    for (int i = 0; i < kw; i++)
        so += buf2[i];
    for (int x = 0; x < w; x++) {
        colsum[x] += 1.0 * si;
        colsum[x] += -1.0 * so;
        if (x + 1 < w) {
            si += buf[x + kw] - buf[x];
            so += buf2[x + kw] - buf2[x];
        }
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
    double *buf2 = malloc (((size_t) w + (size_t) kw - 1) * sizeof *buf2);
    double *colsum = calloc ((size_t) w, sizeof *colsum);
    if (!buf || !buf2 || !colsum) {
        free (buf);
        free (buf2);
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
        slide_rows (colsum, src, (long) y + 1 + down, (long) y - up, kw,
                    border, buf, buf2);
    }
    free (buf);
    free (buf2);
    free (colsum);
    qc_fimg_destroy (&copy);
    return 0;
}
