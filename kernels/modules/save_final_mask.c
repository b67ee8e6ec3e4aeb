/* SaveModule.saveFinalMask: writes the tissue mask the QC ends with.
 * As HistoQC: the masks earlier steps forced out (img_mask_force:
 * ClassificationModule's pen_markings and coverslip_edge) are cleared
 * from img_mask_use first (in place, so finalComputations counts the
 * same pixels); _mask_use.png is the mask (0/255) and, unless use_mask
 * is False, _fuse.png overlays it on the image: R and B = mask, G = the
 * gray image (tissue kept shows magenta, the rest green). HistoQC's
 * config writes "overlay: True", which HistoQC does not read; it is
 * accepted here and ignored too. */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return qc_config_get_bool (sec, "use_mask", 1, &v, err, errlen)
           || qc_config_get_bool (sec, "overlay", 1, &v, err, errlen) ? -1 : 0;
}

static int
run (qc_run_t *run)
{
    int use_mask;
    char err[256];
    if (qc_config_get_bool (run->params, "use_mask", 1, &use_mask, err,
                            sizeof err))
        return qc_run_fail (run, "%s", err);
    qc_mask_t *use = qc_run_mask (run);
    if (!use || qc_run_apply_forced (run, use)
        || qc_run_save_mask (run, "mask_use", use))
        return -1;
    if (!use_mask)
        return 0;
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    if (!gray)
        return -1;
    qc_rgb_t *fuse = qc_rgb_new (use->w, use->h);
    int rc = !fuse || qc_save_fuse (qc_run_ops (run), use, gray, fuse)
             ? qc_run_fail (run, "out of memory for the fuse image")
             : qc_run_save_rgb (run, "fuse", fuse);
    qc_rgb_destroy (&fuse);
    return rc;
}

static const char *const params[] = { "use_mask", "overlay", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_final_mask = {
    .name = "SaveModule.saveFinalMask",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
