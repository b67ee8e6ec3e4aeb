/* A byte source over an http(s) URL: Range requests through a block
 * cache with adaptive read-ahead (contract and policy in source.h).
 *
 * Why a cache of our own rather than libtiff's reads going straight to
 * the network: libtiff reads a directory in many small pieces (the IFD
 * entry count, the entries, each array a tag points to) and a level in
 * tile-sized pieces; one request each would be hundreds of round trips
 * for a level of ~200 tiles. Block-aligned fetches serve the small
 * reads from memory and let adjacent tiles share a request. */
#include "worker/fetch/source.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"
#include "shared/log.h"
#include "shared/url.h"
#include "worker/fetch/block_cache.h"
#include "worker/fetch/block_store.h"

typedef struct {
    qc_byte_source_t base;
    char *url;                /* as given: holds secrets, never shown */
    char shown[512];          /* redacted */
    qc_source_opts_t opts;
    pthread_mutex_t lock;     /* everything below */
    qc_http_conn_t *conn;
    qc_block_cache_t *cache;
    qc_block_store_t *store;  /* blocks kept on disk; NULL: none */
    qc_http_file_t file;      /* size and validators seen at open */
    uint64_t nblocks;
    uint64_t next_seq;        /* the block after the last fetch's end */
    int window;               /* read-ahead blocks for the next sequential miss */
    uint8_t *tmp;             /* one request's bytes: (1 + read_ahead_max
                                 + blocks one read may span) blocks */
    size_t tmp_blocks;
    qc_http_counts_t counts;
    qc_byte_source_stats_t stats;
} http_source_t;

static size_t
block_len (const http_source_t *self, uint64_t b)
{
    uint64_t bs = self->opts.block_size;
    uint64_t end = (b + 1) * bs;
    if (end > (uint64_t) self->file.size)
        end = (uint64_t) self->file.size;
    return (size_t) (end - b * bs);
}

/* Fetches block b and, in the same request, the missing blocks up to
 * want_last (those the current read needs) plus the read-ahead window,
 * stopping at a cached block or the end of the file. */
static int
fetch_run (http_source_t *self, uint64_t b, uint64_t want_last, char *err,
           size_t errlen)
{
    int ra = 0;
    if (self->opts.read_ahead_max > 0) {
        if (b == self->next_seq) {
            ra = self->window;
            self->window = self->window * 2 > self->opts.read_ahead_max
                           ? self->opts.read_ahead_max : self->window * 2;
            if (self->window < 1)
                self->window = 1;
        } else
            self->window = 1;
    }
    uint64_t last = want_last + (uint64_t) ra;
    if (last >= self->nblocks)
        last = self->nblocks - 1;
    if (last - b + 1 > self->tmp_blocks)
        last = b + self->tmp_blocks - 1;
    for (uint64_t k = b + 1; k <= last; k++)
        if (qc_block_cache_has (self->cache, k) || qc_block_store_has (self->store, k)) {
            last = k - 1;
            break;
        }
    uint64_t bs = self->opts.block_size;
    uint64_t off = b * bs;
    size_t len = (size_t) ((last - b) * bs + block_len (self, last));
    size_t got = 0;
    qc_http_status_t st = qc_http_get_range (self->conn, self->url, &self->opts.http,
                                             off, len, self->tmp, &got, &self->file,
                                             NULL, &self->counts, err, errlen);
    if (st != QC_HTTP_OK)
        return -1;
    if (got != len)
        return qc_fail (err, errlen, "GET %s: the body was cut short: %zu of %zu "
                        "bytes of the range arrived", self->shown, got, len);
    for (uint64_t k = b; k <= last; k++)
        if (qc_block_cache_put (self->cache, k, self->tmp + (k - b) * bs,
                                block_len (self, k)) < 0)
            return qc_fail (err, errlen, "%s: out of memory for the block cache",
                            self->shown);
    qc_block_store_write (self->store, b, self->tmp, len);
    self->next_seq = last + 1;
    return 0;
}

/* Block b from the disk into the memory cache: 1 when it came, 0 when
 * the disk does not have it. */
static int
from_store (http_source_t *self, uint64_t b)
{
    size_t len = block_len (self, b);
    if (!qc_block_store_has (self->store, b)
        || qc_block_store_read (self->store, b, self->tmp, len) < 0)
        return 0;
    return qc_block_cache_put (self->cache, b, self->tmp, len) == 0;
}

static int64_t
http_size (qc_byte_source_t *s)
{
    return ((http_source_t *) s)->file.size;
}

