/* See output_stamps.h. */
#include "client/output_stamps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/escape.h"
#include "shared/file_read.h"

bool
qc_stamp_take (const char *path, qc_stamp_t *out)
{
    struct stat st;
    if (!path || !out || stat (path, &st) != 0 || !S_ISREG (st.st_mode))
        return false;
    out->size = (int64_t) st.st_size;
    out->mtime_s = (int64_t) st.st_mtim.tv_sec;
    out->mtime_ns = (int64_t) st.st_mtim.tv_nsec;
    out->workers = false;
    return true;
}

bool
qc_stamp_same (const qc_stamp_t *a, const qc_stamp_t *b)
{
    return a && b && a->size == b->size && a->mtime_s == b->mtime_s
           && a->mtime_ns == b->mtime_ns;
}

/* "secs.nanos" (nine digits) into st's time; false for other text */
static bool
parse_time (const char *text, qc_stamp_t *st)
{
    char *end;
    errno = 0;
    long long secs = strtoll (text, &end, 10);
    if (errno || *end != '.' || end == text)
        return false;
    char *frac = end + 1;
    long long nanos = strtoll (frac, &end, 10);
    if (errno || *end || end - frac != 9 || nanos < 0)
        return false;
    st->mtime_s = secs;
    st->mtime_ns = nanos;
    return true;
}

/* A size of at least least (the whole of text) into *out; false for
 * other text */
static bool
parse_size (const char *text, long long least, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll (text, &end, 10);
    return !errno && !*end && end != text && *out >= least;
}

/* "path TAB size TAB secs.nanos" into path (unescaped, malloc'd) and
 * st; false for a line that is not one */
static bool
parse_line (char *line, char **path, qc_stamp_t *st)
{
    line[strcspn (line, "\n")] = 0;
    char *tab1 = strchr (line, '\t');
    char *tab2 = tab1 ? strchr (tab1 + 1, '\t') : NULL;
    if (!tab1 || !tab2 || tab1 == line)
        return false;
    *tab1 = *tab2 = 0;
    long long size;
    if (!parse_size (tab1 + 1, 0, &size) || !parse_time (tab2 + 1, st) || !(*path = qc_unescape_dup (line)))
        return false;
    st->size = size;
    return true;
}

/* line (its newline cut) split at its tabs into f[0..n): false unless
 * it has exactly n fields, the first not empty and the second tag (the
 * kind of line: "v" a URL's, "i" a file beside a slide, "w" one only its
 * worker saw, "u" a file by URL beside a slide by URL; NULL: any) */
static bool
split_fields (char *line, const char *tag, char **f, int n)
{
    line[strcspn (line, "\n")] = 0;
    f[0] = line;
    for (int i = 1; i < n; i++) {
        char *tab = strchr (f[i - 1], '\t');
        if (!tab)
            return false;
        *tab = 0;
        f[i] = tab + 1;
    }
    return *f[0] && (!tag || strcmp (f[1], tag) == 0) && !strchr (f[n - 1], '\t');
}

/* "size TAB etag TAB lm" (f[0..3)) into v; false when they are not one */
static bool
parse_version (char **f, qc_result_source_t *v)
{
    long long size;
    if (!parse_size (f[0], -1, &size))
        return false;
    char *etag = qc_unescape_dup (f[1]), *lm = qc_unescape_dup (f[2]);
    bool ok = etag && lm && qc_result_source_make (v, size, etag, lm) == 0;
    free (etag);
    free (lm);
    return ok;
}

/* "url TAB v TAB size TAB etag TAB lm" into url (unescaped, malloc'd)
 * and v; false for a line that is not one */
static bool
parse_url_line (char *line, char **url, qc_result_source_t *v)
{
    char *f[5];
    if (!split_fields (line, "v", f, 5) || !parse_version (f + 2, v))
        return false;
    return (*url = qc_unescape_dup (f[0])) != NULL;
}

/* "slide TAB u TAB file TAB size TAB etag TAB lm" into key (the first
 * and third fields as they are: qc_input_stamp_key's form; NULL out of
 * memory) and v; false for a line that is not one */
