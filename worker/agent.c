/* The worker's agent: a czmq actor that owns the DEALER socket to the
 * broker. It registers (READY), sends heartbeats on time whatever the
 * executors are doing, queues TASKs for the executors, drops those the
 * broker takes back (REVOKE), forwards the executors' STARTED / RESULT /
 * LOG messages, reconnects when the broker falls silent (Paranoid
 * Pirate, with a growing delay between new sockets while it stays
 * away), and runs the drain on a graceful leave. */
#include "worker/worker_int.h"

#include <string.h>

#include "shared/cli.h"
#include "shared/endpoint.h"
#include "shared/curve.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "worker/asset_wait.h"
#include "worker/supervise.h"

#define MOD "worker"
/* New sockets to a silent broker: after 1 liveness period, then after
 * a delay that doubles up to this (ZeroMQ itself retries the TCP
 * connection meanwhile, from 100 ms up to RECONNECT_IVL_MAX). */
#define MAX_RECONNECT_MS 30000
#define RECONNECT_IVL_MAX 5000

typedef struct {
    qc_worker_t *w;
    zsock_t *pipe, *dealer, *pull;
    int64_t last_heard, next_beat;
    int64_t outstanding;      /* tasks taken and not yet answered */
    int64_t unheard;          /* results sent while the broker was silent */
    uint64_t dealer_gen;      /* bumped whenever the dealer is replaced */
    int ipv6;                 /* the endpoint needs ZMQ_IPV6: -1 not yet
                                 known, looked up once (a host name is
                                 resolved: not again at each reconnect,
                                 which would hold the agent on DNS) */
    bool draining;
    bool left;                /* drained and said goodbye: stay silent */
    zlist_t *returned;        /* refs handed back while draining */
    asset_wait_t *wait;       /* tasks waiting for their config's files */
    int64_t last_ready;       /* when READY was last sent */
    int64_t backoff;          /* ms before the next new socket */
    int64_t next_socket;      /* no new socket before this */
    qc_handshake_t *hs;       /* why the dealer's handshakes fail */
    const char *hs_why;       /* the last reason said */
} agent_t;

static int
send_ready (agent_t *a)
{
    qc_worker_t *w = a->w;
    qc_crash_table_t *ct = w->cfg.crash_table;
    qc_msg_t m = {.command = QC_READY, .gpu = -1, .name = (char *) w->cfg.name,
                  .host = w->host,
                  .version = (char *) (w->cfg.test_old_build ? "0.0.1-test-old-build"
                                                             : qc_version_full ()),
                  .slots = w->cfg.slots,
                  .prefetch = w->cfg.prefetch, .gpus = w->cfg.gpus,
                  .ngpus = w->cfg.ngpus, .hb_ms = w->cfg.heartbeat_ms,
                  .key = w->instance, .succeeds = w->succeeds};
    if (ct && ct->nreport) {
        /* what our last process was running when it crashed: said
         * until the broker has heard it (we are registered) */
        m.crashed = ct->report;
        m.ncrashed = ct->nreport;
        m.reason = ct->reason;
    }
    a->last_ready = zclock_mono ();
    return qc_msg_send (&m, zsock_resolve (a->dealer), NULL);
}

/* A fresh connection to the broker; -1 when no socket can be made (no
 * file descriptor left: the old one is kept, ZeroMQ reconnecting it, and
 * the next reconnect tries again). */
