/* Table-driven codec for the protocol in proto.h / PROTOCOL.md.
 *
 * Each body field has one entry in qc_proto_fields: its key on the wire, its C
 * type, where it lives in qc_msg_t and its bound. Each command has a mask
 * of the fields it carries and a mask of those it requires. Encoding walks
 * the mask; decoding looks each key up in the table. Adding a field is one
 * table row and one mask bit. The tables and encoding are here; decoding
 * is in proto_decode.c (proto_int.h is what both see). */
#include "shared/proto_int.h"

#include <czmq.h>
#include <msgpack.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>
#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof (qc_msg_t, f)
const field_t qc_proto_fields[F_COUNT] = {
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
    [F_TASK] = {"task", T_U64, OFF (task), 0},
    [F_NOTES] = {"notes", T_SLIDES, OFF (notes), QC_PROTO_MAX_WORKERS},
    [F_SPEEDS] = {"speeds", T_SPEEDS, OFF (speeds), QC_PROTO_MAX_WORKERS},
    [F_STATES] = {"states", T_SLIDES, OFF (states), QC_PROTO_MAX_WORKERS},
    [F_JOB_STATES] = {"job_states", T_SLIDES, OFF (job_states), QC_PROTO_MAX_JOBS},
    [F_SUCCEEDS] = {"succeeds", T_U64, OFF (succeeds), 0},
    [F_TROUBLE] = {"trouble", T_SLIDES, OFF (trouble), QC_PROTO_MAX_TROUBLE},
    [F_JOB_OWNERS] = {"job_owners", T_SLIDES, OFF (job_owners), QC_PROTO_MAX_JOBS},
};

/* A T_REFS field is a pointer followed by its count (refs/nrefs,
 * crashed/ncrashed): the codec reaches the count through the pointer's
 * offset. */
_Static_assert (offsetof (qc_msg_t, nrefs) == offsetof (qc_msg_t, refs) + sizeof (void *),
                "nrefs follows refs");
_Static_assert (offsetof (qc_msg_t, ncrashed) == offsetof (qc_msg_t, crashed) + sizeof (void *),
                "ncrashed follows crashed");
/* so is a T_SLIDES field (slides, notes, states, job_states, trouble,
 * job_owners) */
_Static_assert (offsetof (qc_msg_t, nslides) == offsetof (qc_msg_t, slides) + sizeof (void *),
                "nslides follows slides");
_Static_assert (offsetof (qc_msg_t, nnotes) == offsetof (qc_msg_t, notes) + sizeof (void *),
                "nnotes follows notes");
_Static_assert (offsetof (qc_msg_t, nstates) == offsetof (qc_msg_t, states) + sizeof (void *),
                "nstates follows states");
_Static_assert (offsetof (qc_msg_t, njob_states)
                    == offsetof (qc_msg_t, job_states) + sizeof (void *),
                "njob_states follows job_states");
_Static_assert (offsetof (qc_msg_t, ntrouble) == offsetof (qc_msg_t, trouble) + sizeof (void *),
                "ntrouble follows trouble");
_Static_assert (offsetof (qc_msg_t, njob_owners)
                    == offsetof (qc_msg_t, job_owners) + sizeof (void *),
                "njob_owners follows job_owners");

