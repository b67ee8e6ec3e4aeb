/* How the broker says it refused a peer: one WARNING line
 *
 *     refused PEER: REASON
 *
 * where PEER names the routing id and, when the peer authenticated, its
 * certificate's name, role and key (or, for a handshake, the address and
 * key). A peer that keeps sending what is refused (a revoked worker's
 * heartbeats, a stranger reconnecting) is logged once per REFUSE_QUIET_MS
 * for the same reason, the next line saying how many were not logged
 * meanwhile: every kind of refusal shows, and a flood cannot fill the
 * disk. */
#ifndef QC_REFUSE_H
#define QC_REFUSE_H

#include <stdbool.h>
#include <stdint.h>

#define REFUSE_QUIET_MS 10000
/* Lines a group of peers (refusals_log_as) gets per REFUSE_QUIET_MS for
 * one reason, each peer's own limit aside */
#define REFUSE_GROUP_BURST 5

typedef struct refusals refusals_t;

refusals_t *refusals_new (void);
void refusals_destroy (refusals_t **self_p);
/* Logs "refused PEER: REASON" unless the same peer and reason were
 * logged less than REFUSE_QUIET_MS ago (now: monotonic ms). True when it
 * was logged (a reply to the peer may follow; none when not). */
bool refusals_log (refusals_t *self, int64_t now, const char *peer,
                   const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* The same for a peer of group (another peer string, e.g. its address
 * alone), which gets at most REFUSE_GROUP_BURST lines per
 * REFUSE_QUIET_MS for the reason over all its peers, then one line that
 * says how many more: a stranger who makes a new key for each try is
 * as many peers as keys, and would otherwise be a line per try. A NULL
 * group: refusals_log. */
bool refusals_log_as (refusals_t *self, int64_t now, const char *group, const char *peer,
                      const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
/* Forgets entries quiet for long (bounded memory). */
void refusals_tick (refusals_t *self, int64_t now);
/* Refusals so far, logged or not (for tests and status). */
uint64_t refusals_count (const refusals_t *self);

#endif
