/* Annotation polygons drawn into a binary mask, as HistoQC's
 * AnnotationModule (annotation_to_mask, polygon_filled) draws them with
 * PIL on a mode-"1" image of the mask's size.
 *
 * Regions are drawn in order, each its outer ring in 1, then each of its
 * holes in 0: a later region's outer ring fills over an earlier one's
 * hole, a later region's hole clears an earlier one's fill. A point
 * (x, y), in level-0 pixels, lands on the mask at ((x + off_x) * scale,
 * (y + off_y) * scale), computed in double (HistoQC translates, then
 * scales about the origin). A ring is closed (its last point joins its
 * first; a repeated closing point changes nothing).
 *
 * A pixel is a point: pixel (px, py) is the point (px, py) of the mask,
 * as PIL draws (its fill and its outline both). Drawing a ring in value
 * v sets to v:
 *  - its interior: the pixels inside the ring (by the even-odd rule,
 *    PIL's where a ring crosses itself, or as buffer(0) makes the
 *    region: qc_annot_fill_t below), from the exact (unrounded) points. Per row, the ring's edges cross
 *    the line y = py where one end is <= py and the other > py (an edge
 *    along the line crosses nowhere); the crossings, sorted, bound runs
 *    [x0, x1), [x2, x3), ... and pixel px is in when px is in a run. A
 *    ring whose points all lie on one line (exactly, in the integers)
 *    has no interior;
 *  - its outline, which marks the pixels an edge passes through or by
 *    (PIL's fill is closed: it takes them too), so that an annotation
 *    thinner than a pixel at the mask's scale still marks pixels: each
 *    edge along its longer axis, one pixel at each integer step from
 *    one end rounded to the nearest pixel to the other, at the edge's
 *    own position on the other axis there rounded (beyond an end, the
 *    end's), as Bresenham's line between integral ends; and each point
 *    rounded. Rounding is to the nearest integer, halves up. Following
 *    the edge itself, not the line between its rounded ends, keeps the
 *    outline within half a pixel of the edge, where the fill ends: the
 *    two meet without a gap.
 * Pixels are not sampled at the middle of their squares (x + 0.5,
 * y + 0.5): the fill would then sit half a pixel up and left of the
 * outline, leaving a line of unset pixels between the two along edges
 * that face down or right.
 *
 * Everything is clipped to the mask: points may lie anywhere an int64
 * reaches, and a ring's work is its points plus the rows and columns it
 * covers on the mask (a ring wholly off the mask, or beside it, costs
 * one look at each point). Exact parity with PIL is not promised:
 * HistoQC's call draws PIL's fill alone (PIL skips an outline of the
 * fill's own value), which truncates the points to integers first and
 * is closed (it takes the pixels its edges pass through, and the
 * nearest pixel at each end of a run), so pixels on a polygon's border
 * may differ. */
#ifndef QC_ANNOT_RASTER_H
#define QC_ANNOT_RASTER_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/annot/annot_parse.h"     /* qc_annot_region_t */

/* How a region's inside is found:
 *  - QC_ANNOT_FILL_EVEN_ODD: each ring on its own by the even-odd rule
 *    (above), its outer ring in 1 and then each hole in 0, as HistoQC's
 *    earlier steps (xmlMask, geoJSONMask) drew the points as read;
 *  - QC_ANNOT_FILL_AS_HISTOQC: the region as shapely's buffer(0) makes
 *    it, which saveAnnotationMask draws: each ring turned the way its
 *    signed area says (clockwise when it has none), a pixel is inside
 *    where the outer ring's winding number less its holes' is at least
 *    1, so a loop a self-crossing ring goes round the other way (a
 *    figure eight's second) is out and one it goes round twice is in;
 *    within the outer ring's inside, pixels outside the region (its
 *    holes) are set 0; its outlines as above, but for a hole wholly
 *    outside its outer ring (none of 16 of its points inside: buffer(0)
 *    drops it). A valid polygon (no ring crosses itself or another) is
 *    drawn the same both ways. Where rings cross, three differences
 *    stay: the outline of a part left out is still drawn (buffer(0)'s
 *    polygon has no such edge); a hole across its outer ring clears the
 *    notch it makes (HistoQC clears only holes the region surrounds,
 *    and this one is outside it), and one a ring makes by going round
 *    a part no times (a loop inside a loop, the other way) is not
 *    cleared (HistoQC clears it): in both, what an earlier region drew
 *    there differs. And a ring with part of an edge traced there and
 *    back besides its area (a triangle whose top edge is gone over out
 *    and back, then again: (0,1000) (1000,1000) (0,1000) (0,0)
 *    (1000,1000)) is filled, where GEOS 3.11's buffer(0) empties it (19
 *    of 60,000 random rings, a review found; none the other way). */
typedef enum {
    QC_ANNOT_FILL_EVEN_ODD,
    QC_ANNOT_FILL_AS_HISTOQC,
} qc_annot_fill_t;

/* Draws regions[0..n) into mask (w x h bytes, 0/1, row by row), which the
 * caller zeroed, their insides found as fill says. 0, or -1 with err and the mask untouched: bad arguments
 * (regions NULL with n > 0, a ring or hole list NULL with points in it,
 * mask NULL, w or h < 1, offsets not finite, scale not finite or not
 * > 0, fill not one of the above, a point that lands beyond +-1e300), no memory, or polygons
 * whose edges would cross the mask's rows and columns more than 4e8
 * times in all (a zigzag of long edges: ~20 s of drawing; real
 * outlines' edges are short at the mask's scale), with, as HistoQC
 * draws, the outer ring's edges each hole is looked for against (those
 * across the hole's rows, through an index of the ring by bands of its
 * height; every edge of a zigzag), refused before any drawing. */
int qc_annot_draw (const qc_annot_region_t *regions, size_t n, double off_x,
                   double off_y, double scale, qc_annot_fill_t fill, uint8_t *mask,
                   int w, int h, char *err, size_t errlen);

#endif
