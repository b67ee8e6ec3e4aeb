/* MorphologyModule.removeSmallObjects: pieces of the tissue mask smaller
 * than min_size pixels are dropped (skimage remove_small_objects,
 * 4-connected). As HistoQC: _small_remove.png shows the dropped pixels;
 * the small_tissue_removed_* columns count them (8-connected regions)
 * and give the mask statistic. */
#include <stdint.h>

#include "kernels/modules/masks.h"
#include "kernels/run_state.h"

static const qc_int_param_t s_min_size = {"min_size", 64, 0, QC_IMAGE_MAX_PIXELS};

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return qc_masks_read_int (sec, &s_min_size, &v, err, errlen);
}

/* keeps objects of at least min_size pixels (4-connected) */
static int
keep_large (const qc_ops_t *ops, const qc_mask_t *use, const void *arg,
            qc_mask_t *after)
{
    return ops->area_filter (use, QC_CONN_OBJECTS, (size_t) *(const int *) arg,
                             SIZE_MAX, after);
}

static int
run (qc_run_t *run)
{
    static const qc_mask_edit_t edit = {"small_remove", "small_tissue_removed",
                                        "small_tissue_removed_percent",
                                        "MorphologyModule.removeSmallObjects:", false};
    int min_size;
    char err[256];
    if (qc_masks_read_int (run->params, &s_min_size, &min_size, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    return qc_masks_edit (run, &edit, keep_large, &min_size);
}

static const char *const params[] = { "min_size", "mask_statistics", NULL };

static const char *const columns[] = {
    "small_tissue_removed_num_regions", "small_tissue_removed_mean_area",
    "small_tissue_removed_max_area", "small_tissue_removed_percent", NULL
};

const qc_module_t qc_module_morph_small = {
    .name = "MorphologyModule.removeSmallObjects",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
