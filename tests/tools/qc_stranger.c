/* qc_stranger: a peer that speaks the protocol the way an attacker would,
 * for tests/integration/test_security.sh. It connects to a broker (with a
 * certificate, an ephemeral key pair, or none), sends one thing, and
 * prints every message it gets back as one line, so the test can tell
 * what the broker answered (nothing, ERROR, ACCEPTED, a TASK ...):
 *
 *   got COMMAND job=N seq=N reason=TEXT
 *   message TEXT                      (after a LOG's line)
 *
 * Commands (after the options):
 *   beat                       HEARTBEATs (a client's) for --wait-ms
 *   status                     STATUS (--repeat N: N times, each
 *                              followed by --wait-ms of listening, all on
 *                              one connection)
 *   submit PATH                SUBMIT of a new job with one slide
 *                              (key 5757 hex, or --key)
 *   submit-open PATH           the same, not final: a client that died
 *                              before its next SUBMIT batch
 *   attach JOB KEY             ATTACH to a job, holding no result
 *   ack JOB KEY SEQ            ACK
 *   cancel JOB KEY             CANCEL
 *   result JOB KEY IDX ATT     RESULT without registering: "ok", its
 *                              filename and comments columns FORGED;
 *                              IDX and ATT may be ranges A-B (one RESULT
 *                              for each pair)
 *   forge JOB KEY IDX ATT      READY as a worker, then those RESULTs
 *   work FILE [PATH]           READY (one slot); on the first TASK, print
 *                              "task JOB KEY IDX ATT", answer it with a
 *                              RESULT carrying one image named FILE (any
 *                              bytes: "..", "/x", "" are sent as given)
 *                              and, when given, PATH as its slide path
 *
 * Options: --connect EP, --cert FILE (own secret certificate),
 * --ephemeral (a fresh key pair no broker admits; prints "key KEY"),
 * --server-key FILE (the broker's public certificate), --wait-ms N (how
 * long to listen after sending, 1500), --repeat N (1 to 1000),
 * --proto-version N (the header's protocol version: a peer of another
 * version), --name TEXT and --prefetch N (what READY says), --log TEXT
 * (work: a forged LOG record before the RESULT), --key HEX (submit: the
 * job's key; the broker takes a first SUBMIT of a key it has for that
 * job's again), --fetch N (work: N
 * FETCHes of the job's files at once), --routing-id HEX (the ZeroMQ
 * routing id it shows, as any peer may choose one: libzmq's own are
 * 00 and four bytes counted up). Every
 * wait is bounded. Exit 0
 * when it ran (whatever came back), 2 on a usage error. */
#include <czmq.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/endpoint.h"
#include "shared/curve.h"
#include "shared/log.h"
#include "shared/proto.h"
#include "shared/result.h"

static zsock_t *s_sock;
static int s_version;         /* --proto-version: the header's, 0 ours */

static uint64_t
num (const char *text)
{
    return text ? strtoull (text, NULL, 0) : 0;
}

static void
send_msg (qc_msg_t *m)
{
    zmsg_t *msg = s_version ? zmsg_new () : NULL;
    if (msg) {                  /* a peer of another protocol version */
        if (qc_msg_encode (m, msg) == 0) {
            zframe_data (zmsg_first (msg))[2] = (uint8_t) s_version;
            zmsg_send (&msg, s_sock);
        }
        zmsg_destroy (&msg);
        return;
    }
    if (qc_msg_send (m, zsock_resolve (s_sock), NULL))
        printf ("send failed: %s\n", qc_command_name (m->command));
}

static void
print_msg (const qc_msg_t *m)
{
    printf ("got %s job=%" PRIu64 " seq=%" PRIu64 " jobs=%zu workers=%zu reason=%s\n",
            qc_command_name (m->command), m->job, m->seq, m->njobs, m->nworkers,
            m->reason ? m->reason : "");
    for (size_t i = 0; i < m->njobs; i++)
        printf ("job %" PRIu64 " total=%" PRIu64 " done=%" PRIu64 " failed=%" PRIu64 "\n",
                m->jobs[i].job, m->jobs[i].total, m->jobs[i].done, m->jobs[i].failed);
    if (m->command == QC_LOG && m->message)
        printf ("message %s\n", m->message);
    fflush (stdout);
}

/* Listens up to ms; prints what comes. Returns the first TASK (caller
 * destroys) when want_task, else NULL. */
static qc_msg_t *
listen_for (int ms, bool want_task)
{
    int64_t until = zclock_mono () + ms;
    zpoller_t *p = zpoller_new (s_sock, NULL);
    qc_msg_t *task = NULL;
    int64_t next_beat = 0;
    while (zclock_mono () < until && !task) {
        if (want_task && zclock_mono () >= next_beat) {
            qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
            send_msg (&hb);
            next_beat = zclock_mono () + 500;
        }
        if (!zpoller_wait (p, 100))
            continue;
        zmsg_t *raw = zmsg_recv (s_sock);
        char err[256];
        qc_msg_t *m = raw ? qc_msg_decode (raw, err, sizeof err) : NULL;
        zmsg_destroy (&raw);
        if (!m) {
            printf ("got something undecodable: %s\n", err);
            continue;
        }
        if (m->command == QC_HEARTBEAT) {
            qc_msg_destroy (&m);
            continue;
        }
        print_msg (m);
        if (want_task && m->command == QC_TASK)
            task = m;
        else
            qc_msg_destroy (&m);
    }
    zpoller_destroy (&p);
    return task;
}

