/* Decoding protocol messages (proto.h): every field looked up in the
 * table (proto_int.h), bounded by its row, checked against the command's
 * required mask; nothing a peer sends is trusted. */
#include "shared/proto_int.h"

#include <msgpack.h>
#include <stdio.h>
#include <string.h>

#include "shared/mpread.h"

/* ---------------------------------------------------------------- decode */

static char *
dup_str (mp_reader_t *r, size_t max, bool allow_nil)
{
    if (allow_nil && mp_read_nil (r))
        return NULL;
    const char *s;
    uint32_t n;
    if (mp_read_str (r, &s, &n) || n > max || memchr (s, 0, n)) {
        r->failed = 1;
        return NULL;
    }
    char *out = malloc (n + 1);
    if (!out) {
        r->failed = 1;
        return NULL;
    }
    memcpy (out, s, n);
    out[n] = 0;
    return out;
}

/* Reads an array header whose length must be at most max (and, for tuple
 * arrays, exactly want when want > 0). */
static int
read_array_max (mp_reader_t *r, uint32_t max, uint32_t want, uint32_t *n)
{
    if (mp_read_array (r, n) || *n > max || (want && *n != want)) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

/* The result map's `src` (PROTOCOL.md 6.1), {size, etag, lm}, or an
 * element of its `in`, {where, there, size, etag, lm}: each key
 * optional. A validator with a control byte is no validator: the
 * version is then dropped, not the message; so is an input that names
 * no file. */
static int
read_version (mp_reader_t *r, qc_result_t *res, bool input)
{
    uint32_t n;
    if (mp_read_map (r, &n) || n > 16) {
        r->failed = 1;
        return -1;
    }
    int64_t size = -1;
    bool there = true;
    char *etag = NULL, *lm = NULL, *where = NULL;
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        const char *k;
        uint32_t klen;
        if (mp_read_str (r, &k, &klen)) {
            r->failed = 1;
            break;
        }
        if (klen == 4 && memcmp (k, "size", 4) == 0) {
            if (mp_read_int (r, &size) || size < -1)
                r->failed = 1;
        } else if (klen == 4 && memcmp (k, "etag", 4) == 0) {
            free (etag);
            etag = dup_str (r, QC_RESULT_MAX_ETAG, false);
        } else if (klen == 2 && memcmp (k, "lm", 2) == 0) {
            free (lm);
            lm = dup_str (r, QC_RESULT_MAX_LASTMOD, false);
        } else if (input && klen == 5 && memcmp (k, "where", 5) == 0) {
            free (where);
            where = dup_str (r, QC_RESULT_MAX_INPUT, false);
        } else if (input && klen == 5 && memcmp (k, "there", 5) == 0) {
            if (mp_read_bool (r, &there))
                r->failed = 1;
        } else if (mp_skip (r, 8))
            r->failed = 1;
    }
    if (!r->failed && !input)
        qc_result_set_source (res, size, etag, lm);
    if (!r->failed && input && where) {
        qc_result_source_t v = { .size = size };    /* dup_str held them to fit */
        snprintf (v.etag, sizeof v.etag, "%s", etag ? etag : "");
        snprintf (v.last_modified, sizeof v.last_modified, "%s", lm ? lm : "");
        qc_result_add_input (res, where, there ? &v : NULL);
    }
    free (etag);
    free (lm);
    free (where);
    return r->failed ? -1 : 0;
}