static const command_t s_commands[] = {
    {QC_READY, "READY",
     B (F_NAME) | B (F_HOST) | B (F_VERSION) | B (F_SLOTS) | B (F_PREFETCH)
         | B (F_GPUS) | B (F_HBMS) | B (F_CRASHED) | B (F_REASON) | B (F_KEY)
         | B (F_SUCCEEDS),
     B (F_NAME) | B (F_SLOTS)},
    {QC_HEARTBEAT, "HEARTBEAT", 0, 0},
    {QC_STARTED, "STARTED", B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT),
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT)},
    {QC_RESULT, "RESULT",
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_ATTEMPT) | B (F_PATH)
         | B (F_RESULT) | B (F_SEQ) | B (F_WORKER) | B (F_VERSION),
     B (F_JOB) | B (F_KEY) | B (F_IDX) | B (F_RESULT)},
    {QC_LOG, "LOG",
     B (F_JOB) | B (F_KEY) | B (F_TASK) | B (F_TIME) | B (F_LEVEL) | B (F_WORKER)
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
     B (F_JOB) | B (F_KEY) | B (F_TOTAL) | B (F_SEQ) | B (F_ATTACHED) | B (F_RESOURCE)
         | B (F_REASON),
     B (F_JOB)},
    {QC_DONE, "DONE",
     B (F_JOB) | B (F_KEY) | B (F_TOTAL) | B (F_DONE) | B (F_FAILED)
         | B (F_REASON),
     B (F_JOB)},
    {QC_STATUS_REPLY, "STATUS_REPLY",
     B (F_WORKERS) | B (F_QUEUE) | B (F_JOBS) | B (F_NOTES) | B (F_SPEEDS)
         | B (F_STATES) | B (F_JOB_STATES) | B (F_TROUBLE) | B (F_VERSION)
         | B (F_JOB_OWNERS), 0},
    {QC_ERROR, "ERROR", B (F_REASON) | B (F_JOB), B (F_REASON)},
};

uint64_t
qc_proto_new_key (void)
{
    uint64_t k = 0;
    while (!k)
        if (getrandom (&k, sizeof k, 0) != (ssize_t) sizeof k)
            /* no entropy source (an old kernel, a seccomp filter): a
               key only needs to differ from the others in flight */
            k = ((uint64_t) zclock_time () << 22) ^ (uint64_t) getpid () ^ (uint64_t) random ();
    return k;
}

const command_t *
qc_proto_find_command (uint8_t command)
{
    for (size_t i = 0; i < sizeof s_commands / sizeof s_commands[0]; i++)
        if (s_commands[i].command == command)
            return &s_commands[i];
    return NULL;
}

const char *
qc_command_name (uint8_t command)
{
    const command_t *c = qc_proto_find_command (command);
    return c ? c->name : "UNKNOWN";
}

