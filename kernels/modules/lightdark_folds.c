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
 * max_shift of the tissue around is a fold; at full size, folds are
 * tissue in such cells, in pieces of at least min_size pixels
 * (8-connected). Removed from img_mask_use; _folds.png; column "folds"
 * (the step's mask statistic). */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

#include <math.h>
#include <stdio.h>

static int
read_params (const qc_config_section_t *sec, qc_folds_params_t *p, char *err,
             size_t errlen)
{
    if (qc_masks_get_float (sec, "ratio", 1.8, &p->ratio, err, errlen)
        || qc_masks_get_float (sec, "sigma", 3, &p->sigma, err, errlen)
        || qc_masks_get_float (sec, "max_shift", 0.05, &p->max_shift, err, errlen)
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
                    : NULL;
    if (bad) {
        snprintf (err, errlen, "[%s] %s (line %d): must be %s",
                  sec ? qc_config_section_name (sec)
                      : "LightDarkModule.removeFolds", bad,
                  qc_config_key_line (sec, bad),
                  bad[0] == 'r' ? "over 1 and under 100"
                  : bad[0] == 's' ? "0 to 100 pixels" : "0 to 1 (0: off)");
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
        || p->downscale < 1 || !(p->sigma >= 0.0))
        return -1;
    int w = img->w, h = img->h, ds = p->downscale;
    int sw = (w + ds - 1) / ds, sh = (h + ds - 1) / ds;
    int win = p->window / ds;
    win += !(win & 1);                 /* odd, so it centres on the pixel */
    double sigma = p->sigma / ds;
    const qc_mat3_t identity = { { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
    enum { R, G, B, NBIG };
    enum { DENS, SR, SB, SWT, REF, A, C, NSMALL };
    qc_fimg_t *f[NBIG] = { 0 }, *s[NSMALL] = { 0 }, *wt_full = NULL;
    qc_mask_t *cand = qc_mask_new (sw, sh), *hue = qc_mask_new (sw, sh);
    int rc = -1;
    for (int i = 0; i < NSMALL; i++)
        if (!(s[i] = qc_fimg_new (sw, sh)))
            goto done;
    if (!cand || !hue)
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
        || ops->threshold (c, p->ratio, INFINITY, cand))
        goto done;
    /* A fold is the same tissue twice: its colour is the colour around
     * it, darker. Where the share of R's or B's density differs from
     * the tissue around by more than max_shift, the stain differs
     * (nuclei-dense tissue): not a fold. */
    for (int ch = SR; ch <= SB && p->max_shift > 0.0; ch += SB - SR) {
        if (local_mean (ops, s[ch], wt, win, a, c, ref)
            || ops->fimg_arith (s[ch], ref, QC_ARITH_ABSDIFF, c)
            || ops->threshold (c, -INFINITY, p->max_shift, hue)
            || ops->mask_logic (cand, hue, QC_LOGIC_AND, cand))
            goto done;
    }
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
    "ratio", "sigma", "window", "max_shift", "min_size", "downscale",
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
