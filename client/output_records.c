/* See output_records.h. */
#include "client/output_records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/cohort.h"
#include "client/escape.h"
#include "client/stall_watch.h"
#include "shared/url.h"
#include "shared/result.h"

static char *
in_dir (const char *outdir, const char *name)
{
    char *p = NULL;
    return asprintf (&p, "%s/%s", outdir, name) < 0 ? NULL : p;
}

/* Opens OUTDIR/name to read: 1 opened, 0 not there, -1 (err) else. */
static int
open_record (const char *outdir, const char *name, FILE **f, char *err, size_t errlen)
{
    char *path = in_dir (outdir, name);
    *f = path ? fopen (path, "r") : NULL;
    int e = errno;
    free (path);
    if (*f)
        return 1;
    if (e == ENOENT)
        return 0;
    snprintf (err, errlen, "cannot read %s/%s: %s", outdir, name, strerror (e));
    return -1;
}

static int
column (const qc_records_t *r, const char *name)
{
    for (size_t i = 0; i < r->ncolumns; i++)
        if (strcmp (r->columns[i], name) == 0)
            return (int) i;
    return -1;
}

/* Cell col of a tab-separated line, copied; NULL when absent. */
static char *
cell_dup (const char *line, int col)
{
    const char *p = line;
    for (int i = 0; i < col && p; i++)
        if ((p = strchr (p, '\t')))
            p++;
    return p ? strndup (p, strcspn (p, "\t\r\n")) : NULL;
}

/* The cells of a line (up to its line break). */
static size_t
cells_of (const char *line)
{
    size_t n = 1;
    for (const char *c = line; *c && *c != '\n' && *c != '\r'; c++)
        n += *c == '\t';
    return n;
}

/* Whether a results.tsv line is a row whose cells are not its header's
 * columns: a row a lab's script rewrote without its last line break, so
 * that the next row was glued to it (129 cells of 65), or one cut short.
 * Taken for a record, its first cell named a slide as done whose
 * original_path cell was two paths run together: both slides ran again
 * under new names, with no word, and each rerun added rows twice. */
static bool
is_damaged (const char *line, const qc_records_t *cols)
{
    if (!cols->ncolumns || !line[0] || line[0] == '#' || line[0] == '\n' || line[0] == '\r')
        return false;
    size_t n = cells_of (line);
    /* HistoQC's layout ends in warnings: a spreadsheet that saved it
       may drop an empty last cell, which loses nothing */
    return n != cols->ncolumns
           && !(n + 1 == cols->ncolumns
                && strcmp (cols->columns[cols->ncolumns - 1], "warnings") == 0);
}

/* Whether a results.tsv line (of a file whose #dataset: line gave cols,
 * original_path at pcol) is a slide's row. A line starting with '#' is
 * one when it has every column and an original_path: an older build
 * named a slide "#x.svs" as its file ("_x.svs" now), and HistoQC's UI
 * reads every line after #dataset: as a row; taken for a comment, that
 * slide ran again and had two rows. */
static bool
is_row (const char *line, const qc_records_t *cols, int pcol)
{
    if (!*line)
        return false;
    if (line[0] != '#')
        return true;
    if (pcol < 0 || cols->ncolumns == 0 || strncmp (line, "#dataset:", 9) == 0)
        return false;
    char *path = cells_of (line) == cols->ncolumns ? cell_dup (line, pcol) : NULL;
    bool row = path && *path;
    free (path);
    return row;
}

/* A slide as recorded, a URL in its one spelling (qc_url_canonical): a
 * folder written before URLs were spelt so, or from a URL given as
 * HTTP://Host/a.svs, knows the slide the cohort now gives as
 * http://host/a.svs. Takes s (malloc'd); NULL stays NULL. */
static char *
canonical (char *s)
{
    char c[QC_URL_MAX + 1];   /* a longer spelling stays as written */
    if (!s || !qc_url_is_remote (s) || qc_url_canonical (s, c, sizeof c) != 0
        || strcmp (c, s) == 0)
        return s;
    char *d = strdup (c);
    if (!d)
        return s;
    free (s);
    return d;
}

static void
set (zhashx_t *h, const char *key, qc_rec_t rec)
{
    /* a failure recorded after a pass (or the reverse) is the later word */
    zhashx_update (h, key, (void *) (intptr_t) rec);
}

