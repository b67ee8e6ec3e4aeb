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

/* ------------------------------------------------------------ options */

typedef struct {
    uint64_t tasks;             /* per throughput run */
    uint32_t workers[MAX_LIST];
    size_t nworkers;
    uint32_t prefetch[MAX_LIST];
    size_t nprefetch;
    uint32_t slots;
    uint32_t repeat;            /* throughput runs per configuration */
    uint32_t lat_tasks;
    uint32_t idle_workers;
    uint32_t idle_seconds;
    uint32_t time_limit_s;      /* per run */
    uint32_t io_threads;
    bool ipc;
    bool broker_process;
    bool run_tp, run_lat, run_idle;
} opts_t;

/* ------------------------------------------------------------ time, cpu */

static int64_t
now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
cmp_i64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static int
cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values (microseconds), in ms. */
static double
pct_ms (const int64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t rank = (size_t) (p * (double) n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return (double) sorted[rank - 1] / 1000.0;
}

/* CPU seconds (user + system) of a process, from /proc/PID/stat; -1 on
 * error. Resolution is one clock tick (10 ms). */
static double
proc_cpu_s (pid_t pid)
{
    char path[64], buf[2048];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf[n] = 0;
    /* the command name may hold spaces: count fields from its ')' */
    char *p = strrchr (buf, ')');
    unsigned long long ut = 0, st = 0;
    /* after ')': state ppid pgrp session tty_nr tpgid flags minflt cminflt
     * majflt cmajflt utime stime */
    if (!p || sscanf (p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                      &ut, &st) != 2)
        return -1;
    long hz = sysconf (_SC_CLK_TCK);
    return hz > 0 ? (double) (ut + st) / (double) hz : -1;
}

static double
self_cpu_s (void)
{
    struct rusage ru;
    if (getrusage (RUSAGE_SELF, &ru))
        return -1;
    return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6
           + (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec / 1e6;
}

/* ------------------------------------------------------------ executor */

/* Shared by every worker of a cluster. start_us (indexed by task idx)
 * lives as long as the cluster, so an executor never writes into freed
 * memory; it is stamped only while stamping is set (the latency run).
 * executed counts every execution so that a re-run would show. */
typedef struct {
    _Atomic int64_t *start_us;
    uint64_t nstart;
    atomic_bool stamping;
    atomic_uint_fast64_t executed;
} exec_shared_t;

static void
noop_exec (void *arg, const qc_task_t *task, qc_result_t *out)
{
    exec_shared_t *x = arg;
    if (atomic_load_explicit (&x->stamping, memory_order_relaxed) && task->idx < x->nstart)
        atomic_store_explicit (&x->start_us[task->idx], now_us (), memory_order_relaxed);
    atomic_fetch_add_explicit (&x->executed, 1, memory_order_relaxed);
    if (qc_result_set (out, "noop", "1"))
        qc_result_fail (out, "cannot set the result key");
}

/* ------------------------------------------------------------ client */

typedef struct {
    zsock_t *sock;
    uint64_t job;               /* 0 until the first ACCEPTED */
    uint64_t expected;          /* next RESULT seq */
    uint64_t acked;
    uint64_t total;             /* tasks this run submits */
    uint64_t results, ok, dups, accepted;
    uint8_t *seen;              /* by idx */
    int64_t *result_us;         /* by idx; NULL when not timing tasks */
    int64_t next_beat;
    bool done, failed;
    uint64_t done_total, done_done;
    char error[300];
} client_t;

static int
client_open (client_t *c, const char *ep, uint64_t total, bool timed)
{
    memset (c, 0, sizeof *c);
    c->expected = 1;
    c->total = total;
    c->seen = calloc (total ? total : 1, 1);
    c->result_us = timed ? calloc (total ? total : 1, sizeof *c->result_us) : NULL;
    c->sock = zsock_new (ZMQ_DEALER);
    if (!c->seen || (timed && !c->result_us) || !c->sock) {
        fprintf (stderr, "%s: out of memory or sockets for the client\n", PROG);
        return -1;
    }
    /* results are bounded by the broker's window, submits by the run */
    zsock_set_sndhwm (c->sock, 100000);
    zsock_set_rcvhwm (c->sock, 100000);
    zsock_set_linger (c->sock, 0);
    zsock_set_rcvtimeo (c->sock, 0);   /* reads below never block */
    if (zsock_connect (c->sock, "%s", ep) < 0) {
        fprintf (stderr, "%s: client cannot connect to %s\n", PROG, ep);
        return -1;
    }
    c->next_beat = now_us ();
    return 0;
}

static void
client_close (client_t *c)
{
    zsock_destroy (&c->sock);
    free (c->seen);
    free (c->result_us);
    c->seen = NULL;
    c->result_us = NULL;
}

static void
client_fail (client_t *c, const char *what, const char *detail)
{
    if (!c->failed)
        snprintf (c->error, sizeof c->error, "%s%s%s", what, detail ? ": " : "",
                  detail ? detail : "");
    c->failed = true;
}

static int
client_send (client_t *c, const qc_msg_t *m)
{
    if (qc_msg_send (m, zsock_resolve (c->sock), NULL)) {
        client_fail (c, "cannot send", qc_command_name (m->command));
        return -1;
    }
    return 0;
}

static void
client_handle (client_t *c, qc_msg_t *m, int64_t now)
{
    switch (m->command) {
    case QC_ACCEPTED:
        if (!c->job)
            c->job = m->job;
        c->accepted++;
        break;
    case QC_RESULT:
        if (m->job != c->job || m->seq < c->expected)
            break;              /* another job's, or a resend we hold */
        if (m->seq > c->expected) {
            /* one connection delivers in order: a gap is a bug */
            char d[96];
            snprintf (d, sizeof d, "got seq %" PRIu64 ", expected %" PRIu64,
                      m->seq, c->expected);
            client_fail (c, "RESULT out of order", d);
            break;
        }
        c->expected++;
        if (m->idx >= c->total) {
            client_fail (c, "RESULT for an index never submitted", m->path);
            break;
        }
        if (c->seen[m->idx]) {
            c->dups++;
            break;
        }
        c->seen[m->idx] = 1;
        c->results++;
        if (m->result && m->result->ok)
            c->ok++;
        if (c->result_us)
            c->result_us[m->idx] = now;
        break;
    case QC_DONE:
        if (m->job == c->job) {
            c->done = true;
            c->done_total = m->total;
            c->done_done = m->done;
        }
        break;
    case QC_ERROR:
        client_fail (c, "broker refused", m->reason);
        break;
    case QC_DISCONNECT:
        client_fail (c, "broker said DISCONNECT", m->reason);
        break;
    default:
        break;                  /* HEARTBEAT, LOG: nothing to do */
    }
}

/* Waits up to wait_ms for input, reads what is there (bounded), ACKs it
 * in one message and keeps the heartbeat going. -1 on a failure. */
static int
client_pump (client_t *c, int wait_ms)
{
    zmq_pollitem_t item = {zsock_resolve (c->sock), 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll (&item, 1, wait_ms);
    if (rc < 0 && zmq_errno () != EINTR) {
        client_fail (c, "zmq_poll", zmq_strerror (zmq_errno ()));
        return -1;
    }
    if (rc > 0) {
        for (int i = 0; i < DRAIN_MAX && !c->failed; i++) {
            zmsg_t *raw = zmsg_recv (c->sock);
            if (!raw)
                break;          /* EAGAIN: drained */
            char err[256];
            qc_msg_t *m = qc_msg_decode (raw, err, sizeof err);
            zmsg_destroy (&raw);
            if (!m) {
                client_fail (c, "malformed message from the broker", err);
                break;
            }
            client_handle (c, m, now_us ());
            qc_msg_destroy (&m);
        }
        /* one ACK per batch read, like qc-submit */
        if (c->job && c->expected - 1 > c->acked) {
            c->acked = c->expected - 1;
            qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = c->job, .seq = c->acked};
            client_send (c, &ack);
        }
    }
    int64_t now = now_us ();
    if (now >= c->next_beat) {
        qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
        client_send (c, &hb);
        c->next_beat = now + 1000000;
    }
    return c->failed ? -1 : 0;
}

/* Sends one SUBMIT of slides [base, base + n), named prefix-idx. */
static int
client_submit (client_t *c, const char *prefix, uint64_t base, size_t n, bool final)
{
    static char names[BATCH][32];
    char *ptrs[BATCH];
    if (n > BATCH)
        return -1;
    for (size_t i = 0; i < n; i++) {
        snprintf (names[i], sizeof names[i], "%s-%" PRIu64, prefix, base + i);
        ptrs[i] = names[i];
    }
    qc_msg_t m = {.command = QC_SUBMIT, .gpu = -1, .job = c->job, .base = base,
                  .slides = ptrs, .nslides = n, .resource = QC_RES_ANY,
                  .final = final, .name = base == 0 ? "bench_broker" : NULL};
    return client_send (c, &m);
}

/* Pumps until cond holds, the client fails, or the deadline passes. */
#define PUMP_UNTIL(c, cond, deadline)                                        \
    while (!(cond) && !(c)->failed && now_us () < (deadline))                \
        if (client_pump ((c), 50))                                           \
            break

/* Asks the broker (STATUS) how many workers are registered; waits until
 * there are at least want, up to timeout_ms. Returns the count seen. */
static size_t
wait_registered (const char *ep, size_t want, int timeout_ms)
{
    zsock_t *s = zsock_new (ZMQ_DEALER);
    size_t have = 0;
    if (!s)
        return 0;
    zsock_set_linger (s, 0);
    zsock_set_rcvtimeo (s, 200);
    if (zsock_connect (s, "%s", ep) < 0) {
        zsock_destroy (&s);
        return 0;
    }
    int64_t deadline = now_us () + (int64_t) timeout_ms * 1000;
    while (now_us () < deadline) {
        qc_msg_t q = {.command = QC_STATUS, .gpu = -1};
        if (qc_msg_send (&q, zsock_resolve (s), NULL))
            break;
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_STATUS_REPLY)
            have = m->nworkers;
        qc_msg_destroy (&m);
        if (have >= want)
            break;
        zclock_sleep (50);
    }
    zsock_destroy (&s);
    return have;
}

/* ------------------------------------------------------------ broker process */

/* Starts this binary again as a broker (--serve-broker) and reads the
 * endpoint it bound from a pipe. A fresh image, so the child shares no
 * ZeroMQ state with this (threaded) process. */
static pid_t
spawn_broker (const char *bind, char *endpoint, size_t len)
{
    int fds[2];
    if (pipe (fds)) {
        perror (PROG ": pipe");
        return -1;
    }
    char fdarg[16];
    snprintf (fdarg, sizeof fdarg, "%d", fds[1]);
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0) {
        perror (PROG ": fork");
        close (fds[0]);
        close (fds[1]);
        return -1;
    }
    if (pid == 0) {
        close (fds[0]);
        /* a bench killed half way must not leave a broker behind; if
         * that cannot be arranged, or we are already orphaned, give up */
        if (prctl (PR_SET_PDEATHSIG, SIGTERM) || getppid () != parent)
            _exit (126);
        execl ("/proc/self/exe", PROG, "--serve-broker", fdarg, "--bind", bind,
               (char *) NULL);
        _exit (127);
    }
    close (fds[1]);
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    size_t got = 0;
    int64_t deadline = now_us () + (int64_t) SPAWN_TIMEOUT_MS * 1000;
    while (got + 1 < len && now_us () < deadline) {
        int rc = poll (&pfd, 1, 100);
        if (rc <= 0)
            continue;
        ssize_t k = read (fds[0], endpoint + got, len - 1 - got);
        if (k <= 0)
            break;          /* the child wrote all and closed, or died */
        got += (size_t) k;
    }
    close (fds[0]);
    endpoint[got] = 0;
    if (!got || strstr (endpoint, ":*")) {
        fprintf (stderr, "%s: the broker process did not report its endpoint\n", PROG);
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
        return -1;
    }
    return pid;
}

