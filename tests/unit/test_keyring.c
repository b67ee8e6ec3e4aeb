/* The broker's admitted certificates (broker/keyring.h) and the
 * certificate helpers of shared/curve.h, on real files in a temporary
 * folder: roles and names, what is skipped (a secret certificate, a file
 * that is no certificate, a key given twice, no role), a file added
 * admits, a file removed revokes (and is remembered as revoked), a file
 * changed in place is seen by the full check, a folder that goes refuses
 * everyone; loopback endpoints. */
#include <czmq.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/keyring.h"
#include "shared/curve.h"
#include "shared/endpoint.h"
#include "shared/log.h"
#include "tests/unit/check.h"

static char s_dir[64];

/* A certificate in s_dir/file: a new key pair, or (like) the one of
 * base, with this role and name (czmq cannot change a key's metadata:
 * a copy is made from the keys). */
static zcert_t *
make_cert_like (zcert_t *base, const char *file, const char *role, const char *name)
{
    zcert_t *c = base ? zcert_new_from (zcert_public_key (base), zcert_secret_key (base))
                      : zcert_new ();
    if (role)
        zcert_set_meta (c, "role", "%s", role);
    if (name)
        zcert_set_meta (c, "name", "%s", name);
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, file);
    CHECK (zcert_save_public (c, path) == 0, "%s written", path);
    return c;
}

static zcert_t *
make_cert (const char *file, const char *role, const char *name)
{
    return make_cert_like (NULL, file, role, name);
}

static void
write_file (const char *file, const char *text)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, file);
    FILE *f = fopen (path, "w");
    CHECK (f != NULL);
    if (f) {
        fputs (text, f);
        fclose (f);
    }
}

static void
remove_file (const char *file)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", s_dir, file);
    CHECK (unlink (path) == 0, "%s removed", path);
}

