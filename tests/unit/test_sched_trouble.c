/* Scheduler tests, a worker's machine in trouble: a RESULT that failed
 * for the machine, not the slide (sched_task_troubled) sends the slide
 * back to the front of the queue, at most SCHED_TROUBLE_RETRIES times,
 * when another worker could take it (or, for a while, when none could:
 * a wait for the machine), and pauses its worker (10 s,
 * doubling to 60 s while it keeps failing so; a passing result starts
 * the doubling again, the pause standing),
 * so the slide runs elsewhere instead of every slide failing fast on one
 * bad machine. Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

static void
test_runs_elsewhere (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 1, 5, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 3, 0, NULL, 0, NULL);
    sched_worker_t *b = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 4 && count_for (&r, a) == 3 && count_for (&r, b) == 1);
    for (size_t i = 0; i < r.nd; i++)
        start (s, r.d[i].worker, j, r.d[i].idx);
    sched_task_t *t = a->assigned.head;
    uint32_t att = t->attempt;
    /* only the current attempt on its worker, running */
    CHECK (sched_task_troubled (s, b, 0, j, t->idx, att, true) == SCHED_STALE, "another worker's");
    CHECK (sched_task_troubled (s, a, 0, j, t->idx, att + 1, true) == SCHED_BAD_ATTEMPT);
    CHECK (sched_task_troubled (s, a, 0, j, t->idx, att, true) == SCHED_REQUEUED);
    CHECK (t->state == TASK_QUEUED && t->troubled == 1 && t->worker == NULL && t->blame == 0);
    CHECK (j->failed == 0 && r.nf == 0 && a->cpu_inflight == 2);
    CHECK (a->paused_until == SCHED_TROUBLE_PAUSE_MS, "paused until %lld",
           (long long) a->paused_until);
    /* the slide beside it fails so too, within the pause: the same
     * spell, the pause stands */
    sched_task_t *t2 = a->assigned.head;
    CHECK (sched_task_troubled (s, a, 0, j, t2->idx, t2->attempt, true) == SCHED_REQUEUED);
    CHECK (a->paused_until == SCHED_TROUBLE_PAUSE_MS && a->trouble == 1 && a->cpu_inflight == 1);
    /* its third slide passes: the pause stands (the slides it failed
     * should go elsewhere), the doubling starts again */
    CHECK (finish (s, j, a->assigned.head->idx, true));
    CHECK (a->paused_until == SCHED_TROUBLE_PAUSE_MS && a->trouble == 0 && a->cpu_inflight == 0,
           "a pass during the pause: until %lld", (long long) a->paused_until);
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
    /* a's pause ends with time */
    sched_set_now (s, SCHED_TROUBLE_PAUSE_MS);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (count_for (&r, a) == 1, "a takes slides again after its pause");
    sched_destroy (&s);
    rec_free (&r);
}

/* The only worker: a failure that may pass with time (its machine's)
 * sends the slide back and pauses the worker, a wait for its machine,
 * while the machine has failed so for less than SCHED_TROUBLE_ALONE_MS;
 * past that its failures stand at once, no pause, until a slide passes
 * on it, after which it is waited for again. A build's refusal stands
 * at once: waiting does not change a build. */
