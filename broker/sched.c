/* See sched.h for the task state machine and the rules. Which queued
 * task goes to which worker next is sched_dispatch.c's; what an
 * execution that ends without a result costs its task (blame, a run
 * alone, a machine's trouble) is sched_blame.c's. */
#include "broker/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ lists */

static void
list_push (task_list_t *l, sched_task_t *t, bool front, bool worker_links)
{
    sched_task_t **prev = worker_links ? &t->wprev : &t->qprev;
    sched_task_t **next = worker_links ? &t->wnext : &t->qnext;
    *prev = *next = NULL;
    if (!l->head) {
        l->head = l->tail = t;
    } else if (front) {
        *next = l->head;
        if (worker_links) l->head->wprev = t; else l->head->qprev = t;
        l->head = t;
    } else {
        *prev = l->tail;
        if (worker_links) l->tail->wnext = t; else l->tail->qnext = t;
        l->tail = t;
    }
    l->count++;
}

static void
list_unlink (task_list_t *l, sched_task_t *t, bool worker_links)
{
    sched_task_t *prev = worker_links ? t->wprev : t->qprev;
    sched_task_t *next = worker_links ? t->wnext : t->qnext;
    if (prev) { if (worker_links) prev->wnext = next; else prev->qnext = next; }
    else l->head = next;
    if (next) { if (worker_links) next->wprev = prev; else next->qprev = prev; }
    else l->tail = prev;
    if (worker_links) t->wprev = t->wnext = NULL; else t->qprev = t->qnext = NULL;
    l->count--;
}

/* ------------------------------------------------------------ lifecycle */

sched_t *
sched_new (uint32_t max_deaths, const sched_callbacks_t *cb)
{
    if (!cb || !cb->dispatch || !cb->failed)
        return NULL;
    sched_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->max_deaths = max_deaths ? max_deaths : 3;
    self->max_vanished = SCHED_MAX_VANISHED;
    self->trouble_wait = SCHED_TROUBLE_ALONE_MS;
    self->cb = *cb;
    return self;
}

void
sched_set_now (sched_t *self, int64_t now_ms)
{
    if (self)
        self->now = now_ms;
}

void
sched_set_task_timeout (sched_t *self, int64_t timeout_ms)
{
    if (self)
        self->timeout = timeout_ms > 0 ? timeout_ms : 0;
}

void
sched_set_trouble_wait (sched_t *self, int64_t wait_ms)
{
    if (self)
        self->trouble_wait = wait_ms > 0 ? wait_ms : 0;
}

int64_t
sched_trouble_wait (const sched_t *self)
{
    return self ? self->trouble_wait : 0;
}

void
sched_set_attempt_base (sched_t *self, uint32_t base)
{
    if (!self)
        return;
    self->attempt_base = base;
    for (sched_job_t *j = self->jobs; j; j = j->next)
        j->floor_idx = j->total;
}

void
sched_set_max_vanished (sched_t *self, uint32_t n)
{
    if (self)
        self->max_vanished = n ? n : SCHED_MAX_VANISHED;
}

void
sched_set_identities (sched_t *self, bool on)
{
    if (self)
        self->identities = on;
}

/* The block of task idx and its place there (sched.h: SCHED_BLOCK). */
static size_t
block_of (uint64_t idx, size_t *at)
{
    if (idx >= SCHED_BLOCK) {
        *at = (size_t) (idx % SCHED_BLOCK);
        return SCHED_SMALL_BLOCKS + (size_t) (idx / SCHED_BLOCK) - 1;
    }
    if (idx < SCHED_BLOCK_FIRST) {
        *at = (size_t) idx;
        return 0;
    }
    size_t b = 1, start = SCHED_BLOCK_FIRST;
    while (idx >= 2 * start) {
        start *= 2;
        b++;
    }
    *at = (size_t) idx - start;
    return b;
}

static size_t
block_size (size_t b)
{
    return b >= SCHED_SMALL_BLOCKS ? SCHED_BLOCK
           : b == 0 ? SCHED_BLOCK_FIRST : (size_t) SCHED_BLOCK_FIRST << (b - 1);
}

