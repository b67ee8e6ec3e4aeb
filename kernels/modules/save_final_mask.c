/* SaveModule.saveFinalMask: writes the tissue mask the QC ends with.
 * As HistoQC: the masks earlier steps forced out (img_mask_force:
 * ClassificationModule's pen_markings and coverslip_edge) are cleared
 * from img_mask_use first (in place, so finalComputations counts the
 * same pixels); _mask_use.png is the mask (0/255) and, unless use_mask
 * is False, _fuse.png overlays it on the image: R and B = mask, G = the
 * gray image (tissue kept shows magenta, the rest green). HistoQC's
 * config writes "overlay: True", which HistoQC does not read; it is
 * accepted here and ignored too.
 *
 * The project's own, beside _fuse.png: _causes.png (save_causes.h), the
 * tissue taken out coloured by why, with a legend; causes: False turns
 * it off. On by default so that HistoQC's configs, whose [pipeline]
 * knows nothing of it, give it too; it is not one of HistoQC's files, so
 * a tool that compares a folder with HistoQC's sees one file more. It
 * follows use_mask as _fuse.png does (a review image of the mask). */
#include "kernels/modules/masks.h"
#include "kernels/modules/save_causes.h"
#include "kernels/run/run.h"

/* The boolean parameters, each with its default. */
static const struct {
    const char *key;
    int def;
} flags[] = {
    { "use_mask", 1 },
    { "overlay", 1 },
    { "causes", 1 },
};
enum { USE_MASK, OVERLAY, CAUSES, NFLAGS };

static int
read_flags (const qc_config_section_t *sec, int on[NFLAGS], char *err,
            size_t errlen)
{
    for (int i = 0; i < NFLAGS; i++)
        if (qc_config_get_bool (sec, flags[i].key, flags[i].def, &on[i], err,
                                errlen))
            return -1;
    return 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int on[NFLAGS];
    return read_flags (sec, on, err, errlen);
}

/* The pipeline keeps which step took each pixel for _causes.png. */
static int
reads_removals (const qc_config_section_t *sec)
{
    int on[NFLAGS];
    return read_flags (sec, on, NULL, 0) == 0 && on[USE_MASK] && on[CAUSES];
}

static int
run (qc_run_t *run)
{
    int on[NFLAGS];
    char err[256];
    if (read_flags (run->params, on, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    qc_mask_t *use = qc_run_mask (run);
    /* the record up to date before a file is saved: what the forced
     * masks took again is its steps' already (they took it first) */
    if (!use || qc_run_apply_forced (run, use) || qc_run_note_removals (run)
        || qc_run_save_mask (run, "mask_use", use))
        return -1;
    if (!on[USE_MASK])
        return 0;
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    if (!gray)
        return -1;
    qc_rgb_t *fuse = qc_rgb_new (use->w, use->h);
    int rc = !fuse || qc_save_fuse (qc_run_ops (run), use, gray, fuse)
             ? qc_run_fail (run, "out of memory for the fuse image")
             : qc_run_save_rgb (run, "fuse", fuse);
    qc_rgb_destroy (&fuse);
    if (rc == 0 && on[CAUSES] && !qc_run_removals_given_up (run))
        rc = qc_save_causes (run, use);
    return rc;
}

static const char *const params[] = { "use_mask", "overlay", "causes", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_final_mask = {
    .name = "SaveModule.saveFinalMask",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
    .reads_removals = reads_removals,
};
