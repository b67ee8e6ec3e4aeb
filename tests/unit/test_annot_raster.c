/* The annotation rasterizer (kernels/annot/annot_raster.c): rectangles
 * and a triangle whose pixels are counted by hand, outline included, at
 * level 0 and scaled by 1/32 with an offset; a triangle, an L and a
 * pentagram (where even-odd leaves the middle out) against a brute-force
 * test of every pixel; no gap between fill and outline (random convex
 * polygons, at scales that put points on halves, fill every row and
 * column in one run); holes, and regions drawn in order over each other's
 * holes and fill; a self-crossing bowtie; lines, slivers thinner than a
 * pixel, rings on one line; rings far off the mask (quick, nothing
 * drawn) or around it, coordinates of 1e15 and int64's ends; every
 * refusal, with the mask untouched. The bound on the drawing's work is
 * tested in test_annot_work.c, the exact side test in
 * test_annot_side.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "kernels/annot/annot_raster.h"
#include "tests/unit/annot_draw_fixtures.h"
#include "tests/unit/check.h"

/* Whether m is set exactly on [x0, x1] x [y0, y1] (inclusive). */
static bool
is_box (const uint8_t *m, int w, int h, int x0, int y0, int x1, int y1)
{
    if (!m)
        return false;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            bool in = x >= x0 && x <= x1 && y >= y0 && y <= y1;
            if ((m[y * w + x] != 0) != in)
                return false;
        }
    return true;
}

/* ---- brute force ------------------------------------------------------- */

typedef struct {
    double x, y;
} dpt_t;

static dpt_t
mapped (qc_annot_point_t p, double ox, double oy, double s)
{
    return (dpt_t) { ((double) p.x + ox) * s, ((double) p.y + oy) * s };
}

/* Crossings of the ray from (cx, cy) leftwards: even-odd, or (as
 * HistoQC's buffer(0)) the winding number, the ring turned the way its
 * signed area says (clockwise when none), at least 1. */
static bool
inside (const dpt_t *q, size_t n, double cx, double cy)
{
    bool in = false;
    int wind = 0;
    double area = 0;
    for (size_t i = 0; i < n; i++) {
        dpt_t a = q[i], b = q[(i + 1) % n];
        area += a.x * b.y - b.x * a.y;
        if ((a.y <= cy) != (b.y <= cy)) {
            double x = a.x + (cy - a.y) / (b.y - a.y) * (b.x - a.x);
            if (x <= cx) {
                in = !in;
                wind -= b.y > a.y ? 1 : -1;     /* leftwards: the other sign */
            }
        }
    }
    if (s_fill == QC_ANNOT_FILL_EVEN_ODD)
        return in;
    return wind * (area > 0 ? 1 : -1) >= 1;
}

static double
seg_dist (dpt_t a, dpt_t b, double x, double y)
{
    double dx = b.x - a.x, dy = b.y - a.y, l2 = dx * dx + dy * dy;
    double t = l2 > 0 ? ((x - a.x) * dx + (y - a.y) * dy) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypot (a.x + t * dx - x, a.y + t * dy - y);
}

static double
ring_dist (const dpt_t *q, size_t n, double x, double y)
{
    double d = INFINITY;
    for (size_t i = 0; i < n; i++)
        d = fmin (d, seg_dist (q[i], q[(i + 1) % n], x, y));
    return d;
}

/* v to the nearest integer, halves up, as the outline's vertices. */
static double
nearest (double v)
{
    return floor (v + 0.5);
}

/* Draws ring r and compares each pixel (px, py), the point (px, py),
 * with the brute force: a pixel inside must be set; one outside must be
 * clear unless the outline (within half a pixel of an edge across it,
 * less than 0.75 from it at its ends) may have set it. Pixels on an
 * edge are left out. */
static void
against_brute (const char *name, qc_annot_ring_t r, double ox, double oy, double s, int w,
               int h)
{
    uint8_t *m = draw_ring (r, ox, oy, s, w, h);
    CHECK (m, "%s: %s", name, err);
    if (!m)
        return;
    dpt_t q[64], qr[64];
    for (size_t i = 0; i < r.n && i < 64; i++) {
        q[i] = mapped (r.pts[i], ox, oy, s);
        qr[i] = (dpt_t) { nearest (q[i].x), nearest (q[i].y) };
    }
    int bad = 0, inner = 0, outer = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (ring_dist (q, r.n, x, y) < 1e-9)
                continue;
            bool want = inside (q, r.n, x, y), got = m[y * w + x];
            if (want)
                inner++;
            if (!want && ring_dist (q, r.n, x, y) > 0.75) {
                outer++;
                if (got) {
                    if (bad++ < 5)
                        fprintf (stderr, "%s: pixel (%d, %d) set outside\n", name, x, y);
                }
            } else if (want && !got && bad++ < 5)
                fprintf (stderr, "%s: pixel (%d, %d) clear inside\n", name, x, y);
        }
    CHECK (bad == 0 && inner > 20 && outer > 20, "%s: %d wrong (%d inside, %d outside)",
           name, bad, inner, outer);
    /* the rounded vertices are on the outline */
    for (size_t i = 0; i < r.n; i++)
        if (qr[i].x >= 0 && qr[i].x < w && qr[i].y >= 0 && qr[i].y < h)
            CHECK (m[(int) qr[i].y * w + (int) qr[i].x], "%s: vertex %zu", name, i);
    free (m);
}

