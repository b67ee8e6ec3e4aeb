/* The broker's scheduler: jobs, their tasks, the workers' resources, and
 * the one state machine a task goes through:
 *
 *     QUEUED -> DISPATCHED(worker, attempt) -> RUNNING -> DONE | FAILED
 *        ^          |                            |
 *        |          | handed back, worker left   | worker left or vanished,
 *        |          | or vanished, not started   | crashed (blame + 1),
 *        +----------+ in time (deadline): back   | past the deadline (blame
 *        +---------------------------------------+ + 1): back to QUEUED, or
 *                                                  FAILED once blame
 *                                                  reaches max_deaths; a
 *                                                  crash of several slides:
 *                                                  QUEUED to run alone
 *
 * No sockets here: the broker feeds events in and gets assignments,
 * revocations and verdicts out through callbacks, so every rule is
 * unit-testable.
 *
 * Attempts. Every dispatch gives the task a new attempt number, and every
 * message about a task (STARTED, RESULT, a hand-back, a crash report)
 * names the attempt it is about. This file is the one place where they
 * are checked (sched_task_started, sched_task_finished, sched_worker_return,
 * sched_task_crashed): a STARTED counts only from the worker the task is
 * dispatched to, for that attempt; a RESULT for an attempt never
 * dispatched is refused. A broker restarted on its journal numbers its
 * attempts from a new base (sched_set_attempt_base), so an attempt of an
 * earlier life never equals one of this life.
 *
 * Identities (sched_set_identities, on when the broker runs CurveZMQ):
 * each worker carries the number of the certificate it authenticated
 * with (who), and each attempt remembers the identity it was dispatched
 * to, also after it left its worker (a vanished worker, a deadline: the
 * last SCHED_PAST such attempts per task). A RESULT or a crash report is
 * then taken only from the identity that attempt was dispatched to
 * (SCHED_NOT_YOURS otherwise), whichever socket it comes on (a worker
 * that reconnected keeps its certificate); a crash report only within
 * the task deadline of that attempt's dispatch or start (SCHED_LATE
 * otherwise: the deadline judged it already). Without identities anyone
 * may report any attempt the task had, as before.
 *
 * Blame is for a slide's own executions only: a crash the worker's
 * supervisor reports for that task (sched_task_crashed), or its run past
 * the task deadline. A crash report that names several slides at once
 * (a SIGKILL, the kernel's OOM killer: no thread was caught crashing)
 * names no culprit: none of them is blamed; each runs alone from then on
 * (below), where its own crash is blamed. A worker that vanishes (killed, its machine lost,
 * its network cut) is not a verdict on the slides it held: they go back
 * to the queue unblamed; only after max_vanished such losses is a slide
 * given up (a safety net for a slide that kills workers that cannot
 * report their crashes).
 *
 * Credit: a worker holds at most slots + prefetch CPU tasks and gpus +
 * gpu_prefetch GPU tasks. An execution the broker has taken back while it
 * runs (deadline, or a result of an earlier attempt that came first) keeps
 * its executor busy: it stays on the worker as a ghost that holds its
 * credit until the worker's RESULT for it comes, or the worker goes.
 *
 * Running alone: a task marked alone waits in its job's alone queues
 * and goes only to a worker holding nothing (no task, no ghost), which
 * takes nothing else while it runs (nor while it runs on as a ghost). A
 * busy worker able to run it is set aside (clearing: no new tasks) until
 * it empties, one such worker per alone task queued, the least loaded
 * first, at most half the workers; not one holding a ghost or stalled
 * (it may never empty). Only a crash of the attempt dispatched alone is
 * the task's own when the report names other slides too (an attempt
 * dispatched before the mark ran with others). Whether a task runs alone
 * is not journalled: after a broker restart it runs with others again
 * (and a second shared crash marks it again).
 *
 * A worker's machine in trouble (sched_task_troubled): a RESULT that
 * failed for the machine, not the slide (memory short, no descriptor
 * left: shared/result.h's qc_result_machine_trouble; not a server's or a
 * share's failure, which is every worker's), sends the task back to the
 * front of the queue, up to SCHED_TROUBLE_RETRIES times, when another
 * worker could take it, instead of failing it; its worker takes no new
 * task for a pause (SCHED_TROUBLE_PAUSE_MS, doubling while its results
 * keep failing so, to SCHED_TROUBLE_PAUSE_MAX_MS; a passing result
 * starts the doubling again, and the pause it is in stands: its other
 * slots may pass while the slide it failed should go elsewhere), so a
 * worker that fails slides fast does not take the whole queue
 * while others could run it. With no other worker able to take it now,
 * a failure that may pass with time (memory or descriptors short: another
 * program's use of the machine) sends the task back all the same, and
 * the pause is a wait for the machine: one worker left alone overnight
 * on a machine short of memory for a while failed its whole cohort in
 * seconds. SCHED_TROUBLE_RETRIES, a bound on moving a slide between
 * workers, does not count here (it failed a lone worker's slides after
 * 30 s: an operator's review); time does. Once a worker's machine has
 * failed so for SCHED_TROUBLE_ALONE_MS without a slide passing in
 * between, its failures that no other worker could take stand at once
 * (marked for a rerun) until one passes, so that a machine that stays
 * short fails the cohort in minutes, not in hours of pauses; and a slide
 * sent back so for SCHED_TROUBLE_ALONE_MS of its own stands (one too big
 * for the machine, while the slides beside it pass). A build's refusal
 * never passes with time: with no other worker it stands at once.
 *
 * Fairness: each resource kind keeps a round-robin cursor over jobs, so two
 * clients' cohorts interleave task by task.
 *
 * Speed: a task either kind of resource may run (QC_RES_ANY) goes to a
 * CPU slot only when that slot would finish it before the GPUs would
 * get to it: when its worker's measured time for a slide on a CPU slot
 * is under the time the workers' GPUs, at their measured speeds, take
 * for what they hold and what is queued for them. At 10x a GPU lane did
 * a slide in 0.6 s where a CPU slot took 11 s (tests/bench/README.md):
 * a small cohort's last slides on CPU slots held it up ~20 lanes' times,
 * while a large one's CPU slots still add to its throughput. Until both
 * speeds are measured (the first slides of each worker), CPU slots take
 * such tasks as before; a worker that joins again, or a broker started
 * again on its state folder, starts from the speeds last measured
 * (broker/speeds.c, which sets ms_cpu and ms_gpu at a worker's
 * registration). The speeds are a worker's, not a job's: jobs of
 * very different work sizes at once mix in its mean, which follows the
 * slides as they come (each counts a quarter). */
