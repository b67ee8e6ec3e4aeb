/* See cohort.h. Lists and .tsv files are read here; folder searches and
 * patterns are in cohort_walk.c. */
#include "client/cohort.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/escape.h"
#include "client/stall_watch.h"
#include "shared/proto.h"
#include "shared/url.h"

/* p with its "/.." steps taken back lexically, as Python's
 * os.path.abspath does ("/a/b/../c" -> "/a/c"), in place. */
static void
fold_dotdot (char *p)
{
    char *o = p;                 /* p is absolute and folded of "//", "/./" */
    for (const char *s = p; *s;) {
        if (s[0] == '/' && s[1] == '.' && s[2] == '.' && (s[3] == '/' || !s[3])) {
            while (o > p && *--o != '/')
                ;                /* drop the last component written */
            s += 3;
            continue;
        }
        *o++ = *s++;
    }
    *o = '\0';
}

/* The absolute form of an entry: base path or working directory in
 * front of a relative one, "//" and "/./" folded, no trailing "/", and
 * "/.." folded where that names the same file (through a folder that
 * is a symbolic link, "b/.." is not "b"'s parent: then it stays), so
 * that one slide given as "real/X" and "real/../real/X" runs once. */
static char *
absolute (const qc_cohort_t *c, const char *path)
{
    char cwd[PATH_MAX] = "";
    const char *base = path[0] == '/' ? "" : c->basepath ? c->basepath : "";
    if (path[0] != '/' && base[0] != '/' && !getcwd (cwd, sizeof cwd))
        return NULL;
    char *joined = NULL;
    if (asprintf (&joined, "%s/%s/%s", cwd, base, path) < 0)
        return NULL;
    /* fold in place: "//" -> "/", "/./" -> "/", trailing "/." and "/" */
    char *o = joined;
    for (const char *p = joined; *p;) {
        if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2])))) {
            p += p[1] == '/' ? 1 : 2;
            continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
    size_t n = strlen (joined);
    while (n > 1 && joined[n - 1] == '/')
        joined[--n] = '\0';
    if (n == 0)
        strcpy (joined, "/");
    if (strstr (joined, "/..")) {
        char *folded = strdup (joined);
        struct stat a, b;
        if (folded) {
            fold_dotdot (folded);
            if (!*folded)
                strcpy (folded, "/");
        }
        if (folded && stat (joined, &a) == 0 && stat (folded, &b) == 0
            && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            free (joined);
            return folded;
        }
        free (folded);
    }
    return joined;
}

/* Adds an absolute path once. */
static int
push (void *arg, const char *abs)
{
    qc_cohort_t *c = arg;
    if (!c->seen) {
        if (!(c->seen = zhashx_new ()))
            return -1;
    }
    if (zhashx_lookup (c->seen, abs)) {
        c->duplicates++;
        return 0;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        char **p = realloc (c->paths, cap * sizeof *p);
        if (!p)
            return -1;
        c->paths = p;
        c->cap = cap;
    }
    if (!(c->paths[c->n] = strdup (abs)) || zhashx_insert (c->seen, abs, (void *) 1)) {
        free (c->paths[c->n]);
        return -1;
    }
    c->n++;
    return 0;
}

/* Whether the file at path opens as a TIFF (classic or BigTIFF, either
 * byte order): a slide named *.tsv is a slide, not a list of them (it
 * was read as text: "no slide matches 'II*'") */
static bool
starts_as_tiff (const char *path)
{
    unsigned char m[4] = { 0 };
    FILE *f = fopen (path, "rb");
    size_t n = f ? fread (m, 1, sizeof m, f) : 0;
    if (f)
        fclose (f);
    return n == 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0)
                      || (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43)));
}

static int
has_suffix (const char *s, const char *suffix)
{
    size_t n = strlen (s), k = strlen (suffix);
    return n >= k && strcmp (s + n - k, suffix) == 0;
}

/* A list a spreadsheet wrote: name.csv, in any case (Windows' .CSV). */
static bool
is_csv (const char *name)
{
    size_t n = strlen (name);
    return n >= 4 && strcasecmp (name + n - 4, ".csv") == 0;
}

/* An http(s) URL, in its one spelling (qc_url_canonical: one slide
 * given as HTTP://Host/a.svs and http://host/./a.svs runs once); its
 * redacted form must be its own (the outputs know it by that). */
