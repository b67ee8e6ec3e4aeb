/* qc-broker: the task queue and worker registry of a QC cluster. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/cli.h"
#include "shared/log.h"

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: qc-broker [--bind ENDPOINT]... [options]\n"
        "Keeps the task queue and the worker registry of a slide QC cluster.\n"
        "Workers (qc-worker) and clients (qc-submit, qc-status) connect to it.\n\n"
        "  -b, --bind EP          endpoint to listen on (default tcp://*:5555);\n"
        "                         may be given several times\n"
        "      --heartbeat-ms MS  heartbeat interval expected of peers (1000)\n"
        "      --liveness N       missed heartbeats before a worker is dead (3)\n"
        "      --max-deaths N     worker deaths before a slide is failed (3)\n"
        "      --linger S         keep a finished, delivered job S seconds (600)\n"
        "      --log-level L      debug, info, warning or error (info)\n"
        "  -h, --help             show this help\n"
        "  -V, --version          show the version\n\n"
        "Exit codes: 0 stopped by SIGTERM/SIGINT, 2 usage error,\n"
        "3 an endpoint could not be bound.\n");
}

/* Long options without a letter: values past every char. */
enum {
    OPT_HEARTBEAT_MS = 256,
    OPT_LIVENESS,
    OPT_MAX_DEATHS,
    OPT_LINGER,
    OPT_LOG_LEVEL,
};

int
main (int argc, char **argv)
{
    const char *prog = "qc-broker";
    qc_broker_config_t cfg;
    qc_broker_config_defaults (&cfg);
    const char *binds[64];
    size_t nbinds = 0;
    unsigned long v;
    static const struct option opts[] = {
        {"bind", required_argument, 0, 'b'},
        {"heartbeat-ms", required_argument, 0, OPT_HEARTBEAT_MS},
        {"liveness", required_argument, 0, OPT_LIVENESS},
        {"max-deaths", required_argument, 0, OPT_MAX_DEATHS},
        {"linger", required_argument, 0, OPT_LINGER},
        {"log-level", required_argument, 0, OPT_LOG_LEVEL},
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
            if (qc_cli_uint (prog, "--heartbeat-ms", optarg, 10, 600000, &v)) return QC_EXIT_USAGE;
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
        case 'h': usage (stdout); return QC_EXIT_OK;
        case 'V': qc_cli_version (prog); return QC_EXIT_OK;
        default: usage (stderr); return QC_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        usage (stderr);
        return QC_EXIT_USAGE;
    }
    if (nbinds) {
        cfg.endpoints = binds;
        cfg.nendpoints = nbinds;
    }
    qc_log_set_process (prog);
    qc_cli_install_signals ();
    char err[512];
    qc_broker_t *b = qc_broker_new (&cfg, err, sizeof err);
    if (!b) {
        fprintf (stderr, "%s: %s\n", prog, err);
        return QC_EXIT_NO_BROKER;
    }
    for (size_t i = 0; qc_broker_endpoint (b, i); i++)
        qc_log (QC_LOG_INFO, "broker", "listening on %s", qc_broker_endpoint (b, i));
    qc_broker_run (b, NULL, (volatile int *) &qc_cli_signals);
    qc_log (QC_LOG_INFO, "broker", "stopped: peers told");
    qc_broker_destroy (&b);
    return QC_EXIT_OK;
}
