/* Table-driven codec for the protocol in proto.h / PROTOCOL.md.
 *
 * Each body field has one entry in s_fields: its key on the wire, its C
 * type, where it lives in qc_msg_t and its bound. Each command has a mask
 * of the fields it carries and a mask of those it requires. Encoding walks
 * the mask; decoding looks each key up in the table. Adding a field is one
 * table row and one mask bit. */
#include "shared/proto.h"

#include <msgpack.h>
#include <stddef.h>
#include <string.h>

#include "shared/mpread.h"

typedef enum {
    T_U64, T_U32, T_U8, T_I32, T_BOOL, T_DOUBLE, T_STR,
    T_SLIDES, T_GPUS, T_REFS, T_WORKERS, T_JOBS, T_ASSETS, T_RESULT
} ftype_t;

typedef enum {
    F_JOB, F_IDX, F_BASE, F_SEQ, F_TOTAL, F_DONE, F_FAILED, F_QUEUE,
    F_ATTEMPT, F_SLOTS, F_PREFETCH, F_HBMS, F_GPU, F_RESOURCE, F_LEVEL,
    F_FINAL, F_DRAIN, F_TIME, F_NAME, F_HOST, F_VERSION, F_PATH, F_CONFIG,
    F_REASON, F_WORKER, F_SLIDE, F_MODULE, F_MESSAGE, F_SLIDES, F_GPUS,
    F_REFS, F_WORKERS, F_JOBS, F_ASSETS, F_RESULT, F_KEY, F_CRASHED, F_ATTACHED, F_COUNT
} field_id_t;

typedef struct {
    const char *key;
    ftype_t type;
    size_t offset;
    size_t max;               /* strings: bytes; arrays: elements */
} field_t;

#define OFF(f) offsetof (qc_msg_t, f)
static const field_t s_fields[F_COUNT] = {
    [F_JOB] = {"job", T_U64, OFF (job), 0},
    [F_IDX] = {"idx", T_U64, OFF (idx), 0},
    [F_BASE] = {"base", T_U64, OFF (base), 0},
    [F_SEQ] = {"seq", T_U64, OFF (seq), 0},
    [F_TOTAL] = {"total", T_U64, OFF (total), 0},
    [F_DONE] = {"done", T_U64, OFF (done), 0},
    [F_FAILED] = {"failed", T_U64, OFF (failed), 0},
    [F_QUEUE] = {"queue", T_U64, OFF (queue), 0},
    [F_ATTEMPT] = {"att", T_U32, OFF (attempt), 0},
    [F_SLOTS] = {"slots", T_U32, OFF (slots), 0},
    [F_PREFETCH] = {"prefetch", T_U32, OFF (prefetch), 0},
    [F_HBMS] = {"hb_ms", T_U32, OFF (hb_ms), 0},
    [F_GPU] = {"gpu", T_I32, OFF (gpu), 0},
    [F_RESOURCE] = {"res", T_U8, OFF (resource), QC_RES_GPU},
    [F_LEVEL] = {"level", T_U8, OFF (level), 3},
    [F_FINAL] = {"final", T_BOOL, OFF (final), 0},
    [F_DRAIN] = {"drain", T_BOOL, OFF (drain), 0},
    [F_TIME] = {"time", T_DOUBLE, OFF (time), 0},
    [F_NAME] = {"name", T_STR, OFF (name), QC_PROTO_MAX_NAME},
    [F_HOST] = {"host", T_STR, OFF (host), QC_PROTO_MAX_NAME},
    [F_VERSION] = {"version", T_STR, OFF (version), QC_PROTO_MAX_NAME},
    [F_PATH] = {"path", T_STR, OFF (path), QC_PROTO_MAX_PATH},
    [F_CONFIG] = {"config", T_STR, OFF (config), QC_PROTO_MAX_CONFIG},
    [F_REASON] = {"reason", T_STR, OFF (reason), QC_PROTO_MAX_TEXT},
    [F_WORKER] = {"worker", T_STR, OFF (worker), QC_PROTO_MAX_NAME},
    [F_SLIDE] = {"slide", T_STR, OFF (slide), QC_PROTO_MAX_PATH},
    [F_MODULE] = {"module", T_STR, OFF (module), QC_PROTO_MAX_NAME},
    [F_MESSAGE] = {"message", T_STR, OFF (message), QC_PROTO_MAX_TEXT},
    [F_SLIDES] = {"slides", T_SLIDES, OFF (slides), QC_PROTO_MAX_SLIDES},
    [F_GPUS] = {"gpus", T_GPUS, OFF (gpus), QC_PROTO_MAX_GPUS},
    [F_REFS] = {"refs", T_REFS, OFF (refs), QC_PROTO_MAX_REFS},
    [F_WORKERS] = {"workers", T_WORKERS, OFF (workers), QC_PROTO_MAX_WORKERS},
    [F_JOBS] = {"jobs", T_JOBS, OFF (jobs), QC_PROTO_MAX_JOBS},
    [F_ASSETS] = {"assets", T_ASSETS, OFF (assets), QC_PROTO_MAX_ASSETS},
    [F_RESULT] = {"result", T_RESULT, OFF (result), 0},
    [F_KEY] = {"key", T_U64, OFF (key), 0},
    [F_CRASHED] = {"crashed", T_REFS, OFF (crashed), QC_PROTO_MAX_REFS},
    [F_ATTACHED] = {"attached", T_BOOL, OFF (attached), 0},
};

