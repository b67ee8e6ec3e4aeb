/* Binary morphology and connected components, against naive reference
 * implementations on random masks and against known shapes (labels as
 * skimage.measure.label numbers them, checked with scikit-image 0.19). */
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/ops.h"
#include "tests/unit/check.h"

static const qc_ops_t *ops;

static qc_mask_t *
random_mask (int w, int h, int percent, unsigned seed)
{
    qc_mask_t *m = qc_mask_new (w, h);
    srand (seed);
    for (int i = 0; i < w * h; i++)
        m->px[i] = rand () % 100 < percent;
    return m;
}

/* Naive disk / rectangle erosion and dilation by definition: offsets of
 * the footprint; outside the image ignored (skimage's borders). */
static void
naive_morph (const qc_mask_t *src, int disk_r, int kw, int kh, int dilate,
             qc_mask_t *dst)
{
    int x0, x1, y0, y1;
    if (disk_r >= 0) {
        x0 = y0 = -disk_r;
        x1 = y1 = disk_r;
    } else {                    /* window [x - (k-1)/2, x + k/2] */
        x0 = -((kw - 1) / 2), x1 = kw / 2;
        y0 = -((kh - 1) / 2), y1 = kh / 2;
    }
    for (int y = 0; y < src->h; y++)
        for (int x = 0; x < src->w; x++) {
            int any = 0, all = 1;
            for (int dy = y0; dy <= y1; dy++)
                for (int dx = x0; dx <= x1; dx++) {
                    if (disk_r >= 0 && dx * dx + dy * dy > disk_r * disk_r)
                        continue;
                    int xx = x + dx, yy = y + dy;
                    if (xx < 0 || yy < 0 || xx >= src->w || yy >= src->h)
                        continue;
                    int v = src->px[yy * src->w + xx];
                    any |= v;
                    all &= v;
                }
            dst->px[y * src->w + x] = (uint8_t) (dilate ? any : all);
        }
}

static int
same_mask (const qc_mask_t *a, const qc_mask_t *b)
{
    return memcmp (a->px, b->px, (size_t) a->w * a->h) == 0;
}

static void
test_disk (void)
{
    static const int dims[][2] = { { 31, 23 }, { 1, 17 }, { 40, 1 },
                                   { 64, 57 } };
    static const int radii[] = { 0, 1, 2, 3, 5, 7, 12 };
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (size_t r = 0; r < sizeof radii / sizeof radii[0]; r++) {
            int w = dims[d][0], h = dims[d][1];
            qc_mask_t *m = random_mask (w, h, 55, (unsigned) (d * 31 + r));
            qc_mask_t *got = qc_mask_new (w, h), *want = qc_mask_new (w, h);
            qc_mask_t *tmp = qc_mask_new (w, h);
            for (int op = QC_MORPH_ERODE; op <= QC_MORPH_CLOSE; op++) {
                CHECK (ops->morph_disk (m, radii[r], (qc_morph_t) op, got) == 0);
                if (op <= QC_MORPH_DILATE)
                    naive_morph (m, radii[r], 0, 0, op == QC_MORPH_DILATE, want);
                else {
                    int first = op == QC_MORPH_CLOSE;
                    naive_morph (m, radii[r], 0, 0, first, tmp);
                    naive_morph (tmp, radii[r], 0, 0, !first, want);
                }
                CHECK (same_mask (got, want), "disk r %d op %d on %dx%d",
                       radii[r], op, w, h);
            }
            /* in place */
            memcpy (got->px, m->px, (size_t) w * h);
            CHECK (ops->morph_disk (got, radii[r], QC_MORPH_OPEN, got) == 0);
            naive_morph (m, radii[r], 0, 0, 0, tmp);
            naive_morph (tmp, radii[r], 0, 0, 1, want);
            CHECK (same_mask (got, want), "in-place open r %d", radii[r]);
            qc_mask_destroy (&m);
            qc_mask_destroy (&got);
            qc_mask_destroy (&want);
            qc_mask_destroy (&tmp);
        }
    /* a large radius (HistoQC's spur removal uses 25) */
    qc_mask_t *m = random_mask (90, 70, 80, 99);
    qc_mask_t *got = qc_mask_new (90, 70), *want = qc_mask_new (90, 70);
    CHECK (ops->morph_disk (m, 25, QC_MORPH_ERODE, got) == 0);
    naive_morph (m, 25, 0, 0, 0, want);
    CHECK (same_mask (got, want), "erode r 25");
    CHECK (ops->morph_disk (m, 25, QC_MORPH_DILATE, got) == 0);
    naive_morph (m, 25, 0, 0, 1, want);
    CHECK (same_mask (got, want), "dilate r 25");
    /* a full mask survives erosion (outside counts as set) */
    qc_mask_fill (m, 1);
    CHECK (ops->morph_disk (m, 4, QC_MORPH_ERODE, got) == 0);
    size_t n;
    ops->mask_count (got, &n);
    CHECK (n == 90 * 70);
    CHECK (ops->morph_disk (m, -1, QC_MORPH_ERODE, got) == -1);
    CHECK (ops->morph_disk (m, 1, (qc_morph_t) 7, got) == -1);
    qc_mask_destroy (&m);
    qc_mask_destroy (&got);
    qc_mask_destroy (&want);
}

