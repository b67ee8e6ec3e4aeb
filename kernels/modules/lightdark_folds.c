/* LightDarkModule.removeFolds: the project's own fold detector (HistoQC
 * has none). A fold is tissue lying on itself: two layers absorb about
 * twice the light of one, so its optical density is a multiple of the
 * tissue around it, in the same colour. A plain gray threshold cannot
 * tell a fold from tissue that is dark everywhere (CMU-1's epidermis is
 * as dark as a fold of its dermis).
 *
 * Density: skimage's normalised optical density (as DeconvolutionModule
 * uses) summed over R, G and B. Each cell of an image downscale times
 * smaller holds the tissue's mean density (and R's and B's shares of
 * it), smoothed by a Gaussian of sigma / downscale cells so that nuclei
 * and stroma average out. The reference is the mean density of the
 * tissue in a window x window square (window / downscale cells), taken
 * twice: the second time without the cells the first found over ratio
 * times it, so that a wide fold does not raise its own reference. A
 * cell over ratio times its reference whose R and B shares are within
 * seed_shift of the tissue around seeds a fold, in pieces of at least
 * min_size pixels; the fold is grown from its seeds (8-connected) into
 * cells over grow_ratio times their reference whose shares are within
 * max_shift, and over 1 + GROW_LEVEL (level - 1), level being the mean
 * ratio of the cells over ratio within 2 cells. At full size, folds are
 * tissue in the fold's cells, in pieces of at least min_size pixels
 * (8-connected). Removed from img_mask_use; _folds.png; column "folds"
 * (the step's mask statistic).
 *
 * Why seeded growth (hysteresis) and not one threshold: a real fold is
 * the tissue under a shifted copy of itself, and where the copy is pale
 * the sum is under 2x. Folds painted so on a TCGA slide (the tissue's
 * OD plus the OD of the tissue 400 x 300 um away: 2x on average) have a
 * median density 1.69-1.71x their reference: the single 1.8x threshold
 * found 17% and 40% of two of them, 1.5x finds 67-72% but also 15% of
 * CMU-1's tissue (its epidermis and keratin, 1.59x). The colour tells
 * them apart: the painted folds' R, G and B shares are within 0.007 of
 * the tissue's (a fold's shares are a mix of the same tissue's), the
 * keratin's R share is 0.015-0.02 over it (at seed_shift 0.015 CMU-1
 * had no seed, at 0.02 it had 4.7% of its tissue taken, growth without
 * the level check below; the folds still seed at 0.0075). So seeds are
 * strict (1.8x, 0.01) and the growth loose (1.5x, 0.05): 57% and 66% of
 * those folds found, CMU-1 0% (without the level check).
 * Growing into every cell over 1.5x took a one-cell ring around dense
 * (2-3x) folds, whose edge cells, partly fold, are 1.5-1.8x: on the
 * generated slides the fold pixels outside the truth went from 1.0% to
 * 2.4% of the tissue, all within 4 pixels of it. Asking a grown cell for
 * GROW_LEVEL (0.6) of its strong neighbours' excess drops that ring
 * (generated slides as before the growth, to the fourth decimal) and
 * keeps most of the growth along faint folds (0.56 and 0.63 found; 0.7:
 * 0.44 and 0.58; 0.5 let the ring back in, 0.63% to 0.79% outside on
 * one slide). */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

#include <math.h>
#include <stdio.h>

/* the share of its strong neighbours' excess over 1 a grown cell needs
 * (the header says why 0.6) */
#define GROW_LEVEL 0.6