static int
read_columns (qc_records_t *r, const char *line)
{
    for (const char *p = line; p;) {
        const char *tab = strchr (p, '\t');
        char *c = strndup (p, tab ? (size_t) (tab - p) : strlen (p));
        char **grown = c ? realloc (r->columns, (r->ncolumns + 1) * sizeof *grown) : NULL;
        if (!grown) {
            free (c);
            return -1;
        }
        r->columns = grown;
        r->columns[r->ncolumns++] = c;
        p = tab ? tab + 1 : NULL;
    }
    return 0;
}

static int
read_tsv (qc_records_t *r, const char *outdir, qc_names_t *names, char *err,
          size_t errlen)
{
    FILE *f;
    int o = open_record (outdir, "results.tsv", &f, err, errlen);
    if (o <= 0)
        return o;
    char *line = NULL;
    size_t cap = 0;
    int fcol = -1, pcol = -1, rc = 0;
    size_t lineno = 0;
    while (rc == 0 && getline (&line, &cap, f) > 0) {
        lineno++;
        line[strcspn (line, "\r\n")] = '\0';
        if (strncmp (line, "#config_file:", 13) == 0 && !r->config_file) {
            const char *v = line + 13 + strspn (line + 13, " \t");
            if (!(r->config_file = qc_unescape_dup (v)) && !(r->config_file = strdup (v)))
                rc = -1;
            continue;
        }
        if (strncmp (line, "#dataset:", 9) == 0 && r->ncolumns == 0) {
            rc = read_columns (r, line + 9);
            fcol = column (r, "filename");
            pcol = column (r, "original_path");
            continue;
        }
        if (!is_row (line, r, pcol))
            continue;
        if (is_damaged (line, r)) {
            if (r->damaged++ == 0) {
                r->damaged_line = lineno;
                r->damaged_cells = cells_of (line);
            }
            continue;
        }
        r->rows = true;
        char *name = cell_dup (line, fcol >= 0 ? fcol : 0);
        char *esc = pcol >= 0 ? cell_dup (line, pcol) : NULL;
        char *slide = esc && *esc ? canonical (qc_unescape_dup (esc)) : NULL;
        if (slide)
            set (r->by_path, slide, QC_REC_PASSED);
        else if (name && *name)
            zhashx_update (r->by_name, name, (void *) 1);
        if (name && *name && qc_names_claim (names, name, slide) != 0)
            rc = -1;
        free (name);
        free (esc);
        free (slide);
    }
    free (line);
    fclose (f);
    if (rc && !*err)
        snprintf (err, errlen, "out of memory reading %s/results.tsv", outdir);
    return rc;
}

/* A reason that ends "(N attempts)" (or "(1 attempt)"): an older build's failure after every
 * retry (a server's 5xx, a network that did not answer), written before
 * such reasons were marked for a rerun: they may pass now, as the marked
 * ones (an upgrade day's review: such slides stood failed for good) */
static bool
after_retries (const char *reason)
{
    size_t n = reason ? strlen (reason) : 0;
    size_t k = n > 10 && strcmp (reason + n - 10, " attempts)") == 0 ? 10
               : n > 9 && strcmp (reason + n - 9, " attempt)") == 0 ? 9 : 0;
    if (k == 0)
        return false;
    size_t d = n - k;
    while (d > 0 && reason[d - 1] >= '0' && reason[d - 1] <= '9')
        d--;
    return d < n - k && d > 0 && reason[d - 1] == '(';
}

static qc_rec_t
failure_kind (const char *reason)
{
    if (after_retries (reason))
        return QC_REC_RETRY;
    if (reason && (strncmp (reason, QC_RECORDS_UNREAD_PREFIX,
                            strlen (QC_RECORDS_UNREAD_PREFIX)) == 0
                   || strcmp (reason, QC_RESULT_CANCELLED) == 0
                   || strstr (reason, QC_RESULT_RETRY_MARK)
                   /* a worker's: the rerun's qc-submit checks the config
                      itself first, so a worker that refused it then ran
                      another build (one not yet upgraded) */
                   || strncmp (reason, QC_RESULT_CONFIG_ERROR,
                               strlen (QC_RESULT_CONFIG_ERROR)) == 0))
        return QC_REC_RETRY;
    return QC_REC_FAILED;
}

