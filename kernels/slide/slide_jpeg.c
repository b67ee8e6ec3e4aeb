/* A region's JPEG tiles, compressed (slide.h's qc_slide_jpeg_tiles):
 * the reader that would read the region's pixels gathers them, and this
 * file holds what it gathers. */
#include "kernels/slide/slide.h"
#include "kernels/slide/source.h"

#include <stdlib.h>
#include <string.h>

#include "shared/err.h"
#include "shared/log.h"

qc_slide_jpeg_t *
qc_slide_jpeg_new (int tile_w, int tile_h, int ycbcr, int samp_h, int samp_v,
                   const uint8_t bg[3])
{
    if (tile_w < 1 || tile_h < 1 || !bg)
        return NULL;
    qc_slide_jpeg_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->batch.tile_w = tile_w;
    self->batch.tile_h = tile_h;
    self->batch.ycbcr = ycbcr != 0;
    self->batch.samp_h = samp_h;
    self->batch.samp_v = samp_v;
    memcpy (self->batch.bg, bg, 3);
    return self;
}

void
qc_slide_jpeg_free (qc_slide_jpeg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->tiles);
    free ((*self_p)->at);
    free ((*self_p)->data);
    free (*self_p);
    *self_p = NULL;
}

/* Room for n more bytes of streams. */
static int
reserve (qc_slide_jpeg_t *self, size_t n)
{
    if (n <= self->cap - self->len)
        return 0;
    size_t cap = self->cap ? self->cap : (size_t) 1 << 20;
    while (cap - self->len < n) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    uint8_t *grown = realloc (self->data, cap);
    if (!grown)
        return -1;
    self->data = grown;
    self->cap = cap;
    return 0;
}

int
qc_slide_jpeg_add (qc_slide_jpeg_t *self, const uint8_t *tables,
                   size_t tables_len, const uint8_t *data, size_t len,
                   int64_t x, int64_t y, int w, int h)
{
    /* a whole stream starts with SOI (FF D8) and a TIFF's tables stream
     * is SOI, tables, EOI (FF D9): the tables without their EOI, then
     * the tile without its SOI, is one stream with both */
    if (!self || !data || len < 4 || data[0] != 0xFF || data[1] != 0xD8 || w < 1
        || h < 1 || w > self->batch.tile_w || h > self->batch.tile_h)
        return -1;
    int splice = tables && tables_len >= 4 && tables[0] == 0xFF
                 && tables[1] == 0xD8 && tables[tables_len - 2] == 0xFF
                 && tables[tables_len - 1] == 0xD9;
    size_t head = splice ? tables_len - 2 : 0;
    size_t body = splice ? len - 2 : len;
    if (self->batch.n == self->ncap) {
        size_t ncap = self->ncap ? self->ncap * 2 : 256;
        qc_jpeg_tile_t *tiles = realloc (self->tiles, ncap * sizeof *tiles);
        if (!tiles)
            return -1;
        self->tiles = tiles;
        size_t *at = realloc (self->at, ncap * sizeof *at);
        if (!at)
            return -1;
        self->at = at;
        self->ncap = ncap;
    }
    if (reserve (self, head + body) != 0)
        return -1;
    size_t i = self->batch.n;
    self->at[i] = self->len;
    if (splice)
        memcpy (self->data + self->len, tables, head);
    memcpy (self->data + self->len + head, data + (splice ? 2 : 0), body);
    self->len += head + body;
    /* data set in qc_slide_jpeg_done: the buffer may yet move */
    self->tiles[i] = (qc_jpeg_tile_t) { NULL, head + body, x, y, w, h };
    self->batch.n = i + 1;
    return 0;
}

void
qc_slide_jpeg_done (qc_slide_jpeg_t *self)
{
    if (!self)
        return;
    for (size_t i = 0; i < self->batch.n; i++)
        self->tiles[i].data = self->data + self->at[i];
    self->batch.tiles = self->tiles;
}

int
qc_slide_jpeg_tiles (qc_slide_t *self, const qc_slide_rect_t *rect,
                     qc_slide_jpeg_t **out, char *err, size_t errlen)
{
    if (!self || !rect || !out || rect->w < 1 || rect->h < 1 || rect->level < 0
        || rect->level >= qc_slide_level_count (self))
        return qc_fail (err, errlen, "invalid region for its JPEG tiles");
    *out = NULL;
    uint8_t bg[3];
    qc_slide_background (self, bg);
    /* the reader that would read the pixels, alone: the tiles are to
     * give its pixels */
    for (size_t i = 0; i < qc_slide_reader_count (self); i++) {
        void *state = NULL;
        const qc_slide_reader_ops_t *r = qc_slide_reader_at (self, i, &state);
        if (!r || !r->can_read (state, rect))
            continue;
        if (!r->jpeg_tiles) {
            qc_set_err (err, errlen, "the %s reader reads its pixels", r->name);
            return QC_SLIDE_JPEG_NONE;
        }
        int rc = r->jpeg_tiles (state, rect, bg, out, err, errlen);
        return rc == QC_SLIDE_NEXT_READER ? QC_SLIDE_JPEG_NONE : rc;
    }
    qc_set_err (err, errlen, "no reader reads level %d there", rect->level);
    return QC_SLIDE_JPEG_NONE;
}
