/* Says what a job waits for when nothing has come back for a while.
 *
 * After wait_s seconds without a result (and every minute after that),
 * the client asks the broker for its STATUS; when no connected worker
 * can take this job's tasks (none at all, or --gpu-only and no worker
 * with a GPU, or --cpu-only and none with CPU slots), it says so, names
 * what to start, and keeps waiting. When workers could take the tasks
 * but none has finished one, it says how the job stands (slides queued
 * and running), asking less often each time. */
#ifndef QC_CLIENT_WAITING_H
#define QC_CLIENT_WAITING_H

#include <stdbool.h>
#include <stdint.h>

#include "client/progress.h"
#include "shared/proto.h"

typedef struct {
    uint32_t wait_s;          /* 0: never ask */
    uint8_t resource;         /* the job's qc_resource_t */
    const char *endpoint;
    const char *server_key;   /* the broker's public key file when it uses
                                 CurveZMQ (else NULL): the worker to start
                                 is told its own keys and this one */
    int64_t since;            /* last sign of progress (ms, monotonic) */
    int64_t asked;            /* last STATUS sent, 0: none out */
    int64_t next;             /* when to ask next */
    int64_t again;            /* ms between asks: doubles while busy */
    unsigned said;            /* times a missing worker was reported */
    bool local;               /* the one-process mode: its own worker
                                 process, never one to start by hand */
    size_t workers_seen;      /* the most workers a STATUS_REPLY or the
                                 job's results showed (qc_waiting_worked) */
} qc_waiting_t;

void qc_waiting_init (qc_waiting_t *w, uint32_t wait_s, uint8_t resource,
                      const char *endpoint, int64_t now);
/* A result came, or the broker answers again: the clock starts again,
 * and the answer to a STATUS sent before is not used. */
void qc_waiting_progress (qc_waiting_t *w, int64_t now);
/* A result came from a worker: workers were there (a wait with none
 * then says one may be restarting). */
void qc_waiting_worked (qc_waiting_t *w);
/* true when a STATUS should be sent now (and notes that it was). */
bool qc_waiting_due (qc_waiting_t *w, int64_t now);
/* A STATUS_REPLY: prints what is missing above the bar (no worker can
 * take the job), or else how job stands (queued, running, workers).
 * Returns true when something was missing. */
bool qc_waiting_on_status (qc_waiting_t *w, const qc_msg_t *m, uint64_t job,
                           qc_progress_t *p);

#endif
