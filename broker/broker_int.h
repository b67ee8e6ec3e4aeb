/* Broker internals shared by broker.c (event loop, workers),
 * broker_jobs.c (jobs and clients), broker_outbox.c (each job's results
 * in order), broker_state.c (the state folder: journal, result files),
 * broker_restore.c (reading them back) and broker_status.c. */
#ifndef QC_BROKER_INT_H
#define QC_BROKER_INT_H

#include "broker/broker.h"
#include "broker/journal.h"
#include "broker/refuse.h"
#include "broker/sched.h"
#include "broker/security.h"
#include "shared/proto.h"
#include "shared/result.h"

#define PEER_KEY_MAX 520      /* hex of a routing id of up to 255 bytes */
/* Said to a peer the broker does not know (it restarted, or declared the
 * peer dead): a worker answers with READY, a client with ATTACH. */
#define UNKNOWN_PEER_REASON "unknown peer: send READY or ATTACH"
/* Log records kept per job while no client listens: at most this many,
 * and at most this many bytes. */
#define MAX_KEPT_LOGS 10000
#define MAX_KEPT_LOG_BYTES (4u << 20)

/* The sender of the message being handled. */
typedef struct {
    zframe_t *id;             /* routing id */
    char hex[PEER_KEY_MAX];   /* the same in hex: logs, the worker table */
    const keyring_entry_t *cert;  /* CurveZMQ on: the admitted certificate
                                 it authenticated with (valid while the
                                 message is handled); NULL: security off */
} peer_t;

/* A slide's failure that is its worker's, not the slide's: the slide
 * runs again elsewhere while that worker pauses (broker_workers.c
 * retry_elsewhere). */
typedef enum {
    WF_NONE,
    WF_MACHINE,               /* memory, descriptors, its cache's disk */
    WF_BUILD,                 /* a config its build refused */
    WF_URL                    /* a URL outside its own --slides-url */
} worker_fault_t;

typedef struct {
    char key[PEER_KEY_MAX];
    zframe_t *id;
    char *name, *host, *version;
    uint64_t instance;        /* READY's key: its process (0: not said) */
    char cert_key[QC_CURVE_KEY_LEN + 1];   /* its certificate (security on) */
    char cert_name[KEYRING_NAME_MAX];
    uint32_t slots, prefetch, hb_ms;
    qc_gpu_t *gpus;
    size_t ngpus;
    int64_t last_seen;
    int64_t next_beat;        /* when we next send it a HEARTBEAT */
    bool unreachable;         /* a send to it found its connection closed
                                 (ROUTER_MANDATORY's EHOSTUNREACH): it is
                                 judged by the broker's heartbeat, not the
                                 longer one it may have asked for */
    size_t slot;              /* its place in qc_broker.roster */
    sched_worker_t *sw;
    uint8_t paused_for;       /* worker_fault_t: why its last pause, for
                                 qc-status */
    /* the jobs whose config files it was last sent, and when
     * (broker_limits.c) */
    struct { uint64_t job; int64_t at; } fetched[16];
    unsigned fetched_next;
} worker_rec_t;


/* A LOG record kept for a job's absent client: its two encoded frames
 * in one allocation (a zmsg of two frames cost some 900 bytes a record
 * more than its content, three times the bound it was counted against). */
typedef struct {
    int64_t at;               /* when it came (ms, monotonic) */
    size_t header, body;      /* the frames' sizes */
    unsigned char data[];     /* header, then body */
} log_entry_t;
/* What an entry takes of the broker's memory: itself, its list node, the
 * allocator's headers. */
#define LOG_ENTRY_COST(e) (sizeof *(e) + (e)->header + (e)->body + 64)

/* One result waiting for the client's ACK, by seq. Its bytes are in
 * the job's result file at off (len payload bytes), or made by the
 * broker (a failure: task idx, reason number reason), and while msg is
 * set also in memory (until it is first sent; for ever with --state
 * none). */
typedef struct {
    uint64_t off;
    uint64_t idx;
    uint32_t len;
    int32_t reason;           /* -1: a worker's result; else reasons[] */
    zmsg_t *msg;
} outbox_entry_t;

