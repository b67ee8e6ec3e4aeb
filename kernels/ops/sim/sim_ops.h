/* The simulated device: a backend that runs the C ops on "device"
 * images kept in memory of their own, apart from the images' host
 * bytes, and lets every copy between the two be counted
 * (image_place.h's qc_place_counts and observer). It is the test
 * backend of issue 18: with it, a whole pipeline runs on any machine as
 * a GPU lane would, and a test sees which planes cross and whether the
 * results still equal the CPU's.
 *
 * It is faithful to a resident GPU lane in what crosses: every op of
 * that lane runs on the GPU (but median_disk past radius 6,
 * kernels/ops/cuda/median.cu), every op here on the "device" bytes.
 * New device memory is filled with a poison byte, so an op
 * that relied on an output it does not write, or host code that reads
 * px without asking for it (image.h's qc_*_host), gives wrong results
 * rather than right ones by luck. */
#ifndef QC_SIM_OPS_H
#define QC_SIM_OPS_H

#include <stddef.h>
#include "kernels/ops/ops.h"

/* The backend's table (its device is qc_sim_device ()). Never NULL. */
const qc_ops_t *qc_ops_sim (void);
const qc_device_t *qc_sim_device (void);

/* Bytes of simulated device memory held now, in all threads (a test
 * checks that a run gives it all back). */
size_t qc_sim_device_held (void);
/* The most bytes held at once since the last reset (reset: start again
 * from what is held now): a slide's device working set, which tells
 * what GPU memory a resident lane needs. */
size_t qc_sim_device_peak (int reset);

/* A limit on the bytes held at once, as a GPU's pool has (0: none, the
 * default): an allocation past it is refused as a full GPU's is
 * (qc_place_note_full), and the pipeline runs the slide again on the
 * table's when_full, the C backend: images on the host, as the CUDA
 * copying lane keeps them. qc-worker --gpu-mem sets it for simulated
 * GPUs. */
void qc_sim_set_limit (size_t bytes);
/* Allocations refused for the limit since the process started. */
size_t qc_sim_device_refused (void);

#define QC_SIM_POISON 0xCD

#endif
