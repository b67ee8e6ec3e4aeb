/* Inside the disk cache: the folder, entry paths and the small text
 * files that describe an entry (cache_files.c), shared by the get path
 * (disk_cache.c), eviction (cache_evict.c) and the range-read slides'
 * block store (block_store.c). */
#ifndef QC_FETCH_CACHE_INT_H
#define QC_FETCH_CACHE_INT_H

#include <limits.h>

#include "worker/fetch/disk_cache.h"

struct qc_disk_cache {
    char *dir;
    uint64_t max_bytes;
    qc_http_opts_t http;
};

struct qc_cache_lease {
    int fd;                   /* holds LOCK_SH on the entry's data file */
    char path[PATH_MAX];
};

/* An entry's files. */
typedef struct {
    char name[160];
    char data[PATH_MAX];
    char meta[PATH_MAX];
    char part[PATH_MAX];
    char part_meta[PATH_MAX];
    char blocks[PATH_MAX];        /* a range-read slide's blocks */
    char blocks_meta[PATH_MAX];
} entry_paths_t;

/* Paths of url's entry; -1 when url has no cache name or dir is too long. */
int cache_paths (const qc_disk_cache_t *self, const char *url, entry_paths_t *p);

/* Reads a .meta file into file (size, validators) and *ino (the inode
 * of the slide it describes; 0 for a partial's); -1 when it is missing
 * or not one. */
int meta_read (const char *path, qc_http_file_t *file, uint64_t *ino);
/* Writes a .meta file through a temporary name; -1 (errno set) on
 * failure. shown is the redacted URL, kept for people reading DIR. */
int meta_write (const char *path, const char *shown, const qc_http_file_t *file,
                uint64_t ino);

/* 1 when the slide at data is the one meta describes: its inode and
 * size (*file gets meta's description). */
int entry_valid (const char *data, const char *meta, qc_http_file_t *file);

/* What a .blocks.meta file says (block_store.h): the version of the
 * slide the blocks are of, the data file's inode and block size, and
 * which blocks it holds (a bitmap of nblocks bits). */
typedef struct {
    qc_http_file_t file;
    uint64_t ino;
    size_t block_size;
    uint64_t nblocks;
    uint8_t *have;            /* malloc'd; (nblocks + 7) / 8 bytes */
} blocks_meta_t;

/* The most blocks a .blocks.meta may describe: 2^26 (4 TB in 64 KiB
 * blocks), so that a damaged file cannot ask for a huge bitmap. */
#define BLOCKS_MAX (1ULL << 26)

static inline int
bit_get (const uint8_t *map, uint64_t b)
{
    return (map[b >> 3] >> (b & 7)) & 1;
}

static inline void
bit_set (uint8_t *map, uint64_t b)
{
    map[b >> 3] = (uint8_t) (map[b >> 3] | (1u << (b & 7)));
}

/* A bitmap for a file of size bytes in block_size blocks, m->nblocks
 * set; -1 when the numbers are out of bounds or there is no memory. */
int blocks_meta_alloc (blocks_meta_t *m, int64_t size, size_t block_size);
void blocks_meta_free (blocks_meta_t *m);
/* Reads a .blocks.meta (allocating m->have); -1 when it is missing,
 * damaged or describes blocks out of its own bounds. */
int blocks_meta_read (const char *path, blocks_meta_t *m);
/* Writes one through a temporary name; -1 (errno set) on failure. */
int blocks_meta_write (const char *path, const char *shown, const blocks_meta_t *m);

/* Takes the folder's .lock exclusively (eviction, and a block store's
 * opens and saves, hold it); the descriptor, or -1. */
int cache_lock (const qc_disk_cache_t *self);
void cache_unlock (int fd);
/* Evicts others, least recently used first, until usage + need fits
 * max_bytes: 1 when it fits, 0 when files in use keep it from fitting,
 * -1 when the folder cannot be read. Logs nothing (the caller says
 * what it does about it). */
int cache_make_room (qc_disk_cache_t *self, uint64_t need);

/* The suffixes of an entry's side files; a name with none is a slide. */
#define META_SUFFIX ".meta"
#define PART_SUFFIX ".part"
#define BLOCKS_SUFFIX ".blocks"
#define TMP_MARK ".tmp."

#endif
