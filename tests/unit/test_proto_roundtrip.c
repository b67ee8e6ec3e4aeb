/* Protocol codec tests, the valid side: every command round-trips field
 * for field through qc_msg_encode -> qc_msg_decode (also over real
 * sockets); unknown keys are skipped and decode to the same message; and
 * encoding refuses what a peer would refuse. Fixtures: proto_fixtures.h. */
#include "tests/unit/proto_fixtures.h"

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
                                  QC_ACCEPTED, QC_DONE, QC_STATUS_REPLY, QC_ERROR,
                                  QC_FETCH, QC_ASSETS};
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
        /* files looked up by name */
        CHECK (qc_result_file (r, "_mask_use.png") == &r->files[2]
               && qc_result_file (r, "_empty.png") == &r->files[1]
               && qc_result_file (r, "_nope.png") == NULL
               && qc_result_file (r, NULL) == NULL
               && qc_result_file (NULL, "_thumb.png") == NULL);
    }
    qc_msg_destroy (&d);
    qc_msg_destroy (&m);
    free (body);

    /* a slide by URL's version (PROTOCOL.md 6.1 `src`) travels; none is
       decoded as none; a validator with a control byte is no version */
    m = qc_msg_new (QC_RESULT);
    m->job = 1;
    m->result = qc_result_new ();
    CHECK (m->result && qc_result_set_source (m->result, 123456789012LL, "W/\"5f-a\\b\"",
                                              "Tue, 01 Dec 2026 10:00:00 GMT") == 0);
    body = NULL;
    CHECK (encode_body (m, &body, &len) == 0);
    d = body ? decode_cmd (QC_RESULT, body, len, err, sizeof err) : NULL;
    CHECK (d && d->result && d->result->has_source && d->result->source.size == 123456789012LL
           && str_eq (d->result->source.etag, "W/\"5f-a\\b\"")
           && str_eq (d->result->source.last_modified, "Tue, 01 Dec 2026 10:00:00 GMT"),
           "src round trip: %s", err);
    qc_msg_destroy (&d);
    free (body);
    body = NULL;
    qc_result_reset (m->result);
    CHECK (!m->result->has_source);
    CHECK (encode_body (m, &body, &len) == 0);
    d = body ? decode_cmd (QC_RESULT, body, len, err, sizeof err) : NULL;
    CHECK (d && d->result && !d->result->has_source, "no src: %s", err);
    qc_msg_destroy (&d);
    free (body);
    CHECK (qc_result_set_source (m->result, 5, "a\tb", NULL) == -1 && !m->result->has_source);
    char long_tag[QC_RESULT_MAX_ETAG + 2];
    memset (long_tag, 'e', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = 0;
    CHECK (qc_result_set_source (m->result, 5, long_tag, NULL) == -1);
    CHECK (qc_result_set_source (m->result, -7, NULL, "x") == 0
           && m->result->source.size == -1 && str_eq (m->result->source.etag, ""));

    /* files read beside a slide by URL (6.1 `in`) travel, one there with
       its version, one not there; a note of the same file replaces the
       earlier; a ninth file, a control byte or an empty name is refused */
    qc_result_reset (m->result);
    qc_result_source_t ver = { .size = 549 };
    snprintf (ver.etag, sizeof ver.etag, "\"a1\"");
    snprintf (ver.last_modified, sizeof ver.last_modified, "Wed, 02 Dec 2026 08:00:00 GMT");
    CHECK (qc_result_add_input (m->result, "http://127.0.0.1:9/s/a.xml", NULL) == 0
           && qc_result_add_input (m->result, "http://127.0.0.1:9/s/a.xml", &ver) == 0
           && qc_result_add_input (m->result, "http://127.0.0.1:9/s/a.json", NULL) == 0
           && m->result->ninputs == 2);
    CHECK (qc_result_add_input (m->result, "http://h/a\tb", NULL) == -1
           && qc_result_add_input (m->result, "", NULL) == -1
           && qc_result_add_input (m->result, NULL, NULL) == -1 && m->result->ninputs == 2);
    body = NULL;
    CHECK (encode_body (m, &body, &len) == 0);
    d = body ? decode_cmd (QC_RESULT, body, len, err, sizeof err) : NULL;
    CHECK (d && d->result && d->result->ninputs == 2
           && str_eq (d->result->inputs[0].where, "http://127.0.0.1:9/s/a.xml")
           && d->result->inputs[0].there && d->result->inputs[0].v.size == 549
           && str_eq (d->result->inputs[0].v.etag, "\"a1\"")
           && str_eq (d->result->inputs[0].v.last_modified, "Wed, 02 Dec 2026 08:00:00 GMT")
           && !d->result->inputs[1].there && d->result->inputs[1].v.size == -1
           && str_eq (d->result->inputs[1].v.etag, ""), "in round trip: %s", err);
    qc_msg_destroy (&d);
    free (body);
    for (int i = 0; i < QC_RESULT_MAX_INPUTS - 2; i++) {
        char where[64];
        snprintf (where, sizeof where, "http://127.0.0.1:9/s/%d.xml", i);
        CHECK (qc_result_add_input (m->result, where, NULL) == 0);
    }
    CHECK (qc_result_add_input (m->result, "http://127.0.0.1:9/s/9.xml", NULL) == -1
           && m->result->ninputs == QC_RESULT_MAX_INPUTS);
    qc_result_reset (m->result);
    CHECK (m->result->ninputs == 0);
    qc_msg_destroy (&m);

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
    msgpack_pack_map (&b.pk, 4);
    mb_str (&b, "job"); msgpack_pack_uint32 (&b.pk, 1);
    mb_str (&b, "key"); msgpack_pack_uint32 (&b.pk, 9);
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
    free (m->workers[0].name);
    m->workers[0].name = NULL;
    m->nspeeds = QC_PROTO_MAX_WORKERS + 1;
    m->speeds = calloc (m->nspeeds, sizeof *m->speeds);
    REFUSE (m, "more speeds than workers a reply may hold");
    m->nspeeds = QC_PROTO_MAX_WORKERS;
    ACCEPT (m, "as many speeds as it may hold");
    qc_msg_destroy (&m);

    /* the jobs' states (job_states) travel in their order */
    m = qc_msg_new (QC_STATUS_REPLY);
    m->njobs = 2;
    m->jobs = calloc (2, sizeof *m->jobs);
    m->job_states = calloc (2, sizeof *m->job_states);
    if (m->jobs && m->job_states) {
        m->jobs[0].job = 4;
        m->jobs[1].job = 9;
        m->job_states[m->njob_states++] = strdup ("waiting");
        m->job_states[m->njob_states++] = strdup ("delivered");
    }
    /* and whose they are (job_owners), "" where not known */
    m->job_owners = calloc (2, sizeof *m->job_owners);
    if (m->job_owners) {
        m->job_owners[m->njob_owners++] = strdup ("lab-a (alice)");
        m->job_owners[m->njob_owners++] = strdup ("");
    }
    uint8_t *body = NULL;
    size_t len = 0;
    char err[256] = "";
    CHECK (encode_body (m, &body, &len) == 0);
    qc_msg_t *d = body ? decode_cmd (QC_STATUS_REPLY, body, len, err, sizeof err) : NULL;
    CHECK (d && d->njobs == 2 && d->njob_states == 2 && str_eq (d->job_states[0], "waiting")
           && str_eq (d->job_states[1], "delivered") && d->jobs[1].job == 9,
           "job_states round trip: %s", err);
    CHECK (d && d->njob_owners == 2 && str_eq (d->job_owners[0], "lab-a (alice)")
           && str_eq (d->job_owners[1], ""), "job_owners round trip: %s", err);
    qc_msg_destroy (&d);
    free (body);
    free (m->job_states[0]);
    free (m->job_states[1]);
    free (m->job_states);
    m->njob_states = QC_PROTO_MAX_JOBS + 1;
    m->job_states = calloc (m->njob_states, sizeof *m->job_states);
    for (size_t i = 0; m->job_states && i < m->njob_states; i++)
        m->job_states[i] = strdup ("running");
    REFUSE (m, "more job states than jobs a reply may hold");
    qc_msg_destroy (&m);

    /* the broker's own trouble travels, in its order, up to its bound */
    m = qc_msg_new (QC_STATUS_REPLY);
    m->trouble = calloc (QC_PROTO_MAX_TROUBLE + 1, sizeof *m->trouble);
    if (m->trouble) {
        m->trouble[m->ntrouble++] = strdup ("state-gone: a");
        m->trouble[m->ntrouble++] = strdup ("results-held: b");
    }
    body = NULL;
    CHECK (encode_body (m, &body, &len) == 0);
    d = body ? decode_cmd (QC_STATUS_REPLY, body, len, err, sizeof err) : NULL;
    CHECK (d && d->ntrouble == 2 && str_eq (d->trouble[0], "state-gone: a")
           && str_eq (d->trouble[1], "results-held: b"), "trouble round trip: %s", err);
    qc_msg_destroy (&d);
    free (body);
    while (m->trouble && m->ntrouble < QC_PROTO_MAX_TROUBLE)
        m->trouble[m->ntrouble++] = strdup ("state-space-low: c");
    ACCEPT (m, "as many trouble lines as a reply may hold");
    if (m->trouble)
        m->trouble[m->ntrouble++] = strdup ("state-space-low: d");
    REFUSE (m, "more trouble lines than a reply may hold");
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

    /* config files: the name and size bounds a peer applies */
    m = qc_msg_new (QC_ASSETS);
    m->job = 1;
    m->nassets = 1;
    m->assets = calloc (1, sizeof *m->assets);
    REFUSE (m, "asset without a name");
    big[QC_PROTO_MAX_ASSET_NAME] = 0;
    m->assets[0].name = strdup (big);
    ACCEPT (m, "asset name of 64 bytes");
    big[QC_PROTO_MAX_ASSET_NAME] = 'a';
    free (m->assets[0].name);
    big[QC_PROTO_MAX_ASSET_NAME + 1] = 0;
    m->assets[0].name = strdup (big);
    REFUSE (m, "asset name of 65 bytes (a peer refuses it)");
    big[QC_PROTO_MAX_ASSET_NAME + 1] = 'a';
    free (m->assets[0].name);
    m->assets[0].name = strdup ("x");
    m->assets[0].size = QC_PROTO_MAX_ASSET_SIZE + 1;
    m->assets[0].data = calloc (1, 1);   /* never read: refused on size */
    REFUSE (m, "asset over 64 MiB (a peer refuses it)");
    m->assets[0].size = 0;
    m->nassets = QC_PROTO_MAX_ASSETS + 1;
    REFUSE (m, "257 assets (a peer refuses them)");
    m->nassets = 1;
    qc_msg_destroy (&m);

    m = qc_msg_new (99);
    REFUSE (m, "unknown command");
    qc_msg_destroy (&m);
    CHECK (qc_msg_encode (NULL, NULL) == -1);
#undef REFUSE
#undef ACCEPT
}

int
main (void)
{
    test_roundtrip ();
    test_send ();
    test_unknown_keys ();
    test_encode_refuses ();
    return check_done ("test_proto_roundtrip");
}
