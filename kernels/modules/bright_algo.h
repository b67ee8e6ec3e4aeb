/* The arithmetic of BrightContrastModule (getContrast, getBrightnessGray,
 * getBrightnessByChannelinColorSpace) as pure functions over images and
 * masks, through the ops table.
 *
 * HistoQC works in float64 on skimage's images; here pixel planes are
 * float32 (the ops' images) and every sum, mean and standard deviation
 * is accumulated in double, so results agree with HistoQC's to about
 * 1e-7 relative (exactly, up to the last bit or two, for the raw RGB
 * channels, which are integers).
 *
 * Empty selections follow HistoQC: its brightness steps print the mean
 * and std of np.array (-100), i.e. -100.0 and 0.0; its contrast step
 * prints -100 for all three and warns. */
#ifndef QC_BRIGHT_ALGO_H
#define QC_BRIGHT_ALGO_H

#include "kernels/image/image.h"
#include "kernels/modules/module.h"
#include "kernels/modules/masks.h"
#include "kernels/ops/ops.h"

/* HistoQC's value for a statistic of no pixels. */
#define QC_NO_TISSUE_VALUE (-100.0)

typedef struct qc_mean_std {
    double mean, std;    /* numpy mean and population std */
    int empty;           /* 1: no pixel selected; mean -100, std 0 */
} qc_mean_std_t;

typedef struct qc_contrast {
    double tenengrad;    /* sqrt (sum sobel^2 under sobel_mask) / n */
    double michelson;    /* (max - min) / (max + min) */
    double rms;          /* population std */
    int empty;           /* 1: no pixel selected; all three -100 */
} qc_contrast_t;

/* HistoQC's getContrast on a gray image (skimage rgb2gray values):
 * sobel (gray)^2 summed over sobel_mask (HistoQC's mask_name, inverted
 * when asked; NULL = every pixel), divided by the number n of pixels of
 * pixel_mask (always img_mask_use in HistoQC; NULL = every pixel), and
 * Michelson and RMS contrast of the gray values under pixel_mask. A
 * Michelson contrast of an all-black selection is NaN, as numpy's 0/0. */
int qc_contrast_stats (const qc_ops_t *ops, const qc_fimg_t *gray,
                       const qc_mask_t *sobel_mask,
                       const qc_mask_t *pixel_mask, qc_contrast_t *out);

/* Mean and std of a plane under mask (NULL = every pixel); HistoQC's
 * getBrightnessGray on the rgb2gray plane. */
int qc_plane_mean_std (const qc_ops_t *ops, const qc_fimg_t *plane,
                       const qc_mask_t *mask, qc_mean_std_t *out);

/* HistoQC's getBrightnessByChannelinColorSpace: per channel of img in
 * space (QC_CS_RGB: the raw 0..255 values; any other: skimage's
 * convert_colorspace of [0, 1] RGB), mean and std under mask. */
int qc_channel_mean_std (const qc_ops_t *ops, const qc_rgb_t *img,
                         qc_colorspace_t space, const qc_mask_t *mask,
                         qc_mean_std_t out[3]);

/* ---- step bookkeeping (bright_params.c) ----------------------------- */

/* Longest prefix= (column names must fit a result key). */
#define QC_BRIGHT_MAX_PREFIX QC_MASKS_MAX_PREFIX

/* The parameters BrightContrastModule's steps share: prefix (columns
 * start with "<prefix>_" when set), limit_to_mask (default true),
 * mask_name (default img_mask_use) and invert (default false). */
typedef struct qc_bright_params {
    char prefix[QC_BRIGHT_MAX_PREFIX + 2];   /* "" or "<prefix>_" */
    int limit_to_mask;
    int invert;
    const char *mask_name;                    /* lives as long as sec */
} qc_bright_params_t;

int qc_bright_params (const qc_config_section_t *sec, qc_bright_params_t *p,
                      char *err, size_t errlen);

/* The mask HistoQC selects: s[mask_name], inverted when invert. *out is
 * a new mask the caller frees, or NULL when limit_to_mask is off. A
 * mask_name other than img_mask_use is a mask an earlier step kept
 * (looked up as written, then without HistoQC's "img_mask_" prefix); a
 * name nobody kept fails the slide, saying so. 0 or -1 (failed). */
/* The mask a brightness or contrast step cannot run without: its
 * mask_name= when limit_to_mask (qc_module_t needed_masks). */
int qc_bright_needed_masks (const qc_config_section_t *sec,
                            qc_module_add_column_fn *add, void *ctx);
int qc_bright_select_mask (qc_run_t *run, const qc_bright_params_t *p,
                           qc_mask_t **out);

/* Sets "<prefix><name>" to v as HistoQC's str () of a float prints it. */
int qc_bright_set (qc_run_t *run, const qc_bright_params_t *p,
                   const char *name, double v);

#endif