static sched_task_t *
task_at (const sched_job_t *job, uint64_t idx)
{
    size_t at, b = block_of (idx, &at);
    return &job->blocks[b][at];
}

static void
job_free (sched_job_t *job)
{
    for (uint64_t i = 0; i < job->total; i++) {
        free (task_at (job, i)->path);
        free (task_at (job, i)->past);
    }
    for (size_t b = 0; b < job->nblocks; b++)
        free (job->blocks[b]);
    free (job->blocks);
    free (job);
}

static void
worker_free (sched_worker_t *w)
{
    free (w->ghosts);
    free (w);
}

void
sched_destroy (sched_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sched_t *self = *self_p;
    for (sched_job_t *j = self->jobs, *n; j; j = n) {
        n = j->next;
        job_free (j);
    }
    for (sched_worker_t *w = self->workers, *n; w; w = n) {
        n = w->next;
        worker_free (w);
    }
    free (self);
    *self_p = NULL;
}

/* ------------------------------------------------------------ credit */

static void
credit_take (sched_worker_t *w, int32_t gpu)
{
    if (gpu >= 0) {
        w->gpu_inflight++;
        w->gpu_load[gpu]++;
    } else
        w->cpu_inflight++;
}

static void
credit_give (sched_worker_t *w, int32_t gpu)
{
    if (gpu >= 0) {
        w->gpu_inflight--;
        w->gpu_load[gpu]--;
    } else
        w->cpu_inflight--;
}

/* Takes t off its worker: the job's counters follow; the credit comes
 * back unless keep_credit (then it stays with a ghost of the attempt). */
void
sched_detach (sched_task_t *t, bool keep_credit)
{
    sched_worker_t *w = t->worker;
    if (!w)
        return;
    list_unlink (&w->assigned, t, true);
    bool was_alone = w->alone == t;
    if (was_alone)
        w->alone = NULL;   /* the worker takes others again, unless it runs on */
    if (t->state == TASK_RUNNING)
        t->job->running--;
    else
        t->job->dispatched--;
    if (keep_credit && w->nghosts == w->capghosts) {
        uint32_t cap = w->capghosts ? w->capghosts * 2 : 4;
        sched_ghost_t *g = realloc (w->ghosts, cap * sizeof *g);
        if (g) {
            w->ghosts = g;
            w->capghosts = cap;
        } else
            keep_credit = false;    /* out of memory: over-commit instead */
    }
    if (keep_credit) {
        w->ghosts[w->nghosts++] = (sched_ghost_t) {
            .job = t->job->id, .idx = t->idx, .attempt = t->attempt, .gpu = t->gpu,
            .alone = was_alone};
        w->alone_ghosts += was_alone;
    } else
        credit_give (w, t->gpu);
    t->worker = NULL;
}

/* The ghost of (job, idx, attempt) on w ends: its credit comes back. */
bool
sched_ghost_end (sched_worker_t *w, uint64_t job, uint64_t idx, uint32_t attempt)
{
    for (uint32_t i = 0; w && i < w->nghosts; i++) {
        sched_ghost_t *g = &w->ghosts[i];
        if (g->job == job && g->idx == idx && g->attempt == attempt) {
            credit_give (w, g->gpu);
            w->alone_ghosts -= g->alone;
            w->ghosts[i] = w->ghosts[--w->nghosts];
            return true;
        }
    }
    return false;
}

/* The attempt on t's worker leaves it without a result (its worker
 * went, or the deadline took it back): with identities on, remember to
 * whom it was dispatched, so that its late RESULT (or crash report) is
 * taken from that identity only. Out of memory: forgotten, and its late
 * result is refused (the task runs again). */
static void
remember_attempt (sched_task_t *t, uint32_t attempt, uint32_t who, int64_t since)
{
    if (!t->past && !(t->past = calloc (1, sizeof *t->past)))
        return;
    sched_past_t *p = t->past;
    if (p->n == SCHED_PAST) {
        memmove (p->a, p->a + 1, (SCHED_PAST - 1) * sizeof *p->a);
        p->n--;
    }
    p->a[p->n++] = (sched_attempt_t) {.attempt = attempt, .who = who, .since = since};
}

