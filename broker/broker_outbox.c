/* Each job's results in seq order, from the first RESULT of a task (or a
 * failure the broker makes itself) until the client acknowledges it.
 *
 * Where the bytes are: with a state folder, in the job's result file
 * (written and synced before the result is sent: broker.c's flush_due);
 * in memory only from its arrival until it is first sent, so broker
 * memory does not grow with the results a client has not fetched (a
 * resend reads the file again). With --state none, in memory until
 * acknowledged, as before. Failures the broker makes (cancelled,
 * given up) are an index and a reason number: a 400,000-task job is
 * cancelled with one record and 32 bytes a task.
 *
 * The entries are a ring whose capacity is reserved when slides are
 * added (outbox_reserve in broker_submit.c): every task can get its
 * result a seq without an allocation that could fail. */
#include "broker/broker_int.h"

#include <string.h>

#include "shared/log.h"
#include "shared/url.h"

#define MOD "broker"
/* Results sent and not acknowledged, in bytes, per client over all its
 * jobs (besides cfg.result_window in results, also per client): large
 * results do not pile up in the socket's queue, however many jobs the
 * client has (broker_clients.c). */
#define SENT_BYTES_WINDOW (64u << 20)
/* Record prefix of a worker's result: task index, seq, ok. */
#define RESULT_PREFIX 17

static outbox_entry_t *
entry_of (job_rec_t *job, uint64_t seq)
{
    size_t i = (size_t) (seq - 1 - job->outbox_base);
    return &job->outbox[(job->outbox_head + i) % job->cap_outbox];
}

int
outbox_reserve (job_rec_t *job, size_t more)
{
    if (job->cap_outbox - job->noutbox >= more)
        return 0;
    size_t cap = job->cap_outbox ? job->cap_outbox * 2 : 64;
    if (cap < job->noutbox + more)
        cap = job->noutbox + more;
    outbox_entry_t *o = malloc (cap * sizeof *o);
    if (!o)
        return -1;
    for (size_t i = 0; i < job->noutbox; i++)
        o[i] = job->outbox[(job->outbox_head + i) % job->cap_outbox];
    free (job->outbox);
    job->outbox = o;
    job->cap_outbox = cap;
    job->outbox_head = 0;
    return 0;
}

/* The next seq's entry; NULL only when the reservation was broken. */
static outbox_entry_t *
push (job_rec_t *job)
{
    if (job->noutbox == job->cap_outbox && outbox_reserve (job, 1))
        return NULL;
    outbox_entry_t *e = &job->outbox[(job->outbox_head + job->noutbox) % job->cap_outbox];
    memset (e, 0, sizeof *e);
    e->reason = -1;
    job->noutbox++;
    job->last_seq++;
    return e;
}

int
outbox_reason (job_rec_t *job, const char *reason)
{
    /* most failures of a job share their reason: the last one first */
    for (size_t i = job->nreasons; i-- > 0;)
        if (strcmp (job->reasons[i], reason) == 0)
            return (int32_t) i;
    char **r = realloc (job->reasons, (job->nreasons + 1) * sizeof *r);
    if (!r)
        return -1;
    job->reasons = r;
    if (!(r[job->nreasons] = strdup (reason)))
        return -1;
    return (int32_t) job->nreasons++;
}

/* The finish time goes into the journal with the batch that finished the
 * job: left to the next tick, a broker stopped in between came back with
 * the job finishing at its restart, and --retention counted from there. */
static void
mark_finished (qc_broker_t *b, job_rec_t *job)
{
    if (sched_job_finished (job->sj) && !job->finished_at) {
        job->finished_at = b->now;
        job->finished_wall = zclock_time ();
    }
    if (job->finished_at && !job->finish_logged)
        state_log_finished (b, job);
}

void
outbox_flush_failures (qc_broker_t *b, job_rec_t *job)
{
    if (!job->nfail)
        return;
    if (job->results) {
        const char *reason = job->reasons[job->fail_reason];
        size_t rlen = strlen (reason);
        size_t n = 14 + rlen + 8 * job->nfail;
        uint8_t *p = malloc (n);
        if (p) {
            qc_put_u64 (p, job->fail_first_seq);
            qc_put_u32 (p + 8, (uint32_t) job->nfail);
            p[12] = (uint8_t) (rlen & 0xff);
            p[13] = (uint8_t) (rlen >> 8);
            memcpy (p + 14, reason, rlen);
            for (size_t i = 0; i < job->nfail; i++)
                qc_put_u64 (p + 14 + rlen + 8 * i, job->fail_idx[i]);
            if (qc_jfile_append (job->results, R_FAILED, p, n, NULL, 0, NULL))
                qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": cannot keep %zu failures "
                        "in its result file (out of memory)", job->id, job->nfail);
            free (p);
        }
    }
    job->nfail = 0;
    (void) b;
}

