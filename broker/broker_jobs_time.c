/* The jobs' clock (broker_jobs.c holds the table and the client side):
 * once a tick, clients that fell silent are detached, finished jobs are
 * journalled as such, and jobs past --linger (delivered) or --retention
 * (not fetched) are forgotten; and the goodbye to attached clients when
 * the broker stops. */
#include "broker/broker_int.h"

#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "shared/log.h"

#define MOD "broker"

/* Hands the memory of forgotten jobs back to the system, at most every
 * 10 s (the last forgotten are handed back at the next chance): glibc
 * keeps a heap's free pages, so a broker that once held a thousand jobs
 * stayed at its high-water mark (325 MB with none held, measured)
 * however few it held later. */
static void
give_back_memory (qc_broker_t *b)
{
    if (!b->trim_due || b->now - b->trimmed_at < 10000)
        return;
    b->trim_due = false;
    b->trimmed_at = b->now;
#ifdef __GLIBC__
    malloc_trim (0);
#endif
}

/* A job whose client went away before it had sent all its slides (its
 * process killed mid-submission, a dropped network) may get the rest when
 * the client comes back (qc-submit resends from the job's total); until
 * then none of it runs, or it would run for no one while the client's
 * rerun runs it again. Back within --linger: it goes on; else it is
 * cancelled, so that it neither waits for ever nor keeps a place. */
static void
hold_orphan (qc_broker_t *b, job_rec_t *j)
{
    sched_job_t *sj = j->sj;
    bool hold = !sj->final && !sj->cancelled && !j->cancel_due && !j->pending_final
                && !j->attached;
    if (hold != sj->held) {
        sj->held = hold;
        if (hold) {
            j->held_since = b->now;
            qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": its client went away before "
                    "sending all its slides (%" PRIu64 " so far): none of them runs until "
                    "it comes back; cancelled if it does not within %u s (--linger)",
                    j->id, sj->total, b->cfg.job_linger_s);
        } else {
            qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": its client is back: its slides "
                    "run", j->id);
            b->dispatch_due = true;
        }
    }
    if (hold && b->now - j->held_since > (int64_t) b->cfg.job_linger_s * 1000) {
        qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": its client did not come back to "
                "send the rest of its slides within %u s (--linger): cancelled", j->id,
                b->cfg.job_linger_s);
        sj->held = false;
        jobs_cancel (b, j, NULL, JOBS_ORPHAN_WHY);
    }
}

/* A job whose slides cannot run (they need a GPU and no worker has one;
 * the workers that could are gone for good) and whose client is away
 * would wait for ever, its queue shown by qc-status and its journal kept:
 * with neither a result, a slide running, nor its client for
 * --retention while workers are there, it is cancelled (its queued
 * slides fail marked for a rerun); its results then wait --retention as
 * any finished job's. */
static void
give_up_stalled (qc_broker_t *b, job_rec_t *j)
{
    /* not stalled: held for the disk, a slide of it running (a 10x slide
       takes minutes), or no worker at all (an outage, maintenance: the
       workers come back, and then the job goes on) */
    if (b->state.holding || j->sj->running || j->sj->dispatched
        || zhashx_size (b->workers) == 0) {
        j->progress_at = b->now;
        return;
    }
    int64_t last = j->progress_at > j->client_seen ? j->progress_at : j->client_seen;
    if (j->finished_at || j->attached || !b->cfg.retention_s || j->sj->cancelled
        || j->sj->held || b->now - last <= (int64_t) b->cfg.retention_s * 1000)
        return;
    qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": no slide of it ran for %" PRId64 " s while "
            "its client was away: cancelled (--retention %u s; %zu slides were queued: no "
            "worker could run them)", j->id, (b->now - last) / 1000, b->cfg.retention_s,
            sched_job_queued (j->sj));
    jobs_cancel (b, j, NULL, JOBS_STALLED_WHY);
}

void
jobs_tick (qc_broker_t *b)
{
    int64_t wall = zclock_time ();
    zlist_t *gone = NULL;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        /* a client is judged by its own beat, as a worker is */
        int64_t client_dead = (int64_t) (j->client_hb_ms ? j->client_hb_ms
                                                          : b->cfg.heartbeat_ms)
                              * b->cfg.liveness;
        if (j->attached && b->now - j->client_seen > client_dead) {
            j->attached = false;
            logs_client_lost (j);
            /* what was sent but not acknowledged goes again on attach */
            outbox_rewind (j);
            qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": client went away; "
                    "results are kept until it reattaches", j->id);
        }
        hold_orphan (b, j);
        give_up_stalled (b, j);
        if (!j->finished_at && sched_job_finished (j->sj)) {
            j->finished_at = b->now;    /* e.g. cancelled while detached */
            j->finished_wall = wall;
        }
        if (j->finished_at && !j->finish_logged)
            state_log_finished (b, j);
        /* delivered: nothing is read from its result file again (a
           reattach resends from the last ACK on, and nothing follows it).
           Kept open through --linger, those descriptors counted among
           the peers the broker may hold, and a steady stream of jobs (84
           a linger under a limit of 128 descriptors) was refused as
           "full", the refusal calling them unfetched (a soak's review).
           Closed once written and, when large, rewritten without the
           results (state_maintain; what a restart reads of it is which
           tasks were done). The file goes when the job is forgotten; a
           restart opens it again, closed here again at the next tick. */
        if (j->results && j->finished_at && j->acked_seq == j->last_seq && !j->nfail
            && !qc_jfile_pending (j->results) && qc_jfile_size (j->results) < b->results_compact)
            qc_jfile_close (&j->results);
        uint8_t why = 0;
        /* with the state folder full, a delivered job goes at once: its
           result file is the room new jobs wait for (a tombstone answers
           its client as after --linger) */
        if (j->finished_at && j->acked_seq == j->last_seq && !j->attached
            && (b->now - j->finished_at > (int64_t) b->cfg.job_linger_s * 1000
                || b->state.disk_full))
            why = TOMB_DELIVERED;
        /* on the monotonic clock, as --linger: a wall clock stepped
           forward (NTP after a bad RTC) must not delete results at once;
           a restart carries the wall-clock age over (broker_restore.c) */
        else if (j->finished_at && !j->attached && b->cfg.retention_s
                 && b->now - j->finished_at > (int64_t) b->cfg.retention_s * 1000)
            why = TOMB_RETENTION;
        if (why) {
            if (why == TOMB_RETENTION)
                qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": %" PRIu64 " results "
                        "waited %" PRId64 " s for a client after the job finished: "
                        "deleted (--retention %u s)", j->id, j->last_seq - j->acked_seq,
                        (b->now - j->finished_at) / 1000, b->cfg.retention_s);
            else if (b->state.disk_full)
                qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": delivered: forgotten now, "
                        "not after --linger, as the state folder is full", j->id);
            else
                qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": delivered, and finished "
                        "over %u s ago: forgotten (--linger)", j->id, b->cfg.job_linger_s);
            j->forget_why = why;
            if (!gone) gone = zlist_new ();
            if (gone) zlist_append (gone, j);
        }
    }
    if (gone) {
        for (job_rec_t *j = zlist_first (gone); j; j = zlist_next (gone))
            jobs_forget (b, j, j->forget_why);
        zlist_destroy (&gone);
        b->trim_due = true;
    }
    give_back_memory (b);
}

void
jobs_goodbye (qc_broker_t *b)
{
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (j->attached && j->client) {
            qc_msg_t m = {.command = QC_DISCONNECT, .gpu = -1,
                          .reason = "broker is shutting down"};
            qc_msg_send (&m, zsock_resolve (b->router), j->client);
        }
}
