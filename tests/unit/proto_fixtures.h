/* Shared fixtures of the protocol codec tests (test_proto_*.c): field-by-
 * field comparison, encode/decode helpers, a hand-built msgpack body for
 * what our encoder would never send, and one or more sample messages of
 * every command. Header-only (the Makefile builds each tests/unit/test_*.c
 * into its own program and compiles nothing else here), so every function
 * is static and marked unused for the programs that do not call it. */
#ifndef QC_PROTO_FIXTURES_H
#define QC_PROTO_FIXTURES_H

#include "shared/proto.h"

#include <msgpack.h>
#include <stdint.h>
#include <string.h>

#include "shared/mpread.h"
#include "tests/unit/check.h"

/* ------------------------------------------------------------ helpers */

static __attribute__ ((unused)) bool
str_eq (const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp (a, b) == 0;
}

/* Compares every field of qc_msg_t; what names the message in failures. */
static __attribute__ ((unused)) void
check_msg_eq (const char *what, const qc_msg_t *a, const qc_msg_t *b)
{
#define EQ(f) CHECK (a->f == b->f, "%s: field " #f, what)
#define SEQ(f) CHECK (str_eq (a->f, b->f), "%s: field " #f ": '%s' vs '%s'", what, \
                      a->f ? a->f : "(null)", b->f ? b->f : "(null)")
    EQ (command); EQ (job); EQ (idx); EQ (base); EQ (seq); EQ (total);
    EQ (done); EQ (failed); EQ (queue); EQ (attempt); EQ (slots);
    EQ (prefetch); EQ (hb_ms); EQ (gpu); EQ (resource); EQ (level);
    EQ (final); EQ (drain); EQ (key); EQ (attached);
    CHECK (memcmp (&a->time, &b->time, sizeof a->time) == 0, "%s: time", what);
    SEQ (name); SEQ (host); SEQ (version); SEQ (path); SEQ (config);
    SEQ (reason); SEQ (worker); SEQ (slide); SEQ (module); SEQ (message);
    EQ (nslides);
    for (size_t i = 0; i < a->nslides && i < b->nslides; i++)
        CHECK (str_eq (a->slides[i], b->slides[i]), "%s: slide %zu", what, i);
    EQ (nnotes);
    for (size_t i = 0; i < a->nnotes && i < b->nnotes; i++)
        CHECK (str_eq (a->notes[i], b->notes[i]), "%s: note %zu", what, i);
    EQ (ngpus);
    for (size_t i = 0; i < a->ngpus && i < b->ngpus; i++) {
        CHECK (a->gpus[i].index == b->gpus[i].index, "%s: gpu %zu index", what, i);
        CHECK (str_eq (a->gpus[i].name, b->gpus[i].name), "%s: gpu %zu name", what, i);
        CHECK (a->gpus[i].memory_mb == b->gpus[i].memory_mb, "%s: gpu %zu mem", what, i);
    }
    EQ (nrefs);
    for (size_t i = 0; i < a->nrefs && i < b->nrefs; i++)
        CHECK (a->refs[i].job == b->refs[i].job && a->refs[i].idx == b->refs[i].idx
                   && a->refs[i].attempt == b->refs[i].attempt
                   && a->refs[i].key == b->refs[i].key,
               "%s: ref %zu", what, i);
    EQ (ncrashed);
    for (size_t i = 0; i < a->ncrashed && i < b->ncrashed; i++)
        CHECK (a->crashed[i].job == b->crashed[i].job && a->crashed[i].idx == b->crashed[i].idx
                   && a->crashed[i].attempt == b->crashed[i].attempt
                   && a->crashed[i].key == b->crashed[i].key,
               "%s: crashed %zu", what, i);
    EQ (nworkers);
    for (size_t i = 0; i < a->nworkers && i < b->nworkers; i++) {
        const qc_worker_row_t *x = &a->workers[i], *y = &b->workers[i];
        CHECK (str_eq (x->name, y->name) && str_eq (x->host, y->host)
                   && x->slots == y->slots && x->gpus == y->gpus
                   && x->busy == y->busy && x->gpu_busy == y->gpu_busy
                   && memcmp (&x->heartbeat_age, &y->heartbeat_age, sizeof (double)) == 0
                   && x->draining == y->draining,
               "%s: worker row %zu", what, i);
    }
    EQ (nspeeds);
    for (size_t i = 0; i < a->nspeeds && i < b->nspeeds; i++)
        CHECK (a->speeds[i].ms_cpu == b->speeds[i].ms_cpu
                   && a->speeds[i].ms_gpu == b->speeds[i].ms_gpu, "%s: speeds %zu", what, i);
    EQ (nstates);
    for (size_t i = 0; i < a->nstates && i < b->nstates; i++)
        CHECK (str_eq (a->states[i], b->states[i]), "%s: state %zu", what, i);
    EQ (njobs);
    for (size_t i = 0; i < a->njobs && i < b->njobs; i++) {
        const qc_job_row_t *x = &a->jobs[i], *y = &b->jobs[i];
        CHECK (x->job == y->job && x->total == y->total && x->done == y->done
                   && x->failed == y->failed && x->queued == y->queued
                   && x->running == y->running && x->attached == y->attached
                   && x->cancelled == y->cancelled,
               "%s: job row %zu", what, i);
    }
    EQ (nassets);
    for (size_t i = 0; i < a->nassets && i < b->nassets; i++) {
        const qc_asset_t *x = &a->assets[i], *y = &b->assets[i];
        CHECK (str_eq (x->name, y->name) && x->size == y->size
                   && (!x->size || memcmp (x->data, y->data, x->size) == 0),
               "%s: asset %zu", what, i);
    }
    CHECK ((a->result == NULL) == (b->result == NULL), "%s: result presence", what);
    if (a->result && b->result) {
        const qc_result_t *x = a->result, *y = b->result;
        CHECK (x->ok == y->ok, "%s: result ok", what);
        CHECK (str_eq (x->error, y->error), "%s: result error", what);
        CHECK (str_eq (x->warnings, y->warnings), "%s: result warnings", what);
        CHECK (x->nkv == y->nkv, "%s: result nkv %zu vs %zu", what, x->nkv, y->nkv);
        for (size_t i = 0; i < x->nkv && i < y->nkv; i++)
            CHECK (str_eq (x->kv[i].key, y->kv[i].key)
                       && str_eq (x->kv[i].value, y->kv[i].value),
                   "%s: result kv %zu (order kept)", what, i);
        CHECK (x->nfiles == y->nfiles, "%s: result nfiles", what);
        for (size_t i = 0; i < x->nfiles && i < y->nfiles; i++) {
            CHECK (str_eq (x->files[i].name, y->files[i].name), "%s: file %zu name", what, i);
            CHECK (x->files[i].size == y->files[i].size, "%s: file %zu size", what, i);
            if (x->files[i].size == y->files[i].size && x->files[i].size)
                CHECK (memcmp (x->files[i].data, y->files[i].data, x->files[i].size) == 0,
                       "%s: file %zu bytes", what, i);
        }
        CHECK (x->has_source == y->has_source
               && (!x->has_source || (x->source.size == y->source.size
                                      && str_eq (x->source.etag, y->source.etag)
                                      && str_eq (x->source.last_modified,
                                                 y->source.last_modified))),
               "%s: result src", what);
        CHECK (x->ninputs == y->ninputs, "%s: result ninputs", what);
        for (size_t i = 0; i < x->ninputs && i < y->ninputs; i++) {
            const qc_result_input_t *p = &x->inputs[i], *q = &y->inputs[i];
            CHECK (str_eq (p->where, q->where) && p->there == q->there
                       && p->v.size == q->v.size && str_eq (p->v.etag, q->v.etag)
                       && str_eq (p->v.last_modified, q->v.last_modified),
                   "%s: result input %zu", what, i);
        }
    }