void
outbox_task_failed (void *arg, sched_task_t *task, const char *reason)
{
    qc_broker_t *b = arg;
    job_rec_t *job = task->job->owner;
    int32_t r = outbox_reason (job, reason);
    if (r < 0 || (job->nfail && r != job->fail_reason))
        outbox_flush_failures (b, job);
    if (job->nfail == job->capfail) {
        size_t cap = job->capfail ? job->capfail * 2 : 64;
        uint64_t *f = realloc (job->fail_idx, cap * sizeof *f);
        if (f) {
            job->fail_idx = f;
            job->capfail = cap;
        }
    }
    outbox_entry_t *e = r >= 0 && job->nfail < job->capfail ? push (job) : NULL;
    if (!e) {
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": out of memory recording that %s "
                "failed (%s)", job->id, QC_URL_SHOWN (task->path), reason);
        return;
    }
    e->idx = task->idx;
    e->reason = r;
    if (!job->nfail)
        job->fail_first_seq = job->last_seq;
    job->fail_reason = r;
    job->fail_idx[job->nfail++] = task->idx;
    /* one line per reason and burst, not one per task of a cancelled job */
    if (job->nfail == 1)
        qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": %s failed: %s", job->id,
                QC_URL_SHOWN (task->path), reason);
    mark_finished (b, job);
    job->pump_due = true;
    b->pump_due = true;
}

/* The encoded RESULT of m with its seq; a result over the protocol's
 * bounds goes as a failure, so the client still hears of the slide. */
static zmsg_t *
encode_result (job_rec_t *job, qc_msg_t *m)
{
    zmsg_t *enc = zmsg_new ();
    if (enc && qc_msg_encode (m, enc) == 0)
        return enc;
    zmsg_destroy (&enc);
    qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": cannot encode result of %s",
            job->id, m->path ? QC_URL_SHOWN (m->path) : "?");
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
    return enc;
}

void
outbox_deliver (qc_broker_t *b, job_rec_t *job, qc_msg_t *m)
{
    outbox_flush_failures (b, job);    /* the file keeps seq order */
    job->progress_at = b->now;
    m->command = QC_RESULT;
    m->key = job->key;
    m->seq = job->last_seq + 1;
    zmsg_t *enc = encode_result (job, m);
    outbox_entry_t *e = enc ? push (job) : NULL;
    if (!e) {
        zmsg_destroy (&enc);
        /* a failure needs no memory beyond its reserved entry */
        sched_task_t *t = sched_job_task (job->sj, m->idx);
        if (t)
            outbox_task_failed (b, t, "the broker ran out of memory keeping this "
                                      "slide's result");
        return;
    }
    e->idx = m->idx;
    e->msg = enc;
    if (job->results) {
        zframe_t *hdr = zmsg_first (enc), *body = zmsg_next (enc);
        uint8_t prefix[RESULT_PREFIX + 4];
        qc_put_u64 (prefix, m->idx);
        qc_put_u64 (prefix + 8, m->seq);
        prefix[16] = m->result && m->result->ok;
        memcpy (prefix + RESULT_PREFIX, zframe_data (hdr), 4);
        if (zframe_size (hdr) != 4
            || qc_jfile_append (job->results, R_RESULT, prefix, sizeof prefix,
                                zframe_data (body), zframe_size (body), &e->off))
            qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": cannot keep the result of %s "
                    "in its result file (out of memory)", job->id,
                    m->path ? QC_URL_SHOWN (m->path) : "?");
        else
            e->len = (uint32_t) (sizeof prefix + zframe_size (body));
    }
    mark_finished (b, job);
    /* sent with the rest of this batch's results (outbox_pump_due) */
    job->pump_due = true;
    b->pump_due = true;
}