/* A T_REFS field is a pointer followed by its count (refs/nrefs,
 * crashed/ncrashed): the codec reaches the count through the pointer's
 * offset. */
_Static_assert (offsetof (qc_msg_t, nrefs) == offsetof (qc_msg_t, refs) + sizeof (void *),
                "nrefs follows refs");
_Static_assert (offsetof (qc_msg_t, ncrashed) == offsetof (qc_msg_t, crashed) + sizeof (void *),
                "ncrashed follows crashed");

#define B(f) (1ull << (f))
typedef struct {
    uint8_t command;
    const char *name;
    uint64_t uses;
    uint64_t requires;
} command_t;

static const command_t s_commands[] = {
    {QC_READY, "READY",
     B (F_NAME) | B (F_HOST) | B (F_VERSION) | B (F_SLOTS) | B (F_PREFETCH)
         | B (F_GPUS) | B (F_HBMS) | B (F_CRASHED) | B (F_REASON),
     B (F_NAME) | B (F_SLOTS)},
    {QC_HEARTBEAT, "HEARTBEAT", 0, 0},
    {QC_STARTED, "STARTED", B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT),
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT)},
    {QC_RESULT, "RESULT",
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT) | B (F_PATH)
         | B (F_RESULT) | B (F_SEQ) | B (F_WORKER),
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_RESULT)},
    {QC_LOG, "LOG",
     B (F_JOB) | B (F_KEY) | B (F_TIME) | B (F_LEVEL) | B (F_WORKER)
         | B (F_SLIDE) | B (F_MODULE) | B (F_MESSAGE),
     B (F_LEVEL) | B (F_MESSAGE)},
    {QC_DISCONNECT, "DISCONNECT", B (F_DRAIN) | B (F_REFS) | B (F_REASON), 0},
    {QC_FETCH, "FETCH", B (F_JOB) | B (F_KEY), B (F_JOB) | B (F_KEY)},
    {QC_TASK, "TASK",
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT) | B (F_PATH)
         | B (F_CONFIG) | B (F_GPU),
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT) | B (F_PATH)},
    {QC_REVOKE, "REVOKE",
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT) | B (F_REASON),
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT)},
    {QC_ASSETS, "ASSETS", B (F_JOB) | B (F_KEY) | B (F_ASSETS), B (F_JOB) | B (F_KEY)},
    {QC_SUBMIT, "SUBMIT",
     B (F_JOB) | B (F_KEY) | B (F_BASE) | B (F_SLIDES) | B (F_CONFIG)
         | B (F_RESOURCE) | B (F_FINAL) | B (F_NAME) | B (F_HBMS) | B (F_ASSETS),
     B (F_BASE)},
    {QC_CANCEL, "CANCEL", B (F_JOB) | B (F_KEY), B (F_JOB)},
    {QC_STATUS, "STATUS", 0, 0},
    {QC_ATTACH, "ATTACH", B (F_JOB) | B (F_KEY) | B (F_SEQ) | B (F_HBMS), B (F_JOB)},
    {QC_ACK, "ACK", B (F_JOB) | B (F_KEY) | B (F_SEQ), B (F_JOB) | B (F_SEQ)},
    {QC_ACCEPTED, "ACCEPTED",
     B (F_JOB) | B (F_KEY) | B (F_TOTAL) | B (F_SEQ) | B (F_ATTACHED), B (F_JOB)},
    {QC_DONE, "DONE",
     B (F_JOB) | B (F_KEY) | B (F_TOTAL) | B (F_DONE) | B (F_FAILED)
         | B (F_REASON),
     B (F_JOB)},
    {QC_STATUS_REPLY, "STATUS_REPLY", B (F_WORKERS) | B (F_QUEUE) | B (F_JOBS),
     0},
    {QC_ERROR, "ERROR", B (F_REASON) | B (F_JOB), B (F_REASON)},
};

