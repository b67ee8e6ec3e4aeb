/* What a run into an output folder does with each slide of its cohort,
 * decided before the job starts:
 *   - a slide the folder already has a row or an error line for is
 *     skipped (with -f it runs again, its old record dropped when the
 *     job starts), unless its file changed since (output_stamps.h):
 *     then it runs again likewise;
 *   - one whose error line says qc-submit could not read it, or that it
 *     was cancelled, runs again when it can be read now;
 *   - one that cannot be read here (missing, no permission, a path over
 *     the protocol's limit) is not sent: it gets an error.log line, and
 *     the list is shown before the job starts (--no-check: only the path
 *     limit is checked, for slides only the workers can see);
 *   - the rest are planned into the job, in cohort order.
 * A slide by URL is not read here (its workers fetch it), and the
 * folder knows it by its redacted URL (shared/url.h): a fresh presigned
 * URL of a slide already done is skipped like its path would be, unless
 * its server says the file changed since its record was made
 * (client/url_versions.h; not asked with --no-check). */
#ifndef QC_CLIENT_RERUN_H
#define QC_CLIENT_RERUN_H

#include <stdbool.h>
#include <stdio.h>

#include "client/cohort.h"
#include "client/output.h"

#define QC_RERUN_SHOW 10      /* unreadable slides listed by name */

typedef struct {
    char **run;               /* the job's slides, task index order */
    size_t nrun;
    size_t total;             /* slides in the cohort */
    size_t passed_before;     /* skipped: a row already */
    size_t failed_before;     /* skipped: an error line already (still
                                 unreadable ones included) */
    size_t redone;            /* -f: run again */
    size_t retried;           /* unreadable or cancelled before, run now */
    size_t moved;             /* of those before: recorded under a path
                                 now gone, the same file found here
                                 (qc_output_moved_from) */
    size_t changed;           /* a record for another file of that path
                                 (client/output_stamps.h), run now */
    size_t changed_inputs;    /* a file its steps read beside it (its
                                 annotation) drawn, changed or removed
                                 since its record, run now */
    size_t changed_url;       /* the same, by URL: its server has another
                                 version (client/url_versions.h) */
    size_t unchecked;         /* by URL, skipped as done: whether it changed
                                 could not be told */
    size_t unchecked_inputs;  /* local, skipped as done: whether its
                                 annotation by URL changed could not be
                                 told */
    size_t unseen_inputs;     /* local, skipped as done: its annotation
                                 read by its worker, not seen here */
    size_t unstamped;         /* skipped, with no stamp to tell whether its
                                 file changed (a folder of an older build):
                                 stamped now, for the next run */
    size_t unreached;         /* of those, their server not reached from
                                 here (a firewall the workers are inside?) */
    char *changed_shown[QC_RERUN_SHOW];    /* "URL: what differs" */
    char *unchecked_shown[QC_RERUN_SHOW];  /* "URL: why not told" */
    size_t nunread;           /* not sent: cannot be read here */
    size_t fetched;           /* of those before, fetched just now from
                                 the folder's unfinished job (the caller
                                 sets it) */
    uint64_t fetched_job;     /* that job */
    size_t failed_gone;       /* of the failures fetched, slides no longer
                                 in the cohort (a file that went away
                                 after --detach): counted as failed */
    char *shown[QC_RERUN_SHOW];  /* "path: why" of the first of them */
} qc_rerun_t;

/* Decides, and records the decisions in out (plan, drops, unreadable
 * lines). check: whether slides are looked at here (their files, and
 * done slides by URL's servers). say: where to say that the servers are
 * being asked, when that takes a while (NULL: nowhere). -1 on memory. */
int qc_rerun_plan (qc_output_t *out, const qc_cohort_t *cohort, bool force,
                   bool check, FILE *say, qc_rerun_t *r);
/* Counts in r->failed_gone the paths of failed (the failed results just
 * fetched from the folder's job; NULL: none) that are no slide of the
 * cohort: the plan judges the others. -1 on memory. */
int qc_rerun_count_gone (qc_rerun_t *r, const qc_cohort_t *cohort, zlistx_t *failed);

/* Tells the user what was decided (nothing when there is nothing to
 * say beyond the slide count). */
void qc_rerun_say (const qc_rerun_t *r, const char *outdir, FILE *to);
void qc_rerun_free (qc_rerun_t *r);

#endif
