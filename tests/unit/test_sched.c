/* Scheduler tests: the callbacks record every dispatch and every failure,
 * and each rule of broker/sched.h is checked against what was recorded
 * and against the counters in the worker and job records. */
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

static void
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

static void
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

static void
rec_clear (rec_t *r)
{
    r->nd = r->nf = 0;
}

static void
rec_free (rec_t *r)
{
    free (r->d);
    free (r->f);
    memset (r, 0, sizeof *r);
}

static sched_t *
new_sched (rec_t *r, uint32_t max_deaths)
{
    memset (r, 0, sizeof *r);
    sched_callbacks_t cb = {.dispatch = on_dispatch, .failed = on_failed, .arg = r};
    return sched_new (max_deaths, &cb);
}

static sched_job_t *
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

static size_t
count_for (const rec_t *r, const sched_worker_t *w)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nd; i++)
        n += r->d[i].worker == w;
    return n;
}

static size_t
times_dispatched (const rec_t *r, const sched_task_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nd; i++)
        n += r->d[i].task == t;
    return n;
}

/* ------------------------------------------------------------ (a) resources */

static void
test_resources (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    CHECK (s != NULL);
    sched_callbacks_t no_cb = {0};
    CHECK (sched_new (3, &no_cb) == NULL, "callbacks are required");
    CHECK (sched_new (3, NULL) == NULL);

    sched_job_t *j = new_job (s, 1, 10, QC_RES_CPU, true);
    CHECK (j && j->total == 10 && sched_queue_depth (s) == 10);
    sched_worker_t *w = sched_worker_add (s, 2, 1, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 3, "2 slots + 1 prefetch = 3 tasks, got %zu", r.nd);
    CHECK (w->cpu_inflight == 3 && w->assigned.count == 3);
    CHECK (sched_queue_depth (s) == 7);
    CHECK (j->dispatched == 3);
    for (size_t i = 0; i < r.nd; i++)
        CHECK (r.d[i].gpu == -1 && r.d[i].task->state == TASK_DISPATCHED
               && r.d[i].task->attempt == 1 && r.d[i].task->worker == w);
    /* FIFO within the job */
    CHECK (r.nd == 3 && r.d[0].idx == 0 && r.d[1].idx == 1 && r.d[2].idx == 2);
    sched_dispatch (s);
    CHECK (r.nd == 3, "a full worker gets nothing more");
    /* one result frees one credit */
    CHECK (sched_task_finished (s, j, 1, true));
    CHECK (w->cpu_inflight == 2);
    sched_dispatch (s);
    CHECK (r.nd == 4 && r.d[3].idx == 3 && w->cpu_inflight == 3);
    sched_destroy (&s);
    CHECK (s == NULL, "destroy nulls the pointer");
    rec_free (&r);

    /* executing capacity on every worker before any prefetch */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 4, QC_RES_CPU, false);
    sched_worker_t *w1 = sched_worker_add (s, 2, 1, NULL, 0, NULL);
    sched_worker_t *w2 = sched_worker_add (s, 2, 1, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 4);
    CHECK (count_for (&r, w1) == 2 && count_for (&r, w2) == 2,
           "4 tasks over 2 workers of 2 slots: %zu + %zu", count_for (&r, w1),
           count_for (&r, w2));
    CHECK (w1->cpu_inflight == 2 && w2->cpu_inflight == 2);
    CHECK (sched_queue_depth (s) == 0);
    /* two more tasks fill the prefetch of each, then nothing */
    CHECK (sched_first_job (s) == j);
    for (int i = 0; i < 3; i++)
        CHECK (sched_job_add (s, j, "/x.svs", QC_RES_CPU) != NULL);
    j->final = true;
    sched_dispatch (s);
    CHECK (count_for (&r, w1) == 3 && count_for (&r, w2) == 3, "prefetch 1 each");
    CHECK (sched_queue_depth (s) == 1 && r.nd == 6);
    /* a job marked final takes no more tasks */
    CHECK (sched_job_add (s, j, "/late.svs", QC_RES_CPU) == NULL);
    CHECK (sched_job_add (s, j, NULL, QC_RES_CPU) == NULL);
    sched_destroy (&s);
    rec_free (&r);

    /* 3 workers, 5 tasks: every worker starts one before anyone gets a second */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 5, QC_RES_CPU, true);
    sched_worker_t *ws[3];
    for (int i = 0; i < 3; i++)
        ws[i] = sched_worker_add (s, 4, 4, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 5);
    CHECK (r.nd == 5 && r.d[0].worker == ws[0] && r.d[1].worker == ws[1]
           && r.d[2].worker == ws[2], "round robin over workers");
    CHECK (count_for (&r, ws[0]) == 2 && count_for (&r, ws[1]) == 2
           && count_for (&r, ws[2]) == 1);
    /* a bad resource kind is refused */
    sched_job_t *j2 = sched_job_new (s, 2, NULL);
    CHECK (sched_job_add (s, j2, "/x", 3) == NULL);
    CHECK (sched_job_task (j2, 0) == NULL && sched_job_task (j, 5) == NULL);
    CHECK (sched_job_task (j, 4) && sched_job_task (j, 4)->idx == 4);
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (b) GPUs */

