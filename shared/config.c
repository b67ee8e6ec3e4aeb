/* HistoQC config.ini parser; the rules it follows are in config.h. */
#include "shared/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* configparser's limit on nested %(key)s references. */
#define MAX_INTERP_DEPTH 10
/* Total bytes all interpolations of one config may produce: references
 * can double a value at each level, so an unbounded config could ask for
 * gigabytes. */
#define MAX_INTERP_TOTAL (16u << 20)

typedef struct {
    char *key;          /* lower-cased */
    char *raw;          /* as written; continuation lines joined by '\n' */
    size_t rawlen, rawcap;
    char *value;        /* interpolated; NULL when that failed */
    char *error;        /* why interpolation failed */
    int line;
    int inherited;      /* copied from [DEFAULT] */
} entry_t;

struct qc_config_section {
    char *name;
    int line;
    entry_t *entries;   /* own keys first, then inherited ones */
    size_t n, cap, nown;
};

struct qc_config {
    qc_config_section_t **sections;
    size_t n, cap;
    qc_config_section_t *defaults;
    size_t nentries;
};

typedef struct {
    qc_config_t *cfg;
    qc_config_section_t *cur;   /* NULL before the first header */
    long opt;                   /* index in cur of the value being read */
    size_t indent;              /* indentation of that key's line */
    char *err;
    size_t errlen;
    int *err_line;
} parser_t;

typedef struct {
    char *s;
    size_t len, cap;
} buf_t;

static void
set_err (char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (err, errlen, fmt, ap);
    va_end (ap);
}

static void
parse_fail (parser_t *p, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    if (line > 0)
        set_err (p->err, p->errlen, "config line %d: %s", line, msg);
    else
        set_err (p->err, p->errlen, "config: %s", msg);
    if (p->err_line)
        *p->err_line = line;
}

/* A short printable copy of text for error messages: control bytes become
 * '?', long text is cut (at a UTF-8 character boundary) and marked. */
