/* Tests of the tissue-mask algorithms (kernels/modules/masks.h) on small
 * images whose answers are known by construction: LightDark thresholds
 * (percent, Otsu global and local, neighbourhood minimum, the brightest
 * of three k-means clusters), HistoQC's
 * fat-like tissue detection, spur opening, the fuse overlay and the
 * macro size rule; and the results.tsv formatting of region counts and
 * mask statistics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"
#include "tests/unit/check.h"

#pragma GCC diagnostic ignored "-Wformat-zero-length"

static const qc_ops_t *ops;

static size_t
count (const qc_mask_t *m)
{
    size_t n = 0;
    ops->mask_count (m, &n);
    return n;
}

static void
set_px (qc_rgb_t *img, int x, int y, int r, int g, int b)
{
    uint8_t *p = img->px + 3 * ((size_t) y * img->w + x);
    p[0] = (uint8_t) r, p[1] = (uint8_t) g, p[2] = (uint8_t) b;
}

static void
test_percent (void)
{
    /* Glass, pink tissue, gray ink (no colour spread) and near-black. */
    qc_rgb_t *img = qc_rgb_new (4, 1);
    set_px (img, 0, 0, 240, 240, 242);
    set_px (img, 1, 0, 200, 120, 180);
    set_px (img, 2, 0, 90, 90, 90);
    set_px (img, 3, 0, 10, 8, 12);
    qc_fimg_t *gray = qc_fimg_new (4, 1);
    ops->rgb_to_gray (img, gray);
    qc_mask_t *m = qc_mask_new (4, 1);
    /* HistoQC's tissue section: upper_threshold .9, lower_std 10. */
    qc_ld_percent_params_t p = { -INFINITY, 0.9, 10, INFINITY, 0 };
    CHECK (qc_ld_percent_mask (ops, img, gray, &p, m) == 0);
    CHECK (!m->px[0] && m->px[1] && !m->px[2] && !m->px[3], "%d%d%d%d",
           m->px[0], m->px[1], m->px[2], m->px[3]);
    /* darktissue: upper .15, inverted: only the near-black goes. */
    qc_ld_percent_params_t d = { -INFINITY, 0.15, -INFINITY, INFINITY, 1 };
    CHECK (qc_ld_percent_mask (ops, img, gray, &d, m) == 0);
    CHECK (m->px[0] && m->px[1] && m->px[2] && !m->px[3]);
    /* Strict bounds, as HistoQC's > and <. */
    qc_ld_percent_params_t eq = { gray->px[2], INFINITY, -INFINITY, INFINITY, 0 };
    qc_ld_percent_mask (ops, img, gray, &eq, m);
    CHECK (!m->px[2] && m->px[0]);
    qc_ld_percent_params_t nan = { NAN, 1, 0, 1, 0 };
    CHECK (qc_ld_percent_mask (ops, img, gray, &nan, m) == -1);
    CHECK (qc_ld_percent_mask (ops, NULL, gray, &p, m) == -1);
    qc_mask_t *small = qc_mask_new (3, 1);
    CHECK (qc_ld_percent_mask (ops, img, gray, &p, small) == -1, "size mismatch");
    qc_mask_destroy (&small);
    qc_mask_destroy (&m);
    qc_fimg_destroy (&gray);
    qc_rgb_destroy (&img);
}

static void
test_minfilter (void)
{
    qc_fimg_t *g = qc_fimg_new (21, 21);
    for (int i = 0; i < 21 * 21; i++)
        g->px[i] = 0.95f;
    g->px[10 * 21 + 10] = 0.5f;          /* one dark pixel in the middle */
    qc_mask_t *m = qc_mask_new (21, 21);
    /* No inversion: set = min over the disk above 200 (0.95 * 255 = 242). */
    CHECK (qc_ld_minfilter_mask (ops, g, 3, 200, 0, m) == 0);
    /* The disk of radius 3 around the dark pixel holds 29 pixels. */
    CHECK (count (m) == 21 * 21 - 29, "%zu", count (m));
    CHECK (!m->px[10 * 21 + 13] && m->px[10 * 21 + 14] && !m->px[13 * 21 + 10]
           && m->px[12 * 21 + 13]);
    /* The image edge does not count as dark (rank filters skip it). */
    CHECK (m->px[0]);
    /* Inverted (HistoQC's default): what stays is near the dark pixel. */
    qc_ld_minfilter_mask (ops, g, 3, 200, 1, m);
    CHECK (count (m) == 29);
    /* 8-bit truncation: 200.9 / 255 gives 200, not above 200. */
    for (int i = 0; i < 21 * 21; i++)
        g->px[i] = (float) (200.9 / 255.0);
    qc_ld_minfilter_mask (ops, g, 0, 200, 0, m);
    CHECK (count (m) == 0);
    for (int i = 0; i < 21 * 21; i++)
        g->px[i] = (float) (201.0 / 255.0);
    qc_ld_minfilter_mask (ops, g, 10000, 200, 0, m);
    CHECK (count (m) == 21 * 21, "a huge disk is fine");
    CHECK (qc_ld_minfilter_mask (ops, g, -1, 200, 0, m) == -1);
    qc_mask_destroy (&m);
    qc_fimg_destroy (&g);
}