/* READY's name and prefetch (--name, --prefetch): a hoarder asks for
 * every task, a name may carry a newline or an escape sequence */
static const char *s_name = "stranger";
static uint32_t s_prefetch = 0;
/* --log TEXT: in work, a LOG record for the task before its RESULT, that
 * claims to be the broker's and to come from a time no clock gives */
static const char *s_log = NULL;
/* --fetch N: in work, N FETCHes of the task's job's files at once */
static int s_fetch = 0;

static void
ready (void)
{
    qc_msg_t r = {.command = QC_READY, .gpu = -1, .name = (char *) s_name, .host = "nowhere",
                  .version = "0", .slots = 1, .prefetch = s_prefetch, .hb_ms = 1000};
    send_msg (&r);
}

/* A RESULT with one image of that name, built by hand: the library
 * refuses to make such a name, a stranger does not ask it. */
static void
send_result (uint64_t job, uint64_t key, uint64_t idx, uint32_t att, const char *file,
             const char *path, bool forged)
{
    qc_result_t *res = qc_result_new ();
    if (!res)
        return;
    if (forged) {
        qc_result_set (res, "filename", "FORGED");
        qc_result_set (res, "comments", "FORGED");
    } else
        qc_result_set (res, "comments", "stranger");
    if (file) {
        res->files = calloc (1, sizeof *res->files);
        res->files[0].name = strdup (file);
        res->files[0].data = (unsigned char *) strdup ("FORGED");
        res->files[0].size = 6;
        res->nfiles = res->cap_files = 1;
    }
    /* it claims to be the broker (which marks the failures it made
       itself): the broker must name the sender */
    qc_msg_t m = {.command = QC_RESULT, .gpu = -1, .job = job, .key = key, .idx = idx,
                  .attempt = att, .path = (char *) path, .worker = "broker",
                  .result = res};
    send_msg (&m);
    qc_result_destroy (&res);
}

