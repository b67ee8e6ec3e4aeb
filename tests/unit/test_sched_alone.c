/* Scheduler tests, crashes that name no culprit: a crash report of
 * several slides at once (a SIGKILL: the OOM killer) blames none of
 * them; each then runs alone on a worker holding nothing, busy workers
 * are set aside until they empty, and a crash there is the slide's own.
 * Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

/* Reports every task running on w as crashed in one report. */
static size_t
crash_all (sched_t *s, sched_worker_t *w, const char *name)
{
    sched_task_t *on[64];
    size_t n = 0;
    for (sched_task_t *t = w->assigned.head; t && n < 64; t = t->wnext)
        if (t->state == TASK_RUNNING)
            on[n++] = t;
    for (size_t i = 0; i < n; i++)
        CHECK (sched_task_crashed_as (s, on[i]->job, on[i]->idx, on[i]->attempt, name, 0,
                                      (uint32_t) n, NULL) == SCHED_OK);
    return n;
}

static void
start_all (sched_t *s, sched_worker_t *w)
{
    for (sched_task_t *t = w->assigned.head; t; t = t->wnext)
        if (t->state == TASK_DISPATCHED)
            start (s, w, t->job, t->idx);
}

/* A scheduler whose job id of n CPU slides all ran on one worker of n
 * slots, whose process died with them, naming no culprit (one report). */
static sched_t *
after_shared_crash (rec_t *r, uint32_t max_deaths, uint64_t id, size_t n, sched_job_t **j,
                    sched_worker_t **w)
{
    sched_t *s = new_sched (r, max_deaths);
    *j = new_job (s, id, n, QC_RES_CPU, true);
    *w = sched_worker_add (s, (uint32_t) n, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start_all (s, *w);
    CHECK (crash_all (s, *w, "w") == n);
    return s;
}

/* The one task dispatched since index from, or NULL. */
static sched_task_t *
only_since (const rec_t *r, size_t from)
{
    return r->nd == from + 1 ? r->d[from].task : NULL;
}

/* A shared crash: no blame, each slide alone afterwards, on one worker
 * at a time, busy workers set aside; the rest wait; then all finish. */
static void
test_shared_crash_runs_alone (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 1);          /* one crash fails a slide */
    sched_job_t *j = new_job (s, 1, 10, QC_RES_CPU, true);
    sched_worker_t *w1 = sched_worker_add (s, 4, 0, NULL, 0, NULL);
    sched_worker_t *w2 = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == 6 && count_for (&r, w1) == 4 && count_for (&r, w2) == 2);
    start_all (s, w1);
    start_all (s, w2);
    sched_task_t *crashed[4];
    size_t k = 0;
    for (sched_task_t *t = w1->assigned.head; t && k < 4; t = t->wnext)
        crashed[k++] = t;
    CHECK (crash_all (s, w1, "w1") == 4);
    CHECK (r.nf == 0, "a crash of 4 slides at once fails none (max_deaths 1): %zu", r.nf);
    for (size_t i = 0; i < k; i++)
        CHECK (crashed[i]->blame == 0 && crashed[i]->alone
               && crashed[i]->state == TASK_QUEUED && crashed[i]->worker == NULL,
               "slide %zu: blame %u, alone %d", i, crashed[i]->blame, crashed[i]->alone);
    CHECK (w1->cpu_inflight == 0 && j->running == 2);
    CHECK (sched_job_queued (j) == 8 && sched_queue_depth (s) == 8,
           "4 alone + 4 never dispatched: %zu", sched_job_queued (j));
    sched_worker_remove (s, w1, true, "w1");  /* the crashed process's record */

    /* the restarted process holds nothing: one alone slide, nothing
     * else; the busy w2 is set aside */
    sched_worker_t *w3 = sched_worker_add (s, 4, 2, NULL, 0, NULL);
    size_t from = r.nd;
    sched_dispatch (s);
    sched_task_t *a = only_since (&r, from);
    CHECK (a && a->alone && a->worker == w3 && w3->alone == a,
           "one alone slide to the empty worker, %zu dispatched", r.nd - from);
    CHECK (w2->clearing && !w3->clearing, "the busy worker is set aside");
    /* more capacity frees up, still nothing else goes out */
    start (s, w3, j, a->idx);
    from = r.nd;
    sched_dispatch (s);
    CHECK (r.nd == from, "a worker running an alone slide or clearing takes nothing");

    /* w2 empties: it gets the next alone slide */
    while (w2->assigned.head)
        CHECK (finish (s, j, w2->assigned.head->idx, true));
    from = r.nd;
    sched_dispatch (s);
    sched_task_t *b = only_since (&r, from);
    CHECK (b && b->alone && b->worker == w2 && w2->alone == b && !w2->clearing);

    /* the two alone slides pass; the last two alone ones go out one per
     * worker; then the others, with prefetch */
    CHECK (finish (s, j, a->idx, true));
    start (s, w2, j, b->idx);
    CHECK (finish (s, j, b->idx, true));
    from = r.nd;
    sched_dispatch (s);
    CHECK (r.nd == from + 2 && r.d[from].task->alone && r.d[from + 1].task->alone
           && r.d[from].worker != r.d[from + 1].worker,
           "two alone slides on two empty workers: %zu dispatched", r.nd - from);
    for (size_t i = from; i < from + 2 && i < r.nd; i++) {
        start (s, r.d[i].worker, j, r.d[i].idx);
        CHECK (finish (s, j, r.d[i].idx, true));
    }
    CHECK (!w2->alone && !w3->alone && !w2->clearing && !w3->clearing);
    from = r.nd;
    sched_dispatch (s);
    CHECK (r.nd == from + 4, "the 4 others go out once no slide waits alone: %zu",
           r.nd - from);
    for (size_t i = from; i < r.nd; i++) {
        CHECK (!r.d[i].task->alone);
        start (s, r.d[i].worker, j, r.d[i].idx);
        CHECK (finish (s, j, r.d[i].idx, true));
    }
    CHECK (sched_job_finished (j) && j->done == 10 && j->failed == 0 && r.nf == 0);
    sched_destroy (&s);
    rec_free (&r);
}

