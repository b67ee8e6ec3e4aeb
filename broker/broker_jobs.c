/* The job table and the client side of the protocol: SUBMIT, ATTACH, ACK,
 * CANCEL; results kept in order per job until the client acknowledges
 * them (so a client may leave and reattach without losing any), sent in
 * a bounded window; log records forwarded, or kept while detached. */
#include "broker/broker_int.h"

#include <string.h>

#include "shared/log.h"

#define MOD "broker"
#define MAX_KEPT_LOGS 10000

static void
id_key (uint64_t id, char *key, size_t len)
{
    snprintf (key, len, "%" PRIu64, id);
}

job_rec_t *
jobs_lookup (qc_broker_t *b, uint64_t id)
{
    char key[32];
    id_key (id, key, sizeof key);
    return zhashx_lookup (b->jobs, key);
}

void
job_rec_destroy (void *item)
{
    job_rec_t *j = item;
    if (!j)
        return;
    free (j->config);
    for (size_t i = 0; i < j->nassets; i++) {
        free (j->assets[i].name);
        free (j->assets[i].data);
    }
    free (j->assets);
    free (j->name);
    zframe_destroy (&j->client);
    for (size_t i = 0; i < j->noutbox; i++)
        zmsg_destroy (&j->outbox[i]);
    free (j->outbox);
    if (j->logs) {
        for (log_entry_t *e = zlist_first (j->logs); e; e = zlist_next (j->logs)) {
            zmsg_destroy (&e->msg);
            free (e);
        }
        zlist_destroy (&j->logs);
    }
    free (j);
}

static void
send_to_client (qc_broker_t *b, job_rec_t *job, const qc_msg_t *m)
{
    if (job->attached && job->client)
        qc_msg_send (m, zsock_resolve (b->router), job->client);
}

static void
send_error (qc_broker_t *b, zframe_t *to, uint64_t job, const char *reason)
{
    qc_msg_t m = {.command = QC_ERROR, .gpu = -1, .job = job, .reason = (char *) reason};
    qc_msg_send (&m, zsock_resolve (b->router), to);
}

static void
attach_client (qc_broker_t *b, job_rec_t *job, zframe_t *from)
{
    if (!job->client || !zframe_eq (job->client, from)) {
        zframe_destroy (&job->client);
        job->client = zframe_dup (from);
    }
    job->attached = job->client != NULL;
    job->client_seen = b->now;
}

/* Sends the log records kept while no client listened. */
static void
flush_logs (qc_broker_t *b, job_rec_t *job)
{
    void *sock = zsock_resolve (b->router);
    log_entry_t *e;
    if (job->logs_dropped) {
        char text[128];
        snprintf (text, sizeof text, "%" PRIu64 " log records were dropped while "
                  "no client was attached", job->logs_dropped);
        qc_msg_t m = {.command = QC_LOG, .gpu = -1, .job = job->id,
                      .time = (double) zclock_time () / 1000.0, .level = 2,
                      .worker = "broker", .module = "broker", .message = text};
        send_to_client (b, job, &m);
        job->logs_dropped = 0;
    }
    while ((e = zlist_pop (job->logs))) {
        zframe_t *to = zframe_dup (job->client);
        if (to && !zmsg_prepend (e->msg, &to))
            zmsg_send (&e->msg, sock);
        zframe_destroy (&to);
        zmsg_destroy (&e->msg);
        free (e);
    }
}

/* Forgets results up to seq: the client has them on disk. */
static void
drop_acked (job_rec_t *job, uint64_t seq)
{
    if (seq <= job->outbox_base)
        return;
    uint64_t drop = seq - job->outbox_base;
    for (uint64_t i = 0; i < drop; i++)
        zmsg_destroy (&job->outbox[i]);
    memmove (job->outbox, job->outbox + drop,
             (job->noutbox - drop) * sizeof *job->outbox);
    job->noutbox -= drop;
    job->outbox_base = seq;
    job->acked_seq = seq;
}