static int
read_result (mp_reader_t *r, qc_result_t **out)
{
    qc_result_t *res = qc_result_new ();
    uint32_t n;
    if (!res || mp_read_map (r, &n))
        goto fail;
    for (uint32_t i = 0; i < n; i++) {
        const char *k;
        uint32_t klen, cnt;
        if (mp_read_str (r, &k, &klen))
            goto fail;
        if (klen == 2 && memcmp (k, "ok", 2) == 0) {
            bool ok;
            if (mp_read_bool (r, &ok))
                goto fail;
            res->ok = ok;
        } else if (klen == 3 && memcmp (k, "err", 3) == 0) {
            qc_result_set_error (res, dup_str (r, QC_RESULT_MAX_ERROR, true));
        } else if (klen == 4 && memcmp (k, "warn", 4) == 0) {
            free (res->warnings);
            res->warnings = dup_str (r, QC_RESULT_MAX_WARNINGS, true);
        } else if (klen == 2 && memcmp (k, "kv", 2) == 0) {
            if (read_array_max (r, 2 * QC_RESULT_MAX_KV, 0, &cnt) || cnt % 2)
                goto fail;
            for (uint32_t j = 0; j < cnt / 2; j++) {
                char *key = dup_str (r, QC_RESULT_MAX_KEY, false);
                char *val = dup_str (r, QC_RESULT_MAX_VALUE, false);
                int rc = key && val ? qc_result_set (res, key, "%s", val) : -1;
                free (key);
                free (val);
                if (rc)
                    goto fail;
            }
        } else if (klen == 5 && memcmp (k, "files", 5) == 0) {
            if (read_array_max (r, 2 * QC_RESULT_MAX_FILES, 0, &cnt) || cnt % 2)
                goto fail;
            for (uint32_t j = 0; j < cnt / 2; j++) {
                char *name = dup_str (r, QC_RESULT_MAX_FILENAME, false);
                const uint8_t *b;
                uint32_t blen;
                int rc = name && !mp_read_bin (r, &b, &blen)
                                 && blen <= QC_RESULT_MAX_FILESIZE
                             ? qc_result_add_file (res, name, b, blen)
                             : -1;
                free (name);
                if (rc)
                    goto fail;
            }
        } else if (klen == 3 && memcmp (k, "src", 3) == 0) {
            if (read_version (r, res, false))
                goto fail;
        } else if (klen == 2 && memcmp (k, "in", 2) == 0) {
            if (read_array_max (r, QC_RESULT_MAX_INPUTS, 0, &cnt))
                goto fail;
            for (uint32_t j = 0; j < cnt; j++)
                if (read_version (r, res, true))
                    goto fail;
        } else if (mp_skip (r, 8))
            goto fail;
        if (r->failed)
            goto fail;
    }
    *out = res;
    return 0;
fail:
    r->failed = 1;
    qc_result_destroy (&res);
    return -1;
}

