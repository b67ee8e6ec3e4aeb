/* The durable broker's benchmark (not a test: it reports, it asserts no
 * timings). Four measurements, each against a real broker:
 *
 *   journal     no-op tasks/s with the journal off (--state none) and on
 *               (a state folder in /tmp, every SUBMIT and result synced
 *               before it is answered or sent), in one run, the same
 *               cluster shape: the broker in a thread, 8 workers with
 *               prefetch 256, the protocol client of bench_broker.
 *   restart     a broker process with 100,000 queued tasks in its state
 *               folder is killed with -9 and started again on it: the time
 *               until it listens and until a waiting worker gets a TASK.
 *   idle        10,000 fake workers (in helper processes: descriptors)
 *               that say READY and then HEARTBEAT once a second; the
 *               broker process's CPU over the window, % of one core.
 *   queued      1,000,000 tasks submitted to a broker process with no
 *               worker, journal on and off: its RSS and peak RSS.
 *
 * Every loop is bounded by a count and by a deadline. Goals (issue 13):
 * >= 50,000 tasks/s with the journal on; serving again within 2 s;
 * under 30 % of a core; under 1 GB. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "shared/cli.h"
#include "shared/clock.h"
#include "shared/log.h"
#include "shared/proto.h"
#include "worker/worker.h"

#define PROG "bench_durable"
#define BATCH 1024
#define MAX_LIST 8
#define DRAIN_MAX 10000
#define REGISTER_TIMEOUT_MS 120000
#define SPAWN_TIMEOUT_MS 60000

/* bench_broker's parts (not all of them are used here) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/bench/bench_common.h"
#include "tests/bench/bench_client.h"
#include "tests/bench/bench_cluster.h"
#pragma GCC diagnostic pop

typedef struct {
    uint64_t tp_tasks, restart_tasks, queued_tasks;
    uint32_t idle_workers, idle_seconds, repeat, time_limit_s;
    bool run_journal, run_restart, run_idle, run_queued;
} dopts_t;

static char s_state[64];

static const char *
new_state (void)
{
    return temp_dir (s_state, sizeof s_state, "state");
}

static void
drop_state (void)
{
    drop_dir (s_state);
}

/* Submits n no-op tasks in batches (the rest without waiting, as
 * qc-submit does) and pumps until DONE or, when wait_done is false,
 * until every batch is ACCEPTED. Returns the seconds it took, -1 when it
 * did not complete. */
static double
submit_and_wait (const char *ep, uint64_t n, bool wait_done, int limit_s, client_t *c)
{
    if (client_open (c, ep, n, false))
        return -1;
    int64_t t0 = now_us (), deadline = t0 + (int64_t) limit_s * 1000000;
    uint64_t batches = client_submit_all (c, n, deadline);
    if (wait_done) {
        PUMP_UNTIL (c, c->done, deadline);
    } else {
        PUMP_UNTIL (c, c->accepted >= batches, deadline);
    }
    double s = (double) (now_us () - t0) / 1e6;
    bool ok = !c->failed && (wait_done ? c->done && c->results == n : c->accepted >= batches);
    if (!ok)
        fprintf (stderr, "%s: run incomplete: %s (%" PRIu64 " results, %" PRIu64
                 " accepted of %" PRIu64 ")\n", PROG, c->failed ? c->error : "time limit",
                 c->results, c->accepted, batches);
    return ok ? s : -1;
}

/* ------------------------------------------------------------ journal */

static int
run_journal (const dopts_t *d)
{
    printf ("journal: no-op tasks/s, %" PRIu64 " tasks a run, broker in a thread, 8 "
            "workers (1 slot, prefetch 256), %u run(s) each\n", d->tp_tasks, d->repeat);
    int failures = 0;
    for (int on = 0; on <= 1; on++) {
        double best = 0, worst = 1e18;
        for (uint32_t r = 0; r < d->repeat; r++) {
            opts_t o = {.slots = 1, .state_dir = on ? new_state () : NULL};
            cluster_t cl;
            if ((on && !o.state_dir) || cluster_start (&cl, &o, 8, 256)) {
                failures++;
                drop_state ();
                continue;
            }
            client_t c;
            double s = submit_and_wait (cl.endpoint, d->tp_tasks, true, (int) d->time_limit_s, &c);
            client_close (&c);
            cluster_stop (&cl);
            drop_state ();
            if (s <= 0) {
                failures++;
                continue;
            }
            double rate = (double) d->tp_tasks / s;
            best = rate > best ? rate : best;
            worst = rate < worst ? rate : worst;
        }
        if (best > 0)
            printf ("  journal %-3s  %9.0f tasks/s best, %9.0f worst\n", on ? "on" : "off",
                    best, worst);
    }
    return failures;
}

