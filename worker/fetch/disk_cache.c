/* The disk cache's get path: validate, reuse, or download (resuming)
 * under the entry's .part lock, then lease (contract in disk_cache.h).
 *
 * A get goes round a small loop, at most MAX_ROUNDS times: whenever a
 * file it locked turns out to have been renamed or deleted by another
 * thread or process meanwhile (checked by comparing the locked inode
 * with the path's), it starts again from what the folder holds now. */
#include "worker/fetch/cache_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/log.h"
#include "shared/result.h"
#include "shared/sync_dir.h"
#include "shared/url.h"

#define MAX_ROUNDS 8

/* Whether this process opens dir for the first time (the last folder
 * opened is kept): a program checks its cache at start and opens it
 * again to run, and said its folder's mode twice. */
static bool
first_open_of (const char *dir)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char last[PATH_MAX];
    pthread_mutex_lock (&lock);
    bool first = strcmp (last, dir) != 0;
    if (first)
        snprintf (last, sizeof last, "%s", dir);
    pthread_mutex_unlock (&lock);
    return first;
}

qc_disk_cache_t *
qc_disk_cache_open (const char *dir, uint64_t max_bytes, const qc_http_opts_t *http,
                    char *err, size_t errlen)
{
    if (!dir || !*dir || max_bytes == 0) {
        qc_set_err (err, errlen, "the cache needs a folder and a size limit above 0");
        return NULL;
    }
    if (strlen (dir) > PATH_MAX - 200) {
        qc_set_err (err, errlen, "%s: the cache folder's path is too long", dir);
        return NULL;
    }
    /* slides are patient data: the cache is this user's alone */
    if (mkdir (dir, 0700) != 0 && errno != EEXIST) {
        qc_set_err (err, errlen, "%s: cannot create the cache folder: %s", dir, strerror (errno));
        return NULL;
    }
    struct stat st;
    if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode) || access (dir, W_OK | X_OK) != 0) {
        qc_set_err (err, errlen, "%s: not a folder this process can write into", dir);
        return NULL;
    }
    /* one another user made (a /tmp name taken first): that user could
       read every slide cached there, and put other bytes in its place.
       root's (a group's folder root made, /var/cache) is trusted: root
       may read and write every file anyway */
    if (st.st_uid != geteuid () && st.st_uid != 0) {
        qc_set_err (err, errlen, "%s: the cache folder belongs to another user (uid %u): "
                    "give --cache DIR, a folder of this user's", dir, (unsigned) st.st_uid);
        return NULL;
    }
    /* this user's, but open to others (made by an older build, or given
       so): said, not changed, since --cache may name a folder that is
       more than the cache's */
    if ((st.st_mode & 077) && first_open_of (dir))
        qc_log (QC_LOG_WARNING, "cache", "%s: other users may read the cached slides "
                "(mode %03o): slides are patient data; chmod 700 %s", dir,
                (unsigned) (st.st_mode & 0777), dir);
    qc_disk_cache_t *self = calloc (1, sizeof *self);
    if (!self || !(self->dir = strdup (dir))) {
        free (self);
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    self->max_bytes = max_bytes;
    if (http)
        self->http = *http;
    else
        qc_http_opts_default (&self->http);
    self->http.cancel = NULL;
    return self;
}

void
qc_disk_cache_close (qc_disk_cache_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->dir);
    free (*self_p);
    *self_p = NULL;
}

uint64_t
qc_disk_cache_max (const qc_disk_cache_t *self)
{
    return self ? self->max_bytes : 0;
}

int
qc_disk_cache_has (qc_disk_cache_t *self, const char *url)
{
    entry_paths_t p;
    qc_http_file_t file;
    return self && url && cache_paths (self, url, &p) == 0
           && entry_valid (p.data, p.meta, &file);
}

const char *
qc_cache_lease_path (const qc_cache_lease_t *lease)
{
    return lease ? lease->path : NULL;
}

void
qc_cache_lease_release (qc_cache_lease_t **lease_p)
{
    if (!lease_p || !*lease_p)
        return;
    close ((*lease_p)->fd);   /* drops the shared lock */
    free (*lease_p);
    *lease_p = NULL;
}

/* 1 when fd is still the file at path. */
static int
same_inode (int fd, const char *path)
{
    struct stat a, b;
    return fstat (fd, &a) == 0 && stat (path, &b) == 0 && a.st_ino == b.st_ino
           && a.st_dev == b.st_dev;
}

/* A shared lock on the slide at path, its last use set to now. */
static int
take_lease (const char *path, qc_cache_lease_t **lease)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (flock (fd, LOCK_SH) != 0 || !same_inode (fd, path)) {
        close (fd);
        return -1;
    }
    struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
    futimens (fd, ts);   /* the LRU order; a failure only ages it */
    qc_cache_lease_t *l = calloc (1, sizeof *l);
    if (!l) {
        close (fd);
        return -1;
    }
    l->fd = fd;
    snprintf (l->path, sizeof l->path, "%s", path);
    *lease = l;
    return 0;
}

