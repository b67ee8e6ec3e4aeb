/* SUBMIT: a job made or extended. A batch is checked, journalled and
 * kept pending; once the journal is on disk (broker.c's commit at the
 * end of a burst) jobs_apply_pending queues its slides and answers
 * ACCEPTED, or refuses it when the journal could not be written. A
 * CANCEL or a limit that comes while batches are pending waits for them
 * (job->cancel_due), as the journal has them in that order. */
#include "broker/broker_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"

#define MOD "broker"

/* The first batch of job is sent again before it is on disk (from
 * another socket: its client's first may be closed): this sender is
 * answered too once it is, and becomes the job's client, as a SUBMIT
 * again after that would. */
static void
answer_again (qc_broker_t *b, job_rec_t *job, zframe_t *from, uint32_t hb_ms)
{
    for (pending_submit_t *p = b->pending; p; p = p->next)
        if (p->job == job && p->created) {
            if (zframe_eq (p->from, from) || (p->again && zframe_eq (p->again, from)))
                return;         /* one answer for one socket */
            zframe_t *dup = zframe_dup (from);
            if (!dup)
                return;         /* the first sender is answered */
            zframe_destroy (&p->again);
            p->again = dup;
            p->again_hb_ms = hb_ms;
            return;
        }
}

void
jobs_on_submit (qc_broker_t *b, const peer_t *p, qc_msg_t *m)
{
    char text[1024];          /* the limit's reason (a certificate name of up
                                 to 127 bytes) and the cut's notice after it */
    job_rec_t *job = NULL;
    bool created = false;
    zframe_t *from = p->id;
    if (m->job == 0) {
        if (m->base != 0) {
            jobs_send_error (b, from, 0, "SUBMIT of a new job must start at index 0");
            return;
        }
        if (m->key && (job = jobs_lookup_by_key (b, m->key))) {
            /* the client sent its first batch again (its ACCEPTED was
             * lost with a broker restart): that job, as it is */
            jobs_claim_unowned (b, p, job, m->key);
            if (!jobs_allows (job, p, USE_OWN)) {
                jobs_not_yours (b, p, job, "SUBMIT");
                return;
            }
            /* a peer taken as by an ATTACH, within --max-peers (a job not
               yet on disk answers its repeats with its first ACCEPTED) */
            if (job->durable && !job->attached
                && jobs_full_for_new_client (b, from, false, text, sizeof text)) {
                jobs_send_error (b, from, 0, text);
                return;
            }
            if (job->durable) {
                /* its sender is the job's client from now on, as after
                   ATTACH: it may be a new socket (the first one closed,
                   or the broker restarted) that was sent nothing yet,
                   and the job may be marked attached to it already, so
                   no HEARTBEAT would resume it: resumed here */
                jobs_attach_client (b, job, from, m->hb_ms, true);
                qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": its first SUBMIT came again; "
                        "resending from result %" PRIu64, job->id, job->acked_seq + 1);
                jobs_resume (b, job, from, false);
            } else
                answer_again (b, job, from, m->hb_ms);
            return;
        }
        if (b->state.disk_full) {
            snprintf (text, sizeof text, "the broker cannot store a new job: %s; "
                      "accepted jobs go on", b->state.disk_error);
            jobs_send_error (b, from, 0, text);
            return;
        }
        if (limits_over_client_quota (b, p, text, sizeof text)
            || limits_over_client_bytes (b, p, limits_config_bytes (m->config, m->assets,
                                                                    m->nassets)
                                               + limits_slides_bytes (m->slides, m->nslides),
                                         text, sizeof text)
            || jobs_full_for_new_client (b, from, true, text, sizeof text)) {
            jobs_send_error (b, from, 0, text);
            return;
        }
        if (!(job = job_rec_new (b, b->next_job, m->key)) || jobs_insert (b, job)) {
            if (job)
                sched_job_remove (b->sched, job->sj);
            job_rec_destroy (job);
            jobs_send_error (b, from, 0, "broker out of memory");
            return;
        }
        job_from_submit (job, m);
        if (p->cert)
            snprintf (job->owner, sizeof job->owner, "%s", p->cert->key);
        created = true;
        state_log_job (b, job);
        if (state_on (b) && state_open_results (b, job)) {
            jobs_forget (b, job, 0);
            jobs_send_error (b, from, 0, "the broker cannot create the job's result file "
                                    "(see its log)");
            return;
        }
    } else if (!(job = jobs_lookup (b, m->job))) {
        jobs_no_such_job (b, m->job, text, sizeof text);
        jobs_send_error (b, from, m->job, text);
        return;
    } else if (m->key && m->key != job->key) {
        /* another job under that id: said first, as to ATTACH */
        if (!jobs_allows (job, p, USE_OWN))
            refuse (b, p, "SUBMIT for job %" PRIu64 ": another job's id, and another "
                    "certificate's (key %s)", job->id,
                    job->owner[0] ? job->owner : "none: submitted without CurveZMQ");
        jobs_send_error (b, from, m->job, "job is not yours: its identity differs (the "
                                     "broker lost its state, or the job id is wrong)");
        return;
    } else if (jobs_claim_unowned (b, p, job, m->key), !jobs_allows (job, p, USE_OWN)) {
        jobs_not_yours (b, p, job, "SUBMIT");
        return;
    }
    if (job->sj->cancelled || job->cancel_due) {
        jobs_send_error (b, from, job->id, "job was cancelled: no more slides accepted");
        return;
    }
    uint64_t have = job->sj->total + job->pending_total;
    if (m->base > have || ((job->sj->final || job->pending_final)
                           && m->base + m->nslides > have)) {
        jobs_send_error (b, from, job->id, job->sj->final || job->pending_final
                        ? "job is already complete: no more slides accepted"
                        : "SUBMIT batch out of order");
        return;
    }
    /* a batch sent again after a reconnect: only what is new counts */
    size_t skip = (size_t) (have - m->base) < m->nslides ? (size_t) (have - m->base)
                                                          : m->nslides;
    size_t n = m->nslides - skip;
    bool final = m->final && !job->sj->final && !job->pending_final;
    uint64_t add = limits_slides_bytes (m->slides + skip, n);
    if (!created && n && limits_over_client_bytes (b, p, add, text, sizeof text)) {
        /* cut off, the job would never be complete: it ends here, as if
           cancelled, so that it neither waits for ever nor keeps a place */
        size_t at = strlen (text);
        snprintf (text + at, sizeof text - at, "; job %" PRIu64 " is cancelled (the slides "
                  "it runs finish)", job->id);
        jobs_send_error (b, from, job->id, text);
        /* batches before it, journalled and not yet applied, go first:
           cancelled now, they would be refused as the job's (the journal
           has them: a restart brought them back) */
        if (job->pending_total) {
            job->cancel_due = true;
            job->cancel_due_why = JOBS_CUT_WHY;
        } else
            jobs_cancel (b, job, NULL, JOBS_CUT_WHY);
        return;
    }
    if (!created && (n || final) && b->state.disk_full) {
        snprintf (text, sizeof text, "the broker cannot store more slides: %s; "
                  "accepted slides go on", b->state.disk_error);
        jobs_send_error (b, from, job->id, text);
        return;
    }
    if (outbox_reserve (job, (size_t) (have + n - job->acked_seq))) {
        jobs_send_error (b, from, job->id, "broker out of memory");
        if (created)
            jobs_forget (b, job, 0);
        return;
    }
    pending_submit_t *ps = calloc (1, sizeof *ps);
    if (!ps || !(ps->from = zframe_dup (from))) {
        free (ps);
        jobs_send_error (b, from, job->id, "broker out of memory");
        if (created)
            jobs_forget (b, job, 0);
        return;
    }
    if (n || final || created)
        state_log_batch (b, job, have, m->slides + skip, n, final);
    ps->job = job;
    ps->slides = m->slides;     /* taken: freed once applied */
    ps->nslides = m->nslides;
    ps->skip = skip;
    ps->final = final;
    ps->created = created;
    /* the name is the client's word (its user and host), checked only
       where a certificate says who sent it; logged once on disk */
    if (created && asprintf (&ps->said, "job %" PRIu64 " submitted%s%s%s%s%s", job->id,
                             job->name ? " by " : "", job->name ? job->name : "",
                             p->cert ? " (certificate " : job->name ? " (as the client "
                             "says: no certificate)" : "", p->cert ? p->cert->name : "",
                             p->cert ? ")" : "") < 0)
        ps->said = NULL;
    ps->hb_ms = m->hb_ms;
    m->slides = NULL;
    m->nslides = 0;
    job->pending_total += n;
    job->pending_final |= final;
    job->bytes += add;
    if (b->pending_tail) b->pending_tail->next = ps; else b->pending = ps;
    b->pending_tail = ps;
    b->dispatch_due = true;    /* flush_due commits, applies, dispatches */
}

