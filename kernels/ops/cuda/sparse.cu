/* Sparse reads and writes on the GPU (kernels/ops/cpu/sparse.c): a mask
 * sampled at a grid of points (only the samples come back), and host
 * values summed into a plane. Argument checks are the CPU backend's.
 * The images reach the device through QC_IN and QC_OUT (placement.cu).
 *
 * fimg_scatter adds with atomicAdd: where an index repeats, its values
 * are added in an order the CPU does not promise to match, so such sums
 * may differ from the CPU's in the last bits (a float rounding); where
 * every index is distinct they are the same numbers. */
#include "kernels/ops/cuda/cuda_internal.h"
extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}

namespace {

__global__ void
k_sample (const uint8_t *m, int w, const int32_t *cols, int ncols,
          const int32_t *rows, int nrows, uint8_t *out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) ncols * (size_t) nrows)
        return;
    int c = cols[i % (size_t) ncols], r = rows[i / (size_t) ncols];
    out[i] = c < 0 || r < 0 ? 0 : m[(size_t) r * (size_t) w + (size_t) c] != 0;
}

__global__ void
k_fill (float *dst, size_t n, float v)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = v;
}

__global__ void
k_scatter (const int32_t *idx, const float *val, size_t n, float *dst)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k < n)
        atomicAdd (&dst[idx[k]], val ? val[k] : 1.0f);
}

} // namespace

extern "C" int
qc_cuda_mask_sample (const qc_mask_t *m, const int32_t *cols, int ncols,
                     const int32_t *rows, int nrows, uint8_t *out)
{
    if (!qc_mask_sample_args_ok (m, cols, ncols, rows, nrows, out)
        || qc_cuda_begin ())
        return -1;
    size_t no = (size_t) ncols * (size_t) nrows;
    QcScope sc;
    QC_IN (sc, const uint8_t, d_m, m);
    QC_GET (sc, int32_t, d_c, (size_t) ncols);
    QC_GET (sc, int32_t, d_r, (size_t) nrows);
    QC_GET (sc, uint8_t, d_o, no);
    QC_UP (d_c, cols, (size_t) ncols);
    QC_UP (d_r, rows, (size_t) nrows);
    QC_LAUNCH (k_sample, no, d_m, m->w, d_c, ncols, d_r, nrows, d_o);
    QC_DOWN (out, d_o, no);
    QC_SYNC ();
    return 0;
}

extern "C" int
qc_cuda_fimg_scatter (const int32_t *idx, const float *val, size_t n,
                      double fill, qc_fimg_t *dst)
{
    if (!qc_fimg_scatter_args_ok (idx, n, fill, dst) || qc_cuda_begin ())
        return -1;
    size_t np = qc_npix (dst->w, dst->h);
    QcScope sc;
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_fill, np, d_d, np, (float) fill);
    if (n) {
        QC_GET (sc, int32_t, d_i, n);
        QC_UP (d_i, idx, n);
        float *d_v = NULL;
        if (val) {
            if (!(d_v = sc.get<float> (n)))
                return -1;
            QC_UP (d_v, val, n);
        }
        QC_LAUNCH (k_scatter, n, d_i, d_v, n, d_d);
    }
    QC_FINISH (sc);
    return 0;
}