static int
read_errors (qc_records_t *r, const char *outdir, char *err, size_t errlen)
{
    FILE *f;
    int o = open_record (outdir, "error.log", &f, err, errlen);
    if (o <= 0)
        return o;
    char *line = NULL;
    size_t cap = 0;
    while (getline (&line, &cap, f) > 0) {
        line[strcspn (line, "\r\n")] = '\0';
        char *tab = strchr (line, '\t');
        if (!tab || tab == line)
            continue;
        *tab = '\0';
        char *slide = canonical (qc_unescape_dup (line)), *reason = qc_unescape_dup (tab + 1);
        if (slide)
            set (r->by_path, slide, failure_kind (reason));
        /* the last line of a slide's says (a later run's replaces) */
        if (slide && qc_result_cancelled (reason))
            zhashx_update (r->cancelled, slide, (void *) 1);
        else if (slide)
            zhashx_delete (r->cancelled, slide);
        free (slide);
        free (reason);
    }
    free (line);
    fclose (f);
    return 0;
}

int
qc_records_read (qc_records_t *r, const char *outdir, qc_names_t *names,
                 char *err, size_t errlen)
{
    memset (r, 0, sizeof *r);
    r->by_path = zhashx_new ();
    r->by_name = zhashx_new ();
    r->cancelled = zhashx_new ();
    if (!r->by_path || !r->by_name || !r->cancelled) {
        snprintf (err, errlen, "out of memory");
        qc_records_free (r);
        return -1;
    }
    err[0] = '\0';
    if (read_tsv (r, outdir, names, err, errlen) || read_errors (r, outdir, err, errlen)) {
        qc_records_free (r);
        return -1;
    }
    return 0;
}

void
qc_records_free (qc_records_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ncolumns; i++)
        free (r->columns[i]);
    free (r->columns);
    free (r->config_file);
    zhashx_destroy (&r->by_path);
    zhashx_destroy (&r->by_name);
    zhashx_destroy (&r->cancelled);
    zhashx_destroy (&r->by_file);
    memset (r, 0, sizeof *r);
}

qc_rec_t
qc_records_of (const qc_records_t *r, const char *path)
{
    if (!r || !path || !r->by_path)
        return QC_REC_NONE;
    qc_rec_t rec = (qc_rec_t) (intptr_t) zhashx_lookup (r->by_path, path);
    if (rec != QC_REC_NONE)
        return rec;
    const char *slash = strrchr (path, '/');
    return zhashx_lookup (r->by_name, slash ? slash + 1 : path) ? QC_REC_PASSED
                                                                 : QC_REC_NONE;
}

const char *
qc_records_named_only (const qc_records_t *r, const char *path)
{
    if (!r || !path || !r->by_path || !r->by_name || zhashx_lookup (r->by_path, path))
        return NULL;
    const char *slash = strrchr (path, '/');
    const char *name = slash ? slash + 1 : path;
    return *name && zhashx_lookup (r->by_name, name) ? name : NULL;
}

bool
qc_records_cancelled (const qc_records_t *r, const char *path)
{
    return r && path && r->cancelled && r->by_path
           && (qc_rec_t) (intptr_t) zhashx_lookup (r->by_path, path) == QC_REC_RETRY
           && zhashx_lookup (r->cancelled, path);
}

qc_rec_t
qc_records_of_file (qc_records_t *r, const char *path, const char **as)
{
    if (as)
        *as = path;
    qc_rec_t rec = qc_records_of (r, path);
    if (rec != QC_REC_NONE || !r || !path || !r->by_path || path[0] != '/')
        return rec;
    if (!r->by_file) {
        /* once: each recorded path with its folder resolved */
        if (!(r->by_file = zhashx_new ()))
            return rec;
        zhashx_set_destructor (r->by_file, (zhashx_destructor_fn *) zstr_free);
        zhashx_set_duplicator (r->by_file, (zhashx_duplicator_fn *) strdup);
        zlistx_t *paths = zhashx_keys (r->by_path);
        for (const char *p = paths ? zlistx_first (paths) : NULL; p; p = zlistx_next (paths)) {
            /* realpath blocks on a recorded slide's hard-mounted share
               whose server is gone: said, not a silent hang */
            if (!qc_url_is_remote (p))
                qc_stall_watch_at (p);
            char *key = qc_cohort_folder_resolved (p);
            qc_stall_watch_at (NULL);
            if (key)
                zhashx_insert (r->by_file, key, (void *) p);
            free (key);
        }
        zlistx_destroy (&paths);
    }
    char *key = qc_cohort_folder_resolved (path);
    const char *other = key ? zhashx_lookup (r->by_file, key) : NULL;
    free (key);
    if (!other)
        return rec;
    if (as)
        *as = other;
    return qc_records_of (r, other);
}

/* The path of the slide a line records (results.tsv: pcol of cols,
 * else none; error.log: the first field), malloc'd, or NULL. */
