/* Scheduler tests, workers that leave: their tasks are requeued (without
 * blame when they leave or had not started them), a task whose workers
 * keep dying is failed after max_deaths, and duplicate or late results are
 * counted once. Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

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
        start (s, w2, j, r.d[2].idx);
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

/* Workers that vanish (killed, lost) are no verdict on the slides they
 * ran: no blame, however often; only crash reports blame, and
 * max_deaths of them fail the slide. */
static void
test_blame (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 9, 3, QC_RES_CPU, true);
    sched_task_t *bad = sched_job_task (j, 0);
    const char *names[3] = {"node-a", "node-b", "node-c"};
    for (int death = 1; death <= 5; death++) {
        /* 1 slot + 2 prefetch: it takes all three tasks */
        sched_worker_t *w = sched_worker_add (s, 1, 2, NULL, 0, NULL);
        size_t before = r.nd;
        sched_dispatch (s);
        CHECK (r.nd - before == 3, "death %d: 3 dispatched", death);
        CHECK (bad->worker == w && bad->state == TASK_DISPATCHED);
        /* STARTED from another worker, or for another attempt, does not count */
        CHECK (sched_task_started (s, NULL, j, 0, bad->attempt) == SCHED_STALE);
        CHECK (sched_task_started (s, w, j, 0, bad->attempt - 1) == SCHED_STALE
               || bad->attempt == 1);
        CHECK (sched_task_started (s, w, j, 0, bad->attempt + 1) == SCHED_BAD_ATTEMPT);
        CHECK (bad->state == TASK_DISPATCHED);
        start (s, w, j, 0);
        CHECK (bad->state == TASK_RUNNING && j->running == 1 && j->dispatched == 2);
        start (s, w, j, 0);     /* twice: no double count */
        CHECK (j->running == 1 && j->dispatched == 2);
        sched_worker_remove (s, w, true, names[death % 3]);
        CHECK (bad->blame == 0 && bad->vanished == (uint32_t) death,
               "vanished %d times: blame %u, vanished %u", death, bad->blame, bad->vanished);
        CHECK (j->running == 0 && j->dispatched == 0);
        CHECK (r.nf == 0 && bad->state == TASK_QUEUED && j->failed == 0);
        CHECK (sched_queue_depth (s) == 3);
    }
    /* now crash reports: each counts once per attempt */
    for (int crash = 1; crash <= 3; crash++) {
        sched_worker_t *w = sched_worker_add (s, 3, 0, NULL, 0, NULL);
        sched_dispatch (s);
        CHECK (bad->worker == w);
        start (s, w, j, 0);
        uint32_t att = bad->attempt;
        CHECK (!sched_task_crashed (s, j, 0, att + 1, "x"), "attempt never dispatched");
        CHECK (sched_task_crashed (s, j, 0, att, names[crash - 1]));
        CHECK (!sched_task_crashed (s, j, 0, att, names[crash - 1]), "the same report twice");
        CHECK (bad->blame == (uint32_t) crash, "blame %u after %d crashes", bad->blame, crash);
        CHECK (bad->worker == NULL && j->running == 0, "the crashed execution is gone");
        CHECK (w->cpu_inflight == 2, "its credit came back: %u", w->cpu_inflight);
        if (crash < 3)
            CHECK (bad->state == TASK_QUEUED && r.nf == 0);
        /* the crashed process's record goes on its heartbeat timeout */
        sched_worker_remove (s, w, true, names[crash - 1]);
    }
    CHECK (r.nf == 1, "failed once after 3 crashes, got %zu", r.nf);
    if (r.nf >= 1) {
        CHECK (r.f[0].task == bad && r.f[0].job == 9 && r.f[0].idx == 0);
        CHECK (strstr (r.f[0].reason, "ran 3 times") != NULL, "reason: %s", r.f[0].reason);
        CHECK (strstr (r.f[0].reason, "crashed") != NULL, "reason: %s", r.f[0].reason);
        CHECK (strstr (r.f[0].reason, "node-c") != NULL, "names the worker: %s",
               r.f[0].reason);
    }
    CHECK (bad->state == TASK_FAILED && bad->worker == NULL && j->failed == 1);
    /* never dispatched again */
    size_t before = r.nd;
    sched_worker_t *w = sched_worker_add (s, 8, 8, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd - before == 2);
    for (size_t i = before; i < r.nd; i++)
        CHECK (r.d[i].task != bad);
    /* its late result is dropped; the others finish; the job is finished */
    CHECK (!finish (s, j, 0, true));
    CHECK (j->done == 0 && j->failed == 1);
    CHECK (finish (s, j, 1, true) && finish (s, j, 2, true));
    CHECK (sched_job_finished (j) && j->done == 2 && j->failed == 1);
    CHECK (w->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* a crash report while another attempt runs counts; the one that
     * reaches max_deaths fails the task and takes the running attempt
     * back (it keeps its credit as a ghost until it ends) */
    s = new_sched (&r, 2);
    j = new_job (s, 1, 1, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, w, j, 0);
    uint32_t first = sched_job_task (j, 0)->attempt;
    sched_worker_remove (s, w, true, "vanished");      /* timed out first */
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, w, j, 0);
    CHECK (sched_task_crashed (s, j, 0, first, "old"));
    CHECK (sched_job_task (j, 0)->state == TASK_RUNNING && sched_job_task (j, 0)->blame == 1,
           "the running attempt goes on");
    uint32_t second = sched_job_task (j, 0)->attempt;
    sched_worker_remove (s, w, true, "vanished too");
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, w, j, 0);
    CHECK (sched_task_crashed (s, j, 0, second, "late report"));
    CHECK (r.nf == 1 && sched_job_task (j, 0)->state == TASK_FAILED && sched_job_finished (j),
           "failed at max_deaths although a third attempt ran");
    CHECK (w->cpu_inflight == 1 && w->nghosts == 1, "the running attempt keeps its credit");
    CHECK (sched_task_finished (s, w, j, 0, sched_job_task (j, 0)->attempt, true)
               == SCHED_DUPLICATE && w->cpu_inflight == 0, "until its result");
    sched_destroy (&s);
    rec_free (&r);

    /* a slide that keeps vanishing with its workers is given up at last */
    s = new_sched (&r, 3);
    sched_set_max_vanished (s, 2);
    j = new_job (s, 1, 1, QC_RES_CPU, true);
    for (int i = 0; i < 2; i++) {
        w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
        sched_dispatch (s);
        start (s, w, j, 0);
        sched_worker_remove (s, w, true, "gone");
    }
    CHECK (r.nf == 1 && strstr (r.f[0].reason, "vanished") != NULL,
           "reason: %s", r.nf ? r.f[0].reason : "-");
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
    CHECK (finish (s, j, 0, true) == true);
    CHECK (w->cpu_inflight == 0 && j->done == 1 && j->dispatched == 0);
    CHECK (finish (s, j, 0, true) == false);
    CHECK (finish (s, j, 0, false) == false);
    CHECK (w->cpu_inflight == 0, "no underflow: %u", w->cpu_inflight);
    CHECK (j->done == 1 && j->failed == 0);
    CHECK (finish (s, j, 99, true) == false, "unknown index");
    CHECK (finish (s, NULL, 0, true) == false);
    /* a failed result counts as failed */
    sched_dispatch (s);
    start (s, w, j, 1);
    CHECK (finish (s, j, 1, false) == true);
    CHECK (sched_job_task (j, 1)->state == TASK_FAILED && j->failed == 1
           && j->running == 0 && w->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* a slow worker declared dead and its replacement both finish */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 1, QC_RES_CPU, true);
    sched_worker_t *slow = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, slow, j, 0);
    sched_worker_remove (s, slow, true, "slow");
    sched_worker_t *fresh = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_t *t = sched_job_task (j, 0);
    CHECK (r.nd == 2 && t->worker == fresh && fresh->cpu_inflight == 1 && t->attempt == 2);
    start (s, fresh, j, 0);
    /* the slow worker's result (attempt 1, from a sender no longer
     * registered) comes first: it is the task's result; the replacement
     * still runs attempt 2 and keeps its credit until its own result */
    CHECK (sched_task_finished (s, NULL, j, 0, 1, true) == SCHED_OK, "the slow worker's result");
    CHECK (fresh->cpu_inflight == 1 && fresh->nghosts == 1,
           "the running replacement keeps its credit: %u", fresh->cpu_inflight);
    CHECK (fresh->assigned.count == 0 && t->worker == NULL);
    CHECK (sched_task_finished (s, fresh, j, 0, 2, true) == SCHED_DUPLICATE,
           "the replacement's result");
    CHECK (fresh->cpu_inflight == 0 && fresh->nghosts == 0,
           "its result frees the credit: %u", fresh->cpu_inflight);
    CHECK (sched_task_finished (s, fresh, j, 0, 2, true) == SCHED_DUPLICATE);
    CHECK (fresh->cpu_inflight == 0, "credit not returned twice: %u", fresh->cpu_inflight);
    CHECK (j->done == 1 && j->running == 0 && j->dispatched == 0);
    CHECK (sched_job_finished (j));
    /* its STARTED or hand-back after the fact changes nothing */
    start (s, fresh, j, 0);
    give_back (s, fresh, j, 0);
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
    CHECK (finish (s, j, 0, true));
    CHECK (!finish (s, j, 0, true));
    CHECK (g->gpu_inflight == 0 && g->gpu_load[0] == 0 && g->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);

    /* a late result for a task requeued after its worker was declared dead */
    s = new_sched (&r, 3);
    j = new_job (s, 1, 2, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, w, j, 0);
    sched_worker_remove (s, w, true, "w");
    t = sched_job_task (j, 0);
    CHECK (t->state == TASK_QUEUED && sched_queue_depth (s) == 2);
    CHECK (finish (s, j, 0, true) == true, "late result accepted");
    CHECK (t->state == TASK_DONE && sched_queue_depth (s) == 1 && j->done == 1);
    CHECK (j->queue[QC_RES_CPU].count == 1 && j->queue[QC_RES_CPU].head
           == sched_job_task (j, 1), "removed from the queue");
    CHECK (finish (s, j, 0, true) == false, "only once");
    sched_worker_t *w2 = sched_worker_add (s, 4, 4, NULL, 0, NULL);
    size_t before = r.nd;
    sched_dispatch (s);
    CHECK (r.nd - before == 1 && r.d[before].idx == 1, "the done task is not dispatched");
    CHECK (w2->cpu_inflight == 1);
    sched_destroy (&s);
    rec_free (&r);
}