#undef EQ
#undef SEQ
}

/* Encodes m; the body bytes go to *body (malloc'd). 0 or -1. */
static __attribute__ ((unused)) int
encode_body (const qc_msg_t *m, uint8_t **body, size_t *len)
{
    zmsg_t *z = zmsg_new ();
    int rc = qc_msg_encode (m, z);
    if (rc == 0 && zmsg_size (z) == 2) {
        zframe_t *b = zmsg_last (z);
        *len = zframe_size (b);
        *body = malloc (*len ? *len : 1);
        memcpy (*body, zframe_data (b), *len);
    } else
        rc = -1;
    zmsg_destroy (&z);
    return rc;
}

/* Encodes, checks the two frames and the header, decodes the zmsg, checks
 * every field, re-encodes the decoded message and checks the bytes are the
 * same. */
static __attribute__ ((unused)) void
roundtrip (const char *what, const qc_msg_t *m)
{
    zmsg_t *z = zmsg_new ();
    int rc = qc_msg_encode (m, z);
    CHECK (rc == 0, "%s: encode", what);
    CHECK (zmsg_size (z) == 2, "%s: two frames, got %zu", what, zmsg_size (z));
    if (rc || zmsg_size (z) != 2) {
        zmsg_destroy (&z);
        return;
    }
    zframe_t *h = zmsg_first (z);
    const uint8_t *hb = zframe_data (h);
    CHECK (zframe_size (h) == 4 && hb[0] == 'Q' && hb[1] == 'C'
               && hb[2] == QC_PROTO_VERSION && hb[3] == m->command,
           "%s: header", what);
    char err[256] = "";
    qc_msg_t *d = qc_msg_decode (z, err, sizeof err);
    CHECK (d != NULL, "%s: decode: %s", what, err);
    if (d) {
        check_msg_eq (what, m, d);
        uint8_t *b2 = NULL;
        size_t l2 = 0;
        zframe_t *b1 = zmsg_last (z);
        CHECK (encode_body (d, &b2, &l2) == 0, "%s: re-encode", what);
        CHECK (b2 && l2 == zframe_size (b1) && memcmp (b2, zframe_data (b1), l2) == 0,
               "%s: re-encoding gives the same bytes", what);
        free (b2);
    }
    qc_msg_destroy (&d);
    zmsg_destroy (&z);
}

