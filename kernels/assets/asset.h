/* How the pipeline reads the files a config names (ClassificationModule's
 * example images and masks, HistogramModule's templates): by name, from
 * the job's assets, instead of opening a path on this machine.
 *
 * qc-submit resolves every file a config names on the client's machine
 * and rewrites the reference to "asset/sha256/HEX/NAME": HEX is the
 * SHA-256 of the bytes, which travel with the job into the process's
 * asset store (shared/asset_store.h); NAME is the file's own name, kept
 * because HistoQC names template columns after it. The form has no ':'
 * (HistoQC splits examples= pairs at ':') and no '%' (configparser's
 * interpolation).
 *
 * Any other path is a file on this machine, read only where the process
 * allows it: qc-worker and qc-submit's one-process mode turn disk reads
 * off (workers never look config files up on their own disk); programs
 * and tests that build pipelines from local configs keep them on. */
#ifndef QC_ASSET_H
#define QC_ASSET_H

#include <stddef.h>

#define QC_ASSET_REF_PREFIX "asset/sha256/"

/* 1 when path is an asset reference (prefix, 64 hex digits, '/', a
 * non-empty name without '/'); the hash is copied to hex when not NULL. */
int qc_asset_ref_parse (const char *path, char hex[65]);

/* The name to show a user for path: an asset reference's file name (the
 * user named the file; the hash before it says nothing to them), else
 * path itself. NULL for NULL. */
const char *qc_asset_shown_name (const char *path);

/* Reads the whole file path names: the asset's bytes from the store, or
 * the file (where disk reads are allowed). malloc'd bytes in *data; -1
 * with a reason naming path otherwise. Files over 256 MiB are refused. */
int qc_asset_read (const char *path, unsigned char **data, size_t *size,
                   char *err, size_t errlen);
/* 1 when qc_asset_read would find something to read. */
int qc_asset_exists (const char *path);

/* Reads a whole file of at most max bytes from disk (whatever the
 * setting below): malloc'd bytes, or -1 with a reason naming path. */
int qc_file_read_all (const char *path, size_t max, unsigned char **data,
                      size_t *size, char *err, size_t errlen);

/* Whether paths that are not asset references may be read from this
 * machine's disk (default 1). Process-wide. */
void qc_asset_allow_disk (int allow);

#endif
