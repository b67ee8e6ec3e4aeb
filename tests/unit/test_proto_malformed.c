/* Protocol codec tests, malformed input: bad headers and frame counts,
 * bodies that are not a map, lie about their lengths, nest too deep or
 * lack a required field are refused with a reason and without a crash or
 * a leak (run under ASan to make the leak half meaningful); and the
 * bounded msgpack reader itself. Fixtures: proto_fixtures.h. */
#include "tests/unit/proto_fixtures.h"

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
    expect_bad_hdr ("version 1 (before job identity)", (uint8_t[]) {'Q', 'C', 1, QC_HEARTBEAT},
                    4, body, 1);
    expect_bad_hdr ("version 3", (uint8_t[]) {'Q', 'C', 3, QC_HEARTBEAT}, 4, body, 1);
    expect_bad_hdr ("version 0", (uint8_t[]) {'Q', 'C', 0, QC_HEARTBEAT}, 4, body, 1);
    expect_bad_hdr ("command 0", (uint8_t[]) {'Q', 'C', QC_PROTO_VERSION, 0}, 4, body, 1);
    expect_bad_hdr ("command 99", (uint8_t[]) {'Q', 'C', QC_PROTO_VERSION, 99}, 4, body, 1);
    expect_bad_hdr ("command 255", (uint8_t[]) {'Q', 'C', QC_PROTO_VERSION, 255}, 4, body, 1);
    expect_bad_hdr ("header 3 bytes", (uint8_t[]) {'Q', 'C', 1}, 3, body, 1);
    expect_bad_hdr ("header 5 bytes", (uint8_t[]) {'Q', 'C', QC_PROTO_VERSION, QC_HEARTBEAT, 0}, 5, body, 1);
    expect_bad_hdr ("header 0 bytes", "", 0, body, 1);
    expect_bad_hdr ("header NULL", NULL, 4, body, 1);
    expect_bad_hdr ("body NULL", (uint8_t[]) {'Q', 'C', QC_PROTO_VERSION, QC_HEARTBEAT}, 4, NULL, 0);

    /* ERROR and DISCONNECT keep their encoding in every version: taken
     * from a peer of another version (its broker says why it refuses) */
    uint8_t why[] = {0x81, 0xa6, 'r', 'e', 'a', 's', 'o', 'n', 0xa2, 'n', 'o'};
    for (uint8_t v = 1; v < 5; v++) {
        qc_msg_t *e = qc_msg_decode_bytes ((uint8_t[]) {'Q', 'C', v, QC_ERROR}, 4, why,
                                           sizeof why, err, sizeof err);
        qc_msg_t *d = qc_msg_decode_bytes ((uint8_t[]) {'Q', 'C', v, QC_DISCONNECT}, 4, why,
                                           sizeof why, err, sizeof err);
        CHECK (e && e->reason && strcmp (e->reason, "no") == 0, "ERROR of version %u", v);
        CHECK (d && d->reason && strcmp (d->reason, "no") == 0, "DISCONNECT of version %u", v);
        qc_msg_destroy (&e);
        qc_msg_destroy (&d);
    }
    expect_bad_hdr ("ERROR of version 0", (uint8_t[]) {'Q', 'C', 0, QC_ERROR}, 4, why,
                    sizeof why);

    /* the error text names the version or the command */
    qc_msg_decode_bytes ((uint8_t[]) {'Q', 'C', 9, 2}, 4, body, 1, err, sizeof err);
    CHECK (strstr (err, "9") != NULL, "version in error: %s", err);
    qc_msg_decode_bytes ((uint8_t[]) {'Q', 'C', QC_PROTO_VERSION, 77}, 4, body, 1, err,
                         sizeof err);
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


/* A RESULT's body up to its result map's one key (its value follows) */
static void
result_begin (mb_t *b, const char *key)
{
    mb_init (b);
    msgpack_pack_map (&b->pk, 3);
    mb_str (b, "job"); msgpack_pack_uint64 (&b->pk, 1);
    mb_str (b, "idx"); msgpack_pack_uint64 (&b->pk, 1);
    mb_str (b, "result");
    msgpack_pack_map (&b->pk, 1);
    mb_str (b, key);
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
        {QC_STATUS_REPLY, "jobs"}, {QC_ASSETS, "assets"},
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
    result_begin (&b, "kv");
    mb_raw (&b, hdr32, 5);
    mb_raw (&b, ten, 10);
    expect_bad ("result kv array32 of 4e9", QC_RESULT, b.sb.data, b.sb.size);
    mb_free (&b);
    /* a result's src (a slide by URL's version): an ETag over its bound,
       a size below -1, src not a map */
    char long_etag[QC_RESULT_MAX_ETAG + 2];
    memset (long_etag, 'e', sizeof long_etag - 1);
    long_etag[sizeof long_etag - 1] = 0;
    for (int k = 0; k < 3; k++) {
        result_begin (&b, "src");
        if (k == 2)
            mb_str (&b, "etag");
        else {
            msgpack_pack_map (&b.pk, 1);
            mb_str (&b, k == 0 ? "etag" : "size");
            if (k == 0)
                mb_str (&b, long_etag);
            else
                msgpack_pack_int64 (&b.pk, -2);
        }
        expect_bad (k == 0 ? "result src etag of 256" : k == 1 ? "result src size -2"
                    : "result src a string", QC_RESULT, b.sb.data, b.sb.size);
        mb_free (&b);
    }
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

/* A required key given twice, the second time as nil, must not leave a
 * message that passes with the field empty. */
static void
test_repeated_required_key (void)
{
    const uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, QC_TASK};
    const uint8_t body[] = {0x86, 0xa3, 'j', 'o', 'b', 0x01, 0xa3, 'i', 'd', 'x', 0x00,
                            0xa3, 'k', 'e', 'y', 0x05, 0xa3, 'a', 't', 't', 0x01,
                            0xa4, 'p', 'a', 't', 'h', 0xa1, 'a',
                            0xa4, 'p', 'a', 't', 'h', 0xc0};
    char err[256] = "";
    qc_msg_t *m = qc_msg_decode_bytes (hdr, sizeof hdr, body, sizeof body, err, sizeof err);
    CHECK (m == NULL, "TASK whose path ends as nil was accepted");
    CHECK (strstr (err, "path") != NULL, "error does not name the field: %s", err);
    qc_msg_destroy (&m);
    /* the same with a real value last is fine */
    const uint8_t ok[] = {0x86, 0xa3, 'j', 'o', 'b', 0x01, 0xa3, 'i', 'd', 'x', 0x00,
                          0xa3, 'k', 'e', 'y', 0x05, 0xa3, 'a', 't', 't', 0x01,
                          0xa4, 'p', 'a', 't', 'h', 0xc0,
                          0xa4, 'p', 'a', 't', 'h', 0xa1, 'b'};
    m = qc_msg_decode_bytes (hdr, sizeof hdr, ok, sizeof ok, err, sizeof err);
    CHECK (m && m->path && strcmp (m->path, "b") == 0, "valid last value refused: %s", err);
    qc_msg_destroy (&m);
}

int
main (void)
{
    test_bad_headers_and_frames ();
    test_bad_bodies ();
    test_mpread ();
    test_repeated_required_key ();
    return check_done ("test_proto_malformed");
}
