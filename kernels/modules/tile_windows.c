/* TileExtractionModule's tile grid; see tile_windows.h. */
#include "kernels/modules/tile_windows.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"

int64_t
qc_py_round (double v)
{
    double r = nearbyint (v);       /* the default mode: to nearest, ties to even */
    return (int64_t) r;
}

/* numpy.arange (start, stop, step, dtype=int): its length from the float
 * step, its values stepping by int (start + step) - start. */
typedef struct {
    int64_t start, delta;
    size_t n;
} int_range_t;

static int
np_int_arange (int64_t start, int64_t stop, double step, size_t max, int_range_t *r)
{
    double len = ceil (((double) stop - (double) start) / step);
    r->start = start;
    r->delta = (int64_t) ((double) start + step) - start;
    r->n = len > 0 ? (size_t) len : 0;
    return len > (double) max ? -1 : 0;
}

/* The grid's first and last left edges along one axis of the region
 * [lo, hi): HistoQC's max_tile_bbox_top_left_coord, then its arange. */
static int
axis (int64_t lo, int64_t hi, double tile, double stride, size_t max, int_range_t *r)
{
    double max_step = ((double) (hi - lo) - tile) / stride;
    double max_edge = (double) lo + max_step * stride;
    return np_int_arange (lo, (int64_t) max_edge + 1, stride, max, r);
}

/* Tissue pixels in [x0, x1) x [y0, y1), clipped to the mask, from the
 * summed-area table sat ((w + 1) x (h + 1)). */
static uint64_t
tissue_in (const uint64_t *sat, int w, int h, int64_t x0, int64_t y0, int64_t x1,
           int64_t y1)
{
    x0 = x0 < 0 ? 0 : x0 > w ? w : x0;
    x1 = x1 < 0 ? 0 : x1 > w ? w : x1;
    y0 = y0 < 0 ? 0 : y0 > h ? h : y0;
    y1 = y1 < 0 ? 0 : y1 > h ? h : y1;
    if (x1 <= x0 || y1 <= y0)
        return 0;
    size_t s = (size_t) w + 1;
    return sat[(size_t) y1 * s + (size_t) x1] - sat[(size_t) y0 * s + (size_t) x1]
           - sat[(size_t) y1 * s + (size_t) x0] + sat[(size_t) y0 * s + (size_t) x0];
}

static uint64_t *
summed_area (const uint8_t *mask, int w, int h, int64_t box[4])
{
    size_t s = (size_t) w + 1;
    uint64_t *sat = calloc (s * ((size_t) h + 1), sizeof *sat);
    if (!sat)
        return NULL;
    box[0] = w, box[1] = h, box[2] = -1, box[3] = -1;   /* left, top, right, bottom */
    for (int y = 0; y < h; y++) {
        uint64_t row = 0;
        for (int x = 0; x < w; x++) {
            bool on = mask[(size_t) y * (size_t) w + (size_t) x] != 0;
            row += on;
            sat[(size_t) (y + 1) * s + (size_t) x + 1] = sat[(size_t) y * s + (size_t) x + 1] + row;
            if (on) {
                box[0] = x < box[0] ? x : box[0];
                box[1] = y < box[1] ? y : box[1];
                box[2] = x + 1 > box[2] ? x + 1 : box[2];
                box[3] = y + 1 > box[3] ? y + 1 : box[3];
            }
        }
    }
    return sat;
}

int
qc_tile_grid (const uint8_t *mask, int w, int h, int64_t slide_w, int tile_size,
              int tile_stride, double tissue_ratio, size_t max_tiles, qc_tile_grid_t *out,
              char *err, size_t errlen)
{
    if (out)
        memset (out, 0, sizeof *out);
    if (!mask || w < 1 || h < 1 || slide_w < 1 || tile_size < 1 || tile_stride < 1
        || isnan (tissue_ratio) || !out)
        return qc_fail (err, errlen, "tile grid: bad arguments");
    int64_t box[4];
    uint64_t *sat = summed_area (mask, w, h, box);
    if (!sat)
        return qc_fail (err, errlen, "tile grid: out of memory");
    if (box[2] < 0) {           /* no tissue: no region, no tiles */
        free (sat);
        return 0;
    }
    double f = (double) slide_w / (double) w;
    double tile = tile_size / f, stride = tile_stride / f;
    int_range_t xs, ys;
    if (axis (box[0], box[2], tile, stride, max_tiles, &xs) != 0
        || axis (box[1], box[3], tile, stride, max_tiles, &ys) != 0
        || (xs.n && ys.n > max_tiles / xs.n)) {
        free (sat);
        return qc_fail (err, errlen, "the tiles of %d pixels every %d pixels would be "
                        "more than %zu on this slide; give a larger tile_size or "
                        "tile_stride", tile_size, tile_stride, max_tiles);
    }
    out->candidates = xs.n * ys.n;
    out->tiles = out->candidates ? malloc (out->candidates * sizeof *out->tiles) : NULL;
    if (out->candidates && !out->tiles) {
        free (sat);
        return qc_fail (err, errlen, "tile grid: out of memory");
    }
    for (size_t i = 0; i < xs.n; i++)
        for (size_t j = 0; j < ys.n; j++) {
            double l = (double) (xs.start + (int64_t) i * xs.delta);
            double t = (double) (ys.start + (int64_t) j * ys.delta);
            double r = l + tile, b = t + tile;
            int64_t x0 = qc_py_round (l), y0 = qc_py_round (t);
            int64_t x1 = qc_py_round (r), y1 = qc_py_round (b);
            double area = (double) (x1 - x0) * (double) (y1 - y0);
            /* HistoQC: the mean of an empty crop is NaN, never enough */
            if (!(area > 0)
                || !((double) tissue_in (sat, w, h, x0, y0, x1, y1) / area >= tissue_ratio))
                continue;
            out->tiles[out->n++] = (qc_tile_window_t) {
                .left = l, .top = t, .right = r, .bottom = b,
                .x0 = (int64_t) (l * f), .y0 = (int64_t) (t * f),
                .x1 = (int64_t) (r * f), .y1 = (int64_t) (b * f) };
        }
    free (sat);
    return 0;
}
