/* Grey-level co-occurrence features (LocalTextureEstimationModule) as
 * pure functions: texture_glcm.c computes, texture_module.c is the step. */
#ifndef QC_TEXTURE_ALGO_H
#define QC_TEXTURE_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"

/* skimage graycoprops' properties, in HistoQC's default order. */
enum {
    QC_GLCM_CONTRAST = 0,
    QC_GLCM_DISSIMILARITY,
    QC_GLCM_HOMOGENEITY,
    QC_GLCM_ASM,
    QC_GLCM_ENERGY,
    QC_GLCM_CORRELATION,
    QC_GLCM_NFEATS
};

#define QC_GLCM_DISTANCE 5        /* HistoQC: distances=[5], angles=[0] */
#define QC_GLCM_MAX_LEVELS 256
#define QC_GLCM_MAX_PATCHES 100000
#define QC_GLCM_MAX_PATCH 4096
#define QC_GLCM_SEED 0x5EED7E57u  /* the fixed draw (HistoQC's is unseeded) */

typedef struct {
    int patch_size;               /* default 32 */
    int npatches;                 /* default 100 */
    int nlevels;                  /* default 8 */
    uint64_t seed;
} qc_glcm_params_t;

/* The feature index of a property name as skimage spells it
 * ("contrast", "dissimilarity", "homogeneity", "ASM", "energy",
 * "correlation"; case matters) given as len bytes; -1 if unknown. */
int qc_glcm_feature_parse (const char *name, size_t len);
const char *qc_glcm_feature_name (int feature);

/* The features of the patch of gray (values in [0, 1]) whose top-left
 * pixel is (x, y), patch x patch pixels cut short at the image's edge,
 * quantised by np.digitize (v, linspace (0, 1, nlevels), right=True),
 * GLCM at (distance, angle 0), symmetric, normalised. 0, or -1 on a bad
 * argument or no memory. */
int qc_glcm_patch_features (const qc_fimg_t *gray, int x, int y, int patch,
                            int nlevels, int distance,
                            double out[QC_GLCM_NFEATS]);

/* npatches patches at mask pixels drawn with replacement (p->seed):
 * the mean and population std of each feature over them, and (first, if
 * not NULL) the first patch's features. 0; 1 when the mask is empty
 * (nothing written); -1 on a bad argument or no memory. */
int qc_glcm_sample (const qc_fimg_t *gray, const qc_mask_t *mask,
                    const qc_glcm_params_t *p, double mean[QC_GLCM_NFEATS],
                    double std[QC_GLCM_NFEATS], double first[QC_GLCM_NFEATS]);

#endif
