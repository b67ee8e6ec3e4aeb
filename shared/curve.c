/* See curve.h. */
#include "shared/curve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "shared/log.h"
#include "shared/socket_new.h"

static const char *s_roles[] = {"worker", "client", "admin", "broker"};

int
qc_role_parse (const char *name)
{
    for (size_t i = 0; name && i < sizeof s_roles / sizeof *s_roles; i++)
        if (strcmp (name, s_roles[i]) == 0)
            return 1 << i;
    return -1;
}

const char *
qc_role_name (int role)
{
    for (size_t i = 0; i < sizeof s_roles / sizeof *s_roles; i++)
        if (role == 1 << i)
            return s_roles[i];
    return "none";
}

static bool
all_zero (const byte *key)
{
    for (int i = 0; i < 32; i++)
        if (key[i])
            return false;
    return true;
}

zcert_t *
qc_cert_read (const char *path)
{
    /* czmq's zcert_load (PATH) reads PATH_secret instead when there is
     * one: a public certificate given where a secret one is needed would
     * pass unnoticed beside its secret file, and a stale PATH_secret
     * would stand for PATH. This reads the named file only. */
    /* Read here, bounded, and parsed from memory: czmq 4.2.1's
     * zconfig_load leaks its file handle on a file that does not parse
     * (a stray file in the allowed folder, read again and again). */
    zchunk_t *text = path ? zchunk_slurp (path, QC_CERT_MAX_BYTES + 1) : NULL;
    zconfig_t *root = text && zchunk_size (text) <= QC_CERT_MAX_BYTES
                          ? zconfig_chunk_load (text) : NULL;
    zchunk_destroy (&text);
    if (!root)
        return NULL;
    const char *pub = zconfig_get (root, "/curve/public-key", NULL);
    const char *sec = zconfig_get (root, "/curve/secret-key", NULL);
    byte pk[32] = {0}, sk[32] = {0};
    zcert_t *cert = NULL;
    if (pub && strlen (pub) == QC_CURVE_KEY_LEN && zmq_z85_decode (pk, pub)
        && (!sec || (strlen (sec) == QC_CURVE_KEY_LEN && zmq_z85_decode (sk, sec))))
        cert = zcert_new_from (pk, sk);
    zconfig_t *meta = cert ? zconfig_locate (root, "/metadata") : NULL;
    for (zconfig_t *m = meta ? zconfig_child (meta) : NULL; m; m = zconfig_next (m))
        if (zconfig_name (m) && zconfig_value (m))
            zcert_set_meta (cert, zconfig_name (m), "%s", zconfig_value (m));
    zconfig_destroy (&root);
    return cert;
}

/* The certificate in path; NULL with why. */
static zcert_t *
load (const char *path, struct stat *st, char *err, size_t errlen)
{
    if (!path || !*path) {
        snprintf (err, errlen, "no certificate file given");
        return NULL;
    }
    if (stat (path, st)) {
        snprintf (err, errlen, "cannot read %s: %s", path, strerror (errno));
        return NULL;
    }
    if (!S_ISREG (st->st_mode)) {
        snprintf (err, errlen, "%s is not a file", path);
        return NULL;
    }
    zcert_t *cert = qc_cert_read (path);
    if (!cert || all_zero (zcert_public_key (cert))) {
        snprintf (err, errlen, "%s is not a CurveZMQ certificate (make one with "
                  "qc-keygen)", path);
        zcert_destroy (&cert);
    }
    return cert;
}