static int64_t
http_read_at (qc_byte_source_t *s, uint64_t offset, size_t len, void *buf,
              char *err, size_t errlen)
{
    http_source_t *self = (http_source_t *) s;
    uint64_t size = (uint64_t) self->file.size;
    if (offset >= size)
        return 0;
    if (len > size - offset)
        len = (size_t) (size - offset);
    uint64_t bs = self->opts.block_size;
    uint64_t first = offset / bs, last = (offset + len - 1) / bs;
    pthread_mutex_lock (&self->lock);
    uint64_t requests_before = self->counts.requests;
    size_t done = 0;
    for (uint64_t b = first; b <= last; b++) {
        size_t blen = 0;
        const uint8_t *data = qc_block_cache_get (self->cache, b, &blen);
        if (!data && from_store (self, b))
            data = qc_block_cache_get (self->cache, b, &blen);
        if (!data) {
            if (fetch_run (self, b, last, err, errlen) < 0) {
                pthread_mutex_unlock (&self->lock);
                return -1;
            }
            data = qc_block_cache_get (self->cache, b, &blen);
            if (!data) {
                pthread_mutex_unlock (&self->lock);
                return qc_fail (err, errlen, "%s: the block cache is too small",
                                self->shown);
            }
        }
        uint64_t from = b == first ? offset - b * bs : 0;
        size_t take = blen - (size_t) from;
        if (take > len - done)
            take = len - done;
        memcpy ((uint8_t *) buf + done, data + from, take);
        done += take;
    }
    self->stats.bytes_read += done;
    if (self->counts.requests == requests_before)
        self->stats.cache_hits++;
    pthread_mutex_unlock (&self->lock);
    return (int64_t) done;
}

static void
http_stats (qc_byte_source_t *s, qc_byte_source_stats_t *out)
{
    http_source_t *self = (http_source_t *) s;
    pthread_mutex_lock (&self->lock);
    *out = self->stats;
    out->bytes_fetched = self->counts.bytes;
    out->requests = self->counts.requests;
    out->bytes_kept = qc_block_store_bytes_read (self->store);
    pthread_mutex_unlock (&self->lock);
}

