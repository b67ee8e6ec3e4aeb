/* Bounded, growable per-slide result; see result.h. */
#include "shared/result.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qc_result_fail's reason when its own cannot be allocated; never freed
 * (free_error) and never written to. */
static char s_no_memory[] = "failed: " QC_RESULT_MEMORY_SHORT
                            " (the slide's own reason could not be kept" QC_RESULT_RETRY_MARK;

static void
free_error (char *error)
{
    if (error != s_no_memory)
        free (error);
}

void
qc_result_set_error (qc_result_t *self, char *text)
{
    if (!self) {
        free_error (text);
        return;
    }
    if (self->error != text)
        free_error (self->error);
    self->error = text;
}

qc_result_t *
qc_result_new (void)
{
    qc_result_t *self = calloc (1, sizeof *self);
    if (self)
        self->ok = 1;
    return self;
}

void
qc_result_reset (qc_result_t *self)
{
    if (!self)
        return;
    for (size_t i = 0; i < self->nkv; i++) {
        free (self->kv[i].key);
        free (self->kv[i].value);
    }
    for (size_t i = 0; i < self->nfiles; i++) {
        free (self->files[i].name);
        free (self->files[i].data);
    }
    for (size_t i = 0; i < self->ninputs; i++)
        free (self->inputs[i].where);
    free (self->kv);
    free (self->files);
    free_error (self->error);
    free (self->warnings);
    memset (self, 0, sizeof *self);
    self->ok = 1;
}

void
qc_result_destroy (qc_result_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_result_reset (*self_p);
    free (*self_p);
    *self_p = NULL;
}

/* The text of fmt, at most max bytes, malloc'd; NULL when it is longer
 * (*too_long set, when not NULL) or cannot be had. Measured first, then
 * one allocation of its size: a result is most often failed for want
 * of memory, when vasprintf's growing buffer may not be had where the
 * text itself could. */
static char *
format_bounded (size_t max, const char *fmt, va_list ap, bool *too_long)
{
    if (too_long)
        *too_long = false;
    va_list again;
    va_copy (again, ap);
    int n = vsnprintf (NULL, 0, fmt, ap);
    char *s = NULL;
    if (n >= 0 && (size_t) n > max) {
        if (too_long)
            *too_long = true;
    } else if (n >= 0 && (s = malloc ((size_t) n + 1))
               && vsnprintf (s, (size_t) n + 1, fmt, again) != n) {
        free (s);
        s = NULL;
    }
    va_end (again);
    return s;
}

int
qc_result_set (qc_result_t *self, const char *key, const char *fmt, ...)
{
    if (!self || !key || !fmt || !*key || strlen (key) > QC_RESULT_MAX_KEY)
        return -1;
    va_list ap;
    va_start (ap, fmt);
    char *value = format_bounded (QC_RESULT_MAX_VALUE, fmt, ap, NULL);
    va_end (ap);
    if (!value)
        return -1;
    for (size_t i = 0; i < self->nkv; i++)
        if (strcmp (self->kv[i].key, key) == 0) {
            free (self->kv[i].value);
            self->kv[i].value = value;
            return 0;
        }
    if (self->nkv >= QC_RESULT_MAX_KV)
        goto fail;
    if (self->nkv == self->cap_kv) {
        size_t cap = self->cap_kv ? self->cap_kv * 2 : 32;
        qc_kv_t *kv = realloc (self->kv, cap * sizeof *kv);
        if (!kv)
            goto fail;
        self->kv = kv;
        self->cap_kv = cap;
    }
    char *k = strdup (key);
    if (!k)
        goto fail;
    self->kv[self->nkv].key = k;
    self->kv[self->nkv].value = value;
    self->nkv++;
    return 0;
fail:
    free (value);
    return -1;
}

const char *
qc_result_get (const qc_result_t *self, const char *key)
{
    if (!self || !key)
        return NULL;
    for (size_t i = 0; i < self->nkv; i++)
        if (strcmp (self->kv[i].key, key) == 0)
            return self->kv[i].value;
    return NULL;
}

const qc_file_t *
qc_result_file (const qc_result_t *self, const char *name)
{
    if (!self || !name)
        return NULL;
    for (size_t i = 0; i < self->nfiles; i++)
        if (strcmp (self->files[i].name, name) == 0)
            return &self->files[i];
    return NULL;
}

int
qc_result_take_file (qc_result_t *self, const char *name,
                     unsigned char *data, size_t size)
{
    if (!self || !name || !*name || strlen (name) > QC_RESULT_MAX_FILENAME
        || (!data && size) || size > QC_RESULT_MAX_FILESIZE
        || self->nfiles >= QC_RESULT_MAX_FILES)
        return -1;
    /* A file name becomes part of a path on the client: no separators. */
    if (strchr (name, '/') || strchr (name, '\\') || strstr (name, ".."))
        return -1;
    if (self->nfiles == self->cap_files) {
        size_t cap = self->cap_files ? self->cap_files * 2 : 8;
        qc_file_t *f = realloc (self->files, cap * sizeof *f);
        if (!f)
            return -1;
        self->files = f;
        self->cap_files = cap;
    }
    char *n = strdup (name);
    if (!n)
        return -1;
    self->files[self->nfiles].name = n;
    self->files[self->nfiles].data = data;
    self->files[self->nfiles].size = size;
    self->nfiles++;
    return 0;
}

