/* BasicModule.finalProcessingArea: pieces of tissue smaller than
 * area_threshold pixels are dropped (skimage remove_small_objects,
 * 4-connected). As HistoQC: _areathresh.png shows them, areaThresh is
 * the mask statistic. */
#include <stdint.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static const qc_int_param_t s_area = {"area_threshold", 1000, 0, QC_IMAGE_MAX_PIXELS};

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return qc_masks_read_int (sec, &s_area, &v, err, errlen);
}

static int
run (qc_run_t *run)
{
    static const qc_mask_edit_t edit = {"areathresh", NULL, "areaThresh",
                                        "BasicModule.finalProcessingArea", false,
                                        NULL};
    return qc_masks_edit_int (run, &s_area, &edit, qc_masks_keep_large);
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
