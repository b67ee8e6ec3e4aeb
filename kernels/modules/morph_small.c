/* MorphologyModule.removeSmallObjects: pieces of the tissue mask smaller
 * than min_size pixels are dropped (skimage remove_small_objects,
 * 4-connected). As HistoQC: _small_remove.png shows the dropped pixels;
 * the small_tissue_removed_* columns count them (8-connected regions)
 * and give the mask statistic. */
#include <stdint.h>

#include "kernels/modules/masks.h"
#include "kernels/run_state.h"

static int
read_params (const qc_config_section_t *sec, int *min_size, char *err,
             size_t errlen)
{
    return qc_masks_get_int (sec, "min_size", 64, 0, QC_IMAGE_MAX_PIXELS,
                             min_size, err, errlen)
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
    int min_size;
    char err[256];
    if (read_params (run->params, &min_size, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *after = qc_mask_new (use->w, use->h);
    qc_mask_t *removed = qc_mask_new (use->w, use->h);
    int rc;
    if (!before || !after || !removed
        || ops->area_filter (use, QC_CONN_OBJECTS, (size_t) min_size, SIZE_MAX,
                             after)
        || ops->mask_logic (use, after, QC_LOGIC_ANDNOT, removed))
        rc = qc_run_fail (run, "out of memory");
    else
        rc = qc_masks_replace (run, after, removed, before, "small_remove",
                               "small_tissue_removed",
                               "small_tissue_removed_percent",
                               "MorphologyModule.removeSmallObjects:");
    qc_mask_destroy (&before);
    qc_mask_destroy (&after);
    qc_mask_destroy (&removed);
    return rc;
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
