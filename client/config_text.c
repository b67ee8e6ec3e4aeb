/* See config_text.h. */
#include "client/config_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int first, last;          /* 1-based line range of a value */
    char *entries;            /* its replacement; NULL: made comments */
} edit_t;

struct qc_config_text {
    const char *text;
    size_t len;
    const char **starts;      /* starts[i]: where line i + 1 begins */
    size_t nlines;
    edit_t *edits;
    size_t nedits, cap;
};

qc_config_text_t *
qc_config_text_new (const char *text)
{
    if (!text)
        return NULL;
    qc_config_text_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->text = text;
    self->len = strlen (text);
    if (!(self->starts = malloc ((self->len + 1) * sizeof *self->starts))) {
        free (self);
        return NULL;
    }
    self->starts[self->nlines++] = text;
    for (const char *p = text; (p = strchr (p, '\n')); p++)
        self->starts[self->nlines++] = p + 1;
    return self;
}

void
qc_config_text_destroy (qc_config_text_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_config_text_t *self = *self_p;
    for (size_t e = 0; e < self->nedits; e++)
        free (self->edits[e].entries);
    free (self->edits);
    free (self->starts);
    free (self);
    *self_p = NULL;
}

static size_t
line_len (const qc_config_text_t *t, size_t i)
{
    const char *end = i + 1 < t->nlines ? t->starts[i + 1] - 1 : t->text + t->len;
    return (size_t) (end - t->starts[i]);
}

static size_t
indent_of (const char *s, size_t n)
{
    size_t a = 0;
    while (a < n && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r' || s[a] == '\v' || s[a] == '\f'))
        a++;
    return a;
}

static bool
comment_line (const char *s, size_t n)
{
    size_t a = indent_of (s, n);
    return a < n && (s[a] == '#' || s[a] == ';');
}

/* The last line of a value whose key is on line first: the lines after
 * it indented deeper (blank and comment lines between them included). */
static int
value_end (const qc_config_text_t *t, int first)
{
    size_t key_indent = indent_of (t->starts[first - 1], line_len (t, (size_t) first - 1));
    int last = first;
    for (size_t i = (size_t) first; i < t->nlines; i++) {
        const char *s = t->starts[i];
        size_t n = line_len (t, i), a = indent_of (s, n);
        if (a == n || s[a] == '#' || s[a] == ';')
            continue;
        if (a <= key_indent)
            break;
        last = (int) i + 1;
    }
    return last;
}

bool
qc_config_text_editable (const qc_config_text_t *self, int line)
{
    if (!self || line <= 0 || (size_t) line > self->nlines)
        return false;
    for (size_t e = 0; e < self->nedits; e++)
        if (self->edits[e].first == line)
            return false;
    return true;
}

static int
add_edit (qc_config_text_t *self, int line, char *entries)
{
    if (self->nedits == self->cap) {
        size_t n = self->cap ? self->cap * 2 : 16;
        edit_t *e = realloc (self->edits, n * sizeof *e);
        if (!e)
            return -1;
        self->edits = e;
        self->cap = n;
    }
    self->edits[self->nedits++] = (edit_t) {.first = line, .last = value_end (self, line),
                                            .entries = entries};
    return 0;
}

int
qc_config_text_replace (qc_config_text_t *self, int line, char *entries)
{
    if (!entries || !qc_config_text_editable (self, line) || add_edit (self, line, entries)) {
        free (entries);
        return -1;
    }
    return 0;
}

int
qc_config_text_comment (qc_config_text_t *self, int line)
{
    return qc_config_text_editable (self, line) ? add_edit (self, line, NULL) : -1;
}

static int
cmp_edit (const void *a, const void *b)
{
    return ((const edit_t *) a)->first - ((const edit_t *) b)->first;
}

/* Writes lines [from, to) of the text, each but the text's last with
 * its '\n'; prefix before each. */
static void
put_lines (FILE *f, const qc_config_text_t *t, size_t from, size_t to, const char *prefix)
{
    for (size_t j = from; j < to; j++) {
        fputs (prefix, f);
        fwrite (t->starts[j], 1, line_len (t, j), f);
        if (j + 1 < t->nlines)
            fputc ('\n', f);
    }
}

char *
qc_config_text_result (qc_config_text_t *self)
{
    if (!self)
        return NULL;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&out, &len);
    if (!f)
        return NULL;
    if (self->nedits)           /* qsort of NULL, 0 is undefined */
        qsort (self->edits, self->nedits, sizeof *self->edits, cmp_edit);
    size_t e = 0;
    for (size_t i = 0; i < self->nlines;) {
        const edit_t *ed = e < self->nedits && (size_t) self->edits[e].first == i + 1
                           ? &self->edits[e++] : NULL;
        if (!ed) {
            put_lines (f, self, i, i + 1, "");
            i++;
            continue;
        }
        if (!ed->entries)
            put_lines (f, self, i, (size_t) ed->last, "# ");
        else {
            /* "key =" (or "key:") and what precedes the value stay */
            const char *s = self->starts[i];
            size_t n = line_len (self, i), sep = strcspn (s, "=:");
            fwrite (s, 1, sep < n ? sep + 1 : n, f);
            fputc (' ', f);
            fputs (ed->entries, f);
            /* comment lines inside the value are kept, after it */
            for (size_t j = i + 1; j < (size_t) ed->last; j++)
                if (comment_line (self->starts[j], line_len (self, j))) {
                    fwrite (self->starts[j], 1, line_len (self, j), f);
                    fputc ('\n', f);
                }
        }
        i = (size_t) ed->last;
    }
    if (ferror (f)) {
        fclose (f);
        free (out);
        return NULL;
    }
    if (fclose (f)) {
        free (out);
        return NULL;
    }
    return out;
}
