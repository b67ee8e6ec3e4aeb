/* A worker whose broker is replaced by one of another protocol version
 * (a lab that upgraded the broker and not yet its workers). That broker
 * answers as PROTOCOL.md section 2 says: READY with DISCONNECT
 * "refused: ...", HEARTBEAT (a client's command in its table) with
 * ERROR, both in its own version. The worker, registered with the old
 * broker, keeps beating on its socket: it must take the ERROR as a
 * refusal, say why and stop counting itself registered. Before, it
 * ignored the ERROR, which also kept the broker "heard", and sat idle
 * for ever without a word. The brokers here are a ROUTER in this test:
 * first of our version (it answers READY with a HEARTBEAT), then of
 * version 3. */
#include <czmq.h>
#include <stdbool.h>
#include <string.h>

#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

#define THEIRS 3              /* the broker's protocol version */

/* Sends m to peer in protocol version THEIRS. */
static void
send_theirs (zsock_t *router, zframe_t *peer, qc_msg_t *m)
{
    zmsg_t *msg = zmsg_new ();
    if (msg && qc_msg_encode (m, msg) == 0) {
        zframe_data (zmsg_first (msg))[2] = THEIRS;
        zframe_t *to = zframe_dup (peer);
        zmsg_prepend (msg, &to);
        zmsg_send (&msg, router);
    }
    zmsg_destroy (&msg);
}

int
main (void)
{
    zsys_handler_set (NULL);
    zsock_t *router = zsock_new_router ("tcp://127.0.0.1:*");
    CHECK (router != NULL, "a router on loopback");
    if (!router)
        return check_done ("test_worker_foreign");
    char ep[128];
    snprintf (ep, sizeof ep, "tcp://127.0.0.1:%d", zsock_endpoint (router)
              ? atoi (strrchr (zsock_endpoint (router), ':') + 1) : 0);

    qc_worker_t *w = fx_noop_worker (ep, "upgraded", 100);
    CHECK (w != NULL);
    if (!w) {
        zsock_destroy (&router);
        return check_done ("test_worker_foreign");
    }
    static const char why[] = "this broker speaks protocol version 3 (qc 9.9.9), this "
                              "program 2: run the same version of qc-worker, qc-submit "
                              "and qc-status as qc-broker";
    char refused[sizeof why + 16];
    snprintf (refused, sizeof refused, "refused: %s", why);
    int readies = 0, heartbeats = 0;
    bool was = false;         /* registered with the broker of our version */
    zsock_set_rcvtimeo (router, 20);
    int64_t upgraded = zclock_mono () + 1000, until = upgraded + 3000;
    while (zclock_mono () < until) {
        bool ours = zclock_mono () < upgraded;
        was |= ours && qc_worker_connected (w);
        zmsg_t *in = zmsg_recv (router);
        if (!in)
            continue;
        zframe_t *peer = zmsg_pop (in);
        zframe_t *hdr = zmsg_first (in);
        if (peer && hdr && zframe_size (hdr) == 4) {
            uint8_t cmd = zframe_data (hdr)[3];
            if (ours) {
                qc_msg_t h = {.command = QC_HEARTBEAT, .gpu = -1};
                qc_msg_send (&h, zsock_resolve (router), peer);
            } else if (cmd == QC_READY) {
                readies++;
                qc_msg_t d = {.command = QC_DISCONNECT, .gpu = -1, .reason = refused};
                send_theirs (router, peer, &d);
            } else if (cmd == QC_HEARTBEAT) {
                heartbeats++;
                qc_msg_t e = {.command = QC_ERROR, .gpu = -1, .reason = (char *) why};
                send_theirs (router, peer, &e);
            }
        }
        zframe_destroy (&peer);
        zmsg_destroy (&in);
    }
    char said[1024] = "";
    qc_worker_why (w, said, sizeof said);
    CHECK (was, "the worker registered with the broker of its version");
    CHECK (heartbeats >= 1, "it beat to the upgraded broker (%d HEARTBEATs, %d READYs)",
           heartbeats, readies);
    CHECK (!qc_worker_connected (w), "it no longer takes itself for registered");
    CHECK (strstr (said, "protocol version 3") != NULL, "it says why: '%s'", said);
    qc_worker_destroy (&w);
    zsock_destroy (&router);
    return check_done ("test_worker_foreign");
}
