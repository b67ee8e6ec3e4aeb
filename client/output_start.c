/* The job's start in the output folder (qc_output_set_job, when the
 * broker accepts it, or a run with nothing to run): the config's
 * identity into .qc-config, the job's slides into .qc-slides, its line
 * into .qc-job, each small file written whole and only when its bytes
 * change. Reading them back is output_job.c's. */
#include "client/output_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/escape.h"
#include "shared/cli.h"
#include "shared/err.h"

/* Whether the file at path holds exactly the len bytes of text. */
static bool
holds_already (const char *path, const char *text, size_t len)
{
    struct stat st;
    if (!path || !text || stat (path, &st) != 0 || (size_t) st.st_size != len)
        return false;
    FILE *f = fopen (path, "rb");
    if (!f)
        return false;
    bool same = true;
    char buf[8192];
    for (size_t at = 0; same && at < len;) {
        size_t n = fread (buf, 1, sizeof buf, f);
        same = n > 0 && at + n <= len && memcmp (buf, text + at, n) == 0;
        at += n;
    }
    fclose (f);
    return same;
}

/* Writes a small file whole: through NAME.tmp, on the disk, then
 * renamed (a crash leaves the old file or the new, never an empty one);
 * not at all when it holds those bytes already (a rerun with nothing to
 * run, into a folder archived read-only, changes nothing and so needs no
 * write). private: this user's alone (0600), as an older build's copy
 * is made where it can be. */
static int
write_atomically (qc_output_t *o, const char *name, int (*fill) (qc_output_t *, FILE *, uint64_t),
                  uint64_t job, bool private)
{
    /* rendered once, in memory: compared with what is there, then
       written (a cohort's .qc-slides can be megabytes) */
    char *final = path_in (o, name), *tmp = NULL, *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream (&text, &len);
    int rc = mem ? fill (o, mem, job) : -1;
    if (mem && fclose (mem))
        rc = -1;
    if (rc != 0 || !final) {
        free (text);
        free (final);
        errno = ENOMEM;
        return -1;
    }
    if (holds_already (final, text, len)) {
        /* an older build's 0644 copy is made private too, where it can be */
        if (private)
            (void) chmod (final, 0600);
        free (text);
        free (final);
        return 0;
    }
    FILE *f = asprintf (&tmp, "%s.tmp", final) >= 0 ? fopen (tmp, "w") : NULL;
    /* .qc-slides holds the job's key, which fetches and cancels the job
       (and claims it on a broker secured later): this user's alone, as
       .qc-job (it was 0644: another user copied the key and claimed a
       job, a hospital admin's probe) */
    if (f && private && fchmod (fileno (f), 0600) != 0) {
        fclose (f);
        f = NULL;
    }
    rc = f && fwrite (text, 1, len, f) == len ? 0 : -1;
    if (f && (fflush (f) || fsync (fileno (f))))
        rc = -1;
    if (f && fclose (f))
        rc = -1;
    if (rc == 0 && rename (tmp, final) != 0)
        rc = -1;
    int saved = errno;          /* the caller names this cause, not unlink's */
    if (rc && tmp)
        unlink (tmp);
    free (tmp);
    free (text);
    free (final);
    errno = saved;
    return rc;
}

static int
fill_config (qc_output_t *o, FILE *f, uint64_t job)
{
    (void) job;
    fprintf (f, "sha256 %s\nconfig_file ", o->config_id);
    qc_escape_put (f, o->config_file);
    fprintf (f, "\n%s", o->config_text);
    return ferror (f) ? -1 : 0;
}

/* "job N key=K": the key too, so that a run killed before .qc-job names
 * this job can be finished by the next (qc_output_adopt_job) */
static int
fill_slides (qc_output_t *o, FILE *f, uint64_t job)
{
    fprintf (f, "job %" PRIu64 " key=%016" PRIx64 "\n", job, o->key);
    for (size_t i = 0; i < o->nslides; i++) {
        qc_escape_put (f, o->slides[i].name);
        fputc ('\t', f);
        qc_escape_put (f, o->slides[i].path);
        fputc ('\n', f);
    }
    return ferror (f) ? -1 : 0;
}

/* The N that qc_records_rewrite will keep the folder's name as (the
 * first NAME.N free), 0 when there is no NAME to keep. */
