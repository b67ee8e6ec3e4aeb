/* The boosted oblivious trees (kernels/classify/classify_model.h): they learn a
 * non-linear two-class problem, generalise to fresh samples, are
 * deterministic for a seed, refuse bad input, and the ops backend's
 * whole-image prediction gives the same probabilities as the per-sample
 * function and the per-pixel formula of pixel_math.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/classify/classify_model.h"
#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/ops.h"
#include "tests/unit/check.h"

#define NF 4

static uint64_t rng_state = 42;

static double
unit (void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double) (rng_state >> 11) * 0x1p-53;
}

/* Class 1: inside a ring in features 0, 1 (an interaction no single
 * threshold finds) and feature 2 above 0.3; feature 3 is noise. 3% of
 * labels are flipped. */
static void
make_data (size_t n, float *x[NF], uint8_t *y)
{
    for (size_t i = 0; i < n; i++) {
        for (int f = 0; f < NF; f++)
            x[f][i] = (float) unit ();
        double dx = x[0][i] - 0.5, dy = x[1][i] - 0.5;
        double r = sqrt (dx * dx + dy * dy);
        int pos = r > 0.15 && r < 0.35 && x[2][i] > 0.3;
        if (unit () < 0.03)
            pos = !pos;
        y[i] = (uint8_t) pos;
    }
}

static void
alloc_data (size_t n, float *x[NF], uint8_t **y)
{
    for (int f = 0; f < NF; f++)
        x[f] = malloc (n * sizeof (float));
    *y = malloc (n);
}

static void
free_data (float *x[NF], uint8_t *y)
{
    for (int f = 0; f < NF; f++)
        free (x[f]);
    free (y);
}

static double
accuracy (const qc_trees_t *m, size_t n, float *x[NF], const uint8_t *y)
{
    size_t right = 0;
    for (size_t i = 0; i < n; i++) {
        float f[NF];
        for (int k = 0; k < NF; k++)
            f[k] = x[k][i];
        right += (qc_trees_prob (m, f) > 0.5) == (y[i] != 0);
    }
    return (double) right / (double) n;
}

