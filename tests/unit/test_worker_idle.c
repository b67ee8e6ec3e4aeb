/* A worker with nothing left to run gives back the memory it keeps for
 * the next slide: once no task has run or waited for
 * WORKER_IDLE_RELEASE_MS it calls its exec_idle (once), which for the QC
 * pipeline frees the image buffers kept for reuse
 * (kernels/image/image_cache.h). Before, a worker kept its largest
 * slide's planes for good (1.35 GB idle after a 12,000 px slide at 5x,
 * and under ulimit -v every later slide needing them failed). Not
 * between tasks, with --prefetch 0 either (its queue is empty at the end
 * of every task): the buffers serve the next slide. A real broker and
 * worker on loopback; the executor takes large buffers as a slide's
 * steps do. Also taskq's rules. */
#include <czmq.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/image/image_cache.h"
#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"
#include "worker/taskq.h"

#define BIG ((size_t) 16 << 20)

static atomic_int s_idle_calls;

/* A slide's work: large planes taken and given back (kept by the cache). */
static void
planes_exec (void *arg, const qc_task_t *task, qc_result_t *out)
{
    (void) arg;
    void *a = qc_image_cache_take (BIG), *b = qc_image_cache_take (BIG);
    qc_image_cache_give (a, BIG);
    qc_image_cache_give (b, BIG);
    zclock_sleep (30);
    qc_result_set (out, "filename", "%s", task->path ? task->path : "");
}

static void
counting_idle (void *arg)
{
    atomic_fetch_add (&s_idle_calls, 1);
    qc_worker_exec_pipeline_idle (arg);
}

static void
test_taskq_done (void)
{
    taskq_t q;
    CHECK (taskq_init (&q) == 0);
    qc_task_t t = {0}, got = {0};
    CHECK (taskq_push (&q, 0, &t) == 0 && taskq_push (&q, 1, &t) == 0);
    CHECK (taskq_pop (&q, 0, &got) == 0);
    CHECK (!taskq_done (&q), "idle while a GPU lane holds a task");
    CHECK (taskq_pop (&q, 1, &got) == 0 && taskq_push (&q, 0, &t) == 0
           && taskq_pop (&q, 0, &got) == 0);
    CHECK (!taskq_done (&q), "idle while another task runs");
    CHECK (!taskq_idle_due (&q, zclock_mono (), 0), "idle due while a task runs");
    CHECK (taskq_done (&q), "not idle once the last task ended");
    int64_t now = zclock_mono ();
    CHECK (!taskq_idle_due (&q, now, 1000), "idle due at once");
    CHECK (taskq_idle_due (&q, now + 1000, 1000), "not idle due after the delay");
    CHECK (!taskq_idle_due (&q, now + 5000, 1000), "idle due twice in one spell");
    taskq_fini (&q);
}

/* 6 tasks on a worker of slots and prefetch: every result and DONE, the
 * image buffers freed once idle, exec_idle called once. */
static void
run (uint32_t slots, uint32_t prefetch)
{
    atomic_store (&s_idle_calls, 0);
    char ep[128], err[512];
    qc_broker_t *b = fx_broker_new (NULL, ep, err, sizeof err);
    CHECK (b != NULL, "%s", err);
    if (!b)
        return;
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    qc_worker_config_t wc;
    qc_worker_config_defaults (&wc);
    wc.endpoint = ep;
    wc.name = "idle";
    wc.slots = slots;
    wc.prefetch = prefetch;
    wc.heartbeat_ms = 200;
    wc.exec = planes_exec;
    wc.exec_idle = counting_idle;
    qc_worker_t *w = qc_worker_new (&wc);
    CHECK (w != NULL);

    zsock_t *client = zsock_new_dealer (ep);
    char *slides[] = {"/a.svs", "/b.svs", "/c.svs", "/d.svs", "/e.svs", "/f.svs"};
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = 0x1d1eULL, .slides = slides,
                    .nslides = 6, .final = true, .hb_ms = 1000};
    CHECK (client && qc_msg_send (&sub, zsock_resolve (client), NULL) == 0);
    int results = 0, done = 0;
    zsock_set_rcvtimeo (client, 100);
    for (int64_t until = zclock_mono () + 15000; client && !done && zclock_mono () < until;) {
        zmsg_t *raw = zmsg_recv (client);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_RESULT) {
            results++;
            qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = m->job, .key = m->key,
                            .seq = m->seq};
            qc_msg_send (&ack, zsock_resolve (client), NULL);
        }
        done += m && m->command == QC_DONE;
        qc_msg_destroy (&m);
    }
    CHECK (results == 6 && done == 1, "slots %u prefetch %u: %d results, %d DONE", slots,
           prefetch, results, done);
    CHECK (atomic_load (&s_idle_calls) == 0, "slots %u prefetch %u: exec_idle called "
           "while the job ran", slots, prefetch);
    size_t held = 1;
    for (int i = 0; i < 200 && held; i++) {
        qc_image_cache_held (NULL, &held);
        if (held)
            zclock_sleep (50);
    }
    CHECK (held == 0, "slots %u prefetch %u: an idle worker keeps %zu bytes of image "
           "buffers", slots, prefetch, held);
    zclock_sleep (500);
    int calls = atomic_load (&s_idle_calls);
    CHECK (calls == 1, "slots %u prefetch %u: exec_idle called %d times (once, when idle)",
           slots, prefetch, calls);

    qc_worker_destroy (&w);
    zsock_destroy (&client);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
}

int
main (void)
{
    zsys_handler_set (NULL);
    test_taskq_done ();
    run (2, 1);               /* the default: a task waits behind each slot */
    run (1, 0);               /* --prefetch 0: the queue empty after each task */
    return check_done ("test_worker_idle");
}
