/* Broker internals shared by broker.c (event loop, workers),
 * broker_jobs.c (jobs and clients) and broker_status.c. */
#ifndef QC_BROKER_INT_H
#define QC_BROKER_INT_H

#include "broker/broker.h"
#include "broker/sched.h"
#include "shared/proto.h"

#define PEER_KEY_MAX 520      /* hex of a routing id of up to 255 bytes */
/* Said to a peer the broker does not know (it restarted, or declared the
 * peer dead): a worker answers with READY, a client with ATTACH. */
#define UNKNOWN_PEER_REASON "unknown peer: send READY or ATTACH"

typedef struct {
    char key[PEER_KEY_MAX];
    zframe_t *id;
    char *name, *host, *version;
    uint32_t slots, prefetch, hb_ms;
    qc_gpu_t *gpus;
    size_t ngpus;
    int64_t last_seen;
    int64_t next_beat;        /* when we next send it a HEARTBEAT */
    sched_worker_t *sw;
} worker_rec_t;

typedef struct {
    double time;
    zmsg_t *msg;              /* encoded LOG body (2 frames) */
} log_entry_t;

typedef struct {
    uint64_t id;
    sched_job_t *sj;
    char *config;
    qc_asset_t *assets;       /* the files its config names (SUBMIT), given
                                 to each worker that asks (FETCH) */
    size_t nassets;
    char *name;               /* client's label for the job */
    uint8_t resource;
    zframe_t *client;         /* routing id of the attached client */
    int64_t client_seen;
    bool attached;
    /* results in order; seq n is outbox[n - 1 - outbox_base] */
    zmsg_t **outbox;
    size_t noutbox, cap_outbox;
    uint64_t outbox_base;     /* seq of outbox[0] minus 1 */
    uint64_t last_seq, sent_seq, acked_seq;
    bool done_sent;
    bool pump_due;            /* results queued since the last pump */
    int64_t finished_at;      /* 0 while running */
    /* log records kept while no client is attached (bounded ring) */
    zlist_t *logs;
    uint64_t logs_dropped;
} job_rec_t;

struct qc_broker {
    qc_broker_config_t cfg;
    zsock_t *router;
    char **bound;
    size_t nbound;
    sched_t *sched;
    zhashx_t *workers;        /* peer key -> worker_rec_t */
    zhashx_t *jobs;           /* job id (as string) -> job_rec_t */
    uint64_t next_job;
    int64_t now;
    uint64_t dropped;         /* malformed messages, for status */
    /* Work deferred to the end of a batch of messages (see flush_due in
     * broker.c): one dispatch and one pump per job per batch instead of
     * one per RESULT, so TASKs and RESULTs leave in bursts. */
    bool dispatch_due, pump_due;
};

void peer_key (zframe_t *id, char *key);

/* broker_jobs.c */
void jobs_on_submit (qc_broker_t *b, zframe_t *from, qc_msg_t *m);
void jobs_on_attach (qc_broker_t *b, zframe_t *from, qc_msg_t *m);
void jobs_on_ack (qc_broker_t *b, zframe_t *from, qc_msg_t *m);
void jobs_on_cancel (qc_broker_t *b, zframe_t *from, qc_msg_t *m);
void jobs_on_client_heartbeat (qc_broker_t *b, zframe_t *from);
/* A worker asks for a job's config assets: answer ASSETS. */
void jobs_on_fetch (qc_broker_t *b, zframe_t *from, qc_msg_t *m);
/* A first result for a task: queue it for the client. */
void jobs_deliver_result (qc_broker_t *b, job_rec_t *job, qc_msg_t *m);
void jobs_forward_log (qc_broker_t *b, job_rec_t *job, qc_msg_t *m);
void jobs_task_failed (void *arg, sched_task_t *task, const char *reason);
/* The scheduler assigned a task: send TASK to its worker. */
void jobs_send_task (void *arg, sched_task_t *task, sched_worker_t *w);
void jobs_tick (qc_broker_t *b);
/* Sends what jobs_deliver_result queued since the last call. */
void jobs_pump_due (qc_broker_t *b);
void jobs_goodbye (qc_broker_t *b);
job_rec_t *jobs_lookup (qc_broker_t *b, uint64_t id);
void job_rec_destroy (void *item);

/* broker_status.c */
void status_reply (qc_broker_t *b, zframe_t *from);

#endif
