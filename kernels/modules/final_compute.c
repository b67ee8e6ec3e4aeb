/* BasicModule.finalComputations: pixels_to_use, the number of tissue
 * pixels left in img_mask_use at the working size. */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static int
run (qc_run_t *run)
{
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    size_t n = 0;
    if (qc_run_ops (run)->mask_count (use, &n))
        return qc_run_fail (run, "cannot count the mask");
    return qc_run_set (run, "pixels_to_use", "%zu", n);
}

static const char *const params[] = { NULL };
static const char *const columns[] = { "pixels_to_use", NULL };

const qc_module_t qc_module_final_compute = {
    .name = "BasicModule.finalComputations",
    .run = run,
    .params = params,
    .columns = columns,
};
