/* See session.h. The loop: poll the socket, write each result in
 * sequence order, acknowledge what was written, keep heartbeats going
 * both ways, and stop on DONE, on a lost broker, or on a signal. */
#include "client/session.h"

#include <string.h>

#include "client/escape.h"
#include "client/progress.h"
#include "client/waiting.h"
#include "client/warn_once.h"
#include "shared/cli.h"
#include "shared/log.h"

typedef struct {
    const qc_session_config_t *cfg;
    zsock_t *sock;
    uint64_t job;
    uint64_t expected;        /* next result seq to write */
    uint64_t acked;
    int64_t last_heard, next_beat, last_resync;
    qc_progress_t progress;
    qc_waiting_t waiting;     /* says what a silent job waits for */
    qc_warn_once_t *warn_once;
    bool accepted, done, fatal;
    int exit_code;
} session_t;

static int
send_msg (session_t *s, qc_msg_t *m)
{
    return qc_msg_send (m, zsock_resolve (s->sock), NULL);
}

static const char *
base_name (const char *path)
{
    const char *b = path ? strrchr (path, '/') : NULL;
    return b ? b + 1 : path ? path : "?";
}

/* A result went missing on the way (or DONE came before all results):
 * ask the broker to send again everything after what we hold. At most
 * once a second; the rest arrive in order after it. */
static void
resync (session_t *s)
{
    int64_t now = zclock_mono ();
    if (now - s->last_resync < 1000)
        return;
    s->last_resync = now;
    qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = s->job,
                  .seq = s->expected - 1};
    send_msg (s, &a);
}

static void
on_result (session_t *s, qc_msg_t *m)
{
    if (m->seq < s->expected)
        return;                     /* already written */
    if (m->seq > s->expected) {
        resync (s);
        return;
    }
    s->expected++;
    if (qc_output_has (s->cfg->out, m->idx))
        return;
    char err[512];
    if (qc_output_result (s->cfg->out, m, err, sizeof err)) {
        fprintf (stderr, "qc-submit: %s\n", err);
        s->fatal = true;
        s->exit_code = QC_EXIT_FAILED;
    }
    /* the name this slide has in the output folder, not the worker's */
    const char *name = qc_output_name_of (s->cfg->out, m->idx);
    qc_progress_slide (&s->progress, m->result->ok, name ? name : base_name (m->path),
                       m->worker, m->result->error);
    qc_waiting_progress (&s->waiting, zclock_mono ());
}

static void
on_log (session_t *s, qc_msg_t *m)
{
    qc_output_log (s->cfg->out, m);
    if (m->level >= QC_LOG_WARNING && !s->cfg->quiet
        && qc_warn_once_first (s->warn_once, m)) {
        char line[4 * QC_PROTO_MAX_TEXT + 1024];
        char *w = qc_escape_dup (m->worker ? m->worker : "?");
        char *sl = qc_escape_dup (m->slide ? m->slide : "");
        char *mo = qc_escape_dup (m->module ? m->module : "");
        char *me = qc_escape_dup (m->message);
        snprintf (line, sizeof line, "%s %s [%s] %s: %s",
                  m->level >= QC_LOG_ERROR ? "ERROR" : "WARNING", w ? w : "?",
                  sl ? sl : "", mo ? mo : "", me ? me : "");
        free (w);
        free (sl);
        free (mo);
        free (me);
        qc_progress_print (&s->progress, line);
    }
}

static void
on_message (session_t *s, qc_msg_t *m)
{
    s->last_heard = zclock_mono ();
    switch (m->command) {
    case QC_ACCEPTED:
        if (!s->accepted && m->job) {
            s->job = m->job;
            s->accepted = true;
            if (s->cfg->attach_job)
                s->progress.total = m->total;
        }
        break;
    case QC_RESULT:
        if (m->job == s->job)
            on_result (s, m);
        break;
    case QC_LOG:
        on_log (s, m);
        break;
    case QC_STATUS_REPLY:
        qc_waiting_on_status (&s->waiting, m, &s->progress);
        break;
    case QC_DONE:
        if (m->job == s->job && qc_output_written (s->cfg->out) < m->total)
            resync (s);
        else if (m->job == s->job) {
            s->done = true;
            s->progress.total = m->total;
            if (m->failed)
                s->exit_code = QC_EXIT_FAILED;
        }
        break;
    case QC_ERROR:
        fprintf (stderr, "qc-submit: broker refused: %s\n", m->reason);
        s->fatal = true;
        s->exit_code = s->accepted ? QC_EXIT_FAILED : QC_EXIT_USAGE;
        break;
    case QC_DISCONNECT:
        fprintf (stderr, "qc-submit: broker: %s\n", m->reason ? m->reason : "disconnect");
        if (s->accepted && m->reason && strstr (m->reason, "unknown peer")) {
            qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = s->job,
                          .seq = s->expected - 1};
            send_msg (s, &a);
        } else {
            s->fatal = true;
            s->exit_code = QC_EXIT_NO_BROKER;
        }
        break;
    default:
        break;
    }
}

