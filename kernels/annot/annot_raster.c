/* Annotation polygons into a mask; see annot_raster.h. */
#include "kernels/annot/annot_raster.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/annot/annot_line.h"
#include "shared/err.h"

/* Points landing farther out are refused: within it, differences of two
 * coordinates and a fraction of one times another stay finite. */
#define FAR 1e300

/* Where pixel (px, py) samples the polygon: at (px + SAMPLE, py +
 * SAMPLE). 0: the point (px, py), where PIL's fill and its outline both
 * put the pixel. At the middle of the pixel's square (0.5) the fill
 * would sit half a pixel up and left of the outline, leaving a line of
 * unset pixels between the two along edges that face down or right (a
 * triangle's hypotenuse from (20, 0) to (0, 20)). */
#define SAMPLE 0.0

typedef struct {
    double x, y;
} pt_t;

/* An edge of a ring that crosses rows [r0, r1) of the mask: from point
 * i of the ring (of the region at hand, as HistoQC) to the next; for a region drawn as HistoQC's buffer(0) makes
 * it, what crossing it left to right adds to the outer ring's winding
 * number and to its holes' (each ring's turned its own way round). */
typedef struct {
    size_t i;
    int r0, r1;
    uint32_t ring;           /* 0: the outer ring, k: hole k - 1 */
    int8_t dws, dwh;         /* -1, 0 or 1 */
} edge_t;

/* A crossing of a row by an edge, and what it adds to the windings. */
typedef struct {
    double x;
    int dws, dwh;
} cross_t;

typedef struct {
    double off_x, off_y, scale;
    uint8_t *mask;
    int w, h;
    qc_annot_fill_t fill;
    edge_t *edges;           /* room for the longest ring's (region's) edges */
    size_t *active;          /* indices into edges, the row's */
    double *xs;              /* the row's crossings (even-odd) */
    cross_t *cs;             /* ... with what each adds (as HistoQC) */
    uint8_t *flips;          /* h + 1: rows where edges left of the mask start, end */
    int *left_ws, *left_wh;  /* h + 1: the same, as changes to the windings */
    struct edge_index *ix;   /* an outer ring's edges by band, for its holes */
} draw_t;

static pt_t
place (const draw_t *d, const qc_annot_point_t *p)
{
    return (pt_t) { ((double) p->x + d->off_x) * d->scale,
                    ((double) p->y + d->off_y) * d->scale };
}

/* ---- the interior: a scanline fill ------------------------------------ */

/* The first row whose scan line (y = row + SAMPLE) is at or below y,
 * held to [0, h]. */
static int
row_at (double y, int h)
{
    double r = ceil (y - SAMPLE);
    return r < 0 ? 0 : r > h ? h : (int) r;
}

/* Where the line y = yc crosses edge a-b, a the lower end: computed from
 * the lower end, so that an edge gives the same crossing whichever way
 * the ring runs along it. */
static double
cross_x (pt_t a, pt_t b, double yc)
{
    double t = (yc - a.y) / (b.y - a.y);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return a.x + t * (b.x - a.x);
}

/* The pixels of row whose samples (x = px + SAMPLE) are in [a, b), set
 * to v. */
static void
fill_run (uint8_t *row, int w, double a, double b, uint8_t v)
{
    double c0 = ceil (a - SAMPLE), c1 = ceil (b - SAMPLE);
    c0 = c0 < 0 ? 0 : c0;
    c1 = c1 > w ? w : c1;
    if (c1 > c0)
        memset (row + (size_t) c0, v, (size_t) (c1 - c0));
}

