/* A tiled TIFF directory as one of the direct reader's levels
 * (tiff_direct.h): whether its tiles are read here the way OpenSlide
 * reads them, and how (straight as 8-bit RGB or JPEG, or through
 * libtiff's RGBA interface, tiff_rgba.h). Apart from tiff_direct.c,
 * which opens, matches and reads levels, because these checks of a
 * directory's tags and first tiles are a question of their own. */
#ifndef QC_SLIDE_TIFF_LEVEL_H
#define QC_SLIDE_TIFF_LEVEL_H

#include <stdint.h>

#include <tiffio.h>

typedef struct {
    tdir_t dir;
    uint64_t subifd;          /* an OME-TIFF's SubIFD: its offset (dir unused) */
    int64_t w, h;
    uint32_t tile_w, tile_h;
    int jpeg;                 /* JPEG tiles (the block reader's) */
    int rgba;                 /* decoded through libtiff's RGBA interface
                                 (tiff_rgba.h): not 8-bit RGB or JPEG */
    int jpeg_ycbcr;           /* decode with JPEGCOLORMODE_RGB */
    uint16_t orient;          /* TIFF Orientation: read as stored, whatever it says */
    uint16_t ycbcr_h, ycbcr_v;  /* JPEG tiles whose markers say YCbCr under
                                   Photometric RGB: read as YCbCr sampled so;
                                   0: as tagged */
} qc_tiff_level_t;

/* The current directory of tif as a level, its geometry and kind in
 * *out (zeroed first): 1 read here; 0 not tiled; -1 any other tiled
 * directory (a kind read by OpenSlide only: JPEG 2000, a codec libtiff
 * lacks, tiles over the bound), its size in *out, which might still be
 * one of OpenSlide's levels. */
int qc_tiff_level_look (TIFF *tif, qc_tiff_level_t *out);

/* The SubIFD offsets of tif's current directory (an OME-TIFF's lower
 * levels) copied into out (room for max): their count (0: none), or -1
 * when there are more than max. Copied because libtiff's list belongs
 * to the directory, gone once another is read. */
int qc_tiff_level_subifds (TIFF *tif, uint64_t *out, int max);

#endif