static int
read_params (const qc_config_section_t *sec, qc_folds_params_t *p, char *err,
             size_t errlen)
{
    if (qc_masks_get_float (sec, "ratio", 1.8, &p->ratio, err, errlen)
        || qc_masks_get_float (sec, "sigma", 3, &p->sigma, err, errlen)
        || qc_masks_get_float (sec, "max_shift", 0.05, &p->max_shift, err, errlen)
        || qc_masks_get_float (sec, "grow_ratio", fmin (1.5, p->ratio),
                               &p->grow_ratio, err, errlen)
        || qc_masks_get_float (sec, "seed_shift", fmin (0.01, p->max_shift),
                               &p->seed_shift, err, errlen)
        || qc_masks_get_int (sec, "window", 151, 3, QC_IMAGE_MAX_DIM,
                             &p->window, err, errlen)
        || qc_masks_get_int (sec, "min_size", 100, 0, 1 << 30, &p->min_size,
                             err, errlen)
        || qc_masks_get_int (sec, "downscale", 4, 1, 64, &p->downscale, err,
                             errlen)
        || qc_masks_check_stat (sec, err, errlen))
        return -1;
    const char *bad = !(p->ratio > 1.0 && p->ratio < 100.0) ? "ratio"
                    : !(p->sigma >= 0.0 && p->sigma <= 100.0) ? "sigma"
                    : !(p->max_shift >= 0.0 && p->max_shift <= 1.0) ? "max_shift"
                    : !(p->grow_ratio > 1.0 && p->grow_ratio <= p->ratio)
                        ? "grow_ratio"
                    /* 0 with max_shift 0, whose default it is: no colour
                       checked (a config with max_shift 0 was refused) */
                    : !(p->seed_shift >= 0.0 && p->seed_shift <= 1.0)
                      || (p->seed_shift == 0.0 && p->max_shift > 0.0)
                        ? "seed_shift"
                    : NULL;
    if (bad) {
        snprintf (err, errlen, "[%s] %s (line %d): must be %s",
                  sec ? qc_config_section_name (sec)
                      : "LightDarkModule.removeFolds", bad,
                  qc_config_key_line (sec, bad),
                  bad[0] == 'r' ? "over 1 and under 100"
                  : bad[0] == 'g' ? "over 1 and at most ratio"
                  : bad[1] == 'i' ? "0 to 100 pixels"
                  : bad[1] == 'e' ? "over 0 and at most 1 (0 only with max_shift 0)"
                  : "0 to 1 (0: off)");
        return -1;
    }
    return 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_folds_params_t p;
    return read_params (sec, &p, err, errlen);
}

/* ref = mean of v over the weights wt (0..1) in the window (0 where
 * the window has no weight); num and den are scratch. */
static int
local_mean (const qc_ops_t *ops, const qc_fimg_t *v, const qc_fimg_t *wt,
            int window, qc_fimg_t *num, qc_fimg_t *den, qc_fimg_t *ref)
{
    return ops->fimg_arith (v, wt, QC_ARITH_MUL, num)
           || ops->box_filter (num, window, window, QC_BORDER_CONSTANT, num)
           || ops->box_filter (wt, window, window, QC_BORDER_CONSTANT, den)
           || ops->fimg_arith (num, den, QC_ARITH_DIV, ref) ? -1 : 0;
}

/* The tissue's mean of v in each cell of the small image: v where the
 * tissue is (use), area-averaged, over the cells' tissue fraction
 * (small_wt). v is worked in place (its values are not needed after). */
static int
shrink (const qc_ops_t *ops, qc_fimg_t *v, const qc_mask_t *use,
        const qc_fimg_t *small_wt, qc_fimg_t *out)
{
    return ops->fimg_where (use, v, 0.0, v)
           || ops->resize_fimg (v, QC_INTERP_AREA, out)
           || ops->fimg_arith (out, small_wt, QC_ARITH_DIV, out) ? -1 : 0;
}

/* The fold pixels of use in img. The densities are compared in an image
 * downscale times smaller (a fold is tens of pixels wide at 1.25x, and
 * the full-size comparison was a large share of the slide's time:
 * tests/bench/README.md, "Figures behind the code"); only the density
 * itself is taken at full size. */