static bool
parse_url_input_line (char *line, char **key, qc_result_source_t *v)
{
    char *f[6];
    if (!split_fields (line, "u", f, 6) || !*f[2])
        return false;
    if (strcmp (f[3], "-2") == 0)
        *v = (qc_result_source_t) { .size = -2 };    /* forgotten */
    else if (!parse_version (f + 3, v))
        return false;
    if (asprintf (key, "%s\t%s", f[0], f[2]) < 0)
        *key = NULL;
    return true;
}

/* "slide TAB i TAB file TAB size TAB secs.nanos" (or w: its worker's)
 * into key (the line's first and third fields as they are, malloc'd:
 * qc_input_stamp_key's form; NULL out of memory) and st; false for a
 * line that is not one */
static bool
parse_input_line (char *line, char **key, qc_stamp_t *st)
{
    char *f[5];
    long long size;
    if (!split_fields (line, NULL, f, 5) || (strcmp (f[1], "i") && strcmp (f[1], "w"))
        || !*f[2] || !parse_size (f[3], -2, &size) || !parse_time (f[4], st))
        return false;
    st->workers = f[1][0] == 'w';
    /* a worker read a file, or found none: never one of no file */
    if (st->workers && size == -2)
        return false;
    st->size = size;
    if (asprintf (key, "%s\t%s", f[0], f[2]) < 0)
        *key = NULL;            /* out of memory: the caller stops */
    return true;
}

typedef enum { LINES_FILES, LINES_URLS, LINES_INPUTS, LINES_URL_INPUTS } lines_t;

/* OUTDIR/.qc-stamps's lines of one kind that parse into a table of
 * malloc'd copies; NULL only out of memory */
static zhashx_t *
read_lines (const char *outdir, lines_t kind)
{
    bool urls = kind == LINES_URLS || kind == LINES_URL_INPUTS;
    zhashx_t *t = zhashx_new ();
    if (!t)
        return NULL;
    zhashx_set_destructor (t, (zhashx_destructor_fn *) zstr_free);
    if (!outdir)
        return t;
    char *name = NULL;
    if (asprintf (&name, "%s/%s", outdir, QC_STAMPS_FILE) < 0) {
        zhashx_destroy (&t);
        return NULL;
    }
    FILE *f = fopen (name, "r");
    free (name);
    if (!f)
        return t;               /* none yet (or unreadable): no stamps */
    char *line = NULL;
    size_t cap = 0;
    bool ok = true;
    while (ok && getline (&line, &cap, f) > 0) {
        char *path = NULL;
        qc_stamp_t st = { 0 };
        qc_result_source_t v;
        if (kind == LINES_URLS ? !parse_url_line (line, &path, &v)
            : kind == LINES_URL_INPUTS ? !parse_url_input_line (line, &path, &v)
            : kind == LINES_INPUTS ? !parse_input_line (line, &path, &st)
            : !parse_line (line, &path, &st))
            continue;
        if (!path) {
            ok = false;         /* a line read, no memory to keep it */
            break;
        }
        if (kind == LINES_URL_INPUTS && v.size == -2) {
            zhashx_delete (t, path);        /* forgotten since */
            free (path);
            continue;
        }
        size_t size = urls ? sizeof v : sizeof st;
        void *copy = malloc (size);
        if (copy) {
            memcpy (copy, urls ? (void *) &v : (void *) &st, size);
            zhashx_update (t, path, copy);   /* the later line wins */
        }
        ok = copy != NULL;
        free (path);
    }
    free (line);
    fclose (f);
    if (!ok)
        zhashx_destroy (&t);
    return t;
}

zhashx_t *
qc_stamps_read (const char *outdir)
{
    return read_lines (outdir, LINES_FILES);
}

zhashx_t *
qc_url_stamps_read (const char *outdir)
{
    return read_lines (outdir, LINES_URLS);
}

int
qc_url_stamps_put (FILE *f, const char *url, const qc_result_source_t *v)
{
    if (!f || !url)
        return -1;
    if (qc_escape_put (f, url) == EOF
        || fprintf (f, "\tv\t%lld\t", v ? (long long) v->size : -1LL) < 0
        || (v && qc_escape_put (f, v->etag) == EOF) || fputc ('\t', f) == EOF
        || (v && qc_escape_put (f, v->last_modified) == EOF))
        return -1;
    return fputc ('\n', f) == EOF ? -1 : 0;
}

