/* The pixel classifier's LBP feature and the boosted trees' prediction on
 * the GPU (kernels/ops/cpu/lbp.c, trees.c). One thread a
 * pixel, running pixel_math.h's qc_px_lbp and qc_px_trees_margin. LBP's
 * sample offsets are computed on the host as the CPU computes them (they
 * travel by value), so the codes are the CPU's; the trees' margins are
 * summed in the same order; only the final exp of the sigmoid may differ
 * in the last bit. Frangi, Gabor and the median filter run on the CPU
 * (ops_table.c). */
#include <math.h>

#include "kernels/ops/cuda/cuda_internal.h"
extern "C" {
#include "kernels/ops/trees.h"
}

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
    QC_GET (sc, float, d_s, n);
    QC_GET (sc, float, d_d, n);
    QC_UP (d_s, src->px, n);
    QC_LAUNCH (k_lbp, n, d_s, src->w, src->h, points, off, (int) method, d_d);
    QC_DOWN (dst->px, d_d, n);
    QC_SYNC ();
    return 0;
}

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
    QC_GET (sc, float, d_all, n * (size_t) nplanes);
    QC_GET (sc, const float *, d_planes, (size_t) nplanes);
    QC_GET (sc, uint8_t, d_feat, nsplit);
    QC_GET (sc, float, d_thr, nsplit);
    QC_GET (sc, float, d_leaf, nleaf);
    QC_GET (sc, float, d_out, n);
    const float *ptrs[QC_TREES_MAX_FEAT];
    for (int j = 0; j < nplanes; j++) {
        QC_UP (d_all + (size_t) j * n, planes[j]->px, n);
        ptrs[j] = d_all + (size_t) j * n;
    }
    QC_UP (d_planes, ptrs, (size_t) nplanes);
    QC_UP (d_feat, model->feat, nsplit);
    QC_UP (d_thr, model->thr, nsplit);
    QC_UP (d_leaf, model->leaf, nleaf);
    QC_LAUNCH (k_trees, n, d_planes, n, model->ntrees, model->depth, d_feat,
               d_thr, d_leaf, model->base, d_out);
    QC_DOWN (dst->px, d_out, n);
    QC_SYNC ();
    return 0;
}