static const command_t *
find_command (uint8_t command)
{
    for (size_t i = 0; i < sizeof s_commands / sizeof s_commands[0]; i++)
        if (s_commands[i].command == command)
            return &s_commands[i];
    return NULL;
}

const char *
qc_command_name (uint8_t command)
{
    const command_t *c = find_command (command);
    return c ? c->name : "UNKNOWN";
}

qc_msg_t *
qc_msg_new (uint8_t command)
{
    qc_msg_t *self = calloc (1, sizeof *self);
    if (self) {
        self->command = command;
        self->gpu = -1;
    }
    return self;
}

static void
free_fields (qc_msg_t *self)
{
    for (int f = 0; f < F_COUNT; f++)
        if (s_fields[f].type == T_STR)
            free (*(char **) ((char *) self + s_fields[f].offset));
    for (size_t i = 0; i < self->nslides; i++)
        free (self->slides[i]);
    free (self->slides);
    for (size_t i = 0; i < self->ngpus; i++)
        free (self->gpus[i].name);
    free (self->gpus);
    free (self->refs);
    free (self->crashed);
    for (size_t i = 0; i < self->nworkers; i++) {
        free (self->workers[i].name);
        free (self->workers[i].host);
    }
    free (self->workers);
    free (self->jobs);
    for (size_t i = 0; i < self->nassets; i++) {
        free (self->assets[i].name);
        free (self->assets[i].data);
    }
    free (self->assets);
    qc_result_destroy (&self->result);
}

void
qc_msg_destroy (qc_msg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free_fields (*self_p);
    free (*self_p);
    *self_p = NULL;
}

int
qc_msg_set_str (char **field, const char *value)
{
    if (!field)
        return -1;
    char *copy = NULL;
    if (value && !(copy = strdup (value)))
        return -1;
    free (*field);
    *field = copy;
    return 0;
}

/* ---------------------------------------------------------------- encode */

static void
pack_str (msgpack_packer *pk, const char *s)
{
    size_t n = strlen (s);
    msgpack_pack_str (pk, n);
    msgpack_pack_str_body (pk, s, n);
}

static void
pack_opt_str (msgpack_packer *pk, const char *s)
{
    if (s)
        pack_str (pk, s);
    else
        msgpack_pack_nil (pk);
}

