/* BasicModule.finalComputations: pixels_to_use, the tissue pixels left
 * in img_mask_use at the working size.
 *
 * As HistoQC: the statistic is the step's mask_statistics, else
 * [BaseImage.BaseImage]'s; absolute is the count, relative2image the
 * count over the image's pixels. relative2mask (a share of the mask
 * before the step) means nothing here: HistoQC warns "relative2mask is
 * not supported in BasicModule.finalComputations. Using absolute
 * instead." and counts, and so does this step. HistoQC's own configs set
 * mask_statistics = absolute in this section for that reason, and so
 * does the project's default config. */
#include <string.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static qc_mask_statistics_t
stat_mode (const qc_run_t *run)
{
    const char *v = NULL;
    qc_config_get_string (run->params, "mask_statistics", NULL, &v, NULL, 0);
    if (!v)
        return run->base ? run->base->mask_statistics : QC_MASK_RELATIVE2MASK;
    return strcmp (v, "absolute") == 0 ? QC_MASK_ABSOLUTE
           : strcmp (v, "relative2image") == 0 ? QC_MASK_RELATIVE2IMAGE
                                                : QC_MASK_RELATIVE2MASK;
}

static int
run (qc_run_t *run)
{
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    size_t n = 0;
    if (qc_run_ops (run)->mask_count (use, &n))
        return qc_run_fail (run, "cannot count the mask");
    qc_mask_statistics_t mode = stat_mode (run);
    if (mode == QC_MASK_RELATIVE2IMAGE) {
        char buf[QC_PYFLOAT_LEN];
        return qc_run_set (run, "pixels_to_use", "%s",
                           qc_pyfloat ((double) n / (double) qc_npix (use->w, use->h),
                                       buf, sizeof buf));
    }
    if (mode == QC_MASK_RELATIVE2MASK)
        qc_run_warn (run, "relative2mask is not supported in "
                     "BasicModule.finalComputations. Using absolute instead.");
    return qc_run_set (run, "pixels_to_use", "%zu", n);
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    return qc_masks_check_stat (sec, err, errlen);
}

static const char *const params[] = { "mask_statistics", NULL };
static const char *const columns[] = { "pixels_to_use", NULL };

const qc_module_t qc_module_final_compute = {
    .name = "BasicModule.finalComputations",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
