/* See session_int.h: what the broker sends a client, as it arrives:
 * ACCEPTED (the job's number, an attach's totals), RESULT (written to
 * the folder, shown), LOG (forwarded records), DONE, ERROR and the
 * rest, read in bursts. Split from session.c, which runs the session
 * (submitting, the main loop, cancelling, the end). */
#include "client/session_int.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "client/escape.h"
#include "client/local.h"
#include "client/progress.h"
#include "client/waiting.h"
#include "client/warn_once.h"
#include "shared/cli.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/url.h"

/* Slides in one job past which a total from the broker is not believed:
 * each costs the broker ~0.6 kB and qc-submit a bit of its index (2^26:
 * 40 GB of broker and 8 MB here), and a lie of 4e9 would cost 512 MB. */
#define JOB_SLIDES_MAX (UINT64_C (1) << 26)

/* A result of a worker of another build, with no -c: each build runs
 * its own built-in config (PROTOCOL.md 8.2), so its numbers may differ
 * from this build's, and the folder's .qc-config (this build's text) is
 * not what made it. Said once on the terminal, each slide in qc.log (a
 * user's review: on upgrade day, old workers' rows passed unmarked). */
static void
say_other_build (session_t *s, const qc_msg_t *m)
{
    const char *name = qc_output_name_of (s->cfg->out, m->idx);
    qc_output_note (s->cfg->out, "WARNING", "%s ran on %s, qc %s, with its own build's "
                    "built-in config (this qc-submit: qc %s): its numbers may differ from "
                    "this build's", name ? name : "?", m->worker ? m->worker : "?",
                    m->version, qc_version_full ());
    if (s->other_builds++ == 0 && !s->cfg->quiet)
        fprintf (stderr, "qc-submit: note: %s ran on %s, a worker of another build (qc %s; "
                 "this qc-submit: qc %s): with no -c each worker runs its own build's "
                 "built-in config, so its numbers may differ from this build's; qc.log "
                 "names each such slide (upgrade the worker, or give -c FILE, which every "
                 "worker must then read alike)\n", name ? name : "?",
                 m->worker ? m->worker : "?", m->version, qc_version_full ());
}