static void
test_ring (void)
{
    zcert_t *w = make_cert ("w.cert", "worker", "w1@host");
    zcert_t *c = make_cert ("c.cert", "client", NULL);
    zcert_t *a = make_cert ("a.cert", "admin", "admin\tone");
    zcert_t *n = make_cert ("n.cert", NULL, "norole");
    write_file ("junk.cert", "this is no certificate\n");
    write_file (".hidden", "ignored\n");
    /* the same key again under another name, and a secret file */
    char path[256];
    zcert_t *dup = make_cert_like (w, "z-dup.cert", "admin", "dup");
    zcert_destroy (&dup);
    zcert_t *s = zcert_new ();
    zcert_set_meta (s, "role", "worker");
    snprintf (path, sizeof path, "%s/s.cert_secret", s_dir);
    CHECK (zcert_save_secret (s, path) == 0);   /* a secret file alone */

    char err[512] = "";
    keyring_t *k = keyring_new (s_dir, err, sizeof err);
    CHECK (k != NULL, "%s", err);
    if (!k)
        return;
    CHECK (keyring_size (k) == 4, "w, c, a, n: %zu", keyring_size (k));
    const keyring_entry_t *e = keyring_lookup (k, zcert_public_txt (w));
    /* two roles for one key: neither (which won was the names' order:
       a copy named 00-... made a client an admin) */
    CHECK (e && e->role == QC_ROLE_NONE && strcmp (e->name, "w1@host") == 0,
           "one key as worker (w.cert) and admin (z-dup.cert): refused (%s)",
           e ? qc_role_name (e->role) : "-");
    uint32_t wid = e ? e->id : 0;
    e = keyring_lookup (k, zcert_public_txt (c));
    CHECK (e && e->role == QC_ROLE_CLIENT && strcmp (e->name, "c.cert") == 0,
           "no name: the file's");
    e = keyring_lookup (k, zcert_public_txt (a));
    CHECK (e && e->role == QC_ROLE_ADMIN && strcmp (e->name, "admin_one") == 0,
           "control bytes replaced: %s", e ? e->name : "-");
    e = keyring_lookup (k, zcert_public_txt (n));
    CHECK (e && e->role == QC_ROLE_NONE, "a certificate without a role admits nothing");
    CHECK (!keyring_lookup (k, zcert_public_txt (s)), "secret files are not read");
    CHECK (!keyring_lookup (k, "not a key") && !keyring_lookup (k, NULL));
    CHECK (wid != 0 && e && e->id != wid, "distinct non-zero numbers");

    /* nothing changed: no reload */
    CHECK (!keyring_refresh (k, false) && !keyring_refresh (k, true));

    /* a file added: the quick check sees it; the same key again with
       the same role: the first file's name stands */
    zcert_t *w2 = make_cert ("w2.cert", "worker", "w2");
    zcert_t *w2b = make_cert_like (w2, "w3.cert", "worker", "w2-copy");
    zcert_destroy (&w2b);
    CHECK (keyring_refresh (k, false), "added");
    e = keyring_lookup (k, zcert_public_txt (w2));
    CHECK (e && e->role == QC_ROLE_WORKER && strcmp (e->name, "w2") == 0,
           "the same key and role twice: the first file's (%s)", e ? e->name : "-");
    e = keyring_lookup (k, zcert_public_txt (w));
    CHECK (e && e->id == wid, "a key keeps its number across reloads");

    /* a file removed: revoked, and remembered as revoked */
    remove_file ("w.cert");
    CHECK (keyring_refresh (k, false), "removed");
    /* z-dup.cert holds the same key: now it is the first */
    e = keyring_lookup (k, zcert_public_txt (w));
    CHECK (e && e->role == QC_ROLE_ADMIN && e->id == wid,
           "the other file of that key admits it now, under the same number");
    remove_file ("z-dup.cert");
    CHECK (keyring_refresh (k, false));
    CHECK (!keyring_lookup (k, zcert_public_txt (w)));
    const char *was = keyring_revoked (k, zcert_public_txt (w));
    CHECK (was && strcmp (was, "dup") == 0, "revoked, under its last name: %s", was ? was : "-");
    CHECK (!keyring_revoked (k, zcert_public_txt (c)), "admitted: not revoked");
    CHECK (!keyring_revoked (k, zcert_public_txt (s)), "never admitted: unknown");
    /* a number gives its key back, revoked or not (a compaction asks) */
    const char *kw = keyring_key_of (k, wid);
    CHECK (kw && strcmp (kw, zcert_public_txt (w)) == 0, "key of %u: %s", wid, kw ? kw : "-");
    e = keyring_lookup (k, zcert_public_txt (w2));
    kw = e ? keyring_key_of (k, e->id) : NULL;
    CHECK (kw && strcmp (kw, zcert_public_txt (w2)) == 0, "key of w2: %s", kw ? kw : "-");
    CHECK (!keyring_key_of (k, 0) && !keyring_key_of (k, 1000) && !keyring_key_of (NULL, wid));

    /* a role changed in place: only the full check sees it (the same
     * file rewritten: the folder's own times stay) */
    usleep (20000);
    zcert_t *c2 = make_cert_like (c, "c.cert", "admin", "c2");
    zcert_destroy (&c2);
    bool quick = keyring_refresh (k, false);
    bool full = quick || keyring_refresh (k, true);
    CHECK (full, "the full check sees a file changed in place");
    e = keyring_lookup (k, zcert_public_txt (c));
    CHECK (e && e->role == QC_ROLE_ADMIN);

    /* the folder goes: everyone is refused */
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    CHECK (system (cmd) == 0);
    CHECK (keyring_refresh (k, false));
    CHECK (keyring_size (k) == 0 && !keyring_lookup (k, zcert_public_txt (c)));
    keyring_destroy (&k);
    CHECK (k == NULL);
    zcert_destroy (&w);
    zcert_destroy (&w2);
    zcert_destroy (&c);
    zcert_destroy (&a);
    zcert_destroy (&n);
    zcert_destroy (&s);
}

