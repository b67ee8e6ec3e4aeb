/* qc-status: what a broker is doing: workers, queue, jobs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include <string.h>

#include "client/status_print.h"
#include "shared/cli.h"
#include "shared/curve.h"
#include "shared/endpoint.h"
#include "shared/log.h"
#include "shared/proto.h"
#include "shared/socket_new.h"

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: qc-status [--broker tcp://HOST:5555] [--timeout S]\n"
        "                 [--cert FILE --server-key FILE]\n"
        "Shows a qc-broker's workers (name, host, slots, GPUs, the CPU and GPU\n"
        "tasks each holds: running, or sent ahead to start next, so up to\n"
        "slots + prefetch; last heartbeat), its queue depth, and its jobs\n"
        "with done/failed/total (RUNNING: on a worker, running or sent ahead)\n"
        "and their state: running, waiting (finished, its results wait for\n"
        "its client: qc-submit --attach ID), delivered (every result taken),\n"
        "sending, or held (its client left before sending every slide).\n"
        "A broker with CurveZMQ shows a client certificate its own jobs, an\n"
        "admin certificate every job; OWNER says whose (the certificate that\n"
        "submitted it and the user: lab-a (alice); the user alone on a\n"
        "broker without keys).\n\n"
        "  -b, --broker EP   broker endpoint (default tcp://127.0.0.1:5555)\n"
        "      --timeout S   wait S seconds for an answer (5)\n"
        "      --cert FILE   this client's secret certificate (role client or\n"
        "                    admin): CurveZMQ to a broker with --cert\n"
        "      --server-key FILE  the broker's public certificate (with --cert)\n"
        "      --tsv         tab-separated lines for scripts, each starting with\n"
        "                    its kind (broker, worker, note, job); the first\n"
        "                    line (#kind) names each kind's fields\n"
        "  -h, --help        show this help\n"
        "  -V, --version     show the version\n\n"
        "The broker's own trouble comes first, a line each (TROUBLE WORD: ...):\n"
        "state-gone (its state folder deleted), state-unwritable (a write\n"
        "there failed: a full or read-only disk), results-held (results wait\n"
        "in memory for the disk), state-space-low (under 64 MB free there).\n\n"
        "Exit codes: 0 answered, 2 usage error, refused by the broker, or the\n"
        "answer could not be written (standard output closed or full), 3\n"
        "cannot reach the broker, 7 answered with trouble of its own (above).\n");
}

/* Long options without a short letter (past any char value). */
enum { OPT_TIMEOUT = 256, OPT_CERT, OPT_SERVER_KEY, OPT_TSV };

