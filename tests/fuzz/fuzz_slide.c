/* libFuzzer target: a slide's bytes as a worker reads a slide served
 * over HTTP, through a byte source (kernels/slide/slide.h). Nothing here
 * goes through OpenSlide, which opens paths only: the bytes meet this
 * project's own readers and libtiff and libjpeg under them: the TIFF
 * metadata (tiff_meta.c), TIFFClientOpen over the source
 * (tiff_source.c), the direct reader's tiles (tiff_direct.c), the
 * focus step's JPEG coefficients (tiff_blocks.c), and a GPU lane's
 * read: a region's JPEG tiles gathered compressed (slide_jpeg.c,
 * tiff_raw.c), each tile's frame read as the GPU's decoder reads it
 * (ops/jpeg_frame.c) and the batch decoded by the CPU's decode_jpeg.
 *
 * Each input is opened; when it opens, everything a run reads from a
 * slide is read, a little of each: every property, each level's
 * geometry and two corners of its pixels (whole, and a row at a time), the
 * readability check, the associated images (bounded as the pipeline
 * bounds them) and a few 8 x 8 blocks of each level. Any failure must be
 * a return with a reason; a crash, leak, sanitizer report, or a read or
 * allocation that grows with a size the bytes merely claim fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/jpeg_frame.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/slide_blocks.h"
#include "shared/log.h"

/* The input as a byte source. */
typedef struct {
    qc_byte_source_t base;
    const uint8_t *data;
    size_t size;
} mem_source_t;

static int64_t
mem_size (qc_byte_source_t *self)
{
    return (int64_t) ((mem_source_t *) self)->size;
}

static int64_t
mem_read (qc_byte_source_t *self, uint64_t offset, size_t len, void *buf,
          char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    mem_source_t *m = (mem_source_t *) self;
    if (offset >= m->size)
        return 0;
    size_t n = m->size - (size_t) offset < len ? m->size - (size_t) offset : len;
    memcpy (buf, m->data + offset, n);
    return (int64_t) n;
}

static void
mem_stats (qc_byte_source_t *self, qc_byte_source_stats_t *out)
{
    (void) self;
    (void) out;
}

static void
mem_close (qc_byte_source_t *self)
{
    (void) self;
}

static const qc_byte_source_ops_t mem_ops = { mem_size, mem_read, mem_stats,
                                              mem_close };

/* The corners a read takes of each level: small, so that an input's
 * cost is its parsing, not its claimed size. */
enum { CORNER = 48, MAX_LEVELS = 6, ASSOCIATED_MAX_PIXELS = 1 << 20 };

/* The top-left (end 0) or bottom-right (end 1) corner of level: the
 * first tile, and the last, which a level's claimed size may put past
 * the tiles the file has. */
static void
read_corner (qc_slide_t *slide, int level, int64_t w, int64_t h, int end)
{
    char err[512];
    double ds = qc_slide_level_downsample (slide, level);
    qc_slide_rect_t rect = {
        .level = level,
        .w = w < CORNER ? (int) w : CORNER,
        .h = h < CORNER ? (int) h : CORNER,
    };
    if (rect.w <= 0 || rect.h <= 0 || ds <= 0)
        return;
    if (end) {
        /* level-0 coordinates, on a whole pixel of the level */
        rect.x0 = (int64_t) ((double) (w - rect.w) * ds);
        rect.y0 = (int64_t) ((double) (h - rect.h) * ds);
    }
    static uint8_t rgb[CORNER * CORNER * 3];
    (void) qc_slide_read_rows (slide, &rect, 0, rect.h, rgb,
                               (size_t) rect.w * 3, err, sizeof err);
    (void) qc_slide_rows_exact (slide, &rect);
    qc_slide_rows_t *rows = qc_slide_rows_open (slide, &rect, err, sizeof err);
    for (int y = 0; rows && y < rect.h; y++)
        if (!qc_slide_rows_get (rows, y, err, sizeof err))
            break;
    qc_slide_rows_close (&rows);
    /* the same corner as a GPU lane reads it: its tiles compressed */
    qc_slide_jpeg_t *tiles = NULL;
    if (qc_slide_jpeg_tiles (slide, &rect, &tiles, err, sizeof err) == 0) {
        for (size_t i = 0; i < tiles->batch.n; i++) {
            qc_jpeg_frame_t f;
            qc_jpeg_planes_t pl;
            const qc_jpeg_tile_t *t = &tiles->batch.tiles[i];
            if (qc_jpeg_frame_read (t->data, t->size, &f) == 0)
                (void) qc_jpeg_frame_planes (&f, &tiles->batch, &pl);
        }
        qc_rgb_t *dst = qc_rgb_new (rect.w, rect.h);
        if (dst)
            (void) qc_cpu_decode_jpeg (&tiles->batch, dst);
        qc_rgb_destroy (&dst);
        qc_slide_jpeg_free (&tiles);
    }
}

