/* Protocol codec tests: every command round-trips field for field through
 * qc_msg_encode -> qc_msg_decode; malformed input of every kind is refused
 * with a reason and without a crash or a leak (run under ASan to make the
 * leak half meaningful); encoding refuses what a peer would refuse; and a
 * bounded, seeded mutation fuzz loop over valid encodings. */
#include "shared/proto.h"

#include <msgpack.h>
#include <stdint.h>
#include <string.h>

#include "shared/mpread.h"
#include "tests/unit/check.h"

/* ------------------------------------------------------------ helpers */

static bool
str_eq (const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp (a, b) == 0;
}

/* Compares every field of qc_msg_t; what names the message in failures. */
static void
check_msg_eq (const char *what, const qc_msg_t *a, const qc_msg_t *b)
{
#define EQ(f) CHECK (a->f == b->f, "%s: field " #f, what)
#define SEQ(f) CHECK (str_eq (a->f, b->f), "%s: field " #f ": '%s' vs '%s'", what, \
                      a->f ? a->f : "(null)", b->f ? b->f : "(null)")
    EQ (command); EQ (job); EQ (idx); EQ (base); EQ (seq); EQ (total);
    EQ (done); EQ (failed); EQ (queue); EQ (attempt); EQ (slots);
    EQ (prefetch); EQ (hb_ms); EQ (gpu); EQ (resource); EQ (level);
    EQ (final); EQ (drain);
    CHECK (memcmp (&a->time, &b->time, sizeof a->time) == 0, "%s: time", what);
    SEQ (name); SEQ (host); SEQ (version); SEQ (path); SEQ (config);
    SEQ (reason); SEQ (worker); SEQ (slide); SEQ (module); SEQ (message);
    EQ (nslides);
    for (size_t i = 0; i < a->nslides && i < b->nslides; i++)
        CHECK (str_eq (a->slides[i], b->slides[i]), "%s: slide %zu", what, i);
    EQ (ngpus);
    for (size_t i = 0; i < a->ngpus && i < b->ngpus; i++) {
        CHECK (a->gpus[i].index == b->gpus[i].index, "%s: gpu %zu index", what, i);
        CHECK (str_eq (a->gpus[i].name, b->gpus[i].name), "%s: gpu %zu name", what, i);
        CHECK (a->gpus[i].memory_mb == b->gpus[i].memory_mb, "%s: gpu %zu mem", what, i);
    }
    EQ (nrefs);
    for (size_t i = 0; i < a->nrefs && i < b->nrefs; i++)
        CHECK (a->refs[i].job == b->refs[i].job && a->refs[i].idx == b->refs[i].idx,
               "%s: ref %zu", what, i);
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
    EQ (njobs);
    for (size_t i = 0; i < a->njobs && i < b->njobs; i++) {
        const qc_job_row_t *x = &a->jobs[i], *y = &b->jobs[i];
        CHECK (x->job == y->job && x->total == y->total && x->done == y->done
                   && x->failed == y->failed && x->queued == y->queued
                   && x->running == y->running && x->attached == y->attached
                   && x->cancelled == y->cancelled,
               "%s: job row %zu", what, i);
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
    }
#undef EQ
#undef SEQ
}

/* Encodes m; the body bytes go to *body (malloc'd). 0 or -1. */
static int
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
static void
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

static qc_msg_t *
decode_cmd (uint8_t cmd, const void *body, size_t len, char *err, size_t errlen)
{
    uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, cmd};
    return qc_msg_decode_bytes (hdr, sizeof hdr, body, len, err, errlen);
}

static void
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

static void
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

static void
mb_init (mb_t *b)
{
    msgpack_sbuffer_init (&b->sb);
    msgpack_packer_init (&b->pk, &b->sb, msgpack_sbuffer_write);
}

static void
mb_free (mb_t *b)
{
    msgpack_sbuffer_destroy (&b->sb);
}

static void
mb_str (mb_t *b, const char *s)
{
    msgpack_pack_str (&b->pk, strlen (s));
    msgpack_pack_str_body (&b->pk, s, strlen (s));
}

static void
mb_strn (mb_t *b, const char *s, size_t n)
{
    msgpack_pack_str (&b->pk, n);
    msgpack_pack_str_body (&b->pk, s, n);
}

static void
mb_raw (mb_t *b, const void *p, size_t n)
{
    msgpack_sbuffer_write (&b->sb, p, n);
}

/* ------------------------------------------------------------ messages */

static qc_result_t *
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
    return r;
}

/* Fills msgs[] with one or more messages of every command; returns count. */
static size_t
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

    m = msgs[n++] = qc_msg_new (QC_READY);   /* only the required fields */
    qc_msg_set_str (&m->name, "w");
    m->slots = 0;

    msgs[n++] = qc_msg_new (QC_HEARTBEAT);

    m = msgs[n++] = qc_msg_new (QC_STARTED);
    m->job = UINT64_MAX;
    m->idx = 12345;
    m->attempt = 3;

    m = msgs[n++] = qc_msg_new (QC_RESULT);
    m->job = 7;
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
    m->refs[0] = (qc_taskref_t) {1, 2};
    m->refs[1] = (qc_taskref_t) {1, 3};
    m->refs[2] = (qc_taskref_t) {UINT64_MAX, 0};

    msgs[n++] = qc_msg_new (QC_DISCONNECT);    /* nothing at all: drain false */

    m = msgs[n++] = qc_msg_new (QC_TASK);
    m->job = 5;
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

    m = msgs[n++] = qc_msg_new (QC_SUBMIT);
    m->job = 77;
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

    m = msgs[n++] = qc_msg_new (QC_ERROR);
    qc_msg_set_str (&m->reason, "job 77: unknown job");
    m->job = 77;

    return n;
}

/* ------------------------------------------------------------ tests */

static void
test_roundtrip (void)
{
    qc_msg_t *msgs[32];
    size_t n = make_messages (msgs, QC_PROTO_MAX_SLIDES);
    bool seen[256] = {false};
    for (size_t i = 0; i < n; i++) {
        char what[64];
        snprintf (what, sizeof what, "%s #%zu", qc_command_name (msgs[i]->command), i);
        roundtrip (what, msgs[i]);
        seen[msgs[i]->command] = true;
        qc_msg_destroy (&msgs[i]);
        CHECK (msgs[i] == NULL, "destroy nulls the pointer");
    }
    static const uint8_t all[] = {QC_READY, QC_HEARTBEAT, QC_STARTED, QC_RESULT,
                                  QC_LOG, QC_DISCONNECT, QC_TASK, QC_SUBMIT,
                                  QC_CANCEL, QC_STATUS, QC_ATTACH, QC_ACK,
                                  QC_ACCEPTED, QC_DONE, QC_STATUS_REPLY, QC_ERROR};
    for (size_t i = 0; i < sizeof all; i++)
        CHECK (seen[all[i]], "command %u round-tripped", all[i]);

    CHECK (strcmp (qc_command_name (QC_STATUS_REPLY), "STATUS_REPLY") == 0);
    CHECK (strcmp (qc_command_name (QC_READY), "READY") == 0);
    CHECK (strcmp (qc_command_name (99), "UNKNOWN") == 0);

    /* the result's kv order and file bytes, checked directly as well */
    qc_msg_t *m = qc_msg_new (QC_RESULT);
    m->job = 1;
    m->result = make_result ();
    uint8_t *body = NULL;
    size_t len = 0;
    CHECK (encode_body (m, &body, &len) == 0);
    char err[256] = "";
    qc_msg_t *d = body ? decode_cmd (QC_RESULT, body, len, err, sizeof err) : NULL;
    CHECK (d && d->result, "decode result: %s", err);
    if (d && d->result) {
        const qc_result_t *r = d->result;
        CHECK (r->ok == 1 && r->error == NULL);
        CHECK (str_eq (r->warnings, "small tissue 3%|pen markings found"));
        CHECK (r->nkv == 6 && strcmp (r->kv[0].key, "zeta_last_alphabetically") == 0
               && strcmp (r->kv[1].key, "alpha") == 0
               && strcmp (r->kv[5].key, "utf8") == 0);
        CHECK (str_eq (qc_result_get (r, "empty_value"), ""));
        CHECK (r->nfiles == 3 && r->files[1].size == 0
               && strcmp (r->files[1].name, "_empty.png") == 0);
        CHECK (r->nfiles == 3 && r->files[0].size == 300 && r->files[0].data[5] == 0
               && r->files[0].data[299] == (unsigned char) (299 * 37u));
        CHECK (r->nfiles == 3 && r->files[2].size == 64 && r->files[2].data[63] == 0);
    }
    qc_msg_destroy (&d);
    qc_msg_destroy (&m);
    free (body);

    /* qc_msg_set_str copies, replaces and clears */
    char *s = NULL;
    char buf[8] = "abc";
    CHECK (qc_msg_set_str (&s, buf) == 0 && s != buf && str_eq (s, "abc"));
    CHECK (qc_msg_set_str (&s, "de") == 0 && str_eq (s, "de"));
    CHECK (qc_msg_set_str (&s, NULL) == 0 && s == NULL);
    CHECK (qc_msg_set_str (NULL, "x") == -1);
}

