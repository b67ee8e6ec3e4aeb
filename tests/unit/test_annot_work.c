/* The annotation rasterizer's bound on its work (kernels/annot/
 * annot_raster.c, MAX_WORK), under both fills: a zigzag whose every edge
 * spans the mask, and rectangles around it by the 150,000 (rows filled
 * whole), refused by their work before any drawing (nothing drawn), and
 * a smooth outline of as many points drawn, and 1,000 of the
 * rectangles; as HistoQC draws (each hole is looked for in its outer
 * ring), a disc of 200,002 points with 20,000 holes drawn through the
 * ring's index, a zigzag with 200,000 holes refused, the same off the
 * mask and with 200 holes drawn; and holes looked for through the index
 * as they are through every edge (test_index_same). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/annot/annot_raster.h"
#include "tests/unit/annot_draw_fixtures.h"
#include "tests/unit/check.h"

static void
test_work (void)
{
    /* 200,002 points, each edge from the top of a 1000 x 1000 mask to its
       bottom: 4e8 row crossings and outline pixels, over the bound */
    size_t n = 200002;
    qc_annot_point_t *z = malloc (n * sizeof *z), *c = malloc (n * sizeof *c);
    CHECK (z && c);
    if (!z || !c) {
        free (z);
        free (c);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        z[i] = P ((int64_t) (i * 1000 / n), i % 2 ? 999 : 0);
        double t = 2 * M_PI * (double) i / (double) n;
        c[i] = P ((int64_t) llround (500 + 400 * cos (t)), (int64_t) llround (500 + 400 * sin (t)));
    }
    qc_annot_region_t zz = {{z, n}, NULL, 0}, cc = {{c, n}, NULL, 0};
    uint8_t *m = calloc (1000 * 1000, 1);
    double t0 = now ();
    CHECK (m && qc_annot_draw (&zz, 1, 0, 0, 1, s_fill, m, 1000, 1000, err, sizeof err) == -1
           && strstr (err, "200002 points whose edges cross the 1000 x 1000 mask")
           && strstr (err, "too intricate") && count (m, 1000, 1000) == 0, "%s", err);
    double took = now () - t0;
    printf ("  a zigzag of %zu points over 1000 x 1000 refused in %.3f s\n", n, took);
    /* a disc's outline of as many points: its edges are short, it draws */
    CHECK (m && qc_annot_draw (&cc, 1, 0, 0, 1, s_fill, m, 1000, 1000, err, sizeof err) == 0, "%s",
           err);
    size_t in = m ? count (m, 1000, 1000) : 0;
    CHECK (fabs ((double) in - M_PI * 400 * 400) < 0.01 * M_PI * 400 * 400,
           "a disc of radius 400: %zu pixels", in);
    /* rectangles around the mask: every edge off it, every row filled
       whole; 150,000 of them (2.5-4.5 s for 100,000 once, uncounted) are
       refused before any drawing, 1,000 drawn */
    size_t nr = 150000;
    qc_annot_point_t box[] = {P (-10, -10), P (1010, -10), P (1010, 1010), P (-10, 1010)};
    qc_annot_region_t *boxes = calloc (nr, sizeof *boxes);
    CHECK (boxes != NULL);
    for (size_t i = 0; boxes && i < nr; i++)
        boxes[i].outer = RING (box);
    if (m && boxes) {
        memset (m, 0, 1000 * 1000);
        CHECK (qc_annot_draw (boxes, nr, 0, 0, 1, s_fill, m, 1000, 1000, err, sizeof err)
               == -1 && strstr (err, "too intricate") && count (m, 1000, 1000) == 0,
               "150,000 rectangles around the mask: %s", err);
        CHECK (qc_annot_draw (boxes, 1000, 0, 0, 1, s_fill, m, 1000, 1000, err, sizeof err)
               == 0 && count (m, 1000, 1000) == 1000 * 1000, "1,000 rectangles: %s", err);
    }
    free (boxes);
    /* as HistoQC, each hole is looked for in its outer ring: through an
       index of the ring's edges by bands of its height, the disc's
       200,002 points with 20,000 small holes inside are drawn, the
       holes cleared (refused before it as 4 billion edge looks; 40,000
       with 40,000 took 20 s uncounted before that) */
    if (m && s_fill == QC_ANNOT_FILL_AS_HISTOQC) {
        size_t nh = 200000;
        qc_annot_ring_t *holes = calloc (nh, sizeof *holes);
        qc_annot_point_t *tri = malloc (nh * 3 * sizeof *tri);
        CHECK (holes && tri);
        for (size_t j = 0; holes && tri && j < nh; j++) {
            int64_t x = 300 + (int64_t) (j % 100) * 4, y = 300 + (int64_t) (j / 100 % 100) * 4;
            tri[3 * j] = P (x, y), tri[3 * j + 1] = P (x + 3, y), tri[3 * j + 2] = P (x, y + 3);
            holes[j] = (qc_annot_ring_t) { &tri[3 * j], 3 };
        }
        qc_annot_region_t holed = {{c, n}, holes, 20000};
        memset (m, 0, 1000 * 1000);
        t0 = now ();
        CHECK (holes && tri && qc_annot_draw (&holed, 1, 0, 0, 1, s_fill, m, 1000, 1000, err,
                                              sizeof err) == 0
               && m[301 * 1000 + 301] == 0 && m[303 * 1000 + 302] == 1
               && m[697 * 1000 + 697] == 0 && m[500 * 1000 + 50] == 0
               && m[500 * 1000 + 850] == 1, "a disc of 200,002 points with 20,000 holes: %s",
               err);
        took = now () - t0;
        printf ("  a disc of %zu points with %zu holes drawn in %.3f s\n", n, holed.nholes, took);
        /* a zigzag's edges each span its height: no index gains, each
           hole's point looks at every edge, and 200,000 holes inside a
           zigzag of 20,000 points are refused before any drawing */
        size_t nz = 20000;
        for (size_t i = 0; i < nz; i++)
            z[i] = P ((int64_t) (i * 1000 / nz), i % 2 ? 999 : 0);
        qc_annot_region_t zig = {{z, nz}, holes, nh};
        memset (m, 0, 1000 * 1000);
        t0 = now ();
        CHECK (holes && tri && qc_annot_draw (&zig, 1, 0, 0, 1, s_fill, m, 1000, 1000, err,
                                              sizeof err) == -1
               && strstr (err, "too intricate") && count (m, 1000, 1000) == 0,
               "a zigzag of 20,000 points with 200,000 holes: %s", err);
        took = now () - t0;
        printf ("  a zigzag of %zu points with %zu holes refused in %.3f s\n", nz, nh, took);
        /* the same, wholly off the mask: nothing to look for, drawn */
        CHECK (holes && tri && qc_annot_draw (&zig, 1, 5000, 0, 1, s_fill, m, 1000, 1000,
                                              err, sizeof err) == 0
               && count (m, 1000, 1000) == 0, "200,000 holes off the mask: %s", err);
        zig.nholes = 200;
        CHECK (holes && tri && qc_annot_draw (&zig, 1, 0, 0, 1, s_fill, m, 1000, 1000, err,
                                              sizeof err) == 0,
               "a zigzag with 200 holes: %s", err);
        free (holes);
        free (tri);
    }
    free (m);
    free (z);
    free (c);
}

