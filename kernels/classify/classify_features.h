/* The per-pixel features of ClassificationModule.byExampleWithFeatures:
 * which ones a config section asks for (HistoQC's features= lines and
 * their parameters) and computing them as float planes.
 *
 * HistoQC's features and the planes each adds, in the order listed:
 *   rgb       3: R, G, B as 0..255 values
 *   laplace   1: skimage laplace of rgb2gray (3x3 whatever laplace_ksize)
 *   lbp       1: local_binary_pattern (rgb2gray, lbp_points, lbp_radius,
 *               lbp_method)
 *   gaussian  1: gaussian (rgb2gray, gaussian_sigma), or 3 (the channels
 *               in [0, 1]) with gaussian_multichan
 *   median    1: median (rgb2gray, disk (median_disk_size))
 *   gabor     gabor_theta x |gabor_sigma| x |gabor_frequency| planes:
 *               the real Gabor response for theta = i pi / 4 (i <
 *               gabor_theta; HistoQC divides by 4 whatever gabor_theta
 *               is), each sigma, each frequency, border WRAP
 *   frangi    1: frangi (rgb2gray, sigmas = np.arange (
 *               frangi_scale_range[0], frangi_scale_range[1],
 *               frangi_scale_step), beta = frangi_beta1, gamma =
 *               frangi_beta2, frangi_black_ridges)
 * Note the frangi sigmas: HistoQC passes scale_range= and scale_step=,
 * which skimage 0.19 turns into that range (1, 3, 5, 7, 9 by default). */
#ifndef QC_CLASSIFY_FEATURES_H
#define QC_CLASSIFY_FEATURES_H

#include <stddef.h>

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
#include "shared/config.h"

#define QC_FEAT_MAX_KINDS  16
#define QC_FEAT_MAX_TUPLE  16
#define QC_FEAT_MAX_PLANES 255
/* frangi scales (the ops' limit, QC_FRANGI_MAX_SIGMAS) */
#define QC_FEAT_MAX_FRANGI 32

typedef enum {
    QC_FEAT_RGB = 0,
    QC_FEAT_LAPLACE,
    QC_FEAT_LBP,
    QC_FEAT_GAUSSIAN,
    QC_FEAT_MEDIAN,
    QC_FEAT_GABOR,
    QC_FEAT_FRANGI
} qc_feat_kind_t;

typedef struct {
    int nkinds;
    qc_feat_kind_t kinds[QC_FEAT_MAX_KINDS];
    int laplace_ksize;
    int lbp_points;
    double lbp_radius;
    qc_lbp_method_t lbp_method;
    int gaussian_sigma;
    int gaussian_multichan;
    int median_disk_size;
    int gabor_theta;
    int gabor_nsigma, gabor_nfreq;
    double gabor_sigma[QC_FEAT_MAX_TUPLE];
    double gabor_freq[QC_FEAT_MAX_TUPLE];
    int frangi_nsigma;
    double frangi_sigma[QC_FEAT_MAX_FRANGI];
    double frangi_beta, frangi_gamma;
    int frangi_black_ridges;
} qc_feature_spec_t;

/* Reads features= and every feature parameter with HistoQC's defaults.
 * No features, an unknown feature name or a bad value: -1 with a
 * message naming the section, key and value. */
int qc_feature_spec_parse (const qc_config_section_t *sec,
                           qc_feature_spec_t *out, char *err, size_t errlen);

/* Number of planes the spec produces (at most QC_FEAT_MAX_PLANES). */
int qc_feature_spec_planes (const qc_feature_spec_t *spec);

/* Computes the planes for img with the ops backend: planes[0 ..
 * qc_feature_spec_planes) become new images of img's size (the caller
 * frees them with qc_feature_planes_free). -1 on a bad argument or when
 * memory runs out (nothing is left allocated). */
int qc_features_compute (const qc_ops_t *ops, const qc_rgb_t *img,
                         const qc_feature_spec_t *spec, qc_fimg_t **planes);
void qc_feature_planes_free (qc_fimg_t **planes, int n);

/* Parses a Python tuple of numbers as HistoQC's make_tuple reads
 * "(1,10)" or "(0.05, 0.25)" (a bare number is a 1-tuple); at most max
 * values. 0 or -1. */
int qc_feature_parse_tuple (const char *text, double *out, int max, int *n);

#endif
