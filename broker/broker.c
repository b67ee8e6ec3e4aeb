/* The broker's event loop. One ROUTER
 * socket; every message is checked against its sender's certificate
 * (CurveZMQ on: broker/security.h), decoded once, checked against the
 * sender's role, and handed to its handler (handle). Time-driven work
 * (heartbeats out, dead workers, detached clients, finished jobs, the
 * allowed folder) runs on a tick. */
#include "broker/broker_int.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "shared/endpoint.h"
#include "shared/log.h"
#include "shared/socket_new.h"

#define MOD "broker"

void
qc_broker_config_defaults (qc_broker_config_t *cfg)
{
    static const char *def[] = {"tcp://*:5555"};
    memset (cfg, 0, sizeof *cfg);
    cfg->endpoints = def;
    cfg->nendpoints = 1;
    cfg->heartbeat_ms = 1000;
    cfg->liveness = 3;
    cfg->zmtp_heartbeat_ms = 10000;
    cfg->max_deaths = 3;
    cfg->result_window = 1000;
    cfg->job_linger_s = 600;
    cfg->task_timeout_s = 1800;
    cfg->trouble_wait_s = SCHED_TROUBLE_ALONE_MS / 1000;
    cfg->retention_s = 7 * 86400;
    cfg->max_jobs_per_client = 1000;
    cfg->max_mb_per_client = 1000;
}

static void
zhashx_item_destroy_worker (void **item)
{
    worker_rec_destroy (*item);
    *item = NULL;
}

static void
zhashx_item_free (void **item)
{
    free (*item);
    *item = NULL;
}

static void
zhashx_item_destroy_job (void **item)
{
    job_rec_destroy (*item);
    *item = NULL;
}

static void
zhashx_item_destroy_client (void **item)
{
    client_rec_t *c = *item;
    if (c)
        free (c->jobs);
    free (c);
    *item = NULL;
}

/* -------------------------------------------------------------- workers */

void
send_simple (qc_broker_t *b, zframe_t *to, uint8_t command, const char *reason)
{
    qc_msg_t m = {.command = command, .gpu = -1, .reason = (char *) reason};
    qc_msg_send (&m, zsock_resolve (b->router), to);
}

/* A HEARTBEAT without building a message: the routing id, the header
 * and the empty map, each small enough for ZeroMQ to keep without an
 * allocation. 10,000 idle workers get 10,000 of these a second. */
static void
send_heartbeat (qc_broker_t *b, worker_rec_t *w)
{
    static const uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, QC_HEARTBEAT};
    static const uint8_t body[1] = {0x80};
    void *sock = zsock_resolve (b->router);
    if (zmq_send (sock, zframe_data (w->id), zframe_size (w->id), ZMQ_SNDMORE) >= 0) {
        if (zmq_send (sock, hdr, sizeof hdr, ZMQ_SNDMORE) >= 0)
            zmq_send (sock, body, sizeof body, 0);
    } else if (errno == EHOSTUNREACH)
        worker_unreachable (b, w);
}

/* -------------------------------------------------------------- dispatch */

/* Whether w holds (or held, as a ghost) a task of job: with security on,
 * only such a worker is given the job's config files. */
static bool
holds_task_of (const worker_rec_t *w, uint64_t job)
{
    for (const sched_task_t *t = w->sw->assigned.head; t; t = t->wnext)
        if (t->job->id == job)
            return true;
    for (uint32_t i = 0; i < w->sw->nghosts; i++)
        if (w->sw->ghosts[i].job == job)
            return true;
    return false;
}

