/* See sched.h for the task state machine and the rules. Which queued
 * task goes to which worker next is sched_dispatch.c's. */
#include "broker/sched_int.h"
#include "shared/err.h"

#include <signal.h>
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
static void
detach (sched_task_t *t, bool keep_credit)
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
static bool
ghost_end (sched_worker_t *w, uint64_t job, uint64_t idx, uint32_t attempt)
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

static void
remember (const sched_t *self, sched_task_t *t)
{
    if (!self->identities || !t->worker)
        return;
    remember_attempt (t, t->attempt, t->who, t->since);
}

/* Whether attempt of t was dispatched to identity who (its current
 * assignment or a remembered one); *since: that attempt's dispatch or
 * start. */
static bool
attempt_of (const sched_task_t *t, uint32_t attempt, uint32_t who, int64_t *since)
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
static sched_verdict_t
not_yours (const sched_t *self, uint32_t attempt)
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

static void
enqueue (sched_t *self, sched_task_t *t, bool front)
{
    t->state = TASK_QUEUED;
    t->worker = NULL;
    t->gpu = -1;
    list_push (queue_of (t), t, front, false);
    self->queued++;
    if (t->alone)
        self->queued_alone[t->resource]++;
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
    enqueue (self, t, false);
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
}

static void
fail_task (sched_t *self, sched_task_t *t, const char *reason)
{
    forget_past (t);
    t->state = TASK_FAILED;
    t->job->failed++;
    self->cb.failed (self->cb.arg, t, reason);
}

/* A task that left its worker: FAILED with reason when one is given (or
 * its job was cancelled), else back to the front of the queue (it has
 * waited longest). */
static void
requeue (sched_t *self, sched_task_t *t, const char *reason)
{
    if (reason)
        fail_task (self, t, reason);
    else if (t->job->cancelled)
        fail_task (self, t, t->job->cancel_why ? t->job->cancel_why
                                               : SCHED_CANCELLED_BY_CLIENT);
    else
        enqueue (self, t, true);
}

static void
tell_revoked (sched_t *self, sched_task_t *t, sched_worker_t *w, const char *why)
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
            fail_task (self, t, job->cancel_why);
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
        detach (t, false);
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
        remember (self, t);
        detach (t, false);
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
        requeue (self, t, verdict);
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
    detach (t, false);
    requeue (self, t, NULL);
    return SCHED_OK;
}

/* ------------------------------------------------------------ tasks */

/* The attempt check every message about a task goes through. */
static sched_verdict_t
judge (const sched_t *self, const sched_task_t *t, uint32_t attempt)
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
    sched_verdict_t v = self ? judge (self, t, attempt) : SCHED_UNKNOWN;
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
    if (self->identities && judge (self, t, attempt) == SCHED_OK
        && !attempt_of (t, attempt, who, &since))
        return not_yours (self, attempt);
    if (w) {
        w->stalled = false;         /* it shows progress */
        ghost_end (w, job->id, idx, attempt);
    }
    sched_verdict_t v = judge (self, t, attempt);
    if (v != SCHED_OK)
        return v;
    /* its machine works again: the next trouble pauses it 10 s again;
     * the pause it is in stands (its other slots may pass while the
     * slide it failed should go elsewhere) */
    if (w && ok)
        w->trouble = 0;
    if (t->worker && t->attempt != attempt) {
        /* an earlier attempt finished first: the current one is no
         * longer needed; while it runs it keeps its executor busy */
        sched_worker_t *cur = t->worker;
        bool running = t->state == TASK_RUNNING;
        tell_revoked (self, t, cur, "another attempt of this task finished first");
        detach (t, running);
    } else if (t->worker)
        detach (t, false);
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
                     uint64_t idx, uint32_t attempt)
{
    sched_task_t *t = sched_job_task (job, idx);
    sched_verdict_t v = self ? judge (self, t, attempt) : SCHED_UNKNOWN;
    int64_t since;
    if (v != SCHED_OK)
        return v;
    /* trust no peer's word: another identity's attempt is refused where
     * any RESULT is (sched_task_finished_as) */
    if (self->identities && !attempt_of (t, attempt, who, &since))
        return not_yours (self, attempt);
    if (!w || t->worker != w || t->attempt != attempt || t->state != TASK_RUNNING) {
        /* an attempt already superseded (taken back, its worker gone):
         * its machine's failure says nothing of the attempt that runs
         * or will run; only its credit comes back */
        if (w)
            ghost_end (w, job->id, idx, attempt);
        return SCHED_STALE;
    }
    if (job->cancelled || t->troubled >= SCHED_TROUBLE_RETRIES || !elsewhere (self, w, t))
        return SCHED_OK;
    t->troubled++;
    remember (self, t);         /* its worker's late crash report still counts */
    detach (t, false);
    enqueue (self, t, true);
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
        detach (t, false);
        requeue (self, t, NULL);
    } else if (queued)
        enqueue (self, t, true);
}

