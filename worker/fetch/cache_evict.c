/* The disk cache's size: what its files hold, and eviction, least
 * recently used first (contract in disk_cache.h).
 *
 * One evictor at a time, across processes: DIR/.lock is held
 * exclusively while a scan decides and deletes (block stores take it
 * too, to open and save: block_store.c). A block store (NAME.blocks) is
 * counted by the disk space it takes, not its length: it is sparse. A file goes only when
 * an exclusive, non-blocking flock on it succeeds, i.e. nobody holds a
 * lease on it (shared lock) or is downloading into it (exclusive lock
 * on a .part); whoever locks a file afterwards checks that its path
 * still names the inode it locked, and starts over when it does not. */
#include "worker/fetch/cache_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"

typedef enum { F_SKIP, F_DATA, F_PART, F_BLOCKS, F_TMP } file_kind_t;

typedef struct {
    char name[256];
    int64_t size;
    struct timespec used;     /* mtime: the last use of a slide */
    file_kind_t kind;
} cand_t;

static int
ends_with (const char *s, const char *suffix)
{
    size_t n = strlen (s), k = strlen (suffix);
    return n >= k && strcmp (s + n - k, suffix) == 0;
}

static file_kind_t
kind_of (const char *name)
{
    if (name[0] == '.')
        return F_SKIP;        /* ., .., .lock */
    if (strstr (name, TMP_MARK))
        return F_TMP;
    if (ends_with (name, META_SUFFIX))
        return F_SKIP;        /* goes with its slide or partial */
    if (ends_with (name, PART_SUFFIX))
        return F_PART;
    if (ends_with (name, BLOCKS_SUFFIX))
        return F_BLOCKS;
    return F_DATA;
}

/* The cache's slides, partials and stray temporary files. */
static int
scan (const qc_disk_cache_t *self, cand_t **out, size_t *n)
{
    DIR *d = opendir (self->dir);
    if (!d)
        return -1;
    size_t cap = 64;
    *n = 0;
    *out = malloc (cap * sizeof **out);
    struct dirent *e;
    while (*out && (e = readdir (d))) {
        file_kind_t k = kind_of (e->d_name);
        struct stat st;
        if (k == F_SKIP || strlen (e->d_name) >= sizeof (*out)->name
            || fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
            || !S_ISREG (st.st_mode))
            continue;
        if (*n == cap) {
            cand_t *more = realloc (*out, 2 * cap * sizeof **out);
            if (!more)
                break;
            *out = more;
            cap *= 2;
        }
        cand_t *c = &(*out)[(*n)++];
        snprintf (c->name, sizeof c->name, "%s", e->d_name);
        /* a block store is a sparse file: what it holds is what the
           disk gave it, not its length */
        c->size = k == F_BLOCKS ? (int64_t) st.st_blocks * 512 : st.st_size;
        c->used = st.st_mtim;
        c->kind = k;
    }
    closedir (d);
    return *out ? 0 : -1;
}

int64_t
qc_disk_cache_usage (qc_disk_cache_t *self)
{
    cand_t *c = NULL;
    size_t n = 0;
    if (!self || scan (self, &c, &n) < 0) {
        free (c);
        return -1;
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += c[i].size;
    free (c);
    return total;
}

static int
by_last_use (const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    if (x->used.tv_nsec != y->used.tv_nsec)
        return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
    return strcmp (x->name, y->name);
}

/* Deletes name (and its .meta) when nobody uses it; 1 when it went. */
static int
remove_if_unused (const qc_disk_cache_t *self, const cand_t *c)
{
    char path[PATH_MAX], side[PATH_MAX + 8];
    snprintf (path, sizeof path, "%s/%s", self->dir, c->name);
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    int gone = 0;
    struct stat a, b;
    if (flock (fd, LOCK_EX | LOCK_NB) == 0 && fstat (fd, &a) == 0 && stat (path, &b) == 0
        && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
        /* the .meta first: a slide without one is never reused */
        snprintf (side, sizeof side, "%s%s", path, META_SUFFIX);
        unlink (side);
        gone = unlink (path) == 0;
    }
    close (fd);
    return gone;
}

int
cache_lock (const qc_disk_cache_t *self)
{
    char lockpath[PATH_MAX];
    snprintf (lockpath, sizeof lockpath, "%s/.lock", self->dir);
    int lock = open (lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock >= 0 && flock (lock, LOCK_EX) < 0) {
        close (lock);
        return -1;
    }
    return lock;
}

void
cache_unlock (int fd)
{
    if (fd >= 0)
        close (fd);   /* drops the lock */
}

/* Evicts until usage + need fits; *total gets the usage after. The
 * count evicted, or -1 when the folder cannot be read. */
static int
evict (qc_disk_cache_t *self, uint64_t need, uint64_t *total_out)
{
    int lock = cache_lock (self);
    if (lock < 0)
        return -1;
    cand_t *c = NULL;
    size_t n = 0;
    int evicted = 0;
    if (scan (self, &c, &n) < 0) {
        free (c);
        cache_unlock (lock);
        return -1;
    }
    uint64_t total = 0;
    time_t now = time (NULL);
    for (size_t i = 0; i < n; i++) {
        /* a temporary file an hour old was left by a crash */
        if (c[i].kind == F_TMP && now - c[i].used.tv_sec > 3600) {
            char path[PATH_MAX];
            snprintf (path, sizeof path, "%s/%s", self->dir, c[i].name);
            if (unlink (path) == 0)
                continue;
        }
        total += (uint64_t) c[i].size;
    }
    static const char *what[] = {
        [F_DATA] = "a slide", [F_PART] = "a partial download",
        [F_BLOCKS] = "a range-read slide's blocks",
    };
    if (n > 1)                  /* an empty cache: c is NULL, and qsort of NULL is undefined */
        qsort (c, n, sizeof *c, by_last_use);
    for (size_t i = 0; i < n && total + need > self->max_bytes; i++) {
        if (c[i].kind == F_TMP || !remove_if_unused (self, &c[i]))
            continue;
        total -= (uint64_t) c[i].size;
        evicted++;
        qc_log (QC_LOG_DEBUG, "cache", "evicted %s (%lld bytes, %s)", c[i].name,
                (long long) c[i].size, what[c[i].kind]);
    }
    free (c);
    cache_unlock (lock);
    *total_out = total;
    return evicted;
}

int
qc_disk_cache_evict (qc_disk_cache_t *self, uint64_t need)
{
    if (!self)
        return -1;
    uint64_t total = 0;
    int evicted = evict (self, need, &total);
    if (evicted >= 0 && total + need > self->max_bytes)
        qc_log (QC_LOG_WARNING, "cache",
                "%s holds %llu bytes in slides in use; %llu more go over its limit of %llu "
                "for now", self->dir, (unsigned long long) total, (unsigned long long) need,
                (unsigned long long) self->max_bytes);
    return evicted;
}

int
cache_make_room (qc_disk_cache_t *self, uint64_t need)
{
    uint64_t total = 0;
    if (!self || evict (self, need, &total) < 0)
        return -1;
    return total + need <= self->max_bytes;
}
