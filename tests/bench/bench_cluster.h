/* The broker (thread or process) and workers bench_broker measures.
 * Part of bench_broker.c, which includes it once (every tests/bench/bench_*.c
 * is one program, so its parts are headers of static functions). */
#ifndef BENCH_CLUSTER_H
#define BENCH_CLUSTER_H

/* ------------------------------------------------------------ broker process */

/* Starts this binary again as a broker (--serve-broker) and reads the
 * endpoint it bound from a pipe. A fresh image, so the child shares no
 * ZeroMQ state with this (threaded) process. */
static pid_t
spawn_broker (const char *bind, const char *state, char *endpoint, size_t len)
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
               "--state", state ? state : "none", (char *) NULL);
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
serve_broker (int fd, const char *bind, const char *state)
{
    qc_log_set_stderr_level (QC_LOG_WARNING);
    qc_log_set_process ("bench-broker");
    qc_cli_install_signals ();
    qc_broker_config_t bc;
    qc_broker_config_defaults (&bc);
    const char *eps[] = {bind};
    bc.endpoints = eps;
    bc.nendpoints = 1;
    bc.state_dir = state && strcmp (state, "none") ? state : NULL;
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
    /* CurveZMQ (opts_t.curve_dir): each worker's own certificate, and
     * the client's (s_client_curve while the cluster runs) */
    qc_curve_client_t **curves;
    qc_curve_client_t *client_curve;
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
    for (size_t i = 0; cl->curves && i < cl->nworkers; i++)
        qc_curve_client_destroy (&cl->curves[i]);
    free (cl->curves);
    cl->curves = NULL;
    cl->nworkers = 0;
    zactor_destroy (&cl->actor);
    qc_broker_destroy (&cl->broker);
    s_client_curve = NULL;
    qc_curve_client_destroy (&cl->client_curve);
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
    char cpath[512], spath[512], allow[512], err[512];
    if (o->curve_dir) {
        if (o->broker_process) {
            fprintf (stderr, "%s: CurveZMQ runs with the broker in a thread only\n", PROG);
            cluster_stop (cl);
            return -1;
        }
        snprintf (cpath, sizeof cpath, "%s/client.cert_secret", o->curve_dir);
        snprintf (spath, sizeof spath, "%s/broker.cert", o->curve_dir);
        if (!(cl->client_curve = qc_curve_client_new (cpath, spath, err, sizeof err))) {
            fprintf (stderr, "%s: %s\n", PROG, err);
            cluster_stop (cl);
            return -1;
        }
        s_client_curve = cl->client_curve;
    }
    if (o->broker_process) {
        if ((cl->pid = spawn_broker (bind, o->state_dir, cl->endpoint,
                                     sizeof cl->endpoint)) < 0) {
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
        bc.state_dir = o->state_dir;
        if (o->curve_dir) {
            snprintf (cpath, sizeof cpath, "%s/broker.cert_secret", o->curve_dir);
            snprintf (allow, sizeof allow, "%s/allowed", o->curve_dir);
            bc.cert_path = cpath;
            bc.allow_dir = allow;
        }
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
    if (!(cl->workers = calloc (nworkers, sizeof *cl->workers))
        || !(cl->curves = calloc (nworkers, sizeof *cl->curves))) {
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
        if (o->curve_dir) {
            snprintf (cpath, sizeof cpath, "%s/w%u.cert_secret", o->curve_dir, i);
            if (!(cl->curves[i] = qc_curve_client_new (cpath, spath, err, sizeof err))) {
                fprintf (stderr, "%s: worker %u: %s\n", PROG, i, err);
                cluster_stop (cl);
                return -1;
            }
            wc.curve = cl->curves[i];
        }
        if (!(cl->workers[i] = qc_worker_new (&wc))) {
            qc_curve_client_destroy (&cl->curves[i]);
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

#endif
