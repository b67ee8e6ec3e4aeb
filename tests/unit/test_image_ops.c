/* Image buffers, colour conversions, per-pixel ops, statistics,
 * histograms and Otsu. Expected values are worked by hand from the
 * published formulas, or (where marked) were computed with
 * scikit-image 0.19.3 / numpy 1.24 on the same inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
#include "tests/unit/check.h"

#define NEAR(a, b, tol) (fabs ((double) (a) - (double) (b)) <= (tol))

static const qc_ops_t *ops;

static qc_rgb_t *
rgb1 (uint8_t r, uint8_t g, uint8_t b)
{
    qc_rgb_t *img = qc_rgb_new (1, 1);
    img->px[0] = r;
    img->px[1] = g;
    img->px[2] = b;
    return img;
}

static void
test_buffers (void)
{
    qc_rgb_t *rgb = qc_rgb_new (3, 2);
    CHECK (rgb && rgb->w == 3 && rgb->h == 2 && rgb->px[17] == 0);
    qc_rgb_t *c = qc_rgb_clone (rgb);
    CHECK (c && c->px != rgb->px);
    qc_rgb_destroy (&rgb);
    CHECK (rgb == NULL);
    qc_rgb_destroy (&rgb);      /* twice is harmless */
    qc_rgb_destroy (&c);
    qc_rgb_destroy (NULL);
    CHECK (qc_rgb_new (0, 5) == NULL);
    CHECK (qc_fimg_new (5, -1) == NULL);
    CHECK (qc_mask_new (QC_IMAGE_MAX_DIM + 1, 1) == NULL);
    CHECK (qc_mask_new (QC_IMAGE_MAX_DIM, QC_IMAGE_MAX_DIM) == NULL,
           "pixel bound");
    size_t n = 0;
    CHECK (qc_image_check_size (1000, 1000, &n) == 0 && n == 1000000);
    qc_mask_t *m = qc_mask_new (4, 4);
    CHECK (qc_mask_fill (m, 7) == 0 && m->px[15] == 1);
    qc_mask_destroy (&m);
    qc_labels_t *l = qc_labels_new (2, 2);
    CHECK (l && l->area == NULL);
    qc_labels_destroy (&l);
    CHECK (l == NULL);
    CHECK (ops && strcmp (ops->name, "cpu") == 0);
}

static void
test_gray_std (void)
{
    qc_rgb_t *img = qc_rgb_new (3, 1);
    uint8_t px[9] = { 255, 0, 0, 0, 255, 0, 10, 20, 30 };
    memcpy (img->px, px, 9);
    qc_fimg_t *g = qc_fimg_new (3, 1);
    CHECK (ops->rgb_to_gray (img, g) == 0);
    CHECK (NEAR (g->px[0], 0.2125, 1e-7) && NEAR (g->px[1], 0.7154, 1e-7));
    CHECK (NEAR (g->px[2], (10 * 0.2125 + 20 * 0.7154 + 30 * 0.0721) / 255,
                 1e-7));
    CHECK (ops->rgb_channel_std (img, g) == 0);
    /* {255, 0, 0}: mean 85, deviations 170, -85, -85 */
    CHECK (NEAR (g->px[0], sqrt ((170.0 * 170 + 2 * 85.0 * 85) / 3), 1e-4));
    CHECK (NEAR (g->px[2], sqrt (200.0 / 3), 1e-5));
    qc_fimg_t *small = qc_fimg_new (2, 1);
    CHECK (ops->rgb_to_gray (img, small) == -1, "size mismatch refused");
    CHECK (ops->rgb_to_gray (NULL, g) == -1);
    qc_fimg_destroy (&small);
    qc_fimg_destroy (&g);
    qc_rgb_destroy (&img);
}

/* Converts one pixel and returns its three planes. */
static void
space1 (qc_colorspace_t cs, uint8_t r, uint8_t g, uint8_t b, double out[3])
{
    qc_rgb_t *img = rgb1 (r, g, b);
    qc_fimg_t *p[3] = { qc_fimg_new (1, 1), qc_fimg_new (1, 1),
                        qc_fimg_new (1, 1) };
    CHECK (ops->rgb_to_space (img, cs, p[0], p[1], p[2]) == 0);
    for (int i = 0; i < 3; i++) {
        out[i] = p[i]->px[0];
        qc_fimg_destroy (&p[i]);
    }
    qc_rgb_destroy (&img);
}

