/* Broker benchmark (not a test: it asserts no timings, it reports them).
 *
 * What it measures, with the real code on every hop:
 *
 *   throughput  a real broker, N real workers (qc_worker_new with a no-op
 *               executor that sets one result key) and a client written
 *               here that speaks the protocol like qc-submit: SUBMIT
 *               batches of 1024 slide paths, ACCEPTED, RESULT by seq, one
 *               ACK per batch read, HEARTBEAT, DONE.
 *               tasks/s = tasks / (first SUBMIT sent .. DONE read).
 *               The broker runs in a thread of this process (by default;
 *               the same loop as qc_broker_actor) or, with
 *               --broker-process, as a separate process (this binary
 *               re-executed with --serve-broker, the qc-broker loop).
 *               Its CPU time over the run is reported per task: that is
 *               what the broker would cost with a core of its own, apart
 *               from the workers and the client that share this machine.
 *   latency     the same cluster, one task in flight at a time: the client
 *               submits one slide, waits for its RESULT, ACKs, submits the
 *               next. Per task, on one monotonic clock (the client and the
 *               executors share this process):
 *                 dispatch = SUBMIT sent -> executor starts the task
 *                            (client->broker, scheduling, TASK to the
 *                            worker, agent -> local queue -> executor)
 *                 e2e      = SUBMIT sent -> RESULT read by the client
 *               The broker's own TASK send time is not observable from
 *               outside it, so "dispatch" includes the client->broker hop.
 *   idle        the broker as a separate process and 1000 fake workers:
 *               DEALER sockets in one thread that send READY, then
 *               HEARTBEAT every second, and answer nothing else. Broker
 *               CPU = utime+stime from /proc/PID/stat over the window.
 *
 * Every loop is bounded by a count and by a deadline; a run that hits its
 * deadline is reported as such with what it finished. Endpoints are
 * loopback TCP with a free port (default) or ipc:// (--ipc). */
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

#define PROG "bench_broker"
#define BATCH 1024              /* slides per SUBMIT, as qc-submit sends */
#define MAX_LIST 8              /* values in --workers / --prefetch */
#define MAX_REPEAT 9
#define DRAIN_MAX 10000         /* messages read per wake before an ACK */
#define REGISTER_TIMEOUT_MS 20000
#define SPAWN_TIMEOUT_MS 10000

#include "tests/bench/bench_common.h"
#include "tests/bench/bench_client.h"
#include "tests/bench/bench_cluster.h"

/* ------------------------------------------------------------ runs */

typedef struct {
    double seconds, rate;
    uint64_t results;
    double broker_us;           /* broker CPU per task, microseconds */
    double broker_core;         /* broker CPU / wall, % of one core */
    double all_cpu;             /* this process (+ broker process), % */
    bool ok;
} tp_run_t;

typedef struct {
    uint32_t nworkers, prefetch;
    uint64_t tasks;
    tp_run_t runs[MAX_REPEAT];
    size_t nruns;
    tp_run_t med;               /* median by rate */
    double rate_min, rate_max;
    bool tp_ok;
    uint64_t executed;
    /* latency run */
    uint64_t lat_n;
    double disp_p50, disp_p99, e2e_p50, e2e_p99;
    bool lat_ok;
    char note[400];
} row_t;

static void
note (row_t *r, const char *fmt, ...)
{
    size_t used = strlen (r->note);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (r->note + used, sizeof r->note - used, fmt, ap);
    va_end (ap);
}

