/* The blur detectors as pure functions over images (no run, no slide), so
 * that tests can check them directly and both module wrappers stay thin.
 *
 * Two detectors:
 *  - qc_blur_histoqc_map: HistoQC's BlurDetectionModule.identifyBlurryRegions
 *    as it computes it: skimage rgb2gray, |laplace|, a Gaussian of sigma
 *    blur_radius, "<= blur_threshold". Faithful, including its failure on
 *    slides with much glass (glass has no Laplacian, and a sigma of 100 px
 *    spreads it over the tissue: everything falls under the threshold).
 *  - qc_blur_local_map: the project's detector (blur_local.c says how and
 *    why): the local fine-detail amplitude of tissue pixels only, against
 *    the slide's own typical in-focus amplitude, so glass around the
 *    tissue and the stain's density do not decide what is blurred. */
#ifndef QC_BLUR_ALGO_H
#define QC_BLUR_ALGO_H

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"

typedef struct {
    int blur_radius;          /* Gaussian sigma in work-size pixels */
    double blur_threshold;    /* blurry where the smoothed |laplace| <= it */
} qc_blur_histoqc_params_t;

/* HistoQC's code defaults (its config.ini uses 100 and .15 at 2.5x). */
#define QC_BLUR_HISTOQC_RADIUS 7
#define QC_BLUR_HISTOQC_THRESHOLD 0.1

/* blurry (gray's size) = gaussian (|laplace (gray)|, blur_radius) <=
 * blur_threshold, over the whole image (HistoQC restricts it to
 * img_mask_use only afterwards, at the mask's size). gray is skimage
 * rgb2gray in [0, 1]. 0, or -1 on a bad argument or no memory. */
int qc_blur_histoqc_map (const qc_ops_t *ops, const qc_fimg_t *gray,
                         const qc_blur_histoqc_params_t *p,
                         qc_mask_t *blurry);

typedef struct {
    int window;               /* odd side of the averaging box, work px */
    double relative_threshold;   /* blurry under this times the reference */
    double absolute_threshold;   /* blurry under this whatever the rest */
    double min_fraction;      /* of a box that must be measured to judge */
    int edge_erode;           /* tissue this close to glass is not measured
                                 (its Laplacian sees the edge) */
    double max_gray;          /* brighter pixels (glass, holes) are not
                                 measured */
} qc_blur_local_params_t;

/* The defaults, learned on generated slides at 2.5x (blur_local.c). */
#define QC_BLUR_LOCAL_WINDOW 31
#define QC_BLUR_LOCAL_RELATIVE 0.5
#define QC_BLUR_LOCAL_ABSOLUTE 0.06
#define QC_BLUR_LOCAL_MIN_FRACTION 0.25
#define QC_BLUR_LOCAL_EDGE_ERODE 2
#define QC_BLUR_LOCAL_MAX_GRAY 0.9
#define QC_BLUR_LOCAL_MAX_WINDOW 4095
#define QC_BLUR_LOCAL_MAX_ERODE 64

void qc_blur_local_defaults (qc_blur_local_params_t *p);

/* The sharpness map (gray's size): the mean |3x3 Laplacian| of the
 * measured tissue pixels (tissue, not brighter than max_gray, eroded by
 * edge_erode) in a window x window box around each pixel; -1 off tissue
 * and where under min_fraction of the box is measured (not judged).
 * tissue (or NULL: everything) is gray's size. 0, or -1 on a bad argument
 * or no memory. */
int qc_blur_local_sharpness (const qc_ops_t *ops, const qc_fimg_t *gray,
                             const qc_mask_t *tissue,
                             const qc_blur_local_params_t *p,
                             qc_fimg_t *sharpness);

/* The reference the classification below judges against: the median
 * sharpness of the judged pixels above absolute_threshold (the slide's
 * typical in-focus tissue); 0 when there are none. scratch: a mask of
 * sharpness's size, overwritten. 0, or -1 on a bad argument or no
 * memory. */
int qc_blur_local_reference (const qc_ops_t *ops, const qc_fimg_t *sharpness,
                             double absolute_threshold, qc_mask_t *scratch,
                             double *ref);

/* blurry = judged pixels whose sharpness is under max (absolute_threshold,
 * relative_threshold * the median sharpness of the judged pixels above
 * absolute_threshold); *threshold_used (if not NULL) gets that bound. */
int qc_blur_local_classify (const qc_ops_t *ops, const qc_fimg_t *sharpness,
                            const qc_blur_local_params_t *p,
                            qc_mask_t *blurry, double *threshold_used);

/* Both steps: blurry (gray's size) from gray and tissue. */
int qc_blur_local_map (const qc_ops_t *ops, const qc_fimg_t *gray,
                       const qc_mask_t *tissue,
                       const qc_blur_local_params_t *p, qc_mask_t *blurry,
                       double *threshold_used);

#endif
