/* Tasks that wait, in the worker's agent, for their job's config assets.
 *
 * A TASK's config names the files it needs as asset references
 * (kernels/asset.h). When one is not in this process's store the task
 * is held here and the agent asks the broker for the job's files once
 * (FETCH); the broker answers ASSETS. Then each held task of the job
 * goes to the executors if its files are all there now, and fails
 * otherwise, naming what is missing: a task never runs without its
 * files and never waits for ever (a FETCH left unanswered is asked
 * again, then the task fails). Used from the agent thread only. */
#ifndef QC_ASSET_WAIT_H
#define QC_ASSET_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/proto.h"
#include "worker/worker.h"

typedef struct asset_wait asset_wait_t;

/* What the agent does with a task that leaves the wait. */
typedef struct {
    void *arg;
    /* the task may run now: queue it on lane (takes its strings) */
    void (*run) (void *arg, int lane, qc_task_t *task);
    /* the task cannot run: answer it failed with reason */
    void (*fail) (void *arg, qc_task_t *task, const char *reason);
    /* ask the broker for the files of the job (id and identity key) */
    void (*fetch) (void *arg, uint64_t job, uint64_t key);
} asset_wait_fns_t;

asset_wait_t *asset_wait_new (const asset_wait_fns_t *fns);
void asset_wait_destroy (asset_wait_t **self_p);

/* The first asset the config names that this process's store lacks
 * (its 64-hex name copied to missing), or false when none is lacking. */
bool asset_wait_lacks (const char *config, char missing[65]);

/* Holds task (takes its strings) until its job's files arrive; asks for
 * them when no request for that job is out. -1 on memory (the task is
 * left to the caller). */
int asset_wait_hold (asset_wait_t *self, int lane, qc_task_t *task,
                     int64_t now);
/* An ASSETS message: keeps its files, then releases the job's tasks. */
void asset_wait_on_assets (asset_wait_t *self, const qc_msg_t *m);
/* Asks again for files not answered after a while; fails tasks whose
 * requests all went unanswered. */
void asset_wait_tick (asset_wait_t *self, int64_t now);
/* Drops the held task the broker took back (REVOKE): true when it was
 * held here. */
bool asset_wait_remove (asset_wait_t *self, uint64_t job, uint64_t key,
                        uint64_t idx, uint32_t attempt);
/* Hands every held task to fn (drain, reconnect), emptying the wait. */
void asset_wait_drop_all (asset_wait_t *self,
                          void (*fn) (void *arg, qc_task_t *task), void *arg);
size_t asset_wait_count (const asset_wait_t *self);

#endif