int
qc_cert_expires (zcert_t *cert, int64_t *at)
{
    const char *v = cert ? zcert_meta (cert, "expires") : NULL;
    if (!v)
        return 1;
    int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
    size_t len = strlen (v);
    if (len == 10 ? sscanf (v, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3
        : len == 20 ? sscanf (v, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec,
                              &n) != 6
        : 1)
        return -1;
    if ((size_t) n != len || y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31
        || h > 23 || mi > 59 || sec > 60 || h < 0 || mi < 0 || sec < 0)
        return -1;
    struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                     .tm_min = mi, .tm_sec = sec };
    time_t t = timegm (&tm);
    /* timegm normalises 2027-02-31 to March: a day no calendar has */
    if (t == (time_t) -1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
        return -1;
    if (at)
        *at = (int64_t) t;
    return 0;
}

void
qc_cert_expiry_text (int64_t at, char *buf, size_t len)
{
    time_t t = (time_t) at;
    struct tm tm;
    if (!buf || !len)
        return;
    if (!gmtime_r (&t, &tm) || !strftime (buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
        buf[0] = 0;
}

void
qc_cert_time_left_text (int64_t left, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    if (left < 60) {
        snprintf (buf, len, "in under a minute");
        return;
    }
    long long n = left >= 2 * 86400 ? left / 86400 : left >= 3600 ? left / 3600 : left / 60;
    const char *unit = left >= 2 * 86400 ? "day" : left >= 3600 ? "hour" : "minute";
    snprintf (buf, len, "in %lld %s%s", n, unit, n == 1 ? "" : "s");
}

/* The warning of a certificate of ours that has expired or soon will. */
static void
warn_expiry (const char *path, zcert_t *cert)
{
    int64_t at;
    int rc = qc_cert_expires (cert, &at);
    char when[32];
    if (rc < 0) {
        qc_log (QC_LOG_WARNING, "curve", "%s: its \"expires\" is no time (\"%s\"): a broker "
                "refuses it; make a new pair with qc-keygen --force", path,
                zcert_meta (cert, "expires"));
        return;
    }
    if (rc > 0)
        return;
    int64_t left = at - (int64_t) time (NULL);
    qc_cert_expiry_text (at, when, sizeof when);
    if (left <= 0)
        qc_log (QC_LOG_WARNING, "curve", "%s expired on %s: a broker refuses it; make a "
                "new pair (qc-keygen --force --days N) and give the broker its public "
                "certificate", path, when);
    else if (left < (int64_t) QC_CERT_EXPIRY_WARN_DAYS * 86400) {
        char in[32];
        qc_cert_time_left_text (left, in, sizeof in);
        qc_log (QC_LOG_WARNING, "curve", "%s expires on %s, %s: make a new pair before "
                "then (qc-keygen --force --days N)", path, when, in);
    }
}

zcert_t *
qc_cert_load_secret (const char *path, char *err, size_t errlen)
{
    struct stat st;
    zcert_t *cert = load (path, &st, err, errlen);
    if (cert && all_zero (zcert_secret_key (cert))) {
        snprintf (err, errlen, "%s holds no secret key: give the secret "
                  "certificate (NAME.cert_secret), not the public one", path);
        zcert_destroy (&cert);
    }
    if (cert && (st.st_mode & 077))
        qc_log (QC_LOG_WARNING, "curve", "%s can be read by other users (mode %04o): "
                "anyone who reads it can speak as this certificate; chmod 600 %s",
                path, (unsigned) (st.st_mode & 07777), path);
    if (cert)
        warn_expiry (path, cert);
    return cert;
}

int
qc_cert_load_public (const char *path, char key[QC_CURVE_KEY_LEN + 1], char *err,
                     size_t errlen)
{
    struct stat st;
    zcert_t *cert = load (path, &st, err, errlen);
    if (!cert)
        return -1;
    snprintf (key, QC_CURVE_KEY_LEN + 1, "%s", zcert_public_txt (cert));
    zcert_destroy (&cert);
    return 0;
}

/* ------------------------------------------------------------ clients */

struct qc_curve_client {
    zcert_t *cert;
    char server_key[QC_CURVE_KEY_LEN + 1];
    char *cert_path, *server_key_path;
    struct stat cert_st, key_st;          /* the files as last read */
};

/* Whether a file is not the one last read: another inode, size or time
 * (a key pair replaced by a rotation, or the broker's). */
static bool
file_changed (const char *path, const struct stat *was, struct stat *now)
{
    if (stat (path, now) != 0)
        return false;           /* gone for now: keep what was read */
    return now->st_ino != was->st_ino || now->st_size != was->st_size
           || now->st_mtim.tv_sec != was->st_mtim.tv_sec
           || now->st_mtim.tv_nsec != was->st_mtim.tv_nsec;
}

/* Whether a certificate file holds a secret key (a "secret-key" line
 * in its curve section), read from the file itself: zcert_load also
 * reads PATH_secret beside a public one. */
static bool
holds_secret (const char *path)
{
    FILE *f = fopen (path, "r");
    char line[512];
    bool yes = false;
    while (f && !yes && fgets (line, sizeof line, f))
        yes = strstr (line, "secret-key") != NULL;
    if (f)
        fclose (f);
    return yes;
}

qc_curve_client_t *
qc_curve_client_new (const char *cert_path, const char *server_key_path, char *err,
                     size_t errlen)
{
    if (!cert_path || !server_key_path) {
        snprintf (err, errlen, "CurveZMQ needs both --cert (this program's secret "
                  "certificate) and --server-key (the broker's public certificate)");
        return NULL;
    }
    qc_curve_client_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    char why[512];
    if (!(self->cert = qc_cert_load_secret (cert_path, why, sizeof why))) {
        snprintf (err, errlen, "--cert: %s", why);
        qc_curve_client_destroy (&self);
        return NULL;
    }
    if (qc_cert_load_public (server_key_path, self->server_key, why, sizeof why)) {
        snprintf (err, errlen, "--server-key: %s", why);
        qc_curve_client_destroy (&self);
        return NULL;
    }
    /* another peer's certificate (a client's own, by mistake): said
       now, by its role line, where the handshake only timed out with a
       guess (a hospital admin's probe); one without a role is tried */
    zcert_t *peer = qc_cert_read (server_key_path);
    const char *role = peer ? zcert_meta (peer, "role") : NULL;
    if (role && strcmp (role, "broker") != 0) {
        const char *name = zcert_meta (peer, "name");
        snprintf (err, errlen, "--server-key %s is the certificate of a %s%s%s, not of the "
                  "broker: give the broker's public certificate (the broker.cert that "
                  "qc-keygen --role broker made beside the broker's secret one)",
                  server_key_path, role, name && *name ? ", " : "", name ? name : "");
        zcert_destroy (&peer);
        qc_curve_client_destroy (&self);
        return NULL;
    }
    zcert_destroy (&peer);
    if (holds_secret (server_key_path))
        /* it works (the public key is in it too), but the broker's
           secret key then lies on every machine that reaches it */
        qc_log (QC_LOG_WARNING, "curve", "--server-key %s holds the broker's secret key: "
                "give its public certificate (the file without _secret) and keep the "
                "secret one on the broker's machine only", server_key_path);
    if (!(self->cert_path = strdup (cert_path))
        || !(self->server_key_path = strdup (server_key_path))) {
        snprintf (err, errlen, "out of memory");
        qc_curve_client_destroy (&self);
        return NULL;
    }
    stat (cert_path, &self->cert_st);
    stat (server_key_path, &self->key_st);
    return self;
}

int
qc_curve_client_reload (qc_curve_client_t *self, char *err, size_t errlen)
{
    if (!self || !err)
        return 0;
    struct stat cst, kst;
    bool c = file_changed (self->cert_path, &self->cert_st, &cst);
    bool k = file_changed (self->server_key_path, &self->key_st, &kst);
    if (!c && !k)
        return 0;
    /* each file that read is taken and remembered as read; one that did
       not (half written) is tried again on the next call */
    char why[512], key[QC_CURVE_KEY_LEN + 1];
    int rc = 1;
    zcert_t *cert = NULL;
    if (c && (cert = qc_cert_load_secret (self->cert_path, why, sizeof why))) {
        zcert_destroy (&self->cert);
        self->cert = cert;
        self->cert_st = cst;
    } else if (c) {
        snprintf (err, errlen, "--cert %s: %s", self->cert_path, why);
        rc = -1;
    }
    if (k && qc_cert_load_public (self->server_key_path, key, why, sizeof why) == 0) {
        memcpy (self->server_key, key, sizeof key);
        self->key_st = kst;
    } else if (k) {
        snprintf (err, errlen, "--server-key %s: %s", self->server_key_path, why);
        rc = -1;
    }
    return rc;
}

void
qc_curve_client_destroy (qc_curve_client_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zcert_destroy (&(*self_p)->cert);
    free ((*self_p)->cert_path);
    free ((*self_p)->server_key_path);
    free (*self_p);
    *self_p = NULL;
}

void
qc_curve_client_apply (const qc_curve_client_t *self, zsock_t *sock)
{
    if (!self || !sock)
        return;
    zcert_apply (self->cert, sock);
    zsock_set_curve_serverkey (sock, self->server_key);
}

const char *
qc_curve_client_key (const qc_curve_client_t *self)
{
    return self ? zcert_public_txt (self->cert) : NULL;
}

/* ------------------------------------------------------------ handshakes */

struct qc_handshake {
    zsock_t *watched;
    zsock_t *events;          /* PAIR: the monitor's events */
    const char *why;
    bool curve;               /* the watched socket is a CurveZMQ client */
    bool shook;               /* a handshake succeeded, once at least */
};

qc_handshake_t *
qc_handshake_watch (zsock_t *sock)
{
    static unsigned serial;
    if (!sock)
        return NULL;
    qc_handshake_t *self = calloc (1, sizeof *self);
    char ep[96];
    snprintf (ep, sizeof ep, "inproc://qc-handshake-%p-%u", (void *) self,
              __atomic_fetch_add (&serial, 1, __ATOMIC_RELAXED));
    if (!self || zmq_socket_monitor (zsock_resolve (sock), ep,
                                     ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                     | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                     | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                                     | ZMQ_EVENT_HANDSHAKE_SUCCEEDED)) {
        free (self);
        return NULL;
    }
    self->watched = sock;
    /* the reasons differ: one without keys cannot have a wrong one */
    self->curve = zsock_mechanism (sock) == ZMQ_CURVE;
    if (!(self->events = qc_socket_new (ZMQ_PAIR, "a handshake watch")) || zsock_connect (self->events, "%s", ep)) {
        qc_handshake_destroy (&self);
        return NULL;
    }
    zsock_set_rcvtimeo (self->events, 0);
    return self;
}

void
qc_handshake_destroy (qc_handshake_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_handshake_t *self = *self_p;
    zmq_socket_monitor (zsock_resolve (self->watched), NULL, 0);
    zsock_destroy (&self->events);
    free (self);
    *self_p = NULL;
}

/* What an event says, in words; NULL for a handshake that succeeded.
 * curve: the socket has keys (--cert, --server-key). */
static const char *
explain (uint16_t event, uint32_t value, bool curve)
{
    if (!curve && (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                   || event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
        return "the handshake with the broker failed, and this program has no "
               "keys: a broker started with --cert takes only peers that give "
               "--cert and --server-key (qc-keygen makes them)";
    /* the same case when the broker closed first (no detail): which
       side sees the mismatch is a race */
    if (!curve && event != ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        return "the handshake with the broker failed: this program has no keys, and "
               "a broker started with --cert takes only peers that give --cert and "
               "--server-key (qc-keygen makes them); or this is not an address a "
               "qc-broker binds (qc-broker --bind); or something on the way (a "
               "firewall, a proxy, a NAT that dropped the connection) cut it or held "
               "it silent before the broker answered";
    switch (event) {
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        return NULL;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        return value == 400
                   ? "the broker refused this certificate: it is not in the broker's "
                     "--allow folder, was removed from it, or has come to its end "
                     "(qc-keygen --days; the broker's log says which, and when)"
                   : "the broker could not check this certificate (its ZAP handler "
                     "failed): see the broker's log";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
            return "the handshake failed: one side uses CurveZMQ and the other does "
                   "not (give both --cert and --server-key to reach a broker that has "
                   "--cert; none to reach one without)";
        return "the CurveZMQ handshake failed: is --server-key the public "
               "certificate of this broker?";
    default:
        /* no detail: the broker closed the connection mid-handshake, as
           one does that is stopping or starting (seen in every restart);
           or the network between did: a firewall or proxy that accepts
           and closes, or a blackhole held past libzmq's handshake timer
           (30 s), which ends the same way */
        return "the handshake with the broker did not complete (a broker that is "
               "restarting closes it, and so does a firewall or proxy on the way "
               "that cuts the connection or holds it silent; this program tries "
               "again): if this goes on, is --server-key the public certificate of "
               "this broker, and does it use CurveZMQ (qc-broker --cert) exactly when "
               "this program does?";
    }
}

const char *
qc_handshake_why (qc_handshake_t *self)
{
    if (!self)
        return NULL;
    zmsg_t *m;
    while ((m = zmsg_recv (self->events))) {
        zframe_t *f = zmsg_first (m);
        if (f && zframe_size (f) >= 6) {
            const byte *d = zframe_data (f);
            uint16_t event;
            uint32_t value;
            memcpy (&event, d, 2);     /* host order, as libzmq writes them */
            memcpy (&value, d + 2, 4);
            self->why = explain (event, value, self->curve);
            self->shook |= event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
        }
        zmsg_destroy (&m);
    }
    return self->why;
}

bool
qc_handshake_shook (qc_handshake_t *self)
{
    qc_handshake_why (self);
    return self && self->shook;
}
