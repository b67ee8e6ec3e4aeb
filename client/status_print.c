/* See status_print.h. */
#include "client/status_print.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"
#include "shared/log.h"

/* A job's row with its state and owner (the reply's job_states and
 * job_owners, in the order of its jobs), sorted together. */
typedef struct {
    qc_job_row_t row;
    char *state, *owner;
} job_t;

static int
by_row_id (const void *a, const void *b)
{
    uint64_t x = ((const qc_job_row_t *) a)->job, y = ((const qc_job_row_t *) b)->job;
    return (x > y) - (x < y);
}

static int
by_job_id (const void *a, const void *b)
{
    return by_row_id (&((const job_t *) a)->row, &((const job_t *) b)->row);
}

static void
free_words (char ***words, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free ((*words)[i]);
    free (*words);
    *words = NULL;
    *n = 0;
}

/* A worker's row with its speed and state (the reply's speeds and
 * states, in the order of its workers), sorted together. */
typedef struct {
    qc_worker_row_t row;
    qc_worker_speed_t speed;
    char *state;
} worker_t;

static int
by_row_name (const void *a, const void *b)
{
    const char *x = ((const qc_worker_row_t *) a)->name, *y = ((const qc_worker_row_t *) b)->name;
    return strcmp (x ? x : "", y ? y : "");
}

static int
by_worker_name (const void *a, const void *b)
{
    return by_row_name (&((const worker_t *) a)->row, &((const worker_t *) b)->row);
}

/* A list of one per worker (speeds, states) that does not match the rows
 * (a broker before it sends none) is dropped: not known. */
static void
drop_unmatched (qc_msg_t *r)
{
    if (r->nspeeds != r->nworkers) {
        free (r->speeds);
        r->nspeeds = 0;
        r->speeds = r->nworkers ? calloc (r->nworkers, sizeof *r->speeds) : NULL;
        if (r->speeds)
            r->nspeeds = r->nworkers;
    }
    if (r->nstates != r->nworkers)
        free_words (&r->states, &r->nstates);
    if (r->njob_states != r->njobs)
        free_words (&r->job_states, &r->njob_states);
    if (r->njob_owners != r->njobs)
        free_words (&r->job_owners, &r->njob_owners);
}

/* The jobs by id, each with its state (none known without the memory to
 * sort them together). */
static void
sort_jobs (qc_msg_t *r)
{
    if (r->njobs < 2)
        return;
    job_t *all = r->job_states || r->job_owners ? calloc (r->njobs, sizeof *all) : NULL;
    if (!all) {
        free_words (&r->job_states, &r->njob_states);
        free_words (&r->job_owners, &r->njob_owners);
        qsort (r->jobs, r->njobs, sizeof *r->jobs, by_row_id);
        return;
    }
    for (size_t i = 0; i < r->njobs; i++)
        all[i] = (job_t) { r->jobs[i], r->job_states ? r->job_states[i] : NULL,
                           r->job_owners ? r->job_owners[i] : NULL };
    qsort (all, r->njobs, sizeof *all, by_job_id);
    for (size_t i = 0; i < r->njobs; i++) {
        r->jobs[i] = all[i].row;
        if (r->job_states)
            r->job_states[i] = all[i].state;
        if (r->job_owners)
            r->job_owners[i] = all[i].owner;
    }
    free (all);
}

/* The broker's tables are hashed: a reader looks a job up by its id, a
 * worker by its name. Names a worker gave itself lose their control
 * bytes: no escape sequence reaches the terminal, no tab splits a line. */
