/* CurveZMQ for every program: certificates in czmq's zcert format (a
 * public NAME.cert and a secret NAME.cert_secret; metadata "role" and
 * "name"), the roles a certificate can have, the client side of a
 * connection to a broker that runs CurveZMQ (qc-worker, qc-submit,
 * qc-status: their own secret certificate and the broker's public one),
 * and, for those clients, why a handshake failed when it did. The
 * broker's side (its ZAP handler and the folder of admitted
 * certificates) is broker/security.c and broker/keyring.c.
 *
 * The crypto is libzmq's (CURVE); czmq reads and writes the files. */
#ifndef QC_CURVE_H
#define QC_CURVE_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

/* A certificate's role (metadata "role"): what its holder may ask the
 * broker (broker/security.c has the table). */
typedef enum {
    QC_ROLE_NONE = 0,
    QC_ROLE_WORKER = 1,      /* runs tasks: READY, STARTED, RESULT, ... */
    QC_ROLE_CLIENT = 2,      /* submits jobs; sees and uses its own only */
    QC_ROLE_ADMIN = 4,       /* a client that also sees (and may cancel)
                                every job */
    QC_ROLE_BROKER = 8       /* the broker's own: speaks for no peer */
} qc_role_t;

#define QC_CURVE_KEY_LEN 40  /* a key in Z85 text */

/* "worker", "client", "admin", "broker" -> the role; -1 otherwise. */
int qc_role_parse (const char *name);
const char *qc_role_name (int role);

/* A certificate's lifetime (metadata "expires", UTC, as qc-keygen
 * --days writes it: "2027-11-29T22:10:00Z"; a date alone,
 * "2027-11-29", is that day's start). 0 with *at (seconds since the
 * epoch) set; 1 when the certificate has none (it never expires); -1
 * when the value is no such time. A broker refuses a certificate from
 * that second on (broker/security.c). */
int qc_cert_expires (zcert_t *cert, int64_t *at);
/* at as qc-keygen writes it, into buf ("" when at is out of range). */
void qc_cert_expiry_text (int64_t at, char *buf, size_t len);
/* "in 5 days", or under two days "in 23 hours" ("in 0 days" was said
 * of a certificate with most of a day left), of left seconds (> 0). */
void qc_cert_time_left_text (int64_t left, char *buf, size_t len);
/* Certificates that expire within this many days are warned of when
 * loaded (a program's own; the broker's admitted ones). */
#define QC_CERT_EXPIRY_WARN_DAYS 14

/* The certificate in exactly that file (public, or secret with both
 * keys) with its metadata, or NULL when it is none or is larger than
 * QC_CERT_MAX_BYTES. Unlike czmq's zcert_load, never PATH_secret in its
 * place. */
#define QC_CERT_MAX_BYTES (64 * 1024)
zcert_t *qc_cert_read (const char *path);
/* A secret certificate (NAME.cert_secret): NULL with the reason in err
 * when the file cannot be read, is not a certificate, or holds no secret
 * key (a public NAME.cert given by mistake). Warns when other users may
 * read it, and when it has expired or expires within
 * QC_CERT_EXPIRY_WARN_DAYS (a broker refuses it from then on). */
zcert_t *qc_cert_load_secret (const char *path, char *err, size_t errlen);
/* The public key (Z85) of a certificate file, public or secret. */
int qc_cert_load_public (const char *path, char key[QC_CURVE_KEY_LEN + 1],
                         char *err, size_t errlen);

/* A client's CurveZMQ settings: its own secret certificate and the
 * broker's public key. */
typedef struct qc_curve_client qc_curve_client_t;

/* Both paths are needed; NULL with the reason in err. */
qc_curve_client_t *qc_curve_client_new (const char *cert_path,
                                        const char *server_key_path,
                                        char *err, size_t errlen);
void qc_curve_client_destroy (qc_curve_client_t **self_p);
/* Reads the two files again when either changed since last read (a key
 * pair rotated while the program runs): 1 when new keys were loaded, 0
 * when nothing changed, -1 (err says why) when a changed file cannot be
 * read: what did read is taken, the other keeps its old key and is read
 * again on the next call. Not thread-safe: the one thread that connects
 * calls it before it connects. */
int qc_curve_client_reload (qc_curve_client_t *self, char *err, size_t errlen);
/* Makes sock a CurveZMQ client of the broker; before it connects. */
void qc_curve_client_apply (const qc_curve_client_t *self, zsock_t *sock);
/* Its own public key (Z85), for messages. */
const char *qc_curve_client_key (const qc_curve_client_t *self);

/* Why a client's connection to the broker fails its handshake: the
 * socket's events, watched from before it connects. */
typedef struct qc_handshake qc_handshake_t;

/* NULL when the socket cannot be watched (then no reason is known). */
qc_handshake_t *qc_handshake_watch (zsock_t *sock);
/* Stops watching; call before the socket is destroyed. */
void qc_handshake_destroy (qc_handshake_t **self_p);
/* Reads the events so far without blocking: the last handshake failure
 * said in words (what to check), or NULL when none failed since the last
 * one that succeeded. */
const char *qc_handshake_why (qc_handshake_t *self);
/* Whether a handshake with the peer ever succeeded (reads the events so
 * far, as qc_handshake_why): a message sent since may have reached it. */
bool qc_handshake_shook (qc_handshake_t *self);

#endif
