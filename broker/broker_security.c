/* The broker's side of who may talk to it (CurveZMQ on: broker/security.h
 * admits certificates; this file acts on its answers): refusals logged
 * with the peer, a peer no longer admitted or sending a command its role
 * may not send, the allowed folder read again, and whether the broker may
 * start at all on its endpoints without keys. Split from broker.c, whose
 * job is the event loop. */
#include "broker/broker_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shared/endpoint.h"
#include "shared/log.h"

#define MOD "broker"

void
peer_key (zframe_t *id, char *key)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = zframe_size (id);
    const uint8_t *d = zframe_data (id);
    if (n > (PEER_KEY_MAX - 1) / 2)
        n = (PEER_KEY_MAX - 1) / 2;
    for (size_t i = 0; i < n; i++) {
        key[2 * i] = hex[d[i] >> 4];
        key[2 * i + 1] = hex[d[i] & 15];
    }
    key[2 * n] = 0;
}

/* A routing id for a log line: libzmq's own are 5 bytes; one a peer set
 * itself may be 255, and 510 hex digits a line hide the reason. */
static const char *
shown_id (const char *hex, char *buf, size_t len)
{
    size_t n = strlen (hex);
    if (n <= 32)
        return hex;
    snprintf (buf, len, "%.24s... (%zu bytes)", hex, n / 2);
    return buf;
}

bool
refuse (qc_broker_t *b, const peer_t *p, const char *fmt, ...)
{
    char reason[1024], who[PEER_KEY_MAX + 256], id[64];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (reason, sizeof reason, fmt, ap);
    va_end (ap);
    const char *shown = shown_id (p->hex, id, sizeof id);
    if (p->cert)
        snprintf (who, sizeof who, "peer %s (certificate %s, role %s, key %s)", shown,
                  p->cert->name, qc_role_name (p->cert->role), p->cert->key);
    else
        snprintf (who, sizeof who, "peer %s", shown);
    return refusals_log (b->refusals, b->now, who, "%s", reason);
}

/* A peer whose certificate is not (or no longer) admitted: refused; a
 * worker registered on that connection is gone (its tasks go back to the
 * queue unblamed), and it is told why. */
void
refuse_unadmitted (qc_broker_t *b, const peer_t *p, const char *why)
{
    worker_rec_t *w = zhashx_lookup (b->workers, p->hex);
    if (w) {
        worker_gone (b, w, false);
        b->dispatch_due = true;
    }
    jobs_on_client_disconnect (b, p);
    if (refuse (b, p, "%s", why)) {
        char text[700];
        snprintf (text, sizeof text, "refused: %s", why);
        send_simple (b, p->id, QC_DISCONNECT, text);
    }
}

/* A command this certificate's role may not send: refused, and told
 * (a client command gets ERROR, which qc-submit and qc-status show; a
 * worker command DISCONNECT, on which qc-worker waits before it tries
 * again). */
void
refuse_role (qc_broker_t *b, const peer_t *p, const qc_msg_t *m)
{
    /* with what to do: the protocol's words alone ("READY may not be
       sent ...") left an admin guessing (a hospital admin's probe) */
    char why[256];
    bool client_command = security_may_send (QC_ROLE_CLIENT, m->command);
    const char *role = qc_role_name (p->cert->role);
    snprintf (why, sizeof why, "%s may not be sent with a certificate of the role %s (%s)",
              qc_command_name (m->command), role,
              client_command ? "qc-submit and qc-status need a client's or an admin's "
                               "certificate (qc-keygen --role client)"
                             : "qc-worker needs a worker's certificate (qc-keygen --role "
                               "worker)");
    b->dropped++;
    if (!refuse (b, p, "%s", why))
        return;
    qc_msg_t r = {.command = client_command ? QC_ERROR : QC_DISCONNECT, .gpu = -1,
                  .job = m->job};
    char text[300];
    /* qc-submit says "broker refused: REASON"; a worker knows a refusal
     * from DISCONNECT's "refused: " */
    snprintf (text, sizeof text, "%s%s", client_command ? "" : "refused: ", why);
    r.reason = text;
    qc_msg_send (&r, zsock_resolve (b->router), p->id);
}

bool
refuse_unknown_command (qc_broker_t *b, const peer_t *p, zmsg_t *msg)
{
    zframe_t *hdr = zmsg_first (msg);
    const uint8_t *h = hdr && zframe_size (hdr) == 4 ? zframe_data (hdr) : NULL;
    if (!h || h[0] != 'Q' || h[1] != 'C' || h[2] != QC_PROTO_VERSION
        || qc_command_known (h[3]))
        return false;
    /* a registered worker is not told: ERROR is a client's answer, and
       no worker of this version sends a command it does not know */
    bool worker = zhashx_lookup (b->workers, p->hex) != NULL;
    if (!refuse (b, p, "unknown command %u dropped%s", h[3],
                 worker ? "" : " (answered ERROR: a newer program's?)") || worker)
        return true;
    char text[400];
    snprintf (text, sizeof text, "unknown command %u: this broker speaks protocol version "
              "%u (qc %s), which has no command %u: run the same version of qc-worker, "
              "qc-submit and qc-status as qc-broker", h[3], QC_PROTO_VERSION, QC_VERSION,
              h[3]);
    qc_msg_t r = {.command = QC_ERROR, .gpu = -1, .reason = text};
    qc_msg_send (&r, zsock_resolve (b->router), p->id);
    return true;
}