/* An alone slide that crashes there is blamed, to max_deaths; so is one
 * in a shared report once it is alone (it should have been alone). */
static void
test_alone_crash_blamed (void)
{
    rec_t r;
    sched_job_t *j;
    sched_worker_t *w;
    sched_t *s = after_shared_crash (&r, 2, 2, 2, &j, &w);
    sched_task_t *t0 = sched_job_task (j, 0), *t1 = sched_job_task (j, 1);
    CHECK (t0->alone && t1->alone && t0->blame == 0 && t1->blame == 0);
    size_t from = r.nd;
    sched_dispatch (s);
    sched_task_t *a = only_since (&r, from);
    CHECK (a != NULL, "one alone slide on the one worker");
    if (!a)
        goto out;
    start (s, w, j, a->idx);
    /* alone, its crash is its own */
    CHECK (sched_task_crashed_as (s, j, a->idx, a->attempt, "w", 0, 1, NULL) == SCHED_OK);
    CHECK (a->blame == 1 && a->alone && a->state == TASK_QUEUED && r.nf == 0);
    CHECK (w->alone == NULL && w->cpu_inflight == 0, "the worker is free again");
    /* a shared report while alone still counts */
    from = r.nd;
    sched_dispatch (s);
    sched_task_t *again = only_since (&r, from);
    CHECK (again != NULL);
    if (!again)
        goto out;
    start (s, w, j, again->idx);
    CHECK (sched_task_crashed_as (s, j, again->idx, again->attempt, "w", 0, 3, NULL) == SCHED_OK);
    CHECK (again == a, "the slide sent back goes first again");
    CHECK (again->blame == 2, "blame %u", again->blame);
    CHECK (r.nf == 1 && a->state == TASK_FAILED, "max_deaths 2 reached alone");
    if (r.nf == 1)
        CHECK (strstr (r.f[0].reason, "ran 2 times") && strstr (r.f[0].reason, "crashed"),
               "reason: %s", r.f[0].reason);
out:
    sched_destroy (&s);
    rec_free (&r);
}

/* Alone slides go only where they can run: a CPU slide never to a
 * GPU-only worker (nor is one set aside for it), a GPU slide on a GPU;
 * draining and stalled workers are neither used nor set aside; a cancel
 * fails alone slides too; a queued slide named by a late shared report
 * moves to run alone. */
