/* Tests of the focus step's arithmetic, alone (no slide):
 *
 *  - the level it picks (10x or the nearest level at or above it, the
 *    finest when none is that fine) and the DCT band for that level
 *    (focus_algo.h);
 *  - the block measure (block_measure.h) from DCT coefficients equals the
 *    one from pixels, band by band, and from quantised coefficients bit
 *    for bit, for the fine detail and the coarser alike;
 *  - the blurry mask from measured planes (qc_focus_map): tissue with
 *    little fine detail is blurry where its fine detail is little beside
 *    its coarser detail (a focus fault) or where both are gone (coarse
 *    blur), not where both are low alike (pale tissue in focus), unless
 *    ratio_threshold is 0; the ratio's references come from the tissue
 *    judged sharp, and the rule stands aside where no coarser detail was
 *    measured or the slide is out of focus all over; where a fault
 *    covers most of the tissue beside tissue in focus (two populations
 *    of detail), the reference is the tissue in focus's.
 *
 * The focus step on slides: test_blur_focus.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/focus_algo.h"
#include "kernels/ops/ops.h"
#include "kernels/slide/block_measure.h"
#include "tests/unit/check.h"

static void
test_pick_level (void)
{
    int level = -1;
    /* a 40x pyramid in 4x steps: 10x is level 1 */
    const double four[] = { 1, 4, 16, 64 };
    CHECK (qc_focus_pick_level (four, 4, 40, 10, &level) == 0 && level == 1);
    /* a 20x pyramid in 4x steps (Aperio): 20x, 5x, 1.25x: level 0 */
    CHECK (qc_focus_pick_level (four, 3, 20, 10, &level) == 0 && level == 0);
    /* 2x steps from 40x: 40, 20, 10, 5: level 2 */
    const double two[] = { 1, 2, 4, 8, 16 };
    CHECK (qc_focus_pick_level (two, 5, 40, 10, &level) == 0 && level == 2);
    /* downsamples that are not quite whole count as the level */
    const double inexact[] = { 1, 4.0003, 16.001 };
    CHECK (qc_focus_pick_level (inexact, 3, 40, 10, &level) == 0 && level == 1);
    /* levels in any order: the coarsest fine enough */
    const double shuffled[] = { 16, 1, 4 };
    CHECK (qc_focus_pick_level (shuffled, 3, 40, 10, &level) == 0
           && level == 2);
    /* a 5x scan: none fine enough, its finest */
    CHECK (qc_focus_pick_level (four, 2, 5, 10, &level) == 1 && level == 0);
    CHECK (qc_focus_pick_level (shuffled, 3, 5, 10, &level) == 1 && level == 1);
    /* another magnification asked for */
    CHECK (qc_focus_pick_level (two, 5, 40, 2.5, &level) == 0 && level == 4);
    CHECK (qc_focus_pick_level (NULL, 3, 40, 10, &level) == -1);
    CHECK (qc_focus_pick_level (four, 0, 40, 10, &level) == -1);
    CHECK (qc_focus_pick_level (four, 4, 0, 10, &level) == -1);

    CHECK (qc_focus_band (10, 10) == QC_BLOCK_HF_BAND);
    CHECK (qc_focus_band (10, 20) == 3, "%d", qc_focus_band (10, 20));
    CHECK (qc_focus_band (10, 40) == 1, "%d", qc_focus_band (10, 40));
    CHECK (qc_focus_band (10, 5) == QC_BLOCK_HF_BAND);
    CHECK (qc_focus_band (0, 5) == QC_BLOCK_HF_BAND);
}

/* F = the orthonormal 8 x 8 DCT of the block's luma - 128, by its
 * definition (no shortcut). */
