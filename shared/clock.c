/* Monotonic time; see clock.h. */
#include "shared/clock.h"

#include <time.h>

double
qc_clock_s (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}
