/* Connected components: two-pass labelling with union-find, and the
 * size-based filters built on it (remove_small_objects,
 * remove_small_holes, HistoQC's remove_large_objects).
 *
 * Pass 1 gives each pixel a provisional label from its already-visited
 * neighbours (left and up; plus up-left and up-right for 8-connectivity)
 * and merges labels that meet, keeping the smaller as root. Pass 2
 * numbers the roots in raster order of first appearance, which is the
 * numbering skimage.measure.label produces, and counts areas. The size
 * filters and the region summary need no numbering and use the runs of
 * component_runs.c instead. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/component_runs.h"

typedef struct {
    int32_t *parent;
    size_t cap;
    int32_t next;
} forest_t;

static int32_t
merge (int32_t *parent, int32_t a, int32_t b)
{
    a = qc_uf_root (parent, a);
    b = qc_uf_root (parent, b);
    if (a < b) {
        parent[b] = a;
        return a;
    }
    parent[a] = b;
    return b;
}

static int32_t
new_label (forest_t *f)
{
    if ((size_t) f->next + 1 >= f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 1024;
        int32_t *p = realloc (f->parent, cap * sizeof *p);
        if (!p)
            return -1;
        f->parent = p;
        f->cap = cap;
    }
    int32_t l = ++f->next;
    f->parent[l] = l;
    return l;
}

/* Labels the pixels whose (px != 0) equals want into lab (0 elsewhere).
 * On success *n is the component count and *area_out a malloc'd array
 * of n + 1 areas (area[0]: pixels not labelled). */
static int
label_value (const uint8_t *px, int w, int h, int want, int conn,
             int32_t *lab, int32_t *n, size_t **area_out)
{
    forest_t f = { NULL, 0, 0 };
    for (int y = 0; y < h; y++) {
        const uint8_t *p = px + (size_t) y * w;
        int32_t *l = lab + (size_t) y * w;
        const int32_t *up = y ? l - w : NULL;
        for (int x = 0; x < w; x++) {
            if ((p[x] != 0) != want) {
                l[x] = 0;
                continue;
            }
            int32_t cur = 0;
            int32_t nb[4];
            int nn = 0;
            if (x && l[x - 1])
                nb[nn++] = l[x - 1];
            if (up) {
                if (up[x])
                    nb[nn++] = up[x];
                if (conn == 8 && x && up[x - 1])
                    nb[nn++] = up[x - 1];
                if (conn == 8 && x + 1 < w && up[x + 1])
                    nb[nn++] = up[x + 1];
            }
            if (nn == 0) {
                cur = new_label (&f);
                if (cur < 0) {
                    free (f.parent);
                    return -1;
                }
            } else {
                cur = nb[0];
                for (int k = 1; k < nn; k++)
                    if (nb[k] != cur)
                        cur = merge (f.parent, cur, nb[k]);
            }
            l[x] = cur;
        }
    }
    /* Final numbers: roots in raster order of first appearance. */
    int32_t count = 0;
    size_t npx = qc_npix (w, h);
    int32_t *final = f.next ? calloc ((size_t) f.next + 1, sizeof *final)
                            : NULL;
    if (f.next && !final) {
        free (f.parent);
        return -1;
    }
    size_t cap = 64;
    size_t *area = calloc (cap, sizeof *area);
    if (!area) {
        free (final);
        free (f.parent);
        return -1;
    }
    for (size_t i = 0; i < npx; i++) {
        if (!lab[i]) {
            area[0]++;
            continue;
        }
        int32_t r = qc_uf_root (f.parent, lab[i]);
        if (!final[r]) {
            final[r] = ++count;
            if ((size_t) count >= cap) {
                size_t *a = realloc (area, cap * 2 * sizeof *a);
                if (!a) {
                    free (area);
                    free (final);
                    free (f.parent);
                    return -1;
                }
                memset (a + cap, 0, cap * sizeof *a);
                area = a;
                cap *= 2;
            }
        }
        lab[i] = final[r];
        area[final[r]]++;
    }
    free (final);
    free (f.parent);
    *n = count;
    *area_out = area;
    return 0;
}