static void
run_throughput (cluster_t *cl, const opts_t *o, row_t *r, tp_run_t *out)
{
    client_t c;
    uint64_t n = o->tasks;
    memset (out, 0, sizeof *out);
    if (client_open (&c, cl->endpoint, n, false)) {
        client_close (&c);
        note (r, "throughput: client did not start; ");
        return;
    }
    uint64_t exec0 = atomic_load (&cl->exec.executed);
    double b0 = broker_cpu_s (cl), s0 = self_cpu_s ();
    int64_t t0 = now_us ();
    int64_t deadline = t0 + (int64_t) o->time_limit_s * 1000000;
    /* the batches after the first go out at once, as qc-submit sends
     * them; they queue in the broker while results stream back */
    client_submit_all (&c, n, deadline);
    PUMP_UNTIL (&c, c.done, deadline);
    int64_t t1 = now_us ();
    double b1 = broker_cpu_s (cl), s1 = self_cpu_s ();
    out->results = c.results;
    out->seconds = (double) (t1 - t0) / 1e6;
    out->rate = out->seconds > 0 ? (double) c.results / out->seconds : 0;
    if (b0 >= 0 && b1 >= 0 && c.results) {
        out->broker_us = (b1 - b0) * 1e6 / (double) c.results;
        out->broker_core = 100.0 * (b1 - b0) / out->seconds;
    }
    out->all_cpu = 100.0 * ((s1 - s0) + (cl->pid > 0 && b0 >= 0 ? b1 - b0 : 0))
                   / out->seconds;
    r->executed += atomic_load (&cl->exec.executed) - exec0;
    out->ok = c.done && !c.failed && c.results == n && c.ok == n && c.dups == 0
              && c.done_total == n && c.done_done == n;
    if (c.failed)
        note (r, "throughput: %s; ", c.error);
    else if (!c.done)
        note (r, "throughput: time limit reached before DONE (%" PRIu64 " of %" PRIu64
                 " results); ", c.results, n);
    else if (!out->ok)
        note (r, "throughput: DONE said %" PRIu64 "/%" PRIu64 " done, %" PRIu64
                 " results, %" PRIu64 " ok, %" PRIu64 " duplicates; ",
              c.done_done, c.done_total, c.results, c.ok, c.dups);
    client_close (&c);
}

static void
run_latency (cluster_t *cl, const opts_t *o, row_t *r)
{
    uint64_t n = o->lat_tasks;
    client_t c;
    int64_t *submit_us = calloc (n ? n : 1, sizeof *submit_us);
    int64_t *disp = calloc (n ? n : 1, sizeof *disp);
    int64_t *e2e = calloc (n ? n : 1, sizeof *e2e);
    _Atomic int64_t *starts = cl->exec.start_us;
    int opened = submit_us && disp && e2e && starts && n <= cl->exec.nstart
                     ? client_open (&c, cl->endpoint, n, true)
                     : -2;
    if (opened) {
        note (r, "latency: out of memory or sockets; ");
        if (opened == -1)
            client_close (&c);
        free (submit_us);
        free (disp);
        free (e2e);
        return;
    }
    /* this is the cluster's first job: its indexes are the stamps' */
    atomic_store (&cl->exec.stamping, true);
    int64_t deadline = now_us () + (int64_t) o->time_limit_s * 1000000;
    uint64_t sent = 0;
    for (uint64_t i = 0; i < n && !c.failed && now_us () < deadline; i++) {
        submit_us[i] = now_us ();
        if (client_submit (&c, "lat", i, 1, i + 1 == n))
            break;
        sent++;
        /* one in flight: wait for this task's RESULT before the next */
        PUMP_UNTIL (&c, c.seen[i], deadline);
        if (!c.seen[i])
            break;
    }
    if (sent == n)
        PUMP_UNTIL (&c, c.done, deadline);
    /* the throughput jobs reuse indexes from 0: keep these stamps */
    atomic_store (&cl->exec.stamping, false);
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        int64_t s = atomic_load (&starts[i]);
        if (!c.seen[i] || !s)
            continue;
        disp[k] = s - submit_us[i];
        e2e[k] = c.result_us[i] - submit_us[i];
        k++;
    }
    qsort (disp, k, sizeof *disp, cmp_i64);
    qsort (e2e, k, sizeof *e2e, cmp_i64);
    r->lat_n = k;
    r->disp_p50 = pct_ms (disp, k, 0.50);
    r->disp_p99 = pct_ms (disp, k, 0.99);
    r->e2e_p50 = pct_ms (e2e, k, 0.50);
    r->e2e_p99 = pct_ms (e2e, k, 0.99);
    r->lat_ok = k == n && c.done && !c.failed;
    if (c.failed)
        note (r, "latency: %s; ", c.error);
    else if (k != n || !c.done)
        note (r, "latency: time limit reached (%zu of %" PRIu64 " tasks); ", k, n);
    client_close (&c);
    free (submit_us);
    free (disp);
    free (e2e);
}