static void
naive_dct (const uint8_t *rgb, float F[64])
{
    double y[8][8];
    for (int r = 0; r < 8; r++)
        for (int x = 0; x < 8; x++) {
            const uint8_t *p = rgb + (r * 8 + x) * 3;
            y[r][x] = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] - 128;
        }
    for (int v = 0; v < 8; v++)
        for (int u = 0; u < 8; u++) {
            double s = 0;
            for (int r = 0; r < 8; r++)
                for (int x = 0; x < 8; x++)
                    s += y[r][x] * cos ((2 * x + 1) * u * M_PI / 16)
                         * cos ((2 * r + 1) * v * M_PI / 16);
            double a = (u ? 0.5 : sqrt (0.125)) * (v ? 0.5 : sqrt (0.125));
            F[v * 8 + u] = (float) (a * s);
        }
}

static void
test_block_measure (void)
{
    uint8_t rgb[8 * 8 * 3];
    float F[64];
    srand (7);
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < 192; i++)
            rgb[i] = (uint8_t) (trial < 10 ? rand () % 256
                                : 120 + (i / 3 % 8) * 10 + rand () % 5);
        naive_dct (rgb, F);
        for (int band = 1; band <= QC_BLOCK_BAND_MAX; band++) {
            float h1, m1, l1, h2, m2, l2;
            qc_block_from_dct (F, band, &h1, &m1, &l1);
            qc_block_from_rgb (rgb, 24, band, &h2, &m2, &l2);
            CHECK (fabsf (h1 - h2) < 1e-3f * (1 + h1), "trial %d band %d: "
                   "%g vs %g", trial, band, h1, h2);
            CHECK (fabsf (m1 - m2) < 1e-3f * (1 + m1), "trial %d band %d: mid "
                   "%g vs %g", trial, band, m1, m2);
            /* the AC energy is all in one of the two */
            double ac = 0;
            for (int k = 1; k < 64; k++)
                ac += (double) F[k] * F[k];
            CHECK (fabs (sqrt (ac) / 8 - hypot (h1, m1)) < 1e-3 * (1 + h1 + m1),
                   "trial %d band %d: hf %g and mid %g are not the AC %g", trial,
                   band, h1, m1, sqrt (ac) / 8);
            CHECK (fabsf (l1 - l2) < 1e-3f, "luma %g vs %g", l1, l2);
        }
    }
    /* flat: no detail; its luma */
    memset (rgb, 200, sizeof rgb);
    float h, m, l;
    qc_block_from_rgb (rgb, 24, QC_BLOCK_HF_BAND, &h, &m, &l);
    CHECK (h < 0.1f && m < 0.1f && fabsf (l - 200) < 1e-3f, "%g %g %g", h, m, l);
    /* a pixel checkerboard is all top frequency; a ramp almost none */
    for (int i = 0; i < 64; i++)
        memset (rgb + 3 * i, ((i / 8 + i % 8) & 1) ? 255 : 0, 3);
    qc_block_from_rgb (rgb, 24, QC_BLOCK_HF_BAND, &h, &m, &l);
    CHECK (h > 120 && m < 0.1f * h, "checkerboard %g, mid %g", h, m);
    for (int i = 0; i < 64; i++)
        memset (rgb + 3 * i, 100 + (i % 8) * 4, 3);
    float ramp, ramp_mid;
    qc_block_from_rgb (rgb, 24, QC_BLOCK_HF_BAND, &ramp, &ramp_mid, &l);
    CHECK (ramp < 0.1 * h && ramp_mid > 5 * ramp, "ramp %g, mid %g", ramp, ramp_mid);
}

/* Fills rectangle [x0, x1) x [y0, y1) of the planes with blocks of
 * fine detail hf and coarser detail mid (one block a pixel). */
static void
paint_blocks (qc_fimg_t *sum, qc_fimg_t *mid, int x0, int y0, int x1, int y1, float hf,
              float md)
{
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            sum->px[(size_t) y * sum->w + x] = hf * hf;
            mid->px[(size_t) y * mid->w + x] = md * md;
        }
}

/* Share of rectangle [x0, x1) x [y0, y1) (shrunk by 3 px: the edges
 * are judged otherwise) that m holds. */