static int
add_url (qc_cohort_t *c, const char *given, char *err, size_t errlen)
{
    /* a spelling over the limit (raw bytes grow 3x encoded) stays as
       given: over it the URL would read as a path (and be shown whole) */
    char canon[QC_URL_MAX + 1];
    const char *url = qc_url_canonical (given, canon, sizeof canon) == 0 ? canon : given;
    char shown[sizeof canon];
    qc_url_redact (url, shown, sizeof shown);
    if (!c->shown && !(c->shown = zhashx_new ()))
        return -1;
    const char *had = zhashx_lookup (c->shown, shown);
    if (had && strcmp (had, url) != 0) {
        snprintf (err, errlen, "'%s' is given twice with different credentials "
                  "or queries: the outputs name a slide by its URL without "
                  "them, so each slide needs a URL of its own", shown);
        return -1;
    }
    if (!had) {
        char *copy = strdup (url);
        if (!copy || zhashx_insert (c->shown, shown, copy)) {
            free (copy);
            return -1;
        }
    }
    return push (c, url);
}

int
qc_cohort_add (qc_cohort_t *c, const char *arg, char *err, size_t errlen)
{
    if (!c || !arg || !*arg) {
        snprintf (err, errlen, "empty slide path");
        return -1;
    }
    /* URLs first: their '?' is no pattern, and they are not paths (a
       path over the protocol's limit is counted below, not refused) */
    int kind = strstr (arg, "://") ? qc_url_classify (arg, err, errlen) : QC_URL_PATH;
    if (kind < 0)
        return -1;
    if (kind == QC_URL_HTTP || kind == QC_URL_HTTPS) {
        int rc = add_url (c, arg, err, errlen);
        if (rc && !*err)
            snprintf (err, errlen, "out of memory");
        return rc;
    }
    char file_path[QC_URL_MAX + 1];
    if (kind == QC_URL_FILE) {
        if (qc_url_file_path (arg, file_path, sizeof file_path, err, errlen))
            return -1;
        arg = file_path;          /* a path like any other from here */
    }
    struct stat st;
    qc_stall_watch_at (arg);
    bool exists = stat (arg, &st) == 0;
    if (exists && S_ISREG (st.st_mode)
        && (has_suffix (arg, ".tsv") || is_csv (arg)) && !starts_as_tiff (arg))
        return qc_cohort_add_list (c, arg, err, errlen);
    char *abs = absolute (c, arg);
    if (!abs) {
        snprintf (err, errlen, "%s: out of memory", arg);
        return -1;
    }
    int rc = 0;
    qc_stall_watch_at (abs);
    bool exists_abs = stat (abs, &st) == 0;
    if (!exists_abs && qc_cohort_is_pattern (arg)) {
        size_t before = c->n + c->duplicates;
        rc = qc_cohort_walk_glob (abs, push, c, &c->note);
        if (rc == 0 && c->n + c->duplicates == before) {
            char *e = qc_escape_dup (arg);
            snprintf (err, errlen, "no slide matches '%s'", e ? e : arg);
            free (e);
            rc = -1;
        } else if (rc)
            snprintf (err, errlen, "%s: out of memory", arg);
    } else if (exists_abs && S_ISDIR (st.st_mode)) {
        size_t before = c->n + c->duplicates;
        char **grown = realloc (c->folders, (c->nfolders + 1) * sizeof *grown);
        if (!grown || !(grown[c->nfolders] = strdup (abs))) {
            if (grown)
                c->folders = grown;
            snprintf (err, errlen, "%s: out of memory", arg);
            free (abs);
            return -1;
        }
        c->folders = grown;
        c->nfolders++;
        if (qc_cohort_walk_folder (abs, push, c, &c->note)) {
            snprintf (err, errlen, "%s: out of memory", arg);
            rc = -1;
        } else if (c->n + c->duplicates == before && !c->note) {
            /* said, not refused: the cohort's other entries may have slides */
            char *e = qc_escape_dup (arg);
            if (asprintf (&c->note, "no slide file in folder %s or its subfolders "
                          "(slide files end in .svs, .ndpi, .tif, .tiff, .mrxs, .scn, "
                          ".vms, .bif, .dcm, ...)", e ? e : arg) < 0)
                c->note = NULL;
            free (e);
        }
    } else if (strlen (abs) > QC_PROTO_MAX_PATH) {
        c->too_long++;            /* cannot be sent: said before the run */
        rc = push (c, abs);
    } else
        rc = push (c, abs);
    if (rc && !*err)
        snprintf (err, errlen, "%s: out of memory", arg);
    free (abs);
    return rc;
}

