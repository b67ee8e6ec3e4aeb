/* Monotonic time for logs and benchmarks' figures (never for results). */
#ifndef QC_SHARED_CLOCK_H
#define QC_SHARED_CLOCK_H

/* Seconds on CLOCK_MONOTONIC: differences are elapsed wall time. */
double qc_clock_s (void);

#endif