static int
connect_broker (agent_t *a)
{
    zsock_t *fresh = qc_socket_new (ZMQ_DEALER, "the worker");
    if (!fresh)
        return -1;
    if (a->dealer)
        zsock_set_linger (a->dealer, 0);   /* nothing old reaches the broker */
    qc_handshake_destroy (&a->hs);
    zsock_destroy (&a->dealer);
    a->dealer = fresh;
    /* a key pair rotated while this worker runs is presented from the
       next connection on (a long-running service is not restarted) */
    char why[640];
    int reloaded = qc_curve_client_reload (a->w->cfg.curve, why, sizeof why);
    if (reloaded > 0)
        qc_log (QC_LOG_INFO, MOD, "the certificate files changed: presenting key %s from "
                "now on", qc_curve_client_key (a->w->cfg.curve));
    else if (reloaded < 0)
        qc_log (QC_LOG_WARNING, MOD, "the certificate files changed, but %s: its key "
                "read before is kept, and it is read again at the next connection", why);
    qc_curve_client_apply (a->w->cfg.curve, a->dealer);
    qc_proto_limit_socket (a->dealer);
    a->hs = qc_handshake_watch (a->dealer);
    a->hs_why = NULL;
    zsock_set_reconnect_ivl_max (a->dealer, RECONNECT_IVL_MAX);
    /* never block the agent: a full queue to an absent broker drops, and
     * the broker requeues what it never heard about */
    zsock_set_sndhwm (a->dealer, 100000);
    zsock_set_rcvhwm (a->dealer, 100000);
    zsock_set_sndtimeo (a->dealer, 0);
    /* reads drain until EAGAIN (see the main loop) */
    zsock_set_rcvtimeo (a->dealer, 0);
    zsock_set_linger (a->dealer, 500);
    a->dealer_gen++;
    if (a->ipv6 < 0)
        a->ipv6 = qc_endpoint_is_ipv6 (a->w->cfg.endpoint);
    if (a->ipv6)
        zsock_set_ipv6 (a->dealer, 1);
    if (zsock_connect (a->dealer, "%s", a->w->cfg.endpoint) < 0) {
        qc_log (QC_LOG_ERROR, MOD, "cannot connect to %s: %s", a->w->cfg.endpoint,
                zmq_strerror (zmq_errno ()));
        return -1;
    }
    atomic_store (&a->w->connected, false);
    a->last_heard = zclock_mono ();
    return send_ready (a);
}

/* The refs list holds malloc'd qc_taskref_t (not strings: no autofree,
 * which would strdup them). Empties it, or destroys it when destroy. */
static void
refs_clear (zlist_t **list, bool destroy)
{
    if (!*list)
        return;
    qc_taskref_t *r;
    while ((r = zlist_pop (*list)))
        free (r);
    if (destroy)
        zlist_destroy (list);
}

static void
drop_queued (void *arg, qc_task_t *t)
{
    agent_t *a = arg;
    a->outstanding--;
    if (a->returned) {
        qc_taskref_t *r = malloc (sizeof *r);
        if (r) {
            /* the broker takes a task back only with its attempt and
               its job's key (jobs_of_ref, sched_worker_return) */
            *r = (qc_taskref_t) {.job = t->job, .idx = t->idx,
                                 .attempt = t->attempt, .key = t->key};
            if (zlist_append (a->returned, r))
                free (r);
        }
    }
}

static void
send_disconnect (agent_t *a, bool drain)
{
    qc_msg_t m = {.command = QC_DISCONNECT, .gpu = -1, .drain = drain,
                  .reason = drain ? "draining" : "leaving"};
    size_t n = a->returned ? zlist_size (a->returned) : 0;
    if (n > QC_PROTO_MAX_REFS)
        n = QC_PROTO_MAX_REFS;    /* the rest are requeued when we leave */
    m.refs = n ? calloc (n, sizeof *m.refs) : NULL;
    for (qc_taskref_t *r = a->returned ? zlist_first (a->returned) : NULL;
         r && m.refs && m.nrefs < n; r = zlist_next (a->returned))
        m.refs[m.nrefs++] = *r;
    qc_msg_send (&m, zsock_resolve (a->dealer), NULL);
    free (m.refs);
}

/* Tasks leaving the asset wait (worker/asset_wait.h). */
static void
wait_run (void *arg, int lane, qc_task_t *t)
{
    agent_t *a = arg;
    if (taskq_push (&a->w->queue, lane, t) != 0) {
        /* out of memory: say so rather than leave the task hanging */
        qc_msg_t m = {.command = QC_RESULT, .gpu = -1, .job = t->job, .idx = t->idx,
                      .attempt = t->attempt, .path = t->path,
                      .worker = (char *) a->w->cfg.name, .result = qc_result_new ()};
        if (m.result) {
            qc_result_fail (m.result, "worker out of memory queueing the task");
            qc_msg_send (&m, zsock_resolve (a->dealer), NULL);
            qc_result_destroy (&m.result);
        }
        a->outstanding--;
    }
}

