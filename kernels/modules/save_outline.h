/* The outlines of a mask as polygons with holes, for
 * SaveModule.saveMask2Geojson (save_geojson.c); a pure function over a
 * kernels/image.h mask, unit-tested on its own.
 *
 * Each 4-connected piece of set pixels becomes one polygon: its outline
 * and the outlines of the holes in it. Outlines run along the pixels'
 * edges (vertex (x, y) is the top-left corner of pixel (x, y)), so a
 * polygon's area is exactly its piece's pixel count. Only corners are
 * vertices (straight runs are one edge, as OpenCV's CHAIN_APPROX_SIMPLE).
 *
 * Rings are simple (no vertex twice): where two diagonal pixels meet at a
 * corner (a "saddle"), the outline turns around its own pixel, so a
 * ring never crosses another or itself; a ring that would pass through a
 * saddle twice is split there into two rings that touch at that point,
 * which the OGC simple-features rules (and so JTS, which QuPath uses)
 * accept: a hole may touch its outline or another hole at one point.
 * The outline has a positive shoelace area in (x, y) as written
 * (counter-clockwise when y points up, as RFC 7946 asks), holes a
 * negative one. Rings are not closed: the first vertex is not repeated.
 *
 * Polygons come in the raster order of their pieces' first pixels
 * (skimage.measure.label's numbering); holes in the order they were
 * met. */
#ifndef QC_MODULES_SAVE_OUTLINE_H
#define QC_MODULES_SAVE_OUTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"

typedef struct qc_outlines {
    size_t npolygons;
    size_t *poly_ring;     /* npolygons + 1: first ring of each polygon;
                              that ring is its outline, the rest holes */
    size_t nrings;
    size_t *ring_vertex;   /* nrings + 1: first vertex of each ring */
    size_t nvertices;
    int32_t *xy;           /* 2 * nvertices: x, y of each vertex */
} qc_outlines_t;

/* Traces mask (ops labels its pieces; NULL = the CPU's). On success
 * *out holds the polygons (none for an empty mask) and 0 is returned;
 * -1 on a bad argument or when memory runs out. */
int qc_outlines_trace (const qc_ops_t *ops, const qc_mask_t *mask,
                       qc_outlines_t **out);
void qc_outlines_destroy (qc_outlines_t **self_p);

/* Twice the signed (shoelace) area of a ring; 0 for a bad index. */
int64_t qc_outlines_ring_area2 (const qc_outlines_t *o, size_t ring);

#endif
