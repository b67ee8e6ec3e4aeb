/* Every op of QC_OPS_LIST (kernels/ops/ops.h), one backend against the
 * CPU's, on random images and a small trained model: one check per op,
 * found by name, so that a new op cannot go uncompared
 * (check_ops_listed). Used by test_cuda_equiv, which runs them with the
 * CPU on both sides everywhere (the checks' own check), then with each
 * CUDA lane where there is a device. Header of static functions: one
 * test program includes it. */
#ifndef QC_TEST_OP_CHECKS_H
#define QC_TEST_OP_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/classify/classify_model.h"
#include "kernels/ops/cpu/cpu_ops.h"
#include "tests/unit/check.h"
#include "tests/unit/jpeg_fixtures.h"
#include "tests/unit/rand_images.h"

/* Fraction of differing mask pixels. */
static double
mask_diff (const qc_mask_t *a, const qc_mask_t *b)
{
    /* through the host doors: a resident lane's output is on the GPU */
    const uint8_t *pa = qc_mask_host (a), *pb = qc_mask_host (b);
    size_t d = 0, n = qc_npix (a->w, a->h);
    if (!pa || !pb)
        return 1.0;
    for (size_t i = 0; i < n; i++)
        d += (pa[i] != 0) != (pb[i] != 0);
    return (double) d / (double) n;
}

static int
close_rel (double a, double b, double rel)
{
    if (a != a || b != b)
        return a != a && b != b;
    return fabs (a - b) <= rel * fmax (fmax (fabs (a), fabs (b)), 1e-3);
}

/* Number of pixels outside 1e-4 relative. */
static size_t
fimg_bad (const qc_fimg_t *a, const qc_fimg_t *b)
{
    const float *pa = qc_fimg_host (a), *pb = qc_fimg_host (b);
    size_t bad = 0;
    if (!pa || !pb)
        return qc_npix (a->w, a->h);
    for (size_t i = 0; i < qc_npix (a->w, a->h); i++)
        bad += !close_rel (pa[i], pb[i], 1e-4);
    return bad;
}

/* ---- every op, one backend against the CPU --------------------------
 *
 * One check per op, found by name: check_ops_listed () fails (here, on
 * any machine) when an op of QC_OPS_LIST (kernels/ops/ops.h) has no
 * check, so a new op cannot go uncompared. The checks run with the CPU
 * table on both sides on every machine (an op against itself must pass:
 * a wrong check fails here, not first on a GPU machine), then GPU
 * against CPU where there is a device. */

typedef struct {
    const qc_ops_t *cpu, *other;
    int w, h;
    qc_rgb_t *rgb;
    qc_fimg_t *f, *g, *gray, *a[3], *b[3];
    qc_mask_t *m, *ma, *mb;
    qc_trees_t *model;          /* over f, g and gray */
    const qc_fimg_t *planes[3];
} fx_t;

static void
fx_free (fx_t *x)
{
    qc_rgb_destroy (&x->rgb);
    qc_fimg_destroy (&x->f);
    qc_fimg_destroy (&x->g);
    qc_fimg_destroy (&x->gray);
    for (int k = 0; k < 3; k++) {
        qc_fimg_destroy (&x->a[k]);
        qc_fimg_destroy (&x->b[k]);
    }
    qc_mask_destroy (&x->m);
    qc_mask_destroy (&x->ma);
    qc_mask_destroy (&x->mb);
    qc_trees_destroy (&x->model);
}

/* Random images of 613 x 419 and a small model on three planes (f, g
 * and rgb's gray), trained on a sample of their pixels. 0, or -1. */