/* ---- the tests --------------------------------------------------------- */

static void
test_rectangle (void)
{
    /* fill: x in [2, 7), y in [3, 8): columns 2..6, rows 3..7 (25); the
       outline adds column 7 (rows 3..8) and row 8 (columns 2..7):
       25 + 6 + 6 - 1 = 36, all of [2, 7] x [3, 8] */
    qc_annot_point_t a[] = {P (2, 3), P (7, 3), P (7, 8), P (2, 8)};
    uint8_t *m = draw_ring (RING (a), 0, 0, 1, 12, 12);
    CHECK (count (m, 12, 12) == 36 && is_box (m, 12, 12, 2, 3, 7, 8), "%zu: %s",
           count (m, 12, 12), err);
    free (m);
    /* the other way round, the first point repeated at the end: the same */
    qc_annot_point_t b[] = {P (2, 3), P (2, 8), P (7, 8), P (7, 3), P (2, 3)};
    m = draw_ring (RING (b), 0, 0, 1, 12, 12);
    CHECK (is_box (m, 12, 12, 2, 3, 7, 8), "%zu", count (m, 12, 12));
    free (m);
    /* clipped at the mask's edges: [-3, 4] x [5, 20] on 12 x 12 is
       [0, 4] x [5, 11] */
    qc_annot_point_t c[] = {P (-3, 5), P (4, 5), P (4, 20), P (-3, 20)};
    m = draw_ring (RING (c), 0, 0, 1, 12, 12);
    CHECK (is_box (m, 12, 12, 0, 5, 4, 11), "%zu", count (m, 12, 12));
    free (m);
}

static void
test_scale_offset (void)
{
    /* level-0 (640, 320)-(1280, 960) at 1/32 is (20, 10)-(40, 30):
       [20, 40] x [10, 30], 21 x 21 */
    qc_annot_point_t a[] = {P (640, 320), P (1280, 320), P (1280, 960), P (640, 960)};
    uint8_t *m = draw_ring (RING (a), 0, 0, 1.0 / 32, 50, 40);
    CHECK (count (m, 50, 40) == 441 && is_box (m, 50, 40, 20, 10, 40, 30), "%zu",
           count (m, 50, 40));
    free (m);
    /* moved by (-320, -160) first: ((640 - 320) / 32, (320 - 160) / 32) =
       (10, 5) to (30, 25) */
    m = draw_ring (RING (a), -320, -160, 1.0 / 32, 50, 40);
    CHECK (is_box (m, 50, 40, 10, 5, 30, 25), "%zu", count (m, 50, 40));
    free (m);
}

static void
test_shapes (void)
{
    qc_annot_point_t tri[] = {P (3, 2), P (57, 11), P (19, 44)};
    against_brute ("triangle", RING (tri), 0, 0, 1, 64, 48);
    against_brute ("triangle scaled", RING (tri), 1.7, -0.3, 0.83, 64, 48);
    qc_annot_point_t ell[] = {P (0, 0),  P (10, 0), P (10, 4),
                              P (4, 4),  P (4, 10), P (0, 10)};
    against_brute ("L", RING (ell), 1.3, 0.6, 3.7, 48, 48);
    /* the L's notch, well inside it, is clear; its arms are set */
    uint8_t *m = draw_ring (RING (ell), 1.3, 0.6, 3.7, 48, 48);
    CHECK (m && !m[30 * 48 + 30] && m[5 * 48 + 30] && m[30 * 48 + 5], "L notch");
    free (m);
    /* the outline clipped by the mask's edge: a triangle half off it */
    qc_annot_point_t off[] = {P (-20, 5), P (40, 12), P (10, 60)};
    against_brute ("triangle clipped", RING (off), 0, 0, 1, 32, 32);
}

