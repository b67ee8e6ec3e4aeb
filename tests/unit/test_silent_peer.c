/* A connection whose peer went silent for good (its machine lost power:
 * the TCP connection stays half open) is closed by the broker's ZeroMQ
 * PINGs (broker.h, zmtp_heartbeat_ms): without them, once its worker is
 * declared dead the broker writes nothing to it, and the connection, a
 * descriptor, stays for ever (helper C's review, F8). A real broker on
 * loopback with PINGs every 200 ms; a raw TCP peer that completes the
 * ZMTP handshake and then answers nothing is closed within a few
 * seconds, while a real ZeroMQ peer that sends nothing of its own stays
 * (its ZeroMQ answers the PINGs) and is answered after. With the PINGs
 * off the silent peer is still open after the same time. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

/* A raw peer on port: ZMTP 3.1 greeting (mechanism NULL) and READY as a
 * DEALER, then the broker's greeting read. The socket, or -1. */
static int
raw_peer (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port)};
    inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd < 0 || connect (fd, (struct sockaddr *) &sa, sizeof sa) != 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    uint8_t greet[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 1, 'N', 'U', 'L', 'L'};
    static const uint8_t ready[] = {0x04, 28, 5, 'R', 'E', 'A', 'D', 'Y', 11, 'S', 'o', 'c',
                                    'k', 'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 6,
                                    'D', 'E', 'A', 'L', 'E', 'R'};
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t answer[256];
    if (send (fd, greet, sizeof greet, MSG_NOSIGNAL) != (ssize_t) sizeof greet
        || send (fd, ready, sizeof ready, MSG_NOSIGNAL) != (ssize_t) sizeof ready
        || recv (fd, answer, sizeof answer, 0) <= 0) {
        close (fd);
        return -1;
    }
    return fd;
}

/* Reads fd (answering nothing) for up to ms: 1 when the broker closed it. */
static int
closed_within (int fd, int ms)
{
    uint8_t buf[256];
    for (int64_t until = zclock_mono () + ms; zclock_mono () < until;) {
        ssize_t r = recv (fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return 1;
    }
    return 0;
}

/* A broker with PINGs every ping_ms (0: none), running; its port. */
static qc_broker_t *
broker_pinging (uint32_t ping_ms, zactor_t **actor, int *port)
{
    char ep[128], err[512];
    qc_broker_config_t bc;
    fx_broker_config (&bc, NULL);
    bc.zmtp_heartbeat_ms = ping_ms;
    qc_broker_t *b = fx_broker_new_with (&bc, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return NULL;
    const char *colon = strrchr (ep, ':');
    *port = colon ? atoi (colon + 1) : 0;
    *actor = zactor_new (qc_broker_actor, b);
    return b;
}

int
main (void)
{
    zsys_handler_set (NULL);
    zactor_t *actor = NULL;
    int port = 0;
    qc_broker_t *b = broker_pinging (200, &actor, &port);
    if (!b)
        return check_done ("test_silent_peer");
    char ep[64];
    snprintf (ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    zsock_t *quiet = zsock_new_dealer (ep);     /* a real peer that says nothing */
    int fd = raw_peer (port);
    CHECK (fd >= 0, "a raw peer connected and greeted");
    if (fd >= 0) {
        CHECK (closed_within (fd, 3000), "a peer that answers no PING: closed within 3 s");
        close (fd);
    }
    /* the real peer's ZeroMQ answered the PINGs: still connected */
    qc_msg_t st = {.command = QC_STATUS, .gpu = -1};
    CHECK (quiet && qc_msg_send (&st, zsock_resolve (quiet), NULL) == 0);
    zsock_set_rcvtimeo (quiet, 2000);
    zmsg_t *raw = quiet ? zmsg_recv (quiet) : NULL;
    qc_msg_t *reply = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
    CHECK (reply && reply->command == QC_STATUS_REPLY, "a quiet ZeroMQ peer still answered");
    qc_msg_destroy (&reply);
    zmsg_destroy (&raw);
    zsock_destroy (&quiet);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);

    /* without PINGs: the same peer is still open after the same time */
    b = broker_pinging (0, &actor, &port);
    fd = b ? raw_peer (port) : -1;
    CHECK (fd >= 0, "a raw peer connected and greeted (no PINGs)");
    if (fd >= 0) {
        CHECK (!closed_within (fd, 3000), "no PINGs: the silent peer stays open");
        close (fd);
    }
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_silent_peer");
}