static int
pack_result (msgpack_packer *pk, const qc_result_t *r)
{
    if (r->nkv > QC_RESULT_MAX_KV || r->nfiles > QC_RESULT_MAX_FILES
        || (r->error && strlen (r->error) > QC_RESULT_MAX_ERROR)
        || (r->warnings && strlen (r->warnings) > QC_RESULT_MAX_WARNINGS))
        return -1;
    for (size_t i = 0; i < r->nkv; i++)
        if (!r->kv[i].key || !*r->kv[i].key || !r->kv[i].value
            || strlen (r->kv[i].key) > QC_RESULT_MAX_KEY
            || strlen (r->kv[i].value) > QC_RESULT_MAX_VALUE)
            return -1;
    for (size_t i = 0; i < r->nfiles; i++)
        if (!r->files[i].name || strlen (r->files[i].name) > QC_RESULT_MAX_FILENAME
            || r->files[i].size > QC_RESULT_MAX_FILESIZE)
            return -1;
    msgpack_pack_map (pk, 5);
    pack_str (pk, "ok");
    if (r->ok) msgpack_pack_true (pk); else msgpack_pack_false (pk);
    pack_str (pk, "err");
    pack_opt_str (pk, r->error);
    pack_str (pk, "warn");
    pack_opt_str (pk, r->warnings);
    pack_str (pk, "kv");
    msgpack_pack_array (pk, r->nkv * 2);
    for (size_t i = 0; i < r->nkv; i++) {
        pack_str (pk, r->kv[i].key);
        pack_str (pk, r->kv[i].value);
    }
    pack_str (pk, "files");
    msgpack_pack_array (pk, r->nfiles * 2);
    for (size_t i = 0; i < r->nfiles; i++) {
        pack_str (pk, r->files[i].name);
        msgpack_pack_bin (pk, r->files[i].size);
        msgpack_pack_bin_body (pk, r->files[i].data, r->files[i].size);
    }
    return 0;
}

/* true when the field has something worth sending */
static bool
field_present (const qc_msg_t *m, int f)
{
    const field_t *fd = &s_fields[f];
    const char *base = (const char *) m + fd->offset;
    switch (fd->type) {
    case T_STR: return *(char *const *) base != NULL;
    case T_SLIDES: return m->nslides > 0;
    case T_GPUS: return m->ngpus > 0;
    case T_REFS: return *(const size_t *) (base + sizeof (void *)) > 0;
    case T_WORKERS: return m->nworkers > 0;
    case T_JOBS: return m->njobs > 0;
    case T_ASSETS: return m->nassets > 0;
    case T_RESULT: return m->result != NULL;
    default: return true;
    }
}

