/* A level's tiles as the TIFF stores them, not decoded (tiff_direct.h):
 * one reader of a tile's raw bytes, and its two uses here: every tile of
 * a level fetched into a byte source's cache, and a region's JPEG tiles
 * gathered for a device that decodes them. The block reader
 * (tiff_blocks.c) reads its tiles through it too. */
#include "kernels/slide/tiff_direct.h"
#include "kernels/slide/source.h"

#include <stdlib.h>

#include "shared/err.h"

int
qc_tiff_raw_tile (const qc_tiff_direct_t *self, TIFF *tif, const qc_tiff_diag_t *diag,
                  uint32_t t, uint64_t max, qc_tiff_raw_t *raw, size_t *len, char *why,
                  size_t whylen)
{
    int bad = 0;
    uint64_t n = TIFFGetStrileByteCountWithErr (tif, t, &bad);
    if (bad || n > max)
        return qc_fail (why, whylen, "tile %u: %s", (unsigned) t,
                        bad ? qc_tiff_direct_trouble (self, tif, diag,
                                                      "its byte count cannot be read")
                            : "it has more bytes than a tile takes");
    if (n == 0)
        return 1;
    if (n > raw->cap) {
        uint8_t *grown = realloc (raw->buf, (size_t) n);
        if (!grown)
            return qc_fail (why, whylen, "tile %u: out of memory for its %llu bytes",
                            (unsigned) t, (unsigned long long) n);
        raw->buf = grown;
        raw->cap = (size_t) n;
    }
    if (TIFFReadRawTile (tif, t, raw->buf, (tmsize_t) n) != (tmsize_t) n
        || (diag && diag->trouble))
        return qc_fail (why, whylen, "tile %u: %s", (unsigned) t,
                        qc_tiff_direct_trouble (self, tif, diag, "short read"));
    *len = (size_t) n;
    return 0;
}

int
qc_tiff_direct_fetch_level (const qc_tiff_direct_t *self, int level,
                            const atomic_int *cancel, char *why,
                            size_t whylen)
{
    qc_tiff_diag_t diag = { 0 };
    TIFF *tif = qc_tiff_direct_open_level (self, level, &diag, why, whylen);
    if (!tif)
        return -1;
    qc_tiff_raw_t raw = { 0 };
    int rc = 0;
    ttile_t n = TIFFNumberOfTiles (tif);
    for (ttile_t t = 0; t < n && rc == 0 && !(cancel && atomic_load (cancel)); t++) {
        size_t len;
        /* a tile with no bytes has none to fetch */
        rc = qc_tiff_raw_tile (self, tif, &diag, t, QC_TIFF_MAX_TILE_BYTES, &raw, &len, why,
                               whylen) < 0 ? -1 : 0;
    }
    free (raw.buf);
    TIFFClose (tif);
    return rc;
}

/* The sampling libtiff demands of a level's JPEG tiles (tif_jpeg.c): the
 * first component's factors are the YCbCrSubsampling tag's where the
 * tiles are YCbCr (the markers' where a converter tagged them RGB), else
 * 1 x 1; the other components' 1 x 1. */
static void
demanded_sampling (TIFF *tif, const qc_tiff_tiles_t *l, uint16_t *h, uint16_t *v)
{
    *h = *v = 1;
    if (l->ycbcr_h) {
        *h = (uint16_t) l->ycbcr_h;
        *v = (uint16_t) l->ycbcr_v;
    } else if (l->ycbcr)
        TIFFGetFieldDefaulted (tif, TIFFTAG_YCBCRSUBSAMPLING, h, v);
}

/* rect's tiles gathered from tif into j, each placed where the direct
 * read would copy it, with the picture it holds (a level's last tiles
 * are padded past its edge). 0; QC_SLIDE_NEXT_READER or -1 (why). */
