/* Annotation files into polygons (annot_parse.h): the regions as the
 * readers build them (annot_build.h), and the interface, which hands the
 * bytes to the reader of their format (annot_xml.c, annot_geojson.c). */
#include "kernels/annot/annot_parse.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernels/annot/annot_build.h"
#include "kernels/annot/annot_line.h"
#include "shared/err.h"

/* ---- the regions being built ----------------------------------------- */


/* p grown to hold need items of size bytes (doubling), or NULL with p
 * untouched. */
static void *
grow (void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / size)
            return NULL;
        c *= 2;
    }
    void *q = realloc (p, c * size);
    if (q)
        *cap = c;
    return q;
}

static int
out_of_memory (build_t *b)
{
    snprintf (b->why, sizeof b->why, "out of memory");
    return -1;
}

static void
ring_free (qc_annot_ring_t *r)
{
    free (r->pts);
    r->pts = NULL;
    r->n = 0;
}

void
annot_region_free (qc_annot_region_t *r)
{
    ring_free (&r->outer);
    for (size_t i = 0; i < r->nholes; i++)
        ring_free (&r->holes[i]);
    free (r->holes);
    memset (r, 0, sizeof *r);
}

int
annot_build_point (build_t *b, int64_t x, int64_t y)
{
    if (b->npoints >= b->max_points) {
        snprintf (b->why, sizeof b->why, "more than %zu points", b->max_points);
        return -1;
    }
    qc_annot_point_t *pts = grow (b->ring.pts, &b->ring_cap, b->ring.n + 1, sizeof *pts);
    if (!pts)
        return out_of_memory (b);
    b->ring.pts = pts;
    pts[b->ring.n++] = (qc_annot_point_t) { x, y };
    b->npoints++;
    return 0;
}

/* The ring read is done: the region's outer ring or a hole of it, or
 * left out when short (HistoQC's _sanitized_points) or of no area (on
 * one line, or edges that cancel: shapely's buffer(0) empties it; see
 * annot_parse.h). */
int
annot_build_ring_end (build_t *b)
{
    qc_annot_ring_t r = b->ring;
    b->ring = (qc_annot_ring_t) { NULL, 0 };
    b->ring_cap = 0;
    bool outer = b->rings++ == 0;
    if (r.n < 3 || qc_annot_ring_no_area (&r)) {
        b->a->dropped++;
        b->dead = b->dead || outer;
        free (r.pts);
        return 0;
    }
    qc_annot_point_t *fit = realloc (r.pts, r.n * sizeof *fit);  /* no slack kept */
    r.pts = fit ? fit : r.pts;
    if (outer) {
        b->cur.outer = r;
        return 0;
    }
    if (b->dead) {
        free (r.pts);
        return 0;
    }
    qc_annot_ring_t *h = grow (b->cur.holes, &b->holes_cap, b->cur.nholes + 1, sizeof *h);
    if (!h) {
        free (r.pts);
        return out_of_memory (b);
    }
    b->cur.holes = h;
    h[b->cur.nholes++] = r;
    return 0;
}

/* The region read is done: kept unless its outer ring was short or it
 * had none (a Polygon of no rings: an outer ring of no points). */
int
annot_build_region_end (build_t *b)
{
    if (b->rings == 0)
        b->a->dropped++;
    bool keep = b->rings > 0 && !b->dead;
    qc_annot_region_t r = b->cur;
    memset (&b->cur, 0, sizeof b->cur);
    b->holes_cap = 0;
    b->rings = 0;
    b->dead = false;
    if (!keep) {
        annot_region_free (&r);
        return 0;
    }
    qc_annot_region_t *all =
        grow (b->a->regions, &b->regions_cap, b->a->n + 1, sizeof *all);
    if (!all) {
        annot_region_free (&r);
        return out_of_memory (b);
    }
    b->a->regions = all;
    all[b->a->n++] = r;
    return 0;
}

/* Frees what a failure left half read. */
void
annot_build_abort (build_t *b)
{
    ring_free (&b->ring);
    annot_region_free (&b->cur);
}

/* int (float (v)) for a v in range: the cast truncates toward zero. */
int
annot_to_coord (double v, int64_t *out)
{
    if (!isfinite (v) || fabs (v) > QC_ANNOT_MAX_COORD)
        return -1;
    *out = (int64_t) v;
    return 0;
}

/* ---- the interface ---------------------------------------------------- */

int
qc_annot_format_parse (const char *s, qc_annot_format_t *out)
{
    if (!s || !out)
        return -1;
    if (strcasecmp (s, "xml") == 0)
        *out = QC_ANNOT_XML;
    else if (strcasecmp (s, "json") == 0 || strcasecmp (s, "geojson") == 0)
        *out = QC_ANNOT_GEOJSON;
    else
        return -1;
    return 0;
}

void
qc_annot_free (qc_annot_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        annot_region_free (&a->regions[i]);
    free (a->regions);
    memset (a, 0, sizeof *a);
}

int
qc_annot_parse (const char *data, size_t len, qc_annot_format_t fmt, size_t max_points,
                qc_annot_t *out, char *err, size_t errlen)
{
    if (out)
        memset (out, 0, sizeof *out);
    if ((!data && len) || !out || (fmt != QC_ANNOT_XML && fmt != QC_ANNOT_GEOJSON))
        return qc_fail (err, errlen, "annotation: bad arguments");
    if (!data)
        data = "";
    build_t b = { .a = out, .max_points = max_points };
    int rc = fmt == QC_ANNOT_XML ? annot_parse_xml (data, len, &b, err, errlen)
                                 : annot_parse_geojson (data, len, &b, err, errlen);
    annot_build_abort (&b);
    if (rc != 0)
        qc_annot_free (out);
    return rc;
}
