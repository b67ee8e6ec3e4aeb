/* The job table and the client side of the protocol: ATTACH, ACK,
 * CANCEL, heartbeats, and the answers SUBMIT shares (broker_submit.c,
 * where a batch is journalled first and applied only once the journal
 * is on disk). Results are kept in order per job until the
 * client acknowledges them (broker_outbox.c); log records are forwarded,
 * or kept while the client is away. A job is known by its id and its
 * identity key: a message whose key is not the job's is refused, so no
 * result or client can land in another job. With CurveZMQ on, a job
 * belongs to the certificate that submitted it (jobs_allows): no other
 * client sees, attaches to, acknowledges or cancels it. */
#include "broker/broker_int.h"

#include <string.h>
#include <sys/random.h>

#include "shared/log.h"

#define MOD "broker"

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

job_rec_t *
jobs_lookup_by_key (qc_broker_t *b, uint64_t key)
{
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->key == key)
            return j;
    return NULL;
}

job_rec_t *
jobs_of_task_msg (qc_broker_t *b, const qc_msg_t *m, const char *from)
{
    job_rec_t *job = jobs_lookup (b, m->job);
    if (job && m->key != job->key) {
        qc_log (QC_LOG_WARNING, MOD, "%s for job %" PRIu64 " from %s carries another "
                "job's identity (%016" PRIx64 ", not %016" PRIx64 "): dropped",
                qc_command_name (m->command), m->job, from, m->key, job->key);
        return NULL;
    }
    return job;    /* NULL also for a job already delivered and forgotten */
}

job_rec_t *
jobs_of_ref (qc_broker_t *b, const qc_taskref_t *ref)
{
    job_rec_t *job = jobs_lookup (b, ref->job);
    return job && job->key == ref->key ? job : NULL;
}

bool
jobs_allows (const job_rec_t *job, const peer_t *p, job_use_t use)
{
    if (!p->cert)
        return true;                  /* security off: as before */
    if (job->owner[0] && strcmp (job->owner, p->cert->key) == 0)
        return true;
    if (p->cert->role == QC_ROLE_ADMIN)
        return use != USE_OWN || !job->owner[0];
    return false;
}

/* A job submitted while the broker had no keys has no owner, and once
 * the broker runs with --cert only an admin could use it. The first
 * client certificate that fetches it with the job's key (the secret its
 * output folder holds, mode 0600) becomes its owner, journalled: its
 * submitter goes on as before. Only on ATTACH or a first SUBMIT sent
 * again, never on CANCEL; never for an admin, who may use an unowned
 * job anyway and would lock its submitter out. */
void
jobs_claim_unowned (qc_broker_t *b, const peer_t *p, job_rec_t *job, uint64_t key)
{
    if (!p->cert || job->owner[0] || !key || key != job->key
        || p->cert->role != QC_ROLE_CLIENT)
        return;
    snprintf (job->owner, sizeof job->owner, "%s", p->cert->key);
    job->claimed = true;
    state_log_owner (b, job);
    qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": submitted before this broker had keys; "
            "now owned by certificate %s, which showed the job's key", job->id,
            p->cert->name);
}

/* Refused: not the sender's job. Logged with the peer, answered ERROR. */
void
jobs_not_yours (qc_broker_t *b, const peer_t *p, const job_rec_t *job, const char *what)
{
    char text[768];
    const keyring_entry_t *owner = job->claimed && b->security
                                   ? security_lookup (b->security, job->owner) : NULL;
    /* "submitted with another certificate" told the one who submitted
       it, before the broker had keys, that it was not theirs */
    if (job->claimed)
        snprintf (text, sizeof text, "job %" PRIu64 " is not yours: it was submitted before "
                  "this broker had keys, and certificate %s has since claimed it by showing "
                  "the job's key (%s refused). If that certificate is not yours, the key in "
                  "the job's folder (.qc-slides) has been read by another: ask the broker's "
                  "admin to cancel job %" PRIu64, job->id,
                  owner ? owner->name : "(no longer admitted)", what, job->id);
    else
        snprintf (text, sizeof text, "job %" PRIu64 " is not yours: it was submitted with "
                  "another certificate (%s refused)", job->id, what);
    refuse (b, p, "%s for job %" PRIu64 ": it belongs to another certificate (key %s)",
            what, job->id, job->owner[0] ? job->owner : "none: submitted without CurveZMQ");
    qc_msg_t m = {.command = QC_ERROR, .gpu = -1, .job = job->id, .reason = text};
    qc_msg_send (&m, zsock_resolve (b->router), p->id);
}

