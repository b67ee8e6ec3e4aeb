/* frangi on the GPU: the classifier feature of the default config's pen
 * and coverslip steps, and at 10x the largest single cost of a slide on
 * the CPU (kernels/ops/cpu/frangi.c says what it computes).
 *
 * The same arithmetic as the CPU, step for step, so that both give the
 * same bits but for exp:
 *  - the Gaussian sums in float, as qc_cpu_gaussian_f32: the centre tap
 *    times its weight, then weight k times the sum of the pair at -k
 *    and +k, in that order (-fmad=false keeps each product rounded);
 *  - np.gradient's differences taken in double from float, stored as
 *    float, then the Hessian's elements times sigma^2 in double;
 *  - the vesselness of qc_px_frangi (pixel_math.h, shared with the CPU),
 *    max'ed over the sigmas as float.
 * The CPU's vector loop takes exp to about an ulp of a double; the float
 * results agree but for rare last-bit flips. All planes stay on the
 * device between the passes; the image comes in through QC_IN and the
 * result goes out through QC_OUT (placement.cu). */
#include <math.h>

#include "kernels/ops/cuda/cuda_internal.h"

extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}

namespace {

/* Taps of the widest Gaussian (truncate 4 at the largest sigma), plus
 * the centre. */
const int MAX_TAPS = (int) (4.0 * QC_FRANGI_MAX_SIGMA + 0.5) + 1;

__global__ void
k_invert (const float *src, size_t n, int black, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = black ? 1.0f - src[i] : src[i];
}

/* One pass of qc_cpu_gaussian_f32; axis 0 along rows, 1 down columns.
 * REFLECT borders only (what frangi uses): every index maps inside. */
__global__ void
k_gauss_f32 (const float *src, int w, int h, const float *wt, int r, int axis,
             float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    long x = (long) (i % w), y = (long) (i / w);
    float acc;
    if (axis == 0) {
        const float *row = src + (size_t) y * w;
        acc = wt[0] * row[x];
        for (int k = 1; k <= r; k++) {
            float a = row[qc_px_border_index (x - k, w, QC_BORDER_REFLECT)];
            float b = row[qc_px_border_index (x + k, w, QC_BORDER_REFLECT)];
            acc += wt[k] * (a + b);
        }
    } else {
        acc = wt[0] * src[(size_t) y * w + x];
        for (int k = 1; k <= r; k++) {
            float a = src[(size_t) qc_px_border_index (y - k, h, QC_BORDER_REFLECT) * w + x];
            float b = src[(size_t) qc_px_border_index (y + k, h, QC_BORDER_REFLECT) * w + x];
            acc += wt[k] * (a + b);
        }
    }
    dst[i] = acc;
}

/* np.gradient across rows at row y (frangi.c's grad_rows_at). */
__device__ inline void
rows_at (int y, int h, int *up, int *dn, double *f)
{
    *up = y > 0 ? y - 1 : y;
    *dn = y + 1 < h ? y + 1 : y;
    *f = h < 2 ? 0.0 : (*up != y && *dn != y) ? 0.5 : 1.0;
}

/* np.gradient along a row at x (frangi.c's grad_row). */
__device__ inline float
grad_along (const float *p, int n, int x)
{
    if (n < 2)
        return 0.0f;
    if (x == 0)
        return (float) ((double) p[1] - (double) p[0]);
    if (x == n - 1)
        return (float) ((double) p[n - 1] - (double) p[n - 2]);
    return (float) (0.5 * ((double) p[x + 1] - (double) p[x - 1]));
}

/* gc = d/dc and gr = d/dr of s. */
__global__ void
k_gradients (const float *s, int w, int h, float *gc, float *gr)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    int x = (int) (i % w), y = (int) (i / w), up, dn;
    double f;
    rows_at (y, h, &up, &dn, &f);
    gr[i] = (float) (f * ((double) s[(size_t) dn * w + x] - (double) s[(size_t) up * w + x]));
    gc[i] = grad_along (s + (size_t) y * w, w, x);
}

/* The vesselness at sigma (s2 = sigma^2), max'ed into o. */
__global__ void
k_vessel (const float *gc, const float *gr, int w, int h, double s2,
          double beta_sq, double gamma_sq, float *o)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    int x = (int) (i % w), y = (int) (i / w), up, dn;
    double f;
    rows_at (y, h, &up, &dn, &f);
    float hcc = grad_along (gc + (size_t) y * w, w, x);
    double hrc = s2 * f * ((double) gc[(size_t) dn * w + x] - (double) gc[(size_t) up * w + x]);
    double hrr = s2 * f * ((double) gr[(size_t) dn * w + x] - (double) gr[(size_t) up * w + x]);
    double v = qc_px_frangi (s2 * hcc, hrc, hrr, beta_sq, gamma_sq);
    if (v > o[i])
        o[i] = (float) v;
}

} // namespace

extern "C" int
qc_cuda_frangi (const qc_fimg_t *src, const double *sigmas, int nsigmas,
                double beta, double gamma, int black_ridges, qc_fimg_t *dst)
{
    if (!qc_frangi_args_ok (src, sigmas, nsigmas, beta, gamma, dst) || qc_cuda_begin ())
        return -1;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    QcScope sc;
    QC_IN (sc, const float, d_src, src);
    QC_GET (sc, float, d_img, n);
    QC_GET (sc, float, d_tmp, n);
    QC_GET (sc, float, d_sm, n);
    QC_GET (sc, float, d_gc, n);
    QC_GET (sc, float, d_gr, n);
    QC_GET (sc, float, d_wt, MAX_TAPS);
    QC_OUT (sc, float, d_out, dst);
    QC_LAUNCH (k_invert, n, d_src, n, black_ridges, d_img);
    QC_CK (cudaMemsetAsync (d_out, 0, n * sizeof (float), QC_STREAM));
    const double beta_sq = 2.0 * beta * beta, gamma_sq = 2.0 * gamma * gamma;
    float wt[MAX_TAPS];
    for (int k = 0; k < nsigmas; k++) {
        /* qc_cpu_gaussian_f32's radius (truncate 4) and weights; a
         * radius 0 kernel is the image itself */
        int r = qc_px_gauss_radius (sigmas[k], 4.0);
        const float *smoothed = d_img;
        if (r > 0) {
            double dw[MAX_TAPS];
            qc_cpu_gauss_weights (sigmas[k], r, dw);
            for (int j = 0; j <= r; j++)
                wt[j] = (float) dw[j];
            QC_UP (d_wt, wt, (size_t) r + 1);
            QC_LAUNCH (k_gauss_f32, n, d_img, w, h, d_wt, r, 0, d_tmp);
            QC_LAUNCH (k_gauss_f32, n, d_tmp, w, h, d_wt, r, 1, d_sm);
            smoothed = d_sm;
            /* wt is reused by the next sigma: wait for this copy */
            QC_SYNC ();
        }
        QC_LAUNCH (k_gradients, n, smoothed, w, h, d_gc, d_gr);
        QC_LAUNCH (k_vessel, n, d_gc, d_gr, w, h, sigmas[k] * sigmas[k], beta_sq,
                   gamma_sq, d_out);
    }
    QC_FINISH (sc);
    return 0;
}