void
refuse_version (qc_broker_t *b, const peer_t *p, zmsg_t *msg, uint8_t version,
                uint8_t command)
{
    char why[400], who[160];
    b->dropped++;
    /* by address: a peer that retries comes back with a new routing id
       (the address rides on the frames the peer sent, not the id) */
    const char *addr = zframe_meta (zmsg_first (msg), "Peer-Address");
    snprintf (who, sizeof who, "a peer at %s", addr && *addr ? addr : "an unknown address");
    snprintf (why, sizeof why, "it speaks protocol version %u, this broker %u (qc %s): run "
              "the same version of qc-worker, qc-submit and qc-status as qc-broker",
              version, QC_PROTO_VERSION, QC_VERSION);
    /* the log line once in a while per address; the answer always (it
       goes back on the same connection: every program there is told) */
    refusals_log (b->refusals, b->now, who, "%s", why);
    bool client_command = security_may_send (QC_ROLE_CLIENT, command);
    char text[480];
    snprintf (text, sizeof text, "%sthis broker speaks protocol version %u (qc %s), this "
              "program %u: run the same version of qc-worker, qc-submit and qc-status as "
              "qc-broker", client_command ? "" : "refused: ", QC_PROTO_VERSION, QC_VERSION,
              version);
    qc_msg_t r = {.command = client_command ? QC_ERROR : QC_DISCONNECT, .gpu = -1,
                  .reason = text};
    qc_msg_send_version (&r, zsock_resolve (b->router), p->id, version);
}

/* The allowed folder changed: registered workers whose certificate is
 * gone (or no longer a worker's) leave, their tasks back to the queue;
 * jobs whose owner's certificate is gone are detached. */
static void
on_allowed_changed (qc_broker_t *b)
{
    for (size_t i = 0; i < b->nroster;) {
        worker_rec_t *w = b->roster[i];
        const keyring_entry_t *e = w->cert_key[0] ? security_lookup (b->security, w->cert_key)
                                                  : NULL;
        if (w->cert_key[0] && (!e || !(e->role & QC_ROLE_WORKER))) {
            peer_t p = {.id = w->id};
            peer_key (w->id, p.hex);
            refuse (b, &p, "certificate %s (key %s) was revoked or is no longer a "
                    "worker's: worker %s is dropped, its tasks go back to the queue",
                    w->cert_name, w->cert_key, w->name);
            send_simple (b, w->id, QC_DISCONNECT, "refused: this certificate is no "
                         "longer admitted");
            worker_gone (b, w, false);
            b->dispatch_due = true;
            continue;
        }
        i++;
    }
    jobs_on_revoked (b);
}

/* The allowed folder's own times, once per ms at most: a certificate
 * removed is refused from its peer's next message. */
void
check_allowed (qc_broker_t *b, bool full)
{
    if (!b->security || (!full && b->now == b->last_allow_check))
        return;
    b->last_allow_check = b->now;
    if (security_refresh (b->security, full))
        on_allowed_changed (b);
}

/* CurveZMQ on (--cert, --allow), or endpoints only this machine reaches,
 * or --insecure said out loud. -1 with the reason. */
int
security_check (qc_broker_t *b, char *err, size_t errlen)
{
    const qc_broker_config_t *cfg = &b->cfg;
    if (cfg->allow_dir && !cfg->cert_path) {
        snprintf (err, errlen, "--allow needs --cert FILE, the broker's secret "
                  "certificate (qc-keygen --role broker)");
        return -1;
    }
    if (cfg->cert_path) {
        if (!(b->security = security_new (b->router, cfg->cert_path, cfg->allow_dir,
                                          b->refusals, err, errlen)))
            return -1;
        sched_set_identities (b->sched, true);
        return 0;
    }
    for (size_t i = 0; i < cfg->nendpoints; i++) {
        if (qc_endpoint_is_local (cfg->endpoints[i]))
            continue;
        if (!cfg->insecure) {
            snprintf (err, errlen, "%s can be reached from other machines: give --cert "
                      "FILE --allow DIR (CurveZMQ: only admitted certificates get in), "
                      "or --insecure to let in anyone who can reach it, or bind "
                      "tcp://127.0.0.1:PORT", cfg->endpoints[i]);
            return -1;
        }
        qc_log (QC_LOG_WARNING, MOD, "--insecure: %s without CurveZMQ: anyone who can "
                "reach it can register as a worker and read slides, submit, fetch "
                "and cancel jobs, and read everything on the wire", cfg->endpoints[i]);
    }
    return 0;
}
