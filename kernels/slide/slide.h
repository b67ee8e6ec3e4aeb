/* One open slide: its metadata (levels, properties, background colour)
 * and the one place that decides which reader decodes its pixels.
 *
 * A slide is a file here, opened by path, or a byte source
 * (shared/byte_source.h: a slide served over HTTP, read by range
 * requests). Metadata comes from OpenSlide for a file, read once at
 * open; for a byte source, from the TIFF itself, as OpenSlide would give
 * it (tiff_meta.h), since OpenSlide opens only files. Pixels come from
 * the slide's sources (kernels/slide/source.h), tried in order for each
 * read: the direct TIFF reader (kernels/slide/tiff_direct.h: plain tiled
 * TIFF levels straight from the file, the same pixels as OpenSlide's,
 * faster) where it opened and the region starts on a whole pixel of its
 * level, then OpenSlide for everything else. Callers never choose: they
 * say which rows of which region they want (qc_slide_read_rows, or
 * qc_slide_rows_open for a row at a time).
 *
 * OpenSlide reports trouble two ways, and both are passed on verbatim:
 * openslide_open returning NULL means it does not recognise the file as a
 * slide at all (not a slide, or a format this OpenSlide version does not
 * read); a handle whose openslide_get_error is set carries OpenSlide's own
 * reason (e.g. "Unsupported TIFF compression: 52479"). Once a read fails,
 * OpenSlide keeps the handle in that error state, so every later call on
 * this slide fails with the same reason (qc_slide_error).
 *
 * A qc_slide_t is used by one pipeline run; several threads may read
 * rows of it at once (the band reader does: OpenSlide allows it on one
 * handle, and the direct reader opens a TIFF handle per read). */
#ifndef QC_SLIDE_H
#define QC_SLIDE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
#include "shared/byte_source.h"

typedef struct qc_slide qc_slide_t;

/* A region of one level, addressed as OpenSlide addresses it: the
 * level-0 coordinates of its top-left corner and its size in pixels of
 * the level. Row r of the region starts at level-0 y0 + round (r *
 * downsample) for OpenSlide, at level row y0 / downsample + r for the
 * direct reader; the two agree where that division is whole, which is
 * where the direct reader reads. */
typedef struct {
    int level;
    int64_t x0, y0;
    int w, h;
} qc_slide_rect_t;

/* Which readers a slide may use: all (the default: QC_DIRECT_READ=0 in
 * the environment leaves out the direct reader), or OpenSlide alone
 * (tests and benchmarks that compare the two). */
typedef enum {
    QC_SLIDE_READERS_ALL = 0,
    QC_SLIDE_READERS_OPENSLIDE
} qc_slide_readers_t;

/* Opens path. On failure returns NULL and writes the reason (without the
 * file name; the caller adds it) into err. */
qc_slide_t *qc_slide_open (const char *path, char *err, size_t errlen);
qc_slide_t *qc_slide_open_with (const char *path, qc_slide_readers_t readers,
                                char *err, size_t errlen);

/* What to open: a file here, or a byte source, under the name results
 * and log lines give the slide. */
typedef struct {
    const char *path;          /* a local file; or NULL, with src */
    qc_byte_source_t *src;     /* the slide's bytes; not owned: it must
                                  outlive the slide */
    const char *name;          /* results.tsv's filename (a URL's file
                                  name, say); NULL: path's file name */
} qc_slide_input_t;

/* Opens in. A byte source opens only where the direct TIFF reader reads
 * every level (Aperio and generic tiled TIFF in JPEG, LZW, deflate or
 * none; tiff_meta.h, tiff_direct.h): its metadata from the TIFF, its
 * pixels by range reads. Any other bytes (not a TIFF, an NDPI, JPEG
 * 2000, a level the direct reader leaves to OpenSlide) give NULL with
 * *declined = 1 and what they are in err: such a slide is read whole,
 * by path. An OME-TIFF that is not read here (fluorescence, in strips:
 * tiff_meta.h) gives NULL, *declined = 0 and why, as by path: read
 * whole it would fail the same. A failed read of the source gives NULL,
 * *declined = 0 and the source's words (an HTTP error). declined may be
 * NULL. */
qc_slide_t *qc_slide_open_input (const qc_slide_input_t *in,
                                 qc_slide_readers_t readers, int *declined,
                                 char *err, size_t errlen);
void qc_slide_close (qc_slide_t **self_p);

/* The file opened, or NULL for a slide opened from a byte source. */
const char *qc_slide_path (const qc_slide_t *self);
/* The slide's name: the file name without its folders (or the input's
 * name), as results.tsv's filename column. */
const char *qc_slide_name (const qc_slide_t *self);
/* The readers that opened, in the order they are tried, for log lines
 * and tests: "direct TIFF, OpenSlide" or "OpenSlide". */
const char *qc_slide_readers (const qc_slide_t *self);