/* ------------------------------------------------------------ (f) lives */

/* A broker on a state folder numbers this life's attempts after a base
 * (65537 on in its first life): a crash report or RESULT naming an
 * attempt under the base is of a life before a new job existed, so no
 * dispatch gave it; a restored job's (made while the journal is read,
 * base 0) may have run in earlier lives and keeps them. */
static void
test_lives (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *old = new_job (s, 1, 1, QC_RES_CPU, false);  /* as restored */
    sched_set_attempt_base (s, 65536);
    sched_job_task (old, 0)->attempt = 65536;
    sched_job_t *j = new_job (s, 2, 2, QC_RES_GPU, true);       /* no GPU worker */
    CHECK (sched_task_crashed_as (s, j, 0, 1, "liar", 0, 1, NULL) == SCHED_BAD_ATTEMPT,
           "a crash of attempt 1 of a slide never dispatched");
    CHECK (sched_task_crashed_as (s, j, 0, 65536, "liar", 0, 1, NULL) == SCHED_BAD_ATTEMPT,
           "nor of the base");
    CHECK (sched_task_finished (s, NULL, j, 1, 2, true) == SCHED_BAD_ATTEMPT,
           "a RESULT of attempt 2 of a slide never dispatched");
    CHECK (sched_job_task (j, 0)->blame == 0 && j->done == 0 && j->failed == 0,
           "nothing counted");
    CHECK (sched_task_crashed_as (s, old, 0, 7, "earlier life", 0, 1, NULL) == SCHED_OK,
           "a restored job's attempt of an earlier life is still reported");
    CHECK (sched_job_task (old, 0)->blame == 1);
    /* the restored job's next batch, in this life: no earlier attempts */
    sched_task_t *late = sched_job_add (s, old, "/late.svs", QC_RES_GPU);
    CHECK (late != NULL && late->attempt == 65536);
    CHECK (sched_task_crashed_as (s, old, 1, 1, "liar", 0, 1, NULL) == SCHED_BAD_ATTEMPT
           && sched_task_finished (s, NULL, old, 1, 1, true) == SCHED_BAD_ATTEMPT,
           "a slide added to a restored job in this life had no earlier attempts");
    CHECK (late && late->blame == 0 && old->done == 0);
    uint32_t dev = 0;
    sched_worker_t *g = sched_worker_add (s, 0, 0, &dev, 1, NULL);
    sched_dispatch (s);
    sched_task_t *t = sched_job_task (j, 0);
    CHECK (t->attempt == 65537 && t->worker == g, "this life's first attempt: %u", t->attempt);
    CHECK (sched_task_finished (s, g, j, 0, 65537, true) == SCHED_OK && j->done == 1,
           "its result counts");
    sched_destroy (&s);
    rec_free (&r);
}

int
main (void)
{
    test_requeue ();
    test_blame ();
    test_dedup ();
    test_lives ();
    return check_done ("test_sched_requeue");
}