static double
share_in (const qc_mask_t *m, int x0, int y0, int x1, int y1)
{
    size_t on = 0, n = 0;
    for (int y = y0 + 3; y < y1 - 3; y++)
        for (int x = x0 + 3; x < x1 - 3; x++, n++)
            on += m->px[(size_t) y * m->w + x] != 0;
    return n ? (double) on / (double) n : 0;
}

static void
test_focus_map_ratio (void)
{
    enum { W = 80, H = 60 };
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_fimg_t *sum = qc_fimg_new (W, H), *mid = qc_fimg_new (W, H);
    qc_fimg_t *count = qc_fimg_new (W, H);
    qc_mask_t *tissue = qc_mask_new (W, H), *blurry = qc_mask_new (W, H);
    CHECK (sum && mid && count && tissue && blurry);
    if (!sum || !mid || !count || !tissue || !blurry)
        goto done;
    for (size_t i = 0; i < (size_t) W * H; i++) {
        count->px[i] = 1;
        tissue->px[i] = 1;
    }
    /* sharp tissue (the majority), and as the sweep measured (blocks'
     * medians): tissue at a third of its stain, a 1 um fault, coarse blur */
    paint_blocks (sum, mid, 0, 0, W, H, 12.0f, 28.0f);
    paint_blocks (sum, mid, 2, 2, 24, 24, 4.0f, 9.5f);        /* pale */
    paint_blocks (sum, mid, 56, 2, 78, 24, 2.0f, 20.0f);      /* fault */
    paint_blocks (sum, mid, 30, 38, 50, 58, 0.3f, 0.5f);      /* coarse */
    qc_focus_params_t p;
    qc_focus_defaults (&p);
    double thr = 0, ref = 0, rref = 0;
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, &thr, &ref, &rref) == 0);
    CHECK (fabs (ref - 12) < 0.01 && fabs (thr - 0.35 * 12) < 0.01, "reference %g, "
           "threshold %g", ref, thr);
    CHECK (fabs (rref - 12.0 / 28) < 0.01, "median ratio %g", rref);
    CHECK (share_in (blurry, 2, 2, 24, 24) == 0, "pale tissue in focus flagged: %.2f",
           share_in (blurry, 2, 2, 24, 24));
    CHECK (share_in (blurry, 56, 2, 78, 24) == 1, "a fault missed: %.2f",
           share_in (blurry, 56, 2, 78, 24));
    CHECK (share_in (blurry, 30, 38, 50, 58) == 1, "coarse blur missed: %.2f",
           share_in (blurry, 30, 38, 50, 58));
    CHECK (share_in (blurry, 0, 26, 28, 60) == 0, "sharp tissue flagged");
    /* without the rule (ratio_threshold 0, or no mid plane) the pale
       tissue reads as blurry, as it did before the rule */
    p.ratio_threshold = 0;
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, NULL, NULL, &rref) == 0);
    CHECK (share_in (blurry, 2, 2, 24, 24) == 1 && rref == 0, "ratio off: pale %.2f, "
           "ratio %g", share_in (blurry, 2, 2, 24, 24), rref);
    qc_focus_defaults (&p);
    CHECK (qc_focus_map (ops, sum, NULL, count, tissue, &p, blurry, NULL, NULL, NULL) == 0);
    CHECK (share_in (blurry, 2, 2, 24, 24) == 1, "no mid: pale %.2f",
           share_in (blurry, 2, 2, 24, 24));
    /* a fault over most of the tissue (60%, its fine detail under a gray
       level): the ratio's references come from the tissue judged sharp,
       not from the fault (whose own ratio would then spare it whole) */
    paint_blocks (sum, mid, 0, 0, W, H, 12.0f, 28.0f);
    paint_blocks (sum, mid, 0, 0, 48, H, 0.5f, 20.0f);
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, NULL, &ref, &rref) == 0);
    CHECK (share_in (blurry, 0, 0, 48, H) == 1 && share_in (blurry, 52, 0, W, H) == 0,
           "a fault over 60%% of the tissue: %.2f of it flagged, %.2f of the rest "
           "(reference %g, ratio %g)", share_in (blurry, 0, 0, 48, H),
           share_in (blurry, 52, 0, W, H), ref, rref);
    CHECK (fabs (rref - 12.0 / 28) < 0.01, "the ratio's reference: %g", rref);
    /* out of focus all over (no tissue in focus: what is left is 3.0,
       2x the 1.5, one population): its median detail (1.5) is under
       QC_FOCUS_RATIO_MIN_DETAIL, and the rule, with no tissue in focus to
       take its references from, stands aside: what has no fine detail at
       all (under absolute_threshold) is flagged as without it */
    paint_blocks (sum, mid, 0, 0, W, H, 3.0f, 20.0f);
    paint_blocks (sum, mid, 0, 0, 28, H, 0.5f, 20.0f);
    paint_blocks (sum, mid, 28, 0, 56, H, 1.5f, 20.0f);
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, NULL, &ref, &rref) == 0);
    CHECK (ref < QC_FOCUS_RATIO_MIN_DETAIL && rref == 0
           && share_in (blurry, 0, 0, 28, H) == 1 && share_in (blurry, 28, 0, 56, H) == 0,
           "out of focus all over: reference %g, ratio %g, %.2f and %.2f flagged", ref,
           rref, share_in (blurry, 0, 0, 28, H), share_in (blurry, 28, 0, 56, H));
    /* a 1 um fault over 70% of the tissue (3.5: 0.29 of the sharp, as
       on a real slide), 30% in focus: the median is the fault's own, and
       .35 of it flagged none of it; the tissue's detail is two
       populations, and the reference is the sharp one's */
    paint_blocks (sum, mid, 0, 0, W, H, 12.0f, 28.0f);
    paint_blocks (sum, mid, 0, 0, 56, H, 3.5f, 20.0f);
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, &thr, &ref, &rref) == 0);
    CHECK (fabs (ref - 12) < 0.1 && fabs (rref - 12.0 / 28) < 0.01
           && share_in (blurry, 0, 0, 56, H) == 1 && share_in (blurry, 60, 0, W, H) == 0,
           "a fault over 70%%: reference %g, ratio %g, %.2f of it flagged, %.2f of the "
           "rest", ref, rref, share_in (blurry, 0, 0, 56, H), share_in (blurry, 60, 0, W, H));
    /* pale tissue in focus over 70% (its ratio the sharp tissue's): the
       same two populations, and the ratio rule spares it */
    paint_blocks (sum, mid, 0, 0, 56, H, 4.0f, 9.5f);
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, &thr, &ref, &rref) == 0);
    CHECK (fabs (ref - 12) < 0.1 && share_in (blurry, 0, 0, W, H) == 0,
           "pale tissue over 70%%: reference %g, ratio %g, %.2f flagged", ref, rref,
           share_in (blurry, 0, 0, W, H));
    /* no coarser detail anywhere (mid all 0, as a band of 1 would give),
       on fine detail that is enough for the rule to look: it judges
       nothing, the result is the one without it */
    paint_blocks (sum, mid, 0, 0, W, H, 12.0f, 28.0f);
    qc_mask_t *without = qc_mask_new (W, H);
    CHECK (without && qc_focus_map (ops, sum, NULL, count, tissue, &p, without, NULL,
                                    NULL, NULL) == 0);
    for (size_t i = 0; i < (size_t) W * H; i++)
        mid->px[i] = 0;
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, NULL, NULL, &rref) == 0);
    CHECK (without && memcmp (blurry->px, without->px, (size_t) W * H) == 0 && rref == 0,
           "mid all 0: the mask differs from the one without the rule (ratio %g)", rref);
    qc_mask_destroy (&without);
    /* bad arguments */
    p.ratio_threshold = 1.5;
    CHECK (qc_focus_map (ops, sum, mid, count, tissue, &p, blurry, NULL, NULL, NULL) == -1);
    qc_focus_defaults (&p);
    qc_fimg_t *small = qc_fimg_new (W - 1, H);
    CHECK (qc_focus_map (ops, sum, small, count, tissue, &p, blurry, NULL, NULL, NULL) == -1);
    qc_fimg_destroy (&small);
