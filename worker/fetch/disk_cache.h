/* The worker's slide cache on disk (qc-worker --cache DIR --cache-max
 * GB): slides that must be read whole (NDPI, MIRAX, anything OpenSlide
 * opens by path) are downloaded into DIR once and reused while the
 * server's copy is unchanged.
 *
 * Files in DIR, for an entry NAME (url.h's qc_url_cache_name: the URL's
 * file name plus a hash; never over 130 characters):
 *   NAME            the slide, complete
 *   NAME.meta       its redacted URL, size, ETag, Last-Modified and
 *                   inode (a .meta counts only beside the slide file it
 *                   was written for)
 *   NAME.part       a download under way or cut short
 *   NAME.part.meta  the version (size, validators) NAME.part holds
 *   NAME.blocks, NAME.blocks.meta
 *                   a range-read slide's fetched blocks (block_store.h)
 *   .lock           taken while evicting, and by block stores
 * Every file is written under a temporary name and renamed into place.
 *
 * qc_disk_cache_get: before any reuse, a conditional request (a 304
 * means unchanged) checks the entry against the server; a changed file
 * is downloaded again. A download resumes a NAME.part of the same
 * version from its length (Range, guarded by If-Range). Before a
 * download, entries are evicted until the new one fits in max_bytes,
 * least recently used first (the last use is the data file's mtime).
 *
 * Sharing: any number of threads and worker processes may use one DIR.
 * A download holds an exclusive flock on its NAME.part (a second caller
 * for the same slide waits for it, then reuses the result); a lease
 * holds a shared flock on NAME, and eviction skips locked files. */
#ifndef QC_FETCH_DISK_CACHE_H
#define QC_FETCH_DISK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "worker/fetch/http.h"

typedef struct qc_disk_cache qc_disk_cache_t;
typedef struct qc_cache_lease qc_cache_lease_t;

/* Opens (creating it when missing) the cache folder dir, bounded by
 * max_bytes (> 0). http: timeouts and retries, NULL for the defaults.
 * NULL with the reason in err. */
qc_disk_cache_t *qc_disk_cache_open (const char *dir, uint64_t max_bytes,
                                     const qc_http_opts_t *http, char *err,
                                     size_t errlen);
/* Closes; leases already given out stay valid. */
void qc_disk_cache_close (qc_disk_cache_t **self_p);

/* What one get did. */
typedef struct {
    int hit;                  /* the entry was reused: nothing downloaded */
    int resumed;              /* a partial download was continued */
    uint64_t resumed_from;    /* ... from this byte */
    uint64_t bytes;           /* body bytes of the download (0 on a hit) */
    uint64_t probe_bytes;     /* body bytes of the validation (0 or 1) */
    uint64_t requests;        /* HTTP requests made, retries included */
    uint64_t size;            /* the slide's size */
    int evicted;              /* entries removed to make room */
    qc_http_file_t version;   /* the version of the file leased (its size
                                 and validators); size -1 on failure */
} qc_cache_info_t;

/* A validated local copy of url, held against eviction by *lease until
 * qc_cache_lease_release. 0, or -1 with the reason (naming the redacted
 * URL) in err. cancel (may be NULL): when it becomes non-zero, a
 * download stops soon and keeps its partial file. info may be NULL. */
int qc_disk_cache_get (qc_disk_cache_t *self, const char *url,
                       const atomic_int *cancel, qc_cache_lease_t **lease,
                       qc_cache_info_t *info, char *err, size_t errlen);

/* 1 when the cache holds a complete copy of url (of some version: get
 * still checks it against the server), else 0. Looks at the folder
 * only: no request. */
int qc_disk_cache_has (qc_disk_cache_t *self, const char *url);

/* The local file of a lease (valid until it is released). */
const char *qc_cache_lease_path (const qc_cache_lease_t *lease);
void qc_cache_lease_release (qc_cache_lease_t **lease_p);

/* The size limit (--cache-max), in bytes; 0 for NULL. */
uint64_t qc_disk_cache_max (const qc_disk_cache_t *self);

/* Bytes held by the cache's slides, partial downloads and range-read
 * slides' kept blocks (block_store.h) now. */
int64_t qc_disk_cache_usage (qc_disk_cache_t *self);
/* Evicts (least recently used first, skipping files in use) until
 * usage + need <= max_bytes. Returns how many entries went, or -1 when
 * the folder cannot be read. Called by get; public for the tests. */
int qc_disk_cache_evict (qc_disk_cache_t *self, uint64_t need);

#endif
