/* gabor: the real part of skimage.filters.gabor_kernel (frequency, theta,
 * sigma_x, sigma_y), n_stds 3, offset 0, convolved with the image as
 * scipy.ndimage.convolve does (HistoQC's "gabor" feature, border WRAP).
 *
 * The kernel spans x in [-x0, x0], y in [-y0, y0] with x0 = ceil (max
 * (|3 sx cos t|, |3 sy sin t|, 1)) and y0 = ceil (max (|3 sy cos t|,
 * |3 sx sin t|, 1)), and is
 *   exp (-(xr^2 / sx^2 + yr^2 / sy^2) / 2) / (2 pi sx sy) cos (2 pi f xr)
 * with xr = x cos t + y sin t, yr = -x sin t + y cos t. It is symmetric
 * under (x, y) -> (-x, -y), so correlation and convolution agree.
 *
 * With sx == sy (every HistoQC config) the envelope is isotropic and the
 * complex kernel factors into a(x) b(y), so the real part is
 * Re a (x) Re b (y) - Im a (x) Im b (y): two separable passes of
 * 2 x0 + 1 and 2 y0 + 1 taps instead of a (2 x0 + 1)(2 y0 + 1) window.
 * Other sigmas take the direct 2-D sum. Border rules apply per axis, so
 * the separable passes see the same padded image as the 2-D sum. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIGMA 100.0

int
qc_gabor_args_ok (const qc_fimg_t *src, double frequency, double theta,
                  double sigma_x, double sigma_y, qc_border_t border,
                  const qc_fimg_t *dst)
{
    return qc_fimg_valid (src) && qc_fimg_valid (dst) && src->w == dst->w
           && src->h == dst->h && frequency > 0 && isfinite (frequency)
           && isfinite (theta) && sigma_x > 0 && sigma_x <= MAX_SIGMA
           && sigma_y > 0 && sigma_y <= MAX_SIGMA
           && (int) border >= QC_BORDER_REFLECT && border <= QC_BORDER_CONSTANT;
}

void
qc_gabor_extent (double theta, double sigma_x, double sigma_y, int *x0,
                 int *y0)
{
    double ct = cos (theta), st = sin (theta);
    *x0 = (int) ceil (fmax (fmax (fabs (3.0 * sigma_x * ct),
                                  fabs (3.0 * sigma_y * st)), 1.0));
    *y0 = (int) ceil (fmax (fmax (fabs (3.0 * sigma_y * ct),
                                  fabs (3.0 * sigma_x * st)), 1.0));
}

void
qc_gabor_taps_1d (double f, double t, double s, int x0, int y0, double *ar,
                  double *ai, double *br, double *bi)
{
    double ct = cos (t), st = sin (t), norm = 1.0 / (2.0 * M_PI * s * s);
    for (int x = -x0; x <= x0; x++) {
        double e = exp (-0.5 * x * x / (s * s));
        ar[x + x0] = e * cos (2.0 * M_PI * f * ct * x);
        ai[x + x0] = e * sin (2.0 * M_PI * f * ct * x);
    }
    for (int y = -y0; y <= y0; y++) {
        double e = exp (-0.5 * y * y / (s * s)) * norm;
        br[y + y0] = e * cos (2.0 * M_PI * f * st * y);
        bi[y + y0] = e * sin (2.0 * M_PI * f * st * y);
    }
}

void
qc_gabor_taps_2d (double f, double t, double sx, double sy, int x0, int y0,
                  double *k)
{
    int kw = 2 * x0 + 1;
    double ct = cos (t), st = sin (t), norm = 1.0 / (2.0 * M_PI * sx * sy);
    for (int y = -y0; y <= y0; y++)
        for (int x = -x0; x <= x0; x++) {
            double xr = x * ct + y * st, yr = -x * st + y * ct;
            k[(size_t) (y + y0) * kw + (x + x0)] =
                exp (-0.5 * (xr * xr / (sx * sx) + yr * yr / (sy * sy)))
                * norm * cos (2.0 * M_PI * f * xr);
        }
}

/* out[x] = sum_j k[j] in[x + j - r] along a row, under the border rule. */
static void
row_pass (const float *src, int w, int h, const double *k, int r,
          qc_border_t border, double *pad, float *dst)
{
    for (int y = 0; y < h; y++) {
        const float *row = src + (size_t) y * w;
        for (long i = 0; i < (long) w + 2 * r; i++) {
            int xx = qc_px_border_index (i - r, w, border);
            pad[i] = xx < 0 ? 0.0 : row[xx];
        }
        float *o = dst + (size_t) y * w;
        for (int x = 0; x < w; x++) {
            double s = 0.0;
            for (int j = 0; j <= 2 * r; j++)
                s += k[j] * pad[x + j];
            o[x] = (float) s;
        }
    }
}

