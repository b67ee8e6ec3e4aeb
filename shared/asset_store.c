/* See asset_store.h. SHA-256 comes from libsodium (crypto_hash_sha256):
 * a well-kept implementation, already on every machine that has libzmq.
 * The store is a short array scanned linearly: a job names a handful of
 * files (HistoQC's configs name 2 to 10), so a worker holds tens, not
 * thousands. */
#include "shared/asset_store.h"

#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LIMIT ((size_t) 512 << 20)

typedef struct {
    char name[QC_ASSET_HEX_LEN + 1];
    unsigned char *data;
    size_t size;
    uint64_t used;            /* tick of the last put or get */
} entry_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *s_entries;
static size_t s_n, s_cap;
static size_t s_bytes;
static size_t s_limit;        /* 0 until first use: then the default */
static uint64_t s_tick;

void
qc_asset_hash (const void *data, size_t n, char hex[QC_ASSET_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char h[crypto_hash_sha256_BYTES];
    /* libsodium asks for sodium_init before any call (idempotent and
     * thread-safe); the hash itself needs no set-up, so a failure there
     * (no random source) does not stop it */
    int ready = sodium_init ();
    (void) ready;
    crypto_hash_sha256 (h, data ? data : (const void *) "", n);
    for (size_t i = 0; i < sizeof h; i++) {
        hex[2 * i] = digits[h[i] >> 4];
        hex[2 * i + 1] = digits[h[i] & 15];
    }
    hex[QC_ASSET_HEX_LEN] = '\0';
}

bool
qc_asset_name_valid (const char *s)
{
    if (!s)
        return false;
    size_t i = 0;
    for (; s[i]; i++)
        if (i >= QC_ASSET_HEX_LEN
            || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return i == QC_ASSET_HEX_LEN;
}

/* Callers hold s_lock. */
static size_t
limit (void)
{
    if (!s_limit) {
        const char *env = getenv ("QC_ASSET_STORE_MB");
        char *end = NULL;
        unsigned long mb = env && *env ? strtoul (env, &end, 10) : 0;
        s_limit = end && !*end && mb > 0 && mb < ((size_t) 1 << 24)
                      ? (size_t) mb << 20 : DEFAULT_LIMIT;
    }
    return s_limit;
}

static entry_t *
find (const char *name)
{
    for (size_t i = 0; i < s_n; i++)
        if (strcmp (s_entries[i].name, name) == 0)
            return &s_entries[i];
    return NULL;
}

static void
drop (size_t i)
{
    s_bytes -= s_entries[i].size;
    free (s_entries[i].data);
    s_entries[i] = s_entries[--s_n];
}

/* Drops least recently used entries until need more bytes fit. */
static void
make_room (size_t need)
{
    while (s_n && s_bytes + need > limit ()) {
        size_t old = 0;
        for (size_t i = 1; i < s_n; i++)
            if (s_entries[i].used < s_entries[old].used)
                old = i;
        drop (old);
    }
}

static int
fail (char *err, size_t errlen, const char *what, const char *name)
{
    if (err && errlen)
        snprintf (err, errlen, "config asset %.64s: %s", name ? name : "?", what);
    return -1;
}

int
qc_asset_store_put (const char *name, const void *data, size_t n, char *err,
                    size_t errlen)
{
    if (!qc_asset_name_valid (name) || (!data && n))
        return fail (err, errlen, "not a SHA-256 name", name);
    char hex[QC_ASSET_HEX_LEN + 1];
    qc_asset_hash (data, n, hex);
    if (strcmp (hex, name) != 0)
        return fail (err, errlen, "its bytes do not have this SHA-256", name);
    pthread_mutex_lock (&s_lock);
    int rc = 0;
    entry_t *e = find (name);
    if (e)
        e->used = ++s_tick;
    else if (n > limit ())
        rc = fail (err, errlen, "larger than the asset store's limit", name);
    else {
        make_room (n);
        unsigned char *copy = malloc (n ? n : 1);
        entry_t *grown = s_n < s_cap ? s_entries
                         : realloc (s_entries, (s_cap ? 2 * s_cap : 16) * sizeof *grown);
        if (grown && grown != s_entries) {
            s_entries = grown;
            s_cap = s_cap ? 2 * s_cap : 16;
        }
        if (!copy || !grown) {
            free (copy);
            rc = fail (err, errlen, "out of memory", name);
        } else {
            if (n)
                memcpy (copy, data, n);
            e = &s_entries[s_n++];
            memcpy (e->name, name, sizeof e->name);
            e->data = copy;
            e->size = n;
            e->used = ++s_tick;
            s_bytes += n;
        }
    }
    pthread_mutex_unlock (&s_lock);
    return rc;
}

int
qc_asset_store_get (const char *name, unsigned char **data, size_t *n)
{
    if (!name || !data || !n)
        return -1;
    int rc = -1;
    pthread_mutex_lock (&s_lock);
    entry_t *e = find (name);
    if (e && (*data = malloc (e->size ? e->size : 1))) {
        memcpy (*data, e->data, e->size);
        *n = e->size;
        e->used = ++s_tick;
        rc = 0;
    }
    pthread_mutex_unlock (&s_lock);
    return rc;
}

bool
qc_asset_store_has (const char *name)
{
    if (!name)
        return false;
    pthread_mutex_lock (&s_lock);
    bool has = find (name) != NULL;
    pthread_mutex_unlock (&s_lock);
    return has;
}

size_t
qc_asset_store_bytes (void)
{
    pthread_mutex_lock (&s_lock);
    size_t b = s_bytes;
    pthread_mutex_unlock (&s_lock);
    return b;
}

void
qc_asset_store_set_limit (size_t bytes)
{
    pthread_mutex_lock (&s_lock);
    s_limit = bytes ? bytes : DEFAULT_LIMIT;
    make_room (0);
    pthread_mutex_unlock (&s_lock);
}

void
qc_asset_store_clear (void)
{
    pthread_mutex_lock (&s_lock);
    while (s_n)
        drop (s_n - 1);
    pthread_mutex_unlock (&s_lock);
}
