/* Scheduler tests, identities (broker/sched.h, "Identities"): with them
 * on, a RESULT or a crash report counts only from the identity (the
 * certificate) the attempt was dispatched to, on whatever socket it comes
 * (a reconnected worker keeps its certificate), also after the attempt
 * left its worker; a crash report past the attempt's deadline is late.
 * With them off, anyone may report any attempt the task had, as before.
 * Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

static sched_worker_t *
worker_as (sched_t *s, uint32_t who)
{
    sched_worker_t *w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    if (w)
        w->who = who;
    return w;
}

/* A RESULT for the current attempt: only from the identity it went to. */
static void
test_current_attempt (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_set_identities (s, true);
    sched_job_t *j = new_job (s, 1, 2, QC_RES_CPU, true);
    sched_worker_t *a = worker_as (s, 11), *b = worker_as (s, 22);
    sched_dispatch (s);
    CHECK (r.nd == 2 && r.d[0].worker == a && r.d[1].worker == b);
    sched_task_t *t0 = sched_job_task (j, 0);
    CHECK (t0->who == 11, "the attempt remembers whom it went to: %u", t0->who);
    start (s, a, j, 0);
    /* b (registered, another certificate) forges a's task */
    CHECK (sched_task_finished (s, b, j, 0, t0->attempt, true) == SCHED_NOT_YOURS);
    /* an unregistered sender with b's certificate, or with none */
    CHECK (sched_task_finished_as (s, NULL, 22, j, 0, t0->attempt, true) == SCHED_NOT_YOURS);
    CHECK (sched_task_finished_as (s, NULL, 0, j, 0, t0->attempt, true) == SCHED_NOT_YOURS);
    CHECK (t0->state == TASK_RUNNING && t0->worker == a && j->done == 0 && j->failed == 0,
           "a refused result changes nothing");
    CHECK (b->cpu_inflight == 1 && a->cpu_inflight == 1, "credit unchanged");
    /* a's certificate on a new socket (it reconnected): taken */
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, t0->attempt, true) == SCHED_OK);
    CHECK (t0->state == TASK_DONE && j->done == 1 && a->cpu_inflight == 0);
    /* b's own task from b */
    CHECK (finish (s, j, 1, false));
    CHECK (j->failed == 1 && sched_job_finished (j));
    sched_destroy (&s);
    rec_free (&r);
}

/* An attempt that left its worker (it vanished) keeps its identity: its
 * late result counts from that certificate, not from the next worker's
 * or anyone else's. */
static void
test_past_attempt (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_set_identities (s, true);
    sched_job_t *j = new_job (s, 1, 1, QC_RES_CPU, true);
    sched_worker_t *a = worker_as (s, 11);
    sched_dispatch (s);
    sched_task_t *t = sched_job_task (j, 0);
    uint32_t first = t->attempt;
    start (s, a, j, 0);
    sched_worker_remove (s, a, true, "a");
    CHECK (t->state == TASK_QUEUED && t->past && t->past->n == 1
           && t->past->a[0].who == 11 && t->past->a[0].attempt == first);
    sched_worker_t *b = worker_as (s, 22);
    sched_dispatch (s);
    CHECK (t->worker == b && t->attempt == first + 1);
    /* b claims a's old attempt; a stranger claims either */
    CHECK (sched_task_finished (s, b, j, 0, first, true) == SCHED_NOT_YOURS);
    CHECK (sched_task_finished_as (s, NULL, 33, j, 0, first + 1, true) == SCHED_NOT_YOURS);
    CHECK (t->state == TASK_DISPATCHED && t->worker == b && j->done == 0);
    /* a, back with a new socket, finishes its old attempt: first result */
    sched_worker_t *a2 = worker_as (s, 11);
    CHECK (sched_task_finished (s, a2, j, 0, first, true) == SCHED_OK);
    CHECK (t->state == TASK_DONE && t->past == NULL && j->done == 1,
           "the first result wins; what was remembered is forgotten");
    CHECK (b->cpu_inflight == 0, "b was told (not started: its credit comes back)");
    sched_destroy (&s);
    rec_free (&r);
}

