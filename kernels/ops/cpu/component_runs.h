/* Connected components of a mask's runs (component_runs.c). */
#ifndef QC_CPU_COMPONENT_RUNS_H
#define QC_CPU_COMPONENT_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"

/* Union-find: the root of l, halving the path on the way (shared by
 * the pixel labelling of components.c and the runs here). */
static inline int32_t
qc_uf_root (int32_t *parent, int32_t l)
{
    while (parent[l] != l) {
        parent[l] = parent[parent[l]];
        l = parent[l];
    }
    return l;
}

typedef struct {
    int w, h;
    size_t n, cap;        /* runs */
    int32_t *x0, *x1;     /* columns of each run, inclusive */
    int32_t *parent;      /* after qc_runs_label: each run's root run */
    size_t *row;          /* runs of row y: [row[y], row[y + 1]) */
    size_t *area;         /* pixels of the component whose root run is i */
    size_t ncomp;         /* components */
} qc_runs_t;

/* The components of the pixels of src whose (px != 0) equals want, with
 * conn 4 or 8. 0, or -1 (bad argument, no memory) with rs emptied. */
int qc_runs_label (const qc_mask_t *src, int want, int conn, qc_runs_t *rs);

/* Sets to value the pixels of dst (src's size) in components of
 * min_area..max_area pixels; leaves the others. */
void qc_runs_paint (const qc_runs_t *rs, size_t min_area, size_t max_area,
                    uint8_t value, qc_mask_t *dst);

void qc_runs_free (qc_runs_t *rs);

#endif
