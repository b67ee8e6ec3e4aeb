/* BubbleRegionByRegion.detectSmoothness (qc_bubble_flat_map) against a
 * direct evaluation (box mean with scipy convolve2d's zero border,
 * |mean - pixel| < t, 4-connected removal of small flat regions and of
 * small holes), and LocalTextureEstimationModule's GLCM features against
 * values worked out by hand (skimage graycomatrix / graycoprops). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/bubble_algo.h"
#include "kernels/modules/texture_algo.h"
#include "tests/unit/check.h"

#pragma GCC diagnostic ignored "-Wformat-zero-length"

static const qc_ops_t *ops;

static double
rnd (unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double) ((*s >> 8) & 0xFFFFFF) / 16777216.0;
}

/* Clears the 4-connected components of value v in m smaller than min. */
static void
drop_small (uint8_t *m, int w, int h, uint8_t v, int min)
{
    int *stack = malloc (sizeof (int) * w * h), *comp = malloc (sizeof (int) * w * h);
    uint8_t *seen = calloc ((size_t) w * h, 1);
    for (int s = 0; s < w * h; s++) {
        if (seen[s] || m[s] != v)
            continue;
        int top = 0, n = 0;
        stack[top++] = s;
        seen[s] = 1;
        while (top) {
            int p = stack[--top], x = p % w, y = p / w;
            comp[n++] = p;
            int nb[4] = { x > 0 ? p - 1 : -1, x + 1 < w ? p + 1 : -1,
                          y > 0 ? p - w : -1, y + 1 < h ? p + w : -1 };
            for (int k = 0; k < 4; k++)
                if (nb[k] >= 0 && !seen[nb[k]] && m[nb[k]] == v) {
                    seen[nb[k]] = 1;
                    stack[top++] = nb[k];
                }
        }
        if (n < min)
            for (int i = 0; i < n; i++)
                m[comp[i]] = (uint8_t) !v;
    }
    free (stack);
    free (comp);
    free (seen);
}

static void
test_flat_direct (void)
{
    int w = 90, h = 70, k = 10;
    qc_fimg_t *g = qc_fimg_new (w, h);
    unsigned s = 5;
    /* Flat gray, a noisy right third, a small noisy speck in the flat part
     * (a hole) and a small flat patch in the noise (a speck of flat). */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int noisy = x >= 60 && !(x >= 70 && x < 82 && y >= 30 && y < 42);
            int speck = x >= 18 && x < 24 && y >= 28 && y < 34;
            g->px[y * w + x] = (float) (noisy ? 0.3 + 0.4 * rnd (&s)
                                        : speck ? 0.97 : 0.5);
        }
    const int mins[2] = { 100, 400 };
    for (int t = 0; t < 2; t++) {
        qc_bubble_params_t p = { 0.01, k, mins[t] };
        qc_mask_t *m = qc_mask_new (w, h);
        CHECK (qc_bubble_flat_map (ops, g, &p, m) == 0);
        uint8_t *want = malloc ((size_t) w * h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double sum = 0;
                /* convolve2d 'same', even kernel: [x - k/2, x + k/2 - 1] */
                for (int dy = -k / 2; dy < k - k / 2; dy++)
                    for (int dx = -k / 2; dx < k - k / 2; dx++) {
                        int xx = x + dx, yy = y + dy;
                        if (xx >= 0 && xx < w && yy >= 0 && yy < h)
                            sum += g->px[yy * w + xx];
                    }
                want[y * w + x] = fabs (sum / (k * k) - g->px[y * w + x]) < 0.01;
            }
        size_t raw = 0, kept = 0;
        for (int i = 0; i < w * h; i++)
            raw += want[i];
        drop_small (want, w, h, 1, mins[t]);
        drop_small (want, w, h, 0, mins[t]);
        for (int i = 0; i < w * h; i++)
            kept += want[i];
        CHECK (raw != kept, "the removals changed nothing: a weak test");
        int bad = 0;
        for (int i = 0; i < w * h; i++)
            bad += want[i] != m->px[i];
        CHECK (bad == 0, "min %d: %d pixels differ", mins[t], bad);
        /* What the picture says: the flat middle is flat, the image's
         * edge is not (zeros beyond it), nor the noise; the bright
         * speck's hole (the pixels whose box holds 3 or more of its
         * pixels, between 100 and 400 px) is filled only when holes under
         * 400 px go. */
        CHECK (m->px[50 * w + 40] == 1);
        CHECK (m->px[50 * w + 1] == 0 && m->px[1 * w + 40] == 0);
        CHECK (m->px[10 * w + 75] == 0, "noise");
        CHECK (m->px[31 * w + 21] == (t == 1), "hole at min %d", mins[t]);
        free (want);
        qc_mask_destroy (&m);
    }
    qc_bubble_params_t bad = { 0.01, 0, 100 };
    qc_mask_t *m = qc_mask_new (w, h), *m2 = qc_mask_new (w, h + 1);
    CHECK (qc_bubble_flat_map (ops, g, &bad, m) == -1);
    bad.kernel_size = 10;
    CHECK (qc_bubble_flat_map (ops, g, &bad, m2) == -1);
    CHECK (qc_bubble_flat_map (ops, NULL, &bad, m) == -1);
    bad.threshold = NAN;
    CHECK (qc_bubble_flat_map (ops, g, &bad, m) == -1);
    qc_mask_destroy (&m);
    qc_mask_destroy (&m2);
    qc_fimg_destroy (&g);
}

static int
near (double a, double b)
{
    return fabs (a - b) < 1e-9;
}