/* Everything one get needs, passed down. */
typedef struct {
    qc_disk_cache_t *cache;
    const char *url;
    char shown[512];
    entry_paths_t p;
    qc_http_opts_t http;
    qc_http_conn_t *conn;
    qc_http_counts_t counts;
    qc_cache_info_t *info;
} get_t;

/* bytes in words: "14.7 MB", "1.25 GB" (decimal, as --cache-max). */
static void
size_words (uint64_t bytes, char *buf, size_t len)
{
    double b = (double) bytes;
    if (b >= 1e9)
        snprintf (buf, len, "%.3g GB", b / 1e9);
    else if (b >= 1e6)
        snprintf (buf, len, "%.3g MB", b / 1e6);
    else
        snprintf (buf, len, "%.3g kB", b / 1e3);
}

/* A write into the cache that failed with errno e: on a disk that
 * refuses writes (full, over quota, failing) the machine's trouble, which
 * the broker takes as such (the slide to another worker, this one paused,
 * marked for a rerun where it stands): before, every slide by URL failed
 * at once on such a worker, for good, while it kept taking slides (a
 * user's review). -1. */
static int
write_failed (const char *path, int e, char *err, size_t errlen)
{
    if (qc_errno_disk_refused (e))
        return qc_fail (err, errlen, "%s: cannot write into the cache: %s ("
                        QC_RESULT_CACHE_DISK ", not the slide's fault: free space there, "
                        "or give qc-worker another --cache" QC_RESULT_RETRY_MARK, path,
                        strerror (e));
    return qc_fail (err, errlen, "%s: cannot write into the cache: %s", path, strerror (e));
}

/* Downloads the version now describes into the entry, resuming a
 * partial of that version. 0 done; 1 start over (another caller
 * finished it, or the .part went away meanwhile); -1 failed. */
static int
download (get_t *g, const qc_http_file_t *now, char *err, size_t errlen)
{
    entry_paths_t *p = &g->p;
    int fd = open (p->part, O_RDWR | O_CREAT | O_CLOEXEC, 0600);   /* patient data */
    if (fd < 0)
        return write_failed (p->part, errno, err, errlen);
    if (flock (fd, LOCK_EX) != 0 || !same_inode (fd, p->part)) {
        close (fd);
        return 1;
    }
    qc_http_file_t done;
    if (entry_valid (p->data, p->meta, &done)
        && qc_http_same_version (&done, now->etag, now->last_modified, now->size) == 1) {
        /* another caller downloaded it while this one waited, and this
           .part was made afresh after its rename: nothing in it is
           needed (a caller waiting on it finds it gone and goes round) */
        unlink (p->part);
        close (fd);
        return 1;
    }
    struct stat st;
    qc_http_file_t file = *now, had;
    uint64_t from = 0, no_ino;
    if (fstat (fd, &st) == 0 && st.st_size > 0 && meta_read (p->part_meta, &had, &no_ino) == 0
        && qc_http_same_version (&had, now->etag, now->last_modified, now->size) == 1
        && st.st_size < now->size)
        from = (uint64_t) st.st_size;
    if (meta_write (p->part_meta, g->shown, &file, 0) != 0) {
        int e = errno;
        close (fd);
        return write_failed (p->part_meta, e, err, errlen);
    }
    int ev = qc_disk_cache_evict (g->cache, (uint64_t) file.size - from);
    if (ev > 0)
        g->info->evicted += ev;
    uint64_t before = g->counts.bytes;
    qc_http_status_t hs = qc_http_download (g->conn, g->url, &g->http, fd, from, &file,
                                            &g->counts, err, errlen);
    g->info->bytes += g->counts.bytes - before;
    if (from > 0 && g->info->bytes < (uint64_t) file.size) {
        g->info->resumed = 1;
        g->info->resumed_from = from;
    }
    if (hs == QC_HTTP_ERR_LOCAL && qc_errno_disk_refused (errno)) {
        /* the disk is full: the partial goes, or it keeps it full and
           every later slide fails too (a user's review) */
        int e = errno;
        unlink (p->part);
        unlink (p->part_meta);
        close (fd);
        return write_failed (p->part, e, err, errlen);
    }
    if (hs != QC_HTTP_OK) {
        /* keep the partial, described as the version it now holds */
        meta_write (p->part_meta, g->shown, &file, 0);
        close (fd);
        return -1;
    }
    /* a whole-file reply (200) is taken at its Content-Length: one a
       server or proxy cut short, Content-Length and all, was kept as the
       slide, every later run answered "unchanged" (304) and failed on it
       as on a damaged file (a probe's review). The probe a moment before
       gave the size: what disagrees is not kept. */
    if (now->size > 0 && fstat (fd, &st) == 0 && st.st_size != now->size) {
        bool same = strcmp (file.etag, now->etag) == 0
                    && strcmp (file.last_modified, now->last_modified) == 0;
        unlink (p->part);
        unlink (p->part_meta);
        close (fd);
        if (same)
            return qc_fail (err, errlen, "%s: the server sent %lld bytes of the slide, which "
                            "it gave as %lld bytes a moment before (the same ETag and "
                            "Last-Modified: a server or proxy that cuts replies short; "
                            "not kept in the cache" QC_RESULT_RETRY_MARK, g->shown,
                            (long long) st.st_size, (long long) now->size);
        return qc_fail (err, errlen, "%s: the slide changed on the server while it was "
                        "downloaded (%lld bytes, %lld a moment before; not kept in the "
                        "cache" QC_RESULT_RETRY_MARK, g->shown, (long long) st.st_size,
                        (long long) now->size);
    }
    if (fsync (fd) != 0) {
        int e = errno;
        close (fd);
        return write_failed (p->part, e, err, errlen);
    }
    /* the new .meta names the new slide's inode, so no reader pairs it
       with the old slide, nor the old .meta with the new slide
       (cache_files.c); then the slide is renamed into place */
    if (fstat (fd, &st) != 0 || meta_write (p->meta, g->shown, &file, (uint64_t) st.st_ino) != 0
        || rename (p->part, p->data) != 0) {
        int e = errno;
        close (fd);
        return write_failed (p->data, e, err, errlen);
    }
    unlink (p->part_meta);
    qc_sync_dir (g->cache->dir);
    g->info->version = file;
    close (fd);
    qc_log (QC_LOG_DEBUG, "cache", "%s: downloaded %llu bytes%s into %s", g->shown,
            (unsigned long long) g->info->bytes, g->info->resumed ? " (resumed)" : "",
            p->name);
    return 0;
}

