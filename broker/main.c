/* qc-broker: the task queue and worker registry of a QC cluster. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/broker.h"
#include "shared/cli.h"
#include "shared/endpoint.h"
#include "shared/log.h"
#include "shared/proto.h"

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: qc-broker [--bind ENDPOINT]... [options]\n"
        "Keeps the task queue and the worker registry of a slide QC cluster.\n"
        "Workers (qc-worker) and clients (qc-submit, qc-status) connect to it.\n\n"
        "  -b, --bind EP          endpoint to listen on; may be given several\n"
        "                         times (default: tcp://*:5555 with --cert or\n"
        "                         --insecure, else tcp://127.0.0.1:5555, this\n"
        "                         machine only)\n"
        "      --cert FILE        the broker's secret certificate (qc-keygen --role\n"
        "                         broker): CurveZMQ on every endpoint, each peer\n"
        "                         authenticated and encrypted; needs --allow\n"
        "      --allow DIR        the public certificates of the workers and\n"
        "                         clients let in (their role says what each may\n"
        "                         do); read again while running: a file added\n"
        "                         admits, a file removed revokes, no restart\n"
        "      --insecure         without --cert, listen on an address other\n"
        "                         machines reach anyway (anyone who reaches it\n"
        "                         gets in); without either, only loopback\n"
        "                         (tcp://127.0.0.1:PORT) and ipc:// are bound\n"
        "      --heartbeat-ms MS  heartbeat interval expected of peers (1000)\n"
        "      --liveness N       missed heartbeats before a worker is dead (3)\n"
        "      --max-deaths N     worker deaths before a slide is failed (3)\n"
        "      --linger S         keep a delivered job S seconds after it\n"
        "                         finished (600); one never fetched is kept\n"
        "                         for --retention\n"
        "      --state DIR|none   keep jobs, slides and results not yet fetched\n"
        "                         in DIR, so that a restart (even after kill -9\n"
        "                         or a power cut) loses nothing; default:\n"
        "                         $STATE_DIRECTORY (systemd), /var/lib/qc-broker\n"
        "                         as root, else ~/.local/state/qc-broker; none:\n"
        "                         keep everything in memory\n"
        "      --state-recover    start even when the journal in DIR is damaged,\n"
        "                         dropping the damaged records (said in the log;\n"
        "                         their slides run again)\n"
        "      --task-timeout S   take a task back when it runs longer than S\n"
        "                         seconds (its worker is told; 1800; 0: never)\n"
        "      --trouble-wait S   a worker whose machine fails slides (memory\n"
        "                         short) with no other worker to take them:\n"
        "                         they run again on it after pauses for up to S\n"
        "                         seconds, then fail marked for a rerun (300;\n"
        "                         0: fail them at once)\n"
        "      --retention S      results of a finished job wait S seconds for\n"
        "                         their client before they are deleted (604800 =\n"
        "                         7 days; 0: for ever); a job that gets no result\n"
        "                         for S seconds while its client is away (no\n"
        "                         worker can run its slides) is cancelled\n"
        "      --max-mb-unwritten N  MB of results kept in memory while the state\n"
        "                         folder refuses writes (a full disk); over it,\n"
        "                         no new task is dispatched until the disk takes\n"
        "                         them (256)\n"
        "      --results-compact-mb N  a job's result file is rewritten without\n"
        "                         the results its client acknowledged once they\n"
        "                         are N MB (64): a long job's disk use stays\n"
        "                         what its client has not fetched\n"
        "      --journal-compact-mb N  the journal (jobs and slide lists) is\n"
        "                         rewritten without what forgotten jobs left\n"
        "                         once it is over N MB (64) and 4 times what\n"
        "                         a rewrite would keep\n"
        "      --max-peers N      workers and clients it holds at once; the next\n"
        "                         is refused with a reason (default: what the\n"
        "                         open-file limit allows, raised to its hard\n"
        "                         limit at start)\n"
        "      --max-jobs-per-client N  jobs one certificate may hold, running\n"
        "                         or with results not fetched; its next is\n"
        "                         refused with a reason, so one client cannot\n"
        "                         fill the broker; without --cert, all clients\n"
        "                         together (1000; 0: no limit)\n"
        "      --max-mb-per-client N  MB of configs, their files and slide\n"
        "                         paths one certificate's held jobs may take of\n"
        "                         the broker's memory; a SUBMIT over it is\n"
        "                         refused with a reason; without --cert, all\n"
        "                         clients' together (1000; 0: none)\n"
        "      --log-level L      debug, info, warning or error (info)\n"
        "  -h, --help             show this help\n"
        "  -V, --version          show the version\n\n"
        "Exit codes: 0 stopped by SIGTERM/SIGINT, 2 usage error, a state\n"
        "folder it cannot use (in use, damaged), or a certificate or allowed\n"
        "folder it cannot use, or a non-loopback address without --cert or\n"
        "--insecure, 3 an endpoint could not be bound, 5 the state folder's disk\n"
        "refused a write at start (full, over quota: a restart once there is room\n"
        "goes on).\n");
}

/* The state folder a broker run as a service keeps by default. */
static const char *
default_state_dir (char *buf, size_t len)
{
    const char *sd = getenv ("STATE_DIRECTORY");   /* systemd's StateDirectory= */
    if (sd && *sd) {
        snprintf (buf, len, "%.*s", (int) strcspn (sd, ":"), sd);
        return buf;
    }
    if (geteuid () == 0)
        return "/var/lib/qc-broker";
    return qc_cli_user_dir ("XDG_STATE_HOME", ".local/state", "qc-broker", buf, len);
}

