/* The arithmetic of DeconvolutionModule.separateStains as a pure function
 * over an RGB image and a mask, through the ops table.
 *
 * Per stain channel c (skimage separate_stains with the config's
 * X_from_rgb matrix): clip to [0, the 0.99 quantile of the channel over
 * the WHOLE image], then mean and std of the clipped values under the
 * mask (or of every pixel when use_mask is off), and an image of the
 * clipped values stretched from [min, max] under the mask to [0, 1],
 * zero outside the mask: what HistoQC saves as _deconv_c<c>.png. */
#ifndef QC_DECONV_ALGO_H
#define QC_DECONV_ALGO_H

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"

typedef struct qc_deconv_stats {
    double mean[3], std[3];
    int empty;    /* 1: the mask selects nothing; means and stds -100 */
} qc_deconv_stats_t;

/* mask NULL = use_mask off (every pixel). out_img: three img-sized
 * planes to receive the stretched images (values in [0, 1]; the
 * channels are worked out in them), or NULL.
 * With an empty mask the planes are all 0 (HistoQC's black images) and
 * out->empty is 1. A channel whose masked values are all equal gives a
 * black plane, as HistoQC's 0/0 does once img_as_ubyte casts its NaNs. */
int qc_deconv_stains (const qc_ops_t *ops, const qc_rgb_t *img,
                      const qc_mat3_t *stain, const qc_mask_t *mask,
                      qc_deconv_stats_t *out, qc_fimg_t *const out_img[3]);

#endif