static void
reap_broker (pid_t pid)
{
    if (kill (pid, SIGTERM))
        perror (PROG ": kill");
    for (int i = 0; i < 100; i++) {
        if (waitpid (pid, NULL, WNOHANG) == pid)
            return;
        zclock_sleep (50);
    }
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
}

/* --serve-broker: run a broker until SIGTERM; report the endpoint. */
static int
serve_broker (int fd, const char *bind)
{
    qc_log_set_stderr_level (QC_LOG_WARNING);
    qc_log_set_process ("bench-broker");
    qc_cli_install_signals ();
    qc_broker_config_t bc;
    qc_broker_config_defaults (&bc);
    const char *eps[] = {bind};
    bc.endpoints = eps;
    bc.nendpoints = 1;
    char err[512];
    qc_broker_t *b = qc_broker_new (&bc, err, sizeof err);
    if (!b) {
        fprintf (stderr, "%s: broker: %s\n", PROG, err);
        close (fd);
        return 3;
    }
    const char *ep = qc_broker_endpoint (b, 0);
    ssize_t w = write (fd, ep, strlen (ep));
    close (fd);
    if (w != (ssize_t) strlen (ep)) {
        qc_broker_destroy (&b);
        return 3;
    }
    qc_broker_run (b, NULL, (volatile int *) &qc_cli_signals);
    qc_broker_destroy (&b);
    return 0;
}