#ifndef QC_SCHED_H
#define QC_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/proto.h"
#include "shared/result.h"

typedef enum {
    TASK_QUEUED, TASK_DISPATCHED, TASK_RUNNING, TASK_DONE, TASK_FAILED
} task_state_t;

/* What a worker's message about a task turned out to be. */
typedef enum {
    SCHED_OK,            /* applied (a RESULT: the first; deliver it) */
    SCHED_DUPLICATE,     /* the task already has its result */
    SCHED_STALE,         /* not the sender's current attempt: ignored */
    SCHED_BAD_ATTEMPT,   /* an attempt this task never had */
    SCHED_UNKNOWN,       /* no such task */
    SCHED_NOT_YOURS,     /* identities on: that attempt was dispatched to
                            another identity (or to none) */
    SCHED_LATE,          /* a crash report past the attempt's deadline */
    SCHED_EARLIER_LIFE,  /* identities on: an attempt of a broker life
                            before this one (a restored task's) that the
                            journal does not give to the sender: not
                            taken */
    SCHED_REQUEUED       /* a failure of the worker's machine: the task
                            runs again elsewhere, the RESULT is dropped
                            (sched_task_troubled) */
} sched_verdict_t;

/* Attempts that left their worker without a result, remembered per task
 * with the identity they were dispatched to (identities on only). */
#define SCHED_PAST 4
typedef struct {
    uint32_t attempt, who;
    int64_t since;             /* its dispatch, or its start once started;
                                  SCHED_RESTORED: an earlier life's, from
                                  the journal (its RESULT counts, not its
                                  crash report: neither its deadline nor
                                  whether it was blamed is known) */
} sched_attempt_t;
#define SCHED_RESTORED INT64_MIN

