/* BasicModule.finalProcessingSpur: thin spurs of the tissue mask are cut
 * by opening it with a disk of disk_radius (skimage binary_opening with
 * disk: outside the image counts as tissue for the erosion). As HistoQC:
 * _spur.png shows the removed pixels, spur_pixels is the mask
 * statistic. */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static const qc_int_param_t s_radius = {"disk_radius", 25, 0, 100000};

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return qc_masks_read_int (sec, &s_radius, &v, err, errlen);
}

static int
open_disk (const qc_ops_t *ops, const qc_mask_t *use, const void *arg,
           qc_mask_t *after)
{
    return qc_final_spur (ops, use, *(const int *) arg, after);
}

static int
run (qc_run_t *run)
{
    static const qc_mask_edit_t edit = {"spur", NULL, "spur_pixels",
                                        "BasicModule.finalProcessingSpur", false,
                                        NULL};
    return qc_masks_edit_int (run, &s_radius, &edit, open_disk);
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
