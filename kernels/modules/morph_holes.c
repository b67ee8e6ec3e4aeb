/* MorphologyModule.fillSmallHoles: holes in the tissue mask smaller than
 * min_size pixels become tissue (skimage remove_small_holes: 4-connected
 * background components, those touching the border included). As
 * HistoQC: _small_fill.png shows the filled pixels; the
 * small_tissue_filled_* columns count them (8-connected regions) and
 * give the mask statistic. The filled pixels are kept as HistoQC names
 * them, img_mask_small_removed (sic), for a later step's mask_name=. */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static const qc_int_param_t s_min_size = {"min_size", 64, 0, QC_IMAGE_MAX_PIXELS};

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return qc_masks_read_int (sec, &s_min_size, &v, err, errlen);
}

static int
fill (const qc_ops_t *ops, const qc_mask_t *use, const void *arg, qc_mask_t *after)
{
    return ops->fill_holes (use, QC_CONN_OBJECTS, (size_t) *(const int *) arg, after);
}

static int
run (qc_run_t *run)
{
    static const qc_mask_edit_t edit = {"small_fill", "small_tissue_filled",
                                        "small_tissue_filled_percent",
                                        "MorphologyModule.fillSmallHoles:", true,
                                        "small_removed"};
    return qc_masks_edit_int (run, &s_min_size, &edit, fill);
}

static const char *const params[] = { "min_size", "mask_statistics", NULL };

static const char *const columns[] = {
    "small_tissue_filled_num_regions", "small_tissue_filled_mean_area",
    "small_tissue_filled_max_area", "small_tissue_filled_percent", NULL
};

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "small_removed", NULL };

const qc_module_t qc_module_morph_holes = {
    .name = "MorphologyModule.fillSmallHoles",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