/* ------------------------------------------------------------ cluster */

typedef struct {
    /* broker in a thread */
    qc_broker_t *broker;
    zactor_t *actor;
    clockid_t broker_clock;     /* that thread's CPU-time clock */
    atomic_bool have_clock;
    /* or in a process */
    pid_t pid;
    char endpoint[256];
    char ipc_path[160];
    qc_worker_t **workers;
    size_t nworkers;
    exec_shared_t exec;
} cluster_t;

/* qc_broker_actor, plus publishing this thread's CPU-time clock so that
 * the broker's CPU can be told apart from the rest of the process. */
static void
broker_actor (zsock_t *pipe, void *args)
{
    cluster_t *cl = args;
    clockid_t cid;
    if (pthread_getcpuclockid (pthread_self (), &cid) == 0) {
        cl->broker_clock = cid;
        atomic_store (&cl->have_clock, true);
    }
    zsock_signal (pipe, 0);
    qc_broker_run (cl->broker, pipe, NULL);
}

/* CPU seconds the broker has used so far; -1 when unknown. */
static double
broker_cpu_s (cluster_t *cl)
{
    if (cl->pid > 0)
        return proc_cpu_s (cl->pid);
    struct timespec ts;
    if (!atomic_load (&cl->have_clock) || clock_gettime (cl->broker_clock, &ts))
        return -1;
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void
cluster_stop (cluster_t *cl)
{
    /* workers first: each says DISCONNECT while the broker still listens */
    for (size_t i = 0; i < cl->nworkers; i++)
        qc_worker_destroy (&cl->workers[i]);
    free (cl->workers);
    cl->workers = NULL;
    cl->nworkers = 0;
    zactor_destroy (&cl->actor);
    qc_broker_destroy (&cl->broker);
    if (cl->pid > 0)
        reap_broker (cl->pid);
    cl->pid = 0;
    /* no executor is left that could stamp it */
    free ((void *) cl->exec.start_us);
    cl->exec.start_us = NULL;
    if (cl->ipc_path[0])
        unlink (cl->ipc_path);
    cl->ipc_path[0] = 0;
}

static int
cluster_start (cluster_t *cl, const opts_t *o, uint32_t nworkers, uint32_t prefetch)
{
    static unsigned serial;
    memset (cl, 0, sizeof *cl);
    cl->exec.nstart = o->run_lat ? o->lat_tasks : 0;
    if (cl->exec.nstart
        && !(cl->exec.start_us = calloc (cl->exec.nstart, sizeof *cl->exec.start_us))) {
        fprintf (stderr, "%s: out of memory\n", PROG);
        return -1;
    }
    char bind[256];
    if (o->ipc) {
        snprintf (cl->ipc_path, sizeof cl->ipc_path, "/tmp/qc-bench-%d-%u.ipc",
                  (int) getpid (), serial++);
        snprintf (bind, sizeof bind, "ipc://%s", cl->ipc_path);
    } else
        snprintf (bind, sizeof bind, "tcp://127.0.0.1:*");   /* a free port */
    if (o->broker_process) {
        if ((cl->pid = spawn_broker (bind, cl->endpoint, sizeof cl->endpoint)) < 0) {
            cl->pid = 0;
            cluster_stop (cl);
            return -1;
        }
    } else {
        const char *eps[] = {bind};
        qc_broker_config_t bc;
        qc_broker_config_defaults (&bc);
        bc.endpoints = eps;
        bc.nendpoints = 1;
        char err[512];
        cl->broker = qc_broker_new (&bc, err, sizeof err);
        if (!cl->broker) {
            fprintf (stderr, "%s: broker: %s\n", PROG, err);
            cluster_stop (cl);
            return -1;
        }
        snprintf (cl->endpoint, sizeof cl->endpoint, "%s",
                  qc_broker_endpoint (cl->broker, 0));
        if (strstr (cl->endpoint, ":*")) {
            fprintf (stderr, "%s: broker did not resolve its port (%s)\n", PROG,
                     cl->endpoint);
            cluster_stop (cl);
            return -1;
        }
        if (!(cl->actor = zactor_new (broker_actor, cl))) {
            fprintf (stderr, "%s: cannot start the broker thread\n", PROG);
            cluster_stop (cl);
            return -1;
        }
    }
    if (!(cl->workers = calloc (nworkers, sizeof *cl->workers))) {
        cluster_stop (cl);
        return -1;
    }
    for (uint32_t i = 0; i < nworkers; i++) {
        char name[64];
        snprintf (name, sizeof name, "bench-w%u", i);
        qc_worker_config_t wc;
        qc_worker_config_defaults (&wc);
        wc.endpoint = cl->endpoint;
        wc.name = name;
        wc.slots = o->slots;
        wc.prefetch = prefetch;
        wc.exec = noop_exec;
        wc.exec_arg = &cl->exec;
        if (!(cl->workers[i] = qc_worker_new (&wc))) {
            fprintf (stderr, "%s: worker %u did not start\n", PROG, i);
            cluster_stop (cl);
            return -1;
        }
        cl->nworkers++;
    }
    size_t have = wait_registered (cl->endpoint, nworkers, REGISTER_TIMEOUT_MS);
    if (have < nworkers) {
        fprintf (stderr, "%s: only %zu of %u workers registered\n", PROG, have, nworkers);
        cluster_stop (cl);
        return -1;
    }
    return 0;
}

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
    size_t first = n < BATCH ? (size_t) n : BATCH;
    client_submit (&c, "noop", 0, first, first >= n);
    /* later batches name the job: its id comes back in ACCEPTED */
    PUMP_UNTIL (&c, c.job != 0, deadline);
    /* the rest go out at once, as qc-submit sends them; they queue in the
     * broker while results stream back */
    for (uint64_t base = first; base < n && c.job && !c.failed; base += BATCH) {
        size_t k = n - base < BATCH ? (size_t) (n - base) : BATCH;
        client_submit (&c, "noop", base, k, base + k >= n);
    }
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

/* ------------------------------------------------------------ idle */

typedef struct {
    double base_cpu, reg_cpu, idle_cpu;   /* percent of one core */
    double reg_seconds, idle_seconds;
    double self_cpu;                      /* this process in the window */
    size_t registered, still_registered;
    uint64_t beats_sent, msgs_in, disconnects;
    bool ok;
    char note[200];
} idle_t;

/* Reads and drops what the broker sent the fake workers (HEARTBEATs);
 * counts DISCONNECTs, which would mean a worker was declared dead. */
static void
idle_drain (zsock_t **socks, size_t n, idle_t *r)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 100; k++) {
            zmsg_t *raw = zmsg_recv (socks[i]);
            if (!raw)
                break;
            qc_msg_t *m = qc_msg_decode (raw, NULL, 0);
            zmsg_destroy (&raw);
            r->msgs_in++;
            if (m && m->command == QC_DISCONNECT)
                r->disconnects++;
            qc_msg_destroy (&m);
        }
}

