/* A message of this protocol version with a command number it does not
 * have (a newer program's): a peer that is no registered worker gets
 * ERROR naming the command and this broker's protocol version and build
 * (before: nothing, the message was only logged, and the program waited
 * in silence), once in the refusals' quiet time; a registered worker
 * gets nothing, as before. */
#include <czmq.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

/* Command 99 with an empty map, as a newer program would send it. */
static void
send_unknown (zsock_t *s)
{
    static const uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, 99};
    static const uint8_t body[1] = {0x80};
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, hdr, sizeof hdr);
    zmsg_addmem (msg, body, sizeof body);
    CHECK (zmsg_send (&msg, s) == 0);
}

/* The reason of the first ERROR s gets within ms into why ("" when none
 * came); other messages (HEARTBEAT) are skipped. */
static void
error_within (zsock_t *s, int ms, char *why, size_t len)
{
    *why = '\0';
    zsock_set_rcvtimeo (s, 50);
    for (int64_t until = zclock_mono () + ms; zclock_mono () < until && !*why;) {
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_ERROR)
            snprintf (why, len, "%s", m->reason ? m->reason : "(none)");
        qc_msg_destroy (&m);
    }
}

int
main (void)
{
    zsys_handler_set (NULL);
    char ep[128], err[512], why[1024];
    qc_broker_t *b = fx_broker_new (NULL, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return check_done ("test_unknown_command");
    zactor_t *actor = zactor_new (qc_broker_actor, b);

    zsock_t *client = zsock_new_dealer (ep);
    send_unknown (client);
    error_within (client, 2000, why, sizeof why);
    CHECK (strstr (why, "unknown command 99: this broker speaks protocol version 2 (qc ")
           && strstr (why, "which has no command 99"), "a client's unknown command "
           "answered ERROR naming it and the broker's version: '%s'", why);
    send_unknown (client);
    error_within (client, 500, why, sizeof why);
    CHECK (!*why, "the same again at once: not answered (refusals are rate-limited): "
           "'%s'", why);

    zsock_t *worker = zsock_new_dealer (ep);
    qc_msg_t ready = {.command = QC_READY, .gpu = -1, .name = "w", .host = "h",
                      .version = "0", .slots = 1, .hb_ms = 1000};
    CHECK (qc_msg_send (&ready, zsock_resolve (worker), NULL) == 0);
    zclock_sleep (300);         /* registered */
    send_unknown (worker);
    error_within (worker, 700, why, sizeof why);
    CHECK (!*why, "a registered worker's unknown command: not answered: '%s'", why);

    zsock_destroy (&client);
    zsock_destroy (&worker);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_unknown_command");
}
