/* A bounded in-memory cache of a file's fixed-size blocks, least
 * recently used evicted first. A plain data structure: the caller
 * (source_http.c) holds the lock.
 *
 * Blocks are numbered from 0 (block b holds bytes [b * block_size, ...));
 * the last block of a file may be shorter. Lookups are by a small hash
 * table over the slots; the LRU order is a doubly linked list. */
#ifndef QC_FETCH_BLOCK_CACHE_H
#define QC_FETCH_BLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct qc_block_cache qc_block_cache_t;

/* A cache of at most max_bytes / block_size blocks (at least 1); NULL
 * on bad arguments or no memory. Block memory is allocated as blocks
 * are first stored. */
qc_block_cache_t *qc_block_cache_new (size_t block_size, size_t max_bytes);
void qc_block_cache_destroy (qc_block_cache_t **self_p);

/* The block's bytes and length (*len), made the most recently used;
 * NULL when it is not cached. Valid until the next put. */
const uint8_t *qc_block_cache_get (qc_block_cache_t *self, uint64_t block,
                                   size_t *len);
/* 1 when the block is cached (the LRU order is left as it is). */
int qc_block_cache_has (const qc_block_cache_t *self, uint64_t block);
/* Stores len (<= block_size) bytes as block (replacing it if cached),
 * evicting the least recently used block when full. 0, or -1 on bad
 * arguments or no memory. */
int qc_block_cache_put (qc_block_cache_t *self, uint64_t block,
                        const uint8_t *data, size_t len);

size_t qc_block_cache_block_size (const qc_block_cache_t *self);
/* How many blocks it can hold, and holds now. */
size_t qc_block_cache_capacity (const qc_block_cache_t *self);
size_t qc_block_cache_count (const qc_block_cache_t *self);
/* The cached blocks' numbers, most recently used first, into out (at
 * most max); returns how many (for tests). */
size_t qc_block_cache_order (const qc_block_cache_t *self, uint64_t *out,
                             size_t max);

#endif
