/* The scheduler's measure of its workers' speeds, and the one rule that
 * uses it (sched.h, Speed): whether a CPU slot should leave the tasks
 * either resource may run to the GPUs. */
#include "broker/sched_int.h"

void
sched_speed_note (sched_worker_t *w, bool gpu, int64_t ms)
{
    if (!w || ms < 0)
        return;
    if (ms == 0)
        ms = 1;                 /* measured, if below the clock's step */
    int64_t *m = gpu ? &w->ms_gpu : &w->ms_cpu;
    /* a moving mean (3/4 the old, 1/4 the new): slides differ, and a
       machine's load changes, but one odd slide does not swing it */
    *m = *m ? (*m * 3 + ms) / 4 : ms;
    if (*m < 1)
        *m = 1;
}

/* Whether w's GPUs take tasks now (the dispatch's own tests). */
static bool
gpus_take (const sched_t *self, const sched_worker_t *w)
{
    return w->ngpus && !w->draining && !w->stalled && !w->clearing
           && !sched_worker_closed (w) && !sched_worker_paused (self, w);
}

void
sched_speed_outlook (sched_t *self)
{
    /* the GPUs' rate (slides a ms) and what they hold; a GPU worker not
       measured yet counts for nothing (it may be slow) */
    double rate = 0;
    uint64_t held = 0;
    for (const sched_worker_t *g = self->workers; g; g = g->next)
        if (gpus_take (self, g) && g->ms_gpu > 0) {
            rate += (double) g->ngpus / (double) g->ms_gpu;
            held += g->gpu_inflight;
        }
    self->gpu_rate = rate;
    self->gpu_held = held;
}

/* The rule, on the outlook taken: the GPUs would be done with all they
 * hold and all that is queued in (held + queued) / rate; a slot that
 * takes one of the queued tasks ends the cohort sooner only when it
 * finishes that one before then. */
static bool
waits (const sched_t *self, const sched_worker_t *w)
{
    if (w->ms_cpu <= 0 || self->gpu_rate <= 0)
        return false;
    double gpus_done = (double) (self->gpu_held + self->queued_kind[QC_RES_ANY])
                       / self->gpu_rate;
    return (double) w->ms_cpu >= gpus_done;
}

bool
sched_cpu_slot_waits_now (const sched_t *self, const sched_worker_t *w)
{
    return self && w && waits (self, w);
}

bool
sched_cpu_slot_waits (const sched_t *self, const sched_worker_t *w)
{
    if (!self || !w)
        return false;
    sched_t look = *self;       /* a copy: the outlook of this moment */
    sched_speed_outlook (&look);
    return waits (&look, w);
}

size_t
sched_queued_any (const sched_t *self)
{
    return self ? self->queued_kind[QC_RES_ANY] : 0;
}