/* An OpenSlide property ("openslide.vendor", "aperio.AppMag", ...), or
 * NULL when the slide does not have it. Valid while the slide is open. */
const char *qc_slide_property (const qc_slide_t *self, const char *name);
/* The name of the slide's property i (0, 1, ... until NULL), for
 * listing them all. */
const char *qc_slide_property_name (const qc_slide_t *self, size_t i);
/* OpenSlide's reason when the slide's handle is in its error state (see
 * above), else NULL. */
const char *qc_slide_error (const qc_slide_t *self);
/* "WHAT: OE" into err, then -1. When this process has no file descriptor
 * left (OpenSlide opens more as it reads, and then fails with words of
 * its own, "Cannot read raw tile"), or memory is short (qc_memory_short:
 * libtiff's refused allocation reads "Invalid TIFF"), the reason says so
 * and ends with the rerun mark (shared/result.h): the machine's trouble,
 * not the slide's. */
int qc_slide_fail_openslide (const char *what, const char *oe, char *err, size_t errlen);

/* Pyramid geometry, read once at open. Level 0 is full resolution. */
int qc_slide_level_count (const qc_slide_t *self);
/* 0 and the size of level, or -1 when level does not exist. */
int qc_slide_level_size (const qc_slide_t *self, int level, int64_t *w,
                         int64_t *h);
/* Downsample factor of level relative to level 0; 0 when it does not
 * exist. */
double qc_slide_level_downsample (const qc_slide_t *self, int level);
/* Where level is in the slide's TIFF when its metadata was read here
 * (tiff_meta.h; always for an OME-TIFF): the chain's directory *dir, or
 * the SubIFD at offset *subifd (0: none). 0; -1 when that is not known
 * here (a slide OpenSlide opened) or level does not exist. For the
 * direct reader (tiff_direct.c). */
int qc_slide_level_tiff_dir (const qc_slide_t *self, int level, int *dir,
                             uint64_t *subifd);
/* OpenSlide's best level for a downsample factor (the largest level
 * whose downsample is not above it; for a byte source, the same rule). */
int qc_slide_best_level (const qc_slide_t *self, double downsample);
/* The tile height OpenSlide gives for level
 * (openslide.level[N].tile-height), 256 when it gives none: reads cut
 * at tile rows decode no tile twice. */
int qc_slide_tile_height (const qc_slide_t *self, int level);
/* The colour under transparent pixels: openslide.background-color
 * ("RRGGBB"), white when absent or malformed, as openslide-python
 * composites. Every read below returns pixels composited over it. */
void qc_slide_background (const qc_slide_t *self, uint8_t bg[3]);

/* Rows [row, row + nrows) of rect as RGB (3 bytes a pixel, row r at
 * rgb + r * stride), composited over the background, from the first
 * reader that can give them: the whole request from one reader, in one
 * read. 0, or -1 with the reason in err ("OpenSlide: <its reason>", or
 * an allocation failure). */
int qc_slide_read_rows (qc_slide_t *self, const qc_slide_rect_t *rect,
                        int row, int nrows, uint8_t *rgb, size_t stride,
                        char *err, size_t errlen);

/* A region's JPEG tiles, compressed, for a device that decodes them
 * (kernels/ops/ops.h's decode_jpeg: a GPU lane's read, in which the CPU
 * reads the compressed tiles and the GPU decodes them). batch is what
 * decode_jpeg takes (its tiles point into this object's memory);
 * decoded into an image of rect's size it gives the pixels
 * qc_slide_read_rows gives for rect (tests/unit/test_jpeg_tiles.c). */
typedef struct qc_slide_jpeg {
    qc_jpeg_batch_t batch;
    qc_jpeg_tile_t *tiles;
    size_t *at;               /* tile i's stream: data + at[i] */
    uint8_t *data;
    size_t len, cap, ncap;
} qc_slide_jpeg_t;

/* qc_slide_jpeg_tiles's answer when rect's pixels must be read, not
 * decoded from its tiles elsewhere. */
#define QC_SLIDE_JPEG_NONE 1

/* rect's tiles, compressed, from the reader that would read its pixels
 * (the direct TIFF reader, for a level of JPEG tiles, every tile with
 * bytes). 0 and *out set; QC_SLIDE_JPEG_NONE with why in err (another
 * compression, OpenSlide reads it, a tile the scanner left out ...):
 * the caller reads the pixels, qc_slide_read_rows and the rest; -1 with
 * the reason in err when reading the tiles failed (a slide served over
 * HTTP that stopped answering). */
int qc_slide_jpeg_tiles (qc_slide_t *self, const qc_slide_rect_t *rect,
                         qc_slide_jpeg_t **out, char *err, size_t errlen);
void qc_slide_jpeg_free (qc_slide_jpeg_t **self_p);