static void
test_even_odd (void)
{
    /* bowtie: two lobes, left and right; above and below the crossing
       is outside */
    qc_annot_point_t bow[] = {P (2, 2), P (42, 42), P (42, 2), P (2, 42)};
    against_brute ("bowtie", RING (bow), 0, 0, 1, 48, 48);
    uint8_t *m = draw_ring (RING (bow), 0, 0, 1, 48, 48);
    CHECK (m && m[22 * 48 + 8] && m[22 * 48 + 36] && !m[8 * 48 + 22] && !m[36 * 48 + 22],
           "bowtie lobes");
    free (m);
    /* pentagram: points 0, 2, 4, 1, 3 of a pentagon; its middle pentagon
       is crossed twice, so even-odd leaves it out (nonzero would not) */
    qc_annot_point_t star[5];
    for (int k = 0; k < 5; k++) {
        double t = -M_PI / 2 + 2 * M_PI * (2 * k % 5) / 5;
        star[k] = P ((int64_t) llround (50 + 45 * cos (t)),
                     (int64_t) llround (50 + 45 * sin (t)));
    }
    against_brute ("pentagram", RING (star), 0, 0, 1, 100, 100);
    m = draw_ring (RING (star), 0, 0, 1, 100, 100);
    CHECK (m && !m[52 * 100 + 50] && m[12 * 100 + 50], "pentagram middle and tip");
    free (m);
}

/* As HistoQC's buffer(0) makes a region (annot_raster.h): a figure
 * eight keeps the loop that turns its way (one of no area: clockwise),
 * a pentagram's middle (gone round twice) is in, a square gone round
 * twice is filled, not only outlined; against the brute force of the
 * winding rule, on these and on random self-crossing rings. Holes: one
 * within clears as before, one across the outer ring clears only
 * within it, one outside the outer ring (beside it, or in an L's
 * notch) clears nothing. */
