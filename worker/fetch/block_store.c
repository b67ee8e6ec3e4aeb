/* A range-read slide's blocks on disk (contract in block_store.h).
 *
 * The store's life: open adopts what the folder holds (a valid
 * .blocks.meta beside the .blocks file it names by inode, of this block
 * size); begin keeps it when the server's version is the same, else
 * starts an empty one (a new sparse file under a temporary name, its
 * .meta written first, then renamed into place: the same order as a
 * whole download's, cache_files.c); writes go into the file and are
 * listed in the map only when a save has synced them. */
#include "worker/fetch/block_store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/url.h"
#include "worker/fetch/cache_int.h"

/* Room asked of the cache at a time: a store grows by this much
 * between two scans of the folder (an eighth of a small cache). */
#define ROOM_STEP (8u << 20)
/* The map is saved every this many bytes written, and at close: a
 * worker killed mid-slide keeps most of what it fetched. */
#define SAVE_STEP (8u << 20)

struct qc_block_store {
    qc_disk_cache_t *cache;
    entry_paths_t p;
    char shown[512];          /* the redacted URL */
    size_t block_size;
    int fd;                   /* NAME.blocks, under LOCK_SH; -1: none */
    blocks_meta_t m;          /* its version, inode and blocks held (some
                                 perhaps not saved yet) */
    int full;                 /* takes no more blocks: no room, or a
                                 write failed (what it has is saved) */
    int orphan;               /* the folder's entry is another file now
                                 (started afresh elsewhere, or removed):
                                 takes and saves nothing */
    uint64_t room;            /* bytes the cache made room for, unused */
    uint64_t unsaved;         /* bytes written since the last save */
    uint64_t bytes_read;      /* served from the disk */
};

/* Forgets the file held (closing it drops the shared lock). */
static void
drop_file (qc_block_store_t *self)
{
    if (self->fd >= 0)
        close (self->fd);
    self->fd = -1;
    blocks_meta_free (&self->m);
    self->unsaved = 0;
}

/* Holds fd and m (taken over) as the store's file. */
static void
hold (qc_block_store_t *self, int fd, blocks_meta_t *m)
{
    drop_file (self);
    self->fd = fd;
    self->m = *m;
    self->full = self->orphan = 0;
    self->room = 0;
}

/* Holds the store the folder has now, when it is valid, of this block
 * size and (want not NULL) of want's version. 0, or -1 when there is
 * none such. The caller holds the folder's lock. */