static void
wait_fail (void *arg, qc_task_t *t, const char *reason)
{
    agent_t *a = arg;
    qc_msg_t m = {.command = QC_RESULT, .gpu = -1, .job = t->job, .idx = t->idx,
                  .attempt = t->attempt, .path = t->path,
                  .worker = (char *) a->w->cfg.name, .result = qc_result_new ()};
    if (m.result) {
        qc_result_fail (m.result, "%s", reason);
        qc_msg_send (&m, zsock_resolve (a->dealer), NULL);
        qc_result_destroy (&m.result);
    }
    qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 " task %" PRIu64 ": %s", t->job,
            t->idx, reason);
    a->outstanding--;
}

static void
wait_fetch (void *arg, uint64_t job, uint64_t key)
{
    agent_t *a = arg;
    qc_msg_t m = {.command = QC_FETCH, .gpu = -1, .job = job, .key = key};
    qc_msg_send (&m, zsock_resolve (a->dealer), NULL);
}

/* Everything queued or waiting for files goes back (drain, reconnect). */
static void
drop_all_queued (agent_t *a)
{
    taskq_drain (&a->w->queue, drop_queued, a);
    asset_wait_drop_all (a->wait, drop_queued, a);
}

/* Reads and handles one message from the broker; false when none was
 * waiting. */
