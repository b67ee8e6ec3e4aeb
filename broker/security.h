/* The broker's CurveZMQ side (qc-broker --cert FILE --allow DIR):
 *
 *   - its ROUTER is a CURVE server with the broker's key pair, so every
 *     tcp:// (and ipc://) peer is encrypted and proves a key;
 *   - a ZAP handler (ZeroMQ RFC 27) in the broker's own loop admits a
 *     handshake only for a key of the allowed folder (broker/keyring.h)
 *     with the role worker, client or admin, and gives the connection
 *     that key as its User-Id;
 *   - every message's User-Id is looked up in the folder as it is now,
 *     so a certificate removed while its peer is connected is refused
 *     from that peer's next message, not only at its next handshake;
 *   - the role table says which commands each role may send;
 *   - a monitor of the ROUTER sees handshakes that fail before the ZAP
 *     handler is asked (a peer without CurveZMQ, a wrong server key), so
 *     those refusals are logged with the peer's address too.
 *
 * Hand-written beside czmq's zauth, which this replaces for the broker,
 * for what zauth cannot give: a refusal logged in the broker's log with
 * the peer, the key and why (unknown, revoked, no role), and the same
 * table deciding handshakes and every message (zauth's zcertstore is
 * read by another thread and scans the folder on every lookup, too slow
 * per message); also zauth 4.2.1 copies an admitted certificate's
 * metadata into a fixed 512-byte buffer without a bound. The crypto is
 * libzmq's; czmq reads the certificates. */
#ifndef QC_SECURITY_H
#define QC_SECURITY_H

#include <czmq.h>

#include "broker/keyring.h"
#include "broker/refuse.h"

typedef struct security security_t;

/* Makes router a CURVE server with the secret certificate at cert_path,
 * binds the ZAP handler and watches router's handshakes. Call before
 * router binds. NULL with the reason in err. */
security_t *security_new (zsock_t *router, const char *cert_path,
                          const char *allow_dir, refusals_t *refusals,
                          char *err, size_t errlen);
/* Before the router is destroyed. */
void security_destroy (security_t **self_p);

/* The sockets the broker's loop polls, and what it calls when each is
 * readable (now: monotonic ms). */
zsock_t *security_zap (security_t *self);
zsock_t *security_monitor (security_t *self);
void security_on_zap (security_t *self, int64_t now);
void security_on_monitor (security_t *self, int64_t now);

/* Reads the allowed folder again if it changed (full: also files
 * changed in place, and certificates near their end warned of, each
 * once a day); true when who is admitted changed. */
bool security_refresh (security_t *self, bool full);

/* The certificate the message (its frames after the routing id)
 * authenticated with, if admitted now; NULL with why otherwise. The
 * entry is valid until the next security_refresh. */
const keyring_entry_t *security_sender (security_t *self, zmsg_t *msg, char *why,
                                        size_t len);
/* Whether a certificate of that role may send that command. */
bool security_may_send (uint8_t role, uint8_t command);
/* The admitted certificate of a key now, or NULL. */
const keyring_entry_t *security_lookup (security_t *self, const char *key);
/* The key numbered id this run (keyring_key_of), or NULL. */
const char *security_key_of (security_t *self, uint32_t id);
/* The broker's own public key (Z85). */
const char *security_public_key (security_t *self);

#endif
