/* Reading a list of slides (cohort.h): one path a line, a tab-separated
 * table (HistoQC's results.tsv, this project's), or a spreadsheet's
 * .csv, from a file or standard input. */
#include "client/cohort.h"

#include <czmq.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "client/escape.h"

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
 * is the decimal mark (Excel in much of Europe) a semicolon, told from
 * its rows; and those an Excel "sep=X" line may name besides. */
static const char s_csv_seps[] = ",;";
static const char s_sep_line_seps[] = ",;\t|";

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
    const char *name;         /* the list's, for messages */
    bool csv;                 /* a spreadsheet's .csv */
    char sep;                 /* its separator (decided: decide_sep) */
    bool decided;             /* how the list reads is known */
    bool sniff;               /* standard input: a spreadsheet's when its
                                 first rows read as one */
    int skip_lines;           /* rows before its header (a title) */
    int path_col;             /* the slides' column, or -1: the first */
    bool csv_col;             /* path_col is a .csv header's */
    bool escaped;             /* ... our results.tsv's original_path */
    bool first_row;
    char *record;             /* a .csv record over several lines */
    int record_line;          /* where it began */
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
                      ? qc_cohort_absolute (l->c, entry) : NULL;  /* with -p, under it */
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

/* Rows looked at together to tell how a spreadsheet's list reads. */
#define LOOK_ROWS 10

/* Whether a row is one: not blank, no comment line. */
static bool
is_row (const char *line)
{
    return line[strspn (line, " ")] && line[0] != '#';
}

/* A row that names a slide in full (its whole text a slide's file name,
 * or its first cell under sep): the list's data has begun. */
static bool
names_a_slide (const char *line, char sep)
{
    if (qc_cohort_is_slide_name (line))
        return true;
    char *copy = sep ? strdup (line) : NULL;
    char *first = copy ? csv_cell (copy, sep, 0) : NULL;
    while (first && *first == ' ')
        first++;
    bool slide = first && qc_cohort_is_slide_name (first);
    free (copy);
    return slide;
}

/* Counts the separators of s outside quoted cells. */
static void
count_seps (const char *s, size_t count[2])
{
    bool quoted = false;
    for (; *s; s++) {
        if (*s == '"')
            quoted = !quoted;
        else if (!quoted)
            for (int k = 0; k < 2; k++)
                count[k] += *s == s_csv_seps[k];
    }
}

/* How a spreadsheet's list reads, from its first rows (rows[0..n), the
 * comment lines and blank ones among them): its separator (an Excel
 * "sep=X" line says it; else the first row that reads as a list's under
 * one, a header or a slide's name in its first cell; else the one used
 * more, a comma on a tie), and the rows before its header, a title
 * ("Cohort 2024;;") or Excel's empty rows, which are no slides. A list
 * on standard input has no name to say .csv: a spreadsheet's when a row
 * reads so before its data begins, or it starts with a quoted cell or a
 * header alone ("Filename"); not a tab-separated one (our results.tsv,
 * piped). */
static void
decide (list_read_t *l, char **rows, size_t n)
{
    l->decided = true;
    size_t first = 0;
    while (first < n && !is_row (rows[first]))
        first++;
    if (first == n || (!l->csv && !l->sniff) || l->path_col >= 0)
        return;
    const char *r0 = rows[first];
    if (strncmp (r0, "sep=", 4) == 0 && r0[4] && strchr (s_sep_line_seps, r0[4]) && !r0[5]) {
        l->sep = r0[4];
        l->csv = true;
        l->skip_lines = (int) first + 1;
        return;
    }
    if (l->sniff && (strchr (r0, '\t') || (r0[0] != '"' && qc_cohort_is_slide_name (r0))))
        return;                 /* a tab-separated list, or one path a line */
    char sep = 0;
    size_t count[2] = {0, 0};
    for (size_t i = first; i < n && !sep; i++) {
        if (!is_row (rows[i]))
            continue;
        sep = csv_sep_of (rows[i]);
        count_seps (rows[i], count);
        if (!sep && names_a_slide (rows[i], 0))
            break;              /* data, under no separator */
    }
    if (!sep && l->sniff && (r0[0] == '"' || header_column (r0, ',') >= 0))
        sep = ',';              /* one column, quoted or under a header */
    if (!sep && l->csv)
        sep = count[1] > count[0] ? ';' : ',';
    if (!sep)
        return;                 /* standard input: plain lines */
    l->csv = true;
    l->sep = sep;
    /* the header, after rows that are no slides (a title): those go */
    for (size_t i = first; i < n; i++) {
        if (!is_row (rows[i]))
            continue;
        if (header_column (rows[i], sep) >= 0) {
            l->skip_lines = (int) i;
            return;
        }
        if (names_a_slide (rows[i], sep))
            return;
    }
}

/* A comment line that is a slide file's name, of a file that is there
 * ("#12.svs", a scanner's numbering): read as a comment, as a slide
 * left out of the list ("#a.svs") must be, but said, as it was dropped
 * without a word (a data-trust probe); "./#12.svs" runs it. */
static void
hash_named_slide (list_read_t *l, const char *line, int lineno)
{
    struct stat st;
    if (l->c->note || !qc_cohort_is_slide_name (line))
        return;
    char *where = qc_cohort_absolute (l->c, line);
    if (where && lstat (where, &st) == 0
        && asprintf (&l->c->note, "%s: line %d, '%s', is read as a comment (a slide left "
                     "out), yet a slide file of that name is there: write it as ./%s (or "
                     "its full path) to run it", l->name, lineno, line, line) < 0)
        l->c->note = NULL;
    free (where);
}

