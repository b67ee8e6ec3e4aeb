/* Reductions on the GPU: mask counts, mean / std / min / max, histograms
 * and Otsu's threshold (kernels/ops/cpu/stats.c, histogram.c).
 *
 * Sums: each block reduces its share (grid-stride) in double and writes
 * one partial; the host adds the partials in block order, so a result
 * does not depend on scheduling. The order differs from the CPU's
 * sequential sum, so sums agree to rounding (about 1e-15 relative), not
 * bit for bit. Std is two-pass, as on the CPU. NaN pixels make sum and
 * mean NaN on both backends; min and max skip them here (the CPU keeps a
 * NaN only when it is the first pixel counted).
 *
 * Histograms: per-block counts in shared memory, added to 64-bit global
 * counters; bins are numpy's (qc_px_hist_bin), so counts are exact.
 * fimg_quantile is select.cu's (the copying lane runs the CPU's; see
 * ops_table.c).
 * The images reach the device through QC_IN (placement.cu); only the
 * results come back to the host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cuda/cuda_internal.h"

namespace {

const int RED_BLOCKS = 1024;
const int RED_THREADS = 256;
const int SHARED_BINS = 4096;

struct partial {
    double cnt, sum, mn, mx;
};

unsigned
red_blocks (size_t n)
{
    size_t b = (n + RED_THREADS - 1) / RED_THREADS;
    return (unsigned) (b < 1 ? 1 : b > (size_t) RED_BLOCKS ? RED_BLOCKS : b);
}

/* Pass 1 over n values v[i * stride] (float or uint8) under mask. */
template <typename T>
__global__ void
k_stats1 (const T *v, int stride, const uint8_t *mask, size_t n, partial *out)
{
    __shared__ partial sh[RED_THREADS];
    partial p = {0.0, 0.0, INFINITY, -INFINITY};
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
         i += (size_t) gridDim.x * blockDim.x) {
        if (mask && !mask[i])
            continue;
        double x = v[i * stride];
        p.cnt += 1.0;
        p.sum += x;
        p.mn = fmin (p.mn, x);
        p.mx = fmax (p.mx, x);
    }
    sh[threadIdx.x] = p;
    __syncthreads ();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int) threadIdx.x < s) {
            partial &a = sh[threadIdx.x];
            const partial &b = sh[threadIdx.x + s];
            a.cnt += b.cnt;
            a.sum += b.sum;
            a.mn = fmin (a.mn, b.mn);
            a.mx = fmax (a.mx, b.mx);
        }
        __syncthreads ();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

/* Pass 2: sum of squared deviations from mean. */
template <typename T>
__global__ void
k_stats2 (const T *v, int stride, const uint8_t *mask, size_t n, double mean,
          double *out)
{
    __shared__ double sh[RED_THREADS];
    double ss = 0.0;
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
         i += (size_t) gridDim.x * blockDim.x) {
        if (mask && !mask[i])
            continue;
        double d = (double) v[i * stride] - mean;
        ss += d * d;
    }
    sh[threadIdx.x] = ss;
    __syncthreads ();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int) threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads ();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

__global__ void
k_count (const uint8_t *m, size_t n, unsigned long long *out)
{
    __shared__ unsigned long long sh[RED_THREADS];
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
         i += (size_t) gridDim.x * blockDim.x)
        c += m[i] != 0;
    sh[threadIdx.x] = c;
    __syncthreads ();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int) threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads ();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

/* Stats of device values (already on the device). */
template <typename T>
int
stats_dev (const T *d_v, int stride, const uint8_t *d_mask, size_t n,
           qc_stats_t *out)
{
    unsigned nb = red_blocks (n);
    QcScope sc;
    QC_GET (sc, partial, d_p, nb);
    QC_GET (sc, double, d_ss, nb);
    partial hp[RED_BLOCKS];
    double hss[RED_BLOCKS];
    k_stats1<T><<<nb, RED_THREADS, 0, QC_STREAM>>> (d_v, stride, d_mask, n, d_p);
    QC_CK_LAUNCH ();
    QC_DOWN (hp, d_p, nb);
    QC_SYNC ();
    partial t = {0.0, 0.0, INFINITY, -INFINITY};
    for (unsigned b = 0; b < nb; b++) {
        t.cnt += hp[b].cnt;
        t.sum += hp[b].sum;
        t.mn = fmin (t.mn, hp[b].mn);
        t.mx = fmax (t.mx, hp[b].mx);
    }
    size_t cnt = (size_t) t.cnt;
    double mean = cnt ? t.sum / (double) cnt : 0.0, ss = 0.0;
    if (cnt) {
        k_stats2<T><<<nb, RED_THREADS, 0, QC_STREAM>>> (d_v, stride, d_mask, n,
                                                        mean, d_ss);
        QC_CK_LAUNCH ();
        QC_DOWN (hss, d_ss, nb);
        QC_SYNC ();
        for (unsigned b = 0; b < nb; b++)
            ss += hss[b];
    }
    out->n = cnt;
    out->sum = t.sum;
    out->mean = mean;
    out->std = cnt ? sqrt (ss / (double) cnt) : 0.0;
    /* all-NaN selections leave +-inf: report NaN like the sum */
    out->min = cnt ? (isinf (t.mn) && t.mn > 0 ? t.sum : t.mn) : 0.0;
    out->max = cnt ? (isinf (t.mx) && t.mx < 0 ? t.sum : t.mx) : 0.0;
    return 0;
}

