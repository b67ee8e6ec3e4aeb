/* A real broker on loopback gets garbage: ZeroMQ frames that are not our
 * protocol, truncated bodies, commands from the wrong role, and raw bytes
 * on its TCP port. Afterwards it must still answer STATUS with the same
 * worker registered and run a job to the end. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

/* A peer that speaks ZMTP 3.0 properly and then announces a frame of
 * 1 GiB (over QC_PROTO_MAX_FRAME) and streams it: the broker must drop
 * the connection when the size arrives, not hold what follows (without
 * the limit it takes all 64 MiB sent). Sends at most 64 MiB in 1 MiB
 * writes within 20 s. */
static void
oversized_frame (const char *port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (port))};
    inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
    CHECK (fd >= 0 && connect (fd, (struct sockaddr *) &sa, sizeof sa) == 0, "connect");
    if (fd < 0)
        return;
    /* greeting: signature, version 3.0, mechanism NULL, as-server 0 */
    uint8_t greet[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0, 'N', 'U', 'L', 'L'};
    /* READY with Socket-Type DEALER */
    static const uint8_t ready[] = {0x04, 28, 5, 'R', 'E', 'A', 'D', 'Y', 11, 'S', 'o', 'c',
                                    'k', 'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 6,
                                    'D', 'E', 'A', 'L', 'E', 'R'};
    /* a final frame, long form: 1 GiB */
    static const uint8_t big[] = {0x02, 0, 0, 0, 0, 0x40, 0, 0, 0};
    CHECK (send (fd, greet, sizeof greet, MSG_NOSIGNAL) == (ssize_t) sizeof greet
           && send (fd, ready, sizeof ready, MSG_NOSIGNAL) == (ssize_t) sizeof ready,
           "handshake sent");
    uint8_t answer[128];
    struct timeval tv = {.tv_sec = 5};
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    CHECK (recv (fd, answer, sizeof answer, 0) > 0, "the broker's greeting");
    static uint8_t chunk[1 << 20];
    memset (chunk, 'A', sizeof chunk);
    int sent = 0, why = 0;
    if (send (fd, big, sizeof big, MSG_NOSIGNAL) != (ssize_t) sizeof big)
        why = errno;
    for (int64_t until = zclock_mono () + 20000; !why && sent < 64 && zclock_mono () < until;) {
        if (send (fd, chunk, sizeof chunk, MSG_NOSIGNAL) == (ssize_t) sizeof chunk)
            sent++;
        else
            why = errno ? errno : EIO;
    }
    /* the broker closed it: a reset, or a write that stalls on a
     * connection whose other end is gone (then a read says so) */
    bool closed = why == EPIPE || why == ECONNRESET;
    if (why == EAGAIN || why == EWOULDBLOCK) {
        ssize_t r = 1;          /* past what is left of its handshake */
        for (int k = 0; k < 64 && r > 0; k++)
            r = recv (fd, answer, sizeof answer, 0);
        closed = r == 0 || (r < 0 && errno == ECONNRESET);
    }
    CHECK (closed && sent < 16, "a 1 GiB frame: the broker took %d MiB of it and %s",
           sent, closed ? "closed" : why ? strerror (why) : "kept the connection");
    close (fd);
}

static qc_msg_t *
request (zsock_t *s, qc_msg_t *q, uint8_t want, int timeout_ms)
{
    qc_msg_send (q, zsock_resolve (s), NULL);
    zsock_set_rcvtimeo (s, 200);
    int64_t until = zclock_mono () + timeout_ms;
    while (zclock_mono () < until) {
        zmsg_t *raw = zmsg_recv (s);
        if (!raw)
            continue;
        qc_msg_t *m = qc_msg_decode (raw, NULL, 0);
        zmsg_destroy (&raw);
        if (m && m->command == want)
            return m;
        qc_msg_destroy (&m);
    }
    return NULL;
}

static void
send_frames (zsock_t *s, const void **parts, const size_t *sizes, int n)
{
    zmsg_t *m = zmsg_new ();
    for (int i = 0; i < n; i++)
        zmsg_addmem (m, parts[i], sizes[i]);
    zmsg_send (&m, s);
}

