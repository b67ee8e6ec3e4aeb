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
 * This first version keeps the interface's host images: each op copies
 * its inputs to the device, runs its kernels and copies the outputs back
 * (the next step is device-resident images across steps). Device buffers
 * come from a per-device pool bounded by a byte limit (--gpu-mem).
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

/* Binds the calling thread to device and returns the CUDA table, or NULL
 * (logged) when the device cannot be used or this is a CPU-only build. */
const qc_ops_t *qc_ops_cuda (int device);

/* The CUDA table itself, bound to no device: for tests that check its
 * slots (tests/unit/test_ops_tables.c); NULL in a CPU-only build. Its
 * GPU ops fail (-1, logged) on a thread that qc_ops_cuda has not bound. */
const qc_ops_t *qc_ops_cuda_table (void);

/* Bytes of device memory the pool of device may hold (the worker's
 * --gpu-mem); 0 restores the default (QC_CUDA_DEFAULT_MEM). An op that
 * needs more than the limit fails (-1) instead of overcommitting. */
#define QC_CUDA_DEFAULT_MEM ((size_t) 8 << 30)
int qc_cuda_set_mem_limit (int device, size_t bytes);

/* Frees the pooled buffers of every device the process used (optional;
 * for leak checkers at exit). */
void qc_cuda_release_all (void);

#ifdef __cplusplus
}
#endif

#endif