/* The codec over real sockets: PAIR, and ROUTER with a routing id. */
static void
test_send (void)
{
    zsock_t *a = zsock_new_pair ("@inproc://test-proto-pair");
    zsock_t *b = zsock_new_pair (">inproc://test-proto-pair");
    CHECK (a && b);
    if (a && b) {
        qc_msg_t *m = qc_msg_new (QC_ACK);
        m->job = 3;
        m->seq = 4;
        CHECK (qc_msg_send (m, a, NULL) == 0);
        zmsg_t *z = zmsg_recv (b);
        char err[128] = "";
        qc_msg_t *d = z ? qc_msg_decode (z, err, sizeof err) : NULL;
        CHECK (d && d->command == QC_ACK && d->job == 3 && d->seq == 4, "%s", err);
        qc_msg_destroy (&d);
        zmsg_destroy (&z);
        qc_msg_destroy (&m);
    }
    zsock_destroy (&a);
    zsock_destroy (&b);

    zsock_t *router = zsock_new_router ("@inproc://test-proto-router");
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    CHECK (router && dealer);
    if (router && dealer) {
        zsock_set_identity (dealer, "dealer-1");
        CHECK (zsock_connect (dealer, "inproc://test-proto-router") == 0);
        qc_msg_t *m = qc_msg_new (QC_HEARTBEAT);
        CHECK (qc_msg_send (m, dealer, NULL) == 0);
        zmsg_t *z = zmsg_recv (router);
        zframe_t *id = z ? zmsg_pop (z) : NULL;
        char err[128] = "";
        qc_msg_t *d = z ? qc_msg_decode (z, err, sizeof err) : NULL;
        CHECK (id && zframe_streq (id, "dealer-1"));
        CHECK (d && d->command == QC_HEARTBEAT, "%s", err);
        qc_msg_destroy (&d);
        zmsg_destroy (&z);
        /* the reply goes back by routing id */
        qc_msg_t *e = qc_msg_new (QC_ERROR);
        qc_msg_set_str (&e->reason, "go away");
        CHECK (id && qc_msg_send (e, router, id) == 0);
        z = zmsg_recv (dealer);
        d = z ? qc_msg_decode (z, err, sizeof err) : NULL;
        CHECK (d && d->command == QC_ERROR && str_eq (d->reason, "go away"), "%s", err);
        qc_msg_destroy (&d);
        zmsg_destroy (&z);
        zframe_destroy (&id);
        qc_msg_destroy (&e);
        qc_msg_destroy (&m);
    }
    zsock_destroy (&router);
    zsock_destroy (&dealer);
    CHECK (qc_msg_send (NULL, NULL, NULL) == -1);
}

static void
test_bad_headers_and_frames (void)
{
    uint8_t body[] = {0x80};   /* an empty map: a valid HEARTBEAT body */
    char err[128] = "";
    qc_msg_t *ok = decode_cmd (QC_HEARTBEAT, body, 1, err, sizeof err);
    CHECK (ok && ok->command == QC_HEARTBEAT, "baseline: %s", err);
    qc_msg_destroy (&ok);

    expect_bad_hdr ("magic", (uint8_t[]) {'Q', 'X', 1, QC_HEARTBEAT}, 4, body, 1);
    expect_bad_hdr ("magic 2", (uint8_t[]) {'q', 'c', 1, QC_HEARTBEAT}, 4, body, 1);
    expect_bad_hdr ("version 2", (uint8_t[]) {'Q', 'C', 2, QC_HEARTBEAT}, 4, body, 1);
    expect_bad_hdr ("version 0", (uint8_t[]) {'Q', 'C', 0, QC_HEARTBEAT}, 4, body, 1);
    expect_bad_hdr ("command 0", (uint8_t[]) {'Q', 'C', 1, 0}, 4, body, 1);
    expect_bad_hdr ("command 99", (uint8_t[]) {'Q', 'C', 1, 99}, 4, body, 1);
    expect_bad_hdr ("command 255", (uint8_t[]) {'Q', 'C', 1, 255}, 4, body, 1);
    expect_bad_hdr ("header 3 bytes", (uint8_t[]) {'Q', 'C', 1}, 3, body, 1);
    expect_bad_hdr ("header 5 bytes", (uint8_t[]) {'Q', 'C', 1, QC_HEARTBEAT, 0}, 5, body, 1);
    expect_bad_hdr ("header 0 bytes", "", 0, body, 1);
    expect_bad_hdr ("header NULL", NULL, 4, body, 1);
    expect_bad_hdr ("body NULL", (uint8_t[]) {'Q', 'C', 1, QC_HEARTBEAT}, 4, NULL, 0);

    /* the error text names the version or the command */
    qc_msg_decode_bytes ((uint8_t[]) {'Q', 'C', 9, 2}, 4, body, 1, err, sizeof err);
    CHECK (strstr (err, "9") != NULL, "version in error: %s", err);
    qc_msg_decode_bytes ((uint8_t[]) {'Q', 'C', 1, 77}, 4, body, 1, err, sizeof err);
    CHECK (strstr (err, "77") != NULL, "command in error: %s", err);
    /* no error buffer, or a tiny one: still no crash */
    CHECK (qc_msg_decode_bytes ((uint8_t[]) {'Q', 'X', 1, 2}, 4, body, 1, NULL, 0) == NULL);
    char tiny[1] = {'x'};
    CHECK (qc_msg_decode_bytes ((uint8_t[]) {'Q', 'X', 1, 2}, 4, body, 1, tiny, 1) == NULL
           && tiny[0] == 0);

    /* frame counts through qc_msg_decode */
    uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, QC_HEARTBEAT};
    for (int frames = 0; frames <= 4; frames++) {
        zmsg_t *z = zmsg_new ();
        if (frames >= 1) zmsg_addmem (z, hdr, 4);
        if (frames >= 2) zmsg_addmem (z, body, 1);
        for (int k = 2; k < frames; k++) zmsg_addmem (z, body, 1);
        memset (err, 0, sizeof err);
        qc_msg_t *m = qc_msg_decode (z, err, sizeof err);
        if (frames == 2)
            CHECK (m != NULL, "2 frames decode: %s", err);
        else {
            CHECK (m == NULL, "%d frames must be refused", frames);
            CHECK (err[0] != 0, "%d frames: error text", frames);
        }
        qc_msg_destroy (&m);
        zmsg_destroy (&z);
    }
    memset (err, 0, sizeof err);
    CHECK (qc_msg_decode (NULL, err, sizeof err) == NULL && err[0]);
    /* a routing id still in front makes it three frames: refused */
    zmsg_t *z = zmsg_new ();
    zmsg_addstr (z, "id");
    zmsg_addmem (z, hdr, 4);
    zmsg_addmem (z, body, 1);
    CHECK (qc_msg_decode (z, err, sizeof err) == NULL);
    zmsg_destroy (&z);
    /* an empty body frame */
    z = zmsg_new ();
    zmsg_addmem (z, hdr, 4);
    zmsg_addmem (z, NULL, 0);
    memset (err, 0, sizeof err);
    CHECK (qc_msg_decode (z, err, sizeof err) == NULL && err[0], "empty body frame");
    zmsg_destroy (&z);
}

