/* One TIFF directory's entries read straight from its bytes, for what
 * libtiff does not hand out as OpenSlide reads it: rationals (libtiff
 * gives floats; OpenSlide divides in double) and tags libtiff does not
 * know (NDPI's format flag). Used by tiff_meta.c on directory 0. */
#ifndef QC_SLIDE_TIFF_IFD_H
#define QC_SLIDE_TIFF_IFD_H

#include <stddef.h>
#include <stdint.h>

#include "shared/byte_source.h"

typedef struct {
    qc_byte_source_t *src;
    int big, be;              /* BigTIFF; big-endian file */
    uint8_t *entries;         /* every entry of the directory */
    uint64_t count;
} ifd_t;

/* Reads the entries of the directory at off into d (src, big and be
 * set by the caller; d->entries is the caller's to free). 0, or -1
 * (why). */
int ifd_load (ifd_t *d, uint64_t off, char *why, size_t whylen);
/* The entry of tag: 1 (its type and count, and *field: the entry's
 * value field, which holds the value or its offset); 0 none. */
int ifd_find (const ifd_t *d, uint16_t tag, uint16_t *type, uint64_t *count,
              const uint8_t **field);
/* The first value of a FLOAT, DOUBLE, RATIONAL or SRATIONAL tag, as
 * OpenSlide reads it: 1 (*out), 0 absent or of another type, -1 (why)
 * the source failed. */
int ifd_float (const ifd_t *d, uint16_t tag, double *out, char *why, size_t whylen);

#endif
