/* The worker's local task queues: one for CPU executors, one per GPU.
 * A mutex and a condition variable; the agent pushes, executors pop. */
#ifndef QC_TASKQ_H
#define QC_TASKQ_H

#include <pthread.h>
#include "worker/worker.h"

typedef struct taskq_item {
    qc_task_t task;
    struct taskq_item *next;
} taskq_item_t;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    taskq_item_t *head[1 + QC_PROTO_MAX_GPUS], *tail[1 + QC_PROTO_MAX_GPUS];
    unsigned active;          /* popped and not yet taskq_done */
    int64_t idle_since;       /* when the last running task ended with none
                                 queued (monotonic ms); 0: busy since */
    bool closed;
} taskq_t;

int taskq_init (taskq_t *q);
void taskq_fini (taskq_t *q);
/* lane 0 = CPU, lane 1 + i = the i-th advertised GPU. Takes the task's
 * strings. */
int taskq_push (taskq_t *q, int lane, qc_task_t *task);
/* Blocks until a task is in the lane or the queue is closed (-1). */
int taskq_pop (taskq_t *q, int lane, qc_task_t *out);
/* A popped task has ended; true when it was the last one running and
 * no lane holds another: the worker has nothing to do (since now). */
bool taskq_done (taskq_t *q);
/* True once when the worker has had nothing to do for after_ms (at
 * now): the moment to give back what it keeps for the next slide. Not
 * at once: with --prefetch 0 the queue is empty at the end of every
 * task, the next one coming a moment later. */
bool taskq_idle_due (taskq_t *q, int64_t now, int64_t after_ms);
/* Removes every queued task, calling fn on each (then freeing it). */
void taskq_drain (taskq_t *q, void (*fn) (void *, qc_task_t *), void *arg);
void taskq_close (taskq_t *q);
bool taskq_closed (taskq_t *q);
/* Removes the queued task (job, key, idx, attempt) if it is there; true
 * when it was. *path (not NULL) gets its slide's path, malloc'd, when no
 * other queued task has the same (its fetch ahead may go), else NULL. */
bool taskq_remove (taskq_t *q, uint64_t job, uint64_t key, uint64_t idx,
                   uint32_t attempt, char **path);
/* A copy of the path of the task next in lane (malloc'd), or NULL when
 * the lane is empty: the slide to fetch ahead. */
char *taskq_next_path (taskq_t *q, int lane);
void qc_task_clear (qc_task_t *t);

#endif