static void
on_result (session_t *s, qc_msg_t *m)
{
    if (m->seq < s->expected)
        return;                     /* already written */
    if (m->idx >= s->slides_known) {
        /* no broker of ours sends this; written, it would grow the
           output's index (an index of 4e9 is 512 MiB) for a slide that
           the job does not have */
        fprintf (stderr, "qc-submit: the broker sent a result for slide %" PRIu64 " of job %"
                 PRIu64 ", which has %" PRIu64 " slide%s; stopping (the results so far are "
                 "kept)\n", m->idx + 1, s->job, s->slides_known, qc_plural (s->slides_known));
        s->fatal = true;
        s->exit_code = QC_EXIT_FAILED;
        return;
    }
    if (m->seq > s->expected) {
        session_resync (s);
        return;
    }
    qc_waiting_progress (&s->waiting, zclock_mono ());
    if (m->worker && strcmp (m->worker, "broker") != 0)
        qc_waiting_worked (&s->waiting);      /* not a failure the broker made */
    if (qc_output_has (s->cfg->out, m->idx)) {
        s->expected++;
        return;
    }
    char err[512];
    if (s->cfg->builtin_config && m->version && strcmp (m->version, qc_version_full ()) != 0)
        say_other_build (s, m);
    if (qc_output_result (s->cfg->out, m, err, sizeof err)) {
        /* not counted, so never acknowledged: the broker keeps it, and
           the --attach this stop advises writes it again, whole */
        fprintf (stderr, "qc-submit: %s\n", err);
        s->fatal = true;
        s->write_failed = true;
        s->exit_code = QC_EXIT_FAILED;
        if (!s->cfg->local && s->job && qc_output_folder_gone (s->cfg->out)) {
            /* the folder gone, its .qc-job (the job's key) with it: no
               --attach can fetch the job, and the same command would run
               its slides in a second job beside it (an operator's
               review). Cancelled, what it ran stays fetchable for a
               folder put back; its other slides run in the rerun's job */
            qc_msg_t cancel = {.command = QC_CANCEL, .gpu = -1, .job = s->job, .key = s->key};
            session_send (s, &cancel);
            s->orphan_cancelled = true;
        }
        return;
    }
    s->expected++;
    if (s->cfg->test_kill_after && qc_output_written (s->cfg->out) >= s->cfg->test_kill_after)
        raise (SIGKILL);   /* a run killed between a result and its ACK */
    for (size_t i = 0; i < m->result->nfiles; i++)   /* what waits for a sync */
        s->unacked_bytes += m->result->files[i].size;
    /* the name this slide has in the output folder, not the worker's */
    const char *name = qc_output_name_of (s->cfg->out, m->idx);
    char file[256];           /* a URL's file name: no query, no credentials */
    qc_warn_once_result (s->warn_once, m->idx, m->result->ok);
    bool shown = !m->result->ok
                 && qc_warn_once_error_shown (s->warn_once, m->idx, m->result->error);
    /* a failure the scheduler made ("broker": a slide that crashed its
       runs, or ran past the task timeout) is the local worker's to a
       one-process user, who started no broker */
    bool made_here = s->cfg->local && m->worker && strcmp (m->worker, "broker") == 0;
    /* "ok" says the slide was processed: one with no tissue left (a
       slide out of focus all over, blank glass) passed too, and a QC
       scientist read the run's "36 passed" as 36 fit slides */
    const char *px = m->result->ok ? qc_result_get (m->result, "pixels_to_use") : NULL;
    char *end = NULL;
    bool empty = px && *px && strtod (px, &end) == 0 && end && !*end;
    /* where the config drew _causes.png, it shows what was taken, and why */
    bool causes = false;
    for (size_t i = 0; empty && i < m->result->nfiles && !causes; i++)
        causes = m->result->files[i].name && strcmp (m->result->files[i].name, "_causes.png") == 0;
    qc_progress_slide (&s->progress, m->result->ok,
                       name ? name : qc_url_name (m->path, file, sizeof file),
                       made_here ? QC_LOCAL_WORKER_NAME : m->worker,
                       empty && causes ? "no tissue left to use (pixels_to_use 0; its "
                                         "_causes.png shows what each step took)"
                       : empty ? "no tissue left to use (pixels_to_use 0; its warnings "
                                 "column says which step took it)"
                       : shown ? "its ERROR line above says why (error.log has it)"
                               : m->result->error);
}

static void
on_log (session_t *s, qc_msg_t *m)
{
    if (m->job && s->job && m->job != s->job)
        return;                     /* another job's: not this folder's log */
    qc_output_log (s->cfg->out, m);
    if (m->level >= QC_LOG_WARNING && !s->cfg->quiet
        && qc_warn_once_first (s->warn_once, m)) {
        char line[4 * QC_PROTO_MAX_TEXT + 1024];
        char *w = qc_escape_dup (m->worker ? m->worker : "?");
        const char *slide = qc_output_log_slide (s->cfg->out, m);
        char *sl = qc_escape_dup (slide ? slide : "");
        char *mo = qc_escape_dup (m->module ? m->module : "");
        char *me = qc_escape_dup (m->message);
        /* a record about no slide (the broker's own) has no brackets */
        bool about = sl && *sl;
        snprintf (line, sizeof line, "%s %s%s%s%s %s: %s",
                  m->level >= QC_LOG_ERROR ? "ERROR" : "WARNING", w ? w : "?",
                  about ? " [" : "", about ? sl : "", about ? "]" : "", mo ? mo : "",
                  me ? me : "");
        free (w);
        free (sl);
        free (mo);
        free (me);
        qc_progress_print (&s->progress, line);
    }
}

