/* What a qc-submit session says a user may do next, as commands to
 * paste: after an interrupt, a broker that does not answer, a --detach,
 * or a job left before it was whole (cancelled, gone, refused). The
 * session's loop is session.c. */
#include "client/session_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client/output.h"
#include "client/shell_word.h"
#include "shared/cli.h"
#include "shared/endpoint.h"
#include "shared/err.h"
#include "shared/socket_new.h"

/* The command that goes on with (what: "--attach", "--cancel") this
 * session's job, as the user can paste it: the broker and its keys as
 * given, the folder quoted for a shell. */
const char *
session_command_for (const session_t *s, const char *what, bool with_dir, char *buf, size_t cap)
{
    const qc_session_config_t *c = s->cfg;
    char job[24];
    snprintf (job, sizeof job, "%" PRIu64, s->job);
    snprintf (buf, cap, "qc-submit");
    if (c->reach)
        snprintf (buf + strlen (buf), cap - strlen (buf), " %s", c->reach);
    else {
        qc_shell_word_add (buf, cap, "--broker");
        qc_shell_word_add (buf, cap, c->endpoint ? c->endpoint : "EP");
    }
    qc_shell_word_add (buf, cap, what);
    qc_shell_word_add (buf, cap, job);
    if (with_dir) {
        qc_shell_word_add (buf, cap, "-o");
        if (c->outdir)
            qc_shell_word_add (buf, cap, c->outdir);
        else
            snprintf (buf + strlen (buf), cap - strlen (buf), " OUTDIR");
    }
    return buf;
}

/* What "run the same command again" adds (qc_session_config_t again). */
const char *
session_again_words (const qc_session_config_t *c)
{
    return c->again ? c->again : "";
}

/* Ctrl-C (or SIGTERM): what is kept and how to go on. */
void
session_say_interrupted (session_t *s)
{
    const qc_session_config_t *c = s->cfg;
    const char *dir = c->outdir ? c->outdir : "OUTDIR";
    /* this run's: the folder may hold an earlier run's too */
    fprintf (stderr, "\nqc-submit: interrupted. %" PRIu64 " results of this run are kept "
             "in %s (results.tsv, error.log, a folder per slide), with any it had before.\n",
             qc_output_written (c->out), dir);
    if (c->local || !s->accepted)
        fprintf (stderr, "To go on, run the same qc-submit command again%s: the slides "
                 "already in %s are skipped (-f redoes them).\n", session_again_words (c), dir);
    else {
        char attach[4096], cancel[4096];
        fprintf (stderr, "Job %" PRIu64 " goes on at the broker. To go on, run the same "
                 "qc-submit command again%s (it fetches the job's results first), or "
                 "fetch the rest with:\n  %s\nor stop it with: %s\n", s->job,
                 session_again_words (c),
                 session_command_for (s, "--attach", true, attach, sizeof attach),
                 session_command_for (s, "--cancel", false, cancel, sizeof cancel));
    }
}

/* "no answer from the broker", and why when the handshake said. */
void
session_say_no_answer (session_t *s)
{
    const char *why = qc_handshake_why (s->hs);
    char fds[320];
    char ipc[600];
    if (!why)
        why = qc_endpoint_ipc_why (s->cfg->endpoint, ipc, sizeof ipc);
    if (!why)
        why = qc_endpoint_name_why (s->cfg->endpoint, ipc, sizeof ipc);
    if (!why && qc_fds_short_say (QC_CONNECT_FDS, fds, sizeof fds))
        why = fds;
    fprintf (stderr, "qc-submit: no answer from broker %s in %u s: %s\n",
             s->cfg->endpoint, s->cfg->timeout_s, why ? why : QC_CLI_NO_BROKER_HINT);
}

