/* The GPU's connected components, checked where there is no GPU: the
 * per-pixel steps every thread of kernels/ops/cuda/components.cu runs
 * (ccl_steps.h: init, merge by atomic-minimum union-find, flatten) are
 * run here one pixel at a time in three orders (forward, backward,
 * shuffled: a GPU promises none), then the roots are numbered in raster
 * order as the GPU's block scan numbers them. The labels, component
 * counts and areas must equal the CPU backend's exactly, for 4- and
 * 8-connectivity, the set pixels and the background (fill_holes labels
 * the background), on random masks of several densities and shapes and
 * on a few made by hand (a spiral, a checkerboard, one row, one
 * column). The size filters and the summary are then rebuilt from the
 * roots' areas as the GPU's kernels compute them and checked against
 * area_filter, fill_holes and region_summary; and reconstruct from the
 * roots marked by seeds (qc_ccl_mark_seeded, qc_ccl_marked: the steps
 * of k_mark_seeded and k_keep_marked, in the same orders) against the
 * CPU's, with seeds sparse, dense and none. */
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/cuda/ccl_steps.h"
#include "tests/unit/check.h"
#pragma GCC diagnostic ignored "-Wunused-function"   /* rand_images.h: what is not used here */
#include "tests/unit/rand_images.h"

/* The pixel order of one run: 0 forward, 1 backward, 2 shuffled. */
static size_t *
order_of (size_t n, int kind)
{
    size_t *o = malloc (n * sizeof *o);
    for (size_t i = 0; o && i < n; i++)
        o[i] = kind == 1 ? n - 1 - i : i;
    for (size_t i = n; o && kind == 2 && i > 1; i--) {
        size_t j = rnd () % i, t = o[i - 1];
        o[i - 1] = o[j];
        o[j] = t;
    }
    return o;
}

/* The GPU's labelling of class want of m, steps in order kind: labels
 * 1..n in lab, areas (n + 1) in *area, n returned; -1 on no memory.
 * parent_out (if not NULL) keeps the flattened parents. */