static int
conn_ok (int c)
{
    return c == 4 || c == 8;
}

int
qc_cpu_label (const qc_mask_t *src, int connectivity, qc_labels_t *out)
{
    if (!qc_mask_valid (src) || !out || !out->px || out->w != src->w
        || out->h != src->h || !conn_ok (connectivity))
        return -1;
    int32_t n;
    size_t *area;
    if (label_value (src->px, src->w, src->h, 1, connectivity, out->px, &n,
                     &area))
        return -1;
    free (out->area);
    out->area = area;
    out->n = n;
    return 0;
}

int
qc_cpu_area_filter (const qc_mask_t *src, int connectivity, size_t min_area,
                    size_t max_area, qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (dst) || src->w != dst->w
        || src->h != dst->h || !conn_ok (connectivity))
        return -1;
    qc_runs_t rs;
    if (qc_runs_label (src, 1, connectivity, &rs) != 0)
        return -1;
    /* labelled before dst is touched: dst may be src */
    memset (dst->px, 0, qc_npix (dst->w, dst->h));
    qc_runs_paint (&rs, min_area, max_area, 1, dst);
    qc_runs_free (&rs);
    return 0;
}

int
qc_cpu_fill_holes (const qc_mask_t *src, int connectivity,
                   size_t area_threshold, qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (dst) || src->w != dst->w
        || src->h != dst->h || !conn_ok (connectivity))
        return -1;
    qc_runs_t rs;
    if (qc_runs_label (src, 0, connectivity, &rs) != 0)
        return -1;
    size_t n = qc_npix (src->w, src->h);
    for (size_t i = 0; i < n; i++)
        dst->px[i] = src->px[i] != 0;
    if (area_threshold > 0)
        qc_runs_paint (&rs, 0, area_threshold - 1, 1, dst);
    qc_runs_free (&rs);
    return 0;
}

/* The runs of src's components; a component's area (which reconstruct
 * does not need) becomes its mark: 1 when a run of it covers a seed
 * pixel, else 0, and qc_runs_paint paints the areas of 1. The runs are
 * read before dst is written, so dst may be src or seed. */
int
qc_cpu_reconstruct (const qc_mask_t *src, const qc_mask_t *seed, int connectivity,
                    qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (seed) || !qc_mask_valid (dst)
        || seed->w != src->w || seed->h != src->h || dst->w != src->w
        || dst->h != src->h || !conn_ok (connectivity))
        return -1;
    qc_runs_t rs;
    if (qc_runs_label (src, 1, connectivity, &rs) != 0)
        return -1;
    memset (rs.area, 0, rs.n * sizeof *rs.area);
    for (int y = 0; y < rs.h; y++) {
        const uint8_t *s = seed->px + (size_t) y * rs.w;
        for (size_t i = rs.row[y]; i < rs.row[y + 1]; i++) {
            size_t *mark = &rs.area[rs.parent[i]];
            for (int32_t x = rs.x0[i]; !*mark && x <= rs.x1[i]; x++)
                *mark = s[x] != 0;
        }
    }
    memset (dst->px, 0, qc_npix (dst->w, dst->h));
    qc_runs_paint (&rs, 1, 1, 1, dst);
    qc_runs_free (&rs);
    return 0;
}

int
qc_cpu_region_summary (const qc_mask_t *src, int connectivity,
                       qc_region_summary_t *out)
{
    if (!qc_mask_valid (src) || !out || !conn_ok (connectivity))
        return -1;
    qc_runs_t rs;
    if (qc_runs_label (src, 1, connectivity, &rs) != 0)
        return -1;
    size_t total = 0, mx = 0;
    for (size_t i = 0; i < rs.n; i++)
        if ((size_t) rs.parent[i] == i) {
            total += rs.area[i];
            mx = rs.area[i] > mx ? rs.area[i] : mx;
        }
    out->n = rs.ncomp;
    out->mean_area = rs.ncomp ? (double) total / (double) rs.ncomp : 0.0;
    out->max_area = mx;
    qc_runs_free (&rs);
    return 0;
}
