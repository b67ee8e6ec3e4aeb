/* The CPU ops with vector (AVX2) versions give the bits of the plain
 * formulas they stand for, whichever version this CPU runs:
 *
 * qc_cpu_fimg_stats's numbers, bit for bit, against the summation order
 * kernels/ops/cpu/stats.c documents (value i into lane i % 4, the tail into
 * lane 0, lanes added pairwise at the end; a second pass for the
 * spread), written out plainly here. The CPU runs an AVX2 version of it
 * where it can and the portable loop elsewhere; both must give these
 * bits, masked or not, for any length, with NaN, -0 and infinities.
 *
 * qc_cpu_fimg_quantile, whose key scan runs eight values at a time,
 * against numpy's linear rule over a sorted copy, on values of both
 * signs with -0 and +0, masked and not.
 *
 * qc_cpu_rgb_stats, which sums bytes as integers and does the three
 * channels in one pass, against the same documented order run on each
 * channel as floats.
 *
 * qc_cpu_rgb_channel_std against qc_px_channel_std (pixel_math.h) on
 * every pixel of random images of odd sizes.
 *
 * qc_cpu_rgb_to_space, every colour space, against the same op on each
 * pixel alone (a 1 x 1 image never reaches the four-pixel loop).
 *
 * qc_cpu_sobel and qc_cpu_laplace against the same op on 3 x 3 (or
 * smaller) images cut from the picture with its border (the stencil of
 * one pixel, never the four-pixel loop), for every border rule.
 *
 * qc_cpu_threshold, which compares in float, against lo < v < hi in
 * double, for bounds on floats, between two floats, beyond float's
 * range and infinite, and values with NaN, -0 and infinities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/image/pixel_math.h"
#include "tests/unit/check.h"

static void
reference (const float *f, size_t n, const uint8_t *mask, qc_stats_t *out)
{
    double sum[4] = { 0 }, mn[4], mx[4], ss[4] = { 0 };
    size_t count = 0, i;
    for (int l = 0; l < 4; l++)
        mn[l] = INFINITY, mx[l] = -INFINITY;
    for (i = 0; i < n; i++) {
        int l = i < (n & ~(size_t) 3) ? (int) (i % 4) : 0;
        if (mask && !mask[i])
            continue;
        double v = f[i];
        mn[l] = v < mn[l] ? v : mn[l];
        mx[l] = v > mx[l] ? v : mx[l];
        sum[l] += v;
        count++;
    }
    double total = (sum[0] + sum[1]) + (sum[2] + sum[3]);
    double mean = count ? total / (double) count : 0.0;
    for (i = 0; count && i < n; i++) {
        int l = i < (n & ~(size_t) 3) ? (int) (i % 4) : 0;
        if (mask && !mask[i])
            continue;
        double d = f[i] - mean;
        ss[l] += d * d;
    }
    out->n = count;
    out->sum = total;
    out->mean = mean;
    out->std = count ? sqrt (((ss[0] + ss[1]) + (ss[2] + ss[3])) / (double) count)
                     : 0.0;
    out->min = count ? fmin (fmin (mn[0], mn[1]), fmin (mn[2], mn[3])) : 0.0;
    out->max = count ? fmax (fmax (mx[0], mx[1]), fmax (mx[2], mx[3])) : 0.0;
}

static int
same_bits (double a, double b)
{
    return memcmp (&a, &b, sizeof a) == 0;
}

static void
test_channel_std (void)
{
    unsigned seed = 17;
    for (int k = 0; k < 20; k++) {
        int w = 1 + (int) (rand_r (&seed) % 301), h = 1 + (int) (rand_r (&seed) % 7);
        qc_rgb_t *img = qc_rgb_new (w, h);
        qc_fimg_t *out = qc_fimg_new (w, h);
        for (size_t i = 0; i < (size_t) w * h * 3; i++)
            img->px[i] = (uint8_t) rand_r (&seed);
        CHECK (qc_cpu_rgb_channel_std (img, out) == 0);
        size_t bad = 0;
        for (size_t i = 0; i < (size_t) w * h; i++) {
            const uint8_t *p = img->px + 3 * i;
            float want = (float) qc_px_channel_std (p[0], p[1], p[2]);
            bad += memcmp (&want, &out->px[i], sizeof want) != 0;
        }
        CHECK (bad == 0, "%d x %d: %zu pixels differ", w, h, bad);
        qc_rgb_destroy (&img);
        qc_fimg_destroy (&out);
    }
}

static void
test_rgb_to_space (void)
{
    unsigned seed = 23;
    int w = 37, h = 5;
    qc_rgb_t *img = qc_rgb_new (w, h), *one = qc_rgb_new (1, 1);
    qc_fimg_t *o[3], *p[3];
    for (int c = 0; c < 3; c++) {
        o[c] = qc_fimg_new (w, h);
        p[c] = qc_fimg_new (1, 1);
    }
    for (size_t i = 0; i < (size_t) w * h * 3; i++)
        img->px[i] = (uint8_t) rand_r (&seed);
    for (int space = 0; space < QC_CS_COUNT; space++) {
        CHECK (qc_cpu_rgb_to_space (img, (qc_colorspace_t) space, o[0], o[1],
                                    o[2]) == 0);
        size_t bad = 0;
        for (size_t i = 0; i < (size_t) w * h; i++) {
            memcpy (one->px, img->px + 3 * i, 3);
            qc_cpu_rgb_to_space (one, (qc_colorspace_t) space, p[0], p[1], p[2]);
            for (int c = 0; c < 3; c++)
                bad += memcmp (&p[c]->px[0], &o[c]->px[i], sizeof (float)) != 0;
        }
        CHECK (bad == 0, "%s: %zu values differ",
               qc_colorspace_name ((qc_colorspace_t) space), bad);
    }
    for (int c = 0; c < 3; c++) {
        qc_fimg_destroy (&o[c]);
        qc_fimg_destroy (&p[c]);
    }
    qc_rgb_destroy (&img);
    qc_rgb_destroy (&one);
}

static void
test_threshold (void)
{
    unsigned seed = 29;
    int w = 257, h = 3;
    size_t n = (size_t) w * h;
    qc_fimg_t *f = qc_fimg_new (w, h);
    qc_mask_t *m = qc_mask_new (w, h);
    const float specials[] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f,
                               0.5f, 0.1f, 1e-39f, 3.4028235e38f };
    for (size_t i = 0; i < n; i++)
        f->px[i] = i < 9 ? specials[i]
                 : (float) ((int) (rand_r (&seed) % 2001) - 1000) / 1000.0f;
    /* 0.1 as a double lies between two floats; 0.5 is one */
    const double bounds[] = { -INFINITY, -1e300, -0.5, -0.0, 0.0, 0.1,
                              (double) 0.1f, 0.5, 0.50000001, 1e-39, 1e300,
                              INFINITY };
    size_t nb = sizeof bounds / sizeof bounds[0], bad = 0;
    for (size_t a = 0; a < nb; a++)
        for (size_t b = 0; b < nb; b++) {
            double lo = bounds[a], hi = bounds[b];
            CHECK (qc_cpu_threshold (f, lo, hi, m) == 0);
            for (size_t i = 0; i < n; i++) {
                double v = f->px[i];
                bad += m->px[i] != (uint8_t) (v > lo && v < hi);
            }
        }
    CHECK (bad == 0, "%zu pixels on the wrong side", bad);
    qc_fimg_destroy (&f);
    qc_mask_destroy (&m);
}