static void
pending_free (pending_submit_t *p)
{
    for (size_t i = 0; i < p->nslides; i++)
        free (p->slides[i]);
    free (p->slides);
    zframe_destroy (&p->from);
    zframe_destroy (&p->again);
    free (p->said);
    free (p);
}

/* Queues a journalled batch's slides; false (nothing added) on memory. */
static bool
apply_batch (qc_broker_t *b, pending_submit_t *p)
{
    job_rec_t *job = p->job;
    uint64_t before = job->sj->total;
    for (size_t i = p->skip; i < p->nslides; i++)
        if (!sched_job_add (b->sched, job->sj, p->slides[i], job->resource)) {
            sched_job_truncate (b->sched, job->sj, before);
            return false;
        }
    if (p->final)
        job->sj->final = true;
    return true;
}

void
jobs_apply_pending (qc_broker_t *b, bool committed)
{
    pending_submit_t *p;
    while ((p = b->pending)) {
        b->pending = p->next;
        if (!b->pending)
            b->pending_tail = NULL;
        job_rec_t *job = p->job;
        size_t n = p->nslides - p->skip;
        job->pending_total -= n;
        uint64_t bytes = limits_slides_bytes (p->slides + p->skip, n);
        if (p->final)
            job->pending_final = false;
        bool forgotten = false;
        if (committed && apply_batch (b, p)) {
            job->durable = true;
            if (p->said)
                qc_log (QC_LOG_INFO, MOD, "%s", p->said);
            bool owed = jobs_attach_client (b, job, p->from, p->hb_ms, true);
            jobs_send_accepted (b, p->from, job, false);
            if (p->again) {
                owed = jobs_attach_client (b, job, p->again, p->again_hb_ms, true) || owed;
                jobs_send_accepted (b, p->again, job, false);
            }
            if (owed)
                logs_flush (b, job);   /* a new socket's kept records, after its ACCEPTED */
            outbox_pump (b, job);      /* an empty final job is done at once */
        } else {
            char text[512];
            if (committed)
                snprintf (text, sizeof text, "broker out of memory");
            else
                snprintf (text, sizeof text, "the broker cannot store %s: %s%s",
                          p->created ? "a new job" : "more slides", b->state.disk_error,
                          p->created ? "" : "; accepted slides go on");
            jobs_send_error (b, p->from, p->created ? 0 : job->id, text);
            if (p->again)
                jobs_send_error (b, p->again, 0, text);
            job->bytes -= bytes < job->bytes ? bytes : job->bytes;
            if (p->created) {
                jobs_forget (b, job, 0);
                forgotten = true;
            }
        }
        if (!forgotten && job->cancel_due && !job->pending_total) {
            job->cancel_due = false;
            jobs_cancel (b, job, NULL, job->cancel_due_why);
        }
        pending_free (p);
    }
}