static void
test_spaces (void)
{
    double v[3];
    space1 (QC_CS_HSV, 255, 0, 0, v);
    CHECK (v[0] == 0 && v[1] == 1 && v[2] == 1);
    space1 (QC_CS_HSV, 0, 255, 0, v);
    CHECK (NEAR (v[0], 1.0 / 3, 1e-7));
    space1 (QC_CS_HSV, 255, 0, 255, v);         /* R = B: B's formula */
    CHECK (NEAR (v[0], 5.0 / 6, 1e-7));
    space1 (QC_CS_HSV, 128, 128, 128, v);
    CHECK (v[0] == 0 && v[1] == 0 && NEAR (v[2], 128.0 / 255, 1e-7));
    space1 (QC_CS_HSV, 200, 100, 50, v);        /* skimage 0.19 */
    CHECK (NEAR (v[0], 0.0555555556, 1e-7) && NEAR (v[1], 0.75, 1e-7));
    space1 (QC_CS_HSV, 10, 200, 30, v);
    CHECK (NEAR (v[0], 0.350877193, 1e-7) && NEAR (v[1], 0.95, 1e-7));

    space1 (QC_CS_YUV, 255, 255, 255, v);
    CHECK (NEAR (v[0], 1, 1e-6) && NEAR (v[1], 0, 1e-6) && NEAR (v[2], 0, 1e-6));
    space1 (QC_CS_YUV, 200, 100, 50, v);
    /* Y = .299 r + .587 g + .114 b on [0,1] values */
    CHECK (NEAR (v[0], (0.299 * 200 + 0.587 * 100 + 0.114 * 50) / 255, 1e-6));
    CHECK (NEAR (v[1], -0.1431946529, 1e-6) && NEAR (v[2], 0.2607766706, 1e-6));
    space1 (QC_CS_YCBCR, 0, 0, 0, v);
    CHECK (v[0] == 16 && v[1] == 128 && v[2] == 128);
    space1 (QC_CS_YCBCR, 255, 255, 255, v);
    CHECK (NEAR (v[0], 235, 1e-4) && NEAR (v[1], 128, 1e-4)
           && NEAR (v[2], 128, 1e-4));
    space1 (QC_CS_YCBCR, 10, 200, 30, v);
    CHECK (NEAR (v[0], 122.3309411765, 1e-4) && NEAR (v[2], 56.6916862745, 1e-4));
    space1 (QC_CS_XYZ, 255, 255, 255, v);       /* row sums of the matrix */
    CHECK (NEAR (v[0], 0.950456, 1e-6) && NEAR (v[1], 1.0, 1e-6)
           && NEAR (v[2], 1.088754, 1e-6));
    space1 (QC_CS_XYZ, 200, 100, 50, v);
    CHECK (NEAR (v[0], 0.2895487291, 1e-6) && NEAR (v[2], 0.0566650915, 1e-6));
    space1 (QC_CS_LAB, 200, 100, 50, v);
    CHECK (NEAR (v[0], 53.6295080054, 1e-4) && NEAR (v[1], 36.3051641894, 1e-4)
           && NEAR (v[2], 45.3804718762, 1e-4));
    space1 (QC_CS_LAB, 10, 200, 30, v);
    CHECK (NEAR (v[0], 70.5001319946, 1e-4) && NEAR (v[1], -70.5138310733, 1e-4)
           && NEAR (v[2], 64.9408399626, 1e-4));
    space1 (QC_CS_RGB, 1, 2, 3, v);
    CHECK (v[0] == 1 && v[1] == 2 && v[2] == 3);

    CHECK (qc_colorspace_parse ("YUV") == QC_CS_YUV);
    CHECK (qc_colorspace_parse ("rgb cie") == QC_CS_RGBCIE);
    CHECK (qc_colorspace_parse ("YPbPr") == QC_CS_YPBPR);
    CHECK (qc_colorspace_parse ("CMYK") == -1 && qc_colorspace_parse (NULL) == -1);
    CHECK (strcmp (qc_colorspace_name (QC_CS_YCBCR), "YCbCr") == 0);

    qc_rgb_t *img = rgb1 (1, 2, 3);
    qc_fimg_t *a = qc_fimg_new (1, 1), *b = qc_fimg_new (1, 1);
    CHECK (ops->rgb_to_space (img, QC_CS_YUV, a, a, b) == -1, "aliased planes");
    CHECK (ops->rgb_to_space (img, QC_CS_COUNT, a, b, b) == -1);
    qc_fimg_destroy (&a);
    qc_fimg_destroy (&b);
    qc_rgb_destroy (&img);
}