static void
on_accepted (session_t *s, qc_msg_t *m)
{
    const qc_session_config_t *c = s->cfg;
    if (!m->job || (s->job && m->job != s->job) || (m->key && s->key && m->key != s->key))
        return;
    s->taken = m->total;
    if (!s->accepted) {
        if (c->attach_job && m->total > JOB_SLIDES_MAX) {
            fprintf (stderr, "qc-submit: the broker says job %" PRIu64 " has %" PRIu64
                     " slides, more than any job can (%" PRIu64 "): not attached\n", m->job,
                     m->total, JOB_SLIDES_MAX);
            s->fatal = true;
            s->exit_code = QC_EXIT_FAILED;
            return;
        }
        if (c->attach_job)
            s->slides_known = c->expect_total && m->total > c->expect_total ? c->expect_total
                                                                             : m->total;
        s->job = m->job;
        s->accepted = true;
        char err[1024] = "";
        if (c->attach_job) {
            s->progress.total = m->total;
            char cancelled[64] = "";
            if (s->progress.cancelled)
                snprintf (cancelled, sizeof cancelled, ", %" PRIu64 " cancelled",
                          s->progress.cancelled);
            if (!c->quiet)
                fprintf (stderr, "job %" PRIu64 " on %s: %" PRIu64 " slide%s, %" PRIu64
                         " of them already in %s (%" PRIu64 " passed, %" PRIu64
                         " failed%s)\n", s->job, c->endpoint, m->total, qc_plural (m->total),
                         s->progress.done + s->progress.failed, c->outdir,
                         s->progress.done, s->progress.failed - s->progress.cancelled,
                         cancelled);
        }
        else if (qc_output_set_job (c->out, s->job, s->key, c->local ? "local" : c->endpoint,
                                    err, sizeof err)) {
            fprintf (stderr, "qc-submit: %s\n", *err ? err : "cannot write the output folder");
            s->fatal = true;
            s->exit_code = QC_EXIT_FAILED;
            return;
        }
    }
    if (!m->attached)
        return;
    /* an attached job's resource is its SUBMIT's, not this run's flags:
       what it waits for is said from it (an older broker sends none) */
    if (c->attach_job && m->resource)
        s->resource = m->resource;
    if (c->attach_job && c->expect_total && m->total < c->expect_total) {
        /* its submission was cut off (its client died between SUBMIT
           batches, or the broker refused one): it never gets the rest, so
           it would never be DONE, and its queued slides would run unseen
           while a new job runs them too. Cancelled (again: a cancel is
           answered the same), it ends once its running slides do: what
           it ran is fetched, and the rest, cancelled or never sent, run
           in the rerun's new job. */
        if (!s->cut_said && !c->quiet)
            fprintf (stderr, "qc-submit: job %" PRIu64 " at the broker holds %" PRIu64
                     " of the %" PRIu64 " slides it was sent (its submission was cut "
                     "off): cancelling it, and fetching what it ran; its other slides "
                     "run in a new job\n", s->job, m->total, c->expect_total);
        s->cut_said = true;
        qc_msg_t cancel = {.command = QC_CANCEL, .gpu = -1, .job = s->job, .key = s->key};
        session_send (s, &cancel);
    }
    /* the broker resends what follows the last result it holds as
     * acknowledged: count from there (it may hold fewer than we wrote,
     * when it lost results it had sent; the index check skips those) */
    s->expected = m->seq + 1;
    s->acked = m->seq;
    if (c->nslides && m->total < c->nslides && zclock_mono () - s->last_resubmit > 1000) {
        /* our submission was cut off: the rest again */
        s->last_resubmit = zclock_mono ();
        session_submit_from (s, m->total);
    }
}

