/* Scheduler tests, a worker's machine in trouble: a RESULT that failed
 * for the machine, not the slide (sched_task_troubled) sends the slide
 * back to the front of the queue, at most SCHED_TROUBLE_RETRIES times,
 * and pauses its worker (10 s, doubling while it keeps failing so; a
 * passing result ends it), so the slide runs elsewhere instead of every
 * slide failing fast on one bad machine. Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

static void
test_runs_elsewhere (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 1, 4, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_worker_t *b = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 3 && count_for (&r, a) == 2 && count_for (&r, b) == 1);
    for (size_t i = 0; i < r.nd; i++)
        start (s, r.d[i].worker, j, r.d[i].idx);
    sched_task_t *t = a->assigned.head;
    uint32_t att = t->attempt;
    /* only the current attempt on its worker, running */
    CHECK (sched_task_troubled (s, b, j, t->idx, att) == SCHED_STALE, "another worker's");
    CHECK (sched_task_troubled (s, a, j, t->idx, att + 1) == SCHED_BAD_ATTEMPT);
    CHECK (sched_task_troubled (s, a, j, t->idx, att) == SCHED_REQUEUED);
    CHECK (t->state == TASK_QUEUED && t->troubled == 1 && t->worker == NULL && t->blame == 0);
    CHECK (j->failed == 0 && r.nf == 0 && a->cpu_inflight == 1);
    CHECK (a->paused_until == SCHED_TROUBLE_PAUSE_MS, "paused until %lld",
           (long long) a->paused_until);
    /* the slide beside it fails so too, within the pause: the same
     * spell, the pause stands */
    sched_task_t *t2 = a->assigned.head;
    CHECK (sched_task_troubled (s, a, j, t2->idx, t2->attempt) == SCHED_REQUEUED);
    CHECK (a->paused_until == SCHED_TROUBLE_PAUSE_MS && a->trouble == 1 && a->cpu_inflight == 0);
    /* a is paused, b busy: nothing goes out */
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 0, "the paused worker took %zu", r.nd);
    /* b frees a slot: the slide that failed on a goes there first */
    CHECK (finish (s, j, b->assigned.head->idx, true));
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].task == t2 && r.d[0].worker == b, "the last sent back first");
    start (s, b, j, t2->idx);
    CHECK (finish (s, j, t2->idx, true) && t2->state == TASK_DONE);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].task == t && r.d[0].worker == b, "then the first, on b");
    start (s, b, j, t->idx);
    CHECK (finish (s, j, t->idx, true) && t->state == TASK_DONE);
    /* a's pause ends with time, or with a passing result */
    sched_set_now (s, SCHED_TROUBLE_PAUSE_MS);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (count_for (&r, a) == 1, "a takes slides again after its pause");
    sched_destroy (&s);
    rec_free (&r);
}

static void
test_bounds (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 2, 2, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_task_t *t = sched_job_task (j, 0);
    int64_t now = 0, pause = SCHED_TROUBLE_PAUSE_MS;
    /* the one worker: the slide waits out each pause, then runs there
     * again; the pause doubles; after SCHED_TROUBLE_RETRIES the failure
     * is the result */
    for (uint32_t k = 0; k <= SCHED_TROUBLE_RETRIES; k++) {
        sched_set_now (s, now);
        sched_dispatch (s);
        CHECK (t->worker == a, "try %u: dispatched", k);
        start (s, a, j, 0);
        sched_verdict_t v = sched_task_troubled (s, a, j, 0, t->attempt);
        if (k < SCHED_TROUBLE_RETRIES) {
            CHECK (v == SCHED_REQUEUED && a->paused_until == now + pause,
                   "try %u: paused until %lld, not %lld", k, (long long) a->paused_until,
                   (long long) (now + pause));
            now += pause;
            pause *= 2;
        } else {
            CHECK (v == SCHED_STALE, "past the retries: the failure stands");
            CHECK (finish (s, j, 0, false) && t->state == TASK_FAILED && j->failed == 1);
        }
    }
    /* a passing result ends the pause at once */
    sched_dispatch (s);
    sched_task_t *u = sched_job_task (j, 1);
    CHECK (u->worker == a);
    start (s, a, j, 1);
    CHECK (sched_task_troubled (s, a, j, 1, u->attempt) == SCHED_REQUEUED && a->trouble == 3);
    sched_set_now (s, a->paused_until);
    sched_dispatch (s);
    start (s, a, j, 1);
    CHECK (finish (s, j, 1, true));
    CHECK (a->trouble == 0 && a->paused_until == 0, "trouble %u", a->trouble);
    sched_destroy (&s);
    rec_free (&r);

    /* a cancelled job's failure stands */
    s = new_sched (&r, 3);
    j = new_job (s, 3, 1, QC_RES_CPU, true);
    a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, a, j, 0);
    sched_job_cancel (s, j, NULL);
    CHECK (sched_task_troubled (s, a, j, 0, sched_job_task (j, 0)->attempt) == SCHED_STALE);
    sched_destroy (&s);
    rec_free (&r);
}

int
main (void)
{
    test_runs_elsewhere ();
    test_bounds ();
    return check_done ("test_sched_trouble");
}