/* acc[y][x] += sign * sum_j k[j] src[y + j - r][x], rows streamed whole. */
static void
col_pass (const float *src, int w, int h, const double *k, int r,
          qc_border_t border, double sign, double *acc)
{
    for (int y = 0; y < h; y++) {
        double *a = acc + (size_t) y * w;
        for (int j = 0; j <= 2 * r; j++) {
            int yy = qc_px_border_index ((long) y + j - r, h, border);
            if (yy < 0)
                continue;
            const float *row = src + (size_t) yy * w;
            double kj = sign * k[j];
            for (int x = 0; x < w; x++)
                a[x] += kj * row[x];
        }
    }
}

static int
separable (const qc_fimg_t *src, double f, double t, double s, int x0, int y0,
           qc_border_t border, qc_fimg_t *dst)
{
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    double *ar = malloc ((2 * (size_t) x0 + 1) * sizeof *ar);
    double *ai = malloc ((2 * (size_t) x0 + 1) * sizeof *ai);
    double *br = malloc ((2 * (size_t) y0 + 1) * sizeof *br);
    double *bi = malloc ((2 * (size_t) y0 + 1) * sizeof *bi);
    double *pad = malloc (((size_t) w + 2 * (size_t) x0) * sizeof *pad);
    double *acc = calloc (n, sizeof *acc);
    float *tmp = malloc (n * sizeof *tmp);
    int rc = -1;
    if (!ar || !ai || !br || !bi || !pad || !acc || !tmp)
        goto out;
    qc_gabor_taps_1d (f, t, s, x0, y0, ar, ai, br, bi);
    row_pass (src->px, w, h, ar, x0, border, pad, tmp);
    col_pass (tmp, w, h, br, y0, border, 1.0, acc);
    row_pass (src->px, w, h, ai, x0, border, pad, tmp);
    col_pass (tmp, w, h, bi, y0, border, -1.0, acc);
    for (size_t i = 0; i < n; i++)
        dst->px[i] = (float) acc[i];
    rc = 0;
out:
    free (ar);
    free (ai);
    free (br);
    free (bi);
    free (pad);
    free (acc);
    free (tmp);
    return rc;
}

static int
direct (const qc_fimg_t *src, double f, double t, double sx, double sy,
        int x0, int y0, qc_border_t border, qc_fimg_t *dst)
{
    int w = src->w, h = src->h;
    double *k = malloc ((2 * (size_t) x0 + 1) * (2 * (size_t) y0 + 1)
                        * sizeof *k);
    float *out = malloc (qc_npix (w, h) * sizeof *out);
    if (!k || !out) {
        free (k);
        free (out);
        return -1;
    }
    qc_gabor_taps_2d (f, t, sx, sy, x0, y0, k);
    for (long y = 0; y < h; y++)
        for (long x = 0; x < w; x++)
            out[y * w + x] = (float) qc_px_taps_2d_at (src->px, w, h, x, y, k,
                                                       x0, y0, border);
    memcpy (dst->px, out, qc_npix (w, h) * sizeof *out);
    free (k);
    free (out);
    return 0;
}

int
qc_cpu_gabor (const qc_fimg_t *src, double frequency, double theta,
              double sigma_x, double sigma_y, qc_border_t border,
              qc_fimg_t *dst)
{
    if (!qc_gabor_args_ok (src, frequency, theta, sigma_x, sigma_y, border,
                           dst))
        return -1;
    int x0, y0;
    qc_gabor_extent (theta, sigma_x, sigma_y, &x0, &y0);
    /* both paths read all of src before writing dst: in place is fine */
    if (sigma_x == sigma_y)
        return separable (src, frequency, theta, sigma_x, x0, y0, border, dst);
    return direct (src, frequency, theta, sigma_x, sigma_y, x0, y0, border, dst);
}