static void
test_bad_bodies (void)
{
    mb_t b;
    /* empty body and non-map bodies */
    uint8_t empty = 0;
    expect_bad ("empty body", QC_HEARTBEAT, &empty, 0);
    expect_bad ("body is an array", QC_HEARTBEAT, (uint8_t[]) {0x90}, 1);
    expect_bad ("body is a string", QC_HEARTBEAT, (uint8_t[]) {0xa1, 'x'}, 2);
    expect_bad ("body is an int", QC_HEARTBEAT, (uint8_t[]) {0x05}, 1);
    expect_bad ("body is nil", QC_HEARTBEAT, (uint8_t[]) {0xc0}, 1);
    expect_bad ("body is 0xc1", QC_HEARTBEAT, (uint8_t[]) {0xc1}, 1);
    /* trailing bytes after the map */
    expect_bad ("trailing nil", QC_HEARTBEAT, (uint8_t[]) {0x80, 0xc0}, 2);
    expect_bad ("second map", QC_HEARTBEAT, (uint8_t[]) {0x80, 0x80}, 2);
    /* a map whose count is larger than what follows */
    expect_bad ("map count lies", QC_HEARTBEAT, (uint8_t[]) {0x81, 0xa1, 'x'}, 3);
    /* map32 / array32 / str32 / bin32 headers claiming ~4 billion */
    uint8_t big_map[15] = {0xdf, 0xff, 0xff, 0xff, 0xff};
    memset (big_map + 5, 0xa0, 10);
    expect_bad ("map32 of 4e9", QC_HEARTBEAT, big_map, sizeof big_map);

    uint8_t hdr32[5] = {0xdd, 0xff, 0xff, 0xff, 0xff};
    uint8_t ten[10];
    memset (ten, 0xa0, sizeof ten);
    const char *arr_keys[] = {"slides", "zz_unknown", "name"};
    for (int k = 0; k < 3; k++) {
        mb_init (&b);
        msgpack_pack_map (&b.pk, 2);
        mb_str (&b, "base");
        msgpack_pack_uint64 (&b.pk, 0);
        mb_str (&b, arr_keys[k]);
        mb_raw (&b, hdr32, 5);
        mb_raw (&b, ten, 10);
        char what[64];
        snprintf (what, sizeof what, "array32 of 4e9 under '%s'", arr_keys[k]);
        expect_bad (what, QC_SUBMIT, b.sb.data, b.sb.size);
        mb_free (&b);
    }
    /* the same for a GPU list, refs, workers, jobs rows and a result kv */
    struct { uint8_t cmd; const char *key; } lists[] = {
        {QC_READY, "gpus"}, {QC_DISCONNECT, "refs"}, {QC_STATUS_REPLY, "workers"},
        {QC_STATUS_REPLY, "jobs"},
    };
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        mb_init (&b);
        msgpack_pack_map (&b.pk, 1);
        mb_str (&b, lists[k].key);
        mb_raw (&b, hdr32, 5);
        mb_raw (&b, ten, 10);
        expect_bad (lists[k].key, lists[k].cmd, b.sb.data, b.sb.size);
        mb_free (&b);
    }
    mb_init (&b);
    msgpack_pack_map (&b.pk, 3);
    mb_str (&b, "job"); msgpack_pack_uint64 (&b.pk, 1);
    mb_str (&b, "idx"); msgpack_pack_uint64 (&b.pk, 1);
    mb_str (&b, "result");
    msgpack_pack_map (&b.pk, 1);
    mb_str (&b, "kv");
    mb_raw (&b, hdr32, 5);
    mb_raw (&b, ten, 10);
    expect_bad ("result kv array32 of 4e9", QC_RESULT, b.sb.data, b.sb.size);
    mb_free (&b);
    /* str32 and bin32 lengths of 4e9 */
    mb_init (&b);
    msgpack_pack_map (&b.pk, 2);
    mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
    mb_str (&b, "name");
    mb_raw (&b, (uint8_t[]) {0xdb, 0xff, 0xff, 0xff, 0xff}, 5);
    mb_raw (&b, ten, 10);
    expect_bad ("str32 of 4e9", QC_READY, b.sb.data, b.sb.size);
    mb_free (&b);
    mb_init (&b);
    msgpack_pack_map (&b.pk, 2);
    mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
    mb_str (&b, "zz");
    mb_raw (&b, (uint8_t[]) {0xc6, 0xff, 0xff, 0xff, 0xff}, 5);
    mb_raw (&b, ten, 10);
    expect_bad ("bin32 of 4e9 under unknown key", QC_READY, b.sb.data, b.sb.size);
    mb_free (&b);
    mb_init (&b);
    msgpack_pack_map (&b.pk, 2);
    mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
    mb_str (&b, "zz");
    mb_raw (&b, (uint8_t[]) {0xc9, 0xff, 0xff, 0xff, 0xff, 0x01}, 6);
    mb_raw (&b, ten, 10);
    expect_bad ("ext32 of 4e9 under unknown key", QC_READY, b.sb.data, b.sb.size);
    mb_free (&b);

    /* deep nesting inside an unknown key: moderate, deep, and very deep
     * (which must not recurse the stack away) */
    size_t depths[] = {9, 64, 1000, 200000};
    for (size_t k = 0; k < sizeof depths / sizeof depths[0]; k++) {
        mb_init (&b);
        msgpack_pack_map (&b.pk, 3);
        mb_str (&b, "name"); mb_str (&b, "w");
        mb_str (&b, "future");
        for (size_t d = 0; d < depths[k]; d++)
            msgpack_pack_array (&b.pk, 1);
        msgpack_pack_nil (&b.pk);
        mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
        char what[64];
        snprintf (what, sizeof what, "nesting %zu deep under an unknown key", depths[k]);
        expect_bad (what, QC_READY, b.sb.data, b.sb.size);
        mb_free (&b);
    }
    /* nested maps too */
    mb_init (&b);
    msgpack_pack_map (&b.pk, 1);
    mb_str (&b, "future");
    for (int d = 0; d < 5000; d++) {
        msgpack_pack_map (&b.pk, 1);
        mb_str (&b, "k");
    }
    msgpack_pack_nil (&b.pk);
    expect_bad ("nested maps under an unknown key", QC_STATUS, b.sb.data, b.sb.size);
    mb_free (&b);

    /* a required field missing, per command */
    struct { uint8_t cmd; const char *keys; } missing[] = {
        {QC_READY, "slots"}, {QC_READY, "name"}, {QC_STARTED, "job"},
        {QC_STARTED, "idx"}, {QC_RESULT, "job idx"}, {QC_LOG, "level"},
        {QC_LOG, "message"}, {QC_TASK, "job idx"}, {QC_TASK, "path"},
        {QC_SUBMIT, "job"}, {QC_CANCEL, ""}, {QC_ATTACH, "seq"}, {QC_ACK, "job"},
        {QC_ACK, "seq"}, {QC_ACCEPTED, "total"}, {QC_DONE, "total"},
        {QC_ERROR, "job"},
    };
    for (size_t k = 0; k < sizeof missing / sizeof missing[0]; k++) {
        /* the body carries only the keys listed (ints / strings) */
        char keys[64];
        snprintf (keys, sizeof keys, "%s", missing[k].keys);
        int count = 0;
        for (char *t = strtok (keys, " "); t; t = strtok (NULL, " "))
            count++;
        mb_init (&b);
        msgpack_pack_map (&b.pk, count);
        snprintf (keys, sizeof keys, "%s", missing[k].keys);
        for (char *t = strtok (keys, " "); t; t = strtok (NULL, " ")) {
            mb_str (&b, t);
            if (strcmp (t, "name") == 0 || strcmp (t, "path") == 0
                || strcmp (t, "message") == 0)
                mb_str (&b, "x");
            else
                msgpack_pack_uint32 (&b.pk, 1);
        }
        char what[96];
        snprintf (what, sizeof what, "%s with only {%s}",
                  qc_command_name (missing[k].cmd), missing[k].keys);
        char err[256] = "";
        qc_msg_t *m = decode_cmd (missing[k].cmd, b.sb.data, b.sb.size, err, sizeof err);
        CHECK (m == NULL, "%s must be refused", what);
        CHECK (strstr (err, "missing") != NULL, "%s: error says missing: %s", what, err);
        qc_msg_destroy (&m);
        mb_free (&b);
    }
    /* a required string sent as nil is as good as missing: a READY with no
     * name, a TASK with no path must not reach code that uses them */
    struct { uint8_t cmd; const char *nil_key; } nils[] = {
        {QC_READY, "name"}, {QC_TASK, "path"}, {QC_LOG, "message"}, {QC_ERROR, "reason"},
    };
    for (size_t k = 0; k < sizeof nils / sizeof nils[0]; k++) {
        mb_init (&b);
        msgpack_pack_map (&b.pk, 5);
        mb_str (&b, "job"); msgpack_pack_uint32 (&b.pk, 1);
        mb_str (&b, "idx"); msgpack_pack_uint32 (&b.pk, 1);
        mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
        mb_str (&b, "level"); msgpack_pack_uint32 (&b.pk, 1);
        mb_str (&b, nils[k].nil_key); msgpack_pack_nil (&b.pk);
        char what[64];
        snprintf (what, sizeof what, "%s with %s = nil", qc_command_name (nils[k].cmd),
                  nils[k].nil_key);
        expect_bad (what, nils[k].cmd, b.sb.data, b.sb.size);
        mb_free (&b);
    }
    /* an optional string as nil is fine (absent) */
    mb_init (&b);
    msgpack_pack_map (&b.pk, 3);
    mb_str (&b, "name"); mb_str (&b, "w");
    mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
    mb_str (&b, "host"); msgpack_pack_nil (&b.pk);
    {
        char err[128] = "";
        qc_msg_t *m = decode_cmd (QC_READY, b.sb.data, b.sb.size, err, sizeof err);
        CHECK (m && m->host == NULL && str_eq (m->name, "w"), "optional nil: %s", err);
        qc_msg_destroy (&m);
    }
    mb_free (&b);
}