static int
submit_all (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    size_t batch = QC_PROTO_MAX_SLIDES / 4;
    for (size_t base = 0; base < c->nslides || base == 0; base += batch) {
        size_t n = c->nslides - base < batch ? c->nslides - base : batch;
        qc_msg_t m = {.command = QC_SUBMIT, .gpu = -1, .job = s->job, .base = base,
                      .slides = c->slides + base, .nslides = n,
                      .config = base == 0 ? (char *) c->config_text : NULL,
                      .resource = c->resource, .final = base + n >= c->nslides,
                      .name = getenv ("USER"),
                      .assets = base == 0 ? (qc_asset_t *) c->assets : NULL,
                      .nassets = base == 0 ? c->nassets : 0};
        if (send_msg (s, &m))
            return -1;
        if (base == 0) {
            /* the job id comes back in ACCEPTED; later batches name it */
            int64_t until = zclock_mono () + (int64_t) c->timeout_s * 1000;
            while (!s->accepted && !s->fatal && zclock_mono () < until && !qc_cli_signals) {
                zsock_set_rcvtimeo (s->sock, 100);
                zmsg_t *raw = zmsg_recv (s->sock);
                if (!raw)
                    continue;
                qc_msg_t *r = qc_msg_decode (raw, NULL, 0);
                zmsg_destroy (&raw);
                if (r)
                    on_message (s, r);
                qc_msg_destroy (&r);
            }
            if (!s->accepted)
                return -1;
            char err[1024];
            if (qc_output_set_job (c->out, s->job, c->local ? "local" : c->endpoint,
                                   err, sizeof err)) {
                fprintf (stderr, "qc-submit: %s\n", err);
                s->fatal = true;
                s->exit_code = QC_EXIT_FAILED;
                return -1;
            }
        }
        if (c->nslides == 0)
            break;
    }
    return 0;
}

/* Ctrl-C (or SIGTERM): what is kept and how to go on. */
static void
say_interrupted (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    const char *dir = c->outdir ? c->outdir : "OUTDIR";
    fprintf (stderr, "\nqc-submit: interrupted. %" PRIu64 " results are kept in %s "
             "(results.tsv, error.log, a folder per slide).\n",
             qc_output_written (c->out), dir);
    if (c->local || !s->accepted)
        fprintf (stderr, "To go on, run the same qc-submit command again: the slides "
                 "already in %s are skipped (-f redoes them).\n", dir);
    else
        fprintf (stderr, "Job %" PRIu64 " goes on at the broker. Fetch the rest with:\n"
                 "  qc-submit --broker %s --attach %" PRIu64 " -o %s\n"
                 "or stop it with: qc-submit --broker %s --cancel %" PRIu64 "\n",
                 s->job, c->endpoint, s->job, dir, c->endpoint, s->job);
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
    if (r && r->command == QC_ACCEPTED) {
        printf ("job %" PRIu64 " cancelled: queued slides dropped, running ones finish\n",
                r->job);
        rc = QC_EXIT_OK;
    } else if (r && r->command == QC_ERROR) {
        fprintf (stderr, "qc-submit: %s\n", r->reason);
        rc = QC_EXIT_USAGE;
    } else
        fprintf (stderr, "qc-submit: no answer from broker %s\n", s->cfg->endpoint);
    qc_msg_destroy (&r);
    return rc;
}

