/* SaveModule.saveMask: img_mask_use as it is at this point of the
 * pipeline, written as _<suffix>.png (0/255), so a lab sees what each
 * stage left (HistoQC's config_clinical saves it three times: suffixes
 * first, second, third).
 *
 * As HistoQC, except: a missing suffix= is refused when the pipeline is
 * built (HistoQC logs an error for every slide and writes nothing). */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    const char *suffix;
    return qc_masks_get_word (sec, "suffix", NULL, &suffix, err, errlen);
}

static int
run (qc_run_t *run)
{
    const char *suffix;
    char err[256];
    if (qc_masks_get_word (run->params, "suffix", NULL, &suffix, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    qc_mask_t *use = qc_run_mask (run);
    return use ? qc_run_save_mask (run, suffix, use) : -1;
}

static const char *const params[] = { "suffix", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_mask = {
    .name = "SaveModule.saveMask",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