static int
adopt (qc_block_store_t *self, const qc_http_file_t *want)
{
    blocks_meta_t m;
    if (blocks_meta_read (self->p.blocks_meta, &m) < 0)
        return -1;
    int fd = -1;
    struct stat st;
    if (m.block_size != self->block_size
        || (want && (m.file.size != want->size
                     || qc_http_same_version (&m.file, want->etag, want->last_modified,
                                              want->size) != 1))
        || (fd = open (self->p.blocks, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0
        || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || (uint64_t) st.st_ino != m.ino
        || st.st_size != m.file.size || flock (fd, LOCK_SH | LOCK_NB) != 0) {
        if (fd >= 0)
            close (fd);
        blocks_meta_free (&m);
        return -1;
    }
    struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
    futimens (fd, ts);        /* the LRU order; a failure only ages it */
    hold (self, fd, &m);
    return 0;
}

/* Starts an empty store of version file. The caller holds the lock. */
static int
create (qc_block_store_t *self, const qc_http_file_t *file)
{
    blocks_meta_t m = { .file = *file, .block_size = self->block_size };
    m.file.ranges = 1;
    if (blocks_meta_alloc (&m, file->size, self->block_size) < 0)
        return -1;
    char tmp[PATH_MAX + 64];
    snprintf (tmp, sizeof tmp, "%s" TMP_MARK "%ld.%lx", self->p.blocks, (long) getpid (),
              (unsigned long) pthread_self ());
    int fd = open (tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);   /* patient data */
    struct stat st;
    /* nobody else knows the file yet: the lock is granted at once */
    if (fd < 0 || ftruncate (fd, file->size) != 0 || fstat (fd, &st) != 0
        || flock (fd, LOCK_SH) != 0) {
        int e = errno;
        if (fd >= 0) {
            close (fd);
            unlink (tmp);
        }
        blocks_meta_free (&m);
        errno = e;
        return -1;
    }
    m.ino = (uint64_t) st.st_ino;
    /* the .meta names the new file's inode before the file is in place:
       nobody pairs it with the old file, nor the old .meta with this */
    if (blocks_meta_write (self->p.blocks_meta, self->shown, &m) != 0
        || rename (tmp, self->p.blocks) != 0) {
        int e = errno;
        close (fd);
        unlink (tmp);
        blocks_meta_free (&m);
        errno = e;
        return -1;
    }
    hold (self, fd, &m);
    return 0;
}

qc_block_store_t *
qc_block_store_open (qc_disk_cache_t *cache, const char *url, size_t block_size,
                     qc_http_file_t *known)
{
    if (known)
        *known = (qc_http_file_t) { .size = -1 };
    if (!cache || !url || !known || block_size < 512 || block_size > (16u << 20))
        return NULL;
    qc_block_store_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = -1;
    self->cache = cache;
    self->block_size = block_size;
    if (cache_paths (cache, url, &self->p) < 0) {
        free (self);
        return NULL;
    }
    qc_url_redact (url, self->shown, sizeof self->shown);
    int lock = cache_lock (cache);
    if (lock >= 0) {
        adopt (self, NULL);
        cache_unlock (lock);
    }
    if (self->fd >= 0)
        *known = self->m.file;
    return self;
}

int
qc_block_store_begin (qc_block_store_t *self, const qc_http_file_t *file)
{
    if (!self || !file || file->size <= 0)
        return -1;
    if (self->fd >= 0 && !self->orphan && self->m.file.size == file->size
        && qc_http_same_version (&self->m.file, file->etag, file->last_modified,
                                 file->size) == 1)
        return 0;
    drop_file (self);
    if (!file->etag[0] && !file->last_modified[0])
        return 0;             /* nothing to check a later run against */
    int lock = cache_lock (self->cache);
    if (lock < 0)
        return -1;
    int rc = adopt (self, file) == 0 ? 0 : create (self, file);
    int e = errno;
    cache_unlock (lock);
    if (rc < 0)
        qc_log (QC_LOG_WARNING, "cache", "%s: cannot keep its blocks in %s (%s): they are "
                "kept in memory only", self->shown, self->p.blocks, strerror (e));
    return rc;
}

int
qc_block_store_has (const qc_block_store_t *self, uint64_t b)
{
    return self && self->fd >= 0 && b < self->m.nblocks && bit_get (self->m.have, b);
}

int
qc_block_store_read (qc_block_store_t *self, uint64_t b, void *buf, size_t len)
{
    if (!qc_block_store_has (self, b) || !buf || len == 0 || len > self->block_size)
        return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread (self->fd, (uint8_t *) buf + done, len - done,
                           (off_t) (b * self->block_size + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            qc_log (QC_LOG_WARNING, "cache", "%s: reading block %llu of %s failed (%s): "
                    "its blocks are fetched again", self->shown, (unsigned long long) b,
                    self->p.blocks, n < 0 ? strerror (errno) : "the file is short");
            drop_file (self);
            return -1;
        }
        done += (size_t) n;
    }
    self->bytes_read += len;
    return 0;
}

void
qc_block_store_write (qc_block_store_t *self, uint64_t first, const void *buf, size_t len)
{
    if (!self || self->fd < 0 || self->full || self->orphan || !buf || len == 0)
        return;
    uint64_t bs = self->block_size;
    uint64_t n = (len + bs - 1) / bs;
    if (first >= self->m.nblocks || n > self->m.nblocks - first
        || first * bs + len > (uint64_t) self->m.file.size)
        return;
    if (self->room < len) {
        uint64_t step = ROOM_STEP;
        if (step > qc_disk_cache_max (self->cache) / 8)
            step = qc_disk_cache_max (self->cache) / 8;
        if (step < len)
            step = len;
        if (cache_make_room (self->cache, step) != 1) {
            self->full = 1;
            qc_log (QC_LOG_INFO, "cache", "%s: the cache has no room for more of its blocks "
                    "(--cache-max): the rest are kept in memory only", self->shown);
            return;
        }
        self->room = step;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t w = pwrite (self->fd, (const uint8_t *) buf + done, len - done,
                            (off_t) (first * bs + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            self->full = 1;
            qc_log (QC_LOG_WARNING, "cache", "%s: cannot write its blocks into %s (%s): the "
                    "rest are kept in memory only", self->shown, self->p.blocks,
                    w < 0 ? strerror (errno) : "nothing written");
            return;
        }
        done += (size_t) w;
    }
    self->room -= len;
    for (uint64_t k = first; k < first + n; k++)
        bit_set (self->m.have, k);
    self->unsaved += len;
    if (self->unsaved >= SAVE_STEP)
        qc_block_store_save (self);
}

void
qc_block_store_save (qc_block_store_t *self)
{
    if (!self || self->fd < 0 || self->orphan || self->unsaved == 0)
        return;
    /* the bytes first: the map lists only blocks already on the disk */
    if (fdatasync (self->fd) != 0) {
        qc_log (QC_LOG_WARNING, "cache", "%s: cannot sync %s (%s): its new blocks are not "
                "kept", self->shown, self->p.blocks, strerror (errno));
        self->full = 1;
        return;
    }
    int lock = cache_lock (self->cache);
    if (lock < 0)
        return;               /* the next save tries again */
    blocks_meta_t disk;
    size_t bytes = (size_t) ((self->m.nblocks + 7) / 8);
    if (blocks_meta_read (self->p.blocks_meta, &disk) == 0 && disk.ino == self->m.ino
        && disk.block_size == self->m.block_size && disk.nblocks == self->m.nblocks) {
        /* what other processes saved into the same file is ours too */
        for (size_t i = 0; i < bytes; i++)
            self->m.have[i] |= disk.have[i];
        if (blocks_meta_write (self->p.blocks_meta, self->shown, &self->m) == 0)
            self->unsaved = 0;
        else
            qc_log (QC_LOG_WARNING, "cache", "%s: cannot save the map of its blocks (%s)",
                    self->shown, strerror (errno));
    } else {
        self->orphan = 1;
        qc_log (QC_LOG_DEBUG, "cache", "%s: its blocks' file in the cache was replaced or "
                "removed meanwhile: this reader's blocks are not kept", self->shown);
    }
    blocks_meta_free (&disk);
    cache_unlock (lock);
}

void
qc_block_store_close (qc_block_store_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_block_store_save (*self_p);
    drop_file (*self_p);
    free (*self_p);
    *self_p = NULL;
}

uint64_t
qc_block_store_bytes_read (const qc_block_store_t *self)
{
    return self ? self->bytes_read : 0;
}

void
qc_block_store_remove (qc_disk_cache_t *cache, const char *url)
{
    entry_paths_t p;
    if (!cache || !url || cache_paths (cache, url, &p) < 0)
        return;
    int lock = cache_lock (cache);
    /* the .meta first: a .blocks without one is never used */
    unlink (p.blocks_meta);
    unlink (p.blocks);
    cache_unlock (lock);
}
