/* A JPEG frame header read without a decoder (jpeg_frame.h). */
#include "kernels/ops/jpeg_frame.h"

#include <string.h>

/* Markers that have no length: TEM, RST0..RST7 (SOI is the stream's
 * first two bytes, read before). */
static int
no_length (unsigned m)
{
    return m == 0x01 || (m >= 0xD0 && m <= 0xD7);
}

/* SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC). */
static int
is_frame (unsigned m)
{
    return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

int
qc_jpeg_frame_read (const uint8_t *p, size_t n, qc_jpeg_frame_t *f)
{
    if (!p || !f || n < 4 || p[0] != 0xFF || p[1] != 0xD8)
        return -1;
    memset (f, 0, sizeof *f);
    size_t i = 2;
    while (i + 4 <= n) {
        if (p[i] != 0xFF)
            return -1;
        unsigned m = p[i + 1];
        if (m == 0xFF) {                /* a fill byte before a marker */
            i++;
            continue;
        }
        if (no_length (m)) {
            i += 2;
            continue;
        }
        if (m == 0xD9 || m == 0xDA)     /* the end, or a scan, before a frame */
            return -1;
        size_t len = ((size_t) p[i + 2] << 8) | p[i + 3];
        if (len < 2)
            return -1;
        if (is_frame (m)) {
            /* precision, height, width, components, then 3 bytes a
             * component: id, factors (H << 4 | V), quantisation table */
            if (len < 8 || i + 10 > n)
                return -1;
            int ncomp = p[i + 9];
            if (len < 8 + 3 * (size_t) ncomp || i + 10 + 3 * (size_t) ncomp > n)
                return -1;
            f->precision = p[i + 4];
            f->height = (p[i + 5] << 8) | p[i + 6];
            f->width = (p[i + 7] << 8) | p[i + 8];
            f->ncomp = ncomp;
            for (int c = 0; c < 3 && c < ncomp; c++) {
                f->hs[c] = p[i + 11 + 3 * c] >> 4;
                f->vs[c] = p[i + 11 + 3 * c] & 15;
            }
            return 0;
        }
        i += 2 + len;
    }
    return -1;
}

int
qc_jpeg_frame_planes (const qc_jpeg_frame_t *f, const qc_jpeg_batch_t *b,
                      qc_jpeg_planes_t *pl)
{
    if (!f || !b || !pl || f->precision != 8 || f->ncomp != 3 || f->width != b->tile_w
        || f->height != b->tile_h)
        return -1;
    int maxh = 0, maxv = 0;
    for (int c = 0; c < 3; c++) {
        if (f->hs[c] < 1 || f->vs[c] < 1)
            return -1;
        maxh = f->hs[c] > maxh ? f->hs[c] : maxh;
        maxv = f->vs[c] > maxv ? f->vs[c] : maxv;
    }
    /* libtiff refuses a tile whose factors are not its tags' (ops.h) */
    if (b->samp_h > 0
        && (f->hs[0] != b->samp_h || f->vs[0] != b->samp_v || f->hs[1] != 1
            || f->vs[1] != 1 || f->hs[2] != 1 || f->vs[2] != 1))
        return -1;
    memset (pl, 0, sizeof *pl);
    for (int c = 0; c < 3; c++) {
        if (maxh % f->hs[c] || maxv % f->vs[c])
            return -1;
        int he = maxh / f->hs[c], ve = maxv / f->vs[c];
        if (!qc_jpeg_sampling_ok (he, ve))
            return -1;
        pl->he[c] = he;
        pl->ve[c] = ve;
        pl->w[c] = (b->tile_w + he - 1) / he;
        pl->h[c] = (b->tile_h + ve - 1) / ve;
        pl->stride[c] = pl->w[c];
    }
    return 0;
}