static int
pack_field (msgpack_packer *pk, const qc_msg_t *m, int f)
{
    const field_t *fd = &s_fields[f];
    const char *base = (const char *) m + fd->offset;
    pack_str (pk, fd->key);
    switch (fd->type) {
    case T_U64: msgpack_pack_uint64 (pk, *(const uint64_t *) base); break;
    case T_U32: msgpack_pack_uint32 (pk, *(const uint32_t *) base); break;
    case T_U8:
        if (*(const uint8_t *) base > fd->max)
            return -1;
        msgpack_pack_uint8 (pk, *(const uint8_t *) base);
        break;
    case T_I32: msgpack_pack_int32 (pk, *(const int32_t *) base); break;
    case T_BOOL:
        if (*(const bool *) base) msgpack_pack_true (pk);
        else msgpack_pack_false (pk);
        break;
    case T_DOUBLE: msgpack_pack_double (pk, *(const double *) base); break;
    case T_STR: {
        const char *s = *(char *const *) base;
        if (strlen (s) > fd->max)
            return -1;
        pack_str (pk, s);
        break;
    }
    case T_SLIDES:
        if (m->nslides > fd->max)
            return -1;
        msgpack_pack_array (pk, m->nslides);
        for (size_t i = 0; i < m->nslides; i++) {
            if (!m->slides[i] || strlen (m->slides[i]) > QC_PROTO_MAX_PATH)
                return -1;
            pack_str (pk, m->slides[i]);
        }
        break;
    case T_GPUS:
        if (m->ngpus > fd->max)
            return -1;
        msgpack_pack_array (pk, m->ngpus);
        for (size_t i = 0; i < m->ngpus; i++) {
            if (m->gpus[i].index > 1024
                || (m->gpus[i].name && strlen (m->gpus[i].name) > QC_PROTO_MAX_NAME))
                return -1;
            msgpack_pack_array (pk, 3);
            msgpack_pack_uint32 (pk, m->gpus[i].index);
            pack_str (pk, m->gpus[i].name ? m->gpus[i].name : "");
            msgpack_pack_uint64 (pk, m->gpus[i].memory_mb);
        }
        break;
    case T_REFS: {
        const qc_taskref_t *refs = *(qc_taskref_t *const *) base;
        size_t n = *(const size_t *) (base + sizeof (void *));
        if (n > fd->max)
            return -1;
        msgpack_pack_array (pk, n);
        for (size_t i = 0; i < n; i++) {
            msgpack_pack_array (pk, 4);
            msgpack_pack_uint64 (pk, refs[i].job);
            msgpack_pack_uint64 (pk, refs[i].idx);
            msgpack_pack_uint32 (pk, refs[i].attempt);
            msgpack_pack_uint64 (pk, refs[i].key);
        }
        break;
    }
    case T_WORKERS:
        if (m->nworkers > fd->max)
            return -1;
        msgpack_pack_array (pk, m->nworkers);
        for (size_t i = 0; i < m->nworkers; i++) {
            const qc_worker_row_t *w = &m->workers[i];
            if ((w->name && strlen (w->name) > QC_PROTO_MAX_NAME)
                || (w->host && strlen (w->host) > QC_PROTO_MAX_NAME))
                return -1;
            msgpack_pack_array (pk, 8);
            pack_str (pk, w->name ? w->name : "");
            pack_str (pk, w->host ? w->host : "");
            msgpack_pack_uint32 (pk, w->slots);
            msgpack_pack_uint32 (pk, w->gpus);
            msgpack_pack_uint32 (pk, w->busy);
            msgpack_pack_uint32 (pk, w->gpu_busy);
            msgpack_pack_double (pk, w->heartbeat_age);
            if (w->draining) msgpack_pack_true (pk); else msgpack_pack_false (pk);
        }
        break;
    case T_JOBS:
        if (m->njobs > fd->max)
            return -1;
        msgpack_pack_array (pk, m->njobs);
        for (size_t i = 0; i < m->njobs; i++) {
            const qc_job_row_t *j = &m->jobs[i];
            msgpack_pack_array (pk, 8);
            msgpack_pack_uint64 (pk, j->job);
            msgpack_pack_uint64 (pk, j->total);
            msgpack_pack_uint64 (pk, j->done);
            msgpack_pack_uint64 (pk, j->failed);
            msgpack_pack_uint64 (pk, j->queued);
            msgpack_pack_uint64 (pk, j->running);
            if (j->attached) msgpack_pack_true (pk); else msgpack_pack_false (pk);
            if (j->cancelled) msgpack_pack_true (pk); else msgpack_pack_false (pk);
        }
        break;
    case T_ASSETS:
        if (m->nassets > fd->max)
            return -1;
        msgpack_pack_array (pk, m->nassets);
        for (size_t i = 0; i < m->nassets; i++) {
            const qc_asset_t *a = &m->assets[i];
            if (!a->name || strlen (a->name) > QC_PROTO_MAX_ASSET_NAME
                || a->size > QC_PROTO_MAX_ASSET_SIZE || (!a->data && a->size))
                return -1;
            msgpack_pack_array (pk, 2);
            pack_str (pk, a->name);
            msgpack_pack_bin (pk, a->size);
            if (a->size)        /* an empty file may have no buffer */
                msgpack_pack_bin_body (pk, a->data, a->size);
        }
        break;
    case T_RESULT:
        return pack_result (pk, m->result);
    }
    return 0;
}

/* The body is packed into a buffer that starts on the stack: most bodies
 * (TASK, STARTED, RESULT of a small result, ACK, HEARTBEAT) fit, so an
 * encode costs no allocation of its own. msgpack's sbuffer allocated
 * 8 KiB for every message, which the allocator kept trimming and growing
 * again (page faults on every send under load). */
#define ENC_INLINE 2048

typedef struct {
    char *data;
    size_t size, cap;
    bool failed;              /* out of memory or over QC_PROTO_MAX_BODY */
    char inline_buf[ENC_INLINE];
} enc_buf_t;