static char *
line_path (const char *line, const qc_records_t *cols, int pcol)
{
    if (pcol < 0 || (line[0] == '#' && !is_row (line, cols, pcol)))
        return NULL;
    char *esc = cell_dup (line, pcol);
    /* in the spelling the records were read in: a URL recorded as
       HTTP://Host/a.svs is dropped as http://host/a.svs */
    char *p = esc && *esc ? canonical (qc_unescape_dup (esc)) : NULL;
    free (esc);
    return p;
}

/* The new file written in place of in keeps in's permissions (a lab's
 * group-writable folder), not what the umask gives a new one. */
static int
keep_mode (FILE *in, FILE *out)
{
    struct stat st;
    if (fstat (fileno (in), &st) != 0)
        return -1;
    return fchmod (fileno (out), st.st_mode & 07777);
}

/* Rewrites one file through NAME.tmp; the old one kept as NAME.N when
 * a record to keep went, or the header changed. header not NULL: the
 * file starts afresh, with header and none of its lines. */
static int
rewrite_one (const char *outdir, const char *name, bool is_tsv, zhashx_t *drop,
             zhashx_t *drop_names, const char *header, char *err, size_t errlen)
{
    char *path = in_dir (outdir, name), *tmp = NULL;
    FILE *in = path ? fopen (path, "r") : NULL;
    if (!in) {
        free (path);
        return 0;               /* nothing to rewrite */
    }
    FILE *out = asprintf (&tmp, "%s.tmp", path) < 0 ? NULL : fopen (tmp, "w");
    int rc = out && keep_mode (in, out) == 0 ? 0 : -1, pcol = is_tsv ? -1 : 0, fcol = 0;
    bool changed = header && *header, kept_old = changed;
    if (out && header)
        fputs (header, out);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    qc_records_t cols = {0};
    while (rc == 0 && (len = getline (&line, &cap, in)) > 0) {
        if (is_tsv && strncmp (line, "#dataset:", 9) == 0 && cols.ncolumns == 0) {
            char *copy = strndup (line + 9, strcspn (line + 9, "\r\n"));
            if (!copy || read_columns (&cols, copy))
                rc = -1;
            free (copy);
            pcol = column (&cols, "original_path");
            fcol = column (&cols, "filename");
            fcol = fcol < 0 ? 0 : fcol;
        }
        if (header || (is_tsv && is_damaged (line, &cols))) {
            changed = kept_old = true;  /* a new header: old rows kept in NAME.N */
            continue;
        }
        char *slide = line_path (line, &cols, pcol);
        void *how = slide && drop ? zhashx_lookup (drop, slide) : NULL;
        /* a row that names its slide by file name alone (HistoQC's) */
        if (!slide && is_tsv && drop_names && zhashx_size (drop_names) && cols.ncolumns
            && is_row (line, &cols, pcol)) {
            char *row = strndup (line, strcspn (line, "\r\n"));
            char *file = row ? cell_dup (row, fcol) : NULL;
            how = file && *file ? zhashx_lookup (drop_names, file) : NULL;
            free (file);
            free (row);
        }
        if (how) {
            changed = true;
            kept_old = kept_old || how != QC_DROP_TRANSIENT;
        } else if (fwrite (line, 1, (size_t) len, out) != (size_t) len)
            rc = -1;
        free (slide);
    }
    free (line);
    qc_records_free (&cols);
    fclose (in);
    /* closed whatever the flush and sync say: a full disk (ENOSPC, EFBIG)
     * must not cost a descriptor and the stream's buffer on each rewrite */
    if (out) {
        if (fflush (out) || fsync (fileno (out)))
            rc = -1;
        if (fclose (out))
            rc = -1;
    }
    if (rc == 0 && changed && !kept_old && rename (tmp, path) != 0)
        rc = -1;
    if (rc == 0 && kept_old) {
        /* the old file under the next free NAME.N, then the new one */
        char *keep = NULL;
        for (int n = 1; n < 10000 && rc == 0; n++) {
            free (keep);
            if (asprintf (&keep, "%s.%d", path, n) < 0) {
                keep = NULL;
                rc = -1;
            } else if (access (keep, F_OK) != 0)
                break;
        }
        if (rc || !keep || link (path, keep) != 0 || rename (tmp, path) != 0)
            rc = -1;
        free (keep);
    }
    if (rc)
        snprintf (err, errlen, "cannot rewrite %s: %s", path, strerror (errno));
    if (tmp)
        unlink (tmp);
    free (tmp);
    free (path);
    return rc;
}