/* The run with the median rate stands for the configuration. */
static void
summarise (row_t *r)
{
    double rates[MAX_REPEAT];
    r->tp_ok = r->nruns > 0;
    for (size_t i = 0; i < r->nruns; i++) {
        rates[i] = r->runs[i].rate;
        r->tp_ok = r->tp_ok && r->runs[i].ok;
    }
    if (!r->nruns)
        return;
    qsort (rates, r->nruns, sizeof *rates, cmp_double);
    r->rate_min = rates[0];
    r->rate_max = rates[r->nruns - 1];
    double median = rates[(r->nruns - 1) / 2];
    for (size_t i = 0; i < r->nruns; i++)
        if (r->runs[i].rate == median) {
            r->med = r->runs[i];
            break;
        }
}

#include "tests/bench/bench_idle.h"

/* ------------------------------------------------------------ main */

static void
machine_line (void)
{
    char model[256] = "unknown";
    FILE *f = fopen ("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets (line, sizeof line, f))
            if (strncmp (line, "model name", 10) == 0) {
                char *v = strchr (line, ':');
                if (v) {
                    v += 1 + (v[1] == ' ');
                    v[strcspn (v, "\n")] = 0;
                    snprintf (model, sizeof model, "%s", v);
                }
                break;
            }
        fclose (f);
    }
    /* other work on the machine moves every number here: say how much */
    char load[64];
    load_average (load, sizeof load);
    int maj, min, pat;
    zmq_version (&maj, &min, &pat);
    printf ("machine: %ld CPUs online (nproc), model name: %s; load average at "
            "start: %s; libzmq %d.%d.%d, czmq %d.%d.%d\n",
            sysconf (_SC_NPROCESSORS_ONLN), model, load, maj, min, pat,
            CZMQ_VERSION_MAJOR, CZMQ_VERSION_MINOR, CZMQ_VERSION_PATCH);
}

static int
parse_list (const char *opt, const char *text, uint32_t *out, size_t *n,
            unsigned long min, unsigned long max)
{
    char buf[256];
    snprintf (buf, sizeof buf, "%s", text);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r (buf, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        unsigned long v;
        if (*n == MAX_LIST) {
            fprintf (stderr, "%s: %s takes at most %d values\n", PROG, opt, MAX_LIST);
            return -1;
        }
        if (qc_cli_uint (PROG, opt, tok, min, max, &v))
            return -1;
        out[(*n)++] = (uint32_t) v;
    }
    if (*n == 0) {
        fprintf (stderr, "%s: %s needs at least one value\n", PROG, opt);
        return -1;
    }
    return 0;
}

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: " PROG " [options]\n"
        "Broker throughput and latency with no-op tasks, and broker CPU with\n"
        "idle heartbeating workers. Prints tables; asserts no timings. Exit 0\n"
        "when every run completed (whatever its speed), 1 when one did not.\n\n"
        "  --tasks N          tasks per throughput run (200000)\n"
        "  --repeat N         throughput runs per configuration; the median\n"
        "                     is shown with the range (1)\n"
        "  --workers LIST     worker counts, comma separated (1,8,64)\n"
        "  --prefetch LIST    worker prefetch values to try (64,256)\n"
        "  --slots N          executor slots per worker (1)\n"
        "  --latency-tasks N  tasks of the one-in-flight latency run (1000)\n"
        "  --idle-workers N   fake heartbeating workers (1000)\n"
        "  --idle-seconds S   measuring window for them (10)\n"
        "  --time-limit S     bound on each run (60)\n"
        "  --io-threads N     ZeroMQ I/O threads of this process (1)\n"
        "  --broker-process   run the broker as a separate process for the\n"
        "                     throughput and latency runs too\n"
        "  --ipc              ipc:// endpoints instead of tcp://127.0.0.1\n"
        "  --only WHAT        tp, lat or idle (repeatable); default all\n"
        "  --quick            20000 tasks, 200 latency tasks, 3 s idle\n");
}