void
sched_remember (const sched_t *self, sched_task_t *t)
{
    if (!self->identities || !t->worker)
        return;
    remember_attempt (t, t->attempt, t->who, t->since);
}

/* Whether attempt of t was dispatched to identity who (its current
 * assignment or a remembered one); *since: that attempt's dispatch or
 * start. */
bool
sched_attempt_of (const sched_task_t *t, uint32_t attempt, uint32_t who, int64_t *since)
{
    if (t->worker && t->attempt == attempt && t->who == who) {
        *since = t->since;
        return true;
    }
    for (uint32_t i = 0; t->past && i < t->past->n; i++)
        if (t->past->a[i].attempt == attempt && t->past->a[i].who == who) {
            *since = t->past->a[i].since;
            return true;
        }
    return false;
}

/* Why an attempt judged possible is not the sender's (identities on):
 * one of this life went to another identity; one of an earlier life is
 * not known to have gone to the sender (the journal keeps dispatches of
 * tasks running at a compaction and after: one that was not there, or
 * whose certificate is no longer admitted, is not known). */
sched_verdict_t
sched_not_yours (const sched_t *self, uint32_t attempt)
{
    return attempt <= self->attempt_base ? SCHED_EARLIER_LIFE : SCHED_NOT_YOURS;
}

/* A task reached DONE or FAILED: no late message about it counts. */
static void
forget_past (sched_task_t *t)
{
    free (t->past);
    t->past = NULL;
}

/* ------------------------------------------------------------ jobs */

sched_job_t *
sched_job_new (sched_t *self, uint64_t id, void *owner)
{
    if (!self)
        return NULL;
    sched_job_t *job = calloc (1, sizeof *job);
    if (!job)
        return NULL;
    job->id = id;
    job->owner = owner;
    job->prev = self->jobs_tail;
    if (self->jobs_tail) self->jobs_tail->next = job; else self->jobs = job;
    self->jobs_tail = job;
    return job;
}

sched_task_t *
sched_job_task (const sched_job_t *job, uint64_t idx)
{
    if (!job || idx >= job->total)
        return NULL;
    return task_at (job, idx);
}

/* The queue of t in its job: by resource, apart when it runs alone. */
static task_list_t *
queue_of (const sched_task_t *t)
{
    return &t->job->queue[t->resource + (t->alone ? SCHED_ALONE : 0)];
}

void
sched_enqueue (sched_t *self, sched_task_t *t, bool front)
{
    t->state = TASK_QUEUED;
    t->worker = NULL;
    t->gpu = -1;
    list_push (queue_of (t), t, front, false);
    self->queued++;
    if (t->alone)
        self->queued_alone[t->resource]++;
    else
        self->queued_kind[t->resource]++;
}

sched_task_t *
sched_job_add (sched_t *self, sched_job_t *job, const char *path,
               uint8_t resource)
{
    if (!self || !job || !path || resource > QC_RES_GPU || job->final
        || job->cancelled)
        return NULL;
    size_t at, b = block_of (job->total, &at);
    if (b == job->nblocks) {
        sched_task_t **blocks = realloc (job->blocks,
                                         (job->nblocks + 1) * sizeof *blocks);
        if (!blocks)
            return NULL;
        job->blocks = blocks;
        if (!(blocks[job->nblocks] = calloc (block_size (b), sizeof (sched_task_t))))
            return NULL;
        job->nblocks++;
    }
    sched_task_t *t = &job->blocks[b][at];
    memset (t, 0, sizeof *t);
    if (!(t->path = strdup (path)))
        return NULL;
    t->job = job;
    t->idx = job->total++;
    t->resource = resource;
    t->attempt = self->attempt_base;
    sched_enqueue (self, t, false);
    return t;
}

bool
sched_job_finished (const sched_job_t *job)
{
    return job && (job->final || job->cancelled)
           && job->done + job->failed == job->total;
}

size_t
sched_job_queued (const sched_job_t *job)
{
    size_t n = 0;
    for (int k = 0; job && k < SCHED_QUEUES; k++)
        n += job->queue[k].count;
    return n;
}

