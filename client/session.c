/* See session.h. The loop: poll the socket, write each result in
 * sequence order, acknowledge what was written, keep heartbeats going
 * both ways, and stop on DONE, on a refusal, or on a signal.
 *
 * A job is the broker's id plus an identity key this client chooses
 * before its first SUBMIT (kept in OUTDIR/.qc-job): the broker refuses
 * an ATTACH whose key is not the job's, so a folder never takes another
 * job's results. A broker that falls silent is waited for (it may be
 * restarting on its state folder); when it answers "unknown peer" the
 * session attaches again, resumes a submission it had not finished, and
 * goes on from the results the broker still holds. A first SUBMIT sent
 * again after a lost answer names the same key, so it never makes a
 * second job. */
#include "client/session_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "client/escape.h"
#include "client/local.h"
#include "client/progress.h"
#include "client/waiting.h"
#include "client/warn_once.h"
#include "shared/endpoint.h"
#include "shared/cli.h"
#include "shared/curve.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "shared/url.h"


static int
send_msg (session_t *s, qc_msg_t *m)
{
    return qc_msg_send (m, zsock_resolve (s->sock), NULL);
}


/* Asks the broker to send again everything after what we hold (a result
 * went missing, DONE came early, or the broker restarted). At most once
 * a second; the rest arrive in order after it. One asked for sooner is
 * sent when the second is up (the main loop calls again): the broker
 * sends DONE once per ATTACH, so a dropped ask could wait for ever. */
static void
resync (session_t *s)
{
    int64_t now = zclock_mono ();
    s->resync_due = true;
    if (now - s->last_resync < 1000)
        return;
    s->resync_due = false;
    s->last_resync = now;
    qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = s->job, .key = s->key,
                  .seq = s->expected - 1, .hb_ms = s->cfg->heartbeat_ms};
    send_msg (s, &a);
}