job_rec_t *
job_rec_new (qc_broker_t *b, uint64_t id, uint64_t key)
{
    job_rec_t *job = calloc (1, sizeof *job);
    if (!job || !(job->logs = zlist_new ()) || !(job->logs_sent = zlist_new ())) {
        if (job)
            logs_free (job);
        free (job);
        return NULL;
    }
    job->id = id;
    job->key = key ? key : qc_proto_new_key ();
    job->fail_reason = -1;
    job->progress_at = b->now;
    if (!(job->sj = sched_job_new (b->sched, id, job))) {
        logs_free (job);
        free (job);
        return NULL;
    }
    return job;
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
    clients_leave (j);
    zframe_destroy (&j->client);
    outbox_free (j);
    qc_jfile_close (&j->results);
    logs_free (j);
    free (j);
}

void
job_from_submit (job_rec_t *job, qc_msg_t *m)
{
    free (job->config);
    free (job->name);
    job->config = m->config;
    m->config = NULL;
    job->name = m->name;
    m->name = NULL;
    job->resource = m->resource;
    for (size_t i = 0; i < job->nassets; i++) {
        free (job->assets[i].name);
        free (job->assets[i].data);
    }
    free (job->assets);
    job->assets = m->assets;
    job->nassets = m->nassets;
    m->assets = NULL;
    m->nassets = 0;
    job->bytes = limits_config_bytes (job->config, job->assets, job->nassets);
}

void
job_to_submit (const job_rec_t *job, qc_msg_t *m)
{
    memset (m, 0, sizeof *m);
    m->command = QC_SUBMIT;
    m->gpu = -1;
    m->job = job->id;
    m->key = job->key;
    m->config = job->config;
    m->name = job->name;
    m->resource = job->resource;
    m->assets = job->assets;
    m->nassets = job->nassets;
}

int
jobs_insert (qc_broker_t *b, job_rec_t *job)
{
    char key[32];
    id_key (job->id, key, sizeof key);
    if (job->id >= b->next_job)
        b->next_job = job->id + 1;
    return zhashx_insert (b->jobs, key, job);
}

/* Forgets a job: from the table, the scheduler and (with a state
 * folder) the disk; what an ATTACH to it will hear is kept. */
void
jobs_forget (qc_broker_t *b, job_rec_t *j, uint8_t why)
{
    char key[32];
    state_log_forget (b, j, why);
    id_key (j->id, key, sizeof key);
    sched_job_remove (b->sched, j->sj);
    zhashx_delete (b->jobs, key);
}

void
jobs_remember_tomb (qc_broker_t *b, const tombstone_t *t)
{
    if (!b->tombs && !(b->tombs = calloc (QC_MAX_TOMBSTONES, sizeof *b->tombs)))
        return;
    b->tombs[b->tomb_next] = *t;
    b->tomb_next = (b->tomb_next + 1) % QC_MAX_TOMBSTONES;
    if (b->ntombs < QC_MAX_TOMBSTONES)
        b->ntombs++;
}

static void
duration (uint32_t s, char *text, size_t len)
{
    if (s % 86400 == 0 && s)
        snprintf (text, len, "%u days", s / 86400);
    else if (s % 3600 == 0 && s)
        snprintf (text, len, "%u h", s / 3600);
    else if (s % 60 == 0 && s)
        snprintf (text, len, "%u min", s / 60);
    else
        snprintf (text, len, "%u s", s);
}

