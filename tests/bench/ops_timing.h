/* An ops table that times another, made from kernels/ops/ops.h's
 * QC_OPS_LIST: every entry calls the same entry of
 * the inner table and adds its wall time and call count to a per-op
 * total, so a benchmark can say which ops a slide's seconds go to on
 * each backend (for the GPU: kernels plus the copies each op makes).
 * Header-only, for the benchmark programs; one thread at a time. */
#ifndef QC_OPS_TIMING_H
#define QC_OPS_TIMING_H

#include <stdio.h>
#include <stdlib.h>

#include "kernels/ops/ops.h"
#include "shared/clock.h"

enum {
#define QC_OT_ENUM(name, optional, params, args) QC_OT_##name,
    QC_OPS_LIST (QC_OT_ENUM)
#undef QC_OT_ENUM
    QC_OT_COUNT
};

static const char *const qc_ot_names[] = {
#define QC_OT_NAME(name, optional, params, args) #name,
    QC_OPS_LIST (QC_OT_NAME)
#undef QC_OT_NAME
};

static const qc_ops_t *qc_ot_inner;
static double qc_ot_seconds[QC_OT_COUNT];
static long qc_ot_calls[QC_OT_COUNT];

#define QC_OT_WRAP(name, optional, params, args)                        \
    static int qc_ot_##name params                                      \
    {                                                                   \
        double t0 = qc_clock_s ();                                      \
        int rc = qc_ot_inner->name args;                                \
        qc_ot_seconds[QC_OT_##name] += qc_clock_s () - t0;              \
        qc_ot_calls[QC_OT_##name]++;                                    \
        return rc;                                                      \
    }
QC_OPS_LIST (QC_OT_WRAP)
#undef QC_OT_WRAP

/* The timing table over inner (NULL: the CPU backend); the totals start
 * at zero. Entries inner leaves NULL stay NULL. */
static __attribute__ ((unused)) const qc_ops_t *
qc_ops_timed (const qc_ops_t *inner)
{
    static qc_ops_t t;
    qc_ot_inner = inner ? inner : qc_ops_cpu ();
    t.name = qc_ot_inner->name;
    t.device = qc_ot_inner->device;     /* a resident lane stays one */
    t.decode_by_default = qc_ot_inner->decode_by_default;
#define QC_OT_SET(name, optional, params, args) t.name = qc_ot_inner->name ? qc_ot_##name : NULL;
    QC_OPS_LIST (QC_OT_SET)
#undef QC_OT_SET
    for (int i = 0; i < QC_OT_COUNT; i++) {
        qc_ot_seconds[i] = 0;
        qc_ot_calls[i] = 0;
    }
    return &t;
}

/* Prints the ops that took time, most first, and their total. */
static __attribute__ ((unused)) void
qc_ops_timed_report (FILE *to, const char *title)
{
    int idx[QC_OT_COUNT];
    double total = 0;
    for (int i = 0; i < QC_OT_COUNT; i++) {
        idx[i] = i;
        total += qc_ot_seconds[i];
    }
    for (int i = 1; i < QC_OT_COUNT; i++)
        for (int j = i; j > 0 && qc_ot_seconds[idx[j]] > qc_ot_seconds[idx[j - 1]]; j--) {
            int k = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = k;
        }
    fprintf (to, "  %s: %.3f s in ops\n", title, total);
    for (int i = 0; i < QC_OT_COUNT && qc_ot_calls[idx[i]]; i++)
        if (qc_ot_seconds[idx[i]] >= 0.0005)
            fprintf (to, "    %-16s %8.1f ms  %4ld calls\n", qc_ot_names[idx[i]],
                     qc_ot_seconds[idx[i]] * 1e3, qc_ot_calls[idx[i]]);
}

#endif
