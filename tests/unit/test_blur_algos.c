/* The blur detectors as pure functions (kernels/modules/blur_algo.h) on
 * images made here:
 *  - HistoQC's map equals a direct double-precision evaluation of
 *    gaussian (|laplace (gray)|, sigma) <= t with skimage's borders
 *    (laplace REFLECT, gaussian NEAREST, truncate 4);
 *  - the local detector finds the blurred half of a textured "tissue"
 *    and not the sharp half, gives the same answer whether the tissue
 *    sits on a little or a lot of glass (HistoQC's does not), flags a
 *    tissue blurred all over (the absolute floor) and nothing on tissue
 *    sharp all over;
 *  - the two ops it added (QC_ARITH_DIV, mask_to_fimg) and bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/blur_algo.h"
#include "tests/unit/check.h"

#pragma GCC diagnostic ignored "-Wformat-zero-length"

static const qc_ops_t *ops;

/* Deterministic pseudo-random numbers in [0, 1). */
static double
rnd (unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double) ((*s >> 8) & 0xFFFFFF) / 16777216.0;
}

static int
clampi (int i, int n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* scipy 'reflect' for an overhang of one pixel: -1 -> 0, n -> n - 1. */
static double
at_reflect (const qc_fimg_t *g, int x, int y)
{
    return g->px[(size_t) clampi (y, g->h) * g->w + clampi (x, g->w)];
}

static void
test_histoqc_exact (void)
{
    int w = 53, h = 37;
    double sigma = 3, t = 0.6;
    qc_fimg_t *g = qc_fimg_new (w, h);
    qc_mask_t *m = qc_mask_new (w, h);
    double *lap = calloc ((size_t) w * h, sizeof *lap);
    double *tmp = calloc ((size_t) w * h, sizeof *tmp);
    double *out = calloc ((size_t) w * h, sizeof *out);
    unsigned s = 7;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            g->px[y * w + x] = (float) (x < w / 2 ? 0.5 + 0.02 * rnd (&s)
                                        : rnd (&s));
    qc_blur_histoqc_params_t p = { (int) sigma, t };
    CHECK (qc_blur_histoqc_map (ops, g, &p, m) == 0);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            lap[y * w + x] = fabs (4 * at_reflect (g, x, y)
                                   - at_reflect (g, x - 1, y)
                                   - at_reflect (g, x + 1, y)
                                   - at_reflect (g, x, y - 1)
                                   - at_reflect (g, x, y + 1));
    int r = (int) (4 * sigma + 0.5);
    double wt[64], sum = 0;
    for (int k = -r; k <= r; k++)
        sum += wt[k + r] = exp (-0.5 * k * k / (sigma * sigma));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double a = 0;
            for (int k = -r; k <= r; k++)
                a += wt[k + r] / sum * lap[y * w + clampi (x + k, w)];
            tmp[y * w + x] = a;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double a = 0;
            for (int k = -r; k <= r; k++)
                a += wt[k + r] / sum * tmp[clampi (y + k, h) * w + x];
            out[y * w + x] = a;
        }
    int bad = 0, set = 0;
    for (int i = 0; i < w * h; i++) {
        int want = out[i] <= t;
        set += want;
        /* float storage may flip a value within 1e-5 of t */
        if (want != m->px[i] && fabs (out[i] - t) > 1e-5)
            bad++;
    }
    CHECK (bad == 0, "%d pixels differ from the direct evaluation", bad);
    CHECK (set > 50 && set < w * h - 50, "a threshold that splits: %d", set);
    /* Bad arguments. */
    qc_blur_histoqc_params_t neg = { -1, t };
    CHECK (qc_blur_histoqc_map (ops, g, &neg, m) == -1);
    CHECK (qc_blur_histoqc_map (NULL, g, &p, m) == -1);
    qc_mask_t *small = qc_mask_new (w - 1, h);
    CHECK (qc_blur_histoqc_map (ops, g, &p, small) == -1);
    CHECK (qc_blur_histoqc_map (ops, NULL, &p, m) == -1);
    qc_mask_destroy (&small);
    free (lap);
    free (tmp);
    free (out);
    qc_fimg_destroy (&g);
    qc_mask_destroy (&m);
}

/* A w x h slide: glass (0.93) with a tissue rectangle at (ox, oy) of
 * 160 x 80 whose texture is noise in [0.3, 0.7]; the part x >= blur_from
 * (tissue coordinates) is the same noise blurred with sigma 4. */