static void
print_tables (const opts_t *o, row_t *rows, size_t nrows)
{
    printf ("%-7s %-8s %8s %7s %9s %17s | %6s %9s %9s %9s %9s\n", "workers",
            "prefetch", "tasks", "seconds", "tasks/s", "(min..max)", "lat_n",
            "disp_p50", "disp_p99", "e2e_p50", "e2e_p99");
    printf ("%-7s %-8s %8s %7s %9s %17s | %6s %9s %9s %9s %9s\n", "", "", "", "", "",
            "", "", "ms", "ms", "ms", "ms");
    for (size_t i = 0; i < nrows; i++) {
        row_t *r = &rows[i];
        char tp[96] = "       -       -         -                 -", lat[80] = "-";
        if (o->run_tp && r->nruns) {
            char range[40];
            snprintf (range, sizeof range, "(%.0f..%.0f)", r->rate_min, r->rate_max);
            snprintf (tp, sizeof tp, "%8" PRIu64 " %7.2f %9.0f %17s", r->med.results,
                      r->med.seconds, r->med.rate, r->nruns > 1 ? range : "");
        }
        if (o->run_lat)
            snprintf (lat, sizeof lat, "%6" PRIu64 " %9.3f %9.3f %9.3f %9.3f",
                      r->lat_n, r->disp_p50, r->disp_p99, r->e2e_p50, r->e2e_p99);
        printf ("%-7u %-8u %s | %s\n", r->nworkers, r->prefetch, tp, lat);
        if (r->note[0])
            printf ("        ! %s\n", r->note);
    }
    if (!o->run_tp)
        return;
    printf ("\nbroker CPU during the throughput runs (%s):\n",
            o->broker_process ? "broker process, utime+stime"
                              : "broker thread's CPU clock; its socket I/O runs in "
                                "the shared ZeroMQ I/O thread and is not included");
    printf ("%-7s %-8s %14s %14s %12s %14s\n", "workers", "prefetch", "broker_us/task",
            "broker_%core", "all_%cpu", "executions");
    for (size_t i = 0; i < nrows; i++) {
        row_t *r = &rows[i];
        if (!r->nruns)
            continue;
        printf ("%-7u %-8u %14.2f %14.1f %12.1f %14" PRIu64 "\n", r->nworkers,
                r->prefetch, r->med.broker_us, r->med.broker_core, r->med.all_cpu,
                r->executed);
    }
    printf ("(all_%%cpu: every thread of the bench%s, %% of one core; executions:\n"
            " no-op runs over all repeats, more than the tasks only if a task ran twice)\n",
            o->broker_process ? " plus the broker process" : "");
}

/* Long options without a letter: values past every char. */
enum {
    OPT_TASKS = 256,
    OPT_WORKERS,
    OPT_PREFETCH,
    OPT_SLOTS,
    OPT_LATENCY_TASKS,
    OPT_IDLE_WORKERS,
    OPT_IDLE_SECONDS,
    OPT_TIME_LIMIT,
    OPT_IO_THREADS,
    OPT_IPC,
    OPT_ONLY,
    OPT_QUICK,
    OPT_SERVE_BROKER,
    OPT_BIND,
    OPT_REPEAT,
    OPT_BROKER_PROCESS,
    OPT_STATE,
};