/* 1 when every row of rect comes from its level's own pixels whatever
 * read it starts (a reader other than OpenSlide reads rect, or the
 * level's downsample is whole and rect starts on one of its pixels):
 * then rect read in pieces (kernels/slide/band_reader.h) gives the
 * bytes of one read. 0 otherwise: OpenSlide's reads of rows inside a
 * level whose downsample is not whole land between pixels. */
int qc_slide_rows_exact (const qc_slide_t *self, const qc_slide_rect_t *rect);

/* The rows of rect one at a time, top to bottom, for a consumer that
 * takes a row at a time (the area resize). Each reader hands out rows in
 * the pieces it reads best: the direct reader a tile row at a time (a
 * tile row of a 1.25x level is a few MB where the level is tens), and
 * OpenSlide the whole region in one read (a read starting inside a level
 * whose downsample is not whole lands between its pixels, and OpenSlide
 * then interpolates, more slowly). Where the direct reader cannot go on
 * (a damaged tile), OpenSlide reads the whole region and the rest of the
 * rows come from that read, as if it had read them all (where the direct
 * reader reads, its pixels are OpenSlide's: test_tiff_direct). Memory:
 * one piece, and for OpenSlide's whole region 4 bytes a pixel during its
 * read plus 3 while the rows are handed out. */
typedef struct qc_slide_rows qc_slide_rows_t;
qc_slide_rows_t *qc_slide_rows_open (qc_slide_t *self,
                                     const qc_slide_rect_t *rect,
                                     char *err, size_t errlen);
/* Row y of the region (y must not decrease from call to call), valid
 * until the next call; NULL with the reason in err. */
const uint8_t *qc_slide_rows_get (qc_slide_rows_t *rows, int y, char *err,
                                  size_t errlen);
void qc_slide_rows_close (qc_slide_rows_t **rows_p);

/* Reads a small region of the lowest-resolution level through OpenSlide
 * (a byte source: through its reader): a slide whose metadata opens but
 * whose pixels do not decode fails here, before any step spends time on
 * it. 0, or -1 with OpenSlide's reason in err. */
int qc_slide_check_readable (qc_slide_t *self, char *err, size_t errlen);

/* 1 when level's pixels can be trusted; 0 (err says why) for a level
 * OpenSlide reads (no reader of our own reads the slide) that is smaller
 * than one of its tiles and not JPEG: OpenSlide 3.4.1 with libtiff 4.5
 * decodes such a level through libtiff's RGBA reader and returns
 * different pixels on every read (a grey LZW Aperio level, say; libtiff
 * logs "raster width adapted for reading" for some of them, not all, and
 * OpenSlide's tile cache then hands out the bad tile without a word, so
 * the level's shape is the test, not the warning). JPEG and JPEG 2000
 * levels, which OpenSlide decodes itself, are right. */
int qc_slide_level_reliable (qc_slide_t *self, int level, char *err,
                             size_t errlen);

/* For a slide opened from a byte source: reads the bytes of level's
 * tiles without decoding them, so that the reads that follow find them
 * in the source's cache (a worker warms the next task's slide this way
 * while a slot computes). cancel (may be NULL): stop when it becomes
 * non-zero. 0 (nothing to do for a slide opened by path), or -1 with
 * the reason in err. */
int qc_slide_fetch_level (qc_slide_t *self, int level,
                          const atomic_int *cancel, char *err,
                          size_t errlen);

/* 1 when the slide has the associated image name ("macro", "label"). */
int qc_slide_has_associated (const qc_slide_t *self, const char *name);
/* 1 when the slide has the associated image name and its file's data
 * for it is damaged (a strip past the file's end, a table of strips cut
 * short: slide_why.h's qc_side_damaged_t), said in why ("the file's
 * macro image (its image 3, 1280 x 431) is damaged: ..."); the slide's
 * levels are read as ever. 0 otherwise. */
int qc_slide_associated_damaged (const qc_slide_t *self, const char *name, char *why,
                                 size_t whylen);
/* What a lab should hear of the file beyond its levels' QC, a line
 * each, into note ("" when none: a slide's first image read warns of
 * them): its damaged side images ("the file's label image (its image 2,
 * 387 x 463) is damaged: ...; the slide's levels are read and QC'd
 * ..."), then the images it holds that are not QC'd (an OME-TIFF's other
 * scenes, tiff_meta.h). Returns how many lines there are. */
int qc_slide_notes (const qc_slide_t *self, char *note, size_t len);
/* The associated image name as RGB, OpenSlide's premultiplied pixels
 * un-premultiplied as openslide-python does (HistoQC then drops alpha).
 * NULL with a reason in err: damaged (qc_slide_associated_damaged's
 * words), empty or over max_pixels, out of memory, or "reading the
 * <name> image: OpenSlide: <its reason>". A failed read leaves the
 * slide's levels readable (slide_side.c). */
qc_rgb_t *qc_slide_read_associated (qc_slide_t *self, const char *name,
                                    int64_t max_pixels, char *err,
                                    size_t errlen);

#endif
