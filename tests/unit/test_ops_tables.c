/* The two backends' ops tables are complete: every slot of qc_ops_t that
 * QC_OPS_LIST (kernels/ops/ops.h) does not mark optional is filled, in
 * the CPU table and in the CUDA table. Designated initialisers leave a
 * forgotten slot NULL without a compiler warning, and a module would
 * only find out by crashing on a GPU worker; this finds out here. The
 * CUDA table is checked in every CUDA build, without a device
 * (qc_ops_cuda_table); a CPU-only build has none and says so. The check
 * is shown to fail on a table with a slot emptied on purpose. */
#include <stdio.h>
#include <string.h>

#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/ops/ops.h"
#include "tests/unit/check.h"

/* The non-optional slots of t that are NULL, their names '|'-joined in
 * names. */
static int
empty_slots (const qc_ops_t *t, char *names, size_t len)
{
    int n = 0;
    size_t used = 0;
    names[0] = '\0';
#define QC_EMPTY_(slot, optional, params, args)                                          \
    if (!(optional) && t->slot == NULL) {                                  \
        n++;                                                               \
        used += (size_t) snprintf (names + used, len > used ? len - used : 0, \
                                   "%s" #slot, used ? "|" : "");           \
    }
    QC_OPS_LIST (QC_EMPTY_)
#undef QC_EMPTY_
    return n;
}

static int
count_slots (void)
{
    int n = 0;
#define QC_COUNT_(slot, optional, params, args) n++;
    QC_OPS_LIST (QC_COUNT_)
#undef QC_COUNT_
    return n;
}

int
main (void)
{
    char names[1024];
    CHECK (count_slots () == QC_OPS_NSLOTS && QC_OPS_NSLOTS > 30,
           "%d slots", count_slots ());

    const qc_ops_t *cpu = qc_ops_cpu ();
    CHECK (cpu && strcmp (cpu->name, "cpu") == 0);
    CHECK (empty_slots (cpu, names, sizeof names) == 0,
           "CPU table: empty slots %s", names);
    /* The CPU table fills the optional slots too (it is the reference). */
    CHECK (cpu->trees_classify != NULL);

    /* The check sees a slot emptied on purpose. */
    qc_ops_t broken = *cpu;
    broken.gaussian = NULL;
    broken.trees_classify = NULL;   /* optional: not reported */
    CHECK (empty_slots (&broken, names, sizeof names) == 1
           && strcmp (names, "gaussian") == 0, "'%s'", names);

    const qc_ops_t *cuda = qc_ops_cuda_table ();
    if (!qc_cuda_built ()) {
        CHECK (cuda == NULL);
        printf ("CPU-only build: no CUDA table to check\n");
    } else {
        CHECK (cuda && strcmp (cuda->name, "cuda") == 0);
        CHECK (cuda && empty_slots (cuda, names, sizeof names) == 0,
               "CUDA table: empty slots %s", names);
        /* The slots the CUDA table fills with CPU functions are the ones
         * its ops_table.c documents, no more. */
        int on_cpu = 0;
#define QC_ON_CPU_(slot, optional, params, args)                                         \
        if (cuda && cuda->slot && cuda->slot == cpu->slot) {               \
            on_cpu++;                                                      \
            printf ("  %s: the CPU's function in the CUDA table\n", #slot); \
        }
        QC_OPS_LIST (QC_ON_CPU_)
#undef QC_ON_CPU_
        CHECK (on_cpu == 7, "%d CPU functions in the CUDA table (ops_table.c "
               "names 7: fimg_quantile, label, area_filter, fill_holes, "
               "region_summary, gabor, median_disk)", on_cpu);
    }
    return check_done ("ops_tables");
}