static void
read_blocks (qc_slide_t *slide, int level, int64_t w, int64_t h)
{
    char err[512];
    if (w < 8 || h < 8)
        return;
    qc_slide_blocks_t *b = qc_slide_blocks_open (slide, level, 5, err,
                                                 sizeof err);
    if (!b)
        return;
    int tw = 0, th = 0;
    qc_slide_blocks_tile (b, &tw, &th);
    (void) qc_slide_blocks_way (b);
    enum { NB = CORNER / 8 };
    int nbx = w / 8 < NB ? (int) (w / 8) : NB;
    int nby = h / 8 < NB ? (int) (h / 8) : NB;
    float hf[NB * NB], mid[NB * NB], luma[NB * NB];
    (void) qc_slide_blocks_read (b, 0, 0, nbx, nby, hf, mid, luma, err, sizeof err);
    qc_slide_blocks_stats_t st;
    qc_slide_blocks_stats (b, &st);
    qc_slide_blocks_close (&b);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    qc_log_set_stderr_enabled (0);   /* the readers' words on bad bytes */
    mem_source_t src = {
        .base = { .ops = &mem_ops, .name = "fuzz.svs" },
        .data = data,
        .size = size,
    };
    qc_slide_input_t in = { .src = &src.base, .name = "fuzz.svs" };
    char err[512];
    int declined = 0;
    qc_slide_t *slide = qc_slide_open_input (&in, QC_SLIDE_READERS_ALL,
                                             &declined, err, sizeof err);
    if (!slide)
        return 0;
    for (size_t i = 0; i < 4096; i++) {
        const char *name = qc_slide_property_name (slide, i);
        if (!name)
            break;
        (void) qc_slide_property (slide, name);
    }
    uint8_t bg[3];
    qc_slide_background (slide, bg);
    (void) qc_slide_check_readable (slide, err, sizeof err);
    int levels = qc_slide_level_count (slide);
    for (int level = 0; level < levels && level < MAX_LEVELS; level++) {
        int64_t w = 0, h = 0;
        if (qc_slide_level_size (slide, level, &w, &h) != 0)
            continue;
        (void) qc_slide_tile_height (slide, level);
        (void) qc_slide_level_reliable (slide, level, err, sizeof err);
        read_corner (slide, level, w, h, 0);
        read_corner (slide, level, w, h, 1);
        read_blocks (slide, level, w, h);
    }
    (void) qc_slide_best_level (slide, 4.0);
    static const char *const associated[] = { "thumbnail", "label", "macro" };
    for (size_t i = 0; i < sizeof associated / sizeof *associated; i++)
        if (qc_slide_has_associated (slide, associated[i])) {
            qc_rgb_t *img = qc_slide_read_associated (slide, associated[i],
                                                      ASSOCIATED_MAX_PIXELS,
                                                      err, sizeof err);
            qc_rgb_destroy (&img);
        }
    qc_slide_close (&slide);
    return 0;
}
