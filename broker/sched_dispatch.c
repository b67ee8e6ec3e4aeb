/* The scheduler's dispatch policy (contract in sched.h): which queued
 * task goes to which worker next. Jobs share the workers round-robin
 * (a cursor per resource); idle capacity is filled before any prefetch,
 * and free GPUs before CPU slots. The transition itself (QUEUED ->
 * DISPATCHED) is sched.c's sched_assign. */
#include "broker/sched_int.h"

/* The next job (round-robin after the cursor) with a task in one of the
 * given queues; takes that task off its queue. */
static sched_task_t *
take_task (sched_t *self, int cursor, const int *kinds, int nkinds)
{
    sched_job_t *start = self->cursor[cursor] ? self->cursor[cursor]->next : NULL;
    if (!start)
        start = self->jobs;
    sched_job_t *j = start;
    while (j) {
        for (int k = 0; k < nkinds && !j->held; k++) {
            sched_task_t *t = j->queue[kinds[k]].head;
            if (t) {
                self->cursor[cursor] = j;
                sched_dequeue (self, t);
                return t;
            }
        }
        j = j->next ? j->next : self->jobs;
        if (j == start)
            break;
    }
    return NULL;
}

/* Gives w one task that fits its credit under the given pass: pass 0
 * fills executing capacity only, pass 1 also the prefetch; gpu picks GPU
 * credit, else CPU credit. */
static bool
assign_one (sched_t *self, sched_worker_t *w, int pass, bool gpu)
{
    static const int gpu_kinds[] = {QC_RES_GPU, QC_RES_ANY};
    static const int cpu_kinds[] = {QC_RES_CPU, QC_RES_ANY};
    uint32_t gpu_cap = w->ngpus + (pass ? w->gpu_prefetch : 0);
    if (gpu && w->gpu_inflight < gpu_cap) {
        sched_task_t *t = take_task (self, QC_RES_GPU, gpu_kinds, 2);
        if (t) {
            int best = 0;  /* the least loaded of its GPUs */
            for (uint32_t g = 1; g < w->ngpus; g++)
                if (w->gpu_load[g] < w->gpu_load[best])
                    best = (int) g;
            sched_assign (self, t, w, best);
            return true;
        }
    }
    /* no prefetch for a worker without CPU slots (a GPU-only worker):
     * it has no executor to run a CPU task, which would wait there for
     * ever */
    uint32_t cpu_cap = w->slots + (pass && w->slots ? w->prefetch : 0);
    if (!gpu && w->cpu_inflight < cpu_cap) {
        sched_task_t *t = take_task (self, QC_RES_CPU, cpu_kinds, 2);
        if (t) {
            sched_assign (self, t, w, -1);
            return true;
        }
    }
    return false;
}

void
sched_dispatch (sched_t *self)
{
    if (!self)
        return;
    /* one task per worker per round, so idle workers are served before
     * any worker's prefetch fills; free GPUs on every worker are offered
     * first, so an ANY task takes a free GPU wherever there is one before
     * any CPU slot */
    for (int phase = 0; phase < 4; phase++) {
        int pass = phase / 2;
        bool gpu = phase % 2 == 0;
        bool progress = true;
        while (progress && self->queued > 0) {
            progress = false;
            for (sched_worker_t *w = self->workers; w && self->queued > 0; w = w->next)
                if (!w->draining && !w->stalled && assign_one (self, w, pass, gpu))
                    progress = true;
        }
    }
}