static int
next_kept (qc_output_t *o, const char *name)
{
    char *path = path_in (o, name);
    int n = 0;
    if (path && access (path, F_OK) == 0)
        for (int i = 1; i < 10000 && n == 0; i++) {
            char *keep = NULL;
            if (asprintf (&keep, "%s.%d", path, i) < 0)
                break;
            if (access (keep, F_OK) != 0)
                n = i;
            free (keep);
        }
    free (path);
    return n;
}

/* .qc-config linked as .qc-config.N (none there: nothing to keep; one
 * of that name already there is left as it is). */
static int
keep_config (qc_output_t *o, int n)
{
    char *path = path_in (o, CONFIGFILE), *keep = NULL;
    int rc = 0;
    if (!path || asprintf (&keep, "%s.%d", path, n) < 0) {
        keep = NULL;
        errno = ENOMEM;
        rc = -1;
    } else if (access (path, F_OK) == 0 && access (keep, F_OK) != 0
               && link (path, keep) != 0)
        rc = -1;
    free (keep);
    free (path);
    return rc;
}

/* s's lines of .qc-stamps to f (its own when stamped, its inputs'):
 * 0, or -1 on a write error */
static int
put_stamps (FILE *f, const slide_t *s)
{
    if (s->stamped && qc_stamps_put (f, s->path, &s->stamp) < 0)
        return -1;
    for (size_t i = 0; i < s->ninputs; i++)
        if (qc_input_stamps_put (f, s->path, s->inputs[i].file, &s->inputs[i].stamp) < 0)
            return -1;
    return 0;
}

/* The stamps of the job's local slides and of the files beside them,
 * as they were when planned, to .qc-stamps (client/output_stamps.h):
 * written before any result can come, so that every record the job
 * writes has the stamp of the file it was sent as (a file replaced after
 * this gets a later run: the safe way). */
static int
append_stamps (qc_output_t *o, bool job, char *err, size_t errlen)
{
    size_t n = o->baseline ? zlistx_size (o->baseline) : 0;
    for (size_t i = 0; job && i < o->nslides; i++)
        n += o->slides[i].stamped || o->slides[i].ninputs;
    if (n == 0)
        return 0;
    FILE *f = open_in (o, QC_STAMPS_FILE, "a", err, errlen);
    if (!f)
        return -1;
    int rc = 0;
    for (size_t i = 0; job && rc == 0 && i < o->nslides; i++)
        rc = put_stamps (f, &o->slides[i]);
    /* skipped slides an older build recorded with no stamp, and files
       beside skipped slides with none (a config that began reading
       them): as they are now, so that a change from here on is told */
    for (slide_t *s = o->baseline ? zlistx_first (o->baseline) : NULL; s && rc == 0;
         s = zlistx_next (o->baseline))
        rc = put_stamps (f, s);
    if (fclose (f) != 0)
        rc = -1;
    if (rc)
        snprintf (err, errlen, "cannot write %s/%s: %s", o->outdir, QC_STAMPS_FILE,
                  strerror (errno));
    return rc;
}

