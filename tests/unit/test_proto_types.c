/* Protocol codec tests, well-formed msgpack with the wrong content: fields
 * of the wrong type, integers and strings over their bounds, bad GPU,
 * worker, job and result rows, for every command; each is refused with a
 * reason. Fixtures: proto_fixtures.h. */
#include "tests/unit/proto_fixtures.h"

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

int
main (void)
{
    test_wrong_types_and_bounds ();
    return check_done ("test_proto_types");
}