int
main (int argc, char **argv)
{
    qc_cli_std_fds ();   /* before any file is opened: see cli.h */
    const char *prog = "qc-status", *broker = "tcp://127.0.0.1:5555";
    qc_log_set_process (prog);      /* its log lines (a certificate's end) say who */
    const char *cert = NULL, *server_key = NULL;
    unsigned long timeout_s = 5;
    bool tsv = false;
    static const struct option opts[] = {
        {"broker", required_argument, 0, 'b'}, {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"cert", required_argument, 0, OPT_CERT}, {"server-key", required_argument, 0, OPT_SERVER_KEY},
        {"tsv", no_argument, 0, OPT_TSV},
        {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "b:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'b': broker = optarg; break;
        case OPT_TIMEOUT:
            if (qc_cli_uint (prog, "--timeout", optarg, 1, 3600, &timeout_s)) return QC_EXIT_USAGE;
            break;
        case OPT_CERT: cert = optarg; break;
        case OPT_TSV: tsv = true; break;
        case OPT_SERVER_KEY: server_key = optarg; break;
        case 'h': usage (stdout); return QC_EXIT_OK;
        case 'V': qc_cli_version (prog); return QC_EXIT_OK;
        default: return qc_cli_bad_option (prog);
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        return QC_EXIT_USAGE;
    }
    if (qc_cli_check_env (prog))
        return QC_EXIT_USAGE;
    if (qc_cli_stdout_closed ()) {
        fprintf (stderr, "%s: standard output is closed: the answer would go nowhere\n", prog);
        return QC_EXIT_USAGE;
    }
    zsys_handler_set (NULL);
    qc_curve_client_t *curve = NULL;
    char err[1024];
    if (qc_endpoint_check (broker, false, err, sizeof err) != 0) {
        fprintf (stderr, "%s: --broker %s\n", prog, err);
        return QC_EXIT_USAGE;
    }
    if ((cert || server_key) && !(curve = qc_curve_client_new (cert, server_key, err,
                                                                sizeof err))) {
        fprintf (stderr, "%s: %s\n", prog, err);
        return QC_EXIT_USAGE;
    }
    unsigned refused = qc_socket_refusals ();
    zsock_t *sock = qc_socket_new (ZMQ_DEALER, "qc-status");
    qc_handshake_t *hs = NULL;
    if (sock) {
        qc_curve_client_apply (curve, sock);
        qc_proto_limit_socket (sock);
        hs = qc_handshake_watch (sock);
        if (qc_endpoint_is_ipv6 (broker))
            zsock_set_ipv6 (sock, 1);
    }
    qc_curve_client_destroy (&curve);
    if (!sock || zsock_connect (sock, "%s", broker) < 0) {
        qc_handshake_destroy (&hs);
        zsock_destroy (&sock);
        return qc_socket_failed (prog, broker, refused);
    }
    zsock_set_linger (sock, 0);
    qc_msg_t q = {.command = QC_STATUS, .gpu = -1};
    qc_msg_send (&q, zsock_resolve (sock), NULL);
    zsock_set_rcvtimeo (sock, (int) timeout_s * 1000);
    qc_msg_t *r = NULL;
    for (;;) {
        zmsg_t *raw = zmsg_recv (sock);
        if (!raw)
            break;
        r = qc_msg_decode (raw, NULL, 0);
        zmsg_destroy (&raw);
        if (r && r->command == QC_STATUS_REPLY)
            break;
        if (r && r->reason && (r->command == QC_ERROR || (r->command == QC_DISCONNECT
                                   && strncmp (r->reason, "refused", 7) == 0))) {
            qc_scrub_controls (r->reason);
            fprintf (stderr, "%s: broker refused: %s\n", prog,
                     strncmp (r->reason, "refused: ", 9) ? r->reason : r->reason + 9);
            qc_msg_destroy (&r);
            qc_handshake_destroy (&hs);
            zsock_destroy (&sock);
            return QC_EXIT_USAGE;
        }
        qc_msg_destroy (&r);
    }
    const char *why = r ? NULL : qc_handshake_why (hs);
    char fds[320];
    char ipc[600];
    if (!r && !why)
        why = qc_endpoint_ipc_why (broker, ipc, sizeof ipc);
    if (!r && !why)
        why = qc_endpoint_name_why (broker, ipc, sizeof ipc);
    if (!r && !why && qc_fds_short_say (QC_CONNECT_FDS, fds, sizeof fds))
        why = fds;
    if (!r)
        fprintf (stderr, "%s: no answer from broker %s in %lu s: %s\n", prog, broker,
                 timeout_s, why ? why : QC_CLI_NO_BROKER_HINT);
    qc_handshake_destroy (&hs);
    zsock_destroy (&sock);
    if (!r)
        return QC_EXIT_NO_BROKER;
    if (tsv)
        qc_status_print_tsv (stdout, broker, r);
    else
        qc_status_print_table (stdout, broker, r);
    /* a readiness probe goes by the exit code alone */
    bool trouble = r->ntrouble > 0;
    qc_msg_destroy (&r);
    /* a script's poll that read nothing must not see 0 (a full disk,
       /dev/full: a user's review) */
    if (fflush (stdout) != 0 || ferror (stdout)) {
        fprintf (stderr, "%s: cannot write to standard output: %s\n", prog, strerror (errno));
        return QC_EXIT_USAGE;
    }
    return trouble ? QC_EXIT_TROUBLE : QC_EXIT_OK;
}
