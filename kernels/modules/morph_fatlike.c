/* MorphologyModule.removeFatlikeTissue: tissue riddled with small holes
 * (fat cells at low magnification) is removed: the holes below
 * fat_cell_size, dilated by a kernel_size square, where they merge into
 * regions larger than max_keep_size (see qc_morph_fatlike). As HistoQC:
 * _fatlike.png shows the removed region; fatlike_tissue_removed_*
 * columns count it (8-connected) and give the mask statistic. The
 * removed pixels are kept as img_mask_fatlike for a later step's
 * mask_name= (HistoQC's img_mask_fatlike is the whole dilated fat
 * region, also where it reaches past the tissue: the same pixels within
 * the tissue). */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

typedef struct {
    int fat_cell_size, kernel_size, max_keep_size;
} fat_params_t;

static int
read_params (const qc_config_section_t *sec, fat_params_t *p, char *err,
             size_t errlen)
{
    return qc_masks_get_int (sec, "fat_cell_size", 64, 0, QC_IMAGE_MAX_PIXELS,
                             &p->fat_cell_size, err, errlen)
           || qc_masks_get_int (sec, "kernel_size", 3, 1, 1000,
                                &p->kernel_size, err, errlen)
           || qc_masks_get_int (sec, "max_keep_size", 1000, 0,
                                QC_IMAGE_MAX_PIXELS, &p->max_keep_size, err,
                                errlen)
           || qc_masks_check_stat (sec, err, errlen) ? -1 : 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    fat_params_t p;
    return read_params (sec, &p, err, errlen);
}

/* after = use without the fat-like regions */
static int
remove_fat (const qc_ops_t *ops, const qc_mask_t *use, const void *arg,
            qc_mask_t *after)
{
    const fat_params_t *p = arg;
    qc_mask_t *fat = qc_mask_new (use->w, use->h);
    int rc = !fat
             || qc_morph_fatlike (ops, use, p->fat_cell_size, p->kernel_size,
                                  p->max_keep_size, fat)
             || ops->mask_logic (use, fat, QC_LOGIC_ANDNOT, after);
    qc_mask_destroy (&fat);
    return rc ? -1 : 0;
}

static int
run (qc_run_t *run)
{
    static const qc_mask_edit_t edit = {"fatlike", "fatlike_tissue_removed",
                                        "fatlike_tissue_removed_percent",
                                        "MorphologyModule.removeFatlikeTissue:", false,
                                        "fatlike"};
    fat_params_t p;
    char err[256];
    if (read_params (run->params, &p, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    return qc_masks_edit (run, &edit, remove_fat, &p);
}

static const char *const params[] = {
    "fat_cell_size", "kernel_size", "max_keep_size", "mask_statistics", NULL
};

static const char *const columns[] = {
    "fatlike_tissue_removed_num_regions", "fatlike_tissue_removed_mean_area",
    "fatlike_tissue_removed_max_area", "fatlike_tissue_removed_percent", NULL
};

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "fatlike", NULL };

const qc_module_t qc_module_morph_fatlike = {
    .name = "MorphologyModule.removeFatlikeTissue",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
