/* The pixel classifier's median feature on the GPU (kernels/ops/cpu/
 * median.c): one thread a pixel gathers the disk's values and selects
 * the middle one with pixel_math.h's qc_px_median_at, the CPU's own
 * per-pixel code, so the two pick the same value. A thread's values
 * live in a local array of MAX_K floats (radius 6 and under, K <= 113;
 * HistoQC's median_disk_size is 3, K = 29); a larger disk would need local memory
 * for every resident thread of the GPU, so that runs the CPU backend's
 * op (which brings the images to the host). The images reach the device
 * through QC_IN and QC_OUT (placement.cu). */
#include "kernels/ops/cuda/cuda_internal.h"
extern "C" {
#include "kernels/ops/cpu/cpu_ops.h"
}

namespace {

const int MAX_GPU_RADIUS = 6;
const int MAX_K = 113;            /* the disk of radius 6 has 113 pixels */

struct disk_offsets {
    int dx[MAX_K], dy[MAX_K];
};

__global__ void
k_median (const float *src, int w, int h, disk_offsets d, int k, int radius,
          int border, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    float v[MAX_K];
    dst[i] = qc_px_median_at (src, w, h, (int) (i % w), (int) (i / w), d.dx,
                              d.dy, k, radius, border, v);
}

} // namespace

extern "C" int
qc_cuda_median_disk (const qc_fimg_t *src, int radius, qc_border_t border,
                     qc_fimg_t *dst)
{
    if (!qc_median_disk_args_ok (src, radius, border, dst))
        return -1;
    if (radius > MAX_GPU_RADIUS)
        return qc_ops_cpu ()->median_disk (src, radius, border, dst);
    disk_offsets d;
    int k = qc_disk_offsets (radius, d.dx, d.dy);
    if (qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_median, n, d_s, src->w, src->h, d, k, radius, (int) border,
               d_d);
    QC_FINISH (sc);
    return 0;
}