static __attribute__ ((unused)) qc_msg_t *
decode_cmd (uint8_t cmd, const void *body, size_t len, char *err, size_t errlen)
{
    uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, cmd};
    return qc_msg_decode_bytes (hdr, sizeof hdr, body, len, err, errlen);
}

static __attribute__ ((unused)) void
expect_bad_hdr (const char *what, const void *hdr, size_t hlen, const void *body,
                size_t blen)
{
    char err[256];
    memset (err, 0, sizeof err);
    qc_msg_t *m = qc_msg_decode_bytes (hdr, hlen, body, blen, err, sizeof err);
    CHECK (m == NULL, "%s: must be refused", what);
    CHECK (err[0] != 0, "%s: error text", what);
    qc_msg_destroy (&m);
}

static __attribute__ ((unused)) void
expect_bad (const char *what, uint8_t cmd, const void *body, size_t len)
{
    char err[256];
    memset (err, 0, sizeof err);
    qc_msg_t *m = decode_cmd (cmd, body, len, err, sizeof err);
    CHECK (m == NULL, "%s: must be refused", what);
    CHECK (err[0] != 0, "%s: error text", what);
    qc_msg_destroy (&m);
}

/* A msgpack body built by hand, for what our encoder would never send. */
typedef struct {
    msgpack_sbuffer sb;
    msgpack_packer pk;
} mb_t;

static __attribute__ ((unused)) void
mb_init (mb_t *b)
{
    msgpack_sbuffer_init (&b->sb);
    msgpack_packer_init (&b->pk, &b->sb, msgpack_sbuffer_write);
}