static qc_fimg_t *
make_slide (int w, int h, int ox, int oy, int blur_from, qc_mask_t **tissue)
{
    int tw = 160, th = 80;
    qc_fimg_t *noise = qc_fimg_new (tw, th), *soft = qc_fimg_new (tw, th);
    qc_fimg_t *g = qc_fimg_new (w, h);
    *tissue = qc_mask_new (w, h);
    unsigned s = 11;
    for (int i = 0; i < tw * th; i++)
        noise->px[i] = (float) (0.3 + 0.4 * rnd (&s));
    ops->gaussian (noise, 4.0, 4.0, QC_BORDER_REFLECT, soft);
    for (int i = 0; i < w * h; i++)
        g->px[i] = 0.93f;
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++) {
            size_t at = (size_t) (oy + y) * w + ox + x;
            g->px[at] = (x >= blur_from ? soft : noise)->px[y * tw + x];
            (*tissue)->px[at] = 1;
        }
    qc_fimg_destroy (&noise);
    qc_fimg_destroy (&soft);
    return g;
}

/* Flagged pixels in the tissue's columns [x0, x1) (tissue coordinates),
 * rows 16 px away from its top and bottom, as a fraction. */
static double
flagged (const qc_mask_t *m, int ox, int oy, int x0, int x1)
{
    size_t n = 0, all = 0;
    for (int y = 16; y < 80 - 16; y++)
        for (int x = x0; x < x1; x++, all++)
            n += m->px[(size_t) (oy + y) * m->w + ox + x];
    return (double) n / (double) all;
}

static void
test_local_halves (void)
{
    qc_blur_local_params_t p;
    qc_blur_local_defaults (&p);
    /* Little glass, then a lot: the tissue's answer must not change. */
    const int sizes[2][4] = { { 200, 120, 20, 20 }, { 900, 700, 500, 300 } };
    double fr[2][2] = { { 0 } };
    for (int k = 0; k < 2; k++) {
        int w = sizes[k][0], h = sizes[k][1], ox = sizes[k][2], oy = sizes[k][3];
        qc_mask_t *tissue;
        qc_fimg_t *g = make_slide (w, h, ox, oy, 80, &tissue);
        qc_mask_t *m = qc_mask_new (w, h);
        double thr = -1;
        CHECK (qc_blur_local_map (ops, g, tissue, &p, m, &thr) == 0);
        fr[k][0] = flagged (m, ox, oy, 0, 64);      /* sharp side */
        fr[k][1] = flagged (m, ox, oy, 96, 160);    /* blurred side */
        printf ("local, %d x %d slide: sharp half flagged %.3f, blurred "
                "half %.3f (threshold %.4f)\n", w, h, fr[k][0], fr[k][1], thr);
        CHECK (fr[k][0] < 0.02, "sharp half flagged %.3f", fr[k][0]);
        CHECK (fr[k][1] > 0.98, "blurred half flagged %.3f", fr[k][1]);
        /* Never outside the tissue. */
        size_t out = 0;
        for (int i = 0; i < w * h; i++)
            out += m->px[i] && !tissue->px[i];
        CHECK (out == 0, "%zu flagged pixels on glass", out);
        /* HistoQC's code defaults on the same slide, for contrast: how
         * much of the sharp half it calls blurry depends on the glass. */
        qc_blur_histoqc_params_t hp = { 100, 0.15 };
        CHECK (qc_blur_histoqc_map (ops, g, &hp, m) == 0);
        printf ("HistoQC (100, .15), %d x %d slide: sharp half flagged "
                "%.3f\n", w, h, flagged (m, ox, oy, 0, 64));
        qc_fimg_destroy (&g);
        qc_mask_destroy (&tissue);
        qc_mask_destroy (&m);
    }
    CHECK (fabs (fr[0][0] - fr[1][0]) < 0.01 && fabs (fr[0][1] - fr[1][1]) < 0.01,
           "glass changed the answer");
}

static void
test_local_all_or_nothing (void)
{
    qc_blur_local_params_t p;
    qc_blur_local_defaults (&p);
    for (int blur_from = 0; blur_from <= 160; blur_from += 160) {
        qc_mask_t *tissue;
        qc_fimg_t *g = make_slide (200, 120, 20, 20, blur_from, &tissue);
        qc_mask_t *m = qc_mask_new (200, 120);
        CHECK (qc_blur_local_map (ops, g, tissue, &p, m, NULL) == 0);
        double f = flagged (m, 20, 20, 16, 144);
        if (blur_from == 0)
            CHECK (f > 0.98, "all blurred: flagged %.3f", f);
        else
            CHECK (f < 0.01, "all sharp: flagged %.3f", f);
        qc_fimg_destroy (&g);
        qc_mask_destroy (&tissue);
        qc_mask_destroy (&m);
    }
}

