/* Protocol codec tests, exhaustive and random damage: every prefix of
 * every valid encoding is refused, and a bounded, seeded mutation fuzz
 * loop over valid encodings never crashes, gives a reason for every
 * refusal and re-encodes what it accepts. Fixtures: proto_fixtures.h. */
#include "tests/unit/proto_fixtures.h"

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
    test_truncations ();
    test_fuzz ();
    return check_done ("test_proto_fuzz");
}