static void
on_message (session_t *s, qc_msg_t *m)
{
    s->last_heard = zclock_mono ();
    if (s->silent) {
        s->silent = false;
        /* its workers join again within a heartbeat or two: no "start a
           worker" advice before they had the time */
        qc_waiting_progress (&s->waiting, s->last_heard);
        if (!s->cfg->quiet)
            qc_progress_print (&s->progress, "qc-submit: the broker answers again");
    }
    switch (m->command) {
    case QC_ACCEPTED:
        on_accepted (s, m);
        break;
    case QC_RESULT:
        if (m->job == s->job && s->accepted)
            on_result (s, m);
        break;
    case QC_LOG:
        on_log (s, m);
        break;
    case QC_DONE:
        if (m->job != s->job || !s->accepted)
            break;
        if (qc_output_written (s->cfg->out) < m->total) {
            /* DONE again and again with nothing new: the broker holds no
               more (results it took as written are not here); a rerun
               runs those slides in a new job */
            uint64_t w = qc_output_written (s->cfg->out);
            s->done_stalls = w == s->done_stall_at ? s->done_stalls + 1 : 0;
            s->done_stall_at = w;
            if (s->done_stalls >= 5) {
                fprintf (stderr, "qc-submit: job %" PRIu64 ": the broker has no more results "
                         "to send, but %" PRIu64 " of its %" PRIu64 " slides have none in "
                         "%s\n", s->job, m->total - w, m->total,
                         s->cfg->outdir ? s->cfg->outdir : "the output folder");
                s->refused = s->gone = true;
                s->fatal = true;
                s->exit_code = QC_EXIT_FAILED;
            } else
                session_resync (s);
        } else {
            s->done = true;
            s->progress.total = m->total;
            if (m->failed)
                s->exit_code = QC_EXIT_FAILED;
        }
        break;
    case QC_STATUS_REPLY:
        qc_waiting_on_status (&s->waiting, m, s->job, &s->progress);
        break;
    case QC_ERROR:
        fprintf (stderr, "qc-submit: broker refused: %s\n", qc_scrub_controls (m->reason));
        s->refused = s->accepted || s->cfg->attach_job;
        /* a batch over a limit, or one after a CANCEL: the job is
           cancelled (the reason says so) and ends once its running
           slides do */
        bool batch = s->accepted && !s->cfg->attach_job && m->reason;
        s->cut_by_limit = batch && strstr (m->reason, "is cancelled (the slides it runs finish)");
        s->cut = s->cut_by_limit
                 || (batch && strncmp (m->reason, "job was cancelled", 17) == 0);
        /* gone only when the broker says so: "not yours" (another
           certificate's job) or another version is no reason to run the
           job's slides again */
        s->gone = s->refused && m->reason
                  && (strncmp (m->reason, "no such job", 11) == 0
                      || strstr (m->reason, "is not the job of your output folder")
                      || strstr (m->reason, "its identity differs"));
        /* refused after our CANCEL of a cut-off job: whatever it was, the
           job is not ours to wait for (its slides without a result run
           in a new job) */
        if (s->cut_said)
            s->gone = true;
        s->fatal = true;
        /* a broker full for now is no usage error: a workflow manager
           that never retries a 2 gave up on it (a soak's review); 5 says
           "stopped before every slide had a result: go on later" */
        s->exit_code = m->reason && strncmp (m->reason, "broker is full", 14) == 0
                       ? QC_EXIT_INCOMPLETE
                       : s->accepted && !s->cfg->attach_job ? QC_EXIT_FAILED : QC_EXIT_USAGE;
        break;
    case QC_DISCONNECT:
        if (m->reason && strstr (m->reason, "unknown peer")) {
            /* the broker restarted, or gave up on us: attach again (a
               STATUS out now tells of the broker before: not used) */
            qc_waiting_progress (&s->waiting, zclock_mono ());
            if (s->accepted)
                session_resync (s);
            else if (!s->cfg->attach_job && zclock_mono () - s->last_resubmit > 1000) {
                s->last_resubmit = zclock_mono ();
                session_submit_from (s, 0);     /* the same key: never a second job */
            }
        } else if (m->reason && strncmp (m->reason, "refused", 7) == 0) {
            /* our certificate is not (or no longer) admitted */
            fprintf (stderr, "qc-submit: the broker %s\n", qc_scrub_controls (m->reason));
            s->fatal = true;
            s->exit_code = QC_EXIT_USAGE;
        } else if (s->accepted) {
            if (!s->cfg->quiet) {
                char line[QC_PROTO_MAX_TEXT + 128];
                const char *why = m->reason ? m->reason : "disconnect";
                snprintf (line, sizeof line, "qc-submit: %s%s; waiting for it to come back",
                          strncmp (why, "broker ", 7) == 0 ? "the " : "broker: ", why);
                qc_progress_print (&s->progress, line);
            }
        } else {
            fprintf (stderr, "qc-submit: broker: %s\n", m->reason ? m->reason : "disconnect");
            s->fatal = true;
            s->exit_code = QC_EXIT_NO_BROKER;
        }
        break;
    default:
        break;
    }
}

void
session_read_burst (session_t *s)
{
    for (int i = 0; i < 10000 && (zsock_events (s->sock) & ZMQ_POLLIN); i++) {
        zmsg_t *raw = zmsg_recv (s->sock);
        char err[256];
        qc_msg_t *m = raw ? qc_msg_decode (raw, err, sizeof err) : NULL;
        zmsg_destroy (&raw);
        if (m)
            on_message (s, m);
        else
            qc_log (QC_LOG_WARNING, "qc-submit", "malformed message dropped: %s", err);
        qc_msg_destroy (&m);
        if (s->done || s->fatal)
            break;
    }
}