/* Crash reports: from the attempt's identity only, and not past its
 * deadline (the deadline blamed it already). */
static void
test_crash_reports (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_set_identities (s, true);
    sched_set_task_timeout (s, 1000);
    sched_set_now (s, 10000);
    sched_job_t *j = new_job (s, 1, 2, QC_RES_CPU, true);
    sched_worker_t *a = worker_as (s, 11), *b = worker_as (s, 22);
    sched_dispatch (s);
    sched_task_t *t0 = sched_job_task (j, 0), *t1 = sched_job_task (j, 1);
    start (s, a, j, 0);
    start (s, b, j, 1);
    /* b reports a crash of a's slide */
    CHECK (sched_task_crashed_as (s, j, 0, t0->attempt, "b", 22, 1, NULL) == SCHED_NOT_YOURS);
    CHECK (t0->blame == 0 && t0->state == TASK_RUNNING);
    /* a's own report within the deadline: counted once */
    sched_set_now (s, 10500);
    CHECK (sched_task_crashed_as (s, j, 0, t0->attempt, "a", 11, 1, NULL) == SCHED_OK);
    CHECK (t0->blame == 1 && t0->state == TASK_QUEUED);
    CHECK (sched_task_crashed_as (s, j, 0, t0->attempt, "a", 11, 1, NULL) == SCHED_DUPLICATE);
    /* t1 runs past its deadline: taken back and blamed by the deadline;
     * b's crash report for that attempt afterwards is late */
    uint32_t att1 = t1->attempt;
    sched_set_now (s, 11200);
    sched_tick (s);
    CHECK (t1->blame == 1 && t1->state != TASK_RUNNING, "the deadline blamed it");
    CHECK (sched_task_crashed_as (s, j, 1, att1, "b", 22, 1, NULL) == SCHED_LATE);
    CHECK (t1->blame == 1, "not blamed twice for one execution");
    sched_destroy (&s);
    rec_free (&r);
}

/* Without identities: as before, any sender's result for an attempt the
 * task had is taken. */
static void
test_off (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 1, 1, QC_RES_CPU, true);
    sched_worker_t *a = worker_as (s, 0);
    sched_dispatch (s);
    sched_task_t *t = sched_job_task (j, 0);
    start (s, a, j, 0);
    CHECK (sched_task_finished_as (s, NULL, 0, j, 0, t->attempt, true) == SCHED_OK);
    CHECK (t->state == TASK_DONE && t->past == NULL && a->cpu_inflight == 0);
    sched_destroy (&s);
    rec_free (&r);
}

/* After a restart (identities on), an attempt of the life before was
 * dispatched to someone the broker no longer knows: neither its RESULT
 * nor its crash report is taken, and the verdict says so (it was logged
 * as a forgery by another certificate); this life's attempts are judged
 * as ever. */
