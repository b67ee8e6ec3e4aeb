/* See keyring.h. */
#include "broker/keyring.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "shared/log.h"

#define MOD "broker"
#define MAX_FILES 100000

/* A key seen in this run: its number, the key, and its last name (for
 * "revoked"). */
typedef struct {
    uint32_t id;
    char key[QC_CURVE_KEY_LEN + 1];
    char name[KEYRING_NAME_MAX];
} known_t;

struct keyring {
    char *dir;
    zhashx_t *admitted;       /* key -> keyring_entry_t */
    zhashx_t *known;          /* key -> known_t, every key ever admitted */
    known_t **by_id;          /* the same, by id - 1 (ids are given in turn):
                                 a compaction asks the key of every attempt */
    uint32_t next_id;
    /* what the folder looked like when read */
    struct timespec dir_mtime, dir_ctime;
    ino_t dir_ino;
    uint64_t files_sig;       /* of every file's name, size, time, inode */
    bool said_open;           /* the folder's write bits for others said */
};

static void
free_item (void **item)
{
    free (*item);
    *item = NULL;
}

/* Text safe for one log line: control bytes, quotes and backslashes
 * become '_'. */
static void
safe_copy (char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < len; i++) {
        unsigned char c = (unsigned char) src[i];
        dst[i] = c < 0x20 || c == 0x7f || c == '"' || c == '\\' ? '_' : (char) c;
    }
    dst[i] = 0;
}

static bool
ends_with (const char *s, const char *tail)
{
    size_t n = strlen (s), t = strlen (tail);
    return n >= t && strcmp (s + n - t, tail) == 0;
}

static int
cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The folder's file names, sorted (so that a key given twice is always
 * taken from the same file); NULL when it cannot be read. */
static char **
list_files (const char *dir, size_t *n)
{
    DIR *d = opendir (dir);
    if (!d)
        return NULL;
    size_t cap = 16;
    char **names = malloc (cap * sizeof *names);
    *n = 0;
    struct dirent *e;
    while (names && (e = readdir (d)) && *n < MAX_FILES) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            char **more = realloc (names, 2 * cap * sizeof *names);
            if (!more)
                break;
            names = more;
            cap *= 2;
        }
        if (!(names[*n] = strdup (e->d_name)))
            break;
        (*n)++;
    }
    closedir (d);
    if (names)
        qsort (names, *n, sizeof *names, cmp_names);
    return names;
}

static void
free_list (char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free (names[i]);
    free (names);
}

/* FNV-1a over a field, for the folder's signature. */
static uint64_t
mix (uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t
files_signature (const char *dir, char **names, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    char path[4096];
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, names[i]);
        h = mix (h, names[i], strlen (names[i]) + 1);
        if (stat (path, &st) == 0) {
            h = mix (h, &st.st_size, sizeof st.st_size);
            h = mix (h, &st.st_mtim, sizeof st.st_mtim);
            h = mix (h, &st.st_ino, sizeof st.st_ino);
        }
    }
    return h;
}

/* One file of the folder into admitted (a new table). */
/* A key not known before, numbered next; NULL on memory. */
static known_t *
known_add (keyring_t *self, const char *key)
{
    known_t *k = calloc (1, sizeof *k);
    known_t **by_id = k ? realloc (self->by_id, self->next_id * sizeof *by_id) : NULL;
    if (by_id)
        self->by_id = by_id;
    if (!by_id || zhashx_insert (self->known, key, k)) {
        free (k);
        return NULL;
    }
    k->id = self->next_id++;
    snprintf (k->key, sizeof k->key, "%s", key);
    self->by_id[k->id - 1] = k;
    return k;
}