static void
test_rect (void)
{
    static const int ks[][2] = { { 1, 1 }, { 3, 3 }, { 5, 5 }, { 10, 10 },
                                 { 2, 7 }, { 30, 4 } };
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
        qc_mask_t *m = random_mask (29, 21, 70, (unsigned) k + 100);
        qc_mask_t *got = qc_mask_new (29, 21), *want = qc_mask_new (29, 21);
        for (int op = QC_MORPH_ERODE; op <= QC_MORPH_DILATE; op++) {
            CHECK (ops->morph_rect (m, ks[k][0], ks[k][1], (qc_morph_t) op,
                                    got) == 0);
            naive_morph (m, -1, ks[k][0], ks[k][1], op == QC_MORPH_DILATE, want);
            CHECK (same_mask (got, want), "rect %dx%d op %d", ks[k][0],
                   ks[k][1], op);
        }
        qc_mask_destroy (&m);
        qc_mask_destroy (&got);
        qc_mask_destroy (&want);
    }
    /* skimage dilation with np.ones ((10, 10)): an impulse at 6 covers
     * rows and columns 1 .. 10 */
    qc_mask_t *m = qc_mask_new (12, 12), *d = qc_mask_new (12, 12);
    m->px[6 * 12 + 6] = 1;
    CHECK (ops->morph_rect (m, 10, 10, QC_MORPH_DILATE, d) == 0);
    CHECK (d->px[1 * 12 + 1] && d->px[10 * 12 + 10] && !d->px[0]
           && !d->px[11 * 12 + 11]);
    qc_mask_destroy (&m);
    qc_mask_destroy (&d);
}

/* Flood-fill reference for component areas: area of each pixel's
 * component (0 for pixels not of value want). */
static void
naive_areas (const qc_mask_t *m, int want, int conn, size_t *area)
{
    int w = m->w, h = m->h, n = w * h;
    int *lab = calloc ((size_t) n, sizeof *lab), *stack = malloc ((size_t) n * sizeof *stack);
    size_t *sz = calloc ((size_t) n + 1, sizeof *sz);
    int next = 0;
    for (int s = 0; s < n; s++) {
        if ((m->px[s] != 0) != want || lab[s])
            continue;
        int top = 0;
        stack[top++] = s;
        lab[s] = ++next;
        while (top) {
            int p = stack[--top], px = p % w, py = p / w;
            sz[next]++;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    if ((!dx && !dy) || (conn == 4 && dx && dy))
                        continue;
                    int x = px + dx, y = py + dy;
                    if (x < 0 || y < 0 || x >= w || y >= h)
                        continue;
                    int q = y * w + x;
                    if ((m->px[q] != 0) == want && !lab[q]) {
                        lab[q] = next;
                        stack[top++] = q;
                    }
                }
        }
    }
    for (int i = 0; i < n; i++)
        area[i] = lab[i] ? sz[lab[i]] : 0;
    free (lab);
    free (stack);
    free (sz);
}

