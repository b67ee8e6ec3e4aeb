/* The broker's scheduler: jobs, their tasks, the workers' resources, and
 * the one state machine a task goes through:
 *
 *     QUEUED -> DISPATCHED(worker, attempt) -> RUNNING -> DONE | FAILED
 *                  |  worker left/died, task not started: back to QUEUED
 *                  |  worker died while RUNNING: blame + 1; QUEUED again,
 *                  |  or FAILED once blame reaches max_deaths
 *
 * No sockets here: the broker feeds events in and gets assignments and
 * verdicts out through callbacks, so every rule is unit-testable.
 *
 * Fairness: each resource kind keeps a round-robin cursor over jobs, so two
 * clients' cohorts interleave task by task. Credit: a worker holds at most
 * slots + prefetch CPU tasks and gpus + gpu_prefetch GPU tasks. */
#ifndef QC_SCHED_H
#define QC_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/proto.h"

typedef enum {
    TASK_QUEUED, TASK_DISPATCHED, TASK_RUNNING, TASK_DONE, TASK_FAILED
} task_state_t;

typedef struct sched_worker sched_worker_t;
typedef struct sched_job sched_job_t;

typedef struct sched_task {
    sched_job_t *job;
    uint64_t idx;              /* index within the job (client's numbering) */
    char *path;
    task_state_t state;
    uint8_t resource;          /* qc_resource_t */
    uint32_t attempt;          /* dispatches so far */
    uint32_t blame;            /* workers that died while running it */
    int32_t gpu;               /* GPU index when on a GPU, else -1 */
    sched_worker_t *worker;    /* while DISPATCHED or RUNNING */
    struct sched_task *qprev, *qnext;   /* job's queue for its resource */
    struct sched_task *wprev, *wnext;   /* worker's assigned list */
} sched_task_t;

typedef struct {
    sched_task_t *head, *tail;
    size_t count;
} task_list_t;

struct sched_job {
    uint64_t id;
    sched_task_t **blocks;     /* tasks in blocks of SCHED_BLOCK: stable */
    size_t nblocks;
    uint64_t total;            /* tasks added so far */
    uint64_t done, failed, running, dispatched;
    bool final;                /* client said no more tasks will come */
    bool cancelled;
    task_list_t queue[3];      /* by qc_resource_t */
    void *owner;               /* the broker's per-job record */
    sched_job_t *prev, *next;
};

struct sched_worker {
    uint32_t slots, ngpus, prefetch, gpu_prefetch;
    uint32_t cpu_inflight, gpu_inflight;
    uint32_t gpu_load[QC_PROTO_MAX_GPUS];
    uint32_t gpu_index[QC_PROTO_MAX_GPUS];  /* device numbers advertised */
    bool draining;             /* takes no new tasks */
    task_list_t assigned;
    void *owner;               /* the broker's per-worker record */
    sched_worker_t *prev, *next;
};

typedef struct sched sched_t;

typedef struct {
    /* A task was assigned: send TASK to the worker. gpu is -1 for a CPU
     * slot. */
    void (*dispatch) (void *arg, sched_task_t *task, sched_worker_t *w);
    /* A task failed without a worker's result (blamed out, cancelled):
     * tell the client. */
    void (*failed) (void *arg, sched_task_t *task, const char *reason);
    void *arg;
} sched_callbacks_t;

#define SCHED_BLOCK 1024

sched_t *sched_new (uint32_t max_deaths, const sched_callbacks_t *cb);
void sched_destroy (sched_t **self_p);

sched_job_t *sched_job_new (sched_t *self, uint64_t id, void *owner);
/* Adds a task at the job's next index. NULL on memory or bounds. */
sched_task_t *sched_job_add (sched_t *self, sched_job_t *job,
                             const char *path, uint8_t resource);
sched_task_t *sched_job_task (const sched_job_t *job, uint64_t idx);
/* True when every task of a final job is DONE or FAILED. */
bool sched_job_finished (const sched_job_t *job);
/* Drops the job's queued tasks (FAILED "cancelled"); running ones finish
 * and their results are still reported. */
void sched_job_cancel (sched_t *self, sched_job_t *job);
/* Forgets a finished job. Its tasks must not be referenced afterwards. */
void sched_job_remove (sched_t *self, sched_job_t *job);

sched_worker_t *sched_worker_add (sched_t *self, uint32_t slots,
                                  uint32_t prefetch, const uint32_t *gpus,
                                  uint32_t ngpus, void *owner);
/* A worker left or died. Tasks it had not started go back to the queue
 * unblamed; those it was running are blamed when died is true. */
void sched_worker_remove (sched_t *self, sched_worker_t *w, bool died,
                          const char *name);
void sched_worker_drain (sched_t *self, sched_worker_t *w);
/* Hands back tasks the worker had not started (on its DISCONNECT). */
void sched_worker_return (sched_t *self, sched_worker_t *w, sched_job_t *job,
                          uint64_t idx);

/* The worker began executing the task (its STARTED message). */
void sched_task_started (sched_t *self, sched_worker_t *w, sched_job_t *job,
                         uint64_t idx);
/* A RESULT came. Returns true when it is the first for this task (deliver
 * it), false for a duplicate or a task already failed (drop it). Frees
 * the credit of whichever worker the task was assigned to. */
bool sched_task_finished (sched_t *self, sched_job_t *job, uint64_t idx,
                          bool ok);

/* Assigns queued tasks to workers with credit; calls cb->dispatch. */
void sched_dispatch (sched_t *self);

size_t sched_queue_depth (const sched_t *self);
sched_job_t *sched_first_job (const sched_t *self);
sched_worker_t *sched_first_worker (const sched_t *self);

#endif