int
qc_output_set_job (qc_output_t *o, uint64_t job, uint64_t key, const char *broker,
                   char *err, size_t errlen)
{
    if (!o || !err)
        return -1;
    /* results.tsv started afresh (-f with another config) keeps the old
       one as results.tsv.N: its config (.qc-config, about to be replaced
       by this one's) is kept beside it as .qc-config.N, else the old
       rows' config text would be lost to an auditor */
    int keep_n = o->new_header ? next_kept (o, "results.tsv") : 0;
    if ((zhashx_size (o->drop) || zhashx_size (o->drop_names) || o->new_header
         || o->records.damaged)
        && qc_records_rewrite (o->outdir, o->drop, o->drop_names,
                               o->new_header ? o->header : NULL,
                               err, errlen))
        return -1;
    if (keep_n > 0 && keep_config (o, keep_n) != 0) {
        snprintf (err, errlen, "cannot keep %s/%s as %s.%d: %s", o->outdir, CONFIGFILE,
                  CONFIGFILE, keep_n, strerror (errno));
        return -1;
    }
    /* a folder moved or renamed since its results.tsv was begun: its
       header says where it is now (HistoQC's UI goes by it) */
    char *real = o->new_header ? NULL : realpath (o->outdir, NULL), *was = NULL;
    int moved = real ? qc_records_set_outdir (o->outdir, real, &was, err, errlen) : 0;
    if (moved == 0 && was
        && qc_output_plan_note (o, "INFO", "results.tsv's #outdir said %s, and now %s (the "
                                "folder was moved or renamed: HistoQC's UI finds a slide's "
                                "images by it)", was, real) != 0)
        moved = -1;
    free (real);
    free (was);
    if (moved != 0)
        return -1;
    if (output_open_files (o, err, errlen))
        return -1;
    if (o->config_text && !o->config_recorded
        && write_atomically (o, CONFIGFILE, fill_config, job, false) != 0) {
        snprintf (err, errlen, "cannot write %s/%s: %s", o->outdir, CONFIGFILE,
                  strerror (errno));
        return -1;
    }
    struct stat st;
    if (o->header && fstat (fileno (o->tsv), &st) == 0 && st.st_size == 0)
        fputs (o->header, o->tsv);
    if (fflush (o->tsv)) {
        snprintf (err, errlen, "cannot write %s/results.tsv: %s", o->outdir, strerror (errno));
        return -1;
    }
    for (char *l = zlistx_first (o->unread); l; l = zlistx_next (o->unread))
        fputs (l, o->errors);
    if (fflush (o->errors)) {
        snprintf (err, errlen, "cannot write %s/error.log: %s", o->outdir, strerror (errno));
        return -1;
    }
    /* the run's own provenance, for an auditor reading qc.log alone: a
       rerun appends to it, and each run's rows follow its line (the
       workers' lines name their builds; the config text of each sha256
       is .qc-config's, or .qc-config.N's once -f started afresh) */
    /* qc.log's and results.tsv's times are this machine's local time, as
       HistoQC writes them: the offset from UTC is said once a run */
    char zone[16] = "";
    time_t now = time (NULL);
    struct tm tm;
    if (!localtime_r (&now, &tm) || !strftime (zone, sizeof zone, "%z", &tm))
        snprintf (zone, sizeof zone, "?");
    /* a config of the folder's values laid out otherwise is not written
       (its record kept): the sha256 whose text an auditor finds */
    char same[160] = "";
    if (o->config_text && *o->recorded_id)
        snprintf (same, sizeof same, ", the same values as %s's, sha256 %s", CONFIGFILE,
                  o->recorded_id);
    qc_output_note (o, "INFO", "qc-submit %s: job %" PRIu64 ", %zu slide%s to send, %zu not "
                    "readable here (build %s; times local, UTC%s; config %s, sha256 %s%s; "
                    "command line: %s)",
                    job ? "started" : "had nothing to run",
                    job, job ? o->nslides : 0, qc_plural (job ? o->nslides : 0),
                    zlistx_size (o->unread), qc_version_full (), zone,
                    o->config_file ? o->config_file : "?",
                    o->config_text && *o->config_id ? o->config_id : "?", same,
                    o->command_line ? o->command_line : "");
    for (char *l = o->plan_notes ? zlistx_first (o->plan_notes) : NULL; l;
         l = zlistx_next (o->plan_notes)) {
        char *tab = strchr (l, '\t');
        if (tab) {
            *tab = 0;
            qc_output_note (o, l, "%s", tab + 1);
            *tab = '\t';
        }
    }
    if (job == 0)
        return append_stamps (o, false, err, errlen);
    o->key = key;               /* .qc-slides names it too */
    if (write_atomically (o, SLIDESFILE, fill_slides, job, true) != 0) {
        snprintf (err, errlen, "cannot write %s/%s: %s", o->outdir, SLIDESFILE,
                  strerror (errno));
        return -1;
    }
    if (append_stamps (o, true, err, errlen) != 0)
        return -1;
    if (!(o->journal = open_in (o, JOBFILE, "w", err, errlen)))
        return -1;
    o->job = job;
    o->key = key;
    fprintf (o->journal, "job %" PRIu64 " %s key=%016" PRIx64 "\n", job,
             broker ? broker : "local", key);
    return fflush (o->journal) ? -1 : 0;
}

uint64_t
qc_output_job (const qc_output_t *o, uint64_t *key)
{
    if (key)
        *key = o ? o->key : 0;
    return o ? o->job : 0;
}
