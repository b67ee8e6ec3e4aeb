/* Whether an annotation ring has no area. Both the reader and the
 * rasterizer ask: the reader leaves such a ring out as HistoQC does
 * (shapely's buffer(0) makes its polygon empty), the rasterizer does not
 * fill one on a line (the mapping to the mask keeps lines lines, so it
 * has no interior however it is rounded). */
#ifndef QC_ANNOT_LINE_H
#define QC_ANNOT_LINE_H

#include <stdbool.h>

#include "kernels/annot/annot_parse.h"

/* The most points of a ring whose edges qc_annot_ring_no_area sets out
 * to cancel (two ends of 48 bytes a point: 12 MB, held a moment while
 * the file's memory is counted at a worker's gate): a ring of more is
 * taken to have area. Hand-drawn rings of no area are small; a ring of
 * a hundred thousand points whose signed area is exactly 0 is someone's
 * test. */
#define QC_ANNOT_CANCEL_POINTS 125000

/* Whether the ring's points all lie on one line (one point, the same
 * point repeated, a line clicked back and forth). Exactly, in the
 * integers. An empty ring (or NULL) is on a line. */
bool qc_annot_ring_on_line (const qc_annot_ring_t *r);

/* Whether the ring covers nothing: on a line (above), or its edges
 * cancel, each stretch of each line traced as often one way as back (a
 * spike drawn out and back from a point of a line: (0,0) (10,0) (10,10)
 * (10,0)). Exactly, in the integers; a ring with a point beyond
 * QC_ANNOT_MAX_COORD, or of more than QC_ANNOT_CANCEL_POINTS points and
 * not on a line, or whose check finds no memory, is taken to have area.
 * A figure eight has area: its signed area is 0, but it covers two. */
bool qc_annot_ring_no_area (const qc_annot_ring_t *r);

/* The sign of the ring's signed area (shoelace: positive when it turns
 * from +x towards +y), exactly for points within QC_ANNOT_MAX_COORD: 1,
 * -1, or 0 (no area, a figure eight's two lobes balanced, NULL or under
 * 3 points). Which way shapely's buffer(0) takes a self-crossing ring
 * to run (GEOS's area-based orientation; annot_raster.h). */
int qc_annot_ring_turn (const qc_annot_ring_t *r);

/* The side of the line from a to b that p is on: 1 left (the cross
 * product (b - a) x (p - a) is positive: turning from +x towards +y),
 * -1 right, 0 on the line. Exactly, for any int64 points (the products
 * in 128 bits: long double's 64-bit mantissa gave 0 for +2 at 1e12). */
int qc_annot_side (qc_annot_point_t a, qc_annot_point_t b, qc_annot_point_t p);

#endif
