/* The process's store of config assets: the files a job's config names
 * (HistoQC's example images, templates), kept by content. A file's name
 * here is the SHA-256 of its bytes in lower-case hex, so two jobs that
 * name the same bytes share one copy, a name can never stand for other
 * bytes (put checks the hash), and a worker never needs the file's path.
 *
 * qc-submit puts the files it resolved; a worker puts what the broker
 * sends with a job (ASSETS); the pipeline reads them by name through
 * kernels/asset.h. One store per process, safe to use from any thread.
 *
 * Bounded: past the limit (default 512 MiB, QC_ASSET_STORE_MB overrides)
 * the least recently used files are dropped; a worker asks the broker
 * again for a job's files when one it needs is gone (FETCH). */
#ifndef QC_ASSET_STORE_H
#define QC_ASSET_STORE_H

#include <stdbool.h>
#include <stddef.h>

#define QC_ASSET_HEX_LEN 64

/* SHA-256 of n bytes as 64 lower-case hex digits and a NUL. */
void qc_asset_hash (const void *data, size_t n, char hex[QC_ASSET_HEX_LEN + 1]);
/* true when s is exactly 64 lower-case hex digits. */
bool qc_asset_name_valid (const char *s);

/* Keeps a copy of the bytes under name. -1 with a reason when the name
 * is not the bytes' SHA-256, the file is larger than the store's limit,
 * or memory runs out. Putting a name already there only marks it used. */
int qc_asset_store_put (const char *name, const void *data, size_t n,
                        char *err, size_t errlen);
/* A malloc'd copy of the bytes (the caller frees); -1 when absent. */
int qc_asset_store_get (const char *name, unsigned char **data, size_t *n);
bool qc_asset_store_has (const char *name);
/* Bytes held now, and the limit. */
size_t qc_asset_store_bytes (void);
void qc_asset_store_set_limit (size_t bytes);
/* Drops everything (tests). */
void qc_asset_store_clear (void);

#endif
