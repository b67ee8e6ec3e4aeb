/* img_mask_use, the masks steps keep by name, HistoQC's forced masks and
 * the mask statistics of results.tsv; see run.h. */
#include "kernels/run/run_state.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shared/log.h"

qc_mask_t *
qc_run_mask (qc_run_t *run)
{
    struct qc_run_state *st = run_state_of (run);
    if (!st)
        return NULL;
    if (st->mask_use)
        return st->mask_use;
    const qc_rgb_t *img = qc_run_image (run, NULL);
    if (!img)
        return NULL;
    qc_mask_t *m = qc_mask_new (img->w, img->h);
    if (!m) {
        qc_run_fail (run, "out of memory for a %d x %d mask", img->w, img->h);
        return NULL;
    }
    qc_mask_fill (m, 1);
    st->mask_use = m;
    return m;
}

int
qc_run_keep_mask (qc_run_t *run, const char *name, qc_mask_t *mask)
{
    /* Ownership passes even on failure, so a caller never has to know
     * whether to free. */
    if (!run || !name || !*name || strlen (name) >= MAX_NAME
        || !qc_mask_valid (mask)) {
        qc_mask_destroy (&mask);
        if (run)
            qc_run_fail (run, "qc_run_keep_mask: bad argument");
        return -1;
    }
    struct qc_run_state *st = run_state_of (run);
    if (!st) {
        qc_mask_destroy (&mask);
        return -1;
    }
    for (size_t i = 0; i < st->nkept; i++)
        if (strcmp (st->kept[i].name, name) == 0) {
            if (st->kept[i].mask != mask)
                qc_mask_destroy (&st->kept[i].mask);
            st->kept[i].mask = mask;
            return 0;
        }
    if (st->nkept >= MAX_KEPT) {
        qc_mask_destroy (&mask);
        return qc_run_fail (run, "more than %d kept masks", MAX_KEPT);
    }
    snprintf (st->kept[st->nkept].name, MAX_NAME, "%s", name);
    st->kept[st->nkept].mask = mask;
    st->kept[st->nkept].forced = 0;
    st->nkept++;
    return 0;
}

const qc_mask_t *
qc_run_kept_mask (const qc_run_t *run, const char *name)
{
    if (!run || !run->state || !name)
        return NULL;
    for (size_t i = 0; i < run->state->nkept; i++)
        if (strcmp (run->state->kept[i].name, name) == 0)
            return run->state->kept[i].mask;
    return NULL;
}

const qc_mask_t *
qc_run_find_mask (qc_run_t *run, const char *name)
{
    if (!run || !name)
        return NULL;
    if (strcmp (name, "img_mask_use") == 0)
        return qc_run_mask (run);
    const qc_mask_t *m = qc_run_kept_mask (run, name);
    const char *bare = qc_run_mask_bare (name);
    if (!m && bare != name)
        m = qc_run_kept_mask (run, bare);
    return m;
}

const char *
qc_run_mask_bare (const char *name)
{
    return name && strncmp (name, "img_mask_", 9) == 0 ? name + 9 : name;
}

const qc_mask_t *
qc_run_named_mask (qc_run_t *run, const char *name)
{
    const qc_mask_t *m = qc_run_find_mask (run, name);
    if (!m && run && name && strcmp (name, "img_mask_use") != 0)
        qc_run_fail (run, "mask_name '%.100s': no earlier step made a mask of "
                     "that name (img_mask_use, or a mask such as "
                     "pen_markings that a step keeps)", name);
    return m;
}

int
qc_run_force_mask (qc_run_t *run, const char *name)
{
    if (!run || !name)
        return -1;
    for (size_t i = 0; run->state && i < run->state->nkept; i++)
        if (strcmp (run->state->kept[i].name, name) == 0) {
            run->state->kept[i].forced = 1;
            return 0;
        }
    return qc_run_fail (run, "no kept mask '%.64s' to force", name);
}

int
qc_run_apply_forced (qc_run_t *run, qc_mask_t *mask)
{
    if (!run || !qc_mask_valid (mask))
        return -1;
    for (size_t i = 0; run->state && i < run->state->nkept; i++) {
        const kept_t *k = &run->state->kept[i];
        if (!k->forced)
            continue;
        if (k->mask->w != mask->w || k->mask->h != mask->h)
            return qc_run_fail (run, "forced mask '%s' is %d x %d, the mask "
                                "%d x %d", k->name, k->mask->w, k->mask->h,
                                mask->w, mask->h);
        if (qc_run_ops (run)->mask_logic (mask, k->mask, QC_LOGIC_ANDNOT,
                                          mask))
            return qc_run_fail (run, "applying forced mask '%s' failed (out "
                                "of memory?)", k->name);
    }
    return 0;
}

/* The step's own mask_statistics (HistoQC: params.get ("mask_statistics",
 * s["mask_statistics"])), else [BaseImage.BaseImage]'s. */
static qc_mask_statistics_t
mask_stat_mode (const qc_run_t *run)
{
    const char *v = NULL;
    if (run->params
        && qc_config_get_string (run->params, "mask_statistics", NULL, &v,
                                 NULL, 0) == 0 && v) {
        if (strcmp (v, "absolute") == 0)
            return QC_MASK_ABSOLUTE;
        if (strcmp (v, "relative2image") == 0)
            return QC_MASK_RELATIVE2IMAGE;
        if (strcmp (v, "relative2mask") == 0)
            return QC_MASK_RELATIVE2MASK;
    }
    return run->base ? run->base->mask_statistics : QC_MASK_RELATIVE2MASK;
}

static size_t
count_set (const qc_run_t *run, const qc_mask_t *m)
{
    size_t n = 0;
    if (qc_run_ops (run)->mask_count (m, &n))
        qc_log (QC_LOG_ERROR, run->step ? run->step : "run", "%s: counting "
                "a mask's pixels failed (out of memory?)", run->filename
                ? run->filename : "?");
    return n;
}

double
qc_run_mask_fraction (const qc_run_t *run, const qc_mask_t *found,
                      const qc_mask_t *mask_before)
{
    if (!run || !qc_mask_valid (found))
        return NAN;
    size_t after = count_set (run, found);
    switch (mask_stat_mode (run)) {
    case QC_MASK_ABSOLUTE:
        return (double) after;
    case QC_MASK_RELATIVE2IMAGE:
        return (double) after / (double) qc_npix (found->w, found->h);
    case QC_MASK_RELATIVE2MASK:
    default:
        if (!qc_mask_valid (mask_before))
            return NAN;
        {
            size_t before = count_set (run, mask_before);
            if (before == 0)
                return -100.0;
            return 1.0 - (double) after / (double) before;
        }
    }
}

int
qc_run_set_mask_statistics (qc_run_t *run, const char *column,
                            const qc_mask_t *after, const qc_mask_t *before)
{
    if (!run || !column)
        return -1;
    double v = qc_run_mask_fraction (run, after, before);
    if (isnan (v))
        return qc_run_fail (run, "%s: mask statistics of an invalid mask",
                            column);
    /* HistoQC prints str (int) for absolute and for the empty-mask -100
     * of relative2mask, str (float) otherwise. */
    if (mask_stat_mode (run) == QC_MASK_ABSOLUTE || v == -100.0)
        return qc_run_set (run, column, "%.0f", v);
    char buf[QC_PYFLOAT_LEN];
    return qc_run_set (run, column, "%s", qc_pyfloat (v, buf, sizeof buf));
}