static void
tidy (qc_msg_t *r)
{
    drop_unmatched (r);
    sort_jobs (r);
    worker_t *all = r->nworkers > 1 && r->speeds ? calloc (r->nworkers, sizeof *all) : NULL;
    for (size_t i = 0; all && i < r->nworkers; i++)
        all[i] = (worker_t) { r->workers[i], r->speeds[i], r->states ? r->states[i] : NULL };
    if (all)
        qsort (all, r->nworkers, sizeof *all, by_worker_name);
    for (size_t i = 0; all && i < r->nworkers; i++) {
        r->workers[i] = all[i].row;
        r->speeds[i] = all[i].speed;
        if (r->states)
            r->states[i] = all[i].state;
    }
    bool sorted = all != NULL;
    free (all);
    if (!sorted && r->nworkers > 1) {   /* no memory for the pairs: the rows alone */
        r->nspeeds = 0;                 /* (their speeds and states not shown) */
        free_words (&r->states, &r->nstates);
        qsort (r->workers, r->nworkers, sizeof *r->workers, by_row_name);
    }
    for (size_t i = 0; i < r->nworkers; i++) {
        qc_scrub_controls (r->workers[i].name);
        qc_scrub_controls (r->workers[i].host);
    }
    for (size_t i = 0; i < r->nstates; i++)
        qc_scrub_controls (r->states[i]);
    for (size_t i = 0; i < r->njob_states; i++)
        qc_scrub_controls (r->job_states[i]);
    for (size_t i = 0; i < r->njob_owners; i++)
        qc_scrub_controls (r->job_owners[i]);
    for (size_t i = 0; i < r->nnotes; i++)
        qc_scrub_controls (r->notes[i]);
    for (size_t i = 0; i < r->ntrouble; i++)
        qc_scrub_controls (r->trouble[i]);
    if (r->version)
        qc_scrub_controls (r->version);
}

static const char *
text (const char *s)
{
    return s ? s : "";
}

/* A heartbeat's age in seconds ("0.2" and unit), or "-" for one no
 * broker sends (negative, not a number, past a year: a peer posing as a
 * broker printed "nans") */
static const char *
age (double s, const char *unit, char *buf, size_t len)
{
    if (!(s >= 0 && s < 366 * 86400.0))
        return "-";
    snprintf (buf, len, "%.1f%s", s, unit);
    return buf;
}

/* ms as seconds a slide ("11.0"), or "-" when not measured (or no
 * speeds were sent) */
static const char *
per_slide (const qc_msg_t *r, size_t i, bool gpu, char *buf, size_t len)
{
    uint32_t ms = i < r->nspeeds ? (gpu ? r->speeds[i].ms_gpu : r->speeds[i].ms_cpu) : 0;
    if (!ms)
        return "-";
    snprintf (buf, len, "%.*f", ms < 10000 ? 2 : 1, ms / 1e3);
    return buf;
}

/* What a job's state word means, said under the table for each word
 * shown: "delivered" and "waiting" decide whether a job's results are
 * lost when the broker forgets it. */
static const struct {
    const char *word, *meaning;
} s_job_words[] = {
    {"held", "its client went away before sending all its slides: none runs until it "
             "comes back (cancelled after the broker's --linger)"},
    {"running", "slides queued or running"},
    {"sending", "finished; its client is taking the results"},
    {"waiting", "finished; its results wait for its client (qc-submit --attach ID), kept "
                "for the broker's --retention"},
    {"delivered", "finished; every result was taken (forgotten after the broker's --linger)"},
};

static const char *
job_state (const qc_msg_t *r, size_t i)
{
    return i < r->njob_states && r->job_states[i][0] ? r->job_states[i] : "-";
}

/* Whose job i is ("-": not known, a broker before owners) */
static const char *
job_owner (const qc_msg_t *r, size_t i)
{
    return i < r->njob_owners && r->job_owners[i][0] ? r->job_owners[i] : "-";
}

