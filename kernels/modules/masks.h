/* The tissue-mask steps (LightDarkModule, MorphologyModule,
 * BasicModule.final*, SaveModule): their algorithms as pure functions
 * over kernels/image/image.h buffers (unit-tested directly, and the same calls
 * whichever ops backend runs them), and the bookkeeping every step
 * shares (HistoQC's printMaskHelper column, the "NO tissue remains"
 * warning, region count columns, parameter reading).
 *
 * Each module file (lightdark_*.c, morph_*.c, final_*.c, save_*.c) holds
 * one step's descriptor and its thin run () wrapper. */
#ifndef QC_MODULES_MASKS_H
#define QC_MODULES_MASKS_H

#include <stddef.h>

#include "kernels/image/image.h"
#include <stdbool.h>

#include "kernels/modules/module.h"
#include "kernels/ops/ops.h"

/* ---- algorithms ------------------------------------------------------ */

/* LightDarkModule.getIntensityThresholdPercent: pixels whose gray value
 * (skimage rgb2gray, [0, 1]) lies strictly in (lower, upper) and whose
 * RGB population std (0..255) lies strictly in (lower_std, upper_std);
 * inverted when invert. Infinite bounds are open sides. */
typedef struct {
    double lower, upper;          /* gray; default -inf, inf */
    double lower_std, upper_std;  /* RGB std; default -inf, inf */
    int invert;
} qc_ld_percent_params_t;

int qc_ld_percent_mask (const qc_ops_t *ops, const qc_rgb_t *rgb,
                        const qc_fimg_t *gray,
                        const qc_ld_percent_params_t *p, qc_mask_t *out);

/* LightDarkModule.getIntensityThresholdOtsu: gray < Otsu's threshold of
 * the whole image (256 bins, skimage threshold_otsu); with local, the
 * threshold is skimage.filters.rank.otsu over a disk of radius, computed
 * on the 8-bit image (img_as_ubyte) and compared in 8-bit units (see
 * lightdark_otsu.c for how this differs from HistoQC). *thresh gets the
 * global threshold (NaN with local). */
int qc_ld_otsu_mask (const qc_ops_t *ops, const qc_fimg_t *gray, int local,
                     int radius, int invert, qc_mask_t *out, double *thresh);

/* LightDarkModule.minimumPixelIntensityNeighborhoodFiltering: the 8-bit
 * gray ((gray * 255) truncated, as numpy's astype (uint8)) minimum over a
 * disk of radius is above threshold; inverted when invert. */
int qc_ld_minfilter_mask (const qc_ops_t *ops, const qc_fimg_t *gray,
                          int radius, int threshold, int invert,
                          qc_mask_t *out);

/* LightDarkModule.removeBrightestPixels: the gray values split into
 * three clusters by k-means (HistoQC: scikit-learn's KMeans of every
 * pixel's gray, n_clusters 3); set where gray is above the darkest value
 * of the brightest cluster (strictly, as HistoQC compares: that value
 * itself is not); inverted when invert. Here the clusters are the exact
 * least-squares 3-means of the image's gray histogram (QC_LD_KMEANS_BINS
 * equal bins between its darkest and brightest gray; lightdark_brightest.c
 * says how that differs). *thresh (may be NULL) gets the darkest value of
 * the brightest cluster. */
#define QC_LD_KMEANS_BINS 1024
int qc_ld_brightest_mask (const qc_ops_t *ops, const qc_fimg_t *gray, int invert,
                          qc_mask_t *out, double *thresh);

/* LightDarkModule.saveEqualisedImage: out (w * h bytes) is the 8-bit
 * gray (rgb2gray * 255, truncated) with its histogram equalised as
 * skimage's equalize_hist and img_as_ubyte give it. */
int qc_ld_equalised (const qc_rgb_t *rgb, uint8_t *out);

/* LightDarkModule.removeFolds (the project's own): pixels of use whose
 * smoothed optical density (R + G + B, Gaussian sigma) is over ratio
 * times the mean of the tissue around them (window x window, the mean
 * taken again without the first pass's candidates) and whose shares of
 * R's and B's density are within seed_shift of the tissue around, in
 * pieces of at least min_size pixels, are seeds; the folds are grown
 * from them over pixels over grow_ratio (<= ratio) whose shares are
 * within max_shift (0: no colour checked, seed_shift neither), in
 * 8-connected pieces of at least min_size pixels.
 * Sizes are pixels of img; the comparison runs on an image downscale
 * times smaller. out is img-sized. */
