/* Messages the broker reads in one burst, before its commit (each case
 * queues them in its socket before it starts), with a state folder and
 * without one:
 *  - a client's first SUBMIT sent again from another socket (a client
 *    that lost its socket and resent at once): both senders get the
 *    job's ACCEPTED, and its results go to one of them (the later: it is
 *    the job's client, as after an ATTACH). Before, the second sender was
 *    never answered.
 *  - a CANCEL behind a SUBMIT batch of the same job: the batch is taken,
 *    then cancelled, as the journal has them. Before, the cancel came
 *    first and the batches were refused as "broker out of memory" (a
 *    restart then brought them back as cancelled slides). */
#include <czmq.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

typedef struct {
    uint64_t job;             /* from its ACCEPTED; 0: none */
    int results, done;
} seen_t;

/* Reads what s got, answering RESULTs with ACK; at most wait_ms. */
static void
drain (zsock_t *s, seen_t *seen, int wait_ms)
{
    zsock_set_rcvtimeo (s, 50);
    for (int64_t until = zclock_mono () + wait_ms; zclock_mono () < until;) {
        zmsg_t *raw = zmsg_recv (s);
        if (!raw)
            continue;
        qc_msg_t *m = qc_msg_decode (raw, NULL, 0);
        zmsg_destroy (&raw);
        if (m && m->command == QC_ACCEPTED && !seen->job)
            seen->job = m->job;
        if (m && m->command == QC_RESULT) {
            seen->results++;
            qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = m->job, .key = m->key,
                            .seq = m->seq};
            qc_msg_send (&ack, zsock_resolve (s), NULL);
        }
        if (m && m->command == QC_DONE)
            seen->done++;
        qc_msg_destroy (&m);
    }
}

/* A broker on loopback (state_dir NULL: none), not yet running: what
 * is sent to ep waits in its socket. NULL (a failed check) when it
 * cannot start. */
static qc_broker_t *
new_broker (const char *state_dir, const char *mode, char ep[128])
{
    char err[512];
    qc_broker_t *b = fx_broker_new (state_dir, ep, err, sizeof err);
    CHECK (b != NULL, "%s: %s", mode, err);
    return b;
}

static void
run (const char *state_dir)
{
    const char *mode = state_dir ? "state folder" : "no state";
    char ep[128];
    qc_broker_t *b = new_broker (state_dir, mode, ep);
    if (!b)
        return;
    zsock_t *first = zsock_new_dealer (ep), *again = zsock_new_dealer (ep);
    char *slides[] = {"/a.svs", "/b.svs"};
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = 0x5eed5eed5eedULL,
                    .slides = slides, .nslides = 2, .final = true, .hb_ms = 1000};
    CHECK (qc_msg_send (&sub, zsock_resolve (first), NULL) == 0);
    CHECK (qc_msg_send (&sub, zsock_resolve (again), NULL) == 0);
    zclock_sleep (300);         /* both in the broker's socket */
    zactor_t *actor = zactor_new (qc_broker_actor, b);

    seen_t s1 = {0}, s2 = {0};
    drain (first, &s1, 1500);
    drain (again, &s2, 200);
    CHECK (s1.job && s1.job == s2.job, "%s: both senders told the job (%llu, %llu)", mode,
           (unsigned long long) s1.job, (unsigned long long) s2.job);

    qc_worker_t *w = fx_noop_worker (ep, "steady", 200);
    CHECK (w != NULL);
    for (int i = 0; i < 100 && (s1.done + s2.done) == 0; i++) {
        drain (first, &s1, 50);
        drain (again, &s2, 50);
    }
    CHECK (s1.results + s2.results == 2 && s1.done + s2.done == 1
           && (s1.results == 0 || s2.results == 0),
           "%s: the two results and DONE went to one sender (%d + %d results, %d + %d DONE)",
           mode, s1.results, s2.results, s1.done, s2.done);

    qc_worker_destroy (&w);
    zsock_destroy (&first);
    zsock_destroy (&again);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
}

/* First SUBMIT (2 slides), a second batch (2 more, final) and a CANCEL,
 * on one socket, all read in one burst: each SUBMIT and the CANCEL are
 * answered ACCEPTED, no ERROR, and the job ends with its 4 slides
 * cancelled. */
static void
cancel_behind_batch (const char *state_dir)
{
    const char *mode = state_dir ? "state folder" : "no state";
    char ep[128];
    qc_broker_t *b = new_broker (state_dir, mode, ep);
    if (!b)
        return;
    zsock_t *c = zsock_new_dealer (ep);
    char *first[] = {"/a.svs", "/b.svs"}, *more[] = {"/c.svs", "/d.svs"};
    uint64_t key = 0xca9ce1ULL;
    /* a new broker's first job is 1 (its folder is new) */
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = key, .slides = first,
                    .nslides = 2, .hb_ms = 1000};
    qc_msg_t sub2 = {.command = QC_SUBMIT, .gpu = -1, .job = 1, .key = key, .base = 2,
                     .slides = more, .nslides = 2, .final = true, .hb_ms = 1000};
    qc_msg_t cancel = {.command = QC_CANCEL, .gpu = -1, .job = 1, .key = key};
    CHECK (qc_msg_send (&sub, zsock_resolve (c), NULL) == 0
           && qc_msg_send (&sub2, zsock_resolve (c), NULL) == 0
           && qc_msg_send (&cancel, zsock_resolve (c), NULL) == 0);
    zclock_sleep (300);
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    int accepted = 0, errors = 0, results = 0, cancelled = 0, done = 0;
    uint64_t total = 0;
    zsock_set_rcvtimeo (c, 50);
    for (int64_t until = zclock_mono () + 5000; zclock_mono () < until && !done;) {
        zmsg_t *raw = zmsg_recv (c);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_ACCEPTED)
            accepted++;
        if (m && m->command == QC_ERROR) {
            errors++;
            fprintf (stderr, "%s: ERROR %s\n", mode, m->reason ? m->reason : "");
        }
        if (m && m->command == QC_RESULT) {
            results++;
            const char *e = m->result ? m->result->error : NULL;
            cancelled += !m->result->ok && e && strstr (e, "cancelled");
            qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = m->job, .key = m->key,
                            .seq = m->seq};
            qc_msg_send (&ack, zsock_resolve (c), NULL);
        }
        if (m && m->command == QC_DONE) {
            done = 1;
            total = m->total;
        }
        qc_msg_destroy (&m);
    }
    CHECK (accepted == 3 && errors == 0, "%s: the two SUBMITs and the CANCEL answered "
           "ACCEPTED (%d), no ERROR (%d)", mode, accepted, errors);
    CHECK (done && total == 4 && results == 4 && cancelled == 4,
           "%s: the job ended with its 4 slides cancelled (DONE %d, total %llu, %d results, "
           "%d cancelled)", mode, done, (unsigned long long) total, results, cancelled);
    zsock_destroy (&c);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
}

int
main (void)
{
    zsys_handler_set (NULL);
    char dir[] = "/tmp/qc-submit-again.XXXXXX";
    CHECK (mkdtemp (dir) != NULL, "a temporary folder");
    run (NULL);
    run (dir);
    cancel_behind_batch (NULL);
    char dir2[sizeof dir + 8];
    snprintf (dir2, sizeof dir2, "%s/c", dir);
    cancel_behind_batch (dir2);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!getenv ("KEEP") && system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", dir);
    return check_done ("test_submit_burst");
}
