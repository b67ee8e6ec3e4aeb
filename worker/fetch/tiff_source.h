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
 * several handles may share one source. */
#ifndef QC_FETCH_TIFF_SOURCE_H
#define QC_FETCH_TIFF_SOURCE_H

#include <stddef.h>
#include <tiffio.h>

#include "shared/byte_source.h"

/* NULL with the reason (naming the source) in err when the bytes are
 * not a TIFF or cannot be read. */
TIFF *qc_tiff_open_source (qc_byte_source_t *src, char *err, size_t errlen);

/* The first error that libtiff or the source reported on tif since it
 * was opened ("" when none): a failed TIFFReadRawTile's reason, e.g.
 * "GET http://host/a.svs: the server answered 503 ...". */
const char *qc_tiff_source_error (TIFF *tif);

#endif