int
outbox_restore (job_rec_t *job, uint64_t off, uint32_t len, uint64_t idx,
                int32_t reason)
{
    outbox_entry_t *e = push (job);
    if (!e)
        return -1;
    e->off = off;
    e->len = len;
    e->idx = idx;
    e->reason = reason;
    return 0;
}

/* A broker-made failure, encoded when it is sent. */
static zmsg_t *
encode_failure (job_rec_t *job, uint64_t seq, uint64_t idx, const char *reason)
{
    sched_task_t *t = sched_job_task (job->sj, idx);
    qc_msg_t m = {.command = QC_RESULT, .gpu = -1, .job = job->id, .key = job->key,
                  .idx = idx, .seq = seq, .path = t ? t->path : NULL,
                  .worker = "broker"};
    m.result = qc_result_new ();
    zmsg_t *enc = m.result ? zmsg_new () : NULL;
    if (enc) {
        qc_result_fail (m.result, "%s", reason);
        if (qc_msg_encode (&m, enc))
            zmsg_destroy (&enc);
    }
    qc_result_destroy (&m.result);
    return enc;
}

/* A result read back from the result file. */
static zmsg_t *
load_result (job_rec_t *job, const outbox_entry_t *e)
{
    if (!job->results || e->len < RESULT_PREFIX + 4)
        return NULL;
    size_t body = e->len - RESULT_PREFIX - 4;
    uint8_t hdr[4];
    zframe_t *f = zframe_new (NULL, body);
    zmsg_t *msg = f ? zmsg_new () : NULL;
    uint64_t at = e->off + QC_JREC_HEADER + RESULT_PREFIX;
    if (!msg || qc_jfile_read (job->results, at, hdr, 4)
        || qc_jfile_read (job->results, at + 4, zframe_data (f), body)
        || zmsg_addmem (msg, hdr, 4) || zmsg_append (msg, &f)) {
        zframe_destroy (&f);
        zmsg_destroy (&msg);
        return NULL;
    }
    return msg;
}

static zmsg_t *
entry_msg (job_rec_t *job, uint64_t seq, outbox_entry_t *e)
{
    if (e->msg)
        return zmsg_dup (e->msg);
    if (e->reason >= 0)
        return encode_failure (job, seq, e->idx, job->reasons[e->reason]);
    zmsg_t *msg = load_result (job, e);
    if (!msg) {
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": result %" PRIu64 " cannot be "
                "read back from %s", job->id, seq, qc_jfile_path (job->results));
        msg = encode_failure (job, seq, e->idx, "the broker could not read this "
                              "slide's stored result back (see its log); run it again");
    }
    return msg;
}

/* Room for one more result to job's client: the window is its
 * client's, over all that client's jobs (one of its own without a
 * client record). */
static bool
window_open (const qc_broker_t *b, const job_rec_t *job)
{
    const client_rec_t *c = job->peer;
    uint64_t results = c ? c->sent_results : job->sent_seq - job->acked_seq;
    uint64_t bytes = c ? c->sent_bytes : job->sent_bytes;
    return results < b->cfg.result_window && bytes < SENT_BYTES_WINDOW;
}

/* Sends job's next result to its client; false when it has none to send
 * (or the send failed: the next pump tries again). */
static bool
send_next (qc_broker_t *b, job_rec_t *job, void *sock)
{
    if (!job->attached || job->sent_seq >= job->last_seq)
        return false;
    /* only what is on disk goes out (durable_seq, at the end of each
       burst): an ACK or ATTACH read mid-burst sent results written but
       not yet synced, which a power loss could take from the broker
       after the client had them */
    if (job->sent_seq >= job->durable_seq) {
        job->pump_due = b->pump_due = true;   /* sent after this burst's sync */
        return false;
    }
    uint64_t seq = job->sent_seq + 1;
    outbox_entry_t *e = entry_of (job, seq);
    zmsg_t *copy = entry_msg (job, seq, e);
    zframe_t *to = zframe_dup (job->client);
    size_t size = copy ? zmsg_content_size (copy) : 0;
    if (!copy || !to || zmsg_prepend (copy, &to) || zmsg_send (&copy, sock)) {
        zframe_destroy (&to);
        zmsg_destroy (&copy);
        return false;
    }
    job->sent_seq = seq;
    if (!e->len)
        e->len = (uint32_t) (size < UINT32_MAX ? size : UINT32_MAX);
    job->sent_bytes += e->len;
    clients_count (job);
    if (job->results && e->len && e->reason < 0)
        zmsg_destroy (&e->msg);   /* the file has it */
    return true;
}