bool
qc_command_known (uint8_t command)
{
    return qc_proto_find_command (command) != NULL;
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
        if (qc_proto_fields[f].type == T_STR)
            free (*(char **) ((char *) self + qc_proto_fields[f].offset));
    for (int f = 0; f < F_COUNT; f++)
        if (qc_proto_fields[f].type == T_SLIDES) {
            char ***list = (char ***) ((char *) self + qc_proto_fields[f].offset);
            size_t n = *(size_t *) ((char *) list + sizeof (void *));
            for (size_t i = 0; i < n; i++)
                free ((*list)[i]);
            free (*list);
        }
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
    free (self->speeds);
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

/* A file's version as three pairs of a map: size, etag, lm (6.1). */
static void
pack_version (msgpack_packer *pk, const qc_result_source_t *v)
{
    pack_str (pk, "size");
    msgpack_pack_int64 (pk, v->size);
    pack_str (pk, "etag");
    pack_str (pk, v->etag);
    pack_str (pk, "lm");
    pack_str (pk, v->last_modified);
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
    if (r->has_source && (strlen (r->source.etag) > QC_RESULT_MAX_ETAG
                          || strlen (r->source.last_modified) > QC_RESULT_MAX_LASTMOD))
        return -1;
    if (r->ninputs > QC_RESULT_MAX_INPUTS)
        return -1;
    for (size_t i = 0; i < r->ninputs; i++)
        if (!r->inputs[i].where || strlen (r->inputs[i].where) > QC_RESULT_MAX_INPUT
            || strlen (r->inputs[i].v.etag) > QC_RESULT_MAX_ETAG
            || strlen (r->inputs[i].v.last_modified) > QC_RESULT_MAX_LASTMOD)
            return -1;
    msgpack_pack_map (pk, 5 + (r->has_source ? 1 : 0) + (r->ninputs ? 1 : 0));
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
    if (r->has_source) {        /* a slide by URL's version (section 6.1) */
        pack_str (pk, "src");
        msgpack_pack_map (pk, 3);
        pack_version (pk, &r->source);
    }
    if (r->ninputs) {           /* files read beside a slide by URL (6.1) */
        pack_str (pk, "in");
        msgpack_pack_array (pk, r->ninputs);
        for (size_t i = 0; i < r->ninputs; i++) {
            const qc_result_input_t *in = &r->inputs[i];
            msgpack_pack_map (pk, 5);
            pack_str (pk, "where");
            pack_str (pk, in->where);
            pack_str (pk, "there");
            if (in->there) msgpack_pack_true (pk); else msgpack_pack_false (pk);
            pack_version (pk, &in->v);
        }
    }
    return 0;
}

bool
qc_proto_field_present (const qc_msg_t *m, int f)
{
    const field_t *fd = &qc_proto_fields[f];
    const char *base = (const char *) m + fd->offset;
    switch (fd->type) {
    case T_STR: return *(char *const *) base != NULL;
    case T_SLIDES: return *(const size_t *) (base + sizeof (void *)) > 0;
    case T_GPUS: return m->ngpus > 0;
    case T_REFS: return *(const size_t *) (base + sizeof (void *)) > 0;
    case T_WORKERS: return m->nworkers > 0;
    case T_SPEEDS: return m->nspeeds > 0;
    case T_JOBS: return m->njobs > 0;
    case T_ASSETS: return m->nassets > 0;
    case T_RESULT: return m->result != NULL;
    default: return true;
    }
}

static int
pack_field (msgpack_packer *pk, const qc_msg_t *m, int f)
{
    const field_t *fd = &qc_proto_fields[f];
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
    case T_SLIDES: {            /* a list of strings: slides, notes */
        char *const *list = *(char *const *const *) base;
        size_t n = *(const size_t *) (base + sizeof (void *));
        if (n > fd->max)
            return -1;
        msgpack_pack_array (pk, n);
        for (size_t i = 0; i < n; i++) {
            if (!list[i] || strlen (list[i]) > QC_PROTO_MAX_PATH)
                return -1;
            pack_str (pk, list[i]);
        }
        break;
    }
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
    case T_SPEEDS:
        if (m->nspeeds > fd->max)
            return -1;
        msgpack_pack_array (pk, m->nspeeds);
        for (size_t i = 0; i < m->nspeeds; i++) {
            msgpack_pack_array (pk, 2);
            msgpack_pack_uint32 (pk, m->speeds[i].ms_cpu);
            msgpack_pack_uint32 (pk, m->speeds[i].ms_gpu);
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
    const command_t *cmd = qc_proto_find_command (self->command);
    if (!cmd)
        return -1;
    int count = 0;
    for (int f = 0; f < F_COUNT; f++)
        if ((cmd->uses & B (f)) && qc_proto_field_present (self, f))
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
        if ((cmd->uses & B (f)) && qc_proto_field_present (self, f))
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

void
qc_proto_limit_socket (zsock_t *sock)
{
    if (sock)
        zsock_set_maxmsgsize (sock, (int) QC_PROTO_MAX_FRAME);
}

int
qc_msg_send_version (const qc_msg_t *self, void *socket, zframe_t *to, uint8_t version)
{
    if (!self || !socket || !QC_PROTO_STABLE (self->command) || !version)
        return -1;
    zmsg_t *msg = zmsg_new ();
    zframe_t *id = to ? zframe_dup (to) : NULL;
    if (!msg || (to && (!id || zmsg_append (msg, &id))) || qc_msg_encode (self, msg)) {
        zframe_destroy (&id);
        zmsg_destroy (&msg);
        return -1;
    }
    zframe_t *hdr = zmsg_first (msg);         /* the routing id, or the header */
    if (to)
        hdr = zmsg_next (msg);
    if (!hdr || zframe_size (hdr) != 4) {
        zmsg_destroy (&msg);
        return -1;
    }
    zframe_data (hdr)[2] = version;
    int rc = zmsg_send (&msg, socket);
    zmsg_destroy (&msg);
    return rc;
}

uint8_t
qc_msg_foreign_version (zmsg_t *in, uint8_t *command)
{
    zframe_t *hdr = in ? zmsg_first (in) : NULL;
    if (!hdr || zframe_size (hdr) != 4)
        return 0;
    const uint8_t *h = zframe_data (hdr);
    if (h[0] != 'Q' || h[1] != 'C' || h[2] == QC_PROTO_VERSION || h[2] == 0)
        return 0;
    if (command)
        *command = h[3];
    return h[2];
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