static int
by_row (const void *pa, const void *pb)
{
    const edge_t *a = pa, *b = pb;
    if (a->r0 != b->r0)
        return a->r0 < b->r0 ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int
by_value (const void *pa, const void *pb)
{
    double a = *(const double *) pa, b = *(const double *) pb;
    return a < b ? -1 : a > b;
}

/* The lower and upper ends of edge i of r. */
static void
edge_ends (const draw_t *d, const qc_annot_ring_t *r, size_t i, pt_t *lo, pt_t *hi)
{
    pt_t a = place (d, &r->pts[i]), b = place (d, &r->pts[(i + 1) % r->n]);
    bool up = a.y < b.y;
    *lo = up ? a : b;
    *hi = up ? b : a;
}

/* The edges (sorted by their first row) that cross row y, in
 * d->active: the na of row y - 1 that still do, then those from *next
 * on that start there. Their count. */
static size_t
active_at (draw_t *d, int y, size_t na, size_t *next, size_t ne)
{
    size_t keep = 0;
    for (size_t k = 0; k < na; k++)
        if (d->edges[d->active[k]].r1 > y)
            d->active[keep++] = d->active[k];
    while (*next < ne && d->edges[*next].r0 <= y)
        d->active[keep++] = (*next)++;
    return keep;
}

/* Sets the pixels whose samples are inside r (even-odd) to v. Edges are
 * taken row by row, each only over the rows it crosses. An edge wholly
 * left of the mask crosses each of its rows left of every sample: only
 * whether there is an odd number of those matters, kept per row in
 * d->flips; one wholly right of it changes nothing and is left out. So
 * a ring beside the mask costs one look at each point. */
static void
fill_ring (draw_t *d, const qc_annot_ring_t *r, uint8_t v)
{
    size_t ne = 0;
    int rmin = d->h, rmax = 0;
    for (size_t i = 0; i < r->n; i++) {
        pt_t lo, hi;
        edge_ends (d, r, i, &lo, &hi);
        int r0 = row_at (lo.y, d->h), r1 = row_at (hi.y, d->h);
        if (r0 >= r1 || fmin (lo.x, hi.x) >= d->w)
            continue;                   /* no scan line, or right of the mask */
        if (fmax (lo.x, hi.x) <= 0) {
            d->flips[r0] ^= 1;
            d->flips[r1] ^= 1;
        } else
            d->edges[ne++] = (edge_t) { i, r0, r1, 0, 0, 0 };
        rmin = r0 < rmin ? r0 : rmin;
        rmax = r1 > rmax ? r1 : rmax;
    }
    if (rmin >= rmax)
        return;
    qsort (d->edges, ne, sizeof *d->edges, by_row);
    size_t next = 0, na = 0;
    int left = 0;                       /* crossings left of the mask, mod 2 */
    for (int y = rmin; y < rmax; y++) {
        left ^= d->flips[y];
        na = active_at (d, y, na, &next, ne);
        double yc = y + SAMPLE;
        for (size_t k = 0; k < na; k++) {
            pt_t lo, hi;
            edge_ends (d, r, d->edges[d->active[k]].i, &lo, &hi);
            d->xs[k] = cross_x (lo, hi, yc);
        }
        qsort (d->xs, na, sizeof *d->xs, by_value);
        uint8_t *row = d->mask + (size_t) y * (size_t) d->w;
        bool in = left;
        double from = -1.0;             /* left of every sample */
        for (size_t k = 0; k < na; k++) {
            if (in)
                fill_run (row, d->w, from, d->xs[k], v);
            else
                from = d->xs[k];
            in = !in;
        }
        if (in)                         /* the rest crosses right of the mask */
            fill_run (row, d->w, from, d->w + 1.0, v);
    }
    memset (d->flips + rmin, 0, (size_t) (rmax - rmin) + 1);
}

static int
by_x (const void *pa, const void *pb)
{
    const cross_t *a = pa, *b = pb;
    return a->x < b->x ? -1 : a->x > b->x;
}

/* Which value the pixels of a region get, drawn as HistoQC's buffer(0)
 * makes it: ws the outer ring's winding number about them, wh the sum
 * of its holes', each as its ring turns. Pass 1: inside (ws - wh >= 1:
 * GEOS's depth), 1; pass 0: within the outer ring's inside but not the
 * region's (a hole), 0; elsewhere untouched (-1). */
static int
region_value (int ws, int wh, int pass)
{
    if (pass)
        return ws - wh >= 1 ? 1 : -1;
    return ws >= 1 && ws - wh < 1 ? 0 : -1;
}

/* Pass (1 or 0, above) of region g's interior, its rings' edges taken
 * together row by row. A ring runs the way its signed area says (one of
 * none as clockwise: GEOS's area-based orientation), so a part it goes
 * round the other way (a figure eight's second loop) is outside, one
 * it goes round twice inside: shapely's buffer(0), which HistoQC draws,
 * keeps exactly these (checked against shapely 1.8 and GEOS 3.11 on
 * random rings and holes). Edges left of the mask add to each row's
 * starting winding (d->left_ws, left_wh, as changes at their rows). */
static void
fill_region (draw_t *d, const qc_annot_region_t *g, int pass)
{
    size_t ne = 0;
    int rmin = d->h, rmax = 0;
    for (size_t k = 0; k <= g->nholes && k <= UINT32_MAX; k++) {
        const qc_annot_ring_t *r = k == 0 ? &g->outer : &g->holes[k - 1];
        if (r->n < 3 || qc_annot_ring_on_line (r))
            continue;                   /* no interior */
        int turn = qc_annot_ring_turn (r) > 0 ? 1 : -1;
        for (size_t i = 0; i < r->n; i++) {
            pt_t a = place (d, &r->pts[i]), b = place (d, &r->pts[(i + 1) % r->n]);
            pt_t lo = a.y < b.y ? a : b, hi = a.y < b.y ? b : a;
            int r0 = row_at (lo.y, d->h), r1 = row_at (hi.y, d->h);
            if (r0 >= r1 || fmin (lo.x, hi.x) >= d->w)
                continue;
            /* left to right over an edge going down the rows (y up) the
               winding number drops by one */
            int8_t delta = (int8_t) ((a.y < b.y ? -1 : 1) * turn);
            int8_t dws = k == 0 ? delta : 0, dwh = k == 0 ? 0 : delta;
            if (fmax (lo.x, hi.x) <= 0) {
                d->left_ws[r0] += dws;
                d->left_ws[r1] -= dws;
                d->left_wh[r0] += dwh;
                d->left_wh[r1] -= dwh;
            } else
                d->edges[ne++] = (edge_t) { i, r0, r1, (uint32_t) k, dws, dwh };
            rmin = r0 < rmin ? r0 : rmin;
            rmax = r1 > rmax ? r1 : rmax;
        }
    }
    if (rmin >= rmax)
        return;
    qsort (d->edges, ne, sizeof *d->edges, by_row);
    size_t next = 0, na = 0;
    int left_ws = 0, left_wh = 0;
    for (int y = rmin; y < rmax; y++) {
        left_ws += d->left_ws[y];
        left_wh += d->left_wh[y];
        na = active_at (d, y, na, &next, ne);
        double yc = y + SAMPLE;
        for (size_t k = 0; k < na; k++) {
            const edge_t *e = &d->edges[d->active[k]];
            pt_t lo, hi;
            edge_ends (d, e->ring ? &g->holes[e->ring - 1] : &g->outer, e->i, &lo, &hi);
            d->cs[k] = (cross_t) { cross_x (lo, hi, yc), e->dws, e->dwh };
        }
        qsort (d->cs, na, sizeof *d->cs, by_x);
        uint8_t *row = d->mask + (size_t) y * (size_t) d->w;
        int ws = left_ws, wh = left_wh, cur = region_value (ws, wh, pass);
        double from = -1.0;             /* left of every sample */
        for (size_t k = 0; k < na; k++) {
            ws += d->cs[k].dws;
            wh += d->cs[k].dwh;
            int v = region_value (ws, wh, pass);
            if (v == cur)
                continue;
            if (cur >= 0)
                fill_run (row, d->w, from, d->cs[k].x, (uint8_t) cur);
            from = d->cs[k].x;
            cur = v;
        }
        if (cur >= 0)                   /* the rest crosses right of the mask */
            fill_run (row, d->w, from, d->w + 1.0, (uint8_t) cur);
    }
    memset (d->left_ws + rmin, 0, ((size_t) (rmax - rmin) + 1) * sizeof *d->left_ws);
    memset (d->left_wh + rmin, 0, ((size_t) (rmax - rmin) + 1) * sizeof *d->left_wh);
}

/* ---- the outline: lines along the edges -------------------------------- */

/* v to the nearest integer, halves up. */
static double
nearest (double v)
{
    return floor (v + 0.5);
}

static void
plot (draw_t *d, double x, double y, uint8_t v)
{
    if (x >= 0 && x < d->w && y >= 0 && y < d->h)
        d->mask[(size_t) y * (size_t) d->w + (size_t) x] = v;
}

/* An edge from (a0, b0) to (a1, b1) along its longer axis a (|a1 - a0|
 * >= |b1 - b0|): one pixel at each integer a from a0 to a1 rounded, at
 * the edge's b there rounded (beyond an end, the end's b). swap: a is
 * the mask's y. Only the a whose b can land on the mask are visited. */
static void
line_along (draw_t *d, double a0, double b0, double a1, double b1, bool swap, uint8_t v)
{
    if (a1 < a0) {
        double t = a0;
        a0 = a1, a1 = t;
        t = b0, b0 = b1, b1 = t;
    }
    int na = swap ? d->h : d->w, nb = swap ? d->w : d->h;
    double da = a1 - a0, db = b1 - b0;
    double lo = fmax (nearest (a0), 0), hi = fmin (nearest (a1), na - 1);
    if (db != 0) {
        /* the a where b is within [-0.5, nb - 0.5], a step wider */
        double e0 = a0 + (-0.5 - b0) / db * da, e1 = a0 + (nb - 0.5 - b0) / db * da;
        lo = fmax (lo, floor (fmin (e0, e1)) - 1);
        hi = fmin (hi, ceil (fmax (e0, e1)) + 1);
    } else if (nearest (b0) < 0 || nearest (b0) >= nb)
        return;
    if (!(lo <= hi))
        return;
    /* (a - a0) * db / da: exact while the product is (Bresenham's pixels
       for integral ends), a ratio first where it could overflow */
    bool product = da <= 0x1p52;
    for (int a = (int) lo; a <= (int) hi; a++) {
        double b = a <= a0 ? b0
                   : a >= a1 ? b1
                   : product ? b0 + (a - a0) * db / da
                             : b0 + (a - a0) / da * db;
        if (swap)
            plot (d, nearest (b), a, v);
        else
            plot (d, a, nearest (b), v);
    }
}

/* Each edge along its longer axis, and each point rounded. The edge's
 * own line, not the line between its rounded ends, so that the outline
 * is never more than half a pixel from the edge: the fill's pixels end
 * there, and the two meet without a gap. */
static void
outline_ring (draw_t *d, const qc_annot_ring_t *r, uint8_t v)
{
    for (size_t i = 0; i < r->n; i++) {
        pt_t p = place (d, &r->pts[i]), q = place (d, &r->pts[(i + 1) % r->n]);
        if (fabs (q.x - p.x) >= fabs (q.y - p.y))
            line_along (d, p.x, p.y, q.x, q.y, false, v);
        else
            line_along (d, p.y, p.x, q.y, q.x, true, v);
        plot (d, nearest (p.x), nearest (p.y), v);
    }
}

/* Whether ring r lies wholly off the mask: no sample inside, no
 * rounded point on it (an empty ring too). */
static bool
off_mask (const draw_t *d, const qc_annot_ring_t *r)
{
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < r->n; i++) {
        pt_t p = place (d, &r->pts[i]);
        x0 = fmin (x0, p.x), x1 = fmax (x1, p.x);
        y0 = fmin (y0, p.y), y1 = fmax (y1, p.y);
    }
    return r->n == 0 || x1 < -1 || y1 < -1 || x0 > d->w || y0 > d->h;
}

