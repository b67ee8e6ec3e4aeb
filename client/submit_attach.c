/* A rerun into a folder whose last job, through a broker, has slides
 * with no result there yet fetches that job first (submit_options.h). */
#include "client/submit_options.h"

#include <inttypes.h>
#include <string.h>

#include "shared/cli.h"

static const char *prog = SUBMIT_PROG;

/* What every session of this run is given: the broker, its keys, the
 * timings and how much to say; the caller adds the job's side. */
qc_session_config_t
submit_session_of (const options_t *o, const qc_curve_client_t *curve, qc_output_t *out)
{
    return (qc_session_config_t) {
        .endpoint = o->broker, .resource = o->resource, .timeout_s = (uint32_t) o->timeout_s,
        .heartbeat_ms = 1000, .liveness = 5, .quiet = o->quiet,
        .wait_warn_s = (uint32_t) o->wait_warn_s, .give_up_s = (uint32_t) o->give_up_s,
        .detach = o->detach,
        .outdir = o->outdir, .out = out,
        .curve = curve, .reach = o->reach, .again = o->again,
        .server_key = o->broker ? o->server_key : NULL};
}

/* A folder with every result of its job whose run was stopped before
 * it told the broker so (no "delivered" line in .qc-job: killed after
 * its last result was written, before its ACK): the broker kept the job
 * waiting for a client until --retention (7 days), its results on its
 * disk and a place among the jobs a client may hold, and a rerun that
 * found nothing to run never said otherwise (a soak's review). Told
 * now, on the broker the job ran on; a broker that no longer has the job
 * (delivered and forgotten) or does not answer is said nothing of. */
static void
submit_release_job (const options_t *o, const qc_curve_client_t *curve,
                    const qc_output_last_job_t *last)
{
    if (last->delivered || !last->key || !last->done || strcmp (last->endpoint, o->broker) != 0)
        return;
    qc_session_config_t sc = submit_session_of (o, curve, NULL);
    sc.release_job = last->job;
    sc.release_key = last->key;
    sc.release_seq = last->done;
    if (qc_session_run (&sc) == QC_EXIT_OK && !o->quiet)
        fprintf (stderr, "%s: note: %s has every result of job %" PRIu64 ", and its .qc-job "
                 "does not say the broker was told (a run stopped before its last ACK, or "
                 "an older qc-submit's): told now, so that the broker does not hold them "
                 "for a client until --retention\n", prog, o->outdir, last->job);
}

/* A rerun through a broker into a folder whose last job there has
 * slides with no result here yet (its client was stopped: Ctrl-C, a
 * closed ssh session, a full disk) fetches that job's results first, as
 * --attach does: a new job would run those slides a second time while
 * the old one goes on. QC_EXIT_OK to go on with the rerun (every result
 * fetched, or the broker no longer has the job), else the exit code.
 * *fetched: the results it wrote (the rerun says they are not run
 * again because they were just fetched), *job: that job. */