/* ------------------------------------------------------------ restart */

/* The broker's queue depth (STATUS), or -1. */
static long long
queue_depth (const char *ep)
{
    zsock_t *s = zsock_new (ZMQ_DEALER);
    long long q = -1;
    if (!s)
        return -1;
    zsock_set_linger (s, 0);
    zsock_set_rcvtimeo (s, 5000);
    qc_msg_t st = {.command = QC_STATUS, .gpu = -1};
    if (zsock_connect (s, "%s", ep) == 0 && qc_msg_send (&st, zsock_resolve (s), NULL) == 0) {
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_STATUS_REPLY)
            q = (long long) m->queue;
        qc_msg_destroy (&m);
    }
    zsock_destroy (&s);
    return q;
}

/* A fake worker that says READY every 100 ms until a TASK comes; the
 * time of the TASK, or -1 at the deadline. */
static int64_t
first_task (zsock_t *s, int64_t deadline)
{
    int64_t next_ready = 0;
    while (now_us () < deadline) {
        if (now_us () >= next_ready) {
            qc_msg_t ready = {.command = QC_READY, .gpu = -1, .name = "bench-restart",
                              .slots = 1, .prefetch = 0, .hb_ms = 1000};
            qc_msg_send (&ready, zsock_resolve (s), NULL);
            next_ready = now_us () + 100000;
        }
        zmq_pollitem_t item = {zsock_resolve (s), 0, ZMQ_POLLIN, 0};
        if (zmq_poll (&item, 1, 5) <= 0)
            continue;
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        bool task = m && m->command == QC_TASK;
        qc_msg_destroy (&m);
        if (task)
            return now_us ();
    }
    return -1;
}

static int
run_restart (const dopts_t *d)
{
    const char *state = new_state ();
    char ep[256];
    pid_t pid = state ? spawn_broker ("tcp://127.0.0.1:*", state, ep, sizeof ep) : -1;
    if (pid < 0) {
        drop_state ();
        return 1;
    }
    client_t c;
    double s = submit_and_wait (ep, d->restart_tasks, false, (int) d->time_limit_s, &c);
    client_close (&c);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    if (s < 0) {
        drop_state ();
        return 1;
    }
    zsock_t *w = zsock_new (ZMQ_DEALER);
    zsock_set_linger (w, 0);
    zsock_set_rcvtimeo (w, 0);
    zsock_connect (w, "%s", ep);
    int64_t t0 = now_us ();
    char ep2[256];
    pid = spawn_broker (ep, state, ep2, sizeof ep2);
    int64_t t_listen = now_us ();
    int64_t t_task = pid > 0 ? first_task (w, t0 + 60000000) : -1;
    long long depth = pid > 0 ? queue_depth (ep) : -1;
    zsock_destroy (&w);
    if (pid > 0)
        reap_broker (pid);
    drop_state ();
    printf ("restart: %" PRIu64 " tasks queued in the journal (submitted in %.2f s), "
            "broker killed with -9 and started again on its state folder:\n"
            "  listening again after %.3f s; a waiting worker got a TASK after %.3f s; "
            "%lld tasks queued then\n",
            d->restart_tasks, s, (double) (t_listen - t0) / 1e6,
            t_task > 0 ? (double) (t_task - t0) / 1e6 : -1.0, depth);
    return pid > 0 && t_task > 0 ? 0 : 1;
}

/* ------------------------------------------------------------ idle */

/* --fake-workers EP N SECONDS: N DEALERs that say READY, then HEARTBEAT
 * once a second (spread over the second) for SECONDS, answering nothing. */