int
main (int argc, char **argv)
{
    const char *ep = NULL, *cert = NULL, *server_key = NULL;
    bool ephemeral = false;
    int wait_ms = 1500, repeat = 1;
    uint64_t submit_key = 0x5757;
    static const struct option opts[] = {
        {"connect", required_argument, 0, 'c'}, {"cert", required_argument, 0, 'k'},
        {"server-key", required_argument, 0, 's'}, {"ephemeral", no_argument, 0, 'e'},
        {"wait-ms", required_argument, 0, 'w'}, {"repeat", required_argument, 0, 'r'},
        {"proto-version", required_argument, 0, 'v'}, {"name", required_argument, 0, 'n'},
        {"prefetch", required_argument, 0, 'p'}, {"log", required_argument, 0, 'l'},
        {"fetch", required_argument, 0, 'f'}, {"key", required_argument, 0, 'K'},
        {"routing-id", required_argument, 0, 'i'}, {0, 0, 0, 0}};
    const char *routing_id = NULL;
    int c;
    while ((c = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'c': ep = optarg; break;
        case 'k': cert = optarg; break;
        case 's': server_key = optarg; break;
        case 'e': ephemeral = true; break;
        case 'w': wait_ms = atoi (optarg); break;
        case 'r': repeat = atoi (optarg); break;
        case 'v': s_version = atoi (optarg); break;
        case 'n': s_name = optarg; break;
        case 'p': s_prefetch = (uint32_t) strtoul (optarg, NULL, 10); break;
        case 'l': s_log = optarg; break;
        case 'K': submit_key = strtoull (optarg, NULL, 16); break;
        case 'i': routing_id = optarg; break;
        case 'f': s_fetch = atoi (optarg) < 0 ? 0 : atoi (optarg) > 1000 ? 1000 : atoi (optarg); break;
        default: return 2;
        }
    }
    if (!ep || optind >= argc || wait_ms < 0 || wait_ms > 60000 || repeat < 1
        || repeat > 1000 || s_version < 0 || s_version > 255) {
        fprintf (stderr, "usage: qc_stranger --connect EP [--cert F | --ephemeral] "
                 "[--server-key F] COMMAND ARGS (see the source)\n");
        return 2;
    }
    zsys_handler_set (NULL);
    s_sock = zsock_new (ZMQ_DEALER);
    if (!s_sock)
        return 2;
    zsock_set_linger (s_sock, 200);
    char err[512];
    char server[QC_CURVE_KEY_LEN + 1];
    if (server_key && qc_cert_load_public (server_key, server, err, sizeof err)) {
        fprintf (stderr, "qc_stranger: %s\n", err);
        return 2;
    }
    if (cert) {
        zcert_t *own = qc_cert_load_secret (cert, err, sizeof err);
        if (!own) {
            fprintf (stderr, "qc_stranger: %s\n", err);
            return 2;
        }
        zcert_apply (own, s_sock);
        zcert_destroy (&own);
    } else if (ephemeral) {
        zcert_t *own = zcert_new ();
        printf ("key %s\n", zcert_public_txt (own));
        zcert_apply (own, s_sock);
        zcert_destroy (&own);
    }
    if (server_key)
        zsock_set_curve_serverkey (s_sock, server);
    if (routing_id) {
        uint8_t id[255];
        size_t n = strlen (routing_id) / 2;
        for (size_t i = 0; i < n && i < sizeof id; i++)
            sscanf (routing_id + 2 * i, "%2hhx", &id[i]);
        if (!n || n > sizeof id
            || zmq_setsockopt (zsock_resolve (s_sock), ZMQ_ROUTING_ID, id, n)) {
            fprintf (stderr, "qc_stranger: --routing-id %s refused\n", routing_id);
            return 2;
        }
    }
    if (qc_endpoint_is_ipv6 (ep))
        zsock_set_ipv6 (s_sock, 1);
    if (zsock_connect (s_sock, "%s", ep) < 0)
        return 2;
    const char *cmd = argv[optind];
    char **a = argv + optind + 1;
    int n = argc - optind - 1;
    if (streq (cmd, "beat") && n == 0) {
        listen_for (wait_ms, true);
    } else if (streq (cmd, "status")) {
        for (int i = 0; i < repeat; i++) {
            qc_msg_t m = {.command = QC_STATUS, .gpu = -1};
            send_msg (&m);
            listen_for (wait_ms, false);
        }
    } else if ((streq (cmd, "submit") || streq (cmd, "submit-open")) && n == 1) {
        char *slides[] = {a[0]};
        qc_msg_t m = {.command = QC_SUBMIT, .gpu = -1, .key = submit_key, .slides = slides,
                      .nslides = 1, .final = streq (cmd, "submit"), .name = "stranger"};
        send_msg (&m);
        listen_for (wait_ms, false);
    } else if ((streq (cmd, "attach") || streq (cmd, "cancel")) && n == 2) {
        qc_msg_t m = {.command = streq (cmd, "attach") ? QC_ATTACH : QC_CANCEL,
                      .gpu = -1, .job = num (a[0]), .key = num (a[1])};
        send_msg (&m);
        listen_for (wait_ms, false);
    } else if (streq (cmd, "ack") && n == 3) {
        qc_msg_t m = {.command = QC_ACK, .gpu = -1, .job = num (a[0]), .key = num (a[1]),
                      .seq = num (a[2])};
        send_msg (&m);
        listen_for (wait_ms, false);
    } else if ((streq (cmd, "result") || streq (cmd, "forge")) && n == 4) {
        if (streq (cmd, "forge")) {
            ready ();
            listen_for (300, false);
        }
        uint64_t i0 = num (a[2]), i1 = strchr (a[2], '-') ? num (strchr (a[2], '-') + 1) : i0;
        uint64_t t0 = num (a[3]), t1 = strchr (a[3], '-') ? num (strchr (a[3], '-') + 1) : t0;
        for (uint64_t i = i0; i <= i1 && i - i0 < 10000; i++)
            for (uint64_t t = t0; t <= t1 && t - t0 < 100; t++)
                send_result (num (a[0]), num (a[1]), i, (uint32_t) t, NULL, NULL, true);
        listen_for (wait_ms, false);
    } else if (streq (cmd, "work") && (n == 1 || n == 2)) {
        ready ();
        qc_msg_t *t = listen_for (wait_ms + 5000, true);
        if (t) {
            printf ("task %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", t->job, t->key,
                    t->idx, t->attempt);
            fflush (stdout);
            for (int i = 0; i < s_fetch; i++) {
                qc_msg_t f = {.command = QC_FETCH, .gpu = -1, .job = t->job, .key = t->key};
                send_msg (&f);
            }
            if (s_log) {
                qc_msg_t l = {.command = QC_LOG, .gpu = -1, .job = t->job, .key = t->key,
                              .task = t->idx + 1, .time = 1e300, .level = QC_LOG_WARNING,
                              .worker = "broker", .slide = "x.svs", .module = "broker",
                              .message = (char *) s_log};
                send_msg (&l);
            }
            send_result (t->job, t->key, t->idx, t->attempt, a[0], n == 2 ? a[1] : t->path,
                         false);
            listen_for (wait_ms, false);
            qc_msg_destroy (&t);
        } else
            printf ("no task\n");
        qc_msg_t bye = {.command = QC_DISCONNECT, .gpu = -1, .reason = "leaving"};
        send_msg (&bye);
    } else {
        fprintf (stderr, "qc_stranger: unknown command or arguments: %s\n", cmd);
        zsock_destroy (&s_sock);
        return 2;
    }
    zsock_destroy (&s_sock);
    return 0;
}