static void
test_stains (void)
{
    /* skimage's hed_from_rgb (numpy.linalg.inv of rgb_from_hed) */
    static const double hed[9] = { 1.8779827369, -1.0076786863, -0.5561158182,
        -0.0659080622, 1.1347303725, -0.1355217986,
        -0.6019073634, -0.4804141885, 1.573588072 };
    qc_mat3_t m;
    CHECK (qc_stain_matrix ("hed_from_rgb", &m) == 0);
    for (int i = 0; i < 9; i++)
        CHECK (NEAR (m.m[i], hed[i], 1e-9), "hed[%d] = %.10f", i, m.m[i]);
    CHECK (qc_stain_matrix ("hdx_from_rgb", &m) == 0);
    CHECK (qc_stain_matrix ("hpx_from_rgb", &m) == 0);
    CHECK (qc_stain_matrix ("nope", &m) == -1);
    CHECK (qc_stain_matrix ("hed_from_rgb", NULL) == -1);

    /* A pure haematoxylin colour at concentration c (skimage
     * combine_stains: rgb = exp (log (1e-6) * c * rgb_from_hed[0])) comes
     * back as (c, 0, 0); exact in double through pixel_math. */
    qc_stain_matrix ("hed_from_rgb", &m);
    const double h_rgb[3] = { 0.65, 0.70, 0.29 }, c = 0.1;
    double od[3], out[3];
    for (int k = 0; k < 3; k++) {
        double rgb = exp (log (1e-6) * c * h_rgb[k]);
        od[k] = log (rgb) / log (1e-6);
    }
    qc_px_stains_from_od (m, od[0], od[1], od[2], out);
    CHECK (NEAR (out[0], c, 1e-12) && NEAR (out[1], 0, 1e-12)
           && NEAR (out[2], 0, 1e-12), "%g %g %g", out[0], out[1], out[2]);

    /* The same colour quantised to uint8 (104, 97, 171) through the op:
     * within the quantisation error. */
    uint8_t q[3];
    for (int k = 0; k < 3; k++)
        q[k] = (uint8_t) lrint (255.0 * exp (log (1e-6) * c * h_rgb[k]));
    qc_rgb_t *img = rgb1 (q[0], q[1], q[2]);
    qc_fimg_t *p[3] = { qc_fimg_new (1, 1), qc_fimg_new (1, 1),
                        qc_fimg_new (1, 1) };
    CHECK (ops->separate_stains (img, &m, p[0], p[1], p[2]) == 0);
    CHECK (NEAR (p[0]->px[0], c, 0.004) && p[1]->px[0] < 0.004
           && p[2]->px[0] < 0.004, "%g %g %g", p[0]->px[0], p[1]->px[0],
           p[2]->px[0]);
    double px3[3];
    qc_px_separate_stains (m, q[0], q[1], q[2], px3);
    CHECK (px3[0] == (double) p[0]->px[0] || NEAR (px3[0], p[0]->px[0], 1e-7),
           "op and pixel_math agree");
    /* white glass has no stain */
    img->px[0] = img->px[1] = img->px[2] = 255;
    CHECK (ops->separate_stains (img, &m, p[0], p[1], p[2]) == 0);
    CHECK (p[0]->px[0] == 0 && p[1]->px[0] == 0 && p[2]->px[0] == 0);
    CHECK (ops->separate_stains (img, NULL, p[0], p[1], p[2]) == -1);
    for (int i = 0; i < 3; i++)
        qc_fimg_destroy (&p[i]);
    qc_rgb_destroy (&img);
}