static int
fake_workers (const char *ep, size_t n, int seconds)
{
    zsys_set_max_sockets (n + 64);
    zsock_t **socks = calloc (n, sizeof *socks);
    if (!socks)
        return 1;
    char name[64];
    for (size_t i = 0; i < n; i++) {
        if (!(socks[i] = zsock_new (ZMQ_DEALER)))
            return 1;
        zsock_set_linger (socks[i], 0);
        zsock_set_rcvtimeo (socks[i], 0);
        zsock_set_rcvhwm (socks[i], 1000);
        snprintf (name, sizeof name, "idle-%d-%zu", (int) getpid (), i);
        qc_msg_t ready = {.command = QC_READY, .gpu = -1, .name = name, .host = "bench",
                          .slots = 1, .prefetch = 1, .hb_ms = 1000};
        if (zsock_connect (socks[i], "%s", ep) < 0
            || qc_msg_send (&ready, zsock_resolve (socks[i]), NULL))
            return 1;
    }
    int64_t start = now_us (), end = start + (int64_t) seconds * 1000000;
    int64_t *next = calloc (n, sizeof *next);
    for (size_t i = 0; next && i < n; i++)
        next[i] = start + (int64_t) (1000000.0 * (double) i / (double) n);
    while (next && now_us () < end) {
        int64_t now = now_us ();
        for (size_t i = 0; i < n; i++)
            if (now >= next[i]) {
                qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
                qc_msg_send (&hb, zsock_resolve (socks[i]), NULL);
                next[i] += 1000000;
                /* drop what the broker sent (its heartbeats) */
                zmsg_t *raw;
                for (int k = 0; k < 8 && (raw = zmsg_recv (socks[i])); k++)
                    zmsg_destroy (&raw);
            }
        zclock_sleep (5);
    }
    for (size_t i = 0; i < n; i++)
        zsock_destroy (&socks[i]);
    free (socks);
    free (next);
    return 0;
}

static int
run_idle (const dopts_t *d)
{
    char ep[256];
    pid_t broker = spawn_broker ("tcp://127.0.0.1:*", NULL, ep, sizeof ep);
    if (broker < 0)
        return 1;
    /* a helper process per 2,500 fake workers: each socket costs two
     * descriptors on this side */
    size_t per = 2500, nproc = (d->idle_workers + per - 1) / per;
    pid_t helpers[64];
    int lifetime = (int) d->idle_seconds + REGISTER_TIMEOUT_MS / 1000 + 10;
    size_t started = 0;
    for (size_t i = 0; i < nproc && i < 64; i++) {
        size_t k = i + 1 < nproc ? per : d->idle_workers - per * i;
        char count[32], secs[32];
        snprintf (count, sizeof count, "%zu", k);
        snprintf (secs, sizeof secs, "%d", lifetime);
        pid_t p = fork ();
        if (p == 0) {
            prctl (PR_SET_PDEATHSIG, SIGTERM);
            execl ("/proc/self/exe", PROG, "--fake-workers", ep, count, secs, (char *) NULL);
            _exit (127);
        }
        if (p > 0)
            helpers[started++] = p;
    }
    int64_t t0 = now_us ();
    size_t reg = wait_registered (ep, d->idle_workers, REGISTER_TIMEOUT_MS);
    double reg_s = (double) (now_us () - t0) / 1e6;
    /* let registration settle, then measure the steady state */
    zclock_sleep (2000);
    double c0 = proc_cpu_s (broker);
    int64_t w0 = now_us ();
    zclock_sleep ((int) d->idle_seconds * 1000);
    double c1 = proc_cpu_s (broker);
    double win = (double) (now_us () - w0) / 1e6;
    size_t still = wait_registered (ep, d->idle_workers, 5000);
    for (size_t i = 0; i < started; i++) {
        kill (helpers[i], SIGKILL);    /* czmq's handler would outwait SIGTERM */
        waitpid (helpers[i], NULL, 0);
    }
    reap_broker (broker);
    printf ("idle: %zu fake workers in %zu helper processes, HEARTBEAT once a second\n"
            "  registered %zu in %.1f s; over %.1f s the broker used %.1f %% of one core "
            "(utime+stime / wall); %zu still registered at the end\n",
            (size_t) d->idle_workers, started, reg, reg_s, win,
            c0 >= 0 && c1 >= 0 ? 100.0 * (c1 - c0) / win : -1.0, still);
    return reg == d->idle_workers && still == d->idle_workers ? 0 : 1;
}

