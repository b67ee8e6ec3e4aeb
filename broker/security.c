/* See security.h. */
#include "broker/security.h"

#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "shared/err.h"
#include "shared/log.h"
#include "shared/proto.h"
#include "shared/socket_new.h"

#define MOD "broker"
#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_DOMAIN "qc-broker"

/* Which roles may send each command: the whole access policy by role.
 * Ownership (a client uses its own jobs only) is broker_jobs.c's, per
 * job. Commands the broker sends are nobody's to send it. */
#define W QC_ROLE_WORKER
#define C (QC_ROLE_CLIENT | QC_ROLE_ADMIN)
static const uint8_t s_senders[256] = {
    [QC_READY] = W,     [QC_STARTED] = W,    [QC_RESULT] = W,
    [QC_LOG] = W,       [QC_FETCH] = W,
    [QC_HEARTBEAT] = W | C,                  [QC_DISCONNECT] = W | C,
    [QC_SUBMIT] = C,    [QC_CANCEL] = C,     [QC_STATUS] = C,
    [QC_ATTACH] = C,    [QC_ACK] = C,
};
#undef W
#undef C

struct security {
    zsock_t *router;          /* watched, not owned */
    zsock_t *zap;             /* REP: the ZAP handler */
    zsock_t *monitor;         /* PAIR: router's connection events */
    zcert_t *cert;
    keyring_t *keyring;
    refusals_t *refusals;     /* the broker's */
    zhashx_t *peers;          /* fd (text) -> the peer's address, while
                                 its connection is open */
    const char *failed;       /* a handshake failed before ZAP: logged
                                 with its connection's address when that
                                 connection closes (the next event) */
    zhashx_t *said;           /* key -> when (ms, a malloc'd int64) its
                                 "authenticated" line was last at INFO */
};

/* A certificate's connection is said at INFO once an hour at most, at
 * DEBUG between: a readiness probe's qc-status every 10 s made 8,600
 * lines a day (an operator's review); a first one, and one after a
 * quiet hour, still shows who came. */
#define SAID_EVERY_MS ((int64_t) 3600 * 1000)

static void
free_str (void **item)
{
    free (*item);
    *item = NULL;
}

