/* Sparse reads and writes of planes (ops.h): a mask sampled at a grid
 * of points, and values that host code measured summed into a plane.
 * Why ops: a GPU lane's planes stay on the GPU, and the focus step
 * (BlurDetectionModule.identifyFocusFaults) needs only a byte per 8 x 8
 * block of them, not the planes (issue 18). */
#include "kernels/ops/cpu/cpu_ops.h"

int
qc_mask_sample_args_ok (const qc_mask_t *m, const int32_t *cols, int ncols,
                        const int32_t *rows, int nrows, const uint8_t *out)
{
    if (!qc_mask_valid (m) || !cols || !rows || !out || ncols < 1
        || nrows < 1)
        return 0;
    for (int i = 0; i < ncols; i++)
        if (cols[i] < -1 || cols[i] >= m->w)
            return 0;
    for (int j = 0; j < nrows; j++)
        if (rows[j] < -1 || rows[j] >= m->h)
            return 0;
    return 1;
}

int
qc_fimg_scatter_args_ok (const int32_t *idx, size_t n, double fill,
                         const qc_fimg_t *dst)
{
    if (!qc_fimg_valid (dst) || (n && !idx) || fill != fill)
        return 0;
    size_t np = qc_npix (dst->w, dst->h);
    for (size_t k = 0; k < n; k++)
        if (idx[k] < 0 || (size_t) idx[k] >= np)
            return 0;
    return 1;
}

int
qc_cpu_mask_sample (const qc_mask_t *m, const int32_t *cols, int ncols,
                    const int32_t *rows, int nrows, uint8_t *out)
{
    if (!qc_mask_sample_args_ok (m, cols, ncols, rows, nrows, out))
        return -1;
    for (int j = 0; j < nrows; j++) {
        uint8_t *o = out + (size_t) j * (size_t) ncols;
        if (rows[j] < 0) {
            for (int i = 0; i < ncols; i++)
                o[i] = 0;
            continue;
        }
        const uint8_t *row = m->px + (size_t) rows[j] * (size_t) m->w;
        for (int i = 0; i < ncols; i++)
            o[i] = cols[i] < 0 ? 0 : row[cols[i]] != 0;
    }
    return 0;
}

int
qc_cpu_fimg_scatter (const int32_t *idx, const float *val, size_t n,
                     double fill, qc_fimg_t *dst)
{
    if (!qc_fimg_scatter_args_ok (idx, n, fill, dst))
        return -1;
    size_t np = qc_npix (dst->w, dst->h);
    float f = (float) fill;
    for (size_t i = 0; i < np; i++)
        dst->px[i] = f;
    for (size_t k = 0; k < n; k++)
        dst->px[idx[k]] += val ? val[k] : 1.0f;
    return 0;
}