/* The column of the #dataset: header line named name, or -1. */
static int
column_of (const char *header, const char *name)
{
    int col = 0;
    for (const char *p = header; p;) {
        const char *tab = strchr (p, '\t');
        size_t n = tab ? (size_t) (tab - p) : strlen (p);
        if (n == strlen (name) && strncmp (p, name, n) == 0)
            return col;
        col++;
        p = tab ? tab + 1 : NULL;
    }
    return -1;
}

/* Cell col of a tab-separated line (in place), or NULL. */
static char *
cell (char *line, int col)
{
    char *p = line;
    for (int i = 0; i < col && p; i++) {
        p = strchr (p, '\t');
        if (p)
            p++;
    }
    if (p)
        p[strcspn (p, "\t")] = '\0';
    return p;
}

/* The separators of a spreadsheet's list: a comma, or where a comma
 * is the decimal mark (Excel in much of Europe) a semicolon. */
static const char s_csv_seps[] = ",;";

/* Cell col of a record of cells separated by sep (in place), quoted as
 * a spreadsheet quotes one ("a, b.svs", a quote doubled, a line break
 * inside quotes kept); an unclosed quote runs to the end; NULL when the
 * record has fewer cells. A lab's list from its LIMS or a spreadsheet
 * is a .csv: each whole line was taken for a path. */
static char *
csv_cell (char *s, char sep, int col)
{
    const char stop[2] = {sep, '\0'};
    for (int i = 0;; i++) {
        char *out = s, *p = s;
        if (*p == '"') {
            for (p++; *p; p++) {
                if (*p == '"' && p[1] != '"')
                    break;
                *out++ = *p;
                if (*p == '"')
                    p++;          /* "" is one quote */
            }
            if (*p == '"')
                p++;
            p += strcspn (p, stop);   /* bytes after the closing quote: left out */
        } else {
            p += strcspn (p, stop);
            out = p;
        }
        char *next = *p ? p + 1 : NULL;
        if (i == col) {
            *out = '\0';
            return s;
        }
        if (!next)
            return NULL;
        s = next;
    }
}

/* Whether a record's quoted cells are all closed (one may hold a line
 * break: its record goes on on the next line). Only a quote that starts
 * a cell opens one: a stray quote inside a cell (3" wide) is a quote,
 * or it would join the rest of the list to its record. */
static bool
csv_closed (const char *s, char sep)
{
    const char stop[2] = {sep, '\0'};
    for (;;) {
        if (*s == '"') {
            for (s++;; s++) {
                if (!*s)
                    return false;
                if (*s == '"' && s[1] == '"')
                    s++;          /* "" is one quote */
                else if (*s == '"')
                    break;
            }
        }
        s += strcspn (s, stop);
        if (!*s)
            return true;
        s++;
    }
}

/* The column of a list's header row that names the slides: a cell
 * "filename" (HistoQC's), "path", "file" or "slide" (and a few more
 * spellings), any case, in a row none of whose cells is a slide file's
 * name (a data row "X1.svs<TAB>slide" is no header); -1 none. Cells
 * separated by sep, quoted as a spreadsheet quotes them; by tabs when
 * sep is 0. */
static int
header_column (const char *row, char sep)
{
    static const char *names[] = { "filename", "file_name", "file name", "path", "filepath",
                                   "file", "slide", "slide_path" };
    int named = -1;
    for (int col = 0; col < 256; col++) {
        char *copy = strdup (row);
        char *c = !copy ? NULL : sep ? csv_cell (copy, sep, col) : cell (copy, col);
        if (!c) {
            free (copy);
            break;
        }
        while (*c == ' ' || *c == '\t')
            c++;
        size_t n = strlen (c);
        while (n && (c[n - 1] == ' ' || c[n - 1] == '\t'))
            c[--n] = '\0';
        bool slide = qc_cohort_is_slide_name (c);
        for (size_t k = 0; named < 0 && k < sizeof names / sizeof *names; k++)
            if (strlen (names[k]) == n && strncasecmp (c, names[k], n) == 0)
                named = col;
        free (copy);
        if (slide)
            return -1;
    }
    return named;
}

/* The separator under which a spreadsheet's first record reads as a
 * list's (a header naming the slides' column, or a first cell that is a
 * slide file's name where the whole record is not), of s_csv_seps; 0
 * when none does. A list saved by Excel where the comma is the decimal
 * mark has semicolons, and each of its lines was taken whole for a
 * path. */