typedef struct {
    uint32_t n;
    sched_attempt_t a[SCHED_PAST];   /* oldest first */
} sched_past_t;

typedef struct sched_worker sched_worker_t;
typedef struct sched_job sched_job_t;

typedef struct sched_task {
    sched_job_t *job;
    uint64_t idx;              /* index within the job (client's numbering) */
    char *path;
    uint8_t state;             /* task_state_t */
    uint8_t resource;          /* qc_resource_t */
    bool alone;                /* a crash took it with other slides,
                                  naming no culprit: it runs alone on a
                                  worker from now on */
    uint32_t alone_att;        /* its last attempt dispatched alone (0:
                                  none): only that one's crash is its own
                                  in a report of several slides */
    uint16_t vanished;         /* workers lost while running it (no blame) */
    uint32_t attempt;          /* the last attempt dispatched */
    uint32_t blame;            /* its own executions that crashed or ran
                                  past the deadline */
    uint32_t blame_other;      /* of those, not by SIGKILL or SIGTRAP
                                  (likely memory): a crash, a deadline */
    uint32_t crash_att;        /* the last attempt a crash was counted for */
    uint32_t troubled;         /* failures of its workers' machines it was
                                  sent back to the queue for */
    int64_t troubled_since;    /* the first of them (ms) */
    bool trouble_waits;        /* sent back the last time with no other
                                  worker to take it: it waits for the
                                  same machine */
    int32_t gpu;               /* GPU index when on a GPU, else -1 */
    uint32_t who;              /* identity of the last attempt's worker */
    int64_t since;             /* when dispatched or started (deadline) */
    sched_worker_t *worker;    /* while DISPATCHED or RUNNING */
    sched_past_t *past;        /* attempts that left without a result
                                  (identities on; NULL until one does) */
    struct sched_task *qprev, *qnext;   /* job's queue for its resource */
    struct sched_task *wprev, *wnext;   /* worker's assigned list */
} sched_task_t;

typedef struct {
    sched_task_t *head, *tail;
    size_t count;
} task_list_t;

/* A job's queues: one per qc_resource_t, then one per qc_resource_t for
 * the tasks that run alone. */
#define SCHED_ALONE 3
#define SCHED_QUEUES 6

struct sched_job {
    uint64_t id;
    sched_task_t **blocks;     /* tasks in blocks of 16, 16, 32 ... 512, then
                                  SCHED_BLOCK (below): stable */
    size_t nblocks;
    uint64_t total;            /* tasks added so far */
    uint64_t done, failed, running, dispatched;
    bool final;                /* client said no more tasks will come */
    bool held;                 /* nothing of it is dispatched (its client
                                  went away before sending all its slides:
                                  the broker's to set) */
    bool cancelled;
    const char *cancel_why;    /* its queued tasks' failure (static text) */
    uint64_t floor_idx;        /* its tasks from here on were added in
                                  this broker life: attempts up to its
                                  base are none of theirs (those before,
                                  restored from the journal, may have run
                                  in earlier lives) */
    task_list_t queue[SCHED_QUEUES];   /* by qc_resource_t, then those
                                          that run alone (SCHED_ALONE +
                                          qc_resource_t) */
    void *owner;               /* the broker's per-job record */
    sched_job_t *prev, *next;
};

/* An execution taken back while it ran: it holds its credit until the
 * worker's RESULT for it (job id, index, attempt) or the worker goes. */
typedef struct {
    uint64_t job, idx;
    uint32_t attempt;
    int32_t gpu;               /* GPU slot, -1 for a CPU slot */
    bool alone;                /* it ran alone: the worker stays closed to
                                  other tasks until it ends */
} sched_ghost_t;