/* One line of the list (its number lineno, from 1): a comment, a part
 * of a record, or a record. */
static int
list_line (list_read_t *l, char *line, int lineno, char *err, size_t errlen)
{
    if (lineno <= l->skip_lines)
        return 0;
    if (!l->record && line[0] == '#') {
        /* the project's own results.tsv keeps whole paths: use them
         * unless a base path says where the file names are */
        if (strncmp (line, "#dataset:", 9) == 0 && !(l->c->basepath && *l->c->basepath))
            l->escaped = (l->path_col = column_of (line + 9, "original_path")) >= 0;
        else
            hash_named_slide (l, line, lineno);
        return 0;
    }
    if (!l->csv)
        return list_record (l, line, err, errlen);
    /* a quoted cell may hold a line break: the record goes on (a LIMS
       note's; 64 KB at most, then refused, naming its line) */
    char *joined = NULL;
    if (asprintf (&joined, "%s%s%s", l->record ? l->record : "", l->record ? "\n" : "",
                  line) < 0) {
        snprintf (err, errlen, "%s: out of memory", l->name);
        return -1;
    }
    free (l->record);
    l->record = joined;
    l->record_line = l->record_line ? l->record_line : lineno;
    if (csv_closed (l->record, l->sep)) {
        int rc = list_record (l, l->record, err, errlen);
        free (l->record);
        l->record = NULL;
        l->record_line = 0;
        return rc;
    }
    if (strlen (l->record) > 65536) {
        snprintf (err, errlen, "%s: the quote that opens a cell on line %d is not closed "
                  "within 64 KB (a quote missing at a cell's end?)", l->name, l->record_line);
        return -1;
    }
    return 0;
}

int
qc_cohort_add_list (qc_cohort_t *c, const char *listfile, char *err, size_t errlen)
{
    if (!c || !listfile || !err)
        return -1;
    FILE *f = strcmp (listfile, "-") == 0 ? stdin : fopen (listfile, "r");
    if (!f) {
        snprintf (err, errlen, "cannot read list %s: %s", listfile, strerror (errno));
        return -1;
    }
    list_read_t l = {.c = c, .name = listfile, .csv = qc_cohort_is_csv (listfile),
                     .path_col = -1, .first_row = true, .sniff = f == stdin};
    /* the first rows are held until how the list reads is known */
    char *held[LOOK_ROWS + 8];
    size_t nheld = 0, rows = 0;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, lineno = 0;
    bool more = true;
    while (rc == 0 && more) {
        ssize_t got = getline (&line, &cap, f);
        more = got > 0;
        /* Excel's "Unicode Text" and Notepad's "Unicode" are UTF-16: read
           as bytes, the list was one path of garbage ("\xff\xfef") and
           its slides were lost; a NUL byte is no path's either */
        if (more && ((lineno == 0 && nheld == 0 && got >= 2
                      && ((line[0] == '\xff' && line[1] == '\xfe')
                          || (line[0] == '\xfe' && line[1] == '\xff')))
                     || memchr (line, '\0', (size_t) got))) {
            char where[64] = "";
            if (memchr (line, '\0', (size_t) got))
                snprintf (where, sizeof where, " (a NUL byte on line %d)",
                          lineno + (int) nheld + 1);
            snprintf (err, errlen, "%s is UTF-16 text (Excel's \"Unicode Text\", Notepad's "
                      "\"Unicode\")%s, or binary data: save the list as UTF-8 (Excel: \"CSV "
                      "UTF-8\"; Notepad: Encoding UTF-8), or convert it: iconv -f UTF-16 -t "
                      "UTF-8", listfile, where);
            rc = -1;
            break;
        }
        if (more) {
            line[strcspn (line, "\r\n")] = 0;
            /* a list saved by a Windows editor or Excel starts with a
               UTF-8 byte order mark, which would make its first path
               relative */
            if (nheld == 0 && lineno == 0 && strncmp (line, "\xef\xbb\xbf", 3) == 0)
                memmove (line, line + 3, strlen (line + 3) + 1);
        }
        if (!l.decided && more) {
            /* our results.tsv's header decides at once: its column */
            if (strncmp (line, "#dataset:", 9) == 0 && rows == 0)
                rows = LOOK_ROWS;
            rows += is_row (line);
            if (!(held[nheld++] = strdup (line))) {
                snprintf (err, errlen, "%s: out of memory", listfile);
                rc = -1;
                break;
            }
            if (rows < LOOK_ROWS && nheld < sizeof held / sizeof *held)
                continue;
        }
        if (!l.decided) {
            decide (&l, held, nheld);
            for (size_t i = 0; i < nheld && rc == 0; i++)
                rc = list_line (&l, held[i], ++lineno, err, errlen);
            if (more)
                continue;       /* the line that decided was held */
        }
        if (more && rc == 0)
            rc = list_line (&l, line, ++lineno, err, errlen);
    }
    for (size_t i = 0; i < nheld; i++)
        free (held[i]);
    /* a quote still open at the end: refused, naming its line (its
       slides were lost without a word) */
    if (rc == 0 && l.record) {
        snprintf (err, errlen, "%s: the quote that opens a cell on line %d is not closed by "
                  "the end of the file (a quote missing at a cell's end?)", listfile,
                  l.record_line);
        rc = -1;
    }
    free (l.record);
    free (line);
    if (f != stdin)
        fclose (f);
    return rc;
}