static void
test_local_args (void)
{
    qc_blur_local_params_t p;
    qc_blur_local_defaults (&p);
    qc_fimg_t *g = qc_fimg_new (40, 30), *s = qc_fimg_new (40, 30);
    qc_mask_t *m = qc_mask_new (40, 30), *other = qc_mask_new (41, 30);
    CHECK (qc_blur_local_map (ops, g, NULL, &p, m, NULL) == 0);
    CHECK (qc_blur_local_map (ops, g, other, &p, m, NULL) == -1);
    CHECK (qc_blur_local_map (ops, g, NULL, &p, other, NULL) == -1);
    CHECK (qc_blur_local_map (NULL, g, NULL, &p, m, NULL) == -1);
    CHECK (qc_blur_local_map (ops, g, NULL, NULL, m, NULL) == -1);
    qc_blur_local_params_t bad = p;
    bad.window = 30;           /* even: no centre */
    CHECK (qc_blur_local_sharpness (ops, g, NULL, &bad, s) == -1);
    bad = p;
    bad.min_fraction = 0;
    CHECK (qc_blur_local_sharpness (ops, g, NULL, &bad, s) == -1);
    bad = p;
    bad.relative_threshold = NAN;
    CHECK (qc_blur_local_classify (ops, s, &bad, m, NULL) == -1);
    /* A flat image has no detail: judged everywhere, all blurry. */
    for (int i = 0; i < 40 * 30; i++)
        g->px[i] = 0.5f;
    CHECK (qc_blur_local_map (ops, g, NULL, &p, m, NULL) == 0);
    size_t n = 0;
    ops->mask_count (m, &n);
    CHECK (n == 40 * 30, "flat image: %zu of 1200 flagged", n);
    /* Images smaller than the window, down to one pixel. */
    for (int n = 1; n <= 3; n++) {
        qc_fimg_t *t = qc_fimg_new (n, n);
        qc_mask_t *tm = qc_mask_new (n, n);
        qc_blur_histoqc_params_t hp = { 100, 0.15 };
        CHECK (qc_blur_local_map (ops, t, NULL, &p, tm, NULL) == 0, "%d px", n);
        CHECK (qc_blur_histoqc_map (ops, t, &hp, tm) == 0, "%d px", n);
        qc_fimg_destroy (&t);
        qc_mask_destroy (&tm);
    }
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&s);
    qc_mask_destroy (&m);
    qc_mask_destroy (&other);
}

static void
test_new_ops (void)
{
    qc_fimg_t *a = qc_fimg_new (3, 1), *b = qc_fimg_new (3, 1);
    qc_fimg_t *d = qc_fimg_new (3, 1);
    const float av[3] = { 1, 2, 3 }, bv[3] = { 2, 0, -1 };
    memcpy (a->px, av, sizeof av);
    memcpy (b->px, bv, sizeof bv);
    CHECK (ops->fimg_arith (a, b, QC_ARITH_DIV, d) == 0);
    CHECK (d->px[0] == 0.5f && d->px[1] == 0.0f && d->px[2] == -3.0f,
           "%g %g %g", d->px[0], d->px[1], d->px[2]);
    qc_mask_t *m = qc_mask_new (3, 1), *m2 = qc_mask_new (2, 1);
    m->px[1] = 1;
    CHECK (ops->mask_to_fimg (m, 2.5, -1, d) == 0);
    CHECK (d->px[0] == -1.0f && d->px[1] == 2.5f && d->px[2] == -1.0f);
    CHECK (ops->mask_to_fimg (m2, 1, 0, d) == -1);
    CHECK (ops->mask_to_fimg (m, NAN, 0, d) == -1);
    CHECK (ops->mask_to_fimg (NULL, 1, 0, d) == -1);
    qc_fimg_destroy (&a);
    qc_fimg_destroy (&b);
    qc_fimg_destroy (&d);
    qc_mask_destroy (&m);
    qc_mask_destroy (&m2);
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_histoqc_exact ();
    test_local_halves ();
    test_local_all_or_nothing ();
    test_local_args ();
    test_new_ops ();
    return check_done ("test_blur_algos");
}
