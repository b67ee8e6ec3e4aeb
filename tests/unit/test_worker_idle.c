/* A worker with nothing left to run gives back the memory it keeps for
 * the next slide: when its last running task ends and none is queued it
 * calls its exec_idle, which for the QC pipeline frees the image
 * buffers kept for reuse (kernels/image/image_cache.h). Before, a worker
 * kept its largest slide's planes for good (1.35 GB idle after a 12,000
 * px slide at 5x, and under ulimit -v every later slide needing them
 * failed). A real broker and worker on loopback; the executor takes
 * large buffers as a slide's steps do. Also taskq_done's rule. */
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
    CHECK (taskq_done (&q), "not idle once the last task ended");
    taskq_fini (&q);
}

int
main (void)
{
    zsys_handler_set (NULL);
    test_taskq_done ();

    char ep[128], err[512];
    qc_broker_t *b = fx_broker_new (NULL, ep, err, sizeof err);
    CHECK (b != NULL, "%s", err);
    if (!b)
        return check_done ("test_worker_idle");
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    qc_worker_config_t wc;
    qc_worker_config_defaults (&wc);
    wc.endpoint = ep;
    wc.name = "idle";
    wc.slots = 2;
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
    CHECK (results == 6 && done == 1, "%d results, %d DONE", results, done);
    /* the last result may come before its task's end: a moment */
    size_t held = 1;
    for (int i = 0; i < 50 && held; i++) {
        qc_image_cache_held (NULL, &held);
        if (held)
            zclock_sleep (20);
    }
    CHECK (held == 0, "an idle worker keeps %zu bytes of image buffers", held);
    int calls = atomic_load (&s_idle_calls);
    CHECK (calls >= 1 && calls < 6, "exec_idle called %d times for 6 tasks on 2 slots "
           "(once the queue is empty, not after every task)", calls);

    qc_worker_destroy (&w);
    zsock_destroy (&client);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_worker_idle");
}