typedef struct {
    double ratio, sigma, max_shift, grow_ratio, seed_shift;
    int window, min_size, downscale;
} qc_folds_params_t;

int qc_ld_folds_mask (const qc_ops_t *ops, const qc_rgb_t *img,
                      const qc_mask_t *use, const qc_folds_params_t *p,
                      qc_mask_t *out);

/* MorphologyModule.removeFatlikeTissue: the fat mask to remove from
 * mask: holes smaller than fat_cell_size (4-connected, border-touching
 * ones included, as remove_small_holes), less specks under 9 pixels,
 * dilated by a kernel_size square, keeping only the dilated components
 * (4-connected) larger than max_keep_size. */
int qc_morph_fatlike (const qc_ops_t *ops, const qc_mask_t *mask,
                      int fat_cell_size, int kernel_size, int max_keep_size,
                      qc_mask_t *fat);

/* BasicModule.finalProcessingSpur: mask opened by a disk of radius. */
int qc_final_spur (const qc_ops_t *ops, const qc_mask_t *mask, int radius,
                   qc_mask_t *opened);

/* SaveModule.saveFinalMask's _fuse.png (HistoQC's blend2Images): R and B
 * are the mask (0 or 255), G the gray image as img_as_ubyte; by the
 * backend (ops->fuse_rgb), where the images are. */
int qc_save_fuse (const qc_ops_t *ops, const qc_mask_t *mask,
                  const qc_fimg_t *gray, qc_rgb_t *out);

/* The size of SaveModule.saveMacro's image: the longer side dim, the
 * other Python's round (dim * short / long) (half to even), at least 1. */
void qc_save_macro_size (int64_t w, int64_t h, int dim, int *out_w,
                         int *out_h);

/* ---- step bookkeeping ------------------------------------------------ */

/* Ends a step that changed img_mask_use (mask, already updated in place)
 * from before: sets column to HistoQC's mask statistic (column may be
 * NULL) and, when no tissue is left, adds HistoQC's warning "After
 * <what> NO tissue remains detectable! Downstream modules likely to be
 * incorrect/fail". 0 or -1. */
int qc_masks_finish (qc_run_t *run, const char *column, const char *what,
                     const qc_mask_t *mask, const qc_mask_t *before);

/* The common end of HistoQC's two "bright" steps (removeBrightestPixels,
 * minimumPixelIntensityNeighborhoodFiltering): img_mask_use (use) &=
 * keep, keep kept as img_mask_bright, _bright.png shows what went
 * (before & ~keep), brightestPixels the statistic, what the warning's
 * step. keep is used up (changed, not freed). 0 or -1 (said). */
int qc_masks_keep_bright (qc_run_t *run, qc_mask_t *use, const qc_mask_t *before,
                          qc_mask_t *keep, const char *what);

/* The common end of a morphology step: saves changed as _<file>.png,
 * sets img_mask_use to after (copied), the region columns of changed
 * (prefix may be NULL: none), column and the empty-mask warning (see
 * qc_masks_finish). before is img_mask_use as the step found it. */
int qc_masks_replace (qc_run_t *run, const qc_mask_t *after,
                      const qc_mask_t *changed, const qc_mask_t *before,
                      const char *file, const char *prefix,
                      const char *column, const char *what);

/* The shape of every mask-cleaning step (fillSmallHoles, removeSmallObjects,
 * removeFatlikeTissue, finalProcessingSpur, finalProcessingArea): compute
 * img_mask_use's new value from it, take the pixels that changed (added
 * when the step fills, removed otherwise) and end as qc_masks_replace. */
typedef int (qc_mask_transform_fn) (const qc_ops_t *ops, const qc_mask_t *use,
                                    const void *arg, qc_mask_t *after);
