/* The no-op executor and the protocol client of bench_broker.
 * Part of bench_broker.c, which includes it once (every tests/bench/bench_*.c
 * is one program, so its parts are headers of static functions). */
#ifndef BENCH_CLIENT_H
#define BENCH_CLIENT_H

#include "shared/curve.h"

/* The client side's CurveZMQ settings while a cluster with CurveZMQ runs
 * (bench_cluster.h sets and clears it): every client socket of the bench
 * uses them. One cluster runs at a time. */
static const qc_curve_client_t *s_client_curve;

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
    if (s_client_curve)
        qc_curve_client_apply (s_client_curve, c->sock);
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

/* Submits n no-op tasks "noop-IDX" as qc-submit does: the first batch,
 * then (the job's id come back in ACCEPTED) the rest at once, reading
 * what arrives every 64 batches so neither side's queue grows without
 * bound. Returns the batches sent; c->failed or no c->job on failure. */
static uint64_t
client_submit_all (client_t *c, uint64_t n, int64_t deadline)
{
    size_t first = n < BATCH ? (size_t) n : BATCH;
    client_submit (c, "noop", 0, first, first >= n);
    PUMP_UNTIL (c, c->job != 0, deadline);
    uint64_t batches = 1;
    for (uint64_t base = first; base < n && c->job && !c->failed; base += BATCH) {
        size_t k = n - base < BATCH ? (size_t) (n - base) : BATCH;
        client_submit (c, "noop", base, k, base + k >= n);
        if (++batches % 64 == 0)
            client_pump (c, 0);
    }
    return batches;
}

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
    if (s_client_curve)
        qc_curve_client_apply (s_client_curve, s);
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

#endif
