/* Reading a slide level's pixels straight from its tiled TIFF, for the
 * formats where that gives OpenSlide's own pixels, faster.
 *
 * Why: openslide_read_region (3.4.1) decodes each tile, then paints it
 * into the caller's buffer through cairo with the SATURATE operator,
 * which pixman has no fast path for: most of a 1.25x pipeline's read
 * went into compositing opaque tiles onto an empty buffer, not into
 * decoding them (the figures: tests/bench/README.md, "Figures behind
 * the code").
 *
 * What: when OpenSlide says the slide is "aperio" or "generic-tiff" (or
 * the slide's own metadata says "ome-tiff": then the levels are the
 * directories it found, tiff_meta.h) and every level is one tiled TIFF
 * directory of the same size, the level's tiles are decoded here with
 * libtiff and copied into RGB rows: 8-bit
 * RGB tiles (JPEG with YCbCr or RGB photometric, through the same
 * libjpeg OpenSlide uses; uncompressed, LZW or deflate) straight, and
 * the rest libtiff decodes (grey, 16-bit, alpha, planes apart, other
 * codecs) through its RGBA interface as OpenSlide does (tiff_rgba.h).
 * Anything else (JPEG 2000 Aperio, NDPI, MIRAX) is left to OpenSlide.
 * The pixels are the same: tests/unit/test_tiff_direct compares every
 * level of every test slide, whole and in pieces, byte for byte with
 * OpenSlide's composited over the background (test_tiff_rgba: the RGBA
 * interface's kinds, where OpenSlide reads them right).
 *
 * Where anything is unusual during a read (a libtiff warning or error,
 * a tile with no bytes, which OpenSlide treats its own way) the read
 * returns QC_TIFF_DIRECT_FALLBACK and the slide reads through OpenSlide
 * instead, so damaged slides fail with OpenSlide's reasons as before.
 *
 * It is one of a slide's readers (kernels/slide/source.h:
 * qc_slide_reader_tiff); the functions below are its parts, public for
 * its tests. QC_DIRECT_READ=0 in the environment turns it off
 * (qc_slide_open). A reader is shared by threads: every read opens its
 * own TIFF handle.
 *
 * A slide opened from a byte source (qc_slide_open_input: a slide
 * served over HTTP) is read by this reader alone: its handles are
 * opened over the source (tiff_source.h), so a read fetches only the
 * directories and the tiles it decodes. There is no OpenSlide to fall
 * back on, so trouble that would send a read to OpenSlide fails it,
 * with the source's reason where the source failed (an HTTP error). */
#ifndef QC_TIFF_DIRECT_H
#define QC_TIFF_DIRECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <tiffio.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/tiff_source.h"

typedef struct qc_tiff_direct qc_tiff_direct_t;

/* qc_tiff_direct_read's answer when OpenSlide must read instead (the
 * slide's QC_SLIDE_NEXT_READER). */
#define QC_TIFF_DIRECT_FALLBACK 1

/* A reader for slide (its file and OpenSlide's levels), or NULL when
 * the slide is not of the kind above (why says what, for a debug log
 * line). */
qc_tiff_direct_t *qc_tiff_direct_open (const qc_slide_t *slide, char *why,
                                       size_t whylen);
/* As qc_tiff_direct_open, and *failed (not NULL) set to 1 when a read of
 * the slide's byte source failed: the open then fails for the source's
 * reason rather than declining the slide as a format read elsewhere. */
qc_tiff_direct_t *qc_tiff_direct_open_source (const qc_slide_t *slide, int *failed,
                                              char *why, size_t whylen);
void qc_tiff_direct_close (qc_tiff_direct_t **self_p);

/* 1 when the level-0 point (x0, y0) falls on a whole pixel of level, as
 * OpenSlide computes it (x0 / downsample): only then are OpenSlide's
 * pixels the tiles' own; otherwise it interpolates and the caller must
 * read through it. The level pixel is put in *lx, *ly. */
int qc_tiff_direct_aligned (const qc_tiff_direct_t *self, int level,
                            int64_t x0, int64_t y0, int64_t *lx,
                            int64_t *ly);

