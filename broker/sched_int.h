/* Inside the scheduler: its state, shared by the state machine
 * (sched.c), the rules for executions that end without a result
 * (sched_blame.c) and the dispatch policy (sched_dispatch.c). */
#ifndef QC_BROKER_SCHED_INT_H
#define QC_BROKER_SCHED_INT_H

#include "broker/sched.h"

struct sched {
    uint32_t max_deaths;
    uint32_t max_vanished;
    uint32_t attempt_base;         /* this broker life's attempts follow it */
    int64_t now;                   /* ms, the broker's monotonic clock */
    int64_t timeout;               /* task deadline in ms; 0 = none */
    int64_t trouble_wait;          /* ms a lone worker's machine is waited
                                      for (sched_set_trouble_wait); 0: not */
    bool identities;               /* attempts tied to who they went to */
    sched_callbacks_t cb;
    sched_job_t *jobs;             /* all jobs, oldest first */
    sched_job_t *jobs_tail;
    sched_job_t *cursor[SCHED_QUEUES];  /* round-robin position per queue */
    sched_worker_t *workers;       /* all workers, oldest first */
    sched_worker_t *workers_tail;
    size_t queued;                 /* tasks in every job's queues */
    size_t queued_alone[3];        /* of those, tasks that run alone, by
                                      qc_resource_t */
    size_t queued_kind[3];         /* and the others, by qc_resource_t */
    double gpu_rate;               /* the outlook (sched_speed_outlook): the
                                      GPUs' slides a ms, at their measured
                                      speeds ... */
    uint64_t gpu_held;             /* ... and the tasks they hold: taken
                                      once a dispatch, kept by sched_assign */
    bool held;                     /* sched_hold: nothing is dispatched */
};

/* Whether w takes no task but a task to run alone, and that only when
 * it holds nothing: it runs one alone, or one it ran alone runs on as a
 * ghost. */
static inline bool
sched_worker_closed (const sched_worker_t *w)
{
    return w->alone || w->alone_ghosts;
}

/* Whether w is paused after failures of its machine (sched.h). */
static inline bool
sched_worker_paused (const sched_t *self, const sched_worker_t *w)
{
    return self->now < w->paused_until;
}

/* The state machine's own steps (sched.c), shared with the rules for
 * executions that end without a result (sched_blame.c). */
/* The attempt check every message about a task goes through. */
sched_verdict_t sched_judge (const sched_t *self, const sched_task_t *t, uint32_t attempt);
/* With identities on: whether attempt of t went to identity who
 * (*since: its dispatch or start); why one that did not is refused. */
bool sched_attempt_of (const sched_task_t *t, uint32_t attempt, uint32_t who,
                       int64_t *since);
sched_verdict_t sched_not_yours (const sched_t *self, uint32_t attempt);
/* Remembers t's current attempt (it leaves its worker without a result). */
void sched_remember (const sched_t *self, sched_task_t *t);
/* Takes t off its worker; keep_credit: a ghost holds its credit. */
void sched_detach (sched_task_t *t, bool keep_credit);
/* The ghost of (job, idx, attempt) on w ends: its credit comes back. */
bool sched_ghost_end (sched_worker_t *w, uint64_t job, uint64_t idx, uint32_t attempt);
/* Puts t on its queue (front: it waited longest). */
void sched_enqueue (sched_t *self, sched_task_t *t, bool front);
/* A task off its worker: FAILED with reason (or its job's cancel), else
 * back to the front of its queue. */
void sched_requeue (sched_t *self, sched_task_t *t, const char *reason);
void sched_fail_task (sched_t *self, sched_task_t *t, const char *reason);
void sched_tell_revoked (sched_t *self, sched_task_t *t, sched_worker_t *w, const char *why);

/* Speed (sched_speed.c): w's time for a slide it ran (ms, from its
 * start to its result), on a GPU or a CPU slot, into w's measure. */
void sched_speed_note (sched_worker_t *w, bool gpu, int64_t ms);
/* Takes the outlook (gpu_rate, gpu_held) from the workers: once per
 * dispatch, whose assignments to GPUs then add to gpu_held. */
void sched_speed_outlook (sched_t *self);
/* sched_cpu_slot_waits on the outlook taken (no walk over the workers). */
bool sched_cpu_slot_waits_now (const sched_t *self, const sched_worker_t *w);

/* Takes t off its job's queue (QUEUED, about to be assigned). */
void sched_dequeue (sched_t *self, sched_task_t *t);
/* Dispatches t (off its queue) to w, on GPU gpu_slot (-1: a CPU slot):
 * the QUEUED -> DISPATCHED transition, the worker's credit taken and the
 * dispatch callback called; a task dispatched too often fails instead. */
void sched_assign (sched_t *self, sched_task_t *t, sched_worker_t *w, int gpu_slot);

#endif