struct sched_worker {
    uint32_t slots, ngpus, prefetch, gpu_prefetch;
    uint32_t cpu_inflight, gpu_inflight;     /* ghosts included */
    uint32_t gpu_load[QC_PROTO_MAX_GPUS];
    uint32_t gpu_index[QC_PROTO_MAX_GPUS];  /* device numbers advertised */
    bool draining;             /* takes no new tasks */
    bool stalled;              /* a task it held never started in time:
                                  no new tasks until it shows progress */
    bool clearing;             /* set aside for a task that runs alone:
                                  no new tasks until it holds none */
    sched_task_t *alone;       /* the task it runs alone: nothing else is
                                  dispatched to it meanwhile */
    uint32_t alone_ghosts;     /* ghosts of tasks it ran alone (taken back
                                  while they ran): still closed to others */
    uint32_t trouble;          /* its results failed for its machine in a
                                  row (sched_task_troubled) */
    int64_t trouble_since;     /* when the first of them came (ms) */
    bool trouble_outlasted;    /* alone, it failed so for longer than
                                  SCHED_TROUBLE_ALONE_MS: such failures
                                  stand until a slide passes on it */
    int64_t paused_until;      /* takes no new tasks before then (ms) */
    uint32_t who;              /* its identity (certificate number), set
                                  by the broker; 0 without identities */
    int64_t ms_cpu, ms_gpu;    /* a slide's time on one of its CPU slots,
                                  on one of its GPUs (ms, start to result,
                                  a moving mean of those that passed); 0
                                  until one is measured (Speed, above) */
    task_list_t assigned;
    sched_ghost_t *ghosts;
    uint32_t nghosts, capghosts;
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
    /* The worker's attempt of task was taken back (deadline, or another
     * attempt's result came first): tell the worker. Optional. */
    void (*revoke) (void *arg, sched_task_t *task, uint32_t attempt,
                    sched_worker_t *w, const char *reason);
    void *arg;
} sched_callbacks_t;

/* Tasks are held in blocks that never move (tasks point at each other):
 * the first holds SCHED_BLOCK_FIRST, each next one as many as all before
 * it, up to SCHED_BLOCK, then blocks of SCHED_BLOCK. A job of one slide
 * takes one small block (a broker holds thousands of such jobs), a job
 * of a million slides blocks of 1024. */
#define SCHED_BLOCK_FIRST 16
#define SCHED_BLOCK 1024
/* The blocks below SCHED_BLOCK: 16, 16, 32, ... 512 (1024 tasks). */
#define SCHED_SMALL_BLOCKS 7
/* Attempts of one task within one broker life, at most: attempt numbers
 * are base + 1 .. base + SCHED_ATTEMPTS_PER_LIFE. */
#define SCHED_ATTEMPTS_PER_LIFE 65535u
/* Workers vanished (no crash report) while running one slide before it
 * is given up (sched_set_max_vanished). */
#define SCHED_MAX_VANISHED 20

sched_t *sched_new (uint32_t max_deaths, const sched_callbacks_t *cb);
void sched_destroy (sched_t **self_p);

/* The broker's clock, in ms (monotonic): stamps dispatches and starts. */
void sched_set_now (sched_t *self, int64_t now_ms);
/* A task RUNNING (or DISPATCHED and not started) longer than this is
 * taken back by sched_tick; 0 = no deadline. */
void sched_set_task_timeout (sched_t *self, int64_t timeout_ms);
/* The attempt numbers of this broker life start after base (tasks added
 * from now on, and restored ones). Called once the journal is read: the
 * jobs there keep their tasks' attempts of earlier lives; slides added
 * to them from now on, and every new job's, take only this life's. */
void sched_set_attempt_base (sched_t *self, uint32_t base);
void sched_set_max_vanished (sched_t *self, uint32_t n);
/* How long a lone worker's machine is waited for (its spell, a slide's
 * own; see A worker's machine in trouble above): SCHED_TROUBLE_ALONE_MS
 * unless set; 0: not at all, such failures stand at once. */
void sched_set_trouble_wait (sched_t *self, int64_t wait_ms);
int64_t sched_trouble_wait (const sched_t *self);
/* Ties every attempt to the identity of the worker it is dispatched to
 * (see Identities above). */
void sched_set_identities (sched_t *self, bool on);

sched_job_t *sched_job_new (sched_t *self, uint64_t id, void *owner);
/* Adds a task at the job's next index. NULL on memory or bounds. */
sched_task_t *sched_job_add (sched_t *self, sched_job_t *job,
                             const char *path, uint8_t resource);