/* Reads the w x h pixels of level whose top-left is level pixel
 * (lx, ly) into rgb (row r at rgb + r * stride, 3 bytes a pixel).
 * Pixels outside the level are bg (OpenSlide leaves them transparent,
 * and readers composite over the background). 0; QC_TIFF_DIRECT_FALLBACK
 * (why says what) when OpenSlide must read it; -1 on bad arguments or
 * no memory. */
int qc_tiff_direct_read (const qc_tiff_direct_t *self, int level,
                         int64_t lx, int64_t ly, int w, int h,
                         const uint8_t bg[3], uint8_t *rgb, size_t stride,
                         char *why, size_t whylen);

/* Largest tile accepted, raw or decoded (bytes at once). */
#define QC_TIFF_MAX_TILE_BYTES ((size_t) 64 << 20)

/* ---- a level's tiles as stored (tiff_raw.c) ---- */

/* Reads the raw bytes of every tile of level without decoding them
 * (for a slide read from a byte source: they land in its cache, so the
 * reads that follow cost no request). cancel (may be NULL): stop when it
 * becomes non-zero. 0, or -1 with why. */
int qc_tiff_direct_fetch_level (const qc_tiff_direct_t *self, int level,
                                const atomic_int *cancel, char *why,
                                size_t whylen);

/* rect's JPEG tiles, compressed, for a device that decodes them: the
 * reader's jpeg_tiles (source.h; slide.h's qc_slide_jpeg_tiles). */
int qc_tiff_direct_jpeg_tiles (void *reader, const qc_slide_rect_t *rect,
                               const uint8_t bg[3], qc_slide_jpeg_t **out, char *why,
                               size_t whylen);

/* A buffer for tiles' raw bytes, grown as they need (free buf at the
 * end). */
typedef struct {
    uint8_t *buf;
    size_t cap;
} qc_tiff_raw_t;

/* Tile t of tif (a handle of self's, its messages in diag) as stored,
 * into raw: 0 with *len its bytes; 1 when it has none (an area an Aperio
 * scanner left out); -1 with why ("tile T: ..."): its byte count cannot
 * be read or is over max, no memory, a short read or libtiff's trouble
 * (qc_tiff_direct_trouble_rc says whether another reader may read it). */
int qc_tiff_raw_tile (const qc_tiff_direct_t *self, TIFF *tif, const qc_tiff_diag_t *diag,
                      uint32_t t, uint64_t max, qc_tiff_raw_t *raw, size_t *len,
                      char *why, size_t whylen);

/* The tile height of level's directory (0 when there is no level). */
int qc_tiff_direct_tile_height (const qc_tiff_direct_t *self, int level);

/* ---- for the block reader (tiff_blocks.c), which reads raw tiles ---- */


/* A libtiff handle of its own on level's directory, its messages going
 * to diag (which must outlive it); NULL with why. The caller closes it
 * (TIFFClose). qc_tiff_direct_trouble says what went wrong on it. */
TIFF *qc_tiff_direct_open_level (const qc_tiff_direct_t *self, int level,
                                 qc_tiff_diag_t *diag, char *why,
                                 size_t whylen);

/* The answer to trouble on tif, a handle of self (NULL: the level's
 * handle could not be made): -1 when a read of the slide's byte source
 * failed (no other reader has the bytes either), else
 * QC_TIFF_DIRECT_FALLBACK (the next reader reads). */
int qc_tiff_direct_trouble_rc (const qc_tiff_direct_t *self, TIFF *tif);

/* What went wrong on tif, a handle of self: the source's reason when a
 * read of the slide's byte source failed (an HTTP error), else diag's
 * message, else fallback. */
const char *qc_tiff_direct_trouble (const qc_tiff_direct_t *self, TIFF *tif,
                                    const qc_tiff_diag_t *diag,
                                    const char *fallback);

/* A level's tiles, as its directory has them. */
typedef struct {
    int64_t w, h;             /* the level, pixels */
    int tile_w, tile_h;
    int jpeg;                 /* JPEG-compressed tiles */
    int ycbcr;                /* JPEG in YCbCr (else RGB) */
    int ycbcr_h, ycbcr_v;     /* YCbCr tiles tagged RGB (their markers say
                                 so): their chroma sampling; 0: as tagged */
} qc_tiff_tiles_t;

/* 0, or -1 when there is no such level. */
int qc_tiff_direct_level_tiles (const qc_tiff_direct_t *self, int level,
                                qc_tiff_tiles_t *out);

#endif
