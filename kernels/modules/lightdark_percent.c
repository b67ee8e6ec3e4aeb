/* LightDarkModule.getIntensityThresholdPercent: keeps the pixels whose
 * gray value and RGB spread lie within the configured bounds (HistoQC's
 * default config runs it twice: "tissue", name bright, removes glass;
 * "darktissue", name dark, inverted, removes near-black pixels).
 *
 * As HistoQC: img_mask_name = lower < gray < upper and lower_std < std <
 * upper_std (inverted by invert); img_mask_use &= img_mask_name; the file
 * _<name>.png shows what this step removed (before & ~img_mask_name);
 * the column <name> is the mask statistic; img_mask_<name> is kept for a
 * later step's mask_name=. lower_var / upper_var win
 * over lower_std / upper_std (HistoQC's issues #213, #219); the
 * upper_variance / lower_variance keys HistoQC read before 2023 (its
 * bubble section still has one) are noted as not read
 * (pipeline_check.c), as HistoQC now does not read them. */
#include <math.h>
#include <stdio.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static int
read_params (const qc_config_section_t *sec, qc_ld_percent_params_t *p,
             const char **name, char *err, size_t errlen)
{
    double lv, uv;
    if (qc_masks_get_name (sec, name, err, errlen)
        || qc_masks_get_float (sec, "lower_threshold", -INFINITY, &p->lower,
                               err, errlen)
        || qc_masks_get_float (sec, "upper_threshold", INFINITY, &p->upper,
                               err, errlen)
        || qc_masks_get_float (sec, "lower_std", -INFINITY, &p->lower_std,
                               err, errlen)
        || qc_masks_get_float (sec, "upper_std", INFINITY, &p->upper_std,
                               err, errlen)
        || qc_masks_get_float (sec, "lower_var", NAN, &lv, err, errlen)
        || qc_masks_get_float (sec, "upper_var", NAN, &uv, err, errlen)
        || qc_config_get_bool (sec, "invert", 0, &p->invert, err, errlen)
        || qc_masks_check_stat (sec, err, errlen))
        return -1;
    if (!isnan (lv))
        p->lower_std = lv;
    if (!isnan (uv))
        p->upper_std = uv;
    return 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_ld_percent_params_t p;
    const char *name;
    return read_params (sec, &p, &name, err, errlen);
}

static int
run (qc_run_t *run)
{
    qc_ld_percent_params_t p;
    const char *name;
    char err[256];
    if (read_params (run->params, &p, &name, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    if (!img || !gray || !use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *found = qc_mask_new (img->w, img->h);
    qc_mask_t *before = qc_masks_snapshot (run);
    int rc = -1;
    if (!found || !before) {
        qc_run_fail (run, "out of memory");
        goto done;
    }
    if (qc_ld_percent_mask (ops, img, gray, &p, found)) {
        qc_run_fail (run, "thresholding failed (out of memory?)");
        goto done;
    }
    if (ops->mask_logic (use, found, QC_LOGIC_AND, use)) {
        qc_run_fail (run, "mask arithmetic failed (out of memory?)");
        goto done;
    }
    /* img_mask_<name>, for a later step's mask_name= */
    if (qc_run_keep_mask (run, name, qc_mask_clone (found)))
        goto done;
    /* The file shows what this step took away. */
    if (ops->mask_logic (before, found, QC_LOGIC_ANDNOT, found)) {
        qc_run_fail (run, "mask arithmetic failed (out of memory?)");
        goto done;
    }
    char what[160];
    snprintf (what, sizeof what, "LightDarkModule.getIntensityThresholdPercent:%s",
              name);
    rc = qc_run_save_mask (run, name, found)
         || qc_masks_finish (run, name, what, use, before) ? -1 : 0;
done:
    qc_mask_destroy (&found);
    qc_mask_destroy (&before);
    return rc;
}

/* The only column is named by name= (param_columns). */
static const char *const no_columns[] = { NULL };

static const char *const params[] = {
    "name", "lower_threshold", "upper_threshold", "lower_std", "upper_std",
    "lower_var", "upper_var", "invert",
    "mask_statistics", NULL
};

const qc_module_t qc_module_ld_percent = {
    .name = "LightDarkModule.getIntensityThresholdPercent",
    .run = run,
    .check = check,
    .params = params,
    .columns = no_columns,
    .param_columns = qc_masks_name_column,
    .kept_named = qc_masks_name_column,    /* img_mask_<name>: its one column's name */
};