static bool
on_broker (agent_t *a)
{
    zmsg_t *msg = zmsg_recv (a->dealer);
    if (!msg)
        return false;
    char err[256];
    qc_msg_t *m = qc_msg_decode (msg, err, sizeof err);
    zmsg_destroy (&msg);
    if (!m) {
        qc_log (QC_LOG_WARNING, MOD, "malformed message from the broker dropped: %s", err);
        return true;
    }
    if (a->left) {
        qc_msg_destroy (&m);
        return true;      /* we left: what the broker says no longer applies */
    }
    a->last_heard = zclock_mono ();
    /* a DISCONNECT that says we are unknown or refused is no welcome,
       nor an ERROR: a broker of another protocol version answers our
       HEARTBEAT so (PROTOCOL.md section 2) */
    if (!atomic_load (&a->w->connected) && m->command != QC_ERROR
        && !(m->command == QC_DISCONNECT && m->reason
             && (strstr (m->reason, "unknown peer") || strncmp (m->reason, "refused", 7) == 0
                 || strncmp (m->reason, "broker is full", 14) == 0))) {
        atomic_store (&a->w->connected, true);
        worker_set_why (a->w, NULL);
        a->backoff = 0;
        a->unheard = 0;       /* it answers: what it lost, it runs again */
        if (a->w->cfg.crash_table)
            a->w->cfg.crash_table->nreport = 0;    /* the broker has it */
        qc_log (QC_LOG_INFO, MOD, "%s registered with broker %s", a->w->cfg.name,
                a->w->cfg.endpoint);
    }
    if (m->command == QC_TASK) {
        size_t nlanes = a->w->cfg.ngpus;
        int lane = 0;
        if (m->gpu >= 0)
            for (size_t i = 0; i < nlanes; i++)
                if ((int32_t) a->w->cfg.gpus[i].index == m->gpu)
                    lane = (int) (1 + i);
        if (m->gpu >= 0 && lane == 0 && a->w->cfg.slots == 0)
            lane = 1;     /* unknown GPU index: run on our first GPU */
        qc_task_t t = {.job = m->job, .key = m->key, .idx = m->idx, .attempt = m->attempt,
                       .gpu = m->gpu, .path = m->path, .config = m->config};
        m->path = m->config = NULL;
        char lacking[65];
        if (!a->draining && asset_wait_lacks (t.config, lacking)) {
            /* its config's files first: held until the broker sends them */
            if (asset_wait_hold (a->wait, lane, &t, zclock_mono ()) == 0)
                a->outstanding++;
            else
                qc_task_clear (&t);
        } else if (a->draining) {
            /* raced with our DISCONNECT: hand it straight back */
            a->outstanding++;
            if (!a->returned) a->returned = zlist_new ();
            drop_queued (a, &t);
            send_disconnect (a, true);
            qc_task_clear (&t);
        } else if (taskq_push (&a->w->queue, lane, &t) == 0)
            a->outstanding++;
        else
            qc_task_clear (&t);   /* out of memory: the broker will requeue */
    } else if (m->command == QC_ASSETS) {
        asset_wait_on_assets (a->wait, m);
    } else if (m->command == QC_REVOKE) {
        /* taken back (deadline, or another attempt finished first): not
         * started yet, it goes; running, it finishes and is ignored */
        char *path = NULL;
        if (taskq_remove (&a->w->queue, m->job, m->key, m->idx, m->attempt, &path)
            || asset_wait_remove (a->wait, m->job, m->key, m->idx, m->attempt)) {
            a->outstanding--;
            /* its slide fetched ahead (a cancelled job's, over a slow
               link) stops: no slot will read it */
            if (path)
                qc_slide_fetch_forget (a->w->fetch, path);
            free (path);
            qc_log (QC_LOG_INFO, MOD, "broker took back job %" PRIu64 " task %" PRIu64
                    " before it started: %s", m->job, m->idx, m->reason ? m->reason : "");
        } else {
            bool stuck = m->reason && strcmp (m->reason, QC_REVOKE_TIMEOUT) == 0
                         && qc_crash_slot_mark_stuck (a->w->cfg.crash_table, m->job, m->idx,
                                                      m->attempt);
            qc_log (QC_LOG_WARNING, MOD, "broker took back job %" PRIu64 " task %" PRIu64
                    " while it runs (%s): its result will be ignored%s", m->job, m->idx,
                    m->reason ? m->reason : "", stuck ? "; if it has not returned in as "
                    "long again, and nothing else runs, this worker process is replaced to "
                    "free its slot" : "");
        }
    } else if (m->command == QC_DISCONNECT || m->command == QC_ERROR) {
        bool unknown = m->command == QC_DISCONNECT && m->reason
                       && strstr (m->reason, "unknown peer");
        /* refused (our certificate is not, or no longer, admitted, or
         * its role may not do this; or, an ERROR, the broker speaks
         * another protocol version) is waited out like a full broker: a
         * certificate may be put back, the broker upgraded */
        bool refused = m->command == QC_ERROR
                       || (m->reason && strncmp (m->reason, "refused", 7) == 0);
        bool full = refused || (m->reason && strstr (m->reason, "broker is full"));
        int64_t now = zclock_mono ();
        if (unknown && now - a->last_ready >= (int64_t) a->w->cfg.heartbeat_ms) {
            /* the broker restarted or gave up on us: once a beat at most,
             * however many of our messages it answers so */
            /* a broker restart is routine: INFO, in words (a soak's
               review read the protocol's own text as trouble) */
            qc_log (QC_LOG_INFO, MOD, "the broker does not know this worker (it restarted, "
                    "or gave up on its heartbeats): registering again");
            atomic_store (&a->w->connected, false);
            send_ready (a);
        } else if (full) {
            const char *reason = m->reason ? m->reason : "?";
            qc_log (QC_LOG_WARNING, MOD, "broker says: %s", reason);
            if (refused) {
                char why[640];
                snprintf (why, sizeof why, "the broker %s%s",
                          m->command == QC_ERROR ? "answered: " : "", reason);
                worker_set_why (a->w, why);
            }
            atomic_store (&a->w->connected, false);
            drop_all_queued (a);
            /* let go of the connection: it holds one of the broker's
             * descriptors; a new socket tries again later */
            zsock_disconnect (a->dealer, "%s", a->w->cfg.endpoint);
            a->backoff = a->backoff ? a->backoff * 2 : 2000;
            if (a->backoff > MAX_RECONNECT_MS)
                a->backoff = MAX_RECONNECT_MS;
            a->next_socket = now + a->backoff;
            a->last_heard = now;   /* the silence check waits for next_socket */
        } else if (!unknown) {
            qc_log (QC_LOG_WARNING, MOD, "broker says: %s; registering again",
                    m->reason ? m->reason : "disconnect");
            /* the broker is going away: what we queued is lost to it */
            drop_all_queued (a);
            connect_broker (a);
        }
    }
    qc_msg_destroy (&m);
    return true;
}

