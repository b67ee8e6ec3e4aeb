/* A worker's log records reach a job's client only while the worker
 * runs (or ran, taken back) one of the job's tasks. A worker that ran a
 * task of the job once knows the job's key, which the broker checks on
 * every LOG, and could have written into that job's qc.log ever after
 * (helper C's review, F10). A real broker on loopback, a client and a
 * worker speaking the protocol by hand: the record the worker sends
 * while it runs the task reaches the client, the one after its RESULT
 * does not, nor does one about a job it never ran. */
#include <czmq.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

/* The next message s gets within ms of command want (others skipped),
 * or NULL. */
static qc_msg_t *
next_of (zsock_t *s, uint8_t want, int ms)
{
    zsock_set_rcvtimeo (s, 50);
    for (int64_t until = zclock_mono () + ms; zclock_mono () < until;) {
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == want)
            return m;
        qc_msg_destroy (&m);
    }
    return NULL;
}

/* The messages of the job's client within ms: how many LOG records say
 * text, and whether its RESULT came. */
static int
logs_saying (zsock_t *client, const char *text, int ms, bool *result)
{
    int n = 0;
    zsock_set_rcvtimeo (client, 50);
    for (int64_t until = zclock_mono () + ms; zclock_mono () < until;) {
        zmsg_t *raw = zmsg_recv (client);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_LOG && m->message && strcmp (m->message, text) == 0)
            n++;
        if (m && m->command == QC_RESULT && result)
            *result = true;
        qc_msg_destroy (&m);
    }
    return n;
}

static void
send_log (zsock_t *worker, uint64_t job, uint64_t key, uint64_t idx, const char *text)
{
    qc_msg_t log = {.command = QC_LOG, .gpu = -1, .job = job, .key = key, .task = idx + 1,
                    .level = 2, .module = "test", .message = (char *) text};
    CHECK (qc_msg_send (&log, zsock_resolve (worker), NULL) == 0);
}

int
main (void)
{
    zsys_handler_set (NULL);
    char ep[128], err[512];
    qc_broker_t *b = fx_broker_new (NULL, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return check_done ("test_log_after_result");
    zactor_t *actor = zactor_new (qc_broker_actor, b);

    zsock_t *worker = zsock_new_dealer (ep), *client = zsock_new_dealer (ep);
    qc_msg_t ready = {.command = QC_READY, .gpu = -1, .name = "w", .host = "h",
                      .version = "0", .slots = 1, .hb_ms = 1000};
    CHECK (qc_msg_send (&ready, zsock_resolve (worker), NULL) == 0);
    char *slides[] = {"/a.svs"};
    const uint64_t key = 0x10610610610ULL;
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = key, .slides = slides,
                    .nslides = 1, .final = true, .hb_ms = 1000};
    CHECK (qc_msg_send (&sub, zsock_resolve (client), NULL) == 0);
    qc_msg_t *task = next_of (worker, QC_TASK, 3000);
    CHECK (task && task->key == key, "the worker got the task");
    if (task) {
        qc_msg_t started = {.command = QC_STARTED, .gpu = -1, .job = task->job,
                            .key = key, .idx = task->idx, .attempt = task->attempt};
        CHECK (qc_msg_send (&started, zsock_resolve (worker), NULL) == 0);
        send_log (worker, task->job, key, task->idx, "while it runs");
        CHECK (logs_saying (client, "while it runs", 700, NULL) == 1,
               "a record of the task the worker runs reaches the client");

        qc_msg_t res = {.command = QC_RESULT, .gpu = -1, .job = task->job, .key = key,
                        .idx = task->idx, .attempt = task->attempt, .path = "/a.svs",
                        .worker = "w", .result = qc_result_new ()};
        qc_result_set (res.result, "filename", "a.svs");
        CHECK (qc_msg_send (&res, zsock_resolve (worker), NULL) == 0);
        qc_result_destroy (&res.result);
        send_log (worker, task->job, key, task->idx, "after its result");
        /* a job the worker never ran, with a key it guessed right (a
           client's own job: its key is the client's) */
        send_log (worker, task->job + 1, key, 0, "of another job");
        bool result = false;
        CHECK (logs_saying (client, "after its result", 1000, &result) == 0,
               "a record after the task's RESULT is dropped");
        CHECK (result, "the RESULT itself reached the client");
        CHECK (logs_saying (client, "of another job", 300, NULL) == 0);
        /* the broker is well: it answers a STATUS */
        qc_msg_t st = {.command = QC_STATUS, .gpu = -1};
        CHECK (qc_msg_send (&st, zsock_resolve (client), NULL) == 0);
        qc_msg_t *reply = next_of (client, QC_STATUS_REPLY, 2000);
        CHECK (reply && reply->nworkers == 1, "STATUS answered");
        qc_msg_destroy (&reply);
    }
    qc_msg_destroy (&task);
    zsock_destroy (&client);
    zsock_destroy (&worker);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_log_after_result");
}