typedef struct {
    const char *file;          /* "_<file>.png" shows the changed pixels */
    const char *prefix;        /* region columns, or NULL */
    const char *column;        /* the mask statistic's column */
    const char *what;          /* names the step in the empty-mask warning */
    bool fills;                /* adds pixels (holes) instead of removing */
    const char *keep;          /* the changed pixels are kept under this
                                  name (HistoQC's s["img_mask_<keep>"],
                                  for a later mask_name=), or NULL */
} qc_mask_edit_t;
int qc_masks_edit (qc_run_t *run, const qc_mask_edit_t *edit,
                   qc_mask_transform_fn *transform, const void *arg);

/* One integer parameter and mask_statistics: what most cleaning steps
 * read, in check () and in run (). */
typedef struct {
    const char *key;
    int def, lo, hi;
} qc_int_param_t;
int qc_masks_read_int (const qc_config_section_t *sec, const qc_int_param_t *p,
                       int *out, char *err, size_t errlen);

/* run () of a cleaning step with one integer parameter: reads it from
 * the step's section and edits img_mask_use with transform (whose arg is
 * a const int * to the value). */
int qc_masks_edit_int (qc_run_t *run, const qc_int_param_t *param,
                       const qc_mask_edit_t *edit,
                       qc_mask_transform_fn *transform);

/* A transform: keeps the 4-connected pieces of at least *(int *) arg
 * pixels (skimage remove_small_objects). */
int qc_masks_keep_large (const qc_ops_t *ops, const qc_mask_t *use,
                         const void *arg, qc_mask_t *after);

/* The prefix= and mask_name= of BrightContrastModule's and
 * LocalTextureEstimationModule's steps: out is "<prefix>_", or "" when
 * prefix is NULL or empty; prefix becomes part of results.tsv's header,
 * so at most QC_MASKS_MAX_PREFIX characters and no tabs or line breaks;
 * mask_name must not be empty. 0, or -1 with the reason. */
#define QC_MASKS_MAX_PREFIX 64
int qc_masks_prefix_and_mask (const qc_config_section_t *sec,
                              const char *prefix, const char *mask_name,
                              char out[QC_MASKS_MAX_PREFIX + 2], char *err,
                              size_t errlen);

/* HistoQC's <prefix>_num_regions, _mean_area and _max_area of the
 * 8-connected components of found (skimage.measure.label's default),
 * printed as HistoQC prints them ("0" for all three when there are none,
 * else e.g. "3", "17.0", "300"). */
int qc_masks_region_columns (qc_run_t *run, const char *prefix,
                             const qc_mask_t *found);

/* Parameter reading with HistoQC's conversions, for check () and run ():
 * int () (base 10 integer), float () (decimal, also inf / -inf /
 * infinity, any case, as Python's float accepts), strtobool. The first
 * failure writes a message naming section, key and value. */
int qc_masks_get_int (const qc_config_section_t *sec, const char *key,
                      long long def, long long lo, long long hi, int *out,
                      char *err, size_t errlen);
int qc_masks_get_float (const qc_config_section_t *sec, const char *key,
                        double def, double *out, char *err, size_t errlen);
/* A value usable as a file suffix and a column: 1 to 63 letters,
 * digits, '_', '-' or '.', no "..". def NULL: the key is required. */
int qc_masks_get_word (const qc_config_section_t *sec, const char *key,
                       const char *def, const char **out, char *err,
                       size_t errlen);
/* The name= of LightDarkModule steps (default "classTask"), checked to
 * be usable as a file suffix and column (qc_masks_get_word). */
int qc_masks_get_name (const qc_config_section_t *sec, const char **out,
                       char *err, size_t errlen);
/* param_columns (module.h) of a step whose one column is its name=
 * (default "classTask"): the LightDarkModule and ClassificationModule
 * steps. The step's own check validates the name. */
int qc_masks_name_column (const qc_config_section_t *sec,
                          qc_module_add_column_fn *add, void *ctx);
/* mask_statistics, which every mask step accepts as an override. */
int qc_masks_check_stat (const qc_config_section_t *sec, char *err,
                         size_t errlen);

/* A copy of img_mask_use (the "before" of a step), or NULL after
 * qc_run_fail. */
qc_mask_t *qc_masks_snapshot (qc_run_t *run);

#endif
