/* Inside the disk cache: the folder, entry paths and the small text
 * files that describe an entry (cache_files.c), shared by the get path
 * (disk_cache.c) and eviction (cache_evict.c). */
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

/* The suffixes of an entry's side files; a name with none is a slide. */
#define META_SUFFIX ".meta"
#define PART_SUFFIX ".part"
#define TMP_MARK ".tmp."

#endif