static void
test_earlier_life (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_set_identities (s, true);
    sched_job_t *j = new_job (s, 1, 2, QC_RES_CPU, true);   /* restored */
    sched_set_attempt_base (s, 131072);
    for (uint64_t i = 0; i < 2; i++)
        sched_job_task (j, i)->attempt = 131072;
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, 65537, true) == SCHED_EARLIER_LIFE,
           "a RESULT of the life before");
    CHECK (sched_task_crashed_as (s, j, 1, 65537, "w", 11, 1, NULL) == SCHED_EARLIER_LIFE,
           "a crash report of the life before");
    CHECK (j->done == 0 && sched_job_task (j, 1)->blame == 0, "nothing taken");
    sched_worker_t *a = worker_as (s, 11);
    sched_dispatch (s);
    sched_task_t *t0 = sched_job_task (j, 0);
    CHECK (t0->worker == a && t0->attempt == 131073);
    CHECK (sched_task_finished_as (s, NULL, 22, j, 0, 131073, true) == SCHED_NOT_YOURS,
           "this life's attempt from another certificate");
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, 131073, true) == SCHED_OK,
           "and from its own");
    sched_destroy (&s);
    rec_free (&r);

    /* the journal said whom an earlier life's attempt went to
     * (J_DISPATCH): its RESULT from that identity is taken, even after
     * this life dispatched the task again (that attempt is then revoked),
     * and from another identity it is not */
    s = new_sched (&r, 3);
    sched_set_identities (s, true);
    j = new_job (s, 1, 3, QC_RES_CPU, true);
    sched_set_attempt_base (s, 131072);
    for (uint64_t i = 0; i < 3; i++)
        sched_job_task (j, i)->attempt = 131072;
    sched_task_restore_attempt (s, j, 0, 65540, 11);
    sched_task_restore_attempt (s, j, 1, 65541, 11);
    sched_task_restore_attempt (s, j, 2, 65542, 0);     /* no longer admitted */
    CHECK (sched_task_finished_as (s, NULL, 22, j, 0, 65540, true) == SCHED_EARLIER_LIFE,
           "another certificate's word for it");
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, 65540, true) == SCHED_OK
           && sched_job_task (j, 0)->state == TASK_DONE, "its own identity's RESULT");
    sched_worker_t *b = worker_as (s, 11);
    sched_dispatch (s);
    sched_task_t *t1 = sched_job_task (j, 1);
    CHECK (t1->worker == b, "task 1 dispatched again in this life");
    CHECK (sched_task_finished_as (s, NULL, 11, j, 1, 65541, true) == SCHED_OK
           && t1->state == TASK_DONE && t1->worker == NULL,
           "the earlier life's RESULT wins, this life's attempt is taken back");
    CHECK (sched_task_finished_as (s, NULL, 11, j, 2, 65542, true) == SCHED_EARLIER_LIFE,
           "an attempt whose certificate is gone");
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, 65540, true) == SCHED_DUPLICATE,
           "a second RESULT");
    sched_destroy (&s);
    rec_free (&r);

    /* the journal's attempts come oldest first and the last SCHED_PAST
     * are kept (a compaction writes them so: the newest, the one still
     * running, stays); a restored attempt's crash report is not counted
     * (whether its life blamed it is not known) */
    s = new_sched (&r, 3);
    sched_set_identities (s, true);
    j = new_job (s, 1, 2, QC_RES_CPU, true);
    sched_set_attempt_base (s, 131072);
    for (uint64_t i = 0; i < 2; i++)
        sched_job_task (j, i)->attempt = 131072;
    for (uint32_t a = 65537; a < 65537 + SCHED_PAST + 1; a++)
        sched_task_restore_attempt (s, j, 0, a, 11);
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, 65537, true) == SCHED_EARLIER_LIFE,
           "the oldest of %d restored attempts is not kept", SCHED_PAST + 1);
    CHECK (sched_task_finished_as (s, NULL, 11, j, 0, 65537 + SCHED_PAST, true) == SCHED_OK,
           "the newest is");
    sched_task_restore_attempt (s, j, 1, 65600, 11);
    CHECK (sched_task_crashed_as (s, j, 1, 65600, "w", 11, 1, NULL) == SCHED_EARLIER_LIFE
           && sched_job_task (j, 1)->blame == 0, "a restored attempt's crash report");
    CHECK (sched_task_finished_as (s, NULL, 11, j, 1, 65600, true) == SCHED_OK,
           "and its RESULT after it");
    sched_destroy (&s);
    rec_free (&r);
}

int
main (void)
{
    test_earlier_life ();
    test_current_attempt ();
    test_past_attempt ();
    test_crash_reports ();
    test_off ();
    return check_done ("test_sched_identity");
}