sched_task_t *sched_job_task (const sched_job_t *job, uint64_t idx);
/* True when every task of a final job is DONE or FAILED. */
bool sched_job_finished (const sched_job_t *job);
/* Its tasks waiting in its queues (those that run alone included). */
size_t sched_job_queued (const sched_job_t *job);
/* Drops the job's queued tasks, and takes back those sent to a worker
 * and not started (REVOKE), each FAILED with why (a static text; NULL:
 * SCHED_CANCELLED_BY_CLIENT); running ones finish and their results are
 * still reported, as are those that leave their worker, with the same
 * reason. A second cancel changes nothing. */
#define SCHED_CANCELLED_BY_CLIENT QC_RESULT_CANCELLED
void sched_job_cancel (sched_t *self, sched_job_t *job, const char *why);
/* Takes back the tasks added at index total and after (still queued:
 * a SUBMIT batch that could not be applied whole). */
void sched_job_truncate (sched_t *self, sched_job_t *job, uint64_t total);
/* Forgets a finished job. Its tasks must not be referenced afterwards. */
void sched_job_remove (sched_t *self, sched_job_t *job);

/* Restoring from the journal: a queued task ends (its result is on
 * disk), or carries blame from an earlier life. False when the task is
 * unknown or no longer queued. */
bool sched_task_restore_final (sched_t *self, sched_job_t *job, uint64_t idx,
                               bool ok);
void sched_task_restore_blame (sched_job_t *job, uint64_t idx, uint32_t blame);
/* With identities on: attempt of task idx went to identity who in an
 * earlier broker life (the journal says so), so its late RESULT from who
 * counts, as one of this life's would (not a crash report: SCHED_RESTORED).
 * Called in journal order, oldest first: past SCHED_PAST, the oldest is
 * dropped. Nothing for a task unknown or ended, or who 0. */
void sched_task_restore_attempt (sched_t *self, sched_job_t *job, uint64_t idx,
                                 uint32_t attempt, uint32_t who);

sched_worker_t *sched_worker_add (sched_t *self, uint32_t slots,
                                  uint32_t prefetch, const uint32_t *gpus,
                                  uint32_t ngpus, void *owner);
/* A worker left (died false) or vanished (died true). Every task it held
 * goes back to the queue unblamed; a vanished worker's running tasks
 * count toward max_vanished. */
void sched_worker_remove (sched_t *self, sched_worker_t *w, bool died,
                          const char *name);
void sched_worker_drain (sched_t *self, sched_worker_t *w);
/* Hands back an attempt the worker had not started (its DISCONNECT). */
sched_verdict_t sched_worker_return (sched_t *self, sched_worker_t *w,
                                     sched_job_t *job, uint64_t idx,
                                     uint32_t attempt);

/* The worker began executing the attempt (its STARTED message). */
sched_verdict_t sched_task_started (sched_t *self, sched_worker_t *w,
                                    sched_job_t *job, uint64_t idx,
                                    uint32_t attempt);
/* A RESULT came from w (NULL: a sender not registered) for the attempt.
 * SCHED_OK when it is the task's first result (deliver it). Frees the
 * credit of the worker that ran that attempt; the current assignee of a
 * later attempt keeps its credit as a ghost while it runs, or is told
 * (revoke) when it had not started. */
sched_verdict_t sched_task_finished (sched_t *self, sched_worker_t *w,
                                     sched_job_t *job, uint64_t idx,
                                     uint32_t attempt, bool ok);
/* The same from identity who (w's, or an unregistered sender's): with
 * identities on, SCHED_NOT_YOURS unless the attempt was dispatched to
 * who. sched_task_finished is this with w's own identity. */
sched_verdict_t sched_task_finished_as (sched_t *self, sched_worker_t *w,
                                        uint32_t who, sched_job_t *job,
                                        uint64_t idx, uint32_t attempt, bool ok);