/* SUBMIT batches of our slides from index base on. */
static int
submit_from (session_t *s, uint64_t base)
{
    const qc_session_config_t *c = s->cfg;
    size_t batch = QC_PROTO_MAX_SLIDES / 4;
    for (size_t b = (size_t) base; b < c->nslides || (b == 0 && c->nslides == 0); b += batch) {
        size_t n = c->nslides - b < batch ? c->nslides - b : batch;
        qc_msg_t m = {.command = QC_SUBMIT, .gpu = -1, .job = s->job, .key = s->key,
                      .base = b, .slides = c->slides + b, .nslides = n,
                      .config = b == 0 ? (char *) c->config_text : NULL,
                      .resource = c->resource, .final = b + n >= c->nslides,
                      .name = getenv ("USER"), .hb_ms = c->heartbeat_ms,
                      .assets = b == 0 ? (qc_asset_t *) c->assets : NULL,
                      .nassets = b == 0 ? c->nassets : 0};
        if (send_msg (s, &m))
            return -1;
        if (b == 0 && !s->job)
            break;          /* later batches name the job: they wait for it */
        if (c->nslides == 0)
            break;
    }
    return 0;
}

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
        resync (s);
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
            send_msg (s, &cancel);
            s->orphan_cancelled = true;
        }
        return;
    }
    s->expected++;
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
    qc_progress_slide (&s->progress, m->result->ok,
                       name ? name : qc_url_name (m->path, file, sizeof file),
                       made_here ? QC_LOCAL_WORKER_NAME : m->worker,
                       empty ? "no tissue left to use (pixels_to_use 0; its warnings "
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
        send_msg (s, &cancel);
    }
    /* the broker resends what follows the last result it holds as
     * acknowledged: count from there (it may hold fewer than we wrote,
     * when it lost results it had sent; the index check skips those) */
    s->expected = m->seq + 1;
    s->acked = m->seq;
    if (c->nslides && m->total < c->nslides && zclock_mono () - s->last_resubmit > 1000) {
        /* our submission was cut off: the rest again */
        s->last_resubmit = zclock_mono ();
        submit_from (s, m->total);
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
                resync (s);
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
                resync (s);
            else if (!s->cfg->attach_job && zclock_mono () - s->last_resubmit > 1000) {
                s->last_resubmit = zclock_mono ();
                submit_from (s, 0);     /* the same key: never a second job */
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

/* Reads what is waiting; false when the session should stop. */
static void
read_burst (session_t *s)
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

/* Acknowledges the results now on disk, in one message per batch: the
 * broker may then forget them. */
static void
ack_written (session_t *s)
{
    if (!s->accepted || s->expected - 1 <= s->acked)
        return;
    s->acked = s->expected - 1;
    qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = s->job, .key = s->key,
                    .seq = s->acked};
    send_msg (s, &ack);
}

/* Reads until the broker accepts the job (SUBMIT or ATTACH), refuses it,
 * or --timeout passes: a broker that is not there is said, not waited
 * for. True when accepted. */
static bool
await_accepted (session_t *s)
{
    int64_t until = zclock_mono () + (int64_t) s->cfg->timeout_s * 1000;
    zpoller_t *poller = zpoller_new (s->sock, NULL);
    while (poller && !s->accepted && !s->fatal && zclock_mono () < until && !qc_cli_signals)
        if (zpoller_wait (poller, 100))
            read_burst (s);
    zpoller_destroy (&poller);
    return s->accepted;
}

/* The first batch, until the broker numbers the job. */
static int
submit_first (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    s->key = qc_proto_new_key ();
    if (submit_from (s, 0))
        return -1;
    s->last_resubmit = zclock_mono ();
    if (!await_accepted (s))
        return -1;
    return c->nslides > QC_PROTO_MAX_SLIDES / 4 ? submit_from (s, QC_PROTO_MAX_SLIDES / 4) : 0;
}

/* After an interrupt, the job the broker may have taken from our first
 * SUBMIT (its ACCEPTED unread) is cancelled, so that its slides do not
 * run for no one until --linger: by its key (CANCEL with job 0), and,
 * once an ACCEPTED names it, by its id, which brokers before the key
 * one take too. Waits up to 2 s for the answers (every SUBMIT and CANCEL
 * gets exactly one): the job's id when a CANCEL by id was accepted, 0
 * when the broker said it has no such job, -1 when it did not say. */
static int64_t
cancel_unaccepted (session_t *s)
{
    qc_msg_t by_key = {.command = QC_CANCEL, .gpu = -1, .key = s->key};
    if (send_msg (s, &by_key))
        return -1;
    uint64_t job = 0;
    int answers = 0, want = 2;     /* the SUBMIT's, the CANCEL's */
    bool by_id = false, none = false;
    zsock_set_rcvtimeo (s->sock, 100);
    for (int64_t until = zclock_mono () + 2000; answers < want && zclock_mono () < until;) {
        zmsg_t *raw = zmsg_recv (s->sock);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (!m)
            continue;
        bool ours = !m->key || m->key == s->key;
        if (m->command == QC_ACCEPTED && ours && m->job) {
            answers++;
            job = m->job;
            if (!by_id) {          /* now it has an id: cancelled by it too */
                qc_msg_t cancel = {.command = QC_CANCEL, .gpu = -1, .job = job, .key = s->key};
                by_id = send_msg (s, &cancel) == 0;
                want += by_id;
            }
        } else if (m->command == QC_ERROR) {
            answers++;
            none |= m->reason && strncmp (m->reason, "no such job", 11) == 0;
        }
        qc_msg_destroy (&m);
    }
    if (by_id && answers >= want)
        return (int64_t) job;
    return none && !job ? 0 : -1;
}

/* The broker did not accept the job: interrupted, or no answer (a
 * refusal was said as it came). The session's sockets go; returns the
 * exit code. */
static int
end_unaccepted (session_t *s, const char *interrupted)
{
    /* no answer in --timeout, but a connection was made: the SUBMIT may
     * have reached the broker and only its answer been lost on the way
     * (a firewall that drops the way back); its job would run for no
     * one, and the rerun make a second: cancelled as after an interrupt */
    bool reached = !qc_cli_signals && !s->fatal && s->hs && qc_handshake_shook (s->hs);
    bool sent = (qc_cli_signals || reached) && s->key && !s->cfg->attach_job
                && !s->cfg->local;
    int64_t cancelled = sent ? cancel_unaccepted (s) : -1;
    if (sent) {
        qc_msg_t bye = {.command = QC_DISCONNECT, .gpu = -1, .reason = "leaving"};
        send_msg (s, &bye);
        zsock_set_linger (s->sock, 500);   /* sent before the socket goes */
    }
    if (qc_cli_signals && !s->fatal) {
        char said[600] = "";
        if (sent && cancelled > 0)
            snprintf (said, sizeof said, "; job %" PRId64 ", which the broker had taken, "
                      "is cancelled", cancelled);
        else if (sent && cancelled == 0)
            snprintf (said, sizeof said, "; the broker holds no job of it");
        else if (sent)
            snprintf (said, sizeof said, "; if the broker took the job, it may run on: "
                      "qc-status --broker %s shows it, and qc-submit --broker %s --cancel "
                      "JOB stops it", s->cfg->endpoint, s->cfg->endpoint);
        fprintf (stderr, "\nqc-submit: %s%s\n", interrupted, said);
        s->exit_code = QC_EXIT_INTERRUPTED;
    } else if (!s->fatal) {
        session_say_no_answer (s);
        if (sent && cancelled > 0)
            fprintf (stderr, "qc-submit: job %" PRId64 ", which the broker had taken (its "
                     "answer did not come back in time), is cancelled\n", cancelled);
        else if (sent && cancelled < 0)
            fprintf (stderr, "qc-submit: the connection to the broker was made, but no "
                     "answer came back (is the way back cut, by a firewall?): a CANCEL was "
                     "sent for the job the broker may have taken from this run; qc-status "
                     "--broker %s shows whether one runs, and qc-submit --broker %s "
                     "--cancel JOB stops it\n", s->cfg->endpoint, s->cfg->endpoint);
        s->exit_code = QC_EXIT_NO_BROKER;
    }
    qc_handshake_destroy (&s->hs);
    zsock_destroy (&s->sock);
    qc_warn_once_destroy (&s->warn_once);
    return s->exit_code;
}

static int
run_cancel (session_t *s)
{
    qc_msg_t m = {.command = QC_CANCEL, .gpu = -1, .job = s->cfg->cancel_job};
    send_msg (s, &m);
    zsock_set_rcvtimeo (s->sock, (int) s->cfg->timeout_s * 1000);
    zmsg_t *raw = zmsg_recv (s->sock);
    qc_msg_t *r = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
    zmsg_destroy (&raw);
    int rc = QC_EXIT_NO_BROKER;
    if (s->cfg->cancel_silent) {
        rc = r && r->command == QC_ACCEPTED ? QC_EXIT_OK : r ? QC_EXIT_USAGE : QC_EXIT_NO_BROKER;
    } else if (r && r->command == QC_ACCEPTED) {
        printf ("job %" PRIu64 " cancelled: its slides not started dropped (queued, or "
                "sent ahead to a worker); those running finish\n", r->job);
        rc = QC_EXIT_OK;
    } else if (r && r->command == QC_ERROR) {
        fprintf (stderr, "qc-submit: %s\n", r->reason);
        rc = QC_EXIT_USAGE;
    } else if (r && r->command == QC_DISCONNECT && r->reason
               && strncmp (r->reason, "refused", 7) == 0) {
        fprintf (stderr, "qc-submit: the broker %s\n", r->reason);
        rc = QC_EXIT_USAGE;
    } else
        session_say_no_answer (s);
    qc_msg_destroy (&r);
    return rc;
}

/* --attach JOBID: the folder must be that job's. */
static int
check_attach (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    uint64_t key = 0, own = qc_output_job (c->out, &key);
    if (own == 0) {
        fprintf (stderr, "qc-submit: --attach %" PRIu64 ": the output folder records "
                 "no job (no job line in its .qc-job): give the folder qc-submit "
                 "wrote for job %" PRIu64 "\n", c->attach_job, c->attach_job);
        return -1;
    }
    if (own != c->attach_job) {
        fprintf (stderr, "qc-submit: --attach %" PRIu64 ": the output folder holds "
                 "the results of job %" PRIu64 ", not of job %" PRIu64 "; attach with "
                 "--attach %" PRIu64 ", or give job %" PRIu64 "'s folder\n",
                 c->attach_job, own, c->attach_job, own, c->attach_job);
        return -1;
    }
    s->key = key;      /* 0 for a folder from before keys: not checked */
    return 0;
}

int
qc_session_run (const qc_session_config_t *cfg)
{
    session_t s = {.cfg = cfg, .expected = 1, .exit_code = QC_EXIT_OK,
                   .done_stall_at = UINT64_MAX, .slides_known = cfg->nslides};
    unsigned refused = qc_socket_refusals ();
    s.sock = qc_socket_new (ZMQ_DEALER, "qc-submit");
    if (s.sock) {
        qc_curve_client_apply (cfg->curve, s.sock);
        qc_proto_limit_socket (s.sock);
        s.hs = qc_handshake_watch (s.sock);
        if (qc_endpoint_is_ipv6 (cfg->endpoint))
            zsock_set_ipv6 (s.sock, 1);
    }
    if (!s.sock || zsock_connect (s.sock, "%s", cfg->endpoint) < 0) {
        qc_handshake_destroy (&s.hs);
        zsock_destroy (&s.sock);
        return qc_socket_failed ("qc-submit", cfg->endpoint, refused);
    }
    zsock_set_rcvhwm (s.sock, 100000);
    zsock_set_sndhwm (s.sock, 100000);
    zsock_set_linger (s.sock, 1000);
    zsock_set_reconnect_ivl_max (s.sock, 5000);
    if (cfg->cancel_job) {
        int rc = run_cancel (&s);
        qc_handshake_destroy (&s.hs);
        zsock_destroy (&s.sock);
        return rc;
    }
    qc_progress_init (&s.progress, cfg->nslides, cfg->quiet);
    s.warn_once = qc_warn_once_new ();
    if (cfg->attach_job) {
        if (check_attach (&s)) {
            qc_handshake_destroy (&s.hs);
            zsock_destroy (&s.sock);
            qc_warn_once_destroy (&s.warn_once);
            return QC_EXIT_USAGE;
        }
        s.job = cfg->attach_job;
        uint64_t written = qc_output_written (cfg->out);
        s.expected = written + 1;
        /* the cohort's count goes on from what the folder has */
        qc_output_written_counts (cfg->out, &s.progress.done, &s.progress.failed,
                                  &s.progress.cancelled);
        qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = s.job, .key = s.key,
                      .seq = written, .hb_ms = cfg->heartbeat_ms};
        send_msg (&s, &a);
        /* a refusal goes on below, where what to do next is said */
        if (!await_accepted (&s) && !s.fatal)
            return end_unaccepted (&s, "interrupted before the broker answered");
    } else if (submit_first (&s))
        return end_unaccepted (&s, "interrupted before the broker accepted the job: "
                               "nothing was written");
    if (!cfg->quiet && !cfg->local && !cfg->attach_job)
        fprintf (stderr, "job %" PRIu64 " on %s: %zu slide%s\n", s.job, cfg->endpoint,
                 cfg->nslides, qc_plural (cfg->nslides));
    s.last_heard = zclock_mono ();
    qc_waiting_init (&s.waiting, cfg->wait_warn_s, s.resource ? s.resource : cfg->resource,
                     cfg->endpoint, s.last_heard);
    s.waiting.server_key = cfg->server_key;
    s.waiting.local = cfg->local;
    zpoller_t *poller = zpoller_new (s.sock, NULL);
    int64_t lost_after = (int64_t) cfg->heartbeat_ms * cfg->liveness;
    if (!cfg->attach_job)
        lost_after += (int64_t) cfg->timeout_s * 1000;
    while (!s.done && !s.fatal && !qc_cli_signals) {
        zsock_t *which = zpoller_wait (poller, 100);
        int64_t now = zclock_mono ();
        if (which) {
            read_burst (&s);
            ack_written (&s);
        }
        if (s.resync_due && !s.silent)
            resync (&s);
        if (now >= s.next_beat) {
            qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
            send_msg (&s, &hb);
            s.next_beat = now + cfg->heartbeat_ms;
        }
        if (now - s.last_heard > lost_after && !s.silent) {
            /* not fatal: a broker with a state folder comes back with
             * the job, and the heartbeats find it */
            s.silent = true;
            /* the one-process mode's broker is this process: silent, it
               was stopped (SIGSTOP, a suspended laptop), and there is no
               other broker to wait for or attach to */
            if (!cfg->quiet && !cfg->local) {
                char line[6000], attach[4096];
                const char *why = qc_handshake_why (s.hs);
                snprintf (line, sizeof line, "qc-submit: broker %s silent for %" PRId64
                          " s%s%s%s: waiting for it (a broker with a state folder keeps job %"
                          PRIu64 " through a restart); Ctrl-C stops this client, and "
                          "%s resumes", cfg->endpoint, (now - s.last_heard) / 1000,
                          why ? " (" : "", why ? why : "", why ? ")" : "", s.job,
                          session_command_for (&s, "--attach", true, attach, sizeof attach));
                qc_progress_print (&s.progress, line);
            }
        }
        /* --detach: the broker holds every slide (the last batch's
           ACCEPTED): the job runs on without us. Attached again (the
           folder's job), first what the broker resends is taken, until
           it has nothing more for now: a finished job's results and its
           DONE end the loop above instead, so that a finished job is
           fetched, not said to run on for every --detach run after */
        if (cfg->detach && s.accepted && !cfg->local
            && (cfg->attach_job ? !which : s.taken >= cfg->nslides)) {
            s.detached = true;
            break;
        }
        /* unattended (cron, a workflow manager): a bound on that wait */
        if (cfg->give_up_s && s.accepted && !cfg->local
            && now - s.last_heard > (int64_t) cfg->give_up_s * 1000) {
            fprintf (stderr, "qc-submit: broker %s silent for %" PRId64 " s: giving up "
                     "(--give-up %" PRIu32 ")\n", cfg->endpoint,
                     (now - s.last_heard) / 1000, cfg->give_up_s);
            s.gave_up = true;
            break;
        }
        const char *gone = cfg->local_gone ? cfg->local_gone (cfg->local_arg) : NULL;
        if (gone) {
            /* no worker will come: waiting was for ever (a tester's kill) */
            qc_progress_finish (&s.progress);
            fprintf (stderr, "qc-submit: %s: no slide can run, stopping\n", gone);
            s.local_lost = true;
            s.fatal = true;
            s.exit_code = QC_EXIT_INCOMPLETE;
            break;
        }
        if (!s.silent && qc_waiting_due (&s.waiting, now)) {
            qc_msg_t st = {.command = QC_STATUS, .gpu = -1};
            send_msg (&s, &st);
        }
    }
    zpoller_destroy (&poller);
    qc_progress_finish (&s.progress);
    if (!cfg->quiet)
        qc_warn_once_summary (s.warn_once, stderr);
    qc_warn_once_destroy (&s.warn_once);
    if (s.accepted) {
        /* an attach to a finished job reads ACCEPTED, every result and
           DONE in its first burst, before the loop: acknowledged here, or
           the broker kept them until --retention */
        ack_written (&s);
        /* said, so the broker need not wait out our heartbeats; without
           the whole job, it keeps the results */
        qc_msg_t bye = {.command = QC_DISCONNECT, .gpu = -1,
                        .reason = s.done ? "done" : "leaving"};
        send_msg (&s, &bye);
    }
    if (qc_cli_signals && !s.done) {
        session_say_interrupted (&s);
        qc_handshake_destroy (&s.hs);
        zsock_destroy (&s.sock);
        return QC_EXIT_INTERRUPTED;
    }
    if (s.detached) {
        s.exit_code = QC_EXIT_OK;
        session_say_detached (&s);
        if (cfg->detached)
            *cfg->detached = true;
        qc_handshake_destroy (&s.hs);
        zsock_destroy (&s.sock);
        return s.exit_code;
    }
    if (!s.done)
        session_say_how_to_go_on (&s);
    if (cfg->finished)
        *cfg->finished = s.done;
    if (cfg->gone)
        *cfg->gone = s.gone;
    /* cancelled slides apart: "5 passed, 15 failed" of a job cancelled
       after 6 (a tester's) read as 15 slides at fault */
    if (s.done && !cfg->quiet && s.progress.cancelled)
        fprintf (stderr, "%" PRIu64 " slide%s: %" PRIu64 " passed, %" PRIu64 " failed, %"
                 PRIu64 " cancelled (a rerun runs them)\n", s.progress.total,
                 qc_plural (s.progress.total), s.progress.done,
                 s.progress.failed - s.progress.cancelled, s.progress.cancelled);
    else if (s.done && !cfg->quiet)
        fprintf (stderr, "%" PRIu64 " slide%s: %" PRIu64 " passed, %" PRIu64 " failed\n",
                 s.progress.total, qc_plural (s.progress.total), s.progress.done,
                 s.progress.failed);
    if (s.done && !cfg->quiet && s.progress.noted)
        fprintf (stderr, "%" PRIu64 " of the slides that passed %s no tissue left to use "
                 "(pixels_to_use 0): look at %s before analysis\n", s.progress.noted,
                 s.progress.noted == 1 ? "has" : "have", s.progress.noted == 1 ? "it" : "them");
    /* stopped short: not "some slides failed" (1), which says the cohort
       has a result for every slide */
    if (!s.done && (s.exit_code == QC_EXIT_OK || s.exit_code == QC_EXIT_FAILED))
        s.exit_code = s.gave_up ? QC_EXIT_NO_BROKER : QC_EXIT_INCOMPLETE;
    qc_handshake_destroy (&s.hs);
    zsock_destroy (&s.sock);
    return s.exit_code;
}