/* One READY body with {name: "w", slots: 1} plus one extra pair written by
 * the callback. */
typedef void (*extra_fn) (mb_t *b, const void *arg);

static void
ready_with (mb_t *b, extra_fn fn, const void *arg)
{
    mb_init (b);
    msgpack_pack_map (&b->pk, 3);
    mb_str (b, "name"); mb_str (b, "w");
    mb_str (b, "slots"); msgpack_pack_uint32 (&b->pk, 1);
    fn (b, arg);
}

static void x_name_str (mb_t *b, const void *a) { (void) a; mb_str (b, "host"); msgpack_pack_int (&b->pk, 5); }
static void x_slots_str (mb_t *b, const void *a) { (void) a; mb_str (b, "prefetch"); mb_str (b, "16"); }
static void x_neg (mb_t *b, const void *a) { (void) a; mb_str (b, "prefetch"); msgpack_pack_int (&b->pk, -1); }
static void x_u32_over (mb_t *b, const void *a) { (void) a; mb_str (b, "hb_ms"); msgpack_pack_uint64 (&b->pk, 1ull << 32); }
static void x_float_u32 (mb_t *b, const void *a) { (void) a; mb_str (b, "hb_ms"); msgpack_pack_double (&b->pk, 1.5); }
static void x_bool_int (mb_t *b, const void *a) { (void) a; mb_str (b, "version"); msgpack_pack_true (&b->pk); }
static void x_gpus_notarr (mb_t *b, const void *a) { (void) a; mb_str (b, "gpus"); mb_str (b, "0,1"); }
static void
x_gpus_tuple2 (mb_t *b, const void *a)
{
    (void) a;
    mb_str (b, "gpus");
    msgpack_pack_array (&b->pk, 1);
    msgpack_pack_array (&b->pk, 2);
    msgpack_pack_uint32 (&b->pk, 0);
    mb_str (b, "x");
}
static void
x_gpus_index (mb_t *b, const void *a)
{
    (void) a;
    mb_str (b, "gpus");
    msgpack_pack_array (&b->pk, 1);
    msgpack_pack_array (&b->pk, 3);
    msgpack_pack_uint32 (&b->pk, 5000);
    mb_str (b, "x");
    msgpack_pack_uint32 (&b->pk, 1);
}
static void
x_gpus_name_type (mb_t *b, const void *a)
{
    (void) a;
    mb_str (b, "gpus");
    msgpack_pack_array (&b->pk, 1);
    msgpack_pack_array (&b->pk, 3);
    msgpack_pack_uint32 (&b->pk, 0);
    msgpack_pack_uint32 (&b->pk, 7);
    msgpack_pack_uint32 (&b->pk, 1);
}
static void
x_gpus_mem_type (mb_t *b, const void *a)
{
    (void) a;
    mb_str (b, "gpus");
    msgpack_pack_array (&b->pk, 2);
    msgpack_pack_array (&b->pk, 3);
    msgpack_pack_uint32 (&b->pk, 0);
    mb_str (b, "good");
    msgpack_pack_uint32 (&b->pk, 1);
    msgpack_pack_array (&b->pk, 3);
    msgpack_pack_uint32 (&b->pk, 1);
    mb_str (b, "name allocated, then memory is bad");
    mb_str (b, "lots");
}
static void
x_gpus_too_many (mb_t *b, const void *a)
{
    (void) a;
    mb_str (b, "gpus");
    msgpack_pack_array (&b->pk, QC_PROTO_MAX_GPUS + 1);
    for (int i = 0; i <= QC_PROTO_MAX_GPUS; i++) {
        msgpack_pack_array (&b->pk, 3);
        msgpack_pack_uint32 (&b->pk, (uint32_t) i);
        mb_str (b, "g");
        msgpack_pack_uint32 (&b->pk, 1);
    }
}
static void x_host_long (mb_t *b, const void *a)
{
    size_t n = *(const size_t *) a;
    char *s = malloc (n);
    memset (s, 'h', n);
    mb_str (b, "host");
    mb_strn (b, s, n);
    free (s);
}
static void x_host_nul (mb_t *b, const void *a) { (void) a; mb_str (b, "host"); mb_strn (b, "ab\0cd", 5); }
static void x_key_int (mb_t *b, const void *a) { (void) a; msgpack_pack_int (&b->pk, 1); msgpack_pack_int (&b->pk, 2); }
static void x_key_nul (mb_t *b, const void *a) { (void) a; mb_strn (b, "name\0", 5); mb_str (b, "x"); }