static void
test_gpu (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *jg = new_job (s, 1, 5, QC_RES_GPU, true);
    sched_worker_t *cpu = sched_worker_add (s, 2, 1, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 0, "GPU tasks never go to a CPU-only worker: %zu", r.nd);
    CHECK (sched_queue_depth (s) == 5 && cpu->cpu_inflight == 0);
    /* CPU work added after them still flows to the CPU worker */
    sched_job_t *jc = new_job (s, 2, 2, QC_RES_CPU, true);
    sched_dispatch (s);
    CHECK (r.nd == 2 && r.d[0].job == 2 && r.d[1].job == 2,
           "CPU tasks pass the waiting GPU tasks");
    CHECK (sched_queue_depth (s) == 5);
    rec_clear (&r);

    /* a worker with GPUs 3 and 7 joins: the GPU tasks go to it, on one of
     * its advertised devices, without using its one CPU slot */
    uint32_t devs[2] = {3, 7};
    sched_worker_t *g = sched_worker_add (s, 1, 0, devs, 2, NULL);
    CHECK (g && g->ngpus == 2 && g->gpu_index[0] == 3 && g->gpu_index[1] == 7);
    sched_dispatch (s);
    CHECK (r.nd == 4, "2 GPUs + 2 GPU prefetch = 4 GPU tasks, got %zu", r.nd);
    size_t on_dev[2] = {0, 0};
    for (size_t i = 0; i < r.nd; i++) {
        CHECK (r.d[i].worker == g && r.d[i].job == 1);
        CHECK (r.d[i].gpu >= 0 && r.d[i].gpu < 2, "gpu slot %d", r.d[i].gpu);
        CHECK (r.d[i].device == 3 || r.d[i].device == 7, "device %u", r.d[i].device);
        if (r.d[i].gpu >= 0 && r.d[i].gpu < 2)
            on_dev[r.d[i].gpu]++;
    }
    CHECK (on_dev[0] == 2 && on_dev[1] == 2, "both GPUs loaded evenly");
    /* the first two (executing) go to different GPUs */
    CHECK (r.nd >= 2 && r.d[0].gpu != r.d[1].gpu, "one per GPU before prefetch");
    CHECK (g->gpu_inflight == 4 && g->gpu_load[0] == 2 && g->gpu_load[1] == 2);
    CHECK (g->cpu_inflight == 0, "GPU tasks hold no CPU slot");
    CHECK (sched_queue_depth (s) == 1);
    /* finishing one GPU task returns GPU credit on that device only */
    if (r.nd == 4 && r.d[0].gpu >= 0) {
        sched_task_t *t0 = r.d[0].task;
        int slot = t0->gpu;
        CHECK (sched_task_finished (s, jg, t0->idx, true));
        CHECK (g->gpu_inflight == 3 && g->gpu_load[slot] == 1);
        sched_dispatch (s);
        CHECK (r.nd == 5 && r.d[4].gpu == slot, "the freed GPU gets the next task");
        CHECK (sched_queue_depth (s) == 0);
    }
    (void) jc;
    sched_destroy (&s);
    rec_free (&r);

    /* one slot + one GPU holds a CPU task and a GPU task at once */
    s = new_sched (&r, 3);
    new_job (s, 1, 3, QC_RES_CPU, true);
    new_job (s, 2, 3, QC_RES_GPU, true);
    uint32_t dev0 = 0;
    sched_worker_t *w = sched_worker_add (s, 1, 0, &dev0, 1, NULL);
    sched_dispatch (s);
    CHECK (w->cpu_inflight == 1, "one CPU task, got %u", w->cpu_inflight);
    CHECK (w->gpu_inflight == 2, "one GPU task + one GPU prefetch, got %u", w->gpu_inflight);
    size_t cpu_tasks = 0, gpu_tasks = 0;
    for (size_t i = 0; i < r.nd; i++) {
        if (r.d[i].job == 1) { cpu_tasks++; CHECK (r.d[i].gpu == -1); }
        if (r.d[i].job == 2) { gpu_tasks++; CHECK (r.d[i].gpu == 0 && r.d[i].device == 0); }
    }
    CHECK (cpu_tasks == 1 && gpu_tasks == 2);
    sched_destroy (&s);
    rec_free (&r);

    /* QC_RES_ANY prefers a free GPU */
    s = new_sched (&r, 3);
    sched_job_t *ja = new_job (s, 1, 1, QC_RES_ANY, false);
    uint32_t dev5 = 5;
    w = sched_worker_add (s, 4, 0, &dev5, 1, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].gpu == 0 && r.d[0].device == 5,
           "an ANY task takes the free GPU");
    CHECK (w->gpu_inflight == 1 && w->cpu_inflight == 0);
    /* with the GPU busy, further ANY tasks use CPU slots (before the GPU's
     * prefetch) */
    for (int i = 0; i < 2; i++)
        CHECK (sched_job_add (s, ja, "/any.svs", QC_RES_ANY) != NULL);
    sched_dispatch (s);
    CHECK (r.nd == 3 && r.d[1].gpu == -1 && r.d[2].gpu == -1,
           "busy GPU: ANY goes to CPU slots");
    CHECK (w->cpu_inflight == 2 && w->gpu_inflight == 1);
    sched_destroy (&s);
    rec_free (&r);

    /* ... even when a CPU-only worker is listed first */
    s = new_sched (&r, 3);
    new_job (s, 1, 1, QC_RES_ANY, true);
    sched_worker_t *c = sched_worker_add (s, 8, 2, NULL, 0, NULL);
    uint32_t dev1 = 1;
    g = sched_worker_add (s, 0, 0, &dev1, 1, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].worker == g && r.d[0].gpu == 0,
           "an ANY task goes to a free GPU on another worker, not a CPU slot");
    CHECK (c->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* GPU tasks of a GPU worker that leaves wait again (not to CPU) */
    s = new_sched (&r, 3);
    jg = new_job (s, 1, 2, QC_RES_GPU, true);
    c = sched_worker_add (s, 8, 2, NULL, 0, NULL);
    g = sched_worker_add (s, 1, 0, &dev1, 1, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 2 && count_for (&r, g) == 2);
    sched_worker_remove (s, g, false, "gpu-worker");
    CHECK (sched_queue_depth (s) == 2 && jg->dispatched == 0);
    for (uint64_t i = 0; i < 2; i++)
        CHECK (sched_job_task (jg, i)->state == TASK_QUEUED
               && sched_job_task (jg, i)->gpu == -1 && sched_job_task (jg, i)->worker == NULL);
    sched_dispatch (s);
    CHECK (r.nd == 2 && c->cpu_inflight == 0, "no GPU, so they wait");
    /* too many GPUs, or none given */
    uint32_t many[QC_PROTO_MAX_GPUS + 1] = {0};
    CHECK (sched_worker_add (s, 1, 0, many, QC_PROTO_MAX_GPUS + 1, NULL) == NULL);
    CHECK (sched_worker_add (s, 1, 0, NULL, 1, NULL) == NULL);
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (c) requeue */

static void
test_requeue (void)
{
    for (int died = 0; died <= 1; died++) {
        rec_t r;
        sched_t *s = new_sched (&r, 3);
        sched_job_t *j = new_job (s, 1, 4, QC_RES_CPU, true);
        sched_worker_t *w1 = sched_worker_add (s, 1, 1, NULL, 0, NULL);
        sched_dispatch (s);
        CHECK (r.nd == 2 && count_for (&r, w1) == 2);
        CHECK (j->dispatched == 2 && sched_queue_depth (s) == 2);
        sched_worker_remove (s, w1, died, "w1");
        CHECK (r.nf == 0, "died=%d: unstarted tasks are not failed", died);
        CHECK (sched_queue_depth (s) == 4 && j->dispatched == 0 && j->running == 0);
        for (uint64_t i = 0; i < 2; i++) {
            sched_task_t *t = sched_job_task (j, i);
            CHECK (t->state == TASK_QUEUED && t->blame == 0 && t->worker == NULL,
                   "died=%d: task %llu requeued without blame", died,
                   (unsigned long long) i);
        }
        CHECK (sched_first_worker (s) == NULL);
        sched_dispatch (s);
        CHECK (r.nd == 2, "no worker, no dispatch");
        sched_worker_t *w2 = sched_worker_add (s, 1, 1, NULL, 0, NULL);
        sched_dispatch (s);
        /* (w2 may reuse w1's freed address: look at the new dispatches) */
        CHECK (r.nd == 4 && r.d[2].worker == w2 && r.d[3].worker == w2);
        /* the requeued tasks go first, on their second attempt */
        bool got0 = false, got1 = false;
        for (size_t i = 2; i < r.nd; i++) {
            got0 |= r.d[i].idx == 0;
            got1 |= r.d[i].idx == 1;
            CHECK (r.d[i].task->attempt == 2, "attempt %u", r.d[i].task->attempt);
        }
        CHECK (got0 && got1, "died=%d: requeued tasks go to the next worker first", died);
        /* a graceful leave of a worker that was running a task: no blame */
        if (r.nd < 3) {
            sched_destroy (&s);
            rec_free (&r);
            continue;
        }
        sched_task_started (s, w2, j, r.d[2].idx);
        CHECK (r.d[2].task->state == TASK_RUNNING && j->running == 1);
        if (!died) {
            sched_worker_remove (s, w2, false, "w2");
            CHECK (r.d[2].task->state == TASK_QUEUED && r.d[2].task->blame == 0,
                   "a worker leaving is not blamed for a running task");
            CHECK (j->running == 0 && sched_queue_depth (s) == 4);
        }
        sched_destroy (&s);
        rec_free (&r);
    }
}

/* ------------------------------------------------------------ (d) blame */

static void
test_blame (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 9, 3, QC_RES_CPU, true);
    sched_task_t *bad = sched_job_task (j, 0);
    const char *names[3] = {"node-a", "node-b", "node-c"};
    for (int death = 1; death <= 3; death++) {
        /* 1 slot + 2 prefetch: it takes all three tasks */
        sched_worker_t *w = sched_worker_add (s, 1, 2, NULL, 0, NULL);
        size_t before = r.nd;
        sched_dispatch (s);
        CHECK (r.nd - before == 3, "death %d: 3 dispatched", death);
        CHECK (bad->worker == w && bad->state == TASK_DISPATCHED);
        /* STARTED from another worker does not count */
        sched_task_started (s, NULL, j, 0);
        CHECK (bad->state == TASK_DISPATCHED);
        sched_task_started (s, w, j, 0);
        CHECK (bad->state == TASK_RUNNING && j->running == 1 && j->dispatched == 2);
        sched_task_started (s, w, j, 0);     /* twice: no double count */
        CHECK (j->running == 1 && j->dispatched == 2);
        sched_worker_remove (s, w, true, names[death - 1]);
        CHECK (bad->blame == (uint32_t) death, "blame %u after %d deaths", bad->blame, death);
        CHECK (j->running == 0 && j->dispatched == 0);
        for (uint64_t i = 1; i < 3; i++)
            CHECK (sched_job_task (j, i)->blame == 0
                   && sched_job_task (j, i)->state == TASK_QUEUED,
                   "prefetched task %llu not blamed", (unsigned long long) i);
        if (death < 3) {
            CHECK (r.nf == 0 && bad->state == TASK_QUEUED && j->failed == 0);
            CHECK (sched_queue_depth (s) == 3);
        }
    }
    CHECK (r.nf == 1, "failed once after 3 deaths, got %zu", r.nf);
    if (r.nf >= 1) {
        CHECK (r.f[0].task == bad && r.f[0].job == 9 && r.f[0].idx == 0);
        CHECK (strstr (r.f[0].reason, "3 workers") != NULL, "reason: %s", r.f[0].reason);
        CHECK (strstr (r.f[0].reason, "died") != NULL, "reason: %s", r.f[0].reason);
        CHECK (strstr (r.f[0].reason, "node-c") != NULL, "names the worker: %s",
               r.f[0].reason);
    }
    CHECK (bad->state == TASK_FAILED && bad->worker == NULL && j->failed == 1);
    CHECK (bad->attempt == 3);
    CHECK (sched_queue_depth (s) == 2);
    /* never dispatched again */
    size_t before = r.nd;
    sched_worker_t *w = sched_worker_add (s, 8, 8, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd - before == 2);
    CHECK (times_dispatched (&r, bad) == 3, "dispatched exactly 3 times");
    for (size_t i = before; i < r.nd; i++)
        CHECK (r.d[i].task != bad);
    /* its late result is dropped; the others finish; the job is finished */
    CHECK (!sched_task_finished (s, j, 0, true));
    CHECK (j->done == 0 && j->failed == 1);
    CHECK (sched_task_finished (s, j, 1, true) && sched_task_finished (s, j, 2, true));
    CHECK (sched_job_finished (j) && j->done == 2 && j->failed == 1);
    CHECK (w->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* max_deaths 1: the first death while running fails it */
    s = new_sched (&r, 1);
    j = new_job (s, 1, 1, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_started (s, w, j, 0);
    sched_worker_remove (s, w, true, "only");
    CHECK (r.nf == 1 && sched_job_task (j, 0)->state == TASK_FAILED
           && sched_job_finished (j));
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (e) dedup */

static void
test_dedup (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 1, 3, QC_RES_CPU, true);
    sched_worker_t *w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (w->cpu_inflight == 1);
    /* same result twice */
    CHECK (sched_task_finished (s, j, 0, true) == true);
    CHECK (w->cpu_inflight == 0 && j->done == 1 && j->dispatched == 0);
    CHECK (sched_task_finished (s, j, 0, true) == false);
    CHECK (sched_task_finished (s, j, 0, false) == false);
    CHECK (w->cpu_inflight == 0, "no underflow: %u", w->cpu_inflight);
    CHECK (j->done == 1 && j->failed == 0);
    CHECK (sched_task_finished (s, j, 99, true) == false, "unknown index");
    CHECK (sched_task_finished (s, NULL, 0, true) == false);
    /* a failed result counts as failed */
    sched_dispatch (s);
    sched_task_started (s, w, j, 1);
    CHECK (sched_task_finished (s, j, 1, false) == true);
    CHECK (sched_job_task (j, 1)->state == TASK_FAILED && j->failed == 1
           && j->running == 0 && w->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* a slow worker declared dead and its replacement both finish */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 1, QC_RES_CPU, true);
    sched_worker_t *slow = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_started (s, slow, j, 0);
    sched_worker_remove (s, slow, true, "slow");
    sched_worker_t *fresh = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_t *t = sched_job_task (j, 0);
    CHECK (r.nd == 2 && t->worker == fresh && fresh->cpu_inflight == 1 && t->attempt == 2);
    sched_task_started (s, fresh, j, 0);
    CHECK (sched_task_finished (s, j, 0, true) == true, "the slow worker's result");
    CHECK (fresh->cpu_inflight == 0, "the assigned worker's credit came back");
    CHECK (fresh->assigned.count == 0 && t->worker == NULL);
    CHECK (sched_task_finished (s, j, 0, true) == false, "the replacement's result");
    CHECK (fresh->cpu_inflight == 0, "credit not returned twice: %u", fresh->cpu_inflight);
    CHECK (j->done == 1 && j->running == 0 && j->dispatched == 0);
    CHECK (sched_job_finished (j));
    /* its STARTED or hand-back after the fact changes nothing */
    sched_task_started (s, fresh, j, 0);
    sched_worker_return (s, fresh, j, 0);
    CHECK (t->state == TASK_DONE && j->done == 1 && sched_queue_depth (s) == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* the same with GPU credit */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 1, QC_RES_GPU, true);
    uint32_t dev = 2;
    sched_worker_t *g = sched_worker_add (s, 0, 0, &dev, 1, NULL);
    sched_dispatch (s);
    CHECK (g->gpu_inflight == 1 && g->gpu_load[0] == 1);
    CHECK (sched_task_finished (s, j, 0, true));
    CHECK (!sched_task_finished (s, j, 0, true));
    CHECK (g->gpu_inflight == 0 && g->gpu_load[0] == 0 && g->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* a late result for a task requeued after its worker was declared dead */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 2, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_started (s, w, j, 0);
    sched_worker_remove (s, w, true, "w");
    t = sched_job_task (j, 0);
    CHECK (t->state == TASK_QUEUED && sched_queue_depth (s) == 2);
    CHECK (sched_task_finished (s, j, 0, true) == true, "late result accepted");
    CHECK (t->state == TASK_DONE && sched_queue_depth (s) == 1 && j->done == 1);
    CHECK (j->queue[QC_RES_CPU].count == 1 && j->queue[QC_RES_CPU].head
           == sched_job_task (j, 1), "removed from the queue");
    CHECK (sched_task_finished (s, j, 0, true) == false, "only once");
    sched_worker_t *w2 = sched_worker_add (s, 4, 4, NULL, 0, NULL);
    size_t before = r.nd;
    sched_dispatch (s);
    CHECK (r.nd - before == 1 && r.d[before].idx == 1, "the done task is not dispatched");
    CHECK (w2->cpu_inflight == 1);
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (f) fairness */

static void
test_fairness (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *a = new_job (s, 100, 100, QC_RES_CPU, true);
    sched_job_t *b = new_job (s, 200, 100, QC_RES_CPU, true);
    sched_worker_t *w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    for (int i = 0; i < 200 && r.nd > 0; i++) {
        dispatch_t last = r.d[r.nd - 1];
        CHECK (w->cpu_inflight == 1);
        CHECK (sched_task_finished (s, last.task->job, last.idx, true));
        sched_dispatch (s);
    }
    CHECK (r.nd == 200, "all 200 dispatched, got %zu", r.nd);
    bool alternate = true;
    for (size_t i = 0; i < 20 && i < r.nd; i++)
        if (r.d[i].job != (i % 2 ? 200u : 100u)) {
            alternate = false;
            CHECK (0, "dispatch %zu went to job %llu", i, (unsigned long long) r.d[i].job);
            break;
        }
    CHECK (alternate, "A,B,A,B...");
    /* and within each job, in order */
    uint64_t next_a = 0, next_b = 0;
    bool ordered = true;
    for (size_t i = 0; i < r.nd; i++) {
        uint64_t *n = r.d[i].job == 100 ? &next_a : &next_b;
        ordered &= r.d[i].idx == (*n)++;
    }
    CHECK (ordered && next_a == 100 && next_b == 100);
    CHECK (sched_job_finished (a) && sched_job_finished (b));
    CHECK (sched_queue_depth (s) == 0 && w->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* B submitted after A was already running still interleaves */
    s = new_sched (&r, 3);
    a = new_job (s, 1, 50, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (sched_task_finished (s, a, 0, true));
    sched_dispatch (s);
    b = new_job (s, 2, 50, QC_RES_CPU, true);
    for (int i = 0; i < 10 && r.nd > 0; i++) {
        dispatch_t last = r.d[r.nd - 1];
        sched_task_finished (s, last.task->job, last.idx, true);
        sched_dispatch (s);
    }
    /* A0 A1 then B A B A ... */
    CHECK (r.nd == 12 && r.d[2].job == 2 && r.d[3].job == 1 && r.d[4].job == 2
           && r.d[5].job == 1, "late job interleaves");
    sched_destroy (&s);
    rec_free (&r);

    /* three jobs; the middle one finishes and is removed just after its
     * turn: the third job is still next (not skipped) */
    s = new_sched (&r, 3);
    a = new_job (s, 1, 10, QC_RES_CPU, true);
    b = new_job (s, 2, 1, QC_RES_CPU, true);
    sched_job_t *c = new_job (s, 3, 10, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);                                   /* A0 */
    CHECK (sched_task_finished (s, a, 0, true));
    sched_dispatch (s);                                   /* B0 */
    CHECK (r.nd == 2 && r.d[1].job == 2);
    CHECK (sched_task_finished (s, b, 0, true) && sched_job_finished (b));
    sched_job_remove (s, b);
    sched_dispatch (s);
    CHECK (r.nd == 3 && r.d[2].job == 3, "C's turn after B, got job %llu",
           (unsigned long long) (r.nd == 3 ? r.d[2].job : 0));
    if (r.nd == 3) {
        sched_task_finished (s, r.d[2].task->job, r.d[2].idx, true);
        sched_dispatch (s);
    }
    CHECK (r.nd == 4 && r.d[3].job == 1, "then A");
    (void) c;
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (g) cancel */

static void
test_cancel (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 5, 6, QC_RES_CPU, true);
    sched_job_t *other = new_job (s, 6, 2, QC_RES_CPU, true);
    sched_worker_t *w = sched_worker_add (s, 2, 1, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 3);     /* j0, o0, j1 */
    sched_task_started (s, w, j, 0);
    uint64_t j_assigned = j->dispatched + j->running;
    CHECK (j_assigned == 2, "2 of job 5 on the worker: %llu", (unsigned long long) j_assigned);
    sched_job_cancel (s, j);
    CHECK (j->cancelled);
    CHECK (r.nf == 4, "the 4 queued tasks fail, got %zu", r.nf);
    for (size_t i = 0; i < r.nf; i++) {
        CHECK (r.f[i].job == 5 && strstr (r.f[i].reason, "cancel") != NULL,
               "reason: %s", r.f[i].reason);
        CHECK (r.f[i].task->state == TASK_FAILED);
    }
    CHECK (j->failed == 4 && sched_queue_depth (s) == 1, "only job 6's task is queued");
    CHECK (!sched_job_finished (j), "running tasks still to finish");
    CHECK (sched_job_add (s, j, "/x", QC_RES_CPU) == NULL, "a cancelled job takes no tasks");
    sched_job_cancel (s, j);      /* twice: nothing more */
    CHECK (r.nf == 4);
    /* the running and the dispatched one still finish and are reported */
    CHECK (sched_task_finished (s, j, 0, true));
    CHECK (!sched_job_finished (j));
    sched_task_t *t1 = sched_job_task (j, 1);
    CHECK (t1->state == TASK_DISPATCHED);
    CHECK (sched_task_finished (s, j, 1, true));
    CHECK (sched_job_finished (j) && j->done == 2 && j->failed == 4);
    /* after cancel nothing of job 5 is dispatched */
    size_t before = r.nd;
    sched_dispatch (s);
    for (size_t i = before; i < r.nd; i++)
        CHECK (r.d[i].job == 6);
    CHECK (w->cpu_inflight == 2);  /* other's two */
    (void) other;
    sched_destroy (&s);
    rec_free (&r);

    /* cancel, then the worker dies: its tasks of the cancelled job fail
     * rather than going back to the queue */
    s = new_sched (&r, 3);
    j = new_job (s, 5, 3, QC_RES_CPU, false);   /* not final: cancel suffices */
    w = sched_worker_add (s, 1, 1, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_started (s, w, j, 0);
    sched_job_cancel (s, j);
    CHECK (r.nf == 1);
    sched_worker_remove (s, w, true, "w");
    CHECK (r.nf == 3 && sched_queue_depth (s) == 0);
    CHECK (sched_job_finished (j) && j->failed == 3);
    sched_destroy (&s);
    rec_free (&r);

    /* an empty job: finished only once final or cancelled */
    s = new_sched (&r, 3);
    j = sched_job_new (s, 1, NULL);
    CHECK (!sched_job_finished (j));
    j->final = true;
    CHECK (sched_job_finished (j));
    CHECK (!sched_job_finished (NULL));
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (h) drain */

static void
test_drain (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 1, 3, QC_RES_CPU, false);
    sched_worker_t *w = sched_worker_add (s, 2, 2, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 3 && w->cpu_inflight == 3);
    sched_task_started (s, w, j, 0);
    sched_worker_drain (s, w);
    CHECK (w->draining);
    sched_job_add (s, j, "/more.svs", QC_RES_CPU);
    sched_dispatch (s);
    CHECK (r.nd == 3, "a draining worker gets no new task");
    /* it hands back task 2 (not started) */
    sched_worker_return (s, w, j, 2);
    sched_task_t *t2 = sched_job_task (j, 2);
    CHECK (t2->state == TASK_QUEUED && t2->worker == NULL && t2->blame == 0);
    CHECK (w->cpu_inflight == 2 && sched_queue_depth (s) == 2 && j->dispatched == 1);
    sched_dispatch (s);
    CHECK (r.nd == 3, "still not to the draining worker");
    /* a started task cannot be handed back; another worker cannot hand
     * back what is not its own */
    sched_worker_return (s, w, j, 0);
    CHECK (sched_job_task (j, 0)->state == TASK_RUNNING && w->cpu_inflight == 2);
    sched_worker_t *w2 = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_worker_return (s, w2, j, 1);
    CHECK (sched_job_task (j, 1)->state == TASK_DISPATCHED
           && sched_job_task (j, 1)->worker == w);
    sched_worker_return (s, w, j, 12345);    /* no such task */
    /* the returned task goes first to the next worker */
    sched_dispatch (s);
    CHECK (r.nd == 4 && r.d[3].worker == w2 && r.d[3].idx == 2,
           "the handed-back task goes to the new worker first");
    CHECK (t2->attempt == 2);
    /* the draining worker finishes what it holds, then leaves quietly */
    CHECK (sched_task_finished (s, j, 0, true) && sched_task_finished (s, j, 1, true));
    CHECK (w->cpu_inflight == 0 && w->assigned.count == 0);
    sched_worker_remove (s, w, false, "w");
    CHECK (r.nf == 0 && sched_first_worker (s) == w2);
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (i) teardown */

static void
test_teardown (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    /* a job over several task blocks */
    sched_job_t *j = new_job (s, 1, 3 * SCHED_BLOCK + 7, QC_RES_CPU, true);
    CHECK (j && j->nblocks == 4 && j->total == 3 * SCHED_BLOCK + 7);
    sched_task_t *first = sched_job_task (j, 0);
    sched_job_add (s, sched_job_new (s, 99, NULL), "/x", QC_RES_CPU);
    CHECK (sched_job_task (j, 0) == first, "task addresses are stable");
    CHECK (sched_job_task (j, 2 * SCHED_BLOCK + 5)->idx == 2 * SCHED_BLOCK + 5);
    sched_worker_t *w = sched_worker_add (s, 64, 0, NULL, 0, NULL);
    sched_dispatch (s);
    for (uint64_t i = 0; i < j->total; i++) {
        if (sched_job_task (j, i)->state == TASK_QUEUED)
            continue;
        sched_task_finished (s, j, i, true);
    }
    for (int round = 0; round < 200 && sched_queue_depth (s); round++) {
        sched_dispatch (s);
        for (sched_task_t *t = w->assigned.head, *n; t; t = n) {
            n = t->wnext;
            sched_task_finished (s, t->job, t->idx, true);
        }
    }
    CHECK (sched_job_finished (j) && j->done == j->total);
    sched_job_remove (s, j);
    CHECK (sched_first_job (s) && sched_first_job (s)->id == 99, "job 1 forgotten");
    CHECK (sched_queue_depth (s) == 0);

    /* removing a cancelled job whose task is still on a worker gives the
     * credit back */
    sched_job_t *c = new_job (s, 2, 4, QC_RES_CPU, true);
    uint32_t dev = 0;
    sched_worker_t *g = sched_worker_add (s, 1, 0, &dev, 1, NULL);
    sched_job_t *cg = new_job (s, 3, 1, QC_RES_GPU, true);
    sched_dispatch (s);
    CHECK (g->gpu_inflight == 1);
    sched_job_cancel (s, c);
    sched_job_cancel (s, cg);
    sched_job_remove (s, c);
    sched_job_remove (s, cg);
    CHECK (w->cpu_inflight == 0 && w->assigned.count == 0);
    CHECK (g->cpu_inflight == 0 && g->gpu_inflight == 0 && g->gpu_load[0] == 0
           && g->assigned.count == 0);
    CHECK (sched_queue_depth (s) == 0);
    sched_job_remove (s, sched_first_job (s));
    CHECK (sched_first_job (s) == NULL);
    sched_destroy (&s);
    rec_free (&r);

    /* destroy with live jobs (queued, dispatched, running) and workers:
     * ASan's leak check says whether anything is left behind */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 100, QC_RES_ANY, false);
    new_job (s, 2, 10, QC_RES_GPU, true);
    w = sched_worker_add (s, 2, 2, NULL, 0, NULL);
    g = sched_worker_add (s, 1, 1, &dev, 1, NULL);
    sched_dispatch (s);
    sched_task_started (s, w, j, r.d[0].idx);
    CHECK (r.nd > 0 && sched_queue_depth (s) > 0);
    sched_destroy (&s);
    sched_destroy (&s);     /* NULL: no-op */
    sched_destroy (NULL);
    rec_free (&r);

    /* NULL arguments are harmless */
    sched_dispatch (NULL);
    sched_job_cancel (NULL, NULL);
    sched_job_remove (NULL, NULL);
    sched_worker_remove (NULL, NULL, true, NULL);
    sched_worker_drain (NULL, NULL);
    CHECK (sched_queue_depth (NULL) == 0 && sched_first_job (NULL) == NULL
           && sched_first_worker (NULL) == NULL && sched_job_new (NULL, 1, NULL) == NULL);
}

/* ------------------------------------------------------------ (j) stress */

static uint64_t s_rng = 0x2545F4914F6CDD1Dull;

static uint32_t
rnd (void)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (uint32_t) (s_rng >> 11);
}

typedef struct {
    sched_task_t **v;
    size_t n, cap;
} tvec_t;

static void
stress_dispatch (void *arg, sched_task_t *t, sched_worker_t *w)
{
    tvec_t *v = arg;
    (void) w;
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 1024;
        v->v = realloc (v->v, v->cap * sizeof *v->v);
    }
    v->v[v->n++] = t;
}

static size_t s_stress_failed;

static void
stress_failed (void *arg, sched_task_t *t, const char *reason)
{
    (void) arg; (void) t; (void) reason;
    s_stress_failed++;
}

static void
test_stress (void)
{
    enum { NTASKS = 100000, NWORKERS = 64, NJOBS = 4 };
    tvec_t live = {0};
    sched_callbacks_t cb = {.dispatch = stress_dispatch, .failed = stress_failed, .arg = &live};
    sched_t *s = sched_new (3, &cb);
    sched_worker_t *ws[NWORKERS];
    uint32_t devs[2] = {0, 1};
    for (int i = 0; i < NWORKERS; i++) {
        /* one rnd () per statement: argument order is unspecified in C */
        uint32_t slots = 1 + rnd () % 8;
        uint32_t prefetch = rnd () % 3;
        ws[i] = sched_worker_add (s, slots, prefetch, devs,
                                  i % 4 == 0 ? 1 + (i / 4) % 2 : 0, NULL);
    }
    sched_job_t *jobs[NJOBS];
    uint8_t *finished[NJOBS];
    size_t per = NTASKS / NJOBS;
    for (int k = 0; k < NJOBS; k++) {
        jobs[k] = sched_job_new (s, (uint64_t) k + 1, NULL);
        finished[k] = calloc (per, 1);
        for (size_t i = 0; i < per; i++) {
            /* mostly CPU, some ANY, some GPU-only */
            uint32_t x = rnd () % 10;
            uint8_t res = x < 6 ? QC_RES_CPU : x < 9 ? QC_RES_ANY : QC_RES_GPU;
            if (!sched_job_add (s, jobs[k], "/s.svs", res))
                CHECK (0, "add failed");
        }
        jobs[k]->final = true;
    }
    CHECK (sched_queue_depth (s) == NTASKS);
    sched_dispatch (s);
    size_t accepted = 0, dup = 0, steps = 0, over = 0, churn = 0;
    while (live.n > 0 && steps < 10u * NTASKS) {
        steps++;
        size_t pick = rnd () % live.n;
        sched_task_t *t = live.v[pick];
        live.v[pick] = live.v[--live.n];
        if (t->state == TASK_QUEUED)
            continue;            /* stale: handed back, will be dispatched again */
        if (t->state == TASK_DISPATCHED && rnd () % 2)
            sched_task_started (s, t->worker, t->job, t->idx);
        uint64_t job_k = t->job->id - 1;
        bool ok = sched_task_finished (s, t->job, t->idx, true);
        if (ok) {
            accepted++;
            if (finished[job_k][t->idx]++)
                CHECK (0, "task %llu accepted twice", (unsigned long long) t->idx);
            /* now and then the result comes a second time */
            if (rnd () % 16 == 0 && sched_task_finished (s, t->job, t->idx, true))
                CHECK (0, "duplicate accepted");
        } else
            dup++;
        /* now and then a worker leaves (handing back its unstarted and
         * running tasks unblamed) and another joins in its place */
        if (rnd () % 4000 == 0) {
            int i = (int) (rnd () % NWORKERS);
            uint32_t slots = ws[i]->slots, pf = ws[i]->prefetch, ng = ws[i]->ngpus;
            sched_worker_remove (s, ws[i], false, "leaver");
            ws[i] = sched_worker_add (s, slots, pf, devs, ng, NULL);
            churn++;
        }
        sched_dispatch (s);
        if (steps % 97 == 0)
            for (int i = 0; i < NWORKERS; i++)
                if (ws[i]->cpu_inflight > ws[i]->slots + ws[i]->prefetch
                    || ws[i]->gpu_inflight > ws[i]->ngpus + ws[i]->gpu_prefetch)
                    over++;
    }
    printf ("stress: %zu tasks, %d workers, %zu steps, %zu accepted, %zu stale/dup, "
            "%zu worker changes\n", (size_t) NTASKS, NWORKERS, steps, accepted, dup, churn);
    CHECK (accepted == NTASKS, "accepted %zu", accepted);
    CHECK (over == 0, "credit exceeded %zu times", over);
    CHECK (s_stress_failed == 0);
    size_t once = 0;
    for (int k = 0; k < NJOBS; k++) {
        for (size_t i = 0; i < per; i++) {
            once += finished[k][i] == 1;
            if (sched_job_task (jobs[k], i)->state != TASK_DONE) {
                CHECK (0, "job %d task %zu not DONE", k, i);
                break;
            }
        }
        CHECK (jobs[k]->done == per && jobs[k]->failed == 0 && jobs[k]->running == 0
               && jobs[k]->dispatched == 0 && sched_job_finished (jobs[k]));
        free (finished[k]);
    }
    CHECK (once == NTASKS, "every task DONE exactly once: %zu", once);
    CHECK (sched_queue_depth (s) == 0);
    size_t nonzero = 0;
    for (sched_worker_t *w = sched_first_worker (s); w; w = w->next) {
        nonzero += w->cpu_inflight != 0 || w->gpu_inflight != 0 || w->assigned.count != 0;
        for (uint32_t g = 0; g < w->ngpus; g++)
            nonzero += w->gpu_load[g] != 0;
    }
    CHECK (nonzero == 0, "inflight counters back to 0 (%zu not)", nonzero);
    for (int k = 0; k < NJOBS; k++)
        sched_job_remove (s, jobs[k]);
    CHECK (sched_first_job (s) == NULL);
    sched_destroy (&s);
    free (live.v);
}

int
main (void)
{
    test_resources ();
    test_gpu ();
    test_requeue ();
    test_blame ();
    test_dedup ();
    test_fairness ();
    test_cancel ();
    test_drain ();
    test_teardown ();
    test_stress ();
    return check_done ("test_sched");
}