static void
http_close (qc_byte_source_t *s)
{
    http_source_t *self = (http_source_t *) s;
    qc_http_conn_destroy (&self->conn);
    qc_block_cache_destroy (&self->cache);
    qc_block_store_close (&self->store);
    if (self->url) {
        /* the URL may hold a signature: leave no copy in freed memory */
        memset (self->url, 0, strlen (self->url));
        free (self->url);
    }
    free (self->tmp);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

static const qc_byte_source_ops_t http_ops = {
    .size = http_size,
    .read_at = http_read_at,
    .stats = http_stats,
    .close = http_close,
};

void
qc_source_opts_default (qc_source_opts_t *opts)
{
    if (!opts)
        return;
    opts->block_size = 64 * 1024;
    opts->cache_bytes = 64u << 20;
    opts->read_ahead_max = 16;
    qc_http_opts_default (&opts->http);
    opts->disk = NULL;
}

/* Opens from the blocks kept on disk when the server's copy is the one
 * they are of: 1 (block 0 in self->tmp, *got its length, self->file
 * the version), 0 when there are none or they are of another version
 * (the caller fetches block 0), -1 when the request failed. */
static int
open_kept (http_source_t *self, const char *url, size_t *got, qc_http_status_t *status,
           char *err, size_t errlen)
{
    if (!self->opts.disk)
        return 0;
    qc_http_file_t known;
    self->store = qc_block_store_open (self->opts.disk, url, self->opts.block_size, &known);
    if (!self->store) {
        qc_log (QC_LOG_DEBUG, "fetch", "%s: its blocks are kept in memory only (no "
                "memory for the disk cache's store)", self->shown);
        return 0;
    }
    if (known.size <= 0 || !qc_block_store_has (self->store, 0))
        return 0;
    int unchanged = 0;
    qc_http_file_t now;
    *status = qc_http_probe (self->conn, url, &self->opts.http, &known, &unchanged, &now,
                             &self->counts, err, errlen);
    if (*status != QC_HTTP_OK)
        return -1;
    /* no 304 but the same version (a server that ignores If-None-Match)
       does as well, as long as it still honours Range */
    if (!unchanged && (now.size != known.size || !now.ranges
                       || qc_http_same_version (&known, now.etag, now.last_modified,
                                                now.size) != 1))
        return 0;
    self->file = known;
    *got = block_len (self, 0);
    if (qc_block_store_read (self->store, 0, self->tmp, *got) == 0)
        return 1;
    self->file = (qc_http_file_t) { .size = -1 };
    *got = 0;
    return 0;
}

/* The most blocks one read_at may span before it is split: a read
 * longer than this fetches in several requests. */
#define SPAN_BLOCKS 16

int
qc_source_http_version (qc_byte_source_t *src, qc_http_file_t *out)
{
    if (!src || !out || src->ops != &http_ops)
        return -1;
    http_source_t *self = (http_source_t *) src;
    pthread_mutex_lock (&self->lock);
    *out = self->file;
    pthread_mutex_unlock (&self->lock);
    return 0;
}

qc_byte_source_t *
qc_source_http_open (const char *url, const qc_source_opts_t *opts,
                     qc_http_status_t *status, char *err, size_t errlen)
{
    qc_http_status_t st_local;
    if (!status)
        status = &st_local;
    *status = QC_HTTP_ERR_ARGS;
    char shown[512];
    qc_url_redact (url, shown, sizeof shown);
    if (!qc_url_is_remote (url)) {
        qc_set_err (err, errlen, "'%s' is not an http:// or https:// URL", shown);
        return NULL;
    }
    http_source_t *self = calloc (1, sizeof *self);
    if (!self) {
        qc_set_err (err, errlen, "%s: out of memory", shown);
        *status = QC_HTTP_ERR_LOCAL;
        return NULL;
    }
    if (opts)
        self->opts = *opts;
    else
        qc_source_opts_default (&self->opts);
    if (self->opts.block_size < 512 || self->opts.block_size > (16u << 20)
        || self->opts.read_ahead_max < 0 || self->opts.read_ahead_max > 1024) {
        free (self);
        qc_set_err (err, errlen, "%s: bad block size or read-ahead", shown);
        return NULL;
    }
    pthread_mutex_init (&self->lock, NULL);
    snprintf (self->shown, sizeof self->shown, "%s", shown);
    self->base.ops = &http_ops;
    self->base.name = self->shown;
    self->tmp_blocks = (size_t) self->opts.read_ahead_max + SPAN_BLOCKS;
    size_t min_cache = 2 * self->tmp_blocks * self->opts.block_size;
    if (self->opts.cache_bytes < min_cache)
        self->opts.cache_bytes = min_cache;   /* a run must fit twice */
    self->url = strdup (url);
    self->conn = qc_http_conn_new ();
    self->cache = qc_block_cache_new (self->opts.block_size, self->opts.cache_bytes);
    self->tmp = malloc (self->tmp_blocks * self->opts.block_size);
    if (!self->url || !self->conn || !self->cache || !self->tmp) {
        http_close (&self->base);
        qc_set_err (err, errlen, "%s: out of memory", shown);
        *status = QC_HTTP_ERR_LOCAL;
        return NULL;
    }
    /* a slide read before: one conditional request, and block 0 from
       the disk when the server's copy is unchanged */
    size_t got = 0;
    int kept = open_kept (self, url, &got, status, err, errlen);
    if (kept < 0) {
        http_close (&self->base);
        return NULL;
    }
    /* else block 0, which also tells the size, the validators and
       whether the server honours Range */
    if (!kept) {
        *status = qc_http_get_range (self->conn, url, &self->opts.http, 0,
                                     self->opts.block_size, self->tmp, &got, NULL,
                                     &self->file, &self->counts, err, errlen);
        if (*status != QC_HTTP_OK) {
            http_close (&self->base);
            return NULL;
        }
    }
    if (self->file.size < 0) {
        *status = QC_HTTP_ERR_PROTOCOL;
        qc_set_err (err, errlen, "GET %s: the server did not say how large the file is "
                    "(no Content-Length, and no answer to a Range request): serve slides "
                    "from a server that sends their length (nginx, Apache, S3 and GCS "
                    "do), not one that streams them", shown);
        http_close (&self->base);
        return NULL;
    }
    if (!self->file.ranges && (uint64_t) self->file.size > got) {
        *status = QC_HTTP_ERR_NO_RANGE;
        qc_set_err (err, errlen, "GET %s: the server does not honour Range requests "
                    "(download the file whole)", shown);
        http_close (&self->base);
        return NULL;
    }
    if (self->file.size == 0) {
        *status = QC_HTTP_ERR_SHORT;
        qc_set_err (err, errlen, "GET %s: the file is empty", shown);
        http_close (&self->base);
        return NULL;
    }
    uint64_t bs = self->opts.block_size;
    self->nblocks = ((uint64_t) self->file.size + bs - 1) / bs;
    if (got != block_len (self, 0)) {
        *status = QC_HTTP_ERR_SHORT;
        qc_set_err (err, errlen, "GET %s: the first block was cut short", shown);
        http_close (&self->base);
        return NULL;
    }
    qc_block_cache_put (self->cache, 0, self->tmp, got);
    if (self->store && !kept) {
        /* a new or changed slide: its kept blocks (if any) go */
        qc_block_store_begin (self->store, &self->file);
        qc_block_store_write (self->store, 0, self->tmp, got);
    }
    self->next_seq = 1;
    self->window = 1;
    *status = QC_HTTP_OK;
    return &self->base;
}