/* Sends results after sent_seq while the window allows, then DONE. */
static void
pump (qc_broker_t *b, job_rec_t *job)
{
    if (!job->attached)
        return;
    void *sock = zsock_resolve (b->router);
    while (job->sent_seq < job->last_seq
           && job->sent_seq - job->acked_seq < b->cfg.result_window) {
        uint64_t seq = job->sent_seq + 1;
        zmsg_t *copy = zmsg_dup (job->outbox[seq - 1 - job->outbox_base]);
        zframe_t *to = zframe_dup (job->client);
        if (!copy || !to || zmsg_prepend (copy, &to) || zmsg_send (&copy, sock)) {
            zframe_destroy (&to);
            zmsg_destroy (&copy);
            break;
        }
        job->sent_seq = seq;
    }
    if (sched_job_finished (job->sj) && job->sent_seq == job->last_seq
        && !job->done_sent) {
        qc_msg_t m = {.command = QC_DONE, .gpu = -1, .job = job->id,
                      .total = job->sj->total, .done = job->sj->done,
                      .failed = job->sj->failed,
                      .reason = job->sj->cancelled ? "cancelled" : NULL};
        send_to_client (b, job, &m);
        job->done_sent = true;
    }
    if (sched_job_finished (job->sj) && !job->finished_at)
        job->finished_at = b->now;   /* e.g. an empty or cancelled job */
}

static void
outbox_push (qc_broker_t *b, job_rec_t *job, qc_msg_t *m)
{
    if (job->noutbox == job->cap_outbox) {
        size_t cap = job->cap_outbox ? job->cap_outbox * 2 : 64;
        zmsg_t **o = realloc (job->outbox, cap * sizeof *o);
        if (!o) {
            qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": out of memory keeping a result", job->id);
            return;
        }
        job->outbox = o;
        job->cap_outbox = cap;
    }
    m->seq = job->last_seq + 1;
    m->command = QC_RESULT;
    zmsg_t *enc = zmsg_new ();
    if (enc && qc_msg_encode (m, enc)) {
        /* over a bound: the client still gets this slide, as failed */
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": cannot encode result of %s",
                job->id, m->path ? m->path : "?");
        zmsg_destroy (&enc);
        qc_result_t *failed = qc_result_new ();
        qc_result_t *orig = m->result;
        if (failed) {
            qc_result_fail (failed, "the result of this slide broke a protocol bound "
                                    "and could not be delivered");
            m->result = failed;
            enc = zmsg_new ();
            if (enc && qc_msg_encode (m, enc))
                zmsg_destroy (&enc);
            m->result = orig;
            qc_result_destroy (&failed);
        }
    }
    if (!enc) {
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": out of memory keeping a result", job->id);
        return;
    }
    job->outbox[job->noutbox++] = enc;
    job->last_seq = m->seq;
    if (sched_job_finished (job->sj))
        job->finished_at = b->now;
}

void
jobs_deliver_result (qc_broker_t *b, job_rec_t *job, qc_msg_t *m)
{
    outbox_push (b, job, m);
    /* sent with the rest of this batch's results (jobs_pump_due) */
    job->pump_due = true;
    b->pump_due = true;
}

void
jobs_pump_due (qc_broker_t *b)
{
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->pump_due) {
            j->pump_due = false;
            pump (b, j);
        }
}

void
jobs_task_failed (void *arg, sched_task_t *task, const char *reason)
{
    qc_broker_t *b = arg;
    job_rec_t *job = task->job->owner;
    qc_msg_t m = {.command = QC_RESULT, .gpu = -1, .job = job->id,
                  .idx = task->idx, .attempt = task->attempt,
                  .path = task->path, .worker = "broker"};
    m.result = qc_result_new ();
    if (!m.result)
        return;
    qc_result_fail (m.result, "%s", reason);
    qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": %s failed: %s", job->id,
            task->path, reason);
    outbox_push (b, job, &m);
    pump (b, job);
    qc_result_destroy (&m.result);
}