typedef struct {
    uint64_t id;
    uint64_t key;             /* the job's identity (see PROTOCOL.md) */
    char owner[QC_CURVE_KEY_LEN + 1];  /* the key of the certificate that
                                 submitted it (security on; journalled);
                                 "": submitted without CurveZMQ */
    bool claimed;             /* owner set by jobs_claim_unowned in this
                                 run: its submitter, refused, is told so */
    sched_job_t *sj;
    /* the job-level fields of its SUBMIT (job_from_submit/job_to_submit
     * in broker_jobs.c are the one place that lists them) */
    char *config;
    qc_asset_t *assets;       /* the files its config names (SUBMIT), given
                                 to each worker that asks (FETCH) */
    size_t nassets;
    char *name;               /* client's label for the job */
    uint8_t resource;
    uint64_t bytes;           /* what its submission holds of the broker's
                                 memory: config, its files, the slides'
                                 paths and records (broker_limits.c), for
                                 --max-mb-per-client */
    /* SUBMIT batches journalled and not yet applied (broker_jobs.c) */
    uint64_t pending_total;
    bool pending_final;
    int64_t held_since;       /* when its slides were held (sj->held) */
    bool cancel_due;          /* cancelled once its pending batches are
                                 applied (a CANCEL came, or a later batch
                                 went over a limit) */
    const char *cancel_due_why;   /* then its slides' failure (NULL: the
                                     client's cancel) */
    bool durable;             /* its job record is on disk (or no state) */
    zframe_t *client;         /* routing id of the attached client */
    int64_t client_seen;
    int64_t progress_at;      /* its last result (or when it was made or
                                 restored): an unfinished job that makes
                                 none for --retention while its client is
                                 away is cancelled (broker_jobs_time.c) */
    uint32_t client_hb_ms;    /* its heartbeat interval (its SUBMIT or
                                 ATTACH says; else the broker's) */
    bool attached;
    /* the record of its client's routing id, shared with that client's
       other jobs (broker_clients.c); NULL: no client (or no memory for
       one: its window is then its own) */
    struct client_rec *peer;
    size_t peer_slot;         /* its place in peer->jobs */
    uint64_t peer_bytes, peer_results;  /* what peer counts of it */
    /* results in order; seq n is outbox[n - 1 - outbox_base] */
    outbox_entry_t *outbox;   /* a ring: noutbox entries from outbox_head */
    size_t noutbox, cap_outbox, outbox_head;
    uint64_t outbox_base;     /* seq of outbox[0] minus 1 */
    uint64_t last_seq, sent_seq, acked_seq;
    uint64_t durable_seq;     /* results up to it may be sent: they are on
                                 disk (or there is no disk to wait for) */
    uint64_t sent_bytes;      /* of results sent and not acknowledged */
    char **reasons;           /* broker-made failures' reasons */
    size_t nreasons;
    /* broker-made failures of this burst, written as one record */
    uint64_t fail_first_seq;
    uint64_t *fail_idx;
    size_t nfail, capfail;
    int32_t fail_reason;
    qc_jfile_t *results;      /* the result file; NULL with --state none */
    bool done_sent;
    bool pump_due;            /* results queued since the last pump */
    int64_t finished_at;      /* 0 while running (monotonic ms; negative
                                 for a job restored as finished before
                                 this boot) */
    int64_t finished_wall;    /* when it finished (Unix ms), for retention */
    bool finish_logged;       /* its finish time is in the journal */
    uint8_t forget_why;       /* TOMB_* once it is to be forgotten */
    uint64_t journal_bytes;   /* its records a compaction would keep */
    /* log records kept while no client is attached (bounded ring), and
       those sent to the attached one since its heartbeat before last
       (broker_logs.c) */
    zlist_t *logs;
    uint64_t logs_dropped;
    size_t logs_bytes;
    zlist_t *logs_sent;
    size_t logs_sent_bytes;
    int64_t client_beat;      /* its last HEARTBEAT's arrival (not ACKs:
                                 one can follow another closely) */
    uint64_t logs_resent;     /* of the kept, sent once to a client lost */
} job_rec_t;

/* A client routing id that some jobs have as their client: what was
 * sent to it and not acknowledged is bounded over all its jobs
 * (broker_outbox.c), which take turns at the room an ACK frees. */
typedef struct client_rec {
    char key[PEER_KEY_MAX];   /* the routing id in hex: its table key */
    zhashx_t *table;          /* qc_broker.clients: left with its last job */
    job_rec_t **jobs;         /* whose client it is */
    size_t njobs, capjobs;
    size_t turn;              /* the job whose result goes next */
    uint64_t sent_bytes, sent_results;  /* sent, not acknowledged: all its
                                           jobs' */
    bool pump_due;            /* outbox_pump_due: pumped once a batch */
} client_rec_t;

