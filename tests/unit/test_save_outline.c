/* The outlines SaveModule.saveMask2Geojson writes (save_outline.h), on
 * masks whose answer is known:
 *
 *  - shapes drawn by hand: nothing, a block, two pixels meeting at a
 *    corner (two polygons), a ring with an island in its hole (two
 *    polygons, one hole), a C whose tips touch at a corner (one polygon
 *    whose pocket is a hole touching the outline at that point), a hole
 *    pinched at a corner (two holes touching);
 *  - 300 random masks (specks and blobs, up to 48 x 40): one polygon per
 *    4-connected piece, in label order, each polygon's area (outline less
 *    holes) exactly its piece's pixel count, outlines positive and holes
 *    negative, rings simple (no vertex twice, corners only, axis-parallel
 *    steps), and the rings drawn back (even-odd, every pixel centre)
 *    give the mask again, pixel for pixel. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/save_outline.h"
#include "tests/unit/check.h"

static qc_mask_t *
mask_from (const char *const rows[])
{
    int h = 0, w = (int) strlen (rows[0]);
    while (rows[h])
        h++;
    qc_mask_t *m = qc_mask_new (w, h);
    for (int y = 0; m && y < h; y++)
        for (int x = 0; x < w; x++)
            m->px[(size_t) y * w + x] = rows[y][x] == '#';
    return m;
}

/* Inside the rings (even-odd): a ray from the pixel centre to +x. */
static int
inside (const qc_outlines_t *o, double px, double py)
{
    int in = 0;
    for (size_t r = 0; r < o->nrings; r++) {
        size_t a = o->ring_vertex[r], n = o->ring_vertex[r + 1] - a;
        for (size_t i = 0; i < n; i++) {
            const int32_t *p = o->xy + 2 * (a + i), *q = o->xy + 2 * (a + (i + 1) % n);
            if (p[0] != q[0] || p[0] < px)
                continue;
            double lo = p[1] < q[1] ? p[1] : q[1], hi = p[1] < q[1] ? q[1] : p[1];
            in ^= lo < py && py < hi;
        }
    }
    return in;
}

/* Everything the header promises, on any mask; returns the number of
 * failed checks so a caller can print the mask that broke it. */
static int
check_outlines (const qc_mask_t *m, const qc_outlines_t *o)
{
    int before = check_failed_;
    qc_labels_t *lab = qc_labels_new (m->w, m->h);
    CHECK (lab && qc_ops_cpu ()->label (m, QC_CONN_OBJECTS, lab) == 0);
    if (!lab)
        return 1;
    CHECK (o->npolygons == (size_t) lab->n, "%zu polygons, %d pieces",
           o->npolygons, lab->n);
    for (size_t p = 0; p < o->npolygons && p < (size_t) lab->n; p++) {
        int64_t area2 = 0;
        for (size_t r = o->poly_ring[p]; r < o->poly_ring[p + 1]; r++) {
            int64_t a = qc_outlines_ring_area2 (o, r);
            CHECK (r == o->poly_ring[p] ? a > 0 : a < 0, "polygon %zu ring %zu "
                   "area2 %lld", p, r, (long long) a);
            area2 += a;
        }
        CHECK (area2 == 2 * (int64_t) lab->area[p + 1], "polygon %zu: area %g, "
               "piece %zu pixels", p, area2 / 2.0, lab->area[p + 1]);
    }
    for (size_t r = 0; r < o->nrings; r++) {
        size_t a = o->ring_vertex[r], n = o->ring_vertex[r + 1] - a;
        CHECK (n >= 4 && n % 2 == 0, "ring %zu has %zu vertices", r, n);
        for (size_t i = 0; i < n; i++) {
            const int32_t *p = o->xy + 2 * (a + i), *q = o->xy + 2 * (a + (i + 1) % n);
            const int32_t *s = o->xy + 2 * (a + (i + 2) % n);
            CHECK ((p[0] == q[0]) != (p[1] == q[1]), "ring %zu step %zu not "
                   "axis-parallel", r, i);
            /* corners only: the next step turns */
            CHECK ((p[0] == q[0]) != (q[0] == s[0]), "ring %zu: no turn at %zu",
                   r, i + 1);
            for (size_t j = i + 1; j < n; j++)
                CHECK (memcmp (p, o->xy + 2 * (a + j), 2 * sizeof *p) != 0,
                       "ring %zu: vertex (%d, %d) twice", r, p[0], p[1]);
        }
    }
    for (int y = 0; y < m->h; y++)
        for (int x = 0; x < m->w; x++)
            CHECK (inside (o, x + 0.5, y + 0.5) == m->px[(size_t) y * m->w + x],
                   "pixel (%d, %d): drawn back %d, mask %d", x, y,
                   inside (o, x + 0.5, y + 0.5), m->px[(size_t) y * m->w + x]);
    qc_labels_destroy (&lab);
    return check_failed_ - before;
}

