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

/* The GPUs' rate (slides a ms) and what they hold now; a GPU worker not
 * measured yet counts for nothing (it may be slow). */
static void
outlook (const sched_t *self, double *rate, uint64_t *held)
{
    *rate = 0;
    *held = 0;
    for (const sched_worker_t *g = self->workers; g; g = g->next)
        if (gpus_take (self, g) && g->ms_gpu > 0) {
            *rate += (double) g->ngpus / (double) g->ms_gpu;
            *held += g->gpu_inflight;
        }
}

void
sched_speed_outlook (sched_t *self)
{
    outlook (self, &self->gpu_rate, &self->gpu_held);
}

/* The rule: the GPUs would be done with all they hold and all that is
 * queued in (held + queued) / rate; a slot that takes one of the queued
 * tasks ends the cohort sooner only when it finishes that one before
 * then. */
static bool
waits (const sched_t *self, const sched_worker_t *w, double rate, uint64_t held)
{
    if (w->ms_cpu <= 0 || rate <= 0)
        return false;
    return (double) w->ms_cpu >= (double) (held + self->queued_kind[QC_RES_ANY]) / rate;
}

bool
sched_cpu_slot_waits_now (const sched_t *self, const sched_worker_t *w)
{
    return self && w && waits (self, w, self->gpu_rate, self->gpu_held);
}

bool
sched_cpu_slot_waits (const sched_t *self, const sched_worker_t *w)
{
    if (!self || !w)
        return false;
    double rate;
    uint64_t held;
    outlook (self, &rate, &held);
    return waits (self, w, rate, held);
}

size_t
sched_queued_any (const sched_t *self)
{
    return self ? self->queued_kind[QC_RES_ANY] : 0;
}
