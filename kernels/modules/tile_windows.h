/* The tile grid of TileExtractionModule.extract, as HistoQC lays it out
 * (histoqc/TileExtractionModule.py, MaskTileWindows):
 *
 *  - the mask's tissue is one region (skimage regionprops of the mask as
 *    integers: every set pixel is label 1), its bounding box the grid's
 *    area; an empty mask has no region and no tiles;
 *  - the tile and stride on the mask are tile_size / f and tile_stride /
 *    f, f = the slide's width / the mask's width;
 *  - the tiles' left edges are numpy.arange (left, max_left + 1, stride,
 *    dtype=int), their tops likewise: with an integer dtype numpy steps
 *    by int (left + stride) - left, not by the stride (its documented
 *    quirk), so a stride of 7.99 mask pixels lays tiles 7 apart, as many
 *    as the float stride gives; max_left = int (left + (right - left -
 *    tile) / stride * stride);
 *  - a tile is kept when the mask pixels under it, its edges rounded as
 *    Python's round () does (half to even; outside the mask counts as
 *    no tissue), are at least tissue_ratio tissue;
 *  - on the slide a tile is int (edge * f) for each edge of it on the
 *    mask, listed left edge by left edge, top to bottom within one.
 *
 * Coordinates are (left, top, right, bottom), right and bottom open. */
#ifndef QC_TILE_WINDOWS_H
#define QC_TILE_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double left, top, right, bottom;     /* on the mask (floats) */
    int64_t x0, y0, x1, y1;              /* on the slide, level 0 */
} qc_tile_window_t;

typedef struct {
    qc_tile_window_t *tiles;             /* kept tiles, in HistoQC's order */
    size_t n;
    size_t candidates;                   /* tiles of the grid, kept or not */
} qc_tile_grid_t;

/* Lays the grid over mask (w x h bytes, nonzero = tissue) of a slide
 * slide_w pixels wide. 0, or -1 with err: bad arguments (tile_size or
 * tile_stride < 1, tissue_ratio NaN, slide_w < 1), more than max_tiles
 * candidates, or no memory. The caller frees out->tiles. */
int qc_tile_grid (const uint8_t *mask, int w, int h, int64_t slide_w,
                  int tile_size, int tile_stride, double tissue_ratio,
                  size_t max_tiles, qc_tile_grid_t *out, char *err,
                  size_t errlen);

/* Python's round () of a double to an integer: halves to the even one. */
int64_t qc_py_round (double v);

#endif