__global__ void
k_rgb_hist (const uint8_t *rgb, const uint8_t *mask, size_t n,
            unsigned long long *hist)
{
    __shared__ unsigned int sh[3 * 256];
    for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x)
        sh[i] = 0;
    __syncthreads ();
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
         i += (size_t) gridDim.x * blockDim.x) {
        if (mask && !mask[i])
            continue;
        const uint8_t *p = rgb + 3 * i;
        atomicAdd (&sh[p[0]], 1u);
        atomicAdd (&sh[256 + p[1]], 1u);
        atomicAdd (&sh[512 + p[2]], 1u);
    }
    __syncthreads ();
    for (int i = threadIdx.x; i < 3 * 256; i += blockDim.x)
        if (sh[i])
            atomicAdd (&hist[i], (unsigned long long) sh[i]);
}

/* numpy.histogram of values in [lo, hi] (NaN and outside not counted). */
__global__ void
k_fhist (const float *v, const uint8_t *mask, size_t n, int nbins, double lo,
         double hi, double norm, unsigned long long *hist)
{
    extern __shared__ unsigned int shb[];
    bool shared = nbins <= SHARED_BINS;
    if (shared) {
        for (int i = threadIdx.x; i < nbins; i += blockDim.x)
            shb[i] = 0;
        __syncthreads ();
    }
    for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
         i += (size_t) gridDim.x * blockDim.x) {
        if (mask && !mask[i])
            continue;
        double x = v[i];
        if (!(x >= lo && x <= hi))
            continue;
        int b = qc_px_hist_bin (x, lo, hi, nbins, norm);
        if (shared)
            atomicAdd (&shb[b], 1u);
        else
            atomicAdd (&hist[b], 1ull);
    }
    if (shared) {
        __syncthreads ();
        for (int i = threadIdx.x; i < nbins; i += blockDim.x)
            if (shb[i])
                atomicAdd (&hist[i], (unsigned long long) shb[i]);
    }
}

/* Histogram of device values into host hist (lo < hi checked or widened
 * by the caller as numpy does). */
int
fhist_dev (const float *d_v, const uint8_t *d_mask, size_t n, int nbins,
           double lo, double hi, uint64_t *hist)
{
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    QcScope sc;
    QC_GET (sc, unsigned long long, d_h, (size_t) nbins);
    QC_CK (cudaMemsetAsync (d_h, 0, (size_t) nbins * sizeof *d_h, QC_STREAM));
    size_t shm = nbins <= SHARED_BINS ? (size_t) nbins * sizeof (unsigned) : 0;
    k_fhist<<<red_blocks (n), RED_THREADS, shm, QC_STREAM>>> (
        d_v, d_mask, n, nbins, lo, hi, nbins / (hi - lo), d_h);
    QC_CK_LAUNCH ();
    static_assert (sizeof (unsigned long long) == sizeof (uint64_t), "64-bit");
    QC_CK (cudaMemcpyAsync (hist, d_h, (size_t) nbins * sizeof *hist,
                            cudaMemcpyDeviceToHost, QC_STREAM));
    QC_SYNC ();
    return 0;
}

/* The device bytes of a float image and its optional mask (QC_IN). */
int
in_fm (QcScope &sc, const qc_fimg_t *src, const qc_mask_t *mask,
       const float **d_v, const uint8_t **d_m)
{
    *d_v = static_cast<const float *> (qc_cuda_in (sc, QC_SPAN (src)));
    *d_m = NULL;
    if (!*d_v)
        return -1;
    if (mask) {
        *d_m = static_cast<const uint8_t *> (qc_cuda_in (sc, QC_SPAN (mask)));
        if (!*d_m)
            return -1;
    }
    return 0;
}

} // namespace