/* What to tell a client about a job id this broker does not hold. */
void
jobs_no_such_job (qc_broker_t *b, uint64_t id, char *text, size_t len)
{
    for (size_t i = 0; i < b->ntombs; i++) {
        const tombstone_t *t = &b->tombs[i];
        if (t->id != id)
            continue;
        char when[64] = "?";
        time_t secs = (time_t) (t->forgotten_wall / 1000);
        struct tm tm;
        if (localtime_r (&secs, &tm))
            strftime (when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        char kept[32];
        duration (b->cfg.retention_s, kept, sizeof kept);
        if (t->why == TOMB_RETENTION)
            snprintf (text, len, "no such job: job %" PRIu64 " finished, and its "
                      "results waited %s for a client that did not come; they "
                      "were deleted at %s (qc-broker --retention); run its slides again",
                      id, kept, when);
        else if (t->why == TOMB_DROPPED)
            snprintf (text, len, "no such job: job %" PRIu64 " finished, and the results "
                      "that waited for its client were deleted at %s by a qc-submit "
                      "--cancel; run its slides again", id, when);
        else
            snprintf (text, len, "no such job: job %" PRIu64 " finished and all its "
                      "results were delivered (forgotten at %s)", id, when);
        return;
    }
    if (id >= b->next_job)
        snprintf (text, len, "no such job: job %" PRIu64 " was never submitted here "
                  "(this broker's jobs go up to %" PRIu64 "%s)", id, b->next_job - 1,
                  state_on (b) ? "" : "; it keeps no state, so a restart forgot "
                                      "every job");
    else
        snprintf (text, len, "no such job (finished and delivered, or the broker "
                  "restarted without its state)");
}

void
jobs_send_error (qc_broker_t *b, zframe_t *to, uint64_t job, const char *reason)
{
    qc_msg_t m = {.command = QC_ERROR, .gpu = -1, .job = job, .reason = (char *) reason};
    qc_msg_send (&m, zsock_resolve (b->router), to);
}

/* attach: it answers an ATTACH (seq: what the resend follows). */
void
jobs_send_accepted (qc_broker_t *b, zframe_t *to, const job_rec_t *job, bool attach)
{
    qc_msg_t m = {.command = QC_ACCEPTED, .gpu = -1, .job = job->id,
                  .key = job->key, .total = job->sj->total, .seq = job->acked_seq,
                  .attached = attach, .resource = job->resource};
    qc_msg_send (&m, zsock_resolve (b->router), to);
}

/* Client peers the broker holds: routing ids with a job attached, each
 * once however many jobs it has (the jobs a record could not be made
 * for, one each). *known: from is some job's client already; *counted:
 * and one of those peers. Also the result files open, into *files. */
static size_t
client_peers (qc_broker_t *b, zframe_t *from, bool *known, bool *counted, size_t *files)
{
    size_t peers = 0;
    *files = 0;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        peers += j->attached && !j->peer;
        *files += j->results != NULL;
    }
    char key[PEER_KEY_MAX];
    peer_key (from, key);
    const client_rec_t *own = zhashx_lookup (b->clients, key);
    *known = own != NULL;
    *counted = false;
    for (client_rec_t *c = zhashx_first (b->clients); c; c = zhashx_next (b->clients))
        for (size_t i = 0; i < c->njobs; i++)
            if (c->jobs[i]->attached) {
                peers++;
                *counted |= c == own;
                break;
            }
    return peers;
}

/* Peers the broker holds: registered workers and client peers (a socket
 * with many jobs is one: it takes one descriptor). */
bool
jobs_full_for_new_client (qc_broker_t *b, zframe_t *from, bool new_job, char *text, size_t len)
{
    if (!b->max_peers)
        return false;
    bool known, counted;
    size_t files;
    size_t peers = zhashx_size (b->workers) + client_peers (b, from, &known, &counted,
                                                            &files);
    if (known && !new_job)
        return false;      /* already one of ours */
    /* a new job keeps its result file open until it is delivered: those
       files share the descriptors peers take, so that the clients of the
       jobs held can still come back for them. A peer held already takes
       no second descriptor for its next job. */
    if (peers + !counted + (new_job ? files : 0) <= b->max_peers)
        return false;
    const char *limit = limits_peers_source (b);
    if (new_job && files)
        snprintf (text, len, "broker is full: it holds %zu peers and %zu jobs whose "
                  "results are not all fetched yet, each keeping a file open (%s allows "
                  "%zu); fetch those jobs' results (qc-submit --attach, or the same "
                  "command without --detach; --retention deletes them in time), or "
                  "raise the broker's limit (%s)", peers, files, limit, b->max_peers,
                  limits_peers_raise (b));
    else
        snprintf (text, len, "broker is full: it holds %zu peers (%s allows %zu); try "
                  "again later, or raise the broker's limit (%s)", peers, limit,
                  b->max_peers, limits_peers_raise (b));
    /* said here too, for the operator who raises the limit (a soak's
       review: only the refused client knew) */
    char who[PEER_KEY_MAX];
    peer_key (from, who);
    refusals_log (b->refusals, b->now, who, "client refused: %s", text);
    return true;
}

