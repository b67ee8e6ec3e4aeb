/* Shared fixtures of the scheduler tests (test_sched_*.c): callbacks that
 * record every dispatch and every failure, so that each rule of
 * broker/sched.h can be checked against what was recorded and against the
 * counters in the worker and job records. Header-only (the Makefile builds
 * each tests/unit/test_*.c into its own program and compiles nothing else
 * here), so every function is static and marked unused for the programs
 * that do not call it. */
#ifndef QC_SCHED_FIXTURES_H
#define QC_SCHED_FIXTURES_H

#include "broker/sched.h"

#include <stdint.h>
#include <string.h>

#include "tests/unit/check.h"

/* ------------------------------------------------------------ recorder */

typedef struct {
    sched_task_t *task;
    sched_worker_t *worker;
    uint64_t job, idx;
    int32_t gpu;           /* the slot the scheduler chose, -1 = CPU */
    uint32_t device;       /* w->gpu_index[gpu] when on a GPU */
} dispatch_t;

typedef struct {
    sched_task_t *task;
    uint64_t job, idx;
    char reason[512];
} failure_t;

typedef struct {
    dispatch_t *d;
    size_t nd, capd;
    failure_t *f;
    size_t nf, capf;
} rec_t;

static __attribute__ ((unused)) void
on_dispatch (void *arg, sched_task_t *t, sched_worker_t *w)
{
    rec_t *r = arg;
    if (r->nd == r->capd) {
        r->capd = r->capd ? r->capd * 2 : 64;
        r->d = realloc (r->d, r->capd * sizeof *r->d);
    }
    dispatch_t *d = &r->d[r->nd++];
    d->task = t;
    d->worker = w;
    d->job = t->job->id;
    d->idx = t->idx;
    d->gpu = t->gpu;
    d->device = t->gpu >= 0 ? w->gpu_index[t->gpu] : UINT32_MAX;
}

static __attribute__ ((unused)) void
on_failed (void *arg, sched_task_t *t, const char *reason)
{
    rec_t *r = arg;
    if (r->nf == r->capf) {
        r->capf = r->capf ? r->capf * 2 : 16;
        r->f = realloc (r->f, r->capf * sizeof *r->f);
    }
    failure_t *f = &r->f[r->nf++];
    f->task = t;
    f->job = t->job->id;
    f->idx = t->idx;
    snprintf (f->reason, sizeof f->reason, "%s", reason ? reason : "");
}

static __attribute__ ((unused)) void
rec_clear (rec_t *r)
{
    r->nd = r->nf = 0;
}

static __attribute__ ((unused)) void
rec_free (rec_t *r)
{
    free (r->d);
    free (r->f);
    memset (r, 0, sizeof *r);
}

static __attribute__ ((unused)) sched_t *
new_sched (rec_t *r, uint32_t max_deaths)
{
    memset (r, 0, sizeof *r);
    sched_callbacks_t cb = {.dispatch = on_dispatch, .failed = on_failed, .arg = r};
    return sched_new (max_deaths, &cb);
}

static __attribute__ ((unused)) sched_job_t *
new_job (sched_t *s, uint64_t id, size_t ntasks, uint8_t resource, bool final)
{
    sched_job_t *j = sched_job_new (s, id, NULL);
    for (size_t i = 0; i < ntasks; i++) {
        char p[64];
        snprintf (p, sizeof p, "/slides/job%llu/s%zu.svs", (unsigned long long) id, i);
        sched_task_t *t = sched_job_add (s, j, p, resource);
        if (!t)
            return NULL;
    }
    j->final = final;
    return j;
}

/* The calls as a worker makes them: from the task's current worker, for
 * its current attempt. */
static __attribute__ ((unused)) bool
finish (sched_t *s, sched_job_t *j, uint64_t idx, bool ok)
{
    sched_task_t *t = sched_job_task (j, idx);
    return sched_task_finished (s, t ? t->worker : NULL, j, idx, t ? t->attempt : 1, ok)
           == SCHED_OK;
}

static __attribute__ ((unused)) void
start (sched_t *s, sched_worker_t *w, sched_job_t *j, uint64_t idx)
{
    sched_task_t *t = sched_job_task (j, idx);
    sched_task_started (s, w, j, idx, t ? t->attempt : 1);
}

static __attribute__ ((unused)) void
give_back (sched_t *s, sched_worker_t *w, sched_job_t *j, uint64_t idx)
{
    sched_task_t *t = sched_job_task (j, idx);
    sched_worker_return (s, w, j, idx, t ? t->attempt : 1);
}

static __attribute__ ((unused)) size_t
count_for (const rec_t *r, const sched_worker_t *w)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nd; i++)
        n += r->d[i].worker == w;
    return n;
}

static __attribute__ ((unused)) size_t
times_dispatched (const rec_t *r, const sched_task_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nd; i++)
        n += r->d[i].task == t;
    return n;
}

#endif