/* Forwards one executor message to the broker; false when none was
 * waiting. */
static bool
on_executor (agent_t *a)
{
    zmsg_t *msg = zmsg_recv (a->pull);
    if (!msg)
        return false;
    zframe_t *hdr = zmsg_first (msg);
    if (hdr && zframe_size (hdr) == 4 && zframe_data (hdr)[3] == QC_RESULT) {
        a->outstanding--;
        if (!atomic_load (&a->w->connected))
            a->unheard++;
    }
    zmsg_send (&msg, a->dealer);
    zmsg_destroy (&msg);
    return true;
}

/* A slot's first look at a slide file that has not come back
 * (shared/path_watch.h): the worker's log says which slot and path. */
static void
say_slot_waits (size_t slot, const char *path, int64_t waited_ms, void *ctx)
{
    (void) ctx;
    qc_log (QC_LOG_WARNING, "worker", "slot %zu has waited %" PRId64 " s for %s to answer: "
            "a network share (NFS, SMB) whose server does not answer? the slot stays "
            "blocked until it does (the broker's --task-timeout gives the slide to another "
            "worker)", slot + 1, waited_ms / 1000, path);
}

void
agent_actor (zsock_t *pipe, void *args)
{
    agent_t a = {.w = args, .pipe = pipe, .ipv6 = -1};
    asset_wait_fns_t wf = {.arg = &a, .run = wait_run, .fail = wait_fail,
                           .fetch = wait_fetch};
    a.wait = asset_wait_new (&wf);
    a.pull = qc_socket_new (ZMQ_PULL, "the worker");
    if (a.pull)
        zsock_set_rcvtimeo (a.pull, 0);   /* reads drain until EAGAIN */
    if (!a.pull || !a.wait || zsock_bind (a.pull, "%s", a.w->pull_endpoint) < 0
        || connect_broker (&a)) {
        atomic_store (&a.w->agent_failed, true);
        zsock_signal (pipe, 1);
        asset_wait_destroy (&a.wait);
        zsock_destroy (&a.pull);
        qc_handshake_destroy (&a.hs);
        zsock_destroy (&a.dealer);
        return;
    }
    zsock_signal (pipe, 0);
    uint32_t hb = a.w->cfg.heartbeat_ms;
    a.next_beat = zclock_mono ();
    bool drained = false;
    /* the poller follows the dealer, which changes on reconnect; it is
     * rebuilt only then, not on every wake */
    zpoller_t *poller = NULL;
    uint64_t poller_gen = 0;
    for (;;) {
        if (!poller || poller_gen != a.dealer_gen) {
            zpoller_destroy (&poller);
            poller = zpoller_new (pipe, a.pull, a.dealer, NULL);
            poller_gen = a.dealer_gen;
        }
        int64_t now = zclock_mono ();
        int wait = (int) (a.next_beat - now);
        void *which = poller ? zpoller_wait (poller, wait > 0 ? wait : 0) : NULL;
        if (which == pipe) {
            char *cmd = zstr_recv (pipe);
            if (!cmd || streq (cmd, "$TERM")) {
                zstr_free (&cmd);
                break;
            }
            if (streq (cmd, "DRAIN") && !a.draining) {
                a.draining = true;
                a.returned = zlist_new ();
                drop_all_queued (&a);
                send_disconnect (&a, true);
                qc_log (QC_LOG_INFO, MOD, "draining: %zu queued task%s handed back, "
                        "%" PRId64 " running", zlist_size (a.returned),
                        zlist_size (a.returned) == 1 ? "" : "s", a.outstanding);
            }
            zstr_free (&cmd);
        } else if (which == a.pull) {
            for (int i = 0; i < 1000 && on_executor (&a); i++)
                ;
        } else if (which == a.dealer) {
            for (int i = 0; i < 1000 && a.dealer && on_broker (&a); i++)
                ;
        }
        now = zclock_mono ();
        if (a.left) {
            /* gone from the broker's registry: no heartbeats, no
             * reconnects, until the owner stops the agent */
            a.next_beat = now + hb;
            continue;
        }
        if (a.w->cfg.exec_idle && taskq_idle_due (&a.w->queue, now, WORKER_IDLE_RELEASE_MS))
            a.w->cfg.exec_idle (a.w->cfg.exec_arg);
        if (now >= a.next_beat) {
            qc_msg_t m = {.command = QC_HEARTBEAT, .gpu = -1};
            qc_msg_send (&m, zsock_resolve (a.dealer), NULL);
            a.next_beat = now + hb;
        }
        if (now - a.last_heard > (int64_t) hb * a.w->cfg.liveness && now >= a.next_socket) {
            qc_log (a.backoff ? QC_LOG_INFO : QC_LOG_WARNING, MOD,
                    "broker %s silent for %" PRId64 " ms: reconnecting",
                    a.w->cfg.endpoint, now - a.last_heard);
            /* the broker requeued what we had not started, or restarted */
            drop_all_queued (&a);
            connect_broker (&a);
            a.backoff = a.backoff ? a.backoff * 2 : (int64_t) hb * a.w->cfg.liveness;
            if (a.backoff > MAX_RECONNECT_MS)
                a.backoff = MAX_RECONNECT_MS;
            /* a spread, so that a thousand workers do not come at once */
            a.next_socket = now + a.backoff + (int64_t) (random () % (a.backoff / 4 + 1));
        }
        asset_wait_tick (a.wait, now);
        qc_path_watch_tick (a.w->watches, a.w->nwatches, now, a.w->cfg.test_open_stall_ms
                            ? (int64_t) a.w->cfg.test_open_stall_ms : 30000, say_slot_waits,
                            NULL);
        if (!atomic_load (&a.w->connected)) {
            /* say once why the handshake fails, when it does */
            const char *why = qc_handshake_why (a.hs);
            if (why && why != a.hs_why) {
                qc_log (QC_LOG_WARNING, MOD, "broker %s: %s", a.w->cfg.endpoint, why);
                worker_set_why (a.w, why);
            }
            a.hs_why = why;
        }
        /* slots stuck past the task timeout, nothing else running: the
           process asks its supervisor for a new one (supervise.h) */
        unsigned stuck = a.draining ? 0 : qc_crash_table_only_stuck (a.w->cfg.crash_table);
        if (stuck && !atomic_load (&a.w->restart)) {
            qc_log (QC_LOG_WARNING, MOD, "%u slot%s stuck on slides past the task timeout, "
                    "nothing else running: replacing this worker process to free %s", stuck,
                    qc_plural (stuck), stuck == 1 ? "it" : "them");
            atomic_store (&a.w->restart, true);
        }
        if (a.draining && !drained && a.outstanding <= 0) {
            refs_clear (&a.returned, false);
            send_disconnect (&a, false);
            drained = true;
            a.left = true;
            zstr_send (pipe, "DRAINED");
        }
    }
    zpoller_destroy (&poller);
    if (!drained && atomic_load (&a.w->connected)) {
        /* leaving without a drain: unstarted tasks go back unblamed */
        refs_clear (&a.returned, true);
        a.returned = zlist_new ();
        drop_all_queued (&a);
        send_disconnect (&a, false);
    }
    if (a.unheard > 0 && !atomic_load (&a.w->connected))
        /* a drain while the broker is away ends as if all went well */
        qc_log (QC_LOG_WARNING, MOD, "leaving while broker %s does not answer: the "
                "results of %" PRId64 " slide%s finished meanwhile may never reach it; it "
                "gives those slides to a worker again once it is back (nothing is lost, "
                "they run twice)", a.w->cfg.endpoint, a.unheard,
                qc_plural ((unsigned long long) a.unheard));
    asset_wait_destroy (&a.wait);
    refs_clear (&a.returned, true);
    qc_handshake_destroy (&a.hs);
    zsock_destroy (&a.dealer);
    zsock_destroy (&a.pull);
}
