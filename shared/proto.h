/* The wire protocol between qc-broker, qc-worker and qc-submit/qc-status.
 * See PROTOCOL.md for the full description; this header is its C face.
 *
 * Every message is two ZeroMQ frames (after the routing-id frame that a
 * ROUTER socket adds or needs):
 *   frame 1: header, 4 bytes: 'Q' 'C' version command
 *   frame 2: body, one msgpack map from short string keys to values.
 * Decoding is table driven: every key has one type and one bound; unknown
 * keys are skipped (so a newer peer may add fields), a known key with the
 * wrong type or over its bound, a missing required key, an unknown command
 * or version, or trailing bytes make the whole message invalid. */
#ifndef QC_PROTO_H
#define QC_PROTO_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/result.h"

#define QC_PROTO_VERSION 2

/* Bounds enforced on decode (and on encode, so we never send what a peer
 * would refuse). */
#define QC_PROTO_MAX_BODY     (256u << 20)
#define QC_PROTO_MAX_NAME     255
#define QC_PROTO_MAX_PATH     4096
#define QC_PROTO_MAX_CONFIG   (1u << 20)
#define QC_PROTO_MAX_TEXT     8192
#define QC_PROTO_MAX_SLIDES   4096    /* slides in one SUBMIT */
#define QC_PROTO_MAX_GPUS     64
#define QC_PROTO_MAX_REFS     4096    /* task refs in one DISCONNECT or READY */
#define QC_PROTO_MAX_WORKERS  100000  /* rows in a STATUS reply */
#define QC_PROTO_MAX_JOBS     10000
#define QC_PROTO_MAX_TROUBLE  16      /* the broker's own trouble lines */
#define QC_PROTO_MAX_ASSETS   256     /* files a config names, per message */
#define QC_PROTO_MAX_ASSET_NAME 64    /* SHA-256 of the bytes, lower-case hex */
#define QC_PROTO_MAX_ASSET_SIZE (64u << 20)
/* A peer's hb_ms (READY, SUBMIT, ATTACH) the broker takes: below the
 * minimum it uses its own; above the maximum, the maximum (a client that
 * said 2^32-1 ms and went silent held its job attached, so never let go
 * by --linger or --retention, for 150 days). The programs' --heartbeat-ms
 * allow the same range. */
#define QC_HB_MS_MIN          10
#define QC_HB_MS_MAX          600000
/* A REVOKE's reason for an attempt that ran past the broker's task
 * timeout: a worker still running it knows its slot is stuck (a
 * supervised worker then restarts once nothing else runs:
 * worker/supervise.h) */
#define QC_REVOKE_TIMEOUT     "ran past the task timeout"

typedef enum {
    /* worker -> broker */
    QC_READY = 1,        /* name host version slots prefetch gpus hb_ms key */
    QC_HEARTBEAT = 2,    /* (any peer) nothing */
    QC_STARTED = 3,      /* job key idx att: an executor began this task */
    QC_RESULT = 4,       /* job key idx att path result [broker->client: seq] */
    QC_LOG = 5,          /* job key task time level worker slide module message */
    QC_DISCONNECT = 6,   /* drain refs reason: leaving (any direction) */
    QC_FETCH = 7,        /* job: send me the config assets of this job */
    /* broker -> worker */
    QC_TASK = 10,        /* job key idx att path config gpu */
    QC_REVOKE = 11,      /* job key idx att reason: the task was taken back */
    QC_ASSETS = 12,      /* job key assets: the answer to FETCH */
    /* client -> broker */
    QC_SUBMIT = 20,      /* job key base slides config resource final assets */
    QC_CANCEL = 21,      /* job key */
    QC_STATUS = 22,      /* (query) nothing */
    QC_ATTACH = 23,      /* job key seq */
    QC_ACK = 24,         /* job key seq: results up to seq are safely written */
    /* broker -> client */
    QC_ACCEPTED = 30,    /* job key total seq attached res */
    QC_DONE = 31,        /* job key total done failed */
    QC_STATUS_REPLY = 32,/* workers queue jobs */
    QC_ERROR = 33        /* reason [job] */
} qc_command_t;