static void
test_components (void)
{
    /* skimage.measure.label of this mask (8- and 4-connectivity agree) */
    static const uint8_t shape[5][4] = { { 0, 0, 0, 1 }, { 1, 0, 0, 1 },
        { 1, 0, 1, 1 }, { 0, 0, 0, 0 }, { 1, 1, 0, 1 } };
    static const int32_t labels[5][4] = { { 0, 0, 0, 1 }, { 2, 0, 0, 1 },
        { 2, 0, 1, 1 }, { 0, 0, 0, 0 }, { 3, 3, 0, 4 } };
    qc_mask_t *m = qc_mask_new (4, 5);
    memcpy (m->px, shape, 20);
    qc_labels_t *l = qc_labels_new (4, 5);
    CHECK (ops->label (m, 8, l) == 0 && l->n == 4);
    CHECK (memcmp (l->px, labels, sizeof labels) == 0, "raster order");
    CHECK (l->area[1] == 4 && l->area[2] == 2 && l->area[0] == 11);
    CHECK (ops->label (m, 4, l) == 0 && l->n == 4, "relabel frees old areas");
    CHECK (ops->label (m, 6, l) == -1);

    /* diagonal pixels: one object for 8, two for 4 */
    static const uint8_t diag[2][4] = { { 0, 1, 0, 1 }, { 1, 0, 1, 0 } };
    qc_mask_t *dm = qc_mask_new (4, 2);
    memcpy (dm->px, diag, 8);
    qc_region_summary_t rs;
    CHECK (ops->region_summary (dm, 8, &rs) == 0 && rs.n == 1
           && rs.max_area == 4);
    CHECK (ops->region_summary (dm, 4, &rs) == 0 && rs.n == 4
           && rs.mean_area == 1.0);
    qc_mask_t *e = qc_mask_new (3, 3);
    CHECK (ops->region_summary (e, 8, &rs) == 0 && rs.n == 0
           && rs.mean_area == 0 && rs.max_area == 0);

    /* remove_small_objects (min_size 2, connectivity 1 = 4) */
    qc_mask_t *o = qc_mask_new (4, 5);
    CHECK (ops->area_filter (m, 4, 2, SIZE_MAX, o) == 0);
    size_t cnt;
    ops->mask_count (o, &cnt);
    CHECK (cnt == 8 && o->px[4 * 4 + 3] == 0, "lone pixel removed");
    /* HistoQC's remove_large_objects (max 2) */
    CHECK (ops->area_filter (m, 4, 0, 2, o) == 0);
    ops->mask_count (o, &cnt);
    CHECK (cnt == 5 && o->px[3] == 0);

    /* remove_small_holes: a 1-pixel hole inside and one on the corner
     * are both holes (skimage does not spare the border) */
    qc_mask_t *hm = qc_mask_new (6, 6);
    qc_mask_fill (hm, 1);
    hm->px[0] = 0;
    hm->px[3 * 6 + 3] = 0;
    CHECK (ops->fill_holes (hm, 4, 2, o) == -1, "size mismatch");
    qc_mask_t *ho = qc_mask_new (6, 6);
    CHECK (ops->fill_holes (hm, 4, 2, ho) == 0);
    ops->mask_count (ho, &cnt);
    CHECK (cnt == 36);
    CHECK (ops->fill_holes (hm, 4, 1, ho) == 0, "area < 1: none");
    ops->mask_count (ho, &cnt);
    CHECK (cnt == 34);

    /* random masks against flood fill, both connectivities */
    for (int conn = 4; conn <= 8; conn += 4)
        for (unsigned seed = 1; seed <= 12; seed++) {
            qc_mask_t *r = random_mask (47, 39, 25 + (int) seed * 5, seed);
            qc_mask_t *a = qc_mask_new (47, 39), *b = qc_mask_new (47, 39);
            size_t *ar = malloc (47 * 39 * sizeof *ar);
            size_t *hr = malloc (47 * 39 * sizeof *hr);
            naive_areas (r, 1, conn, ar);
            naive_areas (r, 0, conn, hr);
            CHECK (ops->area_filter (r, conn, 5, 40, a) == 0);
            CHECK (ops->fill_holes (r, conn, 6, b) == 0);
            int bad = 0;
            for (int i = 0; i < 47 * 39; i++) {
                bad += a->px[i] != (ar[i] >= 5 && ar[i] <= 40);
                bad += b->px[i] != (r->px[i] || (hr[i] && hr[i] < 6));
            }
            CHECK (bad == 0, "conn %d seed %u: %d bad", conn, seed, bad);
            qc_labels_t *lb = qc_labels_new (47, 39);
            CHECK (ops->label (r, conn, lb) == 0);
            int badl = 0;
            for (int i = 0; i < 47 * 39; i++)
                badl += (lb->px[i] ? lb->area[lb->px[i]] : 0) != ar[i];
            CHECK (badl == 0);
            /* first appearance of each label is in increasing order */
            int32_t seen = 0;
            for (int i = 0; i < 47 * 39; i++)
                if (lb->px[i] > seen) {
                    badl += lb->px[i] != seen + 1;
                    seen = lb->px[i];
                }
            CHECK (badl == 0 && seen == lb->n);
            /* the run-based summary against the pixel labelling */
            qc_region_summary_t rsum;
            size_t mx = 0, tot = 0;
            for (int32_t k = 1; k <= lb->n; k++) {
                tot += lb->area[k];
                mx = lb->area[k] > mx ? lb->area[k] : mx;
            }
            CHECK (ops->region_summary (r, conn, &rsum) == 0
                   && rsum.n == (size_t) lb->n && rsum.max_area == mx
                   && rsum.mean_area == (lb->n ? (double) tot / lb->n : 0.0),
                   "conn %d seed %u: summary %zu %zu vs %d %zu", conn, seed,
                   rsum.n, rsum.max_area, lb->n, mx);
            qc_labels_destroy (&lb);
            free (ar);
            free (hr);
            qc_mask_destroy (&r);
            qc_mask_destroy (&a);
            qc_mask_destroy (&b);
        }
    qc_labels_destroy (&l);
    qc_mask_destroy (&m);
    qc_mask_destroy (&dm);
    qc_mask_destroy (&e);
    qc_mask_destroy (&o);
    qc_mask_destroy (&hm);
    qc_mask_destroy (&ho);
}