static void
run_idle (const opts_t *o, idle_t *r)
{
    memset (r, 0, sizeof *r);
    char ep[256], bind[160];
    if (o->ipc)
        snprintf (bind, sizeof bind, "ipc:///tmp/qc-bench-idle-%d.ipc", (int) getpid ());
    else
        snprintf (bind, sizeof bind, "tcp://127.0.0.1:*");
    pid_t pid = spawn_broker (bind, ep, sizeof ep);
    if (pid < 0) {
        snprintf (r->note, sizeof r->note, "broker process did not start");
        return;
    }
    size_t n = o->idle_workers, made = 0;
    zsock_t **socks = calloc (n, sizeof *socks);
    int64_t *next = calloc (n, sizeof *next);
    if (!socks || !next) {
        snprintf (r->note, sizeof r->note, "out of memory");
        goto out;
    }
    /* baseline: the broker alone, ticking */
    double c0 = proc_cpu_s (pid);
    int64_t t0 = now_us ();
    zclock_sleep (2000);
    double c1 = proc_cpu_s (pid);
    int64_t t1 = now_us ();
    r->base_cpu = 100.0 * (c1 - c0) / ((double) (t1 - t0) / 1e6);
    /* registration: READY from every fake worker */
    for (; made < n; made++) {
        zsock_t *s = zsock_new (ZMQ_DEALER);
        if (!s)
            break;
        socks[made] = s;
        zsock_set_linger (s, 0);
        zsock_set_rcvtimeo (s, 0);
        char name[32];
        snprintf (name, sizeof name, "idle-%zu", made);
        qc_msg_t ready = {.command = QC_READY, .gpu = -1, .name = name,
                          .host = "bench", .version = QC_VERSION, .slots = 1,
                          .prefetch = 1, .hb_ms = 1000};
        if (zsock_connect (s, "%s", ep) < 0
            || qc_msg_send (&ready, zsock_resolve (s), NULL)) {
            made++;             /* created: destroyed below */
            snprintf (r->note, sizeof r->note,
                      "fake worker %zu of %zu could not connect (descriptors? sockets?)",
                      made, n);
            goto out;
        }
    }
    if (made < n) {
        snprintf (r->note, sizeof r->note,
                  "only %zu of %zu fake worker sockets could be made", made, n);
        goto out;
    }
    r->registered = wait_registered (ep, n, REGISTER_TIMEOUT_MS);
    double c2 = proc_cpu_s (pid);
    int64_t t2 = now_us ();
    r->reg_seconds = (double) (t2 - t1) / 1e6;
    r->reg_cpu = 100.0 * (c2 - c1) / r->reg_seconds;
    if (r->registered < n) {
        snprintf (r->note, sizeof r->note, "only %zu of %zu fake workers registered",
                  r->registered, n);
        goto out;
    }
    /* steady state: each fake worker beats once a second, spread evenly
     * over the second as independent workers would be */
    int64_t start = now_us ();
    for (size_t i = 0; i < n; i++)
        next[i] = start + (int64_t) (1000000.0 * (double) i / (double) n);
    double s0 = self_cpu_s ();
    double c3 = proc_cpu_s (pid);
    int64_t t3 = now_us ();
    int64_t end = t3 + (int64_t) o->idle_seconds * 1000000;
    int64_t next_drain = t3;
    for (int guard = 0; guard < 1000000 && now_us () < end; guard++) {
        int64_t now = now_us ();
        for (size_t i = 0; i < n; i++)
            if (now >= next[i]) {
                qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
                if (qc_msg_send (&hb, zsock_resolve (socks[i]), NULL) == 0)
                    r->beats_sent++;
                next[i] += 1000000;
            }
        if (now >= next_drain) {
            idle_drain (socks, n, r);
            next_drain = now + 100000;
        }
        zclock_sleep (5);
    }
    double c4 = proc_cpu_s (pid);
    int64_t t4 = now_us ();
    r->idle_seconds = (double) (t4 - t3) / 1e6;
    r->self_cpu = 100.0 * (self_cpu_s () - s0) / r->idle_seconds;
    r->idle_cpu = 100.0 * (c4 - c3) / r->idle_seconds;
    idle_drain (socks, n, r);
    r->still_registered = wait_registered (ep, n, 2000);
    r->ok = c0 >= 0 && c4 >= 0 && r->still_registered == n && r->disconnects == 0;
    if (!r->ok)
        snprintf (r->note, sizeof r->note, "%zu of %zu still registered, %" PRIu64
                  " DISCONNECTs", r->still_registered, n, r->disconnects);
out:
    for (size_t i = 0; socks && i < made; i++)
        zsock_destroy (&socks[i]);
    free (socks);
    free (next);
    reap_broker (pid);
    if (o->ipc)
        unlink (bind + strlen ("ipc://"));
}

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
    char load[64] = "?";
    f = fopen ("/proc/loadavg", "r");
    if (f) {
        if (!fgets (load, sizeof load, f))
            snprintf (load, sizeof load, "?");
        load[strcspn (load, "\n")] = 0;
        fclose (f);
    }
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