/* A RESULT that failed for its worker's machine (see above) from w
 * (NULL: an unregistered sender) of identity who, for the attempt:
 *  - SCHED_REQUEUED: it was the task's current attempt on w, its job is
 *    not cancelled, and either another worker could take it now and it
 *    was sent back fewer than SCHED_TROUBLE_RETRIES times so, or none
 *    could, may_pass (the failure may pass with time: the machine's, not
 *    a build's), and neither w's spell of such failures nor the task's
 *    own has lasted SCHED_TROUBLE_ALONE_MS (t->trouble_waits then): the
 *    task is at the front of its queue, w's credit back and w paused.
 *    Drop the RESULT.
 *  - SCHED_STALE: an attempt already superseded (taken back, its worker
 *    given up on): its credit back, nothing else. Drop the RESULT (it
 *    must not fail the attempt that runs or will run).
 *  - SCHED_OK: the failure stands (retries spent, no other worker and
 *    no wait left, a cancelled job): take it with sched_task_finished_as.
 *    w->trouble_outlasted says when the wait for w's machine is spent.
 *  - any other verdict: as sched_task_finished_as would judge it; take
 *    it there (it refuses or drops). */
#define SCHED_TROUBLE_RETRIES 2
#define SCHED_TROUBLE_PAUSE_MS 10000
#define SCHED_TROUBLE_PAUSE_MAX_MS 60000
#define SCHED_TROUBLE_ALONE_MS 300000
sched_verdict_t sched_task_troubled (sched_t *self, sched_worker_t *w, uint32_t who,
                                     sched_job_t *job, uint64_t idx, uint32_t attempt,
                                     bool may_pass);

/* A worker's supervisor reports that this attempt was running when the
 * worker process crashed (name: the worker): blame + 1, once per attempt.
 * Below max_deaths the crashed execution (if still assigned) goes back to
 * the queue; at max_deaths the task is FAILED, and an attempt running
 * elsewhere meanwhile is taken back. True when the report was taken. */
bool sched_task_crashed (sched_t *self, sched_job_t *job, uint64_t idx,
                         uint32_t attempt, const char *name);
/* The same, reported by identity who, in a report that named together
 * slides (this one included): SCHED_OK when the report was taken; with
 * identities on, SCHED_NOT_YOURS unless the attempt was dispatched to
 * who, SCHED_LATE when it comes past that attempt's deadline. A report of
 * more than one slide names no culprit: a task not yet running alone is
 * not blamed but marked alone (see Running alone above); one already
 * alone is blamed. how: how the process died, as its report says
 * (`signal N (...)`, or NULL), named in the verdict; a death by SIGKILL
 * (the kernel's OOM killer) or SIGTRAP (GLib's stop when an allocation
 * fails) makes a verdict a rerun tries again (shared/result.h's mark):
 * likely this machine's memory, not the slide. sched_task_crashed is
 * this with identity 0, together 1 and how NULL (true for SCHED_OK). */
sched_verdict_t sched_task_crashed_as (sched_t *self, sched_job_t *job,
                                       uint64_t idx, uint32_t attempt,
                                       const char *name, uint32_t who,
                                       uint32_t together, const char *how);

/* Takes back what is past the deadline: a task RUNNING too long is
 * blamed and requeued (or FAILED), its worker told and its credit held
 * as a ghost; a task DISPATCHED and never started is requeued unblamed
 * and its worker marked stalled. Cost: one pass over the tasks on
 * workers; the broker calls it about once a second. */
void sched_tick (sched_t *self);

/* Assigns queued tasks to workers with credit; calls cb->dispatch.
 * Nothing while held. */
void sched_dispatch (sched_t *self);

/* Holds (true) or lets go (false) every dispatch: the broker holds it
 * while more results wait in its memory for a full disk than it keeps
 * (broker_state.c). Whatever calls sched_dispatch, nothing new goes out
 * until it lets go. */
void sched_hold (sched_t *self, bool held);

size_t sched_queue_depth (const sched_t *self);
/* Of those, the tasks either resource may run (not those that run
 * alone). */
size_t sched_queued_any (const sched_t *self);
/* Whether w's CPU slots leave those to the GPUs now (Speed, above): the
 * GPUs, at their measured speeds, would finish all they hold and all
 * that is queued before one of w's slots finished one. */
bool sched_cpu_slot_waits (const sched_t *self, const sched_worker_t *w);
sched_job_t *sched_first_job (const sched_t *self);
sched_worker_t *sched_first_worker (const sched_t *self);

#endif
