/* A TIFF directory's entries read from its own bytes; see tiff_ifd.h. */
#include "kernels/slide/tiff_ifd.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "shared/err.h"

/* Entries of a directory read: real files have ~20. */
#define MAX_ENTRIES 4096

static uint64_t
get_uint (const uint8_t *p, int n, int be)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t) p[be ? i : n - 1 - i] << (8 * (n - 1 - i));
    return v;
}

/* Reads len bytes at off exactly; 0, or -1 (why) when the source fails
 * or the file ends first. */
static int
read_exact (qc_byte_source_t *src, uint64_t off, size_t len, void *buf,
            char *why, size_t whylen)
{
    int64_t got = qc_byte_source_read_at (src, off, len, buf, why, whylen);
    if (got < 0)
        return -1;
    if ((size_t) got != len)
        return qc_fail (why, whylen, "%s: the TIFF directory runs past the "
                        "end of the file", qc_byte_source_name (src));
    return 0;
}

/* Reads the entries of the directory at off. 0, or -1 (why). */
int
ifd_load (ifd_t *d, uint64_t off, char *why, size_t whylen)
{
    uint8_t head[8];
    size_t nlen = d->big ? 8 : 2, esize = d->big ? 20 : 12;
    if (read_exact (d->src, off, nlen, head, why, whylen) != 0)
        return -1;
    d->count = get_uint (head, (int) nlen, d->be);
    if (d->count > MAX_ENTRIES)
        return qc_fail (why, whylen, "%s: %" PRIu64 " entries in a TIFF "
                        "directory", qc_byte_source_name (d->src), d->count);
    d->entries = malloc (d->count ? d->count * esize : 1);
    if (!d->entries)
        return qc_fail (why, whylen, "out of memory");
    return read_exact (d->src, off + nlen, d->count * esize, d->entries, why,
                       whylen);
}

/* The entry of tag: 1 (its type and count, and where its value is: the
 * entry's value field, or *at in the file); 0 none. */
int
ifd_find (const ifd_t *d, uint16_t tag, uint16_t *type, uint64_t *count,
          const uint8_t **field)
{
    size_t esize = d->big ? 20 : 12;
    for (uint64_t i = 0; i < d->count; i++) {
        const uint8_t *e = d->entries + i * esize;
        if (get_uint (e, 2, d->be) != tag)
            continue;
        *type = (uint16_t) get_uint (e + 2, 2, d->be);
        *count = get_uint (e + 4, d->big ? 8 : 4, d->be);
        *field = e + (d->big ? 12 : 8);
        return 1;
    }
    return 0;
}

/* The first value of a FLOAT, DOUBLE, RATIONAL or SRATIONAL tag, as
 * OpenSlide reads it: 1 (*out), 0 absent or of another type, -1 (why)
 * the source failed. */
int
ifd_float (const ifd_t *d, uint16_t tag, double *out, char *why,
           size_t whylen)
{
    uint16_t type;
    uint64_t count;
    const uint8_t *field;
    if (!ifd_find (d, tag, &type, &count, &field) || count < 1)
        return 0;
    size_t size = type == TIFF_FLOAT ? 4 : type == TIFF_DOUBLE
                  || type == TIFF_RATIONAL || type == TIFF_SRATIONAL ? 8 : 0;
    if (!size)
        return 0;
    uint8_t v[8];
    size_t room = d->big ? 8 : 4;
    if (size <= room)
        memcpy (v, field, size);
    else if (read_exact (d->src, get_uint (field, (int) room, d->be), size,
                         v, why, whylen) != 0)
        return -1;
    if (type == TIFF_FLOAT) {
        uint32_t bits = (uint32_t) get_uint (v, 4, d->be);
        float f;
        memcpy (&f, &bits, sizeof f);
        *out = f;
    } else if (type == TIFF_DOUBLE) {
        uint64_t bits = get_uint (v, 8, d->be);
        memcpy (out, &bits, sizeof *out);
    } else if (type == TIFF_RATIONAL) {
        *out = (double) (uint32_t) get_uint (v, 4, d->be)
               / (double) (uint32_t) get_uint (v + 4, 4, d->be);
    } else {
        *out = (double) (int32_t) (uint32_t) get_uint (v, 4, d->be)
               / (double) (int32_t) (uint32_t) get_uint (v + 4, 4, d->be);
    }
    return 1;
}

