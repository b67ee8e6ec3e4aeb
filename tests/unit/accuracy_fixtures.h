/* Scoring the default pipeline's masks on a generated slide against its
 * truth (bin/qc-mkslide --truth), as issues 3 and 17 score them: for
 * tests/unit/test_accuracy.c and tests/bench/bench_focus_sweep.c.
 * Header-only (static functions).
 *
 *   tissue  _mask_use.png against "usable" (folds counted)
 *   pen     _pen_markings.png against "pen"
 *   fine    _blurry.png against "focus" (1-3 um faults)
 *   coarse  _blurry.png against "blur" (15 um)
 *   pale    the share of "pale" truth (weakly stained tissue in focus,
 *           qc-mkslide --features all,pale) in _blurry.png: none should
 *           be (-1 when the slide has none)
 *
 * Blur is scored where no earlier step had to remove the tissue first
 * (pen, edge, fold and bubble truth left out: removed before the blur
 * step runs, or as smooth as blur and either step's to take), each kind
 * with the other kind's truth left out too. Truth masks are resampled to
 * the mask's size (area average, then over half). */
#ifndef QC_ACCURACY_FIXTURES_H
#define QC_ACCURACY_FIXTURES_H

#include <stdio.h>
#include <unistd.h>

#include "shared/result.h"
#include "tests/unit/slide_fixtures.h"

typedef struct {
    double tissue, pen, fine, coarse;   /* Dice */
    double pale;                        /* share flagged blurry, or -1 */
    size_t n_fine, n_coarse, n_pale;    /* truth pixels scored */
    int w, h;                           /* the masks' size */
} fx_scores_t;

/* A result's PNG as a 0/1 mask (its red channel over half), or NULL. */
/* The share of truth's pixels (outside skip_a and skip_b, either NULL)
 * that found flags, their count in *n (may be NULL); -1 when there is
 * none (or no truth). Masks of one size. */
static __attribute__ ((unused)) double
fx_share_flagged (const qc_mask_t *found, const qc_mask_t *truth, const qc_mask_t *skip_a,
                  const qc_mask_t *skip_b, size_t *n)
{
    size_t all = 0, on = 0;
    for (size_t i = 0; found && truth && i < qc_npix (truth->w, truth->h); i++)
        if (truth->px[i] && !(skip_a && skip_a->px[i]) && !(skip_b && skip_b->px[i])) {
            all++;
            on += found->px[i] != 0;
        }
    if (n)
        *n = all;
    return all ? (double) on / (double) all : -1;
}

static __attribute__ ((unused)) qc_mask_t *
fx_result_mask (const qc_result_t *r, const char *suffix)
{
    char err[256];
    const qc_file_t *f = qc_result_file (r, suffix);
    qc_rgb_t *img = f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err)
                      : NULL;
    qc_mask_t *m = img ? qc_mask_new (img->w, img->h) : NULL;
    for (size_t i = 0; m && i < qc_npix (m->w, m->h); i++)
        m->px[i] = img->px[3 * i] > 127;
    qc_rgb_destroy (&img);
    return m;
}

/* Truth mask "which" of dir/name_truth_which.png at w x h. */
static __attribute__ ((unused)) qc_mask_t *
fx_truth_named (const char *dir, const char *name, const char *which, int w,
                int h)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/%s_truth_%s.png", dir, name, which);
    return fx_truth_at (path, w, h);
}

/* Scores r (the default pipeline's result on dir/name.svs). 0, or -1
 * when a mask or a truth mask is missing (why says which). */
static __attribute__ ((unused)) int
fx_score_default (const qc_result_t *r, const char *dir, const char *name,
                  fx_scores_t *s, char *why, size_t whylen)
{
    enum { USE, PEN, BLUR, N_FOUND };
    enum { T_USE, T_PEN, T_BLUR, T_FINE, T_BUBBLE, T_EDGE, T_FOLD, N_TRUTH };
    static const char *const found_png[N_FOUND] = {
        "_mask_use.png", "_pen_markings.png", "_blurry.png"
    };
    static const char *const truth_name[N_TRUTH] = {
        "usable", "pen", "blur", "focus", "bubble", "edge", "dark"
    };
    qc_mask_t *f[N_FOUND] = { 0 }, *t[N_TRUTH] = { 0 };
    qc_mask_t *no_fine = NULL, *no_coarse = NULL;
    int rc = -1;
    for (int i = 0; i < N_FOUND; i++)
        if (!(f[i] = fx_result_mask (r, found_png[i]))) {
            snprintf (why, whylen, "%s: no %s", name, found_png[i]);
            goto done;
        }
    int w = f[USE]->w, h = f[USE]->h;
    if (f[PEN]->w != w || f[PEN]->h != h || f[BLUR]->w != w || f[BLUR]->h != h) {
        snprintf (why, whylen, "%s: masks of different sizes", name);
        goto done;
    }
    for (int i = 0; i < N_TRUTH; i++)
        if (!(t[i] = fx_truth_named (dir, name, truth_name[i], w, h))) {
            snprintf (why, whylen, "%s: no %s truth", name, truth_name[i]);
            goto done;
        }
    no_fine = qc_mask_new (w, h);
    no_coarse = qc_mask_new (w, h);
    if (!no_fine || !no_coarse) {
        snprintf (why, whylen, "out of memory");
        goto done;
    }
    /* what steps before the blur step remove: pen, edge, bubbles, folds */
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_mask_t *earlier = t[T_BUBBLE];
    ops->mask_logic (earlier, t[T_PEN], QC_LOGIC_OR, earlier);
    ops->mask_logic (earlier, t[T_EDGE], QC_LOGIC_OR, earlier);
    ops->mask_logic (earlier, t[T_FOLD], QC_LOGIC_OR, earlier);
    ops->mask_logic (earlier, t[T_BLUR], QC_LOGIC_OR, no_coarse);
    ops->mask_logic (earlier, t[T_FINE], QC_LOGIC_OR, no_fine);
    s->n_fine = s->n_coarse = 0;
    for (size_t i = 0; i < qc_npix (w, h); i++) {
        s->n_fine += t[T_FINE]->px[i] && !no_coarse->px[i];
        s->n_coarse += t[T_BLUR]->px[i] && !no_fine->px[i];
    }
    s->w = w;
    s->h = h;
    s->tissue = fx_dice (f[USE], t[T_USE], NULL);
    s->pen = fx_dice (f[PEN], t[T_PEN], NULL);
    s->fine = fx_dice (f[BLUR], t[T_FINE], no_coarse);
    s->coarse = fx_dice (f[BLUR], t[T_BLUR], no_fine);
    /* pale tissue in focus (older truth folders have no such mask) */
    char pale_path[1024];
    snprintf (pale_path, sizeof pale_path, "%s/%s_truth_pale.png", dir, name);
    qc_mask_t *pale = access (pale_path, R_OK) == 0 ? fx_truth_at (pale_path, w, h)
                                                     : NULL;
    s->pale = fx_share_flagged (f[BLUR], pale, no_fine, no_coarse, &s->n_pale);
    qc_mask_destroy (&pale);
    rc = 0;
done:
    for (int i = 0; i < N_FOUND; i++)
        qc_mask_destroy (&f[i]);
    for (int i = 0; i < N_TRUTH; i++)
        qc_mask_destroy (&t[i]);
    qc_mask_destroy (&no_fine);
    qc_mask_destroy (&no_coarse);
    return rc;
}

#endif