static void
draw_ring (draw_t *d, const qc_annot_ring_t *r, uint8_t v)
{
    if (off_mask (d, r))
        return;
    if (!qc_annot_ring_on_line (r))
        fill_ring (d, r, v);
    outline_ring (d, r, v);
}

/* What edge i of ring b (point i to the next) adds to b's winding
 * number about p: upward edges with p on their left +1, downward with
 * p on their right -1 (the crossing is right of p); 0 for an edge not
 * across p's row. Exact for any int64 points. */
static int
edge_winding (const qc_annot_ring_t *b, size_t i, qc_annot_point_t p)
{
    /* (no % per look: a division, a good part of a look's time) */
    qc_annot_point_t a = b->pts[i], c = b->pts[i + 1 == b->n ? 0 : i + 1];
    if ((a.y <= p.y) == (c.y <= p.y))
        return 0;
    int side = qc_annot_side (a, c, p);
    if (c.y > a.y && side > 0)
        return 1;
    if (c.y < a.y && side < 0)
        return -1;
    return 0;
}

/* ---- holes looked for in their outer ring ------------------------------ */

/* An outer ring's edges by bands of its height, so that a hole's point
 * is tried against the edges across its row only, not every edge of
 * the ring: a tissue outline of 200,000 points with 20,000 holes was
 * refused as too much work before (4 billion edge looks). Band k holds
 * the edges whose y range meets it: at[start[k]] .. at[start[k + 1]).
 * Built in buffers made for the largest outer ring (index_room). */
