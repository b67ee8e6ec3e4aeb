/* The jobs' clients: one record per routing id that is some job's
 * client (job->client), holding those jobs. PROTOCOL.md section 11
 * bounds what the broker holds sent and unacknowledged per client, not
 * per job: counted per job, one slow socket with three jobs held three
 * windows of the broker's memory (3 x 64 MiB queued for it). So each
 * job's sent and unacknowledged results are summed in its client's
 * record (clients_count), which broker_outbox.c checks before each send
 * and uses to let the client's jobs take turns.
 *
 * A job joins the record of its client when jobs_attach_client sets or
 * changes job->client, and leaves it when it is destroyed; a record goes
 * with its last job. Detached jobs stay in it (a HEARTBEAT from the same
 * socket attaches them again); what they count is nothing, as detaching
 * rewinds what was sent. */
#include "broker/broker_int.h"

#include <stdlib.h>

#include "shared/log.h"

#define MOD "broker"

void
clients_count (job_rec_t *job)
{
    client_rec_t *c = job->peer;
    if (!c) {
        /* in no record (one could not be made): nothing counted in one,
           so that joining one later adds the job's whole counts */
        job->peer_bytes = job->peer_results = 0;
        return;
    }
    uint64_t results = job->sent_seq - job->acked_seq;
    /* modulo 2^64: the sums stay right whichever way each moved */
    c->sent_bytes += job->sent_bytes - job->peer_bytes;
    c->sent_results += results - job->peer_results;
    job->peer_bytes = job->sent_bytes;
    job->peer_results = results;
}

void
clients_leave (job_rec_t *job)
{
    client_rec_t *c = job->peer;
    if (!c)
        return;
    c->sent_bytes -= job->peer_bytes;
    c->sent_results -= job->peer_results;
    /* the last job takes its place: the order is only whose turn it is */
    job_rec_t *last = c->jobs[--c->njobs];
    c->jobs[job->peer_slot] = last;
    last->peer_slot = job->peer_slot;
    job->peer = NULL;
    job->peer_bytes = job->peer_results = 0;
    if (!c->njobs)
        zhashx_delete (c->table, c->key);   /* its destructor frees it */
}

/* The record of the routing id whose hex is key, made when none is;
 * NULL on memory. */
static client_rec_t *
record (qc_broker_t *b, const char *key)
{
    client_rec_t *c = zhashx_lookup (b->clients, key);
    if (c)
        return c;
    if (!(c = calloc (1, sizeof *c)))
        return NULL;
    snprintf (c->key, sizeof c->key, "%s", key);
    c->table = b->clients;
    if (zhashx_insert (b->clients, c->key, c)) {
        free (c);
        return NULL;
    }
    return c;
}

void
clients_follow (qc_broker_t *b, job_rec_t *job)
{
    clients_leave (job);
    if (!job->client)
        return;
    char key[PEER_KEY_MAX];
    peer_key (job->client, key);
    client_rec_t *c = record (b, key);
    if (c && c->njobs == c->capjobs) {
        size_t cap = c->capjobs ? c->capjobs * 2 : 4;
        job_rec_t **jobs = realloc (c->jobs, cap * sizeof *jobs);
        if (jobs) {
            c->jobs = jobs;
            c->capjobs = cap;
        }
    }
    if (!c || c->njobs == c->capjobs) {
        /* the job goes on with a window of its own, as before records */
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": out of memory recording its client: "
                "its results are bounded apart from that client's other jobs", job->id);
        if (c && !c->njobs)
            zhashx_delete (b->clients, c->key);
        return;
    }
    job->peer = c;
    job->peer_slot = c->njobs;
    c->jobs[c->njobs++] = job;
    clients_count (job);
}