int
qc_ld_folds_mask (const qc_ops_t *ops, const qc_rgb_t *img,
                  const qc_mask_t *use, const qc_folds_params_t *p,
                  qc_mask_t *out)
{
    if (!ops || !p || !qc_rgb_valid (img) || !qc_mask_valid (use)
        || !qc_mask_valid (out) || use->w != img->w || use->h != img->h
        || out->w != img->w || out->h != img->h || !(p->ratio > 0.0)
        || p->window < 1 || p->min_size < 0 || !(p->max_shift >= 0.0)
        || p->downscale < 1 || !(p->sigma >= 0.0)
        || !(p->grow_ratio > 0.0 && p->grow_ratio <= p->ratio)
        || !(p->seed_shift >= 0.0))
        return -1;
    int w = img->w, h = img->h, ds = p->downscale;
    int sw = (w + ds - 1) / ds, sh = (h + ds - 1) / ds;
    int win = p->window / ds;
    win += !(win & 1);                 /* odd, so it centres on the pixel */
    double sigma = p->sigma / ds;
    const qc_mat3_t identity = { { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
    enum { R, G, B, NBIG };
    enum { DENS, SR, SB, SWT, REF, A, C, LVL, NUM, NSMALL };
    qc_fimg_t *f[NBIG] = { 0 }, *s[NSMALL] = { 0 }, *wt_full = NULL;
    qc_mask_t *cand = qc_mask_new (sw, sh), *hue = qc_mask_new (sw, sh);
    qc_mask_t *seed = qc_mask_new (sw, sh), *strong = qc_mask_new (sw, sh);
    int rc = -1;
    for (int i = 0; i < NSMALL; i++)
        if (!(s[i] = qc_fimg_new (sw, sh)))
            goto done;
    if (!cand || !hue || !seed || !strong)
        goto done;
    /* Full-size planes are what a 10x image's memory goes to (430 MB
     * each at 12,000 x 9,000): at most three at once. The tissue's
     * share of each cell first, from a plane freed before the density's
     * three are made. */
    if (!(wt_full = qc_fimg_new (w, h))
        || ops->mask_to_fimg (use, 1.0, 0.0, wt_full)
        || ops->resize_fimg (wt_full, QC_INTERP_AREA, s[SWT]))
        goto done;
    qc_fimg_destroy (&wt_full);
    for (int i = 0; i < NBIG; i++)
        if (!(f[i] = qc_fimg_new (w, h)))
            goto done;
    /* density: OD of R + G + B; R's and B's share of it; each the
     * tissue's mean per cell of the small image, smoothed there */
    if (ops->separate_stains (img, &identity, f[R], f[G], f[B])
        || ops->fimg_arith (f[G], f[R], QC_ARITH_ADD, f[G])
        || ops->fimg_arith (f[G], f[B], QC_ARITH_ADD, f[G])
        || shrink (ops, f[G], use, s[SWT], s[DENS])
        || shrink (ops, f[R], use, s[SWT], s[SR])
        || shrink (ops, f[B], use, s[SWT], s[SB]))
        goto done;
    for (int i = 0; i < NBIG; i++)
        qc_fimg_destroy (&f[i]);
    if (ops->gaussian (s[DENS], sigma, 4.0, QC_BORDER_NEAREST, s[DENS])
        || ops->gaussian (s[SR], sigma, 4.0, QC_BORDER_NEAREST, s[SR])
        || ops->gaussian (s[SB], sigma, 4.0, QC_BORDER_NEAREST, s[SB])
        || ops->fimg_arith (s[SR], s[DENS], QC_ARITH_DIV, s[SR])
        || ops->fimg_arith (s[SB], s[DENS], QC_ARITH_DIV, s[SB]))
        goto done;
    /* first reference over all tissue; candidates over ratio x it; the
     * reference again over the tissue without them (the weights of the
     * candidates zeroed: A as scratch) */
    qc_fimg_t *dens = s[DENS], *ref = s[REF], *a = s[A], *c = s[C];
    qc_fimg_t *wt = s[SWT];
    if (local_mean (ops, dens, wt, win, a, c, ref)
        || ops->fimg_arith (dens, ref, QC_ARITH_DIV, c)
        || ops->threshold (c, p->ratio, INFINITY, cand)
        || ops->mask_to_fimg (cand, 0.0, 1.0, a)
        || ops->fimg_arith (wt, a, QC_ARITH_MUL, wt)
        || local_mean (ops, dens, wt, win, a, c, ref)
        || ops->fimg_arith (dens, ref, QC_ARITH_DIV, c)
        || ops->threshold (c, p->ratio, INFINITY, strong)
        || ops->mask_logic (strong, strong, QC_LOGIC_AND, seed)
        || ops->threshold (c, p->grow_ratio, INFINITY, cand))
        goto done;
    /* Seeds: cells over ratio (the colour check and the size come
     * below). Growth: cells over grow_ratio and, unless over ratio
     * themselves, over 1 + GROW_LEVEL (level - 1), level being the mean
     * ratio of the cells over ratio within 2 cells (5 x 5: the ring
     * around a dense fold is one cell wide); with none near, level is 0
     * and grow_ratio alone counts. */
    qc_fimg_t *lvl = s[LVL], *num = s[NUM];
    if (ops->mask_to_fimg (strong, 1.0, 0.0, lvl)
        || ops->fimg_arith (c, lvl, QC_ARITH_MUL, num)
        || ops->box_filter (num, 5, 5, QC_BORDER_CONSTANT, num)
        || ops->box_filter (lvl, 5, 5, QC_BORDER_CONSTANT, lvl)
        || ops->fimg_arith (num, lvl, QC_ARITH_DIV, lvl)
        || ops->fimg_affine (lvl, GROW_LEVEL, 1.0 - GROW_LEVEL, -INFINITY,
                             INFINITY, lvl)
        || ops->fimg_arith (c, lvl, QC_ARITH_SUB, lvl)
        || ops->threshold (lvl, 0.0, INFINITY, hue)
        || ops->mask_logic (hue, strong, QC_LOGIC_OR, hue)
        || ops->mask_logic (cand, hue, QC_LOGIC_AND, cand))
        goto done;
    /* A fold is the same tissue twice: its colour is the colour around
     * it, darker. Where the share of R's or B's density differs from
     * the tissue around by more than max_shift, the stain differs
     * (nuclei-dense tissue): not a fold; a seed must be within
     * seed_shift (keratin is 0.015-0.02 off: header). */
    for (int ch = SR; ch <= SB && p->max_shift > 0.0; ch += SB - SR) {
        if (local_mean (ops, s[ch], wt, win, a, c, ref)
            || ops->fimg_arith (s[ch], ref, QC_ARITH_ABSDIFF, c)
            || ops->threshold (c, -INFINITY, p->max_shift, hue)
            || ops->mask_logic (cand, hue, QC_LOGIC_AND, cand)
            || ops->threshold (c, -INFINITY, p->seed_shift, hue)
            || ops->mask_logic (seed, hue, QC_LOGIC_AND, seed))
            goto done;
    }
    /* a seed is a piece of at least min_size pixels by itself: one
     * cell over ratio (CMU-1 had such) grew into 4.7% of its tissue */
    size_t seed_cells = ((size_t) p->min_size + (size_t) ds * ds - 1)
                        / ((size_t) ds * ds);
    if ((seed_cells > 1
         && ops->area_filter (seed, 8, seed_cells, SIZE_MAX, seed))
        || ops->reconstruct (cand, seed, 8, cand))
        goto done;
    if (ops->resize_mask (cand, QC_INTERP_NEAREST, out)
        || ops->mask_logic (out, use, QC_LOGIC_AND, out))
        goto done;
    if (p->min_size > 0
        && ops->area_filter (out, 8, (size_t) p->min_size, SIZE_MAX, out))
        goto done;
    rc = 0;
done:
    qc_fimg_destroy (&wt_full);
    for (int i = 0; i < NBIG; i++)
        qc_fimg_destroy (&f[i]);
    for (int i = 0; i < NSMALL; i++)
        qc_fimg_destroy (&s[i]);
    qc_mask_destroy (&cand);
    qc_mask_destroy (&hue);
    qc_mask_destroy (&seed);
    qc_mask_destroy (&strong);
    return rc;
}

static int
run (qc_run_t *run)
{
    qc_folds_params_t p;
    char err[256];
    if (read_params (run->params, &p, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    if (!img || !use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *folds = qc_mask_new (use->w, use->h);
    int rc = -1;
    if (!before || !folds
        || qc_ld_folds_mask (ops, img, use, &p, folds)) {
        qc_run_fail (run, "fold detection of a %d x %d image failed (out of "
                     "memory?)", use->w, use->h);
        goto done;
    }
    if (ops->mask_logic (use, folds, QC_LOGIC_ANDNOT, use)) {
        qc_run_fail (run, "removing the folds from img_mask_use failed");
        goto done;
    }
    rc = qc_run_save_mask (run, "folds", folds)
         || qc_masks_finish (run, "folds", "LightDarkModule.removeFolds", use,
                             before) ? -1 : 0;
done:
    qc_mask_destroy (&before);
    qc_mask_destroy (&folds);
    return rc;
}

static const char *const params[] = {
    "ratio", "sigma", "window", "max_shift", "grow_ratio", "seed_shift",
    "min_size", "downscale",
    "mask_statistics", NULL
};
static const char *const columns[] = { "folds", NULL };

const qc_module_t qc_module_ld_folds = {
    .name = "LightDarkModule.removeFolds",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
