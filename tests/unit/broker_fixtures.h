/* A real broker and a real qc-worker on loopback, for tests of the
 * broker and of the worker's side of the protocol. The worker has one
 * slot; its executor is a no-op that answers each task "ok" with its
 * path as filename. */
#ifndef QC_TEST_BROKER_FIXTURES_H
#define QC_TEST_BROKER_FIXTURES_H

#include <stdio.h>

#include "broker/broker.h"
#include "shared/result.h"
#include "worker/worker.h"

/* The fixtures' broker settings: tcp://127.0.0.1:*, beating every
 * 200 ms, state_dir (NULL: no state folder); a test sets what it tests
 * (result_window, max_peers) before fx_broker_new_with. */
static inline void
fx_broker_config (qc_broker_config_t *bc, const char *state_dir)
{
    static const char *eps[] = {"tcp://127.0.0.1:*"};
    qc_broker_config_defaults (bc);
    bc->endpoints = eps;
    bc->nendpoints = 1;
    bc->heartbeat_ms = 200;
    bc->state_dir = state_dir;
}

/* A broker of those settings, not yet running (what is sent to it waits
 * in its socket until qc_broker_actor runs it); its endpoint into ep.
 * NULL with the reason in err. */
static inline qc_broker_t *
fx_broker_new_with (const qc_broker_config_t *bc, char ep[128], char *err, size_t errlen)
{
    qc_broker_t *b = qc_broker_new (bc, err, errlen);
    if (b)
        snprintf (ep, 128, "%s", qc_broker_endpoint (b, 0));
    return b;
}

static inline qc_broker_t *
fx_broker_new (const char *state_dir, char ep[128], char *err, size_t errlen)
{
    qc_broker_config_t bc;
    fx_broker_config (&bc, state_dir);
    return fx_broker_new_with (&bc, ep, err, errlen);
}

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
