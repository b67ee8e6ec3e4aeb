/* BrightContrastModule.getContrast, as HistoQC computes it:
 *
 *   gray  = rgb2gray (image at image_work_size)
 *   sobel = skimage sobel (gray)^2, over the whole image
 *   with limit_to_mask: sobel under s[mask_name] (inverted when invert),
 *                       gray under img_mask_use (whatever mask_name is)
 *   <prefix>tenenGrad_contrast = sqrt (sum sobel) / number of gray values
 *   <prefix>michelson_contrast = (max - min) / (max + min)
 *   <prefix>rms_contrast       = population std of the gray values
 *
 * With no gray value left HistoQC prints -100 for all three and warns. */
#include "kernels/modules/bright_algo.h"

#include <stdio.h>

#include "kernels/run/run.h"

static const char *const names[] = {
    "tenenGrad_contrast", "michelson_contrast", "rms_contrast", NULL
};

static int
check_contrast (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_bright_params_t p;
    return qc_bright_params (sec, &p, err, errlen);
}

static int
contrast_columns (const qc_config_section_t *sec, qc_module_add_column_fn *add,
                  void *ctx)
{
    qc_bright_params_t p;
    char err[256], col[QC_RESULT_MAX_KEY];
    if (qc_bright_params (sec, &p, err, sizeof err) != 0)
        return -1;
    for (const char *const *n = names; *n; n++) {
        snprintf (col, sizeof col, "%s%s", p.prefix, *n);
        if (add (ctx, col) != 0)
            return -1;
    }
    return 0;
}

static int
run_contrast (qc_run_t *run)
{
    qc_bright_params_t p;
    char err[512];
    if (qc_bright_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *sobel_mask = NULL;
    if (!gray || qc_bright_select_mask (run, &p, &sobel_mask) != 0)
        return -1;
    const qc_mask_t *pixel_mask = p.limit_to_mask ? qc_run_mask (run) : NULL;
    qc_contrast_t c;
    int rc = -1;
    if (p.limit_to_mask && !pixel_mask)
        rc = -1;
    else if (qc_contrast_stats (qc_run_ops (run), gray, sobel_mask, pixel_mask,
                                &c) != 0)
        qc_run_fail (run, "contrast of a %d x %d image failed (out of memory?)",
                     gray->w, gray->h);
    else if (c.empty) {
        /* HistoQC prints the int -100 here, not -100.0. */
        char col[QC_RESULT_MAX_KEY];
        rc = 0;
        for (const char *const *n = names; *n && rc == 0; n++) {
            snprintf (col, sizeof col, "%s%s", p.prefix, *n);
            rc = qc_run_set (run, col, "-100");
        }
        if (rc == 0)
            qc_run_warn (run, "After BrightContrastModule.getContrast: NO tissue "
                         "remains detected, statistics are impossible to "
                         "compute, defaulting to -100 !");
    } else if (qc_bright_set (run, &p, names[0], c.tenengrad) == 0
               && qc_bright_set (run, &p, names[1], c.michelson) == 0
               && qc_bright_set (run, &p, names[2], c.rms) == 0)
        rc = 0;
    qc_mask_destroy (&sobel_mask);
    return rc;
}

static const char *const params[] = {
    "prefix", "limit_to_mask", "mask_name", "invert", NULL
};

const qc_module_t qc_module_bright_contrast = {
    .name = "BrightContrastModule.getContrast",
    .run = run_contrast,
    .check = check_contrast,
    .params = params,
    .param_columns = contrast_columns,
    .needed_masks = qc_bright_needed_masks,
};