static char
csv_sep_of (const char *record)
{
    for (const char *sep = s_csv_seps; *sep; sep++) {
        if (!strchr (record, *sep))
            continue;
        if (header_column (record, *sep) >= 0)
            return *sep;
        char *copy = strdup (record);
        char *first = copy ? csv_cell (copy, *sep, 0) : NULL;
        while (first && *first == ' ')
            first++;
        bool slide = first && qc_cohort_is_slide_name (first) && !qc_cohort_is_slide_name (record);
        free (copy);
        if (slide)
            return *sep;
    }
    return 0;
}

/* Reading a list, record by record. */
typedef struct {
    qc_cohort_t *c;
    bool csv;                 /* a spreadsheet's .csv */
    char sep;                 /* its separator: ',' or ';' (0: not yet
                                 known) */
    bool sniff;               /* standard input: a spreadsheet's when its
                                 first record reads as one */
    int path_col;             /* the slides' column, or -1: the first */
    bool csv_col;             /* path_col is a .csv header's */
    bool escaped;             /* ... our results.tsv's original_path */
    bool first_row;
} list_read_t;

/* One record of a list (s, in place): its slide added. 0, or -1 with
 * err. */
static int
list_record (list_read_t *l, char *s, char *err, size_t errlen)
{
    while (*s == ' ')
        s++;
    if (!*s)
        return 0;
    if (l->first_row && l->path_col < 0) {
        /* a header row: its slides' column named ("Filename", "path",
           "Slide", ... in any column); else the first */
        int named = header_column (s, l->csv ? l->sep : 0);
        l->first_row = false;
        if (named >= 0) {
            l->path_col = named;
            l->csv_col = l->csv;
            return 0;
        }
    }
    l->first_row = false;
    char *entry = l->path_col >= 0 ? (l->csv_col ? csv_cell (s, l->sep, l->path_col)
                                                 : cell (s, l->path_col))
                  : l->csv ? csv_cell (s, l->sep, 0) : cell (s, 0);
    if (!entry || !*entry)
        return 0;
    /* blanks after a name (a spreadsheet's padding) are not part of
       it, unless a file of that name is there */
    struct stat st;
    size_t n = strlen (entry);
    char *where = n && (entry[n - 1] == ' ' || entry[n - 1] == '\t')
                      ? absolute (l->c, entry) : NULL;  /* with -p, under it */
    if (where && lstat (where, &st) != 0)
        while (n && (entry[n - 1] == ' ' || entry[n - 1] == '\t'))
            entry[--n] = '\0';
    free (where);
    if (!*entry)
        return 0;
    char *unesc = l->escaped ? qc_unescape_dup (entry) : NULL;
    int rc = qc_cohort_add (l->c, unesc ? unesc : entry, err, errlen);
    free (unesc);
    return rc;
}