bool
jobs_attach_client (qc_broker_t *b, job_rec_t *job, zframe_t *from, uint32_t hb_ms,
                    bool answered)
{
    if (hb_ms >= QC_HB_MS_MIN)
        job->client_hb_ms = hb_ms < QC_HB_MS_MAX ? hb_ms : QC_HB_MS_MAX;
    bool lost = false;
    if (!job->client || !zframe_eq (job->client, from)) {
        /* another connection takes the job over (its client back on a
           new socket before the broker found the old one gone): what
           went to the old one since its beat before last may be lost */
        lost = job->client && job->attached && zlist_size (job->logs_sent);
        if (lost)
            logs_client_lost (job);
        zframe_destroy (&job->client);
        job->client = zframe_dup (from);
        job->client_beat = b->now;
        clients_follow (b, job);
    }
    job->attached = job->client != NULL;
    job->client_seen = b->now;
    /* at once where no ACCEPTED follows (an ACK from the new socket);
       else its sender flushes after the ACCEPTED, which comes first
       (PROTOCOL.md 8.4: a client may take the job's records only once
       it knows the job is its own) */
    if (lost && !answered)
        logs_flush (b, job);
    return lost && answered;
}

/* Drops job's queued slides (each a failure its client is sent); the
 * running ones finish. A CANCEL's sender (asker) hears ACCEPTED first. */
void
jobs_cancel (qc_broker_t *b, job_rec_t *job, zframe_t *asker, const char *why)
{
    bool first = !job->sj->cancelled;
    sched_job_cancel (b->sched, job->sj, why);
    if (first)
        state_log_cancel (b, job);   /* with the why just kept */
    if (asker)
        jobs_send_accepted (b, asker, job, false);
    outbox_pump (b, job);
    outbox_trim (job);
}

void
jobs_resume (qc_broker_t *b, job_rec_t *job, zframe_t *to, bool attach)
{
    /* what went to an earlier socket (or to this one before it was found
       gone) may never have been read: everything not acknowledged goes
       again, and DONE after it */
    outbox_rewind (job);
    jobs_send_accepted (b, to, job, attach);
    logs_flush (b, job);
    outbox_pump (b, job);
    outbox_trim (job);
}

/* ---------------------------------------------------------------- ATTACH ... */

void
jobs_on_fetch (qc_broker_t *b, zframe_t *from, qc_msg_t *m, bool holds)
{
    /* a job the broker no longer knows has nothing to give: the empty
     * answer lets the worker fail those tasks instead of waiting */
    job_rec_t *job = jobs_lookup (b, m->job);
    if (job && job->key != m->key)
        job = NULL;         /* another job of that id: not its files */
    if (job && !holds) {
        char hex[PEER_KEY_MAX];
        peer_key (from, hex);
        qc_log (QC_LOG_WARNING, MOD, "refused peer %s: FETCH of job %" PRIu64 "'s "
                "config files by a worker that holds no task of it", hex, job->id);
        job = NULL;
    }
    qc_msg_t reply = {.command = QC_ASSETS, .gpu = -1, .job = m->job, .key = m->key,
                      .assets = job ? job->assets : NULL,
                      .nassets = job ? job->nassets : 0};
    if (qc_msg_send (&reply, zsock_resolve (b->router), from))
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": cannot send its %zu "
                "config files to a worker", m->job, reply.nassets);
}

