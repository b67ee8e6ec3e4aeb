/* libtiff over a byte source (shared/byte_source.h): TIFFClientOpen
 * whose reads go to the source, so a tiled slide served over HTTP is
 * read a directory and a tile at a time, never whole.
 *
 * Read-only; memory mapping is off ('m', and a map procedure that
 * declines), and the tile offset and byte-count arrays are loaded on
 * demand ('O'): a 60,000 x 45,000 slide's level 0 has ~41,000 tiles,
 * whose arrays (~660 KB in a BigTIFF) are never needed to read level 2.
 *
 * The TIFF does not own the source: TIFFClose it first, then close the
 * source. A handle is used by one thread at a time (libtiff's rule);
 * several handles may share one source.
 *
 * It lives in kernels/slide/ (it was written in worker/fetch/) because
 * the slide readers open slides given as byte sources through it, and
 * kernels/ may not call into worker/: it needs only libtiff and
 * shared/byte_source.h. */
#ifndef QC_SLIDE_TIFF_SOURCE_H
#define QC_SLIDE_TIFF_SOURCE_H

#include <stddef.h>
#include <tiffio.h>

#include "shared/byte_source.h"

/* What libtiff said while one handle was open: collected per handle so
 * that threads do not share it, and so that nothing reaches stderr. */
typedef struct {
    int trouble;              /* an error or a warning was reported */
    char msg[512];            /* the first of them */
    int error;                /* an error was (set by the source's handles:
                                 warnings, an unknown tag say, are not) */
    char error_msg[512];      /* the first error */
    int source_failed;        /* a read of the byte source failed (its
                                 words: the handle's qc_tiff_source_error,
                                 or msg once the handle is closed) */
} qc_tiff_diag_t;

/* NULL with the reason (naming the source) in err when the bytes are
 * not a TIFF or cannot be read. */
TIFF *qc_tiff_open_source (qc_byte_source_t *src, char *err, size_t errlen);

/* As qc_tiff_open_source, and: with diag (not NULL; it must outlive the
 * handle), every libtiff error and warning on the handle is noted there
 * (the direct reader treats any as trouble); *src_failed (may be NULL)
 * is 1 when the open failed because a read of the source failed (err
 * then has the source's words, e.g. an HTTP error), 0 otherwise (the
 * bytes are not a TIFF, or a damaged one). */
TIFF *qc_tiff_open_source_diag (qc_byte_source_t *src, qc_tiff_diag_t *diag,
                                int *src_failed, char *err, size_t errlen);

/* 1 when a read of the source failed on tif since it was opened (its
 * reason: qc_tiff_source_error); 0 when none did. */
int qc_tiff_source_failed (TIFF *tif);

/* The first error that libtiff or the source reported on tif since it
 * was opened ("" when none): a failed TIFFReadRawTile's reason, e.g.
 * "GET http://host/a.svs: the server answered 503 ...". */
const char *qc_tiff_source_error (TIFF *tif);

#endif
