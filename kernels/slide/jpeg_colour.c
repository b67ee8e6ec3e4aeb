/* See jpeg_colour.h. Markers are FF xx; every one but SOI, EOI, RSTn and
 * TEM carries a 2-byte big-endian length that counts itself. */
#include "kernels/slide/jpeg_colour.h"

#include <string.h>

typedef struct {
    int jfif, adobe, transform, sof, named_rgb;
    int ncomp, hv[4];
} seen_t;

/* Walks one stream's markers into seen; stops at a scan, the end, or a
 * length that runs past the bytes. */
static void
walk (const uint8_t *p, size_t len, seen_t *seen)
{
    size_t i = 0;
    while (i + 4 <= len) {
        if (p[i] != 0xFF) {
            i++;                /* fill or stray bytes between markers */
            continue;
        }
        uint8_t m = p[i + 1];
        if (m == 0xFF) {
            i++;
            continue;
        }
        if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
            i += 2;
            continue;
        }
        if (m == 0xD9 || m == 0xDA)
            return;             /* the end, or a scan: headers are over */
        size_t seg = (size_t) p[i + 2] << 8 | p[i + 3];
        if (seg < 2 || i + 2 + seg > len)
            return;
        const uint8_t *b = p + i + 4;
        size_t n = seg - 2;
        if (m == 0xE0 && n >= 5 && memcmp (b, "JFIF", 5) == 0)
            seen->jfif = 1;
        else if (m == 0xEE && n >= 12 && memcmp (b, "Adobe", 5) == 0) {
            seen->adobe = 1;
            seen->transform = b[11];
        } else if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC
                   && n >= 6) {
            /* SOFn: precision, height, width, Nf, then Nf x (id, hv, tq) */
            int nf = b[5];
            if (nf >= 1 && n >= 6 + 3 * (size_t) nf) {
                seen->sof = 1;
                seen->ncomp = nf;
                for (int c = 0; c < nf && c < 4; c++)
                    seen->hv[c] = b[6 + 3 * c + 1];
                seen->named_rgb = nf == 3 && b[6] == 'R' && b[9] == 'G' && b[12] == 'B';
            }
        }
        i += 2 + seg;
    }
}

int
qc_jpeg_colour (const uint8_t *tables, size_t tables_len, const uint8_t *data,
                size_t len, qc_jpeg_colour_t *out)
{
    if (!out || !data)
        return -1;
    seen_t seen = {0};
    if (tables)
        walk (tables, tables_len, &seen);
    walk (data, len, &seen);
    if (!seen.sof)
        return -1;
    out->h = seen.hv[0] >> 4;
    out->v = seen.hv[0] & 15;
    int subsampled = 0;
    for (int c = 1; c < seen.ncomp && c < 4; c++)
        subsampled |= (seen.hv[c] >> 4) < out->h || (seen.hv[c] & 15) < out->v;
    if (seen.ncomp != 3)
        out->ycbcr = 0;
    else if (seen.adobe)
        out->ycbcr = seen.transform != 0;
    else if (seen.jfif)
        out->ycbcr = 1;
    else
        out->ycbcr = !seen.named_rgb && subsampled;
    return 0;
}
