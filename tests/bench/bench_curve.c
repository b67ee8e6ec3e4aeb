/* What CurveZMQ costs (issue 14; not a test: it reports, it asserts no
 * timings). No-op tasks/s with CurveZMQ off and on, in one run, the same
 * cluster shape both ways: the broker in a thread (its ZAP handler, the
 * allowed folder and the per-message User-Id check included when on),
 * 8 real workers (1 slot, prefetch 256) each with its own certificate,
 * and bench_broker's protocol client with a certificate of its own.
 * Runs alternate off, on, off, on ... so that other work on the machine
 * falls on both alike; the best and the worst of each are shown, with
 * the broker thread's CPU per task.
 *
 * The certificates are made here (czmq's zcert, as qc-keygen makes them)
 * in a temporary folder that is removed at the end.
 *
 * Every loop is bounded by a count and by a deadline. Goal (issue 14):
 * at least 40,000 tasks/s with CurveZMQ on, on the 2-core machine. */
#include <czmq.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "shared/cli.h"
#include "shared/clock.h"
#include "shared/curve.h"
#include "shared/log.h"
#include "shared/proto.h"
#include "worker/worker.h"

#define PROG "bench_curve"
#define BATCH 1024
#define MAX_LIST 8
#define DRAIN_MAX 10000
#define REGISTER_TIMEOUT_MS 30000
#define SPAWN_TIMEOUT_MS 10000
#define MAX_WORKERS 64
#define MAX_REPEAT 20

/* bench_broker's parts (not all of them are used here) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/bench/bench_common.h"
#include "tests/bench/bench_client.h"
#include "tests/bench/bench_cluster.h"
#pragma GCC diagnostic pop

static char s_keys[64];

/* One certificate pair DIR/NAME.cert(_secret) with a role; the public
 * one also into DIR/allowed when admit. */
static int
make_pair (const char *dir, const char *name, const char *role, bool admit)
{
    zcert_t *c = zcert_new ();
    if (!c)
        return -1;
    zcert_set_meta (c, "role", "%s", role);
    zcert_set_meta (c, "name", "%s", name);
    char pub[256], sec[256];
    snprintf (pub, sizeof pub, "%s/%s.cert", dir, name);
    snprintf (sec, sizeof sec, "%s/%s.cert_secret", dir, name);
    int rc = zcert_save_public (c, pub) || zcert_save_secret (c, sec) || chmod (sec, 0600);
    if (!rc && admit) {
        snprintf (pub, sizeof pub, "%s/allowed/%s.cert", dir, name);
        rc = zcert_save_public (c, pub);
    }
    zcert_destroy (&c);
    if (rc)
        fprintf (stderr, "%s: cannot write the certificate %s in %s\n", PROG, name, dir);
    return rc ? -1 : 0;
}

static const char *
make_keys (uint32_t nworkers)
{
    if (!temp_dir (s_keys, sizeof s_keys, "curve")) {
        perror (PROG ": mkdtemp");
        return NULL;
    }
    char allowed[128];
    snprintf (allowed, sizeof allowed, "%s/allowed", s_keys);
    if (mkdir (allowed, 0700) || make_pair (s_keys, "broker", "broker", false)
        || make_pair (s_keys, "client", "client", true))
        return NULL;
    for (uint32_t i = 0; i < nworkers; i++) {
        char name[32];
        snprintf (name, sizeof name, "w%u", i);
        if (make_pair (s_keys, name, "worker", true))
            return NULL;
    }
    return s_keys;
}

/* One run: n no-op tasks through a fresh cluster; tasks/s and the broker
 * thread's CPU per task (us), or a rate of -1 when it did not complete. */
static double
one_run (const opts_t *o, uint32_t nworkers, uint32_t prefetch, double *broker_us)
{
    cluster_t cl;
    *broker_us = -1;
    if (cluster_start (&cl, o, nworkers, prefetch))
        return -1;
    client_t c;
    uint64_t n = o->tasks;
    double rate = -1;
    if (client_open (&c, cl.endpoint, n, false) == 0) {
        double b0 = broker_cpu_s (&cl);
        int64_t t0 = now_us (), deadline = t0 + (int64_t) o->time_limit_s * 1000000;
        client_submit_all (&c, n, deadline);
        PUMP_UNTIL (&c, c.done, deadline);
        double s = (double) (now_us () - t0) / 1e6, b1 = broker_cpu_s (&cl);
        bool ok = c.done && !c.failed && c.results == n && c.ok == n && c.dups == 0;
        if (ok && s > 0) {
            rate = (double) n / s;
            if (b0 >= 0 && b1 >= 0)
                *broker_us = (b1 - b0) * 1e6 / (double) n;
        } else
            fprintf (stderr, "%s: run incomplete: %s (%" PRIu64 " of %" PRIu64
                     " results, %" PRIu64 " ok, %" PRIu64 " duplicates)\n", PROG,
                     c.failed ? c.error : c.done ? "wrong results" : "time limit",
                     c.results, n, c.ok, c.dups);
    }
    client_close (&c);
    cluster_stop (&cl);
    return rate;
}

