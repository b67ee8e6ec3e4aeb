/* What a worker or client says when its handshake with the broker is cut
 * on the way (shared/curve.c, qc_handshake_why): a firewall, proxy or
 * load balancer that accepts the TCP connection and closes it, or a
 * blackhole that holds it until libzmq's handshake timer gives up. Both
 * reach the program as a handshake failed with no detail, which it told
 * as "this program has no keys ... or this is not an address a qc-broker
 * binds" (without keys) or "a broker that is restarting closes it" (with
 * keys) and nothing else: on a hospital network after a partition healed,
 * the operator was sent to check keys and addresses that were right.
 * Here a plain TCP listener on loopback accepts and closes at once; the
 * reason must name the network between as a cause too, and keep the
 * others. */
#include <arpa/inet.h>
#include <czmq.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/curve.h"
#include "tests/unit/check.h"

/* A listener on 127.0.0.1 (an ephemeral port); its port in *port. */
static int
listener (int *port)
{
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind (fd, (struct sockaddr *) &sa, sizeof sa) != 0 || listen (fd, 8) != 0
        || getsockname (fd, (struct sockaddr *) &sa, &sl) != 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    *port = ntohs (sa.sin_port);
    return fd;
}

/* Connects a DEALER (with keys when curve) to a listener that accepts
 * and closes every connection; the reason its handshake watch gives
 * within 5 s, or NULL. */
static const char *
cut_reason (bool curve, char *buf, size_t len)
{
    int port = 0;
    int lfd = listener (&port);
    CHECK (lfd >= 0, "a loopback listener");
    if (lfd < 0)
        return NULL;
    zsock_t *d = zsock_new (ZMQ_DEALER);
    zcert_t *mine = NULL, *server = NULL;
    if (curve) {
        mine = zcert_new ();
        server = zcert_new ();
        zcert_apply (mine, d);
        zsock_set_curve_serverkey (d, zcert_public_txt (server));
    }
    zsock_set_linger (d, 0);
    qc_handshake_t *hs = qc_handshake_watch (d);
    CHECK (hs != NULL, "a handshake watch");
    zsock_connect (d, "tcp://127.0.0.1:%d", port);
    const char *why = NULL;
    for (int i = 0; i < 500 && !why; i++) {
        int c;
        while ((c = accept (lfd, NULL, NULL)) >= 0)
            close (c);     /* a firewall or proxy that closes at once */
        zclock_sleep (10);
        why = qc_handshake_why (hs);
    }
    if (why)
        snprintf (buf, len, "%s", why);
    qc_handshake_destroy (&hs);
    zsock_destroy (&d);
    zcert_destroy (&mine);
    zcert_destroy (&server);
    close (lfd);
    return why ? buf : NULL;
}

int
main (void)
{
    char buf[1024];
    const char *why = cut_reason (false, buf, sizeof buf);
    CHECK (why != NULL, "without keys: a connection closed at once gives a reason");
    if (why) {
        /* the causes it gave still there (tests/integration/test_security.sh) */
        CHECK (strstr (why, "this program has no keys") != NULL, "%s", why);
        CHECK (strstr (why, "not an address a qc-broker binds") != NULL, "%s", why);
        /* and the network between */
        CHECK (strstr (why, "firewall") != NULL && strstr (why, "proxy") != NULL,
               "without keys, the network between is not named: %s", why);
    }
    why = cut_reason (true, buf, sizeof buf);
    CHECK (why != NULL, "with keys: a connection closed at once gives a reason");
    if (why) {
        CHECK (strstr (why, "restarting") != NULL, "%s", why);
        CHECK (strstr (why, "firewall") != NULL && strstr (why, "proxy") != NULL,
               "with keys, the network between is not named: %s", why);
    }
    return check_done ("test_handshake_cut");
}
