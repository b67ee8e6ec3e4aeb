/* Which vector instructions this CPU has, asked once. The AVX2 paths
 * (trees prediction, frangi) are compiled with target attributes and
 * taken only where this says so, so one binary runs on any x86-64. */
#include "kernels/ops/cpu/cpu_ops.h"

int
qc_cpu_have_avx2 (void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static int known = -1;     /* a benign race: every thread finds the same */
    if (known < 0) {
        __builtin_cpu_init ();
        known = __builtin_cpu_supports ("avx2") ? 1 : 0;
    }
    return known;
#else
    return 0;
#endif
}
