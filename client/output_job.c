/* The output folder's job files read back: .qc-job (the job line, then
 * "begin IDX TSV ERR" / "done IDX" / "abandon IDX" per result, and
 * "delivered" once the broker was told that every result is here, see
 * PROTOCOL.md section 11) and .qc-slides. One scanner reads .qc-job for
 * every use: a reattach's written indices, a torn result's repair, and
 * the last job a rerun looks at. Writing them is qc_output_set_job's
 * (output_start.c) and qc_output_result's (output_results.c). */
#include "client/output_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/escape.h"
#include "client/stall_watch.h"

/* What OUTDIR/.qc-job says, read in one pass. */
typedef struct {
    uint64_t job, key;        /* 0: no job line; key 0: an older file */
    char endpoint[256];       /* the broker ("local"), cut to fit */
    bool delivered;           /* a "delivered" line after the job line */
    bool open;                /* a "begin" with no "done"/"abandon" after */
    uint64_t open_idx;
    long long open_tsv, open_err;   /* the tables' sizes at that begin */
} job_file_t;

/* OUTDIR/name opened to read, or NULL. */
static FILE *
open_folder_file (const char *outdir, const char *name)
{
    char *p = NULL;
    if (asprintf (&p, "%s/%s", outdir, name) < 0)
        return NULL;
    FILE *f = fopen (p, "r");
    free (p);
    return f;
}

/* Reads OUTDIR/.qc-job into j; each "done" index goes to on_done (may be
 * NULL). -1 when there is no such file. */
static int
scan_job_file (const char *outdir, job_file_t *j, void (*on_done) (void *, uint64_t),
               void *arg)
{
    memset (j, 0, sizeof *j);
    FILE *f = open_folder_file (outdir, JOBFILE);
    if (!f)
        return -1;
    char line[8192], where[256];
    unsigned long long idx;
    long long tsv, errs;
    while (fgets (line, sizeof line, f)) {
        if (sscanf (line, "begin %llu %lld %lld", &idx, &tsv, &errs) == 3) {
            j->open = true;
            j->open_idx = idx;
            j->open_tsv = tsv;
            j->open_err = errs;
        } else if (sscanf (line, "done %llu", &idx) == 1) {
            j->open = j->open && idx != j->open_idx;
            if (on_done)
                on_done (arg, idx);
        } else if (sscanf (line, "abandon %llu", &idx) == 1)
            j->open = j->open && idx != j->open_idx;
        else if (strcmp (line, "delivered\n") == 0)
            j->delivered = true;
        else if (sscanf (line, "job %llu %255s", &idx, where) == 2) {
            const char *k = strstr (line, " key=");
            j->delivered = false;
            j->job = idx;
            j->key = k ? strtoull (k + 5, NULL, 16) : 0;
            snprintf (j->endpoint, sizeof j->endpoint, "%s", where);
        }
    }
    fclose (f);
    return 0;
}

/* Whether what follows byte at in the table at path is the torn
 * result's line alone: the table ended a line there (or was empty), and
 * after it is at most one line. A table edited by hand since the crash
 * (sorted, a column added) is not: cutting it at the old size would
 * take a lab's rows. */
static bool
only_torn_line (const char *path, long long at, long long size)
{
    if (size - at > (1 << 20))
        return false;           /* a result's line is kilobytes */
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    /* from the byte before at (the line break that ended the table) */
    off_t from = at > 0 ? (off_t) at - 1 : 0;
    size_t want = (size_t) (size - (long long) from);
    char *buf = malloc (want);
    bool ok = buf && pread (fd, buf, want, from) == (ssize_t) want;
    close (fd);
    size_t skip = at > 0 ? 1 : 0;
    if (ok && skip)
        ok = buf[0] == '\n';
    const char *nl = ok ? memchr (buf + skip, '\n', want - skip) : NULL;
    if (nl)
        ok = nl == buf + want - 1;       /* its own line break, last */
    free (buf);
    return ok;
}

/* A result interrupted half way: results.tsv and error.log go back to
 * their sizes before it, so writing it again leaves no duplicate row;
 * not when more than its line follows (edited since: then said, and a
 * duplicate row is the lesser harm). */
static void
cut_back (qc_output_t *o, long long tsv, long long errors)
{
    static const char *names[] = {"results.tsv", "error.log"};
    long long sizes[] = {tsv, errors};
    for (int i = 0; i < 2; i++) {
        char *p = path_in (o, names[i]);
        struct stat st;
        if (!p || sizes[i] < 0 || stat (p, &st) != 0 || st.st_size <= sizes[i]) {
            free (p);
            continue;
        }
        if (!only_torn_line (p, sizes[i], (long long) st.st_size))
            fprintf (stderr, "qc-submit: warning: %s changed since a result was cut off "
                     "while it was written (edited by hand?): not cut back to its %lld "
                     "bytes of then; a slide may have two rows there (the later one "
                     "counts)\n", p, sizes[i]);
        else if (truncate (p, (off_t) sizes[i]))
            fprintf (stderr, "qc-submit: cannot cut %s back: %s\n", p, strerror (errno));
        free (p);
    }
}

void
output_repair_torn (qc_output_t *o)
{
    job_file_t j;
    if (scan_job_file (o->outdir, &j, NULL, NULL) != 0 || !j.open)
        return;
    cut_back (o, j.open_tsv, j.open_err);
    char *p = path_in (o, JOBFILE);
    FILE *a = p ? fopen (p, "a") : NULL;
    free (p);
    if (a) {
        fprintf (a, "abandon %" PRIu64 "\n", j.open_idx);
        fclose (a);
    }
}