static __attribute__ ((unused)) void
mb_free (mb_t *b)
{
    msgpack_sbuffer_destroy (&b->sb);
}

static __attribute__ ((unused)) void
mb_str (mb_t *b, const char *s)
{
    msgpack_pack_str (&b->pk, strlen (s));
    msgpack_pack_str_body (&b->pk, s, strlen (s));
}

static __attribute__ ((unused)) void
mb_strn (mb_t *b, const char *s, size_t n)
{
    msgpack_pack_str (&b->pk, n);
    msgpack_pack_str_body (&b->pk, s, n);
}

static __attribute__ ((unused)) void
mb_raw (mb_t *b, const void *p, size_t n)
{
    msgpack_sbuffer_write (&b->sb, p, n);
}

/* ------------------------------------------------------------ messages */

static __attribute__ ((unused)) qc_result_t *
make_result (void)
{
    qc_result_t *r = qc_result_new ();
    /* deliberately not in sorted order: order must be kept */
    qc_result_set (r, "zeta_last_alphabetically", "%d", 1);
    qc_result_set (r, "alpha", "%s", "first?");
    qc_result_set (r, "levels", "%s", "3");
    qc_result_set (r, "base_mag", "%.1f", 40.0);
    qc_result_set (r, "empty_value", "%s", "");
    qc_result_set (r, "utf8", "%s", "5 \xc2\xb5m, tab\tthere");
    qc_result_add_warning (r, "small tissue %d%%", 3);
    qc_result_add_warning (r, "pen markings found");
    unsigned char png[300];
    for (size_t i = 0; i < sizeof png; i++)
        png[i] = (unsigned char) (i * 37u);      /* includes 0x00 bytes */
    png[5] = 0;
    qc_result_add_file (r, "_thumb.png", png, sizeof png);
    qc_result_add_file (r, "_empty.png", NULL, 0);
    unsigned char zeros[64] = {0};
    qc_result_add_file (r, "_mask_use.png", zeros, sizeof zeros);
    /* a slide by URL's version and its annotation's (PROTOCOL.md 6.1) */
    qc_result_set_source (r, 1938955, "\"5f-1d96\"", "Mon, 30 Nov 2026 10:25:07 GMT");
    qc_result_source_t annot = { .size = 549, .etag = "\"6a-225\"" };
    qc_result_add_input (r, "http://127.0.0.1:8080/s/a.xml", &annot);
    qc_result_add_input (r, "http://127.0.0.1:8080/s/a.json", NULL);
    return r;
}

