/* MorphologyModule.removeSmallObjects: pieces of the tissue mask smaller
 * than min_size pixels are dropped (skimage remove_small_objects,
 * 4-connected). As HistoQC: _small_remove.png shows the dropped pixels;
 * the small_tissue_removed_* columns count them (8-connected regions)
 * and give the mask statistic. The dropped pixels are kept as HistoQC
 * names them, img_mask_small_filled (sic: HistoQC swaps the two
 * morphology steps' names), for a later step's mask_name=. */
#include <stdint.h>

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
run (qc_run_t *run)
{
    static const qc_mask_edit_t edit = {"small_remove", "small_tissue_removed",
                                        "small_tissue_removed_percent",
                                        "MorphologyModule.removeSmallObjects:", false,
                                        "small_filled"};
    return qc_masks_edit_int (run, &s_min_size, &edit, qc_masks_keep_large);
}

static const char *const params[] = { "min_size", "mask_statistics", NULL };

static const char *const columns[] = {
    "small_tissue_removed_num_regions", "small_tissue_removed_mean_area",
    "small_tissue_removed_max_area", "small_tissue_removed_percent", NULL
};

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "small_filled", NULL };

const qc_module_t qc_module_morph_small = {
    .name = "MorphologyModule.removeSmallObjects",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