static void
handle (qc_broker_t *b, const peer_t *p, qc_msg_t *m)
{
    worker_rec_t *w = zhashx_lookup (b->workers, p->hex);
    /* a routing id is the peer's to choose (ZMQ_ROUTING_ID), and one of
     * a connection that closed is free again: with keys, a registration
     * is only that of the certificate that made it */
    if (w && p->cert && strcmp (w->cert_key, p->cert->key) != 0)
        w = NULL;
    if (w)
        w->last_seen = b->now;
    switch (m->command) {
    case QC_READY: workers_on_ready (b, p, m); return;
    case QC_SUBMIT: jobs_on_submit (b, p, m); return;
    case QC_ATTACH: jobs_on_attach (b, p, m); return;
    case QC_ACK: jobs_on_ack (b, p, m); return;
    case QC_CANCEL: jobs_on_cancel (b, p, m); return;
    case QC_STATUS:
        if (!limits_status_too_soon (b, p))
            status_reply (b, p);
        return;
    case QC_HEARTBEAT:
        if (!w) {
            workers_late_word (b, p, m);
            jobs_on_client_heartbeat (b, p);
        }
        return;
    case QC_LOG: {
        job_rec_t *job = w ? jobs_of_task_msg (b, m, w->name) : NULL;
        /* a worker's records are about a task it runs (or ran, taken
           back): one that ran a task of the job once knows its key, and
           could write into that job's qc.log ever after. Its records of a
           task come before the task's RESULT, on one socket */
        if (!job || !holds_task_of (w, job->id))
            return;
        /* who sent it is ours to say, not the record's (a worker wrote
           "broker" there), and a time no clock gave is now */
        char *name = strdup (w->name ? w->name : "?");
        if (name) {
            free (m->worker);
            m->worker = name;
        }
        double now = (double) zclock_time () / 1000.0;
        if (!(m->time >= 0 && m->time <= now + 86400))
            m->time = now;
        jobs_forward_log (b, job, m);
        return;
    }
    default: break;
    }
    /* the rest come only from registered workers */
    if (!w) {
        if (m->command == QC_RESULT || m->command == QC_STARTED || m->command == QC_FETCH)
            workers_late_word (b, p, m);
        if (m->command == QC_RESULT) {
            /* a worker we declared dead finished anyway: keep the work
             * (with security on, if the attempt was its certificate's) */
            workers_on_result (b, NULL, p, m);
        }
        if (m->command == QC_DISCONNECT)
            jobs_on_client_disconnect (b, p);   /* a client leaving */
        else
            send_simple (b, p->id, QC_DISCONNECT, UNKNOWN_PEER_REASON);
        return;
    }
    switch (m->command) {
    case QC_STARTED: workers_on_started (b, w, m); break;
    case QC_RESULT: workers_on_result (b, w, p, m); break;
    case QC_DISCONNECT: workers_on_disconnect (b, w, m); break;
    case QC_FETCH:
        if (limits_fetch_too_soon (b, w, m->job))
            break;
        jobs_on_fetch (b, p->id, m, !p->cert || holds_task_of (w, m->job));
        break;
    default:
        qc_log (QC_LOG_WARNING, MOD, "%s from worker %s makes no sense: dropped",
                qc_command_name (m->command), w->name);
        b->dropped++;
    }
}

/* Reads and handles one message; false when none was waiting (the
 * router never blocks: see qc_broker_new). */
static bool
receive (qc_broker_t *b)
{
    zmsg_t *msg = zmsg_recv (b->router);
    if (!msg)
        return false;
    peer_t p = {.id = zmsg_pop (msg), .hex = "?"};
    char err[600];
    qc_msg_t *m = NULL;
    if (!p.id) {
        b->dropped++;
        qc_log (QC_LOG_WARNING, MOD, "malformed message dropped: no routing id");
        zmsg_destroy (&msg);
        return true;
    }
    peer_key (p.id, p.hex);
    /* who sent it, as its connection authenticated, against the allowed
     * folder as it is now: before anything is read */
    uint8_t version, command;
    if (b->security && !(p.cert = security_sender (b->security, msg, err, sizeof err)))
        refuse_unadmitted (b, &p, err);
    else if ((version = qc_msg_foreign_version (msg, &command)))
        refuse_version (b, &p, msg, version, command);
    else if (!(m = qc_msg_decode (msg, err, sizeof err))) {
        b->dropped++;
        if (!refuse_unknown_command (b, &p, msg))
            refuse (b, &p, "malformed message dropped: %s", err);
    } else if (p.cert && !security_may_send (p.cert->role, m->command))
        refuse_role (b, &p, m);
    else
        handle (b, &p, m);
    qc_msg_destroy (&m);
    zframe_destroy (&p.id);
    zmsg_destroy (&msg);
    return true;
}

/* -------------------------------------------------------------- time */