void
jobs_on_attach (qc_broker_t *b, const peer_t *p, qc_msg_t *m)
{
    char text[512];
    zframe_t *from = p->id;
    job_rec_t *job = jobs_lookup (b, m->job);
    if (!job) {
        jobs_no_such_job (b, m->job, text, sizeof text);
        jobs_send_error (b, from, m->job, text);
        return;
    }
    if (m->key && m->key != job->key) {
        /* another job under that id (a broker without its state numbers
           from 1 again): said before whose it is, so that the client
           knows its own job is gone and runs its slides anew (told "not
           yours", a rerun stopped for as long as the other job stayed) */
        if (!jobs_allows (job, p, USE_OWN))
            refuse (b, p, "ATTACH for job %" PRIu64 ": another job's id, and another "
                    "certificate's (key %s)", job->id,
                    job->owner[0] ? job->owner : "none: submitted without CurveZMQ");
        snprintf (text, sizeof text, "job %" PRIu64 " at this broker is not the job of "
                  "your output folder (its identity differs: the broker lost its "
                  "state, or the job id is wrong)", job->id);
        jobs_send_error (b, from, m->job, text);
        return;
    }
    jobs_claim_unowned (b, p, job, m->key);
    if (!jobs_allows (job, p, USE_OWN)) {
        jobs_not_yours (b, p, job, "ATTACH");
        return;
    }
    if (!job->attached && jobs_full_for_new_client (b, from, false, text, sizeof text)) {
        jobs_send_error (b, from, m->job, text);
        return;
    }
    jobs_attach_client (b, job, from, m->hb_ms, true);
    /* the client says what it already holds; send from there. A client
     * that holds more than this broker numbered (results sent while the
     * disk was full, then a crash) holds at least every result here. */
    uint64_t holds = m->seq < job->last_seq ? m->seq : job->last_seq;
    if (holds > job->acked_seq) {
        outbox_drop_acked (job, holds);
        state_log_ack (b, job);
    }
    qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": client attached, resending from result %" PRIu64,
            job->id, job->acked_seq + 1);
    jobs_resume (b, job, from, true);
}

void
jobs_on_ack (qc_broker_t *b, const peer_t *p, qc_msg_t *m)
{
    job_rec_t *job = jobs_lookup (b, m->job);
    if (job && !jobs_allows (job, p, USE_OWN)) {
        jobs_not_yours (b, p, job, "ACK");
        return;
    }
    if (!job || (m->key && m->key != job->key) || m->seq <= job->acked_seq
        || m->seq > job->sent_seq)
        return;
    jobs_attach_client (b, job, p->id, 0, false);
    outbox_drop_acked (job, m->seq);
    state_log_ack (b, job);
    outbox_pump (b, job);
    outbox_trim (job);
}

