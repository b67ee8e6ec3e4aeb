/* Helpers the tests of the annotation rasterizer share: a mask drawn
 * (kernels/annot/annot_raster.h), its pixels counted. Header-only
 * (static inline): every tests/unit/test_*.c is its own program. */
#ifndef QC_ANNOT_DRAW_FIXTURES_H
#define QC_ANNOT_DRAW_FIXTURES_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/annot/annot_raster.h"

#define P(x, y) ((qc_annot_point_t) { (x), (y) })
#define RING(a) ((qc_annot_ring_t) { (a), sizeof (a) / sizeof *(a) })

static char err[512];
/* How the tests draw: the shapes of valid polygons are drawn the same
 * both ways, and run both ways */
static qc_annot_fill_t s_fill = QC_ANNOT_FILL_EVEN_ODD;

/* A w x h mask with regions drawn in it, or NULL where drawing failed
 * (err says why). */
static inline uint8_t *
draw (const qc_annot_region_t *g, size_t n, double ox, double oy, double s, int w, int h)
{
    uint8_t *m = calloc ((size_t) w * (size_t) h, 1);
    err[0] = '\0';
    if (m && qc_annot_draw (g, n, ox, oy, s, s_fill, m, w, h, err, sizeof err) != 0) {
        free (m);
        return NULL;
    }
    return m;
}

static inline uint8_t *
draw_ring (qc_annot_ring_t r, double ox, double oy, double s, int w, int h)
{
    qc_annot_region_t g = { .outer = r };
    return draw (&g, 1, ox, oy, s, w, h);
}

static inline size_t
count (const uint8_t *m, int w, int h)
{
    size_t c = 0;
    for (size_t i = 0; m && i < (size_t) w * (size_t) h; i++)
        c += m[i] != 0;
    return c;
}

/* Seconds on a monotonic clock (a refusal's time, printed). */
static inline double
now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

#endif