typedef struct edge_index {
    double y0, per;          /* band of y: (y - y0) * per */
    size_t nb;               /* bands: 0 when the ring is looked through whole */
    size_t *start;           /* room for n + 1 */
    size_t *at;              /* room for INDEX_SPREAD * n */
    size_t room;             /* the n they were made for */
} edge_index_t;

/* The most entries an index may hold, a point of its ring: a ring
 * whose edges each span much of its height (a zigzag) is looked through
 * whole, as it costs no more. */
#define INDEX_SPREAD 4

/* The band of y. Monotonic in y (each step is), so an edge registered
 * in the bands of its two ends' y is in the band of every y between,
 * whatever the rounding; held to the bands. */
static size_t
band_of (const edge_index_t *x, int64_t y)
{
    double b = ((double) y - x->y0) * x->per;
    return !(b > 0) ? 0 : b >= (double) (x->nb - 1) ? x->nb - 1 : (size_t) b;
}

/* Indexes ring b's edges in x; false (x->nb 0) when it is too short to
 * gain from it, too large for x's room or too spread (INDEX_SPREAD). */
static bool
index_build (edge_index_t *x, const qc_annot_ring_t *b)
{
    if (!x)
        return false;
    x->nb = 0;
    if (b->n < 16 || b->n > x->room || !x->start || !x->at)
        return false;
    int64_t lo = b->pts[0].y, hi = lo;
    for (size_t i = 1; i < b->n; i++) {
        lo = b->pts[i].y < lo ? b->pts[i].y : lo;
        hi = b->pts[i].y > hi ? b->pts[i].y : hi;
    }
    /* a band per point, no thinner than a unit of y (points are whole) */
    double height = (double) hi - (double) lo + 1;
    x->nb = height < (double) b->n ? (size_t) height : b->n;
    x->nb = x->nb ? x->nb : 1;
    x->y0 = (double) lo;
    x->per = (double) x->nb / height;
    memset (x->start, 0, (x->nb + 1) * sizeof *x->start);
    size_t total = 0;
    for (size_t i = 0; i < b->n; i++) {
        int64_t ay = b->pts[i].y, cy = b->pts[(i + 1) % b->n].y;
        if (ay == cy)
            continue;                    /* across no row: never counts */
        size_t k0 = band_of (x, ay < cy ? ay : cy), k1 = band_of (x, ay < cy ? cy : ay);
        total += k1 - k0 + 1;
        if (total > INDEX_SPREAD * b->n) {
            x->nb = 0;
            return false;
        }
        for (size_t k = k0; k <= k1; k++)
            x->start[k + 1]++;
    }
    for (size_t k = 0; k < x->nb; k++)
        x->start[k + 1] += x->start[k];
    /* each band's next free place in start[k], then shifted back */
    for (size_t i = 0; i < b->n; i++) {
        int64_t ay = b->pts[i].y, cy = b->pts[(i + 1) % b->n].y;
        if (ay == cy)
            continue;
        size_t k0 = band_of (x, ay < cy ? ay : cy), k1 = band_of (x, ay < cy ? cy : ay);
        for (size_t k = k0; k <= k1; k++)
            x->at[x->start[k]++] = i;
    }
    for (size_t k = x->nb; k > 0; k--)
        x->start[k] = x->start[k - 1];
    x->start[0] = 0;
    return true;
}

