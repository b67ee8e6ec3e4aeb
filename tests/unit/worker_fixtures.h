/* A real qc-worker (worker/worker.h) for tests of the broker and of the
 * worker's side of the protocol: one slot, its executor a no-op that
 * answers each task "ok" with its path as filename. */
#ifndef QC_TEST_WORKER_FIXTURES_H
#define QC_TEST_WORKER_FIXTURES_H

#include "shared/result.h"
#include "worker/worker.h"

static inline void
fx_noop_exec (void *arg, const qc_task_t *task, qc_result_t *out)
{
    (void) arg;
    qc_result_set (out, "filename", "%s", task->path ? task->path : "");
}

/* A worker named name on endpoint ep, beating every hb_ms; NULL when it
 * cannot start. */
static inline qc_worker_t *
fx_noop_worker (const char *ep, const char *name, uint32_t hb_ms)
{
    qc_worker_config_t wc;
    qc_worker_config_defaults (&wc);
    wc.endpoint = ep;
    wc.name = name;
    wc.slots = 1;
    wc.heartbeat_ms = hb_ms;
    wc.exec = fx_noop_exec;
    return qc_worker_new (&wc);
}

#endif
