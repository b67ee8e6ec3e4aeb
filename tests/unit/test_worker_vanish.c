/* A worker may ask for a long heartbeat (hb_ms up to 10 minutes). One that
 * registers and then closes its connection without a word (a crashed
 * host's process, a hostile peer) held the slides sent to it for
 * liveness x hb_ms: 30 minutes, a job stalled beside an idle worker (a
 * hostile tester's review). The broker (ROUTER_MANDATORY) finds the
 * connection closed at its next send and judges such a worker by its own
 * heartbeat: a real broker on loopback beating every 200 ms, a peer that
 * sends READY with hb_ms 600000 and closes is gone within seconds, its
 * slide run by a real worker; one that drains and closes is gone too; a
 * peer with the same long beat whose connection stays open stays
 * registered (its ZeroMQ takes the broker's heartbeats). */
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

/* A raw peer that registers as a worker of one slot beating every 600 s. */
static zsock_t *
ghost (const char *ep, const char *name)
{
    zsock_t *s = zsock_new_dealer (ep);
    if (!s)
        return NULL;
    zsock_set_linger (s, 100);
    qc_msg_t m = {.command = QC_READY, .gpu = -1, .name = (char *) name, .slots = 1,
                  .hb_ms = 600000};
    qc_msg_send (&m, zsock_resolve (s), NULL);
    return s;
}

/* qc-status's view: the workers registered, as names ("a,b,"), and the
 * first job's done count, asked of the broker; false when no answer */
static bool
status (const char *ep, char *names, size_t cap, uint64_t *done)
{
    zsock_t *s = zsock_new_dealer (ep);
    if (!s)
        return false;
    qc_msg_t q = {.command = QC_STATUS, .gpu = -1};
    qc_msg_send (&q, zsock_resolve (s), NULL);
    zsock_set_rcvtimeo (s, 2000);
    zmsg_t *raw = zmsg_recv (s);
    qc_msg_t *r = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
    bool ok = r && r->command == QC_STATUS_REPLY;
    names[0] = '\0';
    for (size_t i = 0; ok && i < r->nworkers; i++) {
        size_t len = strlen (names);
        snprintf (names + len, cap - len, "%s,", r->workers[i].name ? r->workers[i].name : "?");
    }
    if (done)
        *done = ok && r->njobs ? r->jobs[0].done : 0;
    qc_msg_destroy (&r);
    zmsg_destroy (&raw);
    zsock_destroy (&s);
    return ok;
}

/* Waits up to ms for the registered workers to be want. */
static bool
workers_become (const char *ep, const char *want, int ms, char *names, size_t cap)
{
    for (int64_t until = zclock_mono () + ms; zclock_mono () < until; zclock_sleep (100))
        if (status (ep, names, cap, NULL) && strcmp (names, want) == 0)
            return true;
    return false;
}

int
main (void)
{
    zsys_handler_set (NULL);
    char ep[128], err[512], names[512];
    qc_broker_t *b = fx_broker_new (NULL, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return check_done ("test_worker_vanish");
    zactor_t *actor = zactor_new (qc_broker_actor, b);

    /* registers, then closes its socket: gone within liveness x 200 ms
       of the broker's next beat, not 30 minutes */
    zsock_t *g = ghost (ep, "ghost");
    CHECK (workers_become (ep, "ghost,", 3000, names, sizeof names), "ghost registered: %s",
           names);
    zsock_destroy (&g);
    int64_t t0 = zclock_mono ();
    CHECK (workers_become (ep, "", 5000, names, sizeof names),
           "a worker whose connection closed is still registered after 5 s: %s", names);
    CHECK (zclock_mono () - t0 < 5000, "gone after %lld ms", (long long) (zclock_mono () - t0));

    /* one with the same long beat whose connection stays open stays */
    zsock_t *alive = ghost (ep, "patient");
    CHECK (workers_become (ep, "patient,", 3000, names, sizeof names), "patient: %s", names);
    zclock_sleep (2000);    /* past liveness x the broker's 200 ms beat */
    CHECK (status (ep, names, sizeof names, NULL) && strcmp (names, "patient,") == 0,
           "a long-beat worker on an open connection was taken for gone: '%s'", names);

    /* a job of one slide while the patient worker holds the only slot
       the broker knows, then the patient one goes without a word: its
       slide runs on a real worker that joins */
    zsock_t *client = zsock_new_dealer (ep);
    char *slides[] = {"/slides/one.svs"};
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = qc_proto_new_key (),
                    .slides = slides, .nslides = 1, .final = true};
    qc_msg_send (&sub, zsock_resolve (client), NULL);
    zclock_sleep (500);     /* dispatched to "patient" */
    zsock_destroy (&alive);
    qc_worker_t *w = fx_noop_worker (ep, "real", 200);
    CHECK (w != NULL, "a real worker");
    uint64_t done = 0;
    for (int64_t until = zclock_mono () + 8000; zclock_mono () < until && !done;
         zclock_sleep (100))
        status (ep, names, sizeof names, &done);
    CHECK (done == 1, "the slide held by the vanished worker ran elsewhere within 8 s");

    /* a worker that drains holding nothing and closes: gone as well */
    g = ghost (ep, "drained");
    CHECK (workers_become (ep, "drained,real,", 3000, names, sizeof names)
               || workers_become (ep, "real,drained,", 100, names, sizeof names),
           "drained registered: %s", names);
    qc_msg_t bye = {.command = QC_DISCONNECT, .gpu = -1, .drain = true};
    qc_msg_send (&bye, zsock_resolve (g), NULL);
    zclock_sleep (200);
    zsock_destroy (&g);
    CHECK (workers_become (ep, "real,", 5000, names, sizeof names),
           "a drained worker whose connection closed is still listed: %s", names);

    qc_worker_destroy (&w);
    zsock_destroy (&client);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_worker_vanish");
}