static int
enc_buf_write (void *arg, const char *buf, size_t len)
{
    enc_buf_t *b = arg;
    if (b->failed)
        return -1;
    if (len > QC_PROTO_MAX_BODY - b->size) {
        b->failed = true;     /* also keeps the sizes below from overflowing */
        return -1;
    }
    if (b->size + len > b->cap) {
        size_t cap = b->cap * 2;
        while (cap < b->size + len)
            cap *= 2;
        char *grown = b->data == b->inline_buf ? malloc (cap) : realloc (b->data, cap);
        if (!grown) {
            b->failed = true;
            return -1;
        }
        if (b->data == b->inline_buf)
            memcpy (grown, b->inline_buf, b->size);
        b->data = grown;
        b->cap = cap;
    }
    memcpy (b->data + b->size, buf, len);
    b->size += len;
    return 0;
}

int
qc_msg_encode (const qc_msg_t *self, zmsg_t *out)
{
    if (!self || !out)
        return -1;
    const command_t *cmd = find_command (self->command);
    if (!cmd)
        return -1;
    int count = 0;
    for (int f = 0; f < F_COUNT; f++)
        if ((cmd->uses & B (f)) && field_present (self, f))
            count++;
        else if (cmd->requires & B (f))
            return -1;
    enc_buf_t buf;
    buf.data = buf.inline_buf;
    buf.size = 0;
    buf.cap = sizeof buf.inline_buf;
    buf.failed = false;
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buf, enc_buf_write);
    msgpack_pack_map (&pk, count);
    int rc = 0;
    for (int f = 0; f < F_COUNT && rc == 0; f++)
        if ((cmd->uses & B (f)) && field_present (self, f))
            rc = pack_field (&pk, self, f);
    /* the packer ignores its writer's failures: the buffer remembers */
    if (rc == 0 && buf.failed)
        rc = -1;
    if (rc == 0) {
        uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, self->command};
        if (zmsg_addmem (out, hdr, sizeof hdr) || zmsg_addmem (out, buf.data, buf.size))
            rc = -1;
    }
    if (buf.data != buf.inline_buf)
        free (buf.data);
    return rc;
}

int
qc_msg_send (const qc_msg_t *self, void *socket, zframe_t *to)
{
    if (!self || !socket)
        return -1;
    zmsg_t *msg = zmsg_new ();
    if (!msg)
        return -1;
    if (to) {
        zframe_t *id = zframe_dup (to);
        if (!id || zmsg_append (msg, &id)) {
            zframe_destroy (&id);
            zmsg_destroy (&msg);
            return -1;
        }
    }
    if (qc_msg_encode (self, msg)) {
        zmsg_destroy (&msg);
        return -1;
    }
    /* zmsg_send keeps a message it could not send (no peer on a socket
     * that never blocks: e.g. a handshake the broker refused) */
    int rc = zmsg_send (&msg, socket);
    zmsg_destroy (&msg);
    return rc;
}

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
            free (res->error);
            res->error = dup_str (r, QC_RESULT_MAX_ERROR, true);
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
    const field_t *fd = &s_fields[f];
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
    case T_SLIDES:
        if (m->slides || read_array_max (r, (uint32_t) fd->max, 0, &n)) return -1;
        if (n && !(m->slides = calloc (n, sizeof *m->slides))) return -1;
        for (uint32_t i = 0; i < n; i++, m->nslides++)
            if (!(m->slides[i] = dup_str (r, QC_PROTO_MAX_PATH, false)))
                return -1;
        return 0;
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
        if (strlen (s_fields[f].key) == len && memcmp (s_fields[f].key, key, len) == 0)
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
    if (h[2] != QC_PROTO_VERSION) {
        snprintf (err, errlen, "protocol version %u, expected %u", h[2],
                  QC_PROTO_VERSION);
        return NULL;
    }
    const command_t *cmd = find_command (h[3]);
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
                      s_fields[f].key);
            goto fail;
        }
        if (field_present (m, f))     /* a nil string is absent, not present */
            seen |= B (f);
    }
    if (mp_left (&r)) {
        snprintf (err, errlen, "%s: trailing bytes after body", cmd->name);
        goto fail;
    }
    /* a key given twice, the second time as nil, leaves the field empty:
     * what counts is the value the message ends with */
    for (int f = 0; f < F_COUNT; f++)
        if ((cmd->requires & B (f)) && !((seen & B (f)) && field_present (m, f))) {
            snprintf (err, errlen, "%s: missing field '%s'", cmd->name,
                      s_fields[f].key);
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