/* The edges hole_in_outer looks at for point p: those of p's band, or
 * (no index) all the ring's. */
static size_t
edges_looked (const edge_index_t *x, const qc_annot_ring_t *b, qc_annot_point_t p)
{
    if (!x || !x->nb)
        return b->n;
    size_t k = band_of (x, p.y);
    return x->start[k + 1] - x->start[k];
}

/* The winding number of ring b about point p (level-0 pixels), turned
 * by turn (b's qc_annot_ring_turn, taken once a region): at least 1
 * inside what buffer(0) keeps of b. Through index x when it has one
 * (an edge not across p's row adds nothing). */
static int
turned_winding (const qc_annot_ring_t *b, const edge_index_t *x, int turn,
                qc_annot_point_t p)
{
    int w = 0;
    if (x && x->nb) {
        size_t k = band_of (x, p.y);
        for (size_t e = x->start[k]; e < x->start[k + 1]; e++)
            w += edge_winding (b, x->at[e], p);
    } else
        for (size_t i = 0; i < b->n; i++)
            w += edge_winding (b, i, p);
    return w * (turn > 0 ? 1 : -1);
}

/* The points of hole a that hole_in_outer tries: 16 at most. */
static size_t
hole_tries (const qc_annot_ring_t *a)
{
    return a->n < 16 ? a->n : 16;
}

