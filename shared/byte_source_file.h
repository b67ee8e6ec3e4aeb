/* A byte source (byte_source.h) over a local file. */
#ifndef QC_SHARED_BYTE_SOURCE_FILE_H
#define QC_SHARED_BYTE_SOURCE_FILE_H

#include <stddef.h>

#include "shared/byte_source.h"

/* A source over the regular file at path (pread, counted). NULL with
 * the reason (naming path) in err. */
qc_byte_source_t *qc_byte_source_file_open (const char *path, char *err, size_t errlen);

#endif
