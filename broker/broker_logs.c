/* A job's log records on their way to its client (PROTOCOL.md, LOG):
 * forwarded while a client is attached, kept (the last MAX_KEPT_LOGS,
 * MAX_KEPT_LOG_BYTES) while none is, and sent on its reattach.
 *
 * A client that dies outright (kill -9, a machine lost) is found gone
 * only heartbeats later; what was forwarded meanwhile went to a dead
 * socket. So the records forwarded since the client's heartbeat before
 * last are kept too: when the client is found gone they join the kept
 * ones and go again on its reattach (some it had may then be in its
 * qc.log twice, and a note says so); a client that left saying so, or
 * that beats on, drops them. */
#include "broker/broker_int.h"

#include <string.h>

#include "shared/log.h"

#define MOD "broker"

/* m's two encoded frames in one entry, or NULL (no memory). */
static log_entry_t *
entry_new (qc_msg_t *m, int64_t at)
{
    zmsg_t *msg = zmsg_new ();
    log_entry_t *e = NULL;
    if (msg && qc_msg_encode (m, msg) == 0 && zmsg_size (msg) == 2) {
        zframe_t *h = zmsg_first (msg), *body = zmsg_next (msg);
        if ((e = malloc (sizeof *e + zframe_size (h) + zframe_size (body)))) {
            e->at = at;
            e->header = zframe_size (h);
            e->body = zframe_size (body);
            memcpy (e->data, zframe_data (h), e->header);
            memcpy (e->data + e->header, zframe_data (body), e->body);
        }
    }
    zmsg_destroy (&msg);
    return e;
}

/* Appends e to list (*bytes its cost), the oldest dropped past the
 * bounds (counted in *dropped when not NULL). */
static void
append (zlist_t *list, size_t *bytes, log_entry_t *e, uint64_t *dropped)
{
    if (!e || zlist_append (list, e)) {
        free (e);
        return;
    }
    *bytes += LOG_ENTRY_COST (e);
    while (zlist_size (list) > MAX_KEPT_LOGS || *bytes > MAX_KEPT_LOG_BYTES) {
        log_entry_t *old = zlist_pop (list);
        *bytes -= LOG_ENTRY_COST (old);
        free (old);
        if (dropped)
            (*dropped)++;
    }
}

static void
clear (zlist_t *list, size_t *bytes)
{
    log_entry_t *e;
    while (list && (e = zlist_pop (list)))
        free (e);
    *bytes = 0;
}

void
logs_free (job_rec_t *j)
{
    clear (j->logs, &j->logs_bytes);
    clear (j->logs_sent, &j->logs_sent_bytes);
    zlist_destroy (&j->logs);
    zlist_destroy (&j->logs_sent);
}

/* Sends e's frames to the job's client. */
static void
send_entry (qc_broker_t *b, const job_rec_t *job, const log_entry_t *e)
{
    zmsg_t *msg = zmsg_new ();
    if (msg && !zmsg_addmem (msg, zframe_data (job->client), zframe_size (job->client))
        && !zmsg_addmem (msg, e->data, e->header)
        && !zmsg_addmem (msg, e->data + e->header, e->body))
        zmsg_send (&msg, zsock_resolve (b->router));
    zmsg_destroy (&msg);
}

void
jobs_forward_log (qc_broker_t *b, job_rec_t *job, qc_msg_t *m)
{
    /* encoded once: sent, and kept as sent (or kept for the client) */
    log_entry_t *e = entry_new (m, b->now);
    if (job->attached && job->client) {
        if (e)
            send_entry (b, job, e);
        else
            qc_msg_send (m, zsock_resolve (b->router), job->client);
        append (job->logs_sent, &job->logs_sent_bytes, e, NULL);
        return;
    }
    append (job->logs, &job->logs_bytes, e, &job->logs_dropped);
}

void
logs_client_beat (qc_broker_t *b, job_rec_t *job)
{
    /* what went out before its previous beat came in (a heartbeat
       interval ago), it had read before it beat again */
    log_entry_t *e;
    while ((e = zlist_first (job->logs_sent)) && e->at < job->client_beat) {
        zlist_pop (job->logs_sent);
        job->logs_sent_bytes -= LOG_ENTRY_COST (e);
        free (e);
    }
    job->client_beat = b->now;
}

void
logs_client_left (job_rec_t *job)
{
    clear (job->logs_sent, &job->logs_sent_bytes);
}

void
logs_client_lost (job_rec_t *job)
{
    log_entry_t *e;
    while ((e = zlist_pop (job->logs_sent))) {
        job->logs_sent_bytes -= LOG_ENTRY_COST (e);
        job->logs_resent++;
        append (job->logs, &job->logs_bytes, e, &job->logs_dropped);
    }
}

/* A note from the broker to the job's client, as a LOG record. */
static void
note (qc_broker_t *b, job_rec_t *job, const char *text)
{
    qc_msg_t m = {.command = QC_LOG, .gpu = -1, .job = job->id, .key = job->key,
                  .time = (double) zclock_time () / 1000.0, .level = 2,
                  .worker = "broker", .module = "broker", .message = (char *) text};
    qc_msg_send (&m, zsock_resolve (b->router), job->client);
}

void
logs_flush (qc_broker_t *b, job_rec_t *job)
{
    if (!job->client)
        return;
    char text[256];
    if (job->logs_dropped) {
        snprintf (text, sizeof text, "%" PRIu64 " log records were dropped while "
                  "no client was attached", job->logs_dropped);
        note (b, job, text);
        job->logs_dropped = 0;
    }
    if (job->logs_resent) {
        snprintf (text, sizeof text, "%" PRIu64 " log records sent in the seconds before "
                  "the broker found the client gone are sent again: some may be in qc.log "
                  "twice", job->logs_resent);
        note (b, job, text);
        job->logs_resent = 0;
    }
    log_entry_t *e;
    while ((e = zlist_pop (job->logs))) {
        send_entry (b, job, e);
        free (e);
    }
    job->logs_bytes = 0;
    logs_client_left (job);   /* a new connection: nothing sent on it yet */
}