/* Whether hole a of outer ring b (turned by turn; x: b's index, or
 * none) lies, at least in part, in what buffer(0) keeps of b: one of
 * hole_tries of its points, spread along it, is. A hole wholly outside
 * (beside the ring, in the notch of an L) is no part of the region:
 * buffer(0) drops it, and HistoQC clears nothing of it. */
static bool
hole_in_outer (const qc_annot_ring_t *a, const qc_annot_ring_t *b, const edge_index_t *x,
               int turn)
{
    size_t tries = hole_tries (a);
    for (size_t k = 0; k < tries; k++)
        if (turned_winding (b, x, turn, a->pts[k * a->n / tries]) >= 1)
            return true;
    return false;
}

/* Region g: as each ring on its own (even-odd: its outer ring in 1, then
 * each hole in 0), or as HistoQC's buffer(0) makes it (fill_region): its
 * inside in 1 and the outer ring's outline, then its holes in 0 and
 * their outlines, the order the even-odd drawing has, so that a valid
 * polygon (no ring crossing itself or another) is drawn the same both
 * ways. */
static void
draw_region (draw_t *d, const qc_annot_region_t *g)
{
    if (d->fill == QC_ANNOT_FILL_EVEN_ODD) {
        draw_ring (d, &g->outer, 1);
        for (size_t j = 0; j < g->nholes; j++)
            draw_ring (d, &g->holes[j], 0);
        return;
    }
    bool outer_on = !off_mask (d, &g->outer);
    if (outer_on) {
        fill_region (d, g, 1);
        outline_ring (d, &g->outer, 1);
        if (g->nholes)
            fill_region (d, g, 0);
    }
    /* a hole wholly outside its outer ring is no part of the region
       (buffer(0) drops it): its outline clears nothing */
    if (!outer_on || !g->nholes)
        return;
    int turn = qc_annot_ring_turn (&g->outer);
    index_build (d->ix, &g->outer);
    for (size_t j = 0; j < g->nholes; j++)
        if (!off_mask (d, &g->holes[j]) && hole_in_outer (&g->holes[j], &g->outer, d->ix, turn))
            outline_ring (d, &g->holes[j], 0);
}

/* ---- arguments --------------------------------------------------------- */

/* The most work drawing may take: row crossings of the fill and pixels
 * of the outline, each edge's bounded by the mask's size, and the rows
 * each ring's fill goes over, a row's look and its runs set (ROW_WORK)
 * (~50 ns each here, so ~20 s). A file is whoever wrote it's: a zigzag
 * of 100,000 points whose every edge spans the mask took 5 s on 1000 x
 * 1000, 100,000 rectangles around the mask (edges off it, rows filled
 * whole) 2.5-4.5 s, and the parser admits 500 times as many points.
 * Real annotations are tissue outlines, regions and cells, whose edges
 * are short at the mask's scale: a million points cost a few million. */
#define MAX_WORK 4e8

/* A row a ring's fill goes over: a look at it, and up to the mask's
 * width set (memset: ~512 bytes in the time of one crossing). */
#define ROW_WORK(w) (1.0 + (double) (w) / 512.0)