static void
test_alone (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 2, 40, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_task_t *first = a->assigned.head;
    start (s, a, j, first->idx);
    CHECK (sched_task_troubled (s, a, 0, j, first->idx, first->attempt, false) == SCHED_OK,
           "the only worker, another build: the failure stands");
    CHECK (a->paused_until == 0 && a->trouble == 0, "and it is not paused");
    CHECK (finish (s, j, first->idx, false));
    /* --trouble-wait 0: not waited for, the machine's failure stands too */
    CHECK (sched_trouble_wait (s) == SCHED_TROUBLE_ALONE_MS);
    sched_set_trouble_wait (s, 0);
    sched_dispatch (s);
    sched_task_t *nowait = a->assigned.head;
    CHECK (nowait != NULL);
    if (nowait) {
        start (s, a, j, nowait->idx);
        CHECK (sched_task_troubled (s, a, 0, j, nowait->idx, nowait->attempt, true)
               == SCHED_OK && a->paused_until == 0, "--trouble-wait 0: stands at once");
        CHECK (finish (s, j, nowait->idx, false));
    }
    sched_set_trouble_wait (s, SCHED_TROUBLE_ALONE_MS);

    /* its machine keeps failing: waited for, then given up on */
    int64_t now = 0, spell = -1;
    size_t requeued = 0, stood = 0, round;
    bool given_up = false;
    for (round = 0; round < 40 && !given_up; round++) {
        if (a->paused_until > now)
            now = a->paused_until;            /* the pause ends */
        sched_set_now (s, now);
        sched_dispatch (s);
        sched_task_t *u = a->assigned.head;
        CHECK (u != NULL, "round %zu: a took a slide after its pause", round);
        if (!u)
            break;
        start (s, a, j, u->idx);
        uint32_t before = u->troubled;
        sched_verdict_t v = sched_task_troubled (s, a, 0, j, u->idx, u->attempt, true);
        if (spell < 0)
            spell = now;
        if (v == SCHED_REQUEUED) {
            requeued++;
            CHECK (now - spell < SCHED_TROUBLE_ALONE_MS && a->paused_until > now
                   && u->troubled == before + 1 && u->state == TASK_QUEUED
                   && u->trouble_waits,
                   "round %zu: sent back within the wait, %lld ms in", round,
                   (long long) (now - spell));
            continue;
        }
        CHECK (v == SCHED_OK, "round %zu: verdict %d", round, (int) v);
        CHECK (finish (s, j, u->idx, false) && u->state == TASK_FAILED);
        stood++;
        /* SCHED_TROUBLE_RETRIES does not count alone: only the wait's end
           (it failed a lone worker's slides after 30 s) */
        given_up = a->trouble_outlasted;
        CHECK (given_up && now - spell >= SCHED_TROUBLE_ALONE_MS && before > 2,
               "round %zu: stood %lld ms in, sent back %u times", round,
               (long long) (now - spell), before);
    }
    CHECK (given_up, "never given up in %zu rounds", round);
    CHECK (requeued == 7 && stood == 1, "%zu sent back, %zu stood", requeued, stood);
    CHECK (a->trouble_since == spell, "the spell began at %lld", (long long) a->trouble_since);
    /* from then on its failures stand at once, and it is not paused */
    int64_t until = a->paused_until;
    sched_dispatch (s);
    sched_task_t *u = a->assigned.head;
    CHECK (u != NULL);
    if (u) {
        start (s, a, j, u->idx);
        CHECK (sched_task_troubled (s, a, 0, j, u->idx, u->attempt, true) == SCHED_OK
               && a->paused_until == until && u->troubled == 0, "after the wait: stands");
        CHECK (finish (s, j, u->idx, false));
    }
    /* a slide passes: its machine works again, and is waited for again */
    sched_dispatch (s);
    u = a->assigned.head;
    CHECK (u != NULL);
    if (u) {
        start (s, a, j, u->idx);
        CHECK (finish (s, j, u->idx, true));
        CHECK (!a->trouble_outlasted && a->trouble == 0, "a pass ends the spell");
    }
    sched_dispatch (s);
    u = a->assigned.head;
    CHECK (u != NULL);
    if (u) {
        start (s, a, j, u->idx);
        CHECK (sched_task_troubled (s, a, 0, j, u->idx, u->attempt, true) == SCHED_REQUEUED
               && a->paused_until == now + SCHED_TROUBLE_PAUSE_MS
               && a->trouble_since == now, "a new spell is waited for");
    }
    sched_destroy (&s);
    rec_free (&r);
}

/* The only worker, two slots: one slide fails for the machine again
 * and again while the slides beside it pass (a slide too big for the
 * machine). Each pass starts the worker's spell again, so the slide's
 * own wait ends it: it stands once it has been sent back for
 * SCHED_TROUBLE_ALONE_MS, and the worker is not given up on. */