void
sched_dequeue (sched_t *self, sched_task_t *t)
{
    list_unlink (queue_of (t), t, false);
    self->queued--;
    if (t->alone)
        self->queued_alone[t->resource]--;
    else
        self->queued_kind[t->resource]--;
}

void
sched_fail_task (sched_t *self, sched_task_t *t, const char *reason)
{
    forget_past (t);
    t->state = TASK_FAILED;
    t->job->failed++;
    self->cb.failed (self->cb.arg, t, reason);
}

/* A task that left its worker: FAILED with reason when one is given (or
 * its job was cancelled), else back to the front of the queue (it has
 * waited longest). */
void
sched_requeue (sched_t *self, sched_task_t *t, const char *reason)
{
    if (reason)
        sched_fail_task (self, t, reason);
    else if (t->job->cancelled)
        sched_fail_task (self, t, t->job->cancel_why ? t->job->cancel_why
                                               : SCHED_CANCELLED_BY_CLIENT);
    else
        sched_enqueue (self, t, true);
}

void
sched_tell_revoked (sched_t *self, sched_task_t *t, sched_worker_t *w, const char *why)
{
    if (self->cb.revoke)
        self->cb.revoke (self->cb.arg, t, t->attempt, w, why);
}

void
sched_job_cancel (sched_t *self, sched_job_t *job, const char *why)
{
    if (!self || !job || job->cancelled)
        return;
    job->cancelled = true;
    job->cancel_why = why ? why : SCHED_CANCELLED_BY_CLIENT;
    for (int k = 0; k < SCHED_QUEUES; k++)
        while (job->queue[k].head) {
            sched_task_t *t = job->queue[k].head;
            sched_dequeue (self, t);
            sched_fail_task (self, t, job->cancel_why);
        }
    /* sent ahead to a worker, not started: taken back too (a worker with
       several slots or --prefetch holds some; "running ones finish" ran
       every one of them: a soak's review) */
    for (uint64_t i = 0; i < job->total; i++) {
        sched_task_t *t = sched_job_task (job, i);
        if (t->state != TASK_DISPATCHED || !t->worker)
            continue;
        sched_tell_revoked (self, t, t->worker, "its job was cancelled");
        sched_remember (self, t);
        sched_detach (t, false);
        sched_fail_task (self, t, job->cancel_why);
    }
}

void
sched_job_truncate (sched_t *self, sched_job_t *job, uint64_t total)
{
    if (!self || !job)
        return;
    while (job->total > total) {
        sched_task_t *t = sched_job_task (job, job->total - 1);
        if (t->state != TASK_QUEUED)
            break;
        sched_dequeue (self, t);
        free (t->path);
        free (t->past);
        memset (t, 0, sizeof *t);
        job->total--;
    }
}

void
sched_job_remove (sched_t *self, sched_job_t *job)
{
    if (!self || !job)
        return;
    /* Tasks still assigned lose their worker link; the worker's credit
     * comes back now. */
    for (uint64_t i = 0; i < job->total; i++) {
        sched_task_t *t = sched_job_task (job, i);
        if (t->state == TASK_QUEUED)
            sched_dequeue (self, t);
        sched_detach (t, false);
    }
    /* the cursor names the job served last; step it back so that the job
     * after this one is still next (job->next would skip it once) */
    for (int k = 0; k < SCHED_QUEUES; k++)
        if (self->cursor[k] == job)
            self->cursor[k] = job->prev;
    if (job->prev) job->prev->next = job->next; else self->jobs = job->next;
    if (job->next) job->next->prev = job->prev; else self->jobs_tail = job->prev;
    job_free (job);
}

bool
sched_task_restore_final (sched_t *self, sched_job_t *job, uint64_t idx,
                          bool ok)
{
    sched_task_t *t = sched_job_task (job, idx);
    if (!self || !t || t->state != TASK_QUEUED)
        return false;
    sched_dequeue (self, t);
    forget_past (t);            /* an earlier life's attempts (the journal's) */
    t->state = ok ? TASK_DONE : TASK_FAILED;
    if (ok) job->done++; else job->failed++;
    return true;
}

void
sched_task_restore_blame (sched_job_t *job, uint64_t idx, uint32_t blame)
{
    sched_task_t *t = sched_job_task (job, idx);
    if (t)
        t->blame = t->blame_other = blame;   /* of causes not known */
}