static void
test_alone_where (void)
{
    rec_t r;
    sched_job_t *j;
    sched_worker_t *w;
    sched_t *s = after_shared_crash (&r, 3, 3, 3, &j, &w);
    sched_worker_remove (s, w, true, "w");
    uint32_t dev = 0;
    sched_worker_t *g = sched_worker_add (s, 0, 0, &dev, 1, NULL);
    size_t from = r.nd;
    sched_dispatch (s);
    CHECK (r.nd == from && !g->clearing, "a GPU-only worker runs no CPU slide");
    sched_worker_t *c = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_worker_drain (s, c);
    sched_dispatch (s);
    CHECK (r.nd == from, "a draining worker takes no alone slide");
    sched_worker_t *c2 = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_dispatch (s);
    CHECK (r.nd == from + 1 && r.d[from].worker == c2 && r.d[from].gpu == -1);
    /* cancel: the queued alone slides fail with the job, and so does the
       one sent to c2 and not started (taken back) */
    sched_job_cancel (s, j, NULL);
    CHECK (r.nf == 3 && sched_job_queued (j) == 0 && sched_job_finished (j), "failed %zu",
           r.nf);
    CHECK (!finish (s, j, r.d[from].idx, true), "its late result is not taken");

    /* a GPU job: a shared crash of the two slides running on a worker
     * with two GPUs; they then run alone on GPU 0 of the other GPU
     * worker once it has emptied, which takes nothing else meanwhile */
    sched_job_t *gj = new_job (s, 4, 8, QC_RES_GPU, true);
    uint32_t devs[2] = {0, 1};
    sched_worker_t *g2 = sched_worker_add (s, 0, 0, devs, 2, NULL);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 6, "g: 1 + 1 prefetch, g2: 2 + 2 prefetch, got %zu", r.nd);
    start_all (s, g);
    sched_task_t *run[2] = {g2->assigned.head, g2->assigned.head->wnext};
    for (int i = 0; i < 2; i++)
        start (s, g2, gj, run[i]->idx);
    CHECK (crash_all (s, g2, "g2") == 2 && g2->gpu_inflight == 2,
           "2 running crashed, 2 prefetched stay");
    CHECK (run[0]->alone && run[1]->alone && run[0]->blame == 0);
    sched_task_t *late = g2->assigned.head;
    uint32_t late_att = late->attempt;
    sched_worker_remove (s, g2, true, "g2");
    CHECK (late->state == TASK_QUEUED && !late->alone, "a prefetched slide goes back");
    /* a queued slide that a shared report names late moves to run alone */
    CHECK (sched_task_crashed_as (s, gj, late->idx, late_att, "g2", 0, 2, NULL) == SCHED_OK);
    CHECK (late->alone && late->state == TASK_QUEUED && late->blame == 0);
    CHECK (sched_job_queued (gj) == 6, "3 alone, 3 others: %zu", sched_job_queued (gj));
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 0 && g->clearing && !c2->clearing,
           "the busy GPU worker is set aside, not the CPU one; %zu dispatched", r.nd);
    while (g->assigned.head)
        CHECK (finish (s, gj, g->assigned.head->idx, true));
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].task->alone && r.d[0].gpu == 0 && g->alone == r.d[0].task,
           "an alone slide on the emptied GPU worker");
    sched_destroy (&s);
    rec_free (&r);
}

/* A held job's alone slides (its client went away before sending them
 * all) cannot go out: no worker is set aside for them, and another job's
 * slides run; once the hold lifts they go first. */
static void
test_alone_held (void)
{
    rec_t r;
    sched_job_t *j;
    sched_worker_t *w;
    sched_t *s = after_shared_crash (&r, 3, 5, 2, &j, &w);
    j->held = true;
    sched_job_t *other = new_job (s, 6, 4, QC_RES_CPU, true);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 2 && r.d[0].job == 6 && r.d[1].job == 6 && !w->clearing,
           "the other job's slides go out, no worker set aside: %zu", r.nd);
    start_all (s, w);
    j->held = false;
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 0 && w->clearing, "the hold lifted: the worker is set aside");
    while (w->assigned.head)
        CHECK (finish (s, other, w->assigned.head->idx, true));
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].job == 5 && r.d[0].task->alone);
    sched_destroy (&s);
    rec_free (&r);
}

/* An alone slide taken back at its deadline runs on as a ghost: its
 * worker stays closed to other slides until that ghost ends (the slide
 * that overran is the likeliest culprit); the retry runs alone
 * elsewhere. */
