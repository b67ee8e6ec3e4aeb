/* The rules for a task's executions that end without a result (contract
 * in sched.h): a crash report (blame, or a run alone when it names no
 * culprit), a run past the deadline (blame), a failure of the worker's
 * machine (the task sent elsewhere, the worker paused). The state
 * machine's steps they take are sched.c's. */
#include "broker/sched_int.h"
#include "shared/err.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* One more of t's own executions ended without a result (last: how, in
 * words; memory: its worker died as memory running out kills, likely
 * the machine's memory). The verdict in reason once blame reaches
 * max_deaths, else NULL; marked for a rerun when every death so far was
 * memory's (one segfault among them is the slide's). */
static const char *
blame (const sched_t *self, sched_task_t *t, const char *last, bool memory, char *reason,
       size_t len)
{
    t->blame++;
    if (!memory)
        t->blame_other++;
    memory = memory && !t->blame_other;
    snprintf (reason, len, "slide ran %u time%s without a result (crashed, or past the task "
              "timeout; last: %s); not retried%s", (unsigned) t->blame, qc_plural (t->blame),
              last, memory ? " in this job (killed as the kernel's OOM killer does, stopped "
              "by GLib when an allocation failed, or dead while memory ran short: likely "
              "this machine's memory, not the slide" QC_RESULT_RETRY_MARK : "");
    return t->blame >= self->max_deaths ? reason : NULL;
}

/* Whether a worker other than w could take t now: one with the resource
 * t needs, taking tasks. */
static bool
elsewhere (const sched_t *self, const sched_worker_t *w, const sched_task_t *t)
{
    for (const sched_worker_t *o = self->workers; o; o = o->next)
        if (o != w && !o->draining && !o->stalled && !sched_worker_paused (self, o)
            && ((t->resource != QC_RES_GPU && o->slots)
                || (t->resource != QC_RES_CPU && o->ngpus)))
            return true;
    return false;
}

sched_verdict_t
sched_task_troubled (sched_t *self, sched_worker_t *w, uint32_t who, sched_job_t *job,
                     uint64_t idx, uint32_t attempt, bool may_pass)
{
    sched_task_t *t = sched_job_task (job, idx);
    sched_verdict_t v = self ? sched_judge (self, t, attempt) : SCHED_UNKNOWN;
    int64_t since;
    if (v != SCHED_OK)
        return v;
    /* trust no peer's word: another identity's attempt is refused where
     * any RESULT is (sched_task_finished_as) */
    if (self->identities && !sched_attempt_of (t, attempt, who, &since))
        return sched_not_yours (self, attempt);
    if (!w || t->worker != w || t->attempt != attempt || t->state != TASK_RUNNING) {
        /* an attempt already superseded (taken back, its worker gone):
         * its machine's failure says nothing of the attempt that runs
         * or will run; only its credit comes back */
        if (w)
            sched_ghost_end (w, job->id, idx, attempt);
        return SCHED_STALE;
    }
    if (!w->trouble)
        w->trouble_since = self->now;     /* a spell of failures begins */
    if (job->cancelled)
        return SCHED_OK;
    bool waits = !elsewhere (self, w, t);
    if (!waits && t->troubled >= SCHED_TROUBLE_RETRIES)
        return SCHED_OK;
    if (waits) {
        /* only w could run it: wait for w's machine, a while */
        if (!may_pass || w->trouble_outlasted || !self->trouble_wait)
            return SCHED_OK;
        if (w->trouble && self->now - w->trouble_since >= self->trouble_wait) {
            w->trouble_outlasted = true;
            return SCHED_OK;
        }
        if (t->troubled && self->now - t->troubled_since >= self->trouble_wait)
            return SCHED_OK;              /* this slide waited its own while */
    }
    if (!t->troubled)
        t->troubled_since = self->now;
    t->trouble_waits = waits;
    t->troubled++;
    sched_remember (self, t);         /* its worker's late crash report still counts */
    sched_detach (t, false);
    sched_enqueue (self, t, true);
    /* 10 s, 20 s, 40 s, 60 s while its results keep failing so; failures
     * that come in while it is paused are of the same spell (slides that
     * ran side by side): the pause stands */
    if (sched_worker_paused (self, w))
        return SCHED_REQUEUED;
    int64_t pause = SCHED_TROUBLE_PAUSE_MS;
    for (uint32_t i = 0; i < w->trouble && pause < SCHED_TROUBLE_PAUSE_MAX_MS; i++)
        pause *= 2;
    w->trouble++;
    w->paused_until = self->now + (pause < SCHED_TROUBLE_PAUSE_MAX_MS
                                   ? pause : SCHED_TROUBLE_PAUSE_MAX_MS);
    return SCHED_REQUEUED;
}