/* Reconstruction by dilation as its definition says: seed AND src,
 * grown by one neighbour (4 or 8) at a time inside src until nothing
 * changes. */
static void
naive_reconstruct (const qc_mask_t *src, const qc_mask_t *seed, int conn, qc_mask_t *dst)
{
    int w = src->w, h = src->h;
    for (int i = 0; i < w * h; i++)
        dst->px[i] = src->px[i] && seed->px[i];
    for (int changed = 1; changed;) {
        changed = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                if (!src->px[y * w + x] || dst->px[y * w + x])
                    continue;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int xx = x + dx, yy = y + dy;
                        if ((conn == 4 && dx && dy) || xx < 0 || yy < 0 || xx >= w || yy >= h)
                            continue;
                        if (dst->px[yy * w + xx] && !dst->px[y * w + x]) {
                            dst->px[y * w + x] = 1;
                            changed = 1;
                        }
                    }
            }
    }
}

static void
test_reconstruct (void)
{
    qc_mask_t *small = qc_mask_new (5, 4), *m = qc_mask_new (9, 7);
    CHECK (ops->reconstruct (m, small, 8, m) == -1, "a seed of another size");
    CHECK (ops->reconstruct (m, m, 6, m) == -1, "connectivity 6");
    CHECK (ops->reconstruct (NULL, m, 8, m) == -1 && ops->reconstruct (m, NULL, 8, m) == -1
           && ops->reconstruct (m, m, 8, NULL) == -1, "NULL");
    /* two diagonal pixels: one component at 8, two at 4 */
    m->px[2 * 9 + 2] = m->px[3 * 9 + 3] = 1;
    qc_mask_t *seed = qc_mask_new (9, 7), *out = qc_mask_new (9, 7);
    seed->px[2 * 9 + 2] = 1;
    seed->px[0] = 1;            /* outside m: seeds nothing */
    size_t n = 0;
    CHECK (ops->reconstruct (m, seed, 8, out) == 0 && ops->mask_count (out, &n) == 0 && n == 2
           && out->px[3 * 9 + 3] && !out->px[0], "8-connected: both, %zu", n);
    CHECK (ops->reconstruct (m, seed, 4, out) == 0 && ops->mask_count (out, &n) == 0 && n == 1
           && out->px[2 * 9 + 2], "4-connected: the seeded one, %zu", n);
    qc_mask_destroy (&small);
    qc_mask_destroy (&m);
    qc_mask_destroy (&seed);
    qc_mask_destroy (&out);

    /* random masks (sparse to percolating) and seeds against the
     * definition; in place on the seed and on src too */
    for (int conn = 4; conn <= 8; conn += 4)
        for (unsigned s = 1; s <= 10; s++) {
            qc_mask_t *r = random_mask (53, 41, 30 + (int) s * 4, s);
            qc_mask_t *sd = random_mask (53, 41, 2, s + 100);
            qc_mask_t *want = qc_mask_new (53, 41), *got = qc_mask_new (53, 41);
            naive_reconstruct (r, sd, conn, want);
            CHECK (ops->reconstruct (r, sd, conn, got) == 0 && same_mask (got, want),
                   "conn %d seed %u", conn, s);
            qc_mask_t *in_seed = qc_mask_clone (sd), *in_src = qc_mask_clone (r);
            CHECK (ops->reconstruct (r, in_seed, conn, in_seed) == 0
                   && same_mask (in_seed, want), "conn %d seed %u: dst = seed", conn, s);
            CHECK (ops->reconstruct (in_src, sd, conn, in_src) == 0
                   && same_mask (in_src, want), "conn %d seed %u: dst = src", conn, s);
            qc_mask_destroy (&r);
            qc_mask_destroy (&sd);
            qc_mask_destroy (&want);
            qc_mask_destroy (&got);
            qc_mask_destroy (&in_seed);
            qc_mask_destroy (&in_src);
        }
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_disk ();
    test_rect ();
    test_components ();
    test_reconstruct ();
    return check_done ("test_image_morph");
}
