/* DeconvolutionModule's arithmetic; see deconv_algo.h. */
#include "kernels/modules/deconv_algo.h"


static int
plane_fits (const qc_fimg_t *p, int w, int h)
{
    return qc_fimg_valid (p) && p->w == w && p->h == h;
}

/* One channel: clip, statistics, and (stretch) the stretched image in
 * dc's place. */
static int
one_channel (const qc_ops_t *ops, qc_fimg_t *dc, const qc_mask_t *mask,
             double *mean, double *std, int stretch)
{
    double q;
    if (ops->fimg_quantile (dc, NULL, 0.99, &q) != 0)
        return -1;
    /* The channel is already >= 0 (separate_stains clips below at 0);
     * numpy's clip (dc, 0, q) with q >= 0. */
    if (!(q >= 0.0))
        q = 0.0;
    if (ops->fimg_affine (dc, 1.0, 0.0, 0.0, q, dc) != 0)
        return -1;
    qc_stats_t st;
    if (ops->fimg_stats (dc, mask, &st) != 0)
        return -1;
    *mean = st.mean;
    *std = st.std;
    if (!stretch)
        return 0;
    if (!(st.max > st.min))
        return qc_fimg_zero (dc);
    double scale = 1.0 / (st.max - st.min);
    if (ops->fimg_affine (dc, scale, -st.min * scale, 0.0, 1.0, dc) != 0)
        return -1;
    return mask ? ops->fimg_where (mask, dc, 0.0, dc) : 0;
}

int
qc_deconv_stains (const qc_ops_t *ops, const qc_rgb_t *img,
                  const qc_mat3_t *stain, const qc_mask_t *mask,
                  qc_deconv_stats_t *out, qc_fimg_t *const out_img[3])
{
    if (!ops || !stain || !out || !qc_rgb_valid (img))
        return -1;
    if (mask && (!qc_mask_valid (mask) || mask->w != img->w
                 || mask->h != img->h))
        return -1;
    for (int c = 0; out_img && c < 3; c++)
        if (!plane_fits (out_img[c], img->w, img->h))
            return -1;
    size_t used = 0;
    if (mask && ops->mask_count (mask, &used) != 0)
        return -1;
    if (mask && used == 0) {
        for (int c = 0; c < 3; c++) {
            out->mean[c] = out->std[c] = -100.0;
            if (out_img)
                qc_fimg_zero (out_img[c]);
        }
        out->empty = 1;
        return 0;
    }
    /* the channels are made in out_img's planes and stretched there:
     * three planes of the image's size, not six (1.3 GB less at 10x) */
    qc_fimg_t *own[3] = { NULL, NULL, NULL };
    qc_fimg_t *dc[3];
    for (int c = 0; c < 3; c++)
        dc[c] = out_img ? out_img[c] : (own[c] = qc_fimg_new (img->w, img->h));
    int rc = -1;
    if (dc[0] && dc[1] && dc[2]
        && ops->separate_stains (img, stain, dc[0], dc[1], dc[2]) == 0) {
        rc = 0;
        for (int c = 0; c < 3 && rc == 0; c++)
            rc = one_channel (ops, dc[c], mask, &out->mean[c], &out->std[c],
                              out_img != NULL);
    }
    for (int c = 0; c < 3; c++)
        qc_fimg_destroy (&own[c]);
    if (rc == 0)
        out->empty = 0;
    return rc;
}