static void
test_wrong_types_and_bounds (void)
{
    struct { const char *what; extra_fn fn; } bad[] = {
        {"host as int", x_name_str},
        {"prefetch as string", x_slots_str},
        {"prefetch negative", x_neg},
        {"hb_ms over uint32", x_u32_over},
        {"hb_ms as float", x_float_u32},
        {"version as bool", x_bool_int},
        {"gpus not an array", x_gpus_notarr},
        {"gpu row of 2", x_gpus_tuple2},
        {"gpu index 5000", x_gpus_index},
        {"gpu name as int", x_gpus_name_type},
        {"gpu memory as string after a name", x_gpus_mem_type},
        {"65 gpus", x_gpus_too_many},
        {"host with embedded NUL", x_host_nul},
        {"key not a string", x_key_int},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mb_t b;
        ready_with (&b, bad[k].fn, NULL);
        expect_bad (bad[k].what, QC_READY, b.sb.data, b.sb.size);
        mb_free (&b);
    }
    /* "name\0" is not "name": an unknown key, skipped */
    {
        mb_t b;
        ready_with (&b, x_key_nul, NULL);
        char err[128] = "";
        qc_msg_t *m = decode_cmd (QC_READY, b.sb.data, b.sb.size, err, sizeof err);
        CHECK (m && str_eq (m->name, "w"), "key with NUL is unknown: %s", err);
        qc_msg_destroy (&m);
        mb_free (&b);
    }
    /* string bounds: 255 is fine, 256 is not */
    size_t n255 = QC_PROTO_MAX_NAME, n256 = QC_PROTO_MAX_NAME + 1;
    {
        mb_t b;
        ready_with (&b, x_host_long, &n255);
        char err[128] = "";
        qc_msg_t *m = decode_cmd (QC_READY, b.sb.data, b.sb.size, err, sizeof err);
        CHECK (m && m->host && strlen (m->host) == 255, "255-byte host: %s", err);
        qc_msg_destroy (&m);
        mb_free (&b);
        ready_with (&b, x_host_long, &n256);
        expect_bad ("256-byte host", QC_READY, b.sb.data, b.sb.size);
        mb_free (&b);
    }
    {
        mb_t b;
        mb_init (&b);
        char name[300];
        memset (name, 'n', sizeof name);
        msgpack_pack_map (&b.pk, 2);
        mb_str (&b, "name"); mb_strn (&b, name, 256);
        mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 1);
        expect_bad ("256-byte name", QC_READY, b.sb.data, b.sb.size);
        mb_free (&b);
    }

    /* other commands' fields of the wrong type or over a bound */
    mb_t b;
    struct { uint8_t cmd; const char *what; } cases[] = {
        {QC_STARTED, "job negative"}, {QC_STARTED, "att over uint32"},
        {QC_TASK, "gpu over int32"}, {QC_TASK, "gpu below int32"},
        {QC_SUBMIT, "final as int"}, {QC_SUBMIT, "res 3"},
        {QC_SUBMIT, "slides of ints"}, {QC_SUBMIT, "slides as string"},
        {QC_SUBMIT, "slide with NUL"}, {QC_SUBMIT, "slide over 4096"},
        {QC_SUBMIT, "slides twice"}, {QC_LOG, "level 4"}, {QC_LOG, "time as string"},
        {QC_DISCONNECT, "ref of 3"}, {QC_DISCONNECT, "ref negative"},
        {QC_DISCONNECT, "drain as nil"},
        {QC_STATUS_REPLY, "worker row of 7"}, {QC_STATUS_REPLY, "worker busy negative"},
        {QC_STATUS_REPLY, "job row bool as int"},
        {QC_ERROR, "reason over 8192"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mb_init (&b);
        const char *w = cases[k].what;
        switch (cases[k].cmd) {
        case QC_STARTED:
            msgpack_pack_map (&b.pk, 3);
            mb_str (&b, "job");
            if (strstr (w, "negative")) msgpack_pack_int (&b.pk, -5);
            else msgpack_pack_uint32 (&b.pk, 1);
            mb_str (&b, "idx"); msgpack_pack_uint32 (&b.pk, 1);
            mb_str (&b, "att");
            if (strstr (w, "att")) msgpack_pack_uint64 (&b.pk, 1ull << 33);
            else msgpack_pack_uint32 (&b.pk, 1);
            break;
        case QC_TASK:
            msgpack_pack_map (&b.pk, 4);
            mb_str (&b, "job"); msgpack_pack_uint32 (&b.pk, 1);
            mb_str (&b, "idx"); msgpack_pack_uint32 (&b.pk, 1);
            mb_str (&b, "path"); mb_str (&b, "/x");
            mb_str (&b, "gpu");
            msgpack_pack_int64 (&b.pk, strstr (w, "over") ? (int64_t) INT32_MAX + 1
                                                          : (int64_t) INT32_MIN - 1);
            break;
        case QC_SUBMIT:
            msgpack_pack_map (&b.pk, strstr (w, "twice") ? 3 : 2);
            mb_str (&b, "base"); msgpack_pack_uint32 (&b.pk, 0);
            if (strstr (w, "final")) { mb_str (&b, "final"); msgpack_pack_int (&b.pk, 1); }
            else if (strstr (w, "res")) { mb_str (&b, "res"); msgpack_pack_uint32 (&b.pk, 3); }
            else if (strstr (w, "ints")) {
                mb_str (&b, "slides");
                msgpack_pack_array (&b.pk, 2);
                msgpack_pack_int (&b.pk, 1);
                msgpack_pack_int (&b.pk, 2);
            } else if (strstr (w, "as string")) {
                mb_str (&b, "slides"); mb_str (&b, "a.svs");
            } else if (strstr (w, "NUL")) {
                mb_str (&b, "slides");
                msgpack_pack_array (&b.pk, 2);
                mb_str (&b, "ok.svs");
                mb_strn (&b, "a.svs\0../../etc/passwd", 22);
            } else if (strstr (w, "over")) {
                static char longp[QC_PROTO_MAX_PATH + 1];
                memset (longp, 'p', sizeof longp);
                mb_str (&b, "slides");
                msgpack_pack_array (&b.pk, 1);
                mb_strn (&b, longp, sizeof longp);
            } else {   /* twice */
                for (int t = 0; t < 2; t++) {
                    mb_str (&b, "slides");
                    msgpack_pack_array (&b.pk, 1);
                    mb_str (&b, t ? "b.svs" : "a.svs");
                }
            }
            break;
        case QC_LOG:
            msgpack_pack_map (&b.pk, 3);
            mb_str (&b, "message"); mb_str (&b, "m");
            mb_str (&b, "level"); msgpack_pack_uint32 (&b.pk, strstr (w, "level") ? 4 : 1);
            mb_str (&b, "time");
            if (strstr (w, "time")) mb_str (&b, "noon");
            else msgpack_pack_double (&b.pk, 1.0);
            break;
        case QC_DISCONNECT:
            msgpack_pack_map (&b.pk, 1);
            if (strstr (w, "drain")) { mb_str (&b, "drain"); msgpack_pack_nil (&b.pk); break; }
            mb_str (&b, "refs");
            msgpack_pack_array (&b.pk, 1);
            if (strstr (w, "of 3")) {
                msgpack_pack_array (&b.pk, 3);
                msgpack_pack_uint32 (&b.pk, 1);
                msgpack_pack_uint32 (&b.pk, 2);
                msgpack_pack_uint32 (&b.pk, 3);
            } else {
                msgpack_pack_array (&b.pk, 2);
                msgpack_pack_uint32 (&b.pk, 1);
                msgpack_pack_int (&b.pk, -2);
            }
            break;
        case QC_STATUS_REPLY:
            msgpack_pack_map (&b.pk, 1);
            if (strstr (w, "job row")) {
                mb_str (&b, "jobs");
                msgpack_pack_array (&b.pk, 1);
                msgpack_pack_array (&b.pk, 8);
                for (int i = 0; i < 6; i++) msgpack_pack_uint32 (&b.pk, 1);
                msgpack_pack_uint32 (&b.pk, 1);   /* attached: should be bool */
                msgpack_pack_false (&b.pk);
                break;
            }
            mb_str (&b, "workers");
            msgpack_pack_array (&b.pk, 1);
            msgpack_pack_array (&b.pk, strstr (w, "of 7") ? 7 : 8);
            mb_str (&b, "w");
            mb_str (&b, "h");
            msgpack_pack_uint32 (&b.pk, 1);
            msgpack_pack_uint32 (&b.pk, 1);
            if (strstr (w, "negative")) msgpack_pack_int (&b.pk, -1);
            else msgpack_pack_uint32 (&b.pk, 1);
            msgpack_pack_uint32 (&b.pk, 1);
            msgpack_pack_double (&b.pk, 1.0);
            if (!strstr (w, "of 7")) msgpack_pack_false (&b.pk);
            break;
        case QC_ERROR: {
            static char longr[QC_PROTO_MAX_TEXT + 1];
            memset (longr, 'r', sizeof longr);
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "reason");
            mb_strn (&b, longr, sizeof longr);
            break;
        }
        }
        char what[96];
        snprintf (what, sizeof what, "%s: %s", qc_command_name (cases[k].cmd), w);
        expect_bad (what, cases[k].cmd, b.sb.data, b.sb.size);
        mb_free (&b);
    }

    /* slides: exactly QC_PROTO_MAX_SLIDES is fine, one more is not */
    for (int over = 0; over <= 1; over++) {
        mb_init (&b);
        msgpack_pack_map (&b.pk, 2);
        mb_str (&b, "base"); msgpack_pack_uint32 (&b.pk, 0);
        mb_str (&b, "slides");
        msgpack_pack_array (&b.pk, QC_PROTO_MAX_SLIDES + over);
        for (int i = 0; i < QC_PROTO_MAX_SLIDES + over; i++)
            mb_str (&b, "s.svs");
        if (over)
            expect_bad ("4097 slides", QC_SUBMIT, b.sb.data, b.sb.size);
        else {
            char err[128] = "";
            qc_msg_t *m = decode_cmd (QC_SUBMIT, b.sb.data, b.sb.size, err, sizeof err);
            CHECK (m && m->nslides == QC_PROTO_MAX_SLIDES, "4096 slides: %s", err);
            qc_msg_destroy (&m);
        }
        mb_free (&b);
    }

    /* RESULT bodies: bad result maps */
    const char *rcases[] = {"not a map", "ok as string", "kv odd", "kv value int",
                            "kv key empty", "kv key over 128", "file data as str",
                            "file name with slash", "files odd", "err over 4096",
                            "err with NUL", "result twice", "result kv key with NUL"};
    for (size_t k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
        const char *w = rcases[k];
        mb_init (&b);
        bool twice = strstr (w, "twice") != NULL;
        msgpack_pack_map (&b.pk, twice ? 4 : 3);
        mb_str (&b, "job"); msgpack_pack_uint32 (&b.pk, 1);
        mb_str (&b, "idx"); msgpack_pack_uint32 (&b.pk, 1);
        mb_str (&b, "result");
        if (strstr (w, "not a map")) {
            msgpack_pack_array (&b.pk, 0);
        } else if (strstr (w, "ok as")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "ok"); mb_str (&b, "yes");
        } else if (strstr (w, "kv odd")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "kv");
            msgpack_pack_array (&b.pk, 3);
            mb_str (&b, "a"); mb_str (&b, "1"); mb_str (&b, "b");
        } else if (strstr (w, "kv value int")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "kv");
            msgpack_pack_array (&b.pk, 2);
            mb_str (&b, "a"); msgpack_pack_int (&b.pk, 1);
        } else if (strstr (w, "key empty")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "kv");
            msgpack_pack_array (&b.pk, 2);
            mb_str (&b, ""); mb_str (&b, "1");
        } else if (strstr (w, "key over")) {
            char key[QC_RESULT_MAX_KEY + 1];
            memset (key, 'k', sizeof key);
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "kv");
            msgpack_pack_array (&b.pk, 2);
            mb_strn (&b, key, sizeof key); mb_str (&b, "1");
        } else if (strstr (w, "kv key with NUL")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "kv");
            msgpack_pack_array (&b.pk, 2);
            mb_strn (&b, "a\0b", 3); mb_str (&b, "1");
        } else if (strstr (w, "data as str")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "files");
            msgpack_pack_array (&b.pk, 2);
            mb_str (&b, "_thumb.png"); mb_str (&b, "PNG");
        } else if (strstr (w, "slash")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "files");
            msgpack_pack_array (&b.pk, 2);
            mb_str (&b, "../../.bashrc");
            msgpack_pack_bin (&b.pk, 1);
            msgpack_pack_bin_body (&b.pk, "x", 1);
        } else if (strstr (w, "files odd")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "files");
            msgpack_pack_array (&b.pk, 1);
            mb_str (&b, "_thumb.png");
        } else if (strstr (w, "err over")) {
            char e[QC_RESULT_MAX_ERROR + 1];
            memset (e, 'e', sizeof e);
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "err"); mb_strn (&b, e, sizeof e);
        } else if (strstr (w, "err with NUL")) {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, "err"); mb_strn (&b, "bad\0", 4);
        } else {   /* twice */
            msgpack_pack_map (&b.pk, 0);
            mb_str (&b, "result");
            msgpack_pack_map (&b.pk, 0);
        }
        char what[96];
        snprintf (what, sizeof what, "RESULT: %s", w);
        expect_bad (what, QC_RESULT, b.sb.data, b.sb.size);
        mb_free (&b);
    }
}