static void
print_jobs (FILE *to, const qc_msg_t *r)
{
    size_t count[sizeof s_job_words / sizeof *s_job_words] = {0};
    for (size_t i = 0; i < r->njobs; i++)
        for (size_t w = 0; w < sizeof s_job_words / sizeof *s_job_words; w++)
            count[w] += strcmp (job_state (r, i), s_job_words[w].word) == 0;
    /* a count of each state first: past a screenful of jobs the rows
       scroll away (a soak's review); then what each word shown means;
       the rows last, as before, for scripts that read them after the
       header (a line that starts with a number is a job's) */
    fprintf (to, "\njobs: %zu", r->njobs);
    const char *sep = " (";
    for (size_t w = 0; w < sizeof s_job_words / sizeof *s_job_words; w++)
        if (count[w]) {
            fprintf (to, "%s%zu %s", sep, count[w], s_job_words[w].word);
            sep = ", ";
        }
    fputs (*sep == ',' ? ")\n" : "\n", to);
    if (!r->njobs)
        return;
    for (size_t w = 0; w < sizeof s_job_words / sizeof *s_job_words; w++)
        if (count[w] && strcmp (s_job_words[w].word, "running") != 0)
            fprintf (to, "  %s: %s\n", s_job_words[w].word, s_job_words[w].meaning);
    /* OWNER: whose each job is (an admin sees every job); its
       certificate's name and its user can hold blanks, so it is last */
    bool owners = false;
    for (size_t i = 0; i < r->njobs && !owners; i++)
        owners = strcmp (job_owner (r, i), "-") != 0;
    /* (no blanks after the last column: a row ends with its text) */
    fprintf (to, "%-8s %8s %8s %8s %8s %8s  %-9s  %-*s%s\n", "JOB", "DONE", "FAILED",
             "TOTAL", "QUEUED", "RUNNING", "STATE", owners ? 20 : 0, "CLIENT",
             owners ? "  OWNER" : "");
    for (size_t i = 0; i < r->njobs; i++) {
        const qc_job_row_t *j = &r->jobs[i];
        /* "detached" read as --detach, for every job whose client had
           simply finished (a soak's review) */
        char client[32];
        snprintf (client, sizeof client, "%s%s", j->attached ? "connected" : "none",
                  j->cancelled ? ", cancelled" : "");
        fprintf (to, "%-8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8"
                 PRIu64 "  %-9s  %-*s%s%s\n", j->job, j->done, j->failed, j->total,
                 j->queued, j->running, job_state (r, i), owners ? 20 : 0, client,
                 owners ? "  " : "", owners ? text (job_owner (r, i)) : "");
    }
}

void
qc_status_print_table (FILE *to, const char *broker, qc_msg_t *r)
{
    if (!to || !r)
        return;
    tidy (r);
    char build[QC_PROTO_MAX_NAME + 16] = "";
    if (r->version)
        snprintf (build, sizeof build, " (qc %s)", r->version);
    fprintf (to, "broker %s%s: %zu worker%s, %" PRIu64 " task%s queued\n", text (broker),
             build, r->nworkers, qc_plural (r->nworkers), r->queue, qc_plural (r->queue));
    if (!r->version)
        fputs ("(a broker older than 2026-12-03: its own trouble, a state folder it cannot "
               "write, is not said)\n", to);
    /* the broker's own trouble first: a full state disk under a green
       table of workers went unseen (an overnight probe) */
    for (size_t i = 0; i < r->ntrouble; i++)
        fprintf (to, "TROUBLE %s\n", text (r->trouble[i]));
    fputc ('\n', to);
    /* S/SLIDE: a slide's time on one of its CPU slots and on one of its
       GPUs as the broker measured it, which its scheduler goes by */
    /* STATE: the broker's word (qc_status_print_tsv's), or from a
       broker before states, "draining" alone, which stood under no
       header (a user's review) */
    fprintf (to, "%-24s %-20s %5s %4s %9s %9s %9s %9s %9s  %s\n", "WORKER", "HOST", "SLOTS",
             "GPUS", "CPU TASKS", "GPU TASKS", "HEARTBEAT", "CPU S/SL", "GPU S/SL", "STATE");
    for (size_t i = 0; i < r->nworkers; i++) {
        const qc_worker_row_t *w = &r->workers[i];
        char c[32], g[32], a[32];
        const char *state = i < r->nstates && r->states[i][0] ? r->states[i]
                            : w->draining ? "draining" : "-";
        fprintf (to, "%-24s %-20s %5u %4u %9u %9u %9s %9s %9s  %s\n", text (w->name),
                 text (w->host), w->slots, w->gpus, w->busy, w->gpu_busy,
                 age (w->heartbeat_age, "s", a, sizeof a), per_slide (r, i, false, c, sizeof c),
                 per_slide (r, i, true, g, sizeof g), state);
    }
    /* workers that take no new slide for now, and why (a pause after
       their machine failed slides, set aside for a slide that runs
       alone, stalled): the broker's words, each from a worker's name */
    for (size_t i = 0; i < r->nnotes; i++)
        fprintf (to, "%s%s\n", i ? "" : "\n", text (r->notes[i]));
    print_jobs (to, r);
}