/* An edge of an outer ring that hole_in_outer looks at for a hole's
 * point, or that its index takes in: a tenth of a crossing. Measured
 * on a loaded 2-core machine, a look took 7 ns (an edge not across the
 * row) to 11 ns (across it: the exact side test), a crossing ~130 ns:
 * through the index most looks are of the dearer kind, and a ring
 * whose edges all fall in one band took 98 s counted at a 25th (a
 * review). Unbounded before that, a circle of 40,000 points with
 * 40,000 small holes took 20 s and twice as many four times as long. */
#define HOLE_LOOK_WORK (1.0 / 10.0)

/* The work of looking for regions' holes in their outer rings, as
 * draw_region does (through d's index where it takes the ring): each
 * index made, and each try's edges. */
static double
holes_work (draw_t *d, const qc_annot_region_t *regions, size_t n)
{
    double looks = 0;
    for (size_t i = 0; i < n; i++) {
        const qc_annot_region_t *g = &regions[i];
        if (!g->nholes || off_mask (d, &g->outer))
            continue;
        if (index_build (d->ix, &g->outer))
            looks += 3.0 * (double) g->outer.n + (double) d->ix->start[d->ix->nb];
        for (size_t j = 0; j < g->nholes; j++) {
            const qc_annot_ring_t *a = &g->holes[j];
            if (off_mask (d, a))
                continue;
            size_t tries = hole_tries (a);
            for (size_t k = 0; k < tries; k++)
                looks += (double) edges_looked (d->ix, &g->outer, a->pts[k * a->n / tries]);
        }
    }
    return looks * HOLE_LOOK_WORK;
}

/* Checks ring r (hole: which one, or -1 for the outer ring), notes its
 * length in *longest and adds its drawing's work (at most) to *work. */
static int
check_ring (const draw_t *d, const qc_annot_ring_t *r, size_t *longest, size_t region,
            long long hole, double *work, char *err, size_t errlen)
{
    char what[48] = "outer ring";
    if (hole >= 0)
        snprintf (what, sizeof what, "hole %lld", hole);
    if (r->n && !r->pts)
        return qc_fail (err, errlen, "drawing annotations: region %zu's %s has %zu "
                        "points but no array of them", region, what, r->n);
    double most = d->w > d->h ? d->w : d->h;
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < r->n; i++) {
        pt_t p = place (d, &r->pts[i]);
        x0 = fmin (x0, p.x), x1 = fmax (x1, p.x);
        y0 = fmin (y0, p.y), y1 = fmax (y1, p.y);
        if (!(fabs (p.x) <= FAR && fabs (p.y) <= FAR))
            return qc_fail (err, errlen, "drawing annotations: region %zu's %s: point "
                            "%zu (%lld, %lld) lands beyond %g on the mask", region, what,
                            i, (long long) r->pts[i].x, (long long) r->pts[i].y, FAR);
        /* an edge off the mask costs a look (one left of it, a flip of
           two rows' parity); one over it, its rows and its length
           there. q may be beyond FAR yet: checked in its turn, and the
           comparisons below are false for what is not finite */
        pt_t q = place (d, &r->pts[(i + 1) % r->n]);
        *work += 2;
        if (!(fmax (p.x, q.x) >= -1 && fmin (p.x, q.x) <= d->w
              && fmax (p.y, q.y) >= -1 && fmin (p.y, q.y) <= d->h))
            continue;
        double dx = fabs (q.x - p.x), dy = fabs (q.y - p.y);
        dy = dy <= d->h ? dy : d->h;
        dx = dx > dy ? dx : dy;
        *work += dy + (dx <= most ? dx : most);
    }
    /* the rows its fill goes over, when it is on the mask at all
       (off_mask): those of its box there */
    if (r->n && !(x1 < -1 || y1 < -1 || x0 > d->w || y0 > d->h))
        *work += (fmin (y1, d->h) - fmax (y0, 0) + 1) * ROW_WORK (d->w);
    *longest = r->n > *longest ? r->n : *longest;
    return 0;
}

/* The refusal of a drawing whose work is over MAX_WORK. */
static int
too_much (size_t npoints, int w, int h, double work, char *err, size_t errlen)
{
    return qc_fail (err, errlen, "drawing annotations: %zu points whose edges cross "
                    "the %d x %d mask %.3g times (at most %.0f are drawn): too "
                    "intricate; simplify the annotation (fewer and shorter edges)",
                    npoints, w, h, work, MAX_WORK);
}