/* One round: 0 leased, 1 start over, -1 failed. */
static int
round_once (get_t *g, qc_cache_lease_t **lease, char *err, size_t errlen)
{
    qc_http_file_t known, now;
    int have = entry_valid (g->p.data, g->p.meta, &known);
    int unchanged = 0;
    uint64_t before = g->counts.bytes;
    qc_http_status_t hs = qc_http_probe (g->conn, g->url, &g->http, have ? &known : NULL,
                                         &unchanged, &now, &g->counts, err, errlen);
    g->info->probe_bytes += g->counts.bytes - before;
    if (hs != QC_HTTP_OK)
        return -1;
    g->info->size = (uint64_t) now.size;
    if (have && (unchanged
                 || qc_http_same_version (&known, now.etag, now.last_modified, now.size) == 1)) {
        if (take_lease (g->p.data, lease) == 0) {
            g->info->hit = 1;
            g->info->version = known;
            return 0;
        }
        return 1;   /* evicted meanwhile */
    }
    if ((uint64_t) now.size > g->cache->max_bytes) {
        /* sizes that show the difference (0.0147 GB and 0.01 GB both read
           0.01), and marked: a rerun after --cache-max was raised runs it
           (it stood for good, a user's review) */
        char size[48], max[48];
        size_words ((uint64_t) now.size, size, sizeof size);
        size_words (g->cache->max_bytes, max, sizeof max);
        if (strcmp (size, max) == 0) {
            snprintf (size, sizeof size, "%llu bytes", (unsigned long long) now.size);
            snprintf (max, sizeof max, "%llu bytes", (unsigned long long) g->cache->max_bytes);
        }
        return qc_fail (err, errlen, "%s: the slide (%s) is larger than the whole cache "
                        "(%s; raise qc-worker's --cache-max" QC_RESULT_RETRY_MARK, g->shown,
                        size, max);
    }
    int r = download (g, &now, err, errlen);
    if (r != 0)
        return r;
    return take_lease (g->p.data, lease) == 0 ? 0 : 1;
}

int
qc_disk_cache_get (qc_disk_cache_t *self, const char *url, const atomic_int *cancel,
                   qc_cache_lease_t **lease, qc_cache_info_t *info, char *err,
                   size_t errlen)
{
    qc_cache_info_t local;
    if (!info)
        info = &local;
    *info = (qc_cache_info_t) { .version = { .size = -1 } };
    if (!self || !url || !lease)
        return qc_fail (err, errlen, "qc_disk_cache_get: bad arguments");
    *lease = NULL;
    get_t *g = calloc (1, sizeof *g);
    if (!g)
        return qc_fail (err, errlen, "out of memory");
    g->cache = self;
    g->url = url;
    g->info = info;
    g->http = self->http;
    g->http.cancel = cancel;
    qc_url_redact (url, g->shown, sizeof g->shown);
    int r = -1;
    if (!qc_url_is_remote (url) || cache_paths (self, url, &g->p) < 0)
        qc_set_err (err, errlen, "'%s' is not an http:// or https:// URL", g->shown);
    else if (!(g->conn = qc_http_conn_new ()))
        qc_set_err (err, errlen, "%s: could not start libcurl", g->shown);
    else {
        int n;
        for (n = 0; n < MAX_ROUNDS && (r = round_once (g, lease, err, errlen)) == 1; n++)
            ;
        if (r == 1) {
            qc_set_err (err, errlen, "%s: the cache folder %s kept changing under this "
                        "worker (%d tries)", g->shown, self->dir, MAX_ROUNDS);
            r = -1;
        }
    }
    info->requests = g->counts.requests;
    qc_http_conn_destroy (&g->conn);
    free (g);
    return r;
}