static void
test_pointwise (void)
{
    qc_fimg_t *f = qc_fimg_new (4, 1), *g = qc_fimg_new (4, 1);
    const float v[4] = { 0.25f, 0.5f, 0.75f, NAN };
    memcpy (f->px, v, sizeof v);
    qc_mask_t *m = qc_mask_new (4, 1), *n = qc_mask_new (4, 1);
    CHECK (ops->threshold (f, 0.25, 0.75, m) == 0);
    CHECK (m->px[0] == 0 && m->px[1] == 1 && m->px[2] == 0 && m->px[3] == 0,
           "strict both sides, NaN unset");
    CHECK (ops->threshold (f, -INFINITY, 0.5000001, m) == 0);
    CHECK (m->px[0] == 1 && m->px[1] == 1 && m->px[2] == 0);
    CHECK (ops->threshold (f, NAN, 1, m) == -1);

    const uint8_t a[4] = { 0, 0, 1, 1 }, b[4] = { 0, 1, 0, 1 };
    qc_mask_t *ma = qc_mask_new (4, 1), *mb = qc_mask_new (4, 1);
    memcpy (ma->px, a, 4);
    memcpy (mb->px, b, 4);
    static const uint8_t want[5][4] = { { 0, 0, 0, 1 }, { 0, 1, 1, 1 },
        { 0, 0, 1, 0 }, { 0, 1, 1, 0 }, { 1, 1, 0, 0 } };
    for (int op = QC_LOGIC_AND; op <= QC_LOGIC_NOT; op++) {
        CHECK (ops->mask_logic (ma, op == QC_LOGIC_NOT ? NULL : mb,
                                (qc_logic_t) op, n) == 0);
        CHECK (memcmp (n->px, want[op], 4) == 0, "logic op %d", op);
    }
    memcpy (n->px, a, 4);
    CHECK (ops->mask_logic (n, mb, QC_LOGIC_ANDNOT, n) == 0 && n->px[2] == 1
           && n->px[3] == 0, "in place");
    CHECK (ops->mask_logic (ma, NULL, QC_LOGIC_AND, n) == -1);

    const float w[4] = { 1.0f, 0.25f, 2.0f, 0.0f };
    memcpy (f->px, w, sizeof w);
    memcpy (g->px, v, 3 * sizeof (float));
    g->px[3] = 1.0f;
    qc_fimg_t *d = qc_fimg_new (4, 1);
    CHECK (ops->fimg_arith (f, g, QC_ARITH_ABSDIFF, d) == 0);
    CHECK (d->px[0] == 0.75f && d->px[1] == 0.25f && d->px[3] == 1.0f);
    CHECK (ops->fimg_arith (f, g, QC_ARITH_MUL, d) == 0 && d->px[2] == 1.5f);
    CHECK (ops->fimg_affine (f, 2.0, -1.0, 0.0, 2.0, d) == 0);
    CHECK (d->px[0] == 1.0f && d->px[1] == 0.0f && d->px[2] == 2.0f);
    CHECK (ops->fimg_affine (f, 1, 0, 1, 0, d) == -1);
    qc_fimg_destroy (&d);
    qc_fimg_destroy (&f);
    qc_fimg_destroy (&g);
    qc_mask_destroy (&m);
    qc_mask_destroy (&n);
    qc_mask_destroy (&ma);
    qc_mask_destroy (&mb);
}

/* 1000 float32 values: ((i * 37) % 101) / 100, plus 0.3 for i % 7 == 0
 * (the same data the numpy / skimage references were computed on). */
static qc_fimg_t *
sample_data (void)
{
    qc_fimg_t *f = qc_fimg_new (100, 10);
    for (int i = 0; i < 1000; i++) {
        float v = (float) (((i * 37) % 101) / 100.0);
        if (i % 7 == 0)
            v = v + 0.3f;
        f->px[i] = v;
    }
    return f;
}

