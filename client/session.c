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
 * second job. What the broker sends is read and acted on in
 * session_recv.c. */
#include "client/session_int.h"
#include "client/stall_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/random.h>
#include <unistd.h>

#include "shared/endpoint.h"
#include "shared/cli.h"
#include "shared/curve.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/socket_new.h"


int
session_send (session_t *s, qc_msg_t *m)
{
    return qc_msg_send (m, zsock_resolve (s->sock), NULL);
}


/* Asks the broker to send again everything after what we hold (a result
 * went missing, DONE came early, or the broker restarted). At most once
 * a second; the rest arrive in order after it. One asked for sooner is
 * sent when the second is up (the main loop calls again): the broker
 * sends DONE once per ATTACH, so a dropped ask could wait for ever. */
void
session_resync (session_t *s)
{
    int64_t now = zclock_mono ();
    s->resync_due = true;
    if (now - s->last_resync < 1000)
        return;
    s->resync_due = false;
    s->last_resync = now;
    qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = s->job, .key = s->key,
                  .seq = s->expected - 1, .hb_ms = s->cfg->heartbeat_ms};
    session_send (s, &a);
}

/* Who submits, for the job's label (qc-status's OWNER column): $USER,
 * else the account's name (cron and systemd units set no USER, and the
 * label was empty). NULL when neither is known. */
static const char *
user_name (void)
{
    const char *u = getenv ("USER");
    if (u && *u)
        return u;
    struct passwd *pw = getpwuid (getuid ());
    return pw && pw->pw_name && *pw->pw_name ? pw->pw_name : NULL;
}

/* SUBMIT batches of our slides from index base on. */
int
session_submit_from (session_t *s, uint64_t base)
{
    const qc_session_config_t *c = s->cfg;
    size_t batch = QC_PROTO_MAX_SLIDES / 4;
    for (size_t b = (size_t) base; b < c->nslides || (b == 0 && c->nslides == 0); b += batch) {
        size_t n = c->nslides - b < batch ? c->nslides - b : batch;
        qc_msg_t m = {.command = QC_SUBMIT, .gpu = -1, .job = s->job, .key = s->key,
                      .base = b, .slides = c->slides + b, .nslides = n,
                      .config = b == 0 ? (char *) c->config_text : NULL,
                      .resource = c->resource, .final = b + n >= c->nslides,
                      .name = (char *) user_name (), .hb_ms = c->heartbeat_ms,
                      .assets = b == 0 ? (qc_asset_t *) c->assets : NULL,
                      .nassets = b == 0 ? c->nassets : 0};
        if (session_send (s, &m))
            return -1;
        if (b == 0 && !s->job)
            break;          /* later batches name the job: they wait for it */
        if (c->nslides == 0)
            break;
    }
    return 0;
}

/* Acknowledges the results now on disk, in one message per batch: the
 * broker may then forget them. On disk is the disk's, not the page
 * cache's: a power cut after an ACK of results only flushed lost them
 * on both sides (a rerun ran those slides again). One sync of what the
 * batch wrote (qc_output_sync) covers its tables and images, at most
 * once a second, or sooner when many results or bytes wait (the broker
 * sends at most result_window results and 64 MB unacknowledged: a
 * second's wait on a full window held its results back); final, at the
 * session's end, now. A sync that fails acknowledges nothing, then or
 * later (the kernel reports a write-back error once: a second sync
 * "succeeded" over the lost pages), and stops the session as a result
 * the disk refused does: the broker keeps the results, and an attach or
 * rerun fetches them again. */
#define ACK_EVERY_MS 1000
#define ACK_AT_MOST 200
#define ACK_AT_BYTES (16u << 20)
static void
ack_written (session_t *s, bool final)
{
    if (!s->accepted || s->expected - 1 <= s->acked || s->sync_failed)
        return;
    int64_t now = zclock_mono ();
    if (!final && now - s->last_ack < ACK_EVERY_MS && s->expected - 1 - s->acked < ACK_AT_MOST
        && s->unacked_bytes < ACK_AT_BYTES)
        return;
    s->last_ack = now;
    int synced = s->cfg->out ? qc_output_sync (s->cfg->out) : 0;
    int e = errno;
    if (synced != 0) {
        s->sync_failed = true;
        qc_output_note (s->cfg->out, "ERROR", "cannot put the results on the disk (sync: "
                        "%s): the broker is not told they are written, and keeps them for "
                        "an attach or a rerun", strerror (e));
        qc_progress_finish (&s->progress);
        fprintf (stderr, "qc-submit: cannot put the results in %s on the disk (sync: %s): "
                 "the broker keeps them; once the disk is right, the same command (or "
                 "--attach) fetches them again\n", s->cfg->outdir ? s->cfg->outdir : "the output folder",
                 strerror (e));
        s->fatal = true;
        s->write_failed = true;
        s->exit_code = QC_EXIT_FAILED;
        return;
    }
    s->unacked_bytes = 0;
    s->acked = s->expected - 1;
    qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = s->job, .key = s->key,
                    .seq = s->acked};
    session_send (s, &ack);
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
            session_read_burst (s);
    zpoller_destroy (&poller);
    return s->accepted;
}