static void
test_learns (void)
{
    size_t n = 60000, nt = 20000;
    float *x[NF], *xt[NF];
    uint8_t *y, *yt;
    alloc_data (n, x, &y);
    alloc_data (nt, xt, &yt);
    make_data (n, x, y);
    make_data (nt, xt, yt);
    qc_trees_params_t p;
    qc_trees_params_default (&p);
    char err[256] = "";
    clock_t t0 = clock ();
    qc_trees_t *m = qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err);
    double secs = (double) (clock () - t0) / CLOCKS_PER_SEC;
    CHECK (m != NULL, "%s", err);
    if (!m)
        return;
    double acc_train = accuracy (m, n, x, y), acc_test = accuracy (m, nt, xt, yt);
    printf ("  ring: train %.4f, test %.4f, %.2f s to train, %zu bytes\n",
            acc_train, acc_test, secs, qc_trees_size (m));
    /* 3% label noise caps accuracy at 0.97 */
    CHECK (acc_test > 0.93, "test accuracy %.4f", acc_test);

    /* same data, same seed: the same model, bit for bit */
    qc_trees_t *m2 = qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err);
    CHECK (m2 && m2->base == m->base
           && memcmp (m2->thr, m->thr, sizeof (float) * m->ntrees * m->depth) == 0
           && memcmp (m2->feat, m->feat, (size_t) m->ntrees * m->depth) == 0
           && memcmp (m2->leaf, m->leaf, sizeof (float) * ((size_t) m->ntrees << m->depth)) == 0);
    qc_trees_destroy (&m2);
    CHECK (m2 == NULL);
    /* another seed: a different model */
    p.seed = 7;
    m2 = qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err);
    CHECK (m2 && memcmp (m2->leaf, m->leaf, sizeof (float) * ((size_t) m->ntrees << m->depth)) != 0);
    qc_trees_destroy (&m2);

    /* whole-image prediction through the ops table: a 200 x 100 image */
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_fimg_t *planes[NF], *prob = qc_fimg_new (200, 100);
    for (int f = 0; f < NF; f++) {
        planes[f] = qc_fimg_new (200, 100);
        memcpy (planes[f]->px, xt[f], sizeof (float) * 20000);
    }
    CHECK (ops->trees_predict (m, (const qc_fimg_t *const *) planes, NF, prob) == 0);
    int same = 1;
    for (size_t i = 0; i < 20000; i++) {
        float f[NF];
        for (int k = 0; k < NF; k++)
            f[k] = xt[k][i];
        double a = qc_trees_prob (m, f);
        const float *pp[NF] = { planes[0]->px, planes[1]->px, planes[2]->px, planes[3]->px };
        double b = qc_px_sigmoid (qc_px_trees_margin (pp, i, m->ntrees, m->depth,
                                                      m->feat, m->thr, m->leaf, m->base));
        same &= fabs (prob->px[i] - a) < 1e-6 && (float) a == (float) b;
    }
    CHECK (same);
    /* bad arguments */
    CHECK (ops->trees_predict (m, (const qc_fimg_t *const *) planes, NF - 1, prob) == -1);
    CHECK (ops->trees_predict (NULL, (const qc_fimg_t *const *) planes, NF, prob) == -1);
    qc_fimg_t *small = qc_fimg_new (10, 10);
    CHECK (ops->trees_predict (m, (const qc_fimg_t *const *) planes, NF, small) == -1);
    qc_fimg_destroy (&small);

    /* NaN goes left at prediction as in training: no NaN comes out */
    planes[0]->px[0] = NAN;
    CHECK (ops->trees_predict (m, (const qc_fimg_t *const *) planes, NF, prob) == 0
           && isfinite (prob->px[0]));

    /* The AVX2 path (where the CPU has it) and the portable one give
     * the same bits: 2 Mpx x 5 features as HistoQC's frangi + laplace +
     * rgb, a size that leaves a tail of odd pixels, NaNs, and a depth
     * past the AVX2 path's 6 (which must fall back). */
    for (int depth = 6; depth <= 8; depth += 2) {
        qc_trees_t *m5 = NULL;
        float *x5[5];
        for (int f = 0; f < 5; f++)
            x5[f] = f < NF ? x[f] : x[0];
        qc_trees_params_default (&p);
        p.depth = depth;
        m5 = qc_trees_train ((const float *const *) x5, 5, n, y, &p, err, sizeof err);
        CHECK (m5 != NULL, "%s", err);
        if (!m5)
            continue;
        qc_fimg_t *big[5], *bp = qc_fimg_new (1601, 1251), *bq = qc_fimg_new (1601, 1251);
        size_t npx = (size_t) 1601 * 1251;
        for (int f = 0; f < 5; f++) {
            big[f] = qc_fimg_new (1601, 1251);
            for (size_t i = 0; i < npx; i++)
                big[f]->px[i] = (float) unit ();
            big[f]->px[(size_t) f * 7919] = NAN;
        }
        CHECK (qc_cpu_trees_predict (m5, (const qc_fimg_t *const *) big, 5, bp) == 0);
        CHECK (qc_cpu_trees_predict_portable (m5, (const qc_fimg_t *const *) big, 5, bq) == 0);
        size_t differ = 0;
        for (size_t i = 0; i < npx; i++)
            differ += memcmp (&bp->px[i], &bq->px[i], sizeof (float)) != 0;
        CHECK (differ == 0, "depth %d: %zu of %zu probabilities differ between "
               "the AVX2 and portable paths", depth, differ, npx);
        /* trees_classify (which may stop adding trees early) = the
         * portable probabilities compared with the threshold, pixel for
         * pixel, at thresholds where it stops early and where it cannot
         * (too near 0) */
        qc_mask_t *got = qc_mask_new (1601, 1251);
        const double ths[] = { 0.5, 0.6, 0.9, 0.0005 };
        for (size_t k = 0; got && k < sizeof ths / sizeof *ths; k++) {
            CHECK (qc_cpu_trees_classify (m5, (const qc_fimg_t *const *) big, 5,
                                          ths[k], got) == 0);
            size_t wrong = 0, pos = 0;
            for (size_t i = 0; i < npx; i++) {
                uint8_t want = (double) bq->px[i] > ths[k];
                wrong += got->px[i] != want;
                pos += want;
            }
            printf ("  depth %d, threshold %g: %zu of %zu positive, %zu differ\n",
                    depth, ths[k], pos, npx, wrong);
            CHECK (wrong == 0 && pos > 0 && (pos < npx || ths[k] < 0.01),
                   "depth %d threshold %g: "
                   "%zu differ, %zu positive", depth, ths[k], wrong, pos);
        }
        /* Smooth planes, as a slide's features are (glass, plain
         * tissue): trees_classify decides most 16 x 16 tiles by bounds,
         * without evaluating a tree per pixel, and must still equal the
         * portable probabilities compared, pixel for pixel. A width that
         * is no multiple of 8 or 16, NaNs, constant patches, and a
         * patch that sits exactly on one of the trees' thresholds. */
        if (depth == 6 && got) {
            int sw = 1001, sh = 803;
            qc_fimg_t *sm[5], *sq = qc_fimg_new (sw, sh);
            qc_mask_t *sg = qc_mask_new (sw, sh);
            for (int f = 0; f < 5; f++) {
                sm[f] = qc_fimg_new (sw, sh);
                for (int yy = 0; yy < sh; yy++)
                    for (int xx = 0; xx < sw; xx++)
                        sm[f]->px[(size_t) yy * sw + xx] = (float) (0.5 + 0.45
                            * sin (xx / 97.0 + f) * cos (yy / 71.0 - 2 * f));
                for (int yy = 100; yy < 180; yy++)
                    for (int xx = 300; xx < 420; xx++)
                        sm[f]->px[(size_t) yy * sw + xx] = f == 0 ? m5->thr[0]
                                                                  : 0.25f;
                sm[f]->px[(size_t) (400 + 3 * f) * sw + 517] = NAN;
            }
            CHECK (qc_cpu_trees_predict_portable (m5, (const qc_fimg_t *const *) sm,
                                                  5, sq) == 0);
            for (size_t k = 0; k < 3; k++) {
                CHECK (qc_cpu_trees_classify (m5, (const qc_fimg_t *const *) sm, 5,
                                              ths[k], sg) == 0);
                size_t wrong = 0, pos = 0, npx_s = (size_t) sw * sh;
                for (size_t i = 0; i < npx_s; i++) {
                    uint8_t want = (double) sq->px[i] > ths[k];
                    wrong += sg->px[i] != want;
                    pos += want;
                }
                size_t boxed = qc_cpu_trees_box_decided ();
                printf ("  smooth planes, threshold %g: %zu of %zu positive, "
                        "%zu decided by tile bounds, %zu differ\n", ths[k], pos,
                        npx_s, boxed, wrong);
                CHECK (wrong == 0, "smooth planes, threshold %g: %zu differ",
                       ths[k], wrong);
                CHECK (!qc_cpu_have_avx2 () || boxed > npx_s / 4,
                       "the tile bounds decided only %zu of %zu pixels", boxed,
                       npx_s);
            }
            for (int f = 0; f < 5; f++)
                qc_fimg_destroy (&sm[f]);
            qc_fimg_destroy (&sq);
            qc_mask_destroy (&sg);
        }
        CHECK (qc_cpu_trees_classify (m5, (const qc_fimg_t *const *) big, 5,
                                      NAN, got) == -1);
        CHECK (qc_cpu_trees_classify (m5, (const qc_fimg_t *const *) big, 4,
                                      0.5, got) == -1);
        qc_mask_destroy (&got);
        for (int f = 0; f < 5; f++)
            qc_fimg_destroy (&big[f]);
        qc_fimg_destroy (&bp);
        qc_fimg_destroy (&bq);
        qc_trees_destroy (&m5);
    }
    for (int f = 0; f < NF; f++)
        qc_fimg_destroy (&planes[f]);
    qc_fimg_destroy (&prob);
    qc_trees_destroy (&m);
    free_data (x, y);
    free_data (xt, yt);
}

