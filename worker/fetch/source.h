/* Byte sources (shared/byte_source.h) for slides: a local file, or an
 * http(s) URL read by Range requests through a block cache.
 *
 * The HTTP source keeps the file's blocks (block_size bytes each,
 * aligned) in memory, at most cache_bytes, least recently used evicted
 * first. A read that misses fetches, in one request, the missing
 * blocks it needs and, when reads go forward through the file (each miss
 * starts where the last fetch ended), read-ahead blocks after them:
 * the window doubles with every such sequential miss up to
 * read_ahead_max blocks and falls back to none on a jump. The tiles of
 * one pyramid level lie together in a tiled TIFF, so a level read is a
 * few large requests instead of one per tile; the directories and
 * other levels are fetched only where read.
 *
 * Opening fetches block 0 (the TIFF header and often its first
 * directory) and learns the size and validators; every later answer
 * must be of that same version of the file (else the read fails: "the
 * file changed on the server").
 *
 * With a disk cache (opts.disk), the blocks fetched are also kept on
 * disk (block_store.h), and a slide read before opens with a
 * conditional request instead: a 304 (unchanged) means block 0 and every
 * block kept come from the disk, and only blocks never fetched go over
 * the network. A changed slide's kept blocks are dropped. A server that ignores Range fails the
 * open with QC_HTTP_ERR_NO_RANGE: download such a file whole
 * (disk_cache.h).
 *
 * Thread safety: reads from several threads are safe; they are served
 * one at a time (a lock around the cache and the one connection). */
#ifndef QC_FETCH_SOURCE_H
#define QC_FETCH_SOURCE_H

#include <stddef.h>

#include "shared/byte_source.h"
#include "worker/fetch/disk_cache.h"
#include "worker/fetch/http.h"

typedef struct {
    size_t block_size;        /* bytes (default 64 KiB) */
    size_t cache_bytes;       /* bound of the block cache (default 64 MiB) */
    int read_ahead_max;       /* blocks a sequential miss may add; 0 turns
                                 read-ahead off (default 16: 1 MiB) */
    qc_http_opts_t http;      /* timeouts, retries */
    qc_disk_cache_t *disk;    /* keeps the blocks fetched on disk, for the
                                 next reader of the slide (block_store.h);
                                 NULL (the default): in memory only */
} qc_source_opts_t;

void qc_source_opts_default (qc_source_opts_t *opts);

/* A source over an http(s) URL; opts NULL for the defaults. NULL with
 * the reason (naming the redacted URL) in err, and the kind of failure
 * in *status when status is not NULL. */
qc_byte_source_t *qc_source_http_open (const char *url, const qc_source_opts_t *opts,
                                       qc_http_status_t *status, char *err,
                                       size_t errlen);

/* The version of the file an http source reads (size and validators,
 * as seen at open: every read is of that version) into *out; -1 when
 * src is not an http source. */
int qc_source_http_version (qc_byte_source_t *src, qc_http_file_t *out);

/* A path, file:// URL or http(s) URL, whichever entry is. */
qc_byte_source_t *qc_source_open (const char *entry, const qc_source_opts_t *opts,
                                  char *err, size_t errlen);

#endif