static int
fx_make (fx_t *x, const qc_ops_t *cpu, const qc_ops_t *other)
{
    memset (x, 0, sizeof *x);
    x->cpu = cpu;
    x->other = other;
    x->w = 613;
    x->h = 419;
    int w = x->w, h = x->h;
    x->rgb = rand_rgb (w, h);
    x->f = rand_fimg (w, h);
    x->g = rand_fimg (w, h);
    x->gray = qc_fimg_new (w, h);
    for (int k = 0; k < 3; k++) {
        x->a[k] = qc_fimg_new (w, h);
        x->b[k] = qc_fimg_new (w, h);
    }
    x->m = rand_mask (w, h, 50);
    x->ma = qc_mask_new (w, h);
    x->mb = qc_mask_new (w, h);
    if (!x->rgb || !x->f || !x->g || !x->gray || !x->a[2] || !x->b[2]
        || !x->m || !x->ma || !x->mb || cpu->rgb_to_gray (x->rgb, x->gray) != 0)
        return -1;
    x->planes[0] = x->f;
    x->planes[1] = x->g;
    x->planes[2] = x->gray;
    enum { N = 4000 };
    static float c0[N], c1[N], c2[N];
    static uint8_t y[N];
    for (int i = 0; i < N; i++) {
        size_t at = (size_t) (rnd () % (uint32_t) (w * h));
        c0[i] = x->f->px[at];
        c1[i] = x->g->px[at];
        c2[i] = x->gray->px[at];
        y[i] = (uint8_t) (c0[i] + 0.5f * c2[i] > 0.7f);
    }
    const float *cols[3] = { c0, c1, c2 };
    qc_trees_params_t tp;
    qc_trees_params_default (&tp);
    char err[256];
    x->model = qc_trees_train (cols, 3, N, y, &tp, err, sizeof err);
    CHECK (x->model != NULL, "training the test model: %s", err);
    return x->model ? 0 : -1;
}

#define BOTH(call_a, call_b) (x->cpu->call_a == 0 && x->other->call_b == 0)

