/* Whether an annotation ring has no area because its points all lie on
 * one line (one point, the same point repeated, a line clicked back and
 * forth). Both the reader and the rasterizer ask: the reader leaves such
 * a ring out as HistoQC does (shapely's buffer(0) makes it empty), the
 * rasterizer does not fill one (the mapping to the mask keeps lines
 * lines, so it has no interior however it is rounded). */
#ifndef QC_ANNOT_LINE_H
#define QC_ANNOT_LINE_H

#include <stdbool.h>

#include "kernels/annot/annot_parse.h"

/* Exactly, in the integers. An empty ring (or NULL) is on a line. */
bool qc_annot_ring_on_line (const qc_annot_ring_t *r);

#endif