static void
test_glcm_values (void)
{
    qc_fimg_t *g = qc_fimg_new (40, 40);
    double f[QC_GLCM_NFEATS];
    /* Columns alternate 5 dark (0.0 -> level 0), 5 bright (1.0 -> 7):
     * every pair 5 apart joins 0 and 7. */
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++)
            g->px[y * 40 + x] = x % 10 < 5 ? 0.0f : 1.0f;
    CHECK (qc_glcm_patch_features (g, 0, 0, 32, 8, 5, f) == 0);
    CHECK (near (f[QC_GLCM_CONTRAST], 49), "contrast %g", f[QC_GLCM_CONTRAST]);
    CHECK (near (f[QC_GLCM_DISSIMILARITY], 7));
    CHECK (near (f[QC_GLCM_HOMOGENEITY], 1.0 / 50));
    CHECK (near (f[QC_GLCM_ASM], 0.5));
    CHECK (near (f[QC_GLCM_ENERGY], sqrt (0.5)));
    CHECK (near (f[QC_GLCM_CORRELATION], -1), "corr %g", f[QC_GLCM_CORRELATION]);
    /* A constant patch: one cell; correlation 1 by skimage's rule. */
    for (int i = 0; i < 1600; i++)
        g->px[i] = 0.5f;                   /* edges < 0.5: 0, 1/7, 2/7, 3/7 */
    CHECK (qc_glcm_patch_features (g, 3, 3, 32, 8, 5, f) == 0);
    CHECK (near (f[QC_GLCM_CONTRAST], 0) && near (f[QC_GLCM_HOMOGENEITY], 1)
           && near (f[QC_GLCM_ASM], 1) && near (f[QC_GLCM_ENERGY], 1)
           && near (f[QC_GLCM_CORRELATION], 1));
    /* np.digitize's right=True at exact bin edges: with 5 levels the
     * edges are 0, .25, .5, .75, 1; 0.25 is level 1 (edges strictly
     * below: 0) and 1.0 level 4. Columns x < 5 hold 0.25, the others 1.0:
     * in a 10-wide patch every pair 5 apart is (1, 4). */
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 40; x++)
            g->px[y * 40 + x] = x < 5 ? 0.25f : 1.0f;
    CHECK (qc_glcm_patch_features (g, 0, 0, 10, 5, 5, f) == 0);
    CHECK (near (f[QC_GLCM_CONTRAST], 9) && near (f[QC_GLCM_DISSIMILARITY], 3),
           "contrast %g dissimilarity %g", f[QC_GLCM_CONTRAST],
           f[QC_GLCM_DISSIMILARITY]);
    /* A patch cut to 4 columns by the image's edge has no pair at
     * distance 5: an all-zero matrix (skimage leaves it unnormalised). */
    CHECK (qc_glcm_patch_features (g, 36, 0, 32, 8, 5, f) == 0);
    CHECK (near (f[QC_GLCM_ASM], 0) && near (f[QC_GLCM_CORRELATION], 1));
    CHECK (qc_glcm_patch_features (g, 40, 0, 32, 8, 5, f) == -1);
    CHECK (qc_glcm_patch_features (g, 0, 0, 32, 1, 5, f) == -1);
    CHECK (qc_glcm_feature_parse ("ASM", 3) == QC_GLCM_ASM);
    CHECK (qc_glcm_feature_parse ("asm", 3) == -1);
    CHECK (qc_glcm_feature_parse ("correlation:x", 11) == QC_GLCM_CORRELATION);
    qc_fimg_destroy (&g);
}

static void
test_glcm_sample (void)
{
    qc_fimg_t *g = qc_fimg_new (64, 48);
    qc_mask_t *m = qc_mask_new (64, 48);
    unsigned s = 9;
    for (int i = 0; i < 64 * 48; i++)
        g->px[i] = (float) rnd (&s);
    qc_glcm_params_t p = { 32, 100, 8, QC_GLCM_SEED };
    double mean[QC_GLCM_NFEATS], std[QC_GLCM_NFEATS], first[QC_GLCM_NFEATS];
    double mean2[QC_GLCM_NFEATS], std2[QC_GLCM_NFEATS];
    CHECK (qc_glcm_sample (g, m, &p, mean, std, first) == 1, "empty mask");
    for (int y = 10; y < 20; y++)
        for (int x = 5; x < 15; x++)
            m->px[y * 64 + x] = 1;
    CHECK (qc_glcm_sample (g, m, &p, mean, std, first) == 0);
    CHECK (qc_glcm_sample (g, m, &p, mean2, std2, NULL) == 0);
    CHECK (memcmp (mean, mean2, sizeof mean) == 0
           && memcmp (std, std2, sizeof std) == 0, "deterministic");
    /* Uniform noise in [0, 1) falls in levels 1..7 evenly (level 0 is
     * v == 0 only): contrast near E (i - j)^2 = 2 var = 2 * 48/12 = 8. */
    CHECK (fabs (mean[QC_GLCM_CONTRAST] - 8) < 1, "contrast %g",
           mean[QC_GLCM_CONTRAST]);
    CHECK (fabs (mean[QC_GLCM_CORRELATION]) < 0.15);
    CHECK (std[QC_GLCM_CONTRAST] > 0 && std[QC_GLCM_CONTRAST] < 2);
    CHECK (first[QC_GLCM_ASM] > 0 && first[QC_GLCM_ASM] <= 1);
    p.npatches = 0;
    CHECK (qc_glcm_sample (g, m, &p, mean, std, NULL) == -1);
    qc_fimg_destroy (&g);
    qc_mask_destroy (&m);
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_flat_direct ();
    test_glcm_values ();
    test_glcm_sample ();
    return check_done ("test_blur_bubble_texture");
}