extern "C" int
qc_cuda_mask_count (const qc_mask_t *m, size_t *count)
{
    if (!qc_mask_valid (m) || !count || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (m->w, m->h);
    unsigned nb = red_blocks (n);
    unsigned long long hp[RED_BLOCKS];
    QcScope sc;
    QC_IN (sc, const uint8_t, d_m, m);
    QC_GET (sc, unsigned long long, d_p, nb);
    k_count<<<nb, RED_THREADS, 0, QC_STREAM>>> (d_m, n, d_p);
    QC_CK_LAUNCH ();
    QC_DOWN (hp, d_p, nb);
    QC_SYNC ();
    size_t c = 0;
    for (unsigned b = 0; b < nb; b++)
        c += (size_t) hp[b];
    *count = c;
    return 0;
}

extern "C" int
qc_cuda_fimg_stats (const qc_fimg_t *src, const qc_mask_t *mask,
                    qc_stats_t *out)
{
    if (!qc_fimg_valid (src) || !out || !qc_mask_fits (mask, src->w, src->h)
        || qc_cuda_begin ())
        return -1;
    QcScope sc;
    const float *d_v;
    const uint8_t *d_m;
    if (in_fm (sc, src, mask, &d_v, &d_m))
        return -1;
    return stats_dev<float> (d_v, 1, d_m, qc_npix (src->w, src->h), out);
}

extern "C" int
qc_cuda_rgb_stats (const qc_rgb_t *src, const qc_mask_t *mask,
                   qc_stats_t out[3])
{
    if (!qc_rgb_valid (src) || !out || !qc_mask_fits (mask, src->w, src->h)
        || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_v, src);
    const uint8_t *d_m = NULL;
    if (mask) {
        d_m = static_cast<const uint8_t *> (qc_cuda_in (sc, QC_SPAN (mask)));
        if (!d_m)
            return -1;
    }
    qc_stats_t st[3];
    for (int c = 0; c < 3; c++)
        if (stats_dev<uint8_t> (d_v + c, 3, d_m, n, &st[c]))
            return -1;
    memcpy (out, st, sizeof st);
    return 0;
}

extern "C" int
qc_cuda_rgb_histogram (const qc_rgb_t *src, const qc_mask_t *mask,
                       uint64_t hist[3][256])
{
    if (!qc_rgb_valid (src) || !hist || !qc_mask_fits (mask, src->w, src->h)
        || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const uint8_t, d_v, src);
    QC_GET (sc, unsigned long long, d_h, 3 * 256);
    const uint8_t *d_m = NULL;
    if (mask) {
        d_m = static_cast<const uint8_t *> (qc_cuda_in (sc, QC_SPAN (mask)));
        if (!d_m)
            return -1;
    }
    QC_CK (cudaMemsetAsync (d_h, 0, 3 * 256 * sizeof *d_h, QC_STREAM));
    k_rgb_hist<<<red_blocks (n), RED_THREADS, 0, QC_STREAM>>> (d_v, d_m, n, d_h);
    QC_CK_LAUNCH ();
    QC_CK (cudaMemcpyAsync (hist, d_h, 3 * 256 * sizeof (uint64_t),
                            cudaMemcpyDeviceToHost, QC_STREAM));
    QC_SYNC ();
    return 0;
}

extern "C" int
qc_cuda_fimg_histogram (const qc_fimg_t *src, const qc_mask_t *mask,
                        int nbins, double lo, double hi, uint64_t *hist)
{
    if (!qc_fimg_valid (src) || !hist || nbins < 1
        || !qc_mask_fits (mask, src->w, src->h) || !isfinite (lo)
        || !isfinite (hi) || lo > hi || qc_cuda_begin ())
        return -1;
    QcScope sc;
    const float *d_v;
    const uint8_t *d_m;
    if (in_fm (sc, src, mask, &d_v, &d_m))
        return -1;
    return fhist_dev (d_v, d_m, qc_npix (src->w, src->h), nbins, lo, hi, hist);
}

extern "C" int
qc_cuda_otsu (const qc_fimg_t *src, const qc_mask_t *mask, int nbins,
              double *thresh)
{
    if (!qc_fimg_valid (src) || !thresh || nbins < 2
        || !qc_mask_fits (mask, src->w, src->h) || qc_cuda_begin ())
        return -1;
    QcScope sc;
    const float *d_v;
    const uint8_t *d_m;
    if (in_fm (sc, src, mask, &d_v, &d_m))
        return -1;
    size_t n = qc_npix (src->w, src->h);
    qc_stats_t st;
    if (stats_dev<float> (d_v, 1, d_m, n, &st) || st.n == 0)
        return -1;
    if (!isfinite (st.min) || !isfinite (st.max))
        return -1;
    if (st.min == st.max) {     /* skimage returns the single value */
        *thresh = st.min;
        return 0;
    }
    uint64_t *hist = (uint64_t *) malloc (sizeof (uint64_t) * (size_t) nbins);
    double *counts = (double *) malloc (sizeof (double) * (size_t) nbins);
    double *centers = (double *) malloc (sizeof (double) * (size_t) nbins);
    int rc = -1;
    if (hist && counts && centers
        && fhist_dev (d_v, d_m, n, nbins, st.min, st.max, hist) == 0) {
        for (int i = 0; i < nbins; i++) {
            counts[i] = (double) hist[i];
            centers[i] = (qc_px_hist_edge (st.min, st.max, nbins, i)
                          + qc_px_hist_edge (st.min, st.max, nbins, i + 1)) / 2.0;
        }
        *thresh = centers[qc_px_otsu_index (counts, centers, nbins)];
        rc = 0;
    }
    free (hist);
    free (counts);
    free (centers);
    return rc;
}
