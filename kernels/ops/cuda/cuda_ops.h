/* The CUDA backend of the ops interface (kernels/ops/ops.h).
 *
 * Built when make finds nvcc (the .cu and .c files of kernels/ops/cuda);
 * a CPU-only build links kernels/ops/cuda/cuda_none.c instead, where
 * every entry says "not built" (qc_ops_cuda returns NULL), so callers
 * never need #ifdef.
 *
 * Binding: the ops of the table carry no device argument, so the table
 * works on the device its calling thread was bound to by its last
 * qc_ops_cuda (device) call, as the CUDA runtime's current device is per
 * thread too. A worker runs one executor thread per GPU, which binds once.
 *
 * Two lanes, one set of kernels (placement.cu, image_place.h):
 *  - the resident lane (qc_ops_cuda, the default; qc_ops_cuda_resident):
 *    the table's device is the GPU, so the pipeline makes a slide's
 *    images there and they stay there from step to step; a plane
 *    crosses only when host code reads it (issue 18). Components and
 *    quantiles run on the GPU too. Checked on an H100 (test_cuda_equiv,
 *    compute-sanitizer memcheck) and timed there (tests/bench/README.md).
 *  - the copying lane (qc_ops_cuda with QC_GPU_RESIDENT=0 in the
 *    environment): images stay in host memory; each op copies its inputs
 *    up and its outputs down, and connected components and quantiles
 *    run on the CPU. The backend of issue 4, kept for comparison and as
 *    a fallback for a GPU too small to hold a slide's planes.
 * Device buffers come from a per-device pool bounded by a byte limit
 * (--gpu-mem).
 *
 * Errors: every CUDA call and kernel launch is checked; a failure is
 * logged (module "cuda") and the op returns -1; nothing aborts. */
#ifndef QC_CUDA_OPS_H
#define QC_CUDA_OPS_H

#include <stddef.h>
#include "kernels/ops/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this program was built with the CUDA backend, else 0. */
int qc_cuda_built (void);

/* Number of CUDA devices the runtime can use (>= 1), or -1 with the
 * reason in err (CPU-only build, no driver, no device). */
int qc_cuda_device_count (char *err, size_t errlen);

/* Binds the calling thread to device and returns the CUDA table (the
 * resident lane; the copying one with QC_GPU_RESIDENT=0), or NULL
 * (logged) when the device cannot be used or this is a CPU-only build. */
const qc_ops_t *qc_ops_cuda (int device);
/* The same, the resident lane whatever the environment says. */
const qc_ops_t *qc_ops_cuda_resident (int device);

/* Slots the copying lane runs on the CPU (the resident lane runs every
 * slot on the GPU). */
#define QC_CUDA_COPYING_ON_HOST(X)                                       \
    X (fimg_quantile)                                                    \
    X (label)                                                            \
    X (area_filter)                                                      \
    X (fill_holes)                                                       \
    X (region_summary)                                                   \
    X (reconstruct)

/* The CUDA table itself, bound to no device: for tests that check its
 * slots (tests/unit/test_ops_tables.c); NULL in a CPU-only build. Its
 * GPU ops fail (-1, logged) on a thread that qc_ops_cuda has not bound. */
const qc_ops_t *qc_ops_cuda_table (void);
const qc_ops_t *qc_ops_cuda_resident_table (void);

/* Bytes of device memory the pool of device may hold (the worker's
 * --gpu-mem); 0 restores the default (QC_CUDA_DEFAULT_MEM; a resident
 * lane raises it to 85% of the GPU's memory unless a limit was given). An op that
 * needs more than the limit fails (-1) instead of overcommitting. */
#define QC_CUDA_DEFAULT_MEM ((size_t) 8 << 30)
int qc_cuda_set_mem_limit (int device, size_t bytes);

/* The most bytes of device's pool in use at once (its buffers taken
 * and not yet released; cached free ones not counted) since the last
 * reset; reset != 0 restarts the count from what is in use now. 0 in a
 * CPU-only build or for a device never used. For the benches (what a
 * slide needs on a GPU, measured, not estimated). */
size_t qc_cuda_mem_peak (int device, int reset);

/* Frees the pooled buffers of every device the process used and the
 * calling thread's page-locked staging buffers (optional; for leak
 * checkers at exit: other threads' staging buffers go when they exit). */
void qc_cuda_release_all (void);

#ifdef __cplusplus
}
#endif

#endif