static void
snippet (char *dst, size_t dlen, const char *s, size_t n)
{
    const size_t max = dlen > 4 ? dlen - 4 : 0;
    size_t k = n < max ? n : max;
    while (k < n && k > 0 && ((unsigned char) s[k] & 0xC0) == 0x80)
        k--;
    for (size_t i = 0; i < k; i++)
        dst[i] = ((unsigned char) s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (k < n && dlen > 4)
        memcpy (dst + k, "...", 4);
    else if (dlen)
        dst[k] = '\0';
}

static int
is_ws (char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* 1 when the n bytes are well-formed UTF-8 (no overlongs, surrogates or
 * code points above U+10FFFF). */
static int
utf8_valid (const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, min = 0x80, c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, min = 0x800, c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, min = 0x10000, c &= 0x07;
        } else {
            return 0;
        }
        if (n - i < len)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static int
buf_add (buf_t *b, const char *s, size_t n, size_t max)
{
    if (b->len + n > max)
        return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *t = realloc (b->s, cap);
        if (!t)
            return -1;
        b->s = t;
        b->cap = cap;
    }
    memcpy (b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static qc_config_section_t *
section_new (const char *name, size_t n, int line)
{
    qc_config_section_t *sec = calloc (1, sizeof *sec);
    if (!sec)
        return NULL;
    sec->name = strndup (name, n);
    if (!sec->name) {
        free (sec);
        return NULL;
    }
    sec->line = line;
    return sec;
}

static void
section_free (qc_config_section_t *sec)
{
    if (!sec)
        return;
    for (size_t i = 0; i < sec->n; i++) {
        free (sec->entries[i].key);
        free (sec->entries[i].raw);
        free (sec->entries[i].value);
        free (sec->entries[i].error);
    }
    free (sec->entries);
    free (sec->name);
    free (sec);
}

void
qc_config_destroy (qc_config_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_config_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++)
        section_free (self->sections[i]);
    free (self->sections);
    section_free (self->defaults);
    free (self);
    *self_p = NULL;
}

/* Keys are stored lower-cased, so lookups fold only the caller's key. */
static entry_t *
find_entry (const qc_config_section_t *sec, const char *key, size_t upto)
{
    for (size_t i = 0; i < upto; i++) {
        const char *a = sec->entries[i].key, *b = key;
        while (*a && *a == tolower ((unsigned char) *b))
            a++, b++;
        if (!*a && !*b)
            return &sec->entries[i];
    }
    return NULL;
}

/* Appends an entry (key already lower-cased) and returns it, or NULL. */
static entry_t *
entry_add (qc_config_t *cfg, qc_config_section_t *sec, const char *key,
           const char *raw, size_t rawlen, int line)
{
    if (cfg->nentries >= QC_CONFIG_MAX_ENTRIES)
        return NULL;
    if (sec->n == sec->cap) {
        size_t cap = sec->cap ? sec->cap * 2 : 16;
        entry_t *e = realloc (sec->entries, cap * sizeof *e);
        if (!e)
            return NULL;
        sec->entries = e;
        sec->cap = cap;
    }
    entry_t *e = &sec->entries[sec->n];
    memset (e, 0, sizeof *e);
    e->key = strdup (key);
    e->raw = strndup (raw, rawlen);
    if (!e->key || !e->raw) {
        free (e->key);
        free (e->raw);
        return NULL;
    }
    e->rawlen = e->rawcap = rawlen;
    e->line = line;
    sec->n++;
    cfg->nentries++;
    return e;
}

/* Appends "\n" + text to a value being continued. */
static int
entry_continue (entry_t *e, const char *s, size_t n)
{
    size_t need = e->rawlen + 1 + n + 1;
    if (need > e->rawcap) {
        size_t cap = e->rawcap < 32 ? 64 : e->rawcap * 2;
        while (cap < need)
            cap *= 2;
        char *t = realloc (e->raw, cap);
        if (!t)
            return -1;
        e->raw = t;
        e->rawcap = cap;
    }
    e->raw[e->rawlen++] = '\n';
    memcpy (e->raw + e->rawlen, s, n);
    e->rawlen += n;
    e->raw[e->rawlen] = '\0';
    return 0;
}

static int
header_line (parser_t *p, const char *s, size_t n, int lineno)
{
    const char *close = memchr (s, ']', n);
    char snip[80];
    if (!close) {
        snippet (snip, sizeof snip, s, n);
        parse_fail (p, lineno, "unterminated section header '%s' (no ']')",
                    snip);
        return -1;
    }
    size_t namelen = (size_t) (close - s) - 1;
    const char *rest = close + 1, *end = s + n;
    while (rest < end && is_ws (*rest))
        rest++;
    if (rest < end && *rest != '#' && *rest != ';') {
        snippet (snip, sizeof snip, s, n);
        parse_fail (p, lineno, "unexpected text after section header '%s'",
                    snip);
        return -1;
    }
    if (namelen == 0) {
        parse_fail (p, lineno, "empty section name '[]'");
        return -1;
    }
    p->opt = -1;
    if (namelen == 7 && memcmp (s + 1, "DEFAULT", 7) == 0) {
        p->cur = p->cfg->defaults;
        return 0;
    }
    for (size_t i = 0; i < p->cfg->n; i++) {
        const qc_config_section_t *o = p->cfg->sections[i];
        if (strlen (o->name) == namelen && memcmp (o->name, s + 1, namelen) == 0) {
            snippet (snip, sizeof snip, s + 1, namelen);
            parse_fail (p, lineno, "section [%s] appears twice (first on line %d)",
                        snip, o->line);
            return -1;
        }
    }
    if (p->cfg->n >= QC_CONFIG_MAX_SECTIONS) {
        parse_fail (p, lineno, "more than %d sections", QC_CONFIG_MAX_SECTIONS);
        return -1;
    }
    if (p->cfg->n == p->cfg->cap) {
        size_t cap = p->cfg->cap ? p->cfg->cap * 2 : 16;
        qc_config_section_t **t = realloc (p->cfg->sections, cap * sizeof *t);
        if (!t)
            goto oom;
        p->cfg->sections = t;
        p->cfg->cap = cap;
    }
    qc_config_section_t *sec = section_new (s + 1, namelen, lineno);
    if (!sec)
        goto oom;
    p->cfg->sections[p->cfg->n++] = sec;
    p->cur = sec;
    return 0;
oom:
    parse_fail (p, lineno, "out of memory");
    return -1;
}

static int
option_line (parser_t *p, const char *s, size_t n, size_t indent, int lineno)
{
    char snip[80];
    size_t sep = 0;
    while (sep < n && s[sep] != '=' && s[sep] != ':')
        sep++;
    if (sep == n) {
        snippet (snip, sizeof snip, s, n);
        parse_fail (p, lineno, "expected 'key = value' or 'key: value', got '%s'",
                    snip);
        return -1;
    }
    size_t klen = sep;
    while (klen > 0 && is_ws (s[klen - 1]))
        klen--;
    if (klen == 0) {
        snippet (snip, sizeof snip, s, n);
        parse_fail (p, lineno, "no key before '%c' in '%s'", s[sep], snip);
        return -1;
    }
    if (!p->cur) {
        parse_fail (p, lineno, "key outside any section (the first setting "
                    "must follow a [section] header)");
        return -1;
    }
    char *key = strndup (s, klen);
    if (!key) {
        parse_fail (p, lineno, "out of memory");
        return -1;
    }
    for (char *k = key; *k; k++)
        *k = (char) tolower ((unsigned char) *k);
    const entry_t *dup = find_entry (p->cur, key, p->cur->n);
    if (dup) {
        snippet (snip, sizeof snip, key, klen);
        parse_fail (p, lineno, "key '%s' appears twice in section [%s] "
                    "(first on line %d)", snip, p->cur->name, dup->line);
        free (key);
        return -1;
    }
    size_t v = sep + 1;
    while (v < n && is_ws (s[v]))
        v++;
    entry_t *e = entry_add (p->cfg, p->cur, key, s + v, n - v, lineno);
    free (key);
    if (!e) {
        parse_fail (p, lineno, p->cfg->nentries >= QC_CONFIG_MAX_ENTRIES
                    ? "too many keys" : "out of memory");
        return -1;
    }
    p->cur->nown = p->cur->n;
    p->opt = (long) (p->cur->n - 1);
    p->indent = indent;
    return 0;
}

/* One physical line (without its '\n'). */
static int
parse_line (parser_t *p, const char *line, size_t n, int lineno)
{
    if (n > QC_CONFIG_MAX_LINE) {
        parse_fail (p, lineno, "line is longer than %u bytes", QC_CONFIG_MAX_LINE);
        return -1;
    }
    if (memchr (line, '\0', n)) {
        parse_fail (p, lineno, "NUL byte (binary data, not a text config)");
        return -1;
    }
    if (!utf8_valid ((const unsigned char *) line, n)) {
        parse_fail (p, lineno, "not UTF-8 text");
        return -1;
    }
    size_t a = 0, b = n;
    while (a < b && is_ws (line[a]))
        a++;
    while (b > a && is_ws (line[b - 1]))
        b--;
    const char *s = line + a;
    size_t len = b - a;
    if (len && (s[0] == '#' || s[0] == ';'))
        return 0;
    entry_t *opt = p->cur && p->opt >= 0 ? &p->cur->entries[p->opt] : NULL;
    if (len == 0) {
        /* configparser keeps blank lines inside a value (and drops the
         * trailing ones when the value ends). */
        if (opt && entry_continue (opt, "", 0) != 0) {
            parse_fail (p, lineno, "out of memory");
            return -1;
        }
        return 0;
    }
    if (opt && a > p->indent) {
        if (entry_continue (opt, s, len) != 0) {
            parse_fail (p, lineno, "out of memory");
            return -1;
        }
        return 0;
    }
    if (s[0] == '[')
        return header_line (p, s, len, lineno);
    return option_line (p, s, len, a, lineno);
}

static int
interpolate (const qc_config_section_t *sec, const char *raw, int depth,
             buf_t *out, size_t *budget, char *err, size_t errlen)
{
    if (depth > MAX_INTERP_DEPTH) {
        set_err (err, errlen, "%%(...)s references nest deeper than %d levels",
                 MAX_INTERP_DEPTH);
        return -1;
    }
    const char *p = raw;
    while (*p) {
        const char *pc = strchr (p, '%');
        size_t n = pc ? (size_t) (pc - p) : strlen (p);
        if (n > *budget || buf_add (out, p, n, QC_CONFIG_MAX_TEXT) != 0)
            goto too_long;
        *budget -= n;
        if (!pc)
            break;
        if (pc[1] == '%') {
            if (!*budget || buf_add (out, "%", 1, QC_CONFIG_MAX_TEXT) != 0)
                goto too_long;
            (*budget)--;
            p = pc + 2;
            continue;
        }
        const char *close = pc[1] == '(' ? strchr (pc + 2, ')') : NULL;
        if (!close || close == pc + 2 || close[1] != 's') {
            set_err (err, errlen, "'%%' must be written '%%%%' or start a "
                     "'%%(key)s' reference");
            return -1;
        }
        char name[256];
        size_t nlen = (size_t) (close - pc - 2);
        if (nlen >= sizeof name) {
            set_err (err, errlen, "'%%(...)s' reference to a key that is too long");
            return -1;
        }
        memcpy (name, pc + 2, nlen);
        name[nlen] = '\0';
        const entry_t *ref = find_entry (sec, name, sec->n);
        if (!ref) {
            char snip[80];
            snippet (snip, sizeof snip, name, nlen);
            set_err (err, errlen, "'%%(%s)s' names a key the section does not have",
                     snip);
            return -1;
        }
        /* Like configparser, only a value that holds a '%' is expanded
         * again (and counts towards the depth limit). */
        if (strchr (ref->raw, '%')) {
            if (interpolate (sec, ref->raw, depth + 1, out, budget, err, errlen))
                return -1;
        } else {
            size_t rn = strlen (ref->raw);
            if (rn > *budget || buf_add (out, ref->raw, rn, QC_CONFIG_MAX_TEXT))
                goto too_long;
            *budget -= rn;
        }
        p = close + 2;
    }
    return 0;
too_long:
    set_err (err, errlen, "value grows too long through %%(...)s references");
    return -1;
}

/* Drops trailing blank lines of values, copies [DEFAULT] keys into every
 * section and interpolates every value once, so that the config is
 * read-only from here on. */
static int
finish (parser_t *p)
{
    qc_config_t *cfg = p->cfg;
    for (size_t s = 0; s <= cfg->n; s++) {
        qc_config_section_t *sec = s < cfg->n ? cfg->sections[s] : cfg->defaults;
        for (size_t i = 0; i < sec->n; i++) {
            entry_t *e = &sec->entries[i];
            while (e->rawlen && (is_ws (e->raw[e->rawlen - 1])
                                 || e->raw[e->rawlen - 1] == '\n'))
                e->raw[--e->rawlen] = '\0';
        }
    }
    const qc_config_section_t *d = cfg->defaults;
    for (size_t s = 0; s < cfg->n; s++) {
        qc_config_section_t *sec = cfg->sections[s];
        for (size_t i = 0; i < d->n; i++) {
            if (find_entry (sec, d->entries[i].key, sec->nown))
                continue;
            entry_t *e = entry_add (cfg, sec, d->entries[i].key, d->entries[i].raw,
                                    d->entries[i].rawlen, d->entries[i].line);
            if (!e) {
                parse_fail (p, 0, cfg->nentries >= QC_CONFIG_MAX_ENTRIES
                            ? "too many keys ([DEFAULT] keys count once in "
                              "every section)" : "out of memory");
                return -1;
            }
            e->inherited = 1;
        }
    }
    size_t budget = MAX_INTERP_TOTAL;
    for (size_t s = 0; s < cfg->n; s++) {
        qc_config_section_t *sec = cfg->sections[s];
        for (size_t i = 0; i < sec->n; i++) {
            entry_t *e = &sec->entries[i];
            buf_t out = { 0 };
            char why[256];
            if (interpolate (sec, e->raw, 1, &out, &budget, why, sizeof why) == 0) {
                e->value = out.s ? out.s : strdup ("");
                if (!e->value) {
                    parse_fail (p, 0, "out of memory");
                    return -1;
                }
                continue;
            }
            free (out.s);
            if (asprintf (&e->error, "[%s] %s (line %d): %s", sec->name, e->key,
                          e->line, why) < 0) {
                e->error = NULL;
                parse_fail (p, 0, "out of memory");
                return -1;
            }
        }
    }
    return 0;
}

qc_config_t *
qc_config_parse (const char *text, size_t len, char *err, size_t errlen,
                 int *err_line)
{
    if (err && errlen)
        err[0] = '\0';
    if (err_line)
        *err_line = 0;
    qc_config_t *cfg = NULL;
    parser_t p = { .opt = -1, .err = err, .errlen = errlen, .err_line = err_line };
    if (!text && len) {
        parse_fail (&p, 0, "no text");
        return NULL;
    }
    if (len > QC_CONFIG_MAX_TEXT) {
        parse_fail (&p, 0, "config is larger than %u bytes", QC_CONFIG_MAX_TEXT);
        return NULL;
    }
    cfg = calloc (1, sizeof *cfg);
    if (!cfg || !(cfg->defaults = section_new ("DEFAULT", 7, 0))) {
        free (cfg);
        parse_fail (&p, 0, "out of memory");
        return NULL;
    }
    p.cfg = cfg;
    size_t pos = 0;
    if (len >= 3 && memcmp (text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    int lineno = 0;
    while (pos < len) {
        const char *nl = memchr (text + pos, '\n', len - pos);
        size_t n = nl ? (size_t) (nl - (text + pos)) : len - pos;
        if (parse_line (&p, text + pos, n, ++lineno) != 0)
            goto fail;
        pos += n + (nl ? 1 : 0);
    }
    if (finish (&p) != 0)
        goto fail;
    return cfg;
fail:
    qc_config_destroy (&cfg);
    return NULL;
}

qc_config_t *
qc_config_load (const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        set_err (err, errlen, "config: no file name");
        return NULL;
    }
    FILE *f = fopen (path, "rb");
    if (!f) {
        set_err (err, errlen, "config %s: %s", path, strerror (errno));
        return NULL;
    }
    char *text = malloc (QC_CONFIG_MAX_TEXT + 1);
    if (!text) {
        fclose (f);
        set_err (err, errlen, "config %s: out of memory", path);
        return NULL;
    }
    /* One byte more than allowed tells "too large" from "exactly full". */
    size_t n = fread (text, 1, QC_CONFIG_MAX_TEXT + 1, f);
    int rerr = ferror (f);
    fclose (f);
    qc_config_t *cfg = NULL;
    if (rerr)
        set_err (err, errlen, "config %s: read error", path);
    else if (n > QC_CONFIG_MAX_TEXT)
        set_err (err, errlen, "config %s: larger than %u bytes", path,
                 QC_CONFIG_MAX_TEXT);
    else {
        char why[512];
        cfg = qc_config_parse (text, n, why, sizeof why, NULL);
        if (!cfg)
            set_err (err, errlen, "%s: %s", path, why);
    }
    free (text);
    return cfg;
}

size_t
qc_config_nsections (const qc_config_t *self)
{
    return self ? self->n : 0;
}

const qc_config_section_t *
qc_config_section_at (const qc_config_t *self, size_t index)
{
    return self && index < self->n ? self->sections[index] : NULL;
}

const qc_config_section_t *
qc_config_section (const qc_config_t *self, const char *name)
{
    if (!self || !name)
        return NULL;
    for (size_t i = 0; i < self->n; i++)
        if (strcmp (self->sections[i]->name, name) == 0)
            return self->sections[i];
    return NULL;
}

const char *
qc_config_section_name (const qc_config_section_t *sec)
{
    return sec ? sec->name : NULL;
}

int
qc_config_section_line (const qc_config_section_t *sec)
{
    return sec ? sec->line : 0;
}

size_t
qc_config_section_nkeys (const qc_config_section_t *sec)
{
    return sec ? sec->nown : 0;
}

const char *
qc_config_section_key (const qc_config_section_t *sec, size_t index)
{
    return sec && index < sec->nown ? sec->entries[index].key : NULL;
}

int
qc_config_key_line (const qc_config_section_t *sec, const char *key)
{
    const entry_t *e = sec && key ? find_entry (sec, key, sec->n) : NULL;
    return e ? e->line : 0;
}

int
qc_config_has_key (const qc_config_section_t *sec, const char *key)
{
    return sec && key && find_entry (sec, key, sec->n) != NULL;
}

int
qc_config_section_check (const qc_config_section_t *sec, char *err,
                         size_t errlen)
{
    if (!sec)
        return 0;
    for (size_t i = 0; i < sec->n; i++)
        if (sec->entries[i].error) {
            set_err (err, errlen, "%s", sec->entries[i].error);
            return -1;
        }
    return 0;
}

/* Finds key for a getter: 1 found (*e set), 0 absent, -1 error. */
static int
lookup (const qc_config_section_t *sec, const char *key, const entry_t **e,
        char *err, size_t errlen)
{
    if (!key || !*key) {
        set_err (err, errlen, "config: no key given");
        return -1;
    }
    *e = sec ? find_entry (sec, key, sec->n) : NULL;
    if (!*e)
        return 0;
    if ((*e)->error) {
        set_err (err, errlen, "%s", (*e)->error);
        return -1;
    }
    return 1;
}

static int
bad_value (const qc_config_section_t *sec, const entry_t *e, const char *what,
           char *err, size_t errlen)
{
    char snip[100];
    snippet (snip, sizeof snip, e->value, strlen (e->value));
    set_err (err, errlen, "[%s] %s = '%s' (line %d): %s", sec->name, e->key, snip,
             e->line, what);
    return -1;
}

int
qc_config_get_string (const qc_config_section_t *sec, const char *key,
                      const char *def, const char **out, char *err,
                      size_t errlen)
{
    const entry_t *e;
    if (!out) {
        set_err (err, errlen, "config: no place for the value");
        return -1;
    }
    int r = lookup (sec, key, &e, err, errlen);
    if (r < 0)
        return -1;
    *out = r ? e->value : def;
    return 0;
}

int
qc_config_get_int (const qc_config_section_t *sec, const char *key,
                   long long def, long long *out, char *err, size_t errlen)
{
    const entry_t *e;
    if (!out) {
        set_err (err, errlen, "config: no place for the value");
        return -1;
    }
    int r = lookup (sec, key, &e, err, errlen);
    if (r <= 0) {
        if (r == 0)
            *out = def;
        return r;
    }
    const char *s = e->value;
    size_t i = (*s == '+' || *s == '-') ? 1 : 0;
    if (!s[i])
        return bad_value (sec, e, "not an integer", err, errlen);
    for (; s[i]; i++)
        if (!isdigit ((unsigned char) s[i]))
            return bad_value (sec, e, "not an integer", err, errlen);
    errno = 0;
    long long v = strtoll (s, NULL, 10);
    if (errno == ERANGE)
        return bad_value (sec, e, "integer out of range", err, errlen);
    *out = v;
    return 0;
}

int
qc_config_get_double (const qc_config_section_t *sec, const char *key,
                      double def, double *out, char *err, size_t errlen)
{
    const entry_t *e;
    if (!out) {
        set_err (err, errlen, "config: no place for the value");
        return -1;
    }
    int r = lookup (sec, key, &e, err, errlen);
    if (r <= 0) {
        if (r == 0)
            *out = def;
        return r;
    }
    const char *s = e->value;
    /* strtod also reads hex, "inf" and "nan"; a parameter is none of
     * those, so only decimal characters are let through. */
    int digits = 0;
    for (const char *c = s; *c; c++) {
        if (isdigit ((unsigned char) *c))
            digits = 1;
        else if (!strchr ("+-.eE", *c))
            return bad_value (sec, e, "not a number", err, errlen);
    }
    char *end = NULL;
    errno = 0;
    double v = strtod (s, &end);
    if (!digits || end == s || *end)
        return bad_value (sec, e, "not a number", err, errlen);
    if (!isfinite (v) || errno == ERANGE)
        return bad_value (sec, e, "number out of range", err, errlen);
    *out = v;
    return 0;
}

int
qc_config_get_bool (const qc_config_section_t *sec, const char *key, int def,
                    int *out, char *err, size_t errlen)
{
    static const char *const yes[] = { "y", "yes", "t", "true", "on", "1" };
    static const char *const no[] = { "n", "no", "f", "false", "off", "0" };
    const entry_t *e;
    if (!out) {
        set_err (err, errlen, "config: no place for the value");
        return -1;
    }
    int r = lookup (sec, key, &e, err, errlen);
    if (r <= 0) {
        if (r == 0)
            *out = def ? 1 : 0;
        return r;
    }
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (strcasecmp (e->value, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp (e->value, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return bad_value (sec, e, "not a boolean (true/false, yes/no, on/off, 1/0)",
                      err, errlen);
}
