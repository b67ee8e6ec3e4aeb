/* BrightContrastModule's arithmetic; see bright_algo.h. */
#include "kernels/modules/bright_algo.h"

#include <math.h>

static void
set_empty (qc_mean_std_t *out)
{
    out->mean = QC_NO_TISSUE_VALUE;
    out->std = 0.0;
    out->empty = 1;
}

int
qc_plane_mean_std (const qc_ops_t *ops, const qc_fimg_t *plane,
                   const qc_mask_t *mask, qc_mean_std_t *out)
{
    if (!ops || !out || !qc_fimg_valid (plane)
        || !qc_mask_fits (mask, plane->w, plane->h))
        return -1;
    qc_stats_t st;
    if (ops->fimg_stats (plane, mask, &st) != 0)
        return -1;
    if (st.n == 0) {
        set_empty (out);
        return 0;
    }
    out->mean = st.mean;
    out->std = st.std;
    out->empty = 0;
    return 0;
}

int
qc_channel_mean_std (const qc_ops_t *ops, const qc_rgb_t *img,
                     qc_colorspace_t space, const qc_mask_t *mask,
                     qc_mean_std_t out[3])
{
    if (!ops || !out || !qc_rgb_valid (img) || (int) space < 0
        || space >= QC_CS_COUNT || !qc_mask_fits (mask, img->w, img->h))
        return -1;
    if (space == QC_CS_RGB) {
        /* The uint8 values themselves: integer sums, exact means. */
        qc_stats_t st[3];
        if (ops->rgb_stats (img, mask, st) != 0)
            return -1;
        for (int c = 0; c < 3; c++) {
            if (st[c].n == 0) {
                set_empty (&out[c]);
                continue;
            }
            out[c].mean = st[c].mean;
            out[c].std = st[c].std;
            out[c].empty = 0;
        }
        return 0;
    }
    qc_fimg_t *p[3] = { qc_fimg_new (img->w, img->h),
                        qc_fimg_new (img->w, img->h),
                        qc_fimg_new (img->w, img->h) };
    int rc = -1;
    if (p[0] && p[1] && p[2]
        && ops->rgb_to_space (img, space, p[0], p[1], p[2]) == 0) {
        rc = 0;
        for (int c = 0; c < 3 && rc == 0; c++)
            rc = qc_plane_mean_std (ops, p[c], mask, &out[c]);
    }
    for (int c = 0; c < 3; c++)
        qc_fimg_destroy (&p[c]);
    return rc;
}

int
qc_contrast_stats (const qc_ops_t *ops, const qc_fimg_t *gray,
                   const qc_mask_t *sobel_mask, const qc_mask_t *pixel_mask,
                   qc_contrast_t *out)
{
    if (!ops || !out || !qc_fimg_valid (gray)
        || !qc_mask_fits (sobel_mask, gray->w, gray->h)
        || !qc_mask_fits (pixel_mask, gray->w, gray->h))
        return -1;
    qc_stats_t px;
    if (ops->fimg_stats (gray, pixel_mask, &px) != 0)
        return -1;
    if (px.n == 0) {
        out->tenengrad = out->michelson = out->rms = QC_NO_TISSUE_VALUE;
        out->empty = 1;
        return 0;
    }
    /* skimage's sobel is computed on the whole image (its border is
     * REFLECT) and only then restricted to the mask, as HistoQC notes. */
    qc_fimg_t *sob = qc_fimg_new (gray->w, gray->h);
    if (!sob)
        return -1;
    qc_stats_t sq;
    int rc = ops->sobel (gray, QC_BORDER_REFLECT, sob);
    if (rc == 0)
        rc = ops->fimg_arith (sob, sob, QC_ARITH_MUL, sob);
    if (rc == 0)
        rc = ops->fimg_stats (sob, sobel_mask, &sq);
    qc_fimg_destroy (&sob);
    if (rc != 0)
        return -1;
    out->tenengrad = sqrt (sq.sum) / (double) px.n;
    /* numpy divides 0 by 0 to NaN (with a warning) for an all-black
     * selection; C would too, but say so rather than rely on it. */
    double den = px.max + px.min;
    out->michelson = den != 0.0 ? (px.max - px.min) / den : NAN;
    out->rms = px.std;
    out->empty = 0;
    return 0;
}
