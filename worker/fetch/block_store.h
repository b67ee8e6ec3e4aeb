/* A range-read slide's fetched blocks, kept in the worker's disk cache
 * (disk_cache.h) so that reading the slide again downloads nothing: one
 * conditional request at open (a 304: unchanged), then every block read
 * before comes from the disk.
 *
 * Files in the cache folder, beside a whole slide's (same NAME):
 *   NAME.blocks        a sparse file the slide's length: block b, when
 *                      held, at b * block_size
 *   NAME.blocks.meta   the slide's version (size, ETag, Last-Modified),
 *                      the data file's inode, the block size and the
 *                      blocks held (cache_files.c). A block is listed only
 *                      after its bytes were synced to the disk, so the
 *                      map never claims bytes a crash lost.
 *
 * The store is counted in --cache-max by the disk space it takes and
 * evicted least recently used first, like a slide (cache_evict.c); one
 * in use is never evicted (its user holds a shared flock on NAME.blocks).
 * When the cache cannot make room, the store stops growing and the
 * source keeps the rest in memory only.
 *
 * Sharing: the folder's .lock is held while a store is opened, started
 * afresh or its map saved. Several processes may read one slide at once:
 * each writes its blocks into the same file and, when it saves, merges
 * the map on disk into its own. A store that another process started
 * afresh meanwhile (the slide changed on the server) no longer takes this
 * one's blocks; its reads go on from the blocks it had.
 *
 * Not thread safe: one byte source (source_http.c) owns a store and
 * calls it under its own lock. */
#ifndef QC_FETCH_BLOCK_STORE_H
#define QC_FETCH_BLOCK_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "worker/fetch/disk_cache.h"

typedef struct qc_block_store qc_block_store_t;

/* url's store in cache, for blocks of block_size bytes. *known gets the
 * version of the slide whose blocks the store holds, size -1 when it
 * holds none (then nothing is on disk until qc_block_store_begin). NULL
 * on bad arguments or no memory: the caller then reads without it. */
qc_block_store_t *qc_block_store_open (qc_disk_cache_t *cache, const char *url,
                                       size_t block_size, qc_http_file_t *known);

/* The server's file is now of version file: when the store holds that
 * version, nothing changes; else it starts afresh, empty. A file with
 * no validator (ETag or Last-Modified) cannot be checked later and is
 * not kept. 0, or -1 when the store could not be made (it is then off). */
int qc_block_store_begin (qc_block_store_t *self, const qc_http_file_t *file);

/* 1 when block b is held. */
int qc_block_store_has (const qc_block_store_t *self, uint64_t b);
/* Reads block b (len bytes: the block size, less for the last) into
 * buf; 0, or -1 when it is not held or the read failed (the store is
 * then off: the caller fetches the block). */
int qc_block_store_read (qc_block_store_t *self, uint64_t b, void *buf, size_t len);
/* Writes len bytes from buf as blocks first, first + 1, ... (whole
 * blocks but the file's last). Makes room in the cache first. Blocks
 * that cannot be kept (no room, a failed write) are simply not kept. */
void qc_block_store_write (qc_block_store_t *self, uint64_t first, const void *buf,
                           size_t len);
/* Syncs the blocks written and saves the map (also done every few MB
 * written, and by close). */
void qc_block_store_save (qc_block_store_t *self);
/* Saves, releases the file and frees. */
void qc_block_store_close (qc_block_store_t **self_p);

/* Bytes served from the disk so far (the source's bytes_kept). */
uint64_t qc_block_store_bytes_read (const qc_block_store_t *self);

/* Removes url's store from cache (a slide that turned out to be read
 * whole: its blocks are of no more use). */
void qc_block_store_remove (qc_disk_cache_t *cache, const char *url);

#endif
