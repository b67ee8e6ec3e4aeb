/* The two backends' ops tables are complete: every slot of qc_ops_t that
 * QC_OPS_LIST (kernels/ops/ops.h) does not mark optional is filled, in
 * the CPU table and in the CUDA table. Designated initialisers leave a
 * forgotten slot NULL without a compiler warning, and a module would
 * only find out by crashing on a GPU worker; this finds out here. The
 * CUDA tables (the copying and the resident lane) are checked in every
 * CUDA build, without a device; a CPU-only build has none and says so.
 * The simulated device's table too. Each table's slots that are the
 * CPU's functions are exactly those its lists name. The check is shown
 * to fail on a table with a slot emptied on purpose. */
#include <stdio.h>
#include <string.h>

#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/ops/ops.h"
#include "kernels/ops/sim/sim_ops.h"
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

/* Slots of t that are cpu's own functions, printed. */
static int
on_cpu (const qc_ops_t *t, const qc_ops_t *cpu, const char *what)
{
    int n = 0;
#define QC_ON_CPU_(slot, optional, params, args)                           \
    if (t->slot && t->slot == cpu->slot) {                                 \
        n++;                                                               \
        printf ("  %s: %s runs the CPU's function\n", what, #slot);        \
    }
    QC_OPS_LIST (QC_ON_CPU_)
#undef QC_ON_CPU_
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

    /* The simulated device: complete, its device set, no slot on the
     * host (as a resident GPU lane has none), the C backend to fall back
     * on when its memory runs out. */
    const qc_ops_t *sim = qc_ops_sim ();
    CHECK (sim && sim->device == qc_sim_device ()
           && empty_slots (sim, names, sizeof names) == 0,
           "sim table: empty slots %s", names);
    CHECK (sim && on_cpu (sim, cpu, "sim") == 0,
           "the sim table runs a slot on the host");
    CHECK (sim && sim->when_full == cpu, "the sim table's when_full");
    CHECK (cpu->when_full == NULL, "the CPU table has a when_full");
    /* the simulated device decodes a lane's JPEG tiles by default (its
     * decode is libjpeg's own); the GPU lanes only when asked (nvJPEG
     * rounds apart: ops.h) */
    CHECK (sim && sim->decode_by_default == 1, "the sim table decodes by default");

    const qc_ops_t *cuda = qc_ops_cuda_table ();
    const qc_ops_t *resident = qc_ops_cuda_resident_table ();
    if (!qc_cuda_built ()) {
        CHECK (cuda == NULL && resident == NULL);
        printf ("CPU-only build: no CUDA table to check\n");
    } else {
        CHECK (cuda && strcmp (cuda->name, "cuda") == 0 && !cuda->device);
        CHECK (cuda && empty_slots (cuda, names, sizeof names) == 0,
               "CUDA table: empty slots %s", names);
        CHECK (resident && resident->device
               && empty_slots (resident, names, sizeof names) == 0,
               "resident CUDA table: empty slots %s", names);
        /* The slots each lane fills with CPU functions: none in the
         * resident lane, cuda_ops.h's list in the copying one. */
        int copying = 0;
#define QC_COUNT_(slot) copying++;
        QC_CUDA_COPYING_ON_HOST (QC_COUNT_)
#undef QC_COUNT_
        CHECK (cuda && on_cpu (cuda, cpu, "copying lane") == copying,
               "copying lane: %d CPU functions expected", copying);
        CHECK (resident && on_cpu (resident, cpu, "resident lane") == 0,
               "resident lane: a CPU function");
        /* a slide too large for the GPU runs again on the copying lane,
         * and one too large for that on the CPU */
        CHECK (resident && resident->when_full == cuda && cuda
               && cuda->when_full == cpu, "the lanes' when_full");
        CHECK (resident && cuda && !resident->decode_by_default && !cuda->decode_by_default,
               "a CUDA lane decodes JPEG tiles by default");
    }
    return check_done ("ops_tables");
}