int
main (int argc, char **argv)
{
    opts_t o = {.tasks = 200000, .workers = {1, 8, 64}, .nworkers = 3,
                .prefetch = {64, 256}, .nprefetch = 2, .slots = 1, .repeat = 1,
                .lat_tasks = 1000, .idle_workers = 1000, .idle_seconds = 10,
                .time_limit_s = 60, .io_threads = 1};
    long serve_fd = -1;
    const char *serve_bind = NULL;
    bool only = false;
    static const struct option longs[] = {
        {"tasks", required_argument, 0, 1}, {"workers", required_argument, 0, 2},
        {"prefetch", required_argument, 0, 3}, {"slots", required_argument, 0, 4},
        {"latency-tasks", required_argument, 0, 5},
        {"idle-workers", required_argument, 0, 6},
        {"idle-seconds", required_argument, 0, 7},
        {"time-limit", required_argument, 0, 8}, {"io-threads", required_argument, 0, 9},
        {"ipc", no_argument, 0, 10}, {"only", required_argument, 0, 11},
        {"quick", no_argument, 0, 12}, {"serve-broker", required_argument, 0, 13},
        {"bind", required_argument, 0, 14}, {"repeat", required_argument, 0, 15},
        {"broker-process", no_argument, 0, 16}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ch;
    unsigned long v;
    while ((ch = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        switch (ch) {
        case 1:
            if (qc_cli_uint (PROG, "--tasks", optarg, 1, 10000000, &v)) return 2;
            o.tasks = v;
            break;
        case 2:
            if (parse_list ("--workers", optarg, o.workers, &o.nworkers, 1, 256)) return 2;
            break;
        case 3:
            if (parse_list ("--prefetch", optarg, o.prefetch, &o.nprefetch, 0, 100000))
                return 2;
            break;
        case 4:
            if (qc_cli_uint (PROG, "--slots", optarg, 1, 64, &v)) return 2;
            o.slots = (uint32_t) v;
            break;
        case 5:
            if (qc_cli_uint (PROG, "--latency-tasks", optarg, 1, 1000000, &v)) return 2;
            o.lat_tasks = (uint32_t) v;
            break;
        case 6:
            if (qc_cli_uint (PROG, "--idle-workers", optarg, 1, 10000, &v)) return 2;
            o.idle_workers = (uint32_t) v;
            break;
        case 7:
            if (qc_cli_uint (PROG, "--idle-seconds", optarg, 1, 600, &v)) return 2;
            o.idle_seconds = (uint32_t) v;
            break;
        case 8:
            if (qc_cli_uint (PROG, "--time-limit", optarg, 1, 3600, &v)) return 2;
            o.time_limit_s = (uint32_t) v;
            break;
        case 9:
            if (qc_cli_uint (PROG, "--io-threads", optarg, 1, 16, &v)) return 2;
            o.io_threads = (uint32_t) v;
            break;
        case 10: o.ipc = true; break;
        case 11:
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
        case 12:
            o.tasks = 20000;
            o.lat_tasks = 200;
            o.idle_seconds = 3;
            break;
        case 13:
            if (qc_cli_uint (PROG, "--serve-broker", optarg, 0, 1 << 20, &v)) return 2;
            serve_fd = (long) v;
            break;
        case 14: serve_bind = optarg; break;
        case 15:
            if (qc_cli_uint (PROG, "--repeat", optarg, 1, MAX_REPEAT, &v)) return 2;
            o.repeat = (uint32_t) v;
            break;
        case 16: o.broker_process = true; break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", PROG, argv[optind]);
        return 2;
    }
    if (serve_fd >= 0)
        return serve_broker ((int) serve_fd, serve_bind ? serve_bind : "tcp://127.0.0.1:*");
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