static int
gather (const qc_tiff_direct_t *self, TIFF *tif, const qc_tiff_diag_t *diag,
        const qc_tiff_tiles_t *l, const qc_slide_rect_t *rect, int64_t lx, int64_t ly,
        qc_slide_jpeg_t *j, char *why, size_t whylen)
{
    uint32_t tables_len = 0;
    const void *tables = NULL;
    if (!TIFFGetField (tif, TIFFTAG_JPEGTABLES, &tables_len, &tables))
        tables = NULL, tables_len = 0;
    const int64_t tw = l->tile_w, th = l->tile_h;
    int64_t x0 = lx < 0 ? 0 : lx, y0 = ly < 0 ? 0 : ly;
    int64_t x1 = lx + rect->w > l->w ? l->w : lx + rect->w;
    int64_t y1 = ly + rect->h > l->h ? l->h : ly + rect->h;
    /* A JPEG tile larger than twice its pixels is not one a scanner
     * wrote: the pixel read, a tile at a time, deals with it, rather
     * than this gathering a damaged or hostile file's claimed bytes for
     * every tile at once. */
    const uint64_t max = (uint64_t) (tw * th * 6 + 65536) < QC_TIFF_MAX_TILE_BYTES
                         ? (uint64_t) (tw * th * 6 + 65536) : QC_TIFF_MAX_TILE_BYTES;
    qc_tiff_raw_t raw = { 0 };
    int rc = 0;
    for (int64_t ty = y0 / th; rc == 0 && ty * th < y1; ty++)
        for (int64_t tx = x0 / tw; rc == 0 && tx * tw < x1; tx++) {
            uint32_t t = TIFFComputeTile (tif, (uint32_t) (tx * tw), (uint32_t) (ty * th), 0, 0);
            size_t len = 0;
            int got = qc_tiff_raw_tile (self, tif, diag, t, max, &raw, &len, why, whylen);
            if (got == 1) {
                /* an Aperio scanner's missing tile is drawn from the level
                   before (tiff_direct.c's missing_tile): the pixel read's */
                qc_set_err (why, whylen, "tile %u has no bytes", (unsigned) t);
                rc = QC_SLIDE_NEXT_READER;
            } else if (got < 0)
                rc = qc_tiff_direct_trouble_rc (self, tif);
            else if (qc_slide_jpeg_add (j, tables, tables_len, raw.buf, len, tx * tw - lx,
                                        ty * th - ly,
                                        (int) ((tx + 1) * tw <= l->w ? tw : l->w - tx * tw),
                                        (int) ((ty + 1) * th <= l->h ? th : l->h - ty * th))
                     != 0) {
                qc_set_err (why, whylen, "tile %u is not a JPEG stream, or no memory",
                            (unsigned) t);
                rc = QC_SLIDE_NEXT_READER;
            }
        }
    free (raw.buf);
    return rc;
}

int
qc_tiff_direct_jpeg_tiles (void *reader, const qc_slide_rect_t *rect, const uint8_t bg[3],
                           qc_slide_jpeg_t **out, char *why, size_t whylen)
{
    const qc_tiff_direct_t *self = reader;
    qc_tiff_tiles_t l;
    int64_t lx, ly;
    if (!self || !rect || !bg || !out
        || qc_tiff_direct_level_tiles (self, rect->level, &l) != 0
        || !qc_tiff_direct_aligned (self, rect->level, rect->x0, rect->y0, &lx, &ly)) {
        qc_set_err (why, whylen, "the region starts between pixels of its level");
        return QC_SLIDE_NEXT_READER;
    }
    if (!l.jpeg) {
        qc_set_err (why, whylen, "level %d's tiles are not JPEG", rect->level);
        return QC_SLIDE_NEXT_READER;
    }
    qc_tiff_diag_t diag = { 0 };
    TIFF *tif = qc_tiff_direct_open_level (self, rect->level, &diag, why, whylen);
    if (!tif)
        return qc_tiff_direct_trouble_rc (self, NULL);
    uint16_t sh, sv;
    demanded_sampling (tif, &l, &sh, &sv);
    qc_slide_jpeg_t *j = qc_slide_jpeg_new (l.tile_w, l.tile_h, l.ycbcr, sh, sv, bg);
    int rc = j ? gather (self, tif, &diag, &l, rect, lx, ly, j, why, whylen)
               : qc_fail (why, whylen, "out of memory");
    TIFFClose (tif);
    if (rc != 0) {
        qc_slide_jpeg_free (&j);
        return rc == QC_TIFF_DIRECT_FALLBACK ? QC_SLIDE_NEXT_READER : rc;
    }
    qc_slide_jpeg_done (j);
    *out = j;
    return 0;
}