/* Long options without a letter: values past every char. */
enum {
    OPT_HEARTBEAT_MS = 256,
    OPT_LIVENESS,
    OPT_MAX_DEATHS,
    OPT_LINGER,
    OPT_LOG_LEVEL,
    OPT_STATE,
    OPT_STATE_RECOVER,
    OPT_TASK_TIMEOUT,
    OPT_TROUBLE_WAIT,
    OPT_RETENTION,
    OPT_MAX_PEERS,
    OPT_MAX_JOBS_PER_CLIENT,
    OPT_MAX_MB_PER_CLIENT,
    OPT_MAX_MB_UNWRITTEN,
    OPT_RESULTS_COMPACT_MB,
    OPT_JOURNAL_COMPACT_MB,
    OPT_CERT,
    OPT_ALLOW,
    OPT_INSECURE,
};

int
main (int argc, char **argv)
{
    qc_cli_std_fds ();   /* before any file is opened: see cli.h */
    const char *prog = "qc-broker";
    qc_broker_config_t cfg;
    qc_broker_config_defaults (&cfg);
    const char *binds[64];
    size_t nbinds = 0;
    const char *state = NULL;
    char state_buf[4096];
    unsigned long v;
    static const struct option opts[] = {
        {"bind", required_argument, 0, 'b'},
        {"heartbeat-ms", required_argument, 0, OPT_HEARTBEAT_MS},
        {"liveness", required_argument, 0, OPT_LIVENESS},
        {"max-deaths", required_argument, 0, OPT_MAX_DEATHS},
        {"linger", required_argument, 0, OPT_LINGER},
        {"log-level", required_argument, 0, OPT_LOG_LEVEL},
        {"state", required_argument, 0, OPT_STATE},
        {"state-recover", no_argument, 0, OPT_STATE_RECOVER},
        {"task-timeout", required_argument, 0, OPT_TASK_TIMEOUT},
        {"trouble-wait", required_argument, 0, OPT_TROUBLE_WAIT},
        {"retention", required_argument, 0, OPT_RETENTION},
        {"max-peers", required_argument, 0, OPT_MAX_PEERS},
        {"max-jobs-per-client", required_argument, 0, OPT_MAX_JOBS_PER_CLIENT},
        {"max-mb-per-client", required_argument, 0, OPT_MAX_MB_PER_CLIENT},
        {"results-compact-mb", required_argument, 0, OPT_RESULTS_COMPACT_MB},
        {"journal-compact-mb", required_argument, 0, OPT_JOURNAL_COMPACT_MB},
        {"max-mb-unwritten", required_argument, 0, OPT_MAX_MB_UNWRITTEN},
        {"cert", required_argument, 0, OPT_CERT},
        {"allow", required_argument, 0, OPT_ALLOW},
        {"insecure", no_argument, 0, OPT_INSECURE},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "b:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (nbinds == 64) {
                fprintf (stderr, "%s: at most 64 --bind endpoints\n", prog);
                return QC_EXIT_USAGE;
            }
            binds[nbinds++] = optarg;
            break;
        case OPT_HEARTBEAT_MS:
            if (qc_cli_uint (prog, "--heartbeat-ms", optarg, QC_HB_MS_MIN, QC_HB_MS_MAX, &v)) return QC_EXIT_USAGE;
            cfg.heartbeat_ms = (uint32_t) v;
            break;
        case OPT_LIVENESS:
            if (qc_cli_uint (prog, "--liveness", optarg, 1, 1000, &v)) return QC_EXIT_USAGE;
            cfg.liveness = (uint32_t) v;
            break;
        case OPT_MAX_DEATHS:
            if (qc_cli_uint (prog, "--max-deaths", optarg, 1, 1000, &v)) return QC_EXIT_USAGE;
            cfg.max_deaths = (uint32_t) v;
            break;
        case OPT_LINGER:
            if (qc_cli_uint (prog, "--linger", optarg, 0, 86400 * 365, &v)) return QC_EXIT_USAGE;
            cfg.job_linger_s = (uint32_t) v;
            break;
        case OPT_LOG_LEVEL:
            if (qc_cli_log_level (prog, optarg)) return QC_EXIT_USAGE;
            break;
        case OPT_STATE:
            if (!*optarg) {
                fprintf (stderr, "%s: --state needs a folder, or none\n", prog);
                return QC_EXIT_USAGE;
            }
            state = optarg;
            break;
        case OPT_STATE_RECOVER: cfg.state_recover = true; break;
        case OPT_TASK_TIMEOUT:
            if (qc_cli_uint (prog, "--task-timeout", optarg, 0, 86400 * 30, &v)) return QC_EXIT_USAGE;
            cfg.task_timeout_s = (uint32_t) v;
            break;
        case OPT_TROUBLE_WAIT:
            if (qc_cli_uint (prog, "--trouble-wait", optarg, 0, 86400, &v)) return QC_EXIT_USAGE;
            cfg.trouble_wait_s = (uint32_t) v;
            break;
        case OPT_RETENTION:
            if (qc_cli_uint (prog, "--retention", optarg, 0, 86400 * 3650, &v)) return QC_EXIT_USAGE;
            cfg.retention_s = (uint32_t) v;
            break;
        case OPT_MAX_PEERS:
            if (qc_cli_uint (prog, "--max-peers", optarg, 1, 1000000, &v)) return QC_EXIT_USAGE;
            cfg.max_peers = (size_t) v;
            break;
        case OPT_MAX_JOBS_PER_CLIENT:
            if (qc_cli_uint (prog, "--max-jobs-per-client", optarg, 0, 1000000, &v))
                return QC_EXIT_USAGE;
            cfg.max_jobs_per_client = (uint32_t) v;
            break;
        case OPT_MAX_MB_PER_CLIENT:
            if (qc_cli_uint (prog, "--max-mb-per-client", optarg, 0, 100000000, &v))
                return QC_EXIT_USAGE;
            cfg.max_mb_per_client = (uint32_t) v;
            break;
        case OPT_MAX_MB_UNWRITTEN:
            if (qc_cli_uint (prog, "--max-mb-unwritten", optarg, 1, 1u << 20, &v))
                return QC_EXIT_USAGE;
            cfg.unwritten_mb = (uint32_t) v;
            break;
        case OPT_RESULTS_COMPACT_MB:
            if (qc_cli_uint (prog, "--results-compact-mb", optarg, 1, 1u << 20, &v))
                return QC_EXIT_USAGE;
            cfg.results_compact_mb = (uint32_t) v;
            break;
        case OPT_JOURNAL_COMPACT_MB:
            if (qc_cli_uint (prog, "--journal-compact-mb", optarg, 1, 1u << 20, &v))
                return QC_EXIT_USAGE;
            cfg.journal_compact_mb = (uint32_t) v;
            break;
        case OPT_CERT: cfg.cert_path = optarg; break;
        case OPT_ALLOW: cfg.allow_dir = optarg; break;
        case OPT_INSECURE: cfg.insecure = true; break;
        case 'h': usage (stdout); return QC_EXIT_OK;
        case 'V': qc_cli_version (prog); return QC_EXIT_OK;
        default: return qc_cli_bad_option (prog);
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        usage (stderr);
        return QC_EXIT_USAGE;
    }
    for (size_t i = 0; i < nbinds; i++) {
        char why[512];
        if (qc_endpoint_check (binds[i], true, why, sizeof why) != 0) {
            fprintf (stderr, "%s: --bind %s\n", prog, why);
            return QC_EXIT_USAGE;
        }
    }
    /* no --bind and no keys: this machine only, as a keyless broker may
       bind nothing else without --insecure (said once it listens) */
    static const char *loopback[] = {"tcp://127.0.0.1:5555"};
    bool only_here = !nbinds && !cfg.cert_path && !cfg.insecure;
    if (nbinds) {
        cfg.endpoints = binds;
        cfg.nendpoints = nbinds;
    } else if (only_here) {
        cfg.endpoints = loopback;
        cfg.nendpoints = 1;
    }
    if (qc_cli_check_env (prog))
        return QC_EXIT_USAGE;
    if (!state && !(state = default_state_dir (state_buf, sizeof state_buf))) {
        fprintf (stderr, "%s: no default state folder (HOME is unset or /, and "
                 "XDG_STATE_HOME unset or not absolute): give --state DIR, or --state "
                 "none\n", prog);
        return QC_EXIT_USAGE;
    }
    cfg.state_dir = strcmp (state, "none") == 0 ? NULL : state;
    /* its own reserve (broker.c peers_allowed: the state files and
       ZeroMQ's) and room for 8 peers */
    if (qc_cli_need_open_files (prog, 64, "the state files, ZeroMQ's own, and 8 peers")
        || qc_cli_need_address_space (prog, 64, "its queues and the results of a burst"))
        return QC_EXIT_USAGE;
    qc_log_set_process (prog);
    qc_cli_install_signals ();     /* SIGXFSZ ignored: EFBIG as a full disk */
    char err[1024];
    qc_broker_t *b = qc_broker_new (&cfg, err, sizeof err);
    if (!b) {
        fprintf (stderr, "%s: %s\n", prog, err);
        /* a folder it cannot use is a configuration error, not a port;
           a full disk is neither: 5, which a service manager restarts
           (its unit does not restart a 2, which a restart cannot mend) */
        return strncmp (err, "cannot bind", 11) == 0 ? QC_EXIT_NO_BROKER
               : strncmp (err, QC_BROKER_DISK_REFUSED, strlen (QC_BROKER_DISK_REFUSED)) == 0
               ? QC_EXIT_INCOMPLETE : QC_EXIT_USAGE;
    }
    qc_log (QC_LOG_INFO, "broker", "state: %s", cfg.state_dir
            ? cfg.state_dir : "none (in memory: a restart forgets every job)");
    qc_log (QC_LOG_INFO, "broker", "can hold %zu peers (workers and clients; %s)",
            qc_broker_max_peers (b), cfg.max_peers ? "--max-peers" : "the open-file limit "
            "allows it");
    for (size_t i = 0; qc_broker_endpoint (b, i); i++) {
        const char *ep = qc_broker_endpoint (b, i);
        /* loopback is no boundary between a machine's users (README,
           Securing a cluster): said where keys are off */
        bool keyless_tcp = !cfg.cert_path && strncmp (ep, "tcp://", 6) == 0;
        qc_log (QC_LOG_INFO, "broker", "listening on %s%s", ep, keyless_tcp
                ? " without keys: every user of this machine may submit, list and "
                  "cancel jobs (on a shared machine, --bind ipc://DIR/broker in a "
                  "folder of the lab's, or keys: README, Securing a cluster)" : "");
    }
    if (only_here)
        qc_log (QC_LOG_INFO, "broker", "no --bind: workers and clients of this machine "
                "only; for other machines give --cert FILE --allow DIR (or --insecure) "
                "and --bind tcp://*:5555");
    qc_broker_run (b, NULL, (volatile int *) &qc_cli_signals);
    qc_log (QC_LOG_INFO, "broker", "stopped: peers told");
    qc_broker_destroy (&b);
    return QC_EXIT_OK;
}
