/* BubbleRegionByRegion.detectSmoothness as a pure function (see
 * bubble_smoothness.c), for tests and the module wrapper. */
#ifndef QC_BUBBLE_ALGO_H
#define QC_BUBBLE_ALGO_H

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"

typedef struct {
    double threshold;         /* flat where |mean - pixel| < it */
    int kernel_size;          /* side of the box mean */
    long long min_object_size;   /* flat regions and holes smaller go */
} qc_bubble_params_t;

/* HistoQC's code defaults (its config.ini: min_object_size 500). */
#define QC_BUBBLE_THRESHOLD 0.01
#define QC_BUBBLE_KERNEL 10
#define QC_BUBBLE_MIN_OBJECT 100
#define QC_BUBBLE_MAX_KERNEL 4096

/* flat (gray's size): |box_mean (gray, k) - gray| < threshold (zero
 * outside the image, as scipy's convolve2d 'same'), without 4-connected
 * flat regions and holes under min_object_size pixels. 0, or -1 on a bad
 * argument or no memory. */
int qc_bubble_flat_map (const qc_ops_t *ops, const qc_fimg_t *gray,
                        const qc_bubble_params_t *p, qc_mask_t *flat);

#endif
