/* The boosted trees' prediction on the GPU (kernels/ops/cpu/trees.c):
 * one thread a pixel, running pixel_math.h's qc_px_trees_margin. The
 * margins are summed in the CPU's order; only the final exp of the
 * sigmoid may differ in the last bit. Each plane reaches the device
 * through QC_IN, the result leaves through QC_OUT (placement.cu); the
 * kernel gets the planes' device pointers in a small array. */
#include <math.h>

#include "kernels/ops/cuda/cuda_internal.h"
extern "C" {
#include "kernels/ops/trees.h"
}

namespace {

__global__ void
k_trees (const float *const *planes, size_t n, int ntrees, int depth,
         const uint8_t *feat, const float *thr, const float *leaf, double base,
         float *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    dst[i] = (float) qc_px_sigmoid (
        qc_px_trees_margin (planes, i, ntrees, depth, feat, thr, leaf, base));
}

} // namespace

extern "C" int
qc_cuda_trees_predict (const struct qc_trees *model,
                       const qc_fimg_t *const *planes, int nplanes,
                       qc_fimg_t *dst)
{
    if (!qc_trees_valid (model) || !planes || nplanes != model->nfeat
        || !qc_fimg_valid (dst))
        return -1;
    for (int j = 0; j < nplanes; j++)
        if (!qc_fimg_valid (planes[j]) || planes[j]->w != dst->w
            || planes[j]->h != dst->h)
            return -1;
    if (qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (dst->w, dst->h);
    size_t nsplit = (size_t) model->ntrees * model->depth;
    size_t nleaf = (size_t) model->ntrees << model->depth;
    QcScope sc;
    const float *ptrs[QC_TREES_MAX_FEAT];
    for (int j = 0; j < nplanes; j++) {
        ptrs[j] = static_cast<const float *> (qc_cuda_in (sc, QC_SPAN (planes[j])));
        if (!ptrs[j])
            return -1;
    }
    QC_GET (sc, const float *, d_planes, (size_t) nplanes);
    QC_GET (sc, uint8_t, d_feat, nsplit);
    QC_GET (sc, float, d_thr, nsplit);
    QC_GET (sc, float, d_leaf, nleaf);
    QC_OUT (sc, float, d_out, dst);
    QC_UP (d_planes, ptrs, (size_t) nplanes);
    QC_UP (d_feat, model->feat, nsplit);
    QC_UP (d_thr, model->thr, nsplit);
    QC_UP (d_leaf, model->leaf, nleaf);
    QC_LAUNCH (k_trees, n, d_planes, n, model->ntrees, model->depth, d_feat,
               d_thr, d_leaf, model->base, d_out);
    QC_FINISH (sc);
    return 0;
}
