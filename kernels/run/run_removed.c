/* Which step first took each pixel out of img_mask_use: the record
 * SaveModule.saveFinalMask's _causes.png colours by; see run.h.
 *
 * Why a byte map kept beside the mask rather than the masks the steps
 * keep: a step keeps what a later step's mask_name= wants (LightDark's
 * tissue found, not the glass it took), some keep nothing, and a pixel
 * can sit in several; the map says which step took it, once, whatever
 * the step kept. It is filled by comparing img_mask_use after each step
 * with what no step had taken yet, so no step has to take part. */
#include "kernels/run/run_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
qc_run_record_removals (qc_run_t *run)
{
    struct qc_run_state *st = run_state_of (run);
    if (!st)
        return -1;
    st->recording = 1;
    return 0;
}

void
run_removals_saw_mask (qc_run_t *run, const char *suffix)
{
    struct qc_run_state *st = run ? run->state : NULL;
    if (st && st->recording && !st->step_mask[0] && suffix)
        snprintf (st->step_mask, sizeof st->step_mask, "%s", suffix);
}

/* The running step as the record's next remover; NULL (failed) when
 * there are QC_RUN_MAX_REMOVERS already. */
static qc_run_remover_t *
new_remover (qc_run_t *run, struct qc_run_state *st)
{
    if (st->nremovers >= QC_RUN_MAX_REMOVERS) {
        qc_run_fail (run, "more than %d steps took tissue out; _causes.png "
                     "cannot tell them apart", QC_RUN_MAX_REMOVERS);
        return NULL;
    }
    qc_run_remover_t *r = &st->removers[st->nremovers++];
    snprintf (r->step, sizeof r->step, "%s", run->step ? run->step : "?");
    snprintf (r->mask, sizeof r->mask, "%s", st->step_mask);
    r->pixels = 0;
    return r;
}

int
qc_run_note_removals (qc_run_t *run)
{
    struct qc_run_state *st = run ? run->state : NULL;
    if (!st || !st->recording)
        return 0;
    const qc_mask_t *use = st->mask_use;
    int rc = 0;
    if (!use)                   /* not made yet: all of it still in use */
        goto done;
    if (!st->removed_by) {
        if (!(st->removed_by = calloc (qc_npix (use->w, use->h), 1))) {
            rc = qc_run_fail (run, "out of memory for the record of which "
                              "step took which pixel (%d x %d)", use->w, use->h);
            goto done;
        }
        st->removed_w = use->w;
        st->removed_h = use->h;
    }
    if (use->w != st->removed_w || use->h != st->removed_h) {
        rc = qc_run_fail (run, "img_mask_use changed size (%d x %d, was "
                          "%d x %d)", use->w, use->h, st->removed_w,
                          st->removed_h);
        goto done;
    }
    const uint8_t *px = qc_mask_host (use);
    if (!px) {
        rc = qc_run_fail (run, "cannot read img_mask_use on the host");
        goto done;
    }
    qc_run_remover_t *r = NULL;
    uint8_t *by = st->removed_by;
    size_t n = qc_npix (use->w, use->h);
    for (size_t i = 0; i < n; i++) {
        if (px[i] || by[i])
            continue;
        if (!r && !(r = new_remover (run, st))) {
            rc = -1;
            goto done;
        }
        by[i] = (uint8_t) st->nremovers;
        r->pixels++;
    }
done:
    st->step_mask[0] = '\0';    /* the next step's saves are its own */
    return rc;
}

const uint8_t *
qc_run_removals (const qc_run_t *run, const qc_run_remover_t **removers,
                 size_t *n, int *w, int *h)
{
    const struct qc_run_state *st = run ? run->state : NULL;
    int on = st && st->recording && st->removed_by;
    if (removers)
        *removers = on ? st->removers : NULL;
    if (n)
        *n = on ? st->nremovers : 0;
    if (w)
        *w = on ? st->removed_w : 0;
    if (h)
        *h = on ? st->removed_h : 0;
    return on ? st->removed_by : NULL;
}