security_t *
security_new (zsock_t *router, const char *cert_path, const char *allow_dir,
              refusals_t *refusals, char *err, size_t errlen)
{
    security_t *self = calloc (1, sizeof *self);
    char why[512];
    if (!self || !router || !(self->peers = zhashx_new ()) || !(self->said = zhashx_new ())) {
        snprintf (err, errlen, "out of memory");
        if (self)
            zhashx_destroy (&self->peers);
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->peers, free_str);
    zhashx_set_destructor (self->said, free_str);
    self->router = router;
    self->refusals = refusals;
    if (!allow_dir) {
        snprintf (err, errlen, "--cert needs --allow DIR, the folder of the public "
                  "certificates it admits (CurveZMQ without it would admit anyone "
                  "who knows the broker's public key)");
        security_destroy (&self);
        return NULL;
    }
    if (!(self->cert = qc_cert_load_secret (cert_path, why, sizeof why))) {
        snprintf (err, errlen, "--cert: %s", why);
        security_destroy (&self);
        return NULL;
    }
    /* another role's pair would make the broker's key that peer's (a
       client's: its holder could pose as the broker); a pair without
       a role (zcert's own, an older qc-keygen) is taken */
    const char *role = zcert_meta (self->cert, "role");
    if (role && strcmp (role, "broker") != 0) {
        snprintf (err, errlen, "--cert %s has the role %s, not broker: the broker's key "
                  "would be that %s's. Make the broker's own: qc-keygen --role broker",
                  cert_path, role, role);
        security_destroy (&self);
        return NULL;
    }
    if (!(self->keyring = keyring_new (allow_dir, err, errlen))) {
        security_destroy (&self);
        return NULL;
    }
    self->zap = qc_socket_new (ZMQ_REP, "the broker");
    if (!self->zap || zsock_bind (self->zap, ZAP_ENDPOINT) < 0) {
        snprintf (err, errlen, "cannot start the ZAP handler (%s): another broker with "
                  "CurveZMQ runs in this process?", zmq_strerror (zmq_errno ()));
        security_destroy (&self);
        return NULL;
    }
    zsock_set_rcvtimeo (self->zap, 0);
    char ep[64];
    snprintf (ep, sizeof ep, "inproc://qc-broker-monitor-%p", (void *) self);
    if (zmq_socket_monitor (zsock_resolve (router), ep, ZMQ_EVENT_ACCEPTED
                            | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED
                            | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                            | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        || !(self->monitor = qc_socket_new (ZMQ_PAIR, "the broker"))
        || zsock_connect (self->monitor, "%s", ep) < 0) {
        snprintf (err, errlen, "cannot watch the broker's handshakes: %s",
                  zmq_strerror (zmq_errno ()));
        security_destroy (&self);
        return NULL;
    }
    zsock_set_rcvtimeo (self->monitor, 0);
    zcert_apply (self->cert, router);
    zsock_set_curve_server (router, 1);
    zsock_set_zap_domain (router, ZAP_DOMAIN);
    qc_log (QC_LOG_INFO, MOD, "CurveZMQ on: broker key %s; %zu certificate%s admitted "
            "from %s (read again while running)", zcert_public_txt (self->cert),
            keyring_size (self->keyring), qc_plural (keyring_size (self->keyring)), allow_dir);
    return self;
}

void
security_destroy (security_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    security_t *self = *self_p;
    if (self->monitor)
        zmq_socket_monitor (zsock_resolve (self->router), NULL, 0);
    zsock_destroy (&self->monitor);
    zsock_destroy (&self->zap);
    zcert_destroy (&self->cert);
    keyring_destroy (&self->keyring);
    zhashx_destroy (&self->peers);
    zhashx_destroy (&self->said);
    free (self);
    *self_p = NULL;
}

zsock_t *
security_zap (security_t *self)
{
    return self ? self->zap : NULL;
}

zsock_t *
security_monitor (security_t *self)
{
    return self ? self->monitor : NULL;
}

/* ---------------------------------------------------------------- ZAP */

/* Whether e's certificate has expired (wall-clock time: an end date is
 * the calendar's); why says so. */
static bool
expired_why (const security_t *self, const keyring_entry_t *e, char *why, size_t len)
{
    if (!keyring_expired (e, (int64_t) time (NULL)))
        return false;
    char when[32];
    qc_cert_expiry_text (e->expires, when, sizeof when);
    snprintf (why, len, "certificate %s expired on %s: its holder needs a new pair "
              "(qc-keygen --force --days N), its public certificate in %s", e->name, when,
              keyring_dir (self->keyring));
    return true;
}

/* Whether the key may connect; why not in why. */
static bool
admit (security_t *self, const char *key, char *why, size_t len)
{
    keyring_refresh (self->keyring, false);
    const keyring_entry_t *e = keyring_lookup (self->keyring, key);
    const char *was = e ? NULL : keyring_revoked (self->keyring, key);
    if (e && expired_why (self, e, why, len))
        return false;
    if (e && (e->role & (QC_ROLE_WORKER | QC_ROLE_CLIENT | QC_ROLE_ADMIN))) {
        keyring_warn_expiry (self->keyring, key, (int64_t) time (NULL));
        return true;
    }
    if (e)
        snprintf (why, len, "certificate %s has the role %s, which may not connect",
                  e->name, qc_role_name (e->role));
    else if (was)
        snprintf (why, len, "certificate %s was revoked (no longer in %s)", was,
                  keyring_dir (self->keyring));
    else
        snprintf (why, len, "unknown key: no certificate in %s has it",
                  keyring_dir (self->keyring));
    return false;
}

void
security_on_zap (security_t *self, int64_t now)
{
    zmsg_t *req = self ? zmsg_recv (self->zap) : NULL;
    if (!req)
        return;
    /* version, request id, domain, address, identity, mechanism,
     * credentials (CURVE: the client's 32-byte public key) */
    zframe_t *f[7] = {NULL};
    size_t n = 0;
    for (zframe_t *fr = zmsg_first (req); fr && n < 7; fr = zmsg_next (req))
        f[n++] = fr;
    char addr[64] = "?", key[QC_CURVE_KEY_LEN + 1] = "", why[512] = "";
    const char *status = "400";
    if (f[3] && zframe_size (f[3]) < sizeof addr) {
        memcpy (addr, zframe_data (f[3]), zframe_size (f[3]));
        addr[zframe_size (f[3])] = 0;
    }
    bool curve = n == 7 && zframe_streq (f[0], "1.0") && zframe_streq (f[5], "CURVE")
                 && zframe_size (f[6]) == 32;
    if (curve)
        zmq_z85_encode (key, zframe_data (f[6]), 32);
    if (n == 7 && zframe_streq (f[5], "NULL") && !zframe_streq (f[2], ZAP_DOMAIN))
        status = "200";       /* another socket of this process: not ours */
    else if (!curve)
        snprintf (why, sizeof why, "a ZAP request that is not CurveZMQ (mechanism %.*s)",
                  f[5] ? (int) zframe_size (f[5]) : 1, f[5] ? (char *) zframe_data (f[5]) : "?");
    else if (admit (self, key, why, sizeof why)) {
        status = "200";
        const keyring_entry_t *e = keyring_lookup (self->keyring, key);
        int64_t *at = zhashx_lookup (self->said, key);
        bool loud = !at || now - *at >= SAID_EVERY_MS;
        qc_log (loud ? QC_LOG_INFO : QC_LOG_DEBUG, MOD, "connection from %s authenticated "
                "as %s (role %s)%s", addr, e ? e->name : "?", e ? qc_role_name (e->role) : "?",
                loud ? " (its next connections within the hour at debug level)" : "");
        if (loud && !at && (at = malloc (sizeof *at)) && zhashx_insert (self->said, key, at)) {
            free (at);
            at = NULL;
        }
        if (loud && at)
            *at = now;
    }
    if (*why) {
        /* keys no certificate has (or none) are a group by address: the
         * broker's public key is no secret, and a stranger who made a
         * new key for each try would otherwise be a log line each try */
        char peer[160], group[96];
        bool known = curve && (keyring_lookup (self->keyring, key)
                               || keyring_revoked (self->keyring, key));
        snprintf (peer, sizeof peer, "a connection from %s (key %s)", addr,
                  *key ? key : "none");
        snprintf (group, sizeof group, "a connection from %s", addr);
        refusals_log_as (self->refusals, now, known ? NULL : group, peer, "%s", why);
    }
    zmsg_t *rep = zmsg_new ();
    if (rep) {
        zmsg_addstr (rep, "1.0");
        if (f[1])
            zmsg_addmem (rep, zframe_data (f[1]), zframe_size (f[1]));
        else
            zmsg_addstr (rep, "");
        zmsg_addstr (rep, status);
        zmsg_addstr (rep, streq (status, "200") ? "OK" : "refused");
        zmsg_addstr (rep, streq (status, "200") ? key : "");
        zmsg_addmem (rep, NULL, 0);       /* no metadata */
        zmsg_send (&rep, self->zap);
        zmsg_destroy (&rep);          /* kept when it could not be sent */
    }
    zmsg_destroy (&req);
}

/* ---------------------------------------------------------------- monitor */

void
security_on_monitor (security_t *self, int64_t now)
{
    zmsg_t *m;
    while (self && (m = zmsg_recv (self->monitor))) {
        zframe_t *f = zmsg_first (m);
        uint16_t event = 0;
        uint32_t value = 0;
        if (f && zframe_size (f) >= 6) {
            memcpy (&event, zframe_data (f), 2);
            memcpy (&value, zframe_data (f) + 2, 4);
        }
        char fd[16];
        snprintf (fd, sizeof fd, "%u", value);
        if (event == ZMQ_EVENT_ACCEPTED) {
            /* the address now, while the descriptor is still this peer's
             * (the host only, as the ZAP handler sees it: a peer that
             * reconnects is the same peer, whatever its port). libzmq's
             * events carry no peer address, and a handshake that fails
             * at once (a peer without CurveZMQ) may close the descriptor
             * before this reads it: then the address is not known. */
            struct sockaddr_storage sa;
            socklen_t sl = sizeof sa;
            char host[64] = "an address not known (closed before it was read)";
            if (getpeername ((int) value, (struct sockaddr *) &sa, &sl) == 0) {
                if (sa.ss_family == AF_INET)
                    inet_ntop (AF_INET, &((struct sockaddr_in *) &sa)->sin_addr, host,
                               sizeof host);
                else if (sa.ss_family == AF_INET6)
                    inet_ntop (AF_INET6, &((struct sockaddr_in6 *) &sa)->sin6_addr, host,
                               sizeof host);
                else
                    snprintf (host, sizeof host, "a local socket");
            }
            char *copy = strdup (host);
            if (copy)
                zhashx_update (self->peers, fd, copy);    /* owns copy */
        } else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                   || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
            self->failed = value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
                               ? "it does not speak CurveZMQ (no certificate)"
                               : value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC
                                     ? "its CurveZMQ handshake failed (it does not "
                                       "know this broker's public key)"
                                     : "its handshake failed (it closed the connection: a peer "
                                       "without a certificate, or one that does not "
                                       "know this broker's public key; or the network "
                                       "between cut it mid-handshake, as a firewall or "
                                       "NAT does, or delivered a handshake its peer had "
                                       "given up on after a partition)";
        } else if (event == ZMQ_EVENT_DISCONNECTED || event == ZMQ_EVENT_CLOSED) {
            /* one I/O thread reports a failure and then the close of
             * that same connection */
            if (self->failed) {
                const char *a = zhashx_lookup (self->peers, fd);
                char peer[96];
                snprintf (peer, sizeof peer, "a connection from %s", a ? a : "an address not known");
                refusals_log (self->refusals, now, peer, "%s", self->failed);
                self->failed = NULL;
            }
            zhashx_delete (self->peers, fd);
        }
        zmsg_destroy (&m);
    }
}

