/* The pixel classifier's LBP feature on the GPU (kernels/ops/cpu/lbp.c):
 * one thread a pixel, running pixel_math.h's qc_px_lbp. The sample
 * offsets are computed on the host as the CPU computes them (they travel
 * by value), so the codes are the CPU's. The images reach the device
 * through QC_IN and QC_OUT (placement.cu). */
#include <math.h>

#include "kernels/ops/cuda/cuda_internal.h"

namespace {

const int MAX_POINTS = 31;

struct lbp_offsets {
    double rp[MAX_POINTS], cp[MAX_POINTS];
};

__global__ void
k_lbp (const float *src, int w, int h, int points, lbp_offsets off,
       int method, float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= (size_t) w * h)
        return;
    int x = (int) (i % w), y = (int) (i / w);
    dst[i] = (float) qc_px_lbp (src, w, h, x, y, points, off.rp, off.cp,
                                (qc_lbp_method_t) method);
}

} // namespace

extern "C" int
qc_cuda_lbp (const qc_fimg_t *src, int points, double radius,
             qc_lbp_method_t method, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || points < 1 || points > MAX_POINTS
        || !(radius > 0) || !(radius <= 1000.0) || (int) method < 0
        || method > QC_LBP_VAR || qc_cuda_begin ())
        return -1;
    double r = (double) (float) radius;   /* skimage's R is a C float */
    lbp_offsets off;
    for (int i = 0; i < points; i++) {
        double a = 2.0 * M_PI * i / points;
        off.rp[i] = rint (-r * sin (a) * 1e5) / 1e5;
        off.cp[i] = rint (r * cos (a) * 1e5) / 1e5;
    }
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    QC_IN (sc, const float, d_s, src);
    QC_OUT (sc, float, d_d, dst);
    QC_LAUNCH (k_lbp, n, d_s, src->w, src->h, points, off, (int) method, d_d);
    QC_FINISH (sc);
    return 0;
}
