/* BasicModule.countTissuePieces: #pieces_of_tissue, the number of
 * separate pieces of tissue left in img_mask_use. As HistoQC: pieces are
 * 8-connected (skimage.measure.label's default), counted on the mask as
 * the step finds it (HistoQC's config_v2.1 runs it after saveFinalMask,
 * which has already taken the pen and coverslip masks out). */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static int
run (qc_run_t *run)
{
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    qc_region_summary_t rs;
    if (qc_run_ops (run)->region_summary (use, QC_CONN_LABEL, &rs))
        return qc_run_fail (run, "out of memory labelling the mask");
    return qc_run_set (run, "#pieces_of_tissue", "%zu", rs.n);
}

static const char *const params[] = { NULL };
static const char *const columns[] = { "#pieces_of_tissue", NULL };

const qc_module_t qc_module_count_pieces = {
    .name = "BasicModule.countTissuePieces",
    .run = run,
    .params = params,
    .columns = columns,
};