static int
read_field (mp_reader_t *r, qc_msg_t *m, int f)
{
    const field_t *fd = &qc_proto_fields[f];
    char *base = (char *) m + fd->offset;
    uint64_t u;
    int64_t s;
    uint32_t n;
    switch (fd->type) {
    case T_U64:
        return mp_read_uint (r, (uint64_t *) base);
    case T_U32:
        if (mp_read_uint (r, &u) || u > UINT32_MAX) return -1;
        *(uint32_t *) base = (uint32_t) u;
        return 0;
    case T_U8:
        if (mp_read_uint (r, &u) || u > fd->max) return -1;
        *(uint8_t *) base = (uint8_t) u;
        return 0;
    case T_I32:
        if (mp_read_int (r, &s) || s < INT32_MIN || s > INT32_MAX) return -1;
        *(int32_t *) base = (int32_t) s;
        return 0;
    case T_BOOL:
        return mp_read_bool (r, (bool *) base);
    case T_DOUBLE:
        return mp_read_double (r, (double *) base);
    case T_STR:
        free (*(char **) base);
        *(char **) base = dup_str (r, fd->max, true);
        return r->failed ? -1 : 0;
    case T_SLIDES: {            /* a list of strings: slides, notes */
        char ***list = (char ***) base;
        size_t *count = (size_t *) ((char *) base + sizeof (void *));
        if (*list || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(*list = calloc (n, sizeof **list))) return -1;
        for (uint32_t i = 0; i < n; i++, (*count)++)
            if (!((*list)[i] = dup_str (r, QC_PROTO_MAX_PATH, false)))
                return -1;
        return 0;
    }
    case T_GPUS:
        if (m->gpus || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(m->gpus = calloc (n, sizeof *m->gpus))) return -1;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t t;
            qc_gpu_t *g = &m->gpus[m->ngpus++];   /* counted first: freed on error */
            if (read_array_max (r, 3, 3, &t) || mp_read_uint (r, &u) || u > 1024)
                return -1;
            g->index = (uint32_t) u;
            if (!(g->name = dup_str (r, QC_PROTO_MAX_NAME, false))
                || mp_read_uint (r, &g->memory_mb))
                return -1;
        }
        return 0;
    case T_REFS: {
        qc_taskref_t **refs = (qc_taskref_t **) base;
        size_t *count = (size_t *) (base + sizeof (void *));
        if (*refs || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(*refs = calloc (n, sizeof **refs))) return -1;
        for (uint32_t i = 0; i < n; i++, (*count)++) {
            uint32_t t;
            qc_taskref_t *ref = &(*refs)[i];
            if (read_array_max (r, 4, 4, &t) || mp_read_uint (r, &ref->job)
                || mp_read_uint (r, &ref->idx) || mp_read_uint (r, &u) || u > UINT32_MAX
                || mp_read_uint (r, &ref->key))
                return -1;
            ref->attempt = (uint32_t) u;
        }
        return 0;
    }
    case T_WORKERS:
        if (m->workers || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(m->workers = calloc (n, sizeof *m->workers))) return -1;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t t;
            qc_worker_row_t *w = &m->workers[m->nworkers++];   /* freed on error */
            uint64_t v[4];
            if (read_array_max (r, 8, 8, &t)
                || !(w->name = dup_str (r, QC_PROTO_MAX_NAME, false))
                || !(w->host = dup_str (r, QC_PROTO_MAX_NAME, false)))
                return -1;
            for (int k = 0; k < 4; k++)
                if (mp_read_uint (r, &v[k]) || v[k] > UINT32_MAX)
                    return -1;
            w->slots = (uint32_t) v[0];
            w->gpus = (uint32_t) v[1];
            w->busy = (uint32_t) v[2];
            w->gpu_busy = (uint32_t) v[3];
            if (mp_read_double (r, &w->heartbeat_age) || mp_read_bool (r, &w->draining))
                return -1;
        }
        return 0;
    case T_SPEEDS:
        if (m->speeds || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(m->speeds = calloc (n, sizeof *m->speeds))) return -1;
        for (uint32_t i = 0; i < n; i++, m->nspeeds++) {
            uint32_t t;
            uint64_t cpu, gpu;
            if (read_array_max (r, 2, 2, &t) || mp_read_uint (r, &cpu)
                || mp_read_uint (r, &gpu) || cpu > UINT32_MAX || gpu > UINT32_MAX)
                return -1;
            m->speeds[i].ms_cpu = (uint32_t) cpu;
            m->speeds[i].ms_gpu = (uint32_t) gpu;
        }
        return 0;
    case T_JOBS:
        if (m->jobs || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(m->jobs = calloc (n, sizeof *m->jobs))) return -1;
        for (uint32_t i = 0; i < n; i++, m->njobs++) {
            uint32_t t;
            qc_job_row_t *j = &m->jobs[i];
            if (read_array_max (r, 8, 8, &t) || mp_read_uint (r, &j->job)
                || mp_read_uint (r, &j->total) || mp_read_uint (r, &j->done)
                || mp_read_uint (r, &j->failed) || mp_read_uint (r, &j->queued)
                || mp_read_uint (r, &j->running) || mp_read_bool (r, &j->attached)
                || mp_read_bool (r, &j->cancelled))
                return -1;
        }
        return 0;
    case T_ASSETS:
        if (m->assets || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(m->assets = calloc (n, sizeof *m->assets))) return -1;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t t, blen;
            const uint8_t *b;
            qc_asset_t *a = &m->assets[m->nassets++];   /* freed on error */
            if (read_array_max (r, 2, 2, &t)
                || !(a->name = dup_str (r, QC_PROTO_MAX_ASSET_NAME, false))
                || mp_read_bin (r, &b, &blen) || blen > QC_PROTO_MAX_ASSET_SIZE)
                return -1;
            if (blen && !(a->data = malloc (blen))) return -1;
            if (blen) memcpy (a->data, b, blen);
            a->size = blen;
        }
        return 0;
    case T_RESULT:
        if (m->result) return -1;
        return read_result (r, &m->result);
    }
    return -1;
}

