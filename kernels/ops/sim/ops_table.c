/* The simulated device's ops table (sim_ops.h): every op is the C
 * backend's, run on the images' device bytes (op_place.h with swap:
 * px points at them for the call), as every op of a resident GPU lane
 * runs on the GPU. */
#include "kernels/ops/sim/sim_ops.h"

#include <pthread.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/op_place.h"

#define QC_OP_INNER qc_ops_cpu_raw ()
#define QC_OP_TARGET qc_sim_device ()
#define QC_OP_SWAP 1
QC_OPS_LIST (QC_OP_PLACED)

static qc_ops_t s_table = {
    .name = "sim",
    .decode_by_default = 1,
    QC_OPS_LIST (QC_OP_PLACED_SLOT)
};
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void
init_table (void)
{
    s_table.device = qc_sim_device ();
    /* past qc_sim_set_limit, a slide runs again with its images on the
     * host, as a resident CUDA lane's runs again on the copying lane */
    s_table.when_full = qc_ops_cpu ();
}

const qc_ops_t *
qc_ops_sim (void)
{
    pthread_once (&s_once, init_table);
    return &s_table;
}