static void
tick (qc_broker_t *b)
{
    /* one pass over the workers: the dead go (the roster shrinks under
     * removal: the one moved into slot i is looked at next), each live
     * one hears from us at its own interval, so a worker with a short
     * one never takes our silence for death */
    for (size_t i = 0; i < b->nroster;) {
        worker_rec_t *w = b->roster[i];
        /* a worker may ask for a long beat (up to 10 minutes); one whose
           connection has closed is judged by the broker's own, so that
           a peer that registered and went does not hold the slides sent
           to it for liveness x 10 minutes (a hostile tester's review),
           while one back within it on a new connection (a network blip)
           takes its tasks over as before */
        uint32_t beat = w->unreachable ? worker_probe_ms (b, w) : w->hb_ms;
        if (b->now - w->last_seen > (int64_t) beat * b->cfg.liveness) {
            worker_gone (b, w, true);
            b->dispatch_due = true;
            continue;
        }
        if (b->now >= w->next_beat) {
            send_heartbeat (b, w);
            w->next_beat = b->now + worker_probe_ms (b, w);
        }
        i++;
    }
    if (b->now >= b->next_sched_tick) {
        /* deadlines: once a second is fine enough for minutes */
        sched_tick (b->sched);
        b->next_sched_tick = b->now + 1000;
        b->dispatch_due = true;
        /* a certificate changed in place (not only added or removed) */
        check_allowed (b, true);
        refusals_tick (b->refusals, b->now);
        limits_tick (b);
    }
    jobs_tick (b);
    state_maintain (b);
    speeds_tick (b, false);
}

/* How many peers the open-file limit allows: the limit is raised to the
 * hard limit first; each TCP peer costs the broker one descriptor, and a
 * reserve stays for the state files and ZeroMQ's own. Past it a new
 * peer is refused with a reason instead of the accept() failures that
 * make ZeroMQ spin. */
static size_t
peers_allowed (void)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl))
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit (RLIMIT_NOFILE, &rl))
            getrlimit (RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000)
        return 1000000;
    size_t lim = (size_t) rl.rlim_cur;
    size_t reserve = 32 + lim / 10;
    return lim > reserve + 8 ? lim - reserve : 8;
}

/* -------------------------------------------------------------- life */