/* ------------------------------------------------------------ queued */

static long
rss_kb (pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *f = fopen (path, "r");
    long kb = -1;
    size_t n = strlen (field);
    while (f && fgets (line, sizeof line, f))
        if (strncmp (line, field, n) == 0)
            kb = strtol (line + n + 1, NULL, 10);
    if (f)
        fclose (f);
    return kb;
}

static int
run_queued (const dopts_t *d)
{
    printf ("queued: %" PRIu64 " tasks submitted to a broker process with no worker\n",
            d->queued_tasks);
    int failures = 0;
    for (int on = 0; on <= 1; on++) {
        const char *state = on ? new_state () : NULL;
        char ep[256];
        pid_t pid = spawn_broker ("tcp://127.0.0.1:*", state, ep, sizeof ep);
        if (pid < 0) {
            failures++;
            drop_state ();
            continue;
        }
        client_t c;
        double s = submit_and_wait (ep, d->queued_tasks, false, (int) d->time_limit_s, &c);
        zclock_sleep (1000);
        long rss = rss_kb (pid, "VmRSS:"), hwm = rss_kb (pid, "VmHWM:");
        /* then the whole job cancelled: how long the answer takes, and
         * what it costs (every queued task becomes a failed result) */
        uint64_t before = c.accepted;
        int64_t t0 = now_us ();
        qc_msg_t cancel = {.command = QC_CANCEL, .gpu = -1, .job = c.job};
        client_send (&c, &cancel);
        PUMP_UNTIL (&c, c.accepted > before, t0 + 60000000);
        double cancel_s = (double) (now_us () - t0) / 1e6;
        zclock_sleep (500);
        long rss2 = rss_kb (pid, "VmRSS:");
        client_close (&c);
        reap_broker (pid);
        drop_state ();
        if (s < 0 || c.accepted <= before) {
            failures++;
            continue;
        }
        printf ("  journal %-3s  submitted in %.1f s; broker RSS %.0f MB, peak %.0f MB; "
                "cancelled in %.3f s, RSS then %.0f MB\n", on ? "on" : "off", s,
                (double) rss / 1024.0, (double) hwm / 1024.0, cancel_s,
                (double) rss2 / 1024.0);
    }
    return failures;
}

/* ------------------------------------------------------------ main */

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: " PROG " [options]\n"
        "The durable broker's figures: no-op tasks/s with the journal off and on,\n"
        "restart time with queued tasks, CPU with idle workers, RSS with queued\n"
        "tasks. Prints; asserts no timings. Exit 0 when every run completed.\n\n"
        "  --only WHAT       journal, restart, idle or queued (repeatable)\n"
        "  --tasks N         tasks per journal run (200000)\n"
        "  --repeat N        journal runs per setting, best and worst shown (3)\n"
        "  --restart-tasks N queued tasks for the restart (100000)\n"
        "  --idle-workers N  fake workers (10000)\n"
        "  --idle-seconds S  window for them (10)\n"
        "  --queued-tasks N  tasks for the RSS run (1000000)\n"
        "  --time-limit S    bound on each run (300)\n"
        "  --quick           small runs (a smoke test)\n");
}

