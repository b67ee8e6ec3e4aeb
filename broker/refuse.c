/* See refuse.h. */
#include "broker/refuse.h"

#include <czmq.h>
#include <stdarg.h>
#include <string.h>

#include "shared/log.h"

#define MOD "broker"
/* peer and reason pairs remembered at most (a scan of addresses cannot
 * grow the table without bound: past it, everything is logged) */
#define MAX_ENTRIES 4096

typedef struct {
    int64_t logged;           /* when last logged (a group: since when it
                                 counts its lines) */
    uint64_t quiet;           /* refused since, not logged */
    uint32_t burst;           /* a group: lines logged since then */
} entry_t;

struct refusals {
    zhashx_t *seen;           /* "peer\treason" -> entry_t */
    uint64_t count;
};

static void
free_entry (void **item)
{
    free (*item);
    *item = NULL;
}

refusals_t *
refusals_new (void)
{
    refusals_t *self = calloc (1, sizeof *self);
    if (!self || !(self->seen = zhashx_new ())) {
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->seen, free_entry);
    return self;
}

void
refusals_destroy (refusals_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zhashx_destroy (&(*self_p)->seen);
    free (*self_p);
    *self_p = NULL;
}

/* The entry of key, made (logged now) when there is none and the table
 * has room; NULL otherwise. */
static entry_t *
entry_for (refusals_t *self, const char *key, int64_t now)
{
    entry_t *e = zhashx_lookup (self->seen, key);
    if (e || zhashx_size (self->seen) >= MAX_ENTRIES || !(e = calloc (1, sizeof *e)))
        return e;
    e->logged = now;
    if (zhashx_insert (self->seen, key, e)) {
        free (e);
        return NULL;
    }
    return e;
}

static bool
log_reason (refusals_t *self, int64_t now, const char *group, const char *peer,
            const char *reason)
{
    char key[1536];
    if (!self) {
        qc_log (QC_LOG_WARNING, MOD, "refused %s: %s", peer, reason);
        return true;
    }
    self->count++;
    snprintf (key, sizeof key, "%s\t%s", peer, reason);
    entry_t *e = zhashx_lookup (self->seen, key);
    if (e && now - e->logged < REFUSE_QUIET_MS) {
        e->quiet++;
        return false;
    }
    if (group) {
        /* the group's lines in this window: past its burst, counted and
           said by refusals_tick (a peer not remembered: no table room) */
        char gkey[1536];
        snprintf (gkey, sizeof gkey, "%s\t%s", group, reason);
        entry_t *g = entry_for (self, gkey, now);
        if (g && !g->quiet && now - g->logged >= REFUSE_QUIET_MS) {
            g->logged = now;
            g->burst = 0;
        }
        if (g && g->burst >= REFUSE_GROUP_BURST) {
            g->quiet++;
            return false;
        }
        if (g)
            g->burst++;
    }
    if (e && e->quiet)
        qc_log (QC_LOG_WARNING, MOD, "refused %s: %s (and %" PRIu64 " times in the "
                "last %" PRId64 " s, not logged)", peer, reason, e->quiet,
                (now - e->logged) / 1000);
    else
        qc_log (QC_LOG_WARNING, MOD, "refused %s: %s", peer, reason);
    if (!e && zhashx_size (self->seen) < MAX_ENTRIES && (e = calloc (1, sizeof *e))
        && zhashx_insert (self->seen, key, e)) {
        free (e);
        e = NULL;
    }
    if (e) {
        e->logged = now;
        e->quiet = 0;
    }
    return true;
}

/* The formatted reason, then log_reason: both entry points below */
static bool
log_formatted (refusals_t *self, int64_t now, const char *group, const char *peer,
               const char *fmt, va_list ap)
{
    char reason[1024];
    vsnprintf (reason, sizeof reason, fmt, ap);
    return log_reason (self, now, group, peer, reason);
}

bool
refusals_log (refusals_t *self, int64_t now, const char *peer, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    bool said = log_formatted (self, now, NULL, peer, fmt, ap);
    va_end (ap);
    return said;
}

bool
refusals_log_as (refusals_t *self, int64_t now, const char *group, const char *peer,
                 const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    bool said = log_formatted (self, now, group, peer, fmt, ap);
    va_end (ap);
    return said;
}

void
refusals_tick (refusals_t *self, int64_t now)
{
    if (!self || !zhashx_size (self->seen))
        return;
    zlist_t *old = zlist_new ();
    for (entry_t *e = zhashx_first (self->seen); e && old; e = zhashx_next (self->seen)) {
        const char *key = zhashx_cursor (self->seen);
        if (e->quiet && now - e->logged >= REFUSE_QUIET_MS) {
            /* what was not logged is said once it goes quiet */
            const char *tab = strchr (key, '\t');
            qc_log (QC_LOG_WARNING, MOD, "refused %.*s: %s (%" PRIu64 " more times in the "
                    "last %" PRId64 " s, not logged one by one)",
                    tab ? (int) (tab - key) : 0, key, tab ? tab + 1 : key, e->quiet,
                    (now - e->logged) / 1000);
            e->quiet = 0;
            e->logged = now;
            e->burst = 0;
        } else if (!e->quiet && now - e->logged > 6 * REFUSE_QUIET_MS)
            zlist_append (old, (void *) key);
    }
    /* each key is its own entry's: deleting one leaves the others' */
    for (const char *k = old ? zlist_first (old) : NULL; k; k = zlist_next (old))
        zhashx_delete (self->seen, k);
    zlist_destroy (&old);
}

uint64_t
refusals_count (const refusals_t *self)
{
    return self ? self->count : 0;
}