qc_broker_t *
qc_broker_new (const qc_broker_config_t *cfg, char *err, size_t errlen)
{
    if (!cfg || !cfg->nendpoints || !err) {
        if (err) snprintf (err, errlen, "no endpoint to bind");
        return NULL;
    }
    qc_broker_t *b = calloc (1, sizeof *b);
    if (!b) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    b->cfg = *cfg;
    if (!b->cfg.heartbeat_ms) b->cfg.heartbeat_ms = 1000;
    if (!b->cfg.liveness) b->cfg.liveness = 3;
    if (!b->cfg.result_window) b->cfg.result_window = 1000;
    sched_callbacks_t cb = {.dispatch = workers_send_task, .failed = outbox_task_failed,
                            .revoke = workers_send_revoke, .arg = b};
    b->sched = sched_new (cfg->max_deaths, &cb);
    b->state.lock_fd = -1;
    b->state.dir_fd = -1;
    b->max_peers = cfg->max_peers ? cfg->max_peers : peers_allowed ();
    b->results_compact = (uint64_t) (cfg->results_compact_mb ? cfg->results_compact_mb : 64)
                         << 20;
    b->journal_compact = (uint64_t) (cfg->journal_compact_mb ? cfg->journal_compact_mb : 64)
                         << 20;
    b->workers = zhashx_new ();
    b->jobs = zhashx_new ();
    b->clients = zhashx_new ();
    if (b->clients)
        zhashx_set_destructor (b->clients, zhashx_item_destroy_client);
    unsigned refused = qc_socket_refusals ();
    b->router = qc_socket_new (ZMQ_ROUTER, "the broker");
    b->bound = calloc (cfg->nendpoints, sizeof *b->bound);
    b->refusals = refusals_new ();
    b->status_asked = zhashx_new ();
    if (b->status_asked)
        zhashx_set_destructor (b->status_asked, zhashx_item_free);
    b->next_job = 1;
    if (!b->sched || !b->workers || !b->jobs || !b->clients || !b->router || !b->bound || !b->refusals
        || !b->status_asked) {
        if (!qc_refusal_say (refused, err, errlen))
            snprintf (err, errlen, "out of memory");
        qc_broker_destroy (&b);
        return NULL;
    }
    zhashx_set_destructor (b->workers, zhashx_item_destroy_worker);
    zhashx_set_destructor (b->jobs, zhashx_item_destroy_job);
    sched_set_task_timeout (b->sched, (int64_t) cfg->task_timeout_s * 1000);
    sched_set_trouble_wait (b->sched, (int64_t) cfg->trouble_wait_s * 1000);
    b->now = zclock_mono ();
    sched_set_now (b->sched, b->now);
    if (security_check (b, err, errlen)) {
        qc_broker_destroy (&b);
        return NULL;
    }
    /* windows and credits bound what we queue per peer; a high mark
     * keeps the ROUTER from silently dropping what we do send */
    zsock_set_sndhwm (b->router, 100000);
    zsock_set_rcvhwm (b->router, 100000);
    zsock_set_linger (b->router, 200);
    /* a send to a peer whose connection has closed fails (EHOSTUNREACH)
       instead of vanishing: how a worker gone without a word is told
       before its heartbeats run out (send_heartbeat); never blocking
       (a full queue is EAGAIN, the message dropped as before) */
    zsock_set_sndtimeo (b->router, 0);
    zsock_set_router_mandatory (b->router, 1);
    /* a connection's own liveness, below the protocol's: what a peer's
     * ZeroMQ answers by itself (its program may be busy), so only a peer
     * gone for good goes; the broker then stops writing to a dead worker,
     * and without PINGs its connection would stay half open for ever */
    if (cfg->zmtp_heartbeat_ms) {
        zsock_set_heartbeat_ivl (b->router, (int) cfg->zmtp_heartbeat_ms);
        zsock_set_heartbeat_timeout (b->router, (int) cfg->zmtp_heartbeat_ms * 3);
        zsock_set_heartbeat_ttl (b->router, (int) cfg->zmtp_heartbeat_ms * 3);
    }
    /* reads drain until EAGAIN instead of asking ZMQ_EVENTS before each
     * message: ZMQ_EVENTS polls the socket's mailbox (two system calls)
     * every time, a non-blocking read only when the queue is empty */
    zsock_set_rcvtimeo (b->router, 0);
    qc_proto_limit_socket (b->router);
    for (size_t i = 0; i < cfg->nendpoints; i++)
        if (qc_endpoint_is_ipv6 (cfg->endpoints[i]))
            zsock_set_ipv6 (b->router, 1);
    for (size_t i = 0; i < cfg->nendpoints; i++) {
        if (zsock_bind (b->router, "%s", cfg->endpoints[i]) < 0) {
            snprintf (err, errlen, "cannot bind %s: %s", cfg->endpoints[i],
                      zmq_strerror (zmq_errno ()));
            qc_broker_destroy (&b);
            return NULL;
        }
        const char *ep = zsock_endpoint (b->router);
        b->bound[i] = strdup (ep ? ep : cfg->endpoints[i]);
        b->nbound++;
        /* an ipc:// socket is made with the process's umask (0077 under
           the unit: the broker's user alone could connect); group and
           owner may, and the folder it is in (the lab's, mode 2770)
           decides who reaches it. Not an abstract one (@name). */
        const char *path = strncmp (cfg->endpoints[i], "ipc://", 6) == 0
                           ? cfg->endpoints[i] + 6 : NULL;
        if (path && path[0] != '@' && chmod (path, 0770) != 0)
            qc_log (QC_LOG_WARNING, MOD, "cannot let the group reach %s (chmod: %s): only "
                    "this user's programs can connect", cfg->endpoints[i], strerror (errno));
    }
    /* what the state folder holds comes back before any peer is heard
     * (what peers send waits in the socket until the loop reads it);
     * after the binds, so that a broker that cannot bind (its port
     * taken) has made no state folder */
    if (state_open (b, err, errlen)) {
        qc_broker_destroy (&b);
        return NULL;
    }
    if (speeds_open (b)) {
        snprintf (err, errlen, "out of memory");
        qc_broker_destroy (&b);
        return NULL;
    }
    return b;
}

void
qc_broker_destroy (qc_broker_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_broker_t *b = *self_p;
    if (b->jobs && state_on (b))
        state_commit (b);
    while (b->pending) {
        pending_submit_t *p = b->pending;
        b->pending = p->next;
        for (size_t i = 0; i < p->nslides; i++)
            free (p->slides[i]);
        free (p->slides);
        zframe_destroy (&p->from);
        free (p);
    }
    zhashx_destroy (&b->jobs);        /* before sched: records point into it */
    zhashx_destroy (&b->clients);     /* after the jobs, which leave it */
    speeds_close (b);                 /* with the workers still there */
    state_close (b);
    free (b->tombs);
    free (b->roster);
    zhashx_destroy (&b->workers);
    sched_destroy (&b->sched);
    security_destroy (&b->security);     /* before the socket it watches */
    zsock_destroy (&b->router);
    refusals_destroy (&b->refusals);
    zhashx_destroy (&b->status_asked);
    for (size_t i = 0; i < b->nbound; i++)
        free (b->bound[i]);
    free (b->bound);
    free (b);
    *self_p = NULL;
}