int
main (int argc, char **argv)
{
    opts_t o = {.tasks = 200000, .workers = {1, 8, 64}, .nworkers = 3,
                .prefetch = {64, 256}, .nprefetch = 2, .slots = 1, .repeat = 1,
                .lat_tasks = 1000, .idle_workers = 1000, .idle_seconds = 10,
                .time_limit_s = 60, .io_threads = 1};
    long serve_fd = -1;
    const char *serve_bind = NULL, *serve_state = NULL;
    bool only = false;
    static const struct option longs[] = {
        {"tasks", required_argument, 0, OPT_TASKS},
        {"workers", required_argument, 0, OPT_WORKERS},
        {"prefetch", required_argument, 0, OPT_PREFETCH},
        {"slots", required_argument, 0, OPT_SLOTS},
        {"latency-tasks", required_argument, 0, OPT_LATENCY_TASKS},
        {"idle-workers", required_argument, 0, OPT_IDLE_WORKERS},
        {"idle-seconds", required_argument, 0, OPT_IDLE_SECONDS},
        {"time-limit", required_argument, 0, OPT_TIME_LIMIT},
        {"io-threads", required_argument, 0, OPT_IO_THREADS},
        {"ipc", no_argument, 0, OPT_IPC},
        {"only", required_argument, 0, OPT_ONLY},
        {"quick", no_argument, 0, OPT_QUICK},
        {"serve-broker", required_argument, 0, OPT_SERVE_BROKER},
        {"bind", required_argument, 0, OPT_BIND},
        {"repeat", required_argument, 0, OPT_REPEAT},
        {"broker-process", no_argument, 0, OPT_BROKER_PROCESS},
        {"state", required_argument, 0, OPT_STATE},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ch;
    unsigned long v;
    while ((ch = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        switch (ch) {
        case OPT_TASKS:
            if (qc_cli_uint (PROG, "--tasks", optarg, 1, 10000000, &v)) return 2;
            o.tasks = v;
            break;
        case OPT_WORKERS:
            if (parse_list ("--workers", optarg, o.workers, &o.nworkers, 1, 256)) return 2;
            break;
        case OPT_PREFETCH:
            if (parse_list ("--prefetch", optarg, o.prefetch, &o.nprefetch, 0, 100000))
                return 2;
            break;
        case OPT_SLOTS:
            if (qc_cli_uint (PROG, "--slots", optarg, 1, 64, &v)) return 2;
            o.slots = (uint32_t) v;
            break;
        case OPT_LATENCY_TASKS:
            if (qc_cli_uint (PROG, "--latency-tasks", optarg, 1, 1000000, &v)) return 2;
            o.lat_tasks = (uint32_t) v;
            break;
        case OPT_IDLE_WORKERS:
            if (qc_cli_uint (PROG, "--idle-workers", optarg, 1, 10000, &v)) return 2;
            o.idle_workers = (uint32_t) v;
            break;
        case OPT_IDLE_SECONDS:
            if (qc_cli_uint (PROG, "--idle-seconds", optarg, 1, 600, &v)) return 2;
            o.idle_seconds = (uint32_t) v;
            break;
        case OPT_TIME_LIMIT:
            if (qc_cli_uint (PROG, "--time-limit", optarg, 1, 3600, &v)) return 2;
            o.time_limit_s = (uint32_t) v;
            break;
        case OPT_IO_THREADS:
            if (qc_cli_uint (PROG, "--io-threads", optarg, 1, 16, &v)) return 2;
            o.io_threads = (uint32_t) v;
            break;
        case OPT_IPC: o.ipc = true; break;
        case OPT_ONLY:
            if (!only) o.run_tp = o.run_lat = o.run_idle = false;
            only = true;
            if (streq (optarg, "tp")) o.run_tp = true;
            else if (streq (optarg, "lat")) o.run_lat = true;
            else if (streq (optarg, "idle")) o.run_idle = true;
            else {
                fprintf (stderr, "%s: --only takes tp, lat or idle\n", PROG);
                return 2;
            }
            break;
        case OPT_QUICK:
            o.tasks = 20000;
            o.lat_tasks = 200;
            o.idle_seconds = 3;
            break;
        case OPT_SERVE_BROKER:
            if (qc_cli_uint (PROG, "--serve-broker", optarg, 0, 1 << 20, &v)) return 2;
            serve_fd = (long) v;
            break;
        case OPT_BIND: serve_bind = optarg; break;
        case OPT_REPEAT:
            if (qc_cli_uint (PROG, "--repeat", optarg, 1, MAX_REPEAT, &v)) return 2;
            o.repeat = (uint32_t) v;
            break;
        case OPT_BROKER_PROCESS: o.broker_process = true; break;
        case OPT_STATE: serve_state = optarg; break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", PROG, argv[optind]);
        return 2;
    }
    if (serve_fd >= 0)
        return serve_broker ((int) serve_fd, serve_bind ? serve_bind : "tcp://127.0.0.1:*",
                             serve_state);
    if (!only)
        o.run_tp = o.run_lat = o.run_idle = true;

    /* 1000 fake workers need 1000 sockets and about two descriptors each
     * here, and as many connections in the broker process, which
     * inherits this limit */
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit (RLIMIT_NOFILE, &rl))
            perror (PROG ": setrlimit RLIMIT_NOFILE");
    }
    /* both must precede the first socket, when czmq creates the context */
    zsys_set_max_sockets (o.idle_workers + 1024);
    zsys_set_io_threads (o.io_threads);
    /* progress lines and tables interleave with stderr in order */
    setvbuf (stdout, NULL, _IOLBF, 0);
    /* joins and leaves are logged at INFO: keep the tables readable */
    qc_log_set_stderr_level (QC_LOG_WARNING);
    qc_log_set_process (PROG);

    machine_line ();
    printf ("setup: %s; broker %s; no-op executor, %u slot(s) per worker; client "
            "SUBMITs batches of %d and ACKs each batch read; %u ZeroMQ I/O thread(s) "
            "in the bench process\n",
            o.ipc ? "ipc://" : "tcp://127.0.0.1",
            o.broker_process ? "in its own process" : "in a thread of the bench process",
            o.slots, BATCH, o.io_threads);
    if (o.run_tp)
        printf ("throughput: %" PRIu64 " tasks per run, %u run(s) per configuration "
                "(median shown), limit %u s per run\n", o.tasks, o.repeat,
                o.time_limit_s);
    if (o.run_lat)
        printf ("latency: %u tasks, one in flight; disp = SUBMIT sent -> executor "
                "starts it, e2e = SUBMIT sent -> RESULT read by the client\n",
                o.lat_tasks);
    printf ("\n");
    fflush (stdout);

    size_t nrows = 0;
    row_t *rows = calloc (MAX_LIST * MAX_LIST, sizeof *rows);
    if (!rows)
        return 1;
    int failures = 0;
    if (o.run_tp || o.run_lat)
        for (size_t wi = 0; wi < o.nworkers; wi++)
            for (size_t pi = 0; pi < o.nprefetch; pi++) {
                row_t *r = &rows[nrows++];
                r->nworkers = o.workers[wi];
                r->prefetch = o.prefetch[pi];
                r->tasks = o.tasks;
                cluster_t cl;
                if (cluster_start (&cl, &o, r->nworkers, r->prefetch)) {
                    note (r, "cluster did not start");
                    failures++;
                    continue;
                }
                /* latency first, on a quiet broker with no earlier job */
                if (o.run_lat)
                    run_latency (&cl, &o, r);
                for (uint32_t k = 0; o.run_tp && k < o.repeat; k++) {
                    run_throughput (&cl, &o, r, &r->runs[r->nruns++]);
                    if (!r->runs[r->nruns - 1].ok)
                        break;
                }
                summarise (r);
                cluster_stop (&cl);
                if ((o.run_tp && !r->tp_ok) || (o.run_lat && !r->lat_ok))
                    failures++;
                printf ("  ran: %u workers, prefetch %u\n", r->nworkers, r->prefetch);
            }
    if (nrows) {
        print_tables (&o, rows, nrows);
        printf ("\n");
    }
    free (rows);
    if (o.run_idle) {
        idle_t id;
        run_idle (&o, &id);
        printf ("idle: broker as a separate process, %u fake workers (READY, then "
                "HEARTBEAT every 1000 ms)\n", o.idle_workers);
        printf ("  broker alone, no peer (2 s):           %6.2f %% of one core\n",
                id.base_cpu);
        printf ("  registering %zu workers (%.2f s):     %6.2f %% of one core\n",
                id.registered, id.reg_seconds, id.reg_cpu);
        printf ("  %zu idle heartbeating workers (%.1f s): %6.2f %% of one core "
                "(broker utime+stime / wall)\n",
                id.still_registered, id.idle_seconds, id.idle_cpu);
        printf ("  heartbeats sent %" PRIu64 ", messages from the broker %" PRIu64
                ", fake-worker thread %.1f %% of one core\n",
                id.beats_sent, id.msgs_in, id.self_cpu);
        if (!id.ok) {
            printf ("  ! %s\n", id.note[0] ? id.note : "incomplete");
            failures++;
        }
    }
    /* a benchmark reports; it fails only when a run could not complete */
    return failures ? 1 : 0;
}