static void
test_as_histoqc (void)
{
    /* (2,2) (42,42) (42,2) (2,42): the right lobe turns -1 (clockwise in
       these coordinates), the left +1; signed area 0, so clockwise: the
       right lobe is kept */
    qc_annot_point_t bow[] = {P (2, 2), P (42, 42), P (42, 2), P (2, 42)};
    against_brute ("bowtie, as HistoQC", RING (bow), 0, 0, 1, 48, 48);
    uint8_t *m = draw_ring (RING (bow), 0, 0, 1, 48, 48);
    CHECK (m && !m[22 * 48 + 8] && m[22 * 48 + 36] && !m[8 * 48 + 22] && !m[36 * 48 + 22],
           "bowtie, as HistoQC: the right lobe alone");
    free (m);
    qc_annot_point_t star[5];
    for (int k = 0; k < 5; k++) {
        double t = -M_PI / 2 + 2 * M_PI * (2 * k % 5) / 5;
        star[k] = P ((int64_t) llround (50 + 45 * cos (t)),
                     (int64_t) llround (50 + 45 * sin (t)));
    }
    against_brute ("pentagram, as HistoQC", RING (star), 0, 0, 1, 100, 100);
    m = draw_ring (RING (star), 0, 0, 1, 100, 100);
    CHECK (m && m[52 * 100 + 50] && m[12 * 100 + 50], "pentagram, as HistoQC: middle in");
    free (m);
    qc_annot_point_t twice[] = {P (2, 2), P (30, 2), P (30, 30), P (2, 30),
                                P (2, 2), P (30, 2), P (30, 30), P (2, 30)};
    m = draw_ring (RING (twice), 0, 0, 1, 32, 32);
    CHECK (m && is_box (m, 32, 32, 2, 2, 30, 30), "a square gone round twice: %zu set",
           count (m, 32, 32));
    free (m);
    s_fill = QC_ANNOT_FILL_EVEN_ODD;
    m = draw_ring (RING (twice), 0, 0, 1, 32, 32);
    CHECK (m && !m[16 * 32 + 16], "even-odd: a square gone round twice left empty");
    free (m);
    s_fill = QC_ANNOT_FILL_AS_HISTOQC;
    /* random rings of 5 to 9 points, most crossing themselves */
    srand (7);
    for (int k = 0; k < 60; k++) {
        qc_annot_point_t r[9];
        size_t n = 5 + (size_t) (rand () % 5);
        for (size_t i = 0; i < n; i++)
            r[i] = P (4 + rand () % 56, 4 + rand () % 56);
        char name[48];
        snprintf (name, sizeof name, "random ring %d, as HistoQC", k);
        qc_annot_ring_t ring = { r, n };
        dpt_t q[9];
        for (size_t i = 0; i < n; i++)
            q[i] = (dpt_t) { (double) r[i].x, (double) r[i].y };
        int in = 0;
        for (int y = 0; y < 64; y++)
            for (int x = 0; x < 64; x++)
                in += inside (q, n, x, y);
        if (in > 20)        /* against_brute wants room inside */
            against_brute (name, ring, 0, 0, 1, 64, 64);
    }

    /* holes: within, as before; across the outer ring, it clears only
       within (an earlier region's fill outside stays); wholly outside
       the outer ring's box, nothing */
    qc_annot_point_t outer[] = {P (1, 1), P (11, 1), P (11, 11), P (1, 11)};
    qc_annot_point_t hole[] = {P (4, 4), P (8, 4), P (8, 8), P (4, 8)};
    qc_annot_ring_t holes[] = {RING (hole)};
    qc_annot_region_t a = {RING (outer), holes, 1};
    m = draw (&a, 1, 0, 0, 1, 14, 14);
    CHECK (m && count (m, 14, 14) == 96 && !m[6 * 14 + 6], "a hole within: %zu",
           count (m, 14, 14));
    free (m);
    qc_annot_point_t solid[] = {P (0, 0), P (20, 0), P (20, 20), P (0, 20)};
    qc_annot_point_t across[] = {P (6, 6), P (16, 6), P (16, 9), P (6, 9)};
    qc_annot_ring_t ah[] = {RING (across)};
    qc_annot_region_t two[2] = {{RING (solid), NULL, 0}, {RING (outer), ah, 1}};
    m = draw (two, 2, 0, 0, 1, 24, 24);
    CHECK (m && !m[7 * 24 + 8] && m[7 * 24 + 14] && m[7 * 24 + 18], "a hole across the "
           "outer ring: cleared within it only (%d %d %d)", m ? m[7 * 24 + 8] : -1,
           m ? m[7 * 24 + 14] : -1, m ? m[7 * 24 + 18] : -1);
    free (m);
    qc_annot_point_t far[] = {P (20, 20), P (22, 20), P (22, 22), P (20, 22)};
    qc_annot_point_t small[] = {P (5, 5), P (7, 5), P (7, 7), P (5, 7)};
    qc_annot_ring_t sh[] = {RING (small)};
    qc_annot_region_t h[2] = {{RING (outer), NULL, 0}, {RING (far), sh, 1}};
    m = draw (h, 2, 0, 0, 1, 24, 24);
    CHECK (m && count (m, 24, 24) == 121 + 9 && m[6 * 24 + 6], "a hole outside its outer "
           "ring's box clears nothing: %zu", count (m, 24, 24));
    free (m);
    /* an L, its hole in the L's notch (within the L's box, outside the
       L): nothing cleared of the solid square drawn before */
    qc_annot_point_t ell[] = {P (0, 0), P (20, 0), P (20, 8), P (8, 8), P (8, 20), P (0, 20)};
    qc_annot_point_t notch[] = {P (12, 12), P (16, 12), P (16, 16), P (12, 16)};
    qc_annot_ring_t nh[] = {RING (notch)};
    qc_annot_region_t lh[2] = {{RING (solid), NULL, 0}, {RING (ell), nh, 1}};
    m = draw (lh, 2, 0, 0, 1, 24, 24);
    CHECK (m && m[12 * 24 + 12] && m[14 * 24 + 14] && m[16 * 24 + 16], "a hole in an L's "
           "notch cleared an earlier region (%d %d %d)", m ? m[12 * 24 + 12] : -1,
           m ? m[14 * 24 + 14] : -1, m ? m[16 * 24 + 16] : -1);
    free (m);
}

/* Whether the set pixels of every row, and of every column, of m are
 * one run: a convex polygon's fill and outline with no gap between. */
static bool
runs_whole (const uint8_t *m, int w, int h, const char *name)
{
    for (int pass = 0; m && pass < 2; pass++) {
        int lines = pass ? w : h, along = pass ? h : w;
        for (int i = 0; i < lines; i++) {
            int first = -1, last = -1, on = 0;
            for (int j = 0; j < along; j++)
                if (m[pass ? j * w + i : i * w + j]) {
                    first = first < 0 ? j : first;
                    last = j;
                    on++;
                }
            if (on && on != last - first + 1) {
                fprintf (stderr, "%s: %s %d has a gap in [%d, %d]\n", name,
                         pass ? "column" : "row", i, first, last);
                return false;
            }
        }
    }
    return m != NULL;
}

