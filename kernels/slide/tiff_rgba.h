/* The direct TIFF reader's second decoder (tiff_direct.h): tiles that
 * are not 8-bit RGB or JPEG (grey, 16-bit, palette, an alpha channel,
 * planes stored apart, CMYK, ...) decoded through libtiff's RGBA
 * interface, the one OpenSlide 3.4.1 reads them with (TIFFRGBAImage),
 * so a tile's pixels are OpenSlide's. What OpenSlide does wrong with it
 * is not copied: it asks libtiff for whole tiles past the level's edge,
 * and a level smaller than one tile came back different from read to
 * read (slide.c: qc_slide_level_reliable refused such levels); here a
 * tile is asked for only as far as the level goes. And as the direct
 * reader reads JPEG tiles, an Orientation other than top-left is not
 * applied (OpenSlide's RGBA reads turned each tile on its own).
 *
 * Its premultiplied pixels are composited over the slide's background as
 * OpenSlide's are (qc_cpu_argb_over_row). One handle at a time: a
 * reader is made for each read, on that read's own TIFF handle. */
#ifndef QC_TIFF_RGBA_H
#define QC_TIFF_RGBA_H

#include <stddef.h>
#include <stdint.h>

#include <tiffio.h>

/* 1 when tif's current directory is decoded here: tiled, unsigned
 * samples, a codec this libtiff has (not JPEG 2000), and libtiff's RGBA
 * interface takes its photometric, samples and bits (TIFFRGBAImageOK);
 * else 0, with why (may be NULL) saying what. */
int qc_tiff_rgba_usable (TIFF *tif, char *why, size_t whylen);

typedef struct {
    TIFFRGBAImage img;
    uint32_t *raster;         /* cap pixels: a tile's */
    size_t cap;
    int begun;
} qc_tiff_rgba_t;

/* Readies rd to decode tiles of up to tile_w x tile_h pixels from tif's
 * current directory. 0, or -1 with why (rd then needs no end). */
int qc_tiff_rgba_begin (qc_tiff_rgba_t *rd, TIFF *tif, uint32_t tile_w,
                        uint32_t tile_h, char *why, size_t whylen);

/* Decodes the w x h pixels whose top-left is (x0, y0) (inside the
 * directory's image, at most a tile) over bg into rgb (row r at rgb +
 * r * stride). 0, or -1 (libtiff's message went to the handle's
 * handler). */
int qc_tiff_rgba_read (qc_tiff_rgba_t *rd, uint32_t x0, uint32_t y0, uint32_t w,
                       uint32_t h, const uint8_t bg[3], uint8_t *rgb, size_t stride);

void qc_tiff_rgba_end (qc_tiff_rgba_t *rd);

#endif