bool
sched_task_crashed (sched_t *self, sched_job_t *job, uint64_t idx,
                    uint32_t attempt, const char *name)
{
    return sched_task_crashed_as (self, job, idx, attempt, name, 0, 1, NULL) == SCHED_OK;
}

/* A crash that took t with other slides and named no culprit: t is not
 * blamed; it runs alone from now on (a queued t moves to its alone
 * queue, an assigned attempt goes back there). */
static void
crashed_with_others (sched_t *self, sched_task_t *t, uint32_t attempt)
{
    bool queued = t->state == TASK_QUEUED;
    if (queued)
        sched_dequeue (self, t);
    t->alone = true;
    if (t->worker && t->attempt == attempt) {
        sched_detach (t, false);
        sched_requeue (self, t, NULL);
    } else if (queued)
        sched_enqueue (self, t, true);
}

sched_verdict_t
sched_task_crashed_as (sched_t *self, sched_job_t *job, uint64_t idx,
                       uint32_t attempt, const char *name, uint32_t who,
                       uint32_t together, const char *how)
{
    sched_task_t *t = sched_job_task (job, idx);
    sched_verdict_t v = self ? sched_judge (self, t, attempt) : SCHED_UNKNOWN;
    int64_t since;
    if (v != SCHED_OK)
        return v;
    if (attempt <= t->crash_att)
        return SCHED_DUPLICATE;
    if (self->identities && (!sched_attempt_of (t, attempt, who, &since)
                             || since == SCHED_RESTORED))
        return sched_not_yours (self, attempt);
    /* a report past the attempt's deadline: the deadline took it back
     * and blamed it already (or the report is stale) */
    if (self->identities && self->timeout && self->now - since > self->timeout)
        return SCHED_LATE;
    t->crash_att = attempt;
    if (together > 1 && attempt != t->alone_att) {
        crashed_with_others (self, t, attempt);
        return SCHED_OK;
    }
    unsigned sig = 0;
    bool memory = how && ((sscanf (how, "signal %u", &sig) == 1
                           && (sig == SIGKILL || sig == SIGTRAP))
                          || strstr (how, QC_RESULT_CRASH_MEMORY));
    char last[512], reason[1024];
    snprintf (last, sizeof last, "worker %s crashed while running it%s%.200s",
              name ? name : "?", how ? ": " : "", how ? how : "");
    const char *verdict = blame (self, t, last, memory, reason, sizeof reason);
    if (t->worker && t->attempt == attempt) {
        /* that execution is gone with its process */
        sched_detach (t, false);
        sched_requeue (self, t, verdict);
    } else if (t->state == TASK_QUEUED) {
        if (verdict) {
            sched_dequeue (self, t);
            sched_fail_task (self, t, verdict);
        }
    } else if (verdict) {
        /* the report came after the broker gave up on the dead worker and
         * sent the slide elsewhere: the verdict holds; that attempt is
         * taken back (it keeps its credit while it runs) */
        bool running = t->state == TASK_RUNNING;
        sched_tell_revoked (self, t, t->worker, "the slide crashed other workers");
        sched_detach (t, running);
        sched_fail_task (self, t, verdict);
    }
    return SCHED_OK;
}

void
sched_tick (sched_t *self)
{
    if (!self || !self->timeout)
        return;
    for (sched_worker_t *w = self->workers; w; w = w->next)
        for (sched_task_t *t = w->assigned.head, *next; t; t = next) {
            next = t->wnext;
            if (self->now - t->since <= self->timeout)
                continue;
            if (t->state == TASK_DISPATCHED) {
                /* never started: the worker is not getting to its tasks */
                w->stalled = true;
                sched_tell_revoked (self, t, w, "not started within the task timeout");
                sched_remember (self, t);
                sched_detach (t, false);
                sched_requeue (self, t, NULL);
                continue;
            }
            sched_tell_revoked (self, t, w, QC_REVOKE_TIMEOUT);
            sched_remember (self, t);
            sched_detach (t, true);
            char last[64], reason[1024];
            snprintf (last, sizeof last, "it ran past the %lld s task timeout",
                      (long long) (self->timeout / 1000));
            sched_requeue (self, t, blame (self, t, last, false, reason, sizeof reason));
        }
}