int
qc_cohort_add_list (qc_cohort_t *c, const char *listfile, char *err, size_t errlen)
{
    FILE *f = strcmp (listfile, "-") == 0 ? stdin : fopen (listfile, "r");
    if (!f) {
        snprintf (err, errlen, "cannot read list %s: %s", listfile, strerror (errno));
        return -1;
    }
    list_read_t l = {.c = c, .csv = is_csv (listfile), .path_col = -1, .first_row = true,
                     .sniff = f == stdin};
    char *line = NULL, *record = NULL;  /* a .csv record over several lines */
    size_t cap = 0;
    int rc = 0, record_line = 0, lineno = 0;
    bool first_line = true;
    while (rc == 0 && getline (&line, &cap, f) > 0) {
        lineno++;
        line[strcspn (line, "\r\n")] = 0;
        /* a list saved by a Windows editor or Excel starts with a UTF-8
           byte order mark, which would make its first path relative */
        if (first_line && strncmp (line, "\xef\xbb\xbf", 3) == 0)
            memmove (line, line + 3, strlen (line + 3) + 1);
        first_line = false;
        if (!record && line[0] == '#') {
            /* the project's own results.tsv keeps whole paths: use them
             * unless a base path says where the file names are */
            if (strncmp (line, "#dataset:", 9) == 0 && !(c->basepath && *c->basepath))
                l.escaped = (l.path_col = column_of (line + 9, "original_path")) >= 0;
            continue;
        }
        /* the separator, from the first record: Excel's "sep=;" line
           says it; else the one under which that record reads as a
           list's, a comma by default. A list on standard input has no
           name to say .csv: a spreadsheet's when a separator reads so
           (and it is no tab-separated list: our results.tsv, piped) */
        if (!record && (l.csv || l.sniff) && !l.sep && l.path_col < 0
            && line[strspn (line, " ")]) {
            if (strncmp (line, "sep=", 4) == 0 && line[4] && strchr (s_csv_seps, line[4])
                && !line[5]) {
                l.sep = line[4];
                l.csv = true;
                continue;
            }
            char sep = strchr (line, '\t') ? 0 : csv_sep_of (line);
            l.csv = l.csv || sep;
            l.sep = sep ? sep : ',';
            l.sniff = false;
        }
        if (!l.csv) {
            rc = list_record (&l, line, err, errlen);
            continue;
        }
        /* a quoted cell may hold a line break: the record goes on (a
           LIMS note's; 64 KB at most, then refused, naming its line) */
        char *joined = NULL;
        if (asprintf (&joined, "%s%s%s", record ? record : "", record ? "\n" : "", line) < 0) {
            snprintf (err, errlen, "%s: out of memory", listfile);
            rc = -1;
            break;
        }
        free (record);
        record = joined;
        record_line = record_line ? record_line : lineno;
        if (csv_closed (record, l.sep)) {
            rc = list_record (&l, record, err, errlen);
            free (record);
            record = NULL;
            record_line = 0;
        } else if (strlen (record) > 65536) {
            snprintf (err, errlen, "%s: the quote that opens a cell on line %d is not closed "
                      "within 64 KB (a quote missing at a cell's end?)", listfile, record_line);
            rc = -1;
        }
    }
    /* a quote still open at the end: refused, naming its line (its
       slides were lost without a word) */
    if (rc == 0 && record) {
        snprintf (err, errlen, "%s: the quote that opens a cell on line %d is not closed by "
                  "the end of the file (a quote missing at a cell's end?)", listfile,
                  record_line);
        rc = -1;
    }
    free (record);
    free (line);
    if (f != stdin)
        fclose (f);
    return rc;
}

const char *
qc_cohort_unreadable (const char *path)
{
    struct stat st;
    if (!path)
        return "no path";
    if (strlen (path) > QC_PROTO_MAX_PATH)
        return "path longer than 4096 bytes (the protocol's limit)";
    qc_stall_watch_at (path);
    if (stat (path, &st) != 0)
        return strerror (errno);
    if (access (path, R_OK) != 0)
        return strerror (errno);
    if (S_ISDIR (st.st_mode))
        return "a folder, not a slide file";
    return NULL;
}

const char *
qc_cohort_slide_in (const qc_cohort_t *c, const char *dir, bool *in)
{
    struct stat out, st;
    if (in)
        *in = false;
    if (!c || !dir || !in || stat (dir, &out) != 0 || !S_ISDIR (out.st_mode))
        return NULL;
    int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* a cohort's slides come folder by folder: each folder stat'ed once */
    char *last = NULL;
    size_t last_len = 0;
    bool last_in = false;
    const char *found = NULL;
    for (size_t i = 0; i < c->n && !found; i++) {
        const char *p = c->paths[i], *slash = strrchr (p, '/');
        if (qc_url_is_remote (p) || !slash)
            continue;
        size_t len = slash == p ? 1 : (size_t) (slash - p);
        if (!last || len != last_len || strncmp (p, last, len) != 0) {
            free (last);
            if (!(last = strndup (p, len)))
                break;
            last_len = len;
            last_in = stat (last, &st) == 0 && st.st_dev == out.st_dev
                      && st.st_ino == out.st_ino;
        }
        if (last_in) {
            found = p;
            *in = true;
        } else if (dfd >= 0 && fstatat (dfd, slash + 1, &st, 0) == 0 && !S_ISDIR (st.st_mode))
            found = p;
    }
    free (last);
    if (dfd >= 0)
        close (dfd);
    return found;
}

void
qc_cohort_free (qc_cohort_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free (c->paths[i]);
    free (c->paths);
    for (size_t i = 0; i < c->nfolders; i++)
        free (c->folders[i]);
    free (c->folders);
    free (c->note);
    zhashx_t *seen = c->seen, *shown = c->shown;
    zhashx_destroy (&seen);
    if (shown)
        for (char *u = zhashx_first (shown); u; u = zhashx_next (shown))
            free (u);
    zhashx_destroy (&shown);
    memset (c, 0, sizeof *c);
}