typedef enum {
    QC_RES_ANY = 0,      /* a free GPU if there is one, else a CPU slot */
    QC_RES_CPU = 1,      /* a CPU slot */
    QC_RES_GPU = 2       /* a GPU only; waits until one is advertised */
} qc_resource_t;

typedef struct {
    uint32_t index;
    char *name;
    uint64_t memory_mb;
} qc_gpu_t;

/* One task of one job, at one attempt (a ref tuple on the wire). */
typedef struct {
    uint64_t job;
    uint64_t idx;
    uint32_t attempt;
    uint64_t key;              /* the job's identity */
} qc_taskref_t;

/* A file a job's config names (an example image, a template), sent with
 * the job: name is the SHA-256 of data in lower-case hex. */
typedef struct {
    char *name;
    unsigned char *data;
    size_t size;
} qc_asset_t;

typedef struct {
    char *name;
    char *host;
    uint32_t slots, gpus, busy, gpu_busy;
    double heartbeat_age;      /* seconds since its last message */
    bool draining;
} qc_worker_row_t;

typedef struct {
    uint64_t job;
    uint64_t total, done, failed, queued, running;
    bool attached, cancelled;
} qc_job_row_t;

/* A worker's measured time for a slide (ms; 0: not measured) on one of
 * its CPU slots and on one of its GPUs: what the broker's scheduler goes
 * by (broker/sched.h, Speed). STATUS_REPLY's speeds, one per row of its
 * workers, in their order. */
typedef struct {
    uint32_t ms_cpu, ms_gpu;
} qc_worker_speed_t;

/* A decoded (or to-be-encoded) message. Strings and arrays are owned by
 * the message and freed by qc_msg_destroy/qc_msg_reset. Which fields a
 * command uses is listed in the enum above and in PROTOCOL.md. */
typedef struct {
    uint8_t command;
    uint64_t job, idx, base, seq, total, done, failed, queue;
    uint64_t key;              /* the job's identity: random, chosen with
                                  the job, never 0 once it exists; READY:
                                  the worker process's instance */
    uint64_t task;             /* LOG: its task's idx + 1; 0: not known */
    uint64_t succeeds;         /* READY: the instance (key) of the process
                                  this one replaces under one supervisor
                                  (it ended); 0: none */
    uint32_t attempt, slots, prefetch, hb_ms;
    int32_t gpu;               /* TASK: GPU index to use, -1 = CPU slot */
    uint8_t resource;          /* qc_resource_t */
    uint8_t level;             /* qc_log_level_t */
    bool final, drain;
    bool attached;             /* ACCEPTED: the answer to an ATTACH */
    double time;
    char *name, *host, *version, *path, *config, *reason;
    char *worker, *slide, *module, *message;
    char **slides;
    size_t nslides;
    char **notes;              /* STATUS_REPLY: why workers take no new
                                  task for now, one line each */
    size_t nnotes;
    qc_gpu_t *gpus;
    size_t ngpus;
    qc_taskref_t *refs;        /* DISCONNECT: tasks handed back */
    size_t nrefs;
    qc_taskref_t *crashed;     /* READY: tasks running when this worker's
                                  previous process crashed */
    size_t ncrashed;
    qc_worker_row_t *workers;
    size_t nworkers;
    qc_worker_speed_t *speeds; /* STATUS_REPLY: the workers' speeds, in
                                  the order of workers (a broker before
                                  2026-11-30 sends none) */
    size_t nspeeds;
    char **states;             /* STATUS_REPLY: each worker's state, one
                                  word (broker/broker_status.c), in the order of
                                  workers (a broker before 2026-11-30
                                  sends none) */
    size_t nstates;
    char **job_states;         /* STATUS_REPLY: each job's state, one
                                  word (broker/broker_status.c), in the
                                  order of jobs (a broker before
                                  2026-11-30 sends none) */
    size_t njob_states;
    char **trouble;            /* STATUS_REPLY: what keeps the broker
                                  itself from its work (its state folder
                                  cannot be written), one line each,
                                  "WORD: text" (broker/broker_status.c;
                                  a broker before 2026-12-03 sends none) */
    size_t ntrouble;
    char **job_owners;         /* STATUS_REPLY: whose each job is, in the
                                  order of jobs: its certificate's name
                                  and the user its client named ("lab-a
                                  (alice)"), the user alone without
                                  CurveZMQ, "" when neither is known (a
                                  broker before 2026-12-03 sends none) */
    size_t njob_owners;
    qc_job_row_t *jobs;
    size_t njobs;
    qc_asset_t *assets;        /* SUBMIT (creating batch), ASSETS */
    size_t nassets;
    qc_result_t *result;       /* RESULT only */
} qc_msg_t;

