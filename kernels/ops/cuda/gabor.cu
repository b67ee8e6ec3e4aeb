/* The pixel classifier's Gabor feature on the GPU (kernels/ops/cpu/
 * gabor.c): the same taps, made on the host by the CPU's own functions
 * (qc_gabor_taps_1d / _2d), and the same sums in the same order, one
 * thread a pixel: with sigma_x == sigma_y (every HistoQC config) a row
 * pass per part of the complex kernel into two float planes, then one
 * column pass that adds the real part's column sums and takes the
 * imaginary part's away, as the CPU's acc does; other sigmas the direct
 * 2-D sum. Built with -fmad=false, so the double arithmetic is the
 * CPU's. The images reach the device through QC_IN and QC_OUT
 * (placement.cu). */
#include <math.h>
#include <stdlib.h>

#include "kernels/ops/cuda/cuda_internal.h"
extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}

namespace {

/* tmp[i] = sum_j k[j] src[x + j - r] along the row, an outside pixel
 * read as 0 (CONSTANT), as the CPU's padded row. */
__global__ void
k_gabor_rows (const float *src, int w, int h, const double *k, int r,
              int border, float *tmp)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w);
    const float *row = src + (i - (size_t) x);
    double s = 0.0;
    for (int j = 0; j <= 2 * r; j++) {
        int xx = qc_px_border_index (x + j - r, w, border);
        s += k[j] * (xx < 0 ? 0.0 : (double) row[xx]);
    }
    tmp[i] = (float) s;
}

/* dst[i] = sum_j br[j] re[y + j - r] - sum_j bi[j] im[y + j - r] down
 * the column, in the CPU's order; an outside row adds nothing. */
__global__ void
k_gabor_cols (const float *re, const float *im, int w, int h,
              const double *br, const double *bi, int r, int border,
              float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w), y = (long) (i / w);
    double acc = 0.0;
    for (int j = 0; j <= 2 * r; j++) {
        int yy = qc_px_border_index (y + j - r, h, border);
        if (yy >= 0)
            acc += (1.0 * br[j]) * re[(size_t) yy * w + x];
    }
    for (int j = 0; j <= 2 * r; j++) {
        int yy = qc_px_border_index (y + j - r, h, border);
        if (yy >= 0)
            acc += (-1.0 * bi[j]) * im[(size_t) yy * w + x];
    }
    dst[i] = (float) acc;
}

/* The direct 2-D sum with the (2 y0 + 1) x (2 x0 + 1) taps k, the
 * CPU's own per-pixel code (pixel_math.h). */
__global__ void
k_gabor_direct (const float *src, int w, int h, const double *k, int x0,
                int y0, int border, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    dst[i] = (float) qc_px_taps_2d_at (src, w, h, (long) (i % w),
                                       (long) (i / w), k, x0, y0, border);
}

/* taps: ar, ai (2 x0 + 1), br, bi (2 y0 + 1), one host buffer. */
int
separable (const qc_fimg_t *src, const double *taps, int x0, int y0,
           int border, qc_fimg_t *dst)
{
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h), nx = 2 * (size_t) x0 + 1, ny = 2 * (size_t) y0 + 1;
    size_t ntaps = 2 * nx + 2 * ny;
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_GET (sc, double, d_k, ntaps);
    QC_GET (sc, float, d_re, n);
    QC_GET (sc, float, d_im, n);
    QC_OUT (sc, float, d_d, dst);
    QC_UP (d_k, taps, ntaps);
    QC_LAUNCH (k_gabor_rows, n, d_s, w, h, d_k, x0, border, d_re);
    QC_LAUNCH (k_gabor_rows, n, d_s, w, h, d_k + nx, x0, border, d_im);
    QC_LAUNCH (k_gabor_cols, n, d_re, d_im, w, h, d_k + 2 * nx,
               d_k + 2 * nx + ny, y0, border, d_d);
    QC_FINISH (sc);
    return 0;
}

int
direct (const qc_fimg_t *src, const double *taps, int x0, int y0, int border,
        qc_fimg_t *dst)
{
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    size_t ntaps = (2 * (size_t) x0 + 1) * (2 * (size_t) y0 + 1);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_GET (sc, double, d_k, ntaps);
    QC_OUT (sc, float, d_d, dst);
    QC_UP (d_k, taps, ntaps);
    QC_LAUNCH (k_gabor_direct, n, d_s, w, h, d_k, x0, y0, border, d_d);
    QC_FINISH (sc);
    return 0;
}

} // namespace

extern "C" int
qc_cuda_gabor (const qc_fimg_t *src, double frequency, double theta,
               double sigma_x, double sigma_y, qc_border_t border,
               qc_fimg_t *dst)
{
    if (!qc_gabor_args_ok (src, frequency, theta, sigma_x, sigma_y, border,
                           dst) || qc_cuda_begin ())
        return -1;
    int x0, y0;
    qc_gabor_extent (theta, sigma_x, sigma_y, &x0, &y0);
    size_t nx = 2 * (size_t) x0 + 1, ny = 2 * (size_t) y0 + 1;
    int sep = sigma_x == sigma_y;
    double *taps = (double *) malloc ((sep ? 2 * nx + 2 * ny : nx * ny)
                                      * sizeof *taps);
    if (!taps)
        return -1;
    int rc;
    if (sep) {
        qc_gabor_taps_1d (frequency, theta, sigma_x, x0, y0, taps, taps + nx,
                          taps + 2 * nx, taps + 2 * nx + ny);
        rc = separable (src, taps, x0, y0, (int) border, dst);
    } else {
        qc_gabor_taps_2d (frequency, theta, sigma_x, sigma_y, x0, y0, taps);
        rc = direct (src, taps, x0, y0, (int) border, dst);
    }
    free (taps);
    return rc;
}