static uint32_t
rnd (uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void
test_no_gap (void)
{
    /* the right triangle (0, 0), (20, 0), (0, 20): its hypotenuse
       passes through pixels, which the outline takes: x + y <= 20,
       21 * 22 / 2 pixels, as PIL draws it */
    qc_annot_point_t t[] = {P (0, 0), P (20, 0), P (0, 20)};
    uint8_t *m = draw_ring (RING (t), 0, 0, 1, 24, 24);
    bool ok = m && count (m, 24, 24) == 231;
    for (int y = 0; ok && y < 24; y++)
        for (int x = 0; ok && x < 24; x++)
            ok = (m[y * 24 + x] != 0) == (x + y <= 20);
    CHECK (ok, "right triangle: %zu", count (m, 24, 24));
    free (m);

    /* random convex polygons (triangles and quadrilaterals on an
       ellipse), at scales that put points on halves and at others */
    static const double scales[] = {1, 0.5, 1.0 / 16, 1.0 / 32, 0.37, 2.5};
    uint32_t seed = 12345;
    int bad = 0;
    for (int k = 0; k < 3000 && bad < 3; k++) {
        double s = scales[k % 6];
        qc_annot_point_t q[4];
        size_t n = 3 + (size_t) (k / 6 % 2);
        double cx = rnd (&seed) % 40, cy = rnd (&seed) % 40;
        double rx = 2 + rnd (&seed) % 30, ry = 2 + rnd (&seed) % 30;
        double a0 = (rnd (&seed) % 1000) / 1000.0 * 2 * M_PI;
        for (size_t i = 0; i < n; i++) {
            double a = a0 + 2 * M_PI * ((double) i + (rnd (&seed) % 800) / 1000.0) / n;
            q[i] = P ((int64_t) llround ((cx + rx * cos (a)) / s),
                      (int64_t) llround ((cy + ry * sin (a)) / s));
        }
        double ox = (double) (rnd (&seed) % 9) - 4, oy = (double) (rnd (&seed) % 9) - 4;
        m = draw_ring ((qc_annot_ring_t) {q, n}, ox, oy, s, 48, 48);
        char name[64];
        snprintf (name, sizeof name, "convex %d", k);
        if (!runs_whole (m, 48, 48, name))
            bad++;
        free (m);
    }
    CHECK (bad == 0, "%d convex polygons with a gap", bad);
}

static void
test_holes (void)
{
    /* [1, 11]^2 (121) less the hole's fill and outline, [4, 8]^2 (25) */
    qc_annot_point_t outer[] = {P (1, 1), P (11, 1), P (11, 11), P (1, 11)};
    qc_annot_point_t hole[] = {P (4, 4), P (8, 4), P (8, 8), P (4, 8)};
    qc_annot_ring_t holes[] = {RING (hole)};
    qc_annot_region_t a = {RING (outer), holes, 1};
    uint8_t *m = draw (&a, 1, 0, 0, 1, 14, 14);
    CHECK (m && count (m, 14, 14) == 96 && m[2 * 14 + 2] && m[3 * 14 + 3] && m[9 * 14 + 9]
           && m[11 * 14 + 11] && !m[4 * 14 + 4] && !m[6 * 14 + 6] && !m[8 * 14 + 8]
           && !m[0], "%zu: %s", count (m, 14, 14), err);
    free (m);

    /* a later outer ring fills the hole: [3, 9]^2 over it */
    qc_annot_point_t mid[] = {P (3, 3), P (9, 3), P (9, 9), P (3, 9)};
    qc_annot_region_t g[2] = {a, {RING (mid), NULL, 0}};
    m = draw (g, 2, 0, 0, 1, 14, 14);
    CHECK (is_box (m, 14, 14, 1, 1, 11, 11), "%zu", count (m, 14, 14));
    free (m);
    /* the other way round, the hole is drawn last and clears it */
    g[0] = g[1], g[1] = a;
    m = draw (g, 2, 0, 0, 1, 14, 14);
    CHECK (m && count (m, 14, 14) == 96 && !m[6 * 14 + 6], "%zu", count (m, 14, 14));
    free (m);

    /* a later region's hole clears an earlier one's fill: a solid
       [1, 11]^2, then [20, 22]^2 with a hole [5, 7]^2 */
    qc_annot_point_t far[] = {P (20, 20), P (22, 20), P (22, 22), P (20, 22)};
    qc_annot_point_t small[] = {P (5, 5), P (7, 5), P (7, 7), P (5, 7)};
    qc_annot_ring_t sh[] = {RING (small)};
    qc_annot_region_t h[2] = {{RING (outer), NULL, 0}, {RING (far), sh, 1}};
    m = draw (h, 2, 0, 0, 1, 24, 24);
    CHECK (m && count (m, 24, 24) == 121 - 9 + 9 && !m[6 * 24 + 6] && !m[5 * 24 + 5]
           && m[4 * 24 + 4] && m[21 * 24 + 21], "%zu", count (m, 24, 24));
    free (m);
    qc_annot_region_t t = h[0];
    h[0] = h[1], h[1] = t;
    m = draw (h, 2, 0, 0, 1, 24, 24);
    CHECK (m && count (m, 24, 24) == 121 + 9 && m[6 * 24 + 6], "%zu", count (m, 24, 24));
    free (m);
}

static void
test_thin (void)
{
    /* 4 level-0 pixels wide at 1/32 (5.125 to 5.25): no pixel inside;
       the outline, its vertices rounded to column 5, rows 2 to 20 */
    qc_annot_point_t s[] = {P (164, 64), P (168, 64), P (168, 640), P (164, 640)};
    uint8_t *m = draw_ring (RING (s), 0, 0, 1.0 / 32, 16, 24);
    CHECK (count (m, 16, 24) == 19 && is_box (m, 16, 24, 5, 2, 5, 20), "%zu",
           count (m, 16, 24));
    free (m);
    /* on one line: only the outline, the diagonal (0,0)..(10,10) */
    qc_annot_point_t l[] = {P (0, 0), P (5, 5), P (10, 10)};
    m = draw_ring (RING (l), 0, 0, 1, 16, 16);
    bool diag = m && count (m, 16, 16) == 11;
    for (int i = 0; diag && i <= 10; i++)
        diag = m[i * 16 + i];
    CHECK (diag, "%zu", count (m, 16, 16));
    free (m);
    /* a shallow line: one pixel a column, the row rounded (halves up):
       (0, 0) to (8, 3): rows round (3 x / 8) */
    qc_annot_point_t sh[] = {P (0, 0), P (8, 3)};
    m = draw_ring (RING (sh), 0, 0, 1, 10, 5);
    bool ok = m && count (m, 10, 5) == 9;
    for (int x = 0; ok && x <= 8; x++)
        ok = m[(int) floor (3.0 * x / 8 + 0.5) * 10 + x];
    CHECK (ok, "shallow line %zu", count (m, 10, 5));
    free (m);
    /* exact rows: (0, 0) to (22, 11) is at 7.5 at x = 15 (15 * 11 / 22),
       row 8, where 15 / 22 * 11 is just under 7.5 */
    qc_annot_point_t tie[] = {P (0, 0), P (22, 11)};
    m = draw_ring (RING (tie), 0, 0, 1, 24, 12);
    CHECK (m && m[8 * 24 + 15] && !m[7 * 24 + 15] && count (m, 24, 12) == 23, "%zu",
           count (m, 24, 12));
    free (m);
    /* a vertex is set where neither edge's line takes it: (26, 118) at
       (3.51, 12.2), pixel (4, 12) */
    qc_annot_point_t sharp[] = {P (184, 252), P (26, 118), P (398, 457)};
    m = draw_ring (RING (sharp), 9.1, 4, 0.1, 48, 48);
    CHECK (m && m[12 * 48 + 4], "vertex");
    free (m);
    /* rings on one line, at scales and offsets that put their points
       between pixels: only their edges, as each drawn alone */
    uint32_t seed = 99;
    int differ = 0;
    for (int k = 0; k < 500; k++) {
        qc_annot_point_t q[5];
        int64_t x0 = rnd (&seed) % 60, y0 = rnd (&seed) % 60;
        int64_t dx = (int64_t) (rnd (&seed) % 9) - 4;
        int64_t dy = (int64_t) (rnd (&seed) % 9) - 4;
        size_t n = 3 + rnd (&seed) % 3;
        for (size_t i = 0; i < n; i++) {
            int64_t t = rnd (&seed) % 40;
            q[i] = P (x0 + t * dx, y0 + t * dy);
        }
        double sc = (1 + rnd (&seed) % 300) / 197.0;
        double ox = (rnd (&seed) % 1000) / 137.0, oy = (rnd (&seed) % 1000) / 91.0;
        m = draw_ring ((qc_annot_ring_t) {q, n}, ox, oy, sc, 48, 48);
        uint8_t *e = calloc (48 * 48, 1);
        for (size_t i = 0; e && i < n; i++) {
            qc_annot_point_t two[2] = {q[i], q[(i + 1) % n]};
            qc_annot_region_t g = {{two, 2}, NULL, 0};
            qc_annot_draw (&g, 1, ox, oy, sc, s_fill, e, 48, 48, err, sizeof err);
        }
        differ += !m || !e || memcmp (m, e, 48 * 48) != 0;
        free (m);
        free (e);
    }
    CHECK (differ == 0, "%d rings on a line drew more than their edges", differ);
    /* a single point and a ring of one point repeated */
    qc_annot_point_t one[] = {P (3, 4)}, same[] = {P (3, 4), P (3, 4), P (3, 4)};
    m = draw_ring (RING (one), 0, 0, 1, 8, 8);
    CHECK (is_box (m, 8, 8, 3, 4, 3, 4), "%zu", count (m, 8, 8));
    free (m);
    m = draw_ring (RING (same), 0, 0, 1, 8, 8);
    CHECK (is_box (m, 8, 8, 3, 4, 3, 4), "%zu", count (m, 8, 8));
    free (m);
    /* an empty ring draws nothing */
    m = draw_ring ((qc_annot_ring_t) {NULL, 0}, 0, 0, 1, 8, 8);
    CHECK (m && count (m, 8, 8) == 0, "%s", err);
    free (m);
}

static void
test_far (void)
{
    /* a million points: far right of the mask, then far left of it
       over all its rows (each of its edges crossing them all), then far
       below: nothing drawn, each quickly */
    size_t n = 1000000;
    qc_annot_point_t *p = malloc (n * sizeof *p);
    CHECK (p, "no memory");
    if (!p)
        return;
    static const int64_t xs[3] = {1000000000, -1000000000, 0};
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < n; i++)
            p[i] = k < 2 ? P (xs[k] + (int64_t) (i % 7), i % 2 ? -50 : 5000)
                         : P ((int64_t) (i % 5000), 1000000 + (int64_t) (i % 2) * 9);
        double t0 = now ();
        uint8_t *m = draw_ring ((qc_annot_ring_t) {p, n}, 0, 0, 1, 2000, 2000);
        double dt = now () - t0;
        CHECK (m && count (m, 2000, 2000) == 0 && dt < 5, "far %d: %zu set in %.2f s: %s",
               k, count (m, 2000, 2000), dt, err);
        free (m);
    }
    /* a million points on the mask: a circle of radius 900 (pi r^2
       pixels, nearly), and a zigzag over all of its rows, quickly */
    for (size_t i = 0; i < n; i++) {
        double t = 2 * M_PI * (double) i / (double) n;
        p[i] = P ((int64_t) llround (1000 + 900 * cos (t)),
                  (int64_t) llround (1000 + 900 * sin (t)));
    }
    double t0 = now ();
    uint8_t *c = draw_ring ((qc_annot_ring_t) {p, n}, 0, 0, 1, 2000, 2000);
    double dt = now () - t0, want = M_PI * 900 * 900;
    CHECK (c && fabs ((double) count (c, 2000, 2000) - want) < 0.002 * want && dt < 5,
           "circle: %zu pixels (%.0f) in %.2f s", count (c, 2000, 2000), want, dt);
    free (c);
    size_t nz = 20000;
    for (size_t i = 0; i < nz; i++)
        p[i] = P ((int64_t) (i / 2), i % 2 ? -10 : 2010);
    t0 = now ();
    c = draw_ring ((qc_annot_ring_t) {p, nz}, 0, 0, 0.2, 2000, 2000);
    dt = now () - t0;
    CHECK (c && dt < 5, "zigzag: %.2f s", dt);
    free (c);
    free (p);

    /* a ring around the whole mask, its edges off it: every pixel */
    qc_annot_point_t big[] = {P (-1000000000, -1000000000), P (1000000000, -1000000000),
                              P (1000000000, 1000000000), P (-1000000000, 1000000000)};
    uint8_t *m = draw_ring (RING (big), 0, 0, 1, 30, 20);
    CHECK (count (m, 30, 20) == 600, "%zu", count (m, 30, 20));
    free (m);
    /* 1e15: the same, and a triangle with one vertex there */
    int64_t e = 1000000000000000;
    qc_annot_point_t huge[] = {P (-e, -e), P (e, -e), P (e, e), P (-e, e)};
    m = draw_ring (RING (huge), 0, 0, 1, 30, 20);
    CHECK (count (m, 30, 20) == 600, "%zu", count (m, 30, 20));
    free (m);
    qc_annot_point_t spike[] = {P (2, 2), P (e, e), P (2, 15)};
    m = draw_ring (RING (spike), 0, 0, 1, 30, 20);
    CHECK (m && m[2 * 30 + 2] && m[10 * 30 + 3] && !m[15 * 30 + 25], "%zu: %s",
           count (m, 30, 20), err);
    free (m);
    m = draw_ring (RING (spike), 0, 0, 1e-3, 30, 20);
    CHECK (m, "%s", err);
    free (m);
    /* int64's ends, around the mask but for the point (3, 3) on it */
    qc_annot_point_t ends[] = {P (INT64_MIN, INT64_MIN), P (INT64_MAX, INT64_MIN),
                               P (INT64_MAX, INT64_MAX), P (3, 3)};
    m = draw_ring (RING (ends), 0, 0, 1, 30, 20);
    CHECK (m && m[3 * 30 + 3], "%s", err);
    free (m);
}