int
qc_annot_draw (const qc_annot_region_t *regions, size_t n, double off_x, double off_y,
               double scale, qc_annot_fill_t fill, uint8_t *mask, int w, int h,
               char *err, size_t errlen)
{
    if ((!regions && n) || !mask || w < 1 || h < 1 || !isfinite (off_x)
        || !isfinite (off_y) || !isfinite (scale) || !(scale > 0)
        || (fill != QC_ANNOT_FILL_EVEN_ODD && fill != QC_ANNOT_FILL_AS_HISTOQC))
        return qc_fail (err, errlen, "drawing annotations: bad arguments");
    draw_t d = { .off_x = off_x, .off_y = off_y, .scale = scale, .mask = mask,
                 .w = w, .h = h, .fill = fill };
    size_t longest = 0, npoints = 0, holed = 0;
    double work = 0;
    for (size_t i = 0; i < n; i++) {
        const qc_annot_region_t *g = &regions[i];
        size_t region_points = npoints;
        double region_work = work;
        npoints += g->outer.n;
        if (check_ring (&d, &g->outer, &longest, i, -1, &work, err, errlen) != 0)
            return -1;
        if (g->nholes && !g->holes)
            return qc_fail (err, errlen, "drawing annotations: region %zu has %zu holes "
                            "but no array of them", i, g->nholes);
        for (size_t j = 0; j < g->nholes; j++) {
            npoints += g->holes[j].n;
            if (check_ring (&d, &g->holes[j], &longest, i, (long long) j, &work, err,
                            errlen) != 0)
                return -1;
        }
        /* as HistoQC: a region's rings are filled together, twice when
           it has holes, and each hole is looked for in its outer ring */
        if (fill == QC_ANNOT_FILL_AS_HISTOQC) {
            region_points = npoints - region_points;
            longest = region_points > longest ? region_points : longest;
            if (g->nholes) {
                work += work - region_work;
                holed = g->outer.n > holed ? g->outer.n : holed;
            }
        }
    }
    if (work > MAX_WORK)
        return too_much (npoints, w, h, work, err, errlen);
    if (longest > SIZE_MAX / sizeof *d.edges || longest > SIZE_MAX / sizeof *d.cs)
        return qc_fail (err, errlen, "drawing annotations: a ring of %zu points is "
                        "too long", longest);
    size_t m = longest ? longest : 1;
    d.edges = malloc (m * sizeof *d.edges);
    d.active = malloc (m * sizeof *d.active);
    bool whole = fill == QC_ANNOT_FILL_AS_HISTOQC;
    if (whole) {
        d.cs = malloc (m * sizeof *d.cs);
        d.left_ws = calloc ((size_t) h + 1, sizeof *d.left_ws);
        d.left_wh = calloc ((size_t) h + 1, sizeof *d.left_wh);
    } else {
        d.xs = malloc (m * sizeof *d.xs);
        d.flips = calloc ((size_t) h + 1, 1);
    }
    int rc = 0;
    /* the index of the largest outer ring with holes (HistoQC's) */
    edge_index_t ix = { .room = holed };
    if (whole && holed >= 16) {
        ix.start = malloc ((holed + 1) * sizeof *ix.start);
        ix.at = malloc (INDEX_SPREAD * holed * sizeof *ix.at);
        d.ix = &ix;
    }
    if (!d.edges || !d.active
        || (whole ? !d.cs || !d.left_ws || !d.left_wh : !d.xs || !d.flips)
        || (d.ix && (!ix.start || !ix.at))) {
        qc_oom_note ();
        rc = qc_fail (err, errlen, "drawing annotations: out of memory for a ring of "
                      "%zu points", longest);
    } else if (whole && (work += holes_work (&d, regions, n)) > MAX_WORK)
        rc = too_much (npoints, w, h, work, err, errlen);
    else
        for (size_t i = 0; i < n; i++)
            draw_region (&d, &regions[i]);
    free (ix.start);
    free (ix.at);
    free (d.edges);
    free (d.active);
    free (d.xs);
    free (d.cs);
    free (d.flips);
    free (d.left_ws);
    free (d.left_wh);
    return rc;
}