static int
cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static void
test_stats (void)
{
    qc_fimg_t *f = sample_data ();
    qc_mask_t *m = qc_mask_new (100, 10);
    for (int i = 0; i < 1000; i++)
        m->px[i] = i % 3 != 0;
    size_t cnt;
    CHECK (ops->mask_count (m, &cnt) == 0 && cnt == 666);
    qc_stats_t st;
    CHECK (ops->fimg_stats (f, m, &st) == 0 && st.n == 666);
    CHECK (NEAR (st.mean, 0.5418918927846191, 1e-12), "%.16f", st.mean);
    CHECK (NEAR (st.std, 0.3101288515290068, 1e-12), "%.16f", st.std);
    CHECK (ops->fimg_stats (f, NULL, &st) == 0 && st.n == 1000 && st.min == 0);

    double q;
    CHECK (ops->fimg_quantile (f, NULL, 0.99, &q) == 0
           && NEAR (q, 1.2301000189781188, 1e-12), "%.16f", q);
    CHECK (ops->fimg_quantile (f, NULL, 0.5, &q) == 0
           && NEAR (q, 0.5400000214576721, 1e-12));
    CHECK (ops->fimg_quantile (f, NULL, 0.123, &q) == 0
           && NEAR (q, 0.14000000059604645, 1e-12));
    /* against sorting on random data, many q */
    double sorted[1000];
    srand (7);
    for (int i = 0; i < 1000; i++)
        f->px[i] = (float) (rand () % 5000) / 100.0f;
    for (int i = 0; i < 1000; i++)
        sorted[i] = f->px[i];
    qsort (sorted, 1000, sizeof (double), cmp_double);
    for (int k = 0; k <= 20; k++) {
        double qq = k / 20.0, h = 999 * qq;
        size_t lo = (size_t) floor (h);
        double ref = sorted[lo] + (h - lo) * (lo < 999 ? sorted[lo + 1] - sorted[lo] : 0);
        CHECK (ops->fimg_quantile (f, NULL, qq, &q) == 0 && NEAR (q, ref, 1e-9),
               "q %g: %g vs %g", qq, q, ref);
    }
    /* negative values, both zeros, ties and a mask, against sorting */
    {
        double sel[1000];
        int ns = 0;
        for (int i = 0; i < 1000; i++) {
            f->px[i] = (float) (rand () % 5001 - 2500) / 100.0f;
            if (i % 97 == 0)
                f->px[i] = i % 2 ? -0.0f : 0.0f;
            m->px[i] = rand () % 3 != 0;
            if (m->px[i])
                sel[ns++] = f->px[i];
        }
        qsort (sel, (size_t) ns, sizeof (double), cmp_double);
        int bad = 0;
        for (int k = 0; k <= 40; k++) {
            double qq = k / 40.0, h = (ns - 1) * qq;
            size_t lo = (size_t) floor (h);
            double ref = sel[lo] + (h - lo) * (lo + 1 < (size_t) ns
                                               ? sel[lo + 1] - sel[lo] : 0);
            bad += ops->fimg_quantile (f, m, qq, &q) != 0 || !NEAR (q, ref, 1e-9);
        }
        CHECK (bad == 0, "%d masked quantiles off", bad);
        f->px[3] = NAN;
        m->px[3] = 1;
        CHECK (ops->fimg_quantile (f, m, 0.5, &q) == 0 && isnan (q), "NaN propagates");
    }
    qc_mask_fill (m, 0);
    CHECK (ops->fimg_quantile (f, m, 0.5, &q) == -1, "empty selection");
    CHECK (ops->fimg_stats (f, m, &st) == 0 && st.n == 0 && st.mean == 0);
    CHECK (ops->fimg_quantile (f, NULL, 1.5, &q) == -1);

    qc_rgb_t *img = qc_rgb_new (2, 1);
    const uint8_t px[6] = { 10, 20, 30, 30, 20, 10 };
    memcpy (img->px, px, 6);
    qc_stats_t rs[3];
    CHECK (ops->rgb_stats (img, NULL, rs) == 0);
    CHECK (rs[0].mean == 20 && rs[0].std == 10 && rs[1].std == 0
           && rs[2].max == 30);
    uint64_t hist[3][256];
    CHECK (ops->rgb_histogram (img, NULL, hist) == 0);
    CHECK (hist[0][10] == 1 && hist[0][30] == 1 && hist[1][20] == 2);
    qc_rgb_destroy (&img);
    qc_fimg_destroy (&f);
    qc_mask_destroy (&m);
}