/* The first batch, until the broker numbers the job. */
static int
submit_first (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    s->key = qc_proto_new_key ();
    if (session_submit_from (s, 0))
        return -1;
    s->last_resubmit = zclock_mono ();
    if (!await_accepted (s))
        return -1;
    return c->nslides > QC_PROTO_MAX_SLIDES / 4 ? session_submit_from (s, QC_PROTO_MAX_SLIDES / 4) : 0;
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
    if (session_send (s, &by_key))
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
                by_id = session_send (s, &cancel) == 0;
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
        session_send (s, &bye);
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
    session_send (s, &m);
    zsock_set_rcvtimeo (s->sock, (int) s->cfg->timeout_s * 1000);
    zmsg_t *raw = zmsg_recv (s->sock);
    qc_msg_t *r = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
    zmsg_destroy (&raw);
    int rc = QC_EXIT_NO_BROKER;
    if (s->cfg->cancel_silent) {
        rc = r && r->command == QC_ACCEPTED ? QC_EXIT_OK : r ? QC_EXIT_USAGE : QC_EXIT_NO_BROKER;
    } else if (r && r->command == QC_ACCEPTED && r->reason) {
        printf ("%s\n", qc_scrub_controls (r->reason));   /* a finished job's results */
        rc = QC_EXIT_OK;
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

/* A folder that holds every result of its job, whose run was stopped
 * before its last ACK (kill -9, a power cut): the broker kept the job
 * "waiting" until --retention, holding its results and a place among a
 * client's jobs. An ATTACH that says it holds them all is the ACK (the
 * broker drops them: broker_jobs.c, jobs_on_attach); what the broker
 * sends after it (a DONE, log records the folder has) is not read. */
static int
run_release (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = c->release_job,
                  .key = c->release_key, .seq = c->release_seq, .hb_ms = c->heartbeat_ms};
    if (session_send (s, &a))
        return QC_EXIT_NO_BROKER;
    int rc = QC_EXIT_NO_BROKER;
    zsock_set_rcvtimeo (s->sock, 100);
    int64_t until = zclock_mono () + (int64_t) c->timeout_s * 1000;
    while (rc == QC_EXIT_NO_BROKER && zclock_mono () < until && !qc_cli_signals) {
        zmsg_t *raw = zmsg_recv (s->sock);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_ACCEPTED && m->job == c->release_job)
            rc = QC_EXIT_OK;
        else if (m && (m->command == QC_ERROR
                       || (m->command == QC_DISCONNECT && m->reason
                           && strncmp (m->reason, "refused", 7) == 0)))
            rc = QC_EXIT_USAGE;
        qc_msg_destroy (&m);
    }
    qc_msg_t bye = {.command = QC_DISCONNECT, .gpu = -1,
                    .reason = rc == QC_EXIT_OK ? "done" : "leaving"};
    session_send (s, &bye);
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
    if (cfg->cancel_job || cfg->release_job) {
        int rc = cfg->cancel_job ? run_cancel (&s) : run_release (&s);
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
        session_send (&s, &a);
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
        /* what a burst writes (results, log records, the job's files)
           and the sync: on a hung share they block, said (stall_watch.h) */
        qc_stall_watch_output (cfg->outdir);
        if (which)
            session_read_burst (&s);
        ack_written (&s, false);    /* also a batch held back a second */
        qc_stall_watch_done ();
        if (s.resync_due && !s.silent)
            session_resync (&s);
        if (now >= s.next_beat) {
            qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
            session_send (&s, &hb);
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
            session_send (&s, &st);
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
        qc_stall_watch_output (cfg->outdir);
        ack_written (&s, true);
        qc_stall_watch_done ();
        /* said, so the broker need not wait out our heartbeats; without
           the whole job, it keeps the results */
        qc_msg_t bye = {.command = QC_DISCONNECT, .gpu = -1,
                        .reason = s.done ? "done" : "leaving"};
        session_send (&s, &bye);
        /* the folder says so: a rerun of a folder without it (this run
           killed before here) tells the broker (run_release) */
        if (s.done && !cfg->local && !s.sync_failed && s.acked + 1 == s.expected && cfg->out)
            qc_output_mark_delivered (cfg->out);
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