size_t
qc_broker_max_peers (const qc_broker_t *self)
{
    return self ? self->max_peers : 0;
}

const char *
qc_broker_state_dir (const qc_broker_t *self)
{
    return self ? self->state.dir : NULL;
}

const char *
qc_broker_endpoint (qc_broker_t *self, size_t i)
{
    return self && i < self->nbound ? self->bound[i] : NULL;
}

static void
goodbye (qc_broker_t *b)
{
    for (worker_rec_t *w = zhashx_first (b->workers); w; w = zhashx_next (b->workers))
        send_simple (b, w->id, QC_DISCONNECT, "broker is shutting down");
    jobs_goodbye (b);
}

/* The end of a batch of messages: one group commit of everything the
 * batch wrote (results before they are sent, SUBMITs before they are
 * ACCEPTED), then the SUBMITs applied, one dispatch and one pump per
 * job. Deferred so that credit freed by many RESULTs is handed out in
 * one pass and the RESULTs go to the client in one burst, instead of a
 * sync, a scheduler pass, a TASK and a RESULT send per message. */
static void
flush_due (qc_broker_t *b)
{
    /* credit that results freed goes out first: workers run the next
     * tasks while the sync below waits for the disk */
    if (b->dispatch_due && !b->pending) {
        b->dispatch_due = false;
        sched_dispatch (b->sched);
    }
    bool committed = state_commit (b);
    if (b->pending)
        jobs_apply_pending (b, committed);
    if (b->dispatch_due) {
        b->dispatch_due = false;
        sched_dispatch (b->sched);
    }
    if (b->pump_due) {
        b->pump_due = false;
        outbox_pump_due (b);
    }
}

/* The longest the loop reads messages before it looks at the clock. */
#define DRAIN_MS 50

int
qc_broker_run (qc_broker_t *b, zsock_t *pipe, volatile int *stop)
{
    if (!b)
        return -1;
    /* handshakes first: a busy router never keeps a peer from connecting */
    zsock_t *zap = security_zap (b->security), *monitor = security_monitor (b->security);
    zpoller_t *poller = zpoller_new (zap ? (void *) zap : (void *) b->router, NULL);
    if (!poller)
        return -1;
    if (zap)
        zpoller_add (poller, monitor);
    if (zap)
        zpoller_add (poller, b->router);
    if (pipe)
        zpoller_add (poller, pipe);
    int64_t next_tick = zclock_mono ();
    /* a tick often enough for the shortest heartbeat a worker may ask */
    int tick_ms = 25;
    for (;;) {
        if (stop && *stop)
            break;
        b->now = zclock_mono ();
        int wait = (int) (next_tick - b->now);
        void *which = zpoller_wait (poller, wait > 0 ? wait : 0);
        b->now = zclock_mono ();
        sched_set_now (b->sched, b->now);
        if (which == b->router) {
            /* drain what is there before looking at the clock again,
               for at most DRAIN_MS: a flood of large submissions (each
               journalled) kept the tick, and so the workers' heartbeats,
               waiting 3 s and more (a hostile tester's review) */
            check_allowed (b, false);
            int64_t until = zclock_mono () + DRAIN_MS;
            for (int i = 0; i < 1000 && receive (b); i++)
                if ((i & 7) == 7 && zclock_mono () >= until)
                    break;
            flush_due (b);
        } else if (zap && which == zap) {
            security_on_zap (b->security, b->now);
        } else if (zap && which == monitor) {
            security_on_monitor (b->security, b->now);
        } else if (pipe && which == pipe) {
            char *cmd = zstr_recv (pipe);
            bool term = !cmd || streq (cmd, "$TERM");
            zstr_free (&cmd);
            if (term)
                break;
        } else if (!which && zpoller_terminated (poller))
            break;
        if (b->now >= next_tick) {
            tick (b);
            flush_due (b);
            next_tick = b->now + tick_ms;
        }
    }
    flush_due (b);
    goodbye (b);
    zpoller_destroy (&poller);
    return 0;
}

void
qc_broker_actor (zsock_t *pipe, void *args)
{
    zsock_signal (pipe, 0);
    qc_broker_run ((qc_broker_t *) args, pipe, NULL);
}