void
jobs_send_task (void *arg, sched_task_t *t, sched_worker_t *sw)
{
    qc_broker_t *b = arg;
    job_rec_t *job = t->job->owner;
    worker_rec_t *w = sw->owner;
    qc_msg_t m = {.command = QC_TASK, .job = job->id, .idx = t->idx,
                  .attempt = t->attempt, .path = t->path,
                  .config = job->config,
                  .gpu = t->gpu >= 0 ? (int32_t) sw->gpu_index[t->gpu] : -1};
    if (qc_msg_send (&m, zsock_resolve (b->router), w->id))
        qc_log (QC_LOG_ERROR, MOD, "cannot send task %s to %s", t->path, w->name);
}

void
jobs_on_submit (qc_broker_t *b, zframe_t *from, qc_msg_t *m)
{
    job_rec_t *job = NULL;
    if (m->job == 0) {
        if (m->base != 0) {
            send_error (b, from, 0, "SUBMIT of a new job must start at index 0");
            return;
        }
        job = calloc (1, sizeof *job);
        char key[32];
        if (!job || !(job->logs = zlist_new ())) {
            free (job);
            send_error (b, from, 0, "broker out of memory");
            return;
        }
        job->id = b->next_job++;
        job->resource = m->resource;
        job->config = m->config; m->config = NULL;
        job->assets = m->assets; m->assets = NULL;
        job->nassets = m->nassets; m->nassets = 0;
        job->name = m->name; m->name = NULL;
        job->sj = sched_job_new (b->sched, job->id, job);
        id_key (job->id, key, sizeof key);
        if (!job->sj || zhashx_insert (b->jobs, key, job)) {
            if (job->sj)
                sched_job_remove (b->sched, job->sj);
            job_rec_destroy (job);
            send_error (b, from, 0, "broker out of memory");
            return;
        }
        qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 " submitted%s%s", job->id,
                job->name ? " by " : "", job->name ? job->name : "");
    } else if (!(job = jobs_lookup (b, m->job))) {
        send_error (b, from, m->job, "no such job");
        return;
    }
    if (job->sj->cancelled) {
        send_error (b, from, job->id, "job was cancelled: no more slides accepted");
        return;
    }
    if (m->base != job->sj->total || job->sj->final) {
        send_error (b, from, job->id, job->sj->final
                        ? "job is already complete: no more slides accepted"
                        : "SUBMIT batch out of order");
        return;
    }
    attach_client (b, job, from);
    for (size_t i = 0; i < m->nslides; i++)
        if (!sched_job_add (b->sched, job->sj, m->slides[i], job->resource)) {
            send_error (b, from, job->id, "broker out of memory");
            return;
        }
    if (m->final)
        job->sj->final = true;
    qc_msg_t reply = {.command = QC_ACCEPTED, .gpu = -1, .job = job->id,
                      .total = job->sj->total};
    qc_msg_send (&reply, zsock_resolve (b->router), from);
    sched_dispatch (b->sched);
    pump (b, job);      /* an empty final job is done at once */
}

void
jobs_on_fetch (qc_broker_t *b, zframe_t *from, qc_msg_t *m)
{
    /* a job the broker no longer knows has nothing to give: the empty
     * answer lets the worker fail those tasks instead of waiting */
    job_rec_t *job = jobs_lookup (b, m->job);
    qc_msg_t reply = {.command = QC_ASSETS, .gpu = -1, .job = m->job,
                      .assets = job ? job->assets : NULL,
                      .nassets = job ? job->nassets : 0};
    if (qc_msg_send (&reply, zsock_resolve (b->router), from))
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": cannot send its %zu "
                "config files to a worker", m->job, reply.nassets);
}

void
jobs_on_attach (qc_broker_t *b, zframe_t *from, qc_msg_t *m)
{
    job_rec_t *job = jobs_lookup (b, m->job);
    if (!job) {
        send_error (b, from, m->job, "no such job (finished and delivered, "
                                     "or the broker restarted)");
        return;
    }
    attach_client (b, job, from);
    /* the client says what it already holds; send from there */
    if (m->seq > job->acked_seq && m->seq <= job->last_seq)
        drop_acked (job, m->seq);
    job->sent_seq = job->acked_seq;
    job->done_sent = false;
    qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": client attached, resending from result %" PRIu64,
            job->id, job->sent_seq + 1);
    qc_msg_t reply = {.command = QC_ACCEPTED, .gpu = -1, .job = job->id,
                      .total = job->sj->total};
    qc_msg_send (&reply, zsock_resolve (b->router), from);
    flush_logs (b, job);
    pump (b, job);
}

