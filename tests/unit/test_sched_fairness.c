/* Scheduler tests, jobs side by side: round-robin fairness between jobs,
 * cancelling a job, draining a worker, and a seeded random stress run of
 * 100000 tasks over 64 workers with churn. Fixtures: sched_fixtures.h. */
#include "tests/unit/sched_fixtures.h"

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
        CHECK (finish (s, last.task->job, last.idx, true));
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
    CHECK (finish (s, a, 0, true));
    sched_dispatch (s);
    b = new_job (s, 2, 50, QC_RES_CPU, true);
    for (int i = 0; i < 10 && r.nd > 0; i++) {
        dispatch_t last = r.d[r.nd - 1];
        finish (s, last.task->job, last.idx, true);
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
    CHECK (finish (s, a, 0, true));
    sched_dispatch (s);                                   /* B0 */
    CHECK (r.nd == 2 && r.d[1].job == 2);
    CHECK (finish (s, b, 0, true) && sched_job_finished (b));
    sched_job_remove (s, b);
    sched_dispatch (s);
    CHECK (r.nd == 3 && r.d[2].job == 3, "C's turn after B, got job %llu",
           (unsigned long long) (r.nd == 3 ? r.d[2].job : 0));
    if (r.nd == 3) {
        finish (s, r.d[2].task->job, r.d[2].idx, true);
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
    start (s, w, j, 0);
    uint64_t j_assigned = j->dispatched + j->running;
    CHECK (j_assigned == 2, "2 of job 5 on the worker: %llu", (unsigned long long) j_assigned);
    sched_job_cancel (s, j, NULL);
    CHECK (j->cancelled);
    /* the 4 queued and the one sent ahead, not started (a soak's review:
       it ran after the cancel) */
    CHECK (r.nf == 5, "the 4 queued tasks and the one not started fail, got %zu", r.nf);
    for (size_t i = 0; i < r.nf; i++) {
        CHECK (r.f[i].job == 5 && strcmp (r.f[i].reason, SCHED_CANCELLED_BY_CLIENT) == 0,
               "reason: %s", r.f[i].reason);
        CHECK (r.f[i].task->state == TASK_FAILED);
    }
    sched_task_t *t1 = sched_job_task (j, 1);
    CHECK (t1->state == TASK_FAILED && !t1->worker, "the task sent ahead is taken back");
    CHECK (j->failed == 5 && sched_queue_depth (s) == 1, "only job 6's task is queued");
    CHECK (!sched_job_finished (j), "the running task still to finish");
    CHECK (sched_job_add (s, j, "/x", QC_RES_CPU) == NULL, "a cancelled job takes no tasks");
    sched_job_cancel (s, j, NULL);      /* twice: nothing more */
    CHECK (r.nf == 5);
    /* the running one still finishes and is reported */
    CHECK (finish (s, j, 0, true));
    CHECK (sched_job_finished (j) && j->done == 1 && j->failed == 5);
    /* after cancel nothing of job 5 is dispatched */
    size_t before = r.nd;
    sched_dispatch (s);
    for (size_t i = before; i < r.nd; i++)
        CHECK (r.d[i].job == 6);
    CHECK (w->cpu_inflight == 2, "other's two: %u", w->cpu_inflight);
    (void) other;
    sched_destroy (&s);
    rec_free (&r);

    /* cancel (by the broker, with its reason), then the worker dies: its
     * tasks of the cancelled job fail rather than going back to the
     * queue, with the cancel's reason, which a second cancel keeps */
    s = new_sched (&r, 3);
    j = new_job (s, 5, 3, QC_RES_CPU, false);   /* not final: cancel suffices */
    w = sched_worker_add (s, 1, 1, NULL, 0, NULL);
    sched_dispatch (s);
    start (s, w, j, 0);
    sched_job_cancel (s, j, "over the limit");
    sched_job_cancel (s, j, NULL);
    CHECK (r.nf == 2 && strcmp (r.f[0].reason, "over the limit") == 0
           && strcmp (r.f[1].reason, "over the limit") == 0, "queued and not started: %zu, %s",
           r.nf, r.nf ? r.f[0].reason : "");
    sched_worker_remove (s, w, true, "w");
    CHECK (r.nf == 3 && sched_queue_depth (s) == 0);
    for (size_t i = 0; i < r.nf; i++)
        CHECK (strcmp (r.f[i].reason, "over the limit") == 0, "reason %zu: %s", i,
               r.f[i].reason);
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
    start (s, w, j, 0);
    sched_worker_drain (s, w);
    CHECK (w->draining);
    sched_job_add (s, j, "/more.svs", QC_RES_CPU);
    sched_dispatch (s);
    CHECK (r.nd == 3, "a draining worker gets no new task");
    /* it hands back task 2 (not started) */
    give_back (s, w, j, 2);
    sched_task_t *t2 = sched_job_task (j, 2);
    CHECK (t2->state == TASK_QUEUED && t2->worker == NULL && t2->blame == 0);
    CHECK (w->cpu_inflight == 2 && sched_queue_depth (s) == 2 && j->dispatched == 1);
    sched_dispatch (s);
    CHECK (r.nd == 3, "still not to the draining worker");
    /* a started task cannot be handed back; another worker cannot hand
     * back what is not its own */
    give_back (s, w, j, 0);
    CHECK (sched_job_task (j, 0)->state == TASK_RUNNING && w->cpu_inflight == 2);
    sched_worker_t *w2 = sched_worker_add (s, 1, 0, NULL, 0, NULL);
    give_back (s, w2, j, 1);
    CHECK (sched_job_task (j, 1)->state == TASK_DISPATCHED
           && sched_job_task (j, 1)->worker == w);
    give_back (s, w, j, 12345);    /* no such task */
    /* the returned task goes first to the next worker */
    sched_dispatch (s);
    CHECK (r.nd == 4 && r.d[3].worker == w2 && r.d[3].idx == 2,
           "the handed-back task goes to the new worker first");
    CHECK (t2->attempt == 2);
    /* the draining worker finishes what it holds, then leaves quietly */
    CHECK (finish (s, j, 0, true) && finish (s, j, 1, true));
    CHECK (w->cpu_inflight == 0 && w->assigned.count == 0);
    sched_worker_remove (s, w, false, "w");
    CHECK (r.nf == 0 && sched_first_worker (s) == w2);
    sched_destroy (&s);
    rec_free (&r);
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
            start (s, t->worker, t->job, t->idx);
        uint64_t job_k = t->job->id - 1;
        bool ok = finish (s, t->job, t->idx, true);
        if (ok) {
            accepted++;
            if (finished[job_k][t->idx]++)
                CHECK (0, "task %llu accepted twice", (unsigned long long) t->idx);
            /* now and then the result comes a second time */
            if (rnd () % 16 == 0 && finish (s, t->job, t->idx, true))
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
    test_fairness ();
    test_cancel ();
    test_drain ();
    test_stress ();
    return check_done ("test_sched_fairness");
}