void
sched_task_restore_attempt (sched_t *self, sched_job_t *job, uint64_t idx,
                            uint32_t attempt, uint32_t who)
{
    sched_task_t *t = sched_job_task (job, idx);
    if (!self || !self->identities || !t || !who || t->state == TASK_DONE
        || t->state == TASK_FAILED)
        return;
    remember_attempt (t, attempt, who, SCHED_RESTORED);
}

/* ------------------------------------------------------------ workers */

sched_worker_t *
sched_worker_add (sched_t *self, uint32_t slots, uint32_t prefetch,
                  const uint32_t *gpus, uint32_t ngpus, void *owner)
{
    if (!self || ngpus > QC_PROTO_MAX_GPUS || (ngpus && !gpus))
        return NULL;
    sched_worker_t *w = calloc (1, sizeof *w);
    if (!w)
        return NULL;
    w->slots = slots;
    w->prefetch = prefetch;
    w->ngpus = ngpus;
    /* one decoded slide waiting per GPU keeps it busy while the CPU reads
     * the next */
    w->gpu_prefetch = ngpus;
    for (uint32_t i = 0; i < ngpus; i++)
        w->gpu_index[i] = gpus[i];
    w->owner = owner;
    w->prev = self->workers_tail;
    if (self->workers_tail) self->workers_tail->next = w; else self->workers = w;
    self->workers_tail = w;
    return w;
}

void
sched_worker_remove (sched_t *self, sched_worker_t *w, bool died,
                     const char *name)
{
    if (!self || !w)
        return;
    while (w->assigned.head) {
        sched_task_t *t = w->assigned.head;
        bool was_running = t->state == TASK_RUNNING;
        sched_remember (self, t);
        sched_detach (t, false);
        char reason[512];
        const char *verdict = NULL;
        /* a vanished worker is no verdict on its slides; only a slide
         * that keeps vanishing with its workers is given up at last */
        if (was_running && died && ++t->vanished >= self->max_vanished) {
            snprintf (reason, sizeof reason,
                      "slide was being processed by %u workers that vanished "
                      "without a crash report (last: %s); not retried",
                      (unsigned) t->vanished, name ? name : "?");
            verdict = reason;
        }
        sched_requeue (self, t, verdict);
    }
    if (w->prev) w->prev->next = w->next; else self->workers = w->next;
    if (w->next) w->next->prev = w->prev; else self->workers_tail = w->prev;
    worker_free (w);
}

void
sched_worker_drain (sched_t *self, sched_worker_t *w)
{
    if (self && w)
        w->draining = true;
}

sched_verdict_t
sched_worker_return (sched_t *self, sched_worker_t *w, sched_job_t *job,
                     uint64_t idx, uint32_t attempt)
{
    sched_task_t *t = sched_job_task (job, idx);
    if (!self || !t)
        return SCHED_UNKNOWN;
    if (t->worker != w || t->attempt != attempt || t->state != TASK_DISPATCHED)
        return SCHED_STALE;
    sched_detach (t, false);
    sched_requeue (self, t, NULL);
    return SCHED_OK;
}

/* ------------------------------------------------------------ tasks */

/* The attempt check every message about a task goes through. */
sched_verdict_t
sched_judge (const sched_t *self, const sched_task_t *t, uint32_t attempt)
{
    if (!t)
        return SCHED_UNKNOWN;
    if (t->state == TASK_DONE || t->state == TASK_FAILED)
        return SCHED_DUPLICATE;
    /* a number no dispatch of this task gave: 0, one to come, or one of
       a broker life before the task was added (a state folder's first
       life numbers from 65537: a forged crash report or RESULT for 1
       failed or finished a slide never dispatched) */
    uint32_t floor = t->idx >= t->job->floor_idx ? self->attempt_base : 0;
    if (attempt <= floor || attempt > t->attempt)
        return SCHED_BAD_ATTEMPT;
    return SCHED_OK;
}