static void
test_certs (void)
{
    char err[512];
    CHECK (!keyring_new ("/nonexistent-qc", err, sizeof err) && strstr (err, "--allow"));
    snprintf (s_dir, sizeof s_dir, "/tmp/qc-keyring-XXXXXX");
    CHECK (mkdtemp (s_dir) != NULL);
    zcert_t *c = zcert_new ();
    char pub[256], sec[256];
    snprintf (pub, sizeof pub, "%s/x.cert", s_dir);
    snprintf (sec, sizeof sec, "%s/x.cert_secret", s_dir);
    CHECK (zcert_save_public (c, pub) == 0);
    /* a public certificate alone is no secret one */
    zcert_t *got = qc_cert_load_secret (pub, err, sizeof err);
    CHECK (!got && strstr (err, "no secret key"), "%s", err);
    CHECK (zcert_save_secret (c, sec) == 0);
    got = qc_cert_load_secret (sec, err, sizeof err);
    CHECK (got && zcert_eq (got, c), "%s", err);
    zcert_destroy (&got);
    char key[QC_CURVE_KEY_LEN + 1];
    CHECK (qc_cert_load_public (pub, key, err, sizeof err) == 0
           && strcmp (key, zcert_public_txt (c)) == 0);
    CHECK (qc_cert_load_public (s_dir, key, err, sizeof err) == -1 && strstr (err, "not a file"));
    write_file ("junk", "curve\n    public-key = \"short\"\n");
    snprintf (pub, sizeof pub, "%s/junk", s_dir);
    CHECK (qc_cert_load_public (pub, key, err, sizeof err) == -1
           && strstr (err, "not a CurveZMQ certificate"), "%s", err);
    qc_curve_client_t *cc = qc_curve_client_new (sec, NULL, err, sizeof err);
    CHECK (!cc && strstr (err, "--server-key"));
    cc = qc_curve_client_new (sec, sec, err, sizeof err);
    CHECK (cc && strcmp (qc_curve_client_key (cc), zcert_public_txt (c)) == 0, "%s", err);
    qc_curve_client_destroy (&cc);
    zcert_destroy (&c);
    remove_file ("x.cert");
    remove_file ("x.cert_secret");
    remove_file ("junk");

    CHECK (qc_role_parse ("worker") == QC_ROLE_WORKER && qc_role_parse ("admin") == QC_ROLE_ADMIN);
    CHECK (qc_role_parse ("root") == -1 && qc_role_parse (NULL) == -1);
    CHECK (strcmp (qc_role_name (QC_ROLE_CLIENT), "client") == 0);
}