void
jobs_on_ack (qc_broker_t *b, zframe_t *from, qc_msg_t *m)
{
    job_rec_t *job = jobs_lookup (b, m->job);
    if (!job || m->seq <= job->acked_seq || m->seq > job->sent_seq)
        return;
    attach_client (b, job, from);
    drop_acked (job, m->seq);
    pump (b, job);
}

void
jobs_on_cancel (qc_broker_t *b, zframe_t *from, qc_msg_t *m)
{
    job_rec_t *job = jobs_lookup (b, m->job);
    if (!job) {
        send_error (b, from, m->job, "no such job");
        return;
    }
    qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 " cancelled", job->id);
    sched_job_cancel (b->sched, job->sj);
    qc_msg_t reply = {.command = QC_ACCEPTED, .gpu = -1, .job = job->id,
                      .total = job->sj->total};
    qc_msg_send (&reply, zsock_resolve (b->router), from);
    pump (b, job);
}

void
jobs_on_client_heartbeat (qc_broker_t *b, zframe_t *from)
{
    bool known = false;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->client && zframe_eq (j->client, from)) {
            j->client_seen = b->now;
            if (!j->attached) {
                j->attached = true;
                flush_logs (b, j);
                pump (b, j);
            }
            known = true;
        }
    qc_msg_t m = {.command = known ? QC_HEARTBEAT : QC_DISCONNECT, .gpu = -1,
                  .reason = known ? NULL : UNKNOWN_PEER_REASON};
    qc_msg_send (&m, zsock_resolve (b->router), from);
}

void
jobs_forward_log (qc_broker_t *b, job_rec_t *job, qc_msg_t *m)
{
    if (job->attached) {
        send_to_client (b, job, m);
        return;
    }
    log_entry_t *e = calloc (1, sizeof *e);
    if (!e || !(e->msg = zmsg_new ()) || qc_msg_encode (m, e->msg)
        || zlist_append (job->logs, e)) {
        if (e) zmsg_destroy (&e->msg);
        free (e);
        return;
    }
    if (zlist_size (job->logs) > MAX_KEPT_LOGS) {
        log_entry_t *old = zlist_pop (job->logs);
        zmsg_destroy (&old->msg);
        free (old);
        job->logs_dropped++;
    }
}

void
jobs_tick (qc_broker_t *b)
{
    int64_t client_dead = (int64_t) b->cfg.heartbeat_ms * b->cfg.liveness;
    zlist_t *gone = NULL;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        if (j->attached && b->now - j->client_seen > client_dead) {
            j->attached = false;
            /* what was sent but not acknowledged goes again on attach */
            j->sent_seq = j->acked_seq;
            j->done_sent = false;
            qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": client went away; "
                    "results are kept until it reattaches", j->id);
        }
        if (!j->finished_at && sched_job_finished (j->sj))
            j->finished_at = b->now;    /* e.g. cancelled while detached */
        if (j->finished_at && j->acked_seq == j->last_seq && !j->attached
            && b->now - j->finished_at > (int64_t) b->cfg.job_linger_s * 1000) {
            if (!gone) gone = zlist_new ();
            if (gone) zlist_append (gone, j);
        }
    }
    if (gone) {
        for (job_rec_t *j = zlist_first (gone); j; j = zlist_next (gone)) {
            char key[32];
            id_key (j->id, key, sizeof key);
            sched_job_remove (b->sched, j->sj);
            zhashx_delete (b->jobs, key);
        }
        zlist_destroy (&gone);
    }
}

void
jobs_goodbye (qc_broker_t *b)
{
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        qc_msg_t m = {.command = QC_DISCONNECT, .gpu = -1,
                      .reason = "broker is shutting down"};
        send_to_client (b, j, &m);
    }
}
