/* Finds the GPUs a worker may advertise, through the CUDA driver API
 * loaded at run time (so a CPU-only build still knows the devices).
 * With no driver or no device, --gpu fails at start; it never quietly
 * runs on the CPU. */
#ifndef QC_GPU_PROBE_H
#define QC_GPU_PROBE_H

#include <stddef.h>
#include "shared/proto.h"

/* Whether spec is written as --gpu takes it ("0", "0,2", "all"), before
 * any driver is asked: a typo is said as a typo on any machine. 0, or -1
 * with a reason in err. */
int qc_gpu_spec_check (const char *spec, char *err, size_t errlen);

/* spec: "0", "0,2", or "all". Fills gpus (caller frees names and array).
 * Returns 0, or -1 with a reason in err. */
int qc_gpu_probe (const char *spec, qc_gpu_t **gpus, size_t *ngpus,
                  char *err, size_t errlen);
/* Simulated GPUs for scheduling tests and benchmarks only: advertised
 * as "simulated", tasks run on the CPU pipeline. */
int qc_gpu_simulated (unsigned count, qc_gpu_t **gpus, size_t *ngpus);

#endif