/* A job forgotten: what an ATTACH to it is told. */
typedef struct {
    uint64_t id, key;
    int64_t finished_wall, forgotten_wall;
    uint8_t why;              /* TOMB_* */
} tombstone_t;

enum { TOMB_DELIVERED = 1, TOMB_RETENTION = 2, TOMB_DROPPED = 3 };

/* A SUBMIT batch journalled, applied once the journal is on disk. */
typedef struct pending_submit {
    job_rec_t *job;
    zframe_t *from;
    char **slides;            /* taken from the message */
    size_t nslides, skip;     /* slides before skip were applied already */
    bool final, created;
    uint32_t hb_ms;           /* the client's heartbeat interval */
    zframe_t *again;          /* created: the latest peer that sent this
                                 first batch again meanwhile (answered too,
                                 and made the job's client) */
    uint32_t again_hb_ms;
    char *said;               /* created: the log line "job N submitted...",
                                 logged once the job is on disk (logged
                                 before, a job lost to kill -9 left its
                                 id in the log, given again after the
                                 restart: a tester's review) */
    struct pending_submit *next;
} pending_submit_t;

/* Below this much room the state folder is said to be filling (the log,
 * qc-status): a job's result file holds its slides' images, a few MB
 * each. Said again as clear above twice as much. */
#define STATE_SPACE_LOW_MB 64

/* The state folder (broker_state.c); NULL members with --state none. */
typedef struct {
    char *dir;
    int lock_fd;
    int dir_fd;               /* the folder itself, locked as well: a lock
                                 file deleted by hand lets no second
                                 broker in */
    qc_jfile_t *journal;
    uint64_t epoch;           /* broker lives on this folder, this one too */
    uint64_t live_bytes;      /* journal bytes a compaction would keep */
    bool disk_full;           /* the last commit failed */
    int64_t full_since;       /* when it first failed (qc-status says) */
    bool dir_gone;            /* the folder was deleted while the broker
                                 ran (state_folder_gone): said once */
    int64_t next_gone_check;  /* when state_folder_gone looks again */
    bool space_low;           /* under STATE_SPACE_LOW_MB free: said */
    bool space_unknown;       /* fstatvfs failed: said once */
    int64_t gone_since;       /* when state_folder_gone found it */
    int64_t next_space_check; /* when state_space_watch looks again */
    int64_t next_write_check; /* when state_write_watch tries again */
    int64_t wrote_at;         /* when a commit last wrote something: a
                                 probe is needless for 10 s after */
    bool probe_off;           /* the file system refuses the probe for
                                 another reason than a failed write (a
                                 FUSE one without times, an immutable
                                 lock file): said once, not asked again */
    int disk_errno;           /* the last failed write's errno */
    bool opening;             /* state_open runs: a failed write stops the
                                 start (said by it), no job goes on */
    bool holding;             /* too many results wait for the disk:
                                 dispatch held (sched_hold) */
    size_t held_bytes;        /* results in memory waiting for the disk */
    int64_t next_retry;       /* when a failed commit is tried again */
    bool dir_dirty;           /* result files created since the last sync */
    bool sync_due;            /* the journal holds a record to sync */
    char disk_error[256];     /* why, for the SUBMITs refused */
    int64_t next_compact_check;
    int64_t compact_retry_at; /* after a failed rewrite: not before */
    int64_t compact_backoff;  /* ms, doubled by each failure (60 s..1 h) */
    bool force_compact;       /* rewrite the journal (after a recovery) */
    uint64_t compact_extra;   /* what the last rewrite kept beyond the
                                 jobs' own records (whom attempts went
                                 to, acknowledgements): added to the live
                                 estimate, so it never rewrites again at
                                 once, yet a big job forgotten since
                                 brings the next rewrite down with it */
    zlist_t *unlink_after;    /* result files to delete once the journal
                                 says their jobs are forgotten */
} state_t;