static void
load_file (keyring_t *self, zhashx_t *admitted, const char *file)
{
    char path[4096];
    snprintf (path, sizeof path, "%s/%s", self->dir, file);
    if (ends_with (file, "_secret")) {
        qc_log (QC_LOG_WARNING, MOD, "%s: a secret certificate in the allowed folder is "
                "not read (it admits nothing; keep secrets away from it)", path);
        return;
    }
    struct stat st;
    if (stat (path, &st) || !S_ISREG (st.st_mode))
        return;                 /* a folder, a socket, a link to nothing */
    if (st.st_size > QC_CERT_MAX_BYTES) {
        qc_log (QC_LOG_WARNING, MOD, "%s: %lld bytes is too large for a certificate: "
                "skipped", path, (long long) st.st_size);
        return;
    }
    zcert_t *cert = qc_cert_read (path);
    if (!cert || strspn (zcert_public_txt (cert), "0") == QC_CURVE_KEY_LEN) {
        qc_log (QC_LOG_WARNING, MOD, "allowed folder: %s is not a CurveZMQ certificate "
                "(qc-keygen makes them): skipped", path);
        zcert_destroy (&cert);
        return;
    }
    const char *role = zcert_meta (cert, "role");
    const char *name = zcert_meta (cert, "name");
    keyring_entry_t *e = calloc (1, sizeof *e);
    if (!e) {
        zcert_destroy (&cert);
        return;
    }
    snprintf (e->key, sizeof e->key, "%s", zcert_public_txt (cert));
    safe_copy (e->name, sizeof e->name, name && *name ? name : file);
    int r = qc_role_parse (role);
    e->role = r > 0 ? (uint8_t) r : QC_ROLE_NONE;
    if (r <= 0)
        qc_log (QC_LOG_WARNING, MOD, "%s: certificate %s has %s role \"%s\": every "
                "message of its holder is refused (make it with qc-keygen --role "
                "worker|client|admin)", path, e->name, role ? "an unknown" : "no",
                role ? role : "");
    int64_t expires = 0;
    int ex = qc_cert_expires (cert, &expires);
    if (ex < 0) {
        /* an end no one can read: refused rather than taken as none */
        qc_log (QC_LOG_WARNING, MOD, "%s: certificate %s has \"expires = %s\", which is "
                "no time (qc-keygen --days writes 2027-11-29T22:10:00Z): every message "
                "of its holder is refused", path, e->name, zcert_meta (cert, "expires"));
        e->role = QC_ROLE_NONE;
    }
    e->expires = ex == 0 ? expires : 0;
    zcert_destroy (&cert);
    keyring_entry_t *first = zhashx_lookup (admitted, e->key);
    if (first && first->role != e->role && first->role != QC_ROLE_NONE) {
        /* which role would win was the file names' order: a copy named
           00-... made a client an admin while it was connected (a
           hospital admin's probe); neither is taken */
        qc_log (QC_LOG_ERROR, MOD, "%s: key %s is also in another file of the folder as %s "
                "(%s), here as %s (%s): one key with two roles is refused until one of "
                "the files goes", path, e->key, first->name, qc_role_name (first->role),
                e->name, qc_role_name (e->role));
        first->role = QC_ROLE_NONE;
        free (e);
        return;
    }
    if (first) {
        qc_log (QC_LOG_WARNING, MOD, "%s: key %s is already admitted as %s (%s): this "
                "file is ignored", path, e->key, first->name, qc_role_name (first->role));
        free (e);
        return;
    }
    known_t *k = zhashx_lookup (self->known, e->key);
    if (!k)
        k = known_add (self, e->key);
    if (!k) {
        free (e);
        return;
    }
    snprintf (k->name, sizeof k->name, "%s", e->name);
    e->id = k->id;
    if (zhashx_insert (admitted, e->key, e))
        free (e);
}

/* Says, once a day, that e expires within QC_CERT_EXPIRY_WARN_DAYS. */
static void
warn_expiry (keyring_entry_t *e, int64_t now)
{
    if (!e || !e->expires || now >= e->expires
        || e->expires - now >= (int64_t) QC_CERT_EXPIRY_WARN_DAYS * 86400
        || (e->warned && now - e->warned < 86400))
        return;
    char when[32], in[32];
    qc_cert_expiry_text (e->expires, when, sizeof when);
    qc_cert_time_left_text (e->expires - now, in, sizeof in);
    qc_log (QC_LOG_WARNING, MOD, "certificate %s (key %s) expires on %s, %s: its holder "
            "is refused from then on; give it a new pair (qc-keygen --force --days N) and "
            "put the new public certificate here", e->name, e->key, when, in);
    e->warned = now;
}

/* Reads the folder into a new table and says what changed; -1 when the
 * folder cannot be read (the old table stays). */
static int
load (keyring_t *self, bool *changed)
{
    struct stat st;
    size_t n = 0;
    if (stat (self->dir, &st))
        return -1;
    char **names = list_files (self->dir, &n);
    zhashx_t *admitted = names ? zhashx_new () : NULL;
    if (!admitted) {
        free_list (names, n);
        return -1;
    }
    zhashx_set_destructor (admitted, free_item);
    /* whoever may write into the folder admits whom they like: said
       (once a run), as a secret certificate others may read is */
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !self->said_open) {
        qc_log (QC_LOG_WARNING, MOD, "the allowed folder %s may be written by %s: they can "
                "admit any certificate, an admin's included (chmod go-w %s)", self->dir,
                st.st_mode & S_IWOTH ? "every user of this machine" : "its group",
                self->dir);
        self->said_open = true;
    }
    for (size_t i = 0; i < n; i++)
        load_file (self, admitted, names[i]);
    self->dir_mtime = st.st_mtim;
    self->dir_ctime = st.st_ctim;
    self->dir_ino = st.st_ino;
    self->files_sig = files_signature (self->dir, names, n);
    free_list (names, n);
    /* what changed, for the log (the first read says what it admits) */
    *changed = false;
    for (keyring_entry_t *e = zhashx_first (admitted); e; e = zhashx_next (admitted)) {
        keyring_entry_t *old = self->admitted ? zhashx_lookup (self->admitted, e->key) : NULL;
        if (!old || old->role != e->role || old->expires != e->expires) {
            char when[32] = "";
            if (e->expires)
                qc_cert_expiry_text (e->expires, when, sizeof when);
            /* one already expired is in the folder but refused: a
               warning, not "admitted" at INFO (a tester's) */
            if (e->expires && keyring_expired (e, (int64_t) time (NULL)))
                qc_log (QC_LOG_WARNING, MOD, "certificate %s (role %s, key %s) expired on "
                        "%s: its holder is refused; give it a new pair (qc-keygen --force "
                        "--days N) and put the new public certificate here", e->name,
                        qc_role_name (e->role), e->key, when);
            else
                qc_log (QC_LOG_INFO, MOD, "admitted certificate %s (role %s, key %s%s%s)",
                        e->name, qc_role_name (e->role), e->key, *when ? ", until " : "",
                        when);
            *changed = true;
        }
        if (old)
            e->warned = old->warned;   /* once a day, across reloads */
        warn_expiry (e, (int64_t) time (NULL));
    }
    for (keyring_entry_t *e = self->admitted ? zhashx_first (self->admitted) : NULL; e;
         e = zhashx_next (self->admitted))
        if (!zhashx_lookup (admitted, e->key)) {
            qc_log (QC_LOG_WARNING, MOD, "revoked certificate %s (role %s, key %s): its "
                    "holder is refused from its next message", e->name,
                    qc_role_name (e->role), e->key);
            *changed = true;
        }
    zhashx_destroy (&self->admitted);
    self->admitted = admitted;
    return 0;
}

