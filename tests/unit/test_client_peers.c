/* --max-peers counts client peers, not their jobs (qc-broker --help:
 * "workers and clients it holds at once"): a broker with --max-peers 2
 * and no state folder takes 3 jobs from one socket (one peer: before,
 * each attached job counted as one, and its 3rd job was refused) and a
 * first job from a second socket, and refuses a third socket's, saying
 * the limit is --max-peers's (before, it blamed the open-file limit). */
#include <czmq.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

/* A first SUBMIT (one slide, not final: the job stays) from s, and its
 * answer: ACCEPTED (true) or not, the ERROR's reason into why. */
static bool
submit_beating (zsock_t *s, uint64_t key, uint32_t hb_ms, char *why, size_t len)
{
    char *slides[] = {"/a.svs"};
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = key, .slides = slides,
                    .nslides = 1, .hb_ms = hb_ms};
    *why = '\0';
    if (qc_msg_send (&sub, zsock_resolve (s), NULL))
        return false;
    zsock_set_rcvtimeo (s, 3000);
    for (;;) {
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (!m)
            return false;
        uint8_t cmd = m->command;
        if (cmd == QC_ERROR)
            snprintf (why, len, "%s", m->reason ? m->reason : "");
        qc_msg_destroy (&m);
        if (cmd == QC_ACCEPTED || cmd == QC_ERROR)
            return cmd == QC_ACCEPTED;
    }
}

static bool
submit (zsock_t *s, uint64_t key, char *why, size_t len)
{
    return submit_beating (s, key, 60000, why, len);
}

/* A job's first SUBMIT sent again from a new socket, its client gone,
 * takes a peer as an ATTACH does: refused when the broker is full
 * (before, it was taken without a look at --max-peers). */
static void
test_submit_again_counts (void)
{
    qc_broker_config_t bc;
    fx_broker_config (&bc, NULL);
    bc.max_peers = 1;
    char err[512], ep[128], why[1024];
    qc_broker_t *b = fx_broker_new_with (&bc, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return;
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    zsock_t *gone = zsock_new_dealer (ep), *other = zsock_new_dealer (ep),
            *again = zsock_new_dealer (ep);
    /* a client that beats every 20 ms and then never does: gone within
       a few beats (liveness x 20 ms) */
    CHECK (submit_beating (gone, 0x500, 20, why, sizeof why), "first job: %s", why);
    zclock_sleep (500);
    CHECK (submit (other, 0x600, why, sizeof why), "the one peer, once the first client "
           "is gone: %s", why);
    CHECK (!submit (again, 0x500, why, sizeof why)
           && strstr (why, "broker is full: it holds 1 peers"),
           "the first job's SUBMIT again from a third socket, refused: %s",
           why[0] ? why : "accepted");
    zsock_destroy (&gone);
    zsock_destroy (&other);
    zsock_destroy (&again);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
}

/* A client interrupted after its first SUBMIT, before reading the
 * ACCEPTED that would have told it the job's id: it cancels the job by
 * its key (CANCEL with job 0), and the broker cancels that job, which
 * otherwise ran for no one until --linger. */
static void
test_cancel_by_key (void)
{
    qc_broker_config_t bc;
    fx_broker_config (&bc, NULL);
    char err[512], ep[128];
    qc_broker_t *b = fx_broker_new_with (&bc, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return;
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    zsock_t *s = zsock_new_dealer (ep);
    char *slides[] = {"/a.svs", "/b.svs"};
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = 0x777, .slides = slides,
                    .nslides = 2, .final = true, .hb_ms = 60000};
    qc_msg_t cancel = {.command = QC_CANCEL, .gpu = -1, .key = 0x777};
    qc_msg_t status = {.command = QC_STATUS, .gpu = -1};
    CHECK (qc_msg_send (&sub, zsock_resolve (s), NULL) == 0
           && qc_msg_send (&cancel, zsock_resolve (s), NULL) == 0);
    zsock_set_rcvtimeo (s, 3000);
    int accepted = 0;
    bool asked = false, cancelled = false;
    for (int i = 0; i < 50 && !cancelled; i++) {
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (!m)
            break;
        accepted += m->command == QC_ACCEPTED;
        CHECK (m->command != QC_ERROR, "refused: %s", m->reason ? m->reason : "");
        if (accepted == 2 && !asked) {     /* the SUBMIT's, then the CANCEL's */
            asked = qc_msg_send (&status, zsock_resolve (s), NULL) == 0;
        }
        if (m->command == QC_STATUS_REPLY)
            cancelled = m->njobs == 1 && m->jobs[0].cancelled && m->jobs[0].queued == 0;
        qc_msg_destroy (&m);
    }
    CHECK (accepted == 2 && cancelled, "CANCEL by key: %d ACCEPTED, the job %s", accepted,
           cancelled ? "cancelled" : "not cancelled");
    zsock_destroy (&s);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
}

int
main (void)
{
    zsys_handler_set (NULL);
    qc_broker_config_t bc;
    fx_broker_config (&bc, NULL);
    bc.max_peers = 2;
    char err[512], ep[128];
    qc_broker_t *b = fx_broker_new_with (&bc, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return check_done ("test_client_peers");
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    zsock_t *one = zsock_new_dealer (ep), *two = zsock_new_dealer (ep),
            *three = zsock_new_dealer (ep);
    char why[1024];
    for (uint64_t k = 1; k <= 3; k++)
        CHECK (submit (one, 0x100 + k, why, sizeof why), "job %llu of one socket accepted "
               "under --max-peers 2 (%s)", (unsigned long long) k, why);
    CHECK (submit (two, 0x200, why, sizeof why), "a second socket's job accepted: two "
           "peers (%s)", why);
    CHECK (!submit (three, 0x300, why, sizeof why)
           && strstr (why, "broker is full: it holds 2 peers (qc-broker --max-peers "
                      "allows 2)"), "a third socket refused, naming --max-peers: %s", why);
    CHECK (!strstr (why, "open-file"), "the refusal does not blame the open-file "
           "limit: %s", why);
    CHECK (submit (one, 0x104, why, sizeof why), "the first socket's 4th job accepted: it "
           "is one of the two peers (%s)", why);
    zsock_destroy (&one);
    zsock_destroy (&two);
    zsock_destroy (&three);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    test_submit_again_counts ();
    test_cancel_by_key ();
    return check_done ("test_client_peers");
}