/* The sum of squares about their cluster means of the n values v
 * (sorted) split into [0, a), [a, b), [b, n). */
static double
split_cost (const float *v, int n, int a, int b)
{
    const int cut[4] = { 0, a, b, n };
    double cost = 0;
    for (int k = 0; k < 3; k++) {
        double sum = 0;
        for (int i = cut[k]; i < cut[k + 1]; i++)
            sum += v[i];
        double mean = sum / (cut[k + 1] - cut[k]);
        for (int i = cut[k]; i < cut[k + 1]; i++)
            cost += (v[i] - mean) * (v[i] - mean);
    }
    return cost;
}

static int
by_value (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return x < y ? -1 : x > y;
}

static void
test_brightest (void)
{
    /* Dark, tissue and glass: the glass cluster (0.86, 0.9, 0.94) starts
     * at 0.86, and only what is above it is set. */
    qc_fimg_t *g = qc_fimg_new (50, 26);
    const float level[5] = { 0.2f, 0.5f, 0.86f, 0.9f, 0.94f };
    const int upto[5] = { 500, 1000, 1100, 1200, 1300 };
    for (int i = 0, k = 0; i < 1300; i++) {
        while (i >= upto[k])
            k++;
        g->px[i] = level[k];
    }
    qc_mask_t *m = qc_mask_new (50, 26);
    double t = 0;
    CHECK (qc_ld_brightest_mask (ops, g, 0, m, &t) == 0);
    CHECK (t == (double) 0.86f && count (m) == 200, "t %f, %zu set", t, count (m));
    CHECK (qc_ld_brightest_mask (ops, g, 1, m, NULL) == 0 && count (m) == 1100);
    /* one gray (a blank image): nothing is above the brightest */
    for (int i = 0; i < 1300; i++)
        g->px[i] = 0.7f;
    CHECK (qc_ld_brightest_mask (ops, g, 0, m, &t) == 0 && count (m) == 0
           && t == (double) 0.7f);
    CHECK (qc_ld_brightest_mask (ops, g, 1, m, &t) == 0 && count (m) == 1300);
    /* The split it takes is the least-squares one: against every split
     * of the sorted values, on images of a dozen grays in random
     * numbers (its histogram places a value within half a bin, so its
     * split costs at most a hair more where two are nearly as good). */
    uint32_t seed = 7;
    float *v = malloc (1300 * sizeof *v);
    for (int round = 0; round < 40 && v; round++) {
        float grays[12];
        for (int k = 0; k < 12; k++) {
            seed = seed * 1664525u + 1013904223u;
            grays[k] = (float) (seed >> 8) / (float) (1u << 24);
        }
        for (int i = 0; i < 1300; i++) {
            seed = seed * 1664525u + 1013904223u;
            g->px[i] = v[i] = grays[(seed >> 16) % (round % 2 ? 12 : 4 + round % 8)];
        }
        qsort (v, 1300, sizeof *v, by_value);
        double best = INFINITY;
        for (int a = 1; a < 1299; a++)
            for (int b = a + 1; b < 1300; b++)
                if (v[a] != v[a - 1] && v[b] != v[b - 1]) {
                    double c = split_cost (v, 1300, a, b);
                    best = c < best ? c : best;
                }
        CHECK (qc_ld_brightest_mask (ops, g, 0, m, &t) == 0);
        int b = 0;
        while (b < 1300 && v[b] < t)
            b++;
        /* its split's cost: its third cluster from b, the best first cut */
        double mine = INFINITY;
        for (int c = 1; c < b; c++)
            if (v[c] != v[c - 1]) {
                double cost = split_cost (v, 1300, c, b);
                mine = cost < mine ? cost : mine;
            }
        CHECK (b > 1 && b < 1300 && v[b] == (float) t && mine <= best * (1 + 1e-3) + 1e-12,
               "round %d: t %f (from value %d), cost %g, best %g", round, t, b, mine, best);
        size_t above = 0;
        for (int i = 0; i < 1300; i++)
            above += v[i] > t;
        CHECK (count (m) == above, "round %d: %zu set, %zu above %f", round, count (m),
               above, t);
    }
    free (v);
    qc_mask_t *small = qc_mask_new (3, 1);
    CHECK (qc_ld_brightest_mask (ops, g, 0, small, &t) == -1, "size mismatch");
    CHECK (qc_ld_brightest_mask (NULL, g, 0, m, &t) == -1);
    qc_mask_destroy (&small);
    qc_mask_destroy (&m);
    qc_fimg_destroy (&g);
}

