/* HistoQC config.ini parser: lines, sections, keys, [DEFAULT] and
 * interpolation; the rules it follows are in config.h. The lookups and
 * typed getters are in config_get.c. */
#include "shared/config_int.h"
#include "shared/err.h"

#include <ctype.h>
#include <errno.h>
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
    qc_config_t *cfg;
    qc_config_section_t *cur;   /* NULL before the first header */
    long opt;                   /* index in cur of the value being read */
    size_t indent;              /* indentation of that key's line */
    char *err;
    size_t errlen;
    int *err_line;
} parser_t;

/* Reports a parse error; always returns -1. */
static int
parse_fail (parser_t *p, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    if (line > 0)
        qc_set_err (p->err, p->errlen, "config line %d: %s", line, msg);
    else
        qc_set_err (p->err, p->errlen, "config: %s", msg);
    if (p->err_line)
        *p->err_line = line;
    return -1;
}

/* A short printable copy of text for error messages: control bytes become
 * '?', long text is cut (at a UTF-8 character boundary) and marked. */
const char *
config_snippet (char *dst, size_t dlen, const char *s, size_t n)
{
    size_t max = dlen > 4 ? dlen - 4 : 0, k = n < max ? n : max;
    while (k < n && k > 0 && ((unsigned char) s[k] & 0xC0) == 0x80)
        k--;
    for (size_t i = 0; i < k; i++)
        dst[i] = ((unsigned char) s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (k < n && dlen > 4)
        memcpy (dst + k, "...", 4);
    else if (dlen)
        dst[k] = '\0';
    return dst;
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
    for (size_t i = 0; i < n;) {
        unsigned c = s[i], min;
        size_t len;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            len = 2, min = 0x80, c &= 0x1F;
        else if ((c & 0xF0) == 0xE0)
            len = 3, min = 0x800, c &= 0x0F;
        else if ((c & 0xF8) == 0xF0)
            len = 4, min = 0x10000, c &= 0x07;
        else
            return 0;
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

/* Appends n bytes, keeping the buffer NUL-terminated and at most max. */
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
    if (n)
        memcpy (b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static void
section_free (qc_config_section_t *sec)
{
    if (!sec)
        return;
    for (size_t i = 0; i < sec->n; i++) {
        free (sec->entries[i].key);
        free (sec->entries[i].raw.s);
        free (sec->entries[i].value);
        free (sec->entries[i].error);
        free (sec->entries[i].more_lines);
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
entry_t *
config_find_entry (const qc_config_section_t *sec, const char *key,
                   size_t upto)
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
        entry_t *t = realloc (sec->entries, cap * sizeof *t);
        if (!t)
            return NULL;
        sec->entries = t;
        sec->cap = cap;
    }
    entry_t *e = &sec->entries[sec->n];
    memset (e, 0, sizeof *e);
    if (!(e->key = strdup (key)) || buf_add (&e->raw, raw, rawlen, QC_CONFIG_MAX_TEXT)) {
        free (e->key);
        free (e->raw.s);
        return NULL;
    }
    e->line = line;
    sec->n++;
    cfg->nentries++;
    return e;
}

static int
header_line (parser_t *p, const char *s, size_t n, int lineno)
{
    char snip[80];
    const char *close = memchr (s, ']', n), *rest = close ? close + 1 : NULL;
    if (!close)
        return parse_fail (p, lineno, "unterminated section header '%s' (no ']')",
                           config_snippet (snip, sizeof snip, s, n));
    while (rest < s + n && is_ws (*rest))
        rest++;
    if (rest < s + n && *rest != '#' && *rest != ';')
        return parse_fail (p, lineno, "unexpected text after section header '%s'",
                           config_snippet (snip, sizeof snip, s, n));
    if (close == s + 1)
        return parse_fail (p, lineno, "empty section name '[]'");
    p->opt = -1;
    char *name = strndup (s + 1, (size_t) (close - s) - 1);
    if (!name)
        return parse_fail (p, lineno, "out of memory");
    if (strcmp (name, "DEFAULT") == 0) {
        free (name);
        p->cur = p->cfg->defaults;
        return 0;
    }
    const qc_config_section_t *dup = qc_config_section (p->cfg, name);
    if (dup || p->cfg->n >= QC_CONFIG_MAX_SECTIONS) {
        if (dup)
            parse_fail (p, lineno, "section [%s] appears twice (first on line %d)",
                        config_snippet (snip, sizeof snip, name, strlen (name)),
                        dup->line);
        else
            parse_fail (p, lineno, "more than %d sections", QC_CONFIG_MAX_SECTIONS);
        free (name);
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
    qc_config_section_t *sec = calloc (1, sizeof *sec);
    if (!sec)
        goto oom;
    sec->name = name;
    sec->line = lineno;
    p->cfg->sections[p->cfg->n++] = p->cur = sec;
    return 0;
oom:
    free (name);
    return parse_fail (p, lineno, "out of memory");
}

static int
option_line (parser_t *p, const char *s, size_t n, size_t indent, int lineno)
{
    char snip[80];
    size_t sep = 0, klen;
    while (sep < n && s[sep] != '=' && s[sep] != ':')
        sep++;
    klen = sep;
    if (sep == n)
        return parse_fail (p, lineno, "expected 'key = value' or 'key: value', "
                           "got '%s'", config_snippet (snip, sizeof snip, s, n));
    while (klen > 0 && is_ws (s[klen - 1]))
        klen--;
    if (klen == 0)
        return parse_fail (p, lineno, "no key before '%c' in '%s'", s[sep],
                           config_snippet (snip, sizeof snip, s, n));
    if (!p->cur)
        return parse_fail (p, lineno, "key outside any section (the first "
                           "setting must follow a [section] header)");
    char *key = strndup (s, klen);
    if (!key)
        return parse_fail (p, lineno, "out of memory");
    for (char *k = key; *k; k++)
        *k = (char) tolower ((unsigned char) *k);
    const entry_t *dup = config_find_entry (p->cur, key, p->cur->n);
    size_t v = sep + 1;
    while (v < n && is_ws (s[v]))
        v++;
    entry_t *e = dup ? NULL : entry_add (p->cfg, p->cur, key, s + v, n - v, lineno);
    if (dup)
        parse_fail (p, lineno, "key '%s' appears twice in section [%s] (first on "
                    "line %d)", config_snippet (snip, sizeof snip, key, klen),
                    p->cur->name, dup->line);
    else if (!e)
        parse_fail (p, lineno, p->cfg->nentries >= QC_CONFIG_MAX_ENTRIES
                    ? "too many keys" : "out of memory");
    free (key);
    if (!e)
        return -1;
    p->cur->nown = p->cur->n;
    p->opt = (long) (p->cur->n - 1);
    p->indent = indent;
    return 0;
}

/* Whether a line that is no UTF-8 text is UTF-16's (Notepad's
 * "Unicode"): its byte order mark, or an ASCII character's zero byte
 * beside each (a line after the first starts with the zero byte of the
 * line break before it). */
static bool
looks_utf16 (const unsigned char *s, size_t n)
{
    if (n >= 2 && ((s[0] == 0xff && s[1] == 0xfe) || (s[0] == 0xfe && s[1] == 0xff)))
        return true;
    size_t from = n && !s[0] ? 1 : 0;
    if (n < from + 2)
        return false;
    for (size_t i = from; i + 1 < n; i += 2)
        if (!((s[i] && !s[i + 1]) || (!s[i] && s[i + 1])))
            return false;
    return true;
}

/* One physical line (without its '\n'). The order of the tests is
 * configparser's: comments, blank lines, continuations (so an indented
 * "[x]" continues a value), headers, keys. */
static int
parse_line (parser_t *p, const char *line, size_t n, int lineno)
{
    if (n > QC_CONFIG_MAX_LINE)
        return parse_fail (p, lineno, "line is longer than %u bytes",
                           QC_CONFIG_MAX_LINE);
    bool utf8 = !memchr (line, '\0', n) && utf8_valid ((const unsigned char *) line, n);
    if (!utf8 && looks_utf16 ((const unsigned char *) line, n))
        return parse_fail (p, lineno, "UTF-16 text (Notepad's \"Unicode\"); save the config "
                           "as UTF-8");
    if (memchr (line, '\0', n))
        return parse_fail (p, lineno, "NUL byte (binary data, not a text config)");
    if (!utf8)
        return parse_fail (p, lineno, "not UTF-8 text");
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
    /* A blank line is kept inside a value (configparser drops only the
     * trailing ones); a deeper-indented line continues it. */
    if (opt && (len == 0 || a > p->indent)) {
        if (opt->nmore == opt->capmore) {
            size_t cap = opt->capmore ? opt->capmore * 2 : 16;
            int *t = realloc (opt->more_lines, cap * sizeof *t);
            if (!t)
                return parse_fail (p, lineno, "out of memory");
            opt->more_lines = t;
            opt->capmore = cap;
        }
        opt->more_lines[opt->nmore++] = lineno;
        if (buf_add (&opt->raw, "\n", 1, QC_CONFIG_MAX_TEXT)
            || buf_add (&opt->raw, s, len, QC_CONFIG_MAX_TEXT))
            return parse_fail (p, lineno, "out of memory");
        return 0;
    }
    if (len == 0)
        return 0;
    if (s[0] == '[')
        return header_line (p, s, len, lineno);
    return option_line (p, s, len, a, lineno);
}

/* Appends n bytes of an interpolated value within the budget. */
static int
emit (buf_t *out, const char *s, size_t n, size_t *budget)
{
    if (n > *budget || buf_add (out, s, n, QC_CONFIG_MAX_TEXT) != 0)
        return -1;
    *budget -= n;
    return 0;
}

size_t
config_ref_name (const char *pc, const char **name)
{
    const char *close = pc && pc[0] == '%' && pc[1] == '(' ? strchr (pc + 2, ')') : NULL;
    if (!close || close == pc + 2 || close[1] != 's')
        return 0;
    *name = pc + 2;
    return (size_t) (close - pc - 2);
}

static int
interpolate (const qc_config_section_t *sec, const char *raw, int depth,
             buf_t *out, size_t *budget, char *err, size_t errlen)
{
    if (depth > MAX_INTERP_DEPTH) {
        qc_set_err (err, errlen, "%%(...)s references nest deeper than %d "
                        "levels", MAX_INTERP_DEPTH);
        return -1;
    }
    for (const char *p = raw; *p;) {
        const char *pc = strchr (p, '%');
        if (emit (out, p, pc ? (size_t) (pc - p) : strlen (p), budget))
            goto too_long;
        if (!pc)
            break;
        if (pc[1] == '%') {
            if (emit (out, "%", 1, budget))
                goto too_long;
            p = pc + 2;
            continue;
        }
        const char *at = NULL;
        char name[256], snip[80];
        size_t nlen = config_ref_name (pc, &at);
        if (nlen == 0 || nlen >= sizeof name) {
            qc_set_err (err, errlen, "'%%' must be written '%%%%' or start "
                            "a '%%(key)s' reference");
            return -1;
        }
        memcpy (name, at, nlen);
        name[nlen] = '\0';
        const entry_t *ref = config_find_entry (sec, name, sec->n);
        if (!ref) {
            qc_set_err (err, errlen, "'%%(%s)s' names a key the section does "
                            "not have", config_snippet (snip, sizeof snip, name, nlen));
            return -1;
        }
        /* Like configparser, only a value that holds a '%' is expanded
         * again (and counts towards the depth limit). */
        if (strchr (ref->raw.s, '%')) {
            if (interpolate (sec, ref->raw.s, depth + 1, out, budget, err, errlen))
                return -1;
        } else if (emit (out, ref->raw.s, ref->raw.len, budget)) {
            goto too_long;
        }
        p = at + nlen + 2;
    }
    return 0;
too_long:
    qc_set_err (err, errlen, "value grows too long through %%(...)s references");
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
            buf_t *r = &sec->entries[i].raw;
            while (r->len && (is_ws (r->s[r->len - 1]) || r->s[r->len - 1] == '\n'))
                r->s[--r->len] = '\0';
        }
    }
    const qc_config_section_t *d = cfg->defaults;
    for (size_t s = 0; s < cfg->n; s++) {
        qc_config_section_t *sec = cfg->sections[s];
        for (size_t i = 0; i < d->n; i++) {
            const entry_t *de = &d->entries[i];
            if (!config_find_entry (sec, de->key, sec->nown)
                && !entry_add (cfg, sec, de->key, de->raw.s, de->raw.len, de->line))
                return parse_fail (p, 0, cfg->nentries >= QC_CONFIG_MAX_ENTRIES
                                   ? "too many keys ([DEFAULT] keys count once "
                                     "in every section)" : "out of memory");
        }
    }
    size_t budget = MAX_INTERP_TOTAL;
    for (size_t s = 0; s < cfg->n; s++) {
        qc_config_section_t *sec = cfg->sections[s];
        for (size_t i = 0; i < sec->n; i++) {
            entry_t *e = &sec->entries[i];
            buf_t out = { 0 };
            char why[256];
            if (interpolate (sec, e->raw.s, 1, &out, &budget, why, sizeof why) == 0) {
                e->value = out.s ? out.s : strdup ("");
            } else {
                free (out.s);
                if (asprintf (&e->error, "[%s] %s (line %d): %s", sec->name, e->key,
                              e->line, why) < 0)
                    e->error = NULL;
            }
            if (!e->value && !e->error)
                return parse_fail (p, 0, "out of memory");
        }
    }
    return 0;
}

qc_config_t *
qc_config_parse (const char *text, size_t len, char *err, size_t errlen,
                 int *err_line)
{
    parser_t p = { .opt = -1, .err = err, .errlen = errlen, .err_line = err_line };
    if (err && errlen)
        err[0] = '\0';
    if (err_line)
        *err_line = 0;
    if (!text && len) {
        parse_fail (&p, 0, "no text");
        return NULL;
    }
    if (len > QC_CONFIG_MAX_TEXT) {
        parse_fail (&p, 0, "config is larger than %u bytes", QC_CONFIG_MAX_TEXT);
        return NULL;
    }
    qc_config_t *cfg = p.cfg = calloc (1, sizeof *cfg);
    if (!cfg || !(cfg->defaults = calloc (1, sizeof *cfg->defaults))
        || !(cfg->defaults->name = strdup ("DEFAULT"))) {
        parse_fail (&p, 0, "out of memory");
        qc_config_destroy (&cfg);
        return NULL;
    }
    size_t pos = len >= 3 && memcmp (text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    for (int lineno = 1; pos < len; lineno++) {
        const char *nl = memchr (text + pos, '\n', len - pos);
        size_t n = nl ? (size_t) (nl - (text + pos)) : len - pos;
        if (parse_line (&p, text + pos, n, lineno) != 0) {
            qc_config_destroy (&cfg);
            return NULL;
        }
        pos += n + 1;
    }
    if (finish (&p) != 0)
        qc_config_destroy (&cfg);
    return cfg;
}

qc_config_t *
qc_config_load (const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        qc_set_err (err, errlen, "config: no file name");
        return NULL;
    }
    FILE *f = fopen (path, "rb");
    char *text = f ? malloc (QC_CONFIG_MAX_TEXT + 1) : NULL;
    if (!text) {
        qc_set_err (err, errlen, "config %s: %s", path, f ? "out of memory"
                        : strerror (errno));
        if (f)
            fclose (f);
        return NULL;
    }
    /* One byte more than allowed tells "too large" from "exactly full". */
    size_t n = fread (text, 1, QC_CONFIG_MAX_TEXT + 1, f);
    int rerr = ferror (f);
    fclose (f);
    qc_config_t *cfg = NULL;
    char why[512];
    if (rerr)
        qc_set_err (err, errlen, "config %s: read error", path);
    else if (n > QC_CONFIG_MAX_TEXT)
        qc_set_err (err, errlen, "config %s: larger than %u bytes", path,
                        QC_CONFIG_MAX_TEXT);
    else if (!(cfg = qc_config_parse (text, n, why, sizeof why, NULL)))
        qc_set_err (err, errlen, "%s: %s", path, why);
    free (text);
    return cfg;
}