/* A trouble line's word (what it starts with, before ": "), into buf;
 * "trouble" for a line without one. */
static const char *
trouble_word (const char *line, char *buf, size_t len)
{
    size_t n = line ? strcspn (line, ": \t") : 0;
    if (!line || !n || n >= len || strncmp (line + n, ": ", 2) != 0)
        return "trouble";
    memcpy (buf, line, n);
    buf[n] = '\0';
    return buf;
}

/* The worker a note is about: the broker starts it with the name and
 * ": " (the longest such name, as one may begin another), or "-". */
static const char *
note_worker (const qc_msg_t *r, const char *note)
{
    const char *who = "-";
    size_t best = 0;
    for (size_t i = 0; note && i < r->nworkers; i++) {
        const char *name = r->workers[i].name;
        size_t n = name ? strlen (name) : 0;
        if (n > best && strncmp (note, name, n) == 0 && strncmp (note + n, ": ", 2) == 0) {
            who = name;
            best = n;
        }
    }
    return who;
}

void
qc_status_print_tsv (FILE *to, const char *broker, qc_msg_t *r)
{
    if (!to || !r)
        return;
    tidy (r);
    fputs ("#kind\tfields: broker endpoint workers queued state version | worker name host slots "
           "gpus cpu_tasks gpu_tasks heartbeat_s draining cpu_s_per_slide gpu_s_per_slide "
           "state | note worker text | job id done failed total queued running attached "
           "cancelled state owner | trouble word text\n",
           to);
    char first[64];
    /* an older broker says no trouble, and no build: not known ("-") */
    fprintf (to, "broker\t%s\t%zu\t%" PRIu64 "\t%s\t%s\n", text (broker), r->nworkers, r->queue,
             r->ntrouble ? trouble_word (r->trouble[0], first, sizeof first)
             : r->version ? "ok" : "-", r->version ? r->version : "-");
    for (size_t i = 0; i < r->nworkers; i++) {
        const qc_worker_row_t *w = &r->workers[i];
        char c[32], g[32], a[32];
        fprintf (to, "worker\t%s\t%s\t%u\t%u\t%u\t%u\t%s\t%s\t%s\t%s\t%s\n", text (w->name),
                 text (w->host), w->slots, w->gpus, w->busy, w->gpu_busy,
                 age (w->heartbeat_age, "", a, sizeof a),
                 w->draining ? "yes" : "no", per_slide (r, i, false, c, sizeof c),
                 per_slide (r, i, true, g, sizeof g),
                 i < r->nstates && r->states[i][0] ? r->states[i] : "-");
    }
    for (size_t i = 0; i < r->nnotes; i++)
        fprintf (to, "note\t%s\t%s\n", note_worker (r, r->notes[i]), text (r->notes[i]));
    for (size_t i = 0; i < r->njobs; i++) {
        const qc_job_row_t *j = &r->jobs[i];
        fprintf (to, "job\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%"
                 PRIu64 "\t%s\t%s\t%s\t%s\n", j->job, j->done, j->failed, j->total, j->queued,
                 j->running, j->attached ? "yes" : "no", j->cancelled ? "yes" : "no",
                 job_state (r, i), job_owner (r, i));
    }
    for (size_t i = 0; i < r->ntrouble; i++) {
        char w[64];
        const char *word = trouble_word (r->trouble[i], w, sizeof w);
        fprintf (to, "trouble\t%s\t%s\n", word,
                 word == w ? r->trouble[i] + strlen (w) + 2 : text (r->trouble[i]));
    }
}
