/* qc-submit's one-process mode started (submit_options.h): what its
 * worker needs checked while messages still reach the terminal (the
 * slide cache, memory, descriptors), then the broker in this process and
 * the worker in the process forked for it (client/local.h). */
#include "client/submit_options.h"

#include <string.h>

#include "client/local.h"
#include "shared/cli.h"
#include "shared/fatal_note.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "shared/url.h"
#include "worker/slide_fetch.h"

static const char *prog = SUBMIT_PROG;

/* True when a slide of the run is read over HTTP(S) (and so needs the
 * worker's slide cache). */
static bool
runs_url (const qc_rerun_t *plan)
{
    char why[256];
    for (size_t i = 0; i < plan->nrun; i++)
        if (qc_url_classify (plan->run[i], why, sizeof why) >= QC_URL_HTTP)
            return true;
    return false;
}

int
submit_local_start (const options_t *o, const qc_rerun_t *plan, qc_local_t **local)
{
    if (!o || !plan || !local)
        return QC_EXIT_USAGE;
    char err[2048];
    /* the cache folder checked while records still reach the terminal:
       its warning (a folder others may read) is said once a process,
       here, and was lost once they went to the stream, which has none
       yet (a user's review) */
    if (o->cache_dir && qc_slide_fetch_check_dir (o->cache_dir, err, sizeof err)) {
        fprintf (stderr, "%s: --cache: %s\n", prog, err);
        return QC_EXIT_USAGE;
    }
    /* the default cache folder (a read-only or missing HOME under cron
       or a service account) is checked too when a slide needs it: else
       the local worker starts without a cache, unheard (its records have
       no stream yet), and fails each URL slide with no reason a rerun
       would look past */
    if (!o->cache_dir && runs_url (plan) && qc_slide_fetch_check_dir (NULL, err, sizeof err)) {
        fprintf (stderr, "%s: slides by URL are kept in a cache folder, and the default "
                 "one cannot be used: %s%s\n", prog, err,
                 strstr (err, "--cache") ? "" : " (give --cache DIR)");
        return QC_EXIT_USAGE;
    }
    /* one process: our own records come back through the stream */
    qc_log_set_stderr_enabled (0);
    if (qc_cli_need_address_space (prog, 128, "a slide needs a hundred MB or more"))
        return QC_EXIT_USAGE;
    /* the slides run in a supervised process (a slide that crashes it
       is failed, the run goes on); should this one crash, say what to
       do */
    static char advice[4600];
    snprintf (advice, sizeof advice, "run the same command again%s to go on", o->again);
    qc_fatal_note_install (prog, advice);
    qc_local_config_t lc = {.slots = (uint32_t) o->workers, .cache_dir = o->cache_dir,
                            .cache_max = o->cache_max,
                            .memory_budget = o->memory_given ? o->memory_budget : -1,
                            .http_stall_s = (uint32_t) o->http_stall_s,
                            .http_attempts = (uint32_t) o->http_attempts,
                            .task_timeout_s = (uint32_t) o->task_timeout_s,
                            .test_crash_on = o->test_crash_on,
                            .test_kill_on = o->test_kill_on,
                            .test_hang_on = o->test_hang_on};
    unsigned refused = qc_socket_refusals ();
    if (!(*local = qc_local_start_with (&lc, err, sizeof err))) {
        fprintf (stderr, "%s: %s\n", prog, err);
        /* too low a ulimit -n is this machine's configuration */
        return qc_refusal_say (refused, NULL, 0) ? QC_EXIT_USAGE : QC_EXIT_NO_BROKER;
    }
    if (qc_local_slots_note (*local))
        fprintf (stderr, "%s: %s\n", prog, qc_local_slots_note (*local));
    /* its broker's sockets took some */
    if (qc_fds_short_say (SUBMIT_OUTPUT_FDS, err, sizeof err)) {
        fprintf (stderr, "%s: too few file descriptors to write the results beside the "
                 "one-process broker: %s\n", prog, err);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

const char *
submit_local_gone (void *arg)
{
    return qc_local_gone (arg);
}
