/* See status_print.h. */
#include "client/status_print.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"

static int
by_job_id (const void *a, const void *b)
{
    uint64_t x = ((const qc_job_row_t *) a)->job, y = ((const qc_job_row_t *) b)->job;
    return (x > y) - (x < y);
}

static int
by_worker_name (const void *a, const void *b)
{
    const char *x = ((const qc_worker_row_t *) a)->name, *y = ((const qc_worker_row_t *) b)->name;
    return strcmp (x ? x : "", y ? y : "");
}

/* The broker's tables are hashed: a reader looks a job up by its id, a
 * worker by its name. Names a worker gave itself lose their control
 * bytes: no escape sequence reaches the terminal, no tab splits a line. */
static void
tidy (qc_msg_t *r)
{
    if (r->njobs > 1)
        qsort (r->jobs, r->njobs, sizeof *r->jobs, by_job_id);
    if (r->nworkers > 1)
        qsort (r->workers, r->nworkers, sizeof *r->workers, by_worker_name);
    for (size_t i = 0; i < r->nworkers; i++) {
        qc_scrub_controls (r->workers[i].name);
        qc_scrub_controls (r->workers[i].host);
    }
    for (size_t i = 0; i < r->nnotes; i++)
        qc_scrub_controls (r->notes[i]);
}

static const char *
text (const char *s)
{
    return s ? s : "";
}

void
qc_status_print_table (FILE *to, const char *broker, qc_msg_t *r)
{
    if (!to || !r)
        return;
    tidy (r);
    fprintf (to, "broker %s: %zu workers, %" PRIu64 " tasks queued\n\n", text (broker),
             r->nworkers, r->queue);
    fprintf (to, "%-24s %-20s %5s %4s %9s %9s %9s\n", "WORKER", "HOST", "SLOTS", "GPUS",
             "CPU TASKS", "GPU TASKS", "HEARTBEAT");
    for (size_t i = 0; i < r->nworkers; i++) {
        const qc_worker_row_t *w = &r->workers[i];
        fprintf (to, "%-24s %-20s %5u %4u %9u %9u %7.1fs%s\n", text (w->name), text (w->host),
                 w->slots, w->gpus, w->busy, w->gpu_busy, w->heartbeat_age,
                 w->draining ? "  draining" : "");
    }
    /* workers that take no new slide for now, and why (a pause after
       their machine failed slides, set aside for a slide that runs
       alone, stalled): the broker's words, each from a worker's name */
    for (size_t i = 0; i < r->nnotes; i++)
        fprintf (to, "%s%s\n", i ? "" : "\n", text (r->notes[i]));
    fprintf (to, "\n%-8s %8s %8s %8s %8s %8s  %s\n", "JOB", "DONE", "FAILED", "TOTAL",
             "QUEUED", "RUNNING", "CLIENT");
    for (size_t i = 0; i < r->njobs; i++) {
        const qc_job_row_t *j = &r->jobs[i];
        fprintf (to, "%-8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8"
                 PRIu64 "  %s%s\n", j->job, j->done, j->failed, j->total, j->queued,
                 j->running, j->attached ? "attached" : "detached",
                 j->cancelled ? ", cancelled" : "");
    }
}

void
qc_status_print_tsv (FILE *to, const char *broker, qc_msg_t *r)
{
    if (!to || !r)
        return;
    tidy (r);
    fputs ("#kind\tfields: broker endpoint workers queued | worker name host slots gpus "
           "cpu_tasks gpu_tasks heartbeat_s draining | note text | job id done failed "
           "total queued running attached cancelled\n", to);
    fprintf (to, "broker\t%s\t%zu\t%" PRIu64 "\n", text (broker), r->nworkers, r->queue);
    for (size_t i = 0; i < r->nworkers; i++) {
        const qc_worker_row_t *w = &r->workers[i];
        fprintf (to, "worker\t%s\t%s\t%u\t%u\t%u\t%u\t%.1f\t%s\n", text (w->name),
                 text (w->host), w->slots, w->gpus, w->busy, w->gpu_busy, w->heartbeat_age,
                 w->draining ? "yes" : "no");
    }
    for (size_t i = 0; i < r->nnotes; i++)
        fprintf (to, "note\t%s\n", text (r->notes[i]));
    for (size_t i = 0; i < r->njobs; i++) {
        const qc_job_row_t *j = &r->jobs[i];
        fprintf (to, "job\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%"
                 PRIu64 "\t%s\t%s\n", j->job, j->done, j->failed, j->total, j->queued,
                 j->running, j->attached ? "yes" : "no", j->cancelled ? "yes" : "no");
    }
}
