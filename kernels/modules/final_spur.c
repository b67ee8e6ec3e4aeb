/* BasicModule.finalProcessingSpur: thin spurs of the tissue mask are cut
 * by opening it with a disk of disk_radius (skimage binary_opening with
 * disk: outside the image counts as tissue for the erosion). As HistoQC:
 * _spur.png shows the removed pixels, spur_pixels is the mask
 * statistic. */
#include "kernels/modules/masks.h"
#include "kernels/run_state.h"

static int
read_params (const qc_config_section_t *sec, int *radius, char *err,
             size_t errlen)
{
    return qc_masks_get_int (sec, "disk_radius", 25, 0, 100000, radius, err,
                             errlen)
           || qc_masks_check_stat (sec, err, errlen) ? -1 : 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return read_params (sec, &v, err, errlen);
}

static int
run (qc_run_t *run)
{
    int radius;
    char err[256];
    if (read_params (run->params, &radius, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *opened = qc_mask_new (use->w, use->h);
    qc_mask_t *spur = qc_mask_new (use->w, use->h);
    int rc;
    if (!before || !opened || !spur || qc_final_spur (ops, use, radius, opened)
        || ops->mask_logic (use, opened, QC_LOGIC_ANDNOT, spur))
        rc = qc_run_fail (run, "out of memory");
    else
        rc = qc_masks_replace (run, opened, spur, before, "spur", NULL,
                               "spur_pixels", "BasicModule.finalProcessingSpur");
    qc_mask_destroy (&before);
    qc_mask_destroy (&opened);
    qc_mask_destroy (&spur);
    return rc;
}

static const char *const params[] = { "disk_radius", "mask_statistics", NULL };
static const char *const columns[] = { "spur_pixels", NULL };

const qc_module_t qc_module_final_spur = {
    .name = "BasicModule.finalProcessingSpur",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
