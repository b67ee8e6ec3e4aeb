/* See output.h. */
#include "client/output.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOBFILE ".qc-job"

struct qc_output {
    char *outdir;
    FILE *tsv, *errors, *log, *journal;
    char **columns;
    size_t ncolumns;
    uint8_t *seen;            /* bitmap of written task indices */
    size_t seen_bits;
    uint64_t written;
    uint64_t job, key;        /* from .qc-job (attach) or set_job */
    zhashx_t *folders;        /* slide folder names in use */
};

static char *
path_in (const qc_output_t *o, const char *name)
{
    char *p = NULL;
    return asprintf (&p, "%s/%s", o->outdir, name) < 0 ? NULL : p;
}

static FILE *
open_in (qc_output_t *o, const char *name, const char *mode, char *err, size_t errlen)
{
    char *p = path_in (o, name);
    FILE *f = p ? fopen (p, mode) : NULL;
    if (!f)
        snprintf (err, errlen, "cannot open %s: %s", p ? p : name, strerror (errno));
    free (p);
    return f;
}

static int
mark_seen (qc_output_t *o, uint64_t idx)
{
    if (idx >= (uint64_t) 1 << 32)
        return -1;
    if (idx >= o->seen_bits) {
        size_t bits = o->seen_bits ? o->seen_bits : 1024;
        while (bits <= idx)
            bits *= 2;
        uint8_t *s = realloc (o->seen, bits / 8);
        if (!s)
            return -1;
        memset (s + o->seen_bits / 8, 0, (bits - o->seen_bits) / 8);
        o->seen = s;
        o->seen_bits = bits;
    }
    o->seen[idx / 8] |= (uint8_t) (1u << (idx % 8));
    return 0;
}

bool
qc_output_has (const qc_output_t *o, uint64_t idx)
{
    return o && idx < o->seen_bits && (o->seen[idx / 8] >> (idx % 8)) & 1;
}

uint64_t
qc_output_written (const qc_output_t *o)
{
    return o ? o->written : 0;
}