struct qc_broker {
    qc_broker_config_t cfg;
    zsock_t *router;
    char **bound;
    size_t nbound;
    sched_t *sched;
    zhashx_t *workers;        /* peer key -> worker_rec_t */
    /* the same workers in a plain array, for the tick's pass over all of
     * them (10,000 workers, 40 ticks a second) */
    worker_rec_t **roster;
    size_t nroster, caproster;
    zhashx_t *jobs;           /* job id (as string) -> job_rec_t */
    uint64_t next_job;
    int64_t now;
    zhashx_t *speeds;          /* workers' measured speeds, kept beyond
                                  their registrations (speeds.c) */
    bool speeds_dirty;         /* changed since the file was written */
    bool speeds_urgent;        /* a first measure not yet written */
    int64_t speeds_saved_at, speeds_looked_at;
    int64_t trimmed_at;        /* when memory was last given back (jobs_tick) */
    bool trim_due;             /* jobs were forgotten since */
    uint64_t dropped;         /* malformed messages, for status */
    size_t max_peers;         /* --max-peers, else what the open-file limit
                                 allows (limits_peers_source) */
    uint64_t results_compact; /* bytes of acknowledged results that make a
                                 job's result file be rewritten */
    uint64_t journal_compact; /* the journal's size under which it is never
                                 rewritten (--journal-compact-mb) */
    zhashx_t *clients;        /* routing id (hex) -> client_rec_t: every
                                 job's client (broker_clients.c) */
    int64_t next_sched_tick;
    int64_t next_fds_check;     /* limits_tick: descriptors left */
    state_t state;
    tombstone_t *tombs;       /* ring of the last QC_MAX_TOMBSTONES */
    size_t ntombs, tomb_next;
    pending_submit_t *pending, *pending_tail;
    /* Work deferred to the end of a batch of messages (see flush_due in
     * broker.c): one commit, one dispatch and one pump per job per batch
     * instead of one per message, so TASKs and RESULTs leave in bursts. */
    bool dispatch_due, pump_due;
    security_t *security;     /* CurveZMQ; NULL: off */
    refusals_t *refusals;     /* how refusals are logged (refuse.h) */
    zhashx_t *status_asked;   /* peer (hex) -> int64_t *: when its last
                                 STATUS was answered (broker_limits.c) */
    int64_t earlier_said_at;  /* a message about an earlier life's attempt
                                 was last logged (broker.c: once a second) */
    uint64_t earlier_quiet;   /* such messages not logged since */
    int64_t last_allow_check; /* the allowed folder's own times, looked at
                                 once per ms at most */
    /* Workers declared dead of silence lately, by routing id: a message
     * that still comes from one says its silence was a link too slow or
     * cut for a while, not a death (broker_workers.c, workers_late_word) */
    struct {
        char key[PEER_KEY_MAX];
        char name[64];
        int64_t died_at, silence_ms;
    } late[16];
    unsigned late_next;
};

#define QC_MAX_TOMBSTONES 10000

