/* Connected components by runs, for the ops that need only each
 * component's size (area_filter, fill_holes, region_summary): the same
 * components as the per-pixel labelling of components.c (which
 * qc_cpu_label keeps, for skimage's numbering), found from the
 * horizontal runs of a mask. A tissue mask at 1.25x has a few runs per
 * row where it has thousands of pixels, so union-find over runs costs
 * a fraction of union-find over pixels, and painting the result is a
 * memset per run.
 *
 * A run of row y touches a run of row y - 1 when their columns overlap
 * (4-connectivity) or overlap once widened by one (8-connectivity). */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/component_runs.h"
#include "kernels/image/mask_scan.h"

static int
grow (qc_runs_t *rs)
{
    size_t cap = rs->cap ? rs->cap * 2 : 4096;
    int32_t *x0 = realloc (rs->x0, cap * sizeof *x0);
    if (x0)
        rs->x0 = x0;
    int32_t *x1 = x0 ? realloc (rs->x1, cap * sizeof *x1) : NULL;
    if (x1)
        rs->x1 = x1;
    int32_t *parent = x1 ? realloc (rs->parent, cap * sizeof *parent) : NULL;
    if (!parent)
        return -1;
    rs->parent = parent;
    rs->cap = cap;
    return 0;
}

void
qc_runs_free (qc_runs_t *rs)
{
    if (!rs)
        return;
    free (rs->x0);
    free (rs->x1);
    free (rs->parent);
    free (rs->row);
    free (rs->area);
    memset (rs, 0, sizeof *rs);
}

int
qc_runs_label (const qc_mask_t *src, int want, int conn, qc_runs_t *rs)
{
    memset (rs, 0, sizeof *rs);
    if (!qc_mask_valid (src) || (conn != 4 && conn != 8))
        return -1;
    int w = src->w, h = src->h;
    rs->w = w;
    rs->h = h;
    rs->row = malloc (((size_t) h + 1) * sizeof *rs->row);
    if (!rs->row)
        return -1;
    int widen = conn == 8 ? 1 : 0;
    want = want != 0;
    size_t prev0 = 0, prev1 = 0;           /* runs of row y - 1 */
    for (int y = 0; y < h; y++) {
        const uint8_t *p = src->px + (size_t) y * w;
        rs->row[y] = rs->n;
        size_t k = prev0;                  /* first run above that may touch */
        for (int x = qc_mask_run_end (p, 0, w, !want); x < w;) {
            int s = x;
            x = qc_mask_run_end (p, x, w, want);
            if (rs->n == rs->cap && grow (rs) != 0) {
                qc_runs_free (rs);
                return -1;
            }
            size_t me = rs->n++;
            rs->x0[me] = s;
            rs->x1[me] = x - 1;
            rs->parent[me] = (int32_t) me;
            /* runs above ending before this one's reach cannot touch it
             * or any later run of this row */
            while (k < prev1 && rs->x1[k] < s - widen)
                k++;
            for (size_t j = k; j < prev1 && rs->x0[j] <= x - 1 + widen; j++) {
                int32_t a = qc_uf_root (rs->parent, (int32_t) me);
                int32_t b = qc_uf_root (rs->parent, (int32_t) j);
                if (a != b)
                    rs->parent[a > b ? a : b] = a < b ? a : b;
            }
            x = qc_mask_run_end (p, x, w, !want);      /* the next run */
        }
        prev0 = rs->row[y];
        prev1 = rs->n;
    }
    rs->row[h] = rs->n;
    /* every run points at its root; areas summed on the roots */
    rs->area = calloc (rs->n ? rs->n : 1, sizeof *rs->area);
    if (!rs->area) {
        qc_runs_free (rs);
        return -1;
    }
    for (size_t i = 0; i < rs->n; i++) {
        int32_t r = qc_uf_root (rs->parent, (int32_t) i);
        rs->parent[i] = r;
        rs->area[r] += (size_t) (rs->x1[i] - rs->x0[i] + 1);
        if ((size_t) r == i)
            rs->ncomp++;
    }
    return 0;
}

void
qc_runs_paint (const qc_runs_t *rs, size_t min_area, size_t max_area,
               uint8_t value, qc_mask_t *dst)
{
    for (int y = 0; y < rs->h; y++)
        for (size_t i = rs->row[y]; i < rs->row[y + 1]; i++) {
            size_t a = rs->area[rs->parent[i]];
            if (a >= min_area && a <= max_area)
                memset (dst->px + (size_t) y * rs->w + rs->x0[i], value,
                        (size_t) (rs->x1[i] - rs->x0[i] + 1));
        }
}