static int32_t
gpu_label (const qc_mask_t *m, int want, int conn, int kind, int32_t *lab,
           size_t **area, int32_t **parent_out)
{
    size_t n = qc_npix (m->w, m->h);
    int32_t *parent = malloc (n * sizeof *parent);
    size_t *o = order_of (n, kind);
    int32_t *number = calloc (n, sizeof *number);
    if (!parent || !o || !number) {
        free (parent);
        free (o);
        free (number);
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        qc_ccl_init (m->px, want, o[k], parent);
    for (size_t k = 0; k < n; k++)
        qc_ccl_merge (parent, m->w, conn, o[k]);
    for (size_t k = 0; k < n; k++)
        qc_ccl_flatten (parent, o[k]);
    /* the block scan's result: roots numbered in raster order */
    int32_t ncomp = 0;
    for (size_t i = 0; i < n; i++)
        if (qc_ccl_is_root (parent, i))
            number[i] = ++ncomp;
    *area = calloc ((size_t) ncomp + 1, sizeof **area);
    for (size_t i = 0; *area && i < n; i++) {
        lab[i] = parent[i] >= 0 ? number[parent[i]] : 0;
        (*area)[lab[i]]++;
    }
    free (o);
    free (number);
    if (parent_out)
        *parent_out = parent;
    else
        free (parent);
    return *area ? ncomp : -1;
}

/* reconstruct of m by random seeds (density %), as the GPU's kernels
 * compute it from m's flattened parents, steps in order kind, against
 * the CPU's (out: scratch of m's size). */
static void
check_reconstruct (const qc_mask_t *m, const int32_t *parent, int conn, int kind,
                   int density, qc_mask_t *out, const char *what)
{
    size_t n = qc_npix (m->w, m->h);
    qc_mask_t *seed = rand_mask (m->w, m->h, density);
    uint8_t *mark = calloc (n, 1);
    size_t *o = order_of (n, kind);
    if (!seed || !mark || !o) {
        CHECK (0, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        qc_ccl_mark_seeded (parent, seed->px, o[k], mark);
    CHECK (qc_cpu_reconstruct (m, seed, conn, out) == 0);
    size_t bad = 0, kept = 0;
    for (size_t k = 0; k < n; k++) {
        uint8_t v = qc_ccl_marked (parent, mark, o[k]);
        bad += v != out->px[o[k]];
        kept += v;
    }
    CHECK (bad == 0, "%s conn %d order %d seeds %d%%: reconstruct %zu px differ "
           "(%zu kept)", what, conn, kind, density, bad, kept);
done:
    qc_mask_destroy (&seed);
    free (mark);
    free (o);
}

/* One mask, both classes, both connectivities, three orders. */
static void
check_mask (const qc_mask_t *m, const char *what)
{
    size_t n = qc_npix (m->w, m->h);
    int32_t *lab = malloc (n * sizeof *lab);
    qc_labels_t *cpu = qc_labels_new (m->w, m->h);
    qc_mask_t *inv = qc_mask_new (m->w, m->h);
    qc_mask_t *out = qc_mask_new (m->w, m->h);
    if (!lab || !cpu || !inv || !out) {
        CHECK (0, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        inv->px[i] = !m->px[i];
    for (int conn = 4; conn <= 8; conn += 4)
        for (int want = 0; want <= 1; want++) {
            /* the CPU's labels of the class: the mask or its inverse */
            CHECK (qc_cpu_label (want ? m : inv, conn, cpu) == 0);
            for (int kind = 0; kind < 3; kind++) {
                size_t *area = NULL;
                int32_t *parent = NULL;
                int32_t nc = gpu_label (m, want, conn, kind, lab, &area,
                                        &parent);
                CHECK (nc == cpu->n, "%s conn %d class %d order %d: %d "
                       "components, CPU %d", what, conn, want, kind, nc,
                       cpu->n);
                CHECK (nc >= 0 && memcmp (lab, cpu->px, n * sizeof *lab) == 0,
                       "%s conn %d class %d order %d: labels differ", what,
                       conn, want, kind);
                for (int32_t k = 0; nc >= 0 && k <= nc && nc == cpu->n; k++)
                    CHECK (area[k] == cpu->area[k], "%s: area %d", what, k);
                if (nc < 0) {
                    free (area);
                    free (parent);
                    continue;
                }
                /* the filters, as k_paint and k_summary compute them from
                 * the roots' areas (root-indexed) */
                size_t *at_root = calloc (n, sizeof *at_root);
                for (size_t i = 0; at_root && i < n; i++)
                    if (parent[i] >= 0)
                        at_root[parent[i]]++;
                if (want == 1 && at_root) {
                    size_t lo = 3, hi = 40;
                    CHECK (qc_cpu_area_filter (m, conn, lo, hi, out) == 0);
                    size_t bad = 0, total = 0, mx = 0, cnt = 0;
                    for (size_t i = 0; i < n; i++) {
                        int32_t r = parent[i];
                        uint8_t v = r >= 0 && at_root[r] >= lo && at_root[r] <= hi;
                        bad += v != out->px[i];
                        if (r == (int32_t) i) {
                            cnt++;
                            total += at_root[i];
                            mx = at_root[i] > mx ? at_root[i] : mx;
                        }
                    }
                    CHECK (bad == 0, "%s conn %d: area_filter %zu px", what,
                           conn, bad);
                    for (int density = 0; density <= 60; density += 30)
                        check_reconstruct (m, parent, conn, kind, density, out, what);
                    qc_region_summary_t rs;
                    CHECK (qc_cpu_region_summary (m, conn, &rs) == 0
                           && rs.n == cnt && rs.max_area == mx
                           && rs.mean_area == (cnt ? (double) total
                                               / (double) cnt : 0.0),
                           "%s conn %d: summary", what, conn);
                } else if (at_root) {
                    size_t thr = 25;
                    CHECK (qc_cpu_fill_holes (m, conn, thr, out) == 0);
                    size_t bad = 0;
                    for (size_t i = 0; i < n; i++) {
                        int32_t r = parent[i];
                        uint8_t v = m->px[i] != 0
                                    || (r >= 0 && at_root[r] <= thr - 1);
                        bad += v != out->px[i];
                    }
                    CHECK (bad == 0, "%s conn %d: fill_holes %zu px", what,
                           conn, bad);
                }
                free (at_root);
                free (area);
                free (parent);
            }
        }
done:
    free (lab);
    qc_labels_destroy (&cpu);
    qc_mask_destroy (&inv);
    qc_mask_destroy (&out);
}

/* A square spiral: one long component whose pixels meet their earlier
 * neighbours in every direction (the worst case for merging). */
static qc_mask_t *
spiral (int s)
{
    qc_mask_t *m = qc_mask_new (s, s);
    if (!m)
        return NULL;
    int x0 = 0, y0 = 0, x1 = s - 1, y1 = s - 1;
    while (x0 <= x1 && y0 <= y1) {
        for (int x = x0; x <= x1; x++)
            m->px[y0 * s + x] = 1;
        for (int y = y0; y <= y1; y++)
            m->px[y * s + x1] = 1;
        for (int x = x0; x <= x1; x++)
            m->px[y1 * s + x] = 1;
        for (int y = y0 + 2; y <= y1; y++)
            m->px[y * s + x0] = 1;
        if (x0 + 2 <= x1)
            m->px[(y0 + 2) * s + x0 + 1] = 1;
        x0 += 2;
        y0 += 2;
        x1 -= 2;
        y1 -= 2;
    }
    return m;
}

int
main (void)
{
    const struct { int w, h, density; } shapes[] = {
        { 64, 48, 30 }, { 64, 48, 50 }, { 64, 48, 70 }, { 97, 13, 55 },
        { 1, 200, 50 }, { 200, 1, 50 }, { 1, 1, 50 }, { 150, 120, 45 },
    };
    char what[64];
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        qc_mask_t *m = rand_mask (shapes[s].w, shapes[s].h, shapes[s].density);
        snprintf (what, sizeof what, "random %dx%d %d%%", shapes[s].w,
                  shapes[s].h, shapes[s].density);
        if (m)
            check_mask (m, what);
        qc_mask_destroy (&m);
    }
    qc_mask_t *sp = spiral (41);
    if (sp)
        check_mask (sp, "spiral");
    qc_mask_destroy (&sp);
    qc_mask_t *cb = qc_mask_new (33, 17);
    for (int i = 0; cb && i < 33 * 17; i++)
        cb->px[i] = ((i % 33) + (i / 33)) & 1;
    if (cb)
        check_mask (cb, "checkerboard");
    qc_mask_destroy (&cb);
    return check_done ("gpu_components");
}
