/* Scheduler tests, speed (broker/sched.h, Speed): a task either resource
 * may run goes to a CPU slot only while that slot would finish it before
 * the GPUs get to it, at the speeds measured from the slides each worker
 * finished.
 *
 *  1. Measured: a worker's time for a slide, from its start to its
 *     result, on its GPU and on its CPU slots; failed slides and results
 *     of attempts taken back are not measures.
 *  2. A GPU lane at 1 s a slide beside a CPU worker at 18 s: with few
 *     ANY slides queued the CPU slots take none (the lane would finish
 *     them all first); with many they take them; CPU-only slides go to
 *     the CPU slots whatever the GPUs could do.
 *  3. Before both speeds are known, and with no GPU measured, the CPU
 *     slots take ANY slides as they always did.
 *  4. A simulated cohort at those speeds ends sooner than it did when CPU
 *     slots took every slide they could (the end of the last slide).
 * Fixtures: sched_fixtures.h. */
#include "broker/sched_int.h"
#include "tests/unit/sched_fixtures.h"

/* Runs task idx of j on its worker from now to now + ms, passing. */
static void
run_for (sched_t *s, sched_job_t *j, uint64_t idx, int64_t *now, int64_t ms)
{
    sched_task_t *t = sched_job_task (j, idx);
    sched_set_now (s, *now);
    start (s, t->worker, j, idx);
    *now += ms;
    sched_set_now (s, *now);
    CHECK (finish (s, j, idx, true), "task %llu finished", (unsigned long long) idx);
}

/* A scheduler with a GPU worker (1 GPU, no CPU slot) and a CPU worker
 * of slots slots, nothing measured yet. */
static sched_t *
gpu_and_cpu (rec_t *r, uint32_t slots, sched_worker_t **g, sched_worker_t **c)
{
    sched_t *s = new_sched (r, 3);
    uint32_t gpus[1] = {0};
    *g = sched_worker_add (s, 0, 0, gpus, 1, NULL);
    *c = sched_worker_add (s, slots, 0, NULL, 0, NULL);
    return s;
}

/* ---- 1. measured ---- */

static void
measured (void)
{
    rec_t r;
    sched_worker_t *g, *c;
    sched_t *s = gpu_and_cpu (&r, 1, &g, &c);
    sched_job_t *j = new_job (s, 1, 2, QC_RES_ANY, true);
    int64_t now = 1000;
    sched_set_now (s, now);
    sched_dispatch (s);
    CHECK (r.nd == 2 && r.d[0].worker == g && r.d[1].worker == c, "one slide each");
    CHECK (g->ms_gpu == 0 && c->ms_cpu == 0, "nothing measured before a result");
    run_for (s, j, r.d[0].idx, &now, 800);
    CHECK (g->ms_gpu == 800 && g->ms_cpu == 0, "the GPU's 800 ms: %lld", (long long) g->ms_gpu);
    /* a moving mean: 3/4 the old, 1/4 the new */
    sched_speed_note (g, true, 1600);
    CHECK (g->ms_gpu == 1000, "800 then 1600: %lld", (long long) g->ms_gpu);
    /* a failed slide says nothing of the speed */
    sched_task_t *t = sched_job_task (j, r.d[1].idx);
    start (s, c, j, t->idx);
    now += 5;
    sched_set_now (s, now);
    CHECK (sched_task_finished (s, c, j, t->idx, t->attempt, false) == SCHED_OK);
    CHECK (c->ms_cpu == 0, "a failed slide was measured: %lld", (long long) c->ms_cpu);
    sched_destroy (&s);
    rec_free (&r);
}

/* A GPU worker (1 GPU, 1 s a slide) and a CPU worker (4 slots, 18 s a
 * slide), both measured on slides of job 0, with nothing left queued. */
static sched_t *
two_workers (rec_t *r, sched_worker_t **g, sched_worker_t **c, int64_t *now)
{
    sched_t *s = gpu_and_cpu (r, 4, g, c);
    sched_job_t *j = new_job (s, 100, 2, QC_RES_ANY, true);
    *now = 1000;
    sched_set_now (s, *now);
    sched_dispatch (s);
    for (size_t i = 0; i < r->nd; i++)
        run_for (s, j, r->d[i].idx, now, r->d[i].worker == *g ? 1000 : 18000);
    CHECK ((*g)->ms_gpu == 1000 && (*c)->ms_cpu == 18000, "measured %lld and %lld",
           (long long) (*g)->ms_gpu, (long long) (*c)->ms_cpu);
    rec_clear (r);
    return s;
}

