/* Scheduler tests, resources and credit: CPU slots and prefetch, GPU
 * devices and QC_RES_ANY, credit given back when tasks finish or jobs are
 * removed, and teardown with live jobs and workers (ASan's leak check).
 * Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

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
    CHECK (finish (s, j, 1, true));
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
        CHECK (finish (s, jg, t0->idx, true));
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
    sched_destroy (&s);
    rec_free (&r);

    /* a GPU-only worker (no CPU slot, prefetch 1: qc-worker --gpu 0
     * --slots 0) takes GPU and ANY tasks on its GPU, never a CPU task:
     * it has no executor to run one */
    s = new_sched (&r, 3);
    new_job (s, 1, 3, QC_RES_CPU, true);
    sched_job_t *jany = new_job (s, 2, 3, QC_RES_ANY, true);
    uint32_t gdev = 0;
    sched_worker_t *gonly = sched_worker_add (s, 0, 1, &gdev, 1, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 2, "1 GPU + 1 GPU prefetch, got %zu", r.nd);
    for (size_t i = 0; i < r.nd; i++)
        CHECK (r.d[i].job == 2 && r.d[i].gpu == 0 && r.d[i].worker == gonly,
               "task %zu: job %llu gpu %d", i, (unsigned long long) r.d[i].job,
               r.d[i].gpu);
    CHECK (gonly->cpu_inflight == 0, "no CPU task on a worker without slots");
    CHECK (finish (s, jany, r.d[0].idx, true));
    sched_dispatch (s);
    CHECK (r.nd == 3 && r.d[2].job == 2 && r.d[2].gpu == 0);
    CHECK (sched_queue_depth (s) == 3, "the CPU tasks wait for a CPU slot");
    sched_destroy (&s);
    rec_free (&r);
    s = new_sched (&r, 3);

    /* too many GPUs, or none given */
    uint32_t many[QC_PROTO_MAX_GPUS + 1] = {0};
    CHECK (sched_worker_add (s, 1, 0, many, QC_PROTO_MAX_GPUS + 1, NULL) == NULL);
    CHECK (sched_worker_add (s, 1, 0, NULL, 1, NULL) == NULL);
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
    /* blocks of 16, 16, 32 ... 512 (1024 tasks), then of 1024 */
    CHECK (j && j->nblocks == SCHED_SMALL_BLOCKS + 3 && j->total == 3 * SCHED_BLOCK + 7,
           "%zu blocks", j ? j->nblocks : 0);
    sched_task_t *first = sched_job_task (j, 0);
    sched_job_t *one = sched_job_new (s, 99, NULL);
    sched_job_add (s, one, "/x", QC_RES_CPU);
    CHECK (one && one->nblocks == 1, "a job of one task holds one small block");
    CHECK (sched_job_task (j, 0) == first, "task addresses are stable");
    int all_at_home = 1;
    for (uint64_t i = 0; j && i < j->total; i++)
        all_at_home &= sched_job_task (j, i)->idx == i
                       && (i == 0 || sched_job_task (j, i) != sched_job_task (j, i - 1));
    CHECK (all_at_home, "every task found by its index");
    CHECK (sched_job_task (j, j ? j->total : 0) == NULL);
    sched_worker_t *w = sched_worker_add (s, 64, 0, NULL, 0, NULL);
    sched_dispatch (s);
    for (uint64_t i = 0; i < j->total; i++) {
        if (sched_job_task (j, i)->state == TASK_QUEUED)
            continue;
        finish (s, j, i, true);
    }
    for (int round = 0; round < 200 && sched_queue_depth (s); round++) {
        sched_dispatch (s);
        for (sched_task_t *t = w->assigned.head, *n; t; t = n) {
            n = t->wnext;
            finish (s, t->job, t->idx, true);
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
    sched_job_cancel (s, c, NULL);
    sched_job_cancel (s, cg, NULL);
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
    start (s, w, j, r.d[0].idx);
    CHECK (r.nd > 0 && sched_queue_depth (s) > 0);
    sched_destroy (&s);
    sched_destroy (&s);     /* NULL: no-op */
    sched_destroy (NULL);
    rec_free (&r);

    /* NULL arguments are harmless */
    sched_dispatch (NULL);
    sched_job_cancel (NULL, NULL, NULL);
    sched_job_remove (NULL, NULL);
    sched_worker_remove (NULL, NULL, true, NULL);
    sched_worker_drain (NULL, NULL);
    CHECK (sched_queue_depth (NULL) == 0 && sched_first_job (NULL) == NULL
           && sched_first_worker (NULL) == NULL && sched_job_new (NULL, 1, NULL) == NULL);
}

int
main (void)
{
    test_resources ();
    test_gpu ();
    test_teardown ();
    return check_done ("test_sched_resources");
}