sched_verdict_t
sched_task_crashed_as (sched_t *self, sched_job_t *job, uint64_t idx,
                       uint32_t attempt, const char *name, uint32_t who,
                       uint32_t together, const char *how)
{
    sched_task_t *t = sched_job_task (job, idx);
    sched_verdict_t v = self ? judge (self, t, attempt) : SCHED_UNKNOWN;
    int64_t since;
    if (v != SCHED_OK)
        return v;
    if (attempt <= t->crash_att)
        return SCHED_DUPLICATE;
    if (self->identities && (!attempt_of (t, attempt, who, &since)
                             || since == SCHED_RESTORED))
        return not_yours (self, attempt);
    /* a report past the attempt's deadline: the deadline took it back
     * and blamed it already (or the report is stale) */
    if (self->identities && self->timeout && self->now - since > self->timeout)
        return SCHED_LATE;
    t->crash_att = attempt;
    if (together > 1 && attempt != t->alone_att) {
        crashed_with_others (self, t, attempt);
        return SCHED_OK;
    }
    t->blame++;
    char reason[768];
    unsigned sig = 0;
    bool memory = how && ((sscanf (how, "signal %u", &sig) == 1
                           && (sig == SIGKILL || sig == SIGTRAP))
                          || strstr (how, QC_RESULT_CRASH_MEMORY));
    if (!memory)
        t->blame_other++;
    /* marked for a rerun only when every death was of that kind: one
     * segfault among them is the slide's */
    memory = memory && !t->blame_other;
    snprintf (reason, sizeof reason,
              "slide ran %u time%s without a result (crashed, or past the task "
              "timeout; last: worker %s crashed while running it%s%.200s); "
              "not retried%s", (unsigned) t->blame, qc_plural (t->blame), name ? name : "?",
              how ? ": " : "",
              how ? how : "", memory ? " in this job (killed as the kernel's OOM killer "
              "does, stopped by GLib when an allocation failed, or dead while memory ran "
              "short: likely this machine's memory, not the slide" QC_RESULT_RETRY_MARK : "");
    const char *verdict = t->blame >= self->max_deaths ? reason : NULL;
    if (t->worker && t->attempt == attempt) {
        /* that execution is gone with its process */
        detach (t, false);
        requeue (self, t, verdict);
    } else if (t->state == TASK_QUEUED) {
        if (verdict) {
            sched_dequeue (self, t);
            fail_task (self, t, verdict);
        }
    } else if (verdict) {
        /* the report came after the broker gave up on the dead worker and
         * sent the slide elsewhere: the verdict holds; that attempt is
         * taken back (it keeps its credit while it runs) */
        bool running = t->state == TASK_RUNNING;
        tell_revoked (self, t, t->worker, "the slide crashed other workers");
        detach (t, running);
        fail_task (self, t, verdict);
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
                tell_revoked (self, t, w, "not started within the task timeout");
                remember (self, t);
                detach (t, false);
                requeue (self, t, NULL);
                continue;
            }
            tell_revoked (self, t, w, "ran past the task timeout");
            remember (self, t);
            detach (t, true);
            t->blame++;
            t->blame_other++;
            char reason[512];
            snprintf (reason, sizeof reason,
                      "slide ran %u time%s without a result (crashed, or past the "
                      "task timeout; last: it ran past the %lld s task timeout); not "
                      "retried", (unsigned) t->blame, qc_plural (t->blame),
                      (long long) (self->timeout / 1000));
            requeue (self, t, t->blame >= self->max_deaths ? reason : NULL);
        }
}

/* ------------------------------------------------------------ assignment */

void
sched_assign (sched_t *self, sched_task_t *t, sched_worker_t *w, int gpu_slot)
{
    if (t->attempt - self->attempt_base >= SCHED_ATTEMPTS_PER_LIFE) {
        fail_task (self, t, "dispatched 65535 times without a result; not retried");
        return;
    }
    t->state = TASK_DISPATCHED;
    t->worker = w;
    t->who = w->who;
    t->attempt++;
    t->gpu = gpu_slot;
    t->since = self->now;
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