/* DONE once the finished job's every result went to its client. */
static void
pump_end (qc_broker_t *b, job_rec_t *job, void *sock)
{
    if (job->attached && sched_job_finished (job->sj) && job->sent_seq == job->last_seq
        && !job->done_sent) {
        qc_msg_t m = {.command = QC_DONE, .gpu = -1, .job = job->id, .key = job->key,
                      .total = job->sj->total, .done = job->sj->done,
                      .failed = job->sj->failed,
                      .reason = job->sj->cancelled ? "cancelled" : NULL};
        qc_msg_send (&m, sock, job->client);
        job->done_sent = true;
    }
    mark_finished (b, job);   /* e.g. an empty or cancelled job */
}

/* A client's jobs take turns, one result each, from the one after the
 * last served: the room an ACK frees goes round, so that no job of the
 * client waits while another has results to send. */
static void
pump_client (qc_broker_t *b, client_rec_t *c)
{
    void *sock = zsock_resolve (b->router);
    for (size_t idle = 0; c->njobs && idle < c->njobs
                          && window_open (b, c->jobs[c->turn % c->njobs]);) {
        job_rec_t *job = c->jobs[c->turn % c->njobs];
        c->turn = (c->turn + 1) % c->njobs;
        idle = send_next (b, job, sock) ? 0 : idle + 1;
    }
    for (size_t i = 0; i < c->njobs; i++)
        pump_end (b, c->jobs[i], sock);
}

void
outbox_pump (qc_broker_t *b, job_rec_t *job)
{
    if (job->peer) {
        pump_client (b, job->peer);
        return;
    }
    void *sock = zsock_resolve (b->router);
    while (window_open (b, job) && send_next (b, job, sock))
        ;
    pump_end (b, job, sock);
}

void
outbox_trim (job_rec_t *job)
{
    if (!job->results)
        return;
    for (uint64_t seq = job->sent_seq + 1; seq <= job->last_seq; seq++) {
        outbox_entry_t *e = entry_of (job, seq);
        if (e->msg && e->len)
            zmsg_destroy (&e->msg);
    }
}

void
outbox_pump_due (qc_broker_t *b)
{
    /* once per client, however many of its jobs got results: a pump
       goes over all of them */
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->pump_due && j->peer)
            j->peer->pump_due = true;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->pump_due) {
            j->pump_due = false;
            if (!j->peer)
                outbox_pump (b, j);
            else if (j->peer->pump_due) {
                j->peer->pump_due = false;
                pump_client (b, j->peer);
            }
            outbox_trim (j);
        }
}

void
outbox_drop_acked (job_rec_t *job, uint64_t seq)
{
    if (seq <= job->outbox_base)
        return;
    if (seq > job->last_seq)
        seq = job->last_seq;
    for (uint64_t s = job->outbox_base + 1; s <= seq; s++) {
        outbox_entry_t *e = entry_of (job, s);
        if (s <= job->sent_seq)
            job->sent_bytes -= e->len < job->sent_bytes ? e->len : job->sent_bytes;
        zmsg_destroy (&e->msg);
    }
    size_t drop = (size_t) (seq - job->outbox_base);
    job->outbox_head = (job->outbox_head + drop) % (job->cap_outbox ? job->cap_outbox : 1);
    job->noutbox -= drop;
    job->outbox_base = seq;
    job->acked_seq = seq;
    if (job->sent_seq < seq)
        job->sent_seq = seq;
    clients_count (job);
}

void
outbox_rewind (job_rec_t *job)
{
    job->sent_seq = job->acked_seq;
    job->sent_bytes = 0;
    job->done_sent = false;
    clients_count (job);
}

void
outbox_free (job_rec_t *job)
{
    for (size_t i = 0; i < job->noutbox; i++)
        zmsg_destroy (&job->outbox[(job->outbox_head + i) % job->cap_outbox].msg);
    free (job->outbox);
    job->outbox = NULL;
    job->noutbox = job->cap_outbox = 0;
    for (size_t i = 0; i < job->nreasons; i++)
        free (job->reasons[i]);
    free (job->reasons);
    job->reasons = NULL;
    job->nreasons = 0;
    free (job->fail_idx);
    job->fail_idx = NULL;
    job->nfail = job->capfail = 0;
}