static void
test_endpoints (void)
{
    static const char *local[] = {"tcp://127.0.0.1:5555", "tcp://127.3.4.5:1", "tcp://[::1]:5555",
                                  "tcp://localhost:5555", "tcp://lo:5555", "ipc:///tmp/x",
                                  "inproc://x", "tcp://[::ffff:127.0.0.1]:9",
                                  "tcp://10.0.0.1:0;127.0.0.1:5555"};
    static const char *remote[] = {"tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://10.0.0.1:5555",
                                   "tcp://eth0:5555", "tcp://host.example.org:5555",
                                   "tcp://[::]:5555", "ws://127.0.0.1:5555", "tcp://128.0.0.1:1",
                                   "tcp://127.0.0.1", "tcp://127.0.0.1:1;10.0.0.1:5555"};
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        CHECK (qc_endpoint_is_local (local[i]), "%s is local", local[i]);
    for (size_t i = 0; i < sizeof remote / sizeof *remote; i++)
        CHECK (!qc_endpoint_is_local (remote[i]), "%s is not", remote[i]);
    CHECK (!qc_endpoint_is_local (NULL));

    /* checked before a socket is made: what connects, what binds */
    static const struct { const char *ep; bool conn, bind; const char *says; } eps[] = {
        {"tcp://127.0.0.1:5555", true, true, NULL},
        {"tcp://host.example.org:5555", true, false, "not a host name"},
        {"tcp://localhost:5555", true, false, "write tcp://127.0.0.1:5555"},
        {"tcp://*:5555", true, true, NULL},
        {"tcp://lo:5555", true, true, NULL},             /* an interface */
        {"tcp://[::1]:5555", true, true, NULL},
        {"tcp://127.0.0.1:*", false, true, NULL},        /* any port: binds only */
        {"tcp://127.0.0.1:99999", false, false, "not a port number"},
        {"tcp://127.0.0.1:0", false, false, "not a port number"},
        {"tcp://127.0.0.1:55x", false, false, "not a port number"},
        {"tcp://127.0.0.1", false, false, "write tcp://HOST:PORT"},
        {"tcp://[::1]", false, false, "write tcp://HOST:PORT"},
        {"tcp://:5555", false, false, "write tcp://HOST:PORT"},
        {"tpc://127.0.0.1:5555", false, false, "unknown scheme 'tpc://'"},
        {"127.0.0.1:5555", false, false, "no scheme: write tcp://127.0.0.1:5555"},
        {"tcp//127.0.0.1:5555", false, false, "no scheme: write tcp://127.0.0.1:5555"},
        {"tcp:/127.0.0.1:5555", false, false, "no scheme: write tcp://127.0.0.1:5555"},
        {"TCP:127.0.0.1:5555", false, false, "no scheme: write tcp://127.0.0.1:5555"},
        {"tcphost:5555", false, false, "no scheme: write tcp://tcphost:5555"},
        {"tcp:5555", false, false, "no scheme: write tcp://HOST:PORT"},
        {"TCP://127.0.0.1:5555", false, false, "in lower case: tcp://127.0.0.1:5555"},
        {"ipc:///tmp/qc.sock", true, true, NULL},
        {"ipc://", false, false, "no path"},
        {"", false, false, "no endpoint"},
    };
    for (size_t i = 0; i < sizeof eps / sizeof *eps; i++)
        for (int bind = 0; bind < 2; bind++) {
            char err[512] = "";
            bool ok = bind ? eps[i].bind : eps[i].conn;
            int rc = qc_endpoint_check (eps[i].ep, bind, err, sizeof err);
            CHECK (rc == (ok ? 0 : -1), "%s %s: %d (%s)", bind ? "bind" : "connect",
                   eps[i].ep, rc, err);
            CHECK (ok || !eps[i].says || strstr (err, eps[i].says), "%s: '%s'", eps[i].ep, err);
        }
    CHECK (qc_endpoint_check (NULL, false, NULL, 0) == -1);
}

/* A certificate's end (shared/curve.h's qc_cert_expires): the forms
 * qc-keygen writes and a date alone read; days no calendar has, other
 * forms and trailing bytes refused; the text written reads back. */
