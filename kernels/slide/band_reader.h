/* Parallel reading of one slide level into an area-resampled RGB image
 * (the engine under kernels/slide/region_read.h).
 *
 * The region's rows are cut into bands at the level's tile-row
 * boundaries (openslide.level[N].tile-height, 256 when absent), so no
 * two bands decode the same tile; threads take bands in turn. A band is
 * read a tile row at a time (narrower when a tile row would exceed a
 * 32 MiB buffer), composited over the background colour, reduced along x
 * by exact area weights and added into the output rows it overlaps.
 * Bands are at least ceil(scale) + 1 rows tall, so an output row spans
 * at most two bands; its two partial sums are added once both exist
 * (addition of two numbers is commutative), which makes the result
 * independent of the thread count and of which band finishes first. */
#ifndef QC_BAND_READER_H
#define QC_BAND_READER_H

#include <stdint.h>
#include <openslide.h>

#include "kernels/image/image.h"
#include "kernels/slide/tiff_direct.h"

/* Reads the w x h level pixels whose top-left corner is (x0, y0) in
 * level-0 coordinates, resampled to out's size, composited over bg.
 * With direct (or NULL), rows are decoded straight from the TIFF where
 * (x0, y0) falls on a whole level pixel (tiff_direct.h); a read it
 * cannot make goes through OpenSlide.
 * 0; -1 when OpenSlide failed (its handle then holds the reason); -2
 * when memory ran out. */
int qc_band_read (openslide_t *osr, const qc_tiff_direct_t *direct,
                  int level, int64_t x0, int64_t y0, int w, int h,
                  const uint8_t bg[3], int nthreads, qc_rgb_t *out);

#endif