bool
qc_url_stamp_checkable (const qc_result_source_t *v)
{
    return v && (v->etag[0] || v->last_modified[0]);
}

int
qc_stamps_put (FILE *f, const char *path, const qc_stamp_t *st)
{
    if (!f || !path || !st)
        return -1;
    if (qc_escape_put (f, path) == EOF)
        return -1;
    return fprintf (f, "\t%" PRId64 "\t%" PRId64 ".%09" PRId64 "\n", st->size, st->mtime_s,
                    st->mtime_ns);
}

bool
qc_input_stamp_take (const char *path, qc_stamp_t *out)
{
    struct stat st;
    if (!path || !out)
        return false;
    /* not there: -1; there but no file a worker reads (a folder, no
       permission, a loop): -2, another stamp than any file's */
    if (stat (path, &st) != 0)
        *out = (qc_stamp_t) {.size = errno == ENOENT || errno == ENOTDIR ? -1 : -2};
    else if (!S_ISREG (st.st_mode) || !qc_stamp_take (path, out))
        *out = (qc_stamp_t) {.size = -2};
    return true;
}

char *
qc_input_stamp_key (const char *slide, const char *file)
{
    if (!slide || !file)
        return NULL;
    char *es = qc_escape_dup (slide), *ef = qc_escape_dup (file), *key = NULL;
    if (es && ef && asprintf (&key, "%s\t%s", es, ef) < 0)
        key = NULL;
    free (es);
    free (ef);
    return key;
}

zhashx_t *
qc_input_stamps_read (const char *outdir)
{
    return read_lines (outdir, LINES_INPUTS);
}

int
qc_input_stamps_put (FILE *f, const char *slide, const char *file, const qc_stamp_t *st)
{
    if (!f || !slide || !file || !st)
        return -1;
    if (qc_escape_put (f, slide) == EOF || fputs (st->workers ? "\tw\t" : "\ti\t", f) == EOF
        || qc_escape_put (f, file) == EOF)
        return -1;
    return fprintf (f, "\t%" PRId64 "\t%" PRId64 ".%09" PRId64 "\n", st->size, st->mtime_s,
                    st->mtime_ns) < 0 ? -1 : 0;
}

bool
qc_input_stamp_of_version (const qc_result_source_t *v, qc_stamp_t *out)
{
    if (!v || !out || v->size < 0 || v->etag[0])
        return false;
    qc_stamp_t st = { .size = v->size, .workers = true };
    if (!parse_time (v->last_modified, &st))
        return false;
    *out = st;
    return true;
}

bool
qc_input_folder_unseen (const char *file, bool read)
{
    return !qc_file_folder_there (file) || (read && qc_file_folder_empty (file));
}

zhashx_t *
qc_url_input_stamps_read (const char *outdir)
{
    return read_lines (outdir, LINES_URL_INPUTS);
}

int
qc_url_input_stamps_put (FILE *f, const char *slide, const qc_result_input_t *in)
{
    if (!f || !slide || !in || !in->where)
        return -1;
    const qc_result_source_t none = { .size = -1 }, *v = in->there ? &in->v : &none;
    if (!qc_url_input_stampable (in))
        return 0;
    if (qc_escape_put (f, slide) == EOF || fputs ("\tu\t", f) == EOF
        || qc_escape_put (f, in->where) == EOF
        || fprintf (f, "\t%lld\t", v->size < 0 ? -1LL : (long long) v->size) < 0
        || qc_escape_put (f, v->etag) == EOF || fputc ('\t', f) == EOF
        || qc_escape_put (f, v->last_modified) == EOF)
        return -1;
    return fputc ('\n', f) == EOF ? -1 : 0;
}

int
qc_url_input_stamps_forget (FILE *f, const char *slide, const char *where)
{
    if (!f || !slide || !where || !*where)
        return -1;
    if (qc_escape_put (f, slide) == EOF || fputs ("\tu\t", f) == EOF
        || qc_escape_put (f, where) == EOF || fputs ("\t-2\t\t\n", f) == EOF)
        return -1;
    return 0;
}

bool
qc_url_input_stampable (const qc_result_input_t *in)
{
    /* read, but nothing says which version: a line of size -1 and no
       validator would say "not there" */
    return in && (!in->there || qc_result_source_known (&in->v));
}
