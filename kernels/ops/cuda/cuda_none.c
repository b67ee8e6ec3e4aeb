/* The CUDA entry points of a CPU-only build (no nvcc, or make CUDA=0):
 * they say that the backend is absent, so that --gpu fails at start
 * instead of running GPU tasks on the CPU. */
#include "kernels/ops/cuda/cuda_ops.h"

#include <stdio.h>

#include "shared/log.h"

int
qc_cuda_built (void)
{
    return 0;
}

int
qc_cuda_device_count (char *err, size_t errlen)
{
    if (err && errlen)
        snprintf (err, errlen, "this program was built without the CUDA "
                               "backend (CPU-only build: no nvcc, or CUDA=0)");
    return -1;
}

const qc_ops_t *
qc_ops_cuda (int device)
{
    qc_log (QC_LOG_ERROR, "cuda", "GPU %d requested, but this program was "
            "built without the CUDA backend", device);
    return NULL;
}

const qc_ops_t *
qc_ops_cuda_resident (int device)
{
    return qc_ops_cuda (device);
}

const qc_ops_t *
qc_ops_cuda_table (void)
{
    return NULL;
}

const qc_ops_t *
qc_ops_cuda_resident_table (void)
{
    return NULL;
}

int
qc_cuda_set_mem_limit (int device, size_t bytes)
{
    (void) device;
    (void) bytes;
    return -1;
}

size_t
qc_cuda_mem_peak (int device, int reset)
{
    (void) device;
    (void) reset;
    return 0;
}

void
qc_cuda_release_all (void)
{
}
