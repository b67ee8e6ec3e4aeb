/* numpy.quantile on the GPU (kernels/ops/cpu/stats.c): the CPU's radix
 * select, with its counting passes on the GPU. The selected pixels'
 * keys (qc_px_float_key) are counted by their top 16 bits; the host
 * finds the bin that holds each order statistic (qc_cpu_radix_bin, the
 * CPU's own code, over 256 KB of counts); the GPU counts the low 16 bits
 * of that bin's keys; the host reads the key off. The same two order
 * statistics and the same interpolation as the CPU, so the same
 * number; only the counts cross, never the plane. Argument checks are
 * the CPU backend's. The counts are added a warp at a time
 * (qc_warp_count). */
#include "kernels/ops/cuda/cuda_internal.h"
extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}

#include <stdlib.h>

namespace {

__global__ void
k_count_top (const float *px, const uint8_t *mask, size_t n, uint32_t *top,
             int *has_nan)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    bool in = i < n && (!mask || mask[i]);
    float x = in ? px[i] : 0.0f;
    if (x != x)
        *has_nan = 1;
    qc_warp_count (top, qc_px_float_key (x) >> 16, in && x == x);
}

__global__ void
k_count_low (const float *px, const uint8_t *mask, size_t n, uint32_t bin,
             uint32_t *low)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    bool in = i < n && (!mask || mask[i]);
    float x = in ? px[i] : 0.0f;
    uint32_t k = qc_px_float_key (x);
    qc_warp_count (low, k & 0xffffu, in && x == x && k >> 16 == bin);
}

/* The low counts of bin into host memory low. */
int
count_low (const float *d_px, const uint8_t *d_mask, size_t n, uint32_t bin,
           uint32_t *d_low, uint32_t *low)
{
    QC_CK (cudaMemsetAsync (d_low, 0, QC_RADIX_BINS * sizeof *d_low, QC_STREAM));
    QC_LAUNCH (k_count_low, n, d_px, d_mask, n, bin, d_low);
    QC_DOWN (low, d_low, (size_t) QC_RADIX_BINS);
    QC_SYNC ();
    return 0;
}

} // namespace

extern "C" int
qc_cuda_fimg_quantile (const qc_fimg_t *src, const qc_mask_t *mask, double q,
                       double *out)
{
    if (!qc_fimg_valid (src) || !out || !(q >= 0.0 && q <= 1.0)
        || !qc_mask_fits (mask, src->w, src->h) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, float, d_px, src);
    const uint8_t *d_mask = NULL;
    if (mask && !(d_mask = static_cast<const uint8_t *> (qc_cuda_in (sc, QC_SPAN (mask)))))
        return -1;
    QC_GET (sc, uint32_t, d_top, (size_t) QC_RADIX_BINS);
    QC_GET (sc, uint32_t, d_low, (size_t) QC_RADIX_BINS);
    QC_GET (sc, int, d_nan, 1);
    QC_CK (cudaMemsetAsync (d_top, 0, QC_RADIX_BINS * sizeof *d_top, QC_STREAM));
    QC_CK (cudaMemsetAsync (d_nan, 0, sizeof *d_nan, QC_STREAM));
    QC_LAUNCH (k_count_top, n, d_px, d_mask, n, d_top, d_nan);
    uint32_t *hist = (uint32_t *) malloc (2 * (size_t) QC_RADIX_BINS * sizeof *hist);
    if (!hist)
        return -1;
    uint32_t *low = hist + QC_RADIX_BINS;
    int has_nan = 0, rc = -1;
    if (!qc_cuda_failed (cudaMemcpyAsync (hist, d_top, QC_RADIX_BINS * sizeof *hist,
                                          cudaMemcpyDeviceToHost, QC_STREAM),
                         "cudaMemcpyAsync", __FILE__, __LINE__)
        && !qc_cuda_failed (cudaMemcpyAsync (&has_nan, d_nan, sizeof has_nan,
                                             cudaMemcpyDeviceToHost, QC_STREAM),
                            "cudaMemcpyAsync", __FILE__, __LINE__)
        && !qc_cuda_failed (cudaStreamSynchronize (QC_STREAM),
                            "cudaStreamSynchronize", __FILE__, __LINE__)) {
        size_t cnt = 0;
        for (size_t b = 0; b < QC_RADIX_BINS; b++)
            cnt += hist[b];
        if (has_nan) {          /* numpy.quantile propagates NaN */
            *out = NAN;
            rc = 0;
        } else if (cnt > 0) {
            double h = (double) (cnt - 1) * q;
            size_t k = (size_t) floor (h), wk, wk1 = 0;
            if (k > cnt - 1)
                k = cnt - 1;
            uint32_t bk = qc_cpu_radix_bin (hist, k, &wk);
            if (count_low (d_px, d_mask, n, bk, d_low, low) == 0) {
                double lo = qc_px_key_float (qc_cpu_radix_key (low, bk, wk));
                double hi = lo;
                rc = 0;
                if (k + 1 < cnt) {
                    uint32_t bk1 = qc_cpu_radix_bin (hist, k + 1, &wk1);
                    if (bk1 != bk)
                        rc = count_low (d_px, d_mask, n, bk1, d_low, low);
                    if (rc == 0)
                        hi = qc_px_key_float (qc_cpu_radix_key (low, bk1, wk1));
                }
                if (rc == 0)
                    *out = lo + (h - (double) k) * (hi - lo);
            }
        }
    }
    free (hist);
    return rc;
}
