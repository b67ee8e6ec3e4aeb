/* bench_broker's idle run: 1000 heartbeating fake workers.
 * Part of bench_broker.c, which includes it once (every tests/bench/bench_*.c
 * is one program, so its parts are headers of static functions). */
#ifndef BENCH_IDLE_H
#define BENCH_IDLE_H

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
    pid_t pid = spawn_broker (bind, NULL, ep, sizeof ep);
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

#endif
