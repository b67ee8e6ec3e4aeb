/* MorphologyModule.fillSmallHoles: holes in the tissue mask smaller than
 * min_size pixels become tissue (skimage remove_small_holes: 4-connected
 * background components, those touching the border included). As
 * HistoQC: _small_fill.png shows the filled pixels; the
 * small_tissue_filled_* columns count them (8-connected regions) and
 * give the mask statistic. */
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
    qc_mask_t *filled = qc_mask_new (use->w, use->h);
    int rc;
    if (!before || !after || !filled
        || ops->fill_holes (use, QC_CONN_OBJECTS, (size_t) min_size, after)
        || ops->mask_logic (after, use, QC_LOGIC_ANDNOT, filled))
        rc = qc_run_fail (run, "out of memory");
    else
        rc = qc_masks_replace (run, after, filled, before, "small_fill",
                               "small_tissue_filled",
                               "small_tissue_filled_percent",
                               "MorphologyModule.fillSmallHoles:");
    qc_mask_destroy (&before);
    qc_mask_destroy (&after);
    qc_mask_destroy (&filled);
    return rc;
}

static const char *const params[] = { "min_size", "mask_statistics", NULL };

static const char *const columns[] = {
    "small_tissue_filled_num_regions", "small_tissue_filled_mean_area",
    "small_tissue_filled_max_area", "small_tissue_filled_percent", NULL
};

const qc_module_t qc_module_morph_holes = {
    .name = "MorphologyModule.fillSmallHoles",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