/* See session_int.h. */
void
session_say_detached (session_t *s)
{
    const qc_session_config_t *cfg = s->cfg;
    const char *dir = cfg->outdir ? cfg->outdir : "OUTDIR";
    /* the job's id alone on stdout, for the script that detached */
    char attach[4096];
    /* the id not written (a full disk, /dev/full): said, and the run
       does not end 0 as if the script had it (a user's review) */
    if (printf ("%" PRIu64 "\n", s->job) < 0 || fflush (stdout) != 0) {
        fprintf (stderr, "qc-submit: cannot write job %" PRIu64 "'s id to standard output "
                 "(%s): the job runs on at the broker; the same command prints its id "
                 "again\n", s->job, strerror (errno));
        s->exit_code = QC_EXIT_INCOMPLETE;
    }
    if (!cfg->quiet && cfg->attach_job)
        fprintf (stderr, "job %" PRIu64 " of %s is still at the broker, where it runs "
                 "on without this client (--detach); the same qc-submit command "
                 "without --detach, or\n  %s\nfetches its results; qc-status --tsv "
                 "shows how it stands\n", s->job, dir,
                 session_command_for (s, "--attach", true, attach, sizeof attach));
    else if (!cfg->quiet)
        fprintf (stderr, "job %" PRIu64 ": the broker holds its %zu slide%s, and it "
                 "runs on without this client (--detach); the same qc-submit command "
                 "again (without --detach: it waits for the rest), or\n  %s\nfetches "
                 "its results; qc-status --tsv shows how it stands\n", s->job,
                 cfg->nslides, qc_plural (cfg->nslides),
                 session_command_for (s, "--attach", true, attach, sizeof attach));
}

/* See session_int.h. */
void
session_say_how_to_go_on (session_t *s)
{
    const qc_session_config_t *cfg = s->cfg;
    const char *dir = cfg->outdir ? cfg->outdir : "OUTDIR";
    if (!cfg->local && s->refused && !cfg->attach_job && s->taken < cfg->nslides)
        /* refused in mid-submission (a limit, said above) */
        fprintf (stderr, "qc-submit: the broker had accepted %" PRIu64 " of the %zu slides "
                 "into job %" PRIu64 " when it refused more\n", s->taken, cfg->nslides, s->job);
    if (!cfg->local && s->gone) {
        if (!cfg->gone)     /* else the caller says what follows */
            fprintf (stderr, "qc-submit: the broker no longer holds job %" PRIu64 " for %s: "
                     "run the same qc-submit command again (without --attach): the slides "
                     "it has no result for run in a new job\n", s->job, dir);
    } else if (!cfg->local && s->cut) {
        /* it does not go on: a rerun fetches what it ran, then runs the
           rest anew, which the same limit may refuse until the broker
           lets this job go (broker_limits.c) */
        char attach[4096], limit[512] = "";
        if (s->cut_by_limit)
            snprintf (limit, sizeof limit, " Job %" PRIu64 " counts against your limit "
                      "until the broker lets it go (qc-broker --linger after its results "
                      "are fetched): if the new job is refused too, wait, or give fewer "
                      "slides a run.", s->job);
        fprintf (stderr, "qc-submit: job %" PRIu64 " is cancelled: the slides it had "
                 "started finish, the others do not run. Run the same qc-submit command "
                 "again%s: it fetches what the job ran, then runs the slides without a "
                 "result in a new job.%s Its results are fetched with:\n  %s\n", s->job,
                 session_again_words (cfg), limit,
                 session_command_for (s, "--attach", true, attach, sizeof attach));
    } else if (!cfg->local && s->orphan_cancelled)
        fprintf (stderr, "qc-submit: job %" PRIu64 " is cancelled: the folder that named it "
                 "is gone, so nothing could fetch it, and the same command would have run "
                 "its slides again in a second job beside it. The slides it had started "
                 "finish, and the broker keeps their results. Put %s back and run the same "
                 "qc-submit command again%s: it fetches what the job ran, then runs the "
                 "rest in a new job; if the folder is lost, the same command runs every "
                 "slide in a new job\n", s->job, dir, session_again_words (cfg));
    else if (!cfg->local && s->accepted) {
        char attach[4096];
        fprintf (stderr, "job %" PRIu64 " goes on at the broker; once the cause is "
                 "mended, run the same qc-submit command again%s (it fetches the job's "
                 "results first), or fetch them with:\n  %s\n", s->job,
                 session_again_words (cfg),
                 session_command_for (s, "--attach", true, attach, sizeof attach));
    } else if (cfg->local && s->local_lost)
        fprintf (stderr, "qc-submit: what it wrote is kept in %s: run the same qc-submit "
                 "command again%s to go on (the slides already there are skipped)\n", dir,
                 session_again_words (cfg));
    else if (cfg->local && s->write_failed)
        fprintf (stderr, "qc-submit: once the cause is mended, run the same qc-submit "
                 "command again%s: the slides already in %s are skipped\n",
                 session_again_words (cfg), dir);
}