/* ---- 2. the rule ---- */

static void
the_rule (void)
{
    rec_t r;
    sched_worker_t *g, *c;
    int64_t now;
    /* 10 ANY slides: the lane does them in ~10 s, a CPU slot one in 18 */
    sched_t *s = two_workers (&r, &g, &c, &now);
    new_job (s, 1, 10, QC_RES_ANY, true);
    sched_dispatch (s);
    CHECK (count_for (&r, c) == 0, "the CPU slots took %zu of 10 slides the lane does "
           "sooner", count_for (&r, c));
    CHECK (sched_queued_any (s) == 8 && sched_cpu_slot_waits (s, c)
           && !sched_cpu_slot_waits (s, g), "qc-status's words: %zu queued, waits %d",
           sched_queued_any (s), sched_cpu_slot_waits (s, c));
    CHECK (count_for (&r, g) == 2, "the lane takes its slide and its prefetch: %zu",
           count_for (&r, g));
    /* CPU-only slides go to the CPU slots all the same */
    sched_job_t *cj = new_job (s, 2, 3, QC_RES_CPU, true);
    sched_dispatch (s);
    CHECK (count_for (&r, c) == 3 && cj->dispatched == 3, "CPU slides: %zu to the CPU slots",
           count_for (&r, c));
    sched_destroy (&s);
    rec_free (&r);

    /* 100 ANY slides: ~100 s for the lane alone; each CPU slot finishes
       one in 18, while the GPU would still have more than 18 s of work */
    s = two_workers (&r, &g, &c, &now);
    sched_job_t *j = new_job (s, 1, 100, QC_RES_ANY, true);
    sched_dispatch (s);
    CHECK (count_for (&r, c) == 4, "a long queue: the CPU slots took %zu, not 4",
           count_for (&r, c));
    /* the queue runs down: with 15 left for a lane of 1 s a slide (and 2
       it holds: 17 s of work), the next free CPU slot (18 s) takes none */
    while (sched_job_queued (j) > 15) {
        sched_task_t *t = NULL;
        for (size_t i = 0; i < r.nd && !t; i++)
            if (r.d[i].worker == g && r.d[i].task->state == TASK_DISPATCHED)
                t = r.d[i].task;
        CHECK (t != NULL, "the lane holds a slide");
        if (!t)
            break;
        run_for (s, j, t->idx, &now, 1000);
        sched_dispatch (s);
    }
    size_t before = count_for (&r, c);
    sched_task_t *cpu_task = NULL;
    for (size_t i = 0; i < r.nd && !cpu_task; i++)
        if (r.d[i].worker == c && r.d[i].task->state == TASK_DISPATCHED)
            cpu_task = r.d[i].task;
    CHECK (cpu_task != NULL);
    if (cpu_task)
        run_for (s, j, cpu_task->idx, &now, 18000);
    sched_dispatch (s);
    CHECK (count_for (&r, c) == before, "with %zu queued the freed CPU slot took a slide",
           sched_job_queued (j));
    sched_destroy (&s);
    rec_free (&r);
}

/* ---- 3. before both speeds are known ---- */

static void
unmeasured (void)
{
    rec_t r;
    sched_worker_t *g, *c;
    sched_t *s = gpu_and_cpu (&r, 4, &g, &c);
    new_job (s, 1, 10, QC_RES_ANY, true);
    sched_dispatch (s);
    CHECK (count_for (&r, c) == 4 && count_for (&r, g) == 2,
           "unmeasured: CPU %zu, GPU %zu", count_for (&r, c), count_for (&r, g));
    /* the CPU measured, the GPU not: as before */
    sched_speed_note (c, false, 18000);
    new_job (s, 2, 10, QC_RES_ANY, true);
    sched_worker_t *c2 = sched_worker_add (s, 2, 0, NULL, 0, NULL);
    c2->ms_cpu = 18000;
    sched_dispatch (s);
    CHECK (count_for (&r, c2) == 2, "no GPU measured: the CPU slots still take slides (%zu)",
           count_for (&r, c2));
    sched_destroy (&s);
    rec_free (&r);
}