static void
test_alone_ghost_keeps_closed (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 3);
    sched_set_task_timeout (s, 1000);
    sched_job_t *j = new_job (s, 7, 1, QC_RES_CPU, true);
    sched_worker_t *w = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start_all (s, w);
    sched_task_t *t = sched_job_task (j, 0);
    CHECK (sched_task_crashed_as (s, j, 0, t->attempt, "w", 0, 2, NULL) == SCHED_OK && t->alone);
    sched_dispatch (s);
    CHECK (w->alone == t);
    start (s, w, j, 0);
    uint32_t first = t->attempt;
    sched_set_now (s, 2000);
    sched_tick (s);                          /* past the deadline: a ghost */
    CHECK (t->blame == 1 && w->alone == NULL && w->alone_ghosts == 1 && w->nghosts == 1);
    sched_job_t *other = new_job (s, 8, 3, QC_RES_CPU, true);
    sched_worker_t *v = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 1 && r.d[0].task == t && r.d[0].worker == v && v->alone == t,
           "the retry runs alone on the empty worker, nothing else: %zu", r.nd);
    CHECK (count_for (&r, w) == 0, "the worker whose alone slide runs on takes nothing");
    /* the ghost's own result ends it: the worker takes others again,
     * and the retry on v, taken back while it runs, closes v in turn */
    start (s, v, j, 0);
    CHECK (sched_task_finished (s, w, j, 0, first, true) == SCHED_OK);
    CHECK (w->alone_ghosts == 0 && v->alone_ghosts == 1 && v->alone == NULL);
    rec_clear (&r);
    sched_dispatch (s);
    CHECK (r.nd == 2 && count_for (&r, w) == 2, "w takes the other job's slides: %zu", r.nd);
    CHECK (count_for (&r, v) == 0, "v still runs the alone slide's taken-back attempt");
    (void) other;
    sched_destroy (&s);
    rec_free (&r);
}

/* Which busy worker is set aside: not one holding a ghost (it may never
 * empty) nor a stalled one (released when it stalls); at most half the
 * workers. A shared report of an attempt dispatched before the slide
 * was marked alone is no more its own than the first. */
static void
test_alone_which_cleared (void)
{
    rec_t r;
    sched_t *s = new_sched (&r, 1);
    sched_set_task_timeout (s, 1000);
    sched_job_t *j = new_job (s, 9, 12, QC_RES_CPU, true);
    sched_worker_t *a = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    sched_dispatch (s);
    sched_worker_t *b = sched_worker_add (s, 4, 0, NULL, 0, NULL);
    sched_dispatch (s);                      /* a's one slide never starts */
    sched_set_now (s, 600);
    start_all (s, b);
    sched_task_t *x = b->assigned.head, *y = x->wnext;
    /* both of b's first two are named by a shared report */
    CHECK (sched_task_crashed_as (s, j, x->idx, x->attempt, "b", 0, 2, NULL) == SCHED_OK);
    CHECK (sched_task_crashed_as (s, j, y->idx, y->attempt, "b", 0, 2, NULL) == SCHED_OK);
    CHECK (x->alone && y->alone && x->blame == 0);
    sched_dispatch (s);
    CHECK (a->clearing && !b->clearing, "the least loaded, and only half the workers");
    start_all (s, b);                        /* what b took meanwhile */
    /* a stalls: its never-started slide is taken back; it is released,
     * b is set aside instead */
    sched_set_now (s, 1200);
    sched_tick (s);
    CHECK (a->stalled && a->nghosts == 0 && b->nghosts == 0);
    sched_dispatch (s);
    CHECK (!a->clearing && b->clearing, "a stalled worker is not kept aside");
    /* a ghost on b (a slide past its deadline): b may never empty */
    sched_set_now (s, 5000);
    sched_tick (s);
    CHECK (b->nghosts > 0 && !b->stalled);
    sched_dispatch (s);
    CHECK (!b->clearing, "a worker holding a ghost is not kept aside");
    sched_destroy (&s);
    rec_free (&r);

    /* the late report: two slides sent out again together before the
     * first report marked them; the second shared crash (of that older
     * attempt) blames neither (max_deaths 1 would fail both) */
    s = new_sched (&r, 1);
    j = new_job (s, 10, 2, QC_RES_CPU, true);
    sched_worker_t *w = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start_all (s, w);
    uint32_t att0 = sched_job_task (j, 0)->attempt, att1 = sched_job_task (j, 1)->attempt;
    sched_worker_remove (s, w, true, "w");   /* declared dead first */
    sched_worker_t *w2 = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    sched_dispatch (s);
    start_all (s, w2);
    CHECK (sched_task_crashed_as (s, j, 0, att0, "w", 0, 2, NULL) == SCHED_OK);
    CHECK (sched_task_crashed_as (s, j, 1, att1, "w", 0, 2, NULL) == SCHED_OK);
    for (uint64_t i = 0; i < 2; i++) {
        sched_task_t *t = sched_job_task (j, i);
        CHECK (t->alone && t->worker == w2 && t->blame == 0);
        CHECK (sched_task_crashed_as (s, j, i, t->attempt, "w2", 0, 2, NULL) == SCHED_OK);
        CHECK (t->blame == 0 && t->state == TASK_QUEUED,
               "slide %llu: its shared attempt's crash is not its own: blame %u",
               (unsigned long long) i, t->blame);
    }
    CHECK (r.nf == 0, "no slide failed: %zu", r.nf);
    sched_destroy (&s);
    rec_free (&r);
}

