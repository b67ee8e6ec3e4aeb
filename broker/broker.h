/* qc-broker as a library: the same broker runs as the qc-broker program
 * and inside qc-submit's one-process mode (as a czmq actor). */
#ifndef QC_BROKER_H
#define QC_BROKER_H

#include <czmq.h>
#include <stdint.h>

/* How qc_broker_new's err starts when its state folder refused a write
 * (a full disk): not a configuration error. */
#define QC_BROKER_DISK_REFUSED "the state folder refused a write: "

typedef struct {
    const char **endpoints;    /* bind to each; default tcp port 5555 on all interfaces */
    size_t nendpoints;
    uint32_t heartbeat_ms;     /* expected of peers that do not say; 1000 */
    uint32_t liveness;         /* missed heartbeats before a peer is dead; 3 */
    uint32_t zmtp_heartbeat_ms; /* ZeroMQ's own PINGs on every connection: one
                                  whose peer answers none for 3 of these is
                                  closed (a machine that lost power leaves a
                                  half-open TCP connection, and a
                                  descriptor, that nothing else closes once
                                  its worker is declared dead); 10000 */
    uint32_t max_deaths;       /* worker deaths before a slide fails; 3 */
    uint32_t result_window;    /* unacknowledged results in flight per client */
    uint32_t job_linger_s;     /* keep a finished, delivered job this long */
    const char *state_dir;     /* journal and result files; NULL: keep
                                  everything in memory (lost on a restart) */
    bool state_recover;        /* start on a damaged journal, dropping the
                                  damaged records (said in the log) */
    uint32_t task_timeout_s;   /* take back a task running longer; 0: never */
    uint32_t trouble_wait_s;   /* a lone worker whose machine fails slides
                                  (memory short) is waited for this long;
                                  0: not at all; 300 */
    uint32_t retention_s;      /* results of a finished job wait this long
                                  for their client; 0: for ever */
    size_t max_peers;          /* workers + clients; 0: from the open-file
                                  limit */
    uint32_t max_jobs_per_client; /* jobs one certificate (without
                                  CurveZMQ: all clients) may hold
                                  (running, or with results not yet
                                  fetched); 0: no limit; 1000 */
    uint32_t max_mb_per_client; /* MB (10^6 bytes) of configs, their
                                  files and slides one certificate's
                                  (without CurveZMQ: all clients') held
                                  jobs may take; 0: no limit; 1000 */
    uint32_t unwritten_mb;     /* MB of results held in memory while the
                                  state folder refuses writes (a full
                                  disk) before nothing more is dispatched;
                                  0: 256 */
    uint32_t results_compact_mb; /* a job's result file is rewritten without
                                  its acknowledged results once they are
                                  this many MB; 0: 64 */
    uint32_t journal_compact_mb; /* the journal is rewritten without what
                                  forgotten jobs left once it is over this
                                  many MB and 4 times what a rewrite would
                                  keep; 0: 64 */
    const char *cert_path;     /* the broker's secret certificate: CurveZMQ
                                  on every endpoint (broker/security.h);
                                  NULL: off */
    const char *allow_dir;     /* with cert_path: the public certificates
                                  admitted (read again while running) */
    bool insecure;             /* without cert_path, bind endpoints others
                                  can reach (a warning); else refused */
} qc_broker_config_t;

typedef struct qc_broker qc_broker_t;

void qc_broker_config_defaults (qc_broker_config_t *cfg);
/* Binds every endpoint; NULL with a message in err when one fails. */
qc_broker_t *qc_broker_new (const qc_broker_config_t *cfg, char *err,
                            size_t errlen);
void qc_broker_destroy (qc_broker_t **self_p);
/* How many peers (workers and clients) it will hold. */
size_t qc_broker_max_peers (const qc_broker_t *self);
/* The state folder in use (NULL: none). */
const char *qc_broker_state_dir (const qc_broker_t *self);
/* The endpoint actually bound for index i (resolves a wildcard port). */
const char *qc_broker_endpoint (qc_broker_t *self, size_t i);
/* Runs until *stop becomes non-zero or, when pipe is given, until the
 * pipe says $TERM. Tells every peer DISCONNECT before returning. */
int qc_broker_run (qc_broker_t *self, zsock_t *pipe, volatile int *stop);
/* czmq actor entry: args is a qc_broker_t* the caller owns. */
void qc_broker_actor (zsock_t *pipe, void *args);

#endif
