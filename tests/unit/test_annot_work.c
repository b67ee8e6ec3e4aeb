/* The annotation rasterizer's bound on its work (kernels/annot/
 * annot_raster.c, MAX_WORK), under both fills: a zigzag whose every edge
 * spans the mask, and rectangles around it by the 150,000 (rows filled
 * whole), refused by their work before any drawing (nothing drawn), and
 * a smooth outline of as many points drawn, and 1,000 of the
 * rectangles; as HistoQC draws, a disc with 20,000 holes refused (each
 * hole is looked for in its outer ring), the same off the mask and with
 * 200 holes drawn. */
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
    /* as HistoQC, each hole is looked for in its outer ring: the disc's
       200,002 points with 20,000 small holes inside are refused before
       any drawing (uncounted, 40,000 with 40,000 took 20 s); with 200,
       drawn, the holes cleared */
    if (m && s_fill == QC_ANNOT_FILL_AS_HISTOQC) {
        size_t nh = 20000;
        qc_annot_ring_t *holes = calloc (nh, sizeof *holes);
        qc_annot_point_t *tri = malloc (nh * 3 * sizeof *tri);
        CHECK (holes && tri);
        for (size_t j = 0; holes && tri && j < nh; j++) {
            int64_t x = 300 + (int64_t) (j % 100) * 4, y = 300 + (int64_t) (j / 100 % 100) * 4;
            tri[3 * j] = P (x, y), tri[3 * j + 1] = P (x + 3, y), tri[3 * j + 2] = P (x, y + 3);
            holes[j] = (qc_annot_ring_t) { &tri[3 * j], 3 };
        }
        qc_annot_region_t holed = {{c, n}, holes, nh};
        memset (m, 0, 1000 * 1000);
        t0 = now ();
        CHECK (holes && tri && qc_annot_draw (&holed, 1, 0, 0, 1, s_fill, m, 1000, 1000, err,
                                              sizeof err) == -1
               && strstr (err, "too intricate") && count (m, 1000, 1000) == 0,
               "a disc of 200,002 points with 20,000 holes: %s", err);
        took = now () - t0;
        printf ("  a disc of %zu points with %zu holes refused in %.3f s\n", n, nh, took);
        /* the same, wholly off the mask: nothing to look for, drawn */
        CHECK (holes && tri && qc_annot_draw (&holed, 1, 5000, 0, 1, s_fill, m, 1000, 1000,
                                              err, sizeof err) == 0
               && count (m, 1000, 1000) == 0, "20,000 holes off the mask: %s", err);
        holed.nholes = 200;
        CHECK (holes && tri && qc_annot_draw (&holed, 1, 0, 0, 1, s_fill, m, 1000, 1000, err,
                                              sizeof err) == 0
               && m[301 * 1000 + 301] == 0 && m[303 * 1000 + 302] == 1
               && m[500 * 1000 + 500] == 1, "a disc with 200 holes: %s", err);
        free (holes);
        free (tri);
    }
    free (m);
    free (z);
    free (c);
}

int
main (void)
{
    test_work ();
    s_fill = QC_ANNOT_FILL_AS_HISTOQC;
    test_work ();
    return check_done ("annot_work");
}