static void
test_refusals (void)
{
    qc_annot_point_t a[] = {P (1, 1), P (5, 1), P (5, 5)};
    qc_annot_region_t g = {RING (a), NULL, 0};
    uint8_t m[64] = {0};
    CHECK (qc_annot_draw (NULL, 1, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1 && *err,
           "NULL");
    CHECK (qc_annot_draw (NULL, 0, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == 0, "none: %s",
           err);
    CHECK (qc_annot_draw (&g, 1, 0, 0, 1, s_fill, NULL, 8, 8, err, sizeof err) == -1, "mask");
    CHECK (qc_annot_draw (&g, 1, 0, 0, 1, s_fill, m, 0, 8, err, sizeof err) == -1, "w");
    CHECK (qc_annot_draw (&g, 1, 0, 0, 1, s_fill, m, 8, -1, err, sizeof err) == -1, "h");
    CHECK (qc_annot_draw (&g, 1, 0, 0, 0, s_fill, m, 8, 8, err, sizeof err) == -1, "scale 0");
    CHECK (qc_annot_draw (&g, 1, 0, 0, -1, s_fill, m, 8, 8, err, sizeof err) == -1, "scale < 0");
    CHECK (qc_annot_draw (&g, 1, 0, 0, NAN, s_fill, m, 8, 8, err, sizeof err) == -1, "scale NaN");
    CHECK (qc_annot_draw (&g, 1, 0, 0, INFINITY, s_fill, m, 8, 8, err, sizeof err) == -1, "inf");
    CHECK (qc_annot_draw (&g, 1, NAN, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1, "off_x");
    CHECK (qc_annot_draw (&g, 1, 0, -INFINITY, 1, s_fill, m, 8, 8, err, sizeof err) == -1,
           "off_y");
    /* no error buffer is fine */
    CHECK (qc_annot_draw (&g, 1, 0, 0, 0, s_fill, m, 8, 8, NULL, 0) == -1, "no err");
    CHECK (qc_annot_draw (&g, 1, 0, 0, 1, (qc_annot_fill_t) 7, m, 8, 8, err, sizeof err)
           == -1, "a fill of no kind");
    qc_annot_region_t bad = {{NULL, 3}, NULL, 0};
    CHECK (qc_annot_draw (&bad, 1, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1
           && strstr (err, "outer ring"), "%s", err);
    qc_annot_region_t nh[2] = {g, {RING (a), NULL, 2}};
    CHECK (qc_annot_draw (nh, 2, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1
           && strstr (err, "region 1"), "%s", err);
    qc_annot_ring_t hr[] = {RING (a), {NULL, 4}};
    qc_annot_region_t bh = {RING (a), hr, 2};
    CHECK (qc_annot_draw (&bh, 1, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1
           && strstr (err, "hole 1"), "%s", err);
    /* a point that lands beyond 1e300 */
    CHECK (qc_annot_draw (&g, 1, 0, 0, 1e300, s_fill, m, 8, 8, err, sizeof err) == -1
           && strstr (err, "beyond"), "%s", err);
    CHECK (qc_annot_draw (&g, 1, 1.5e308, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1, "%s",
           err);
    /* refused before any drawing: the mask is untouched, even where an
       earlier region was fine */
    qc_annot_region_t late[2] = {g, bad};
    CHECK (qc_annot_draw (late, 2, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == -1
           && count (m, 8, 8) == 0, "%zu", count (m, 8, 8));
    /* and it draws */
    CHECK (qc_annot_draw (&g, 1, 0, 0, 1, s_fill, m, 8, 8, err, sizeof err) == 0
           && count (m, 8, 8) > 0, "%s", err);
}

int
main (void)
{
    test_rectangle ();
    test_scale_offset ();
    test_shapes ();
    test_even_odd ();
    test_no_gap ();
    test_holes ();
    test_thin ();
    test_far ();
    test_refusals ();
    /* as HistoQC: valid polygons the same, self-crossing rings and
       holes as buffer(0) makes them */
    s_fill = QC_ANNOT_FILL_AS_HISTOQC;
    test_rectangle ();
    test_scale_offset ();
    test_shapes ();
    test_no_gap ();
    test_thin ();
    test_far ();
    test_as_histoqc ();
    return check_done ("annot_raster");
}
