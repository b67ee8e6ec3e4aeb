/* The scheduler's dispatch policy (contract in sched.h): which queued
 * task goes to which worker next. Tasks that run alone go first, each to
 * a worker holding nothing (busy ones are set aside until they empty).
 * Then jobs share the workers round-robin (a cursor per queue); idle
 * capacity is filled before any prefetch, and free GPUs before CPU
 * slots. The transition itself (QUEUED -> DISPATCHED) is sched.c's
 * sched_assign. */
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
        /* ANY tasks only while the GPUs would not finish them first */
        int nkinds = sched_cpu_slot_waits_now (self, w) ? 1 : 2;
        sched_task_t *t = take_task (self, QC_RES_CPU, cpu_kinds, nkinds);
        if (t) {
            sched_assign (self, t, w, -1);
            return true;
        }
    }
    return false;
}

static uint32_t
load_of (const sched_worker_t *w)
{
    return w->cpu_inflight + w->gpu_inflight;
}

/* The tasks waiting to run alone that could go out now (not in a held
 * job), by qc_resource_t; their total. A walk over the jobs, made only
 * while some task waits to run alone (after a crash). */
static size_t
alone_ready (const sched_t *self, size_t ready[3])
{
    ready[0] = ready[1] = ready[2] = 0;
    if (!self->queued_alone[0] && !self->queued_alone[1] && !self->queued_alone[2])
        return 0;
    for (const sched_job_t *j = self->jobs; j; j = j->next)
        for (int k = 0; k < 3 && !j->held; k++)
            ready[k] += j->queue[SCHED_ALONE + k].count;
    return ready[0] + ready[1] + ready[2];
}

/* Whether w could run one of those: a GPU task needs a GPU, a CPU task
 * a CPU slot. */
static bool
fits_alone (const size_t ready[3], const sched_worker_t *w)
{
    return (w->ngpus && (ready[QC_RES_GPU] || ready[QC_RES_ANY]))
           || (w->slots && (ready[QC_RES_CPU] || ready[QC_RES_ANY]));
}

/* Gives w, which holds nothing, one task to run alone: on its first GPU
 * when it has one and a GPU or ANY task waits, else on a CPU slot. */
static bool
give_alone (sched_t *self, sched_worker_t *w, size_t ready[3])
{
    static const int gpu_kinds[] = {SCHED_ALONE + QC_RES_GPU, SCHED_ALONE + QC_RES_ANY};
    static const int cpu_kinds[] = {SCHED_ALONE + QC_RES_CPU, SCHED_ALONE + QC_RES_ANY};
    int gpu = 0;
    sched_task_t *t = w->ngpus ? take_task (self, SCHED_ALONE + QC_RES_GPU, gpu_kinds, 2)
                               : NULL;
    if (!t && w->slots) {
        t = take_task (self, SCHED_ALONE + QC_RES_CPU, cpu_kinds, 2);
        gpu = -1;
    }
    if (!t)
        return false;
    ready[t->resource]--;
    sched_assign (self, t, w, gpu);
    if (t->worker == w) {      /* not failed for too many attempts */
        w->alone = t;
        t->alone_att = t->attempt;
    }
    w->clearing = false;
    return true;
}

/* Whether w may be set aside to empty for a task that runs alone: not
 * one that takes no tasks anyway, nor one that may never empty (a ghost
 * runs on past its deadline; a stalled worker does not start what it
 * holds). */
static bool
may_clear (const sched_t *self, const sched_worker_t *w, const size_t ready[3])
{
    return !w->draining && !w->stalled && !w->nghosts && !sched_worker_closed (w)
           && !sched_worker_paused (self, w) && fits_alone (ready, w);
}

/* Tasks that run alone: each to a worker that holds nothing; then as
 * many busy workers set aside (clearing) as such tasks still wait, the
 * least loaded first, at most half the workers (the others go on with
 * the rest of the queue), and no more (a clearing worker no longer
 * needed, or no longer fit to empty, takes tasks again). */
static void
dispatch_alone (sched_t *self)
{
    size_t ready[3];
    size_t waiting = alone_ready (self, ready), nworkers = 0;
    for (sched_worker_t *w = self->workers; w && waiting; w = w->next)
        if (!w->draining && !w->stalled && !sched_worker_closed (w) && load_of (w) == 0
            && !sched_worker_paused (self, w) && fits_alone (ready, w)
            && give_alone (self, w, ready))
            waiting--;
    size_t clearing = 0;
    for (sched_worker_t *w = self->workers; w; w = w->next) {
        nworkers++;
        if (w->clearing && (clearing >= waiting || !may_clear (self, w, ready)))
            w->clearing = false;
        clearing += w->clearing;
    }
    size_t most = (nworkers + 1) / 2;
    while (clearing < waiting && clearing < most) {
        sched_worker_t *best = NULL;
        for (sched_worker_t *w = self->workers; w; w = w->next)
            if (!w->clearing && may_clear (self, w, ready)
                && (!best || load_of (w) < load_of (best)))
                best = w;
        if (!best)
            break;
        best->clearing = true;
        clearing++;
    }
}

void
sched_hold (sched_t *self, bool held)
{
    if (self)
        self->held = held;
}

void
sched_dispatch (sched_t *self)
{
    if (!self || self->held)
        return;
    dispatch_alone (self);
    sched_speed_outlook (self);     /* once: a walk over the workers */
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
                if (!w->draining && !w->stalled && !w->clearing && !sched_worker_closed (w)
                    && !sched_worker_paused (self, w) && assign_one (self, w, pass, gpu))
                    progress = true;
        }
    }
}