int
main (void)
{
    zsys_handler_set (NULL);
    char err[256], ep[128];
    qc_broker_t *b = fx_broker_new (NULL, ep, err, sizeof err);
    CHECK (b != NULL, "%s", err);
    if (!b)
        return check_done ("test_broker_garbage");
    zactor_t *actor = zactor_new (qc_broker_actor, b);

    qc_worker_t *w = fx_noop_worker (ep, "steady", 200);
    CHECK (w != NULL);
    for (int i = 0; i < 50 && !qc_worker_connected (w); i++)
        zclock_sleep (100);
    CHECK (qc_worker_connected (w), "worker never registered");

    zsock_t *evil = zsock_new_dealer (ep);
    /* not our protocol at all */
    const void *p1[] = {"hello"};
    size_t s1[] = {5};
    send_frames (evil, p1, s1, 1);
    /* right header, body that is not msgpack; wrong version; unknown command */
    uint8_t hb[4] = {'Q', 'C', QC_PROTO_VERSION, QC_HEARTBEAT}, v9[4] = {'Q', 'C', 9, QC_STATUS};
    uint8_t unk[4] = {'Q', 'C', QC_PROTO_VERSION, 200}, res[4] = {'Q', 'C', QC_PROTO_VERSION, QC_RESULT};
    uint8_t junk[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
    const void *p2[] = {hb, junk};
    size_t s2[] = {4, sizeof junk};
    send_frames (evil, p2, s2, 2);
    const void *p3[] = {v9, "\x80"};
    size_t s3[] = {4, 1};
    send_frames (evil, p3, s3, 2);
    const void *p4[] = {unk, "\x80"};
    send_frames (evil, p4, s3, 2);
    /* a RESULT for a job that does not exist, from a peer that is no worker */
    const void *p5[] = {res, "\x80"};
    send_frames (evil, p5, s3, 2);
    /* many frames */
    const void *p6[] = {hb, "\x80", "x", "y", "z"};
    size_t s6[] = {4, 1, 1, 1, 1};
    send_frames (evil, p6, s6, 5);
    /* random frames, fixed seed */
    srand (7);
    for (int i = 0; i < 500; i++) {
        uint8_t buf[64];
        size_t n = (size_t) (rand () % 64);
        for (size_t k = 0; k < n; k++)
            buf[k] = (uint8_t) rand ();
        if (i % 2) { buf[0] = 'Q'; if (n > 1) buf[1] = 'C'; if (n > 2) buf[2] = 1; }
        const void *pp[] = {buf, buf + n / 2};
        size_t ss[] = {n / 2, n - n / 2};
        send_frames (evil, pp, ss, 2);
    }
    /* raw bytes on the TCP port, no ZMTP handshake */
    const char *port = strrchr (ep, ':') + 1;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (port))};
    inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd >= 0 && connect (fd, (struct sockaddr *) &sa, sizeof sa) == 0) {
        const char garbage[] = "GET / HTTP/1.0\r\n\r\n\xff\xff\xff\xff\x00\x01";
        CHECK (write (fd, garbage, sizeof garbage) > 0);
    }
    if (fd >= 0)
        close (fd);
    oversized_frame (port);
    zclock_sleep (300);

    /* the broker still answers and still has its worker */
    zsock_t *client = zsock_new_dealer (ep);
    qc_msg_t q = {.command = QC_STATUS, .gpu = -1};
    qc_msg_t *st = request (client, &q, QC_STATUS_REPLY, 5000);
    CHECK (st != NULL, "no STATUS reply after garbage");
    CHECK (st && st->nworkers == 1 && strcmp (st->workers[0].name, "steady") == 0,
           "worker registry changed");
    CHECK (st && st->njobs == 0, "garbage created a job");
    qc_msg_destroy (&st);

    /* and it still runs a job to the end */
    char *slides[] = {"/a.svs", "/b.svs", "/c.svs"};
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .slides = slides, .nslides = 3,
                    .final = true};
    qc_msg_t *acc = request (client, &sub, QC_ACCEPTED, 5000);
    CHECK (acc && acc->total == 3, "job not accepted");
    uint64_t job = acc ? acc->job : 0;
    qc_msg_destroy (&acc);
    zsock_set_rcvtimeo (client, 200);
    int results = 0, done = 0;
    for (int64_t until = zclock_mono () + 10000; zclock_mono () < until && !done;) {
        zmsg_t *raw = zmsg_recv (client);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_RESULT && m->job == job) {
            results++;
            CHECK (m->result->ok && strcmp (qc_result_get (m->result, "filename"), m->path) == 0);
            qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = job, .seq = m->seq};
            qc_msg_send (&ack, zsock_resolve (client), NULL);
        }
        if (m && m->command == QC_DONE)
            done = 1;
        qc_msg_destroy (&m);
    }
    CHECK (results == 3 && done, "job after garbage: %d results, done %d", results, done);

    zsock_destroy (&evil);
    zsock_destroy (&client);
    qc_worker_destroy (&w);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_broker_garbage");
}