done:
    qc_fimg_destroy (&sum);
    qc_fimg_destroy (&mid);
    qc_fimg_destroy (&count);
    qc_mask_destroy (&tissue);
    qc_mask_destroy (&blurry);
}

/* qc_block_from_coefs against qc_block_from_dct given F made as the
 * coefficient reader made it before the shortcut: the same floats, bit
 * for bit, on sparse blocks (as JPEG leaves them), dense ones (no zero:
 * every band bit used) and all-zero ones, for luma-only and RGB tiles. */
static void
test_block_from_coefs (void)
{
    static const float weight[3] = { 0.299f, 0.587f, 0.114f };
    int16_t blk[3][64];
    float q[3][64], F[64];
    srand (11);
    int mismatches = 0, blocks = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int ncomp = trial % 2 ? 3 : 1;
        int zero_pct = trial % 5 == 0 ? 0 : trial % 7 == 0 ? 100 : 70;
        for (int c = 0; c < ncomp; c++)
            for (int k = 0; k < 64; k++) {
                q[c][k] = (ncomp == 1 ? 1.0f : weight[c])
                          * (float) (1 + rand () % 120);
                int v = rand () % 201 - 100;
                blk[c][k] = (int16_t) (rand () % 100 < zero_pct ? 0
                                       : v ? v : 1);
            }
        for (int k = 0; k < 64; k++) {
            F[k] = (float) blk[0][k] * q[0][k];
            for (int c = 1; c < ncomp; c++)
                F[k] += (float) blk[c][k] * q[c][k];
        }
        const int16_t *coef[3] = { blk[0], blk[1], blk[2] };
        for (int band = 0; band <= QC_BLOCK_BAND_MAX + 1; band++) {
            float h1, m1, l1, h2, m2, l2;
            qc_block_from_dct (F, band, &h1, &m1, &l1);
            qc_block_from_coefs (coef, (const float (*)[64]) q, ncomp, band,
                                 &h2, &m2, &l2);
            blocks++;
            if (memcmp (&h1, &h2, sizeof h1) || memcmp (&m1, &m2, sizeof m1)
                || memcmp (&l1, &l2, sizeof l1)) {
                if (mismatches++ < 5)
                    CHECK (0, "trial %d band %d ncomp %d: hf %.9g vs %.9g, "
                           "mid %.9g vs %.9g, luma %.9g vs %.9g", trial, band, ncomp,
                           h1, h2, m1, m2, l1, l2);
            }
        }
    }
    CHECK (mismatches == 0, "%d of %d blocks differ", mismatches, blocks);
    /* bad arguments: zeros, no crash */
    float h = 1, m = 1, l = 1;
    const int16_t *none[3] = { NULL, NULL, NULL };
    qc_block_from_coefs (none, (const float (*)[64]) q, 1, 5, &h, &m, &l);
    CHECK (h == 0 && m == 0 && l == 0, "NULL coefficients gave %g %g %g", h, m, l);
    h = m = l = 1;
    const int16_t *one[3] = { blk[0], NULL, NULL };
    qc_block_from_coefs (one, (const float (*)[64]) q, 2, 5, &h, &m, &l);
    CHECK (h == 0 && m == 0 && l == 0, "2 components gave %g %g %g", h, m, l);
    qc_block_from_coefs (one, NULL, 1, 5, NULL, NULL, NULL);
}

int
main (void)
{
    test_pick_level ();
    test_block_measure ();
    test_block_from_coefs ();
    test_focus_map_ratio ();
    return check_done ("test_focus_algo");
}