/* The verdict names how the process died; a death by SIGKILL (the
 * kernel's OOM killer) or SIGTRAP (GLib's stop when an allocation fails)
 * is likely this machine's memory: failed in this job, marked so that a
 * rerun tries the slide again; a segfault is not. */
static void
test_crash_verdicts (void)
{
    static const struct {
        const char *how;
        bool rerun;
    } deaths[] = {
        {"signal 11 (Segmentation fault)", false},
        {"signal 9 (Killed)", true},
        {"signal 5 (Trace/breakpoint trap)", true},
        {"signal 11 (Segmentation fault) " QC_RESULT_CRASH_MEMORY, true},
        {NULL, false},
    };
    size_t n = sizeof deaths / sizeof deaths[0];
    rec_t r;
    sched_t *s = new_sched (&r, 1);
    sched_job_t *j = new_job (s, 11, n, QC_RES_CPU, true);
    sched_worker_t *w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    for (size_t i = 0; i < n; i++) {
        sched_dispatch (s);
        sched_task_t *t = w->assigned.head;
        CHECK (t != NULL);
        if (!t)
            break;
        start (s, w, j, t->idx);
        CHECK (sched_task_crashed_as (s, j, t->idx, t->attempt, "w", 0, 1, deaths[i].how)
               == SCHED_OK);
        CHECK (r.nf == i + 1 && t->state == TASK_FAILED);
        if (r.nf != i + 1)
            break;
        const char *why = r.f[i].reason;
        char said[128];
        snprintf (said, sizeof said, "crashed while running it%s%s); not retried",
                  deaths[i].how ? ": " : "", deaths[i].how ? deaths[i].how : "");
        CHECK (strstr (why, said), "%s: %s", deaths[i].how ? deaths[i].how : "none", why);
        CHECK ((strstr (why, QC_RESULT_RETRY_MARK) != NULL) == deaths[i].rerun,
               "%s: %s", deaths[i].how ? deaths[i].how : "none", why);
    }
    sched_destroy (&s);
    rec_free (&r);

    /* a segfault, then a SIGKILL: not every death was memory's */
    s = new_sched (&r, 2);
    j = new_job (s, 12, 1, QC_RES_CPU, true);
    w = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    static const char *const mixed[] = {"signal 11 (Segmentation fault)", "signal 9 (Killed)"};
    for (int k = 0; k < 2; k++) {
        sched_dispatch (s);
        sched_task_t *t = sched_job_task (j, 0);
        start (s, w, j, 0);
        CHECK (sched_task_crashed_as (s, j, 0, t->attempt, "w", 0, 1, mixed[k]) == SCHED_OK);
    }
    CHECK (r.nf == 1 && !strstr (r.f[0].reason, QC_RESULT_RETRY_MARK),
           "a segfault among the deaths: %s", r.nf ? r.f[0].reason : "(not failed)");
    sched_destroy (&s);
    rec_free (&r);
}

int
main (void)
{
    test_shared_crash_runs_alone ();
    test_alone_crash_blamed ();
    test_alone_where ();
    test_alone_held ();
    test_alone_ghost_keeps_closed ();
    test_alone_which_cleared ();
    test_crash_verdicts ();
    return check_done ("test_sched_alone");
}