/* A rectilinear ring through k random points of [-50, 250) (each to the
 * next by an L: along x, then y), times mul: in r, and in fine the same
 * with each edge cut in up to four at whole points along it. Both draw
 * the same pixels (their edges are along the axes), but fine has enough
 * points for the rasterizer to look for holes through its index and r
 * (under 16) too few. Returns fine's count. */
static size_t
rectilinear (unsigned *seed, int k, int64_t mul, qc_annot_point_t *r, size_t *nr,
             qc_annot_point_t *fine)
{
    qc_annot_point_t v[16];
    for (int i = 0; i < k; i++)
        v[i] = P ((int64_t) (rand_r (seed) % 300) - 50, (int64_t) (rand_r (seed) % 300) - 50);
    /* at whole coordinates, one ring in two has a point far out, up to
       int64's ends (300 in: no difference of two points leaves int64):
       every other edge then in one band of its index */
    if (mul == 1 && rand_r (seed) % 2) {
        static const int64_t far[] = { INT64_MAX / 2, INT64_MIN / 2, 1000000000000,
                                       INT64_MAX - 300, INT64_MIN + 300 };
        v[rand_r (seed) % k].y = far[rand_r (seed) % 5];
    }
    size_t n = 0, nf = 0;
    for (int i = 0; i < k; i++) {
        qc_annot_point_t a = v[i], b = v[(i + 1) % k];
        qc_annot_point_t corner[2] = {a, P (b.x, a.y)};
        for (int c = 0; c < 2; c++) {
            qc_annot_point_t from = corner[c], to = c ? b : corner[1];
            if (from.x == to.x && from.y == to.y)
                continue;
            r[n++] = P (from.x * mul, from.y * mul);
            for (int t = 0; t < 4; t++) {
                /* whole points along the edge (quarters, near enough;
                   no product that leaves int64) */
                qc_annot_point_t q = P (from.x + (to.x - from.x) / 4 * t,
                                        from.y + (to.y - from.y) / 4 * t);
                if (t && q.x == fine[nf - 1].x / mul && q.y == fine[nf - 1].y / mul)
                    continue;
                fine[nf++] = P (q.x * mul, q.y * mul);
            }
        }
    }
    *nr = n;
    return nf;
}