/* Traces rows and checks the counts; returns the outlines. */
static qc_outlines_t *
shape (const char *name, const char *const rows[], size_t npoly,
       size_t nrings)
{
    qc_mask_t *m = mask_from (rows);
    qc_outlines_t *o = NULL;
    CHECK (m && qc_outlines_trace (NULL, m, &o) == 0 && o, "%s", name);
    if (o) {
        CHECK (o->npolygons == npoly && o->nrings == nrings, "%s: %zu polygons, "
               "%zu rings (want %zu, %zu)", name, o->npolygons, o->nrings,
               npoly, nrings);
        check_outlines (m, o);
    }
    qc_mask_destroy (&m);
    return o;
}

static int
has_vertex (const qc_outlines_t *o, size_t ring, int x, int y)
{
    for (size_t i = o->ring_vertex[ring]; i < o->ring_vertex[ring + 1]; i++)
        if (o->xy[2 * i] == x && o->xy[2 * i + 1] == y)
            return 1;
    return 0;
}

static void
test_shapes (void)
{
    static const char *const empty[] = { "....", "....", NULL };
    static const char *const block[] = { "###", "###", NULL };
    static const char *const diagonal[] = { "#.", ".#", NULL };
    static const char *const island[] = {
        ".......", ".#####.", ".#...#.", ".#.#.#.", ".#...#.", ".#####.",
        ".......", NULL
    };
    /* the C's tips (3,2) and (2,3) meet at vertex (3,3) */
    static const char *const c_shape[] = {
        ".....", ".###.", ".#.#.", ".##..", ".....", NULL
    };
    /* holes (2,2) and (3,3) meet at vertex (3,3) */
    static const char *const pinched[] = {
        "......", ".####.", ".#.##.", ".##.#.", ".####.", "......", NULL
    };
    qc_outlines_t *o = shape ("empty", empty, 0, 0);
    qc_outlines_destroy (&o);
    o = shape ("block", block, 1, 1);
    if (o) {
        CHECK (o->nvertices == 4 && qc_outlines_ring_area2 (o, 0) == 12);
        CHECK (has_vertex (o, 0, 0, 0) && has_vertex (o, 0, 3, 0)
               && has_vertex (o, 0, 3, 2) && has_vertex (o, 0, 0, 2),
               "block corners");
    }
    qc_outlines_destroy (&o);
    o = shape ("diagonal", diagonal, 2, 2);
    if (o)
        CHECK (has_vertex (o, 0, 1, 1) && has_vertex (o, 1, 1, 1),
               "the two squares share the corner (1, 1)");
    qc_outlines_destroy (&o);
    o = shape ("island", island, 2, 3);
    if (o)
        CHECK (o->poly_ring[1] == 2 && qc_outlines_ring_area2 (o, 1) == -18
               && qc_outlines_ring_area2 (o, 2) == 2,
               "ring with a 3x3 hole, then the island");
    qc_outlines_destroy (&o);
    o = shape ("C", c_shape, 1, 2);
    if (o)
        CHECK (has_vertex (o, 0, 3, 3) && has_vertex (o, 1, 3, 3)
               && qc_outlines_ring_area2 (o, 1) == -2,
               "the pocket is a hole touching the outline at (3, 3)");
    qc_outlines_destroy (&o);
    o = shape ("pinched", pinched, 1, 3);
    if (o)
        CHECK (has_vertex (o, 1, 3, 3) && has_vertex (o, 2, 3, 3),
               "two one-pixel holes touching at (3, 3)");
    qc_outlines_destroy (&o);
    CHECK (qc_outlines_trace (NULL, NULL, &o) == -1 && !o);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static unsigned
next (unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned) (rng % n);
}

static void
test_random (void)
{
    for (int k = 0; k < 300; k++) {
        int w = 1 + (int) next (48), h = 1 + (int) next (40);
        qc_mask_t *m = qc_mask_new (w, h);
        if (!m)
            continue;
        if (k % 2) {            /* specks at a density from 10 to 90% */
            unsigned pct = 10 + next (81);
            for (size_t i = 0; i < qc_npix (w, h); i++)
                m->px[i] = next (100) < pct;
        } else {                /* blobs (discs) and holes in them */
            int n = 1 + (int) next (12);
            for (int b = 0; b < n; b++) {
                int cx = (int) next ((unsigned) w), cy = (int) next ((unsigned) h);
                int r = 1 + (int) next (8), v = b % 3 != 2;
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++)
                        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r)
                            m->px[(size_t) y * w + x] = (uint8_t) v;
            }
        }
        qc_outlines_t *o = NULL;
        CHECK (qc_outlines_trace (NULL, m, &o) == 0 && o, "mask %d", k);
        if (o && check_outlines (m, o)) {
            fprintf (stderr, "mask %d (%d x %d):\n", k, w, h);
            for (int y = 0; y < h; y++, fputc ('\n', stderr))
                for (int x = 0; x < w; x++)
                    fputc (m->px[(size_t) y * w + x] ? '#' : '.', stderr);
            qc_outlines_destroy (&o);
            qc_mask_destroy (&m);
            break;
        }
        qc_outlines_destroy (&o);
        qc_mask_destroy (&m);
    }
}

int
main (void)
{
    test_shapes ();
    test_random ();
    return check_done ("save_outline");
}