keyring_t *
keyring_new (const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (!dir || !*dir || stat (dir, &st) || !S_ISDIR (st.st_mode)) {
        snprintf (err, errlen, "--allow %s: %s", dir ? dir : "(none)",
                  dir && *dir && !stat (dir, &st) ? "not a folder" : strerror (errno));
        return NULL;
    }
    keyring_t *self = calloc (1, sizeof *self);
    bool changed;
    if (!self || !(self->dir = strdup (dir)) || !(self->known = zhashx_new ())) {
        snprintf (err, errlen, "out of memory");
        keyring_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->known, free_item);
    self->next_id = 1;
    if (load (self, &changed)) {
        snprintf (err, errlen, "--allow %s: cannot read the folder: %s", dir,
                  strerror (errno));
        keyring_destroy (&self);
        return NULL;
    }
    if (!zhashx_size (self->admitted))
        qc_log (QC_LOG_WARNING, MOD, "the allowed folder %s holds no certificate: no "
                "worker or client can connect until one is put there", dir);
    return self;
}

void
keyring_destroy (keyring_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    keyring_t *self = *self_p;
    zhashx_destroy (&self->admitted);
    zhashx_destroy (&self->known);
    free (self->by_id);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

static bool
same_time (struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool
keyring_refresh (keyring_t *self, bool full)
{
    if (!self)
        return false;
    struct stat st;
    if (stat (self->dir, &st)) {
        /* the folder went: nobody is admitted any more */
        if (zhashx_size (self->admitted)) {
            qc_log (QC_LOG_WARNING, MOD, "the allowed folder %s cannot be read (%s): "
                    "every certificate is refused until it can", self->dir,
                    strerror (errno));
            zhashx_purge (self->admitted);
            return true;
        }
        return false;
    }
    bool stale = !same_time (st.st_mtim, self->dir_mtime)
                 || !same_time (st.st_ctim, self->dir_ctime) || st.st_ino != self->dir_ino;
    if (!stale && full) {
        size_t n = 0;
        char **names = list_files (self->dir, &n);
        stale = names && files_signature (self->dir, names, n) != self->files_sig;
        free_list (names, n);
    }
    bool changed = false;
    if (stale && load (self, &changed))
        return false;
    return changed;
}

const keyring_entry_t *
keyring_lookup (const keyring_t *self, const char *key)
{
    return self && key ? zhashx_lookup (self->admitted, key) : NULL;
}

const char *
keyring_key_of (keyring_t *self, uint32_t id)
{
    return self && id && id < self->next_id ? self->by_id[id - 1]->key : NULL;
}

const char *
keyring_revoked (const keyring_t *self, const char *key)
{
    if (!self || !key || zhashx_lookup (self->admitted, key))
        return NULL;
    known_t *k = zhashx_lookup (self->known, key);
    return k ? k->name : NULL;
}

size_t
keyring_size (const keyring_t *self)
{
    return self ? zhashx_size (self->admitted) : 0;
}

const char *
keyring_dir (const keyring_t *self)
{
    return self ? self->dir : NULL;
}

bool
keyring_expired (const keyring_entry_t *e, int64_t now)
{
    return e && e->expires && now >= e->expires;
}


void
keyring_warn_expiry (keyring_t *self, const char *key, int64_t now)
{
    warn_expiry (self && key ? zhashx_lookup (self->admitted, key) : NULL, now);
}

void
keyring_warn_expiring (keyring_t *self, int64_t now)
{
    if (!self || !self->admitted)
        return;
    for (keyring_entry_t *e = zhashx_first (self->admitted); e;
         e = zhashx_next (self->admitted))
        warn_expiry (e, now);
}
