/* The contract between a slide (slide.c) and the readers of its pixels,
 * inside kernels/slide/ only: a small ops table per reader, as OpenSlide
 * has one per format. slide.c opens the readers in the order of its
 * table and, for every read, takes the first one that can read the
 * region; a reader that finds mid-read that it cannot (a damaged tile)
 * says so and the next one reads instead. Nothing outside slide.c
 * chooses a reader.
 *
 * Today's readers: the direct TIFF reader (tiff_direct.c) and OpenSlide
 * (openslide_source.c), which reads anything and gives the metadata of
 * a slide opened by path. A slide opened from a byte source (served over
 * HTTP: slide.h's qc_slide_input_t) is read only by the readers that
 * read byte sources (reads_sources: the direct reader, whose TIFF
 * handles then go through tiff_source.c's TIFFClientOpen), and its
 * metadata comes from the TIFF itself (tiff_meta.h). A reader that can
 * measure a level's
 * 8 x 8 blocks without decoding them to pixels (the direct reader: JPEG
 * coefficients) fills the optional blocks_* entries; they are NULL where
 * a reader has none, and slide_blocks.c then measures decoded pixels. */
#ifndef QC_SLIDE_SOURCE_H
#define QC_SLIDE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <openslide.h>

#include "kernels/slide/slide.h"
#include "shared/byte_source.h"

/* read_rows's answer when this reader cannot read the request and the
 * next one must (why says why, for a debug log line). */
#define QC_SLIDE_NEXT_READER 1

typedef struct {
    const char *name;       /* "direct TIFF", "OpenSlide": for log lines */
    int reads_sources;      /* reads a slide opened from a byte source */
    /* Opens the reader for slide (its metadata is read). NULL with why
     * when it does not read this slide: only a slower read then; *failed
     * set as well when the slide's bytes could not be read (a byte
     * source that failed: the open fails, the slide is not declined). */
    void *(*open) (const qc_slide_t *slide, int *failed, char *why, size_t whylen);
    void (*close) (void *reader);
    /* 1 when the reader can read rect at all (the direct reader: only
     * where rect's top-left falls on a whole pixel of its level). */
    int (*can_read) (const void *reader, const qc_slide_rect_t *rect);
    /* Rows [row, row + nrows) of rect, composited over bg, into rgb (row
     * r at rgb + r * stride). 0; QC_SLIDE_NEXT_READER (why); -1 failed
     * (why: "OpenSlide: <reason>", or out of memory). */
    int (*read_rows) (void *reader, const qc_slide_rect_t *rect, int row,
                      int nrows, const uint8_t bg[3], uint8_t *rgb,
                      size_t stride, char *why, size_t whylen);
    /* The rows this reader reads best at once when asked for row y of
     * rect: [*first, *first + *count), holding y (qc_slide_rows_get). */
    void (*piece) (const void *reader, const qc_slide_rect_t *rect, int y,
                   int *first, int *count);

    /* Optional (kernels/slide/slide_blocks.h). A session reading level's
     * blocks, used by one thread; NULL with why when this reader cannot
     * measure that level (not JPEG, say). */
    void *(*blocks_open) (void *reader, int level, int band, char *why,
                          size_t whylen);
    /* Blocks [bx, bx + nbx) x [by, by + nby) of the level (block units,
     * inside the level) into hf, mid and luma (nbx a row), as
     * kernels/slide/block_measure.h defines them; *bytes += the bytes of
     * the file read. 0; QC_SLIDE_NEXT_READER (why) when these blocks must
     * come from pixels (a damaged tile); -1 failed. */
    int (*blocks_read) (void *session, int64_t bx, int64_t by, int nbx,
                        int nby, float *hf, float *mid, float *luma, uint64_t *bytes,
                        char *why, size_t whylen);
    /* The tile size the session reads best in (blocks_read of whole tiles
     * decodes each tile once). */
    void (*blocks_tile) (const void *session, int *tile_w, int *tile_h);
    void (*blocks_close) (void *session);

    /* Optional (qc_slide_jpeg_tiles): rect's JPEG tiles, compressed.
     * 0 with *out; QC_SLIDE_NEXT_READER (why) when its pixels must be
     * read instead; -1 failed (why). NULL: this reader reads pixels. */
    int (*jpeg_tiles) (void *reader, const qc_slide_rect_t *rect,
                       const uint8_t bg[3], qc_slide_jpeg_t **out, char *why,
                       size_t whylen);
} qc_slide_reader_ops_t;

/* Building a qc_slide_jpeg_t (slide_jpeg.c), for the readers: new
 * (empty; the batch's fields as given), a tile added (its stream: tables, a
 * TIFF's JPEGTables (NULL for none), spliced before data, one tile's
 * bytes, into one whole stream; x, y, w, h as qc_jpeg_tile_t has them), and done (the batch then points at
 * its tiles). 0, or -1 when memory runs out or a stream is not JPEG. */
qc_slide_jpeg_t *qc_slide_jpeg_new (int tile_w, int tile_h, int ycbcr,
                                    int samp_h, int samp_v, const uint8_t bg[3]);
int qc_slide_jpeg_add (qc_slide_jpeg_t *self, const uint8_t *tables,
                       size_t tables_len, const uint8_t *data, size_t len,
                       int64_t x, int64_t y, int w, int h);
void qc_slide_jpeg_done (qc_slide_jpeg_t *self);

extern const qc_slide_reader_ops_t qc_slide_reader_tiff;       /* tiff_direct.c */
extern const qc_slide_reader_ops_t qc_slide_reader_openslide;  /* openslide_source.c */

/* The slide's OpenSlide handle, for the OpenSlide reader and the
 * metadata (slide.c); NULL for a slide opened from a byte source. */
openslide_t *qc_slide_openslide (const qc_slide_t *slide);
/* The byte source a slide was opened from, or NULL (opened by path). */
qc_byte_source_t *qc_slide_source (const qc_slide_t *slide);

/* The readers that opened, in the order they are tried (i < count), and
 * each one's state, for the slide's other read paths (slide_blocks.c). */
size_t qc_slide_reader_count (const qc_slide_t *slide);
const qc_slide_reader_ops_t *qc_slide_reader_at (const qc_slide_t *slide,
                                                 size_t i, void **state);

#endif