static void
test_refuses (void)
{
    size_t n = 100;
    float *x[NF];
    uint8_t *y;
    alloc_data (n, x, &y);
    make_data (n, x, y);
    qc_trees_params_t p;
    qc_trees_params_default (&p);
    char err[256];
    memset (y, 0, n);
    CHECK (qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err) == NULL
           && strstr (err, "both classes"), "%s", err);
    y[3] = 1;
    for (int f = 0; f < NF; f++)
        for (size_t i = 0; i < n; i++)
            x[f][i] = 2.0f;
    CHECK (qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err) == NULL
           && strstr (err, "constant"), "%s", err);
    make_data (n, x, y);
    y[0] = 1, y[1] = 0;
    p.depth = QC_TREES_MAX_DEPTH + 1;
    CHECK (qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err) == NULL);
    qc_trees_params_default (&p);
    p.learning_rate = 0;
    CHECK (qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err) == NULL);
    qc_trees_params_default (&p);
    CHECK (qc_trees_train (NULL, NF, n, y, &p, err, sizeof err) == NULL);
    CHECK (qc_trees_train ((const float *const *) x, 0, n, y, &p, err, sizeof err) == NULL);
    /* a tiny but valid problem trains */
    qc_trees_t *m = qc_trees_train ((const float *const *) x, NF, n, y, &p, err, sizeof err);
    CHECK (m != NULL, "%s", err);
    qc_trees_destroy (&m);
    qc_trees_destroy (NULL);
    CHECK (isnan (qc_trees_prob (NULL, NULL)));
    free_data (x, y);
}

int
main (void)
{
    test_learns ();
    test_refuses ();
    return check_done ("classify_model");
}
