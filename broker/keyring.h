/* The broker's admitted certificates: the public certificates (czmq's
 * zcert format, shared/curve.h) in its --allow folder, each with its role
 * and name, read again while the broker runs: a file added admits its
 * key, a file removed revokes it, a file changed changes its role. The
 * broker's ZAP handler and its check of every message consult the same
 * ring (broker/security.c), so a handshake and a message can never
 * disagree about who is in.
 *
 * Read: every regular file of the folder (symbolic links followed) whose
 * name starts with no '.', ends with no "_secret" (a secret certificate
 * does not belong there: it is skipped with a warning) and is at most
 * 64 KB. A file that is no certificate, a key given twice (the first
 * file by name wins) and a certificate without a known role are said in
 * the log when the folder is read. A certificate with an "expires"
 * (qc-keygen --days) admits its holder until then: the ring keeps it,
 * and the broker refuses it from that second on (broker/security.c),
 * having warned of it in its last days. */
#ifndef QC_KEYRING_H
#define QC_KEYRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/curve.h"

#define KEYRING_NAME_MAX 128

typedef struct {
    char key[QC_CURVE_KEY_LEN + 1];   /* public key, Z85 */
    char name[KEYRING_NAME_MAX];      /* metadata "name", else the file's
                                         name; control bytes replaced */
    uint32_t id;              /* this key's number for the broker's run:
                                 never 0, never given to another key */
    uint8_t role;             /* qc_role_t; QC_ROLE_NONE: missing or unknown
                                 (or an "expires" that is no time) */
    int64_t expires;          /* metadata "expires" (qc_cert_expires): its
                                 holder is refused from then on; 0: never */
    int64_t warned;           /* when keyring_warn_expiry last said so */
} keyring_entry_t;

typedef struct keyring keyring_t;

/* Reads the folder; NULL with the reason when it cannot be read. */
keyring_t *keyring_new (const char *dir, char *err, size_t errlen);
void keyring_destroy (keyring_t **self_p);
/* Reads the folder again if it changed: with full false, when the
 * folder's own times say a file was added, removed or renamed (one
 * stat); with full true, also when a file's size or time changed (one
 * stat per file). Logs what was admitted and revoked. True when the
 * admitted set changed (entries looked up before are then invalid). */
bool keyring_refresh (keyring_t *self, bool full);
/* The admitted certificate of key (Z85), or NULL. */
const keyring_entry_t *keyring_lookup (const keyring_t *self, const char *key);
/* The key numbered id this run (admitted now or before), or NULL. */
const char *keyring_key_of (keyring_t *self, uint32_t id);
/* A key admitted earlier in this run and not now: its last name (a
 * revoked certificate), else NULL. */
const char *keyring_revoked (const keyring_t *self, const char *key);
size_t keyring_size (const keyring_t *self);
/* Whether e's certificate has expired at now (wall-clock seconds). */
bool keyring_expired (const keyring_entry_t *e, int64_t now);
/* Says in the log, once a day, that key's certificate expires within
 * QC_CERT_EXPIRY_WARN_DAYS (the folder's reads say it too); nothing for
 * a key not admitted. */
void keyring_warn_expiry (keyring_t *self, const char *key, int64_t now);
/* The same for every admitted certificate (once a day each): a cluster
 * whose programs run for weeks makes no new connection to be warned at,
 * and its workers were all refused in the same second unwarned (an
 * operator's review). */
void keyring_warn_expiring (keyring_t *self, int64_t now);
const char *keyring_dir (const keyring_t *self);

#endif