void
jobs_on_cancel (qc_broker_t *b, const peer_t *p, qc_msg_t *m)
{
    char text[512];
    zframe_t *from = p->id;
    /* job 0 with a key: a client that sent its first SUBMIT and left
       before reading its ACCEPTED (interrupted) names the job so */
    job_rec_t *job = m->job ? jobs_lookup (b, m->job)
                            : m->key ? jobs_lookup_by_key (b, m->key) : NULL;
    if (!job) {
        jobs_no_such_job (b, m->job, text, sizeof text);
        jobs_send_error (b, from, m->job, text);
        return;
    }
    if (!jobs_allows (job, p, USE_CANCEL)) {
        jobs_not_yours (b, p, job, "CANCEL");
        return;
    }
    if (m->key && m->key != job->key) {
        jobs_send_error (b, from, m->job, "job is not yours: its identity differs");
        return;
    }
    if (sched_job_finished (job->sj) && !job->attached && job->acked_seq < job->last_seq) {
        /* finished, its results waiting for a client that may never come
           (its folder deleted, its run killed): they took the broker's
           disk and a place among the client's jobs until --retention,
           and the refusal of a client over its limit said to fetch or
           cancel such jobs, which nothing could (a soak's review).
           Cancelled now, they are deleted. */
        uint64_t held = job->last_seq - job->acked_seq;
        snprintf (text, sizeof text, "job %" PRIu64 " had finished: the %" PRIu64 " result%s "
                  "that waited for its client %s deleted; the job is forgotten", job->id,
                  held, held == 1 ? "" : "s", held == 1 ? "is" : "are");
        qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": %s (a qc-submit --cancel%s%s)", job->id,
                text + strcspn (text, ":") + 2, p->cert ? ", certificate " : "",
                p->cert ? p->cert->name : "");
        qc_msg_t m2 = {.command = QC_ACCEPTED, .gpu = -1, .job = job->id, .key = job->key,
                       .total = job->sj->total, .seq = job->acked_seq,
                       .resource = job->resource, .reason = text};
        qc_msg_send (&m2, zsock_resolve (b->router), from);
        jobs_forget (b, job, TOMB_DROPPED);
        b->trim_due = true;
        return;
    }
    if (sched_job_finished (job->sj) && !job->sj->cancelled) {
        /* nothing queued or running: a cancel would only mark it so */
        snprintf (text, sizeof text, "job %" PRIu64 " has finished (%" PRIu64 " of %"
                  PRIu64 " slides failed): nothing to cancel", job->id, job->sj->failed,
                  job->sj->total);
        jobs_send_error (b, from, m->job, text);
        return;
    }
    /* who cancelled, as far as the broker knows: its own client, or
       another connection (qc-submit --cancel; without certificates any
       that reaches the broker may) */
    bool by_admin = p->cert && p->cert->role == QC_ROLE_ADMIN
                    && strcmp (job->owner, p->cert->key) != 0;
    qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 " cancelled by %s%s%s%s", job->id,
            job->client && zframe_eq (job->client, from) ? "its own client"
            : "a qc-submit --cancel, not the job's client",
            p->cert ? ", with certificate " : " (no certificates in use)",
            p->cert ? p->cert->name : "",
            p->cert && p->cert->role == QC_ROLE_ADMIN ? " (admin)" : "");
    if (job->pending_total) {
        /* batches read before it, journalled and not yet applied, go
           first, as the journal has them (cancelled now, they were
           refused as "out of memory", and a restart brought them back as
           cancelled slides); later ones are refused as the job's */
        if (!job->cancel_due)
            job->cancel_due_why = by_admin ? JOBS_ADMIN_WHY : NULL;
        job->cancel_due = true;
        jobs_send_accepted (b, from, job, false);
        return;
    }
    jobs_cancel (b, job, from, by_admin ? JOBS_ADMIN_WHY : NULL);
}

/* Whether job is the client's at p: its routing id, and with keys its
 * certificate's. A routing id is the peer's own choice (ZMQ_ROUTING_ID)
 * and a closed connection's is free again, so the id alone would let
 * another certificate take over a job its client left. */
static bool
client_of (const job_rec_t *job, const peer_t *p)
{
    return job->client && zframe_eq (job->client, p->id) && jobs_allows (job, p, USE_OWN);
}

void
jobs_on_client_heartbeat (qc_broker_t *b, const peer_t *p)
{
    bool known = false, foreign = false;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        if (!client_of (j, p)) {
            foreign |= j->client && zframe_eq (j->client, p->id);
            continue;
        }
        logs_client_beat (b, j);
        j->client_seen = b->now;
        if (!j->attached) {
            j->attached = true;
            logs_flush (b, j);
            /* sent at the end of the batch, once for all the jobs
               of this client (outbox_pump_due), not once each */
            j->pump_due = true;
            b->pump_due = true;
        }
        known = true;
    }
    if (foreign)
        refuse (b, p, "HEARTBEAT from the routing id of another certificate's job client: "
                "ignored (that job is not attached to it)");
    qc_msg_t m = {.command = known ? QC_HEARTBEAT : QC_DISCONNECT, .gpu = -1,
                  .reason = known ? NULL : UNKNOWN_PEER_REASON};
    qc_msg_send (&m, zsock_resolve (b->router), p->id);
}

void
jobs_on_client_disconnect (qc_broker_t *b, const peer_t *p)
{
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->attached && client_of (j, p)) {
            j->attached = false;
            logs_client_left (j);     /* it said goodbye: it had them */
            /* what was sent but not acknowledged goes again on attach */
            outbox_rewind (j);
            if (sched_job_finished (j->sj) && j->acked_seq == j->last_seq)
                qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": every result delivered; "
                        "the client left", j->id);
            else
                qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": client left; results are "
                        "kept until it reattaches", j->id);
        }
}

void
jobs_on_revoked (qc_broker_t *b)
{
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->attached && j->owner[0] && !security_lookup (b->security, j->owner)) {
            j->attached = false;
            outbox_rewind (j);
            qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": its owner's certificate was "
                    "revoked: detached (results are kept; the job goes on)", j->id);
        }
}
