/* BasicModule.finalProcessingArea: pieces of tissue smaller than
 * area_threshold pixels are dropped (skimage remove_small_objects,
 * 4-connected). As HistoQC: _areathresh.png shows them, areaThresh is
 * the mask statistic. */
#include <stdint.h>

#include "kernels/modules/masks.h"
#include "kernels/run_state.h"

static int
read_params (const qc_config_section_t *sec, int *area, char *err,
             size_t errlen)
{
    return qc_masks_get_int (sec, "area_threshold", 1000, 0,
                             QC_IMAGE_MAX_PIXELS, area, err, errlen)
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
    int area;
    char err[256];
    if (read_params (run->params, &area, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *kept = qc_mask_new (use->w, use->h);
    qc_mask_t *removed = qc_mask_new (use->w, use->h);
    int rc;
    if (!before || !kept || !removed
        || ops->area_filter (use, QC_CONN_OBJECTS, (size_t) area, SIZE_MAX,
                             kept)
        || ops->mask_logic (use, kept, QC_LOGIC_ANDNOT, removed))
        rc = qc_run_fail (run, "out of memory");
    else
        rc = qc_masks_replace (run, kept, removed, before, "areathresh", NULL,
                               "areaThresh", "BasicModule.finalProcessingArea");
    qc_mask_destroy (&before);
    qc_mask_destroy (&kept);
    qc_mask_destroy (&removed);
    return rc;
}

static const char *const params[] = { "area_threshold", "mask_statistics",
                                      NULL };
static const char *const columns[] = { "areaThresh", NULL };

const qc_module_t qc_module_final_area = {
    .name = "BasicModule.finalProcessingArea",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