static void
count_written (void *arg, uint64_t idx)
{
    qc_output_t *o = arg;
    if (!qc_output_has (o, idx) && mark_seen (o, idx) == 0)
        o->written++;
}

void
output_read_journal (qc_output_t *o)
{
    job_file_t j;
    if (scan_job_file (o->outdir, &j, count_written, o) == 0 && j.job) {
        o->job = j.job;
        o->key = j.key;
    }
}

void
output_read_slides (qc_output_t *o, uint64_t job)
{
    FILE *f = open_folder_file (o->outdir, SLIDESFILE);
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    unsigned long long of = 0;
    if (getline (&line, &cap, f) <= 0 || sscanf (line, "job %llu", &of) != 1 || of != job) {
        /* another job's (or none): names then come from the results */
        free (line);
        fclose (f);
        return;
    }
    while (getline (&line, &cap, f) > 0) {
        line[strcspn (line, "\n")] = '\0';
        char *tab = strchr (line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        char *name = qc_unescape_dup (line), *path = qc_unescape_dup (tab + 1);
        if (name && path && qc_names_claim (o->names, name, path) == 0)
            qc_output_plan (o, path);
        free (name);
        free (path);
    }
    free (line);
    fclose (f);
}

/* Distinct task indices done, within the job's slides. */
typedef struct {
    uint8_t *seen;
    uint64_t n, done;
} done_count_t;

static void
count_done (void *arg, uint64_t idx)
{
    done_count_t *c = arg;
    if (c->seen && idx < c->n && !c->seen[idx]) {
        c->seen[idx] = 1;
        c->done++;
    }
}

static int last_job (const char *outdir, qc_output_last_job_t *last);

int
qc_output_last_job (const char *outdir, qc_output_last_job_t *last)
{
    if (!outdir || !last)
        return -1;
    memset (last, 0, sizeof *last);
    qc_stall_watch_output (outdir);   /* read before any job is asked */
    int rc = last_job (outdir, last);
    qc_stall_watch_done ();
    return rc;
}

static int
last_job (const char *outdir, qc_output_last_job_t *last)
{
    /* the job's slides, from .qc-slides (its job checked below) */
    FILE *sf = open_folder_file (outdir, SLIDESFILE);
    char *sl = NULL;
    size_t cap = 0;
    unsigned long long of = 0, okey = 0;
    uint64_t nslides = 0;
    if (sf && getline (&sl, &cap, sf) > 0 && sscanf (sl, "job %llu key=%llx", &of, &okey) >= 1)
        while (getline (&sl, &cap, sf) > 0 && nslides < (uint64_t) 1 << 32)
            nslides++;
    free (sl);
    if (sf)
        fclose (sf);
    done_count_t c = {.seen = nslides ? calloc ((size_t) nslides, 1) : NULL, .n = nslides};
    job_file_t j;
    int rc = nslides && !c.seen ? -1 : scan_job_file (outdir, &j, count_done, &c);
    free (c.seen);
    if (rc != 0 || !j.job)
        return -1;
    last->job = j.job;
    last->key = j.key;
    last->delivered = j.delivered;
    last->local = strcmp (j.endpoint, "local") == 0;
    snprintf (last->endpoint, sizeof last->endpoint, "%s", j.endpoint);
    if (of == j.job) {          /* .qc-slides is this job's */
        last->slides = nslides;
        last->done = c.done;
    } else if (of && okey) {
        /* a run killed between the two files as it started job `of`: that
           job is the one going on, with its slides; .qc-job is adopted */
        last->job = of;
        last->key = okey;
        last->slides = nslides;
        last->done = 0;
        last->torn = true;
    } else
        last->slides_unknown = true;
    /* an attach writes rows under results.tsv's own header */
    char line[8192];
    FILE *t = open_folder_file (outdir, "results.tsv");
    while (t && fgets (line, sizeof line, t) && line[0] == '#' && !last->table)
        last->table = strncmp (line, "#dataset:", 9) == 0;
    if (t)
        fclose (t);
    return 0;
}

int
qc_output_adopt_job (const char *outdir, const qc_output_last_job_t *last, char *err,
                     size_t errlen)
{
    if (!outdir || !last || !last->job || !err)
        return -1;
    char *path = NULL, *tmp = NULL;
    int rc = -1;
    FILE *f = NULL;
    if (asprintf (&path, "%s/%s", outdir, JOBFILE) >= 0
        && asprintf (&tmp, "%s.tmp", path) >= 0 && (f = fopen (tmp, "w"))) {
        fchmod (fileno (f), 0600);
        fprintf (f, "job %" PRIu64 " %s key=%016" PRIx64 "\n", last->job,
                 last->endpoint[0] ? last->endpoint : "local", last->key);
        rc = fflush (f) || fsync (fileno (f)) ? -1 : 0;
        rc = fclose (f) || rc ? -1 : 0;
        rc = rc == 0 && rename (tmp, path) == 0 ? 0 : -1;
    }
    if (rc)
        snprintf (err, errlen, "cannot write %s/%s: %s", outdir, JOBFILE, strerror (errno));
    if (rc && tmp)
        unlink (tmp);
    free (tmp);
    free (path);
    return rc;
}

void
qc_output_mark_delivered (qc_output_t *o)
{
    /* not synced: a line lost to a crash only makes a rerun tell the
       broker again, which it takes as a no-op */
    if (o && o->journal) {
        fputs ("delivered\n", o->journal);
        fflush (o->journal);
    }
}