qc_msg_t *qc_msg_new (uint8_t command);
void qc_msg_destroy (qc_msg_t **self_p);

/* A random key, never 0: a job's (SUBMIT's, the broker's for a client
 * that gave none) or a worker process's instance (READY). */
uint64_t qc_proto_new_key (void);

const char *qc_command_name (uint8_t command);
/* Whether this protocol version has that command number (either way). */
bool qc_command_known (uint8_t command);

/* Encodes into two frames appended to out. Returns 0, or -1 when a field
 * breaks a bound or memory runs out. */
int qc_msg_encode (const qc_msg_t *self, zmsg_t *out);

/* What every protocol version keeps (PROTOCOL.md section 2): the header
 * 'Q' 'C' VERSION COMMAND, and ERROR (33) and DISCONNECT (6) with their
 * `reason`. A peer of another version is answered with one of them in
 * its own version, so that it can say why it is refused; the decoder
 * takes those two from any version. */
#define QC_PROTO_STABLE(command) ((command) == QC_ERROR || (command) == QC_DISCONNECT)

/* Sends self with the header's version set to version (a peer of another
 * version; self an ERROR or a DISCONNECT). 0, or -1. */
int qc_msg_send_version (const qc_msg_t *self, void *socket, zframe_t *to,
                         uint8_t version);

/* When in (routing ids popped) is a QC message of another protocol
 * version: that version, and its command in *command; else 0. */
uint8_t qc_msg_foreign_version (zmsg_t *in, uint8_t *command);

/* Decodes the header and body frames popped from in (which may hold
 * more frames before them: the caller pops routing ids first). On error
 * returns NULL and writes a short reason into err. Never aborts on any
 * input. */
qc_msg_t *qc_msg_decode (zmsg_t *in, char *err, size_t errlen);

/* Decodes from raw header and body bytes (for fuzzing and tests). */
qc_msg_t *qc_msg_decode_bytes (const void *hdr, size_t hdrlen,
                               const void *body, size_t bodylen,
                               char *err, size_t errlen);

/* Encodes and sends on a socket; for a ROUTER pass the routing id frame
 * (copied) in to, else NULL. Returns 0 or -1. */
int qc_msg_send (const qc_msg_t *self, void *socket, zframe_t *to);

/* Sets a string field, copying (NULL clears). -1 on memory. */
int qc_msg_set_str (char **field, const char *value);

/* The largest frame a peer may send: a body and room to spare. */
#define QC_PROTO_MAX_FRAME (QC_PROTO_MAX_BODY + (64u << 10))
/* Sets what every socket that reads from the network needs before it
 * binds or connects: libzmq then drops a peer that announces a frame
 * over QC_PROTO_MAX_FRAME as soon as its size arrives, instead of
 * holding the bytes until the decoder refuses them (any peer that can
 * reach a port could otherwise make the process hold gigabytes). */
void qc_proto_limit_socket (zsock_t *sock);

#endif