static void
test_histogram_otsu (void)
{
    qc_fimg_t *f = sample_data ();
    uint64_t h[7];
    static const uint64_t want[7] = { 101, 99, 120, 108, 119, 108, 119 };
    CHECK (ops->fimg_histogram (f, NULL, 7, 0.1, 0.9, h) == 0);
    for (int i = 0; i < 7; i++)
        CHECK (h[i] == want[i], "bin %d: %llu", i, (unsigned long long) h[i]);
    /* values on the edges: k/8 over [0, 1] with 8 bins; 1.0 joins the
     * last bin */
    qc_fimg_t *e = qc_fimg_new (9, 1);
    for (int i = 0; i < 9; i++)
        e->px[i] = i / 8.0f;
    uint64_t h8[8];
    CHECK (ops->fimg_histogram (e, NULL, 8, 0, 1, h8) == 0);
    CHECK (h8[0] == 1 && h8[3] == 1 && h8[7] == 2);
    CHECK (ops->fimg_histogram (e, NULL, 0, 0, 1, h8) == -1);

    double t;
    CHECK (ops->otsu (f, NULL, 256, &t) == 0
           && NEAR (t, 0.5408202926628292, 1e-7), "%.16f", t);
    CHECK (ops->otsu (f, NULL, 16, &t) == 0
           && NEAR (t, 0.5281249806284904, 1e-7), "%.16f", t);
    qc_mask_t *m = qc_mask_new (100, 10);
    for (int i = 0; i < 1000; i++)
        m->px[i] = i % 3 != 0;
    CHECK (ops->otsu (f, m, 256, &t) == 0
           && NEAR (t, 0.5408202926628292, 1e-7));
    /* Two-level image: the first bin's centre, which separates them. */
    qc_fimg_t *two = qc_fimg_new (5, 3);
    for (int i = 0; i < 15; i++)
        two->px[i] = i < 10 ? 0.2f : 0.8f;
    CHECK (ops->otsu (two, NULL, 256, &t) == 0);
    CHECK (NEAR (t, 0.2f + (0.8f - 0.2f) / 512.0, 1e-7), "%.10f", t);
    qc_mask_t *below = qc_mask_new (5, 3);
    size_t nb;
    ops->threshold (two, -INFINITY, t, below);
    ops->mask_count (below, &nb);
    CHECK (nb == 10);
    for (int i = 0; i < 15; i++)
        two->px[i] = 0.3f;
    CHECK (ops->otsu (two, NULL, 256, &t) == 0 && t == 0.3f, "constant");
    qc_fimg_destroy (&f);
    qc_fimg_destroy (&e);
    qc_fimg_destroy (&two);
    qc_mask_destroy (&m);
    qc_mask_destroy (&below);
}

/* qc_cpu_argb_over_row (four opaque pixels at a time with AVX2) equals
 * qc_px_argb_over pixel for pixel: every row length 0-40 at every start
 * offset 0-3, opaque runs broken by transparent and half-transparent
 * pixels at varying places; nothing written past the row. */
static void
test_argb_rows (void)
{
    enum { N = 48 };
    uint32_t src[N + 4];
    uint8_t got[3 * N + 8], want[3 * N + 8];
    const uint8_t bg[3] = { 250, 245, 240 };
    unsigned seed = 12345;
    int bad = 0, spill = 0;
    for (int len = 0; len <= 40; len++)
        for (int off = 0; off < 4; off++)
            for (int pattern = 0; pattern < 4; pattern++) {
                for (int i = 0; i < N + 4; i++) {
                    seed = seed * 1103515245u + 12345u;
                    uint32_t a = 255;
                    if (pattern == 1 && i % 7 == 3)
                        a = 0;
                    else if (pattern == 2 && i % 11 == 5)
                        a = (seed >> 8) & 255;
                    else if (pattern == 3 && (seed >> 20) % 5 == 0)
                        a = (seed >> 8) & 255;
                    /* premultiplied: colour bytes never above alpha */
                    uint32_t r = ((seed >> 4) & 255) * a / 255;
                    uint32_t g = ((seed >> 12) & 255) * a / 255;
                    uint32_t b = ((seed >> 24) & 255) * a / 255;
                    src[i] = a << 24 | r << 16 | g << 8 | b;
                }
                memset (got, 0xAB, sizeof got);
                qc_cpu_argb_over_row (src + off, (size_t) len, bg, got);
                for (int x = 0; x < len; x++)
                    qc_px_argb_over (src[off + x], bg[0], bg[1], bg[2],
                                     want + 3 * x);
                bad += memcmp (got, want, 3 * (size_t) len) != 0;
                for (size_t k = 3 * (size_t) len; k < sizeof got; k++)
                    spill += got[k] != 0xAB;
            }
    CHECK (bad == 0, "%d rows composited differently from qc_px_argb_over", bad);
    CHECK (spill == 0, "%d bytes written past the row", spill);
    qc_cpu_argb_over_row (NULL, 4, bg, got);      /* refused, no crash */
    qc_cpu_argb_over_row (src, 4, NULL, got);
    qc_cpu_argb_over_row (src, 4, bg, NULL);
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_buffers ();
    test_argb_rows ();
    test_gray_std ();
    test_spaces ();
    test_stains ();
    test_pointwise ();
    test_stats ();
    test_histogram_otsu ();
    return check_done ("test_image_ops");
}