static void
test_stencils (void)
{
    unsigned seed = 31;
    int w = 23, h = 4;
    qc_fimg_t *f = qc_fimg_new (w, h), *o = qc_fimg_new (w, h);
    for (size_t i = 0; i < (size_t) w * h; i++)
        f->px[i] = (float) (rand_r (&seed) % 1000) / 999.0f;
    size_t bad = 0;
    for (int which = 0; which < 2; which++)
        for (int border = QC_BORDER_REFLECT; border <= QC_BORDER_CONSTANT;
             border++) {
            if ((which ? qc_cpu_laplace : qc_cpu_sobel) (f, (qc_border_t) border, o))
                bad++;
            /* inner pixels: a 3 x 3 cut centred on them gives the same
             * stencil (its borders are never read) */
            qc_fimg_t *cut = qc_fimg_new (3, 3), *co = qc_fimg_new (3, 3);
            for (int y = 1; y + 1 < h; y++)
                for (int x = 1; x + 1 < w; x++) {
                    for (int dy = 0; dy < 3; dy++)
                        memcpy (cut->px + dy * 3, f->px + (size_t) (y - 1 + dy) * w
                                + x - 1, 3 * sizeof (float));
                    (which ? qc_cpu_laplace : qc_cpu_sobel) (cut, (qc_border_t) border, co);
                    bad += memcmp (&co->px[4], &o->px[(size_t) y * w + x],
                                   sizeof (float)) != 0;
                }
            qc_fimg_destroy (&cut);
            qc_fimg_destroy (&co);
        }
    CHECK (bad == 0, "%zu stencil values differ", bad);
    qc_fimg_destroy (&f);
    qc_fimg_destroy (&o);
}