static void
expiry_times (void)
{
    static const struct { const char *text; int rc; int64_t at; } cases[] = {
        { "2027-11-29T22:10:00Z", 0, 1827526200 },
        { "2027-11-29", 0, 1827446400 },
        { "2028-02-29", 0, 1835395200 },         /* a leap day */
        { "2027-02-29", -1, 0 }, { "2027-04-31", -1, 0 }, { "2027-13-01", -1, 0 },
        { "2027-11-29T24:00:00Z", -1, 0 }, { "2027-11-29T22:10:00", -1, 0 },
        { "2027-11-29T22:10:00Z ", -1, 0 }, { "27-11-29", -1, 0 }, { "next spring", -1, 0 },
        { "", -1, 0 }, { "1969-12-31", -1, 0 }, { "+027-11-29", -1, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        zcert_t *c = zcert_new ();
        zcert_set_meta (c, "expires", "%s", cases[i].text);
        int64_t at = -1;
        int rc = qc_cert_expires (c, &at);
        CHECK (rc == cases[i].rc && (rc != 0 || at == cases[i].at),
               "expires \"%s\": %d at %lld", cases[i].text, rc, (long long) at);
        zcert_destroy (&c);
    }
    zcert_t *none = zcert_new ();
    CHECK (qc_cert_expires (none, NULL) == 1, "no expires: 1");
    char text[32];
    qc_cert_expiry_text (1827526200, text, sizeof text);
    zcert_set_meta (none, "expires", "%s", text);
    int64_t back = 0;
    CHECK (strcmp (text, "2027-11-29T22:10:00Z") == 0 && qc_cert_expires (none, &back) == 0
           && back == 1827526200, "written as %s, read back as %lld", text, (long long) back);
    zcert_destroy (&none);
    keyring_entry_t e = { .expires = 1827526200 };
    CHECK (!keyring_expired (&e, 1827526199) && keyring_expired (&e, 1827526200)
           && !keyring_expired (&(keyring_entry_t) { .expires = 0 }, INT64_MAX),
           "expired from its second on; never without an end");
}

/* Warnings of certificates near their end said by the broker's sweep,
 * not only at a handshake: a worker connected for weeks makes none. */
static int s_expiring_said;

static void
count_expiring (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    if (rec->message && strstr (rec->message, "expires on") && strstr (rec->message, "soon@"))
        s_expiring_said++;
}

static void
test_expiring_sweep (void)
{
    char err[512] = "", dir[64];
    snprintf (dir, sizeof dir, "/tmp/qc-keyring-XXXXXX");
    CHECK (mkdtemp (dir) != NULL);
    snprintf (s_dir, sizeof s_dir, "%s", dir);
    int64_t now = (int64_t) time (NULL);
    char when[32];
    qc_cert_expiry_text (now + 5 * 86400, when, sizeof when);
    zcert_t *soon = zcert_new (), *later = zcert_new ();
    zcert_set_meta (soon, "role", "worker");
    zcert_set_meta (soon, "name", "soon@host");
    zcert_set_meta (soon, "expires", "%s", when);
    qc_cert_expiry_text (now + 90 * 86400, when, sizeof when);
    zcert_set_meta (later, "role", "worker");
    zcert_set_meta (later, "name", "later@host");
    zcert_set_meta (later, "expires", "%s", when);
    char path[128];
    snprintf (path, sizeof path, "%s/soon.cert", dir);
    CHECK (zcert_save_public (soon, path) == 0);
    snprintf (path, sizeof path, "%s/later.cert", dir);
    CHECK (zcert_save_public (later, path) == 0);
    qc_log_set_sink (count_expiring, NULL, "");
    keyring_t *k = keyring_new (dir, err, sizeof err);     /* said as it is read */
    CHECK (k != NULL, "%s", err);
    keyring_warn_expiring (k, now);
    keyring_warn_expiring (k, now + 3600);
    CHECK (s_expiring_said == 1, "said once in a day: %d", s_expiring_said);
    keyring_warn_expiring (k, now + 86400 + 1);
    CHECK (s_expiring_said == 2, "said again the next day: %d", s_expiring_said);
    keyring_warn_expiring (NULL, now);
    qc_log_set_sink (NULL, NULL, NULL);
    keyring_destroy (&k);
    zcert_destroy (&soon);
    zcert_destroy (&later);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK (system (cmd) == 0);
}

/* How long a certificate has left, said: under two days in hours ("in
 * 0 days" was said of one with most of a day left). */
static void
test_time_left (void)
{
    static const struct { int64_t left; const char *says; } cases[] = {
        {5 * 86400 - 30, "in 4 days"}, {2 * 86400, "in 2 days"}, {2 * 86400 - 1, "in 47 hours"},
        {86399, "in 23 hours"}, {3600, "in 1 hour"}, {3599, "in 59 minutes"},
        {60, "in 1 minute"}, {59, "in under a minute"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char got[32];
        qc_cert_time_left_text (cases[i].left, got, sizeof got);
        CHECK (strcmp (got, cases[i].says) == 0, "%lld s: '%s', want '%s'",
               (long long) cases[i].left, got, cases[i].says);
    }
}

int
main (void)
{
    test_time_left ();
    expiry_times ();
    zsys_handler_set (NULL);
    test_certs ();
    test_ring ();
    test_endpoints ();
    test_expiring_sweep ();
    return check_done ("test_keyring");
}