static void
op_rgb_to_gray (fx_t *x)
{
    CHECK (BOTH (rgb_to_gray (x->rgb, x->a[0]), rgb_to_gray (x->rgb, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "rgb_to_gray");
}

static void
op_rgb_to_space (fx_t *x)
{
    for (int sp = 0; sp < QC_CS_COUNT; sp++) {
        CHECK (BOTH (rgb_to_space (x->rgb, sp, x->a[0], x->a[1], x->a[2]),
                     rgb_to_space (x->rgb, sp, x->b[0], x->b[1], x->b[2])));
        for (int k = 0; k < 3; k++)
            CHECK (fimg_bad (x->a[k], x->b[k]) == 0, "rgb_to_space %d plane %d", sp, k);
    }
}

static void
op_rgb_channel_std (fx_t *x)
{
    CHECK (BOTH (rgb_channel_std (x->rgb, x->a[0]), rgb_channel_std (x->rgb, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "rgb_channel_std");
}

static void
op_separate_stains (fx_t *x)
{
    qc_mat3_t hed;
    CHECK (qc_stain_matrix ("hed_from_rgb", &hed) == 0);
    CHECK (BOTH (separate_stains (x->rgb, &hed, x->a[0], x->a[1], x->a[2]),
                 separate_stains (x->rgb, &hed, x->b[0], x->b[1], x->b[2])));
    for (int k = 0; k < 3; k++)
        CHECK (fimg_bad (x->a[k], x->b[k]) == 0, "separate_stains plane %d", k);
}

static void
op_threshold (fx_t *x)
{
    CHECK (BOTH (threshold (x->f, 0.2, 0.7, x->ma), threshold (x->f, 0.2, 0.7, x->mb))
           && mask_diff (x->ma, x->mb) == 0, "threshold");
    CHECK (x->other->threshold (NULL, 0, 1, x->mb) == -1, "bad argument refused");
}

static void
op_mask_logic (fx_t *x)
{
    qc_mask_t *mc = qc_mask_new (x->w, x->h), *md = qc_mask_new (x->w, x->h);
    x->cpu->threshold (x->f, 0.2, 0.7, x->ma);
    for (int op = QC_LOGIC_AND; mc && md && op <= QC_LOGIC_NOT; op++)
        CHECK (BOTH (mask_logic (x->m, x->ma, op, mc), mask_logic (x->m, x->ma, op, md))
               && mask_diff (mc, md) == 0, "mask_logic %d", op);
    qc_mask_destroy (&mc);
    qc_mask_destroy (&md);
}

static void
op_fimg_arith (fx_t *x)
{
    for (int op = QC_ARITH_ADD; op <= QC_ARITH_DIV; op++)
        CHECK (BOTH (fimg_arith (x->f, x->g, op, x->a[0]), fimg_arith (x->f, x->g, op, x->b[0]))
               && fimg_bad (x->a[0], x->b[0]) == 0, "fimg_arith %d", op);
}

static void
op_fimg_affine (fx_t *x)
{
    CHECK (BOTH (fimg_affine (x->f, 3.0, -1.0, 0.0, 1.5, x->a[0]),
                 fimg_affine (x->f, 3.0, -1.0, 0.0, 1.5, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "fimg_affine");
}

static void
op_mask_to_fimg (fx_t *x)
{
    CHECK (BOTH (mask_to_fimg (x->m, 0.7, -2.0, x->a[0]), mask_to_fimg (x->m, 0.7, -2.0, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "mask_to_fimg");
}

static void
op_fimg_where (fx_t *x)
{
    CHECK (BOTH (fimg_where (x->m, x->f, -1.0, x->a[0]), fimg_where (x->m, x->f, -1.0, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "fimg_where");
    /* in place, as the modules call it */
    CHECK (BOTH (fimg_affine (x->g, 1.0, 0.0, -10.0, 10.0, x->a[1]),
                 fimg_affine (x->g, 1.0, 0.0, -10.0, 10.0, x->b[1]))
           && BOTH (fimg_where (x->m, x->a[1], 0.0, x->a[1]), fimg_where (x->m, x->b[1], 0.0, x->b[1]))
           && fimg_bad (x->a[1], x->b[1]) == 0, "fimg_where in place");
}

static void
op_fimg_sqrt (fx_t *x)
{
    CHECK (BOTH (fimg_sqrt (x->f, x->a[0]), fimg_sqrt (x->f, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "fimg_sqrt");
}

static void
op_fuse_rgb (fx_t *x)
{
    qc_rgb_t *ra = qc_rgb_new (x->w, x->h), *rb = qc_rgb_new (x->w, x->h);
    CHECK (ra && rb && BOTH (fuse_rgb (x->m, x->f, ra), fuse_rgb (x->m, x->f, rb))
           && memcmp (qc_rgb_host (ra), qc_rgb_host (rb), qc_npix (x->w, x->h) * 3) == 0,
           "fuse_rgb");
    qc_rgb_destroy (&ra);
    qc_rgb_destroy (&rb);
}

static void
op_mask_sample (fx_t *x)
{
    enum { NC = 77, NR = 53 };
    int32_t cols[NC], rows[NR];
    uint8_t sa[NC * NR], sb[NC * NR];
    for (int i = 0; i < NC; i++)
        cols[i] = i % 9 == 0 ? -1 : (int32_t) (rnd () % (uint32_t) x->w);
    for (int j = 0; j < NR; j++)
        rows[j] = j % 7 == 0 ? -1 : (int32_t) (rnd () % (uint32_t) x->h);
    CHECK (BOTH (mask_sample (x->m, cols, NC, rows, NR, sa),
                 mask_sample (x->m, cols, NC, rows, NR, sb))
           && memcmp (sa, sb, sizeof sa) == 0, "mask_sample");
    cols[3] = x->w;
    CHECK (x->other->mask_sample (x->m, cols, NC, rows, NR, sb) == -1,
           "a column outside the mask refused");
}

static void
op_fimg_scatter (fx_t *x)
{
    /* distinct indices: the same sums in any order */
    enum { N = 5000 };
    static int32_t idx[N];
    static float val[N];
    size_t np = qc_npix (x->w, x->h);
    for (int k = 0; k < N; k++) {
        idx[k] = (int32_t) ((size_t) k * 37 % np);
        val[k] = (float) (rnd () % 1000) / 7.0f;
    }
    CHECK (BOTH (fimg_scatter (idx, val, N, 0.5, x->a[0]), fimg_scatter (idx, val, N, 0.5, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "fimg_scatter");
    CHECK (BOTH (fimg_scatter (idx, NULL, N, 0.0, x->a[1]), fimg_scatter (idx, NULL, N, 0.0, x->b[1]))
           && fimg_bad (x->a[1], x->b[1]) == 0, "fimg_scatter of counts");
    CHECK (BOTH (fimg_scatter (NULL, NULL, 0, -1.0, x->a[2]), fimg_scatter (NULL, NULL, 0, -1.0, x->b[2]))
           && fimg_bad (x->a[2], x->b[2]) == 0, "fimg_scatter of nothing");
    idx[7] = (int32_t) np;
    CHECK (x->other->fimg_scatter (idx, val, N, 0.0, x->b[0]) == -1,
           "an index outside refused");
}

static void
op_mask_count (fx_t *x)
{
    size_t ca = 0, cb = 1;
    CHECK (BOTH (mask_count (x->m, &ca), mask_count (x->m, &cb)) && ca == cb,
           "mask_count %zu %zu", ca, cb);
}

static int
same_stats (const qc_stats_t *a, const qc_stats_t *b)
{
    return a->n == b->n && close_rel (a->sum, b->sum, 1e-9)
           && close_rel (a->mean, b->mean, 1e-9) && close_rel (a->std, b->std, 1e-9)
           && a->min == b->min && a->max == b->max;
}

static void
op_fimg_stats (fx_t *x)
{
    qc_stats_t sa, sb;
    CHECK (BOTH (fimg_stats (x->f, x->m, &sa), fimg_stats (x->f, x->m, &sb))
           && same_stats (&sa, &sb), "fimg_stats");
}

static void
op_rgb_stats (fx_t *x)
{
    for (int masked = 0; masked < 2; masked++) {
        qc_stats_t sa[3], sb[3];
        const qc_mask_t *m = masked ? x->m : NULL;
        CHECK (BOTH (rgb_stats (x->rgb, m, sa), rgb_stats (x->rgb, m, sb)));
        for (int c = 0; c < 3; c++)
            CHECK (same_stats (&sa[c], &sb[c]), "rgb_stats channel %d masked %d", c, masked);
    }
}

static void
op_fimg_quantile (fx_t *x)
{
    double qa = -1, qb = -2;
    CHECK (BOTH (fimg_quantile (x->f, x->m, 0.3, &qa), fimg_quantile (x->f, x->m, 0.3, &qb))
           && qa == qb, "fimg_quantile %g %g", qa, qb);
}

static void
op_rgb_histogram (fx_t *x)
{
    static uint64_t ha[3][256], hb[3][256];
    for (int masked = 0; masked < 2; masked++) {
        const qc_mask_t *m = masked ? x->m : NULL;
        CHECK (BOTH (rgb_histogram (x->rgb, m, ha), rgb_histogram (x->rgb, m, hb))
               && memcmp (ha, hb, sizeof ha) == 0, "rgb_histogram masked %d", masked);
    }
}

static void
op_fimg_histogram (fx_t *x)
{
    uint64_t ha[256], hb[256];
    CHECK (BOTH (fimg_histogram (x->f, x->m, 256, 0.0, 1.0, ha),
                 fimg_histogram (x->f, x->m, 256, 0.0, 1.0, hb))
           && memcmp (ha, hb, sizeof ha) == 0, "fimg_histogram");
}

static void
op_otsu (fx_t *x)
{
    double ta = -1, tb = -2;
    CHECK (BOTH (otsu (x->f, x->m, 256, &ta), otsu (x->f, x->m, 256, &tb)) && ta == tb,
           "otsu %g %g", ta, tb);
}

static void
op_gaussian (fx_t *x)
{
    for (int border = 0; border <= QC_BORDER_CONSTANT; border++)
        CHECK (BOTH (gaussian (x->f, 3.0, 4.0, border, x->a[0]),
                     gaussian (x->f, 3.0, 4.0, border, x->b[0]))
               && fimg_bad (x->a[0], x->b[0]) == 0, "gaussian border %d", border);
    CHECK (x->other->gaussian (x->f, 1, -1, 0, x->b[0]) == -1, "bad argument refused");
}

static void
op_laplace (fx_t *x)
{
    for (int border = 0; border <= QC_BORDER_CONSTANT; border++)
        CHECK (BOTH (laplace (x->f, border, x->a[0]), laplace (x->f, border, x->b[0]))
               && fimg_bad (x->a[0], x->b[0]) == 0, "laplace border %d", border);
}

static void
op_sobel (fx_t *x)
{
    for (int border = 0; border <= QC_BORDER_CONSTANT; border++)
        CHECK (BOTH (sobel (x->f, border, x->a[0]), sobel (x->f, border, x->b[0]))
               && fimg_bad (x->a[0], x->b[0]) == 0, "sobel border %d", border);
}

static void
op_box_filter (fx_t *x)
{
    for (int border = 0; border <= QC_BORDER_CONSTANT; border++)
        CHECK (BOTH (box_filter (x->f, 7, 4, border, x->a[0]),
                     box_filter (x->f, 7, 4, border, x->b[0]))
               && fimg_bad (x->a[0], x->b[0]) == 0, "box border %d", border);
}

static void
op_morph_disk (fx_t *x)
{
    for (int op = QC_MORPH_ERODE; op <= QC_MORPH_CLOSE; op++)
        CHECK (BOTH (morph_disk (x->m, 6, op, x->ma), morph_disk (x->m, 6, op, x->mb))
               && mask_diff (x->ma, x->mb) == 0, "morph_disk op %d", op);
}

static void
op_morph_rect (fx_t *x)
{
    for (int op = QC_MORPH_ERODE; op <= QC_MORPH_CLOSE; op++)
        CHECK (BOTH (morph_rect (x->m, 5, 4, op, x->ma), morph_rect (x->m, 5, 4, op, x->mb))
               && mask_diff (x->ma, x->mb) == 0, "morph_rect op %d", op);
}

static void
op_label (fx_t *x)
{
    qc_labels_t *la = qc_labels_new (x->w, x->h), *lb = qc_labels_new (x->w, x->h);
    for (int conn = 4; la && lb && conn <= 8; conn += 4)
        CHECK (BOTH (label (x->m, conn, la), label (x->m, conn, lb)) && la->n == lb->n
               && memcmp (qc_labels_host (la), qc_labels_host (lb),
                          qc_npix (x->w, x->h) * sizeof *la->px) == 0
               && (!la->area || !lb->area
                   || memcmp (la->area, lb->area, ((size_t) la->n + 1) * sizeof *la->area) == 0),
               "label connectivity %d", conn);
    qc_labels_destroy (&la);
    qc_labels_destroy (&lb);
}

static void
op_area_filter (fx_t *x)
{
    CHECK (BOTH (area_filter (x->m, 4, 20, SIZE_MAX, x->ma),
                 area_filter (x->m, 4, 20, SIZE_MAX, x->mb))
           && mask_diff (x->ma, x->mb) == 0, "area_filter min");
    CHECK (BOTH (area_filter (x->m, 8, 0, 50, x->ma), area_filter (x->m, 8, 0, 50, x->mb))
           && mask_diff (x->ma, x->mb) == 0, "area_filter max");
}

static void
op_fill_holes (fx_t *x)
{
    CHECK (BOTH (fill_holes (x->m, 4, 30, x->ma), fill_holes (x->m, 4, 30, x->mb))
           && mask_diff (x->ma, x->mb) == 0, "fill_holes");
}

static void
op_region_summary (fx_t *x)
{
    qc_region_summary_t ra, rb;
    CHECK (BOTH (region_summary (x->m, 8, &ra), region_summary (x->m, 8, &rb))
           && ra.n == rb.n && ra.mean_area == rb.mean_area && ra.max_area == rb.max_area,
           "region_summary");
}

/* Pixels set in m. */
static size_t
mask_set (const qc_mask_t *m)
{
    const uint8_t *p = qc_mask_host (m);
    size_t c = 0, n = qc_npix (m->w, m->h);
    for (size_t i = 0; p && i < n; i++)
        c += p[i] != 0;
    return c;
}

/* m's components (half its pixels: many components at 4-connectivity,
 * a few large ones at 8) that a sparse seed falls in; in place too. */
static void
op_reconstruct (fx_t *x)
{
    qc_mask_t *seed = rand_mask (x->w, x->h, 1);
    qc_mask_t *sa = seed ? qc_mask_clone (seed) : NULL, *sb = seed ? qc_mask_clone (seed) : NULL;
    for (int conn = 4; seed && conn <= 8; conn += 4) {
        CHECK (BOTH (reconstruct (x->m, seed, conn, x->ma), reconstruct (x->m, seed, conn, x->mb))
               && mask_diff (x->ma, x->mb) == 0, "reconstruct connectivity %d", conn);
        size_t got = mask_set (x->ma), of = mask_set (x->m);
        /* the fixture: a comparison of all or nothing would prove little */
        CHECK (got > mask_set (seed) / 2 && got < of, "reconstruct connectivity %d: %zu of "
               "%zu pixels kept, not some", conn, got, of);
    }
    CHECK (sa && sb && BOTH (reconstruct (x->m, sa, 8, sa), reconstruct (x->m, sb, 8, sb))
           && mask_diff (sa, sb) == 0 && mask_diff (sa, x->ma) == 0, "reconstruct in place");
    qc_mask_destroy (&seed);
    qc_mask_destroy (&sa);
    qc_mask_destroy (&sb);
}

static void
op_resize_rgb (fx_t *x)
{
    const int sizes[][2] = { { 201, 157 }, { 1000, 700 } };
    for (size_t s = 0; s < 2; s++) {
        qc_rgb_t *ra = qc_rgb_new (sizes[s][0], sizes[s][1]);
        qc_rgb_t *rb = qc_rgb_new (sizes[s][0], sizes[s][1]);
        for (int interp = QC_INTERP_AREA; ra && rb && interp <= QC_INTERP_NEAREST; interp++)
            CHECK (BOTH (resize_rgb (x->rgb, interp, ra), resize_rgb (x->rgb, interp, rb))
                   && memcmp (qc_rgb_host (ra), qc_rgb_host (rb), qc_npix (ra->w, ra->h) * 3) == 0,
                   "resize_rgb %d to %d x %d", interp, ra->w, ra->h);
        qc_rgb_destroy (&ra);
        qc_rgb_destroy (&rb);
    }
}

static void
op_resize_fimg (fx_t *x)
{
    const int sizes[][2] = { { 201, 157 }, { 1000, 700 } };
    for (size_t s = 0; s < 2; s++) {
        qc_fimg_t *ra = qc_fimg_new (sizes[s][0], sizes[s][1]);
        qc_fimg_t *rb = qc_fimg_new (sizes[s][0], sizes[s][1]);
        for (int interp = QC_INTERP_AREA; ra && rb && interp <= QC_INTERP_NEAREST; interp++)
            CHECK (BOTH (resize_fimg (x->f, interp, ra), resize_fimg (x->f, interp, rb))
                   && fimg_bad (ra, rb) == 0, "resize_fimg %d to %d x %d", interp, ra->w,
                   ra->h);
        qc_fimg_destroy (&ra);
        qc_fimg_destroy (&rb);
    }
}

static void
op_resize_mask (fx_t *x)
{
    const int sizes[][2] = { { 201, 157 }, { 1000, 700 } };
    for (size_t s = 0; s < 2; s++) {
        qc_mask_t *ra = qc_mask_new (sizes[s][0], sizes[s][1]);
        qc_mask_t *rb = qc_mask_new (sizes[s][0], sizes[s][1]);
        CHECK (ra && rb && BOTH (resize_mask (x->m, QC_INTERP_NEAREST, ra),
                                 resize_mask (x->m, QC_INTERP_NEAREST, rb))
               && mask_diff (ra, rb) == 0, "resize_mask to %d x %d", sizes[s][0],
               sizes[s][1]);
        CHECK (ra && rb && x->cpu->resize_mask (x->m, QC_INTERP_AREA, ra) == -1
               && x->other->resize_mask (x->m, QC_INTERP_AREA, rb) == -1,
               "resize_mask: AREA refused by both");
        qc_mask_destroy (&ra);
        qc_mask_destroy (&rb);
    }
}

static void
op_frangi (fx_t *x)
{
    /* the default config's scales (1, 3, 5, 7, 9), a radius-0 scale, a
     * one-row image and dark or bright ridges */
    const double sig[] = { 1, 3, 5, 7, 9 }, tiny[] = { 0.1, 2 };
    for (int black = 0; black <= 1; black++)
        CHECK (BOTH (frangi (x->f, sig, 5, 0.5, 15, black, x->a[0]),
                     frangi (x->f, sig, 5, 0.5, 15, black, x->b[0]))
               && fimg_bad (x->a[0], x->b[0]) == 0, "frangi black %d", black);
    CHECK (BOTH (frangi (x->g, tiny, 2, 0.5, 15, 1, x->a[0]),
                 frangi (x->g, tiny, 2, 0.5, 15, 1, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "frangi sigma 0.1");
    qc_fimg_t *row = rand_fimg (97, 1), *ra1 = qc_fimg_new (97, 1), *rb1 = qc_fimg_new (97, 1);
    CHECK (row && ra1 && rb1 && BOTH (frangi (row, sig, 3, 0.5, 15, 1, ra1),
                                      frangi (row, sig, 3, 0.5, 15, 1, rb1))
           && fimg_bad (ra1, rb1) == 0, "frangi one row");
    qc_fimg_destroy (&row);
    qc_fimg_destroy (&ra1);
    qc_fimg_destroy (&rb1);
    CHECK (x->other->frangi (x->f, sig, 0, 0.5, 15, 1, x->b[0]) == -1, "bad argument refused");
}

static void
op_lbp (fx_t *x)
{
    CHECK (BOTH (lbp (x->f, 8, 1.0, QC_LBP_UNIFORM, x->a[0]),
                 lbp (x->f, 8, 1.0, QC_LBP_UNIFORM, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "lbp");
}

/* Both of gabor's paths (equal sigmas: separable passes; unequal: the
 * 2-D sum), every border rule, and in place (dst == src). */
static void
op_gabor (fx_t *x)
{
    const double sig[][2] = { { 2.0, 2.0 }, { 1.5, 3.0 } };
    for (int s = 0; s < 2; s++)
        for (int b = QC_BORDER_REFLECT; b <= QC_BORDER_CONSTANT; b++)
            CHECK (BOTH (gabor (x->f, 0.3, 0.5, sig[s][0], sig[s][1], b, x->a[0]),
                         gabor (x->f, 0.3, 0.5, sig[s][0], sig[s][1], b, x->b[0]))
                   && fimg_bad (x->a[0], x->b[0]) == 0,
                   "gabor sigmas %g, %g border %d", sig[s][0], sig[s][1], b);
    CHECK (x->cpu->fimg_affine (x->f, 1, 0, -INFINITY, INFINITY, x->a[1]) == 0
           && x->cpu->fimg_affine (x->f, 1, 0, -INFINITY, INFINITY, x->b[1]) == 0
           && BOTH (gabor (x->a[1], 0.25, 2.0, 1.0, 1.0, QC_BORDER_WRAP, x->a[1]),
                    gabor (x->b[1], 0.25, 2.0, 1.0, 1.0, QC_BORDER_WRAP, x->b[1]))
           && fimg_bad (x->a[1], x->b[1]) == 0, "gabor in place");
    CHECK (x->other->gabor (x->f, 0, 0.5, 2, 2, QC_BORDER_WRAP, x->b[0]) == -1,
           "gabor: bad frequency refused");
}

/* The median is one of the values: the same value, bit for bit, for
 * disks the GPU takes (radius 0 to 6) and one it leaves to the CPU (7),
 * under every border rule. */
static void
op_median_disk (fx_t *x)
{
    const int radii[] = { 0, 1, 3, 6, 7 };
    for (size_t r = 0; r < sizeof radii / sizeof *radii; r++)
        for (int b = QC_BORDER_REFLECT; b <= QC_BORDER_CONSTANT; b++) {
            int ok = BOTH (median_disk (x->f, radii[r], b, x->a[0]),
                           median_disk (x->f, radii[r], b, x->b[0]));
            const float *pa = ok ? qc_fimg_host (x->a[0]) : NULL;
            const float *pb = ok ? qc_fimg_host (x->b[0]) : NULL;
            CHECK (pa && pb && memcmp (pa, pb, qc_npix (x->w, x->h)
                                                   * sizeof *pa) == 0,
                   "median_disk radius %d border %d", radii[r], b);
        }
    CHECK (x->other->median_disk (x->f, 3, QC_BORDER_NEAREST, x->f) == -1,
           "median_disk in place refused");
}

static void
op_trees_predict (fx_t *x)
{
    CHECK (x->model && BOTH (trees_predict (x->model, x->planes, 3, x->a[0]),
                             trees_predict (x->model, x->planes, 3, x->b[0]))
           && fimg_bad (x->a[0], x->b[0]) == 0, "trees_predict");
}

/* Optional (ops.h): a backend without it is compared through
 * trees_predict and the threshold, which is what callers then do. */
static void
op_trees_classify (fx_t *x)
{
    const double thr[] = { 0.3, 0.5, 0.6 };
    for (size_t t = 0; x->model && t < 3; t++) {
        CHECK (x->cpu->trees_classify (x->model, x->planes, 3, thr[t], x->ma) == 0);
        if (x->other->trees_classify)
            CHECK (x->other->trees_classify (x->model, x->planes, 3, thr[t], x->mb) == 0);
        else {
            CHECK (x->other->trees_predict (x->model, x->planes, 3, x->b[0]) == 0);
            CHECK (x->cpu->threshold (x->b[0], thr[t], INFINITY, x->mb) == 0);
        }
        CHECK (mask_diff (x->ma, x->mb) <= 0.001, "trees_classify threshold %g: %.4f%% differ",
               thr[t], 100 * mask_diff (x->ma, x->mb));
    }
}

/* Optional (ops.h): a backend without it leaves the host to decode.
 * Six tiles of 64 x 48, YCbCr 2x2 and RGB, in a mosaic cut by the
 * output's edges with padded last tiles, as a slide's level gives them.
 * The GPU's IDCT (nvJPEG) rounds apart from libjpeg's islow one: its
 * bytes may differ by a few levels, rarely, and never where a tile is
 * not (the background). */
static void
op_decode_jpeg (fx_t *x)
{
    if (!x->other->decode_jpeg) {
        printf ("  decode_jpeg: not in the %s table (the host decodes)\n", x->other->name);
        return;
    }
    enum { TW = 64, TH = 48, W = 150, H = 90 };
    for (int ycbcr = 0; ycbcr <= 1; ycbcr++) {
        qc_jpeg_tile_t tiles[6];
        uint8_t *streams[6] = { 0 };
        int ok = 1;
        for (int i = 0; i < 6; i++) {
            uint8_t *pic = jfx_picture (TW, TH, (unsigned) (7 * i + ycbcr));
            size_t len = 0;
            ok &= pic && jfx_encode (pic, TW, TH, ycbcr, ycbcr ? 2 : 1, ycbcr ? 2 : 1, 80,
                                     &streams[i], &len) == 0;
            tiles[i] = (qc_jpeg_tile_t) { streams[i], len, -5 + (i % 3) * TW,
                                          -3 + (i / 3) * TH, i % 3 == 2 ? TW - 7 : TW,
                                          i / 3 == 1 ? TH - 4 : TH };
            free (pic);
        }
        qc_jpeg_batch_t b = { tiles, 6, TW, TH, ycbcr, ycbcr ? 2 : 1, ycbcr ? 2 : 1,
                              { 255, 250, 240 } };
        qc_rgb_t *ra = qc_rgb_new (W, H), *rb = qc_rgb_new (W, H);
        CHECK (ok && ra && rb && BOTH (decode_jpeg (&b, ra), decode_jpeg (&b, rb)),
               "decode_jpeg (%s)", ycbcr ? "YCbCr" : "RGB");
        const uint8_t *pa = ra ? qc_rgb_host (ra) : NULL, *pb = rb ? qc_rgb_host (rb) : NULL;
        size_t n = (size_t) W * H * 3, off = 0;
        int worst = 0;
        double sum = 0;
        for (size_t i = 0; pa && pb && i < n; i++) {
            int d = abs ((int) pa[i] - (int) pb[i]);
            worst = d > worst ? d : worst;
            off += d > 1;
            sum += d;
        }
        CHECK (pa && pb && worst <= 4 && off * 100 <= n && sum / (double) n <= 0.25,
               "decode_jpeg (%s): bytes %d levels apart at worst, %zu of %zu more "
               "than 1, mean %.3f", ycbcr ? "YCbCr" : "RGB", worst, off, n,
               sum / (double) n);
        /* the background is the background, to the byte */
        for (int y = H - 1; pa && pb && y < H; y++)
            CHECK (memcmp (pa + (size_t) y * W * 3, pb + (size_t) y * W * 3, (size_t) W * 3) == 0
                   && pb[(size_t) y * W * 3 + 2] == 240, "decode_jpeg: row %d, past the "
                   "tiles, is not the background", y);
        qc_rgb_destroy (&ra);
        qc_rgb_destroy (&rb);
        for (int i = 0; i < 6; i++)
            free (streams[i]);
    }
}

typedef void (op_check_fn) (fx_t *x);

static const struct {
    const char *op;
    op_check_fn *check;
} op_checks[] = {
#define QC_CHECK_(slot, optional, params, args) { #slot, op_##slot },
    QC_OPS_LIST (QC_CHECK_)
#undef QC_CHECK_
};

/* Every op of QC_OPS_LIST has its check: the table above is made from
 * the list, so an op without an op_<name> function does not compile;
 * this says so in words too, and that no check is left over. */
static void
check_ops_listed (void)
{
    CHECK (sizeof op_checks / sizeof *op_checks == QC_OPS_NSLOTS,
           "%zu checks for %d ops", sizeof op_checks / sizeof *op_checks,
           (int) QC_OPS_NSLOTS);
    for (size_t i = 0; i < sizeof op_checks / sizeof *op_checks; i++)
        CHECK (op_checks[i].check != NULL, "op %s has no check", op_checks[i].op);
}

/* Every op of other against the CPU's. */
static void
compare_ops (const qc_ops_t *other, const char *label)
{
    fx_t x;
    int ok = fx_make (&x, qc_ops_cpu (), other) == 0;
    CHECK (ok, "%s: out of memory for the fixtures", label);
    for (size_t i = 0; ok && i < sizeof op_checks / sizeof *op_checks; i++)
        op_checks[i].check (&x);
    fx_free (&x);
    printf ("  %s: %zu ops compared with the CPU's\n", label,
            sizeof op_checks / sizeof *op_checks);
}

#endif