static void
test_otsu (void)
{
    /* Two populations: 0.2 on the left half, 0.8 on the right. */
    qc_fimg_t *g = qc_fimg_new (40, 20);
    for (int y = 0; y < 20; y++)
        for (int x = 0; x < 40; x++)
            g->px[y * 40 + x] = x >= 20 ? 0.8f : x % 2 ? 0.25f : 0.2f;
    qc_mask_t *m = qc_mask_new (40, 20);
    double t;
    CHECK (qc_ld_otsu_mask (ops, g, 0, 15, 0, m, &t) == 0);
    CHECK (t > 0.2 && t < 0.8, "%f", t);
    CHECK (count (m) == 400 && m->px[0] && !m->px[39]);
    qc_ld_otsu_mask (ops, g, 0, 15, 1, m, &t);
    CHECK (count (m) == 400 && !m->px[0] && m->px[39]);
    /* Local: near the boundary the disk sees both populations and the
     * darkest level of the left one is below the local threshold (the
     * 0.25 level, 64); far from it the disk sees 0.2 and 0.25 only, the
     * threshold is the lower level (skimage's rank otsu puts it in the
     * lower class) and nothing is strictly below it. */
    CHECK (qc_ld_otsu_mask (ops, g, 1, 3, 0, m, &t) == 0 && isnan (t));
    CHECK (m->px[5 * 40 + 18] && !m->px[5 * 40 + 21] && !m->px[5 * 40 + 2],
           "%d %d %d", m->px[5 * 40 + 18], m->px[5 * 40 + 21], m->px[5 * 40 + 2]);
    CHECK (qc_ld_otsu_mask (ops, g, 1, 1001, 0, m, &t) == -1);
    qc_mask_destroy (&m);
    qc_fimg_destroy (&g);
}

/* A tissue block riddled with small holes (fat cells) next to a solid
 * block with one hole: only the riddled block is fat-like. */
static void
test_fatlike (void)
{
    int w = 120, h = 60;
    qc_mask_t *m = qc_mask_new (w, h);
    for (int y = 5; y < 55; y++)
        for (int x = 5; x < 115; x++)
            m->px[y * w + x] = 1;
    for (int y = 8; y < 52; y += 5)       /* 3x3 holes every 5 px */
        for (int x = 8; x < 52; x += 5)
            for (int dy = 0; dy < 3; dy++)
                for (int dx = 0; dx < 3; dx++)
                    m->px[(y + dy) * w + x + dx] = 0;
    for (int dy = 0; dy < 3; dy++)        /* one lone hole on the right */
        for (int dx = 0; dx < 3; dx++)
            m->px[(30 + dy) * w + 90 + dx] = 0;
    m->px[20 * w + 100] = 0;              /* a speck under 9 px: ignored */
    qc_mask_t *fat = qc_mask_new (w, h);
    CHECK (qc_morph_fatlike (ops, m, 64, 10, 1000, fat) == 0);
    size_t n = count (fat);
    CHECK (n > 1500 && n < 3000, "fat %zu", n);
    CHECK (fat->px[30 * w + 30] && !fat->px[30 * w + 91] && !fat->px[20 * w + 100]);
    /* Holes dilated into 1000 px or fewer are kept as tissue. */
    CHECK (qc_morph_fatlike (ops, m, 64, 10, 100000, fat) == 0 && count (fat) == 0);
    /* No holes, no fat. */
    qc_mask_fill (m, 1);
    qc_morph_fatlike (ops, m, 64, 10, 1000, fat);
    CHECK (count (fat) == 0);
    CHECK (qc_morph_fatlike (ops, m, 64, 0, 1000, fat) == -1);
    qc_mask_destroy (&m);
    qc_mask_destroy (&fat);
}