/* Fills msgs[] with one or more messages of every command; returns count. */
static __attribute__ ((unused)) size_t
make_messages (qc_msg_t **msgs, size_t nslides)
{
    size_t n = 0;
    qc_msg_t *m;

    m = msgs[n++] = qc_msg_new (QC_READY);
    qc_msg_set_str (&m->name, "worker-01");
    qc_msg_set_str (&m->host, "gpu-node-3.lab.example");
    qc_msg_set_str (&m->version, "1.2.3");
    m->slots = UINT32_MAX;
    m->prefetch = 4;
    m->hb_ms = 1000;
    m->ngpus = 3;
    m->gpus = calloc (3, sizeof *m->gpus);
    m->gpus[0] = (qc_gpu_t) {0, strdup ("NVIDIA H100 80GB HBM3"), 81559};
    m->gpus[1] = (qc_gpu_t) {3, strdup ("A100"), UINT64_MAX};
    m->gpus[2] = (qc_gpu_t) {1024, strdup (""), 0};
    qc_msg_set_str (&m->reason, "signal 11 (Segmentation fault)");
    m->ncrashed = 2;
    m->crashed = calloc (2, sizeof *m->crashed);
    m->crashed[0] = (qc_taskref_t) {3, 17, 65537, 0x1234567890abcdefull};
    m->crashed[1] = (qc_taskref_t) {UINT64_MAX, 0, UINT32_MAX, 1};

    m = msgs[n++] = qc_msg_new (QC_READY);   /* only the required fields */
    qc_msg_set_str (&m->name, "w");
    m->slots = 0;

    msgs[n++] = qc_msg_new (QC_HEARTBEAT);

    m = msgs[n++] = qc_msg_new (QC_STARTED);
    m->job = UINT64_MAX;
    m->key = 0xfedcba9876543210ull;
    m->idx = 12345;
    m->attempt = 3;

    m = msgs[n++] = qc_msg_new (QC_RESULT);
    m->job = 7;
    m->key = 99;
    m->idx = 42;
    m->attempt = 2;
    m->seq = 99;
    qc_msg_set_str (&m->path, "/data/slides/a b (1).svs");
    qc_msg_set_str (&m->worker, "worker-01");
    m->result = make_result ();

    m = msgs[n++] = qc_msg_new (QC_RESULT);   /* a failed slide */
    m->job = 8;
    m->idx = 0;
    m->result = qc_result_new ();
    qc_result_fail (m->result, "cannot open slide: %s", "not a TIFF");

    m = msgs[n++] = qc_msg_new (QC_LOG);
    m->job = 7;
    m->time = 1700000000.123456;
    m->level = 3;
    qc_msg_set_str (&m->worker, "worker-01");
    qc_msg_set_str (&m->slide, "a.svs");
    qc_msg_set_str (&m->module, "BlurDetectionModule");
    qc_msg_set_str (&m->message, "blur \xc2\xb5 95% of tissue");

    m = msgs[n++] = qc_msg_new (QC_DISCONNECT);
    m->drain = true;
    qc_msg_set_str (&m->reason, "shutting down");
    m->nrefs = 3;
    m->refs = calloc (3, sizeof *m->refs);
    m->refs[0] = (qc_taskref_t) {1, 2, 1, 5};
    m->refs[1] = (qc_taskref_t) {1, 3, 65536, 5};
    m->refs[2] = (qc_taskref_t) {UINT64_MAX, 0, 0, UINT64_MAX};

    msgs[n++] = qc_msg_new (QC_DISCONNECT);    /* nothing at all: drain false */

    m = msgs[n++] = qc_msg_new (QC_TASK);
    m->job = 5;
    m->key = 1;
    m->idx = 1u << 20;
    m->attempt = 1;
    m->gpu = 2;
    qc_msg_set_str (&m->path, "/cohort/x.ndpi");
    qc_msg_set_str (&m->config, "[pipeline]\nsteps= BasicModule.getBasicStats\n"
                                "\tLightDarkModule.getIntensityThresholdOtsu\n");

    m = msgs[n++] = qc_msg_new (QC_TASK);      /* CPU slot */
    m->job = 5;
    m->idx = 0;
    m->gpu = -1;
    qc_msg_set_str (&m->path, "");

    m = msgs[n++] = qc_msg_new (QC_REVOKE);
    m->job = 5;
    m->key = UINT64_MAX;
    m->idx = 7;
    m->attempt = 65538;
    qc_msg_set_str (&m->reason, "ran past the task timeout");

    m = msgs[n++] = qc_msg_new (QC_SUBMIT);
    m->job = 77;
    m->key = 0xabcdef;
    m->base = 4096;
    m->resource = QC_RES_GPU;
    m->final = true;
    qc_msg_set_str (&m->name, "cohort-A");
    qc_msg_set_str (&m->config, "[BasicModule.getBasicStats]\nimage_work_size = 1.25x\n");
    m->nslides = nslides;
    m->slides = calloc (nslides, sizeof *m->slides);
    for (size_t i = 0; i < nslides; i++) {
        char p[64];
        snprintf (p, sizeof p, "/lab/cohort/slide-%05zu.svs", i);
        m->slides[i] = strdup (p);
    }

    /* the files a config names travel with the creating batch */
    m->nassets = 2;
    m->assets = calloc (2, sizeof *m->assets);
    m->assets[0].name = strdup ("3f0a6c9f1b8e2d4c5a7b9e0f1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4");
    m->assets[0].size = 300;            /* bin16 */
    m->assets[0].data = malloc (300);
    for (size_t i = 0; i < 300; i++)
        m->assets[0].data[i] = (unsigned char) (i * 131u);
    m->assets[1].name = strdup ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    m->assets[1].size = 0;              /* an empty file */

    m = msgs[n++] = qc_msg_new (QC_FETCH);
    m->job = 77;

    m = msgs[n++] = qc_msg_new (QC_ASSETS);   /* the answer, files given */
    m->job = 77;
    m->nassets = 1;
    m->assets = calloc (1, sizeof *m->assets);
    m->assets[0].name = strdup ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    m = msgs[n++] = qc_msg_new (QC_ASSETS);   /* a job the broker forgot */
    m->job = 78;

    m = msgs[n++] = qc_msg_new (QC_SUBMIT);    /* follow-up batch, not final */
    m->base = 0;
    m->resource = QC_RES_ANY;

    m = msgs[n++] = qc_msg_new (QC_CANCEL);
    m->job = 77;

    msgs[n++] = qc_msg_new (QC_STATUS);

    m = msgs[n++] = qc_msg_new (QC_ATTACH);
    m->job = 77;
    m->seq = 12;

    m = msgs[n++] = qc_msg_new (QC_ACK);
    m->job = 77;
    m->seq = 0;

    m = msgs[n++] = qc_msg_new (QC_ACCEPTED);
    m->job = 77;
    m->total = 4096;

    m = msgs[n++] = qc_msg_new (QC_ACCEPTED);   /* the answer to an ATTACH */
    m->job = 77;
    m->key = 42;
    m->total = 4096;
    m->seq = 1000;
    m->attached = true;

    m = msgs[n++] = qc_msg_new (QC_DONE);
    m->job = 77;
    m->total = 4096;
    m->done = 4000;
    m->failed = 96;
    qc_msg_set_str (&m->reason, "cancelled by the client");

    m = msgs[n++] = qc_msg_new (QC_STATUS_REPLY);
    m->queue = 123456;
    m->nworkers = 3;
    m->workers = calloc (3, sizeof *m->workers);
    m->workers[0] = (qc_worker_row_t) {strdup ("w1"), strdup ("host-a"), 16, 2, 15, 1, 0.25, false};
    m->workers[1] = (qc_worker_row_t) {strdup ("w2"), strdup (""), 0, 1, 0, 1, 12.5, true};
    m->workers[2] = (qc_worker_row_t) {strdup ("w3"), strdup ("h"), UINT32_MAX, 0,
                                       UINT32_MAX, 0, 1e9, false};
    m->njobs = 2;
    m->jobs = calloc (2, sizeof *m->jobs);
    m->jobs[0] = (qc_job_row_t) {77, 4096, 4000, 6, 80, 10, true, false};
    m->jobs[1] = (qc_job_row_t) {UINT64_MAX, 1, 0, 1, 0, 0, false, true};
    m->nnotes = 2;
    m->notes = calloc (2, sizeof *m->notes);
    m->notes[0] = strdup ("w1: takes no new slide for 40 s (its machine failed slides)");
    m->notes[1] = strdup ("");
    m->nspeeds = 3;
    m->speeds = calloc (3, sizeof *m->speeds);
    m->speeds[0] = (qc_worker_speed_t) {11000, 600};
    m->speeds[1] = (qc_worker_speed_t) {0, 1};
    m->speeds[2] = (qc_worker_speed_t) {UINT32_MAX, 0};
    m->nstates = 3;
    m->states = calloc (3, sizeof *m->states);
    m->states[0] = strdup ("busy");
    m->states[1] = strdup ("paused");
    m->states[2] = strdup ("");

    m = msgs[n++] = qc_msg_new (QC_ERROR);
    qc_msg_set_str (&m->reason, "job 77: unknown job");
    m->job = 77;

    return n;
}

#endif