/* Holes looked for through the outer ring's index of edges by bands
 * (rings of 16 points or more) are found in it, or not, as through
 * every edge: random rectilinear rings, crossing themselves as they
 * may, with random square holes in, out of and across them, drawn as
 * HistoQC does from their 8 to 12 points and from those cut up; at
 * whole coordinates and at ones times 2^54 + 1 (drawn at its inverse
 * scale), where a band is reckoned from rounded doubles. */
static void
test_index_same (void)
{
    enum { W = 200, TRIALS = 300, HOLES = 12 };
    unsigned seed = 20261203;
    uint8_t *a = malloc (W * W), *b = malloc (W * W), *bare = malloc (W * W);
    CHECK (a && b && bare);
    int same = 0, ran = 0, holes_told = 0;
    for (int trial = 0; a && b && bare && trial < TRIALS; trial++) {
        int64_t mul = trial % 2 ? ((int64_t) 1 << 54) + 1 : 1;
        double scale = 1.0 / (double) mul;
        qc_annot_point_t r[32], fine[160], hp[HOLES][4];
        size_t nr;
        size_t nf = rectilinear (&seed, 4 + trial % 3, mul, r, &nr, fine);
        qc_annot_ring_t holes[HOLES];
        for (int j = 0; j < HOLES; j++) {
            int64_t x = rand_r (&seed) % 240 - 20, y = rand_r (&seed) % 240 - 20;
            int64_t side = 2 + rand_r (&seed) % 9;
            qc_annot_point_t sq[4] = {P (x, y), P (x + side, y), P (x + side, y + side),
                                      P (x, y + side)};
            for (int q = 0; q < 4; q++) {
                /* half of them turned the other way */
                qc_annot_point_t pt = sq[j % 2 ? 3 - q : q];
                hp[j][q] = P (pt.x * mul, pt.y * mul);
            }
            holes[j] = (qc_annot_ring_t) { hp[j], 4 };
        }
        if (nr >= 16 || nf < 16)
            continue;
        ran++;
        qc_annot_region_t coarse = {{r, nr}, holes, HOLES}, cut = {{fine, nf}, holes, HOLES};
        qc_annot_region_t none = {{r, nr}, NULL, 0};
        memset (a, 0, W * W), memset (b, 0, W * W), memset (bare, 0, W * W);
        bool ok = qc_annot_draw (&coarse, 1, 0, 0, scale, QC_ANNOT_FILL_AS_HISTOQC, a, W, W,
                                 err, sizeof err) == 0
                  && qc_annot_draw (&cut, 1, 0, 0, scale, QC_ANNOT_FILL_AS_HISTOQC, b, W, W,
                                    err, sizeof err) == 0
                  && qc_annot_draw (&none, 1, 0, 0, scale, QC_ANNOT_FILL_AS_HISTOQC, bare, W,
                                    W, err, sizeof err) == 0;
        if (ok && memcmp (a, b, W * W) == 0)
            same++;
        else if (ran - same <= 3)
            printf ("  trial %d: %zu points and %zu cut up draw differently (%s)\n", trial,
                    nr, nf, ok ? "pixels" : err);
        holes_told += ok && memcmp (a, bare, W * W) != 0;
    }
    printf ("  %d of %d rectilinear rings with holes drawn the same through the index\n", same,
            ran);
    CHECK (ran >= TRIALS / 2 && same == ran, "%d of %d drawn the same", same, ran);
    /* the holes cleared something in most trials: the test looks at them */
    CHECK (holes_told >= ran / 2, "holes changed the drawing in %d of %d", holes_told, ran);
    free (a);
    free (b);
    free (bare);
}

int
main (void)
{
    test_work ();
    s_fill = QC_ANNOT_FILL_AS_HISTOQC;
    test_work ();
    test_index_same ();
    return check_done ("annot_work");
}