static void
test_rgb_stats (void)
{
    unsigned seed = 37;
    for (int k = 0; k < 12; k++) {
        int w = 1 + (int) (rand_r (&seed) % 83), h = 1 + (int) (rand_r (&seed) % 9);
        size_t n = (size_t) w * h;
        qc_rgb_t *img = qc_rgb_new (w, h);
        qc_mask_t *m = qc_mask_new (w, h);
        for (size_t i = 0; i < n * 3; i++)
            img->px[i] = (uint8_t) rand_r (&seed);
        for (size_t i = 0; i < n; i++)
            m->px[i] = (uint8_t) (k % 4 == 3 ? 0 : rand_r (&seed) % 2);
        float *plane = malloc (n * sizeof *plane);
        for (int masked = 0; masked < 2; masked++) {
            qc_stats_t got[3];
            CHECK (qc_cpu_rgb_stats (img, masked ? m : NULL, got) == 0);
            for (int c = 0; c < 3; c++) {
                for (size_t i = 0; i < n; i++)
                    plane[i] = img->px[3 * i + c];
                qc_stats_t want;
                reference (plane, n, masked ? m->px : NULL, &want);
                CHECK (got[c].n == want.n && same_bits (got[c].sum, want.sum)
                       && same_bits (got[c].mean, want.mean)
                       && same_bits (got[c].std, want.std)
                       && same_bits (got[c].min, want.min)
                       && same_bits (got[c].max, want.max),
                       "rgb %d x %d masked %d channel %d", w, h, masked, c);
            }
        }
        free (plane);
        qc_rgb_destroy (&img);
        qc_mask_destroy (&m);
    }
}

static int
cmp_f (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x > y) - (x < y);
}

static void
test_quantile (void)
{
    unsigned seed = 41;
    int w = 131, h = 7;
    size_t n = (size_t) w * h;
    qc_fimg_t *f = qc_fimg_new (w, h);
    qc_mask_t *m = qc_mask_new (w, h);
    float *sorted = malloc (n * sizeof *sorted);
    for (size_t i = 0; i < n; i++) {
        int r = (int) (rand_r (&seed) % 2001) - 1000;
        f->px[i] = r == 0 ? (i % 2 ? -0.0f : 0.0f) : (float) r / 97.0f;
        m->px[i] = (uint8_t) (rand_r (&seed) % 3 != 0);
    }
    static const double qs[] = { 0.0, 0.01, 0.25, 0.5, 0.99, 1.0 };
    size_t bad = 0;
    for (int masked = 0; masked < 2; masked++)
        for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
            size_t cnt = 0;
            for (size_t i = 0; i < n; i++)
                if (!masked || m->px[i])
                    sorted[cnt++] = f->px[i];
            qsort (sorted, cnt, sizeof *sorted, cmp_f);
            double hpos = (double) (cnt - 1) * qs[j];
            size_t k = (size_t) floor (hpos);
            double lo = sorted[k], hi = k + 1 < cnt ? sorted[k + 1] : lo;
            double want = lo + (hpos - (double) k) * (hi - lo), got;
            CHECK (qc_cpu_fimg_quantile (f, masked ? m : NULL, qs[j], &got) == 0);
            /* -0 and +0 sort as equals: compare values, not bits */
            bad += !(got == want);
        }
    CHECK (bad == 0, "%zu quantiles differ", bad);
    free (sorted);
    qc_fimg_destroy (&f);
    qc_mask_destroy (&m);
}

int
main (void)
{
    test_channel_std ();
    test_quantile ();
    test_rgb_stats ();
    test_stencils ();
    test_threshold ();
    test_rgb_to_space ();
    unsigned seed = 3;
    for (int k = 0; k < 60; k++) {
        int w = 1 + (int) (rand_r (&seed) % 97), h = 1 + (int) (rand_r (&seed) % 13);
        qc_fimg_t *f = qc_fimg_new (w, h);
        qc_mask_t *m = qc_mask_new (w, h);
        size_t n = (size_t) w * h;
        for (size_t i = 0; i < n; i++) {
            f->px[i] = (float) ((rand_r (&seed) % 20001) / 7.0 - 1000.0);
            m->px[i] = (uint8_t) (rand_r (&seed) % 3 ? 1 : 0);
        }
        if (k % 5 == 1)
            f->px[rand_r (&seed) % n] = -0.0f;
        if (k % 7 == 2)
            f->px[rand_r (&seed) % n] = INFINITY;
        if (k % 11 == 3)
            f->px[rand_r (&seed) % n] = NAN;
        if (k % 13 == 4)
            memset (m->px, 0, n);               /* nothing under the mask */
        for (int masked = 0; masked < 2; masked++) {
            qc_stats_t got, want;
            CHECK (qc_cpu_fimg_stats (f, masked ? m : NULL, &got) == 0);
            reference (f->px, n, masked ? m->px : NULL, &want);
            CHECK (got.n == want.n && same_bits (got.sum, want.sum)
                   && same_bits (got.mean, want.mean)
                   && same_bits (got.std, want.std)
                   && same_bits (got.min, want.min)
                   && same_bits (got.max, want.max),
                   "%d x %d masked %d: sum %.17g/%.17g std %.17g/%.17g "
                   "min %g/%g", w, h, masked, got.sum, want.sum, got.std,
                   want.std, got.min, want.min);
        }
        qc_fimg_destroy (&f);
        qc_mask_destroy (&m);
    }
    return check_done ("test_simd_exact");
}