int
qc_session_run (const qc_session_config_t *cfg)
{
    session_t s = {.cfg = cfg, .expected = 1, .exit_code = QC_EXIT_OK};
    s.sock = zsock_new (ZMQ_DEALER);
    if (!s.sock || zsock_connect (s.sock, "%s", cfg->endpoint) < 0) {
        fprintf (stderr, "qc-submit: cannot connect to '%s'\n", cfg->endpoint);
        zsock_destroy (&s.sock);
        return QC_EXIT_NO_BROKER;
    }
    zsock_set_rcvhwm (s.sock, 100000);
    zsock_set_sndhwm (s.sock, 100000);
    zsock_set_linger (s.sock, 1000);
    if (cfg->cancel_job) {
        int rc = run_cancel (&s);
        zsock_destroy (&s.sock);
        return rc;
    }
    qc_progress_init (&s.progress, cfg->nslides, cfg->quiet);
    s.warn_once = qc_warn_once_new ();
    if (cfg->attach_job) {
        s.job = cfg->attach_job;
        uint64_t written = qc_output_written (cfg->out);
        s.expected = written + 1;
        s.progress.done = 0;
        qc_msg_t a = {.command = QC_ATTACH, .gpu = -1, .job = s.job, .seq = written};
        send_msg (&s, &a);
    } else if (submit_all (&s)) {
        if (qc_cli_signals && !s.fatal) {
            fprintf (stderr, "\nqc-submit: interrupted before the broker accepted the "
                     "job: nothing was written\n");
            s.exit_code = QC_EXIT_INTERRUPTED;
        } else if (!s.fatal) {
            fprintf (stderr, "qc-submit: no answer from broker %s in %u s\n",
                     cfg->endpoint, cfg->timeout_s);
            s.exit_code = QC_EXIT_NO_BROKER;
        }
        zsock_destroy (&s.sock);
        qc_warn_once_destroy (&s.warn_once);
        return s.exit_code;
    }
    if (!cfg->quiet && !cfg->local)
        fprintf (stderr, "job %" PRIu64 " on %s: %zu slides\n", s.job, cfg->endpoint,
                 cfg->nslides);
    s.last_heard = zclock_mono ();
    qc_waiting_init (&s.waiting, cfg->wait_warn_s, cfg->resource, cfg->local,
                     cfg->endpoint, s.last_heard);
    zpoller_t *poller = zpoller_new (s.sock, NULL);
    int64_t lost_after = (int64_t) cfg->heartbeat_ms * cfg->liveness;
    if (!cfg->attach_job)
        lost_after += (int64_t) cfg->timeout_s * 1000;
    while (!s.done && !s.fatal && !qc_cli_signals) {
        zsock_t *which = zpoller_wait (poller, 100);
        int64_t now = zclock_mono ();
        if (which) {
            uint64_t before = s.expected;
            for (int i = 0; i < 10000 && (zsock_events (s.sock) & ZMQ_POLLIN); i++) {
                zmsg_t *raw = zmsg_recv (s.sock);
                char err[256];
                qc_msg_t *m = raw ? qc_msg_decode (raw, err, sizeof err) : NULL;
                zmsg_destroy (&raw);
                if (m)
                    on_message (&s, m);
                else
                    qc_log (QC_LOG_WARNING, "qc-submit", "malformed message dropped: %s", err);
                qc_msg_destroy (&m);
                if (s.done || s.fatal)
                    break;
            }
            /* acknowledge what is now on disk, in one message per batch */
            if (s.expected - 1 > s.acked && s.expected != before) {
                s.acked = s.expected - 1;
                qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = s.job, .seq = s.acked};
                send_msg (&s, &ack);
            }
        }
        if (now >= s.next_beat) {
            qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
            send_msg (&s, &hb);
            s.next_beat = now + cfg->heartbeat_ms;
        }
        if (qc_waiting_due (&s.waiting, now)) {
            qc_msg_t st = {.command = QC_STATUS, .gpu = -1};
            send_msg (&s, &st);
        }
        if (now - s.last_heard > lost_after) {
            fprintf (stderr, "\nqc-submit: lost broker %s (silent %" PRId64 " s)\n",
                     cfg->endpoint, (now - s.last_heard) / 1000);
            s.fatal = true;
            s.exit_code = QC_EXIT_NO_BROKER;
        }
    }
    zpoller_destroy (&poller);
    qc_progress_finish (&s.progress);
    if (!cfg->quiet)
        qc_warn_once_summary (s.warn_once, stderr);
    qc_warn_once_destroy (&s.warn_once);
    if (qc_cli_signals && !s.done) {
        say_interrupted (&s);
        zsock_destroy (&s.sock);
        return QC_EXIT_INTERRUPTED;
    }
    if (!s.done && !cfg->local && s.accepted) {
        fprintf (stderr, "job %" PRIu64 " goes on at the broker; reattach with:\n"
                 "  qc-submit --broker %s --attach %" PRIu64 " -o OUTDIR\n",
                 s.job, cfg->endpoint, s.job);
    }
    if (s.done && !cfg->quiet)
        fprintf (stderr, "%" PRIu64 " slides: %" PRIu64 " passed, %" PRIu64 " failed\n",
                 s.progress.total, s.progress.done, s.progress.failed);
    if (!s.done && s.exit_code == QC_EXIT_OK)
        s.exit_code = QC_EXIT_FAILED;
    zsock_destroy (&s.sock);
    return s.exit_code;
}