void peer_key (zframe_t *id, char *key);
/* Logs "refused PEER: REASON" (refuse.h); true when it was logged. */
bool refuse (qc_broker_t *b, const peer_t *p, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* broker.c, for the files beside it */
void send_simple (qc_broker_t *b, zframe_t *to, uint8_t command, const char *reason);

/* broker_workers.c: the worker side of the protocol */
void worker_rec_destroy (void *item);
/* A worker leaves the registry (died: its running tasks count against
 * their slides). */
void worker_gone (qc_broker_t *b, worker_rec_t *w, bool died);
/* A send to w found its connection closed: it is declared dead after the
 * broker's heartbeat x liveness of silence (said once). */
void worker_unreachable (qc_broker_t *b, worker_rec_t *w);
/* w's beat, or the broker's when that is shorter: how often the broker
 * writes to w (a send is what finds a closed connection), and how long
 * a silence declares w dead once it is unreachable. */
uint32_t worker_probe_ms (const qc_broker_t *b, const worker_rec_t *w);
/* A message from a routing id that is no registered worker: when it is
 * one declared dead of silence in the last 10 minutes, says once that
 * it was not dead (its link held its messages up) and what to raise. */
void workers_late_word (qc_broker_t *b, const peer_t *p, const qc_msg_t *m);
void workers_on_ready (qc_broker_t *b, const peer_t *p, qc_msg_t *m);
void workers_on_started (qc_broker_t *b, worker_rec_t *w, qc_msg_t *m);
/* w NULL: a RESULT from a peer that is not registered. */
void workers_on_result (qc_broker_t *b, worker_rec_t *w, const peer_t *p, qc_msg_t *m);
void workers_on_disconnect (qc_broker_t *b, worker_rec_t *w, qc_msg_t *m);
/* The scheduler's callbacks (sched.h): TASK and REVOKE to a worker. */
void workers_send_task (void *arg, sched_task_t *t, sched_worker_t *sw);
void workers_send_revoke (void *arg, sched_task_t *t, uint32_t attempt, sched_worker_t *sw,
                          const char *reason);

/* broker_security.c */
/* A peer whose certificate is not admitted (now): refused, any worker it
 * registered gone, its jobs detached, and it is told why. */
void refuse_unadmitted (qc_broker_t *b, const peer_t *p, const char *why);
/* A command its certificate's role may not send: refused and told. */
void refuse_role (qc_broker_t *b, const peer_t *p, const qc_msg_t *m);
/* A message of another protocol version (its header's version and
 * command): logged once a while per address, and answered in the peer's
 * version with why (ERROR to a client's command, else DISCONNECT). */
void refuse_version (qc_broker_t *b, const peer_t *p, zmsg_t *msg, uint8_t version,
                     uint8_t command);
/* A message of this protocol version whose command number it lacks (a
 * newer program's): refused, and a peer that is no registered worker
 * told so with ERROR (else it waits in silence), both once in
 * REFUSE_QUIET_MS per peer. False (nothing done) for any other message. */
bool refuse_unknown_command (qc_broker_t *b, const peer_t *p, zmsg_t *msg);
/* Reads the allowed folder again when it changed (full: also files
 * changed in place) and drops what it no longer admits. */
void check_allowed (qc_broker_t *b, bool full);
/* CurveZMQ on, or endpoints only this machine reaches, or --insecure
 * said out loud; -1 with the reason. */
int security_check (qc_broker_t *b, char *err, size_t errlen);

/* broker_submit.c: SUBMIT and its batches pending until on disk */
void jobs_on_submit (qc_broker_t *b, const peer_t *p, qc_msg_t *m);
/* Applies the SUBMITs journalled in this batch (committed true) or
 * refuses them (the journal could not be written). */
void jobs_apply_pending (qc_broker_t *b, bool committed);

/* broker_jobs.c */
void jobs_on_attach (qc_broker_t *b, const peer_t *p, qc_msg_t *m);
void jobs_on_ack (qc_broker_t *b, const peer_t *p, qc_msg_t *m);
void jobs_on_cancel (qc_broker_t *b, const peer_t *p, qc_msg_t *m);
/* What a peer may do with a job: use it as its client (submit more,
 * attach, acknowledge), cancel it, see it in STATUS. Security off:
 * anything. On: its owner anything; an admin certificate sees and
 * cancels every job, and uses as its client a job without an owner. */
typedef enum { USE_OWN, USE_CANCEL, USE_SEE } job_use_t;
bool jobs_allows (const job_rec_t *job, const peer_t *p, job_use_t use);
/* Certificates were revoked: jobs whose owner is gone are detached. */
void jobs_on_revoked (qc_broker_t *b);
/* A client's HEARTBEAT: its jobs (those of its routing id, and with keys
 * of its certificate) are attached again. */
void jobs_on_client_heartbeat (qc_broker_t *b, const peer_t *p);
/* A worker asks for a job's config assets: answer ASSETS (security on:
 * only for a job it holds a task of, holds true). */
void jobs_on_fetch (qc_broker_t *b, zframe_t *from, qc_msg_t *m, bool holds);
/* A first result for a task: queue it for the client. */
void jobs_deliver_result (qc_broker_t *b, job_rec_t *job, qc_msg_t *m);
/* A client said DISCONNECT: its jobs are detached at once. */
void jobs_on_client_disconnect (qc_broker_t *b, const peer_t *p);
void jobs_forward_log (qc_broker_t *b, job_rec_t *job, qc_msg_t *m);
/* broker_logs.c: the job's log records; see there */
void logs_free (job_rec_t *j);
void logs_flush (qc_broker_t *b, job_rec_t *job);      /* to its client, now */
void logs_client_beat (qc_broker_t *b, job_rec_t *job); /* before client_seen moves */
void logs_client_left (job_rec_t *job);                /* it said goodbye */
void logs_client_lost (job_rec_t *job);                /* found gone by silence */
/* Forgets a job: from the table, the scheduler and (with a state
 * folder) the disk; what an ATTACH to it will hear is kept (why). */
void jobs_forget (qc_broker_t *b, job_rec_t *j, uint8_t why);
void jobs_tick (qc_broker_t *b);
void jobs_goodbye (qc_broker_t *b);
job_rec_t *jobs_lookup (qc_broker_t *b, uint64_t id);
/* The job a worker's message names, when its key matches; NULL (and a
 * warning for a key that does not) otherwise. The one place a message's
 * job identity is checked. */
job_rec_t *jobs_of_task_msg (qc_broker_t *b, const qc_msg_t *m, const char *from);
/* The same for a ref tuple (a hand-back, a crash report). */
job_rec_t *jobs_of_ref (qc_broker_t *b, const qc_taskref_t *ref);
void job_rec_destroy (void *item);
/* A new job record (not yet in the table); NULL on memory. */
job_rec_t *job_rec_new (qc_broker_t *b, uint64_t id, uint64_t key);
/* The job-level fields of a SUBMIT into the job (taken from m), and
 * back into a SUBMIT message (borrowed). */
void job_from_submit (job_rec_t *job, qc_msg_t *m);
void job_to_submit (const job_rec_t *job, qc_msg_t *m);
int jobs_insert (qc_broker_t *b, job_rec_t *job);
void jobs_remember_tomb (qc_broker_t *b, const tombstone_t *t);
/* The answers and steps SUBMIT (broker_submit.c) shares with the other
 * client commands. */
job_rec_t *jobs_lookup_by_key (qc_broker_t *b, uint64_t key);
/* A job from before the broker had keys: owned by the first client
 * certificate that shows its key. */
void jobs_claim_unowned (qc_broker_t *b, const peer_t *p, job_rec_t *job, uint64_t key);
/* Refused, logged with the peer, answered ERROR: another's job. */
void jobs_not_yours (qc_broker_t *b, const peer_t *p, const job_rec_t *job, const char *what);
/* Why the broker holds no job id, into text. */
void jobs_no_such_job (qc_broker_t *b, uint64_t id, char *text, size_t len);
void jobs_send_error (qc_broker_t *b, zframe_t *to, uint64_t job, const char *reason);
void jobs_send_accepted (qc_broker_t *b, zframe_t *to, const job_rec_t *job, bool attach);
/* Whether a new client (new_job: or a new job) would pass --max-peers
 * or the open result files allowed; text then says so. */
bool jobs_full_for_new_client (qc_broker_t *b, zframe_t *from, bool new_job, char *text,
                               size_t len);
/* Makes from the job's attached client, judged by hb_ms. A new socket
 * taking over from one not yet found gone is owed the log records sent
 * to the old one lately: at once, unless answered (an ACCEPTED to from
 * follows: they go after it, PROTOCOL.md 8.4). true: answered and owed,
 * so the caller flushes them (logs_flush) after its ACCEPTED (jobs_resume
 * flushes anyway). */
bool jobs_attach_client (qc_broker_t *b, job_rec_t *job, zframe_t *from, uint32_t hb_ms,
                         bool answered);
/* The job's client (just made so by jobs_attach_client) is sent its
 * ACCEPTED (attach: answering an ATTACH), then again every result not
 * acknowledged, the log records kept for it, and DONE: an ATTACH and a
 * first SUBMIT sent again resume the same way. */
void jobs_resume (qc_broker_t *b, job_rec_t *job, zframe_t *to, bool attach);
/* Drops the job's queued slides (each a failure its client is sent, with
 * why: sched_job_cancel); the running ones finish; asker (not NULL)
 * hears ACCEPTED first. */
void jobs_cancel (qc_broker_t *b, job_rec_t *job, zframe_t *asker, const char *why);
/* The failure of slides a job cut off by --max-mb-per-client did not run:
 * a rerun tries them again (client/output_records.c), in a smaller job. */
#define JOBS_CUT_WHY QC_RESULT_NOT_RUN "the broker cancelled the job when its submission went " \
    "over qc-broker --max-mb-per-client (give fewer slides a job" QC_RESULT_RETRY_MARK
/* ... and of a job whose client went away before sending all its slides
 * and did not come back (broker_jobs_time.c). */
#define JOBS_ORPHAN_WHY QC_RESULT_NOT_RUN "the job's client went away before sending all its " \
    "slides and did not come back (qc-broker --linger" QC_RESULT_RETRY_MARK
#define JOBS_STALLED_WHY QC_RESULT_NOT_RUN "no slide of the job ran for qc-broker --retention " \
    "while its client was away (no worker could run them: do they need a GPU?" \
    QC_RESULT_RETRY_MARK
/* ... and of one an admin cancelled (its owner was told "cancelled by the
 * client", and took it for its own doing: a hospital admin's probe) */
#define JOBS_ADMIN_WHY QC_RESULT_NOT_RUN "an admin cancelled the job (qc-submit --cancel with " \
    "an admin's certificate; the broker's log names it" QC_RESULT_RETRY_MARK

/* broker_clients.c: the jobs' clients */
/* job->client was set or changed: the job joins its record. */
void clients_follow (qc_broker_t *b, job_rec_t *job);
/* The job leaves its client's record (the job is destroyed). */
void clients_leave (job_rec_t *job);
/* The job's sent and acknowledged results moved: its client's sums
 * follow. */
void clients_count (job_rec_t *job);

/* broker_outbox.c */
/* Room for more results without allocating when they come: reserved for
 * every task that has no result yet. -1 on memory. */
int outbox_reserve (job_rec_t *job, size_t more);
/* A first result for a task: numbered, written to the result file,
 * queued for the client. */
void outbox_deliver (qc_broker_t *b, job_rec_t *job, qc_msg_t *m);
/* sched's failed callback: a broker-made failure. */
void outbox_task_failed (void *arg, sched_task_t *task, const char *reason);
/* Writes the broker-made failures gathered since the last call. */
void outbox_flush_failures (qc_broker_t *b, job_rec_t *job);
/* Sends results after sent_seq while the window of its client allows
 * (its client's other jobs taking their turns), then DONE. */
void outbox_pump (qc_broker_t *b, job_rec_t *job);
/* Sends what was queued since the last call, for every job. */
void outbox_pump_due (qc_broker_t *b);
/* Forgets results up to seq: the client has them on disk. */
void outbox_drop_acked (job_rec_t *job, uint64_t seq);
/* What was sent and not acknowledged goes again (a client left). */
void outbox_rewind (job_rec_t *job);
/* Restore: a result already in the file. */
int outbox_restore (job_rec_t *job, uint64_t off, uint32_t len, uint64_t idx,
                    int32_t reason);
int outbox_reason (job_rec_t *job, const char *reason);
void outbox_free (job_rec_t *job);
/* The in-memory copies of results that are in the file and were sent
 * (or cannot be sent soon) are dropped: broker memory stays bounded. */
void outbox_trim (job_rec_t *job);

/* Workers' speeds kept beyond a registration and a broker's life
 * (speeds.c): open makes the table (read from the state folder's
 * "speeds" when there is one; -1 only for memory); seed gives a joining
 * worker the speeds it last had under its name, host and certificate;
 * keep records a worker's (at its leaving); tick writes the file at
 * most once a minute while it changes (final: now); close writes it and
 * frees the table. */
int speeds_open (qc_broker_t *b);
void speeds_seed (qc_broker_t *b, worker_rec_t *w);
void speeds_keep (qc_broker_t *b, const worker_rec_t *w);
void speeds_tick (qc_broker_t *b, bool final);
void speeds_close (qc_broker_t *b);

/* broker_state.c */
/* Opens (or, with cfg->state_dir NULL, skips) the state folder, restores
 * what it holds, and starts a new life on it. -1 with a message. */
int state_open (qc_broker_t *b, char *err, size_t errlen);
void state_close (qc_broker_t *b);
bool state_on (const qc_broker_t *b);
/* The room left for the state folder, in MB, into *mb: 0; 1 when its
 * file system tells no size (none is short); -1 when it cannot be told
 * (errno) or there is no state folder. */
int state_free_mb (const qc_broker_t *b, uint64_t *mb);
/* broker_state_watch.c, from state_maintain: whether the state folder
 * was deleted while the broker ran (said once; new jobs then refused),
 * and the room left said in the log as it falls low and comes back. */
bool state_folder_gone (qc_broker_t *b);
void state_space_watch (qc_broker_t *b);
/* Whether the state folder's file system takes a write now (a write
 * of metadata only): 0; -1 refused (errno: EROFS, EIO, ENOSPC, EDQUOT,
 * ESTALE); 1 cannot tell (errno: the probe itself is not allowed).
 * state_write_watch asks it every 10 s of an idle broker (none within
 * 10 s of a commit that wrote), or sooner for a qc-status (at most once
 * a second), and takes a refusal as a failed write. */
int state_write_probe (const qc_broker_t *b);
void state_write_watch (qc_broker_t *b, bool now);
/* broker_state.c: a write to the state folder failed (errno e): new
 * jobs refused, said once, tried again each second. */
void state_disk_failed (qc_broker_t *b, const char *what, int e);
/* Journal records, buffered until state_commit. */
void state_log_job (qc_broker_t *b, job_rec_t *job);
/* The job's owner (a certificate's key), when it has one. */
void state_log_owner (qc_broker_t *b, job_rec_t *job);
void state_log_batch (qc_broker_t *b, job_rec_t *job, uint64_t base,
                      char **slides, size_t nslides, bool final);
void state_log_ack (qc_broker_t *b, job_rec_t *job);
void state_log_cancel (qc_broker_t *b, job_rec_t *job);
/* The failure text of a J_CANCEL's why code (broker_state.c). */
const char *state_cancel_why (unsigned code);
void state_log_blame (qc_broker_t *b, job_rec_t *job, uint64_t idx, uint32_t blame);
/* With CurveZMQ: attempt of task idx went to the certificate of key (its
 * late RESULT counts after a restart); not synced (lost, the task runs
 * again). */
void state_log_dispatch (qc_broker_t *b, job_rec_t *job, uint64_t idx, uint32_t attempt,
                         const char *key);
void state_log_finished (qc_broker_t *b, job_rec_t *job);
void state_log_forget (qc_broker_t *b, job_rec_t *job, uint8_t why);
/* Opens the job's result file (creating it). -1 with a log line. */
int state_open_results (qc_broker_t *b, job_rec_t *job);
/* Writes every result file and the journal, each synced once. False
 * when the journal could not be written (its SUBMITs are dropped). */
bool state_commit (qc_broker_t *b);
/* Compacts the journal when it holds mostly what is no longer needed. */
void state_maintain (qc_broker_t *b);

/* broker_restore.c */
/* Reads the journal and result files into the broker. -1 with a
 * message (a damaged journal, without cfg->state_recover). */
int restore_run (qc_broker_t *b, char *err, size_t errlen);

/* The records of a journal, or of job's result file, in data (a mapped
 * file, or a fuzzer's bytes) into the broker; *cut: where the file must
 * be cut (a torn or, recovering, a damaged tail; len otherwise). */
int restore_journal_bytes (qc_broker_t *b, const char *path, const uint8_t *data,
                           size_t len, size_t *cut, bool *recovered, char *err,
                           size_t errlen);
int restore_results_bytes (qc_broker_t *b, job_rec_t *job, const char *path,
                           const uint8_t *data, size_t len, size_t *cut,
                           bool *recovered, char *err, size_t errlen);

/* broker_status.c */
void status_reply (qc_broker_t *b, const peer_t *p);

/* Record types of the journal (J_*) and of a result file (R_*); their
 * payloads are in broker_state.c. */
enum {
    J_EPOCH = 1, J_JOB = 2, J_BATCH = 3, J_ACK = 4, J_CANCEL = 5,
    J_FORGET = 6, J_BLAME = 7, J_FINISHED = 8, J_OWNER = 9, J_DISPATCH = 10,
    J_CANCEL_WHY = 11,
    R_RESULT = 16, R_FAILED = 17, R_BASE = 18
};
#define JOURNAL_MAGIC "QC-JOURNAL v1\n\0\0"
#define RESULTS_MAGIC "QC-RESULTS v1\n\0\0"

/* ---- how much one peer may ask (broker_limits.c) ---- */

/* A STATUS from p answered less than 250 ms ago: true, and this one is
 * dropped (logged once in 10 s); else its answer is noted. */
bool limits_status_too_soon (qc_broker_t *b, const peer_t *p);
/* The same for w's FETCH of job's config files within 4 s. */
bool limits_fetch_too_soon (qc_broker_t *b, worker_rec_t *w, uint64_t job);
/* --max-jobs-per-client: p's certificate holds that many jobs; text
 * says so for the client. */
bool limits_over_client_quota (qc_broker_t *b, const peer_t *p, char *text, size_t len);
/* What a job's config and its files, and n slides' paths and records,
 * hold of the broker's memory (job_rec_t.bytes counts both). */
uint64_t limits_config_bytes (const char *config, const qc_asset_t *assets, size_t nassets);
uint64_t limits_slides_bytes (char *const *slides, size_t n);
/* --max-mb-per-client: with add more bytes, p's certificate's held jobs
 * would go over it; text says so for the client. */
bool limits_over_client_bytes (qc_broker_t *b, const peer_t *p, uint64_t add, char *text,
                               size_t len);
/* Where --max-peers's number came from, for a refusal: "qc-broker
 * --max-peers" or "its open-file limit"; and how to raise it. */
const char *limits_peers_source (const qc_broker_t *b);
const char *limits_peers_raise (const qc_broker_t *b);
/* Once a second: forgets the peers quiet for 10 s. */
void limits_tick (qc_broker_t *b);

#endif