static void
test_spur_fuse_macro (void)
{
    int w = 60, h = 40;
    qc_mask_t *m = qc_mask_new (w, h);
    for (int y = 10; y < 30; y++)
        for (int x = 10; x < 30; x++)
            m->px[y * w + x] = 1;
    for (int x = 30; x < 55; x++)         /* a 2 px wide spur */
        m->px[20 * w + x] = m->px[21 * w + x] = 1;
    qc_mask_t *o = qc_mask_new (w, h);
    CHECK (qc_final_spur (ops, m, 5, o) == 0);
    CHECK (o->px[20 * w + 20] && !o->px[20 * w + 40] && !o->px[21 * w + 50]);
    CHECK (count (o) <= 400 && count (o) > 300, "%zu", count (o));

    qc_fimg_t *g = qc_fimg_new (w, h);
    g->px[0] = 0.5f;
    g->px[1] = 1.0f;
    qc_rgb_t *f = qc_rgb_new (w, h);
    m->px[0] = 1;
    CHECK (qc_save_fuse (ops, m, g, f) == 0);
    CHECK (f->px[0] == 255 && f->px[1] == 128 && f->px[2] == 255, "%d %d %d",
           f->px[0], f->px[1], f->px[2]);
    CHECK (f->px[3] == 0 && f->px[4] == 255 && f->px[5] == 0);
    CHECK (qc_save_fuse (ops, m, g, NULL) == -1);

    int ow, oh;
    qc_save_macro_size (1000, 336, 500, &ow, &oh);
    CHECK (ow == 500 && oh == 168);
    qc_save_macro_size (1000, 333, 500, &ow, &oh);     /* 166.5: to even */
    CHECK (ow == 500 && oh == 166, "%d", oh);
    qc_save_macro_size (1000, 335, 500, &ow, &oh);     /* 167.5: to even */
    CHECK (oh == 168, "%d", oh);
    qc_save_macro_size (300, 1200, 500, &ow, &oh);     /* portrait */
    CHECK (ow == 125 && oh == 500);
    qc_save_macro_size (100000, 1, 500, &ow, &oh);
    CHECK (ow == 500 && oh == 1);
    qc_mask_destroy (&m);
    qc_mask_destroy (&o);
    qc_fimg_destroy (&g);
    qc_rgb_destroy (&f);
}

/* Region columns and the empty-mask warning, on a run with no slide. */
static void
test_bookkeeping (void)
{
    qc_result_t *out = qc_result_new ();
    qc_base_params_t base;
    qc_base_params_parse (NULL, &base, NULL, 0);
    qc_run_t run = { .out = out, .filename = "x.svs", .base = &base,
                     .step = "test" };
    qc_mask_t *m = qc_mask_new (10, 10);
    CHECK (qc_masks_region_columns (&run, "r", m) == 0);
    CHECK (strcmp (qc_result_get (out, "r_num_regions"), "0") == 0
           && strcmp (qc_result_get (out, "r_mean_area"), "0") == 0
           && strcmp (qc_result_get (out, "r_max_area"), "0") == 0);
    m->px[0] = m->px[11] = 1;             /* diagonal: one 8-connected region */
    m->px[5] = 1;
    qc_masks_region_columns (&run, "r", m);
    CHECK (strcmp (qc_result_get (out, "r_num_regions"), "2") == 0);
    CHECK (strcmp (qc_result_get (out, "r_mean_area"), "1.5") == 0,
           "%s", qc_result_get (out, "r_mean_area"));
    CHECK (strcmp (qc_result_get (out, "r_max_area"), "2") == 0);
    qc_mask_t *empty = qc_mask_new (10, 10);
    CHECK (qc_masks_finish (&run, "col", "Step.x", empty, m) == 0);
    CHECK (strcmp (qc_result_get (out, "col"), "1.0") == 0, "%s",
           qc_result_get (out, "col"));
    CHECK (out->warnings && strstr (out->warnings, "After Step.x NO tissue "
                                    "remains detectable! Downstream modules "
                                    "likely to be incorrect/fail"));
    CHECK (out->ok);
    qc_mask_destroy (&m);
    qc_mask_destroy (&empty);
    qc_run_state_free (&run);
    qc_result_destroy (&out);
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_percent ();
    test_minfilter ();
    test_brightest ();
    test_otsu ();
    test_fatlike ();
    test_spur_fuse_macro ();
    test_bookkeeping ();
    return check_done ("masks_algo");
}
