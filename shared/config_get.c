/* Reading a parsed config: sections, keys and the typed getters, with
 * messages that name section, key, value and line. The parser is in
 * config.c; the rules are in config.h. */
#include "shared/config_int.h"
#include "shared/err.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    for (size_t i = 0; self && name && i < self->n; i++)
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

size_t
qc_config_section_nall (const qc_config_section_t *sec)
{
    return sec ? sec->n : 0;
}

const char *
qc_config_section_key_all (const qc_config_section_t *sec, size_t index)
{
    return sec && index < sec->n ? sec->entries[index].key : NULL;
}

const char *
qc_config_raw_value (const qc_config_section_t *sec, const char *key)
{
    const entry_t *e = sec && key ? config_find_entry (sec, key, sec->n) : NULL;
    return e ? e->raw.s : NULL;
}

int
qc_config_key_line (const qc_config_section_t *sec, const char *key)
{
    const entry_t *e = sec && key ? config_find_entry (sec, key, sec->n) : NULL;
    return e ? e->line : 0;
}

int
qc_config_value_line (const qc_config_section_t *sec, const char *key, size_t piece)
{
    const entry_t *e = sec && key ? config_find_entry (sec, key, sec->n) : NULL;
    if (!e)
        return 0;
    /* a %(x)s reference may have moved the value's lines: the key's line */
    if (piece == 0 || piece > e->nmore || strchr (e->raw.s, '%'))
        return e->line;
    return e->more_lines[piece - 1];
}

int
qc_config_has_key (const qc_config_section_t *sec, const char *key)
{
    return sec && key && config_find_entry (sec, key, sec->n) != NULL;
}

int
qc_config_section_check (const qc_config_section_t *sec, char *err,
                         size_t errlen)
{
    for (size_t i = 0; sec && i < sec->n; i++)
        if (sec->entries[i].error) {
            qc_set_err (err, errlen, "%s", sec->entries[i].error);
            return -1;
        }
    return 0;
}

/* Finds key for a getter: 1 found (*e set), 0 absent, -1 error. */
static int
lookup (const qc_config_section_t *sec, const char *key, const void *out,
        const entry_t **e, char *err, size_t errlen)
{
    if (!key || !*key || !out) {
        qc_set_err (err, errlen, "config: no %s given",
                        out ? "key" : "place for the value");
        return -1;
    }
    *e = sec ? config_find_entry (sec, key, sec->n) : NULL;
    if (*e && (*e)->error) {
        qc_set_err (err, errlen, "%s", (*e)->error);
        return -1;
    }
    return *e != NULL;
}

static int
bad_value (const qc_config_section_t *sec, const entry_t *e, const char *what,
           char *err, size_t errlen)
{
    char snip[100];
    qc_set_err (err, errlen, "[%s] %s = '%s' (line %d): %s", sec->name, e->key,
                    config_snippet (snip, sizeof snip, e->value, strlen (e->value)),
                    e->line, what);
    return -1;
}

int
qc_config_get_string (const qc_config_section_t *sec, const char *key,
                      const char *def, const char **out, char *err,
                      size_t errlen)
{
    const entry_t *e;
    int r = lookup (sec, key, out, &e, err, errlen);
    if (r >= 0)
        *out = r ? e->value : def;
    return r < 0 ? -1 : 0;
}

int
qc_config_get_int (const qc_config_section_t *sec, const char *key,
                   long long def, long long *out, char *err, size_t errlen)
{
    const entry_t *e;
    int r = lookup (sec, key, out, &e, err, errlen);
    if (r == 0)
        *out = def;
    if (r <= 0)
        return r;
    const char *s = e->value + (e->value[0] == '+' || e->value[0] == '-');
    if (!*s || s[strspn (s, "0123456789")])
        return bad_value (sec, e, "not an integer", err, errlen);
    errno = 0;
    long long v = strtoll (e->value, NULL, 10);
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
    int r = lookup (sec, key, out, &e, err, errlen);
    if (r == 0)
        *out = def;
    if (r <= 0)
        return r;
    /* strtod also reads hex, "inf" and "nan"; a parameter is none of
     * those, so only decimal characters are let through. */
    const char *s = e->value;
    char *end = NULL;
    if (s[strspn (s, "0123456789+-.eE")] || !strpbrk (s, "0123456789"))
        return bad_value (sec, e, "not a number", err, errlen);
    errno = 0;
    double v = strtod (s, &end);
    if (end == s || *end)
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
    int r = lookup (sec, key, out, &e, err, errlen);
    if (r == 0)
        *out = def ? 1 : 0;
    if (r <= 0)
        return r;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (strcasecmp (e->value, yes[i]) == 0 || strcasecmp (e->value, no[i]) == 0) {
            *out = strcasecmp (e->value, yes[i]) == 0;
            return 0;
        }
    return bad_value (sec, e, "not a boolean (true/false, yes/no, on/off, 1/0)",
                      err, errlen);
}

/* Whether raw holds a %(key)s reference to key (any case); "%%" is a
 * literal '%', as configparser reads it. */
static int
refers_to (const char *raw, const char *key, size_t klen)
{
    for (const char *p = raw ? strchr (raw, '%') : NULL; p; p = strchr (p + 1, '%')) {
        const char *name;
        size_t n = config_ref_name (p, &name);
        if (n == klen && strncasecmp (name, key, klen) == 0)
            return 1;
        if (p[1] == '%')
            p++;                /* a literal '%' */
    }
    return 0;
}

static bool
listed (const char *key, const char *const *list)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcasecmp (key, list[i]) == 0)
            return true;
    return false;
}

int
qc_config_key_referenced (const qc_config_section_t *sec, const char *key,
                          const char *const *except)
{
    if (!sec || !key)
        return 0;
    size_t klen = strlen (key);
    for (size_t i = 0; i < sec->n; i++)
        if (strcasecmp (sec->entries[i].key, key) != 0 && !listed (sec->entries[i].key, except)
            && refers_to (sec->entries[i].raw.s, key, klen))
            return 1;
    return 0;
}
