/* What the annotation readers share (annot_parse.c's, not for callers
 * outside kernels/annot/): the regions being built, one ring at a time,
 * and the two readers, each of which fills a build_t. */
#ifndef QC_ANNOT_BUILD_H
#define QC_ANNOT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/annot/annot_parse.h"

/* One ring at a time, into the region at hand: the first ring of a
 * region is its outer ring, the others its holes. */
typedef struct {
    qc_annot_t *a;
    size_t regions_cap;
    size_t max_points, npoints;    /* every point read counts, kept or not */
    qc_annot_region_t cur;
    size_t holes_cap;
    size_t rings;                  /* rings of cur read so far */
    bool dead;                     /* cur's outer ring was short: drop it all */
    qc_annot_ring_t ring;
    size_t ring_cap;
    char why[96];                  /* why the last build_* call failed */
} build_t;

/* A point of the ring at hand. 0, or -1 with b->why: more than
 * max_points points, or no memory. */
int annot_build_point (build_t *b, int64_t x, int64_t y);

/* The ring at hand is done (0, or -1 with b->why). */
int annot_build_ring_end (build_t *b);

/* The region at hand is done (0, or -1 with b->why). */
int annot_build_region_end (build_t *b);

/* Frees what a failure left half read. */
void annot_build_abort (build_t *b);

/* Frees a region's rings and empties it. */
void annot_region_free (qc_annot_region_t *r);

/* int (float (v)) into *out, or -1 when v is not finite or is beyond
 * QC_ANNOT_MAX_COORD. */
int annot_to_coord (double v, int64_t *out);

/* The readers: 0, or -1 with err saying where the file is wrong. */
int annot_parse_xml (const char *data, size_t len, build_t *b, char *err, size_t errlen);
int annot_parse_geojson (const char *data, size_t len, build_t *b, char *err,
                         size_t errlen);

#endif