/* ---- 4. a cohort ends sooner ---- */

/* Plays a cohort of n ANY slides on a 1 GPU worker (gpu_ms a slide) and
 * a CPU worker (slots slots, cpu_ms a slide), measured beforehand, the
 * rule on or (measures taken away) off: the end of its last slide. */
static int64_t
play (size_t n, int64_t gpu_ms, int64_t cpu_ms, uint32_t slots, bool rule)
{
    rec_t r;
    sched_worker_t *g, *c;
    sched_t *s = gpu_and_cpu (&r, slots, &g, &c);
    sched_job_t *j = new_job (s, 1, n, QC_RES_ANY, true);
    int64_t now = 0, end = 0;
    /* each dispatched task runs from its dispatch (a worker starts at
       once) for its worker's time; events in time order */
    int64_t *done_at = calloc (n, sizeof *done_at);
    size_t seen = 0;
    for (int guard = 0; guard < 100000 && !sched_job_finished (j); guard++) {
        if (rule) {
            g->ms_gpu = gpu_ms;
            c->ms_cpu = cpu_ms;
        } else
            g->ms_gpu = c->ms_cpu = 0;
        sched_set_now (s, now);
        sched_dispatch (s);
        for (; seen < r.nd; seen++) {
            sched_task_t *t = r.d[seen].task;
            start (s, r.d[seen].worker, j, t->idx);
            /* a prefetched task waits for the lane's slide before it */
            int64_t begin = now;
            if (r.d[seen].worker == g)
                for (size_t i = 0; i < n; i++)
                    if (done_at[i] > begin && sched_job_task (j, i)->worker == g)
                        begin = done_at[i];
            done_at[t->idx] = begin + (r.d[seen].worker == g ? gpu_ms : cpu_ms);
        }
        /* the next result */
        int64_t next = INT64_MAX;
        size_t which = n;
        for (size_t i = 0; i < n; i++) {
            sched_task_t *t = sched_job_task (j, i);
            if (t->state == TASK_RUNNING && done_at[i] < next) {
                next = done_at[i];
                which = i;
            }
        }
        if (which == n)
            break;
        now = next;
        sched_set_now (s, now);
        finish (s, j, which, true);
        end = now;
    }
    CHECK (sched_job_finished (j), "the cohort of %zu finished", n);
    free (done_at);
    sched_destroy (&s);
    rec_free (&r);
    return end;
}

static void
cohorts (void)
{
    /* 10x as measured on the H200: a lane 0.6 s, a CPU slot 11 s, 8 slots */
    int64_t on = play (16, 600, 11000, 8, true), off = play (16, 600, 11000, 8, false);
    CHECK (on < off, "16 slides: %lld ms with the rule, %lld without", (long long) on,
           (long long) off);
    CHECK (on <= 16 * 600, "16 slides on the lane alone: %lld ms", (long long) on);
    printf ("16 slides at 10x: %.1f s with the rule, %.1f s without\n", (double) on / 1e3,
            (double) off / 1e3);
    /* a large cohort: the CPU slots still help */
    int64_t big_on = play (400, 600, 11000, 8, true), lane = 400 * 600;
    CHECK (big_on < lane, "400 slides: %lld ms with CPU slots, the lane alone %lld",
           (long long) big_on, (long long) lane);
    int64_t big_off = play (400, 600, 11000, 8, false);
    CHECK (big_on <= big_off, "400 slides: %lld ms with the rule, %lld without",
           (long long) big_on, (long long) big_off);
    printf ("400 slides at 10x: %.1f s with the rule, %.1f s without, %.1f s on the lane "
            "alone\n", (double) big_on / 1e3, (double) big_off / 1e3, (double) lane / 1e3);
}

int
main (void)
{
    measured ();
    the_rule ();
    unmeasured ();
    cohorts ();
    return check_done ("test_sched_speed");
}