/* ---------------------------------------------------------------- messages */

bool
security_refresh (security_t *self, bool full)
{
    if (!self)
        return false;
    bool changed = keyring_refresh (self->keyring, full);
    if (full)       /* once a second at most: each said once a day */
        keyring_warn_expiring (self->keyring, (int64_t) time (NULL));
    return changed;
}

const keyring_entry_t *
security_sender (security_t *self, zmsg_t *msg, char *why, size_t len)
{
    zframe_t *hdr = msg ? zmsg_first (msg) : NULL;
    const char *uid = hdr ? zframe_meta (hdr, "User-Id") : NULL;
    if (!self)
        return NULL;
    if (!uid || !*uid) {
        snprintf (why, len, "its connection did not authenticate (no CurveZMQ user id)");
        return NULL;
    }
    const keyring_entry_t *e = keyring_lookup (self->keyring, uid);
    if (e && expired_why (self, e, why, len))
        return NULL;        /* from that second, not from its next handshake */
    if (e)
        return e;
    const char *was = keyring_revoked (self->keyring, uid);
    if (was)
        snprintf (why, len, "certificate %s (key %s) was revoked: it is no longer in %s",
                  was, uid, keyring_dir (self->keyring));
    else        /* admitted at its handshake by no one: never expected */
        snprintf (why, len, "key %s is not admitted: no certificate in %s has it", uid,
                  keyring_dir (self->keyring));
    return NULL;
}

bool
security_may_send (uint8_t role, uint8_t command)
{
    return (s_senders[command] & role) != 0;
}

const keyring_entry_t *
security_lookup (security_t *self, const char *key)
{
    return self ? keyring_lookup (self->keyring, key) : NULL;
}

const char *
security_key_of (security_t *self, uint32_t id)
{
    return self ? keyring_key_of (self->keyring, id) : NULL;
}

const char *
security_public_key (security_t *self)
{
    return self ? zcert_public_txt (self->cert) : NULL;
}