/* Column names from the "#dataset:" line of an existing results.tsv. */
static int
read_columns (qc_output_t *o, char *err, size_t errlen)
{
    char *p = path_in (o, "results.tsv");
    FILE *f = p ? fopen (p, "r") : NULL;
    free (p);
    if (!f) {
        snprintf (err, errlen, "no results.tsv in %s to attach to", o->outdir);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;
    while (getline (&line, &cap, f) > 0)
        if (strncmp (line, "#dataset:", 9) == 0) {
            line[strcspn (line, "\r\n")] = 0;
            for (char *save, *tok = strtok_r (line + 9, "\t", &save); tok;
                 tok = strtok_r (NULL, "\t", &save)) {
                char **c = realloc (o->columns, (o->ncolumns + 1) * sizeof *c);
                if (!c || !(c[o->ncolumns] = strdup (tok))) {
                    if (c) o->columns = c;
                    break;
                }
                o->columns = c;
                o->ncolumns++;
            }
            rc = o->ncolumns ? 0 : -1;
            break;
        }
    free (line);
    fclose (f);
    if (rc)
        snprintf (err, errlen, "results.tsv in %s has no #dataset: line", o->outdir);
    return rc;
}

static void
write_header (qc_output_t *o, const qc_output_config_t *cfg)
{
    char stamp[64];
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r (&ts.tv_sec, &tm);
    strftime (stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf (o->tsv, "#start_time:\t%s.%06ld\n", stamp, ts.tv_nsec / 1000);
    fprintf (o->tsv, "#pipeline:\t%s\n", cfg->pipeline ? cfg->pipeline : "");
    fprintf (o->tsv, "#outdir:\t%s\n", cfg->outdir);
    fprintf (o->tsv, "#config_file:\t%s\n", cfg->config_file ? cfg->config_file : "default");
    fprintf (o->tsv, "#command_line_args:\t%s\n", cfg->command_line ? cfg->command_line : "");
    fprintf (o->tsv, "#dataset:");
    for (size_t i = 0; i < o->ncolumns; i++)
        fprintf (o->tsv, "%s%s", i ? "\t" : "", o->columns[i]);
    fputc ('\n', o->tsv);
    fflush (o->tsv);
}

/* A result interrupted half way (a crash between its "begin" and its
 * "done" line in .qc-job): results.tsv and error.log go back to their
 * sizes before it, so writing it again leaves no duplicate row. */
static void
cut_back (qc_output_t *o, long long tsv, long long errors)
{
    static const char *names[] = {"results.tsv", "error.log"};
    long long sizes[] = {tsv, errors};
    for (int i = 0; i < 2; i++) {
        char *p = path_in (o, names[i]);
        struct stat st;
        if (p && sizes[i] >= 0 && stat (p, &st) == 0 && st.st_size > sizes[i]
            && truncate (p, (off_t) sizes[i]))
            fprintf (stderr, "qc-submit: cannot cut %s back: %s\n", p, strerror (errno));
        free (p);
    }
}

/* Loads the indices an earlier run already wrote (lines after the first
 * of .qc-job). */
static void
read_journal (qc_output_t *o)
{
    char *p = path_in (o, JOBFILE);
    FILE *f = p ? fopen (p, "r") : NULL;
    free (p);
    if (!f)
        return;
    char line[8192];
    unsigned long long open_idx = 0;
    long long open_tsv = -1, open_err = -1;
    bool open = false;
    while (fgets (line, sizeof line, f)) {
        unsigned long long idx;
        long long tsv, errs;
        const char *k;
        if (sscanf (line, "begin %llu %lld %lld", &idx, &tsv, &errs) == 3) {
            open = true;
            open_idx = idx;
            open_tsv = tsv;
            open_err = errs;
        } else if (sscanf (line, "done %llu", &idx) == 1) {
            if (open && idx == open_idx)
                open = false;
            if (!qc_output_has (o, idx) && mark_seen (o, idx) == 0)
                o->written++;
        }
        else if (sscanf (line, "job %llu", &idx) == 1) {
            o->job = idx;
            o->key = (k = strstr (line, " key=")) ? strtoull (k + 5, NULL, 16) : 0;
        }
    }
    fclose (f);
    if (open)
        cut_back (o, open_tsv, open_err);
}

qc_output_t *
qc_output_open (const qc_output_config_t *cfg, bool attach, char *err,
                size_t errlen)
{
    if (!cfg || !cfg->outdir || !err)
        return NULL;
    if (mkdir (cfg->outdir, 0777) && errno != EEXIST) {
        snprintf (err, errlen, "cannot create %s: %s", cfg->outdir, strerror (errno));
        return NULL;
    }
    qc_output_t *o = calloc (1, sizeof *o);
    if (!o || !(o->outdir = strdup (cfg->outdir)) || !(o->folders = zhashx_new ())) {
        snprintf (err, errlen, "out of memory");
        qc_output_close (&o);
        return NULL;
    }
    if (attach) {
        if (read_columns (o, err, errlen)) {
            qc_output_close (&o);
            return NULL;
        }
        read_journal (o);
    } else {
        o->columns = calloc (cfg->ncolumns ? cfg->ncolumns : 1, sizeof *o->columns);
        for (size_t i = 0; o->columns && i < cfg->ncolumns; i++, o->ncolumns++)
            if (!(o->columns[i] = strdup (cfg->columns[i])))
                break;
        if (!o->columns || o->ncolumns != cfg->ncolumns) {
            snprintf (err, errlen, "out of memory");
            qc_output_close (&o);
            return NULL;
        }
    }
    const char *mode = attach ? "a" : "w";
    if (!(o->tsv = open_in (o, "results.tsv", mode, err, errlen))
        || !(o->errors = open_in (o, "error.log", mode, err, errlen))
        || !(o->log = open_in (o, "qc.log", mode, err, errlen))
        || !(o->journal = open_in (o, JOBFILE, mode, err, errlen))) {
        qc_output_close (&o);
        return NULL;
    }
    if (!attach)
        write_header (o, cfg);
    return o;
}

void
qc_output_close (qc_output_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_output_t *o = *self_p;
    if (o->tsv) fclose (o->tsv);
    if (o->errors) fclose (o->errors);
    if (o->log) fclose (o->log);
    if (o->journal) fclose (o->journal);
    for (size_t i = 0; i < o->ncolumns; i++)
        free (o->columns[i]);
    free (o->columns);
    free (o->seen);
    zhashx_destroy (&o->folders);
    free (o->outdir);
    free (o);
    *self_p = NULL;
}

int
qc_output_set_job (qc_output_t *o, uint64_t job, uint64_t key, const char *broker)
{
    if (!o)
        return -1;
    o->job = job;
    o->key = key;
    fprintf (o->journal, "job %" PRIu64 " %s key=%016" PRIx64 "\n", job,
             broker ? broker : "local", key);
    return fflush (o->journal);
}

uint64_t
qc_output_job (const qc_output_t *o, uint64_t *key)
{
    if (key)
        *key = o ? o->key : 0;
    return o ? o->job : 0;
}

int
qc_output_read_job (const char *outdir, uint64_t *job, uint64_t *written)
{
    char *p = NULL;
    if (!outdir || asprintf (&p, "%s/%s", outdir, JOBFILE) < 0)
        return -1;
    FILE *f = fopen (p, "r");
    free (p);
    if (!f)
        return -1;
    char line[512];
    int rc = -1;
    *written = 0;
    while (fgets (line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf (line, "job %llu", &v) == 1) {
            *job = v;
            rc = 0;
        } else if (sscanf (line, "done %llu", &v) == 1)
            (*written)++;
    }
    fclose (f);
    return rc;
}

static const char *
base_name (const char *path)
{
    const char *s = strrchr (path, '/');
    return s ? s + 1 : path;
}

/* A TSV cell: tabs and line breaks would break the table. */
static void
put_cell (FILE *f, const char *v)
{
    for (; v && *v; v++)
        fputc (*v == '\t' || *v == '\n' || *v == '\r' ? ' ' : *v, f);
}

/* Slide folder name: the file name, made unique within the job. */
static char *
folder_for (qc_output_t *o, const char *name, uint64_t idx)
{
    char *folder = NULL;
    if (!zhashx_lookup (o->folders, name))
        folder = strdup (name);
    else if (asprintf (&folder, "%s-%" PRIu64, name, idx) < 0)
        folder = NULL;
    if (folder)
        zhashx_insert (o->folders, folder, (void *) 1);
    return folder;
}

static int
write_files (qc_output_t *o, const char *name, const qc_result_t *r,
             uint64_t idx, char *err, size_t errlen)
{
    if (!r->nfiles)
        return 0;
    char *folder = folder_for (o, name, idx);
    char *dir = folder ? path_in (o, folder) : NULL;
    free (folder);
    if (!dir || (mkdir (dir, 0777) && errno != EEXIST)) {
        snprintf (err, errlen, "cannot create folder for %s: %s", name, strerror (errno));
        free (dir);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < r->nfiles && rc == 0; i++) {
        char *p = NULL;
        if (asprintf (&p, "%s/%s%s", dir, name, r->files[i].name) < 0) {
            rc = -1;
            break;
        }
        FILE *f = fopen (p, "wb");
        if (!f || fwrite (r->files[i].data, 1, r->files[i].size, f) != r->files[i].size) {
            snprintf (err, errlen, "cannot write %s: %s", p, strerror (errno));
            rc = -1;
        }
        if (f && fclose (f))
            rc = -1;
        free (p);
    }
    free (dir);
    return rc;
}

int
qc_output_result (qc_output_t *o, const qc_msg_t *m, char *err, size_t errlen)
{
    if (!o || !m || !m->result || !err)
        return -1;
    if (qc_output_has (o, m->idx))
        return 0;
    const qc_result_t *r = m->result;
    const char *name = base_name (m->path ? m->path : "?");
    int rc = 0;
    /* where the tables end before this result: a crash before its
     * "done" line cuts them back there (read_journal) */
    struct stat ts, es;
    if (fstat (fileno (o->tsv), &ts) || fstat (fileno (o->errors), &es)) {
        snprintf (err, errlen, "cannot read the output files' sizes: %s", strerror (errno));
        return -1;
    }
    fprintf (o->journal, "begin %" PRIu64 " %lld %lld\n", m->idx, (long long) ts.st_size,
             (long long) es.st_size);
    fflush (o->journal);
    if (r->ok) {
        for (size_t i = 0; i < o->ncolumns; i++) {
            if (i)
                fputc ('\t', o->tsv);
            const char *col = o->columns[i];
            if (strcmp (col, "warnings") == 0) {
                /* HistoQC's list starts with an empty entry: "|a|b" */
                if (r->warnings && *r->warnings) {
                    fputc ('|', o->tsv);
                    put_cell (o->tsv, r->warnings);
                }
                continue;
            }
            const char *v = strcmp (col, "filename") == 0 && !qc_result_get (r, col)
                                ? name
                                : qc_result_get (r, col);
            put_cell (o->tsv, v);
        }
        fputc ('\n', o->tsv);
        if (fflush (o->tsv)) {
            snprintf (err, errlen, "cannot write results.tsv: %s", strerror (errno));
            return -1;
        }
    } else {
        put_cell (o->errors, m->path ? m->path : name);
        fputc ('\t', o->errors);
        put_cell (o->errors, r->error ? r->error : "failed");
        fputc ('\n', o->errors);
        fflush (o->errors);
    }
    rc = write_files (o, name, r, m->idx, err, errlen);
    if (rc)
        return rc;       /* not "done": a reattach writes it again, whole */
    /* journal last: a crash before this line means "write it again" */
    fprintf (o->journal, "done %" PRIu64 "\n", m->idx);
    fflush (o->journal);
    mark_seen (o, m->idx);
    o->written++;
    return 0;
}

void
qc_output_log (qc_output_t *o, const qc_msg_t *m)
{
    if (!o || !m || !m->message)
        return;
    time_t secs = (time_t) m->time;
    struct tm tm;
    char stamp[32];
    localtime_r (&secs, &tm);
    strftime (stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    static const char *names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    fprintf (o->log, "%s\t%s\t%s\t%s\t%s\t", stamp, names[m->level & 3],
             m->worker ? m->worker : "", m->slide ? m->slide : "",
             m->module ? m->module : "");
    put_cell (o->log, m->message);
    fputc ('\n', o->log);
    fflush (o->log);
}