int
submit_attach_last_job (const options_t *o, const qc_curve_client_t *curve, bool *detached,
                        size_t *fetched, uint64_t *job, zlistx_t **failed)
{
    qc_output_last_job_t last;
    *failed = NULL;
    *fetched = 0;
    *job = 0;
    *detached = false;
    if (!o->broker && !o->force && o->outdir && !o->quiet
        && qc_output_last_job (o->outdir, &last) == 0 && !last.local
        && (last.slides_unknown || last.done < last.slides)) {
        /* the one-process mode asks no broker: said, as the broker may
           still run (or hold the results of) the slides run here again */
        fprintf (stderr, "%s: note: %s's job %" PRIu64 " ran on %s and has slides with no "
                 "result here; without --broker they run in this process, and that job "
                 "is not asked (--broker %s fetches it first; --broker %s --cancel %"
                 PRIu64 " drops what it still has queued)\n", prog, o->outdir, last.job,
                 last.endpoint, last.endpoint, last.endpoint, last.job);
        return QC_EXIT_OK;
    }
    /* every result here (-f too: they are kept as .N) */
    if (o->broker && o->outdir && qc_output_last_job (o->outdir, &last) == 0 && !last.local
        && !last.slides_unknown && last.done >= last.slides) {
        submit_release_job (o, curve, &last);
        return QC_EXIT_OK;
    }
    if (o->broker && o->force && o->outdir && qc_output_last_job (o->outdir, &last) == 0
        && !last.local && strcmp (last.endpoint, o->broker) == 0
        && (last.slides_unknown || last.done < last.slides)) {
        /* -f starts the folder afresh: the folder's job that still has
           slides at this broker is cancelled, said; it ran on for no one
           (its results unfetchable: the folder names the new job), and
           nothing said so (a user's review) */
        char busy[1024] = "";
        if (qc_output_in_use (o->outdir, busy, sizeof busy)) {   /* its job's own run */
            fprintf (stderr, "%s: %s\n", prog, busy);
            return QC_EXIT_BUSY;
        }
        qc_session_config_t sc = {.endpoint = o->broker, .cancel_job = last.job,
                                  .cancel_silent = true, .timeout_s = (uint32_t) o->timeout_s,
                                  .curve = curve};
        if (qc_session_run (&sc) == QC_EXIT_OK && !o->quiet)
            fprintf (stderr, "%s: -f: %s's job %" PRIu64 " still had slides at the broker: "
                     "cancelled (its queued slides dropped), as -f starts the folder "
                     "afresh\n", prog, o->outdir, last.job);
        return QC_EXIT_OK;
    }
    if (!o->broker || o->force || !o->outdir || qc_output_last_job (o->outdir, &last) != 0
        || last.local || (!last.slides_unknown && last.done >= last.slides))
        return QC_EXIT_OK;
    /* a folder from before jobs had keys: the broker could not tell its
       job from another of that id, so it is not fetched unasked; one
       whose results.tsv is gone has no header to write rows under */
    if (!last.key || !last.table) {
        if (!o->quiet)
            fprintf (stderr, "%s: note: %s's job %" PRIu64 " is not fetched first (%s); "
                     "--attach %" PRIu64 " fetches it, else its slides without a result "
                     "run in a new job\n", prog, o->outdir, last.job,
                     last.key ? "its results.tsv is gone" : "it was written before jobs "
                     "had keys", last.job);
        return QC_EXIT_OK;
    }
    char err[1024] = "";
    /* said before "fetching them first", which would not happen */
    if (qc_output_in_use (o->outdir, err, sizeof err)) {
        fprintf (stderr, "%s: %s\n", prog, err);
        return QC_EXIT_BUSY;
    }
    if (!o->quiet && strcmp (last.endpoint, o->broker) != 0)
        fprintf (stderr, "%s: note: job %" PRIu64 " ran on %s; asking %s for it\n", prog,
                 last.job, last.endpoint, o->broker);
    if (last.torn) {
        /* the last run was killed after the broker took its job and before
           .qc-job named it: named now, then fetched as any other */
        if (!o->quiet)
            fprintf (stderr, "%s: %s's last run was stopped as it started job %" PRIu64
                     " (its .qc-job still named the one before): taking job %" PRIu64
                     " as the folder's\n", prog, o->outdir, last.job, last.job);
        if (qc_output_adopt_job (o->outdir, &last, err, sizeof err)) {
            fprintf (stderr, "%s: %s\n", prog, err);
            return QC_EXIT_INCOMPLETE;
        }
    }
    if (!o->quiet && last.slides_unknown)
        /* .qc-slides names another job (a run killed as it started one):
           what the broker still holds of this one is fetched, if any */
        fprintf (stderr, "%s: %s holds job %" PRIu64 ", but not its slide list (.qc-slides "
                 "is another job's or gone), so whether each of its slides has a result "
                 "there is not known: fetching what the broker holds of it first (as "
                 "--attach %" PRIu64 ")\n", prog, o->outdir, last.job, last.job);
    else if (!o->quiet)
        fprintf (stderr, "%s: %s holds job %" PRIu64 ", and %" PRIu64 " of its %" PRIu64
                 " slides have no result there yet: fetching them first (as --attach "
                 "%" PRIu64 ")\n", prog, o->outdir, last.job, last.slides - last.done,
                 last.slides, last.job);
    qc_output_config_t oc = {.outdir = o->outdir, .attach_job = last.job};
    bool busy;
    qc_output_t *out = qc_output_open (&oc, true, &busy, err, sizeof err);
    if (!out) {
        fprintf (stderr, "%s: %s\n", prog, err);
        return busy ? QC_EXIT_BUSY : QC_EXIT_USAGE;
    }
    bool finished = false, gone = false;
    qc_session_config_t sc = submit_session_of (o, curve, out);
    sc.attach_job = last.job;
    sc.expect_total = last.slides;
    sc.finished = &finished;
    sc.gone = &gone;
    /* --detach again while the folder's job runs: that job is the one
       submitted, said as the first run said it (idempotent for a
       script), not fetched to its end */
    sc.detached = detached;
    uint64_t written_before = qc_output_written (out);
    int rc = qc_session_run (&sc);
    *fetched = (size_t) (qc_output_written (out) - written_before);
    *job = last.job;
    /* the caller counts those no longer in its cohort (a slide whose file
       went away after --detach): the plan judges the others */
    *failed = qc_output_take_failed (out);
    qc_output_close (&out);
    if (*detached)      /* its id said, or not (5: stdout refused it) */
        return rc == QC_EXIT_INCOMPLETE ? rc : QC_EXIT_OK;
    if (finished)
        return QC_EXIT_OK;
    if (gone) {         /* not there, or refused (said above) */
        if (!o->quiet)
            fprintf (stderr, "%s: job %" PRIu64 " cannot be fetched: its slides without a "
                     "result here run in a new job\n", prog, last.job);
        /* asked another broker than the one it ran on: there it may run
           on, for no one */
        if (strcmp (last.endpoint, o->broker) != 0)
            fprintf (stderr, "%s: job %" PRIu64 " may still run on %s, where it was "
                     "submitted; qc-submit --broker %s --cancel %" PRIu64 " stops it "
                     "there\n", prog, last.job, last.endpoint, last.endpoint, last.job);
        return QC_EXIT_OK;
    }
    return rc == QC_EXIT_OK || rc == QC_EXIT_FAILED ? QC_EXIT_INCOMPLETE : rc;
}