static void
test_unknown_keys (void)
{
    /* a valid READY plus unknown keys of every type, before, between and
     * after the known ones, and a known key of another command */
    mb_t b;
    mb_init (&b);
    msgpack_pack_map (&b.pk, 9);
    mb_str (&b, "zz_first"); msgpack_pack_uint64 (&b.pk, UINT64_MAX);
    mb_str (&b, "name"); mb_str (&b, "worker-9");
    mb_str (&b, "future_map");
    msgpack_pack_map (&b.pk, 2);
    mb_str (&b, "a");
    msgpack_pack_array (&b.pk, 4);
    msgpack_pack_double (&b.pk, 2.5);
    msgpack_pack_float (&b.pk, 1.5f);
    msgpack_pack_int64 (&b.pk, INT64_MIN);
    msgpack_pack_bin (&b.pk, 3);
    msgpack_pack_bin_body (&b.pk, "\0\1\2", 3);
    mb_str (&b, "b");
    msgpack_pack_ext (&b.pk, 4, 7);
    msgpack_pack_ext_body (&b.pk, "abcd", 4);
    mb_str (&b, "slots"); msgpack_pack_uint32 (&b.pk, 8);
    mb_str (&b, "path"); mb_str (&b, "/not/a/READY/field");   /* another command's */
    mb_str (&b, "nil_thing"); msgpack_pack_nil (&b.pk);
    mb_str (&b, "bool_thing"); msgpack_pack_true (&b.pk);
    mb_str (&b, "ext8");
    msgpack_pack_ext (&b.pk, 20, 1);
    msgpack_pack_ext_body (&b.pk, "01234567890123456789", 20);
    mb_str (&b, "nested_ok");     /* nested, but within the skip depth */
    msgpack_pack_array (&b.pk, 1);
    msgpack_pack_array (&b.pk, 1);
    msgpack_pack_map (&b.pk, 1);
    mb_str (&b, "k");
    msgpack_pack_array (&b.pk, 0);
    char err[128] = "";
    qc_msg_t *m = decode_cmd (QC_READY, b.sb.data, b.sb.size, err, sizeof err);
    CHECK (m != NULL, "unknown keys skipped: %s", err);
    if (m) {
        CHECK (str_eq (m->name, "worker-9") && m->slots == 8);
        CHECK (m->path == NULL, "another command's field is not taken");
    }
    qc_msg_destroy (&m);
    mb_free (&b);

    /* a valid encoded message plus an unknown key decodes to the same */
    qc_msg_t *msgs[32];
    size_t n = make_messages (msgs, 5);
    for (size_t i = 0; i < n; i++) {
        uint8_t *body = NULL;
        size_t len = 0;
        CHECK (encode_body (msgs[i], &body, &len) == 0);
        if (!body) continue;
        mp_reader_t r;
        uint32_t count;
        mp_reader_init (&r, body, len);
        CHECK (mp_read_map (&r, &count) == 0);
        size_t hdr = (size_t) (r.p - body);
        mb_init (&b);
        msgpack_pack_map (&b.pk, count + 1);
        mb_str (&b, "x-new-field");
        msgpack_pack_array (&b.pk, 2);
        mb_str (&b, "v2");
        msgpack_pack_map (&b.pk, 0);
        mb_raw (&b, body + hdr, len - hdr);
        err[0] = 0;
        qc_msg_t *d = decode_cmd (msgs[i]->command, b.sb.data, b.sb.size, err, sizeof err);
        CHECK (d != NULL, "%s + unknown key: %s", qc_command_name (msgs[i]->command), err);
        if (d)
            check_msg_eq ("unknown key", msgs[i], d);
        qc_msg_destroy (&d);
        mb_free (&b);
        free (body);
    }
    for (size_t i = 0; i < n; i++)
        qc_msg_destroy (&msgs[i]);

    /* an unknown key inside the result map is skipped too */
    mb_init (&b);
    msgpack_pack_map (&b.pk, 3);
    mb_str (&b, "job"); msgpack_pack_uint32 (&b.pk, 1);
    mb_str (&b, "idx"); msgpack_pack_uint32 (&b.pk, 2);
    mb_str (&b, "result");
    msgpack_pack_map (&b.pk, 3);
    mb_str (&b, "ok"); msgpack_pack_false (&b.pk);
    mb_str (&b, "timing"); msgpack_pack_map (&b.pk, 1); mb_str (&b, "s"); msgpack_pack_double (&b.pk, 1.0);
    mb_str (&b, "err"); mb_str (&b, "boom");
    m = decode_cmd (QC_RESULT, b.sb.data, b.sb.size, err, sizeof err);
    CHECK (m && m->result && m->result->ok == 0 && str_eq (m->result->error, "boom"),
           "unknown key in result: %s", err);
    qc_msg_destroy (&m);
    mb_free (&b);
}

static void
test_truncations (void)
{
    qc_msg_t *msgs[32];
    size_t n = make_messages (msgs, 20);
    size_t prefixes = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *body = NULL;
        size_t len = 0;
        CHECK (encode_body (msgs[i], &body, &len) == 0);
        if (!body) continue;
        for (size_t cut = 0; cut < len; cut++) {
            char err[256];
            err[0] = 0;
            /* a copy of exactly cut bytes, so ASan sees any over-read */
            uint8_t *p = malloc (cut ? cut : 1);
            memcpy (p, body, cut);
            qc_msg_t *m = decode_cmd (msgs[i]->command, p, cut, err, sizeof err);
            if (m || !err[0])
                CHECK (m == NULL && err[0], "%s cut to %zu of %zu bytes must be refused",
                       qc_command_name (msgs[i]->command), cut, len);
            prefixes++;
            qc_msg_destroy (&m);
            free (p);
        }
        free (body);
    }
    CHECK (prefixes > 2000, "prefixes tried: %zu", prefixes);
    for (size_t i = 0; i < n; i++)
        qc_msg_destroy (&msgs[i]);
}