static void
test_alone_too_big (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_job_t *j = new_job (s, 7, 200, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_task_t *big = sched_job_task (j, 0);
    int64_t now = 0;
    size_t round, sent_back = 0;
    bool stood = false;
    for (round = 0; round < 150 && !stood; round++) {
        if (a->paused_until > now)
            now = a->paused_until;
        sched_set_now (s, now);
        sched_dispatch (s);
        if (big->state == TASK_DISPATCHED && big->worker == a) {
            start (s, a, j, 0);
            sched_verdict_t v = sched_task_troubled (s, a, 0, j, 0, big->attempt, true);
            if (v == SCHED_REQUEUED)
                sent_back++;
            else {
                CHECK (v == SCHED_OK, "verdict %d", (int) v);
                CHECK (now - big->troubled_since >= SCHED_TROUBLE_ALONE_MS, "stood %lld "
                       "ms after its first", (long long) (now - big->troubled_since));
                CHECK (finish (s, j, 0, false) && big->state == TASK_FAILED);
                stood = true;
            }
        }
        /* the slide beside it passes */
        for (sched_task_t *u = a->assigned.head, *next; u; u = next) {
            next = u->wnext;
            if (u != big) {
                start (s, a, j, u->idx);
                finish (s, j, u->idx, true);
            }
        }
        now += 1000;
    }
    CHECK (stood, "the big slide never stood in %zu rounds (%zu sent back)", round, sent_back);
    CHECK (sent_back > 5 && !a->trouble_outlasted, "%zu sent back, outlasted %d", sent_back,
           (int) a->trouble_outlasted);
    sched_destroy (&s);
    rec_free (&r);
}

/* Where the failure stands: after SCHED_TROUBLE_RETRIES, in a cancelled
 * job. The pause doubles to its cap; an accepted passing result (not a
 * duplicate) starts the doubling again; the pause it is in stands. */
static void
test_bounds (void)
{
    rec_t r;
    sched_t *s;
    sched_job_t *j;
    sched_worker_t *a;

    /* three workers: a, then b fail it so; c's failure stands */
    s = new_sched (&r, 3);
    j = new_job (s, 3, 1, QC_RES_CPU, true);
    sched_worker_t *w[3];
    for (int k = 0; k < 3; k++)
        w[k] = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_task_t *t = sched_job_task (j, 0);
    for (int k = 0; k < 3; k++) {
        sched_dispatch (s);
        CHECK (t->worker == w[k], "try %d on worker %d", k, k);
        if (t->worker != w[k])
            break;
        start (s, w[k], j, 0);
        if (k == 2)               /* a's and b's pauses over: they could take it */
            sched_set_now (s, SCHED_TROUBLE_PAUSE_MS);
        sched_verdict_t v = sched_task_troubled (s, w[k], 0, j, 0, t->attempt, true);
        CHECK (v == (k < SCHED_TROUBLE_RETRIES ? SCHED_REQUEUED : SCHED_OK), "try %d: %d",
               k, (int) v);
        CHECK (t->trouble_waits == false, "try %d: sent back to wait", k);
    }
    CHECK (finish (s, j, 0, false) && t->state == TASK_FAILED && t->troubled == 2);
    CHECK (w[2]->paused_until == 0, "the last, whose failure stood, is not paused");
    sched_destroy (&s);
    rec_free (&r);

    /* the pause: 10, 20, 40, 60, 60 s while a keeps failing so (b idle);
     * a duplicate passing result changes nothing; an accepted one starts
     * the doubling again, the pause standing */
    s = new_sched (&r, 3);
    j = new_job (s, 4, 12, QC_RES_CPU, true);
    a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_worker_t *b = sched_worker_add (s, 0, 0, NULL, 0, NULL);
    b->slots = 1;                 /* after a, so that a is served first */
    static const int64_t pauses[] = {10000, 20000, 40000, 60000, 60000};
    int64_t now = 0;
    size_t n = 0;                 /* pauses so far */
    for (size_t k = 0; k < 12 && n < 5; k++) {
        sched_set_now (s, now);
        rec_clear (&r);
        sched_dispatch (s);
        sched_task_t *u = a->assigned.head;
        CHECK (u != NULL, "round %zu: a took a slide", k);
        if (!u)
            break;
        if (b->assigned.head)             /* b passes what it took */
            finish (s, j, b->assigned.head->idx, true);
        start (s, a, j, u->idx);
        sched_verdict_t v = sched_task_troubled (s, a, 0, j, u->idx, u->attempt, true);
        if (v != SCHED_REQUEUED) {        /* u's retries spent: its failure */
            CHECK (finish (s, j, u->idx, false));
            continue;
        }
        CHECK (a->paused_until == now + pauses[n], "pause %zu: %lld, not %lld", n,
               (long long) (a->paused_until - now), (long long) pauses[n]);
        now = a->paused_until;
        n++;
    }
    CHECK (n == 5, "%zu pauses", n);
    sched_task_t *done = NULL;
    for (uint64_t i = 0; i < j->total && !done; i++)
        if (sched_job_task (j, i)->state == TASK_DONE)
            done = sched_job_task (j, i);
    CHECK (done != NULL);
    if (done) {
        uint32_t trouble = a->trouble;
        sched_task_finished (s, a, j, done->idx, done->attempt, true);
        CHECK (a->trouble == trouble, "a duplicate passing result counted");
    }
    sched_set_now (s, a->paused_until);
    sched_dispatch (s);
    sched_task_t *u = a->assigned.head;
    CHECK (u != NULL);
    if (u) {
        start (s, a, j, u->idx);
        CHECK (finish (s, j, u->idx, true));
        CHECK (a->trouble == 0, "a passing result: trouble %u", a->trouble);
        /* its next trouble pauses it 10 s again */
        sched_dispatch (s);
        sched_task_t *x = a->assigned.head;
        CHECK (x != NULL);
        if (x) {
            int64_t at = a->paused_until;   /* now: no pause left */
            start (s, a, j, x->idx);
            CHECK (sched_task_troubled (s, a, 0, j, x->idx, x->attempt, true) == SCHED_REQUEUED
                   && a->paused_until == at + SCHED_TROUBLE_PAUSE_MS,
                   "after a pass: paused %lld", (long long) (a->paused_until - at));
        }
    }
    sched_destroy (&s);
    rec_free (&r);

    /* a cancelled job's failure stands */
    s = new_sched (&r, 3);
    j = new_job (s, 5, 1, QC_RES_CPU, true);
    a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    t = sched_job_task (j, 0);
    start (s, t->worker, j, 0);
    sched_job_cancel (s, j, NULL);
    CHECK (sched_task_troubled (s, t->worker, 0, j, 0, t->attempt, true) == SCHED_OK);
    sched_destroy (&s);
    rec_free (&r);
}

/* The same failure of an attempt already superseded (its worker declared
 * dead, the slide running elsewhere) is dropped: it does not fail the
 * running attempt (as any failed RESULT of an earlier attempt would).
 * With identities, another identity's is not taken here either. */
static void
test_superseded (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_set_identities (s, true);
    sched_job_t *j = new_job (s, 6, 1, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    a->who = 11;
    sched_dispatch (s);
    sched_task_t *t = sched_job_task (j, 0);
    start (s, a, j, 0);
    uint32_t old = t->attempt;
    sched_worker_remove (s, a, true, "a");
    sched_worker_t *b = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    b->who = 22;
    sched_dispatch (s);
    start (s, b, j, 0);
    CHECK (t->worker == b && t->attempt != old);
    CHECK (sched_task_troubled (s, NULL, 33, j, 0, old, true) == SCHED_NOT_YOURS,
           "another identity's: refused where any RESULT is");
    CHECK (sched_task_troubled (s, NULL, 11, j, 0, old, true) == SCHED_STALE);
    CHECK (t->state == TASK_RUNNING && t->worker == b && r.nf == 0 && j->failed == 0,
           "the running attempt goes on");
    sched_destroy (&s);
    rec_free (&r);
}

int
main (void)
{
    test_runs_elsewhere ();
    test_alone ();
    test_alone_too_big ();
    test_bounds ();
    test_superseded ();
    return check_done ("test_sched_trouble");
}
