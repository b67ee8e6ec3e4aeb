/* A level's blocks, measured by the slide's readers; see slide_blocks.h
 * (and source.h for the readers' blocks_* entries). */
#include "kernels/slide/slide_blocks.h"
#include "kernels/slide/block_measure.h"
#include "kernels/slide/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "shared/err.h"
#include "shared/log.h"

/* Pixel reads: tiles of this size when OpenSlide names none, and the
 * bounds a named size is held to. */
#define PIXEL_TILE 256
#define PIXEL_TILE_MIN 64
#define PIXEL_TILE_MAX 2048

struct qc_slide_blocks {
    qc_slide_t *slide;
    int level, band;
    int64_t w, h;                       /* the level */
    double downsample;
    const qc_slide_reader_ops_t *ops;   /* the reader measuring blocks */
    void *session;                      /* its session; NULL: pixels */
    int tile_w, tile_h;
    uint8_t *rgb;                       /* pixel reads */
    size_t cap;
    qc_slide_blocks_stats_t stats;
};

/* OpenSlide's tile side for level, rounded up to whole blocks. */
static int
pixel_tile (const qc_slide_t *slide, int level, const char *which)
{
    char key[64];
    snprintf (key, sizeof key, "openslide.level[%d].tile-%s", level, which);
    const char *s = qc_slide_property (slide, key);
    long v = s ? strtol (s, NULL, 10) : 0;
    if (v < PIXEL_TILE_MIN || v > PIXEL_TILE_MAX)
        v = PIXEL_TILE;
    return (int) ((v + 7) / 8 * 8);
}

qc_slide_blocks_t *
qc_slide_blocks_open (qc_slide_t *slide, int level, int band, char *err,
                      size_t errlen)
{
    int64_t w = 0, h = 0;
    if (!slide || qc_slide_level_size (slide, level, &w, &h) != 0) {
        qc_set_err (err, errlen, "no level %d", level);
        return NULL;
    }
    qc_slide_blocks_t *self = calloc (1, sizeof *self);
    if (!self) {
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    self->slide = slide;
    self->level = level;
    self->band = band;
    self->w = w;
    self->h = h;
    self->downsample = qc_slide_level_downsample (slide, level);
    self->tile_w = pixel_tile (slide, level, "width");
    self->tile_h = pixel_tile (slide, level, "height");
    for (size_t i = 0; i < qc_slide_reader_count (slide); i++) {
        void *state = NULL;
        const qc_slide_reader_ops_t *ops = qc_slide_reader_at (slide, i, &state);
        if (!ops->blocks_open)
            continue;
        char why[256] = "";
        void *session = ops->blocks_open (state, level, band, why,
                                          sizeof why);
        if (!session) {
            qc_log (QC_LOG_DEBUG, "slide", "%s: level %d: no blocks from "
                    "the %s reader: %s", qc_slide_name (slide), level,
                    ops->name, why);
            continue;
        }
        self->ops = ops;
        self->session = session;
        ops->blocks_tile (session, &self->tile_w, &self->tile_h);
        break;
    }
    return self;
}

void
qc_slide_blocks_close (qc_slide_blocks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_slide_blocks_t *self = *self_p;
    if (self->session)
        self->ops->blocks_close (self->session);
    free (self->rgb);
    free (self);
    *self_p = NULL;
}

void
qc_slide_blocks_tile (const qc_slide_blocks_t *self, int *tile_w, int *tile_h)
{
    if (tile_w)
        *tile_w = self ? self->tile_w : PIXEL_TILE;
    if (tile_h)
        *tile_h = self ? self->tile_h : PIXEL_TILE;
}

const char *
qc_slide_blocks_way (const qc_slide_blocks_t *self)
{
    return self && self->session ? "JPEG coefficients (direct TIFF)"
                                 : "pixels";
}

void
qc_slide_blocks_stats (const qc_slide_blocks_t *self,
                       qc_slide_blocks_stats_t *out)
{
    if (!out)
        return;
    if (self)
        *out = self->stats;
    else
        *out = (qc_slide_blocks_stats_t) { 0 };
}

void
qc_slide_blocks_stats_add (qc_slide_blocks_stats_t *to,
                           const qc_slide_blocks_stats_t *s)
{
    if (!to || !s)
        return;
    to->coded_bytes += s->coded_bytes;
    to->pixels += s->pixels;
    to->blocks += s->blocks;
    to->coef_reads += s->coef_reads;
    to->pixel_reads += s->pixel_reads;
}

/* The blocks from the pixels the slide's readers give. Pixels past the
 * level's edge are the background (flat: no detail). */
static int
read_pixels (qc_slide_blocks_t *self, int64_t bx, int64_t by, int nbx,
             int nby, float *hf, float *mid, float *luma, char *err, size_t errlen)
{
    qc_slide_rect_t rect = {
        .level = self->level,
        .x0 = llround ((double) (bx * 8) * self->downsample),
        .y0 = llround ((double) (by * 8) * self->downsample),
        .w = nbx * 8, .h = nby * 8,
    };
    size_t stride = (size_t) rect.w * 3, need = stride * (size_t) rect.h;
    if (need > self->cap) {
        uint8_t *grown = realloc (self->rgb, need);
        if (!grown)
            return qc_fail (err, errlen, "out of memory for %d x %d pixels",
                            rect.w, rect.h);
        self->rgb = grown;
        self->cap = need;
    }
    if (qc_slide_read_rows (self->slide, &rect, 0, rect.h, self->rgb, stride,
                            err, errlen) != 0)
        return -1;
    for (int y = 0; y < nby; y++)
        for (int x = 0; x < nbx; x++)
            qc_block_from_rgb (self->rgb + (size_t) y * 8 * stride
                               + (size_t) x * 24, stride, self->band,
                               &hf[(size_t) y * nbx + x], &mid[(size_t) y * nbx + x],
                               &luma[(size_t) y * nbx + x]);
    self->stats.pixels += (uint64_t) rect.w * (uint64_t) rect.h;
    self->stats.pixel_reads++;
    return 0;
}

int
qc_slide_blocks_read (qc_slide_blocks_t *self, int64_t bx, int64_t by,
                      int nbx, int nby, float *hf, float *mid, float *luma,
                      char *err, size_t errlen)
{
    if (!self || !hf || !mid || !luma || nbx < 1 || nby < 1 || bx < 0 || by < 0
        || nbx > (1 << 16) || nby > (1 << 16) || (bx + nbx - 1) * 8 >= self->w
        || (by + nby - 1) * 8 >= self->h)
        return qc_fail (err, errlen, "invalid block read");
    if (self->session) {
        char why[256] = "";
        uint64_t bytes = 0;
        int rc = self->ops->blocks_read (self->session, bx, by, nbx, nby, hf,
                                         mid, luma, &bytes, why, sizeof why);
        if (rc == 0) {
            self->stats.coded_bytes += bytes;
            self->stats.coef_reads++;
            self->stats.blocks += (uint64_t) nbx * (uint64_t) nby;
            return 0;
        }
        if (rc != QC_SLIDE_NEXT_READER)
            return qc_fail (err, errlen, "%s", why);
        qc_log (QC_LOG_DEBUG, "slide", "%s: level %d blocks at %lld, %lld: "
                "measured from pixels: %s", qc_slide_name (self->slide),
                self->level, (long long) bx, (long long) by, why);
    }
    if (read_pixels (self, bx, by, nbx, nby, hf, mid, luma, err, errlen) != 0)
        return -1;
    self->stats.blocks += (uint64_t) nbx * (uint64_t) nby;
    return 0;
}