int
qc_result_add_file (qc_result_t *self, const char *name,
                    const void *data, size_t size)
{
    if (!self || (!data && size) || size > QC_RESULT_MAX_FILESIZE)
        return -1;
    unsigned char *copy = malloc (size ? size : 1);
    if (!copy)
        return -1;
    if (size)
        memcpy (copy, data, size);
    if (qc_result_take_file (self, name, copy, size) != 0) {
        free (copy);
        return -1;
    }
    return 0;
}

int
qc_result_add_warning (qc_result_t *self, const char *fmt, ...)
{
    if (!self || !fmt)
        return -1;
    va_list ap;
    va_start (ap, fmt);
    char *w = format_bounded (QC_RESULT_MAX_WARNINGS, fmt, ap, NULL);
    va_end (ap);
    if (!w)
        return -1;
    size_t old = self->warnings ? strlen (self->warnings) : 0;
    if (old + 1 + strlen (w) > QC_RESULT_MAX_WARNINGS) {
        free (w);
        return -1;
    }
    char *joined = NULL;
    if (asprintf (&joined, "%s%s%s", old ? self->warnings : "",
                  old ? "|" : "", w) < 0) {
        free (w);
        return -1;
    }
    free (w);
    free (self->warnings);
    self->warnings = joined;
    return 0;
}

int
qc_result_fail (qc_result_t *self, const char *fmt, ...)
{
    if (!self || !fmt)
        return -1;
    self->ok = 0;
    if (self->error)
        return 0;
    va_list ap;
    va_start (ap, fmt);
    bool too_long;
    self->error = format_bounded (QC_RESULT_MAX_ERROR, fmt, ap, &too_long);
    va_end (ap);
    /* a reason that could not be had for memory is this machine's
       memory's, and says so (it named length before) */
    if (!self->error && too_long)
        self->error = strdup ("failed (reason too long to report)");
    if (!self->error)
        self->error = s_no_memory;
    return 0;
}

bool
qc_result_cancelled (const char *reason)
{
    return reason && (strcmp (reason, QC_RESULT_CANCELLED) == 0
                      || strncmp (reason, QC_RESULT_NOT_RUN, strlen (QC_RESULT_NOT_RUN)) == 0);
}

bool
qc_result_machine_trouble (const char *reason)
{
    static const char *const phrases[] = {QC_RESULT_MEMORY_SHORT, QC_RESULT_NO_FDS,
                                          QC_RESULT_CACHE_DISK};
    for (size_t i = 0; reason && i < sizeof phrases / sizeof phrases[0]; i++)
        if (strstr (reason, phrases[i]))
            return true;
    return false;
}

/* A validator is kept as text in a tab-separated file by the client:
 * one that holds a control byte is no ETag (RFC 9110 allows none) */
static bool
validator_ok (const char *v, size_t max)
{
    if (!v)
        return true;
    size_t n = strlen (v);
    if (n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) v[i] < 0x20 || v[i] == 0x7f)
            return false;
    return true;
}

int
qc_result_set_source (qc_result_t *self, int64_t size, const char *etag,
                      const char *last_modified)
{
    if (!self)
        return -1;
    self->has_source = qc_result_source_make (&self->source, size, etag,
                                              last_modified) == 0;
    return self->has_source ? 0 : -1;
}

int
qc_result_source_make (qc_result_source_t *out, int64_t size, const char *etag,
                       const char *last_modified)
{
    if (!out || !validator_ok (etag, QC_RESULT_MAX_ETAG)
        || !validator_ok (last_modified, QC_RESULT_MAX_LASTMOD))
        return -1;
    out->size = size < 0 ? -1 : size;
    snprintf (out->etag, sizeof out->etag, "%s", etag ? etag : "");
    snprintf (out->last_modified, sizeof out->last_modified, "%s",
              last_modified ? last_modified : "");
    return 0;
}

int
qc_result_add_input (qc_result_t *self, const char *where, const qc_result_source_t *v)
{
    if (!self || !where || !*where || !validator_ok (where, QC_RESULT_MAX_INPUT)
        || (v && (!validator_ok (v->etag, QC_RESULT_MAX_ETAG)
                  || !validator_ok (v->last_modified, QC_RESULT_MAX_LASTMOD))))
        return -1;
    size_t i = 0;
    while (i < self->ninputs && strcmp (self->inputs[i].where, where) != 0)
        i++;
    if (i == QC_RESULT_MAX_INPUTS)
        return -1;
    qc_result_input_t in = { .there = v != NULL, .v = { .size = -1 } };
    if (v) {
        in.v.size = v->size < 0 ? -1 : v->size;
        snprintf (in.v.etag, sizeof in.v.etag, "%s", v->etag);
        snprintf (in.v.last_modified, sizeof in.v.last_modified, "%s", v->last_modified);
    }
    if (i < self->ninputs) {
        in.where = self->inputs[i].where;
        self->inputs[i] = in;
        return 0;
    }
    if (!(in.where = strdup (where)))
        return -1;
    self->inputs[self->ninputs++] = in;
    return 0;
}

bool
qc_result_source_known (const qc_result_source_t *v)
{
    return v && (v->size >= 0 || v->etag[0] || v->last_modified[0]);
}
