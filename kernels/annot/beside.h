/* Files that lie beside a slide: HistoQC's AnnotationModule reads a
 * slide's annotation (<name>.xml, <name>.json) from the slide's folder
 * or from a folder the config names.
 *
 * Where a slide is a path, so is the file beside it; where it is an
 * http(s) URL, the file is the URL of that name in the same folder on
 * the server. Reading it is the process's reader's: by default local
 * files only (tests, programs that build pipelines themselves); a worker
 * installs its own (worker/beside_read.c), which holds the file to the
 * worker's --slides-root and --slides-url as it holds slides, and reads
 * URLs with its HTTP client. */
#ifndef QC_ANNOT_BESIDE_H
#define QC_ANNOT_BESIDE_H

#include <stddef.h>

#include "shared/result.h"

/* 1: read (malloc'd bytes in *data, *size of them); 0: there is no such
 * file (a 404 for a URL); -1: it could not be read, err says why. At
 * most max bytes: a larger file is -1. version (NULL: not wanted) gets,
 * on 1, which version of a file by URL was read: its size and the
 * server's ETag and Last-Modified ("" when none), and on -1 which
 * version was there when the read failed after the server described it
 * (too large, no size given); size -1 and "" on 0 and when the server
 * said nothing of it (a rerun stamps and asks a URL's version:
 * client/output_stamps.h). For a local file read, or opened and then
 * refused (too large, a folder), its size and, as Last-Modified, its
 * modification time as .qc-stamps writes one ("seconds.nanoseconds",
 * nine digits), both from when it was opened: the client stamps those
 * when it cannot see the file itself. */
typedef int (qc_beside_reader_fn) (void *ctx, const char *where, size_t max,
                                   unsigned char **data, size_t *size,
                                   qc_result_source_t *version, char *err, size_t errlen);

/* Installs fn with ctx as the process's reader (NULL: the default). */
void qc_beside_set_reader (qc_beside_reader_fn *fn, void *ctx);
/* Puts the default back, when ctx is the installed reader's (a worker
 * that ends does not remove another's). */
void qc_beside_clear_reader (void *ctx);

/* Reads where with the process's reader; the same results. */
int qc_beside_read (const char *where, size_t max, unsigned char **data,
                    size_t *size, qc_result_source_t *version, char *err, size_t errlen);

/* The default reader: a local path or file:// URL, with its version as
 * above (NULL: not wanted); an http(s) URL is -1 (this process has no
 * HTTP client). For a worker's reader to fall back on once it has
 * admitted a path. */
int qc_beside_read_local (const char *path, size_t max, unsigned char **data,
                          size_t *size, qc_result_source_t *version, char *err,
                          size_t errlen);

/* The file name beside origin (a path, or a file:// or http(s) URL): in
 * folder when it is not NULL or empty (an absolute path or an http(s)
 * URL), else in origin's own folder (a URL's without its query, whose
 * signature would be another file's). name is the file's own name (a
 * slide's, decoded), percent-encoded where the result is a URL. 0, or
 * -1 when it does not fit out or folder is neither. */
int qc_beside_where (const char *origin, const char *folder, const char *name,
                     char *out, size_t outlen);

#endif