static void
test_encode_refuses (void)
{
    static char big[QC_PROTO_MAX_CONFIG + 2];
    memset (big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
#define REFUSE(m, what)                                                    \
    do {                                                                   \
        zmsg_t *z_ = zmsg_new ();                                          \
        CHECK (qc_msg_encode ((m), z_) == -1, "encode must refuse: %s", what); \
        CHECK (zmsg_size (z_) == 0, "nothing appended: %s", what);         \
        zmsg_destroy (&z_);                                                \
    } while (0)
#define ACCEPT(m, what)                                                    \
    do {                                                                   \
        zmsg_t *z_ = zmsg_new ();                                          \
        CHECK (qc_msg_encode ((m), z_) == 0, "encode must accept: %s", what); \
        zmsg_destroy (&z_);                                                \
    } while (0)
    /* a string at and over its bound (big[] cut with a NUL) */
    qc_msg_t *m = qc_msg_new (QC_READY);
    m->slots = 1;
    REFUSE (m, "READY without name");
    big[QC_PROTO_MAX_NAME] = 0;
    qc_msg_set_str (&m->name, big);
    ACCEPT (m, "255-byte name");
    big[QC_PROTO_MAX_NAME] = 'a';
    big[QC_PROTO_MAX_NAME + 1] = 0;
    qc_msg_set_str (&m->name, big);
    REFUSE (m, "256-byte name");
    qc_msg_set_str (&m->name, "w");
    qc_msg_set_str (&m->host, big);
    REFUSE (m, "256-byte host");
    qc_msg_set_str (&m->host, NULL);
    m->ngpus = QC_PROTO_MAX_GPUS + 1;
    m->gpus = calloc (m->ngpus, sizeof *m->gpus);
    REFUSE (m, "65 GPUs");
    m->ngpus = 1;
    ACCEPT (m, "1 GPU with no name");
    m->gpus[0].name = strdup (big);
    REFUSE (m, "GPU name of 256 bytes (a peer refuses it)");
    free (m->gpus[0].name);
    m->gpus[0].name = strdup ("g");
    m->gpus[0].index = 1025;
    REFUSE (m, "GPU index 1025 (a peer refuses it)");
    qc_msg_destroy (&m);
    big[QC_PROTO_MAX_NAME + 1] = 'a';

    m = qc_msg_new (QC_TASK);
    m->job = 1;
    REFUSE (m, "TASK without path");
    big[QC_PROTO_MAX_PATH + 1] = 0;
    qc_msg_set_str (&m->path, big);
    REFUSE (m, "path of 4097");
    big[QC_PROTO_MAX_PATH + 1] = 'a';
    big[QC_PROTO_MAX_CONFIG + 1] = 0;
    qc_msg_set_str (&m->path, "/x");
    qc_msg_set_str (&m->config, big);
    REFUSE (m, "config over 1 MiB");
    big[QC_PROTO_MAX_CONFIG] = 0;
    qc_msg_set_str (&m->config, big);
    ACCEPT (m, "config of exactly 1 MiB");
    big[QC_PROTO_MAX_CONFIG] = 'a';
    qc_msg_destroy (&m);

    m = qc_msg_new (QC_SUBMIT);
    m->base = 0;
    m->nslides = QC_PROTO_MAX_SLIDES + 1;
    m->slides = calloc (m->nslides, sizeof *m->slides);
    for (size_t i = 0; i < m->nslides; i++)
        m->slides[i] = strdup ("s");
    REFUSE (m, "4097 slides");
    m->nslides = QC_PROTO_MAX_SLIDES;
    ACCEPT (m, "4096 slides");
    free (m->slides[0]);
    m->slides[0] = NULL;
    REFUSE (m, "a NULL slide");
    big[QC_PROTO_MAX_PATH + 1] = 0;
    m->slides[0] = strdup (big);
    REFUSE (m, "a slide path of 4097");
    big[QC_PROTO_MAX_PATH + 1] = 'a';
    free (m->slides[0]);
    m->slides[0] = strdup ("s");
    m->nslides = 1;
    m->resource = 3;
    REFUSE (m, "resource 3 (a peer refuses it)");
    m->resource = QC_RES_GPU;
    ACCEPT (m, "resource GPU");
    m->nslides = QC_PROTO_MAX_SLIDES + 1;
    qc_msg_destroy (&m);

    m = qc_msg_new (QC_LOG);
    qc_msg_set_str (&m->message, "x");
    m->level = 4;
    REFUSE (m, "log level 4 (a peer refuses it)");
    m->level = 3;
    ACCEPT (m, "log level 3");
    big[QC_PROTO_MAX_TEXT + 1] = 0;
    qc_msg_set_str (&m->message, big);
    REFUSE (m, "message of 8193");
    qc_msg_destroy (&m);

    m = qc_msg_new (QC_ERROR);
    REFUSE (m, "ERROR without reason");
    qc_msg_set_str (&m->reason, big);
    REFUSE (m, "reason of 8193");
    big[QC_PROTO_MAX_TEXT + 1] = 'a';
    qc_msg_destroy (&m);

    m = qc_msg_new (QC_DISCONNECT);
    m->nrefs = QC_PROTO_MAX_REFS + 1;
    m->refs = calloc (m->nrefs, sizeof *m->refs);
    REFUSE (m, "4097 refs");
    m->nrefs = QC_PROTO_MAX_REFS;
    ACCEPT (m, "4096 refs");
    qc_msg_destroy (&m);

    m = qc_msg_new (QC_STATUS_REPLY);
    m->nworkers = 1;
    m->workers = calloc (1, sizeof *m->workers);
    ACCEPT (m, "worker row with no names");
    big[QC_PROTO_MAX_NAME + 1] = 0;
    m->workers[0].name = strdup (big);
    REFUSE (m, "worker row name of 256 (a peer refuses it)");
    big[QC_PROTO_MAX_NAME + 1] = 'a';
    qc_msg_destroy (&m);

    /* results whose parts break the bounds the decoder enforces */
    m = qc_msg_new (QC_RESULT);
    m->job = 1;
    REFUSE (m, "RESULT without result");
    m->result = qc_result_new ();
    ACCEPT (m, "empty result");
    big[QC_RESULT_MAX_ERROR + 1] = 0;
    m->result->error = strdup (big);
    REFUSE (m, "result error of 4097");
    big[QC_RESULT_MAX_ERROR + 1] = 'a';
    free (m->result->error);
    m->result->error = NULL;
    big[QC_RESULT_MAX_WARNINGS + 1] = 0;
    m->result->warnings = strdup (big);
    REFUSE (m, "result warnings of 8193");
    big[QC_RESULT_MAX_WARNINGS + 1] = 'a';
    free (m->result->warnings);
    m->result->warnings = NULL;
    qc_result_set (m->result, "k", "v");
    free (m->result->kv[0].value);
    big[QC_RESULT_MAX_VALUE + 1] = 0;
    m->result->kv[0].value = strdup (big);
    REFUSE (m, "result value of 16385");
    big[QC_RESULT_MAX_VALUE + 1] = 'a';
    qc_msg_destroy (&m);

    m = qc_msg_new (99);
    REFUSE (m, "unknown command");
    qc_msg_destroy (&m);
    CHECK (qc_msg_encode (NULL, NULL) == -1);
#undef REFUSE
#undef ACCEPT
}

/* The bounded reader itself: lengths are checked against the bytes left
 * before anything is trusted; failure is sticky; integer ranges hold. */
static void
test_mpread (void)
{
    mp_reader_t r;
    uint32_t n;
    uint64_t u;
    int64_t i;
    double d;
    bool b;
    const char *str;
    const uint8_t *bin;
    uint8_t arr32[15] = {0xdd, 0xff, 0xff, 0xff, 0xff};
    mp_reader_init (&r, arr32, sizeof arr32);
    CHECK (mp_read_array (&r, &n) == -1 && r.failed, "array32 of 4e9 over 10 bytes");
    CHECK (mp_read_nil (&r) == false && mp_read_uint (&r, &u) == -1, "sticky failure");
    uint8_t map16[12] = {0xde, 0x00, 0x06};     /* 6 pairs need 12 bytes, 9 left */
    mp_reader_init (&r, map16, sizeof map16);
    CHECK (mp_read_map (&r, &n) == -1, "map16 of 6 pairs over 9 bytes");
    uint8_t arr3[4] = {0x93, 1, 2, 3};
    mp_reader_init (&r, arr3, sizeof arr3);
    CHECK (mp_read_array (&r, &n) == 0 && n == 3);
    CHECK (mp_read_uint (&r, &u) == 0 && u == 1 && mp_left (&r) == 2);
    uint8_t str32[9] = {0xdb, 0xff, 0xff, 0xff, 0xf0, 'a', 'b', 'c', 'd'};
    mp_reader_init (&r, str32, sizeof str32);
    CHECK (mp_read_str (&r, &str, &n) == -1);
    uint8_t bin8[4] = {0xc4, 0x03, 0, 1};
    mp_reader_init (&r, bin8, sizeof bin8);
    CHECK (mp_read_bin (&r, &bin, &n) == -1, "bin8 of 3 over 2 bytes");
    uint8_t bin0[2] = {0xc4, 0x00};
    mp_reader_init (&r, bin0, sizeof bin0);
    CHECK (mp_read_bin (&r, &bin, &n) == 0 && n == 0 && mp_left (&r) == 0);
    /* integers */
    uint8_t u64max[9] = {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    mp_reader_init (&r, u64max, sizeof u64max);
    CHECK (mp_read_uint (&r, &u) == 0 && u == UINT64_MAX);
    mp_reader_init (&r, u64max, sizeof u64max);
    CHECK (mp_read_int (&r, &i) == -1, "uint64 max is not an int64");
    uint8_t neg[2] = {0xd0, 0x80};
    mp_reader_init (&r, neg, sizeof neg);
    CHECK (mp_read_int (&r, &i) == 0 && i == -128);
    mp_reader_init (&r, neg, sizeof neg);
    CHECK (mp_read_uint (&r, &u) == -1, "negative is not a uint");
    uint8_t fixneg[1] = {0xff};
    mp_reader_init (&r, fixneg, 1);
    CHECK (mp_read_int (&r, &i) == 0 && i == -1);
    uint8_t i64min[9] = {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0};
    mp_reader_init (&r, i64min, sizeof i64min);
    CHECK (mp_read_int (&r, &i) == 0 && i == INT64_MIN);
    uint8_t f32[5] = {0xca, 0x3f, 0xc0, 0x00, 0x00};     /* 1.5f */
    mp_reader_init (&r, f32, sizeof f32);
    CHECK (mp_read_double (&r, &d) == 0 && d == 1.5);
    uint8_t seven[1] = {0x07};
    mp_reader_init (&r, seven, 1);
    CHECK (mp_read_double (&r, &d) == 0 && d == 7.0);
    mp_reader_init (&r, seven, 1);
    CHECK (mp_read_bool (&r, &b) == -1);
    uint8_t t[2] = {0xc3, 0xc0};
    mp_reader_init (&r, t, 2);
    CHECK (mp_read_bool (&r, &b) == 0 && b && mp_read_nil (&r) && mp_left (&r) == 0);
    /* skip: depth bound, truncated ext, the never-used 0xc1 */
    uint8_t deep[12];
    memset (deep, 0x91, sizeof deep);
    deep[11] = 0xc0;
    mp_reader_init (&r, deep, sizeof deep);
    CHECK (mp_skip (&r, 8) == -1, "11 levels deep with depth 8");
    mp_reader_init (&r, deep + 5, sizeof deep - 5);
    CHECK (mp_skip (&r, 8) == 0 && mp_left (&r) == 0, "6 levels deep is fine");
    uint8_t ext[4] = {0xc7, 0x05, 0x01, 0x00};
    mp_reader_init (&r, ext, sizeof ext);
    CHECK (mp_skip (&r, 8) == -1, "ext8 of 5 over 1 byte");
    uint8_t c1[1] = {0xc1};
    mp_reader_init (&r, c1, 1);
    CHECK (mp_skip (&r, 8) == -1);
    mp_reader_init (&r, NULL, 0);
    CHECK (mp_read_map (&r, &n) == -1 && mp_left (&r) == 0);

    /* through the decoder: gpu (int32) sent as uint64 max is refused, not
     * wrapped to -1 */
    mb_t mb;
    mb_init (&mb);
    msgpack_pack_map (&mb.pk, 4);
    mb_str (&mb, "job"); msgpack_pack_uint32 (&mb.pk, 1);
    mb_str (&mb, "idx"); msgpack_pack_uint32 (&mb.pk, 1);
    mb_str (&mb, "path"); mb_str (&mb, "/x");
    mb_str (&mb, "gpu"); msgpack_pack_uint64 (&mb.pk, UINT64_MAX);
    expect_bad ("TASK gpu = uint64 max", QC_TASK, mb.sb.data, mb.sb.size);
    mb_free (&mb);
}

/* ------------------------------------------------------------ fuzz */

static uint64_t s_rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd (void)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (uint32_t) (s_rng >> 11);
}

static void
test_fuzz (void)
{
    enum { ITER = 20000 };
    qc_msg_t *msgs[32];
    size_t n = make_messages (msgs, 12);
    uint8_t *seeds[32];
    size_t lens[32];
    uint8_t cmds[32];
    for (size_t i = 0; i < n; i++) {
        seeds[i] = NULL;
        lens[i] = 0;
        CHECK (encode_body (msgs[i], &seeds[i], &lens[i]) == 0);
        cmds[i] = msgs[i]->command;
        qc_msg_destroy (&msgs[i]);
    }
    static const uint8_t interesting[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0,
                                          0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc6,
                                          0xc9, 0xca, 0xcb, 0xcf, 0xd3, 0xd9, 0xdb,
                                          0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff};
    static const uint8_t all_cmds[] = {1, 2, 3, 4, 5, 6, 10, 20, 21, 22, 23, 24,
                                       30, 31, 32, 33};
    size_t accepted = 0, refused = 0, reencode_fail = 0, no_reason = 0;
    for (int it = 0; it < ITER; it++) {
        size_t s = rnd () % n;
        if (!seeds[s]) continue;
        size_t cap = lens[s] + 64;
        uint8_t *buf = malloc (cap);
        size_t len = lens[s];
        memcpy (buf, seeds[s], len);
        uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, cmds[s]};
        int nmut = 1 + (int) (rnd () % 4);
        for (int k = 0; k < nmut; k++) {
            uint32_t op = rnd () % 8;
            size_t pos = len ? rnd () % len : 0;
            switch (op) {
            case 0: case 1:     /* bit flip */
                if (len) buf[pos] ^= (uint8_t) (1u << (rnd () % 8));
                break;
            case 2:             /* an interesting byte */
                if (len) buf[pos] = interesting[rnd () % sizeof interesting];
                break;
            case 3:             /* insert a byte */
                if (len + 1 < cap) {
                    memmove (buf + pos + 1, buf + pos, len - pos);
                    buf[pos] = (uint8_t) rnd ();
                    len++;
                }
                break;
            case 4:             /* delete a byte (or a few) */
                if (len) {
                    size_t d = 1 + rnd () % 4;
                    if (pos + d > len) d = len - pos;
                    memmove (buf + pos, buf + pos + d, len - pos - d);
                    len -= d;
                }
                break;
            case 5:             /* truncate */
                len = pos;
                break;
            case 6:             /* a random byte */
                if (len) buf[pos] = (uint8_t) rnd ();
                break;
            case 7:             /* another command's header */
                hdr[3] = all_cmds[rnd () % sizeof all_cmds];
                break;
            }
        }
        /* exact-size copy so ASan catches a read past the end */
        uint8_t *exact = malloc (len ? len : 1);
        memcpy (exact, buf, len);
        free (buf);
        char err[256];
        err[0] = 0;
        qc_msg_t *m = qc_msg_decode_bytes (hdr, 4, exact, len, err, sizeof err);
        if (m) {
            accepted++;
            /* what we accept we can send on: it re-encodes, and decodes
             * again to the same message */
            uint8_t *b2 = NULL;
            size_t l2 = 0;
            if (encode_body (m, &b2, &l2) == 0) {
                qc_msg_t *m2 = qc_msg_decode_bytes (hdr, 4, b2, l2, err, sizeof err);
                if (!m2) {
                    reencode_fail++;
                    fprintf (stderr, "fuzz #%d: %s accepted, re-encoding refused: %s\n",
                             it, qc_command_name (hdr[3]), err);
                }
                else
                    check_msg_eq ("fuzz re-decode", m, m2);
                qc_msg_destroy (&m2);
            } else {
                reencode_fail++;
                fprintf (stderr, "fuzz #%d: %s accepted but does not re-encode\n", it,
                         qc_command_name (hdr[3]));
            }
            free (b2);
            qc_msg_destroy (&m);
        } else {
            refused++;
            if (!err[0])
                no_reason++;
        }
        free (exact);
    }
    for (size_t i = 0; i < n; i++)
        free (seeds[i]);
    printf ("fuzz: %d mutations, %zu accepted, %zu refused\n", ITER, accepted, refused);
    CHECK (accepted + refused == ITER);
    CHECK (refused > ITER / 4, "most mutations are refused: %zu", refused);
    CHECK (accepted > 0, "some mutations still decode: %zu", accepted);
    CHECK (reencode_fail == 0, "accepted messages re-encode and decode: %zu failed",
           reencode_fail);
    CHECK (no_reason == 0, "every refusal has a reason: %zu without", no_reason);
}

int
main (void)
{
    test_roundtrip ();
    test_send ();
    test_bad_headers_and_frames ();
    test_bad_bodies ();
    test_wrong_types_and_bounds ();
    test_unknown_keys ();
    test_truncations ();
    test_encode_refuses ();
    test_mpread ();
    test_fuzz ();
    return check_done ("test_proto");
}
