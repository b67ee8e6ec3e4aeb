/* Parallel reading of one slide level into an area-resampled RGB image
 * (the engine under kernels/slide/region_read.h).
 *
 * The region's rows are cut into bands at the level's tile-row
 * boundaries (qc_slide_tile_height), so no two bands decode the same
 * tile; threads take bands in turn. A band is read a tile row at a time
 * (narrower when a tile row would exceed a 32 MiB buffer), composited
 * over the background colour, reduced along x
 * by exact area weights and added into the output rows it overlaps; at
 * 1:1 (a level read at its own size, as a 10x run reads a 10x level) a
 * band's rows are read straight into the output instead, the same bytes.
 * Bands are at least ceil(scale) + 1 rows tall, so an output row spans
 * at most two bands: the earlier one sums its rows, the later one keeps
 * its rows reduced along x, and whichever finishes second adds those to
 * the sum in source order. Every output row is thus summed with the
 * adds, in the order, of one sequential read (qc_area_resize_u8, with
 * the same qc_area_mix_row and qc_area_round_row_u8), so the result is
 * one read's bytes, whatever the thread count and whichever band
 * finishes first (test_image_region). */
#ifndef QC_BAND_READER_H
#define QC_BAND_READER_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/slide/slide.h"

/* Reads rect, resampled to out's size, composited over the slide's
 * background, with nthreads threads (at most 16); each piece is read
 * through the slide's readers (qc_slide_read_rows). 0, or -1 with the
 * reason in err ("OpenSlide: <its reason>", or "out of memory reading
 * level N"). */
int qc_band_read (qc_slide_t *slide, const qc_slide_rect_t *rect,
                  int nthreads, qc_rgb_t *out, char *err, size_t errlen);

#endif