int
main (int argc, char **argv)
{
    dopts_t d = {.tp_tasks = 200000, .restart_tasks = 100000, .queued_tasks = 1000000,
                 .idle_workers = 10000, .idle_seconds = 10, .repeat = 3,
                 .time_limit_s = 300};
    long serve_fd = -1;
    const char *serve_bind = NULL, *serve_state = NULL;
    bool only = false;
    static const struct option longs[] = {
        {"only", required_argument, 0, 1}, {"tasks", required_argument, 0, 2},
        {"repeat", required_argument, 0, 3}, {"restart-tasks", required_argument, 0, 4},
        {"idle-workers", required_argument, 0, 5}, {"idle-seconds", required_argument, 0, 6},
        {"queued-tasks", required_argument, 0, 7}, {"time-limit", required_argument, 0, 8},
        {"quick", no_argument, 0, 9}, {"serve-broker", required_argument, 0, 10},
        {"bind", required_argument, 0, 11}, {"state", required_argument, 0, 12},
        {"fake-workers", required_argument, 0, 13}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ch;
    unsigned long v;
    const char *fake_ep = NULL;
    while ((ch = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        switch (ch) {
        case 1:
            if (!only) d.run_journal = d.run_restart = d.run_idle = d.run_queued = false;
            only = true;
            if (streq (optarg, "journal")) d.run_journal = true;
            else if (streq (optarg, "restart")) d.run_restart = true;
            else if (streq (optarg, "idle")) d.run_idle = true;
            else if (streq (optarg, "queued")) d.run_queued = true;
            else {
                fprintf (stderr, "%s: --only takes journal, restart, idle or queued\n", PROG);
                return 2;
            }
            break;
        case 2: if (qc_cli_uint (PROG, "--tasks", optarg, 1, 10000000, &v)) return 2;
            d.tp_tasks = v; break;
        case 3: if (qc_cli_uint (PROG, "--repeat", optarg, 1, 20, &v)) return 2;
            d.repeat = (uint32_t) v; break;
        case 4: if (qc_cli_uint (PROG, "--restart-tasks", optarg, 1, 10000000, &v)) return 2;
            d.restart_tasks = v; break;
        case 5: if (qc_cli_uint (PROG, "--idle-workers", optarg, 1, 100000, &v)) return 2;
            d.idle_workers = (uint32_t) v; break;
        case 6: if (qc_cli_uint (PROG, "--idle-seconds", optarg, 1, 600, &v)) return 2;
            d.idle_seconds = (uint32_t) v; break;
        case 7: if (qc_cli_uint (PROG, "--queued-tasks", optarg, 1, 100000000, &v)) return 2;
            d.queued_tasks = v; break;
        case 8: if (qc_cli_uint (PROG, "--time-limit", optarg, 1, 7200, &v)) return 2;
            d.time_limit_s = (uint32_t) v; break;
        case 9:
            d.tp_tasks = 20000; d.restart_tasks = 10000; d.queued_tasks = 50000;
            d.idle_workers = 500; d.idle_seconds = 3; d.repeat = 1;
            break;
        case 10: if (qc_cli_uint (PROG, "--serve-broker", optarg, 0, 1 << 20, &v)) return 2;
            serve_fd = (long) v; break;
        case 11: serve_bind = optarg; break;
        case 12: serve_state = optarg; break;
        case 13: fake_ep = optarg; break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 2;
        }
    }
    /* more descriptors: the broker process inherits them */
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit (RLIMIT_NOFILE, &rl);
    }
    if (fake_ep) {
        if (optind + 2 != argc)
            return 2;
        return fake_workers (fake_ep, (size_t) strtoul (argv[optind], NULL, 10),
                             atoi (argv[optind + 1]));
    }
    if (serve_fd >= 0)
        return serve_broker ((int) serve_fd, serve_bind ? serve_bind : "tcp://127.0.0.1:*",
                             serve_state);
    if (!only)
        d.run_journal = d.run_restart = d.run_idle = d.run_queued = true;
    setvbuf (stdout, NULL, _IOLBF, 0);
    qc_log_set_stderr_level (QC_LOG_WARNING);
    qc_log_set_process (PROG);
    char load[64];
    load_average (load, sizeof load);
    printf ("machine: %ld CPUs online; load average at start: %s\n\n",
            sysconf (_SC_NPROCESSORS_ONLN), load);
    int failures = 0;
    if (d.run_journal)
        failures += run_journal (&d);
    if (d.run_restart)
        failures += run_restart (&d);
    if (d.run_idle)
        failures += run_idle (&d);
    if (d.run_queued)
        failures += run_queued (&d);
    return failures ? 1 : 0;
}