sched_verdict_t
sched_task_started (sched_t *self, sched_worker_t *w, sched_job_t *job,
                    uint64_t idx, uint32_t attempt)
{
    sched_task_t *t = sched_job_task (job, idx);
    sched_verdict_t v = self ? sched_judge (self, t, attempt) : SCHED_UNKNOWN;
    if (v != SCHED_OK)
        return v;
    if (!w || t->worker != w || t->attempt != attempt || t->state != TASK_DISPATCHED)
        return SCHED_STALE;
    t->state = TASK_RUNNING;
    t->since = self->now;
    job->dispatched--;
    job->running++;
    w->stalled = false;
    return SCHED_OK;
}

sched_verdict_t
sched_task_finished (sched_t *self, sched_worker_t *w, sched_job_t *job,
                     uint64_t idx, uint32_t attempt, bool ok)
{
    return sched_task_finished_as (self, w, w ? w->who : 0, job, idx, attempt, ok);
}

sched_verdict_t
sched_task_finished_as (sched_t *self, sched_worker_t *w, uint32_t who,
                        sched_job_t *job, uint64_t idx, uint32_t attempt, bool ok)
{
    sched_task_t *t = sched_job_task (job, idx);
    int64_t since;
    if (!self || !t)
        return SCHED_UNKNOWN;
    /* trust no peer's word: only the identity the attempt went to may
     * finish it (before anything changes for the sender) */
    if (self->identities && sched_judge (self, t, attempt) == SCHED_OK
        && !sched_attempt_of (t, attempt, who, &since))
        return sched_not_yours (self, attempt);
    if (w) {
        w->stalled = false;         /* it shows progress */
        sched_ghost_end (w, job->id, idx, attempt);
    }
    sched_verdict_t v = sched_judge (self, t, attempt);
    if (v != SCHED_OK)
        return v;
    /* its machine works again: the next trouble pauses it 10 s again;
     * the pause it is in stands (its other slots may pass while the
     * slide it failed should go elsewhere) */
    if (w && ok) {
        w->trouble = 0;
        w->trouble_outlasted = false;
    }
    /* how long its worker took, for the dispatch policy: a slide that
       passed, run by the worker it was dispatched to, from its start */
    if (w && ok && t->worker == w && t->attempt == attempt && t->state == TASK_RUNNING)
        sched_speed_note (w, t->gpu >= 0, self->now - t->since);
    if (t->worker && t->attempt != attempt) {
        /* an earlier attempt finished first: the current one is no
         * longer needed; while it runs it keeps its executor busy */
        sched_worker_t *cur = t->worker;
        bool running = t->state == TASK_RUNNING;
        sched_tell_revoked (self, t, cur, "another attempt of this task finished first");
        sched_detach (t, running);
    } else if (t->worker)
        sched_detach (t, false);
    else if (t->state == TASK_QUEUED)
        sched_dequeue (self, t);      /* a late result from a worker given up on */
    forget_past (t);
    if (ok) {
        t->state = TASK_DONE;
        job->done++;
    } else {
        t->state = TASK_FAILED;
        job->failed++;
    }
    return SCHED_OK;
}

/* ------------------------------------------------------------ assignment */

void
sched_assign (sched_t *self, sched_task_t *t, sched_worker_t *w, int gpu_slot)
{
    if (t->attempt - self->attempt_base >= SCHED_ATTEMPTS_PER_LIFE) {
        sched_fail_task (self, t, "dispatched 65535 times without a result; not retried");
        return;
    }
    t->state = TASK_DISPATCHED;
    t->worker = w;
    t->who = w->who;
    t->attempt++;
    t->gpu = gpu_slot;
    t->since = self->now;
    if (gpu_slot >= 0 && w->ms_gpu > 0)
        self->gpu_held++;           /* the outlook of this dispatch */
    credit_take (w, gpu_slot);
    t->job->dispatched++;
    list_push (&w->assigned, t, false, true);
    self->cb.dispatch (self->cb.arg, t, w);
}

size_t
sched_queue_depth (const sched_t *self)
{
    return self ? self->queued : 0;
}

sched_job_t *
sched_first_job (const sched_t *self)
{
    return self ? self->jobs : NULL;
}

sched_worker_t *
sched_first_worker (const sched_t *self)
{
    return self ? self->workers : NULL;
}