static int
find_field (const char *key, uint32_t len)
{
    for (int f = 0; f < F_COUNT; f++)
        if (strlen (qc_proto_fields[f].key) == len && memcmp (qc_proto_fields[f].key, key, len) == 0)
            return f;
    return -1;
}

qc_msg_t *
qc_msg_decode_bytes (const void *hdr, size_t hdrlen, const void *body,
                     size_t bodylen, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    const uint8_t *h = hdr;
    if (!h || hdrlen != 4 || h[0] != 'Q' || h[1] != 'C') {
        snprintf (err, errlen, "not a QC protocol header");
        return NULL;
    }
    if (h[2] != QC_PROTO_VERSION && !(h[2] && QC_PROTO_STABLE (h[3]))) {
        snprintf (err, errlen, "protocol version %u, expected %u", h[2],
                  QC_PROTO_VERSION);
        return NULL;
    }
    const command_t *cmd = qc_proto_find_command (h[3]);
    if (!cmd) {
        snprintf (err, errlen, "unknown command %u", h[3]);
        return NULL;
    }
    if (!body || bodylen > QC_PROTO_MAX_BODY) {
        snprintf (err, errlen, "%s: missing or oversized body", cmd->name);
        return NULL;
    }
    qc_msg_t *m = qc_msg_new (cmd->command);
    if (!m) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    mp_reader_t r;
    mp_reader_init (&r, body, bodylen);
    uint32_t n;
    uint64_t seen = 0;
    if (mp_read_map (&r, &n)) {
        snprintf (err, errlen, "%s: body is not a msgpack map", cmd->name);
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *key;
        uint32_t klen;
        if (mp_read_str (&r, &key, &klen)) {
            snprintf (err, errlen, "%s: bad key", cmd->name);
            goto fail;
        }
        int f = find_field (key, klen);
        if (f < 0 || !(cmd->uses & B (f))) {
            /* not ours: a newer peer's field; skip it */
            if (mp_skip (&r, 8)) {
                snprintf (err, errlen, "%s: bad value", cmd->name);
                goto fail;
            }
            continue;
        }
        if (read_field (&r, m, f) || r.failed) {
            snprintf (err, errlen, "%s: bad or oversized field '%s'", cmd->name,
                      qc_proto_fields[f].key);
            goto fail;
        }
        if (qc_proto_field_present (m, f))     /* a nil string is absent, not present */
            seen |= B (f);
    }
    if (mp_left (&r)) {
        snprintf (err, errlen, "%s: trailing bytes after body", cmd->name);
        goto fail;
    }
    /* a key given twice, the second time as nil, leaves the field empty:
     * what counts is the value the message ends with */
    for (int f = 0; f < F_COUNT; f++)
        if ((cmd->requires & B (f)) && !((seen & B (f)) && qc_proto_field_present (m, f))) {
            snprintf (err, errlen, "%s: missing field '%s'", cmd->name,
                      qc_proto_fields[f].key);
            goto fail;
        }
    return m;
fail:
    qc_msg_destroy (&m);
    return NULL;
}

qc_msg_t *
qc_msg_decode (zmsg_t *in, char *err, size_t errlen)
{
    if (!in || zmsg_size (in) != 2) {
        if (err && errlen)
            snprintf (err, errlen, "expected 2 frames, got %zu",
                      in ? zmsg_size (in) : (size_t) 0);
        return NULL;
    }
    zframe_t *hdr = zmsg_first (in);
    zframe_t *body = zmsg_next (in);
    return qc_msg_decode_bytes (zframe_data (hdr), zframe_size (hdr),
                                zframe_data (body), zframe_size (body), err,
                                errlen);
}
