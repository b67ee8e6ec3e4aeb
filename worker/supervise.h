/* qc-worker's supervisor: the worker runs in a child process; the parent
 * restarts it when it crashes and tells the broker which slides were
 * running at that moment, so that a slide is blamed for its own
 * executions only (broker/sched.h), never because a worker was killed
 * around it.
 *
 * The two share one table in memory (mapped before the fork): each
 * executor thread of the child keeps its current task in a slot; a crash
 * signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) marks the slot of the
 * thread it hit before the process dies. The parent reads the table
 * when the child dies of a signal: the marked slots, or, when none is
 * marked (SIGKILL from the kernel's OOM killer), or memory was short
 * when the signal came (a library that crashes, aborts or traps when an
 * allocation fails names no culprit), every running one. The next child
 * sends them in its first READY (`crashed`), the reason saying `while
 * memory ran short` in the second case. A child restarted after a crash
 * that cannot start (memory or threads short for now) is started again
 * after the same growing delay, QC_START_TRIES times at most.
 *
 * A supervisor killed itself (kill -9) takes its child with it
 * (PR_SET_PDEATHSIG) and reports nothing: a vanished worker, no blame.
 * SIGTERM and SIGINT are passed on to the child, which drains. A child
 * that exits non-zero mid-slide (a library's exit() on an error) is a
 * crash too: reported ("exit N") and restarted. */
#ifndef QC_SUPERVISE_H
#define QC_SUPERVISE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/proto.h"

#define QC_CRASH_SLOTS 256
#define QC_CRASH_REPORT 64

enum { SLOT_FREE = 0, SLOT_RUNNING = 1, SLOT_CULPRIT = 2 };

/* A worker process's exit code that asks its supervisor for a new one at
 * once, with nothing to report: its only running slides are stuck past
 * the task timeout (the broker took them back and blamed them), and a
 * thread stuck inside a library cannot be stopped but with its process:
 * a new one frees their slots (else a one-slot worker, or the
 * one-process mode, waited for ever). */
#define QC_SUPERVISE_RESTART 75

typedef struct {
    _Atomic uint32_t state;    /* SLOT_* */
    _Atomic uint32_t stuck;    /* its task ran past the task timeout */
    uint32_t attempt;
    uint64_t job, key, idx;
    int64_t since_ms;          /* CLOCK_MONOTONIC when its task began */
    _Atomic int64_t stuck_ms;  /* and when the broker took it back */
} qc_crash_slot_t;

typedef struct qc_crash_table {
    atomic_uint nslots;        /* slots claimed by threads so far */
    qc_crash_slot_t slot[QC_CRASH_SLOTS];
    /* what the last child was running when it crashed */
    uint32_t nreport;
    qc_taskref_t report[QC_CRASH_REPORT];
    char reason[128];
    /* memory was short when the crash signal came (any thread): the
     * death says nothing of the slide its thread ran (GLib, libzmq and
     * OpenSlide crash, abort or trap when an allocation fails) */
    atomic_int memory_short;
    /* processes the supervisor has started (1 for the first); written
     * by the supervisor only, before each fork */
    atomic_uint starts;
    /* results the children have sent: a child that sent one before it
     * crashed was making progress, not caught in a restart loop */
    atomic_uint results;
    /* the instance (READY's key) of the child now running, written by
     * the child at its start: its successor's READY names it (succeeds) */
    _Atomic uint64_t instance;
} qc_crash_table_t;

/* Forks the worker process and watches it (owned: by a process that ends
 * it by its own means, qc-submit's one-process mode: SIGTERM, SIGINT and
 * SIGHUP are ignored by both processes, which end when the worker
 * exits 0); returns only in the child
 * (0, with *table set to the shared table) or on a supervision failure
 * (-1: the caller runs the worker unsupervised). The parent exits
 * with the child's exit code when the child exits on its own. */
int qc_supervise (const char *prog, bool owned, qc_crash_table_t **table);

/* In the child: the calling thread's slot (NULL when the table is full
 * or there is none); a crash signal in this thread marks it. */
qc_crash_slot_t *qc_crash_slot_claim (qc_crash_table_t *table);
void qc_crash_slot_set (qc_crash_slot_t *slot, uint64_t job, uint64_t key,
                        uint64_t idx, uint32_t attempt);
void qc_crash_slot_clear (qc_crash_slot_t *slot);
/* In the child: a task's RESULT was sent (table may be NULL). */
void qc_crash_result_sent (qc_crash_table_t *table);
/* In the child: the broker took back this running attempt at the task
 * timeout; true when a slot runs it (it is marked stuck until it ends). */
bool qc_crash_slot_mark_stuck (qc_crash_table_t *table, uint64_t job, uint64_t idx,
                               uint32_t attempt);
/* In the child: how many slots run a stuck task, with none running any
 * other (the process may then be restarted, losing nothing); 0 when
 * another task runs or none is stuck. A task is stuck once it has run as
 * long again after the broker took it back as before (twice the task
 * timeout in all): a slow slide's late result is still taken (PROTOCOL.md
 * 7.3), and it had that long to send it. */
unsigned qc_crash_table_only_stuck (qc_crash_table_t *table);

#endif