static void
load_line (const char *when)
{
    char load[64];
    load_average (load, sizeof load);
    printf ("load average %s: %s\n", when, load);
}

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: " PROG " [options]\n"
        "No-op tasks/s through a real broker with CurveZMQ off and on, in one\n"
        "run (alternating), the broker in a thread, each worker and the client\n"
        "with its own certificate. Prints best and worst of each; asserts no\n"
        "timings. Exit 0 when every run completed, 1 when one did not.\n\n"
        "  --tasks N        tasks per run (200000)\n"
        "  --repeat N       runs each, off and on (3)\n"
        "  --workers N      workers, 1 slot each (8)\n"
        "  --prefetch N     each worker's prefetch (256)\n"
        "  --time-limit S   bound on each run (300)\n"
        "  --quick          20000 tasks, 1 run each\n");
}

int
main (int argc, char **argv)
{
    opts_t o = {.tasks = 200000, .slots = 1, .repeat = 3, .time_limit_s = 300,
                .io_threads = 1};
    uint32_t nworkers = 8, prefetch = 256;
    static const struct option longs[] = {
        {"tasks", required_argument, 0, 1}, {"repeat", required_argument, 0, 2},
        {"workers", required_argument, 0, 3}, {"prefetch", required_argument, 0, 4},
        {"time-limit", required_argument, 0, 5}, {"quick", no_argument, 0, 6},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    unsigned long v;
    while ((ch = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        switch (ch) {
        case 1: if (qc_cli_uint (PROG, "--tasks", optarg, 1, 10000000, &v)) return 2;
            o.tasks = v; break;
        case 2: if (qc_cli_uint (PROG, "--repeat", optarg, 1, MAX_REPEAT, &v)) return 2;
            o.repeat = (uint32_t) v; break;
        case 3: if (qc_cli_uint (PROG, "--workers", optarg, 1, MAX_WORKERS, &v)) return 2;
            nworkers = (uint32_t) v; break;
        case 4: if (qc_cli_uint (PROG, "--prefetch", optarg, 0, 100000, &v)) return 2;
            prefetch = (uint32_t) v; break;
        case 5: if (qc_cli_uint (PROG, "--time-limit", optarg, 1, 7200, &v)) return 2;
            o.time_limit_s = (uint32_t) v; break;
        case 6: o.tasks = 20000; o.repeat = 1; break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", PROG, argv[optind]);
        return 2;
    }
    setvbuf (stdout, NULL, _IOLBF, 0);
    qc_log_set_stderr_level (QC_LOG_WARNING);
    qc_log_set_process (PROG);
    printf ("machine: %ld CPUs online\n", sysconf (_SC_NPROCESSORS_ONLN));
    load_line ("at start");
    printf ("CurveZMQ off and on: no-op tasks/s, %" PRIu64 " tasks a run, broker in a "
            "thread, %u workers (1 slot, prefetch %u), %u run(s) each, alternating\n",
            o.tasks, nworkers, prefetch, o.repeat);
    const char *keys = make_keys (nworkers);
    if (!keys) {
        drop_dir (s_keys);
        return 1;
    }
    double best[2] = {0, 0}, worst[2] = {1e18, 1e18}, cpu[2] = {-1, -1};
    int failures = 0;
    for (uint32_t r = 0; r < o.repeat; r++)
        for (int on = 0; on <= 1; on++) {
            o.curve_dir = on ? keys : NULL;
            double us, rate = one_run (&o, nworkers, prefetch, &us);
            if (rate <= 0) {
                failures++;
                continue;
            }
            printf ("  run %u, CurveZMQ %-3s %9.0f tasks/s, broker %.2f us/task\n", r + 1,
                    on ? "on" : "off", rate, us);
            if (rate > best[on]) {
                best[on] = rate;
                cpu[on] = us;
            }
            worst[on] = rate < worst[on] ? rate : worst[on];
        }
    drop_dir (s_keys);
    for (int on = 0; on <= 1; on++)
        if (best[on] > 0)
            printf ("  CurveZMQ %-3s  %9.0f tasks/s best, %9.0f worst; broker thread %.2f "
                    "us/task in the best run\n", on ? "on" : "off", best[on], worst[on],
                    cpu[on]);
    if (best[0] > 0 && best[1] > 0)
        printf ("  on / off (best): %.2f\n", best[1] / best[0]);
    load_line ("at the end");
    return failures ? 1 : 0;
}