/* Copies n bytes (all that is left: n < 0) of in to out. 0 or -1. */
static int
copy_bytes (FILE *in, FILE *out, long n)
{
    char buf[8192];
    while (n != 0) {
        size_t want = n < 0 || n > (long) sizeof buf ? sizeof buf : (size_t) n;
        size_t got = fread (buf, 1, want, in);
        if (got == 0)
            return n < 0 && !ferror (in) ? 0 : -1;
        if (fwrite (buf, 1, got, out) != got)
            return -1;
        if (n > 0)
            n -= (long) got;
    }
    return 0;
}

/* Where a path's last part starts, and its length in *n (trailing '/'s
 * aside). */
static const char *
last_part (const char *p, size_t *n)
{
    size_t end = strlen (p);
    while (end > 1 && p[end - 1] == '/')
        end--;
    size_t s = end;
    while (s > 0 && p[s - 1] != '/')
        s--;
    *n = end - s;
    return p + s;
}

/* Whether two paths end in the same part. */
static bool
same_last_part (const char *a, const char *b)
{
    size_t na, nb;
    const char *pa = last_part (a, &na), *pb = last_part (b, &nb);
    return na == nb && memcmp (pa, pb, na) == 0;
}

int
qc_records_set_outdir (const char *outdir, const char *real_outdir, char **was,
                       char *err, size_t errlen)
{
    if (!outdir || !real_outdir || !was || !err)
        return -1;
    *was = NULL;
    char *path = in_dir (outdir, "results.tsv"), *tmp = NULL, *said = NULL;
    /* a link (to a table kept elsewhere) or a file made read-only is
       left as it is: a rename would replace the link, or write what its
       owner protected (a review) */
    struct stat lst;
    if (path && (lstat (path, &lst) != 0 || S_ISLNK (lst.st_mode) || access (path, W_OK) != 0)) {
        free (path);
        return 0;
    }
    FILE *in = path ? fopen (path, "r") : NULL;
    if (!in) {
        free (path);
        return 0;               /* none yet: its header is written anew */
    }
    /* the "#outdir:" line among the header's: where it starts, how long */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long at = 0, line_len = -1;
    while ((len = getline (&line, &cap, in)) > 0 && line[0] == '#'
           && strncmp (line, "#dataset:", 9) != 0) {
        if (strncmp (line, "#outdir:", 8) == 0) {
            line_len = (long) len;
            line[strcspn (line, "\r\n")] = '\0';
            said = qc_unescape_dup (line + 8 + strspn (line + 8, " \t"));
            break;
        }
        at += (long) len;
    }
    free (line);
    int rc = 0;
    /* only a folder whose last part changed: HistoQC's UI goes by that
       alone, and HistoQC writes the path as given (relative: "out"), or
       one mount of a share names it otherwise than another (a review) */
    if (line_len >= 0 && (!said || !same_last_part (said, real_outdir))) {
        /* the file up to that line, the line anew, then the rest */
        FILE *out = asprintf (&tmp, "%s.tmp", path) < 0 ? NULL : fopen (tmp, "w");
        rc = out && keep_mode (in, out) == 0 && fseek (in, 0, SEEK_SET) == 0
                 ? copy_bytes (in, out, at) : -1;
        if (rc == 0 && (fseek (in, at + line_len, SEEK_SET) != 0
                        || fputs ("#outdir:\t", out) < 0
                        || qc_escape_put (out, real_outdir) == EOF || fputc ('\n', out) == EOF || copy_bytes (in, out, -1)))
            rc = -1;
        if (out && (fflush (out) || fsync (fileno (out))))
            rc = -1;
        if (out && fclose (out))
            rc = -1;
        if (rc == 0 && rename (tmp, path) != 0)
            rc = -1;
        if (rc == 0) {
            *was = said ? said : strdup ("?");
            said = NULL;
        }
    }
    free (said);
    fclose (in);
    if (rc)
        snprintf (err, errlen, "cannot rewrite %s: %s", path, strerror (errno));
    if (tmp && rc)
        unlink (tmp);
    free (tmp);
    free (path);
    return rc;
}

int
qc_records_rewrite (const char *outdir, zhashx_t *drop, zhashx_t *drop_names,
                    const char *header, char *err, size_t errlen)
{
    if (!outdir)
        return -1;
    if (rewrite_one (outdir, "results.tsv", true, drop, drop_names, header, err, errlen))
        return -1;
    return rewrite_one (outdir, "error.log", false, drop, NULL, header ? "" : NULL, err,
                        errlen);
}
